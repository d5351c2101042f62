//! A reader of sstfilter blocks written from FORMAT.md alone, for differential tests against the crate's reader.
//!
//! Deliberately slow and obvious: no code is shared with `src/` (not even the CRC), every formula is transcribed
//! from the specification's text with its section number, integers are widened to `u128` rather than reasoned
//! about, and nothing is optimised. If this reader and `FilterBlock` ever disagree, FORMAT.md and the code
//! disagree, and one of them must change. The key hash (section 4.1) is taken as an input: it is xxh3-64, which
//! FORMAT.md defines by reference to the xxHash library, and the `xxhash-rust` crate provides it.
//!
//! Used by `tests/spec_reader.rs`, `tests/golden.rs`, `tests/no_false_negatives.rs`, `tests/partitioned.rs` and
//! `tests/golden_table.rs` (section 9, in `table.rs`); each uses a part of it.
#![allow(
    dead_code,
    reason = "each test binary uses a part of this module, and a different part: not an `expect`, which every \
              binary would have to fulfil"
)]

pub mod table;

/// Section 2: the trailer is 36 bytes.
pub const TRAILER_LEN: usize = 36;

/// Why the reader refuses a block (section 2's "reader's action" column and each kind's parameter table).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// Shorter than the trailer.
    TooShort,
    /// Section 2: magic is not "SSTF".
    BadMagic,
    /// Section 2: version 0 or newer than 2.
    UnsupportedVersion,
    /// Section 3: a reserved or unknown tag (tag 16 in a version-1 trailer included).
    UnknownKind(u8),
    /// Sections 2 and 3: tag 16 in a version-2 trailer, a partition index rather than a filter block.
    PartitionIndex,
    /// A field outside its valid values.
    BadParams(&'static str),
    /// The payload length does not match the parameters.
    LengthMismatch,
}

/// A kind's parameters as section 4 defines them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Section 4.2.
    BlockedBloom { k: u32, num_blocks: u64 },
    /// Section 4.3: `r`, shard count `S`, block count `B`, first upper block `U`.
    Ribbon {
        r: u32,
        shards: u64,
        blocks: u64,
        upper_start: u64,
    },
    /// Section 4.4: probe count `k`, bit count `m`.
    StandardBloom { k: u32, m: u64 },
    /// Section 4.5: range length `2^s`, low bits `l`, prefix length `p`, positions `m`, longest key `e`, universe
    /// `r`.
    Range {
        s: u32,
        l: u32,
        p: u64,
        m: u64,
        e: u64,
        r: u64,
    },
}

/// An opened block: the payload and what its trailer says.
#[derive(Debug, Clone)]
pub struct SpecBlock<'a> {
    pub payload: &'a [u8],
    pub version: u8,
    pub kind: Kind,
    pub num_keys: u64,
    /// Section 2.1: the prefix extractor's name, if the block holds prefixes.
    pub prefix_name: Option<String>,
    /// Section 2.1: whether whole keys were added (false only with prefixes only).
    pub whole_keys: bool,
    /// Whether the stored CRC32 matches (section 2: checked by `verify`, not by `open`).
    pub checksum_ok: bool,
}

fn le(bytes: &[u8]) -> u64 {
    bytes
        .iter()
        .rev()
        .fold(0u64, |acc, &b| (acc << 8) | u64::from(b))
}

/// Section 2: CRC-32, IEEE 802.3 polynomial, reflected (0xEDB88320), initial value and final xor all ones.
pub fn crc32(bytes: &[u8]) -> u32 {
    let mut crc = 0xFFFF_FFFFu32;
    for &byte in bytes {
        crc ^= u32::from(byte);
        for _ in 0..8 {
            crc = if crc & 1 == 1 {
                (crc >> 1) ^ 0xEDB8_8320
            } else {
                crc >> 1
            };
        }
    }
    !crc
}

/// Recomputes a block's stored CRC32 (section 2) over its bytes before the last four, as an attacker, or a bug that
/// rewrites a block and its checksum, would: only the structure checks then stand between damage and the probes.
pub fn reseal(block: &mut [u8]) {
    let end = block.len() - 4;
    let crc = crc32(&block[..end]);
    block[end..].copy_from_slice(&crc.to_le_bytes());
}

