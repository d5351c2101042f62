//! The container: `payload ‖ trailer`, with a fixed-size little-endian trailer.
//!
//! FORMAT.md is the byte-exact specification; this module mirrors it. The trailer sits at the end of the block
//! so that a reader can find it from the block's length alone and the payload starts at offset 0.
//!
//! ```text
//!  0        4        5      6        8                     24             32        36
//!  +--------+--------+------+--------+---------------------+--------------+---------+
//!  | magic  |version | kind | flags  |  kind parameters    |  key count   |  CRC32  |
//!  | "SSTF" |  u8=1  |  u8  | u16=0  |  16 bytes           |  u64         |  u32    |
//!  +--------+--------+------+--------+---------------------+--------------+---------+
//! ```
//!
//! The CRC32 (IEEE polynomial, as computed by crc32fast) covers every byte of the block before it: the payload
//! and the first 32 bytes of the trailer.

use crate::error::{Error, Result};
use crate::le::LeReader;
use crate::tag::FilterKind;

/// Magic bytes that open the trailer.
pub(crate) const MAGIC: [u8; 4] = *b"SSTF";

/// The format version this crate writes, and the newest it reads. Version 0 is reserved and never valid.
///
/// Compatibility policy: every version ever released stays readable. A change to the trailer layout, the hash
/// function, or the meaning of any existing field is a new version; a new kind inside an existing layout is a new
/// kind tag, which older readers reject with [`Error::UnknownKind`] (and the storage layer then treats the table
/// as "may contain").
pub const FORMAT_VERSION: u8 = 1;

/// The policy name under which store adapters register this crate's blocks with a store (FORMAT.md, appendix B).
/// It names the container, not a kind or a format version: a reader reads every kind and version it knows from
/// the bytes themselves, so changing the kind or its parameters never changes the name.
pub const STORE_POLICY_NAME: &str = "sstfilter";

/// Size of the kind-specific parameter area in the trailer.
pub(crate) const PARAMS_LEN: usize = 16;

/// Size of the fixed trailer: the smallest valid block is a trailer with an empty payload.
pub const TRAILER_LEN: usize = trailer_len();

/// Sums the trailer fields, one line per field, so the layout and the constant cannot drift apart.
const fn trailer_len() -> usize {
    MAGIC.len() // magic
        + 1 // format version
        + 1 // kind tag
        + 2 // flags, reserved: zero in version 1
        + PARAMS_LEN // kind parameters
        + 8 // key count, u64
        + 4 // CRC32 of everything before it
}

/// The decoded trailer of a block whose structure has been validated (not its checksum).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Trailer {
    pub(crate) version: u8,
    pub(crate) kind: FilterKind,
    pub(crate) params: [u8; PARAMS_LEN],
    pub(crate) num_keys: u64,
    pub(crate) checksum: u32,
}

impl Trailer {
    /// Splits a block into its payload length and decoded trailer, validating magic, version, kind tag and the
    /// reserved flags. Kind parameters are validated by the kind itself. O(1): reads only the trailer.
    pub(crate) fn decode(block: &[u8]) -> Result<(usize, Trailer)> {
        let too_short = || Error::TooShort {
            need: TRAILER_LEN,
            got: block.len(),
        };
        let payload_len = block.len().checked_sub(TRAILER_LEN).ok_or_else(too_short)?;
        let (_, tail) = block.split_at(payload_len);
        // Fields in layout order; the tail is exactly TRAILER_LEN bytes, so no read below can come up short.
        let mut r = LeReader::new(tail);
        let magic = r.array::<4>().ok_or_else(too_short)?;
        if magic != MAGIC {
            return Err(Error::BadMagic { found: magic });
        }
        let version = r.u8().ok_or_else(too_short)?;
        if version == 0 || version > FORMAT_VERSION {
            return Err(Error::UnsupportedVersion {
                found: version,
                max: FORMAT_VERSION,
            });
        }
        let tag = r.u8().ok_or_else(too_short)?;
        let kind = FilterKind::from_tag(tag).ok_or(Error::UnknownKind(tag))?;
        let flags = r.u16().ok_or_else(too_short)?;
        if flags != 0 {
            return Err(Error::BadParams {
                kind: None,
                field: "flags",
                value: u64::from(flags),
            });
        }
        let params = r.array::<PARAMS_LEN>().ok_or_else(too_short)?;
        let num_keys = r.u64().ok_or_else(too_short)?;
        let checksum = r.u32().ok_or_else(too_short)?;
        Ok((
            payload_len,
            Trailer {
                version,
                kind,
                params,
                num_keys,
                checksum,
            },
        ))
    }

