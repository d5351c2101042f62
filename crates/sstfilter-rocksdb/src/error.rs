//! What a caller can do wrong with RocksDB's filter builders: a setting RocksDB would change without a word. Bytes
//! never cause these: the readers answer "may match", and a table's reader gives a `RocksDbTableError`.

use core::fmt;

/// A setting refused where it is made, rather than changed into another filter than the one asked for.
#[derive(Debug, Clone, PartialEq)]
#[non_exhaustive]
pub enum RocksDbUsageError {
    /// Bits per key outside `1.0..100.0`: RocksDB would build no filter below 0.5, a 1-bit one below 1, and a
    /// 100-bit one above 100.
    BitsPerKey {
        /// The builder that refused it.
        builder: &'static str,
        /// The value that was given.
        found: f64,
    },
}

impl fmt::Display for RocksDbUsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::BitsPerKey { builder, found } => write!(
                f,
                "{builder} bits_per_key must be in 1.0..100.0, got {found}"
            ),
        }
    }
}

impl std::error::Error for RocksDbUsageError {}

/// The value of a panicking constructor whose `try_` twin returned `value`: a refused configuration is a
/// programming error (as documented on every such constructor), reported with the error's message at the caller.
#[track_caller]
pub(crate) fn configured<T>(value: Result<T, RocksDbUsageError>) -> T {
    #[expect(
        clippy::panic,
        reason = "documented: a bad configuration constant is a programming error"
    )]
    match value {
        Ok(value) => value,
        Err(error) => panic!("{error}"),
    }
}
