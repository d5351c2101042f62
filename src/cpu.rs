//! Instructions the default target lacks, used where the CPU running the code has them.
//!
//! The default x86-64 target (the one a `cargo build` without flags makes) predates `popcnt`; without it a count
//! of a word's one-bits is a dozen instructions, and a range question counts bits in the look-up of its codes (a
//! few words) and, for keys other than binary ones, in the reading of its bounds (a count a position).
//! [`with_popcnt`] runs a computation compiled a second time with `popcnt` allowed, when the CPU has it.
//!
//! **A module allowed `unsafe`** (with `prefetch` and BlockedBloom's `avx2`): calling a function compiled for an
//! instruction the target does not promise is `unsafe` in Rust, because running one on a CPU without it is
//! undefined. The call is made only after the CPU was asked, by the standard library's detection.

/// `f()`, with `f` compiled to use `popcnt` where the CPU has it (on x86-64 builds whose target lacks it: others
/// run `f` as compiled). `f` is compiled twice, out of line, each time with what it inlines: mark it
/// `#[inline(always)]`, and what it calls too, down to the counts of bits (what it calls out of line runs as the
/// target compiled it). Out of line both times so that the choice is a test and a jump, not a frame.
#[inline(always)]
pub(crate) fn with_popcnt<R>(f: impl FnOnce() -> R) -> R {
    #[cfg(all(target_arch = "x86_64", not(target_feature = "popcnt")))]
    if std::arch::is_x86_feature_detected!("popcnt") {
        #[expect(
            unsafe_code,
            reason = "a function compiled for an instruction the target lacks has no safe call"
        )]
        // SAFETY: `popcnt_enabled` differs from `as_compiled` only in being allowed `popcnt`, which the CPU was
        // just found to have.
        return unsafe { popcnt_enabled(f) };
    }
    as_compiled(f)
}

/// `f()` compiled with `popcnt` allowed (`f` inlined into it).
#[cfg(all(target_arch = "x86_64", not(target_feature = "popcnt")))]
#[target_feature(enable = "popcnt")]
#[inline(never)]
fn popcnt_enabled<R>(f: impl FnOnce() -> R) -> R {
    f()
}

/// `f()` compiled for the target (`f` inlined into it).
#[inline(never)]
fn as_compiled<R>(f: impl FnOnce() -> R) -> R {
    f()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn with_popcnt_runs_its_computation_once_and_returns_its_result() {
        let mut runs = 0;
        let words = [u64::MAX, 0, 0x8000_0000_0000_0001, 0x0123_4567_89ab_cdef];
        let counts = with_popcnt(|| {
            runs += 1;
            words.map(u64::count_ones)
        });
        assert_eq!(runs, 1);
        assert_eq!(counts, [64, 0, 2, 32]);
    }
}
