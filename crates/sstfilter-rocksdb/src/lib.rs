//! RocksDB's filters, beside the `sstfilter` core: RocksDB's own bytes, not a kind of sstfilter's container.
//!
//! A RocksDB block-based table (`format_version` 2 and later) keeps its filter in a meta block named
//! `fullfilter.<policy name>` (or in partitions under `partitionedfilter.<policy name>`); the block's bytes are the
//! filter, then 5 metadata bytes saying which of RocksDB's filters it is. This module reads all of them as
//! RocksDB 7.8.3 and 9.8.4 read them and writes the two RocksDB writes today, as RocksDB writes them:
//!
//! * [`RocksDbFilter`]: answers "may match" for a filter block as RocksDB does, whichever filter it holds
//!   ([`RocksDbFilterFormat`]): FastLocalBloom (`format_version` 5 and later), Standard128Ribbon
//!   (`NewRibbonFilterPolicy`), the legacy Bloom filter of older tables, and RocksDB's encodings of a filter that
//!   matches nothing (no keys) or everything (reserved and unusable metadata, which RocksDB reads as "may match" so
//!   that a newer writer's filter never hides a key from an older reader).
//! * [`RocksDbBloomBuilder`]: writes FastLocalBloom blocks identical to RocksDB's for the same keys and bits per
//!   key, under RocksDB 9's default `optimize_filters_for_memory` or without it (RocksDB 7.x and 8.x's default).
//! * [`RocksDbRibbonBuilder`]: writes Standard128Ribbon blocks identical to RocksDB's (`NewRibbonFilterPolicy`)
//!   for the same keys and bits per key, RocksDB's fallbacks to FastLocalBloom included.
//! * [`rocksdb_hash64`]: the 64-bit hash the two newer filters are built on (RocksDB's frozen preview of XXH3,
//!   not the released XXH3).
//! * [`RocksDbTable`]: finds a table's filter in the bytes of a RocksDB SST file (block-based table, format
//!   versions 0 to 7) and verifies it: the footer, the meta-index and properties blocks, and the full filter or
//!   each partition of a partitioned filter ([`RocksDbTableFilter`]), every block's checksum (any of RocksDB's five
//!   [`RocksDbChecksum`]s) checked before its bytes are read. It answers keys, and prefixes cut by the table's own
//!   [`RocksDbPrefixExtractor`], as RocksDB's table reader does. LevelDB's tables are its format version 0: their
//!   index, data and filter blocks are read with the same calls ([`RocksDbTable::read_block`]).
//!
//! Builders refuse a setting RocksDB would change without a word, with a [`RocksDbUsageError`].
//!
//! These bytes carry no checksum of their own: the table's block trailer (its checksum type named in the footer)
//! covers them, so [`RocksDbFilter::from_verified`] is for bytes whose block checksum was checked, as RocksDB's
//! table reader checks it before the filter sees them ([`RocksDbTable::filter`] checks it). On any bytes the filter
//! readers never panic, never read out of bounds and never allocate; where the metadata is inconsistent they answer
//! "may match", as RocksDB does where it can tell (where RocksDB would read out of bounds instead, the format's
//! docs say so).
//!
//! Both writers reproduce RocksDB's whole construction, not only the layout FORMAT.md Appendix C specifies: for
//! Ribbon, the rate RocksDB derives from the bits per key, the slot count from the key count (its floating-point
//! formulas and measured table), the byte count, the seed search (the first seed from the first key's hash, then
//! the next until the banding succeeds), the back-substitution, and when RocksDB writes its Bloom filter instead.
//! Where RocksDB's bytes depend on the platform's math library (`exp`, `pow`, `log`), ours depend on it the same
//! way (`ribbon_builder.rs` says where).

#![deny(missing_docs)]
#![warn(unreachable_pub)]
// The decoding paths must not be able to panic on untrusted bytes. Each exception is one
// `#[expect(lint, reason = "...")]` at the item it covers.
#![cfg_attr(
    not(test),
    deny(
        clippy::unwrap_used,
        clippy::expect_used,
        clippy::indexing_slicing,
        clippy::panic
    )
)]

