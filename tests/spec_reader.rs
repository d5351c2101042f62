//! Differential tests: the crate's reader against the reader written from FORMAT.md alone (`tests/spec/`), on
//! blocks of every kind at every probe count and column count, on the golden blocks, and on damaged blocks.
//! The two must accept and refuse the same blocks and give identical answers to every query; every present key
//! must be found by both. The writer is checked against the spec too: the bits a one-key Bloom block sets are
//! exactly the bits FORMAT.md assigns to that key.

mod spec;

use std::path::Path;
use std::sync::Arc;

use std::ops::{Bound, RangeBounds};

use sstfilter::{
    Answer, BlockedBloomParams, BlockedBloomPolicy, CappedPrefix, DelimitedPrefix, FilterBlock,
    FilterBlockBuilder, FilterPlan, FilterPolicy, FixedPrefix, KeyHash, PrefixExtractor,
    RangeFilterBuilder, RangePolicy, Reason, RibbonPolicy, StandardBloomParams, key_hash,
};

#[derive(Debug, Clone, Copy)]
struct Explicit(FilterPlan);

impl FilterPolicy for Explicit {
    fn plan(&self, _num_keys: usize) -> FilterPlan {
        self.0
    }
}

/// A deterministic stream of 64-bit values (splitmix64), so failures reproduce.
fn random_hashes(seed: u64, n: usize) -> Vec<u64> {
    let mut state = seed;
    (0..n)
        .map(|_| {
            state = state.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = state;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        })
        .collect()
}

fn build_hashes(policy: impl FilterPolicy, hashes: &[u64]) -> Vec<u8> {
    let mut builder = FilterBlockBuilder::new(policy);
    for &h in hashes {
        builder.add_hash(KeyHash::from_raw(h));
    }
    builder.finish()
}

/// Both readers open `block` and agree on `present` (all found by both) and on `absent` (same answers).
/// Returns how many absent hashes both readers let through.
fn agree(what: &str, block: &[u8], present: &[u64], absent: &[u64]) -> usize {
    let ours = FilterBlock::open(block).unwrap_or_else(|e| panic!("{what}: {e}"));
    let reference = spec::open(block).unwrap_or_else(|e| panic!("{what}: spec refuses: {e:?}"));
    assert!(reference.checksum_ok, "{what}: CRC");
    assert_eq!(ours.num_keys(), reference.num_keys, "{what}: key count");
    for &h in present {
        assert!(
            ours.may_contain_hash(KeyHash::from_raw(h)),
            "{what}: our reader lost {h:#x}"
        );
        assert!(
            reference.may_contain_key_hash(h),
            "{what}: the spec reader lost {h:#x}"
        );
    }
    let mut passed = 0;
    for &h in absent {
        let answer = ours.may_contain_hash(KeyHash::from_raw(h));
        assert_eq!(
            answer,
            reference.may_contain_key_hash(h),
            "{what}: readers differ on {h:#x}"
        );
        passed += usize::from(answer);
    }
    passed
}

#[test]
fn blocked_bloom_every_probe_count_agrees_with_the_spec() {
    let absent = random_hashes(1, 20_000);
    for probes in 1..=24u8 {
        for (n, blocks) in [(1usize, 1u32), (50, 3), (2000, 40), (3000, 500)] {
            let present = random_hashes(u64::from(probes) << 20 | n as u64, n);
            let params = BlockedBloomParams::new(blocks, probes).unwrap();
            let block = build_hashes(Explicit(FilterPlan::BlockedBloom(params)), &present);
            let passed = agree(
                &format!("BlockedBloom k {probes}, {blocks} blocks, {n} keys"),
                &block,
                &present,
                &absent,
            );
            // An overfull filter lets most absent keys through, a sparse one few: the answers are not constant.
            if n == 2000 {
                assert!(passed > 0, "k {probes}: nothing passes an overfull filter");
            }
            if n == 1 {
                assert!(
                    passed < absent.len() / 2,
                    "k {probes}: {passed} pass a one-key filter"
                );
            }
        }
    }
}

