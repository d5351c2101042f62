//! No false negatives for RocksDB's filter builders at every probe count RocksDB's table gives and its edges,
//! built through the one list of constructors (`Recipe`, `crates/recipes`), which the core's property test and the
//! fuzzers draw from too: `Recipe::check` reads each block as RocksDB reads it, checks that every key may match,
//! and that a checked constructor refuses exactly what its documentation excludes.

use sstfilter_recipes::{BitsPerKey, Recipe};

fn keys(n: usize, salt: &str) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| format!("{salt}:{i:08}").into_bytes())
        .collect()
}

// --- RocksDB's FastLocalBloom ---

/// Bits per key in thousandths at each edge of RocksDB's probe table (both of RocksDB's filters take the rate they
/// aim at from it), a sweep from 0.5 to 100.5 bits, and the edges of the accepted range: 127 accepted settings.
fn rocksdb_millibits() -> impl Iterator<Item = u32> {
    let edges = [
        2080, 3580, 5100, 6640, 8300, 10070, 11720, 14001, 16050, 18300, 22001, 25501, 50000,
    ];
    edges
        .into_iter()
        .flat_map(|e| [e, e + 1])
        .chain((500..=100_500).step_by(997))
        .chain([999, 1000, 99_999, 100_000])
}

/// Every probe count RocksDB's table gives (bits per key at each edge of it, in thousandths, and a sweep from 0.5
/// to 100.5 bits), over no keys, one, a few and a few hundred: every key may match, and the refused settings are the
/// documented ones.
#[test]
fn rocksdb_bloom_at_every_probe_count_and_its_edges() {
    let mut accepted = 0;
    for m in rocksdb_millibits() {
        for n in [0usize, 1, 7, 300] {
            let recipe = Recipe::RocksDbBloom(BitsPerKey::Exactly(f64::from(m) / 1000.0));
            if recipe.check(&keys(n, "rocks"), None, None).is_some() {
                accepted += 1;
            }
        }
    }
    // Accepted at each of the 4 key counts: the 26 edges, the sweep but its first (0.5) and last (100.2) bits per
    // key, and 1.0 and 99.999 (not 0.999 nor 100.0).
    assert_eq!(accepted, 4 * (26 + 99 + 2), "{accepted}");
}

/// RocksDB's Ribbon at the same settings (its rate, and so its column counts, follow the probe table), over no keys,
/// one, a few, a few hundred (where RocksDB may fall back to its Bloom filter) and enough for a Ribbon filter at
/// every setting, a third of them added again after the rest (equal rows the banding must take as redundant): every
/// key may match, and the refused settings are the documented ones.
#[test]
fn rocksdb_ribbon_at_every_probe_count_and_its_edges() {
    let mut accepted = 0;
    for m in rocksdb_millibits() {
        for n in [0usize, 1, 7, 300, 1500] {
            let recipe = Recipe::RocksDbRibbon(BitsPerKey::Exactly(f64::from(m) / 1000.0));
            let mut keys = keys(n, "ribbon");
            keys.extend_from_within(..n / 3);
            if recipe.check(&keys, None, None).is_some() {
                accepted += 1;
            }
        }
    }
    // As for RocksDbBloom, at each of the 5 key counts.
    assert_eq!(accepted, 5 * (26 + 99 + 2), "{accepted}");
}
