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
//! * **Hash**: with a universe `r` and runs of `R = 2^t`, the largest power of two `≤ r`, value `v` is stored as the
//!   code `(q(v div R) + v mod R) mod r`, `q` a random function into `0..r`. Values in one aligned run keep their
//!   distances (and stay distinct codes: `R ≤ r`), so a range maps to one interval of codes of its length, or
//!   two when it crosses from one run into the next (probability `ℓ / R`, below `2 · ε / n` for `ℓ ≤ L`) or wraps
//!   past `r − 1`; runs land at independent random places. A range over three runs or more covers a whole run, more
//!   than `r / 2` codes: "may contain", where the bound below is at least `n / 2`.
//! * **Codes** (`elias_fano.rs`): the sorted distinct codes in Elias–Fano form, `log2(r / n) + 2` bits per key,
//!   with sampled counts so a query finds its bucket in a few word reads.
//!
//! A range that holds no key maps to code intervals of total length `ℓ` that no key of its runs falls in (their
//! offsets are outside it); each key of another run falls in them with probability `ℓ / r`, so the
//! false-positive rate is at most `n · ℓ / r`, for every length. A writer that targets rate `ε` at length `L` sets
//! `r = ⌈n · L / ε⌉`: `ε · ℓ / L` for ranges of length `ℓ`, and `ε / L` for point questions, at `log2(L / ε) + 2` to
//! `+ 3` bits per key plus the samples (`32 · B / 256` bits for `B` buckets, an eighth to a quarter bit per key) and
//! the counts of zeros (`16 · (n + B) / 1024` bits, 1/32 to 3/64 bit per key).
//!
//! The keys it serves poorly are listed for users in the crate docs.
//!
//! The byte layout is FORMAT.md section 4.5.

pub(crate) mod builder;
pub(crate) mod elias_fano;
pub(crate) mod policy;
pub(crate) mod projection;
mod radix;

use core::ops::Bound;

use super::check_reserved;
use crate::error::{Error, Result};
use crate::format::PARAMS_LEN;
use crate::le::LeReader;
use crate::order::compare;
use crate::tag::FilterKind;
use elias_fano::{Layout, Sequence};
use projection::{
    MAX_POSITIONS, POSITION_LEN, Projection, Verbatim, code, low_mask, run_base, run_log2, wrap,
};

/// The longest range a filter may be sized for, as a power of two: `2^56`, which leaves the universe room above
/// it for the rate.
pub(crate) const MAX_RANGE_LOG2: u32 = 56;

/// The parameter byte `e` when some key has bytes after the projected positions.
const LONGER_THAN_PROJECTED: u8 = u8::MAX;

/// Bytes after the codes: the smallest and the largest projected key.
const BOUNDS_LEN: usize = 16;

/// The parameters of a Range filter, as stored in the trailer: the range length it was sized for, the universe of
/// its codes and the length of its common prefix (with, for an opened block, what its projection lets a query read
/// at once, found in the payload: two blocks with the same trailer but different keys may compare unequal).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RangeParams {
    range_log2: u8,
    /// `t`: runs of `2^t` values, the largest power of two up to the universe (0 for an empty filter).
    run_log2: u8,
    prefix_len: u16,
    /// Projected positions `m` (FORMAT.md 4.5).
    positions: u8,
    /// `e`: the length of the longest key after the prefix, if at most `m`; [`LONGER_THAN_PROJECTED`] otherwise.
    longest: u8,
    universe: u64,
    /// The codes' layout; `None` for a filter of no keys.
    layout: Option<Layout>,
    /// The projection's verbatim run: not stored in the trailer, but read from the payload when the block is opened
    /// (none until then).
    verbatim: Verbatim,
}

