//! Hostile trailers: each lie a block can tell about itself is rejected with the right typed error, or is
//! harmless; and `open`, `verify`, every query and every accessor allocate nothing, whatever the block claims.
//!
//! Each case rewrites trailer fields of a valid block and recomputes the CRC, so only the structure checks stand
//! between the lie and the probes (a lie with a stale CRC is caught by `verify` as well; see tests/corruption.rs).

use sstfilter::{
    BlockedBloomPolicy, Error, FORMAT_VERSION, FilterBlock, FilterBlockBuilder, FilterKind,
    KeyHash, PartitionedFilter, PartitionedFilterBuilder, TRAILER_LEN,
};
use sstfilter::{
    KindParams, NoPartitions, RangeFilterBuilder, RangePolicy, RibbonPolicy, StandardBloomPolicy,
};
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use std::alloc::System;
use std::ops::Bound;
use std::sync::{Mutex, MutexGuard};

#[global_allocator]
static ALLOCATOR: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

/// The allocation counter is process-wide and the harness runs tests on parallel threads, so each test holds
/// this lock for its whole run: otherwise one test's block building shows up in the other's measured region.
static ONE_TEST_AT_A_TIME: Mutex<()> = Mutex::new(());

fn serialised() -> MutexGuard<'static, ()> {
    // A test that failed while holding the lock poisons it; the next test still measures correctly.
    ONE_TEST_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

// Trailer field offsets from the trailer's start (FORMAT.md section 2).
const VERSION: usize = 4;
const KIND: usize = 5;
const FLAGS: usize = 6;
const PARAMS: usize = 8;
const KEYS: usize = 24;

fn valid_block(keys: u32, bits_per_key: f64) -> Vec<u8> {
    let mut builder = FilterBlockBuilder::new(BlockedBloomPolicy::new(bits_per_key).unwrap());
    for i in 0..keys {
        builder.add_key(format!("key-{i}").as_bytes());
    }
    builder.finish()
}

fn reseal(block: &mut [u8]) {
    let n = block.len();
    let crc = crc32fast::hash(&block[..n - 4]);
    block[n - 4..].copy_from_slice(&crc.to_le_bytes());
}

/// A copy of `block` with `bytes` written at trailer offset `at`, CRC recomputed.
fn with_field(block: &[u8], at: usize, bytes: &[u8]) -> Vec<u8> {
    let mut out = block.to_vec();
    let start = out.len() - TRAILER_LEN + at;
    out[start..start + bytes.len()].copy_from_slice(bytes);
    reseal(&mut out);
    out
}

/// Opens `block` and, if it opens, uses everything it offers; returns the open result and asserts that none of
/// it allocated a single byte.
///
/// The counter is process-wide, and the test harness's own thread allocates when it reports a finished test,
/// which can land in the measured region of the next one (the lock above orders the tests, not the harness). So a
/// read that counts allocations is measured again, up to three times: reading a block is deterministic, so an
/// allocation of its own shows in every measurement, and only one that is not the read's can come and go.
fn open_without_allocating(block: &[u8]) -> Result<(), Error> {
    let mut last = None;
    for _ in 0..3 {
        let region = Region::new(ALLOCATOR);
        let result = read_everything(block);
        let stats = region.change();
        if stats.allocations == 0 {
            return result;
        }
        last = Some(stats);
    }
    panic!("reading a {}-byte block allocated: {last:?}", block.len());
}

/// Opens `block` and, if it opens, calls every query and accessor; also reads it as a partition index.
fn read_everything(block: &[u8]) -> Result<(), Error> {
    let result = FilterBlock::open(block).map(|filter| {
        let _ = filter.verify();
        let _ = (
            filter.num_keys(),
            filter.bits_per_key(),
            filter.expected_fpr(),
            filter.params(),
        );
        for i in 0..64u64 {
            let _ = filter.may_contain(&i.to_le_bytes());
            let _ =
                filter.may_contain_hash(KeyHash::from_raw(i.wrapping_mul(0x9E37_79B9_7F4A_7C15)));
        }
        let keys = [&b"a"[..], b"b", b"c"];
        let mut answers = [false; 3];
        filter.may_contain_batch(&keys, &mut answers);
        let (lo, hi) = (&b"key-1"[..], &b"key-7"[..]);
        let _ = filter.may_contain_range(Bound::Included(lo), Bound::Excluded(hi));
        let _ = filter.may_contain_range(Bound::Unbounded, Bound::Unbounded);
        let mut range_answers = [sstfilter::Answer::Absent; 2];
        filter.may_contain_range_batch(
            &[
                (Bound::Included(lo), Bound::Excluded(hi)),
                (Bound::Unbounded, Bound::Unbounded),
            ],
            &mut range_answers,
        );
    });
    // Nor does reading it as a partition index (it is not one here, but every check runs up to the tag).
    if let Ok(index) = PartitionedFilter::open(block) {
        let _ = (
            index.num_partitions(),
            index.may_contain(b"key", &NoPartitions),
        );
    }
    result
}

