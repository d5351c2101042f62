//! Format freeze: golden blocks under `tests/golden/` must keep opening, keep answering for their keys, agree with
//! the reader written from FORMAT.md (`tests/spec_reader.rs`), and, while their format version is the one this
//! crate writes, be rebuilt byte for byte **from the parameters stored in their own trailer**. Rebuilding from the
//! block's parameters rather than through a policy pins the format, not the writer's tuning: retuning a policy's
//! probe table or Ribbon's overhead table changes what a policy plans (`tests/policy_choices.rs` pins that), never
//! these files. (Ribbon blocks are rebuilt from their parameters inside the crate, `src/kind/ribbon/tests.rs`,
//! because a Ribbon plan with explicit slots and shards is not public API.)
//!
//! A file is named `v{version}-{kind}-n{keys}-{how}[-{prefixes}].hex` and holds the block as lowercase hex; its
//! keys are `golden-{i}` for `i` in `0..keys`. `prefixes`, on version-2 blocks, names the prefix extractor the keys
//! went through (`fixed{n}`, `delimited{byte in hex}`, `capped{n}`), with `only` appended when whole keys were
//! left out. `how` says how the file was first written: `bpk{x}` with the kind's policy
//! at `x` bits/key (Ribbon: Bloom-equivalent bits/key), `fpr2e{e}` with `RibbonPolicy::with_fpr(2^-e).unwrap()`,
//! `k{k}b{blocks}` with explicit `BlockedBloomParams::new(blocks, k)`, `k{k}m{bits}` with explicit
//! `StandardBloomParams::new(bits, k)`, `r{s}e{e}` with `RangePolicy::new(2^s, 2^-e).unwrap()` (Range blocks, whose keys
//! are added in sorted order). Range blocks are rebuilt through the policy their name gives here, and from their
//! own parameters inside the crate (`src/kind/range/tests.rs`). This test only ever gains files: a change that alters the bytes of an
//! existing file is a format change and needs a new version (see FORMAT.md). The one exception came before the
//! first release, as issue 13 allowed: BlockedBloom's probe derivation changed (FORMAT.md 4.2 and 6), its files
//! were rewritten, and one of the old ones is kept in `tests/golden-retired/` to show it is refused.
//!
//! To create a newly listed file, run the test with `SSTFILTER_BLESS=1`; existing files are never rewritten.

mod spec;

use std::ops::Bound;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use sstfilter::{
    BlockedBloomParams, BlockedBloomPolicy, CappedPrefix, DelimitedPrefix, FORMAT_VERSION,
    FilterBlock, FilterBlockBuilder, FilterKind, FilterPlan, FilterPolicy, FixedPrefix, KindParams,
    PrefixExtractor, RangeFilterBuilder, RangePolicy, RibbonPolicy, StandardBloomParams,
    StandardBloomPolicy,
};

