//! Typed errors: for bytes that cannot be used, and for settings and calls the crate refuses.
//!
//! Every variant that describes a corrupt or unreadable block carries the evidence (what was expected and what
//! was found), so a caller can tell a truncated file from a flipped bit from a block written by a newer version.
//! The storage layer is expected to treat any `Err` from [`FilterBlock::open`](crate::FilterBlock::open) as "the
//! key may be present" and count it: a filter may cost a wasted read, it must never hide a key.
//!
//! Two types for two audiences. [`Error`] is what bytes can be wrong about (corrupt, truncated, foreign or newer
//! blocks): a store maps every one of them to "may contain" and counts it. [`UsageError`] is what a caller can do
//! wrong (a setting out of range, keys out of order, bits given with parameters they were not set for): it goes
//! back to whoever configured or called, and never comes from stored bytes.

use core::fmt;

use crate::tag::FilterKind;

/// Why bytes could not be used as a filter block (opened, verified, or loaded as an in-memory filter): a store
/// treats the filter as "may contain" and counts it.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Error {
    /// The block is shorter than the fixed trailer, so it cannot be a filter block at all.
    TooShort {
        /// Minimum number of bytes a block needs.
        expected: usize,
        /// Number of bytes that were given.
        found: usize,
    },
    /// The trailer does not start with the magic bytes: not a filter block, or truncated or shifted.
    BadMagic {
        /// The four bytes found where the magic was expected.
        found: [u8; 4],
    },
    /// The block was written with a format version this reader does not know (newer, or the reserved 0).
    UnsupportedVersion {
        /// The newest version this reader understands (it reads `1..=expected`).
        expected: u8,
        /// The version stored in the block.
        found: u8,
    },
    /// The kind tag is reserved or belongs to a kind this reader does not know.
    UnknownKind(u8),
    /// A trailer field or kind parameter has a value the format does not allow.
    BadParams {
        /// The filter kind whose parameters are invalid (`None` for kind-independent fields).
        kind: Option<FilterKind>,
        /// Which field is invalid.
        field: &'static str,
        /// The value found in the block.
        found: u64,
    },
    /// The payload length does not match what the kind parameters require.
    LengthMismatch {
        /// The filter kind whose payload is inconsistent.
        kind: FilterKind,
        /// Payload length implied by the parameters (or the constraint it must satisfy).
        expected: u64,
        /// Payload length found in the block.
        found: u64,
    },
    /// The CRC32 stored in the trailer does not match the block's bytes.
    ChecksumMismatch {
        /// The checksum stored in the block.
        expected: u32,
        /// The checksum computed over the block.
        found: u32,
    },
    /// A valid block holds a different filter kind than the one asked for (for example the `sstfilter-memory`
    /// crate's `BloomFilter::from_block` given a BlockedBloom block).
    WrongKind {
        /// The kind the caller asked for.
        expected: FilterKind,
        /// The kind stored in the block.
        found: FilterKind,
    },
    /// The block is a partition index (FORMAT.md, section 8), not a filter block: open it with
    /// [`PartitionedFilter`](crate::PartitionedFilter).
    PartitionIndex,
    /// The block is a filter block of this kind, not the partition index that was expected.
    NotPartitionIndex(FilterKind),
    /// A partition index's payload is not as long as its partition count and separator bytes require.
    IndexLength {
        /// `separator bytes + 32 · partitions` (saturated at `u64::MAX`).
        expected: u64,
        /// Payload length found in the block.
        found: u64,
    },
    /// The store could not read the block's bytes (an I/O error, or a checksum of its own around the block
    /// failed): the filter answers "may contain".
    Unreadable,
    /// A loaded partition is not the one the index names: its stored checksum or key count differs from the
    /// index entry (a partition from another table, swapped, or stale).
    PartitionMismatch {
        /// The partition's position in the index.
        partition: u64,
    },
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::TooShort { expected, found } => {
                write!(
                    f,
                    "filter block too short: need at least {expected} bytes, got {found}"
                )
            }
            Error::BadMagic { found } => {
                write!(f, "not a filter block: bad magic {found:02x?}")
            }
            Error::UnsupportedVersion { found, expected } => write!(
                f,
                "unsupported filter block format version {found} (this reader supports 1..={expected})"
            ),
            Error::UnknownKind(tag) => write!(f, "unknown filter kind tag {tag}"),
            Error::BadParams { kind, field, found } => match kind {
                Some(kind) => write!(f, "invalid {kind} parameter {field} = {found}"),
                None => write!(f, "invalid filter block field {field} = {found}"),
            },
            Error::LengthMismatch {
                kind,
                expected,
                found,
            } => write!(
                f,
                "{kind} payload length mismatch: expected {expected} bytes, found {found}"
            ),
            Error::ChecksumMismatch { expected, found } => write!(
                f,
                "filter block checksum mismatch: stored {expected:#010x}, computed {found:#010x}"
            ),
            Error::WrongKind { expected, found } => {
                write!(f, "expected a {expected} filter block, found {found}")
            }
            Error::PartitionIndex => f.write_str(
                "a partition index, not a filter block (open it with PartitionedFilter)",
            ),
            Error::NotPartitionIndex(kind) => {
                write!(f, "a {kind} filter block, not a partition index")
            }
            Error::IndexLength { expected, found } => write!(
                f,
                "partition index payload is {found} bytes, its parameters require {expected}"
            ),
            Error::Unreadable => f.write_str("the store could not read the filter block"),
            Error::PartitionMismatch { partition } => write!(
                f,
                "partition {partition} is not the one its index names (checksum or key count differs)"
            ),
        }
    }
}