#[test]
fn hostile_trailers_are_rejected_without_allocating() {
    let _serial = serialised();
    let block = valid_block(1000, 10.0);
    assert_eq!(open_without_allocating(&block), Ok(()));

    // Every version but the ones this reader knows.
    for version in [0u8, FORMAT_VERSION + 1, 0x7f, 0xff] {
        assert_eq!(
            open_without_allocating(&with_field(&block, VERSION, &[version])),
            Err(Error::UnsupportedVersion {
                found: version,
                expected: FORMAT_VERSION
            }),
        );
    }

    // Reserved and unknown kind tags (FORMAT.md 3: 1 to 4 are kinds; 16, a partition index, only in version 2).
    for tag in (0u8..=255).filter(|t| ![1, 2, 3, 4].contains(t)) {
        assert_eq!(
            open_without_allocating(&with_field(&block, KIND, &[tag])),
            Err(Error::UnknownKind(tag))
        );
    }

    // Reserved flags.
    for flags in [1u16, 0x8000, u16::MAX] {
        assert_eq!(
            open_without_allocating(&with_field(&block, FLAGS, &flags.to_le_bytes())),
            Err(Error::BadParams {
                kind: None,
                field: "flags",
                found: u64::from(flags)
            }),
        );
    }

    // Probe counts out of range.
    for probes in [0u8, 25, 200, u8::MAX] {
        assert_eq!(
            open_without_allocating(&with_field(&block, PARAMS, &[probes])),
            Err(Error::BadParams {
                kind: Some(FilterKind::BlockedBloom),
                field: "num_probes",
                found: u64::from(probes)
            }),
        );
    }

    // Unknown probe derivations (0, the pre-release distinct draws, is read: tests/golden.rs).
    for derivation in [2u8, 3, u8::MAX] {
        assert_eq!(
            open_without_allocating(&with_field(&block, PARAMS + 1, &[derivation])),
            Err(Error::BadParams {
                kind: Some(FilterKind::BlockedBloom),
                field: "probe derivation",
                found: u64::from(derivation)
            }),
        );
    }

    // Reserved parameter bytes.
    for at in 2..16 {
        let result = open_without_allocating(&with_field(&block, PARAMS + at, &[0xff]));
        assert!(
            matches!(
                result,
                Err(Error::BadParams {
                    field: "reserved parameter byte",
                    ..
                })
            ),
            "byte {at}: {result:?}"
        );
    }

    // A key count that contradicts an empty or a non-empty payload.
    assert!(matches!(
        open_without_allocating(&with_field(&block, KEYS, &0u64.to_le_bytes())),
        Err(Error::BadParams {
            field: "num_keys",
            found: 0,
            ..
        })
    ));
    let empty = valid_block(0, 10.0);
    for keys in [1u64, u64::MAX] {
        assert!(matches!(
            open_without_allocating(&with_field(&empty, KEYS, &keys.to_le_bytes())),
            Err(Error::BadParams {
                field: "num_keys",
                ..
            })
        ));
    }

    // Huge key counts over a real payload are only informational: accepted, answered, and cheap to describe.
    for keys in [u64::MAX, 1 << 40] {
        let lying = with_field(&block, KEYS, &keys.to_le_bytes());
        assert_eq!(open_without_allocating(&lying), Ok(()));
        let filter = FilterBlock::open(&lying[..]).unwrap();
        assert_eq!(filter.expected_fpr(), 1.0);
        assert!(filter.bits_per_key() < 1e-6);
    }

    // Payload lengths that are not whole cache lines: a trailer moved onto a ragged payload.
    for extra in [1usize, 17, 63] {
        let mut ragged = block[..block.len() - TRAILER_LEN].to_vec();
        ragged.extend(std::iter::repeat_n(0u8, extra));
        ragged.extend_from_slice(&block[block.len() - TRAILER_LEN..]);
        reseal(&mut ragged);
        let payload = (ragged.len() - TRAILER_LEN) as u64;
        assert_eq!(
            open_without_allocating(&ragged),
            Err(Error::LengthMismatch {
                kind: FilterKind::BlockedBloom,
                expected: payload / 64 * 64,
                found: payload
            }),
        );
    }

    // Too short to hold a trailer, including empty input.
    for len in [0usize, 1, TRAILER_LEN - 1] {
        assert_eq!(
            open_without_allocating(&block[block.len() - len..]),
            Err(Error::TooShort {
                expected: TRAILER_LEN,
                found: len
            })
        );
    }
}