impl RangeParams {
    /// The parameters of a filter of `num_codes` codes (0 for an empty filter) below `universe`, sized for ranges of
    /// `2^range_log2`, with a common prefix of `prefix_len` bytes, `positions` projected positions and its longest
    /// key `longest` bytes after the prefix (`None`: longer than the projected positions); `None` if they are not a
    /// valid combination.
    pub(crate) fn new(
        range_log2: u32,
        universe: u64,
        prefix_len: usize,
        positions: usize,
        longest: Option<usize>,
        num_codes: u64,
    ) -> Option<Self> {
        if range_log2 > MAX_RANGE_LOG2 || positions > MAX_POSITIONS {
            return None;
        }
        let prefix_len = u16::try_from(prefix_len).ok()?;
        let longest = match longest {
            Some(k) if k <= positions => k as u8, // NOTE: at most 16
            Some(_) => return None,
            None => LONGER_THAN_PROJECTED,
        };
        let layout = if num_codes == 0 {
            if universe != 0 || prefix_len != 0 || positions != 0 || longest != 0 {
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
            run_log2: if universe == 0 {
                0
            } else {
                run_log2(universe) as u8 // NOTE: at most 63
            },
            prefix_len,
            positions: positions as u8, // NOTE: at most 16
            longest,
            universe,
            layout,
            verbatim: Verbatim::NONE,
        })
    }

