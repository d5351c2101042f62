//! RocksDB's 64-bit key hash (`GetSliceHash64`, `Hash64(data, n)` in `util/hash.cc`): the *preview* of XXH3 that
//! RocksDB froze in `util/xxph3.h` (xxHash 0.7.2 with one change of RocksDB's for the empty input), with seed 0.
//! Its FastLocalBloom and Standard128Ribbon filters derive every probe from it, so it is part of their format and
//! reproduced exactly. It is *not* the released XXH3 (which the `xxhash-rust` crate implements): the short-input
//! mixes, the long-input accumulator and the empty input differ, so released XXH3 would give other filter bytes.
//!
//! Inputs of up to 16 bytes are mixed with one or two 64-bit products, up to 128 bytes in 16-byte pairs from both
//! ends, up to 240 bytes in 16-byte steps in two rounds, and longer inputs in 64-byte stripes accumulated into
//! eight lanes (the scalar form of the vectorised accumulator: all of them compute the same lanes).
//! Keys of up to 16 bytes (a table's usual keys) are hashed inline in a filter's query; the longer classes stay out
//! of line, so that the query stays small.

/// The 192-byte default secret of XXH3's preview (`kSecret`): the key material every mix takes bytes from.
const SECRET: [u8; 192] = [
    0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad,
    0x1c, //
    0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67,
    0x1f, //
    0xcb, 0x79, 0xe6, 0x4e, 0xcc, 0xc0, 0xe5, 0x78, 0x82, 0x5a, 0xd0, 0x7d, 0xcc, 0xff, 0x72,
    0x21, //
    0xb8, 0x08, 0x46, 0x74, 0xf7, 0x43, 0x24, 0x8e, 0xe0, 0x35, 0x90, 0xe6, 0x81, 0x3a, 0x26,
    0x4c, //
    0x3c, 0x28, 0x52, 0xbb, 0x91, 0xc3, 0x00, 0xcb, 0x88, 0xd0, 0x65, 0x8b, 0x1b, 0x53, 0x2e,
    0xa3, //
    0x71, 0x64, 0x48, 0x97, 0xa2, 0x0d, 0xf9, 0x4e, 0x38, 0x19, 0xef, 0x46, 0xa9, 0xde, 0xac,
    0xd8, //
    0xa8, 0xfa, 0x76, 0x3f, 0xe3, 0x9c, 0x34, 0x3f, 0xf9, 0xdc, 0xbb, 0xc7, 0xc7, 0x0b, 0x4f,
    0x1d, //
    0x8a, 0x51, 0xe0, 0x4b, 0xcd, 0xb4, 0x59, 0x31, 0xc8, 0x9f, 0x7e, 0xc9, 0xd9, 0x78, 0x73,
    0x64, //
    0xea, 0xc5, 0xac, 0x83, 0x34, 0xd3, 0xeb, 0xc3, 0xc5, 0x81, 0xa0, 0xff, 0xfa, 0x13, 0x63,
    0xeb, //
    0x17, 0x0d, 0xdd, 0x51, 0xb7, 0xf0, 0xda, 0x49, 0xd3, 0x16, 0x55, 0x26, 0x29, 0xd4, 0x68,
    0x9e, //
    0x2b, 0x16, 0xbe, 0x58, 0x7d, 0x47, 0xa1, 0xfc, 0x8f, 0xf8, 0xb8, 0xd1, 0x7a, 0xd0, 0x31,
    0xce, //
    0x45, 0xcb, 0x3a, 0x8f, 0x95, 0x16, 0x04, 0x28, 0xaf, 0xd7, 0xfb, 0xca, 0xbb, 0x4b, 0x40,
    0x7e, //
];

const PRIME32_1: u64 = 0x9E37_79B1;
const PRIME32_2: u64 = 0x85EB_CA77;
const PRIME32_3: u64 = 0xC2B2_AE3D;
const PRIME64_1: u64 = 0x9E37_79B1_85EB_CA87;
const PRIME64_2: u64 = 0xC2B2_AE3D_27D4_EB4F;
const PRIME64_3: u64 = 0x1656_67B1_9E37_79F9;
const PRIME64_4: u64 = 0x85EB_CA77_C2B2_AE63;
const PRIME64_5: u64 = 0x27D4_EB2F_1656_67C5;

