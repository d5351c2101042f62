//! End-to-end tests of the kind's internals: construction with forced seed retries and failures, the directory
//! a build writes, and parameter validation. The public round trip, FPR, corruption and golden tests are in
//! `tests/`.

use proptest::prelude::*;

use super::build::{Unbuildable, build};
use super::policy::{SHARD_TARGET_KEYS, plan_for};
use super::solution::{BLOCK_SLOTS, MAX_COLUMNS, Shape};
use super::*;
use crate::kind::KindParams;
use crate::kind::blocked_bloom::BlockedBloomParams;
use crate::policy::FilterPlan;

fn hashes(n: usize, salt: u64) -> Vec<u64> {
    (0..n as u64)
        .map(|i| row::remix(i ^ (salt << 40), 200))
        .collect()
}

fn plan(n: usize, fpr: f64, overhead: Option<f64>) -> RibbonPlan {
    plan_for(n, fpr, overhead).unwrap()
}

/// What the policy layer writes for `plan` with a BlockedBloom fallback of 2 blocks per 64 keys: the Ribbon
/// filter, or the fallback if construction fails.
fn built_or_fallback(
    plan: RibbonPlan,
    hashes: &[u64],
    out: &mut Vec<u8>,
) -> (KindParams, BlockedBloomParams) {
    let fallback = BlockedBloomParams::new((plan.num_keys() as u32).div_ceil(32), 6).unwrap();
    let params = FilterPlan::Ribbon { plan, fallback }.build([hashes].into_iter(), out);
    (params, fallback)
}

/// Builds `hashes` as planned; panics if construction fails.
fn built(plan: &RibbonPlan, hashes: &[u64]) -> (Vec<u8>, RibbonParams) {
    let mut out = Vec::new();
    let params = build(plan, [hashes].into_iter(), &mut out).expect("construction succeeds");
    assert_eq!(out.len(), params.payload_len());
    assert_eq!(out.len(), plan.payload_len());
    (out, params)
}

fn seeds(block: &[u8], params: &RibbonParams) -> Vec<u8> {
    let dir = &block[params.solution_len()..];
    (0..params.num_shards() as usize)
        .map(|s| directory::shard(dir, s).unwrap().seed)
        .collect()
}

#[test]
fn every_key_is_found_at_many_sizes_and_rates() {
    for (n, fpr) in [
        (1, 0.01),
        (100, 0.5),
        (1000, 0.00955),
        (9000, 2f64.powi(-8)),
        (30_000, 1e-5),
        // 24 columns: the widest exact probe instance; then 25 and 26/27 columns, which share the 32-column
        // instance (extra columns computed, never compared); then 32.
        (5000, 2f64.powi(-24)),
        (3000, 2f64.powi(-25)),
        (20_000, 1e-8),
        (20_000, 1e-12),
    ] {
        let keys = hashes(n, n as u64);
        let p = plan(n, fpr, None);
        let (block, params) = built(&p, &keys);
        for &h in &keys {
            assert!(may_contain(&block, &params, h), "n {n}: lost {h:#x}");
        }
        let mut batch = vec![false; keys.len()];
        may_contain_batch(&block, &params, &keys, &mut batch);
        assert!(batch.iter().all(|&b| b));
        // The batch answers every key as the single query does, absent keys too (groups of 32 and a partial one).
        let others: Vec<u64> = (0..1000).map(|i| row::remix(i, 78)).collect();
        let mut batch = vec![false; others.len()];
        may_contain_batch(&block, &params, &others, &mut batch);
        for (&h, &in_batch) in others.iter().zip(&batch) {
            assert_eq!(in_batch, may_contain(&block, &params, h), "n {n}: {h:#x}");
        }
        // Absent keys pass at about the expected rate (a loose bound; tests/ribbon.rs measures it closely).
        let absent = 200_000;
        let fp = (0..absent)
            .filter(|&i| may_contain(&block, &params, row::remix(i, 77)))
            .count();
        let want = params.expected_fpr() * absent as f64;
        assert!(
            fp as f64 <= want * 1.5 + 30.0,
            "n {n}: {fp} false positives, expected {want}"
        );
    }
}

