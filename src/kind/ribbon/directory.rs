//! The shard directory at the end of the payload: where each shard's slots begin and which seed solved it.
//!
//! ```text
//! record 0         record 1               record S-1        end
//! +--------+----+--------+----+-- ... --+--------+----+--------+
//! | lo u32 |seed| lo u32 |seed|         | lo u32 |seed| T u32  |
//! +--------+----+--------+----+-- ... --+--------+----+--------+
//! ```
//!
//! Shard `s` owns slots `lo(s) .. lo(s + 1)` (the last one up to `T`, the total), so a query reads 9 bytes at
//! `5·s`: its own record and the next shard's first slot.

/// Bytes of one record: first slot (u32) and seed (u8).
const RECORD_LEN: usize = 5;

/// A shard as recorded in the directory. Nothing is validated here: the query checks the bounds it needs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Shard {
    /// First slot of the shard.
    pub(crate) lo: u64,
    /// One past the last slot.
    pub(crate) hi: u64,
    /// The seed its rows were derived with.
    pub(crate) seed: u8,
}

/// Length in bytes of the directory of `num_shards` shards.
pub(crate) const fn len(num_shards: u64) -> u64 {
    num_shards * RECORD_LEN as u64 + 4
}

/// Shard `s` of the directory `dir`, or `None` if `dir` is too short to hold it.
#[inline(always)]
pub(crate) fn shard(dir: &[u8], s: usize) -> Option<Shard> {
    let at = s.checked_mul(RECORD_LEN)?;
    let &[a, b, c, d, seed, e, f, g, h] = dir.get(at..)?.first_chunk::<{ RECORD_LEN + 4 }>()?;
    Some(Shard {
        lo: u64::from(u32::from_le_bytes([a, b, c, d])),
        hi: u64::from(u32::from_le_bytes([e, f, g, h])),
        seed,
    })
}

/// Writes the directory of the shards that begin at `firsts` (ascending), solved with `seeds`, and end at
/// `total` slots, into `dir` (exactly [`len`] bytes).
pub(crate) fn write(dir: &mut [u8], firsts: &[u32], seeds: &[u8], total: u32) {
    let (records, end) = dir.as_chunks_mut::<RECORD_LEN>();
    for ((record, &lo), &seed) in records.iter_mut().zip(firsts).zip(seeds) {
        let [a, b, c, d] = lo.to_le_bytes();
        *record = [a, b, c, d, seed]; // NOTE: first slot (LE u32), then the seed byte.
    }
    if let Ok(end) = <&mut [u8; 4]>::try_from(end) {
        *end = total.to_le_bytes(); // NOTE: the total slot count closes the last shard.
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip() {
        let mut dir = vec![0u8; len(3) as usize];
        assert_eq!(dir.len(), 19);
        write(&mut dir, &[0, 300, 300], &[0, 7, 255], 1000);
        let s: Vec<Shard> = (0..3).map(|s| shard(&dir, s).unwrap()).collect();
        assert_eq!(
            s[0],
            Shard {
                lo: 0,
                hi: 300,
                seed: 0
            }
        );
        assert_eq!(
            s[1],
            Shard {
                lo: 300,
                hi: 300,
                seed: 7
            }
        );
        assert_eq!(
            s[2],
            Shard {
                lo: 300,
                hi: 1000,
                seed: 255
            }
        );
        assert_eq!(shard(&dir, 3), None);
        assert_eq!(shard(&dir, usize::MAX), None);
        assert_eq!(&dir[..5], &[0, 0, 0, 0, 0]);
        assert_eq!(&dir[15..], &1000u32.to_le_bytes());
    }
}