#[test]
fn blocked_bloom_writer_sets_exactly_the_spec_bits() {
    // One key in one block: the set bits are that key's bits and nothing else.
    for probes in 1..=24u8 {
        let params = BlockedBloomParams::new(1, probes).unwrap();
        for h in random_hashes(u64::from(probes), 2000)
            .into_iter()
            .chain([0, u64::MAX, 1 << 63])
        {
            let block = build_hashes(Explicit(FilterPlan::BlockedBloom(params)), &[h]);
            let set: Vec<u32> = (0..512u32)
                .filter(|&p| block[(p / 8) as usize] >> (p % 8) & 1 == 1)
                .collect();
            let mut want = spec::blocked_bloom_bits(h, u32::from(probes));
            want.sort_unstable();
            want.dedup();
            assert_eq!(set, want, "k {probes}, hash {h:#x}");
        }
    }
}

#[test]
fn blocked_bloom_hashes_that_repeat_draws_agree_with_the_spec() {
    // Hashes whose first draw word repeats a draw own fewer than k bits (draws with replacement); hash 0 draws
    // position 0 seven times in its first word.
    let params = BlockedBloomParams::new(1, 24).unwrap();
    let repeating: Vec<u64> = random_hashes(99, 200_000)
        .into_iter()
        .filter(|&h| {
            let x = h.wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let draws: Vec<u64> = (0..7).map(|j| (x >> (64 - 9 * (j + 1))) & 511).collect();
            (0..7).any(|a| (a + 1..7).any(|b| draws[a] == draws[b]))
        })
        .take(300)
        .chain([0])
        .collect();
    assert!(repeating.len() > 100);
    for &h in &repeating {
        let block = build_hashes(Explicit(FilterPlan::BlockedBloom(params)), &[h]);
        let set = (0..512u32)
            .filter(|&p| block[(p / 8) as usize] >> (p % 8) & 1 == 1)
            .count();
        assert!(set < 24, "hash {h:#x}: a repeated draw sets one bit");
        agree(
            &format!("repeating draws, hash {h:#x}"),
            &block,
            &[h],
            &random_hashes(h, 200),
        );
    }
}

/// Ribbon blocks for `r` result columns: lower blocks only, upper blocks only (a rate just above `2^-(r+1)`
/// rounds the share of lower blocks to zero in a small filter) and mixed.
fn ribbon_rates(r: u32) -> Vec<(&'static str, f64)> {
    let mut rates = vec![("lower only", (-f64::from(r)).exp2())];
    if r < 32 {
        rates.push(("mixed", (-f64::from(r) - 0.5).exp2()));
        rates.push(("upper only", (-f64::from(r) - 0.999).exp2()));
    }
    rates
}

#[test]
fn ribbon_every_column_count_and_layout_agrees_with_the_spec() {
    let absent = random_hashes(2, 1000);
    let mut layouts = std::collections::BTreeSet::new();
    for r in 1..=32u32 {
        for (shape, fpr) in ribbon_rates(r) {
            for n in [130usize, 1000, 9000] {
                let present = random_hashes(u64::from(r) << 32 | n as u64, n);
                let block = build_hashes(RibbonPolicy::with_fpr(fpr).unwrap(), &present);
                let what = format!("Ribbon r {r} ({shape}), {n} keys");
                let filter = FilterBlock::open(&block[..]).unwrap();
                // A small key set may get the BlockedBloom fallback; a thousand keys are always Ribbon.
                if let spec::Kind::Ribbon {
                    r,
                    blocks,
                    upper_start,
                    ..
                } = spec::open(&block).unwrap().kind
                {
                    layouts.insert((r, upper_start > 0, upper_start < blocks));
                } else {
                    assert!(n < 1000, "{what}: {:?}", filter.kind());
                }
                let sample: Vec<u64> = present.iter().step_by((n / 300).max(1)).copied().collect();
                agree(&what, &block, &sample, &absent);
                // Every present key through the crate's reader (the spec reader saw a sample).
                assert!(
                    present
                        .iter()
                        .all(|&h| filter.may_contain_hash(KeyHash::from_raw(h))),
                    "{what}"
                );
            }
        }
    }
    // Every column count was reached with lower blocks, and 1..=31 with upper blocks alone and mixed.
    for r in 1..=32 {
        assert!(layouts.contains(&(r, true, false)), "r {r} lower only");
        if r < 32 {
            assert!(layouts.contains(&(r, false, true)), "r {r} upper only");
            assert!(layouts.contains(&(r, true, true)), "r {r} mixed");
        }
    }
}