/// Key counts at and around the boundaries that shape a Ribbon block: none of a row's 128 slots to spare, one
/// 64-slot block and the next, one shard of [`SHARD_TARGET_KEYS`] and the next, and several shards.
const BOUNDARY_KEY_COUNTS: [usize; 12] = [
    1,
    2,
    63,
    64,
    65,
    127,
    128,
    129,
    SHARD_TARGET_KEYS as usize - 1,
    SHARD_TARGET_KEYS as usize,
    SHARD_TARGET_KEYS as usize + 1,
    3 * SHARD_TARGET_KEYS as usize + 1,
];

/// Slot counts for a plan whose default is `default_slots`: the default, and the last block one slot short of
/// full, exactly full, and one slot into a new block (each at least the default, so the system stays solvable).
fn slot_counts(default_slots: u32) -> Vec<u32> {
    let full = default_slots.next_multiple_of(BLOCK_SLOTS as u32);
    let mut counts = vec![default_slots, full - 1, full, full + 1];
    counts.retain(|&slots| slots >= default_slots);
    counts.sort_unstable();
    counts.dedup();
    counts
}

/// The first upper block of each shape `r` columns allow over `blocks` blocks: lower blocks only, upper
/// blocks only, and half of each (32 columns leave no room for an upper block).
fn upper_starts(r: u32, blocks: u32) -> Vec<u32> {
    let mut starts = vec![blocks];
    if r < MAX_COLUMNS {
        starts.extend([0, blocks / 2]);
    }
    starts.sort_unstable();
    starts.dedup();
    starts
}

/// Every result-column count (1..=32) in every shape, at key counts and slot counts around every block
/// and shard boundary: built, then every key queried singly and in a batch. Enumerated, not sampled: a
/// configuration that loses a key fails the test with its parameters. (Before the fix of `words`, every column
/// count from 25 to 31 lost keys here.)
#[test]
fn every_shape_at_every_boundary_finds_every_key() {
    let (mut configurations, mut queries) = (0u64, 0u64);
    for n in BOUNDARY_KEY_COUNTS {
        let keys = hashes(n, n as u64);
        let base = plan(n, 0.5, None);
        for slots in slot_counts(base.total_slots()) {
            let num_blocks = slots.div_ceil(BLOCK_SLOTS as u32);
            for r in 1..=MAX_COLUMNS {
                for upper_start_block in upper_starts(r, num_blocks) {
                    let shape = Shape {
                        lower_columns: r,
                        upper_start_block,
                        num_blocks,
                    };
                    let what = format!(
                        "{n} keys, {} shards, {slots} slots, r = {r}, upper blocks from {upper_start_block} of \
                         {num_blocks}",
                        base.num_shards()
                    );
                    let (block, params) = built(&base.with_shape(shape, slots), &keys);
                    let mut batch = vec![false; keys.len()];
                    may_contain_batch(&block, &params, &keys, &mut batch);
                    for (&h, &in_batch) in keys.iter().zip(&batch) {
                        assert!(may_contain(&block, &params, h), "{what}: lost {h:#x}");
                        assert!(in_batch, "{what}: the batch lost {h:#x}");
                    }
                    configurations += 1;
                    queries += 2 * keys.len() as u64;
                }
            }
        }
    }
    println!("{configurations} Ribbon configurations, {queries} present-key queries");
    assert!(configurations > 1000, "{configurations}");
}

/// Every way construction can fail, at every column count: the BlockedBloom fallback is written and finds every
/// key.
#[test]
fn every_fallback_path_finds_every_key() {
    let keys = hashes(3000, 11);
    let fallback_of = |plan: &RibbonPlan, hashes: &[u64], why: Unbuildable, what: &str| {
        let mut out = Vec::new();
        assert_eq!(
            build(plan, [hashes].into_iter(), &mut out),
            Err(why),
            "{what}"
        );
        let (params, fallback) = built_or_fallback(*plan, hashes, &mut out);
        assert_eq!(params, KindParams::BlockedBloom(fallback), "{what}");
        for &h in hashes {
            assert!(
                params.may_contain(&out, h),
                "{what}: the fallback lost {h:#x}"
            );
        }
    };
    for r in 1..=MAX_COLUMNS {
        let fpr = (-f64::from(r)).exp2();
        let p = plan(keys.len(), fpr, None);
        // More hashes than planned (a caller that miscounted).
        let mut more = keys.clone();
        more.push(7);
        fallback_of(
            &p,
            &more,
            Unbuildable::KeyCountChanged,
            &format!("r {r}: key count"),
        );
        // Fewer slots than keys: no seed solves it.
        let tight = plan(keys.len(), fpr, Some(-0.05));
        fallback_of(
            &tight,
            &keys,
            Unbuildable::NoSeedSolved,
            &format!("r {r}: unsolvable"),
        );
        // Two shards sharing 200 slots: each is smaller than one row.
        let two = plan(2 * SHARD_TARGET_KEYS as usize, fpr, None);
        let two_keys = hashes(2 * SHARD_TARGET_KEYS as usize, 12);
        let small = two.with_shape(
            Shape {
                num_blocks: 4,
                upper_start_block: 4,
                lower_columns: r,
            },
            200,
        );
        fallback_of(
            &small,
            &two_keys,
            Unbuildable::ShardTooSmall,
            &format!("r {r}: small shards"),
        );
        // Every key in the first of two shards.
        let lopsided: Vec<u64> = hashes(8 * two_keys.len(), 13)
            .into_iter()
            .filter(|&h| row::shard_of(h, 2) == 0)
            .take(two_keys.len())
            .collect();
        fallback_of(
            &two,
            &lopsided,
            Unbuildable::ShardOverloaded,
            &format!("r {r}: one shard"),
        );
    }
}

