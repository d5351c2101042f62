//! Range: a range filter, which answers "may any key lie between these bounds?" as well as point questions.
//!
//! The design is **Grafite** (Costa, Ferragina & Vinciguerra, "Grafite: Taming Adversarial Queries with Optimal
//! Range Filters", SIGMOD 2024), implemented from the paper. It was chosen over the alternatives because its bound
//! holds for every query, with no assumption on how keys or queries are distributed, at a space within 2 bits per
//! key of the lower bound, and because its structure is simple enough to specify byte for byte and to read in
//! place: SuRF's and Rosetta's rates depend on the key and query distributions (adversarial or correlated
//! workloads defeat them), REncoder and Diva trade memory for speed, and Memento filters are built for updates a
//! table never makes.
//!
//! * **Projection** (`projection.rs`): keys are byte strings; the filter works on integers. The block stores the
//!   common prefix `P` of its keys and reads the (up to 16) bytes after it as a mixed radix of byte ranks (the
//!   crate docs, "Range filters and projected values", explain it to users), so a key inside a byte-string range
//!   lands inside the projected range.
//! * **Hash**: with a maximum range length `L = 2^range_log2` and a universe `r`, value `v` is stored as the code
//!   `(q(v div L) + v mod L) mod r`, `q` a random function into `0..r`. Values in one aligned run of `L` keep
//!   their distances, so a query range (at most `L` long) covers at most two runs and maps to at most two
//!   intervals of codes of the same total length; runs land at independent random places.
//! * **Codes** (`elias_fano.rs`): the sorted distinct codes in Elias–Fano form, `log2(r / n) + 2` bits per key,
//!   with sampled positions so a query finds its bucket in a few word reads.
//!
//! A range that holds no key maps to code intervals of total length `ℓ` that no key's own interval overlaps; each
//! other key's code falls in them with probability `ℓ / r`, so the false-positive rate is at most `n · ℓ / r`.
//! A writer that targets rate `ε` at length `L` sets `r = ⌈n · L / ε⌉`: `ε · ℓ / L` for ranges of length `ℓ ≤ L`,
//! and `ε / L` for point questions, at `log2(L / ε) + 2` bits per key plus the samples (a quarter bit).
//!
//! The keys it serves poorly are listed for users in the crate docs; ranges longer than [`MAX_RUNS_PER_QUERY`]
//! runs are not checked: they answer "may contain".
//!
//! The byte layout is FORMAT.md section 4.5.

pub(crate) mod builder;
pub(crate) mod elias_fano;
pub(crate) mod policy;
pub(crate) mod projection;

use core::ops::Bound;

use super::check_reserved;
use crate::error::{Error, Result};
use crate::format::PARAMS_LEN;
use crate::le::LeReader;
use crate::tag::FilterKind;
use elias_fano::{Layout, Sequence};
use projection::{
    ALPHABET_LEN, MAX_POSITIONS, Projection, WORD_RANKS_LEN, code, low_mask, run_base, wrap,
};

/// The longest range a filter may be sized for, as a power of two: `2^56`, which leaves the universe room above
/// it for the rate.
pub(crate) const MAX_RANGE_LOG2: u32 = 56;

/// A question covering more runs of `L` values than this answers "may contain" unchecked (each run costs one
/// look-up, and the bound `n · ℓ / r` of so long a range is weak anyway).
pub(crate) const MAX_RUNS_PER_QUERY: u64 = 16;

/// Bytes after the codes: the smallest and the largest projected key.
const BOUNDS_LEN: usize = 16;

/// Bytes per projected position: its weight (u64), its alphabet and its word ranks.
const POSITION_LEN: usize = 8 + ALPHABET_LEN + WORD_RANKS_LEN;

/// The parameters of a Range filter, as stored in the trailer: the range length it was sized for, the universe of
/// its codes and the length of its common prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RangeParams {
    range_log2: u8,
    prefix_len: u16,
    /// Projected positions `m` (FORMAT.md 4.5).
    positions: u8,
    universe: u64,
    /// The codes' layout; `None` for a filter of no keys.
    layout: Option<Layout>,
}

/// What a Range filter says about a range.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Verdict {
    /// No key lies in the range.
    Absent,
    /// A key may lie in the range.
    MayContain,
    /// The range covers more than [`MAX_RUNS_PER_QUERY`] runs: not checked.
    TooWide,
}

