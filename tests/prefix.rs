//! Prefix filters never hide a key: for every kind, every built-in extractor and both settings of whole keys, a
//! scan over any prefix of any added key is never answered "absent", and points are found through whole keys or
//! prefixes. Exhaustive over small key universes (every scan string is asked), plus the edges: keys outside the
//! domain, keys shorter than a fixed prefix, the empty key and the empty scan, scans shorter and longer than the
//! extracted prefix, another extractor, a block without prefixes.

mod spec;

use std::sync::Arc;

use proptest::prelude::*;
use sstfilter::{
    Answer, BlockedBloomPolicy, CappedPrefix, DelimitedPrefix, FilterBlock, FilterBlockBuilder,
    FilterPolicy, FixedPrefix, PrefixExtractor, Reason, RibbonPolicy, StandardBloomPolicy,
};

fn policies() -> Vec<(&'static str, Box<dyn FilterPolicy>)> {
    vec![
        (
            "BlockedBloom",
            Box::new(BlockedBloomPolicy::new(10.0).unwrap()),
        ),
        ("Ribbon", Box::new(RibbonPolicy::with_fpr(0.01).unwrap())),
        (
            "StandardBloom",
            Box::new(StandardBloomPolicy::new(10.0).unwrap()),
        ),
    ]
}

fn extractors() -> Vec<Arc<dyn PrefixExtractor>> {
    vec![
        Arc::new(FixedPrefix::new(0)),
        Arc::new(FixedPrefix::new(1)),
        Arc::new(FixedPrefix::new(3)),
        Arc::new(CappedPrefix::new(2)),
        Arc::new(CappedPrefix::new(4)),
        Arc::new(DelimitedPrefix::new(b':')),
    ]
}

fn build(
    policy: &dyn FilterPolicy,
    extractor: &Arc<dyn PrefixExtractor>,
    whole: bool,
    keys: &[Vec<u8>],
) -> Vec<u8> {
    let mut builder = FilterBlockBuilder::new(policy)
        .with_prefixes(extractor.clone(), whole)
        .unwrap();
    for key in keys {
        builder.add_key(key);
    }
    builder.finish()
}

/// Every string of up to `max_len` bytes over `alphabet`, the empty one first.
fn all_strings(alphabet: &[u8], max_len: usize) -> Vec<Vec<u8>> {
    let mut out = vec![Vec::new()];
    let mut start = 0;
    for _ in 0..max_len {
        let end = out.len();
        for i in start..end {
            for &b in alphabet {
                let mut s = out[i].clone();
                s.push(b);
                out.push(s);
            }
        }
        start = end;
    }
    out
}

/// Checks a block built from `keys` against every scan in `scans`: never "absent" for a scan that some key starts
/// with, and the answer of our reader on the prefix agrees with the reader written from FORMAT.md.
fn check(
    what: &str,
    block: &[u8],
    extractor: &dyn PrefixExtractor,
    whole: bool,
    keys: &[Vec<u8>],
    scans: &[Vec<u8>],
) {
    let filter = FilterBlock::open(block).unwrap_or_else(|e| panic!("{what}: {e}"));
    let reference = spec::open(block).unwrap_or_else(|e| panic!("{what}: spec refuses {e:?}"));
    assert_eq!(
        filter.prefix_extractor_name(),
        Some(extractor.name()),
        "{what}"
    );
    assert_eq!(
        reference.prefix_name.as_deref(),
        Some(extractor.name()),
        "{what}"
    );
    assert_eq!(
        (filter.holds_whole_keys(), reference.whole_keys),
        (whole, whole),
        "{what}"
    );
    for key in keys {
        if whole {
            assert!(filter.may_contain(key), "{what}: lost key {key:?}");
        }
        if let Some(prefix) = extractor.prefix(key) {
            assert!(
                filter.may_contain_prefix(extractor, prefix).must_read(),
                "{what}: lost the prefix of {key:?}"
            );
        }
    }
    for scan in scans {
        let answer = filter.may_contain_prefix(extractor, scan);
        if keys.iter().any(|k| k.starts_with(scan)) {
            assert!(
                answer.must_read(),
                "{what}: scan {scan:?} answered absent over {keys:?}"
            );
        }
        if let Some(n) = extractor.scan_prefix_len(scan) {
            let spec_says = reference.may_contain_hash(sstfilter::key_hash(&scan[..n]).get());
            assert_eq!(answer.must_read(), spec_says, "{what}: scan {scan:?}");
        } else {
            assert_eq!(
                answer,
                Answer::MayContain(Reason::ScanNotDetermined),
                "{what}: {scan:?}"
            );
        }
    }
}