/// Sections 1–4: split a block into payload and trailer and validate every field.
pub fn open(block: &[u8]) -> Result<SpecBlock<'_>, Refusal> {
    if block.len() < TRAILER_LEN {
        return Err(Refusal::TooShort);
    }
    let payload_len = block.len() - TRAILER_LEN;
    let (payload, t) = block.split_at(payload_len);
    // Section 2 offsets, relative to the trailer.
    if &t[0..4] != b"SSTF" {
        return Err(Refusal::BadMagic);
    }
    let version = t[4];
    if version == 0 || version > 2 {
        return Err(Refusal::UnsupportedVersion);
    }
    let tag = t[5];
    let flags = le(&t[6..8]);
    let params = &t[8..24];
    let num_keys = le(&t[24..32]);
    let stored_crc = le(&t[32..36]) as u32;
    // Section 2: the CRC covers every byte before the last four (payload, prefix section if any, trailer 0..32).
    let checksum_ok = crc32(&block[..block.len() - 4]) == stored_crc;
    if tag == 16 && version == 2 {
        return Err(Refusal::PartitionIndex); // section 2, "kind": a partition index (section 8)
    }
    if ![1, 2, 3, 4].contains(&tag) {
        return Err(Refusal::UnknownKind(tag)); // section 3: 0 and 5..=255 are reserved
    }
    // Section 2: no flag in version 1; in version 2, bit 0 (prefixes) and bit 1 (prefixes only, with bit 0): 0, 1
    // or 3, where 0 reads as version 1. Section 4.5: a Range block has no flag in any version.
    let allowed = if version == 1 || tag == 3 { 0 } else { 0b11 };
    if flags & !allowed != 0 || flags == 0b10 {
        return Err(Refusal::BadParams("flags"));
    }
    let (payload, prefix_name) = prefix_section(payload, flags)?;
    let payload_len = payload.len();
    let kind = match tag {
        1 => blocked_bloom_params(params, payload_len as u64, num_keys)?,
        2 => ribbon_params(params, payload_len as u64, num_keys)?,
        3 => range_params(params, payload_len as u64, num_keys)?,
        _ => standard_bloom_params(params, payload_len as u64)?,
    };
    Ok(SpecBlock {
        payload,
        version,
        kind,
        prefix_name,
        whole_keys: flags & 0b10 == 0,
        num_keys,
        checksum_ok,
    })
}

/// Section 2.1: with flag bit 0, the prefix section, `name ‖ name length (u16)`, just before the trailer (a block
/// shorter than 38 bytes has no room for the length): the payload before it, and the name.
fn prefix_section(payload: &[u8], flags: u64) -> Result<(&[u8], Option<String>), Refusal> {
    if flags & 1 == 0 {
        return Ok((payload, None));
    }
    let bad = || Refusal::BadParams("prefix extractor name");
    if payload.len() < 2 {
        return Err(bad());
    }
    let name_len = le(&payload[payload.len() - 2..]) as usize;
    if name_len > 255 || name_len > payload.len() - 2 {
        return Err(bad());
    }
    let name_at = payload.len() - 2 - name_len;
    let name = std::str::from_utf8(&payload[name_at..payload.len() - 2]).map_err(|_| bad())?;
    Ok((&payload[..name_at], Some(name.to_owned())))
}

/// Section 4.2's parameter table and payload rules.
fn blocked_bloom_params(p: &[u8], payload_len: u64, num_keys: u64) -> Result<Kind, Refusal> {
    let k = u32::from(p[0]);
    if p[1] > 1 {
        return Err(Refusal::BadParams("probe derivation"));
    }
    if p[2..16].iter().any(|&b| b != 0) {
        return Err(Refusal::BadParams("reserved parameter byte"));
    }
    if !(1..=24).contains(&k) {
        return Err(Refusal::BadParams("num_probes"));
    }
    if !payload_len.is_multiple_of(64) {
        return Err(Refusal::LengthMismatch);
    }
    let num_blocks = payload_len / 64;
    if num_blocks > u64::from(u32::MAX) {
        return Err(Refusal::BadParams("num_blocks"));
    }
    if (num_blocks == 0) != (num_keys == 0) {
        return Err(Refusal::BadParams("num_keys"));
    }
    Ok(Kind::BlockedBloom { k, num_blocks })
}

/// Section 4.3's parameter table and payload length.
fn ribbon_params(p: &[u8], payload_len: u64, num_keys: u64) -> Result<Kind, Refusal> {
    let r = u32::from(p[0]);
    if p[1..4].iter().any(|&b| b != 0) {
        return Err(Refusal::BadParams("reserved parameter byte"));
    }
    let shards = le(&p[4..8]);
    let blocks = le(&p[8..12]);
    let upper_start = le(&p[12..16]);
    if !(1..=32).contains(&r) {
        return Err(Refusal::BadParams("lower_columns"));
    }
    if shards < 1 {
        return Err(Refusal::BadParams("num_shards"));
    }
    if !(1..=1 << 26).contains(&blocks) {
        return Err(Refusal::BadParams("num_blocks"));
    }
    if upper_start > blocks || (r == 32 && upper_start != blocks) {
        return Err(Refusal::BadParams("upper_start_block"));
    }
    if num_keys < 1 {
        return Err(Refusal::BadParams("num_keys"));
    }
    let expected = 8 * (u128::from(blocks) * u128::from(r) + u128::from(blocks - upper_start))
        + 5 * u128::from(shards)
        + 4;
    if expected != u128::from(payload_len) {
        return Err(Refusal::LengthMismatch);
    }
    Ok(Kind::Ribbon {
        r,
        shards,
        blocks,
        upper_start,
    })
}

