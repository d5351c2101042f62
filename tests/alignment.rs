//! Queries read the same at every alignment of the block's bytes: a store hands blocks in buffers placed anywhere,
//! and `AlignedBlock` places them on a cache line. For each kind, a block is copied to all 64 offsets from a
//! 64-byte boundary, and every present key must be found, by single and batched queries, and every absent key
//! answered as at offset 0.

use sstfilter::{
    AlignedBlock, BlockedBloomPolicy, FilterBlock, FilterBlockBuilder, FilterPolicy, RibbonPolicy,
    StandardBloomPolicy,
};

fn keys(prefix: &str, n: usize) -> Vec<Vec<u8>> {
    (0..n)
        .map(|i| format!("{prefix}{i:07}").into_bytes())
        .collect()
}

fn answers<B: AsRef<[u8]>>(filter: &FilterBlock<B>, keys: &[Vec<u8>]) -> (Vec<bool>, Vec<bool>) {
    let single = keys.iter().map(|k| filter.may_contain(k)).collect();
    let mut batch = vec![false; keys.len()];
    filter.may_contain_batch(keys, &mut batch);
    (single, batch)
}

#[test]
fn every_offset_from_a_cache_line_reads_alike() {
    let present = keys("present:", 3000);
    let absent = keys("absent:", 20_000);
    let policies: [(&str, Box<dyn FilterPolicy>); 5] = [
        (
            "BlockedBloom 10",
            Box::new(BlockedBloomPolicy::new(10.0).unwrap()),
        ),
        (
            "BlockedBloom 20",
            Box::new(BlockedBloomPolicy::new(20.0).unwrap()),
        ),
        ("Ribbon 10", Box::new(RibbonPolicy::new(10.0).unwrap())),
        (
            "Ribbon 2^-27",
            Box::new(RibbonPolicy::with_fpr(2f64.powi(-27)).unwrap()),
        ),
        (
            "StandardBloom 10",
            Box::new(StandardBloomPolicy::new(10.0).unwrap()),
        ),
    ];
    for (name, policy) in policies {
        let mut builder = FilterBlockBuilder::new(policy);
        for k in &present {
            builder.add_key(k);
        }
        let block = builder.finish();
        let mut buffer = AlignedBlock::zeroed(block.len() + 64);
        let reference = FilterBlock::open(&block[..]).unwrap();
        let expected = answers(&reference, &absent).0;
        for offset in 0..64 {
            buffer.as_mut()[offset..offset + block.len()].copy_from_slice(&block);
            let placed = &buffer.as_ref()[offset..offset + block.len()];
            assert_eq!(placed.as_ptr() as usize % 64, offset, "{name}");
            let filter = FilterBlock::open(placed).unwrap();
            let (single, batch) = answers(&filter, &present);
            assert!(
                single.iter().all(|&a| a),
                "{name} at offset {offset}: lost a key"
            );
            assert!(
                batch.iter().all(|&a| a),
                "{name} at offset {offset}: the batch lost a key"
            );
            let (single, batch) = answers(&filter, &absent);
            assert_eq!(single, expected, "{name} at offset {offset}");
            assert_eq!(batch, expected, "{name} at offset {offset}: batch");
        }
    }
}
