//! Bounds-checked little-endian reads over untrusted bytes.
//!
//! Decoders read fields in the order the format lays them out; every read returns `None` instead of panicking
//! when the input is exhausted, so a decoder maps that to its own typed error with `?`/`ok_or`.

/// A cursor over a byte slice that yields fixed-size little-endian fields in order.
#[derive(Debug, Clone, Copy)]
pub(crate) struct LeReader<'a> {
    rest: &'a [u8],
}

impl<'a> LeReader<'a> {
    /// Starts reading at the beginning of `bytes`.
    pub(crate) fn new(bytes: &'a [u8]) -> Self {
        LeReader { rest: bytes }
    }

    /// The next `N` bytes, or `None` if fewer remain.
    pub(crate) fn array<const N: usize>(&mut self) -> Option<[u8; N]> {
        let (head, rest) = self.rest.split_first_chunk::<N>()?;
        self.rest = rest;
        Some(*head)
    }

    /// The next byte.
    pub(crate) fn u8(&mut self) -> Option<u8> {
        self.array::<1>().map(|[b]| b)
    }

    /// The next little-endian `u16`.
    pub(crate) fn u16(&mut self) -> Option<u16> {
        self.array().map(u16::from_le_bytes)
    }

    /// The next little-endian `u32`.
    pub(crate) fn u32(&mut self) -> Option<u32> {
        self.array().map(u32::from_le_bytes)
    }

    /// The next little-endian `u64`.
    pub(crate) fn u64(&mut self) -> Option<u64> {
        self.array().map(u64::from_le_bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_fields_in_order_and_stops_at_the_end() {
        let bytes = [1u8, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16];
        let mut r = LeReader::new(&bytes);
        assert_eq!(r.u8(), Some(1));
        assert_eq!(r.u16(), Some(0x0302));
        assert_eq!(r.u32(), Some(0x0706_0504));
        assert_eq!(r.u64(), Some(0x0f0e_0d0c_0b0a_0908));
        assert_eq!(r.u16(), None);
        assert_eq!(r.u8(), Some(16));
        assert_eq!(r.u8(), None);
    }
}