/// Section 4.4's parameter table and payload length.
fn standard_bloom_params(p: &[u8], payload_len: u64) -> Result<Kind, Refusal> {
    let k = u32::from(p[0]);
    if p[1..8].iter().any(|&b| b != 0) {
        return Err(Refusal::BadParams("reserved parameter byte"));
    }
    let m = le(&p[8..16]);
    if k == 0 {
        return Err(Refusal::BadParams("num_probes"));
    }
    let words = m.div_ceil(64);
    let max_words = (1u64 << 58) - 1; // the same on every platform
    if m < 1 || words > max_words {
        return Err(Refusal::BadParams("num_bits"));
    }
    if 8 * u128::from(words) != u128::from(payload_len) {
        return Err(Refusal::LengthMismatch);
    }
    Ok(Kind::StandardBloom { k, m })
}

/// Section 4.5's parameter table and payload length.
fn range_params(p: &[u8], payload_len: u64, n: u64) -> Result<Kind, Refusal> {
    let s = u32::from(p[0]);
    let l = u32::from(p[1]);
    let prefix = le(&p[2..4]);
    let m = u64::from(p[4]);
    let e = u64::from(p[5]);
    if p[6..8].iter().any(|&b| b != 0) {
        return Err(Refusal::BadParams("reserved parameter byte"));
    }
    let r = le(&p[8..16]);
    if s > 56 {
        return Err(Refusal::BadParams("range_log2"));
    }
    if m > 16 {
        return Err(Refusal::BadParams("positions"));
    }
    if n == 0 {
        if r != 0 {
            return Err(Refusal::BadParams("universe"));
        }
        if prefix != 0 {
            return Err(Refusal::BadParams("prefix_len"));
        }
        if m != 0 {
            return Err(Refusal::BadParams("positions"));
        }
        if e != 0 {
            return Err(Refusal::BadParams("longest_key"));
        }
        if l != 0 {
            return Err(Refusal::BadParams("lower_bits"));
        }
        if payload_len != 0 {
            return Err(Refusal::LengthMismatch);
        }
        return Ok(Kind::Range {
            s,
            l,
            p: 0,
            m: 0,
            e: 0,
            r: 0,
        });
    }
    if r < n || n > u64::from(u32::MAX) {
        return Err(Refusal::BadParams("num_keys"));
    }
    if u128::from(r) < 1u128 << s {
        return Err(Refusal::BadParams("universe"));
    }
    if e > m && e != 255 {
        return Err(Refusal::BadParams("longest_key"));
    }
    // l = floor(log2(floor(r / n))): the largest l with 2^l <= floor(r / n).
    let ratio = u128::from(r / n);
    let canonical = (0..64u32).rev().find(|&e| 1u128 << e <= ratio).unwrap();
    if l != canonical {
        return Err(Refusal::BadParams("lower_bits"));
    }
    let (n, r, lw) = (u128::from(n), u128::from(r), u128::from(l));
    let buckets = (r - 1) / (1 << lw) + 1;
    let words = (n * lw).div_ceil(64) + (n + buckets).div_ceil(64);
    let counts = (n + buckets).div_ceil(64).div_ceil(16);
    let samples = buckets.div_ceil(256);
    if 8 * words + 2 * counts + 4 * samples + 16 + 44 * u128::from(m) + u128::from(prefix)
        != u128::from(payload_len)
    {
        return Err(Refusal::LengthMismatch);
    }
    Ok(Kind::Range {
        s,
        l,
        p: prefix,
        m,
        e,
        r: r as u64,
    })
}

/// Section 1: bit `p` of a byte string is bit `p % 8` of byte `p / 8`.
fn bit(bytes: &[u8], p: u128) -> bool {
    let byte = bytes[usize::try_from(p / 8).unwrap()];
    (byte >> (p % 8)) & 1 == 1
}