mod bloom;
mod crc32c;
mod error;
mod hash;
mod ribbon;
mod ribbon_builder;
mod table;

pub use bloom::RocksDbBloomBuilder;
pub use error::RocksDbUsageError;
pub use hash::rocksdb_hash64;
pub use ribbon_builder::RocksDbRibbonBuilder;
pub use table::{
    RocksDbBlock, RocksDbBlockEntries, RocksDbBlockHandle, RocksDbChecksum, RocksDbMetaBlock,
    RocksDbPartition, RocksDbPartitionedFilter, RocksDbPrefixExtractor, RocksDbStoredBlock,
    RocksDbTable, RocksDbTableError, RocksDbTableFilter,
};

/// Bytes of the metadata at the end of every RocksDB filter block.
const METADATA_LEN: usize = 5;

/// Which of RocksDB's filters a block holds, read from its 5 metadata bytes as RocksDB reads them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum RocksDbFilterFormat {
    /// A block of at most the 5 metadata bytes: RocksDB's filter of no keys, which answers "no match" for every
    /// key.
    Empty,
    /// FastLocalBloom (metadata byte `-1`, sub-implementation 0, 64-byte lines): RocksDB's Bloom filter since
    /// `format_version` 5.
    FastLocalBloom {
        /// Probes a key sets, 1 to 30.
        num_probes: u8,
        /// Bytes of the lines, the block without its metadata.
        len: u32,
    },
    /// Standard128Ribbon (metadata byte `-2`): a Ribbon filter of 128-bit coefficient rows over blocks of 128
    /// slots.
    Ribbon {
        /// The ordinal seed the writer solved the system with (0 to 255).
        seed: u8,
        /// Blocks of 128 slots, at least 2.
        num_blocks: u32,
        /// Bytes of the solution, the block without its metadata.
        len: u32,
    },
    /// The legacy Bloom filter (metadata byte 1 to 127, the probe count): written before `format_version` 5.
    LegacyBloom {
        /// Probes a key sets.
        num_probes: u8,
        /// Lines of the filter.
        num_lines: u32,
        /// Bytes of a line, a power of two (64 unless the writer's cache line differed).
        line_bytes: u32,
    },
    /// Metadata RocksDB reads as a filter that matches every key: zero probes, a reserved marker or field, or a
    /// layout with no reading.
    MatchAll {
        /// Why, in a few words.
        reason: &'static str,
    },
}

/// A RocksDB filter block, ready to answer "may this key match?" exactly as RocksDB 7.8.3 does.
///
/// Reading the metadata is O(1) and never fails: whatever the bytes, they are one of the
/// [`RocksDbFilterFormat`]s, and those RocksDB cannot use answer "may match".
#[derive(Debug, Clone, Copy)]
pub struct RocksDbFilter<'a> {
    /// The filter's bytes without the metadata.
    data: &'a [u8],
    format: RocksDbFilterFormat,
    /// A Ribbon block's query, prepared from its metadata once (`None` for other formats, and for a Ribbon layout
    /// every key may match).
    ribbon: Option<ribbon::Prepared>,
}

impl<'a> RocksDbFilter<'a> {
    /// The filter of a RocksDB filter block (a `fullfilter.*` meta block's contents, or one partition of a
    /// partitioned filter), without the table's 5-byte block trailer. The block's checksum must have been verified
    /// against that trailer: the filter has no checksum of its own, and damaged bytes may answer "no match" for a
    /// key the table holds (RocksDB's own table reader verifies block checksums before it reads a filter).
    #[must_use]
    pub fn from_verified(block: &'a [u8]) -> Self {
        let (data, format) = read_metadata(block);
        let ribbon = match format {
            RocksDbFilterFormat::Ribbon {
                seed, num_blocks, ..
            } => ribbon::Prepared::new(data.len(), num_blocks, u32::from(seed)),
            _ => None,
        };
        RocksDbFilter {
            data,
            format,
            ribbon,
        }
    }

