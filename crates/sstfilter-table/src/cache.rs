//! A byte-budgeted LRU cache of filter partitions, shareable by every table of a store.

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard};

use sstfilter::{AlignedBlock, VerifiedPartition};

/// A partition's bytes, shared between the cache and the lookups using them.
#[derive(Clone, Debug)]
pub(crate) struct SharedBlock(Arc<AlignedBlock>);

impl SharedBlock {
    pub(crate) fn new(block: AlignedBlock) -> Self {
        SharedBlock(Arc::new(block))
    }
}

impl AsRef<[u8]> for SharedBlock {
    fn as_ref(&self) -> &[u8] {
        self.0.as_ref().as_ref()
    }
}

/// What the cache holds: partitions verified as they entered (a clone shares the bytes).
pub(crate) type CachedPartition = VerifiedPartition<SharedBlock>;

/// Which partition of which open table: table ids are unique per process.
type Key = (u64, usize);

/// Hashes a [`Key`] with one multiply: keys are small integers chosen by this process, not by an adversary, so
/// the DoS-resistant default hasher (a fifth of a cached lookup's time, measured with perf) buys nothing here.
#[derive(Debug, Default, Clone, Copy)]
struct KeyHasher(u64);

impl Hasher for KeyHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.write_u64(u64::from(b));
        }
    }

    fn write_u64(&mut self, n: u64) {
        // Fibonacci hashing of the running value: the high bits, which hashbrown uses, mix every input bit.
        self.0 = (self.0.rotate_left(29) ^ n).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }

    fn write_usize(&mut self, n: usize) {
        self.write_u64(n as u64);
    }
}

type KeyMap = HashMap<Key, usize, BuildHasherDefault<KeyHasher>>;

/// Holds the filter partitions that lookups loaded, up to a budget of bytes, evicting partitions not used
/// recently (CLOCK, an approximation of least-recently-used whose hits take only a shared lock).
///
/// One cache may serve every table of a store (clones share it), so the budget bounds the whole store's
/// resident filter partitions, as a block cache does; each table's partition index stays pinned outside it.
/// A partition larger than the whole budget is used for its lookup and not kept.
///
/// ```
/// use sstfilter_table::PartitionCache;
///
/// let cache = PartitionCache::new(8 << 20); // 8 MiB of partitions for all tables
/// assert_eq!(cache.resident_bytes(), 0);
/// # let _ = cache.clone();
/// ```
#[derive(Clone, Debug)]
pub struct PartitionCache(Arc<RwLock<Clock>>);

#[derive(Debug)]
struct Clock {
    budget: usize,
    used: usize,
    /// Where each cached partition's slot is.
    slots_by_key: KeyMap,
    slots: Vec<Option<Slot>>,
    /// Slots emptied by eviction, reused first.
    free: Vec<usize>,
    /// The next slot eviction looks at.
    hand: usize,
}

#[derive(Debug)]
struct Slot {
    key: Key,
    block: CachedPartition,
    /// Set by every hit, cleared as the hand passes: a slot is evicted when the hand finds it clear.
    referenced: AtomicBool,
}

impl PartitionCache {
    /// An empty cache that keeps at most `budget_bytes` of partitions.
    #[must_use]
    pub fn new(budget_bytes: usize) -> Self {
        PartitionCache(Arc::new(RwLock::new(Clock {
            budget: budget_bytes,
            used: 0,
            slots_by_key: KeyMap::default(),
            slots: Vec::new(),
            free: Vec::new(),
            hand: 0,
        })))
    }

    /// A cache without a budget: every partition loaded stays (a table's whole filter at most).
    #[must_use]
    pub fn unbounded() -> Self {
        Self::new(usize::MAX)
    }