impl SpecBlock<'_> {
    /// Whether a whole key with 64-bit hash `h` may have been added: section 2.1, a block of prefixes only holds
    /// no whole key and answers "may contain"; otherwise the kind's probe (a Range block: "may contain"). Section 8
    /// asks a loaded partition this question, whatever the partition holds.
    pub fn may_contain_key_hash(&self, h: u64) -> bool {
        !self.whole_keys || self.may_contain_hash(h)
    }

    /// Whether the hash `h` (of a key or, with prefixes, of a prefix) was added to the filter (section 4 of each
    /// kind).
    pub fn may_contain_hash(&self, h: u64) -> bool {
        match self.kind {
            Kind::BlockedBloom { k, num_blocks } => self.blocked_bloom(h, k, num_blocks),
            Kind::Ribbon {
                r,
                shards,
                blocks,
                upper_start,
            } => self.ribbon(h, r, shards, blocks, upper_start),
            Kind::StandardBloom { k, m } => self.standard_bloom(h, k, m),
            Kind::Range { .. } => true, // section 4.5: "a question by key hash alone answers may contain"
        }
    }

    /// Section 4.5: the decoded parts of a Range block's payload; `None` for another kind.
    pub fn range(&self) -> Option<SpecRange> {
        let Kind::Range { s, l, p, m, e, r } = self.kind else {
            return None;
        };
        let n = self.num_keys;
        // `t = ⌊log2 r⌋`: runs of `2^t`.
        let t = (0..64u32).rev().find(|&t| r >> t != 0).unwrap_or(0);
        let e = (e != 255).then_some(e as usize);
        if n == 0 {
            return Some(SpecRange {
                s,
                t,
                e,
                r,
                codes: Vec::new(),
                min: 0,
                max: 0,
                weights: Vec::new(),
                alphabets: Vec::new(),
                ranks: Vec::new(),
                prefix: Vec::new(),
                writer_invariants: true,
            });
        }
        let (nn, lw) = (u128::from(n), u128::from(l));
        let buckets = (u128::from(r) - 1) / (1 << lw) + 1;
        let lower_words = (nn * lw).div_ceil(64) as usize;
        let upper_words = (nn + buckets).div_ceil(64) as usize;
        let samples = buckets.div_ceil(256) as usize;
        let counts = upper_words.div_ceil(16);
        let lower = &self.payload[..8 * lower_words];
        let upper = &self.payload[8 * lower_words..8 * (lower_words + upper_words)];
        let counts_at = 8 * (lower_words + upper_words);
        let samples_at = counts_at + 2 * counts;
        let after = samples_at + 4 * samples;
        let min = le(&self.payload[after..after + 8]);
        let max = le(&self.payload[after + 8..after + 16]);
        let m = m as usize;
        let weights_at = after + 16;
        let alphabets_at = weights_at + 8 * m;
        let weights: Vec<u128> = (0..m)
            .map(|j| u128::from(le(&self.payload[weights_at + 8 * j..weights_at + 8 * j + 8])))
            .collect();
        // Alphabet j: 32 bytes, byte value b is in it if bit b of them is set (section 1's bit order).
        let alphabets: Vec<Vec<u8>> = (0..m)
            .map(|j| {
                let bytes = &self.payload[alphabets_at + 32 * j..alphabets_at + 32 * j + 32];
                (0..=255u8).filter(|&b| bit(bytes, u128::from(b))).collect()
            })
            .collect();
        let ranks_at = alphabets_at + 32 * m;
        let ranks: Vec<Vec<u8>> = (0..m)
            .map(|j| self.payload[ranks_at + 4 * j..ranks_at + 4 * j + 4].to_vec())
            .collect();
        let prefix = self.payload[ranks_at + 4 * m..].to_vec();
        // The word ranks a writer stores: entry w counts the alphabet's values below 64·w.
        let ranks_ok = (0..m).all(|j| {
            (0..4).all(|w| {
                usize::from(ranks[j][w])
                    == alphabets[j]
                        .iter()
                        .filter(|&&a| usize::from(a) < 64 * w)
                        .count()
            })
        });
        // The weights a writer stores: W_j is the product of the sizes of the alphabets after j.
        let weights_ok = (0..m).all(|j| {
            let product: u128 = alphabets[j + 1..]
                .iter()
                .map(|a| a.len().max(1) as u128)
                .product();
            weights[j] == product
        }) && alphabets
            .iter()
            .map(|a| a.len().max(1) as u128)
            .product::<u128>()
            <= 1 << 64;
        // Walk the first n + B bits of the upper array: a zero ends a bucket, a one is the next code.
        let mut codes = Vec::new();
        let mut bucket = 0u128;
        let mut zero_positions = Vec::new();
        let mut extra_ones = 0;
        for pos in 0..nn + buckets {
            if bit(upper, pos) && codes.len() as u128 == nn {
                extra_ones += 1; // more one-bits than codes: no writer's block
            } else if bit(upper, pos) {
                let i = codes.len() as u128;
                let low = (0..lw).fold(0u128, |acc, j| {
                    acc | (u128::from(bit(lower, i * lw + j)) << j)
                });
                codes.push((bucket * (1 << lw) + low) as u64);
            } else {
                zero_positions.push(pos as u64);
                bucket += 1;
            }
        }
        // What a writer must also have done: n one-bits, strictly increasing codes below r, zero padding, and the
        // samples: the one-bits before the zero-bit of rank 256·j.
        let padding_zero = (nn + buckets..8 * upper.len() as u128).all(|pos| !bit(upper, pos))
            && (nn * lw..8 * lower.len() as u128).all(|pos| !bit(lower, pos));
        let samples_ok = (0..samples).all(|j| {
            let stored = le(&self.payload[samples_at + 4 * j..samples_at + 4 * j + 4]);
            zero_positions.get(256 * j).map(|&z| z - 256 * j as u64) == Some(stored)
        });
        // And the counts: the zero-bits before bit 1024·j, modulo 2^16.
        let counts_ok = (0..counts).all(|j| {
            let stored = le(&self.payload[counts_at + 2 * j..counts_at + 2 * j + 2]);
            let zeros = zero_positions.partition_point(|&z| z < 1024 * j as u64) as u64;
            zeros % (1 << 16) == stored
        });
        let writer_invariants = codes.len() as u64 == n
            && extra_ones == 0
            && codes.windows(2).all(|w| w[0] < w[1])
            && codes.last().is_none_or(|&c| c < r)
            && padding_zero
            && samples_ok
            && counts_ok
            && min <= max
            && weights_ok
            && ranks_ok
            && alphabets.iter().all(|a| !a.is_empty())
            && prefix.len() as u64 == p;
        Some(SpecRange {
            s,
            t,
            e,
            r,
            codes,
            min,
            max,
            weights,
            alphabets,
            ranks,
            prefix,
            writer_invariants,
        })
    }

    /// Section 4.2.
    fn blocked_bloom(&self, h: u64, k: u32, num_blocks: u64) -> bool {
        if num_blocks == 0 {
            return false; // "such a block answers absent for every key"
        }
        let b = (u128::from(h >> 32) * u128::from(num_blocks)) >> 32;
        blocked_bloom_bits(h, k)
            .into_iter()
            .all(|p| bit(self.payload, 512 * b + u128::from(p)))
    }

    /// Section 4.3, steps 1–6 and the readers' actions on directory values.
    fn ribbon(&self, h: u64, r: u32, shards: u64, blocks: u64, upper_start: u64) -> bool {
        const M: u128 = 1 << 64;
        let cols = |b: u128| {
            if b < u128::from(upper_start) {
                r
            } else {
                r + 1
            }
        };
        let first_word = |b: u128| b * u128::from(r + 1) - b.min(u128::from(upper_start));
        let solution_len = 8 * first_word(u128::from(blocks));
        let dir = &self.payload[usize::try_from(solution_len).unwrap()..];
        // Step 1.
        let s = ((u128::from(h) * u128::from(shards)) >> 64) as usize;
        let lo = u128::from(le(&dir[5 * s..5 * s + 4]));
        let seed = u128::from(dir[5 * s + 4]);
        let hi = u128::from(le(&dir[5 * s + 5..5 * s + 9]));
        if hi == lo {
            return false; // an empty shard answers "absent"
        }
        if hi < lo + 128 || hi > 64 * u128::from(blocks) {
            return true; // an impossible shard answers "may contain"
        }
        // Step 2.
        let h = u128::from(h);
        let z = ((h ^ (((seed + 1) * 0x9E37_79B9_7F4A_7C15) % M)) * 0xD6E8_FEB8_6659_FD93) % M;
        let x = z ^ (z >> 32);
        // Step 3.
        let n = hi - lo - 127;
        let d = (x * (n + 96)) >> 64;
        let start = lo + (d.saturating_sub(48)).min(n - 1);
        // Step 4.
        let c = (((x * 0x9E37_79B9_7F4A_7C15) % M) << 64)
            | (((x ^ (x >> 29)) * 0xBF58_476D_1CE4_E5B9) % M)
            | 1;
        // Step 5.
        let e = ((x * 0x94D0_49BB_1331_11EB) % M) >> 32;
        // Step 6.
        let b = start / 64;
        let z_bit = |i: u32, t: u128| -> u128 {
            let block = t / 64;
            if block >= u128::from(blocks) {
                return 0; // "bits of blocks past B read as 0"
            }
            let word = first_word(block) + u128::from(i);
            u128::from(bit(self.payload, 64 * word + t % 64))
        };
        (0..cols(b)).all(|i| {
            let parity = (0..128u32)
                .filter(|&j| (c >> j) & 1 == 1)
                .fold(0, |acc, j| acc ^ z_bit(i, start + u128::from(j)));
            parity == (e >> i) & 1
        })
    }

    /// Section 4.4.
    fn standard_bloom(&self, h: u64, k: u32, m: u64) -> bool {
        let h1 = u128::from(h);
        let h2 = u128::from(h.rotate_left(32));
        (0..u128::from(k)).all(|i| {
            let sum = (h1 + i * h2) % (1 << 64);
            bit(self.payload, (sum * u128::from(m)) >> 64)
        })
    }
}

