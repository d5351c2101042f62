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
//! The CRC32 (IEEE polynomial, as computed by crc32fast) covers every byte of the block before it: the payload, the
//! prefix section when there is one, and the first 32 bytes of the trailer.
//!
//! Version 2 defines two flags: a block built with a prefix extractor carries a *prefix section*, the extractor's
//! name and its length, between the payload and the trailer (FORMAT.md, section 2.1). A block without one is
//! written as version 1, byte for byte what version-1 writers wrote.

use crate::error::{Error, Result, UsageError};
use crate::le::LeReader;
use crate::tag::{FilterKind, PARTITION_INDEX_TAG};

/// Magic bytes that open the trailer.
pub(crate) const MAGIC: [u8; 4] = *b"SSTF";

/// The newest format version this crate reads and writes. Version 0 is reserved and never valid. Version 1 is
/// written for blocks without a prefix section, version 2 for blocks with one (older readers reject them with
/// [`Error::UnsupportedVersion`], which a store maps to "may contain").
///
/// Compatibility policy: every version ever released stays readable. A change to the trailer layout, the hash
/// function, or the meaning of any existing field is a new version; a new kind inside an existing layout is a new
/// kind tag, which older readers reject with [`Error::UnknownKind`] (and the storage layer then treats the table
/// as "may contain").
pub const FORMAT_VERSION: u8 = 2;

/// Version-2 flag: the block holds prefixes, and a prefix section precedes the trailer.
pub(crate) const FLAG_PREFIXES: u16 = 1;

/// Version-2 flag: the block holds prefixes only, not whole keys (requires [`FLAG_PREFIXES`]).
pub(crate) const FLAG_PREFIXES_ONLY: u16 = 2;

/// The longest prefix extractor name a block records, in bytes (FORMAT.md 2.1): a builder refuses an extractor
/// with a longer name rather than record a cut one, which another extractor could share.
pub const MAX_PREFIX_NAME_LEN: usize = 255;

/// A prefix extractor's name as a block records it: UTF-8 of at most [`MAX_PREFIX_NAME_LEN`] bytes, checked when
/// it is made, so that no block records a cut name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct PrefixName(String);

impl PrefixName {
    /// The name, or an error if a block cannot record it whole.
    pub(crate) fn new(name: &str) -> Result<Self, UsageError> {
        if name.len() > MAX_PREFIX_NAME_LEN {
            return Err(UsageError::setting(
                "prefix extractor name",
                format!("at most {MAX_PREFIX_NAME_LEN} bytes"),
                format!("{} bytes", name.len()),
            ));
        }
        Ok(PrefixName(name.to_owned()))
    }

    pub(crate) fn as_str(&self) -> &str {
        &self.0
    }
}

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
        + 2 // flags: zero in version 1; prefixes (bit 0) and prefixes only (bit 1) in version 2
        + PARAMS_LEN // kind parameters
        + 8 // key count, u64
        + 4 // CRC32 of everything before it
}

/// The first format version that has partition index blocks.
const PARTITION_INDEX_SINCE: u8 = 2;

/// The `kind` of a partition index's trailer: the index has no filter kind of its own.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct PartitionIndexTag;

/// The decoded trailer of a block whose structure has been validated (not its checksum): a filter block's, whose
/// `kind` is a [`FilterKind`], or a partition index's.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Trailer<K = FilterKind> {
    pub(crate) version: u8,
    pub(crate) kind: K,
    pub(crate) flags: u16,
    pub(crate) params: [u8; PARAMS_LEN],
    pub(crate) num_keys: u64,
    pub(crate) checksum: u32,
    /// Where the prefix extractor's name lies in the block (start, length), if the block holds prefixes.
    pub(crate) prefix_name: Option<(usize, usize)>,
}

impl<K> Trailer<K> {
    /// The prefix extractor's name recorded in `block` (this trailer's block), if the block holds prefixes.
    pub(crate) fn prefix_extractor_name<'a>(&self, block: &'a [u8]) -> Option<&'a str> {
        let (at, len) = self.prefix_name?;
        core::str::from_utf8(block.get(at..at.checked_add(len)?)?).ok()
    }

    /// Whether the block holds whole keys: all do, but those built with prefixes only.
    pub(crate) fn holds_whole_keys(&self) -> bool {
        self.flags & FLAG_PREFIXES_ONLY == 0
    }
}