#[test]
fn standard_bloom_every_probe_count_agrees_with_the_spec() {
    let absent = random_hashes(3, 5000);
    for hashes in 1..=255u32 {
        for (n, bits) in [(1usize, 1u64), (20, 1001), (300, 3000)] {
            let present = random_hashes(u64::from(hashes) << 20 | n as u64, n);
            let params = StandardBloomParams::new(bits, hashes).unwrap();
            let block = build_hashes(Explicit(FilterPlan::StandardBloom(params)), &present);
            agree(
                &format!("StandardBloom k {hashes}, m {bits}, {n} keys"),
                &block,
                &present,
                &absent,
            );
        }
    }
}

#[test]
fn standard_bloom_writer_sets_exactly_the_spec_bits() {
    for hashes in [1u32, 2, 7, 30, 255] {
        for bits in [1u64, 63, 64, 65, 1001] {
            let params = StandardBloomParams::new(bits, hashes).unwrap();
            for h in random_hashes(u64::from(hashes) * bits, 200) {
                let block = build_hashes(Explicit(FilterPlan::StandardBloom(params)), &[h]);
                let set: Vec<u128> = (0..u128::from(bits))
                    .filter(|&p| block[(p / 8) as usize] >> (p % 8) & 1 == 1)
                    .collect();
                let mut want: Vec<u128> = (0..u128::from(hashes))
                    .map(|i| {
                        ((u128::from(h) + i * u128::from(h.rotate_left(32))) % (1 << 64)
                            * u128::from(bits))
                            >> 64
                    })
                    .collect();
                want.sort_unstable();
                want.dedup();
                assert_eq!(set, want, "k {hashes}, m {bits}, hash {h:#x}");
            }
        }
    }
}

/// Blocks framed from bits kept in memory (`StandardBloomParams::write_block`, which the `sstfilter-memory`
/// crate's `BloomFilter::to_block` calls), the bits set through the public `probes`: every probe count, bit counts
/// that are not whole words, and a key count that is not the number of keys added.
#[test]
fn framed_in_memory_bits_agree_with_the_spec() {
    let absent = random_hashes(5, 2000);
    for hashes in 1..=255u32 {
        for (n, bits) in [(1usize, 1u64), (40, 64), (100, 1001), (500, 10_000)] {
            let present = random_hashes(u64::from(hashes) << 20 | n as u64, n);
            let params = StandardBloomParams::new(bits, hashes).unwrap();
            let mut words = vec![0u64; params.num_words()];
            for &h in &present {
                for pos in params.probes(KeyHash::from_raw(h)) {
                    words[(pos / 64) as usize] |= 1 << (pos % 64);
                }
            }
            let mut block = Vec::new();
            params
                .write_block(&words, 3 * n as u64, &mut block)
                .unwrap();
            agree(
                &format!("write_block k {hashes}, m {bits}, {n} keys"),
                &block,
                &present,
                &absent,
            );
        }
    }
}

