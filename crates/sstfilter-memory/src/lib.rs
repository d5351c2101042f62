//! The classic in-memory Bloom filters of the literature: a set you insert keys into and ask about while a program
//! runs, as opposed to `sstfilter`'s SST filter block, which is built once from a table's keys and then only read.
//!
//! * [`BloomFilter`]: Guava's `BloomFilter` in Rust — sized from the expected number of items and the
//!   false-positive probability (or explicitly), with `insert` / `contains`, estimates of its own false-positive
//!   rate and cardinality from its fill, union and intersection-size estimates, and serialisation into a
//!   checksummed [`FilterKind::StandardBloom`](sstfilter::FilterKind::StandardBloom) block that
//!   [`sstfilter::FilterBlock`] reads in place.
//! * [`CountingBloomFilter`]: 4-bit saturating counters instead of bits, so keys can be removed.
//! * [`ScalableBloomFilter`]: for an unknown number of items, a cascade of Bloom filters of growing capacity and
//!   tightening false-positive rate whose total rate stays under the target (Almeida et al., 2007).
//!
//! All three hash a key once with `sstfilter`'s [`key_hash`](sstfilter::key_hash) (xxh3-64) and take their `k`
//! probe positions from [`StandardBloomParams::probes`] (`h1 + i·h2`), so a `BloomFilter`, a counting filter
//! projected onto bits and a StandardBloom block of the same size agree bit for bit. Keys are byte strings; every
//! method has a `*_hash` twin that takes a precomputed [`KeyHash`](sstfilter::KeyHash). The crate uses `sstfilter`
//! through its public API alone: the probes, and [`StandardBloomParams::write_block`] to frame a filter's bits as
//! a block.
//!
//! ```
//! use sstfilter_memory::BloomFilter;
//!
//! let mut seen = BloomFilter::with_rate(1_000_000, 0.01); // 1.2 MB for a million URLs at 1 %
//! assert!(seen.insert(b"https://example.com/"));           // new
//! assert!(!seen.insert(b"https://example.com/"));          // already there
//! assert!(seen.contains(b"https://example.com/"));
//! assert!(!seen.contains(b"https://example.com/about"));    // (or, 1 % of the time, a false positive)
//! ```

#![deny(missing_docs)]
#![warn(unreachable_pub)]
// As in the core: no panics but the documented ones of the panicking constructors (`configured`), and no indexing
// that could go out of bounds.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )
)]

mod counting;
mod rates;
mod scalable;
mod standard;

pub use counting::CountingBloomFilter;
pub use scalable::ScalableBloomFilter;
pub use standard::BloomFilter;

use core::fmt::Display;

use sstfilter::StandardBloomParams;
use sstfilter::UsageError;
use sstfilter::sizing::FilterModel;

use rates::optimal_bloom_bits;

/// The parameters of a filter for `expected_items` items at false-positive rate `fpr`, as Guava sizes
/// them: `m = ceil(-n·ln p / ln² 2)` rounded up to whole 64-bit words (the extra bits only lower the rate) and
/// `k = round((m/n)·ln 2)`. Refused (as `setting`) when `fpr` is not strictly between 0 and 1, when it needs more
/// probes than the format holds (255: below about `2^-255`, a rate no filter needs), or when the filter would not
/// fit in memory. Zero expected items are sized as one.
fn params_for_rate(
    setting: &'static str,
    expected_items: usize,
    fpr: f64,
) -> Result<StandardBloomParams, UsageError> {
    let fpr = check_rate(setting, fpr)?;
    let n = expected_items.max(1) as f64;
    let bits = optimal_bloom_bits(n, fpr);
    let words = (bits / 64.0).ceil();
    let refused = |expected: &str| {
        invalid_setting(
            setting,
            expected,
            format!("{fpr} for {expected_items} items"),
        )
    };
    // The optimal count, `round((m/n)·ln 2)`, is the core's (the one its StandardBloom policy uses).
    let num_probes = FilterModel::StandardBloom
        .probes(bits / n)
        .filter(|&k| k <= StandardBloomParams::MAX_PROBES)
        .ok_or_else(|| refused("a rate that 255 probes reach"))?;
    // A float this large cannot be a word count (and `StandardBloomParams::new` bounds it further).
    if words >= u64::MAX as f64 / 64.0 {
        return Err(refused("a rate and item count whose filter fits in memory"));
    }
    StandardBloomParams::new(words as u64 * 64, num_probes)
        .map_err(|_| refused("a rate and item count whose filter fits in memory"))
}

/// The parameters `StandardBloomParams::new(bits, hashes)` for a filter of an explicit size, refused (as
/// `setting`) when it refuses them.
fn params_for_size(
    setting: &'static str,
    bits: u64,
    hashes: u32,
) -> Result<StandardBloomParams, UsageError> {
    StandardBloomParams::new(bits, hashes).map_err(|_| {
        invalid_setting(
            setting,
            format!(
                "1 to {} probes and a non-zero number of bits the format allows",
                StandardBloomParams::MAX_PROBES
            ),
            format!("{hashes} probes and {bits} bits"),
        )
    })
}

/// `rate` if a filter can promise it (strictly between 0 and 1), else refused as `setting`.
fn check_rate(setting: &'static str, rate: f64) -> Result<f64, UsageError> {
    let promised = rate > 0.0 && rate < 1.0;
    promised
        .then_some(rate)
        .ok_or_else(|| invalid_setting(setting, "strictly between 0 and 1", rate))
}

/// The [`UsageError::InvalidSetting`] of `setting`, which must be `expected` and was `found`.
fn invalid_setting(
    setting: &'static str,
    expected: impl Into<String>,
    found: impl Display,
) -> UsageError {
    UsageError::InvalidSetting {
        setting,
        expected: expected.into(),
        found: found.to_string(),
    }
}

/// The value of a panicking constructor whose `try_` twin returned `value`: a refused configuration is a
/// programming error (as each such constructor documents), reported with the error's message.
fn configured<T>(value: Result<T, UsageError>) -> T {
    #[expect(
        clippy::panic,
        reason = "documented: a bad configuration constant is a programming error"
    )]
    value.unwrap_or_else(|error| panic!("{error}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizing_from_a_rate_follows_guava() {
        // Guava: 1M insertions at 1 % → 9,585,059 bits and 7 hash functions; rounded up to 149,767 words.
        let rate = |n, fpr| params_for_rate("fpr", n, fpr);
        let p = rate(1_000_000, 0.01).unwrap();
        assert_eq!((p.num_bits(), p.num_probes()), (9_585_088, 7));
        let p = rate(1000, 0.001).unwrap();
        assert_eq!(p.num_probes(), 10);
        assert_eq!(rate(0, 0.01), rate(1, 0.01));
        for bad in [0.0, 1.0, -0.5, 2.0, f64::NAN, f64::INFINITY] {
            assert!(rate(100, bad).is_err(), "{bad}");
        }
        assert!(rate(usize::MAX, 1e-300).is_err());
        // A vanishing rate asks for more probes than the format holds: refused, not clamped into a promise the
        // filter would break.
        assert!(rate(1, 1e-300).is_err());
        assert_eq!(rate(1, 1e-70).unwrap().num_probes(), 233);
    }
}
