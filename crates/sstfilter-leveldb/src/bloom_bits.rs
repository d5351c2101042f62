//! The bytes of LevelDB's Bloom filters, shared by [`LevelDbBloomPolicy`] and
//! [`Bloom64Policy`]: a bit array of at least 64 bits, rounded up to whole bytes, then one
//! byte holding the probe count. The two differ only in how many bits they give a key set and where a key's
//! probes land; building and reading a filter is the same code, and so is their [`LevelDbFilterPolicy`].

use crate::{Bloom64Policy, LevelDbBloomPolicy, LevelDbFilterPolicy};

/// Smallest Bloom bit array, however few keys (LevelDB: "for small n, we can see a very high false positive
/// rate. Fix it by enforcing a minimum bloom filter length").
pub(crate) const MIN_BITS: u64 = 64;

/// The largest probe count either policy writes; a stored count above it (LevelDB reserves those for "new
/// encodings") or of 0 answers "may match", so a damaged byte cannot buy 255 probes either.
pub(crate) const MAX_PROBES: u8 = 30;

/// How one policy sizes its filters and places a key's probes.
pub(crate) trait BitPlacement {
    /// The probe count written into every filter, 1..=[`MAX_PROBES`].
    fn probe_count(&self) -> u8;

    /// Bits the policy wants for `num_keys` keys, before the 64-bit minimum and the rounding to bytes.
    fn wanted_bits(&self, num_keys: usize) -> u64;

    /// The bit positions of `key` in an array of `num_bits > 0` bits, `num_probes` of them.
    fn positions(key: &[u8], num_probes: u8, num_bits: u64) -> impl Iterator<Item = u64>;
}

/// The methods both policies offer, forwarding to this module: written once. `$create_doc` documents
/// `create_filter`, the one whose promise differs (LevelDB's bytes, or LevelDB's size).
macro_rules! shared_methods {
    ($policy:ty, $create_doc:literal) => {
        impl $policy {
            /// The probe count this policy writes into its filters.
            #[must_use]
            pub const fn num_probes(&self) -> u8 {
                self.num_probes
            }

            #[doc = $create_doc]
            #[must_use]
            pub fn create_filter(&self, keys: &[&[u8]]) -> Vec<u8> {
                bloom_bits::filter_of(self, keys.iter().copied())
            }

            /// Length in bytes of the filter for `num_keys` keys (Bloom bits and the probe-count byte).
            #[must_use]
            pub fn filter_len(&self, num_keys: usize) -> usize {
                bloom_bits::filter_len(self, num_keys)
            }

            /// Appends the filter of `keys` to `out` (which may already hold other filters), as LevelDB's
            /// `CreateFilter(keys, n, dst)` appends to `dst`.
            pub fn append_filter_of<'k, I>(&self, keys: I, out: &mut Vec<u8>)
            where
                I: IntoIterator<Item = &'k [u8]>,
                I::IntoIter: ExactSizeIterator,
            {
                bloom_bits::append_filter(self, keys, out);
            }

            /// Whether `key` may be one of the keys `filter` was built from (LevelDB's `KeyMayMatch`); `false`
            /// means it certainly is not. The filter carries its own probe count, so a filter of any bits per key
            /// can be read; one whose probe-count byte is reserved (0, or above 30) or that is shorter than 2
            /// bytes answers `true`.
            #[must_use]
            #[doc(alias("KeyMayMatch", "key_may_match"))]
            pub fn may_contain(&self, key: &[u8], filter: &[u8]) -> bool {
                bloom_bits::may_contain::<Self>(key, filter)
            }
        }
    };
}
pub(crate) use shared_methods;

/// Bytes of Bloom bits for `num_keys` keys.
fn bit_array_len<L: BitPlacement>(policy: &L, num_keys: usize) -> usize {
    let bits = policy.wanted_bits(num_keys).max(MIN_BITS);
    usize::try_from(bits.div_ceil(8)).unwrap_or(usize::MAX)
}

/// Length in bytes of the filter for `num_keys` keys: the Bloom bits and the probe-count byte.
pub(crate) fn filter_len<L: BitPlacement>(policy: &L, num_keys: usize) -> usize {
    bit_array_len(policy, num_keys).saturating_add(1)
}

/// The filter of `keys`, in a vector of exactly its length.
pub(crate) fn filter_of<'k, L, I>(policy: &L, keys: I) -> Vec<u8>
where
    L: BitPlacement,
    I: IntoIterator<Item = &'k [u8]>,
    I::IntoIter: ExactSizeIterator,
{
    let keys = keys.into_iter();
    let mut out = Vec::with_capacity(filter_len(policy, keys.len()));
    append_filter(policy, keys, &mut out);
    out
}

/// Appends the filter of `keys` to `out` (which may already hold other filters).
pub(crate) fn append_filter<'k, L, I>(policy: &L, keys: I, out: &mut Vec<u8>)
where
    L: BitPlacement,
    I: IntoIterator<Item = &'k [u8]>,
    I::IntoIter: ExactSizeIterator,
{
    let keys = keys.into_iter();
    let start = out.len();
    out.resize(start.saturating_add(bit_array_len(policy, keys.len())), 0);
    let bits = out.get_mut(start..).unwrap_or_default();
    let num_bits = bits.len() as u64 * 8;
    for key in keys {
        for bit in L::positions(key, policy.probe_count(), num_bits) {
            if let Some(byte) = bits.get_mut((bit / 8) as usize) {
                *byte |= 1 << (bit % 8);
            }
        }
    }
    out.push(policy.probe_count()); // NOTE: the probe count goes last, after the bits.
}

/// Whether `key` may be one of the keys `filter` was built from: all its probed bits are set. Needs nothing
/// but the filter, which carries its own probe count. A filter shorter than 2 bytes (never written) or with an
/// unusable probe count answers "may match".
pub(crate) fn may_contain<L: BitPlacement>(key: &[u8], filter: &[u8]) -> bool {
    let Some((&num_probes, bits)) = filter.split_last() else {
        return true;
    };
    if bits.is_empty() || num_probes == 0 || num_probes > MAX_PROBES {
        return true;
    }
    L::positions(key, num_probes, bits.len() as u64 * 8).all(|bit| {
        bits.get((bit / 8) as usize)
            .is_none_or(|byte| byte & (1 << (bit % 8)) != 0)
    })
}

/// The [`LevelDbFilterPolicy`] of a policy with LevelDB's Bloom bytes: its `NAME`, and this module's builder and reader.
macro_rules! bloom_bits_filter_policy {
    ($policy:ty) => {
        impl LevelDbFilterPolicy for $policy {
            fn name(&self) -> &'static str {
                <$policy>::NAME
            }

            fn append_filter(&self, keys: &[&[u8]], out: &mut Vec<u8>) {
                append_filter(self, keys.iter().copied(), out);
            }

            fn may_contain(&self, key: &[u8], filter: &[u8]) -> bool {
                may_contain::<$policy>(key, filter)
            }
        }
    };
}

bloom_bits_filter_policy!(LevelDbBloomPolicy);
bloom_bits_filter_policy!(Bloom64Policy);
