//! A real SlateDB on the local file system, with the reads that reach storage counted.
//!
//! Every SST read goes through [`CountingStore`], an `ObjectStore` wrapper. SlateDB is given a cache that keeps
//! SST indexes, filters and stats but never data blocks, as a store whose data does not fit in memory behaves:
//! after the first lookup has loaded each SST's index and filter, every storage read is a data-block read, and
//! the ones made for absent keys are exactly the reads a filter failed to avoid.

use std::collections::HashMap;
use std::fmt;
use std::ops::Range;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

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

use super::{Lookups, Scans, Tenant, key, present_id, tenant_key, tenant_prefix, value};

/// Ribbon at the filter bytes of SlateDB's own `BloomFilterPolicy::new(10)`: `2^-9.75` is the rate whose Ribbon
/// filters for the 12,500-key SSTs these stores are loaded with (100,000 keys in 8 SSTs) take 9.98 bits/key,
/// trailer and directory included, against SlateDB's 10.00.
pub fn ribbon_at_slatedb_bloom_bytes() -> sstfilter::RibbonPolicy {
    sstfilter::RibbonPolicy::with_fpr(2f64.powf(-9.75)).unwrap()
}

/// An `ObjectStore` that counts the reads of SST files (`compacted/*.sst`) before passing them on.
#[derive(Debug)]
pub struct CountingStore {
    inner: Arc<dyn ObjectStore>,
    sst_reads: AtomicU64,
}

impl CountingStore {
    /// `inner`, with its SST reads counted.
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

    /// Starts counting SST reads from zero.
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

/// A SlateDB in `dir` with `n` keys written in `ssts` equal parts, each flushed to its own L0 SST; no
/// compaction, so every part stays a separate table. Returns the database and its counting store.
pub async fn load(
    dir: &Path,
    policies: Vec<Arc<dyn FilterPolicy>>,
    n: u64,
    ssts: u64,
) -> (Db, Arc<CountingStore>) {
    let store = counting_store(dir);
    let db = open(store.clone(), policies, ssts).await;
    let per_sst = n.div_ceil(ssts);
    for part in 0..ssts {
        let ids = (part * per_sst..((part + 1) * per_sst).min(n)).map(|i| present_id(i, n));
        let mut batch = WriteBatch::new();
        for (written, id) in ids.enumerate() {
            batch.put(key(id), value(id));
            write_full(&db, &mut batch, written).await;
        }
        flush(&db, batch).await;
    }
    (db, store)
}

/// Builds a SlateDB on `store` with `policies`, the cache of [`MetadataOnlyCache`] and no compaction, so that
/// every flushed L0 SST stays a table of its own.
async fn open(store: Arc<CountingStore>, policies: Vec<Arc<dyn FilterPolicy>>, ssts: u64) -> Db {
    let settings = Settings {
        compactor_options: None,
        garbage_collector_options: None,
        l0_max_ssts: 4 * ssts as usize,
        l0_max_ssts_per_key: 4 * ssts as usize,
        ..Settings::default()
    };
    Db::builder("db", store)
        .with_settings(settings)
        .with_filter_policies(policies)
        .with_db_cache(Arc::new(MetadataOnlyCache::default()), 0)
        .build()
        .await
        .expect("open SlateDB")
}

fn counting_store(dir: &Path) -> Arc<CountingStore> {
    let local =
        object_store::local::LocalFileSystem::new_with_prefix(dir).expect("local object store");
    Arc::new(CountingStore::new(Arc::new(local)))
}

/// Writes `batch` once it holds 1000 entries.
async fn write_full(db: &Db, batch: &mut WriteBatch, written: usize) {
    if written % 1000 == 999 {
        db.write(std::mem::take(batch)).await.expect("write");
    }
}

/// Writes what is left in `batch` and flushes the memtable to an L0 SST of its own.
async fn flush(db: &Db, batch: WriteBatch) {
    db.write(batch).await.expect("write");
    db.flush_with_options(FlushOptions {
        flush_type: FlushType::MemTable,
    })
    .await
    .expect("flush memtable to L0");
}

/// A SlateDB in `dir` of `tenants` tenants (see [`Tenant`]) in `ssts` flushed L0 SSTs, with
/// `keys_per_tenant` keys for each tenant in each SST it is in. Returns the database and its counting store.
pub async fn load_tenants(
    dir: &Path,
    policies: Vec<Arc<dyn FilterPolicy>>,
    tenants: u64,
    keys_per_tenant: u64,
    ssts: u64,
) -> (Db, Arc<CountingStore>) {
    let store = counting_store(dir);
    let db = open(store.clone(), policies, ssts).await;
    for sst in 0..ssts {
        let mut batch = WriteBatch::new();
        let mut written = 0;
        for t in (0..tenants).filter(|&t| Tenant::of(t, ssts).in_table(sst)) {
            for j in 0..keys_per_tenant {
                batch.put(tenant_key(t, sst, j), value(j));
                write_full(&db, &mut batch, written).await;
                written += 1;
            }
        }
        flush(&db, batch).await;
    }
    (db, store)
}

/// Scans the prefix of every tenant in `tenants`, reading each row, and counts the SST reads.
pub async fn scan_tenants(
    db: &Db,
    store: &CountingStore,
    tenants: impl Iterator<Item = u64>,
) -> Scans {
    store.reset();
    let start = Instant::now();
    let mut rows = 0;
    for t in tenants {
        let mut iter = db.scan_prefix(tenant_prefix(t), ..).await.expect("scan");
        while let Some(row) = iter.next().await.expect("next row") {
            assert!(
                row.key.starts_with(&tenant_prefix(t)),
                "row outside the scan"
            );
            rows += 1;
        }
    }
    Scans {
        rows,
        reads: store.sst_reads(),
        elapsed: start.elapsed(),
    }
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
        reads: store.sst_reads(),
        elapsed: start.elapsed(),
    }
}

