//! A key's draws tested all at once with AVX2, where the CPU has it: the single and batched queries of a
//! BlockedBloom filter of up to [`MAX_PROBES`] probes, chosen by [`queries`](super::queries) when the CPU running
//! the code has AVX2.
//!
//! The scalar probe ([`probe_line_halves`](super::probe_line_halves)) spends about eight instructions a draw (two
//! shifts, a mask, a load, a shift by the bit, an and, and the copies x86's two-operand shifts need); here the
//! seven draws of a draw word are cut in two variable shifts, their words picked from the line in two permutes
//! and their bits tested in one `vptest`: about two thirds of the scalar query's instructions and no branch on the
//! line, which is what decides how many queries the CPU keeps in flight on a filter larger than its cache
//! (BENCHMARKS.md 4b, "All the draws at once"). The answers are the scalar probe's, bit for bit: the tests hold the
//! two to the same lines.
//!
//! **A module allowed `unsafe`** (with `prefetch` and `cpu`): calling a function compiled for an instruction set
//! the target does not promise is `unsafe` in Rust, because running it on a CPU without one is undefined. The two
//! calls here (the single query's and the batch's) are made after the standard library's detection said the CPU has
//! AVX2.

use core::arch::x86_64::{
    __m256i, _mm256_and_si256, _mm256_blendv_ps, _mm256_castps_si256, _mm256_castsi256_ps,
    _mm256_or_si256, _mm256_permutevar8x32_epi32, _mm256_set1_epi32, _mm256_set1_epi64x,
    _mm256_setr_epi32, _mm256_setr_epi64x, _mm256_slli_epi32, _mm256_slli_epi64, _mm256_sllv_epi32,
    _mm256_srli_epi32, _mm256_srlv_epi64, _mm256_testc_si256,
};

use super::{BLOCK_BITS, BLOCK_BYTES, DRAWS_PER_WORD, draw_word, query_batch_by, query_by};
use crate::kind::KindParams;

/// The most probes the vector query tests: the draws of the first two draw words, each word's seven in one
/// register of eight 32-bit lanes. Filters of more probes (from 31.125 bits/key on) keep the scalar query.
pub(super) const MAX_PROBES: usize = 2 * DRAWS_PER_WORD;

/// [`super::query`] with the line probed by [`probe_line`]: for filters of `K` ≤ [`MAX_PROBES`] probes, on a CPU
/// with AVX2 (asked again on every call, two loads and a test of the standard library's cached answer, so that this
/// function is sound wherever it is called; elsewhere it is the scalar query).
pub(super) fn query<const K: usize>(params: &KindParams, payload: &[u8], h: u64) -> bool {
    if std::arch::is_x86_feature_detected!("avx2") {
        #[expect(
            unsafe_code,
            reason = "a function compiled for AVX2, which the target lacks, has no safe call"
        )]
        // SAFETY: `query_enabled` requires nothing but AVX2, which the CPU was just found to have.
        return unsafe { query_enabled::<K>(params, payload, h) };
    }
    super::query::<K>(params, payload, h)
}

/// [`super::query_batch`] with each line probed by [`probe_line`], as [`query`] is [`super::query`].
pub(super) fn query_batch<const K: usize>(
    params: &KindParams,
    block: &[u8],
    hashes: &[u64],
    out: &mut [bool],
) {
    if std::arch::is_x86_feature_detected!("avx2") {
        #[expect(
            unsafe_code,
            reason = "a function compiled for AVX2, which the target lacks, has no safe call"
        )]
        // SAFETY: `query_batch_enabled` requires nothing but AVX2, which the CPU was just found to have.
        return unsafe { query_batch_enabled::<K>(params, block, hashes, out) };
    }
    super::query_batch::<K>(params, block, hashes, out);
}

/// [`query_batch`]'s body, compiled for AVX2.
#[target_feature(enable = "avx2")]
fn query_batch_enabled<const K: usize>(
    params: &KindParams,
    block: &[u8],
    hashes: &[u64],
    out: &mut [bool],
) {
    // The closure is compiled for AVX2 as the function it is written in.
    query_batch_by(params, block, hashes, out, |line, h| {
        probe_line::<K>(line, h)
    });
}

/// [`query`]'s body, compiled for AVX2.
#[target_feature(enable = "avx2")]
fn query_enabled<const K: usize>(params: &KindParams, payload: &[u8], h: u64) -> bool {
    // The closure is compiled for AVX2 as the function it is written in.
    query_by(params, payload, h, |line, h| probe_line::<K>(line, h))
}

/// Whether the first `K` draws (`K` ≤ [`MAX_PROBES`]) of the key with hash `h` are all set in `line`: the answer
/// of [`probe_line_halves`](super::probe_line_halves), without a branch on the line.
///
/// The line is read as sixteen little-endian 32-bit words, so that draw `p` is bit `p % 32` of word `p / 32` (the
/// format's bit `p % 8` of byte `p / 8`, as in the scalar probe's 64-bit words).
#[target_feature(enable = "avx2")]
pub(super) fn probe_line<const K: usize>(line: &[u8; BLOCK_BYTES], h: u64) -> bool {
    const {
        assert!(
            K <= MAX_PROBES,
            "the vector probe tests two draw words' draws"
        );
    }
    let (low, high) = halves(line);
    let first = word_draws_set(low, high, draw_word(h, 0), K.min(DRAWS_PER_WORD));
    if K <= DRAWS_PER_WORD {
        return first;
    }
    // Past seven probes, the second draw word's too (`K` is a constant: the test above is compiled away).
    first & word_draws_set(low, high, draw_word(h, 1), K.saturating_sub(DRAWS_PER_WORD))
}

