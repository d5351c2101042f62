//! Software prefetch: asks the CPU to start fetching a cache line into L1 without waiting for it.
//!
//! **One of the three modules of the crate allowed `unsafe`** (with `cpu` and BlockedBloom's `avx2`): a prefetch
//! instruction cannot fault and does not change memory, but Rust exposes it only through `unsafe` intrinsics
//! (`_mm_prefetch` on x86_64, inline assembly on aarch64) on stable. Every other module stays under
//! `deny(unsafe_code)`.
//!
//! Why a load will not do: the batched queries fetch the cache lines of many keys first and probe them after. A
//! plain load that misses cannot retire until its line arrives, so a group of touching loads stalls the reorder
//! buffer and the probes queue up behind them; a prefetch retires at once, and the probes of the first keys run
//! while the later lines are still on their way.

/// Starts fetching the cache line holding `bytes[at]` (nothing if `at` is out of bounds). Never faults, never
/// changes memory; on targets without a prefetch instruction it does nothing.
#[inline(always)]
pub(crate) fn prefetch(bytes: &[u8], at: usize) {
    if let Some(byte) = bytes.get(at) {
        prefetch_line(byte);
    }
}

#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn prefetch_line(byte: &u8) {
    #[expect(
        unsafe_code,
        reason = "a prefetch instruction has no safe form on stable Rust"
    )]
    // SAFETY: `byte` is a valid reference, so its address is mapped; and a prefetch is a hint that cannot fault
    // or write even for an unmapped address. SSE, which provides PREFETCHT0, is part of the x86_64 baseline.
    unsafe {
        core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
            core::ptr::from_ref(byte).cast::<i8>(),
        );
    }
}

#[cfg(target_arch = "aarch64")]
#[inline(always)]
fn prefetch_line(byte: &u8) {
    #[expect(
        unsafe_code,
        reason = "a prefetch instruction has no safe form on stable Rust"
    )]
    // SAFETY: PRFM is a hint: it cannot fault, reads no register but its address operand, writes nothing, and
    // touches no flags or stack (`nostack`, `preserves_flags`, `readonly`).
    unsafe {
        core::arch::asm!(
            "prfm pldl1keep, [{address}]",
            address = in(reg) core::ptr::from_ref(byte),
            options(nostack, preserves_flags, readonly)
        );
    }
}

#[cfg(not(any(target_arch = "x86_64", target_arch = "aarch64")))]
#[inline(always)]
fn prefetch_line(_byte: &u8) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefetching_any_index_changes_nothing_and_never_faults() {
        let bytes: Vec<u8> = (0..=255u8).cycle().take(10_000).collect();
        let before = bytes.clone();
        for at in [0, 1, 63, 64, 9_999, 10_000, usize::MAX] {
            prefetch(&bytes, at);
        }
        prefetch(&[], 0);
        assert_eq!(bytes, before);
    }
}
