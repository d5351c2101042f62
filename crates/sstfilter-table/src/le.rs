//! Bounds-checked reads of the table's fixed-width little-endian fields: each takes bytes off the front of the
//! unread rest of a buffer and gives `None` instead of panicking when too few remain, which the decoder maps to
//! its typed error.

/// Takes the next `N` bytes off the front of `rest` (a `u32` with `u32::from_le_bytes(take(..)?)`).
pub(crate) fn take<const N: usize>(rest: &mut &[u8]) -> Option<[u8; N]> {
    let (head, tail) = rest.split_first_chunk::<N>()?;
    *rest = tail;
    Some(*head)
}

/// Takes the next `len` bytes off the front of `rest`, borrowed (a key or a value).
pub(crate) fn take_slice<'a>(rest: &mut &'a [u8], len: usize) -> Option<&'a [u8]> {
    let (head, tail) = rest.split_at_checked(len)?;
    *rest = tail;
    Some(head)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn takes_fields_in_order_and_stops_at_the_end() {
        let bytes = [3u8, 0, 0, 0, b'a', b'b', b'c', b'd'];
        let mut rest = &bytes[..];
        let len = u32::from_le_bytes(take(&mut rest).unwrap()) as usize;
        assert_eq!(take_slice(&mut rest, len), Some(&b"abc"[..]));
        assert_eq!(take_slice(&mut rest, 2), None, "only one byte is left");
        assert_eq!(take::<8>(&mut rest), None);
        assert_eq!(take_slice(&mut rest, 1), Some(&b"d"[..]));
        assert_eq!(take_slice(&mut rest, 0), Some(&b""[..]));
    }
}
