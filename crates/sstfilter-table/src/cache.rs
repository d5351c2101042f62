//! A byte-budgeted cache of filter partitions, shareable by every table of a store.
//!
//! A lookup that hits finds its partition by position: each open table keeps a slot per partition
//! ([`TablePartitions`]), and a hit asks the partition in place. No lock shared by the whole cache, no hash map, no
//! reference count and no copy of the partition's decoded form is touched on a hit (each cost a cache miss or a
//! contended line of its own); the shared [`PartitionCache`] only accounts for the budget and chooses what to
//! evict, on a miss. Under a budget a hit holds its slot's own read lock while it asks, so that the partition is
//! not evicted under it; a cache without a budget never evicts, and its hits take no lock at all.

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{
    Arc, OnceLock, PoisonError, RwLock, RwLockReadGuard, RwLockWriteGuard, TryLockError,
};

use sstfilter::{AlignedBlock, PartitionQuestion, VerifiedPartition};

/// What the cache holds: partitions verified as they entered.
pub(crate) type CachedPartition = VerifiedPartition<AlignedBlock>;

/// Holds the filter partitions that lookups loaded, up to a budget of bytes, evicting partitions not used
/// recently (CLOCK, an approximation of least-recently-used whose hits only set a bit); without a budget
/// ([`unbounded`](Self::unbounded)), it keeps every partition loaded until its table is dropped, and a lookup then
/// reads a cached partition without taking a lock.
///
/// One cache may serve every table of a store (clones share it), so the budget bounds the whole store's
/// resident filter partitions, as a block cache does; each table's partition index stays pinned outside it, and
/// a table gives its partitions' bytes back when it is dropped. A partition larger than the whole budget is used
/// for its lookup and not kept.
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
    /// The ring the hand turns over: which table slot holds each cached partition.
    entries: Vec<Option<Entry>>,
    /// Entries emptied by eviction, reused first.
    free: Vec<usize>,
    /// The next entry eviction looks at.
    hand: usize,
}

#[derive(Debug)]
struct Entry {
    table: Arc<TableSlots>,
    position: usize,
    len: usize,
}

impl Entry {
    /// Empties the entry's slot unless its partition was referenced since the hand last passed (clearing the
    /// bit) or is in use by a lookup: waiting for a lookup could wait for this very thread. A pinned partition
    /// is never released (only a cache without a budget pins, and it never has to evict).
    fn release(&self) -> bool {
        let slot = match &self.table.slots {
            Slots::Evictable(slots) => match slots.get(self.position) {
                Some(slot) => slot,
                None => return true,
            },
            Slots::Pinned(_) => return false,
        };
        if slot.referenced.swap(false, Ordering::Relaxed) {
            return false;
        }
        let mut held = match slot.partition.try_write() {
            Ok(held) => held,
            Err(TryLockError::Poisoned(poisoned)) => poisoned.into_inner(),
            Err(TryLockError::WouldBlock) => return false,
        };
        *held = None;
        self.table.resident.fetch_sub(1, Ordering::Relaxed);
        true
    }
}

/// One table's partitions in the cache: slot `p` holds partition `p` when it is cached.
#[derive(Debug)]
struct TableSlots {
    slots: Slots,
    /// Partitions of this table held by the cache (changed under the cache's lock).
    resident: AtomicUsize,
}

/// A table's slots, as its cache may treat them.
#[derive(Debug)]
enum Slots {
    /// In a cache with a budget, whose partitions may be evicted while a lookup would use them.
    Evictable(Box<[Slot]>),
    /// In a cache without a budget, which never evicts: a slot, once filled (under the cache's lock), keeps its
    /// partition until the table is dropped, so that a hit reads it with a plain load. A read lock costs two atomic
    /// read-modify-writes a hit, each a full fence on x86 (the loads after it wait for the loads before it).
    Pinned(Box<[OnceLock<Box<CachedPartition>>]>),
}

/// A cached partition in use by a lookup: an evictable one under its slot's read lock, a pinned one as it is.
enum Held<'a> {
    Locked(RwLockReadGuard<'a, Option<Box<CachedPartition>>>),
    Pinned(&'a CachedPartition),
}

impl Held<'_> {
    /// The partition (always there: [`TablePartitions::hit`] locks only a slot that holds one).
    #[inline]
    fn partition(&self) -> Option<&CachedPartition> {
        match self {
            Held::Locked(held) => held.as_deref(),
            Held::Pinned(partition) => Some(partition),
        }
    }
}

