//! CRC32C (Castagnoli), the checksum RocksDB's tables use by default, in software: `crc32fast` computes the IEEE
//! polynomial only, and the core crate takes no further dependency for one more polynomial.
//!
//! Eight bytes a step through eight tables ("slicing by 8"), built at compile time: about as fast as the bytes can
//! be read without CPU-specific instructions, which matters little here (a table's meta blocks are checked once
//! when they are read).

/// The Castagnoli polynomial, bit-reversed (CRC32C shifts right, least significant bit first).
const POLY: u32 = 0x82F6_3B78;

/// `TABLES[k][b]`: the CRC register after the byte `b` followed by `k` zero bytes, from a zero register.
const TABLES: [[u32; 256]; 8] = tables();

/// Builds [`TABLES`] bit by bit: entry `b` of table `k` is `b` shifted through `8 × (k + 1)` bit steps, which is
/// what the byte `b` and then `k` zero bytes do to a zero register. (Written without indexing, which the crate's
/// lints deny outside tests.)
const fn tables() -> [[u32; 256]; 8] {
    let mut tables = [[0u32; 256]; 8];
    let mut rest: &mut [[u32; 256]] = &mut tables;
    let mut k = 0;
    while let Some((table, tail)) = rest.split_first_mut() {
        let mut slots: &mut [u32] = table;
        let mut byte = 0;
        while let Some((slot, more)) = slots.split_first_mut() {
            let mut crc = byte;
            let mut step = 0;
            while step < 8 * (k + 1) {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ POLY
                } else {
                    crc >> 1
                };
                step += 1;
            }
            *slot = crc;
            slots = more;
            byte += 1;
        }
        rest = tail;
        k += 1;
    }
    tables
}

/// Entry `index` (a byte) of `table`.
#[inline]
fn at(table: &[u32; 256], index: u32) -> u32 {
    // The index is a byte, always in bounds: the check compiles away.
    table.get((index & 0xff) as usize).copied().unwrap_or(0)
}

/// The CRC32C of `data` (RocksDB's `crc32c::Value`).
pub(crate) fn crc32c(data: &[u8]) -> u32 {
    let [t0, t1, t2, t3, t4, t5, t6, t7] = &TABLES;
    let (chunks, tail) = data.as_chunks::<8>();
    let mut crc = !0u32;
    for &[a, b, c, d, e, f, g, h] in chunks {
        let low = crc ^ u32::from_le_bytes([a, b, c, d]);
        let high = u32::from_le_bytes([e, f, g, h]);
        crc = at(t7, low)
            ^ at(t6, low >> 8)
            ^ at(t5, low >> 16)
            ^ at(t4, low >> 24)
            ^ at(t3, high)
            ^ at(t2, high >> 8)
            ^ at(t1, high >> 16)
            ^ at(t0, high >> 24);
    }
    for &byte in tail {
        crc = (crc >> 8) ^ at(t0, crc ^ u32::from(byte));
    }
    !crc
}

/// The form RocksDB stores a CRC32C in (`crc32c::Mask`): rotated and offset, so that the CRC of bytes that
/// themselves hold a CRC is not a fixed value.
pub(crate) const fn mask(crc: u32) -> u32 {
    crc.rotate_right(15).wrapping_add(0xa282_ead8)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The CRC one bit at a time, straight from the polynomial.
    fn bitwise(data: &[u8]) -> u32 {
        let mut crc = !0u32;
        for &byte in data {
            crc ^= u32::from(byte);
            for _ in 0..8 {
                crc = if crc & 1 == 1 {
                    (crc >> 1) ^ POLY
                } else {
                    crc >> 1
                };
            }
        }
        !crc
    }

    #[test]
    fn check_values() {
        // The catalogue's check value, and RFC 3720's (iSCSI) test vectors.
        assert_eq!(crc32c(b"123456789"), 0xE306_9283);
        assert_eq!(crc32c(b""), 0);
        assert_eq!(crc32c(&[0u8; 32]), 0x8A91_36AA);
        assert_eq!(crc32c(&[0xffu8; 32]), 0x62A8_AB43);
        let ascending: Vec<u8> = (0..32).collect();
        assert_eq!(crc32c(&ascending), 0x46DD_794E);
        let descending: Vec<u8> = (0..32).rev().collect();
        assert_eq!(crc32c(&descending), 0x113F_DB5C);
        // RocksDB's `crc32c_test`: "a" and "foo" (crc32c::Value), and the masked form of "foo" (crc32c::Mask).
        assert_eq!(crc32c(b"a"), 0xC1D0_4330);
        assert_eq!(crc32c(b"foo"), 0xCFC4_AE1D);
        assert_eq!(mask(crc32c(b"foo")), 0xFEBE_8A61);
    }

    #[test]
    fn every_length_and_alignment_is_the_bitwise_crc() {
        let data: Vec<u8> = (0..300u32).map(|i| ((i * 7919) >> 3) as u8).collect();
        for start in 0..9 {
            for end in start..data.len() {
                assert_eq!(crc32c(&data[start..end]), bitwise(&data[start..end]));
            }
        }
    }

    #[test]
    fn mask_rotates_and_offsets() {
        assert_eq!(mask(0), 0xa282_ead8);
        assert_eq!(mask(1), (1u32 << 17).wrapping_add(0xa282_ead8));
        assert_eq!(mask(0x8000), 1u32.wrapping_add(0xa282_ead8));
    }
}