impl RangeParams {
    /// The parameters of a filter of `num_codes` codes (0 for an empty filter) below `universe`, sized for ranges of
    /// `2^range_log2`, with a common prefix of `prefix_len` bytes; `None` if they are not a valid combination.
    pub(crate) fn new(
        range_log2: u32,
        universe: u64,
        prefix_len: usize,
        positions: usize,
        num_codes: u64,
    ) -> Option<Self> {
        if range_log2 > MAX_RANGE_LOG2 || positions > MAX_POSITIONS {
            return None;
        }
        let prefix_len = u16::try_from(prefix_len).ok()?;
        let layout = if num_codes == 0 {
            if universe != 0 || prefix_len != 0 || positions != 0 {
                return None;
            }
            None
        } else {
            if universe < 1u64 << range_log2 {
                return None;
            }
            Some(Layout::new(num_codes, universe)?)
        };
        Some(RangeParams {
            range_log2: range_log2 as u8, // NOTE: at most 56
            prefix_len,
            positions: positions as u8, // NOTE: at most 16
            universe,
            layout,
        })
    }

    /// The range length the filter was sized for, `L = 2^range_log2`, in projected values.
    #[must_use]
    pub const fn max_range_len(&self) -> u64 {
        1 << self.range_log2
    }

    /// `log2` of [`max_range_len`](Self::max_range_len).
    #[must_use]
    pub const fn range_log2(&self) -> u32 {
        self.range_log2 as u32
    }

    /// The size `r` of the code universe (0 for an empty filter).
    #[must_use]
    pub const fn universe(&self) -> u64 {
        self.universe
    }

    /// Length of the keys' common prefix stored in the block.
    #[must_use]
    pub const fn prefix_len(&self) -> usize {
        self.prefix_len as usize
    }

    /// Number of projected positions: the bytes after the common prefix that the projection reads.
    #[must_use]
    pub const fn positions(&self) -> usize {
        self.positions as usize
    }

    /// Low bits stored per code (Elias–Fano's `l`).
    #[must_use]
    pub const fn lower_bits(&self) -> u32 {
        match &self.layout {
            Some(layout) => layout.lower_bits,
            None => 0,
        }
    }

    /// Length of the payload in bytes.
    #[must_use]
    pub const fn payload_len(&self) -> usize {
        match &self.layout {
            // Fits: `new` and `decode` checked the length against the payload or built it.
            Some(layout) => {
                8 * (layout.lower_words + layout.upper_words + layout.samples) as usize
                    + BOUNDS_LEN
                    + self.positions as usize * POSITION_LEN
                    + self.prefix_len as usize
            }
            None => 0,
        }
    }

    /// The bound on the false-positive rate of a point question with `num_keys` codes stored: `n / r`.
    #[must_use]
    pub fn expected_fpr(&self, num_keys: u64) -> f64 {
        self.range_fpr(num_keys, 1)
    }

    /// The bound on the false-positive rate of a question about an empty range of `range_len` projected values
    /// (at most [`max_range_len`](Self::max_range_len) for the bound to be the paper's): `min(1, n · ℓ / r)`.
    #[must_use]
    pub fn range_fpr(&self, num_keys: u64, range_len: u64) -> f64 {
        if self.universe == 0 {
            return 0.0;
        }
        (num_keys as f64 * range_len as f64 / self.universe as f64).min(1.0)
    }

    /// The trailer's parameter bytes: `range_log2`, `lower_bits`, the prefix length (u16), the position count, 3
    /// reserved zero bytes, the universe (u64).
    pub(crate) fn encode(&self) -> [u8; PARAMS_LEN] {
        let mut out = [0u8; PARAMS_LEN];
        out[0] = self.range_log2;
        out[1] = self.lower_bits() as u8; // NOTE: at most 63
        out[2..4].copy_from_slice(&self.prefix_len.to_le_bytes());
        out[4] = self.positions;
        out[8..].copy_from_slice(&self.universe.to_le_bytes());
        out
    }