/// Wraps a filter policy to measure the filters it builds: keys added and encoded bytes.
pub struct Measured {
    inner: Arc<dyn FilterPolicy>,
    stats: Arc<FilterSize>,
}

/// Keys and encoded bytes of every filter a [`Measured`] policy built.
#[derive(Debug, Default)]
pub struct FilterSize {
    keys: AtomicU64,
    bytes: AtomicU64,
}

impl FilterSize {
    /// Encoded filter bits per key over every filter built.
    pub fn bits_per_key(&self) -> f64 {
        8.0 * self.bytes.load(Ordering::Relaxed) as f64
            / self.keys.load(Ordering::Relaxed).max(1) as f64
    }

    /// Encoded bytes of every filter built.
    pub fn bytes(&self) -> u64 {
        self.bytes.load(Ordering::Relaxed)
    }
}

impl Measured {
    /// `inner`, measured, and the handle its filter sizes are read from.
    pub fn wrap(inner: Arc<dyn FilterPolicy>) -> (Arc<dyn FilterPolicy>, Arc<FilterSize>) {
        let stats = Arc::new(FilterSize::default());
        (
            Arc::new(Measured {
                inner,
                stats: stats.clone(),
            }),
            stats,
        )
    }
}

impl FilterPolicy for Measured {
    fn name(&self) -> &str {
        self.inner.name()
    }

    fn builder(&self) -> Box<dyn slatedb::FilterBuilder> {
        Box::new(MeasuredBuilder {
            inner: self.inner.builder(),
            keys: 0,
            stats: self.stats.clone(),
        })
    }

    fn decode(&self, data: &[u8]) -> Arc<dyn slatedb::Filter> {
        self.inner.decode(data)
    }

    fn estimate_size(&self, num_keys: usize) -> usize {
        self.inner.estimate_size(num_keys)
    }

    fn supports_range_queries(&self) -> bool {
        self.inner.supports_range_queries()
    }

    fn supports_prefix_queries(&self) -> bool {
        self.inner.supports_prefix_queries()
    }
}

struct MeasuredBuilder {
    inner: Box<dyn slatedb::FilterBuilder>,
    keys: u64,
    stats: Arc<FilterSize>,
}

impl slatedb::FilterBuilder for MeasuredBuilder {
    fn add_entry(&mut self, entry: &slatedb::RowEntry) {
        self.keys += 1;
        self.inner.add_entry(entry);
    }

    fn build(&mut self) -> Arc<dyn slatedb::Filter> {
        let filter = self.inner.build();
        let mut encoded = Vec::new();
        filter.encode(&mut encoded);
        self.stats
            .keys
            .fetch_add(std::mem::take(&mut self.keys), Ordering::Relaxed);
        self.stats
            .bytes
            .fetch_add(encoded.len() as u64, Ordering::Relaxed);
        filter
    }
}