    /// These parameters with what `payload` (the block's, which `decode` measured) tells queries beyond the trailer:
    /// the projection's verbatim run.
    pub(crate) fn reading(mut self, payload: &[u8]) -> Self {
        if let Some(view) = View::new(&self, payload) {
            self.verbatim = view.projection.verbatim();
        }
        self
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

    /// The length of the longest key after the common prefix, when no key has bytes after the projected positions
    /// (`None` otherwise). With it an excluded lower bound is used as excluded.
    #[must_use]
    pub const fn longest_key(&self) -> Option<usize> {
        match self.longest {
            LONGER_THAN_PROJECTED => None,
            k => Some(k as usize),
        }
    }

    /// `log2` of the runs' length: the largest power of two up to the universe (0 for an empty filter).
    #[must_use]
    pub const fn run_log2(&self) -> u32 {
        self.run_log2 as u32
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
                let codes = layout.bytes() as usize;
                codes
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

    /// The bound on the false-positive rate of a question about an empty range of `range_len` projected values, of
    /// any length: `min(1, n · ℓ / r)`.
    #[must_use]
    pub fn range_fpr(&self, num_keys: u64, range_len: u64) -> f64 {
        if self.universe == 0 {
            return 0.0;
        }
        (num_keys as f64 * range_len as f64 / self.universe as f64).min(1.0)
    }

    /// The trailer's parameter bytes: `range_log2`, `lower_bits`, the prefix length (u16), the position count, the
    /// longest key, 2 reserved zero bytes, the universe (u64).
    pub(crate) fn encode(&self) -> [u8; PARAMS_LEN] {
        let mut out = [0u8; PARAMS_LEN];
        out[0] = self.range_log2;
        out[1] = self.lower_bits() as u8; // NOTE: at most 63
        out[2..4].copy_from_slice(&self.prefix_len.to_le_bytes());
        out[4] = self.positions;
        out[5] = self.longest;
        out[8..].copy_from_slice(&self.universe.to_le_bytes());
        out
    }

    /// Decodes and validates the parameters of a block of `num_keys` codes whose payload is `payload_len` bytes:
    /// everything the queries rely on (the range length, a universe that holds the codes and a run, at most
    /// 2^32 − 1 codes, the longest key, the canonical low-bit count, and the payload length of that layout).
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
        let longest = r.u8().unwrap_or_default();
        let reserved = r.array::<2>().unwrap_or_default();
        let universe = r.u64().unwrap_or_default();
        check_reserved(FilterKind::Range, &reserved, 6)?;
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
            if longest != 0 {
                return Err(bad("longest_key", u64::from(longest)));
            }
        } else {
            if universe < num_keys || num_keys > elias_fano::MAX_LEN {
                return Err(bad("num_keys", num_keys));
            }
            if longest > positions && longest != LONGER_THAN_PROJECTED {
                return Err(bad("longest_key", u64::from(longest)));
            }
            if universe < 1u64 << range_log2 {
                return Err(bad("universe", universe));
            }
        }
        let longest = (longest != LONGER_THAN_PROJECTED).then_some(usize::from(longest));
        let params = RangeParams::new(
            u32::from(range_log2),
            universe,
            usize::from(prefix_len),
            usize::from(positions),
            longest,
            num_keys,
        )
        .ok_or(bad("universe", universe))?;
        if u32::from(lower_bits) != params.lower_bits() {
            return Err(bad("lower_bits", u64::from(lower_bits)));
        }
        // Compared in u64, where an impossible layout cannot wrap.
        let expected = match &params.layout {
            None => Some(0),
            Some(layout) => layout.bytes().checked_add(
                (BOUNDS_LEN + usize::from(positions) * POSITION_LEN + usize::from(prefix_len))
                    as u64,
            ),
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
        let m = params.positions();
        let (codes, rest) = payload.split_at_checked(usize::try_from(layout.bytes()).ok()?)?;
        let (bounds, rest) = rest.split_first_chunk::<BOUNDS_LEN>()?;
        let (tables, rest) = rest.split_at_checked(POSITION_LEN * m)?;
        let (min, max) = bounds.split_at(8);
        Some(View {
            params,
            layout,
            codes,
            min: u64::from_le_bytes(min.try_into().ok()?),
            max: u64::from_le_bytes(max.try_into().ok()?),
            projection: Projection {
                longest: params.longest_key(),
                tables,
                prefix: rest.get(..params.prefix_len())?,
                verbatim: params.verbatim,
            },
        })
    }

    /// Whether `ask` answers `true` for one of the intervals of codes a key's projection in `[lo, hi]` may have (up to
    /// four: two runs, each wrapping past `r − 1` at most once), asked in turn until one does; `true` without asking
    /// when the range covers a whole run (more than `r / 2` codes), `false` when it misses the keys' projections.
    /// The single question asks the sequence as it goes; the batch collects the intervals ([`codes_of`]) to start
    /// their lines on their way first.
    ///
    /// [`codes_of`]: Self::codes_of
    #[inline]
    fn any_code(&self, lo: u64, hi: u64, mut ask: impl FnMut(u64, u64) -> bool) -> bool {
        let (lo, hi) = (lo.max(self.min), hi.min(self.max));
        if lo > hi {
            return false;
        }
        let log2 = self.params.run_log2();
        let (first, last) = (lo >> log2, hi >> log2);
        let mask = low_mask(log2);
        match last - first {
            0 => self.any_in_run(first, lo & mask, hi & mask, &mut ask),
            1 => {
                self.any_in_run(first, lo & mask, mask, &mut ask)
                    || self.any_in_run(last, 0, hi & mask, &mut ask)
            }
            _ => true,
        }
    }

    /// [`any_code`](Self::any_code) for the codes of `run` at offsets `from ..= to` (below `2^t ≤ r`): one interval,
    /// or two if they pass `r − 1` and wrap to 0.
    #[inline(always)]
    fn any_in_run(
        &self,
        run: u64,
        from: u64,
        to: u64,
        ask: &mut impl FnMut(u64, u64) -> bool,
    ) -> bool {
        let universe = self.params.universe;
        let base = run_base(run, universe);
        let (start, end) = (wrap(base, from, universe), wrap(base, to, universe));
        if start <= end {
            ask(start, end)
        } else {
            ask(start, universe - 1) || ask(0, end)
        }
    }

    /// The codes a key's projection in `[lo, hi]` may have.
    fn codes_of(&self, lo: u64, hi: u64) -> Codes {
        let mut intervals = [(0, 0); 4];
        let mut len = 0;
        let whole_run = self.any_code(lo, hi, |start, end| {
            if let Some(slot) = intervals.get_mut(len) {
                *slot = (start, end);
                len += 1;
            }
            false
        });
        match (whole_run, len) {
            (true, _) => Codes::Known(true),
            (false, 0) => Codes::Known(false),
            (false, len) => Codes::Intervals(intervals, len),
        }
    }

    /// The codes, read in place.
    #[inline]
    fn sequence(&self) -> Sequence<'a> {
        Sequence::new(self.layout, self.codes)
    }