/// Section 2.1: a built-in prefix extractor, as the extractor table defines it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecExtractor {
    Fixed(usize),
    Delimited(u8),
    Capped(usize),
}

impl SpecExtractor {
    /// The recorded name: decimal lengths, the delimiter as two lowercase hexadecimal digits.
    pub fn name(&self) -> String {
        const HEX: &[u8; 16] = b"0123456789abcdef";
        match *self {
            SpecExtractor::Fixed(len) => format!("sstfilter.fixed:{len}"),
            SpecExtractor::Delimited(d) => {
                let digits = [HEX[usize::from(d >> 4)], HEX[usize::from(d & 15)]];
                format!(
                    "sstfilter.delimited:{}",
                    std::str::from_utf8(&digits).unwrap()
                )
            }
            SpecExtractor::Capped(len) => format!("sstfilter.capped:{len}"),
        }
    }

    /// The prefix length of a key, or `None` outside the domain.
    pub fn prefix_len(&self, x: &[u8]) -> Option<usize> {
        match *self {
            SpecExtractor::Fixed(len) => (x.len() >= len).then_some(len),
            SpecExtractor::Delimited(d) => x.iter().position(|&b| b == d).map(|at| at + 1),
            SpecExtractor::Capped(len) => Some(len.min(x.len())),
        }
    }

