//! Tables with a range filter, beside a point filter or alone: every range scan returns exactly the entries in its
//! range, every range holding a key is "may contain", empty ranges skip the table, point lookups find every key
//! (through the Range filter when it is the only one), and a damaged range filter block leaves the table
//! answering "may contain". Tables without a range filter keep format version 1.

use std::collections::BTreeMap;
use std::ops::Bound::{self, Excluded, Included, Unbounded};
use std::ops::RangeBounds;

use sstfilter::{Answer, RangePolicy};
use sstfilter_table::{Table, TableBuilder, TableOptions};

/// Every string of up to 3 bytes over `a`, `b`, `c`, behind `row/`, sorted.
fn universe() -> Vec<Vec<u8>> {
    let mut all = vec![b"row/".to_vec()];
    let mut last = all.clone();
    for _ in 0..3 {
        last = last
            .iter()
            .flat_map(|s| {
                [b'a', b'b', b'c'].map(|c| {
                    let mut t = s.clone();
                    t.push(c);
                    t
                })
            })
            .collect();
        all.extend(last.iter().cloned());
    }
    all.sort();
    all
}

fn table_bytes(keys: &BTreeMap<Vec<u8>, Vec<u8>>, options: &TableOptions) -> Vec<u8> {
    let mut builder = TableBuilder::new(Vec::new(), options).unwrap();
    for (k, v) in keys {
        builder.add(k, v).unwrap();
    }
    builder.finish().unwrap().1
}

fn open(bytes: &[u8]) -> Table<Vec<u8>> {
    Table::from_reader(bytes.to_vec(), bytes.len() as u64, &TableOptions::default()).unwrap()
}

#[test]
fn every_range_scan_returns_its_entries_and_no_range_holding_a_key_is_absent() {
    let strings = universe();
    let options = TableOptions::default().block_size(64).filters(
        sstfilter::TableFilterOptions::new()
            .point(sstfilter::BlockedBloomPolicy::new(10.0).unwrap())
            .range(RangePolicy::new(8, 0.5).unwrap())
            .unwrap(),
    );
    for pick in [1usize, 2, 5, 13] {
        let keys: BTreeMap<Vec<u8>, Vec<u8>> = strings
            .iter()
            .step_by(pick)
            .map(|k| (k.clone(), k.repeat(2)))
            .collect();
        let table = open(&table_bytes(&keys, &options));
        assert!(table.filter_error().is_none());
        let mut bounds: Vec<Bound<&[u8]>> = vec![Unbounded];
        for s in &strings {
            bounds.push(Included(s));
            bounds.push(Excluded(s));
        }
        let mut skipped = 0;
        for &lower in &bounds {
            for &upper in &bounds {
                let expected: Vec<(Vec<u8>, Vec<u8>)> = keys
                    .iter()
                    .filter(|(k, _)| RangeBounds::<&[u8]>::contains(&(lower, upper), &k.as_slice()))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect();
                let answer = table.may_contain_range(lower, upper);
                assert!(
                    expected.is_empty() || answer.must_read(),
                    "{lower:?}..{upper:?} holds keys but is {answer:?}"
                );
                skipped += usize::from(answer == Answer::Absent);
                // Scans on a sample of the ranges (each reads blocks).
                if (lower, upper) != (Unbounded, Unbounded) && skipped % 7 == 0 {
                    assert_eq!(
                        table.scan_range(lower, upper).unwrap(),
                        expected,
                        "{lower:?}..{upper:?}"
                    );
                }
            }
        }
        assert!(skipped > 0, "some empty ranges are skipped");
        for k in keys.keys() {
            assert_eq!(
                table.get(k).unwrap(),
                keys.get(k).cloned(),
                "point lookup of {k:?}"
            );
        }
        let stats = table.stats();
        assert!(
            stats.range_scans > 0 && stats.range_scans_unfiltered == 0,
            "{stats:?}"
        );
    }
}