    /// The codes of the keys between `lower` and `upper`.
    fn codes_between(&self, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> Codes {
        match self.projection.bounds(lower, upper) {
            Some((lo, hi)) => self.codes_of(lo, hi),
            None => Codes::Known(false), // a bound lies beyond every key
        }
    }

    /// Whether a stored code may be one of the keys between `lower` and `upper`.
    fn holds_between(&self, lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> bool {
        match self.projection.bounds(lower, upper) {
            Some((lo, hi)) => {
                let sequence = self.sequence();
                self.any_code(lo, hi, |start, end| sequence.any_in(start, end))
            }
            None => false, // a bound lies beyond every key
        }
    }
}

/// The codes a question asks about: its answer when that is known without reading the codes, or up to four
/// intervals (two runs, each wrapping past `r − 1` at most once), of which the first `len` are used.
enum Codes {
    Known(bool),
    Intervals([(u64, u64); 4], usize),
}

impl Codes {
    /// Starts fetching the lines [`held`](Self::held) will read in `sequence`.
    #[inline]
    fn prefetch(&self, sequence: &Sequence<'_>) {
        if let Codes::Intervals(intervals, len) = self {
            for &(start, _) in intervals.iter().take(*len) {
                sequence.prefetch(start);
            }
        }
    }

    /// Whether `sequence` holds one of the codes.
    #[inline]
    fn held(&self, sequence: &Sequence<'_>) -> bool {
        match self {
            Codes::Known(answer) => *answer,
            Codes::Intervals(intervals, len) => intervals
                .iter()
                .take(*len)
                .any(|&(start, end)| sequence.any_in(start, end)),
        }
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
                let c = code(v, params.run_log2(), params.universe);
                view.sequence().any_in(c, c)
            }
        },
    }
}

/// Whether any key may lie between `lower` and `upper`. Bounds in the wrong order (an empty range) answer either
/// way: the caller tells them ([`is_empty`]) where the answer is not already "absent".
pub(crate) fn may_contain_range(
    params: &RangeParams,
    payload: &[u8],
    lower: Bound<&[u8]>,
    upper: Bound<&[u8]>,
) -> bool {
    match View::new(params, payload) {
        Some(view) => view.holds_between(lower, upper),
        // An empty filter holds nothing; an unreadable one may hold anything.
        None => params.layout.is_some(),
    }
}

/// A range of keys, as [`FilterBlock::may_contain_range_batch`](crate::FilterBlock::may_contain_range_batch) takes
/// them: the lower and the upper bound.
pub type KeyRange<'a> = (Bound<&'a [u8]>, Bound<&'a [u8]>);

/// Ranges whose codes a batch question finds, and whose lines it starts on their way, before it reads a range's
/// codes: each range's wait for its lines then overlaps the work on the next ones, which took about as long as the
/// wait. Reading further ahead gained nothing, and fetches ahead cost instructions where the codes are in the cache
/// anyway (BENCHMARKS.md, "Range filters").
const RANGE_LEAD: usize = 2;

/// Whether any key may lie in each of `ranges` (an empty range answers `false`), given to `answer` with the range's
/// index, in order.
pub(crate) fn may_contain_ranges(
    params: &RangeParams,
    payload: &[u8],
    ranges: &[KeyRange<'_>],
    mut answer: impl FnMut(usize, bool),
) {
    let Some(view) = View::new(params, payload) else {
        let held = params.layout.is_some();
        for (i, &(lower, upper)) in ranges.iter().enumerate() {
            answer(i, held && !is_empty(lower, upper));
        }
        return;
    };
    let sequence = view.sequence();
    // The codes of the range being answered and of those ahead of it, by index modulo their number.
    let mut ahead: [Codes; RANGE_LEAD + 1] = core::array::from_fn(|_| Codes::Known(false));
    let slot = |i: usize| i % (RANGE_LEAD + 1);
    for i in 0..ranges.len() + RANGE_LEAD {
        if let (Some(&(lower, upper)), Some(codes)) = (ranges.get(i), ahead.get_mut(slot(i))) {
            *codes = view.codes_between(lower, upper);
            codes.prefetch(&sequence);
        }
        // Emptiness last, as for a single question: only where the codes may hold a key.
        if let Some(at) = i.checked_sub(RANGE_LEAD)
            && let (Some(&(lower, upper)), Some(codes)) = (ranges.get(at), ahead.get(slot(at)))
        {
            answer(at, codes.held(&sequence) && !is_empty(lower, upper));
        }
    }
}

/// The projection a builder chose: the alphabets and weights of its positions (`projection::choose`), and the
/// length of its longest key after the prefix.
pub(crate) struct Chosen<'a> {
    pub(crate) prefix: &'a [u8],
    pub(crate) longest: usize,
    pub(crate) alphabets: &'a [[u64; 4]],
    pub(crate) weights: &'a [u64],
}

