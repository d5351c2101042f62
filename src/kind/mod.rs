//! Filter kinds: each is a pair of pure functions over bytes, `build(hashes) -> payload` and
//! `probe(payload, hash) -> bool`, plus the parameters stored in the trailer.
//!
//! Kinds know nothing of the container (trailer, checksum) or of policies: they are given the payload alone, and
//! the parameters a policy chose. The reader dispatches to them on the kind tag stored in the block.

/// Calls `$f::<K>($args…)` with the probe count `$k` turned into a compile-time constant, so each probe loop is
/// fully unrolled. A count outside `1..=MAX_PROBES` (impossible after validation) evaluates `$otherwise`, which
/// must answer "may contain".
macro_rules! dispatch_probes {
    ($k:expr, otherwise $otherwise:expr, $f:ident, $($arg:expr),* $(,)?) => {
        match $k {
            1 => $f::<1>($($arg),*),
            2 => $f::<2>($($arg),*),
            3 => $f::<3>($($arg),*),
            4 => $f::<4>($($arg),*),
            5 => $f::<5>($($arg),*),
            6 => $f::<6>($($arg),*),
            7 => $f::<7>($($arg),*),
            8 => $f::<8>($($arg),*),
            9 => $f::<9>($($arg),*),
            10 => $f::<10>($($arg),*),
            11 => $f::<11>($($arg),*),
            12 => $f::<12>($($arg),*),
            13 => $f::<13>($($arg),*),
            14 => $f::<14>($($arg),*),
            15 => $f::<15>($($arg),*),
            16 => $f::<16>($($arg),*),
            17 => $f::<17>($($arg),*),
            18 => $f::<18>($($arg),*),
            19 => $f::<19>($($arg),*),
            20 => $f::<20>($($arg),*),
            21 => $f::<21>($($arg),*),
            22 => $f::<22>($($arg),*),
            23 => $f::<23>($($arg),*),
            24 => $f::<24>($($arg),*),
            _ => $otherwise,
        }
    };
}

/// The pair of monomorphised queries `($single::<K>, $batch::<K>)` for the probe count `$k`, chosen once when a
/// block is opened (see [`Queries`]); a count outside `1..=MAX_PROBES` (impossible after validation) gives
/// `$otherwise`, which must answer "may contain".
macro_rules! select_probes {
    ($k:expr, otherwise $otherwise:expr, $single:ident, $batch:ident) => {
        match $k {
            1 => ($single::<1> as Query, $batch::<1> as BatchQuery),
            2 => ($single::<2>, $batch::<2>),
            3 => ($single::<3>, $batch::<3>),
            4 => ($single::<4>, $batch::<4>),
            5 => ($single::<5>, $batch::<5>),
            6 => ($single::<6>, $batch::<6>),
            7 => ($single::<7>, $batch::<7>),
            8 => ($single::<8>, $batch::<8>),
            9 => ($single::<9>, $batch::<9>),
            10 => ($single::<10>, $batch::<10>),
            11 => ($single::<11>, $batch::<11>),
            12 => ($single::<12>, $batch::<12>),
            13 => ($single::<13>, $batch::<13>),
            14 => ($single::<14>, $batch::<14>),
            15 => ($single::<15>, $batch::<15>),
            16 => ($single::<16>, $batch::<16>),
            17 => ($single::<17>, $batch::<17>),
            18 => ($single::<18>, $batch::<18>),
            19 => ($single::<19>, $batch::<19>),
            20 => ($single::<20>, $batch::<20>),
            21 => ($single::<21>, $batch::<21>),
            22 => ($single::<22>, $batch::<22>),
            23 => ($single::<23>, $batch::<23>),
            24 => ($single::<24>, $batch::<24>),
            _ => $otherwise,
        }
    };
}

/// Keys hashed per step of the batched queries: enough to keep many cache misses in flight, few enough to live on
/// the stack.
pub(crate) const BATCH: usize = 32;

pub(crate) mod blocked_bloom;
pub(crate) mod range;
pub(crate) mod ribbon;
pub(crate) mod standard_bloom;

/// A membership query compiled for one kind and one probe (or column) count: `query(params, payload, h)` for the
/// parameters it was chosen for. [`KindParams::queries`] picks it once, when a block is opened, so that each
/// query runs a small function with its loop unrolled instead of two dispatches on the kind and the count.
pub(crate) type Query = fn(&KindParams, &[u8], u64) -> bool;

/// The batched form of [`Query`]: answers for every hash of `hashes` into the matching slot of `out` (up to the
/// shorter of the two). Its callers have passed every hash to the kind's [`Prefetch`] first.
pub(crate) type BatchQuery = fn(&KindParams, &[u8], &[u64], &mut [bool]);