#[test]
fn golden_blocks_agree_with_the_spec() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut checked = 0;
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
        let block: Vec<u8> = digits
            .chunks(2)
            .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
            .collect();
        let filter = FilterBlock::open(&block[..]).unwrap();
        let reference = spec::open(&block).unwrap();
        if reference.range().is_some() {
            // Range blocks count codes, not keys: the key count is in the name (`-n{keys}-`).
            let n: usize = name.split('-').nth(2).unwrap()[1..].parse().unwrap();
            let mut keys: Vec<Vec<u8>> =
                (0..n).map(|i| format!("golden-{i}").into_bytes()).collect();
            keys.sort();
            let others: Vec<Vec<u8>> = (n..n + 400)
                .map(|i| format!("golden-{i}").into_bytes())
                .collect();
            range_agree(&name, &block, &keys, &others);
            checked += 1;
            continue;
        }
        assert_eq!(
            filter.prefix_extractor_name(),
            reference.prefix_name.as_deref(),
            "{name}"
        );
        assert_eq!(filter.holds_whole_keys(), reference.whole_keys, "{name}");
        // A block with prefixes counts them among its keys; its keys and prefixes are checked by golden.rs, and
        // here both readers must agree on every golden key's hash.
        let n = if reference.prefix_name.is_some() {
            0
        } else {
            filter.num_keys()
        };
        let present: Vec<u64> = (0..n)
            .map(|i| key_hash(format!("golden-{i}").as_bytes()).get())
            .collect();
        let others: Vec<u64> = (0..400)
            .map(|i| key_hash(format!("golden-{i}").as_bytes()).get())
            .chain(random_hashes(5, 3000))
            .collect();
        agree(&name, &block, &present, &others);
        checked += 1;
    }
    assert!(checked >= 18, "{checked}");
}

#[test]
fn the_pre_release_block_holds_exactly_the_derivation_0_bits() {
    // Section 4.2, "Probe derivation 0": the retired block's payload is exactly the union of its 1000 keys'
    // derivation-0 bits, and the spec's derivation-1 query (what readers run) finds every key.
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden-retired/v1-blockedbloom-n1000-bpk16-distinct.hex");
    let text = std::fs::read_to_string(path).unwrap();
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    let block: Vec<u8> = digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
        .collect();
    let reference = spec::open(&block).unwrap();
    assert!(reference.checksum_ok);
    let spec::Kind::BlockedBloom { k, num_blocks } = reference.kind else {
        panic!("a BlockedBloom block");
    };
    assert_eq!(
        block[block.len() - spec::TRAILER_LEN + 9],
        0,
        "derivation 0"
    );
    let mut rebuilt = vec![0u8; reference.payload.len()];
    for i in 0..1000 {
        let h = key_hash(format!("golden-{i}").as_bytes()).get();
        let b = ((u128::from(h >> 32) * u128::from(num_blocks)) >> 32) as usize;
        let bits = spec::blocked_bloom_distinct_bits(h, k);
        assert_eq!(bits.len(), k as usize);
        for p in bits {
            rebuilt[64 * b + p as usize / 8] |= 1 << (p % 8);
        }
        assert!(reference.may_contain_key_hash(h), "golden-{i}");
    }
    assert!(
        rebuilt == reference.payload,
        "the payload is not the keys' derivation-0 bits"
    );
}

/// Every truncation of `block`, and every value of every trailer byte before the CRC with the CRC recomputed (so
/// that only the structure decides).
fn container_variants(block: &[u8]) -> Vec<Vec<u8>> {
    let trailer = block.len() - spec::TRAILER_LEN;
    let mut variants: Vec<Vec<u8>> = (0..block.len()).map(|len| block[..len].to_vec()).collect();
    for at in trailer..block.len() - 4 {
        for value in 0..=255u8 {
            let mut damaged = block.to_vec();
            damaged[at] = value;
            spec::reseal(&mut damaged);
            variants.push(damaged);
        }
    }
    variants
}

#[test]
fn the_container_is_refused_and_accepted_alike() {
    // Every value of every trailer byte, and every truncation, of one block of each kind: both readers accept
    // exactly the same variants, and agree on the answers of those they accept.
    let present = random_hashes(6, 300);
    let blocks = [
        build_hashes(
            Explicit(FilterPlan::BlockedBloom(
                BlockedBloomParams::new(5, 6).unwrap(),
            )),
            &present,
        ),
        build_hashes(RibbonPolicy::with_fpr(0.01).unwrap(), &present),
        build_hashes(
            Explicit(FilterPlan::StandardBloom(
                StandardBloomParams::new(3000, 7).unwrap(),
            )),
            &present,
        ),
        build_hashes(
            Explicit(FilterPlan::BlockedBloom(
                BlockedBloomParams::new(0, 6).unwrap(),
            )),
            &[],
        ),
    ];
    let absent = random_hashes(7, 100);
    let mut accepted = 0;
    for block in &blocks {
        for variant in &container_variants(block) {
            let ours = FilterBlock::open(&variant[..]);
            let reference = spec::open(variant);
            assert_eq!(ours.is_ok(), reference.is_ok(), "{ours:?} vs {reference:?}");
            if let (Ok(ours), Ok(reference)) = (ours, reference) {
                accepted += 1;
                for &h in present.iter().chain(&absent) {
                    assert_eq!(
                        ours.may_contain_hash(KeyHash::from_raw(h)),
                        reference.may_contain_key_hash(h)
                    );
                }
            }
        }
    }
    assert!(accepted > 4 * 36, "{accepted}");
}