    /// The length every key starting with `s` has as its prefix length, or `None`.
    pub fn scan_len(&self, s: &[u8]) -> Option<usize> {
        match *self {
            SpecExtractor::Fixed(len) | SpecExtractor::Capped(len) => {
                (s.len() >= len).then_some(len)
            }
            SpecExtractor::Delimited(_) => self.prefix_len(s),
        }
    }

    /// "What a writer adds": the key count of a block built from `keys` in this order (with whole keys or not),
    /// `hash` being the key hash of section 4.1.
    pub fn key_count(&self, keys: &[&[u8]], whole_keys: bool, hash: impl Fn(&[u8]) -> u64) -> u64 {
        let (mut last_prefix, mut last, mut count) = (None, None, 0);
        let mut offer = |h: u64| {
            if last != Some(h) {
                last = Some(h);
                count += 1;
            }
        };
        for x in keys {
            if let Some(n) = self.prefix_len(x) {
                let p = hash(&x[..n]);
                if last_prefix != Some(p) {
                    last_prefix = Some(p);
                    offer(p);
                }
            }
            if whole_keys {
                offer(hash(x));
            }
        }
        count
    }
}

impl SpecBlock<'_> {
    /// Section 2.1, "What a reader answers": a prefix question with the extractor named `name` and the prefix
    /// hash `h`; `false` only for "absent".
    pub fn may_contain_prefix(&self, name: &str, h: u64) -> bool {
        match &self.prefix_name {
            Some(recorded) if recorded.as_bytes() == name.as_bytes() => self.may_contain_hash(h),
            _ => true,
        }
    }
}

/// Section 4.5: a Range block's contents, decoded.
#[derive(Debug, Clone)]
pub struct SpecRange {
    pub s: u32,
    /// Runs of `2^t` values.
    pub t: u32,
    /// The longest key after `P`, when at most `m`.
    pub e: Option<usize>,
    pub r: u64,
    /// The set C, in increasing order.
    pub codes: Vec<u64>,
    pub min: u64,
    pub max: u64,
    /// `W_j`, as stored.
    pub weights: Vec<u128>,
    /// `A_j`: the byte values of each position, in increasing order.
    pub alphabets: Vec<Vec<u8>>,
    /// `R_j`: the stored word ranks, 4 entries each.
    pub ranks: Vec<Vec<u8>>,
    pub prefix: Vec<u8>,
    /// Whether the payload is exactly what section 4.5 tells a writer to produce.
    pub writer_invariants: bool,
}

/// Section 4.5: where a byte string falls against the keys' common prefix.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Place<'a> {
    Below,
    /// Starts with `P`; the bytes after it.
    After(&'a [u8]),
    Above,
}

/// Section 4.5: a string's digits.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Digits {
    /// Every byte in its alphabet: `Σ rank_j · W_j`.
    Exact(u128),
    /// At the first position `j` whose byte is not in `A_j`: `Σ_{i<j} rank_i · W_i + rank_j · W_j`.
    Between(u128),
}

/// A range answer, as section 4.5 words it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecRangeAnswer {
    Absent,
    MayContain,
}