/// Builds the payload for keys projected by `chosen` (a prefix of at most `u16::MAX` bytes) to `values`
/// (non-decreasing), sized for ranges of `2^range_log2` (at most [`MAX_RANGE_LOG2`]) in a universe of `universe`
/// codes (at least `2^range_log2` and at least the number of distinct values, which is at most `2^32 − 1`),
/// appending it to `out`. `values` becomes the codes, sorted, and `scratch` (as long as `values`, or the sort
/// allocates none and compares) is the sort's second buffer. Returns the parameters and the number of distinct
/// codes stored (the block's key count).
pub(crate) fn build(
    chosen: &Chosen<'_>,
    values: &mut [u64],
    scratch: &mut [u64],
    range_log2: u32,
    universe: u64,
    out: &mut Vec<u8>,
) -> (RangeParams, u64) {
    let (Some(&first), Some(&last)) = (values.first(), values.last()) else {
        let empty = RangeParams::new(range_log2.min(MAX_RANGE_LOG2), 0, 0, 0, Some(0), 0);
        #[expect(
            clippy::expect_used,
            reason = "an empty filter's parameters are valid for any clamped range_log2"
        )]
        return (empty.expect("valid empty parameters"), 0);
    };
    let start = out.len();
    let run_log2 = run_log2(universe);
    radix::code_and_sort(values, scratch, universe, |v| code(v, run_log2, universe));
    // Keys that differ past the projected bytes share a value, and values may share a code: one code each.
    let distinct = dedup(values);
    let codes = values.get(..distinct).unwrap_or_default();
    let n = codes.len() as u64;
    let positions = chosen.weights.len();
    #[expect(
        clippy::expect_used,
        reason = "cannot fail under the documented preconditions (1 ≤ n ≤ distinct values ≤ universe, \
                  n ≤ 2^32 − 1, 2^range_log2 ≤ universe, a short prefix, at most MAX_POSITIONS positions), \
                  which the one caller, the builder, establishes; writing an empty filter instead would lose \
                  every key"
    )]
    let params = RangeParams::new(
        range_log2,
        universe,
        chosen.prefix.len(),
        positions,
        (chosen.longest <= positions).then_some(chosen.longest),
        n,
    )
    .expect("the builder sizes a valid universe");
    if let Some(layout) = &params.layout {
        elias_fano::encode(codes, layout, out);
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
    let payload = out.get(start..).unwrap_or_default();
    (params.reading(payload), n)
}

/// Moves the distinct values of the sorted `values` to its front, in order, and returns how many there are.
fn dedup(values: &mut [u64]) -> usize {
    let mut len = 0;
    for i in 0..values.len() {
        if let Some(&v) = values.get(i)
            && (len == 0 || values.get(len - 1) != Some(&v))
        {
            if let Some(slot) = values.get_mut(len) {
                *slot = v;
            }
            len += 1;
        }
    }
    len
}

/// Whether no byte string lies between `lower` and `upper` for certain (lower above upper, or equal with one of
/// them excluded). Other empty ranges (`(a, a\0)`, both excluded) are not detected: the filter answers them.
pub(crate) fn is_empty(lower: Bound<&[u8]>, upper: Bound<&[u8]>) -> bool {
    match (lower, upper) {
        (Bound::Included(a), Bound::Included(b)) => compare(a, b).is_gt(),
        (Bound::Included(a) | Bound::Excluded(a), Bound::Included(b) | Bound::Excluded(b)) => {
            compare(a, b).is_ge()
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