#[test]
fn the_order_and_the_runs_of_the_hashes_do_not_change_the_block() {
    // Construction groups each shard's hashes as they arrive and solves the shard when its last one has: in the
    // order of the shards (as a builder hands them over), in reverse, interleaved or unordered, in runs of any
    // length, the block is the same and finds every key.
    for n in [1usize, 700, 3 * SHARD_TARGET_KEYS as usize + 5, 100_000] {
        let keys = hashes(n, 7);
        let p = plan(n, 0.01, None);
        let (expected, params) = built(&p, &keys);
        let mut ascending = keys.clone();
        ascending.sort_unstable();
        let descending: Vec<u64> = ascending.iter().rev().copied().collect();
        let evens = ascending.iter().step_by(2);
        let interleaved: Vec<u64> = evens
            .chain(ascending.iter().skip(1).step_by(2))
            .copied()
            .collect();
        for order in [&ascending, &descending, &interleaved, &keys] {
            for run in [1, 7, 4096, n] {
                let mut out = Vec::new();
                build(&p, order.chunks(run), &mut out).expect("construction succeeds");
                assert!(out == expected, "n {n}, runs of {run}");
            }
        }
        assert!(keys.iter().all(|&h| may_contain(&expected, &params, h)));
    }
}

#[test]
fn repeated_hashes_anywhere_in_the_input_are_redundant() {
    let mut keys = hashes(5000, 1);
    let copies: Vec<u64> = keys.iter().step_by(3).copied().collect();
    keys.extend(copies); // non-adjacent duplicates, as unsorted input or hash collisions give
    let p = plan(keys.len(), 0.01, None);
    let (block, params) = built(&p, &keys);
    assert!(keys.iter().all(|&h| may_contain(&block, &params, h)));
    // A key set made of one hash repeated is one equation.
    let same = vec![42u64; 3000];
    let (block, params) = built(&plan(same.len(), 0.01, None), &same);
    assert!(may_contain(&block, &params, 42));
}

#[test]
fn overloaded_shards_are_refused_and_empty_shards_answer_absent() {
    // 20 000 keys make 3 shards; a shard may hold 1.5 times its mean share before construction refuses.
    let in_shard = |shard: usize, count: usize, salt: u64| -> Vec<u64> {
        hashes(8 * count, salt)
            .into_iter()
            .filter(|&h| row::shard_of(h, 3) == shard)
            .take(count)
            .collect()
    };
    let overloaded = in_shard(0, 20_000, 1);
    let p = plan(overloaded.len(), 0.01, None);
    assert_eq!(p.num_shards(), 3);
    let mut out = Vec::new();
    assert_eq!(
        build(&p, [&overloaded[..]].into_iter(), &mut out),
        Err(Unbuildable::ShardOverloaded)
    );
    assert!(out.is_empty());
    // Two full shards and an empty one: keys of the empty shard's range are absent without a probe.
    let mut keys = in_shard(0, 10_000, 2);
    keys.extend(in_shard(1, 10_000, 3));
    let (block, params) = built(&plan(keys.len(), 0.01, None), &keys);
    assert!(keys.iter().all(|&h| may_contain(&block, &params, h)));
    let absent = in_shard(2, 10_000, 4);
    assert!(absent.iter().all(|&h| !may_contain(&block, &params, h)));
}