    /// Decodes and validates the parameters of a block of `num_keys` codes whose payload is `payload_len` bytes:
    /// everything the queries rely on (the range length, a universe that holds the codes and a run, the canonical
    /// low-bit count, and the payload length of that layout).
    pub(crate) fn decode(
        params: &[u8; PARAMS_LEN],
        payload_len: usize,
        num_keys: u64,
    ) -> Result<Self> {
        let bad = |field, value| Error::BadParams {
            kind: Some(FilterKind::Range),
            field,
            found: value,
        };
        let mut r = LeReader::new(params);
        let range_log2 = r.u8().unwrap_or_default();
        let lower_bits = r.u8().unwrap_or_default();
        let prefix_len = r.u16().unwrap_or_default();
        let positions = r.u8().unwrap_or_default();
        let reserved = r.array::<3>().unwrap_or_default();
        let universe = r.u64().unwrap_or_default();
        check_reserved(FilterKind::Range, &reserved, 5)?;
        if u32::from(range_log2) > MAX_RANGE_LOG2 {
            return Err(bad("range_log2", u64::from(range_log2)));
        }
        if usize::from(positions) > MAX_POSITIONS {
            return Err(bad("positions", u64::from(positions)));
        }
        if num_keys == 0 {
            if universe != 0 {
                return Err(bad("universe", universe));
            }
            if prefix_len != 0 {
                return Err(bad("prefix_len", u64::from(prefix_len)));
            }
            if positions != 0 {
                return Err(bad("positions", u64::from(positions)));
            }
        } else {
            if universe < num_keys {
                return Err(bad("num_keys", num_keys));
            }
            if universe < 1u64 << range_log2 {
                return Err(bad("universe", universe));
            }
        }
        let params = RangeParams::new(
            u32::from(range_log2),
            universe,
            usize::from(prefix_len),
            usize::from(positions),
            num_keys,
        )
        .ok_or(bad("universe", universe))?;
        if u32::from(lower_bits) != params.lower_bits() {
            return Err(bad("lower_bits", u64::from(lower_bits)));
        }
        // Compared in u64, where an impossible layout cannot wrap.
        let expected = match &params.layout {
            None => Some(0),
            Some(layout) => layout.bytes().and_then(|b| {
                b.checked_add(
                    (BOUNDS_LEN + usize::from(positions) * POSITION_LEN + usize::from(prefix_len))
                        as u64,
                )
            }),
        };
        if expected != Some(payload_len as u64) {
            return Err(Error::LengthMismatch {
                kind: FilterKind::Range,
                expected: expected.unwrap_or(u64::MAX),
                found: payload_len as u64,
            });
        }
        Ok(params)
    }
}

/// A Range payload read in place: the codes, the projected bounds of the keys, and the projection.
struct View<'a> {
    params: &'a RangeParams,
    layout: &'a Layout,
    codes: &'a [u8],
    min: u64,
    max: u64,
    projection: Projection<'a>,
}

impl<'a> View<'a> {
    /// The payload's parts; `None` for an empty filter, or a payload shorter than `open` measured (impossible for
    /// bytes that do not change).
    #[inline]
    fn new(params: &'a RangeParams, payload: &'a [u8]) -> Option<Self> {
        let layout = params.layout.as_ref()?;
        let codes_len = usize::try_from(layout.bytes()?).ok()?;
        let mut r = LeReader::new(payload.get(codes_len..)?);
        let min = r.u64()?;
        let max = r.u64()?;
        let m = params.positions();
        let weights_at = codes_len.checked_add(BOUNDS_LEN)?;
        let alphabets_at = weights_at.checked_add(8 * m)?;
        let ranks_at = alphabets_at.checked_add(ALPHABET_LEN * m)?;
        let prefix_at = ranks_at.checked_add(WORD_RANKS_LEN * m)?;
        Some(View {
            params,
            layout,
            codes: payload.get(..codes_len)?,
            min,
            max,
            projection: Projection {
                weights: payload.get(weights_at..alphabets_at)?,
                alphabets: payload.get(alphabets_at..ranks_at)?,
                ranks: payload.get(ranks_at..prefix_at)?,
                prefix: payload.get(prefix_at..prefix_at.checked_add(params.prefix_len())?)?,
            },
        })
    }

    /// Whether any key's projection lies in `[lo, hi]`.
    fn any_in(&self, lo: u64, hi: u64) -> Verdict {
        let (lo, hi) = (lo.max(self.min), hi.min(self.max));
        if lo > hi {
            return Verdict::Absent;
        }
        let log2 = self.params.range_log2();
        let (first, last) = (lo >> log2, hi >> log2);
        if last - first >= MAX_RUNS_PER_QUERY {
            return Verdict::TooWide;
        }
        let universe = self.params.universe;
        let codes = Sequence::new(self.layout, self.codes);
        let mask = low_mask(log2);
        for run in first..=last {
            let from = if run == first { lo & mask } else { 0 };
            let to = if run == last { hi & mask } else { mask };
            let base = run_base(run, universe);
            let (start, end) = (wrap(base, from, universe), wrap(base, to, universe));
            // `to − from < L ≤ r`: the codes are one interval, or two if they pass `r − 1` and wrap to 0.
            let hit = if start <= end {
                codes.any_in(start, end)
            } else {
                codes.any_in(start, universe - 1) || codes.any_in(0, end)
            };
            if hit {
                return Verdict::MayContain;
            }
        }
        Verdict::Absent
    }
}

/// Whether `key` may have been added.
pub(crate) fn may_contain_key(params: &RangeParams, payload: &[u8], key: &[u8]) -> bool {
    match View::new(params, payload) {
        None => params.layout.is_some(), // an empty filter holds nothing; an unreadable one may hold anything
        Some(view) => match view.projection.point(key) {
            None => false,
            Some(v) if v < view.min || v > view.max => false,
            Some(v) => {
                let c = code(v, params.range_log2(), params.universe);
                Sequence::new(view.layout, view.codes).any_in(c, c)
            }
        },
    }
}