#[test]
fn every_scan_over_a_small_universe_is_answered_without_false_negatives() {
    let universe = all_strings(b"ab:", 4); // 121 strings, the empty one included
    let scans = all_strings(b"ab:", 5);
    let mut state = 7u64;
    for (name, policy) in policies() {
        for extractor in extractors() {
            for whole in [true, false] {
                for set in 0..6 {
                    // A pseudo-random subset of the universe (always with some keys outside most domains).
                    let keys: Vec<Vec<u8>> = universe
                        .iter()
                        .filter(|_| {
                            state = state
                                .wrapping_mul(6364136223846793005)
                                .wrapping_add(1442695040888963407);
                            (state >> 60) < 3 + set
                        })
                        .cloned()
                        .collect();
                    let what = format!(
                        "{name}, {}, whole keys {whole}, set {set}",
                        extractor.name()
                    );
                    let block = build(policy.as_ref(), &extractor, whole, &keys);
                    check(&what, &block, extractor.as_ref(), whole, &keys, &scans);
                }
            }
        }
    }
}

#[test]
fn the_edges_of_the_domain() {
    let fixed: Arc<dyn PrefixExtractor> = Arc::new(FixedPrefix::new(4));
    let keys: Vec<Vec<u8>> = [&b""[..], b"a", b"abc", b"abcd", b"abcdef", b"zzzz"]
        .map(<[u8]>::to_vec)
        .to_vec();
    for (name, policy) in policies() {
        for whole in [true, false] {
            let block = build(policy.as_ref(), &fixed, whole, &keys);
            let filter = FilterBlock::open(&block[..]).unwrap();
            // Keys shorter than the fixed prefix are outside the domain: no prefix for them ...
            assert!(fixed.prefix(b"abc").is_none());
            // ... and without whole keys, a point lookup cannot be answered by the block: "may contain".
            assert!(filter.may_contain(b"abc"), "{name}");
            // Scans shorter than the prefix (the empty scan among them) cannot be answered.
            for scan in [&b""[..], b"a", b"abc"] {
                let answer = filter.may_contain_prefix(fixed.as_ref(), scan);
                assert_eq!(
                    answer,
                    Answer::MayContain(Reason::ScanNotDetermined),
                    "{name} {scan:?}"
                );
            }
            // Longer scans probe their first 4 bytes.
            assert!(
                filter
                    .may_contain_prefix(fixed.as_ref(), b"abcdefgh")
                    .must_read(),
                "{name}"
            );
            assert!(
                filter
                    .may_contain_prefix(fixed.as_ref(), b"abcdxyz")
                    .must_read(),
                "{name}"
            );
            // Another extractor, even of the same family, is never answered "absent".
            let other = FixedPrefix::new(3);
            assert_eq!(
                filter.may_contain_prefix(&other, b"qqqq"),
                Answer::MayContain(Reason::OtherExtractor),
                "{name}"
            );
        }
        // A block without prefixes says so.
        let mut builder = FilterBlockBuilder::new(policy.as_ref());
        builder.add_key(b"abcd");
        let plain = builder.finish();
        let filter = FilterBlock::open(&plain[..]).unwrap();
        assert_eq!(filter.format_version(), 1);
        assert_eq!(filter.prefix_extractor_name(), None);
        assert_eq!(
            filter.may_contain_prefix(fixed.as_ref(), b"abcd"),
            Answer::MayContain(Reason::NoPrefixes)
        );
    }
}

#[test]
fn absent_prefixes_are_answered_absent_at_about_the_filter_rate() {
    // Usefulness, not only safety: 1000 tenants' keys, 10,000 other tenants asked.
    let tenants: Arc<dyn PrefixExtractor> = Arc::new(DelimitedPrefix::new(b'/'));
    let keys: Vec<Vec<u8>> = (0..1000)
        .flat_map(|t| (0..5).map(move |i| format!("t{t:05}/row{i}").into_bytes()))
        .collect();
    for (name, policy) in policies() {
        let block = build(policy.as_ref(), &tenants, true, &keys);
        let filter = FilterBlock::open(&block[..]).unwrap();
        let passed = (1000..11_000)
            .filter(|t| {
                filter
                    .may_contain_prefix(tenants.as_ref(), format!("t{t:05}/").as_bytes())
                    .must_read()
            })
            .count();
        assert!(
            passed < 300,
            "{name}: {passed} of 10,000 absent tenants pass"
        );
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn random_keys_and_scans_lose_nothing(
        keys in proptest::collection::vec(proptest::collection::vec(prop_oneof![Just(b'a'), Just(b'b'), Just(b'/'), any::<u8>()], 0..12), 0..300),
        which in 0usize..6,
        whole in any::<bool>(),
        kind in 0usize..3,
    ) {
        let extractor = extractors().swap_remove(which);
        let (name, policy) = policies().swap_remove(kind);
        let block = build(policy.as_ref(), &extractor, whole, &keys);
        let scans: Vec<Vec<u8>> = keys.iter().flat_map(|k| (0..=k.len()).map(move |n| k[..n].to_vec())).collect();
        check(&format!("{name}, {}", extractor.name()), &block, extractor.as_ref(), whole, &keys, &scans);
    }
}