/// Bytes of a stripe, the unit the long-input accumulator consumes.
const STRIPE: usize = 64;
/// Secret bytes the accumulator advances by per stripe.
const SECRET_STEP: usize = 8;
/// Stripes per block: the accumulator is scrambled after each block, when the secret is used up.
const STRIPES_PER_BLOCK: usize = (SECRET.len() - STRIPE) / SECRET_STEP;
/// Where the secret of the last stripe starts, counted back from the scrambler's (not a multiple of 8, so that
/// the two differ).
const LAST_STRIPE_OFFSET: usize = 7;
/// Where the secret of the final merge starts (not a multiple of 8, so that it differs from the accumulator's).
const MERGE_OFFSET: usize = 11;
/// Where the second round of a 129–240-byte input takes its secret from.
const MID_START_OFFSET: usize = 3;
/// Where the last 16 bytes of a 129–240-byte input take their secret from, counted back from the 136th byte.
const MID_LAST_OFFSET: usize = 17;
/// The smallest secret the preview allows; the last mid-size mix is placed against it.
const SECRET_SIZE_MIN: usize = 136;

/// RocksDB's 64-bit hash of `data` (`GetSliceHash64`): the hash its FastLocalBloom and Standard128Ribbon
/// filters are built on (`format_version` 5 and later). Stable across platforms: part of RocksDB's file format.
#[must_use]
#[inline]
pub fn rocksdb_hash64(data: &[u8]) -> u64 {
    match data.len() {
        0..=16 => short(data),
        17..=128 => up_to_128(data),
        129..=240 => up_to_240(data),
        _ => long(data),
    }
}

/// The secret's first and second u64, which every input of up to 16 bytes mixes in: constants, so that a short
/// key's hash (a table's typical key) reads no memory but the key.
const SECRET_0: u64 = u64::from_le_bytes([0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe]);
const SECRET_8: u64 = u64::from_le_bytes([0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c]);

/// The little-endian u64 at `at` of `bytes`; 0 past the end (no caller reads there: every offset is within the
/// input or the secret by the length checks of [`rocksdb_hash64`], and the tests cover every length class).
#[inline]
fn read64(bytes: &[u8], at: usize) -> u64 {
    bytes
        .get(at..)
        .and_then(|b| b.first_chunk::<8>())
        .map_or(0, |w| u64::from_le_bytes(*w))
}

/// The byte at `at` of `bytes`, as [`read64`].
#[inline]
fn byte(bytes: &[u8], at: usize) -> u64 {
    bytes.get(at).map_or(0, |&b| u64::from(b))
}

/// The 128-bit product of `a` and `b`, its halves folded with XOR.
#[inline]
fn mul_fold(a: u64, b: u64) -> u64 {
    let product = u128::from(a) * u128::from(b);
    (product as u64) ^ ((product >> 64) as u64) // NOTE: the two halves
}

/// The final mix every length class ends with.
#[inline]
fn avalanche(mut h: u64) -> u64 {
    h ^= h >> 37;
    h = h.wrapping_mul(PRIME64_3);
    h ^ (h >> 32)
}

/// Inputs of 0 to 16 bytes, each read as whole words from its two ends (the lengths make every read one).
#[inline]
fn short(data: &[u8]) -> u64 {
    let len = data.len() as u64; // NOTE: at most 16
    let word = |w: Option<&[u8; 8]>| w.map_or(0, |w| u64::from_le_bytes(*w));
    let half = |w: Option<&[u8; 4]>| w.map_or(0, |w| u64::from(u32::from_le_bytes(*w)));
    match data.len() {
        // RocksDB's change to the preview: the empty input hashes the secret instead of answering 0, which
        // multiplication-based uses of the hash handle badly.
        0 => mul_fold(SECRET_0, PRIME64_2),
        1..=3 => {
            let combined = byte(data, 0)
                | byte(data, data.len() >> 1) << 8
                | byte(data, data.len() - 1) << 16
                | len << 24;
            avalanche((combined ^ (SECRET_0 & 0xFFFF_FFFF)).wrapping_mul(PRIME64_1))
        }
        4..=8 => {
            let input = half(data.first_chunk()) | half(data.last_chunk()) << 32;
            let keyed = input ^ SECRET_0;
            let mix = len.wrapping_add((keyed ^ (keyed >> 51)).wrapping_mul(PRIME32_1));
            avalanche((mix ^ (mix >> 47)).wrapping_mul(PRIME64_2))
        }
        _ => {
            let lo = word(data.first_chunk()) ^ SECRET_0;
            let hi = word(data.last_chunk()) ^ SECRET_8;
            avalanche(
                len.wrapping_add(lo.wrapping_add(hi))
                    .wrapping_add(mul_fold(lo, hi)),
            )
        }
    }
}