/// Starts fetching the cache lines a [`Query`] for `h` will read, without waiting for them. The batched paths call
/// it for each key of a group as soon as the key is hashed, then answer the group with the [`BatchQuery`]: the
/// fetches of all the keys overlap each other and the hashing of the next ones (a separate prefetch pass after
/// hashing the group was twice as slow: BENCHMARKS.md 4b). A kind for which finding a key's lines is most of its
/// query (Ribbon: shard, seed, equation) fetches in its [`BatchQuery`] instead, where it keeps what it found.
pub(crate) type Prefetch = fn(&KindParams, &[u8], u64);

/// A membership query by key, for a kind that stores keys rather than their hashes (Range): `query(params,
/// payload, key)`. See [`KindParams::by_key`].
pub(crate) type KeyQuery = fn(&KindParams, &[u8], &[u8]) -> bool;

/// The queries of one kind with one probe (or column) count, chosen once when a block is opened.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Queries {
    /// One key.
    pub(crate) single: Query,
    /// Started for each key of a batch, before [`batch`](Self::batch).
    pub(crate) prefetch: Prefetch,
    /// A batch of keys, each passed to [`prefetch`](Self::prefetch) first.
    pub(crate) batch: BatchQuery,
}

/// A [`Prefetch`] for queries that read nothing worth fetching early, or that fetch in their batch query.
pub(crate) const PREFETCH_NOTHING: Prefetch = |_, _, _| {};

/// The queries that answer "may contain" for everything (parameters that cannot be probed).
pub(crate) const MAY_CONTAIN_ALL: Queries = Queries {
    single: |_, _, _| true,
    prefetch: PREFETCH_NOTHING,
    batch: |_, _, _, out: &mut [bool]| out.fill(true),
};

/// The queries of a filter built from no keys: "absent" for everything.
pub(crate) const CONTAINS_NOTHING: Queries = Queries {
    single: |_, _, _| false,
    prefetch: PREFETCH_NOTHING,
    batch: |_, _, _, out: &mut [bool]| out.fill(false),
};

use crate::error::Result;
use crate::format::PARAMS_LEN;
use crate::tag::FilterKind;
use blocked_bloom::BlockedBloomParams;
use range::RangeParams;
use ribbon::RibbonParams;
use standard_bloom::StandardBloomParams;

/// The golden blocks of `tests/golden/` whose file name satisfies `wanted`, as `(name, bytes)`: the kinds' tests
/// rebuild them from their own parameters.
#[cfg(test)]
pub(crate) fn golden_blocks(wanted: impl Fn(&str) -> bool) -> Vec<(String, Vec<u8>)> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/golden");
    let mut blocks = Vec::new();
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        if !wanted(&name) {
            continue;
        }
        let text = std::fs::read_to_string(&path).unwrap();
        let digits: Vec<u8> = text.bytes().filter(|b| !b.is_ascii_whitespace()).collect();
        let bytes = digits
            .chunks(2)
            .map(|pair| u8::from_str_radix(std::str::from_utf8(pair).unwrap(), 16).unwrap())
            .collect();
        blocks.push((name, bytes));
    }
    blocks
}

/// Checks that a kind's reserved parameter bytes, which start at parameter offset `first`, are all zero (FORMAT.md:
/// "Unused bytes must be 0"), naming the first non-zero one by its offset.
pub(crate) fn check_reserved(kind: FilterKind, reserved: &[u8], first: usize) -> Result<()> {
    match reserved.iter().position(|&b| b != 0) {
        None => Ok(()),
        Some(pos) => Err(crate::Error::BadParams {
            kind: Some(kind),
            field: "reserved parameter byte",
            found: (first + pos) as u64,
        }),
    }
}

// `dispatch_probes!` enumerates exactly the probe counts the format allows.
const _: () = assert!(BlockedBloomParams::MAX_PROBES == 24);

/// The parameters of a built filter, as stored in (and decoded from) a block's trailer.
#[derive(Debug, Clone, Copy, PartialEq)]
#[non_exhaustive]
pub enum KindParams {
    /// A [`FilterKind::BlockedBloom`] filter.
    BlockedBloom(BlockedBloomParams),
    /// A [`FilterKind::Ribbon`] filter.
    Ribbon(RibbonParams),
    /// A [`FilterKind::StandardBloom`] filter.
    StandardBloom(StandardBloomParams),
    /// A [`FilterKind::Range`] filter.
    Range(RangeParams),
}

