//! Positioned reads: the one I/O primitive a [`Table`](super::Table) needs.
//!
//! A positioned read takes `&self` and no cursor, so one open file serves concurrent lookups without a lock, and
//! each data-block read is exactly one read call at the file layer, which is what the table counts.

use std::io;
use std::sync::Arc;

/// A source of bytes that can be read at any offset: a file, an in-memory buffer, or an adapter over an object
/// store's ranged GET.
pub trait ReadAt {
    /// Fills `buf` with the bytes at `offset ..offset + buf.len()`, or fails (with
    /// [`io::ErrorKind::UnexpectedEof`] if the source is shorter).
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()>;
}

#[cfg(unix)]
impl ReadAt for std::fs::File {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        std::os::unix::fs::FileExt::read_exact_at(self, buf, offset)
    }
}

#[cfg(windows)]
impl ReadAt for std::fs::File {
    fn read_exact_at(&self, mut buf: &mut [u8], mut offset: u64) -> io::Result<()> {
        // `seek_read` may return short counts; loop like `read_exact_at` on Unix does.
        while !buf.is_empty() {
            match std::os::windows::fs::FileExt::seek_read(self, buf, offset) {
                Ok(0) => return Err(io::ErrorKind::UnexpectedEof.into()),
                Ok(n) => {
                    buf = buf.get_mut(n..).unwrap_or_default();
                    offset += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(())
    }
}

impl ReadAt for [u8] {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        let source = usize::try_from(offset)
            .ok()
            .and_then(|start| self.get(start..)?.get(..buf.len()))
            .ok_or(io::ErrorKind::UnexpectedEof)?;
        buf.copy_from_slice(source);
        Ok(())
    }
}

impl ReadAt for Vec<u8> {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        self.as_slice().read_exact_at(buf, offset)
    }
}

impl<R: ReadAt + ?Sized> ReadAt for &R {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        (**self).read_exact_at(buf, offset)
    }
}

impl<R: ReadAt + ?Sized> ReadAt for Box<R> {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        (**self).read_exact_at(buf, offset)
    }
}

impl<R: ReadAt + ?Sized> ReadAt for Arc<R> {
    fn read_exact_at(&self, buf: &mut [u8], offset: u64) -> io::Result<()> {
        (**self).read_exact_at(buf, offset)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slices_read_in_bounds_and_report_eof_past_the_end() {
        let data = b"0123456789".to_vec();
        let mut buf = [0u8; 4];
        data.read_exact_at(&mut buf, 3).unwrap();
        assert_eq!(&buf, b"3456");
        data.read_exact_at(&mut buf, 6).unwrap();
        assert_eq!(&buf, b"6789");
        for offset in [7, 10, u64::MAX] {
            let err = data.read_exact_at(&mut buf, offset).unwrap_err();
            assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof, "offset {offset}");
        }
        data.read_exact_at(&mut [], 10).unwrap();
    }

    #[cfg(unix)]
    #[test]
    fn files_read_at_positions() {
        use std::io::Write;
        let mut file = tempfile::tempfile().unwrap();
        file.write_all(b"hello, table").unwrap();
        let mut buf = [0u8; 5];
        file.read_exact_at(&mut buf, 7).unwrap();
        assert_eq!(&buf, b"table");
        let err = file.read_exact_at(&mut buf, 9).unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::UnexpectedEof);
    }
}
