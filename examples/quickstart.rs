//! Builds a FastBloom filter block for one million table keys, reopens it from its bytes, and measures what it
//! does: no added key is lost, and absent keys are rejected except for the expected false positives.
//!
//! `cargo run --release --example quickstart [keys] [bits_per_key]`

use std::time::Instant;

use sstfilter::{FastBloomPolicy, FilterBlock, FilterBlockBuilder};

fn main() -> Result<(), sstfilter::Error> {
    let mut args = std::env::args().skip(1);
    let n: u64 = args
        .next()
        .map_or(1_000_000, |a| a.parse().expect("number of keys"));
    let bits_per_key: f64 = args
        .next()
        .map_or(10.0, |a| a.parse().expect("bits per key"));

    let started = Instant::now();
    let mut builder = FilterBlockBuilder::new(FastBloomPolicy::new(bits_per_key));
    for i in 0..n {
        builder.add_key(format!("usr:{:012}", 2 * i).as_bytes());
    }
    let bytes = builder.finish();
    let built = started.elapsed();

    let filter = FilterBlock::open(&bytes[..])?;
    filter.verify()?;
    println!(
        "built a {} block for {} keys in {built:.2?}: {} bytes, {:.2} bits/key",
        filter.kind(),
        filter.num_keys(),
        bytes.len(),
        filter.bits_per_key()
    );

    let lost = (0..n)
        .filter(|i| !filter.may_contain(format!("usr:{:012}", 2 * i).as_bytes()))
        .count();
    let started = Instant::now();
    let false_positives = (0..n)
        .filter(|i| filter.may_contain(format!("usr:{:012}", 2 * i + 1).as_bytes()))
        .count();
    let elapsed = started.elapsed();
    println!("added keys reported absent: {lost}");
    println!(
        "absent keys: {n} looked up, {} would still cost a read ({:.4} % measured, {:.4} % theory), {} avoided",
        false_positives,
        false_positives as f64 / n as f64 * 100.0,
        filter.expected_fpr() * 100.0,
        n as usize - false_positives
    );
    println!(
        "absent lookups took {:.1} ns each (key formatting included)",
        elapsed.as_nanos() as f64 / n as f64
    );
    Ok(())
}