/// Every byte string of up to `max_len` bytes over `alphabet`.
fn strings_over(alphabet: &[u8], max_len: usize) -> Vec<Vec<u8>> {
    let mut all: Vec<Vec<u8>> = vec![Vec::new()];
    let mut last: Vec<Vec<u8>> = vec![Vec::new()];
    for _ in 0..max_len {
        last = last
            .iter()
            .flat_map(|s| {
                alphabet.iter().map(move |&b| {
                    let mut t = s.clone();
                    t.push(b);
                    t
                })
            })
            .collect();
        all.extend(last.iter().cloned());
    }
    all
}

#[test]
fn prefix_extractors_and_questions_agree_with_the_spec() {
    // Section 2.1: the built-in extractors' names, domains, prefixes and scans as its table defines them, the key
    // count of a block built with each, and the answers to whole-key and prefix questions.
    let alphabet = [b'a', b':', 0, 0xff];
    let strings = strings_over(&alphabet, 4);
    let mut extractors: Vec<(Arc<dyn PrefixExtractor>, spec::SpecExtractor)> = Vec::new();
    for len in [0, 1, 2, 3, 12] {
        extractors.push((
            Arc::new(FixedPrefix::new(len)),
            spec::SpecExtractor::Fixed(len),
        ));
        extractors.push((
            Arc::new(CappedPrefix::new(len)),
            spec::SpecExtractor::Capped(len),
        ));
    }
    for d in [b':', b'/', 0, 0x0a, 0xff] {
        extractors.push((
            Arc::new(DelimitedPrefix::new(d)),
            spec::SpecExtractor::Delimited(d),
        ));
    }
    // Keys in sorted order, every fourth string: runs of equal prefixes, keys outside every domain.
    let mut keys: Vec<&[u8]> = strings.iter().step_by(4).map(Vec::as_slice).collect();
    keys.sort();
    for (ours, reference) in &extractors {
        assert_eq!(ours.name(), reference.name());
        for x in &strings {
            assert_eq!(
                ours.prefix_len(x),
                reference.prefix_len(x),
                "{} {x:?}",
                ours.name()
            );
            assert_eq!(
                ours.scan_prefix_len(x),
                reference.scan_len(x),
                "{} {x:?}",
                ours.name()
            );
        }
        for whole_keys in [true, false] {
            let mut builder = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0).unwrap())
                .with_prefixes(ours.clone(), whole_keys)
                .unwrap();
            for k in &keys {
                builder.add_key(k);
            }
            let block = builder.finish();
            let what = format!("{} whole_keys={whole_keys}", ours.name());
            let filter = FilterBlock::open(&block[..]).unwrap();
            let spec_block = spec::open(&block).unwrap();
            assert!(spec_block.checksum_ok, "{what}");
            assert_eq!(
                spec_block.prefix_name.as_deref(),
                Some(reference.name().as_str())
            );
            let hash = |b: &[u8]| key_hash(b).get();
            assert_eq!(
                filter.num_keys(),
                reference.key_count(&keys, whole_keys, hash),
                "{what}"
            );
            for x in &strings {
                assert_eq!(
                    filter.may_contain(x),
                    spec_block.may_contain_key_hash(hash(x)),
                    "{what}: {x:?}"
                );
                let spec_scan = reference.scan_len(x).is_none_or(|n| {
                    spec_block.may_contain_prefix(&reference.name(), hash(&x[..n]))
                });
                assert_eq!(
                    filter.may_contain_prefix(ours.as_ref(), x).must_read(),
                    spec_scan,
                    "{what}: scan {x:?}"
                );
                // Asked with another extractor's name, both readers answer "may contain".
                let other = FixedPrefix::new(99);
                assert!(filter.may_contain_prefix(&other, x).must_read());
                assert!(spec_block.may_contain_prefix(other.name(), hash(x)));
            }
        }
    }
}