#[test]
fn hostile_standard_bloom_trailers_are_rejected_without_allocating() {
    let _serial = serialised();
    // 1000 keys at 10 bits/key: 10,048 bits (157 words), 7 probes.
    let mut builder = FilterBlockBuilder::new(StandardBloomPolicy::new(10.0).unwrap());
    for i in 0..1000u32 {
        builder.add_key(format!("key-{i}").as_bytes());
    }
    let block = builder.finish();
    assert_eq!(open_without_allocating(&block), Ok(()));
    let num_bits = |bits: u64| with_field(&block, PARAMS + 8, &bits.to_le_bytes());
    let bad = |field| move |result: Result<(), Error>| matches!(result, Err(Error::BadParams { kind: Some(FilterKind::StandardBloom), field: f, .. }) if f == field);

    assert!(bad("num_probes")(open_without_allocating(&with_field(
        &block,
        PARAMS,
        &[0]
    ))));
    for at in 1..8 {
        assert!(bad("reserved parameter byte")(open_without_allocating(
            &with_field(&block, PARAMS + at, &[0xff])
        )));
    }
    for bits in [0u64, u64::MAX, u64::MAX - 62] {
        assert!(
            bad("num_bits")(open_without_allocating(&num_bits(bits))),
            "{bits}"
        );
    }
    // Bit counts whose words do not match the payload: one word more or fewer, or far beyond it.
    for bits in [10_049u64, 9_984, 64, 1 << 40] {
        assert_eq!(
            open_without_allocating(&num_bits(bits)),
            Err(Error::LengthMismatch {
                kind: FilterKind::StandardBloom,
                expected: bits.div_ceil(64) * 8,
                found: 157 * 8
            }),
            "{bits}"
        );
    }
    // Any bit count within the last word addresses only payload bits: valid (the answers change, safely).
    for bits in [9_985u64, 10_000, 10_047] {
        assert_eq!(open_without_allocating(&num_bits(bits)), Ok(()), "{bits}");
    }
    // Every probe count is in range (one byte), and the key count is informational.
    assert_eq!(
        open_without_allocating(&with_field(&block, PARAMS, &[255])),
        Ok(())
    );
    for keys in [0u64, u64::MAX] {
        assert_eq!(
            open_without_allocating(&with_field(&block, KEYS, &keys.to_le_bytes())),
            Ok(())
        );
    }
    // A BlockedBloom block relabelled as StandardBloom: its parameters make no sense for the kind (byte 1, the
    // BlockedBloom probe derivation, is reserved here; with it cleared, the bit count of zero is refused).
    let relabelled = with_field(
        &valid_block(1000, 10.0),
        KIND,
        &[FilterKind::StandardBloom.tag()],
    );
    assert!(bad("reserved parameter byte")(open_without_allocating(
        &relabelled
    )));
    assert!(bad("num_bits")(open_without_allocating(&with_field(
        &relabelled,
        PARAMS + 1,
        &[0]
    ))));
}

