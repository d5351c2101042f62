//! The scalable Bloom filter of Almeida, Baquero, Preguiça & Hutchison ("Scalable Bloom Filters", Information
//! Processing Letters 101(6), 2007).

use core::mem;

use sstfilter::{KeyHash, UsageError, key_hash};

use crate::{BloomFilter, check_rate, configured, invalid_setting};

/// A Bloom filter for an unknown number of keys that keeps its false-positive rate under a target however many
/// keys it takes.
///
/// It is a cascade of [`BloomFilter`] stages. Stage `i` plans for `n0 · s^i` keys (growth factor `s`) at rate
/// `P_i = P · (1 - r) · r^i` (tightening ratio `r`), so that `Σ P_i = P`, the target. Keys go into the newest
/// stage; when that stage's fill-based rate would pass `P_i`, a new stage is started. A query asks every stage,
/// so the rate of the whole is `1 - Π (1 - p_i) ≤ Σ p_i < P`, where `p_i ≤ P_i` is each stage's actual rate
/// ([`expected_fpr`](Self::expected_fpr) reports it). (A stage always takes at least one key, so a
/// configuration whose stages are too small for a single key — a capacity of 1 at a tiny budget — can exceed
/// its budget; sensible capacities never do.)
///
/// Memory grows with the keys: stage `i` takes about `1.44 · log2(1/P_i)` bits for each key it plans for, more
/// than a single filter sized in advance for the final count at rate `P` would. A query asks one filter per
/// stage, and the number of stages grows with the logarithm of the key count, so a query for an absent key
/// costs several times a `BloomFilter` query (see BENCHMARKS.md); insertions query first, to skip keys
/// already present.
///
/// ```
/// use sstfilter_memory::ScalableBloomFilter;
///
/// let mut seen = ScalableBloomFilter::new(1_000, 0.01);
/// for i in 0..100_000u32 {
///     seen.insert(format!("url-{i}").as_bytes());
/// }
/// assert!(seen.num_stages() > 5);
/// assert!(seen.contains(b"url-12345"));
/// assert!(seen.expected_fpr() < 0.01);
/// ```
#[derive(Debug, Clone, PartialEq)]
pub struct ScalableBloomFilter {
    /// Earlier stages, oldest first: they are only queried.
    full: Vec<BloomFilter>,
    /// The stage that takes insertions. There is always one, so an insertion always has somewhere to go.
    current: Stage,
    config: Config,
}

/// What every stage is derived from.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Config {
    initial_capacity: usize,
    fpr: f64,
    growth: f64,
    tightening: f64,
}

impl Config {
    /// Stage `index`, or an error if its size or rate is not representable (its budget has underflowed, or it
    /// would not fit in memory).
    fn stage(&self, index: usize) -> Result<Stage, UsageError> {
        let exponent = i32::try_from(index).map_err(|_| {
            invalid_setting("ScalableBloomFilter stages", "at most i32::MAX", index)
        })?;
        let capacity = self.initial_capacity.max(1) as f64 * self.growth.powi(exponent);
        let budget = self.fpr * (1.0 - self.tightening) * self.tightening.powi(exponent);
        // `as` saturates a capacity beyond usize; such a stage then fails to size and is refused.
        let filter = BloomFilter::try_with_rate(capacity as usize, budget)?;
        let per_probe = budget.powf(1.0 / f64::from(filter.num_probes()));
        let max_ones = (filter.num_bits() as f64 * per_probe) as u64;
        let mut stage = Stage {
            filter,
            max_ones,
            headroom: 0,
        };
        stage.recount();
        Ok(stage)
    }
}

#[derive(Debug, Clone, PartialEq)]
struct Stage {
    filter: BloomFilter,
    /// The number of set bits at which the stage's rate `(X/m)^k` reaches its budget: `m · P_i^(1/k)`.
    max_ones: u64,
    /// Keys the stage can certainly take without passing `max_ones`, as of the last count: each key sets at most
    /// `k` bits. Counting the bits is a pass over the filter, so it is done only when this runs out; the gap
    /// roughly halves between counts, so a stage is counted about `log2(m)` times in its life.
    headroom: u64,
}

impl Stage {
    /// Counts the stage's set bits and sets the headroom from them.
    fn recount(&mut self) {
        let gap = self.max_ones.saturating_sub(self.filter.count_ones());
        self.headroom = gap / u64::from(self.filter.num_probes());
    }

    /// Whether one more key could take the stage past its budget (counting its bits if the headroom ran out).
    fn is_full(&mut self) -> bool {
        if self.headroom == 0 {
            self.recount();
        }
        self.headroom == 0
    }
}

impl ScalableBloomFilter {
    /// Default growth factor `s`: each stage plans for twice the keys of the previous one.
    pub const DEFAULT_GROWTH: f64 = 2.0;