impl std::error::Error for Error {}

/// Result type of this crate.
pub type Result<T, E = Error> = core::result::Result<T, E>;

/// What a caller did wrong: a setting the crate cannot honour, refused where it is made (a constructor's `try_`
/// form, a builder) rather than clamped into a promise the filter would then break.
///
/// Never caused by bytes read from storage (those are [`Error`]s, which a store maps to "may contain"): a
/// `UsageError` goes back to whoever configured the store.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum UsageError {
    /// A setting outside the range the crate accepts.
    InvalidSetting {
        /// Which setting (`"bits_per_key"`, `"fpr"`, `"prefix extractor name"`, ...), prefixed by its owner.
        setting: &'static str,
        /// What is allowed.
        expected: String,
        /// The value that was given.
        found: String,
    },
    /// A builder was given more distinct keys than its configuration can keep its promise for (a Range filter's
    /// universe `n · L / ε` must fit in 64 bits).
    TooManyKeys {
        /// The most keys the configuration allows.
        expected: u64,
        /// The keys that were given.
        found: u64,
    },
    /// A builder that needs sorted keys (partitioned or range filters) was given a key that sorts before the
    /// previous one: its partitions would not cover the key ranges their index says, or its common prefix and
    /// projections would not hold for every key. The key was not added.
    KeysOutOfOrder,
    /// Output outgrew what its format can address (a partition index's 32-bit separator ends).
    TooLarge {
        /// What outgrew its format.
        what: &'static str,
        /// The largest size the format can address.
        expected: u64,
        /// The size that would have been needed.
        found: u64,
    },
    /// A partitioned filter's index was given a different number of partition handles than it has partitions.
    PartitionCount {
        /// Partitions built.
        expected: u64,
        /// Handles given.
        found: u64,
    },
    /// A table filter was opened with a valid block in the wrong place: a Range block where the point filter goes,
    /// or a point filter where the Range block goes (the store swapped or mixed up where it put them).
    WrongBlock {
        /// The block that place takes.
        expected: &'static str,
        /// The kind of the block given.
        found: FilterKind,
    },
    /// Bits kept for one set of parameters were given with another, so they do not mean the same keys: two
    /// in-memory filters combined (union, intersection estimate) whose size or probe count differs, or words
    /// framed as a block ([`StandardBloomParams::write_block`](crate::StandardBloomParams::write_block)) that are
    /// not the parameters' number of words.
    ParamsMismatch {
        /// Which parameter differs.
        field: &'static str,
        /// Its value in the filter the method was called on, or the one the parameters call for.
        expected: u64,
        /// Its value in the other filter, or in the bits given.
        found: u64,
    },
}

impl UsageError {
    /// An [`InvalidSetting`](Self::InvalidSetting) error.
    pub(crate) fn setting(
        setting: &'static str,
        expected: impl Into<String>,
        found: impl fmt::Display,
    ) -> Self {
        UsageError::InvalidSetting {
            setting,
            expected: expected.into(),
            found: found.to_string(),
        }
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            UsageError::InvalidSetting {
                setting,
                expected,
                found,
            } => write!(f, "{setting} must be {expected}, got {found}"),
            UsageError::TooManyKeys { expected, found } => write!(
                f,
                "{found} keys is more than the configuration can keep its promise for (at most {expected})"
            ),
            UsageError::KeysOutOfOrder => {
                f.write_str("keys out of order (a sorted builder got a key below the previous one)")
            }
            UsageError::TooLarge {
                what,
                expected,
                found,
            } => write!(f, "{what} too large: {found} exceeds {expected}"),
            UsageError::WrongBlock { expected, found } => {
                write!(f, "a {found} block where {expected} goes")
            }
            UsageError::PartitionCount { expected, found } => write!(
                f,
                "partitioned filter has {expected} partitions, given {found} handles"
            ),
            UsageError::ParamsMismatch {
                field,
                expected,
                found,
            } => write!(
                f,
                "bits and parameters do not match: {field} differs ({expected} vs {found})"
            ),
        }
    }
}

impl std::error::Error for UsageError {}

/// `fpr` if it is a rate a filter can promise: strictly between 0 and 1.
pub(crate) fn check_fpr(setting: &'static str, fpr: f64) -> Result<f64, UsageError> {
    if fpr > 0.0 && fpr < 1.0 {
        Ok(fpr)
    } else {
        Err(UsageError::setting(
            setting,
            "strictly between 0 and 1",
            fpr,
        ))
    }
}
