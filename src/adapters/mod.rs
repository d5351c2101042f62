//! Adapters that plug this crate's filter policies into real storage engines (each behind its cargo feature).
//!
//! * `slatedb` feature: [`slatedb::SlateDbFilterPolicy`], any of our [`FilterPolicy`](crate::FilterPolicy)s as a
//!   `slatedb::FilterPolicy` (per-SST filters, point and prefix targets).
//! * `rusty-leveldb` feature: [`rusty_leveldb::RustyLevelDbFilterPolicy`], any of our policies as a
//!   `rusty_leveldb::FilterPolicy` (LevelDB's per-2 KiB filters), and [`LevelDbBloomPolicy`] as a drop-in
//!   replacement for rusty-leveldb's own `BloomPolicy` (identical bytes).
//!
//! Both store this crate's self-describing blocks, so the name they register with the store does not depend on
//! the kind or the bits per key: the bytes say how to read them, and a block from another kind or a newer
//! version is read, or answers "may match", without any configuration change. A block that does not open and
//! verify answers "may match" and is counted ([`DecodeErrors`]): a filter may cost a read, never hide a key.
//!
//! [`LevelDbBloomPolicy`]: crate::leveldb::LevelDbBloomPolicy

#[cfg(feature = "rusty-leveldb")]
pub mod rusty_leveldb;
#[cfg(feature = "slatedb")]
pub mod slatedb;

use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

/// The name under which the adapters register this crate's blocks with a store. It names the container, not a
/// kind or a format version: every reader reads every kind and version it knows from the bytes themselves.
pub const BLOCK_POLICY_NAME: &str = "sstfilter";

/// Counts filter blocks that failed to open or verify and were replaced by "may match" answers. Cheap to clone;
/// clones share the count.
#[derive(Debug, Clone, Default)]
pub struct DecodeErrors(Arc<AtomicU64>);

impl DecodeErrors {
    /// How many blocks failed to decode so far.
    #[must_use]
    pub fn count(&self) -> u64 {
        self.0.load(Ordering::Relaxed)
    }

    /// Records one failure.
    fn record(&self) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
}