    /// Default tightening ratio `r`: each stage gets 0.9 times the false-positive budget of the previous one.
    /// Almeida et al. find ratios between 0.8 and 0.9 the most economical when the set grows by orders of
    /// magnitude.
    pub const DEFAULT_TIGHTENING: f64 = 0.9;

    /// A filter whose first stage plans for `initial_capacity` keys, with total false-positive rate under
    /// `fpr`, growth factor 2 and tightening ratio 0.9.
    ///
    /// # Panics
    /// If `fpr` is not strictly between 0 and 1, or the first stage would not fit in memory or would need more than
    /// 255 probes (its rate, `fpr · (1 − tightening)`, below about `2^-255`). Use [`try_new`](Self::try_new) for
    /// untrusted configuration.
    #[must_use]
    pub fn new(initial_capacity: usize, fpr: f64) -> Self {
        Self::with_growth(
            initial_capacity,
            fpr,
            Self::DEFAULT_GROWTH,
            Self::DEFAULT_TIGHTENING,
        )
    }

    /// Like [`new`](Self::new), but an error instead of a panic.
    pub fn try_new(initial_capacity: usize, fpr: f64) -> Result<Self, UsageError> {
        Self::try_with_growth(
            initial_capacity,
            fpr,
            Self::DEFAULT_GROWTH,
            Self::DEFAULT_TIGHTENING,
        )
    }

    /// A filter with an explicit growth factor `s` (each stage plans for `s` times the keys of the previous one;
    /// Almeida et al. suggest 2 for slow growth, 4 for fast) and tightening ratio `r` (each stage gets `r` times
    /// the previous one's false-positive budget).
    ///
    /// # Panics
    /// If `fpr` or `tightening` is not strictly between 0 and 1, `growth` is below 1 or not finite, or the first
    /// stage would not fit in memory or would need more than 255 probes (its rate, `fpr · (1 − tightening)`, below
    /// about `2^-255`). Use [`try_with_growth`](Self::try_with_growth) for untrusted
    /// configuration.
    #[must_use]
    pub fn with_growth(initial_capacity: usize, fpr: f64, growth: f64, tightening: f64) -> Self {
        configured(Self::try_with_growth(
            initial_capacity,
            fpr,
            growth,
            tightening,
        ))
    }

    /// Like [`with_growth`](Self::with_growth), but an error instead of a panic.
    pub fn try_with_growth(
        initial_capacity: usize,
        fpr: f64,
        growth: f64,
        tightening: f64,
    ) -> Result<Self, UsageError> {
        let fpr = check_rate("ScalableBloomFilter fpr", fpr)?;
        let tightening = check_rate("ScalableBloomFilter tightening", tightening)?;
        if !(growth.is_finite() && growth >= 1.0) {
            return Err(invalid_setting(
                "ScalableBloomFilter growth",
                "a finite number of at least 1",
                growth,
            ));
        }
        let config = Config {
            initial_capacity,
            fpr,
            growth,
            tightening,
        };
        Ok(ScalableBloomFilter {
            full: Vec::new(),
            current: config.stage(0)?,
            config,
        })
    }

    /// Inserts a key unless it may already be present. Returns `true` if the key was certainly not in the filter
    /// before.
    #[inline]
    pub fn insert(&mut self, key: &[u8]) -> bool {
        self.insert_hash(key_hash(key))
    }

    /// [`insert`](Self::insert) for a key hashed with [`key_hash`].
    pub fn insert_hash(&mut self, hash: KeyHash) -> bool {
        if self.contains_hash(hash) {
            return false;
        }
        if self.current.is_full() {
            // If the next stage cannot be built (its budget underflowed or memory is exhausted), the current one
            // keeps taking keys: its rate rises past the target, but no key is ever lost.
            if let Ok(next) = self.config.stage(self.full.len() + 1) {
                let done = mem::replace(&mut self.current, next);
                self.full.push(done.filter);
            }
        }
        self.current.filter.insert_hash(hash);
        self.current.headroom = self.current.headroom.saturating_sub(1);
        true
    }

    /// Whether `key` may have been inserted: `false` means it certainly was not.
    #[inline]
    #[must_use]
    pub fn contains(&self, key: &[u8]) -> bool {
        self.contains_hash(key_hash(key))
    }

    /// [`contains`](Self::contains) for a key hashed with [`key_hash`]. The newest stages hold the most keys and
    /// are asked first.
    #[must_use]
    pub fn contains_hash(&self, hash: KeyHash) -> bool {
        self.current.filter.contains_hash(hash)
            || self
                .full
                .iter()
                .rev()
                .any(|stage| stage.contains_hash(hash))
    }