    /// Which filter the block holds.
    #[must_use]
    pub const fn format(&self) -> RocksDbFilterFormat {
        self.format
    }

    /// Whether `key` may be one of the keys the filter was built from: RocksDB's own answer for the same bytes
    /// (`FilterBitsReader::MayMatch`), "no match" only where RocksDB would say it too.
    #[must_use]
    #[inline]
    #[doc(alias("MayMatch", "may_match"))]
    pub fn may_contain(&self, key: &[u8]) -> bool {
        match self.format {
            RocksDbFilterFormat::Empty => false,
            RocksDbFilterFormat::FastLocalBloom { num_probes, .. } => {
                bloom::fast_local_may_contain(self.data, num_probes, rocksdb_hash64(key))
            }
            RocksDbFilterFormat::Ribbon { .. } => self
                .ribbon
                .is_none_or(|prepared| prepared.may_contain(self.data, rocksdb_hash64(key))),
            RocksDbFilterFormat::LegacyBloom {
                num_probes,
                num_lines,
                line_bytes,
            } => bloom::legacy_may_contain(
                self.data,
                num_probes,
                num_lines,
                line_bytes.trailing_zeros(),
                bloom::legacy_hash(key),
            ),
            RocksDbFilterFormat::MatchAll { .. } => true,
        }
    }
}

/// The filter bytes of `block` and their format, from its metadata (RocksDB's
/// `BuiltinFilterPolicy::GetBuiltinFilterBitsReader`).
fn read_metadata(block: &[u8]) -> (&[u8], RocksDbFilterFormat) {
    let match_all = |reason| (&[][..], RocksDbFilterFormat::MatchAll { reason });
    let Some((data, metadata)) = block.split_last_chunk::<METADATA_LEN>() else {
        return (&[], RocksDbFilterFormat::Empty);
    };
    // RocksDB takes the block's length as 32 bits; no filter it writes is longer.
    let Ok(len) = u32::try_from(data.len()) else {
        return match_all("longer than RocksDB's 32-bit filter length");
    };
    if len == 0 {
        return (&[], RocksDbFilterFormat::Empty);
    }
    let [marker, a, b, c, d] = *metadata;
    let format = match marker as i8 {
        0 => RocksDbFilterFormat::MatchAll {
            reason: "zero probes",
        },
        -1 => newer_bloom(len, a, b, u16::from_le_bytes([c, d])),
        -2 => match u32::from_le_bytes([b, c, d, 0]) {
            0 | 1 => RocksDbFilterFormat::MatchAll {
                reason: "a Ribbon filter of fewer than 2 blocks",
            },
            num_blocks => RocksDbFilterFormat::Ribbon {
                seed: a,
                num_blocks,
                len,
            },
        },
        ..0 => RocksDbFilterFormat::MatchAll {
            reason: "a reserved filter marker",
        },
        probes => legacy_bloom(len, probes as u8, u32::from_le_bytes([a, b, c, d])),
    };
    (data, format)
}

/// The newer Bloom filters' metadata after the `-1` marker: the sub-implementation, the line size and probes
/// byte, and two reserved bytes.
fn newer_bloom(
    len: u32,
    sub_implementation: u8,
    lines_and_probes: u8,
    reserved: u16,
) -> RocksDbFilterFormat {
    let num_probes = lines_and_probes & 31;
    let log2_line_bytes = (lines_and_probes >> 5) + 6;
    let reason = if !(1..=30).contains(&num_probes) {
        "a reserved Bloom probe count"
    } else if reserved != 0 {
        "reserved Bloom metadata bytes set"
    } else if sub_implementation != 0 {
        "a reserved Bloom sub-implementation"
    } else if log2_line_bytes != 6 {
        "a Bloom line size other than 64 bytes"
    } else {
        return RocksDbFilterFormat::FastLocalBloom { num_probes, len };
    };
    RocksDbFilterFormat::MatchAll { reason }
}