/// What the parameters say, in words (the CLI's `inspect` prints it).
impl std::fmt::Display for KindParams {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            KindParams::BlockedBloom(p) => write!(
                f,
                "{} blocks of 64 bytes, {} probes per key",
                p.num_blocks(),
                p.num_probes()
            ),
            KindParams::Ribbon(p) => write!(
                f,
                "{} shards, {} blocks of 64 slots with {} result bits per slot ({} bits from block {})",
                p.num_shards(),
                p.num_blocks(),
                p.lower_columns(),
                p.lower_columns() + 1,
                p.upper_start_block()
            ),
            KindParams::StandardBloom(p) => {
                write!(
                    f,
                    "{} bits, {} probes per key",
                    p.num_bits(),
                    p.num_probes()
                )
            }
            KindParams::Range(p) => {
                write!(
                    f,
                    "range filter sized for ranges of 2^{} projected values: universe {} (runs of 2^{}), {} low \
                     bits per code, {} projected positions after a {}-byte common prefix, ",
                    p.range_log2(),
                    p.universe(),
                    p.run_log2(),
                    p.lower_bits(),
                    p.positions(),
                    p.prefix_len(),
                )?;
                match p.longest_key() {
                    Some(k) => write!(f, "keys at most {k} bytes after it"),
                    None => f.write_str("keys longer than the projected positions"),
                }
            }
        }
    }
}

impl KindParams {
    /// The kind these parameters belong to.
    #[must_use]
    pub const fn kind(&self) -> FilterKind {
        match self {
            KindParams::BlockedBloom(_) => FilterKind::BlockedBloom,
            KindParams::Ribbon(_) => FilterKind::Ribbon,
            KindParams::StandardBloom(_) => FilterKind::StandardBloom,
            KindParams::Range(_) => FilterKind::Range,
        }
    }

    /// The theoretical false-positive rate of this filter holding `num_keys` keys.
    #[must_use]
    pub(crate) fn expected_fpr(&self, num_keys: u64) -> f64 {
        match self {
            KindParams::BlockedBloom(p) => p.expected_fpr(num_keys),
            KindParams::Ribbon(p) => p.expected_fpr(),
            KindParams::StandardBloom(p) => p.expected_fpr(num_keys),
            KindParams::Range(p) => p.expected_fpr(num_keys),
        }
    }

    /// The single and batched queries for these parameters (see [`Query`]).
    /// The query by key of a kind that stores keys, not hashes (`None` for the hash kinds, which are asked by
    /// hash). Such a kind answers every question by hash "may contain" ([`queries`](Self::queries)) and holds no
    /// prefix hashes.
    pub(crate) fn by_key(&self) -> Option<KeyQuery> {
        match self {
            KindParams::Range(_) => Some(|params, payload, key| match params {
                KindParams::Range(p) => range::may_contain_key(p, payload, key),
                _ => true,
            }),
            KindParams::BlockedBloom(_) | KindParams::Ribbon(_) | KindParams::StandardBloom(_) => {
                None
            }
        }
    }

    pub(crate) fn queries(&self) -> Queries {
        match self {
            KindParams::BlockedBloom(p) => blocked_bloom::queries(p),
            KindParams::Ribbon(p) => ribbon::queries(p),
            KindParams::StandardBloom(_) => standard_bloom::QUERIES,
            // A Range filter stores no key hashes: a question by hash cannot be answered (the reader asks it by key).
            KindParams::Range(_) => MAY_CONTAIN_ALL,
        }
    }

    /// Whether a key with hash `h` may be in `payload`, which these parameters were decoded against: the query a
    /// reader runs, chosen here each time (readers choose it once), for the kinds' own tests.
    #[cfg(test)]
    pub(crate) fn may_contain(&self, payload: &[u8], h: u64) -> bool {
        (self.queries().single)(self, payload, h)
    }

    /// The trailer's parameter bytes.
    pub(crate) fn encode(&self) -> [u8; PARAMS_LEN] {
        match self {
            KindParams::BlockedBloom(p) => p.encode(),
            KindParams::Ribbon(p) => p.encode(),
            KindParams::StandardBloom(p) => p.encode(),
            KindParams::Range(p) => p.encode(),
        }
    }

    /// Decodes and validates the parameters of `kind` against the payload's length and the key count (a Range
    /// filter also notes what its payload tells queries: [`RangeParams::reading`]).
    pub(crate) fn decode(
        kind: FilterKind,
        params: &[u8; PARAMS_LEN],
        payload: &[u8],
        num_keys: u64,
    ) -> Result<Self> {
        let payload_len = payload.len();
        match kind {
            FilterKind::BlockedBloom => BlockedBloomParams::decode(params, payload_len, num_keys)
                .map(KindParams::BlockedBloom),
            FilterKind::Ribbon => {
                RibbonParams::decode(params, payload_len, num_keys).map(KindParams::Ribbon)
            }
            FilterKind::StandardBloom => {
                StandardBloomParams::decode(params, payload_len).map(KindParams::StandardBloom)
            }
            FilterKind::Range => RangeParams::decode(params, payload_len, num_keys)
                .map(|p| KindParams::Range(p.reading(payload))),
        }
    }
}