/// Every golden file that must exist. Add lines; never remove them.
const REQUIRED: &[&str] = &[
    "v1-blockedbloom-n0-bpk10.hex",
    "v1-blockedbloom-n1-bpk10.hex",
    "v1-blockedbloom-n10-bpk10.hex",
    "v1-blockedbloom-n100-bpk7.5.hex",
    "v1-blockedbloom-n1000-bpk16.hex",
    "v1-blockedbloom-n200-bpk1.hex",
    "v1-blockedbloom-n50-bpk32.hex",
    "v1-ribbon-n300-bpk10.hex",
    "v1-ribbon-n1000-bpk7.5.hex",
    "v1-ribbon-n2000-bpk16.hex",
    "v1-ribbon-n10000-bpk10.hex",
    "v1-standardbloom-n0-bpk10.hex",
    "v1-standardbloom-n1-bpk10.hex",
    "v1-standardbloom-n10-bpk10.hex",
    "v1-standardbloom-n100-bpk7.5.hex",
    "v1-standardbloom-n1000-bpk16.hex",
    "v1-standardbloom-n200-bpk1.hex",
    "v1-standardbloom-n50-bpk32.hex",
    // Every BlockedBloom probe count, from explicit parameters (2 blocks, 40 keys).
    "v1-blockedbloom-n40-k1b2.hex",
    "v1-blockedbloom-n40-k2b2.hex",
    "v1-blockedbloom-n40-k3b2.hex",
    "v1-blockedbloom-n40-k4b2.hex",
    "v1-blockedbloom-n40-k5b2.hex",
    "v1-blockedbloom-n40-k6b2.hex",
    "v1-blockedbloom-n40-k7b2.hex",
    "v1-blockedbloom-n40-k8b2.hex",
    "v1-blockedbloom-n40-k9b2.hex",
    "v1-blockedbloom-n40-k10b2.hex",
    "v1-blockedbloom-n40-k11b2.hex",
    "v1-blockedbloom-n40-k12b2.hex",
    "v1-blockedbloom-n40-k13b2.hex",
    "v1-blockedbloom-n40-k14b2.hex",
    "v1-blockedbloom-n40-k15b2.hex",
    "v1-blockedbloom-n40-k16b2.hex",
    "v1-blockedbloom-n40-k17b2.hex",
    "v1-blockedbloom-n40-k18b2.hex",
    "v1-blockedbloom-n40-k19b2.hex",
    "v1-blockedbloom-n40-k20b2.hex",
    "v1-blockedbloom-n40-k21b2.hex",
    "v1-blockedbloom-n40-k22b2.hex",
    "v1-blockedbloom-n40-k23b2.hex",
    "v1-blockedbloom-n40-k24b2.hex",
    // StandardBloom at the extreme probe counts and odd bit counts.
    "v1-standardbloom-n30-k1m333.hex",
    "v1-standardbloom-n30-k30m1001.hex",
    "v1-standardbloom-n30-k255m4099.hex",
    // Ribbon at the wide layouts the reader once misread (25..=31 columns), at 32 columns, upper blocks only,
    // mixed, and 1 column. Written before and after the reader fix with the same bytes: the writer was right.
    "v1-ribbon-n100-fpr2e25.hex",
    "v1-ribbon-n65-fpr2e31.hex",
    "v1-ribbon-n1000-fpr2e27.5.hex",
    "v1-ribbon-n300-fpr2e32.hex",
    "v1-ribbon-n200-fpr2e20.999.hex",
    "v1-ribbon-n500-fpr2e1.hex",
    // Version 2: prefix sections, with and without whole keys, for every kind and built-in extractor.
    "v2-blockedbloom-n60-bpk10-fixed8.hex",
    "v2-blockedbloom-n60-bpk10-delimited2donly.hex",
    "v2-ribbon-n400-bpk10-capped8.hex",
    "v2-ribbon-n400-bpk10-capped10only.hex",
    "v2-standardbloom-n60-bpk10-delimited2d.hex",
    "v2-standardbloom-n60-bpk10-capped7only.hex",
    // Range (tag 3): no key, one key, plain hashes (L = 1), short and long ranges, a universe near 2^64.
    "v1-range-n0-r4e7.hex",
    "v1-range-n1-r4e7.hex",
    "v1-range-n100-r0e1.hex",
    "v1-range-n1000-r4e7.hex",
    "v1-range-n1000-r16e10.hex",
    "v1-range-n300-r48e7.hex",
];

/// How a golden file was first written.
#[derive(Debug, Clone, Copy)]
enum How {
    BitsPerKey(f64),
    RibbonRate(f64),
    BlockedBloom { probes: u8, blocks: u32 },
    StandardBloom { hashes: u32, bits: u64 },
    Range { range_log2: u32, rate_log2: f64 },
}

struct Golden {
    version: u8,
    kind: FilterKind,
    keys: usize,
    how: How,
    /// The extractor the keys' prefixes went through, and whether whole keys were added too.
    prefixes: Option<(Arc<dyn PrefixExtractor>, bool)>,
}

/// The extractor a file name's prefix part stands for, and whether whole keys were kept.
fn parse_prefixes(name: &str, part: &str) -> (Arc<dyn PrefixExtractor>, bool) {
    let (spec, whole_keys) = match part.strip_suffix("only") {
        Some(spec) => (spec, false),
        None => (part, true),
    };
    let extractor: Arc<dyn PrefixExtractor> = if let Some(n) = spec.strip_prefix("fixed") {
        Arc::new(FixedPrefix::new(n.parse().expect("length")))
    } else if let Some(n) = spec.strip_prefix("capped") {
        Arc::new(CappedPrefix::new(n.parse().expect("length")))
    } else if let Some(b) = spec.strip_prefix("delimited") {
        Arc::new(DelimitedPrefix::new(
            u8::from_str_radix(b, 16).expect("hex byte"),
        ))
    } else {
        panic!("{name}: unknown prefix extractor {spec}");
    };
    (extractor, whole_keys)
}

