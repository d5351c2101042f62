//! What the tests of RocksDB's SST files share: where in a file a damaged byte must be caught, and what reading
//! a damaged file may give.

use std::ops::Range;

use sstfilter_rocksdb::{
    RocksDbBlock, RocksDbChecksum, RocksDbTable, RocksDbTableError, RocksDbTableFilter,
};

/// Bytes of a footer of format version 1 and later.
const FOOTER_LEN: usize = 53;

/// The blocks `RocksDbTable` reads in `file` (with their trailers), and the footer: where a damaged byte must be
/// caught. `file` must open.
///
/// # Panics
///
/// If `file` is not a table `RocksDbTable` reads.
#[must_use]
pub fn read_regions(file: &[u8]) -> Vec<(RocksDbBlock, Range<usize>)> {
    let table = RocksDbTable::open(file).unwrap();
    let with_trailer = |offset: u64, size: u64| offset as usize..(offset + size) as usize + 5;
    let mut regions = vec![(RocksDbBlock::Footer, file.len() - FOOTER_LEN..file.len())];
    let ((offset, size), _) = footer_handle(file);
    regions.push((RocksDbBlock::MetaIndex, with_trailer(offset, size)));
    for meta in table.meta_blocks().map(Result::unwrap) {
        let block = match &meta.name[..] {
            b"rocksdb.properties" => RocksDbBlock::Properties,
            name if name.starts_with(b"fullfilter.") => RocksDbBlock::Filter,
            name if name.starts_with(b"partitionedfilter.") => RocksDbBlock::FilterPartitionIndex,
            _ => continue,
        };
        regions.push((block, with_trailer(meta.handle.offset, meta.handle.size)));
    }
    if let Some(RocksDbTableFilter::Partitioned(filter)) = table.filter().unwrap() {
        for p in filter.partitions() {
            regions.push((
                RocksDbBlock::FilterPartition,
                with_trailer(p.handle.offset, p.handle.size),
            ));
        }
    }
    regions
}

/// The meta-index block (offset, size) of `file`, whose footer is of format version 1 or later, and the footer's
/// offset: from version 6 the footer stores the size alone, the block ending where the footer starts, less its
/// trailer; before, a handle of two varints.
///
/// # Panics
///
/// If `file` is shorter than a footer, or its handle runs past it.
#[must_use]
pub fn footer_handle(file: &[u8]) -> ((u64, u64), usize) {
    let footer_offset = file.len() - FOOTER_LEN;
    let version = u32::from_le_bytes(file[file.len() - 12..file.len() - 8].try_into().unwrap());
    if version >= 6 {
        // After the checksum type, the extended magic, the footer checksum and the base context checksum.
        let at = footer_offset + 13;
        let size = u32::from_le_bytes(file[at..at + 4].try_into().unwrap());
        let offset = footer_offset - 5 - size as usize;
        return ((offset as u64, u64::from(size)), footer_offset);
    }
    let mut at = footer_offset + 1;
    let mut varint = || {
        let (mut value, mut shift) = (0u64, 0);
        loop {
            let byte = file[at];
            at += 1;
            value |= u64::from(byte & 0x7f) << shift;
            shift += 7;
            if byte < 0x80 {
                return value;
            }
        }
    };
    ((varint(), varint()), footer_offset)
}

/// What a reader makes of `file`, a damaged table of `keys`: an error (a damaged partition's where it is read), or
/// a filter that answers "may match" for every key of `keys`.
///
/// # Panics
///
/// If the filter answers "no match" for a key of `keys`, or disappears without an error (`what` says where).
pub fn read_damaged(file: &[u8], keys: &[Vec<u8>], what: &str) -> Result<(), RocksDbTableError> {
    let filter = RocksDbTable::open(file)?.filter()?;
    let filter =
        filter.unwrap_or_else(|| panic!("{what}: the filter disappeared without an error"));
    for key in keys {
        assert!(
            filter.may_contain(key),
            "{what}: a key of the table answered no match: {key:x?}"
        );
    }
    if let RocksDbTableFilter::Partitioned(filter) = &filter {
        for p in filter.partitions() {
            p.filter?;
        }
    }
    Ok(())
}

/// `file`, a table RocksDB wrote in `format_version` with the checksum type `checksum` (the footer's byte) and one of
/// its built-in filter policies, opened, and its filter.
///
/// # Panics
///
/// If the table does not open, is not what it was written as, or has no filter (`what` says which table).
#[must_use]
pub fn open_written<'a>(
    file: &'a [u8],
    format_version: u32,
    checksum: u8,
    what: &str,
) -> (RocksDbTable<'a>, RocksDbTableFilter<'a>) {
    let table = RocksDbTable::open(file).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(table.format_version(), format_version, "{what}");
    assert_eq!(
        Some(table.checksum()),
        RocksDbChecksum::from_byte(checksum),
        "{what}"
    );
    let filter = table
        .filter()
        .unwrap_or_else(|e| panic!("{what}: {e}"))
        .expect("a filter");
    assert_eq!(filter.policy(), "rocksdb.BuiltinBloomFilter", "{what}");
    (table, filter)
}