/// Key sets for the Range kind: decimal keys after a common prefix, binary integers, keys that differ only past
/// the 8 projected bytes, a long shared prefix that shrinks late, the empty key, one key, no key.
fn range_key_sets() -> Vec<(&'static str, Vec<Vec<u8>>)> {
    let mut sets = Vec::new();
    let r = random_hashes(21, 3000);
    sets.push((
        "decimal",
        r.iter()
            .map(|x| format!("user:{:08}", x % 100_000_000).into_bytes())
            .collect(),
    ));
    sets.push((
        "binary",
        r.iter()
            .map(|x| x.to_le_bytes().to_vec())
            .collect::<Vec<_>>(),
    ));
    sets.push((
        "long keys",
        r.iter()
            .take(500)
            .map(|x| format!("tenant-42/obj/{:04}/{:016x}", x % 37, x).into_bytes())
            .collect(),
    ));
    let mut shrinking: Vec<Vec<u8>> = r
        .iter()
        .take(300)
        .map(|x| format!("aaaaaaaaaaaa{:03}", x % 1000).into_bytes())
        .collect();
    shrinking.push(b"aab".to_vec());
    shrinking.push(Vec::new());
    sets.push(("shrinking prefix", shrinking));
    sets.push(("one key", vec![b"only".to_vec()]));
    sets.push(("no key", Vec::new()));
    for (_, keys) in &mut sets {
        keys.sort();
        keys.dedup();
    }
    sets
}

fn range_block(policy: RangePolicy, keys: &[Vec<u8>]) -> Vec<u8> {
    let mut b = RangeFilterBuilder::new(policy);
    for k in keys {
        b.add_key(k).unwrap();
    }
    b.finish()
}

fn bound(kind: u64, key: &[u8]) -> (Bound<&[u8]>, spec::SpecBound<'_>) {
    match kind % 3 {
        0 => (Bound::Included(key), spec::SpecBound::Included(key)),
        1 => (Bound::Excluded(key), spec::SpecBound::Excluded(key)),
        _ => (Bound::Unbounded, spec::SpecBound::Unbounded),
    }
}

/// Both readers agree on every point and range question about a Range block, and the block is exactly what
/// FORMAT.md 4.5 tells a writer to produce. Present keys are found by both; every range holding a key answers
/// "may contain" in both.
fn range_agree(what: &str, block: &[u8], keys: &[Vec<u8>], others: &[Vec<u8>]) {
    let ours = FilterBlock::open(block).unwrap_or_else(|e| panic!("{what}: {e}"));
    let reference = spec::open(block).unwrap_or_else(|e| panic!("{what}: spec refuses: {e:?}"));
    let range = reference.range().unwrap();
    assert!(
        range.writer_invariants,
        "{what}: not the bytes 4.5 prescribes"
    );
    assert_eq!(ours.num_keys(), reference.num_keys, "{what}");
    for k in keys {
        assert!(ours.may_contain(k), "{what}: our reader lost {k:?}");
        assert!(range.may_contain(k), "{what}: the spec reader lost {k:?}");
    }
    for k in others {
        assert_eq!(ours.may_contain(k), range.may_contain(k), "{what}: {k:?}");
        assert!(
            ours.may_contain_hash(key_hash(k)),
            "{what}: hash questions may contain"
        );
    }
    let points: Vec<&[u8]> = keys.iter().chain(others).map(|k| &k[..]).collect();
    let choices = random_hashes(33, 2 * 4000);
    for pair in choices.chunks(2) {
        let a = points[(pair[0] % points.len() as u64) as usize];
        let b = points[(pair[1] % points.len() as u64) as usize];
        let (lower, spec_lower) = bound(pair[0] >> 40, a);
        let (upper, spec_upper) = bound(pair[1] >> 40, b);
        let answer = ours.may_contain_range(lower, upper);
        let expected = match range.may_contain_range(spec_lower, spec_upper) {
            spec::SpecRangeAnswer::Absent => Answer::Absent,
            spec::SpecRangeAnswer::MayContain => Answer::MayContain(Reason::Matched),
        };
        assert_eq!(answer, expected, "{what}: {lower:?}..{upper:?}");
        let holds = keys.iter().any(|k| (lower, upper).contains(&k.as_slice()));
        assert!(
            !holds || answer.must_read(),
            "{what}: lost {lower:?}..{upper:?}"
        );
    }
}

