//! The partition index's payload (FORMAT.md, section 8): the separators, concatenated, then one 32-byte entry per
//! partition. This module is the one place that lays it out and reads it back.
//!
//! ```text
//!  payload:  | separator 0 | separator 1 | ... | entry 0 | entry 1 | ... |
//!            |<------------ S bytes ---------->|<----- 32 · n bytes ---->|
//!
//!  entry:    0          8          16         24         28         32
//!            +----------+----------+----------+----------+----------+
//!            |  offset  |   len    | num_keys | checksum | sep_end  |
//!            |   u64    |   u64    |   u64    |   u32    |   u32    |
//!            +----------+----------+----------+----------+----------+
//! ```

use crate::error::{Error, Result};
use crate::format::{PARAMS_LEN, TRAILER_LEN};
use crate::le::LeReader;

use super::Partition;

/// Bytes of one index entry.
pub(crate) const ENTRY_LEN: usize = 32;

/// Where `sep_end` lies in an entry.
const SEP_END_AT: usize = 28;

/// What the index records of one partition besides its separator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Entry {
    pub(crate) offset: u64,
    pub(crate) len: u64,
    pub(crate) num_keys: u64,
    pub(crate) checksum: u32,
    /// Where the partition's separator ends in the separator bytes (it starts where the previous one ends).
    pub(crate) sep_end: u32,
}

impl Entry {
    /// Appends the 32-byte encoding.
    pub(crate) fn encode_into(&self, out: &mut Vec<u8>) {
        out.extend_from_slice(&self.offset.to_le_bytes());
        out.extend_from_slice(&self.len.to_le_bytes());
        out.extend_from_slice(&self.num_keys.to_le_bytes());
        out.extend_from_slice(&self.checksum.to_le_bytes());
        out.extend_from_slice(&self.sep_end.to_le_bytes());
    }

    /// Decodes an entry from exactly [`ENTRY_LEN`] bytes.
    pub(crate) fn decode(bytes: &[u8; ENTRY_LEN]) -> Self {
        let mut r = LeReader::new(bytes);
        // The array is exactly ENTRY_LEN bytes long: every read below succeeds.
        Entry {
            offset: r.u64().unwrap_or_default(),
            len: r.u64().unwrap_or_default(),
            num_keys: r.u64().unwrap_or_default(),
            checksum: r.u32().unwrap_or_default(),
            sep_end: r.u32().unwrap_or_default(),
        }
    }

    /// The public view of the entry at `position`.
    pub(crate) fn partition(&self, position: usize) -> Partition {
        Partition {
            position,
            offset: self.offset,
            len: self.len,
            num_keys: self.num_keys,
            checksum: self.checksum,
        }
    }
}

/// The index's trailer parameters: the partition count and the separator bytes, both u64.
pub(crate) fn encode_params(partitions: u64, separator_bytes: u64) -> [u8; PARAMS_LEN] {
    let mut params = [0u8; PARAMS_LEN];
    let (count, bytes) = params.split_at_mut(8);
    count.copy_from_slice(&partitions.to_le_bytes());
    bytes.copy_from_slice(&separator_bytes.to_le_bytes());
    params
}

/// Decodes the trailer parameters; `None` never happens for a `PARAMS_LEN` array.
pub(crate) fn decode_params(params: &[u8; PARAMS_LEN]) -> (u64, u64) {
    let mut r = LeReader::new(params);
    (r.u64().unwrap_or_default(), r.u64().unwrap_or_default())
}

/// An index whose layout has been checked: `payload` is exactly `separator_bytes + 32 · n` bytes, separators
/// strictly increase, every entry describes a block that can exist, and the key counts add up to the trailer's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Layout {
    pub(crate) partitions: usize,
    pub(crate) separator_bytes: usize,
}

impl Layout {
    /// Checks the payload against the trailer's parameters and key count: O(payload), no allocation.
    pub(crate) fn validate(
        payload: &[u8],
        params: &[u8; PARAMS_LEN],
        num_keys: u64,
    ) -> Result<Layout> {
        let (partitions, separator_bytes) = decode_params(params);
        let bad = |field: &'static str, value: u64| Error::BadParams {
            kind: None,
            field,
            found: value,
        };
        let expected = partitions
            .checked_mul(ENTRY_LEN as u64)
            .and_then(|entries| entries.checked_add(separator_bytes));
        if expected != Some(payload.len() as u64) {
            return Err(Error::IndexLength {
                expected: expected.unwrap_or(u64::MAX),
                found: payload.len() as u64,
            });
        }
        // Both fit in usize: their sum is the payload's length.
        let layout = Layout {
            partitions: usize::try_from(partitions).map_err(|_| bad("partitions", partitions))?,
            separator_bytes: usize::try_from(separator_bytes)
                .map_err(|_| bad("separator_bytes", separator_bytes))?,
        };
        let mut keys = 0u64;
        let mut previous: Option<&[u8]> = None;
        for position in 0..layout.partitions {
            let entry = layout
                .entry(payload, position)
                .ok_or(bad("partitions", partitions))?;
            let separator = layout
                .separator(payload, position)
                .ok_or(bad("sep_end", u64::from(entry.sep_end)))?;
            if previous.is_some_and(|p| p >= separator) {
                return Err(bad("separator order", position as u64));
            }
            if entry.len < TRAILER_LEN as u64 {
                return Err(bad("partition len", entry.len));
            }
            keys = keys
                .checked_add(entry.num_keys)
                .ok_or(bad("num_keys", entry.num_keys))?;
            previous = Some(separator);
        }
        let last_end = match layout.partitions.checked_sub(1) {
            Some(last) => layout.entry(payload, last).map(|e| e.sep_end as usize),
            None => Some(0),
        };
        if last_end != Some(layout.separator_bytes) {
            return Err(bad("separator_bytes", separator_bytes));
        }
        if keys != num_keys {
            return Err(bad("num_keys", num_keys));
        }
        Ok(layout)
    }

    /// Entry `position`, if it exists.
    pub(crate) fn entry(&self, payload: &[u8], position: usize) -> Option<Entry> {
        let start = self
            .separator_bytes
            .checked_add(position.checked_mul(ENTRY_LEN)?)?;
        let bytes = payload.get(start..)?.first_chunk::<ENTRY_LEN>()?;
        Some(Entry::decode(bytes))
    }

    /// Where separator `position` ends: its entry's last field, read alone (the binary search reads two of these
    /// per step, not two whole entries).
    fn sep_end(&self, payload: &[u8], position: usize) -> Option<usize> {
        let at = self
            .separator_bytes
            .checked_add(position.checked_mul(ENTRY_LEN)?)?
            .checked_add(SEP_END_AT)?;
        let bytes = payload.get(at..)?.first_chunk::<4>()?;
        Some(u32::from_le_bytes(*bytes) as usize)
    }

    /// Separator `position`: from the previous entry's `sep_end` (0 for the first) to its own; `None` if those
    /// do not describe a range of the separator bytes.
    pub(crate) fn separator<'a>(&self, payload: &'a [u8], position: usize) -> Option<&'a [u8]> {
        let start = match position.checked_sub(1) {
            Some(previous) => self.sep_end(payload, previous)?,
            None => 0,
        };
        let end = self.sep_end(payload, position)?;
        if end > self.separator_bytes {
            return None;
        }
        payload.get(start..end)
    }
}