#[test]
fn hostile_ribbon_trailers_are_rejected_without_allocating() {
    let _serial = serialised();
    // 20,000 keys: large enough that the policy writes Ribbon, and three shards, so the directory has inner
    // records as well as the first and the last.
    let mut builder = FilterBlockBuilder::new(RibbonPolicy::new(10.0).unwrap());
    for i in 0..20_000u32 {
        builder.add_key(format!("key-{i}").as_bytes());
    }
    let block = builder.finish();
    let &KindParams::Ribbon(params) = FilterBlock::open(&block[..]).unwrap().params() else {
        panic!("20,000 keys at 10 bits/key should be written as Ribbon");
    };
    // The shape as the trailer states it (FORMAT.md 4.3): shards, blocks and first upper block, u32 at 4, 8, 12.
    let trailer = block.len() - TRAILER_LEN;
    let field =
        |at: usize| u32::from_le_bytes(block[trailer + PARAMS + at..][..4].try_into().unwrap());
    let (num_shards, num_blocks, upper_start_block) = (field(4), field(8), field(12));
    assert!(num_shards >= 3, "{params:?}");
    assert_eq!(open_without_allocating(&block), Ok(()));
    let bad = |field| move |result: Result<(), Error>| matches!(result, Err(Error::BadParams { kind: Some(FilterKind::Ribbon), field: f, .. }) if f == field);
    let u32_at = |at: usize, value: u32| with_field(&block, PARAMS + at, &value.to_le_bytes());

    for columns in [0u8, 33, 200, u8::MAX] {
        assert!(
            bad("lower_columns")(open_without_allocating(&with_field(
                &block,
                PARAMS,
                &[columns]
            ))),
            "{columns}"
        );
    }
    for at in 1..4 {
        assert!(bad("reserved parameter byte")(open_without_allocating(
            &with_field(&block, PARAMS + at, &[0xff])
        )));
    }
    assert!(bad("num_shards")(open_without_allocating(&u32_at(4, 0))));
    for blocks in [0u32, (1 << 26) + 1, u32::MAX] {
        assert!(
            bad("num_blocks")(open_without_allocating(&u32_at(8, blocks))),
            "{blocks}"
        );
    }
    for upper in [num_blocks + 1, u32::MAX] {
        assert!(
            bad("upper_start_block")(open_without_allocating(&u32_at(12, upper))),
            "{upper}"
        );
    }
    assert!(bad("num_keys")(open_without_allocating(&with_field(
        &block,
        KEYS,
        &0u64.to_le_bytes()
    ))));
    // Shapes that are valid on their own but do not match the payload: a length mismatch, however large the
    // claimed solution or directory.
    for (at, value) in [
        (4, num_shards + 1),
        (4, u32::MAX),
        (8, num_blocks - 1),
        (8, 1 << 26),
        (12, upper_start_block.saturating_sub(1)),
    ] {
        assert!(
            matches!(
                open_without_allocating(&u32_at(at, value)),
                Err(Error::LengthMismatch {
                    kind: FilterKind::Ribbon,
                    ..
                })
            ),
            "parameter offset {at} = {value}"
        );
    }
    // A BlockedBloom block relabelled as Ribbon: its parameters make no sense for the kind.
    let relabelled = with_field(&valid_block(1000, 10.0), KIND, &[FilterKind::Ribbon.tag()]);
    assert!(matches!(
        open_without_allocating(&relabelled),
        Err(Error::BadParams { .. } | Error::LengthMismatch { .. })
    ));

    // The directory is payload, which `open` does not read (it stays O(1)): any value in any of its bytes opens
    // and is queried without a panic, an out-of-bounds read or an allocation.
    let directory = block.len() - TRAILER_LEN - (5 * num_shards as usize + 4);
    for at in directory..block.len() - TRAILER_LEN {
        for value in [0u8, 0x7f, 0xff] {
            let mut lying = block.clone();
            lying[at] = value;
            reseal(&mut lying);
            assert_eq!(
                open_without_allocating(&lying),
                Ok(()),
                "directory byte {at} = {value}"
            );
        }
    }
}