/// What a block holds besides its kind's payload: the prefixes of a [`PrefixExtractor`](crate::PrefixExtractor).
#[derive(Debug, Clone, Copy)]
pub(crate) struct Prefixes<'a> {
    /// The extractor's name.
    pub(crate) name: &'a PrefixName,
    /// Whether whole keys were added too.
    pub(crate) whole_keys: bool,
}

impl Trailer {
    /// Splits a filter block into its payload length and decoded trailer, validating magic, version, kind tag,
    /// flags and the prefix section. Kind parameters are validated by the kind itself. O(1): reads only the
    /// trailer and the at most 257 bytes of a prefix section.
    pub(crate) fn decode(block: &[u8]) -> Result<(usize, Trailer)> {
        decode_tagged(block, |tag, version| match FilterKind::from_tag(tag) {
            Some(kind) => Ok(kind),
            None if tag == PARTITION_INDEX_TAG && version >= PARTITION_INDEX_SINCE => {
                Err(Error::PartitionIndex)
            }
            None => Err(Error::UnknownKind(tag)),
        })
    }
}

/// Whether `block`'s trailer names a partition index (section 8) rather than a filter block: one byte read, the
/// tag after the magic and version; nothing else is checked (the open that follows checks everything, so a block
/// taken for the wrong one of the two fails that open).
pub(crate) fn is_partition_index(block: &[u8]) -> bool {
    const TAG_AT: usize = MAGIC.len() + 1;
    block
        .len()
        .checked_sub(TRAILER_LEN - TAG_AT)
        .and_then(|at| block.get(at))
        == Some(&PARTITION_INDEX_TAG)
}

impl Trailer<PartitionIndexTag> {
    /// Splits a partition index block into its payload length and decoded trailer: the same checks as
    /// [`Trailer::decode`] (a prefix section when the partitions hold prefixes), for the partition index tag
    /// (version 2 on).
    pub(crate) fn decode_index(block: &[u8]) -> Result<(usize, Self)> {
        decode_tagged(block, |tag, version| {
            if tag == PARTITION_INDEX_TAG && version >= PARTITION_INDEX_SINCE {
                Ok(PartitionIndexTag)
            } else {
                Err(FilterKind::from_tag(tag)
                    .map_or(Error::UnknownKind(tag), Error::NotPartitionIndex))
            }
        })
    }

    /// Appends a partition index's trailer to `out`, whose bytes from `start` on are the index payload: version
    /// 2, the partition index tag, and the prefix section of the partitions' `prefixes` (appended first) if they
    /// hold prefixes.
    pub(crate) fn append_index(
        out: &mut Vec<u8>,
        start: usize,
        params: [u8; PARAMS_LEN],
        num_keys: u64,
        prefixes: Option<Prefixes<'_>>,
    ) {
        let flags = append_prefix_section(out, prefixes);
        append_fields(
            out,
            start,
            PARTITION_INDEX_SINCE,
            PARTITION_INDEX_TAG,
            flags,
            params,
            num_keys,
        );
    }
}

/// [`Trailer::decode`] with the tag's meaning given by `kind_of(tag, version)`.
fn decode_tagged<K>(
    block: &[u8],
    kind_of: impl Fn(u8, u8) -> Result<K>,
) -> Result<(usize, Trailer<K>)> {
    let too_short = || Error::TooShort {
        expected: TRAILER_LEN,
        found: block.len(),
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
            expected: FORMAT_VERSION,
        });
    }
    let tag = r.u8().ok_or_else(too_short)?;
    let kind = kind_of(tag, version)?;
    let flags = r.u16().ok_or_else(too_short)?;
    let known = if version >= 2 {
        FLAG_PREFIXES | FLAG_PREFIXES_ONLY
    } else {
        0
    };
    let prefixes_only_without_prefixes =
        flags & FLAG_PREFIXES_ONLY != 0 && flags & FLAG_PREFIXES == 0;
    if flags & !known != 0 || prefixes_only_without_prefixes {
        return Err(Error::BadParams {
            kind: None,
            field: "flags",
            found: u64::from(flags),
        });
    }
    let (payload_len, prefix_name) = if flags & FLAG_PREFIXES == 0 {
        (payload_len, None)
    } else {
        prefix_section(block, payload_len)?
    };
    let params = r.array::<PARAMS_LEN>().ok_or_else(too_short)?;
    let num_keys = r.u64().ok_or_else(too_short)?;
    let checksum = r.u32().ok_or_else(too_short)?;
    Ok((
        payload_len,
        Trailer {
            version,
            kind,
            flags,
            params,
            num_keys,
            checksum,
            prefix_name,
        },
    ))
}