/// The legacy Bloom filter's layout: `num_lines` lines filling `len` bytes, each a power of two bytes long.
fn legacy_bloom(len: u32, num_probes: u8, num_lines: u32) -> RocksDbFilterFormat {
    // RocksDB first tries 64-byte lines, with the product in 32 bits: a line count whose product wraps to the
    // length would send its reads out of bounds, so it answers "may match" here.
    let line_bytes = match u64::from(num_lines) * 64 {
        product if product == u64::from(len) => 64,
        product if product % (1 << 32) == u64::from(len) => 0,
        _ if num_lines == 0 || !len.is_multiple_of(num_lines) => 0,
        // A line of another size is a power of two bytes: the quotient `len / num_lines` must be one.
        _ => Some(len / num_lines)
            .filter(|q| q.is_power_of_two())
            .unwrap_or(0),
    };
    if line_bytes == 0 {
        return RocksDbFilterFormat::MatchAll {
            reason: "a legacy Bloom line count that does not divide the filter into power-of-two lines",
        };
    }
    RocksDbFilterFormat::LegacyBloom {
        num_probes,
        num_lines,
        line_bytes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RocksDB's `FullBloomTest.Schema` checks (`util/bloom_test.cc`, v7.8.3) of a filter `block` of its keys: the
    /// metadata byte `from_end` bytes before the block's end is `byte` (the probe count or the seed), RocksDB's
    /// 32-bit legacy hash of the whole block (which pins every byte) is `hash`, and `FirstFPs`: the first of the
    /// 4-byte little-endian keys `i + 10^6` that the filter says may match, as `i`, are `fps`.
    pub(super) fn assert_schema(
        block: &[u8],
        from_end: usize,
        byte: u8,
        hash: u32,
        fps: &str,
        what: &str,
    ) {
        let at = block.len() - from_end;
        assert_eq!(block.get(at), Some(&byte), "{what}");
        assert_eq!(bloom::legacy_hash(block), hash, "{what}");
        let filter = RocksDbFilter::from_verified(block);
        let found: Vec<String> = (0..1_000_000u32)
            .filter(|i| filter.may_contain(&(i + 1_000_000).to_le_bytes()))
            .take(fps.split(',').count())
            .map(|i| i.to_string())
            .collect();
        assert_eq!(found.join(","), fps, "{what}");
    }

    /// RocksDB's `RawFilterTester` (`util/bloom_test.cc`): `len` filter bytes then the metadata `marker` and
    /// `word` (little-endian), the filter bytes being `fill` or, with `None`, its "weird fill": byte `p` of a
    /// 3000-byte buffer is `0x7b7b >> (p % 7)`, and the block is the buffer's tail.
    fn raw(len: usize, word: u32, marker: u8, fill: Option<u8>) -> Vec<u8> {
        let start = 3000 - 5 - len;
        let mut block: Vec<u8> = (start..3000 - 5)
            .map(|p| fill.unwrap_or((0x7b7b_u32 >> (p % 7)) as u8))
            .collect();
        block.push(marker);
        block.extend_from_slice(&word.to_le_bytes());
        block
    }

    /// RocksDB's `PackedMatches`: bit `i` set when the 4-byte little-endian key `i + 12345` may match.
    fn packed_matches(block: &[u8]) -> u64 {
        let filter = RocksDbFilter::from_verified(block);
        (0..64u32)
            .filter(|i| filter.may_contain(&(i + 12345).to_le_bytes()))
            .fold(0, |acc, i| acc | 1 << i)
    }

    /// RocksDB's `RawSchema` test (v7.8.3): the answers its readers give on fixed bytes, for legacy Bloom filters
    /// of 256-, 128- and 64-byte lines, a FastLocalBloom filter and two Ribbon filters.
    #[test]
    fn raw_blocks_answer_as_rocksdb_pins_them() {
        let cases = [
            (raw(256, 1, 2, None), 11384799501900898790),
            (raw(256, 2, 2, None), 10157853359773492589),
            (raw(256, 4, 2, None), 7123594913907464682),
            (raw(256, 2 << 8, 255, None), 9957045189927952471),
            (raw(32, 2 << 8, 254, None), 6193930559317665002),
            (raw(112, 2 << 8, 254, None), 9007200345328128),
        ];
        for (block, want) in cases {
            let format = RocksDbFilter::from_verified(&block).format();
            assert_eq!(packed_matches(&block), want, "{format:?}");
        }
    }

    /// RocksDB's `CorruptFilters` test (v7.8.3): valid layouts answer as their bits say, the encodings of "no keys"
    /// answer no match, and every reserved or impossible layout answers "may match".
    #[test]
    fn corrupt_and_reserved_metadata_answer_as_rocksdb_does() {
        let ask = |block: &[u8]| {
            let filter = RocksDbFilter::from_verified(block);
            [filter.may_contain(b"hello"), filter.may_contain(b"world")]
        };
        for fill in [0u8, 0xff] {
            let bits = fill == 0xff;
            // Good legacy layouts (64- and 256-byte lines, 1 to 30 probes, and the probe counts RocksDB never
            // writes but reads, 31 and 127): the answer is the bits'.
            for (len, lines, probes) in [
                (64, 1, 6),
                (192, 3, 6),
                (768, 3, 6),
                (64, 1, 30),
                (64, 1, 1),
                (64, 1, 31),
            ] {
                assert_eq!(
                    ask(&raw(len, lines, probes, Some(fill))),
                    [bits; 2],
                    "{len} {lines} {probes}"
                );
            }
            assert_eq!(ask(&raw(64, 1, 127, Some(fill))), [bits; 2]);
            // Zero probes, and the negative probe counts RocksDB reserves: every key may match.
            for probes in [0, 128, 253] {
                assert_eq!(ask(&raw(64, 1, probes, Some(fill))), [true; 2], "{probes}");
            }
            // No filter bytes: built from no keys, whatever the metadata says.
            for (lines, probes) in [(0, 6), (37, 6), (0, 0)] {
                assert_eq!(ask(&raw(0, lines, probes, Some(fill))), [false; 2]);
            }
            // Fewer than 5 bytes: the metadata itself is missing.
            let block = raw(0, 3, 6, Some(fill));
            assert_eq!(ask(&block[1..]), [false; 2]);
            // No layout of the lines: no line count, or one that does not divide the bytes into power-of-two lines.
            for (len, lines) in [(64, 0), (4, 3), (97 * 3, 3), (65 * 3, 3)] {
                assert_eq!(
                    ask(&raw(len, lines, 6, Some(fill))),
                    [true; 2],
                    "{len} {lines}"
                );
            }
            // FastLocalBloom: six and thirty probes read the bits; any reserved byte, or more than 30 probes, may match.
            for word in [6 << 8, 30 << 8] {
                assert_eq!(ask(&raw(64, word, 255, Some(fill))), [bits; 2], "{word:#x}");
            }
            for word in [
                6 << 8 | 1,
                6 << 8 | 1 << 16,
                6 << 8 | 1 << 24,
                31 << 8,
                33 << 8,
                66 << 8,
                130 << 8,
            ] {
                assert_eq!(ask(&raw(64, word, 255, Some(fill))), [true; 2], "{word:#x}");
            }
        }
        // Ribbon: zero bytes of 2 blocks of 4 or 8 columns reject both keys; 5000 blocks over 128 bytes leave most
        // of them no column, so nearly every key may match; fewer than 2 blocks are not a Ribbon layout.
        for len in [128, 256] {
            assert_eq!(
                ask(&raw(len, 2 << 8 | 123, 254, Some(0))),
                [false; 2],
                "{len}"
            );
        }
        let sparse = raw(128, 5000 << 8 | 123, 254, Some(0));
        assert_eq!(ask(&sparse), [true; 2]);
        let filter = RocksDbFilter::from_verified(&sparse);
        assert!((0..1000).any(|i| !filter.may_contain(i.to_string().as_bytes())));
        for blocks in [0, 1] {
            assert_eq!(ask(&raw(128, blocks << 8 | 123, 254, Some(0))), [true; 2]);
        }
    }
}