#[test]
fn range_blocks_agree_with_the_spec() {
    let policies = [
        RangePolicy::new(1, 0.5).unwrap(),
        RangePolicy::new(100, 0.01).unwrap(),
        RangePolicy::new(1 << 16, 0.001).unwrap(),
        // A long range at a small rate: the universe of 2^16 keys would reach 2^64.
        RangePolicy::new(1 << 36, 2f64.powi(-12)).unwrap(),
        RangePolicy::with_bits_per_key(12.0, 64).unwrap(),
    ];
    for (name, keys) in range_key_sets() {
        // Neighbours of the keys and strings outside their prefix, as absent points and as range bounds.
        let mut others: Vec<Vec<u8>> = keys
            .iter()
            .take(400)
            .flat_map(|k| {
                let mut next = k.clone();
                next.push(0);
                let mut bumped = k.clone();
                if let Some(last) = bumped.last_mut() {
                    *last = last.wrapping_add(1);
                }
                [next, bumped, k[..k.len() / 2].to_vec()]
            })
            .collect();
        others.extend([
            Vec::new(),
            vec![0xff; 20],
            b"user:".to_vec(),
            b"zzz".to_vec(),
        ]);
        for policy in policies {
            let block = range_block(policy, &keys);
            range_agree(&format!("{name} {policy:?}"), &block, &keys, &others);
        }
    }
}

#[test]
fn range_container_is_refused_and_accepted_alike() {
    // Every value of every trailer byte, and every truncation, of Range blocks (one with keys, one empty): both
    // readers accept exactly the same variants, and agree on point and range answers of those they accept.
    let keys: Vec<Vec<u8>> = (0..200u32)
        .map(|i| format!("k{:05}", i * 7).into_bytes())
        .collect();
    let probes: Vec<Vec<u8>> = (0..300u32)
        .map(|i| format!("k{:05}", i * 5).into_bytes())
        .collect();
    let mut accepted = 0;
    for block in [
        range_block(RangePolicy::new(64, 0.01).unwrap(), &keys),
        range_block(RangePolicy::new(64, 0.01).unwrap(), &[]),
    ] {
        for variant in &container_variants(&block) {
            let ours = FilterBlock::open(&variant[..]);
            let reference = spec::open(variant);
            assert_eq!(ours.is_ok(), reference.is_ok(), "{ours:?} vs {reference:?}");
            let (Ok(ours), Ok(reference)) = (ours, reference) else {
                continue;
            };
            accepted += 1;
            let Some(range) = reference.range() else {
                continue; // another kind's tag: the hash-based tests cover those
            };
            for w in probes.windows(2) {
                assert_eq!(ours.may_contain(&w[0]), range.may_contain(&w[0]));
                let answer = ours.may_contain_range(Bound::Included(&w[0]), Bound::Excluded(&w[1]));
                let spec_answer = range.may_contain_range(
                    spec::SpecBound::Included(&w[0]),
                    spec::SpecBound::Excluded(&w[1]),
                );
                assert_eq!(
                    answer.must_read(),
                    spec_answer != spec::SpecRangeAnswer::Absent
                );
            }
        }
    }
    assert!(accepted > 2 * 36, "{accepted}");
}