/// A bound of a range question.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SpecBound<'a> {
    Included(&'a [u8]),
    Excluded(&'a [u8]),
    Unbounded,
}

/// Section 4.2's splitmix64 finalizer `mix`.
fn mix(z: u128) -> u128 {
    const M: u128 = 1 << 64;
    let z = ((z ^ (z >> 30)) * 0xBF58_476D_1CE4_E5B9) % M;
    let z = ((z ^ (z >> 27)) * 0x94D0_49BB_1331_11EB) % M;
    z ^ (z >> 31)
}

impl SpecRange {
    /// Section 4.5, "Projection": against the prefix.
    fn place<'x>(&self, x: &'x [u8]) -> Place<'x> {
        let p = &self.prefix;
        if x.starts_with(p) {
            return Place::After(&x[p.len()..]);
        }
        if p.starts_with(x) {
            return Place::Below; // a proper prefix of P
        }
        let first_difference = x.iter().zip(p).position(|(a, b)| a != b).unwrap();
        if x[first_difference] < p[first_difference] {
            Place::Below
        } else {
            Place::Above
        }
    }

    /// Section 4.5, "Projection": the digits of the bytes after the prefix, zero-padded. The reading stops after the
    /// step of the first byte outside its alphabet, that step's term included.
    fn digits(&self, after: &[u8]) -> Digits {
        let mut acc = 0u128;
        for (j, alphabet) in self.alphabets.iter().enumerate() {
            let byte = after.get(j).copied().unwrap_or(0);
            // The stored rank of the byte's word, plus the alphabet's values in that word below the byte.
            let w = usize::from(byte / 64);
            let in_word = alphabet
                .iter()
                .filter(|&&a| usize::from(a / 64) == w && a < byte)
                .count();
            let rank = u128::from(self.ranks[j][w]) + in_word as u128;
            acc += rank * self.weights[j];
            if !alphabet.contains(&byte) {
                return Digits::Between(acc);
            }
        }
        Digits::Exact(acc)
    }

    /// Section 4.5, `q(i)`.
    fn q(&self, i: u64) -> u128 {
        const PHI: u128 = 0x9E37_79B9_7F4A_7C15;
        (mix((u128::from(i) + PHI) % (1 << 64)) * u128::from(self.r)) >> 64
    }

    /// Section 4.5, `code(v)`.
    pub fn code(&self, v: u64) -> u64 {
        let (run, offset) = (u128::from(v) >> self.t, u128::from(v) % (1 << self.t));
        ((self.q(run as u64) + offset) % u128::from(self.r)) as u64
    }

    fn holds_code_in(&self, from: u128, to: u128) -> bool {
        self.codes
            .iter()
            .any(|&c| (from..=to).contains(&u128::from(c)))
    }

    /// Section 4.5, "Queries", a point `x`.
    pub fn may_contain(&self, x: &[u8]) -> bool {
        if self.codes.is_empty() {
            return false;
        }
        let Place::After(after) = self.place(x) else {
            return false;
        };
        match self.digits(after) {
            Digits::Between(_) => false,
            Digits::Exact(v) => {
                let v = v as u64;
                v >= self.min && v <= self.max && self.codes.contains(&self.code(v))
            }
        }
    }

    /// Section 4.5, "Queries", a range.
    pub fn may_contain_range(&self, lower: SpecBound<'_>, upper: SpecBound<'_>) -> SpecRangeAnswer {
        use SpecBound::{Excluded, Included, Unbounded};
        // "Empty" exactly when both bounds are given and lower > upper, or they are equal with one excluded; no
        // other range, even one no string lies in.
        let empty = match (lower, upper) {
            (Included(a), Included(b)) => a > b,
            (Included(a) | Excluded(a), Included(b) | Excluded(b)) => a >= b,
            _ => false,
        };
        if empty || self.codes.is_empty() {
            return SpecRangeAnswer::Absent;
        }
        // lo: the least value of a key at or above the lower bound.
        let lo: u128 = match lower {
            Unbounded => 0,
            Included(a) | Excluded(a) => match self.place(a) {
                Place::Below => 0,
                Place::Above => return SpecRangeAnswer::Absent,
                Place::After(after) => match self.digits(after) {
                    // "+ 1 when it is excluded and has at least e bytes after P".
                    Digits::Exact(v)
                        if matches!(lower, Excluded(_))
                            && self.e.is_some_and(|e| after.len() >= e) =>
                    {
                        v + 1
                    }
                    Digits::Exact(v) | Digits::Between(v) => v,
                },
            },
        };
        if lo >= 1 << 64 {
            return SpecRangeAnswer::Absent;
        }
        // hi: the greatest value of a key at or below (below, if excluded) the upper bound.
        let hi: i128 = match upper {
            Unbounded => u64::MAX as i128,
            Included(b) | Excluded(b) => match self.place(b) {
                Place::Below => return SpecRangeAnswer::Absent,
                Place::Above => u64::MAX as i128,
                Place::After(after) => match self.digits(after) {
                    Digits::Exact(v) => {
                        let strict =
                            after.len() <= self.alphabets.len() && after.last() != Some(&0);
                        if matches!(upper, Excluded(_)) && strict {
                            v as i128 - 1
                        } else {
                            v as i128
                        }
                    }
                    Digits::Between(v) => v as i128 - 1,
                },
            },
        };
        if hi < 0 {
            return SpecRangeAnswer::Absent;
        }
        let (lo, hi) = (lo as u64, hi.min(u64::MAX as i128) as u64);
        let (lo, hi) = (lo.max(self.min), hi.min(self.max));
        if lo > hi {
            return SpecRangeAnswer::Absent;
        }
        let (first, last) = (lo >> self.t, hi >> self.t);
        if last - first >= 2 {
            return SpecRangeAnswer::MayContain; // "three runs or more"
        }
        let r = u128::from(self.r);
        let run_len = 1u128 << self.t;
        for t in first..=last {
            let from = if t == first {
                u128::from(lo) % run_len
            } else {
                0
            };
            let to = if t == last {
                u128::from(hi) % run_len
            } else {
                run_len - 1
            };
            let (start, end) = ((self.q(t) + from) % r, (self.q(t) + to) % r);
            let hit = if start <= end {
                self.holds_code_in(start, end)
            } else {
                self.holds_code_in(start, r - 1) || self.holds_code_in(0, end)
            };
            if hit {
                return SpecRangeAnswer::MayContain;
            }
        }
        SpecRangeAnswer::Absent
    }
}

