//! The equation of a key: which shard it belongs to, where its coefficient row starts, the row itself and the
//! result bits it must reproduce. Everything derives from the one 64-bit key hash; builder and query both call
//! these functions, so they cannot disagree. Every constant here is part of the format (FORMAT.md, section 4.3).

/// Width of a coefficient row in slots: rows are `u128`.
pub(crate) const COEFF_BITS: u64 = 128;

/// "Smash" (as RocksDB calls it): starts are drawn from a range `2 · SMASH` positions wider than the shard's
/// valid starts and clamped into it, which puts a little more load on the first and last positions. Without it
/// the edges of every shard are under-used (no row can start before the first slot, and the last slots only
/// receive rows from the final `COEFF_BITS` starts). 48 measured best for shards up to
/// [`SHARD_TARGET_KEYS`](super::policy::SHARD_TARGET_KEYS) keys (BENCHMARKS.md, "Ribbon").
pub(crate) const SMASH: u64 = 48;

/// Odd multipliers. `MIX` is the 64-bit golden ratio (2^64 / φ); the others are the splitmix64 and
/// Stafford "mix13" finaliser constants, which are well studied as bijective avalanche steps.
const MIX: u64 = 0x9E37_79B9_7F4A_7C15;
const FMIX_A: u64 = 0xBF58_476D_1CE4_E5B9;
const FMIX_B: u64 = 0x94D0_49BB_1331_11EB;
const FMIX_C: u64 = 0xD6E8_FEB8_6659_FD93;

/// The shard of a key: fastrange over the whole 64-bit hash (the high half of the 128-bit product).
#[inline(always)]
pub(crate) fn shard_of(h: u64, num_shards: u32) -> usize {
    ((u128::from(h) * u128::from(num_shards)) >> 64) as usize
}

/// The key hash remixed with its shard's seed. For each seed this is a bijection of `h` (an xor with a
/// seed-dependent constant, an odd multiplication and an xor-shift), so distinct key hashes stay distinct and
/// each seed gives every key of the shard a fresh start, row and result. One round suffices because `h` is
/// already a strong hash (xxh3); the round only has to move every input bit into the high bits that pick the
/// start.
#[inline(always)]
pub(crate) fn remix(h: u64, seed: u8) -> u64 {
    let z = (h ^ (u64::from(seed) + 1).wrapping_mul(MIX)).wrapping_mul(FMIX_C);
    z ^ (z >> 32)
}

/// The start of a key's row among a shard's `num_starts` valid starts (`0..num_starts`): fastrange of the
/// remixed hash over `num_starts + 2·SMASH` positions, shifted down by `SMASH` and clamped (see [`SMASH`]).
/// Requires `num_starts >= 1`.
#[inline(always)]
pub(crate) fn local_start(x: u64, num_starts: u64) -> u64 {
    let spread = num_starts + 2 * SMASH;
    let drawn = ((u128::from(x) * u128::from(spread)) >> 64) as u64;
    drawn.saturating_sub(SMASH).min(num_starts - 1)
}

/// The coefficient row: 128 pseudo-random bits with bit 0 (the row's own start slot) forced to 1, so a row
/// always has a leading position and no key's row is zero.
#[inline(always)]
pub(crate) fn coeff_row(x: u64) -> u128 {
    let high = x.wrapping_mul(MIX);
    let low = (x ^ (x >> 29)).wrapping_mul(FMIX_A);
    (u128::from(high) << 64) | u128::from(low) | 1
}

/// The result bits a key's row must reproduce: bit `i` is the value column `i` of the solution must give. A
/// query compares as many low bits as its block has columns.
#[inline(always)]
pub(crate) fn result_bits(x: u64) -> u32 {
    (x.wrapping_mul(FMIX_B) >> 32) as u32
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shards_cover_the_range_uniformly() {
        assert_eq!(shard_of(0, 7), 0);
        assert_eq!(shard_of(u64::MAX, 7), 6);
        assert_eq!(shard_of(u64::MAX, 1), 0);
        let mut counts = [0u32; 7];
        for i in 0..70_000u64 {
            counts[shard_of(remix(i, 0), 7)] += 1;
        }
        assert!(
            counts.iter().all(|&c| (9_500..10_500).contains(&c)),
            "{counts:?}"
        );
    }

    #[test]
    fn remix_is_a_bijection_per_seed_and_differs_between_seeds() {
        let inputs: Vec<u64> = (0..10_000u64)
            .map(|i| i.wrapping_mul(0x1234_5678_9ABC_DEF1))
            .collect();
        for seed in [0u8, 1, 255] {
            let mut out: Vec<u64> = inputs.iter().map(|&h| remix(h, seed)).collect();
            out.sort_unstable();
            out.dedup();
            assert_eq!(out.len(), inputs.len(), "seed {seed}");
        }
        let same = inputs
            .iter()
            .filter(|&&h| remix(h, 0) == remix(h, 1))
            .count();
        assert_eq!(same, 0);
    }

    #[test]
    fn starts_stay_in_range_and_load_the_edges_a_little_more() {
        for num_starts in [1u64, 2, 97, 8000] {
            let mut edge = 0usize;
            for i in 0..20_000u64 {
                let s = local_start(remix(i, 3), num_starts);
                assert!(s < num_starts);
                edge += usize::from(s == 0);
            }
            if num_starts == 8000 {
                // Expected mass at 0: (SMASH + 1) of 8096 drawn positions, about 121 of 20 000.
                assert!((70..180).contains(&edge), "{edge}");
            }
        }
        assert_eq!(local_start(0, 1), 0);
        assert_eq!(local_start(u64::MAX, 1), 0);
        assert_eq!(local_start(u64::MAX, 10), 9);
    }

    #[test]
    fn rows_have_their_leading_bit_and_look_random() {
        let mut ones = 0u32;
        for i in 0..1000u64 {
            let row = coeff_row(remix(i, 0));
            assert_eq!(row & 1, 1);
            ones += row.count_ones();
        }
        // 1 forced bit + 127 fair bits per row.
        let mean = f64::from(ones) / 1000.0;
        assert!((62.0..67.0).contains(&mean), "{mean}");
        let bits: u32 = (0..1000u64)
            .map(|i| result_bits(remix(i, 0)).count_ones())
            .sum();
        assert!((15_000..17_000).contains(&bits), "{bits}");
    }
}
