//! Format freeze: golden blocks under `tests/golden/` must keep opening, keep answering for their keys, and —
//! while their format version is the one this crate writes — be rebuilt byte for byte.
//!
//! A file is named `v{version}-{kind}-n{keys}-bpk{bits_per_key}.hex` and holds the block as lowercase hex; its
//! keys are `golden-{i}` for `i` in `0..keys`. This test only ever gains files: a change that alters the bytes
//! of an existing file is a format change and needs a new version (see FORMAT.md).
//!
//! To create a newly listed file, run the test with `SSTFILTER_BLESS=1`; existing files are never rewritten.

use std::path::{Path, PathBuf};

use sstfilter::RibbonPolicy;
use sstfilter::StandardBloomPolicy;
use sstfilter::{
    FORMAT_VERSION, FastBloomPolicy, FilterBlock, FilterBlockBuilder, FilterKind, FilterPolicy,
};

/// Every golden file that must exist. Add lines; never remove them.
const REQUIRED: &[&str] = &[
    "v1-fastbloom-n0-bpk10.hex",
    "v1-fastbloom-n1-bpk10.hex",
    "v1-fastbloom-n10-bpk10.hex",
    "v1-fastbloom-n100-bpk7.5.hex",
    "v1-fastbloom-n1000-bpk16.hex",
    "v1-fastbloom-n200-bpk1.hex",
    "v1-fastbloom-n50-bpk32.hex",
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
];

struct Golden {
    version: u8,
    kind: FilterKind,
    keys: usize,
    bits_per_key: f64,
}

fn parse_name(name: &str) -> Golden {
    let stem = name.strip_suffix(".hex").expect("golden files end in .hex");
    let parts: Vec<&str> = stem.split('-').collect();
    let [version, kind, keys, bpk] = parts[..] else {
        panic!("{name}: expected v<version>-<kind>-n<keys>-bpk<bits>.hex");
    };
    Golden {
        version: version
            .strip_prefix('v')
            .and_then(|v| v.parse().ok())
            .expect("version"),
        kind: match kind {
            "fastbloom" => FilterKind::FastBloom,
            "ribbon" => FilterKind::Ribbon,
            "standardbloom" => FilterKind::StandardBloom,
            other => panic!("{name}: unknown kind {other}"),
        },
        keys: keys
            .strip_prefix('n')
            .and_then(|n| n.parse().ok())
            .expect("key count"),
        bits_per_key: bpk
            .strip_prefix("bpk")
            .and_then(|b| b.parse().ok())
            .expect("bits/key"),
    }
}

fn keys(n: usize) -> Vec<Vec<u8>> {
    (0..n).map(|i| format!("golden-{i}").into_bytes()).collect()
}

fn policy(golden: &Golden) -> Box<dyn FilterPolicy> {
    match golden.kind {
        FilterKind::FastBloom => Box::new(FastBloomPolicy::new(golden.bits_per_key)),
        FilterKind::Ribbon => Box::new(RibbonPolicy::new(golden.bits_per_key)),
        FilterKind::StandardBloom => Box::new(StandardBloomPolicy::new(golden.bits_per_key)),
        other => panic!("no policy builds {other}"),
    }
}

fn build(golden: &Golden) -> Vec<u8> {
    let mut builder = FilterBlockBuilder::new(policy(golden));
    for k in keys(golden.keys) {
        builder.add_key(&k);
    }
    builder.finish()
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
            std::fs::write(&path, to_hex(&build(&parse_name(name)))).unwrap();
        }
    }

    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_owned();
        let golden = parse_name(&name);
        let bytes = from_hex(&std::fs::read_to_string(&path).unwrap());

        let filter =
            FilterBlock::open_verified(&bytes[..]).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(filter.format_version(), golden.version, "{name}");
        assert_eq!(filter.kind(), golden.kind, "{name}");
        assert_eq!(filter.num_keys(), golden.keys as u64, "{name}");
        for k in keys(golden.keys) {
            assert!(
                filter.may_contain(&k),
                "{name}: lost {:?}",
                String::from_utf8_lossy(&k)
            );
        }
        if golden.version == FORMAT_VERSION {
            assert!(
                build(&golden) == bytes,
                "{name}: this crate now writes different bytes"
            );
        }
        checked += 1;
    }
    assert!(checked >= REQUIRED.len());
}