/// Section 4.2, steps 2–4: the `k` draws of a key in its block (with replacement: repeats are kept).
pub fn blocked_bloom_bits(h: u64, k: u32) -> Vec<u32> {
    const GOLDEN: u128 = 0x9E37_79B9_7F4A_7C15;
    const M: u128 = 1 << 64;
    let h = u128::from(h);
    let word = |i: u128| {
        if i == 0 {
            (h * GOLDEN) % M
        } else {
            mix((h + i * GOLDEN) % M)
        }
    };
    (0..k)
        .map(|j| {
            let x = word(u128::from(j / 7));
            ((x >> (64 - 9 * (j % 7 + 1))) & 511) as u32
        })
        .collect()
}

/// Section 4.2, "Probe derivation 0": the bits a pre-release writer set for a key, the first `k` distinct values
/// of its draw sequence (the 448 draws of words 0 to 63, then the fill 0..511).
pub fn blocked_bloom_distinct_bits(h: u64, k: u32) -> Vec<u32> {
    let sequence = blocked_bloom_bits(h, 448).into_iter().chain(0..512);
    let mut bits: Vec<u32> = Vec::new();
    for draw in sequence {
        if bits.len() == k as usize {
            break;
        }
        if !bits.contains(&draw) {
            bits.push(draw);
        }
    }
    bits
}

/// Section 8: a partition index entry, with its separator.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecPartition {
    pub separator: Vec<u8>,
    pub offset: u64,
    pub len: u64,
    pub num_keys: u64,
    pub checksum: u32,
}

/// Section 8: an opened partition index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpecIndex {
    /// The partitions, in order.
    pub partitions: Vec<SpecPartition>,
    /// The extractor named by its prefix section (section 2.1), if any.
    pub prefix_name: Option<String>,
    /// Flag bit 1 clear: the partitions hold whole keys.
    pub whole_keys: bool,
}

/// Section 8: open a partition index, checking the trailer (section 2 with tag 16, version 2, flags 0, 1 or 3 and
/// then the prefix section of section 2.1), the CRC32 and every rule of the entry table.
pub fn open_index(block: &[u8]) -> Result<SpecIndex, Refusal> {
    if block.len() < TRAILER_LEN {
        return Err(Refusal::TooShort);
    }
    let (payload, t) = block.split_at(block.len() - TRAILER_LEN);
    if &t[0..4] != b"SSTF" {
        return Err(Refusal::BadMagic);
    }
    if t[4] == 0 || t[4] > 2 {
        return Err(Refusal::UnsupportedVersion);
    }
    if t[5] != 16 || t[4] != 2 {
        return Err(Refusal::UnknownKind(t[5]));
    }
    let flags = le(&t[6..8]);
    if ![0, 1, 3].contains(&flags) {
        return Err(Refusal::BadParams("flags"));
    }
    if crc32(&block[..block.len() - 4]) != le(&t[32..36]) as u32 {
        return Err(Refusal::BadParams("crc"));
    }
    let (payload, prefix_name) = prefix_section(payload, flags)?;
    let n = u128::from(le(&t[8..16]));
    let s = u128::from(le(&t[16..24]));
    let num_keys = u128::from(le(&t[24..32]));
    if s + 32 * n != payload.len() as u128 {
        return Err(Refusal::LengthMismatch);
    }
    let (separators, entries) = payload.split_at(s as usize);
    let mut out: Vec<SpecPartition> = Vec::new();
    let (mut start, mut keys) = (0u128, 0u128);
    for e in entries.chunks(32) {
        let sep_end = u128::from(le(&e[28..32]));
        if sep_end < start || sep_end > s {
            return Err(Refusal::BadParams("sep_end"));
        }
        let separator = separators[start as usize..sep_end as usize].to_vec();
        if out.last().is_some_and(|p| p.separator >= separator) {
            return Err(Refusal::BadParams("separator order"));
        }
        let len = le(&e[8..16]);
        if len < TRAILER_LEN as u64 {
            return Err(Refusal::BadParams("partition len"));
        }
        let num = le(&e[16..24]);
        keys += u128::from(num);
        out.push(SpecPartition {
            separator,
            offset: le(&e[0..8]),
            len,
            num_keys: num,
            checksum: le(&e[24..28]) as u32,
        });
        start = sep_end;
    }
    if start != s {
        return Err(Refusal::BadParams("separator_bytes"));
    }
    if keys != num_keys {
        return Err(Refusal::BadParams("num_keys"));
    }
    Ok(SpecIndex {
        partitions: out,
        prefix_name,
        whole_keys: flags & 0b10 == 0,
    })
}

/// Section 8: the position of the only partition that can hold `key` (the first separator `>= key`), or `None`:
/// the key is past the last separator and absent.
pub fn partition_for(partitions: &[SpecPartition], key: &[u8]) -> Option<usize> {
    partitions
        .iter()
        .position(|p| p.separator.as_slice() >= key)
}
