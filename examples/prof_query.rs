use sstfilter::{FastBloomPolicy, FilterBlock, FilterBlockBuilder};
fn main() {
    let n = 1_000_000u64;
    let keys: Vec<String> = (0..n).map(|i| format!("usr:{:012}", 2 * i)).collect();
    let absent: Vec<String> = (0..n).map(|i| format!("usr:{:012}", 2 * i + 1)).collect();
    let mut b = FilterBlockBuilder::new(FastBloomPolicy::new(10.0));
    let t = std::time::Instant::now();
    for k in &keys {
        b.add_key(k.as_bytes());
    }
    let bytes = b.finish();
    eprintln!(
        "build {:.1} ns/key",
        t.elapsed().as_nanos() as f64 / n as f64
    );
    let f = FilterBlock::open(&bytes[..]).unwrap();
    let mode = std::env::args().nth(1).unwrap_or_default();
    let set = if mode == "miss" { &absent } else { &keys };
    let mut c = 0;
    let t = std::time::Instant::now();
    for _ in 0..20 {
        c += set.iter().filter(|k| f.may_contain(k.as_bytes())).count();
    }
    eprintln!(
        "{mode} {:.1} ns/query ({c})",
        t.elapsed().as_nanos() as f64 / (20 * n) as f64
    );
}