fn parse_name(name: &str) -> Golden {
    let stem = name.strip_suffix(".hex").expect("golden files end in .hex");
    let parts: Vec<&str> = stem.split('-').collect();
    let (version, kind, keys, how, prefixes) = match parts[..] {
        [version, kind, keys, how] => (version, kind, keys, how, None),
        [version, kind, keys, how, prefixes] => (
            version,
            kind,
            keys,
            how,
            Some(parse_prefixes(name, prefixes)),
        ),
        _ => panic!("{name}: expected v<version>-<kind>-n<keys>-<how>[-<prefixes>].hex"),
    };
    let number = |s: &str| -> f64 { s.parse().unwrap_or_else(|_| panic!("{name}: {s}")) };
    let how = if let Some(bpk) = how.strip_prefix("bpk") {
        How::BitsPerKey(number(bpk))
    } else if let Some(e) = how.strip_prefix("fpr2e") {
        How::RibbonRate((-number(e)).exp2())
    } else if let Some((s, e)) = how.strip_prefix('r').and_then(|rest| rest.split_once('e')) {
        How::Range {
            range_log2: number(s) as u32,
            rate_log2: number(e),
        }
    } else if let Some((k, size)) = how
        .strip_prefix('k')
        .and_then(|rest| rest.split_once(['b', 'm']))
    {
        if how.contains('b') {
            How::BlockedBloom {
                probes: number(k) as u8,
                blocks: number(size) as u32,
            }
        } else {
            How::StandardBloom {
                hashes: number(k) as u32,
                bits: number(size) as u64,
            }
        }
    } else {
        panic!("{name}: unknown construction {how}");
    };
    Golden {
        version: version
            .strip_prefix('v')
            .and_then(|v| v.parse().ok())
            .expect("version"),
        kind: match kind {
            "blockedbloom" => FilterKind::BlockedBloom,
            "ribbon" => FilterKind::Ribbon,
            "standardbloom" => FilterKind::StandardBloom,
            "range" => FilterKind::Range,
            other => panic!("{name}: unknown kind {other}"),
        },
        keys: keys
            .strip_prefix('n')
            .and_then(|n| n.parse().ok())
            .expect("key count"),
        how,
        prefixes,
    }
}

fn keys(n: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| format!("golden-{i}").into_bytes()).collect()
}

/// A Range block of the file's keys, in sorted order, built as its name says.
fn range_block(golden: &Golden, range_log2: u32, rate_log2: f64) -> Vec<u8> {
    let mut keys = keys(golden.keys);
    keys.sort();
    let mut builder =
        RangeFilterBuilder::new(RangePolicy::new(1 << range_log2, (-rate_log2).exp2()).unwrap());
    for k in &keys {
        builder.add_key(k).unwrap();
    }
    builder.finish()
}

/// A policy that plans exactly the given parameters.
#[derive(Debug, Clone, Copy)]
struct Explicit(FilterPlan);

impl FilterPolicy for Explicit {
    fn plan(&self, _num_keys: usize) -> FilterPlan {
        self.0
    }
}

fn build(policy: impl FilterPolicy, golden: &Golden) -> Vec<u8> {
    let mut builder = FilterBlockBuilder::new(policy);
    if let Some((extractor, whole_keys)) = &golden.prefixes {
        builder = builder
            .with_prefixes(extractor.clone(), *whole_keys)
            .unwrap();
    }
    let n = golden.keys;
    for k in keys(n) {
        builder.add_key(&k);
    }
    builder.finish()
}

/// The block a newly listed file gets: written the way its name says.
fn first_written(golden: &Golden) -> Vec<u8> {
    if let How::Range {
        range_log2,
        rate_log2,
    } = golden.how
    {
        return range_block(golden, range_log2, rate_log2);
    }
    let policy: Box<dyn FilterPolicy> = match (golden.kind, golden.how) {
        (FilterKind::BlockedBloom, How::BitsPerKey(b)) => {
            Box::new(BlockedBloomPolicy::new(b).unwrap())
        }
        (FilterKind::Ribbon, How::BitsPerKey(b)) => Box::new(RibbonPolicy::new(b).unwrap()),
        (FilterKind::StandardBloom, How::BitsPerKey(b)) => {
            Box::new(StandardBloomPolicy::new(b).unwrap())
        }
        (FilterKind::Ribbon, How::RibbonRate(fpr)) => {
            Box::new(RibbonPolicy::with_fpr(fpr).unwrap())
        }
        (_, How::BlockedBloom { probes, blocks }) => Box::new(Explicit(FilterPlan::BlockedBloom(
            BlockedBloomParams::new(blocks, probes).unwrap(),
        ))),
        (_, How::StandardBloom { hashes, bits }) => Box::new(Explicit(FilterPlan::StandardBloom(
            StandardBloomParams::new(bits, hashes).unwrap(),
        ))),
        (kind, how) => panic!("no way to write {kind} as {how:?}"),
    };
    build(policy, golden)
}