impl Slots {
    /// Whether slot `position` exists and holds no partition.
    fn is_vacant(&self, position: usize) -> bool {
        match self {
            Slots::Evictable(slots) => slots
                .get(position)
                .is_some_and(|s| read(&s.partition).is_none()),
            Slots::Pinned(slots) => slots.get(position).is_some_and(|s| s.get().is_none()),
        }
    }

    /// Puts `partition` in slot `position`, which [`is_vacant`](Self::is_vacant) (under the cache's lock).
    fn fill(&self, position: usize, partition: Box<CachedPartition>) {
        match self {
            Slots::Evictable(slots) => {
                if let Some(slot) = slots.get(position) {
                    *write(&slot.partition) = Some(partition);
                    slot.referenced.store(false, Ordering::Relaxed);
                }
            }
            Slots::Pinned(slots) => {
                if let Some(slot) = slots.get(position) {
                    // Vacant, and only filled under the cache's lock: the value is set.
                    let _ = slot.set(partition);
                }
            }
        }
    }
}

#[derive(Debug)]
struct Slot {
    /// Written only under the cache's write lock; a hit holds the read lock while it asks the partition.
    partition: RwLock<Option<Box<CachedPartition>>>,
    /// Set by every hit, cleared as the hand passes: a partition is evicted when the hand finds it clear.
    referenced: AtomicBool,
}

// A panic while a lock was held left a consistent cache (every update completes before the lock is released or
// panics before changing anything), so a poisoned lock is still usable.
fn read<T>(lock: &RwLock<T>) -> RwLockReadGuard<'_, T> {
    lock.read().unwrap_or_else(PoisonError::into_inner)
}

fn write<T>(lock: &RwLock<T>) -> RwLockWriteGuard<'_, T> {
    lock.write().unwrap_or_else(PoisonError::into_inner)
}

impl PartitionCache {
    /// An empty cache that keeps at most `budget_bytes` of partitions.
    #[must_use]
    pub fn new(budget_bytes: usize) -> Self {
        PartitionCache(Arc::new(RwLock::new(Clock {
            budget: budget_bytes,
            used: 0,
            entries: Vec::new(),
            free: Vec::new(),
            hand: 0,
        })))
    }

    /// A cache without a budget: every partition loaded stays (a table's whole filter at most).
    #[must_use]
    pub fn unbounded() -> Self {
        Self::new(usize::MAX)
    }

    /// Whether the cache never evicts: its budget is one no sum of partitions exceeds (`keep` adds saturating).
    fn never_evicts(&self) -> bool {
        self.budget_bytes() == usize::MAX
    }

    /// Bytes of partitions held now.
    #[must_use]
    pub fn resident_bytes(&self) -> usize {
        read(&self.0).used
    }

    /// Partitions held now.
    #[must_use]
    pub fn len(&self) -> usize {
        let clock = read(&self.0);
        // Every entry not in the free list holds a partition.
        clock.entries.len() - clock.free.len()
    }

    /// Whether no partition is held.
    #[must_use]
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The budget in bytes.
    #[must_use]
    pub fn budget_bytes(&self) -> usize {
        read(&self.0).budget
    }

    /// Keeps a copy of `partition` in `table`'s slot `position`, evicting partitions not used recently to stay
    /// within the budget; nothing if another lookup put it there first, if it is larger than the whole budget, or
    /// if every partition is in use.
    fn keep(&self, table: &Arc<TableSlots>, position: usize, partition: &CachedPartition) {
        let mut clock = write(&self.0);
        let len = partition.as_bytes().len();
        if len > clock.budget || !table.slots.is_vacant(position) {
            return;
        }
        while clock.used.saturating_add(len) > clock.budget {
            if !clock.evict_one() {
                return;
            }
        }
        table.slots.fill(position, Box::new(partition.clone()));
        table.resident.fetch_add(1, Ordering::Relaxed);
        let entry = Some(Entry {
            table: Arc::clone(table),
            position,
            len,
        });
        match clock.free.pop() {
            Some(at) => {
                if let Some(free) = clock.entries.get_mut(at) {
                    *free = entry;
                }
            }
            None => clock.entries.push(entry),
        }
        clock.used += len;
    }

    /// Drops every partition of `table` the cache holds, giving their bytes back to the budget.
    fn forget(&self, table: &Arc<TableSlots>) {
        if table.resident.load(Ordering::Relaxed) == 0 {
            return;
        }
        let mut clock = write(&self.0);
        let clock = &mut *clock;
        for (at, entry) in clock.entries.iter_mut().enumerate() {
            if entry.as_ref().is_some_and(|e| Arc::ptr_eq(&e.table, table))
                && let Some(entry) = entry.take()
            {
                clock.used -= entry.len;
                clock.free.push(at);
            }
        }
        table.resident.store(0, Ordering::Relaxed);
    }
}