impl Trailer {
    /// Appends the trailer to `out`, whose bytes from `start` on are the payload, and the CRC32 over the payload and
    /// trailer fields: version 1, or version 2 with the prefix section (appended first) if the block holds
    /// `prefixes`; returns the CRC32. The one writer of trailers: the builders and
    /// [`StandardBloomParams::write_block`](crate::StandardBloomParams::write_block) all come here.
    pub(crate) fn append(
        out: &mut Vec<u8>,
        start: usize,
        kind: FilterKind,
        params: [u8; PARAMS_LEN],
        num_keys: u64,
        prefixes: Option<Prefixes<'_>>,
    ) -> u32 {
        let version = if prefixes.is_some() { 2 } else { 1 };
        let flags = append_prefix_section(out, prefixes);
        append_fields(out, start, version, kind.tag(), flags, params, num_keys)
    }
}

/// Appends the prefix section of `prefixes` (the extractor's name and its length), if any, and returns the flags
/// that say so.
fn append_prefix_section(out: &mut Vec<u8>, prefixes: Option<Prefixes<'_>>) -> u16 {
    let Some(prefixes) = prefixes else {
        return 0;
    };
    let name = prefixes.name.as_str();
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(&(name.len() as u16).to_le_bytes()); // NOTE: ≤ 255, fits.
    if prefixes.whole_keys {
        FLAG_PREFIXES
    } else {
        FLAG_PREFIXES | FLAG_PREFIXES_ONLY
    }
}

/// Appends the trailer fields and the CRC32 over `out[start..]`, and returns the CRC32: the one place that lays out
/// a trailer.
fn append_fields(
    out: &mut Vec<u8>,
    start: usize,
    version: u8,
    tag: u8,
    flags: u16,
    params: [u8; PARAMS_LEN],
    num_keys: u64,
) -> u32 {
    out.extend_from_slice(&MAGIC); // NOTE: magic first, so a shifted trailer fails fast.
    out.push(version);
    out.push(tag);
    out.extend_from_slice(&flags.to_le_bytes());
    out.extend_from_slice(&params);
    out.extend_from_slice(&num_keys.to_le_bytes());
    let crc = crc32fast::hash(out.get(start..).unwrap_or_default());
    out.extend_from_slice(&crc.to_le_bytes()); // NOTE: the CRC covers payload and trailer fields.
    crc
}

/// The first `payload_len` bytes of a block, as its decoded trailer measured them (empty if the block has since
/// become shorter, which a well-behaved `AsRef` never does).
pub(crate) fn payload(block: &[u8], payload_len: usize) -> &[u8] {
    block.get(..payload_len).unwrap_or_default()
}