/// Whether any key may lie between `lower` and `upper`, for a range the caller has found non-empty.
pub(crate) fn may_contain_range(
    params: &RangeParams,
    payload: &[u8],
    lower: Bound<&[u8]>,
    upper: Bound<&[u8]>,
) -> Verdict {
    let Some(view) = View::new(params, payload) else {
        return if params.layout.is_some() {
            Verdict::MayContain
        } else {
            Verdict::Absent
        };
    };
    let p = &view.projection;
    let lo = match lower {
        Bound::Unbounded => Some(0),
        Bound::Included(a) | Bound::Excluded(a) => p.lower(a),
    };
    let hi = match upper {
        Bound::Unbounded => Some(u64::MAX),
        Bound::Included(b) => p.upper(b, false),
        Bound::Excluded(b) => p.upper(b, true),
    };
    match (lo, hi) {
        (Some(lo), Some(hi)) => view.any_in(lo, hi),
        _ => Verdict::Absent, // the bound lies beyond every key
    }
}

/// The projection a builder chose: the alphabets and weights of its positions (`projection::choose`).
pub(crate) struct Chosen<'a> {
    pub(crate) prefix: &'a [u8],
    pub(crate) alphabets: &'a [[u64; 4]],
    pub(crate) weights: &'a [u64],
}

/// Builds the payload for keys projected by `chosen` (a prefix of at most `u16::MAX` bytes) to `values`
/// (non-decreasing), sized for ranges of `2^range_log2` (at most [`MAX_RANGE_LOG2`]) in a universe of `universe`
/// codes (at least `2^range_log2` and at least `values.len()`), appending it to `out`. Returns the parameters and
/// the number of distinct codes stored (the block's key count).
pub(crate) fn build(
    chosen: &Chosen<'_>,
    values: &[u64],
    range_log2: u32,
    universe: u64,
    out: &mut Vec<u8>,
) -> (RangeParams, u64) {
    let (Some(first), Some(last)) = (values.first(), values.last()) else {
        let empty = RangeParams::new(range_log2.min(MAX_RANGE_LOG2), 0, 0, 0, 0);
        #[expect(
            clippy::expect_used,
            reason = "an empty filter's parameters are valid for any clamped range_log2"
        )]
        return (empty.expect("valid empty parameters"), 0);
    };
    let mut codes: Vec<u64> = values
        .iter()
        .map(|&v| code(v, range_log2, universe))
        .collect();
    codes.sort_unstable();
    codes.dedup();
    let n = codes.len() as u64;
    #[expect(
        clippy::expect_used,
        reason = "cannot fail under the documented preconditions (1 ≤ n ≤ values.len() ≤ universe, \
                  2^range_log2 ≤ universe, a short prefix, at most MAX_POSITIONS positions), which the one \
                  caller, the builder, establishes; writing an empty filter instead would lose every key"
    )]
    let params = RangeParams::new(
        range_log2,
        universe,
        chosen.prefix.len(),
        chosen.weights.len(),
        n,
    )
    .expect("the builder sizes a valid universe");
    if let Some(layout) = &params.layout {
        elias_fano::encode(&codes, layout, out);
    }
    out.extend_from_slice(&first.to_le_bytes());
    out.extend_from_slice(&last.to_le_bytes());
    for w in chosen.weights {
        out.extend_from_slice(&w.to_le_bytes());
    }
    for alphabet in chosen.alphabets {
        for w in alphabet {
            out.extend_from_slice(&w.to_le_bytes());
        }
    }
    for alphabet in chosen.alphabets {
        out.extend_from_slice(&projection::word_ranks(alphabet));
    }
    out.extend_from_slice(chosen.prefix);
    (params, n)
}

/// Whether no byte string lies between `lower` and `upper` for certain (lower above upper, or equal with one of
/// them excluded). Other empty ranges (`(a, a\0)`, both excluded) are not detected: the filter answers them.
pub(crate) fn is_empty(lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> bool {
    match (lower, upper) {
        (Bound::Included(a), Bound::Included(b)) => a > b,
        (Bound::Included(a) | Bound::Excluded(a), Bound::Included(b) | Bound::Excluded(b)) => {
            a >= b
        }
        _ => false,
    }
}

/// The one key of a range `[a, a]`, which a point filter can answer.
pub(crate) fn single_key<'a>(lower: Bound<&'a [u8]>, upper: Bound<&'a [u8]>) -> Option<&'a [u8]> {
    match (lower, upper) {
        (Bound::Included(a), Bound::Included(b)) if a == b => Some(a),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