impl Clock {
    /// Moves the hand to the first partition not referenced since the hand last passed (clearing the bits it
    /// passes) and not in use by a lookup, and evicts it. At most two turns: after one, every bit is clear.
    /// `false` if nothing could be evicted (the cache is empty, or every partition is in use).
    fn evict_one(&mut self) -> bool {
        let n = self.entries.len();
        for _ in 0..2 * n {
            let at = self.hand;
            self.hand = (self.hand + 1) % n;
            let len = match self.entries.get(at) {
                Some(Some(entry)) if entry.release() => entry.len,
                _ => continue,
            };
            if let Some(entry) = self.entries.get_mut(at) {
                *entry = None;
            }
            self.used -= len;
            self.free.push(at);
            return true;
        }
        false
    }
}

/// A table's partitions in a [`PartitionCache`]: where its lookups find them (a slot per partition, 32 bytes each
/// under a budget and 16 without, no more than the 32-byte index entry each has, so a table's slots never outgrow
/// its partition index); dropped with the table, it gives their bytes back to the cache.
#[derive(Debug)]
pub(crate) struct TablePartitions {
    slots: Arc<TableSlots>,
    cache: PartitionCache,
}

impl TablePartitions {
    /// Room for `partitions` partitions in `cache`: pinned ones if it has no budget.
    pub(crate) fn new(cache: PartitionCache, partitions: usize) -> Self {
        let slots = if cache.never_evicts() {
            Slots::Pinned((0..partitions).map(|_| OnceLock::new()).collect())
        } else {
            Slots::Evictable(
                (0..partitions)
                    .map(|_| Slot {
                        partition: RwLock::new(None),
                        referenced: AtomicBool::new(false),
                    })
                    .collect(),
            )
        };
        TablePartitions {
            slots: Arc::new(TableSlots {
                slots,
                resident: AtomicUsize::new(0),
            }),
            cache,
        }
    }

    /// The cache the partitions are kept in.
    pub(crate) fn cache(&self) -> &PartitionCache {
        &self.cache
    }

    /// `question`'s answer from partition `position`, asked in place (under its slot's read lock if it can be
    /// evicted), if the cache holds it.
    #[inline]
    pub(crate) fn ask<Q: PartitionQuestion>(
        &self,
        position: usize,
        question: &Q,
    ) -> Option<Q::Answer> {
        Some(question.ask(self.hit(position)?.partition()?))
    }

    /// Partition `position`, if the cache holds it: marked as used and read-locked if it can be evicted.
    #[inline]
    fn hit(&self, position: usize) -> Option<Held<'_>> {
        let slot = match &self.slots.slots {
            Slots::Pinned(slots) => return slots.get(position)?.get().map(|p| Held::Pinned(p)),
            Slots::Evictable(slots) => slots.get(position)?,
        };
        let held = read(&slot.partition);
        held.as_ref()?;
        // Written once per turn of the hand, so that hits on a hot partition leave its line shared.
        if !slot.referenced.load(Ordering::Relaxed) {
            slot.referenced.store(true, Ordering::Relaxed);
        }
        Some(Held::Locked(held))
    }

    /// Keeps a copy of `partition` (just loaded and verified) as partition `position` if the budget allows.
    pub(crate) fn keep(&self, position: usize, partition: &CachedPartition) {
        self.cache.keep(&self.slots, position, partition);
    }
}