#[test]
fn a_low_slot_overhead_forces_seed_retries_and_still_loses_nothing() {
    // At zero spare slots a shard of 2000 keys fails most seeds.
    let keys = hashes(2000, 9);
    let mut retried = false;
    for salt in 0..20 {
        let keys: Vec<u64> = keys.iter().map(|&h| row::remix(h, salt)).collect();
        let p = plan(keys.len(), 0.01, Some(0.0));
        let mut out = Vec::new();
        let Ok(params) = build(&p, [&keys[..]].into_iter(), &mut out) else {
            assert!(out.is_empty(), "a failed build leaves the output as it was");
            continue;
        };
        retried |= seeds(&out, &params).iter().any(|&s| s > 0);
        assert!(keys.iter().all(|&h| may_contain(&out, &params, h)));
    }
    assert!(retried, "no shard needed a second seed");
}

#[test]
fn an_unsolvable_plan_falls_back_to_blocked_bloom() {
    let keys = hashes(3000, 2);
    // Fewer slots than keys: no seed can solve it.
    let p = plan(keys.len(), 0.01, Some(-0.05));
    let mut out = b"prefix".to_vec();
    assert_eq!(
        build(&p, [&keys[..]].into_iter(), &mut out),
        Err(Unbuildable::NoSeedSolved)
    );
    assert_eq!(out, b"prefix");
    let (params, fallback) = built_or_fallback(p, &keys, &mut out);
    assert_eq!(params, KindParams::BlockedBloom(fallback));
    assert_eq!(out.len(), 6 + fallback.payload_len());
    assert!(keys.iter().all(|&h| params.may_contain(&out[6..], h)));
}