    // A panic while a lock was held left a consistent cache (every update completes before the lock is released
    // or panics before changing anything), so a poisoned lock is still usable.
    fn read(&self) -> RwLockReadGuard<'_, Clock> {
        self.0.read().unwrap_or_else(PoisonError::into_inner)
    }

    fn write(&self) -> RwLockWriteGuard<'_, Clock> {
        self.0.write().unwrap_or_else(PoisonError::into_inner)
    }

    /// Bytes of partitions held now.
    #[must_use]
    pub fn resident_bytes(&self) -> usize {
        self.read().used
    }

    /// Partitions held now.
    #[must_use]
    pub fn len(&self) -> usize {
        self.read().slots_by_key.len()
    }

    /// Whether no partition is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The budget in bytes.
    #[must_use]
    pub fn budget_bytes(&self) -> usize {
        self.read().budget
    }

    /// The cached partition, marked as used.
    pub(crate) fn get(&self, key: Key) -> Option<CachedPartition> {
        let clock = self.read();
        let slot = clock.slots.get(*clock.slots_by_key.get(&key)?)?.as_ref()?;
        slot.referenced.store(true, Ordering::Relaxed);
        Some(slot.block.clone())
    }

    /// Keeps `block` under `key`, evicting partitions not used recently to stay within the budget.
    pub(crate) fn insert(&self, key: Key, block: CachedPartition) {
        let mut clock = self.write();
        let len = len_of(&block);
        if len > clock.budget || clock.slots_by_key.contains_key(&key) {
            return;
        }
        while clock.used + len > clock.budget && clock.evict_one() {}
        let slot = Some(Slot {
            key,
            block,
            referenced: AtomicBool::new(false),
        });
        let at = match clock.free.pop() {
            Some(at) => {
                if let Some(free) = clock.slots.get_mut(at) {
                    *free = slot;
                }
                at
            }
            None => {
                clock.slots.push(slot);
                clock.slots.len() - 1
            }
        };
        clock.used += len;
        clock.slots_by_key.insert(key, at);
    }
}

impl Clock {
    /// Moves the hand to the first slot not referenced since it last passed (clearing the bits it passes) and
    /// evicts it. At most two turns: after one, every bit is clear. `false` if the cache is empty.
    fn evict_one(&mut self) -> bool {
        let n = self.slots.len();
        for _ in 0..2 * n {
            let at = self.hand;
            self.hand = (self.hand + 1) % n;
            let Some(Some(slot)) = self.slots.get(at) else {
                continue;
            };
            if slot.referenced.swap(false, Ordering::Relaxed) {
                continue;
            }
            if let Some(Some(evicted)) = self.slots.get_mut(at).map(Option::take) {
                self.used -= len_of(&evicted.block);
                self.slots_by_key.remove(&evicted.key);
                self.free.push(at);
                return true;
            }
        }
        false
    }
}

fn len_of(block: &CachedPartition) -> usize {
    block.as_bytes().len()
}

/// A new table id: tables sharing a cache never share keys.
pub(crate) fn next_table_id() -> u64 {
    static NEXT: AtomicU64 = AtomicU64::new(0);
    NEXT.fetch_add(1, Ordering::Relaxed)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A verified partition of `36 + 64 · blocks` bytes: one key in a BlockedBloom block of `blocks` lines.
    fn block(blocks: u32) -> CachedPartition {
        use sstfilter::{BlockedBloomParams, FilterPlan, FilterPolicy, PartitionedFilter};
        #[derive(Clone)]
        struct Lines(u32);
        impl FilterPolicy for Lines {
            fn plan(&self, _num_keys: usize) -> FilterPlan {
                FilterPlan::BlockedBloom(BlockedBloomParams::new(self.0, 6).unwrap())
            }
        }
        let mut builder = sstfilter::PartitionedFilterBuilder::new(Lines(blocks));
        builder.add_key(b"k").unwrap();
        let partitions = builder.finish().unwrap();
        let index = PartitionedFilter::open(partitions.index(&[0]).unwrap()).unwrap();
        let bytes = SharedBlock::new(AlignedBlock::copy_from(&partitions.blocks()[0]));
        index
            .verify_partition(&index.partition(0).unwrap(), bytes)
            .unwrap()
    }

    #[test]
    fn keeps_the_budget_by_evicting_partitions_not_used_recently() {
        let cache = PartitionCache::new(300);
        assert_eq!(len_of(&block(1)), 100);
        cache.insert((0, 0), block(1));
        cache.insert((0, 1), block(1));
        cache.insert((1, 0), block(1));
        assert_eq!((cache.len(), cache.resident_bytes()), (3, 300));
        assert!(cache.get((0, 0)).is_some()); // (0, 0) is referenced, (0, 1) and (1, 0) are not
        cache.insert((1, 1), block(1));
        assert!(
            cache.get((0, 1)).is_none(),
            "the first unreferenced slot goes"
        );
        assert!(cache.get((0, 0)).is_some() && cache.get((1, 0)).is_some());
        assert_eq!(cache.resident_bytes(), 300);
        cache.insert((2, 0), block(5)); // 356 bytes, larger than the budget: not kept, nothing evicted
        assert_eq!((cache.len(), cache.resident_bytes()), (3, 300));
        cache.insert((2, 1), block(3)); // 228 bytes: evicts until it fits, referenced or not
        assert_eq!(cache.len(), 1);
        assert_eq!(cache.resident_bytes(), 228);
        assert!(cache.get((2, 1)).is_some());
        cache.insert((2, 1), block(1)); // already there: unchanged
        assert_eq!(cache.resident_bytes(), 228);
        assert_eq!(PartitionCache::new(0).budget_bytes(), 0);
    }
}
