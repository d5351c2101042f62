//! The demo's data: an LSM of tables whose key ranges overlap completely, and the keys its lookups ask for.
//!
//! Table `t` of `T` holds the even ids `2·(i·T + t)` for `i` in `0..n`, so every table spans the whole key range
//! and an index alone can never rule a table out: only the filter can. Absent keys use odd ids below every
//! table's last key.

/// Most entries (keys per table x tables) the ids below can number: the ids reach 2 x entries and must fit the
/// 12 digits of [`key`], past which keys would no longer sort like their ids.
pub(crate) const MAX_ENTRIES: u64 = 500_000_000_000;

/// A key of the shape `"usr:" + 12 digits` plus a 0–8 byte suffix (16–24 bytes), as in the benchmarks.
pub(crate) fn key(id: u64) -> Vec<u8> {
    let mut key = format!("usr:{id:012}").into_bytes();
    key.extend((0..id % 9).map(|s| b'a' + (id.wrapping_mul(31).wrapping_add(s) % 26) as u8));
    key
}

/// The 32-byte value stored under `key(id)`, derived from the id so that lookups can check it.
pub(crate) fn value(id: u64) -> Vec<u8> {
    format!("{id:016x}{:016x}", id.wrapping_mul(0x9E37_79B9_7F4A_7C15)).into_bytes()
}

/// Ids of the entries of table `table` of `tables`, `keys` of them, in key order.
pub(crate) fn table_ids(table: u64, tables: u64, keys: u64) -> impl Iterator<Item = u64> {
    (0..keys).map(move |i| 2 * (i * tables + table))
}

/// A small deterministic generator (SplitMix64): the same lookups on every run and for every configuration.
pub(crate) struct SplitMix64(u64);

impl SplitMix64 {
    pub(crate) fn new(seed: u64) -> Self {
        SplitMix64(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// Uniform in `0..n` (n > 0), by fastrange.
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }
}

/// `count` present ids, uniform over all `tables · keys` entries.
pub(crate) fn present_ids(count: u64, tables: u64, keys: u64, seed: u64) -> Vec<u64> {
    let mut rng = SplitMix64::new(seed);
    (0..count).map(|_| 2 * rng.below(tables * keys)).collect()
}

/// `count` absent ids: odd, and below the last key of every table (`2·((keys − 1)·tables)`), so that every
/// table's index points at a data block for them.
pub(crate) fn absent_ids(count: u64, tables: u64, keys: u64, seed: u64) -> Vec<u64> {
    let mut rng = SplitMix64::new(seed);
    let span = tables * keys.saturating_sub(1);
    (0..count).map(|_| 2 * rng.below(span.max(1)) + 1).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_sort_like_their_ids_and_tables_partition_them() {
        let ids: Vec<u64> = table_ids(2, 3, 1000).collect();
        assert!(ids.windows(2).all(|w| key(w[0]) < key(w[1])));
        assert!(ids.iter().all(|&id| (id / 2) % 3 == 2));
        assert!((16..=24).contains(&key(8).len()));
        assert_eq!(value(7).len(), 32);
    }

    #[test]
    fn absent_ids_fall_inside_every_table() {
        let (tables, keys) = (4, 100);
        let smallest_last = (0..tables)
            .map(|t| table_ids(t, tables, keys).last().unwrap())
            .min()
            .unwrap();
        for id in absent_ids(10_000, tables, keys, 1) {
            assert_eq!(id % 2, 1);
            assert!(id < smallest_last, "{id}");
        }
        for id in present_ids(10_000, tables, keys, 1) {
            assert!(table_ids((id / 2) % tables, tables, keys).any(|x| x == id));
        }
    }
}