#[test]
fn a_key_count_other_than_planned_is_refused() {
    let keys = hashes(1000, 3);
    let mut out = Vec::new();
    assert_eq!(
        build(&plan(999, 0.01, None), [&keys[..]].into_iter(), &mut out),
        Err(Unbuildable::KeyCountChanged)
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// No false negatives when shards are tight enough that seeds are retried often, including duplicates.
    #[test]
    fn tight_shards_lose_no_key(
        distinct in proptest::collection::vec(any::<u64>(), 1..3000),
        repeat_every in 1usize..8,
        overhead in 0.0f64..0.02,
    ) {
        let mut keys = distinct.clone();
        keys.extend(distinct.iter().step_by(repeat_every).copied());
        let p = plan(keys.len(), 0.02, Some(overhead));
        let mut out = Vec::new();
        let (params, _) = built_or_fallback(p, &keys, &mut out);
        for &h in &keys {
            prop_assert!(params.may_contain(&out, h), "lost {:#x} ({:?})", h, params.kind());
        }
    }
}

#[test]
fn params_round_trip_and_every_field_is_validated() {
    let p = plan(50_000, 0.00955, None);
    let params = RibbonParams::from_plan(&p);
    let len = params.payload_len();
    let enc = params.encode();
    assert_eq!(RibbonParams::decode(&enc, len, 50_000), Ok(params));
    assert_eq!(enc[0], 6);
    assert_eq!(enc[4..8], p.num_shards().to_le_bytes());

    let field_error = |bytes: [u8; 16], payload: usize, keys: u64| match RibbonParams::decode(
        &bytes, payload, keys,
    ) {
        Err(Error::BadParams { field, .. }) => field,
        other => panic!("expected BadParams, got {other:?}"),
    };
    let with = |at: usize, value: &[u8]| {
        let mut b = enc;
        b[at..at + value.len()].copy_from_slice(value);
        b
    };
    assert_eq!(
        field_error(with(1, &[1]), len, 1),
        "reserved parameter byte"
    );
    assert_eq!(
        field_error(with(3, &[9]), len, 1),
        "reserved parameter byte"
    );
    assert_eq!(field_error(with(0, &[0]), len, 1), "lower_columns");
    assert_eq!(field_error(with(0, &[33]), len, 1), "lower_columns");
    assert_eq!(
        field_error(with(4, &0u32.to_le_bytes()), len, 1),
        "num_shards"
    );
    assert_eq!(
        field_error(with(8, &0u32.to_le_bytes()), len, 1),
        "num_blocks"
    );
    assert_eq!(
        field_error(with(8, &(MAX_BLOCKS + 1).to_le_bytes()), len, 1),
        "num_blocks"
    );
    let past = params.num_blocks() + 1;
    assert_eq!(
        field_error(with(12, &past.to_le_bytes()), len, 1),
        "upper_start_block"
    );
    // 32 lower columns leave no room for a 33rd in upper blocks.
    assert_eq!(field_error(with(0, &[32]), len, 1), "upper_start_block");
    assert_eq!(field_error(enc, len, 0), "num_keys");
    assert!(matches!(
        RibbonParams::decode(&enc, len + 1, 1),
        Err(Error::LengthMismatch {
            kind: FilterKind::Ribbon,
            ..
        })
    ));
    // The largest well-formed parameters do not overflow the length arithmetic.
    let mut huge = [0u8; 16];
    huge[0] = 31;
    huge[4..8].copy_from_slice(&u32::MAX.to_le_bytes());
    huge[8..12].copy_from_slice(&MAX_BLOCKS.to_le_bytes());
    assert!(matches!(
        RibbonParams::decode(&huge, len, 1),
        Err(Error::LengthMismatch { .. })
    ));
}

#[test]
fn impossible_directory_entries_answer_may_contain() {
    let keys = hashes(20_000, 4);
    let (mut block, params) = built(&plan(keys.len(), 0.01, None), &keys);
    let dir_at = params.solution_len();
    let total = u32::from_le_bytes(block[block.len() - 4..].try_into().unwrap());
    // Shard 1 claims to end before it starts, then past the solution, then to be smaller than a row.
    for bad_end in [0u32, total + 10_000, 100] {
        let end_at = dir_at + 5 * 2; // shard 1's end is shard 2's first slot
        block[end_at..end_at + 4].copy_from_slice(&bad_end.to_le_bytes());
        let lo = u32::from_le_bytes(block[dir_at + 5..dir_at + 9].try_into().unwrap());
        block[dir_at + 5..dir_at + 9]
            .copy_from_slice(&(if bad_end == 100 { 50 } else { lo }).to_le_bytes());
        for &h in keys
            .iter()
            .filter(|&&h| row::shard_of(h, params.num_shards()) == 1)
        {
            assert!(may_contain(&block, &params, h));
        }
    }
    // A block cut short (payload shorter than the parameters say) answers "may contain" too.
    assert!(may_contain(&block[..dir_at + 3], &params, keys[0]));
    assert!(may_contain(&block[..10], &params, keys[0]));
}

/// The Ribbon golden blocks of `tests/golden/`, rebuilt from the parameters, shard count and slot count stored
/// in each block: what the writer produces for given parameters is frozen, whatever the policy's tuning (its
/// shard size, overhead table and column choice) does to the plan. `tests/golden.rs` does the same for the other
/// kinds through the public API.
#[test]
fn golden_ribbon_blocks_rebuild_from_their_own_parameters() {
    use crate::format::Trailer;
    use crate::{FilterBlockBuilder, FilterPlan, FilterPolicy};

    struct Exactly(FilterPlan);
    impl FilterPolicy for Exactly {
        fn plan(&self, _num_keys: usize) -> FilterPlan {
            self.0
        }
    }

    let mut rebuilt = 0;
    for (name, bytes) in crate::kind::golden_blocks(|name| name.contains("-ribbon-")) {
        let (payload_len, trailer) = Trailer::decode(&bytes).unwrap();
        // Blocks with prefixes are rebuilt by `tests/golden.rs`, which knows their extractors.
        if trailer.prefix_name.is_some() {
            continue;
        }
        let params = RibbonParams::decode(&trailer.params, payload_len, trailer.num_keys).unwrap();
        let total_slots =
            u32::from_le_bytes(bytes[payload_len - 4..payload_len].try_into().unwrap());
        let n = trailer.num_keys as usize;
        let plan = plan(n, 0.5, None)
            .with_shape(params.shape, total_slots)
            .with_shards(params.num_shards());
        let fallback = BlockedBloomParams::new(1, 1).unwrap(); // never used: these plans build
        let mut builder = FilterBlockBuilder::new(Exactly(FilterPlan::Ribbon { plan, fallback }));
        for i in 0..n {
            builder.add_key(format!("golden-{i}").as_bytes());
        }
        assert!(
            builder.finish() == bytes,
            "{name}: this crate now writes different bytes for the same parameters"
        );
        rebuilt += 1;
    }
    assert!(rebuilt >= 10, "{rebuilt}");
}
