//! No false negatives through the reference table: every policy at its extremes, every key found by `Table::get`,
//! and no lookup of a present key ever answered "absent" by the filter. (The configuration space of the filters
//! themselves is enumerated in `tests/no_false_negatives.rs`.)

use sstfilter::{BlockedBloomPolicy, RibbonPolicy, StandardBloomPolicy};
use sstfilter_table::{Table, TableBuilder, TableOptions};

fn keys(n: usize, salt: &str) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| format!("{salt}:{i:08}").into_bytes())
        .collect()
}

#[test]
fn reference_table_with_each_policy_at_its_extremes() {
    let policies: Vec<(String, TableOptions)> = vec![
        (
            "no filter".into(),
            TableOptions::default().filters(sstfilter::TableFilterOptions::new()),
        ),
        (
            "BlockedBloom 1".into(),
            TableOptions::default().filters(
                sstfilter::TableFilterOptions::new().point(BlockedBloomPolicy::new(1.0).unwrap()),
            ),
        ),
        (
            "BlockedBloom 100".into(),
            TableOptions::default().filters(
                sstfilter::TableFilterOptions::new().point(BlockedBloomPolicy::new(100.0).unwrap()),
            ),
        ),
        (
            "StandardBloom 1".into(),
            TableOptions::default().filters(
                sstfilter::TableFilterOptions::new().point(StandardBloomPolicy::new(1.0).unwrap()),
            ),
        ),
        (
            "StandardBloom 100".into(),
            TableOptions::default().filters(
                sstfilter::TableFilterOptions::new()
                    .point(StandardBloomPolicy::new(100.0).unwrap()),
            ),
        ),
        (
            "Ribbon Bloom-equivalent 1".into(),
            TableOptions::default().filters(
                sstfilter::TableFilterOptions::new().point(RibbonPolicy::new(1.0).unwrap()),
            ),
        ),
        (
            "Ribbon 2^-1".into(),
            TableOptions::default().filters(
                sstfilter::TableFilterOptions::new().point(RibbonPolicy::with_fpr(0.5).unwrap()),
            ),
        ),
        (
            "Ribbon 2^-27".into(),
            TableOptions::default().filters(
                sstfilter::TableFilterOptions::new()
                    .point(RibbonPolicy::with_fpr(2f64.powi(-27)).unwrap()),
            ),
        ),
        (
            "Ribbon 2^-32".into(),
            TableOptions::default().filters(
                sstfilter::TableFilterOptions::new()
                    .point(RibbonPolicy::with_fpr(2f64.powi(-32)).unwrap()),
            ),
        ),
        (
            "Ribbon, no overhead".into(),
            TableOptions::default().filters(
                sstfilter::TableFilterOptions::new().point(
                    RibbonPolicy::with_fpr(0.01)
                        .unwrap()
                        .with_slot_overhead(0.0)
                        .unwrap(),
                ),
            ),
        ),
        (
            "Ribbon, no build memory".into(),
            TableOptions::default().filters(
                sstfilter::TableFilterOptions::new().point(
                    RibbonPolicy::with_fpr(0.01)
                        .unwrap()
                        .with_max_build_memory(0),
                ),
            ),
        ),
    ];
    for n in [0usize, 1, 3000] {
        let mut entries = keys(n, "tbl");
        entries.push(Vec::new()); // the empty key, which sorts first
        entries.sort();
        for (name, options) in &policies {
            for block_size in [1usize, 4096] {
                let options = options.clone().block_size(block_size);
                let mut builder = TableBuilder::new(Vec::new(), &options).unwrap();
                for key in &entries {
                    builder.add(key, b"v").unwrap();
                }
                let (_, file) = builder.finish().unwrap();
                let table =
                    Table::from_reader(file.clone(), file.len() as u64, &TableOptions::default())
                        .unwrap();
                assert!(
                    table.filter_error().is_none(),
                    "{name}: {:?}",
                    table.filter_error()
                );
                for key in &entries {
                    assert_eq!(
                        table.get(key).unwrap().as_deref(),
                        Some(&b"v"[..]),
                        "{name}, {n} keys, block size {block_size}: lost {:?}",
                        String::from_utf8_lossy(key)
                    );
                }
                assert_eq!(table.stats().filter_negatives, 0, "{name}");
            }
        }
    }
}