    /// The false-positive probability of a query now: `1 - Π (1 - p_i)` over the stages' fill-based rates. It
    /// stays under the target rate.
    #[must_use]
    pub fn expected_fpr(&self) -> f64 {
        let pass = self
            .stages()
            .map(|stage| 1.0 - stage.expected_fpr())
            .product::<f64>();
        1.0 - pass
    }

    /// The number of distinct keys inserted, estimated from the stages' fills (the sum of
    /// [`BloomFilter::estimated_len`]).
    #[must_use]
    pub fn estimated_len(&self) -> f64 {
        self.stages().map(BloomFilter::estimated_len).sum()
    }

    /// Whether no key has been inserted.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.full.is_empty() && self.current.filter.is_empty()
    }

    /// Number of stages (at least 1).
    #[must_use]
    pub fn num_stages(&self) -> usize {
        self.full.len() + 1
    }

    /// The stages, oldest first; each can be inspected or serialised with [`BloomFilter::to_block`].
    pub fn stages(&self) -> impl Iterator<Item = &BloomFilter> + '_ {
        self.full
            .iter()
            .chain(core::iter::once(&self.current.filter))
    }

    /// The target false-positive rate the filter stays under.
    #[must_use]
    pub fn target_fpr(&self) -> f64 {
        self.config.fpr
    }

    /// Bytes of memory the stages' bit arrays take.
    #[must_use]
    pub fn memory_bytes(&self) -> usize {
        self.stages().map(BloomFilter::memory_bytes).sum()
    }

    /// Removes every key and every stage but a fresh first one.
    pub fn clear(&mut self) {
        self.full.clear();
        match self.config.stage(0) {
            Ok(first) => self.current = first,
            // Unreachable (the first stage was built when the filter was); clearing in place is as correct.
            Err(_) => self.current.filter.clear(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stages_grow_and_tighten() {
        let mut f = ScalableBloomFilter::new(1000, 0.01);
        assert_eq!(f.num_stages(), 1);
        for i in 0..20_000u32 {
            f.insert(&i.to_le_bytes());
        }
        assert!(f.num_stages() >= 4, "{}", f.num_stages());
        let stages: Vec<&BloomFilter> = f.stages().collect();
        for pair in stages.windows(2) {
            assert!(pair[1].num_bits() > pair[0].num_bits());
            assert!(pair[1].num_probes() >= pair[0].num_probes());
        }
        // Every full stage stopped at or under its budget P·(1 - r)·r^i.
        for (i, stage) in stages.iter().enumerate() {
            let budget = 0.01 * 0.1 * 0.9f64.powi(i as i32);
            assert!(
                stage.expected_fpr() <= budget,
                "stage {i}: {}",
                stage.expected_fpr()
            );
        }
        assert!(f.expected_fpr() < 0.01);
        assert!(
            (f.estimated_len() / 20_000.0 - 1.0).abs() < 0.05,
            "{}",
            f.estimated_len()
        );
        let memory = f.memory_bytes();
        assert_eq!(
            memory,
            stages.iter().map(|s| s.memory_bytes()).sum::<usize>()
        );
        f.clear();
        assert!(f.is_empty() && f.num_stages() == 1);
        assert!(f.memory_bytes() < memory);
    }

    #[test]
    fn duplicates_are_not_inserted_twice() {
        let mut f = ScalableBloomFilter::new(10, 0.01);
        assert!(f.insert(b"a"));
        let ones = f.stages().map(BloomFilter::count_ones).sum::<u64>();
        for _ in 0..1000 {
            assert!(!f.insert(b"a"));
        }
        assert_eq!(f.num_stages(), 1);
        assert_eq!(f.stages().map(BloomFilter::count_ones).sum::<u64>(), ones);
    }

    #[test]
    fn configuration_is_validated() {
        assert!(ScalableBloomFilter::try_new(100, 0.0).is_err());
        assert!(ScalableBloomFilter::try_with_growth(100, 0.01, 0.5, 0.9).is_err());
        assert!(ScalableBloomFilter::try_with_growth(100, 0.01, f64::NAN, 0.9).is_err());
        assert!(ScalableBloomFilter::try_with_growth(100, 0.01, 2.0, 1.0).is_err());
        assert!(ScalableBloomFilter::try_with_growth(100, 0.01, 1.0, 0.5).is_ok());
        assert_eq!(ScalableBloomFilter::new(0, 0.01).target_fpr(), 0.01);
    }

    #[test]
    fn a_stage_that_cannot_be_built_leaves_the_current_one_taking_keys() {
        // A budget that underflows after a handful of stages: r = 1e-100 makes stage 4's rate 0.
        let mut f = ScalableBloomFilter::with_growth(1, 0.5, 1.0, 1e-100);
        for i in 0..2000u32 {
            f.insert(&i.to_le_bytes());
        }
        assert!(f.num_stages() <= 4, "{}", f.num_stages());
        assert!((0..2000u32).all(|i| f.contains(&i.to_le_bytes())));
    }
}