/// The block rebuilt from the parameters its own trailer stores, with the file's keys (and prefixes); `None` for
/// Ribbon (rebuilt inside the crate, or, with prefixes, by its policy below).
fn rebuilt_from_own_params(filter: &FilterBlock<&[u8]>, golden: &Golden) -> Option<Vec<u8>> {
    let plan = match *filter.params() {
        KindParams::BlockedBloom(p) => FilterPlan::BlockedBloom(p),
        KindParams::StandardBloom(p) => FilterPlan::StandardBloom(p),
        KindParams::Range(_) => return Some(first_written(golden)),
        _ if golden.prefixes.is_some() => return Some(first_written(golden)),
        _ => return None,
    };
    Some(build(Explicit(plan), golden))
}

fn to_hex(bytes: &[u8]) -> String {
    let mut out = String::new();
    for line in bytes.chunks(32) {
        for b in line {
            out.push_str(&format!("{b:02x}"));
        }
        out.push('\n');
    }
    out
}

fn from_hex(text: &str) -> Vec<u8> {
    let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
    digits
        .chunks(2)
        .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).expect("hex digit"))
        .collect()
}

fn golden_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden")
}

/// A BlockedBloom block written before the first release, when a key owned its first `k` *distinct* draws
/// (`tests/golden-retired/`; the file `v1-blockedbloom-n1000-bpk16.hex` was then). Its probe derivation byte is 0
/// (FORMAT.md 4.2): both readers open it and, since a key's first `k` draws are among its distinct ones, answer
/// for every one of its keys.
#[test]
fn pre_release_blocked_bloom_blocks_still_answer_for_every_key() {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/golden-retired/v1-blockedbloom-n1000-bpk16-distinct.hex");
    let bytes = from_hex(&std::fs::read_to_string(&path).unwrap());
    let derivation = bytes.len() - sstfilter::TRAILER_LEN + 8 + 1;
    assert_eq!(bytes[derivation], 0, "a pre-release block");
    let filter = FilterBlock::open(&bytes[..]).expect("opens");
    let spec = spec::open(&bytes).expect("the spec reader opens it");
    for key in keys(1000) {
        assert!(filter.may_contain(&key), "lost {key:?}");
        assert!(
            spec.may_contain_key_hash(sstfilter::key_hash(&key).get()),
            "spec lost {key:?}"
        );
    }
}

#[test]
fn golden_blocks_are_frozen() {
    let dir = golden_dir();
    let bless = std::env::var_os("SSTFILTER_BLESS").is_some();
    for name in REQUIRED {
        let path = dir.join(name);
        if !path.exists() {
            assert!(
                bless,
                "{name} is missing (run with SSTFILTER_BLESS=1 to create it)"
            );
            std::fs::write(&path, to_hex(&first_written(&parse_name(name)))).unwrap();
        }
    }

    let (mut checked, mut rebuilt) = (0, 0);
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let golden = parse_name(&name);
        let bytes = from_hex(&std::fs::read_to_string(&path).unwrap());

        let filter = FilterBlock::open(&bytes[..]).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(filter.format_version(), golden.version, "{name}");
        assert_eq!(filter.kind(), golden.kind, "{name}");
        for k in keys(golden.keys) {
            let shown = String::from_utf8_lossy(&k);
            match &golden.prefixes {
                None => {
                    // A Range block counts distinct codes, which keys may share.
                    if golden.kind == FilterKind::Range {
                        assert!(filter.num_keys() <= golden.keys as u64, "{name}");
                        let range = (Bound::Included(&k[..]), Bound::Included(&k[..]));
                        assert!(
                            filter.may_contain_range(range.0, range.1).must_read(),
                            "{name}"
                        );
                    } else {
                        assert_eq!(filter.num_keys(), golden.keys as u64, "{name}");
                    }
                    assert!(filter.may_contain(&k), "{name}: lost {shown:?}");
                }
                Some((extractor, whole_keys)) => {
                    let extractor = extractor.as_ref();
                    assert_eq!(
                        filter.prefix_extractor_name(),
                        Some(extractor.name()),
                        "{name}"
                    );
                    assert_eq!(filter.holds_whole_keys(), *whole_keys, "{name}");
                    assert!(
                        !whole_keys || filter.may_contain(&k),
                        "{name}: lost {shown:?}"
                    );
                    if let Some(prefix) = extractor.prefix(&k) {
                        let answer = filter.may_contain_prefix(extractor, prefix);
                        assert!(answer.must_read(), "{name}: lost the prefix of {shown:?}");
                    }
                }
            }
        }
        // Every version this crate reads it also writes (1 without prefixes, 2 with).
        if golden.version <= FORMAT_VERSION
            && let Some(again) = rebuilt_from_own_params(&filter, &golden)
        {
            assert!(
                again == bytes,
                "{name}: this crate now writes different bytes for the same parameters"
            );
            rebuilt += 1;
        }
        checked += 1;
    }
    assert!(checked >= REQUIRED.len());
    assert!(rebuilt >= 51, "{rebuilt}");
}