/// 16 bytes of `data` at `at` mixed with 16 bytes of the secret at `secret_at`.
#[inline]
fn mix16(data: &[u8], at: usize, secret_at: usize) -> u64 {
    mul_fold(
        read64(data, at) ^ read64(&SECRET, secret_at),
        read64(data, at + 8) ^ read64(&SECRET, secret_at + 8),
    )
}

/// Inputs of 17 to 128 bytes: pairs of 16-byte pieces from both ends, as many pairs as the length needs.
#[inline(never)]
fn up_to_128(data: &[u8]) -> u64 {
    let len = data.len();
    let mut acc = (len as u64).wrapping_mul(PRIME64_1);
    // Pair `i` (from the outermost) is bytes `16·i` and `len − 16·(i + 1)`, with secret bytes `32·i` on.
    let pairs = match len {
        17..=32 => 1,
        33..=64 => 2,
        65..=96 => 3,
        _ => 4,
    };
    for i in 0..pairs {
        acc = acc
            .wrapping_add(mix16(data, 16 * i, 32 * i))
            .wrapping_add(mix16(data, len - 16 * (i + 1), 32 * i + 16));
    }
    avalanche(acc)
}

/// Inputs of 129 to 240 bytes: the first 128 bytes, an avalanche, then the rest in 16-byte steps with the secret
/// restarted at an offset, and the last 16 bytes.
#[inline(never)]
fn up_to_240(data: &[u8]) -> u64 {
    let len = data.len();
    let mut acc = (len as u64).wrapping_mul(PRIME64_1);
    for i in 0..8 {
        acc = acc.wrapping_add(mix16(data, 16 * i, 16 * i));
    }
    acc = avalanche(acc);
    for i in 8..len / 16 {
        acc = acc.wrapping_add(mix16(data, 16 * i, 16 * (i - 8) + MID_START_OFFSET));
    }
    acc = acc.wrapping_add(mix16(data, len - 16, SECRET_SIZE_MIN - MID_LAST_OFFSET));
    avalanche(acc)
}

/// Adds the stripe of `data` at `at` to the eight lanes, with the secret from `secret_at`. The preview adds each
/// input word to its own lane (released XXH3 swaps adjacent lanes).
#[inline]
fn accumulate(acc: &mut [u64; 8], data: &[u8], at: usize, secret_at: usize) {
    for (i, lane) in acc.iter_mut().enumerate() {
        let value = read64(data, at + 8 * i);
        let keyed = value ^ read64(&SECRET, secret_at + 8 * i);
        *lane = lane
            .wrapping_add(value)
            .wrapping_add((keyed & 0xFFFF_FFFF).wrapping_mul(keyed >> 32));
    }
}

