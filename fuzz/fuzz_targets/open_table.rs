//! Arbitrary bytes as a reference table file: `Table::from_reader` rejects them, or every lookup, every prefix
//! and range scan, the verify pass, the filters' queries (a partitioned filter's partitions and the range filter
//! too) and every accessor run without panicking (what `sstfilter inspect` relies on).
#![no_main]

use std::ops::Bound;
use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use sstfilter::{
    BlockedBloomPolicy, DelimitedPrefix, FixedPrefix, PrefixExtractor, TableFilterOptions,
};
use sstfilter_table::{Table, TableOptions};

fuzz_target!(|data: &[u8]| {
    // The reader's prefix extractor, chosen by the last byte (a table names its own; only the reader's asks).
    let extractor: Option<Arc<dyn PrefixExtractor>> = match data.last().map(|b| b % 3) {
        Some(1) => Some(Arc::new(FixedPrefix::new(3))),
        Some(2) => Some(Arc::new(DelimitedPrefix::new(b':'))),
        _ => None,
    };
    let point = TableFilterOptions::new().point(BlockedBloomPolicy::new(10.0).unwrap());
    let filters = match extractor {
        Some(extractor) => point.prefixes(extractor, true).expect("a short name"),
        None => point,
    };
    let options = TableOptions::default().filters(filters);
    let Ok(table) = Table::from_reader(data, data.len() as u64, &options) else {
        return;
    };
    let _ = table.verify();
    let _ = (
        table.num_entries(),
        table.num_data_blocks(),
        table.filter_handle(),
        table.index_handle(),
        table.filter_error().map(ToString::to_string),
        table.range_filter_handle(),
        table.range_filter_error().map(ToString::to_string),
        table.file_len(),
    );
    if let Some(range) = table.table_filter().range_filter() {
        sstfilter_fuzz::exercise(range, data);
    }
    if let Some(filter) = table.table_filter().point_filter() {
        sstfilter_fuzz::exercise(filter, data);
    }
    if let Some(index) = table.table_filter().partitioned_filter() {
        let partitions = index.num_partitions();
        for position in 0..partitions.min(64) {
            if let Some(Ok(partition)) = table.read_filter_partition(position) {
                sstfilter_fuzz::exercise(partition.filter(), data);
            }
        }
        assert!(table.read_filter_partition(partitions).is_none());
    }
    let keys = || data.chunks(9).take(32).chain([&b""[..], &[0xff; 32][..]]);
    for key in keys() {
        let _ = table.get(key);
    }
    // A lookup asks one partition at most; scans ask partitions too without being lookups: checked before them.
    let stats = table.stats();
    assert!(
        stats.partition_loads + stats.partition_cache_hits <= stats.lookups,
        "partition counters are inconsistent: {stats:?}"
    );
    for key in keys() {
        let _ = table.scan_prefix(key);
        let _ = table.scan_range(Bound::Included(key), Bound::Excluded(&[0xff; 4][..]));
        let _ = table.scan_range(Bound::Unbounded, Bound::Included(key));
    }
    let stats = table.stats();
    assert!(
        stats.filter_negatives + stats.false_positives <= stats.filter_checks,
        "counters are inconsistent: {stats:?}"
    );
    assert!(
        stats.prefix_scans_skipped + stats.prefix_scans_unfiltered <= stats.prefix_scans,
        "prefix counters are inconsistent: {stats:?}"
    );
    assert!(
        stats.range_scans_skipped + stats.range_scans_unfiltered <= stats.range_scans,
        "range counters are inconsistent: {stats:?}"
    );
});
