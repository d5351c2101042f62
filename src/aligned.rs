//! [`AlignedBlock`]: an owned block buffer that starts on a cache-line boundary.
//!
//! A BlockedBloom payload is an array of 64-byte blocks, one per key, so that a query touches one cache line. That
//! holds only if the payload starts on a 64-byte boundary: the global allocator places a `Vec<u8>` of a few MiB
//! 16 bytes past one on Linux/glibc, and then every block straddles two lines and a query may miss twice. A store
//! that loads a filter block into its cache once and queries it millions of times can afford to place it well.

use core::fmt;

/// An owned, fixed-size byte buffer whose first byte is 64-byte aligned, for holding a filter block in a store's
/// cache; [`FilterBlock`](crate::FilterBlock) opens it like any `AsRef<[u8]>`.
///
/// Fill it once, where the block enters the cache, without an extra copy: [`zeroed`](Self::zeroed) then read the
/// block straight into [`AsMut::as_mut`] (a positioned file read, an object-store response copied in), or
/// [`copy_from`](Self::copy_from) bytes already in memory.
///
/// ```
/// use sstfilter::{AlignedBlock, BlockedBloomPolicy, FilterBlock, FilterBlockBuilder};
///
/// let mut builder = FilterBlockBuilder::new(BlockedBloomPolicy::new(10.0)?);
/// builder.add_key(b"apple");
/// let bytes = builder.finish(); // as read from a table file
///
/// let mut cached = AlignedBlock::zeroed(bytes.len());
/// cached.as_mut().copy_from_slice(&bytes); // e.g. `file.read_exact_at(cached.as_mut(), offset)`
/// assert_eq!(cached.as_ptr() as usize % 64, 0);
/// let filter = FilterBlock::open(cached)?;
/// assert!(filter.may_contain(b"apple"));
/// # Ok::<(), Box<dyn std::error::Error>>(())
/// ```
///
/// Any alignment reads correctly; this one puts each key's 64 bytes in one cache line. What that is worth depends
/// on the machine: BENCHMARKS.md 4b has aligned and plain blocks side by side. (Aligning needs no `unsafe`: the
/// buffer is allocated 63 bytes longer and the block starts at the first aligned byte in it. It never grows, so it
/// never moves.)
pub struct AlignedBlock {
    /// The block from `start` to the end: shortened, never grown, so its bytes stay where they were allocated. A
    /// view of the block is then one bound checked, on every query of a filter held in one.
    buf: Vec<u8>,
    start: usize,
}

impl AlignedBlock {
    /// The alignment of the first byte: one cache line on every mainstream CPU.
    pub(crate) const ALIGN: usize = 64;

    /// A zeroed buffer of `len` bytes, to be filled through [`AsMut::as_mut`].
    #[must_use]
    pub fn zeroed(len: usize) -> Self {
        let mut buf = vec![0u8; len.saturating_add(Self::ALIGN - 1)];
        // `align_offset` may in principle decline (usize::MAX); the block then starts unaligned, which is slower but
        // reads the same.
        let start = match buf.as_ptr().align_offset(Self::ALIGN) {
            offset if offset < Self::ALIGN => offset,
            _ => 0,
        };
        buf.truncate(start.saturating_add(len));
        AlignedBlock { buf, start }
    }

    /// An aligned copy of `bytes`.
    #[must_use]
    pub fn copy_from(bytes: &[u8]) -> Self {
        let mut block = Self::zeroed(bytes.len());
        block.as_mut().copy_from_slice(bytes);
        block
    }

    /// Shortens the block to its first `len` bytes (nothing if it is not longer), keeping its place: for a block
    /// read together with what follows it, such as a table's checksum.
    pub fn truncate(&mut self, len: usize) {
        self.buf.truncate(self.start.saturating_add(len));
    }
}

/// The block's bytes, as a slice (its length, its bytes, a read into it).
impl core::ops::Deref for AlignedBlock {
    type Target = [u8];

    fn deref(&self) -> &[u8] {
        self.as_ref()
    }
}

impl core::ops::DerefMut for AlignedBlock {
    fn deref_mut(&mut self) -> &mut [u8] {
        self.as_mut()
    }
}

impl AsRef<[u8]> for AlignedBlock {
    fn as_ref(&self) -> &[u8] {
        self.buf.get(self.start..).unwrap_or_default()
    }
}

impl AsMut<[u8]> for AlignedBlock {
    fn as_mut(&mut self) -> &mut [u8] {
        self.buf.get_mut(self.start..).unwrap_or_default()
    }
}

impl Clone for AlignedBlock {
    /// An aligned copy (a plain copy of the buffer would put the block at another offset).
    fn clone(&self) -> Self {
        Self::copy_from(self.as_ref())
    }
}

impl PartialEq for AlignedBlock {
    fn eq(&self, other: &Self) -> bool {
        self.as_ref() == other.as_ref()
    }
}

impl Eq for AlignedBlock {}

impl fmt::Debug for AlignedBlock {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AlignedBlock")
            .field("len", &self.len())
            .finish_non_exhaustive()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn starts_aligned_keeps_its_bytes_and_clones_aligned() {
        for len in [0usize, 1, 63, 64, 65, 4096, 100_003] {
            let bytes: Vec<u8> = (0..len).map(|i| (i * 7) as u8).collect();
            let block = AlignedBlock::copy_from(&bytes);
            assert_eq!(block.as_ref(), &bytes[..]);
            assert_eq!(block.len(), len);
            assert_eq!(block.is_empty(), len == 0);
            assert_eq!(block.as_ref().as_ptr() as usize % AlignedBlock::ALIGN, 0);
            let copy = block.clone();
            assert_eq!(copy, block);
            assert_eq!(copy.as_ref().as_ptr() as usize % AlignedBlock::ALIGN, 0);
            // Moving the block (into a box) moves its header, not its bytes.
            let mut moved = [block];
            assert_eq!(moved[0].as_ref().as_ptr() as usize % AlignedBlock::ALIGN, 0);
            moved[0].truncate(len / 2);
            assert_eq!(moved[0].as_ref(), &bytes[..len / 2]);
            moved[0].truncate(len);
            assert_eq!(moved[0].len(), len / 2, "truncating never lengthens");
        }
    }
}