    /// Appends a version-[`FORMAT_VERSION`] trailer to `out`, whose bytes from `start` on are the payload, and
    /// the CRC32 over the payload and trailer fields.
    pub(crate) fn append(
        out: &mut Vec<u8>,
        start: usize,
        kind: FilterKind,
        params: [u8; PARAMS_LEN],
        num_keys: u64,
    ) {
        out.extend_from_slice(&MAGIC); // NOTE: magic first, so a shifted trailer fails fast.
        out.push(FORMAT_VERSION);
        out.push(kind.tag());
        out.extend_from_slice(&0u16.to_le_bytes()); // NOTE: flags are reserved and zero in version 1.
        out.extend_from_slice(&params);
        out.extend_from_slice(&num_keys.to_le_bytes());
        let crc = crc32fast::hash(out.get(start..).unwrap_or_default());
        out.extend_from_slice(&crc.to_le_bytes()); // NOTE: the CRC covers payload and trailer fields.
    }
}

/// CRC32 of a block as stored in its trailer: over every byte before the last four.
pub(crate) fn block_checksum(block: &[u8]) -> u32 {
    let covered = block.len().saturating_sub(4);
    crc32fast::hash(block.get(..covered).unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    // Trailer field offsets, as in FORMAT.md.
    const VERSION_AT: usize = 4;
    const KIND_AT: usize = 5;
    const FLAGS_AT: usize = 6;

    fn sample_block() -> Vec<u8> {
        let mut block = vec![0xAB; 64];
        let mut params = [0u8; PARAMS_LEN];
        params[0] = 6;
        Trailer::append(&mut block, 0, FilterKind::BlockedBloom, params, 42);
        block
    }

    #[test]
    fn trailer_round_trips() {
        let block = sample_block();
        assert_eq!(block.len(), 64 + TRAILER_LEN);
        let (payload_len, t) = Trailer::decode(&block).unwrap();
        assert_eq!(payload_len, 64);
        assert_eq!(t.version, FORMAT_VERSION);
        assert_eq!(t.kind, FilterKind::BlockedBloom);
        assert_eq!(t.params[0], 6);
        assert_eq!(t.num_keys, 42);
        assert_eq!(t.checksum, block_checksum(&block));
    }

    #[test]
    fn trailer_length_is_36_bytes() {
        assert_eq!(TRAILER_LEN, 36);
    }

    #[test]
    fn rejects_each_bad_field_with_its_variant() {
        assert_eq!(
            Trailer::decode(&[0; 35]),
            Err(Error::TooShort { need: 36, got: 35 })
        );
        let good = sample_block();
        let at = good.len() - TRAILER_LEN;

        let mut b = good.clone();
        b[at] = b'X';
        assert_eq!(
            Trailer::decode(&b),
            Err(Error::BadMagic { found: *b"XSTF" })
        );

        for version in [0u8, FORMAT_VERSION + 1, 255] {
            let mut b = good.clone();
            b[at + VERSION_AT] = version;
            assert_eq!(
                Trailer::decode(&b),
                Err(Error::UnsupportedVersion {
                    found: version,
                    max: FORMAT_VERSION
                })
            );
        }

        for tag in [0u8, 200, 255] {
            let mut b = good.clone();
            b[at + KIND_AT] = tag;
            assert_eq!(Trailer::decode(&b), Err(Error::UnknownKind(tag)));
        }

        let mut b = good.clone();
        b[at + FLAGS_AT + 1] = 1;
        assert_eq!(
            Trailer::decode(&b),
            Err(Error::BadParams {
                kind: None,
                field: "flags",
                value: 256
            })
        );
    }
}