#[test]
fn empty_short_ranges_skip_the_table_and_points_are_filtered() {
    let keys: BTreeMap<Vec<u8>, Vec<u8>> = (0..5000u32)
        .map(|i| (format!("order:{:08}", i * 100).into_bytes(), vec![1; 10]))
        .collect();
    let range = RangePolicy::new(1 << 8, 0.01).unwrap();
    for (what, options) in [
        (
            "beside a point filter",
            TableOptions::default().filters(
                sstfilter::TableFilterOptions::new()
                    .point(sstfilter::BlockedBloomPolicy::new(10.0).unwrap())
                    .range(range)
                    .unwrap(),
            ),
        ),
        (
            "alone",
            TableOptions::default()
                .filters(sstfilter::TableFilterOptions::new().range(range).unwrap()),
        ),
    ] {
        let bytes = table_bytes(&keys, &options);
        assert_eq!(
            &bytes[bytes.len() - 12..bytes.len() - 8],
            &2u32.to_le_bytes(),
            "{what}: version 2"
        );
        let table = open(&bytes);
        assert!(
            table.table_filter().range_filter().is_some() && table.range_filter_error().is_none()
        );
        assert_eq!(
            table.filter_handle().is_some(),
            what == "beside a point filter"
        );
        let mut read = 0;
        for i in 0..4999u32 {
            let lo = format!("order:{:08}", i * 100 + 1).into_bytes();
            let hi = format!("order:{:08}", i * 100 + 100).into_bytes();
            read += table
                .scan_range(Included(&lo), Excluded(&hi))
                .unwrap()
                .len();
        }
        assert_eq!(read, 0);
        let stats = table.stats();
        assert!(stats.range_scans_skipped > 4990, "{what}: {stats:?}");
        for (k, v) in &keys {
            assert_eq!(table.get(k).unwrap().as_ref(), Some(v), "{what}");
        }
        for i in 0..1000u32 {
            let absent = format!("order:{:08}", i * 100 + 50).into_bytes();
            assert_eq!(table.get(&absent).unwrap(), None);
        }
        assert!(
            table.stats().reads_avoided() > 970,
            "{what}: {:?}",
            table.stats()
        );
    }
    // Without a range filter the table is still written as version 1, byte for byte as before.
    let plain = table_bytes(&keys, &TableOptions::default());
    assert_eq!(
        &plain[plain.len() - 12..plain.len() - 8],
        &1u32.to_le_bytes()
    );
}

#[test]
fn a_damaged_range_block_answers_may_contain_and_loses_nothing() {
    let keys: BTreeMap<Vec<u8>, Vec<u8>> = (0..300u32)
        .map(|i| (format!("k{:05}", i * 3).into_bytes(), vec![7; 5]))
        .collect();
    let options = TableOptions::default().filters(
        sstfilter::TableFilterOptions::new()
            .point(sstfilter::BlockedBloomPolicy::new(10.0).unwrap())
            .range(RangePolicy::new(16, 0.01).unwrap())
            .unwrap(),
    );
    let good = table_bytes(&keys, &options);
    let table = open(&good);
    let filter = table.filter_handle().unwrap();
    for at in (filter.offset()..filter.offset() + filter.size()).step_by(7) {
        let mut bad = good.clone();
        bad[at as usize] ^= 0x10;
        let table = open(&bad);
        assert!(
            table.filter_error().is_some(),
            "byte {at}: the table's CRC catches it"
        );
        for (k, v) in &keys {
            assert_eq!(table.get(k).unwrap().as_ref(), Some(v));
            let answer = table.may_contain_range(Included(k), Included(k));
            assert!(answer.must_read());
        }
        let all = table.scan_range(Unbounded, Unbounded).unwrap();
        assert_eq!(all.len(), keys.len());
    }
}

