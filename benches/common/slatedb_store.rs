//! A real SlateDB on the local file system, with the reads that reach storage counted: shared by the
//! integration test (`tests/slatedb_store.rs`) and the reads-avoided bench (`benches/reads_avoided.rs`).
//!
//! Every SST read goes through [`CountingStore`], an `ObjectStore` wrapper. SlateDB is given a cache that keeps
//! SST indexes, filters and stats but never data blocks, as a store whose data does not fit in memory behaves:
//! after the first lookup has loaded each SST's index and filter, every storage read is a data-block read, and
//! the ones made for absent keys are exactly the reads a filter failed to avoid.

#![allow(dead_code, reason = "the test and the bench use different parts")]

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use async_trait::async_trait;
use futures::stream::BoxStream;
use slatedb::bytes::Bytes;
use slatedb::config::{FlushOptions, FlushType, Settings};
use slatedb::db_cache::{CacheFetch, CacheLoader, CachedEntry, CachedKey, DbCache};
use slatedb::object_store::path::Path as ObjectPath;
use slatedb::object_store::{
    self, CopyOptions, GetOptions, GetResult, ListResult, MultipartUpload, ObjectMeta, ObjectStore,
    PutMultipartOptions, PutOptions, PutPayload, PutResult, RenameOptions,
};
use slatedb::{Db, FilterPolicy, WriteBatch};

/// An `ObjectStore` that counts the reads of SST files (`compacted/*.sst`) before passing them on.
#[derive(Debug)]
pub struct CountingStore {
    inner: Arc<dyn ObjectStore>,
    sst_reads: AtomicU64,
}

impl CountingStore {
    pub fn new(inner: Arc<dyn ObjectStore>) -> Self {
        CountingStore {
            inner,
            sst_reads: AtomicU64::new(0),
        }
    }

    /// SST reads since the last [`reset`](Self::reset).
    pub fn sst_reads(&self) -> u64 {
        self.sst_reads.load(Ordering::Relaxed)
    }

    pub fn reset(&self) {
        self.sst_reads.store(0, Ordering::Relaxed);
    }

    fn count(&self, location: &ObjectPath, reads: u64) {
        let path = location.as_ref();
        if path.contains("compacted/") && path.ends_with(".sst") {
            self.sst_reads.fetch_add(reads, Ordering::Relaxed);
        }
    }
}

impl fmt::Display for CountingStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "CountingStore({})", self.inner)
    }
}

#[async_trait]
impl ObjectStore for CountingStore {
    async fn put_opts(
        &self,
        location: &ObjectPath,
        payload: PutPayload,
        opts: PutOptions,
    ) -> object_store::Result<PutResult> {
        self.inner.put_opts(location, payload, opts).await
    }

    async fn put_multipart_opts(
        &self,
        location: &ObjectPath,
        opts: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        self.inner.put_multipart_opts(location, opts).await
    }

    async fn get_opts(
        &self,
        location: &ObjectPath,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        self.count(location, 1);
        self.inner.get_opts(location, options).await
    }

    async fn get_ranges(
        &self,
        location: &ObjectPath,
        ranges: &[Range<u64>],
    ) -> object_store::Result<Vec<Bytes>> {
        self.count(location, ranges.len() as u64);
        self.inner.get_ranges(location, ranges).await
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<ObjectPath>>,
    ) -> BoxStream<'static, object_store::Result<ObjectPath>> {
        self.inner.delete_stream(locations)
    }

    fn list(
        &self,
        prefix: Option<&ObjectPath>,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list(prefix)
    }

    fn list_with_offset(
        &self,
        prefix: Option<&ObjectPath>,
        offset: &ObjectPath,
    ) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        self.inner.list_with_offset(prefix, offset)
    }

    async fn list_with_delimiter(
        &self,
        prefix: Option<&ObjectPath>,
    ) -> object_store::Result<ListResult> {
        self.inner.list_with_delimiter(prefix).await
    }

    async fn copy_opts(
        &self,
        from: &ObjectPath,
        to: &ObjectPath,
        options: CopyOptions,
    ) -> object_store::Result<()> {
        self.inner.copy_opts(from, to, options).await
    }

    async fn rename_opts(
        &self,
        from: &ObjectPath,
        to: &ObjectPath,
        options: RenameOptions,
    ) -> object_store::Result<()> {
        self.inner.rename_opts(from, to, options).await
    }
}

/// A SlateDB cache that keeps SST indexes, filters and stats, and never serves a data block.
#[derive(Default)]
pub struct MetadataOnlyCache {
    entries: Mutex<HashMap<CachedKey, CachedEntry>>,
}

impl MetadataOnlyCache {
    fn lookup(&self, key: &CachedKey) -> Option<CachedEntry> {
        self.entries.lock().ok()?.get(key).cloned()
    }
}

#[async_trait]
impl DbCache for MetadataOnlyCache {
    async fn get_block(&self, _key: &CachedKey) -> Result<Option<CachedEntry>, slatedb::Error> {
        Ok(None)
    }