impl Drop for TablePartitions {
    fn drop(&mut self) {
        self.cache.forget(&self.slots);
    }
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
        let partitions = builder.finish();
        let index = PartitionedFilter::open(partitions.index(&[0]).unwrap()).unwrap();
        let bytes = AlignedBlock::copy_from(&partitions.blocks()[0]);
        index
            .verify_partition(&index.partition(0).unwrap(), bytes)
            .unwrap()
    }

    fn clear_referenced(table: &TablePartitions) {
        if let Slots::Evictable(slots) = &table.slots.slots {
            for slot in slots {
                slot.referenced.store(false, Ordering::Relaxed);
            }
        }
    }

    #[test]
    fn keeps_the_budget_by_evicting_partitions_not_used_recently() {
        let cache = PartitionCache::new(300);
        let (t0, t1, t2) = (
            TablePartitions::new(cache.clone(), 2),
            TablePartitions::new(cache.clone(), 2),
            TablePartitions::new(cache.clone(), 3),
        );
        assert_eq!(block(1).as_bytes().len(), 100);
        for (table, position) in [(&t0, 0), (&t0, 1), (&t1, 0)] {
            table.keep(position, &block(1));
        }
        assert_eq!((cache.len(), cache.resident_bytes()), (3, 300));
        assert!(t0.hit(0).is_some()); // (0, 0) is referenced, (0, 1) and (1, 0) are not
        assert!(t1.hit(1).is_none());
        t1.keep(1, &block(1));
        assert!(t0.hit(1).is_none(), "the first unreferenced partition goes");
        assert!(t0.hit(0).is_some() && t1.hit(0).is_some() && t1.hit(1).is_some());
        assert_eq!(cache.resident_bytes(), 300);
        t2.keep(0, &block(5)); // 356 bytes, larger than the budget: not kept, nothing evicted
        assert_eq!((cache.len(), cache.resident_bytes()), (3, 300));
        assert!(t2.hit(0).is_none());
        t2.keep(1, &block(3)); // 228 bytes: evicts until it fits, referenced or not
        assert_eq!((cache.len(), cache.resident_bytes()), (1, 228));
        assert!(t2.hit(1).is_some());
        t2.keep(1, &block(1)); // already there: unchanged
        assert_eq!(cache.resident_bytes(), 228);
        t2.keep(3, &block(1)); // past the table's partitions: nowhere to keep it
        assert_eq!((cache.len(), cache.resident_bytes()), (1, 228));
        assert_eq!(PartitionCache::new(0).budget_bytes(), 0);
    }

    #[test]
    fn a_partition_in_use_is_not_evicted_and_a_dropped_table_gives_its_bytes_back() {
        let cache = PartitionCache::new(200);
        let (t0, t1) = (
            TablePartitions::new(cache.clone(), 2),
            TablePartitions::new(cache.clone(), 1),
        );
        t0.keep(0, &block(1));
        t0.keep(1, &block(1));
        let in_use = t0.hit(0).unwrap();
        clear_referenced(&t0);
        // Room for one more: partition 0 is in use (its slot read-locked), so partition 1 goes, not a wait.
        t1.keep(0, &block(1));
        assert!(t0.hit(1).is_none() && t1.hit(0).is_some());
        drop(in_use);
        assert!(t0.hit(0).is_some());
        // Every partition in use: a new one is not kept rather than go over the budget.
        let both = (t0.hit(0).unwrap(), t1.hit(0).unwrap());
        let t2 = TablePartitions::new(cache.clone(), 1);
        t2.keep(0, &block(1));
        assert!(t2.hit(0).is_none());
        assert_eq!((cache.len(), cache.resident_bytes()), (2, 200));
        drop(both);
        drop(t0);
        assert_eq!((cache.len(), cache.resident_bytes()), (1, 100));
        t2.keep(0, &block(1));
        assert!(t2.hit(0).is_some());
        assert_eq!((cache.len(), cache.resident_bytes()), (2, 200));
        drop((t1, t2));
        assert_eq!((cache.len(), cache.resident_bytes()), (0, 0));
        assert_eq!(
            size_of::<Slot>(),
            32,
            "no more than a partition's index entry"
        );
    }

    #[test]
    fn a_cache_without_a_budget_pins_what_it_keeps_until_its_table_is_dropped() {
        let cache = PartitionCache::unbounded();
        let (t0, t1) = (
            TablePartitions::new(cache.clone(), 3),
            TablePartitions::new(cache.clone(), 1),
        );
        assert!(matches!(t0.slots.slots, Slots::Pinned(_)));
        let bounded = TablePartitions::new(PartitionCache::new(usize::MAX - 1), 1);
        assert!(matches!(bounded.slots.slots, Slots::Evictable(_)));
        t0.keep(1, &block(2));
        t0.keep(1, &block(1)); // already there: unchanged
        t0.keep(3, &block(1)); // past the table's partitions: nowhere to keep it
        t1.keep(0, &block(1));
        assert_eq!((cache.len(), cache.resident_bytes()), (2, 164 + 100));
        assert!(t0.hit(0).is_none());
        let held = t0.hit(1).unwrap();
        assert!(matches!(held, Held::Pinned(_)));
        assert_eq!(held.partition().map(|p| p.as_bytes().len()), Some(164));
        // The hand never takes a pinned partition, whether in use or not.
        let clock = read(&cache.0);
        assert!(clock.entries.iter().flatten().all(|entry| !entry.release()));
        drop(clock);
        drop(held);
        assert!(t0.hit(1).is_some() && t1.hit(0).is_some());
        drop(t0);
        assert_eq!((cache.len(), cache.resident_bytes()), (1, 100));
        assert_eq!(
            size_of::<OnceLock<Box<CachedPartition>>>(),
            16,
            "half a partition's index entry"
        );
    }
}