/// Inputs over 240 bytes: 64-byte stripes into eight lanes, scrambled after each block of 16 stripes; the last
/// stripe ends at the input's end; the lanes are merged in pairs.
#[inline(never)]
fn long(data: &[u8]) -> u64 {
    let len = data.len();
    let mut acc = [
        PRIME32_3, PRIME64_1, PRIME64_2, PRIME64_3, PRIME64_4, PRIME32_2, PRIME64_5, PRIME32_1,
    ];
    let block = STRIPE * STRIPES_PER_BLOCK;
    let blocks = len / block;
    for b in 0..blocks {
        for s in 0..STRIPES_PER_BLOCK {
            accumulate(&mut acc, data, b * block + s * STRIPE, s * SECRET_STEP);
        }
        let scramble_at = SECRET.len() - STRIPE;
        for (i, lane) in acc.iter_mut().enumerate() {
            let mut v = *lane;
            v ^= v >> 47;
            v ^= read64(&SECRET, scramble_at + 8 * i);
            *lane = v.wrapping_mul(PRIME32_1);
        }
    }
    let stripes = (len - blocks * block) / STRIPE;
    for s in 0..stripes {
        accumulate(&mut acc, data, blocks * block + s * STRIPE, s * SECRET_STEP);
    }
    if !len.is_multiple_of(STRIPE) {
        accumulate(
            &mut acc,
            data,
            len - STRIPE,
            SECRET.len() - STRIPE - LAST_STRIPE_OFFSET,
        );
    }
    let mut result = (len as u64).wrapping_mul(PRIME64_1);
    for pair in 0..4 {
        let (a, b) = (acc.get(2 * pair), acc.get(2 * pair + 1));
        let (a, b) = (a.copied().unwrap_or(0), b.copied().unwrap_or(0));
        result = result.wrapping_add(mul_fold(
            a ^ read64(&SECRET, MERGE_OFFSET + 16 * pair),
            b ^ read64(&SECRET, MERGE_OFFSET + 16 * pair + 8),
        ));
    }
    avalanche(result)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// RocksDB's own `util/hash_test.cc` (`Hash64SmallValueSchema`, v7.8.3): inputs of 0 to 10 bytes and the
    /// hashes RocksDB pins for them.
    #[test]
    fn small_values_hash_as_rocksdb_pins_them() {
        let cases: [(&[u8], u64); 41] = [
            (b"", 5999572062939766020),
            (b"\x08", 583283813901344696),
            (b"\x17", 16175549975585474943),
            (b"\x9a", 16322991629225003903),
            (b"\x1c", 13269285487706833447),
            (b"\x4d\x76", 6859542833406258115),
            (b"\x52\xd5", 4919611532550636959),
            (b"\x91\xf7", 14199427467559720719),
            (b"\xd6\x27", 12292689282614532691),
            (b"\x30\x46\x0b", 11404699285340020889),
            (b"\x56\xdc\xd6", 12404347133785524237),
            (b"\xd4\x52\x33", 15853805298481534034),
            (b"\x6a\xb5\xf4", 16863488758399383382),
            (b"\x67\x53\x81\x1c", 9010661983527562386),
            (b"\x69\xb8\xc0\x88", 6611781377647041447),
            (b"\x1e\x84\xaf\x2d", 15290969111616346501),
            (b"\x46\xdc\x54\xbe", 7063754590279313623),
            (b"\xd0\x7a\x6e\xea\x56", 6384167718754869899),
            (b"\x86\x83\xd5\xa4\xd8", 16874407254108011067),
            (b"\xb7\x46\xbb\x77\xce", 16809880630149135206),
            (b"\x6c\xa8\xbc\xe5\x99", 1249038833153141148),
            (b"\x5c\x5e\xe1\xa0\x73\x81", 17358142495308219330),
            (b"\x08\x5d\x73\x1c\xe5\x2e", 4237646583134806322),
            (b"\x42\xfb\xf2\x52\xb4\x10", 4373664924115234051),
            (b"\x73\xe1\xff\x56\x9c\xce", 12012981210634596029),
            (b"\x5c\xbe\x97\x75\x54\x9a\x52", 5716522398211028826),
            (b"\x16\x82\x39\x49\x88\x2b\x36", 15604531309862565013),
            (b"\x59\x77\xf0\xa7\x24\xf4\x78", 8601330687345614172),
            (b"\xd3\xa5\x7c\x0e\xc0\x02\x07", 8088079329364056942),
            (b"\x31\x1b\x98\x75\x96\x22\xd3\x9a", 9844314944338447628),
            (b"\x38\xd6\xf7\x28\x20\xb4\x8a\xe9", 10973293517982163143),
            (b"\xbb\x18\x5d\xf4\x12\x03\xf7\x99", 9986007080564743219),
            (b"\x80\xd4\x3b\x3b\xae\x22\xa2\x78", 1729303145008254458),
            (
                b"\x1a\xb5\xd0\xfe\xab\xc3\x61\xb2\x99",
                13253403748084181481,
            ),
            (b"\x8e\x4a\xc3\x18\x20\x2f\x06\xe6\x3c", 7768754303876232188),
            (b"\xb6\xc0\xdd\x05\x3f\xc4\x86\x4c\xef", 12439346786701492),
            (
                b"\x9a\x5f\x78\x0d\xaf\x50\xe1\x1f\x55",
                10841838338450144690,
            ),
            (
                b"\x22\x6f\x39\x1f\xf8\xdd\x4f\x52\x17\x94",
                12883919702069153152,
            ),
            (
                b"\x32\x89\x2a\x75\x48\x3a\x4a\x02\x69\xdd",
                12692903507676842188,
            ),
            (
                b"\x06\x92\x5c\xf4\x88\x0e\x7e\x68\x38\x3e",
                6540985900674032620,
            ),
            (
                b"\xbd\x2c\x63\x38\xbf\xe9\x78\xb7\xbf\x15",
                10551812464348219044,
            ),
        ];
        for (input, want) in cases {
            assert_eq!(rocksdb_hash64(input), want, "{input:x?}");
        }
    }

    /// RocksDB's `Hash64TestDescriptor`: one character per length `0..limit` of `repeat` repeated, the hash of
    /// that prefix modulo 61.
    fn descriptor(repeat: &[u8], limit: usize) -> String {
        const ENCODE: &[u8] = b"abcdefghijklmnopqrstuvwxyz123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ";
        let input: Vec<u8> = repeat.iter().copied().cycle().take(limit).collect();
        (0..limit)
            .map(|i| char::from(ENCODE[(rocksdb_hash64(&input[..i]) % 61) as usize]))
            .collect()
    }

    /// RocksDB's own `Hash64LargeValueSchema` (v7.8.3): every length up to 430, which covers every length class
    /// (short, 17–128, 129–240, and long inputs of one block and a partial one).
    #[test]
    fn every_length_up_to_430_hashes_as_rocksdb_pins_it() {
        let want = [
            (
                &b"foo"[..],
                "cRhyWsY67B6klRA1udmOuiYuX7IthyGBKqbeosz2hzVglWCmQx8nEdnpkvPfYX56Up2OWOTV\
                 lTzfAoYwvtqKzjD8E9xttR2unelbXbIV67NUe6bOO23BxaSFRcA3njGu5cUWfgwOqNoTsszp\
                 uPvKRP6qaUR5VdoBkJUCFIefd7edlNK5mv6JYWaGdwxehg65hTkTmjZoPKxTZo4PLyzbL9U4\
                 xt12ITSfeP2MfBHuLI2z2pDlBb44UQKVMx27LEoAHsdLp3WfWfgH3sdRBRCHm33UxCM4QmE2\
                 xJ7gqSvNwTeH7v9GlC8zWbGroyD3UVNeShMLx29O7tH1biemLULwAHyIw8zdtLMDpEJ8m2ic\
                 l6Lb4fDuuFNAs1GCVUthjK8CV8SWI8Rsz5THSwn5CGhpqUwSZcFknjwWIl5rNCvDxXJqYr",
            ),
            (
                b"Rocks",
                "c1EeRkrzgOYWLA8PuhJrwTePJewoB44WdXYDfhbk3ZxTqqg25WlPExDl7IKIQLJvnA6gJxxn\
                 9TCSLkFGfJeXehaSS1GBqWSzfhEH4VXiXIUCuxJXxtKXcSC6FrNIQGTZbYDiUOLD6Y5inzrF\
                 9etwQhXUBanw55xAUdNMFQAm2GjJ6UDWp2mISLiMMkLjANWMKLaZMqaFLX37qB4MRO1ooVRv\
                 zSvaNRSCLxlggQCasQq8icWjzf3HjBlZtU6pd4rkaUxSzHqmo9oM5MghbU5Rtxg8wEfO7lVN\
                 5wdMONYecslQTwjZUpO1K3LDf3K3XK6sUXM6ShQQ3RHmMn2acB4YtTZ3QQcHYJSOHn2DuWpa\
                 Q8RqzX5lab92YmOLaCdOHq1BPsM7SIBzMdLgePNsJ1vvMALxAaoDUHPxoFLO2wx18IXnyX",
            ),
            (
                b"RocksDB",
                "c1EeRkukbkb28wLTahwD2sfUhZzaBEnF8SVrxnPVB6A7b8CaAl3UKsDZISF92GSq2wDCukOq\
                 Jgrsp7A3KZhDiLW8dFXp8UPqPxMCRlMdZeVeJ2dJxrmA6cyt99zkQFj7ELbut6jAeVqARFnw\
                 fnWVXOsaLrq7bDCbMcns2DKvTaaqTCLMYxI7nhtLpFN1jR755FRQFcOzrrDbh7QhypjdvlYw\
                 cdAMSZgp9JMHxbM23wPSuH6BOFgxejz35PScZfhDPvTOxIy1jc3MZsWrMC3P324zNolO7JdW\
                 CX2I5UDKjjaEJfxbgVgJIXxtQGlmj2xkO5sPpjULQV4X2HlY7FQleJ4QRaJIB4buhCA4vUTF\
                 eMFlxCIYUpTCsal2qsmnGOWa8WCcefrohMjDj1fjzSvSaQwlpyR1GZHF2uPOoQagiCpHpm",
            ),
        ];
        for (repeat, want) in want {
            assert_eq!(
                descriptor(repeat, 430),
                want,
                "{}",
                String::from_utf8_lossy(repeat)
            );
        }
    }
}