    async fn get_index(&self, key: &CachedKey) -> Result<Option<CachedEntry>, slatedb::Error> {
        Ok(self.lookup(key))
    }

    async fn get_filter(&self, key: &CachedKey) -> Result<Option<CachedEntry>, slatedb::Error> {
        Ok(self.lookup(key))
    }

    async fn get_stats(&self, key: &CachedKey) -> Result<Option<CachedEntry>, slatedb::Error> {
        Ok(self.lookup(key))
    }

    async fn insert(&self, key: CachedKey, value: CachedEntry) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.insert(key, value);
        }
    }

    async fn remove(&self, key: &CachedKey) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.remove(key);
        }
    }

    fn entry_count(&self) -> u64 {
        self.entries.lock().map_or(0, |e| e.len() as u64)
    }

    async fn fetch_block(
        &self,
        _key: CachedKey,
        loader: CacheLoader,
    ) -> Result<CacheFetch, slatedb::Error> {
        // Always from storage, and not kept: data blocks are what the filters are measured on.
        Ok(CacheFetch::miss(loader().await?))
    }
}

/// A key of the test's key space: `"usr:" + 12 digits` plus a 0–8 byte suffix (16–24 bytes), as the other
/// benchmarks use.
pub fn key(id: u64) -> Vec<u8> {
    let mut k = format!("usr:{id:012}").into_bytes();
    for s in 0..(id % 9) {
        k.push(b'a' + (id.wrapping_mul(31).wrapping_add(s) % 26) as u8);
    }
    k
}

/// The value stored under key `id`: 100 bytes derived from it, so a read can be checked.
pub fn value(id: u64) -> Vec<u8> {
    let mut v = Vec::with_capacity(100);
    while v.len() < 100 {
        v.extend_from_slice(&id.wrapping_mul(0x9E37_79B9_7F4A_7C15).to_le_bytes());
    }
    v.truncate(100);
    v
}

/// The `i`-th present key id of `n` in write order: even ids `0, 2, …, 2(n-1)` in a fixed pseudo-random order
/// (so each SST spans the whole key space and every lookup consults every SST). Absent ids are odd.
pub fn present_id(i: u64, n: u64) -> u64 {
    // An affine map of 0..n onto itself, a permutation because the multiplier is a prime that does not divide n.
    const MUL: u64 = 2_654_435_761;
    assert!(n % MUL != 0);
    2 * ((i.wrapping_mul(MUL) + 12_345) % n)
}

/// A SlateDB in `dir` with `n` keys written in `ssts` equal parts, each flushed to its own L0 SST; no
/// compaction, so every part stays a separate table. Returns the database and its counting store.
pub async fn load(
    dir: &Path,
    policies: Vec<Arc<dyn FilterPolicy>>,
    n: u64,
    ssts: u64,
) -> (Db, Arc<CountingStore>) {
    let local =
        object_store::local::LocalFileSystem::new_with_prefix(dir).expect("local object store");
    let store = Arc::new(CountingStore::new(Arc::new(local)));
    let settings = Settings {
        compactor_options: None,
        garbage_collector_options: None,
        l0_max_ssts: 4 * ssts as usize,
        l0_max_ssts_per_key: 4 * ssts as usize,
        ..Settings::default()
    };
    let db = Db::builder("db", store.clone())
        .with_settings(settings)
        .with_filter_policies(policies)
        .with_db_cache(Arc::new(MetadataOnlyCache::default()), 0)
        .build()
        .await
        .expect("open SlateDB");
    let per_sst = n.div_ceil(ssts);
    for part in 0..ssts {
        let ids = (part * per_sst..((part + 1) * per_sst).min(n)).map(|i| present_id(i, n));
        let mut batch = WriteBatch::new();
        for (written, id) in ids.enumerate() {
            batch.put(key(id), value(id));
            if written % 1000 == 999 {
                db.write(std::mem::take(&mut batch)).await.expect("write");
            }
        }
        db.write(batch).await.expect("write");
        db.flush_with_options(FlushOptions {
            flush_type: FlushType::MemTable,
        })
        .await
        .expect("flush memtable to L0");
    }
    (db, store)
}

/// What a pass of lookups found.
#[derive(Debug, Clone, Copy)]
pub struct Lookups {
    pub found: u64,
    pub sst_reads: u64,
    pub elapsed: Duration,
}

/// Looks up every id in `ids`, checking each value found, and counts the SST reads they cause.
pub async fn lookup(db: &Db, store: &CountingStore, ids: impl Iterator<Item = u64>) -> Lookups {
    store.reset();
    let start = Instant::now();
    let mut found = 0;
    for id in ids {
        if let Some(v) = db.get(key(id)).await.expect("get") {
            assert_eq!(v.as_ref(), value(id).as_slice(), "wrong value for key {id}");
            found += 1;
        }
    }
    Lookups {
        found,
        sst_reads: store.sst_reads(),
        elapsed: start.elapsed(),
    }
}