/// Damage inside the range filter block itself (beside a point filter, or alone): the table still opens, says why
/// in `range_filter_error`, answers every range "may contain" (counted as unfiltered scans) and every lookup finds
/// its key.
#[test]
fn a_damaged_range_filter_block_is_unusable_and_loses_nothing() {
    let keys: BTreeMap<Vec<u8>, Vec<u8>> = (0..300u32)
        .map(|i| (format!("k{:05}", i * 3).into_bytes(), vec![7; 5]))
        .collect();
    let range = RangePolicy::new(16, 0.01).unwrap();
    for (what, options) in [
        (
            "beside a point filter",
            TableOptions::default().filters(
                sstfilter::TableFilterOptions::new()
                    .point(sstfilter::BlockedBloomPolicy::new(10.0).unwrap())
                    .range(range)
                    .unwrap(),
            ),
        ),
        (
            "alone",
            TableOptions::default()
                .filters(sstfilter::TableFilterOptions::new().range(range).unwrap()),
        ),
    ] {
        let good = table_bytes(&keys, &options);
        let handle = open(&good).range_filter_handle().unwrap();
        for at in (handle.offset()..handle.offset() + handle.size()).step_by(5) {
            let mut bad = good.clone();
            bad[at as usize] ^= 0x04;
            let table = open(&bad);
            assert!(
                table.table_filter().range_filter().is_none()
                    && table.range_filter_error().is_some(),
                "{what}, byte {at}: the block's CRC catches it"
            );
            assert!(
                table.filter_error().is_none(),
                "{what}: only the range block is hit"
            );
            for (k, v) in &keys {
                assert_eq!(table.get(k).unwrap().as_ref(), Some(v), "{what}, byte {at}");
                assert!(
                    table
                        .may_contain_range(Included(k), Included(k))
                        .must_read()
                );
                // Not even an empty range is ruled out: the table has no usable range filter.
                let mut next = k.clone();
                next.push(0);
                assert!(matches!(
                    table.may_contain_range(Excluded(k), Included(&next)),
                    Answer::MayContain(_)
                ));
            }
            assert_eq!(
                table.scan_range(Unbounded, Unbounded).unwrap().len(),
                keys.len()
            );
            let stats = table.stats();
            assert_eq!(
                stats.range_scans_unfiltered, stats.range_scans,
                "{what}: {stats:?}"
            );
            if what == "alone" {
                assert_eq!(stats.filter_unavailable, stats.lookups, "{what}: {stats:?}");
            }
        }
    }
}

/// A range filter beside a partitioned filter: the partitions come first, then the range filter block, then the
/// partition index; every key is found through its partition and every range holding a key may contain it.
#[test]
fn a_range_filter_beside_a_partitioned_filter() {
    let keys: BTreeMap<Vec<u8>, Vec<u8>> = (0..3000u32)
        .map(|i| (format!("p{:06}", i * 5).into_bytes(), vec![3; 8]))
        .collect();
    let options = TableOptions::default().block_size(256).filters(
        sstfilter::TableFilterOptions::new()
            .point(sstfilter::BlockedBloomPolicy::new(10.0).unwrap())
            .partitioned(512, sstfilter::PartitionCuts::AtDataBlocks)
            .unwrap()
            .range(RangePolicy::new(64, 0.01).unwrap())
            .unwrap(),
    );
    let table = open(&table_bytes(&keys, &options));
    table.verify().unwrap();
    let index = table
        .table_filter()
        .partitioned_filter()
        .expect("the partition index opens");
    assert!(index.num_partitions() > 1);
    assert!(table.table_filter().range_filter().is_some() && table.filter_error().is_none());
    for (k, v) in &keys {
        assert_eq!(table.get(k).unwrap().as_ref(), Some(v));
        assert!(
            table
                .may_contain_range(Included(k), Included(k))
                .must_read()
        );
    }
    let skipped = (0..2999u32)
        .filter(|i| {
            let lo = format!("p{:06}", i * 5 + 1).into_bytes();
            let hi = format!("p{:06}", i * 5 + 5).into_bytes();
            table.may_contain_range(Included(&lo), Excluded(&hi)) == Answer::Absent
        })
        .count();
    assert!(skipped > 2900, "{skipped}");
}