/// A partition index whose trailer claims any partition count or separator length is refused by its length
/// check before anything is read or allocated; a version-2 block with the index tag is refused by the filter
/// reader as an index.
#[test]
fn hostile_partition_indexes_are_rejected_without_allocating() {
    let _serial = serialised();
    let mut builder = PartitionedFilterBuilder::new(BlockedBloomPolicy::new(10.0).unwrap())
        .with_partition_bytes(100)
        .unwrap();
    for i in 0..500u32 {
        builder.add_key(format!("key-{i:05}").as_bytes()).unwrap();
    }
    let partitions = builder.finish();
    let offsets: Vec<u64> = (0..partitions.blocks().len() as u64).collect();
    let index = partitions.index(&offsets).unwrap();
    // Measured again when it counted allocations, up to three times, as in `open_without_allocating` (this read
    // is as deterministic; the harness's reporting thread is not).
    let open = |block: &[u8]| {
        let mut last = None;
        for _ in 0..3 {
            let region = Region::new(ALLOCATOR);
            let result = PartitionedFilter::open(block).map(|filter| {
                let _ = (
                    filter.num_partitions(),
                    filter.may_contain(b"key-00042", &NoPartitions),
                    filter.partitions().nth(3),
                );
                filter.partitions().count()
            });
            let stats = region.change();
            if stats.allocations == 0 {
                return result;
            }
            last = Some((stats, result));
        }
        panic!(
            "opening a {}-byte partition index allocated: {last:?}",
            block.len()
        );
    };
    assert_eq!(open(&index), Ok(partitions.blocks().len()));
    // The search heads are the one allocation a partition index makes, when asked: 8 bytes a partition and a slot
    // table of 4 to 8 (plus the separators' shared prefix, and the ranks' tables where they pay), within the
    // block's size. Measured three
    // times, the least kept (the harness's own allocations can land in a measured region: see
    // `open_without_allocating`).
    let allocated = (0..3)
        .map(|_| {
            let filter = PartitionedFilter::open(&index[..]).unwrap();
            let region = Region::new(ALLOCATOR);
            let filter = filter.with_search_heads();
            let allocated = region.change().bytes_allocated;
            drop(filter);
            allocated
        })
        .min()
        .unwrap();
    assert!(
        (8 * partitions.blocks().len()..=index.len()).contains(&allocated),
        "{allocated} bytes for {} partitions in a {}-byte index",
        partitions.blocks().len(),
        index.len()
    );
    assert_eq!(
        FilterBlock::open(&index[..]).unwrap_err(),
        Error::PartitionIndex
    );
    for (count, separators) in [
        (u64::MAX, 0),
        (0, u64::MAX),
        (u64::MAX / 32, 32),
        (1 << 40, 1 << 40),
    ] {
        let mut params = count.to_le_bytes().to_vec();
        params.extend_from_slice(&separators.to_le_bytes());
        let hostile = with_field(&index, PARAMS, &params); // resealed: the CRC matches
        assert!(
            matches!(open(&hostile), Err(Error::IndexLength { .. })),
            "{count} partitions, {separators} separator bytes"
        );
    }
}

#[test]
fn hostile_range_trailers_are_rejected_without_allocating() {
    let _serial = serialised();
    let mut builder = RangeFilterBuilder::new(RangePolicy::new(1 << 12, 0.01).unwrap());
    for i in 0..5_000u32 {
        builder.add_key(format!("key-{i:08}").as_bytes()).unwrap();
    }
    let block = builder.finish();
    assert_eq!(open_without_allocating(&block), Ok(()));
    let bad = |field| move |result: Result<(), Error>| matches!(result, Err(Error::BadParams { kind: Some(FilterKind::Range), field: f, .. }) if f == field);
    let length = |result: Result<(), Error>| matches!(result, Err(Error::LengthMismatch { .. }));
    let universe = |value: u64| with_field(&block, PARAMS + 8, &value.to_le_bytes());
    let keys = |value: u64| with_field(&block, KEYS, &value.to_le_bytes());
    for s in [57u8, 64, u8::MAX] {
        assert!(bad("range_log2")(open_without_allocating(&with_field(
            &block,
            PARAMS,
            &[s]
        ))));
    }
    for l in [0u8, 63, 64, u8::MAX] {
        assert!(bad("lower_bits")(open_without_allocating(&with_field(
            &block,
            PARAMS + 1,
            &[l]
        ))));
    }
    // Universes that cannot hold the keys or a run, or that imply arrays no payload holds.
    assert!(bad("num_keys")(open_without_allocating(&universe(4_999))));
    assert!(bad("universe")(open_without_allocating(&with_field(
        &with_field(&block, PARAMS + 8, &5_000u64.to_le_bytes()),
        PARAMS,
        &[56]
    ))));
    for r in [u64::MAX, 1 << 40, 5_001] {
        let result = open_without_allocating(&universe(r));
        assert!(
            length(result.clone()) || bad("lower_bits")(result.clone()),
            "{r}: {result:?}"
        );
    }
    // Key counts up to u64::MAX: arrays of 2^64 words and more are refused by arithmetic, not allocation.
    for n in [u64::MAX, u64::MAX / 2, 1 << 40] {
        let at_max = with_field(&keys(n), PARAMS + 8, &u64::MAX.to_le_bytes());
        for variant in [keys(n), at_max] {
            let result = open_without_allocating(&variant);
            assert!(result.is_err(), "{n}: {result:?}");
        }
    }
    assert!(bad("prefix_len")(open_without_allocating(&with_field(
        &with_field(&keys(0), PARAMS + 8, &0u64.to_le_bytes()),
        PARAMS + 1,
        &[0]
    ))));
    assert!(matches!(
        open_without_allocating(&with_field(&block, FLAGS, &[1, 0])),
        Err(Error::BadParams { field: "flags", .. })
    ));
    assert!(bad("reserved parameter byte")(open_without_allocating(
        &with_field(&block, PARAMS + 6, &[1])
    )));
}
