//! What a caller can do wrong with LevelDB's filters: a setting a policy refuses, or a filter block built out of
//! order or past what its format addresses. Bytes never cause these: the readers answer "may match" instead.

use core::fmt;

/// A setting or call refused where it is made, rather than built into a filter that would break a promise.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum LevelDbUsageError {
    /// Bits per key outside what the policy accepts.
    BitsPerKey {
        /// The policy that refused it.
        policy: &'static str,
        /// The fewest bits per key it accepts.
        min: f64,
        /// The most bits per key it accepts.
        max: f64,
        /// The value that was given.
        found: f64,
    },
    /// A filter block builder was asked to start a data block in an earlier 2 KiB range than one it already
    /// started: its keys would go into a later filter than the one readers consult for it.
    BlockOffsetOutOfOrder {
        /// Offset of the data block started last: the smallest allowed.
        expected: u64,
        /// The offset that was given.
        found: u64,
    },
    /// A filter block outgrew the 4 GiB its 32-bit offsets address.
    TooLarge {
        /// The largest size the format can address.
        expected: u64,
        /// The size that would have been needed.
        found: u64,
    },
}

impl fmt::Display for LevelDbUsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BitsPerKey {
                policy,
                min,
                max,
                found,
            } => write!(
                f,
                "{policy} bits_per_key must be a number from {min} to {max}, got {found}"
            ),
            Self::BlockOffsetOutOfOrder { expected, found } => write!(
                f,
                "data block offset {found} goes back past the filter of the block at offset {expected}"
            ),
            Self::TooLarge { expected, found } => write!(
                f,
                "LevelDB filter block too large: {found} exceeds {expected}"
            ),
        }
    }
}

impl std::error::Error for LevelDbUsageError {}

/// The value of a panicking constructor whose `try_` twin returned `value`: a refused configuration is a
/// programming error (as documented on every such constructor), reported with the error's message at the caller.
#[track_caller]
pub(crate) fn configured<T>(value: Result<T, LevelDbUsageError>) -> T {
    #[expect(
        clippy::panic,
        reason = "documented: a bad configuration constant is a programming error"
    )]
    match value {
        Ok(value) => value,
        Err(error) => panic!("{error}"),
    }
}