/// The prefix section before the trailer, whose bytes before it are `before_trailer` long: the payload length
/// without the section, and where the extractor name lies. The name length must fit and be at most
/// [`MAX_PREFIX_NAME_LEN`], and the name must be UTF-8.
fn prefix_section(block: &[u8], before_trailer: usize) -> Result<(usize, Option<(usize, usize)>)> {
    let bad = |value: u64| Error::BadParams {
        kind: None,
        field: "prefix extractor name",
        found: value,
    };
    let len_at = before_trailer.checked_sub(2).ok_or(bad(0))?;
    let len_bytes = block.get(len_at..before_trailer).ok_or(bad(0))?;
    let name_len = usize::from(u16::from_le_bytes([
        len_bytes.first().copied().unwrap_or(0),
        len_bytes.get(1).copied().unwrap_or(0),
    ]));
    if name_len > MAX_PREFIX_NAME_LEN {
        return Err(bad(name_len as u64));
    }
    let name_at = len_at.checked_sub(name_len).ok_or(bad(name_len as u64))?;
    let name = block.get(name_at..len_at).ok_or(bad(name_len as u64))?;
    if core::str::from_utf8(name).is_err() {
        return Err(bad(name_len as u64));
    }
    Ok((name_at, Some((name_at, name_len))))
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
        Trailer::append(&mut block, 0, FilterKind::BlockedBloom, params, 42, None);
        block
    }

    #[test]
    fn trailer_round_trips() {
        let block = sample_block();
        assert_eq!(block.len(), 64 + TRAILER_LEN);
        let (payload_len, t) = Trailer::decode(&block).unwrap();
        assert_eq!(payload_len, 64);
        assert_eq!(
            t.version, 1,
            "a block without prefixes is written as version 1"
        );
        assert_eq!((t.flags, t.prefix_name), (0, None));
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
            Err(Error::TooShort {
                expected: 36,
                found: 35
            })
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
                    expected: FORMAT_VERSION
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
                found: 256
            })
        );
    }

    fn prefix_block(name: &str, whole_keys: bool) -> Vec<u8> {
        let mut block = vec![0xAB; 64];
        let mut params = [0u8; PARAMS_LEN];
        params[0] = 6;
        let name = PrefixName::new(name).unwrap();
        let prefixes = Prefixes {
            name: &name,
            whole_keys,
        };
        Trailer::append(
            &mut block,
            0,
            FilterKind::BlockedBloom,
            params,
            42,
            Some(prefixes),
        );
        block
    }

    #[test]
    fn a_prefix_section_round_trips_in_version_2() {
        for whole_keys in [true, false] {
            let block = prefix_block("sstfilter.fixed:4", whole_keys);
            assert_eq!(block.len(), 64 + 17 + 2 + TRAILER_LEN);
            let (payload_len, t) = Trailer::decode(&block).unwrap();
            assert_eq!((payload_len, t.version), (64, 2));
            let only = if whole_keys { 0 } else { FLAG_PREFIXES_ONLY };
            assert_eq!(t.flags, FLAG_PREFIXES | only);
            assert_eq!(t.prefix_name, Some((64, 17)));
            assert_eq!(&block[64..81], b"sstfilter.fixed:4");
        }
        // An empty name is a name; the longest is 255 bytes, and a longer one is refused, never cut.
        let (payload_len, t) = Trailer::decode(&prefix_block("", true)).unwrap();
        assert_eq!((payload_len, t.prefix_name), (64, Some((64, 0))));
        let longest = "x".repeat(MAX_PREFIX_NAME_LEN);
        let (_, t) = Trailer::decode(&prefix_block(&longest, true)).unwrap();
        assert_eq!(t.prefix_name, Some((64, 255)));
        for long in ["x".repeat(256), "é".repeat(200)] {
            assert!(matches!(
                PrefixName::new(&long),
                Err(UsageError::InvalidSetting { .. })
            ));
        }
    }

    #[test]
    fn flags_and_prefix_sections_are_validated() {
        let flags_error = |flags: u16| Error::BadParams {
            kind: None,
            field: "flags",
            found: u64::from(flags),
        };
        // Version 1 allows no flag; version 2 its two, the second only with the first.
        let mut v1 = sample_block();
        let at = v1.len() - TRAILER_LEN;
        v1[at + FLAGS_AT] = 1;
        assert_eq!(Trailer::decode(&v1), Err(flags_error(1)));
        let v2 = prefix_block("p", true);
        let at = v2.len() - TRAILER_LEN;
        for flags in [2u16, 4, 0x8001, 0xFFFF] {
            let mut b = v2.clone();
            b[at + FLAGS_AT..at + FLAGS_AT + 2].copy_from_slice(&flags.to_le_bytes());
            assert_eq!(Trailer::decode(&b), Err(flags_error(flags)), "{flags:#x}");
        }
        // A version-2 block without flags is a plain block.
        let mut plain = sample_block();
        let at = plain.len() - TRAILER_LEN;
        plain[at + VERSION_AT] = 2;
        assert_eq!(
            Trailer::decode(&plain).map(|(len, t)| (len, t.prefix_name)),
            Ok((64, None))
        );
        // Name length past the block, over the limit, or a name that is not UTF-8.
        let name_error = |value: u64| Error::BadParams {
            kind: None,
            field: "prefix extractor name",
            found: value,
        };
        let len_at = v2.len() - TRAILER_LEN - 2;
        for (len, want) in [(200u16, 200u64), (256, 256), (0xFFFF, 0xFFFF)] {
            let mut b = v2.clone();
            b[len_at..len_at + 2].copy_from_slice(&len.to_le_bytes());
            assert_eq!(Trailer::decode(&b), Err(name_error(want)), "{len}");
        }
        let mut b = v2.clone();
        b[len_at - 1] = 0xFF;
        assert_eq!(Trailer::decode(&b), Err(name_error(1)));
        // A prefix section cut to nothing.
        let mut tiny = Vec::new();
        let mut params = [0u8; PARAMS_LEN];
        params[0] = 6;
        let empty = PrefixName::new("").unwrap();
        let prefixes = Prefixes {
            name: &empty,
            whole_keys: true,
        };
        Trailer::append(
            &mut tiny,
            0,
            FilterKind::BlockedBloom,
            params,
            0,
            Some(prefixes),
        );
        assert!(Trailer::decode(&tiny[1..]).is_err());
    }
}