/// Whether the first `count` (at most 7) draws of the draw word `word` are all set in the line whose halves are
/// `low` and `high`.
#[target_feature(enable = "avx2")]
#[inline]
fn word_draws_set(low: __m256i, high: __m256i, word: u64, count: usize) -> bool {
    // Draw `j` of a word is its 9 bits from bit 63 − 9j down: the word shifted right by 64 − 9(j + 1). The first
    // register cuts draws 0 to 3 (in 64-bit lanes, masked to 9 bits), the second draws 4 to 7 (a shift of 64
    // gives 0: there is no draw 7 in a word); the second's lanes then move to the upper halves of the first's, so
    // that the eight 32-bit lanes hold draws 0, 4, 1, 5, 2, 6, 3, 7.
    let word = _mm256_set1_epi64x(word as i64);
    let nine_bits = (BLOCK_BITS - 1) as i32;
    let first = _mm256_and_si256(
        _mm256_srlv_epi64(word, _mm256_setr_epi64x(55, 46, 37, 28)),
        _mm256_set1_epi64x(i64::from(nine_bits)),
    );
    let second = _mm256_srlv_epi64(word, _mm256_setr_epi64x(19, 10, 1, 64));
    let draws = _mm256_and_si256(
        _mm256_or_si256(first, _mm256_slli_epi64::<32>(second)),
        _mm256_set1_epi32(nine_bits),
    );
    // A lane's bit, or no bit for the lanes of draws past `count` (they then pass the test whatever their word).
    let tested = |draw: usize| i32::from(draw < count);
    let lane_bits = _mm256_setr_epi32(
        tested(0),
        tested(4),
        tested(1),
        tested(5),
        tested(2),
        tested(6),
        tested(3),
        tested(7),
    );
    let bits = _mm256_sllv_epi32(lane_bits, _mm256_and_si256(draws, _mm256_set1_epi32(31)));
    // Each lane's word: the permutes take the word index modulo 8 from either half of the line, and bit 3 of the
    // index (moved to the lane's sign bit) chooses the half.
    let index = _mm256_srli_epi32::<5>(draws);
    let words = _mm256_castps_si256(_mm256_blendv_ps(
        _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(low, index)),
        _mm256_castsi256_ps(_mm256_permutevar8x32_epi32(high, index)),
        _mm256_castsi256_ps(_mm256_slli_epi32::<28>(index)),
    ));
    // Every tested bit set in its word: `!words & bits` is zero.
    _mm256_testc_si256(words, bits) != 0
}

/// The line's two 32-byte halves as registers, from its 64-bit words (one load each once compiled).
#[target_feature(enable = "avx2")]
fn halves(line: &[u8; BLOCK_BYTES]) -> (__m256i, __m256i) {
    let (words, _) = line.as_chunks::<8>();
    let word = |i: usize| words.get(i).map_or(0, |w| i64::from_le_bytes(*w));
    (
        _mm256_setr_epi64x(word(0), word(1), word(2), word(3)),
        _mm256_setr_epi64x(word(4), word(5), word(6), word(7)),
    )
}

#[cfg(test)]
mod tests {
    use super::super::probe_line_halves;
    use super::super::tests::vector_answer;
    use super::*;
    use crate::math::splitmix64;

    /// The vector query answers as the scalar probe for every probe count it takes, on lines from sparse to full
    /// (where a key's draws are most often all set, so that both answers come up many times).
    fn check_against_scalar<const K: usize>() {
        let (mut present, mut absent) = (0, 0);
        for i in 0..20_000u64 {
            // Each byte of the line the or of `density` random bytes: about 1 − 2^−density of its bits set.
            let density = i % 6;
            let mut line = [0u8; BLOCK_BYTES];
            for (at, byte) in line.iter_mut().enumerate() {
                *byte = (0..density).fold(0, |b, d| b | splitmix64(i, at as u64 * 8 + d) as u8);
            }
            if i % 97 == 0 {
                line = [0xff; BLOCK_BYTES];
            }
            let h = splitmix64(i, u64::MAX);
            let scalar = probe_line_halves::<K>(&line, h);
            assert_eq!(
                vector_answer::<K>(&line, h),
                Some(scalar),
                "K = {K}, line {i}"
            );
            (present, absent) = if scalar {
                (present + 1, absent)
            } else {
                (present, absent + 1)
            };
        }
        assert!(
            present > 1000 && absent > 1000,
            "K = {K}: {present} / {absent}"
        );
    }

    #[test]
    fn answers_as_the_scalar_probe() {
        if !std::arch::is_x86_feature_detected!("avx2") {
            eprintln!("skipped: this CPU has no AVX2, so filters keep the scalar query");
            return;
        }
        check_against_scalar::<1>();
        check_against_scalar::<2>();
        check_against_scalar::<3>();
        check_against_scalar::<4>();
        check_against_scalar::<5>();
        check_against_scalar::<6>();
        check_against_scalar::<7>();
        check_against_scalar::<8>();
        check_against_scalar::<9>();
        check_against_scalar::<10>();
        check_against_scalar::<11>();
        check_against_scalar::<12>();
        check_against_scalar::<13>();
        check_against_scalar::<14>();
        // Past two draw words the scalar query stays.
        assert!(super::super::vector_queries(15).is_none());
    }
}
