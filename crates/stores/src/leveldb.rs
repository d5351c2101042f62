//! A real rusty-leveldb database on disk, with the table reads that reach the file system counted.
//!
//! Every table file is read through [`CountingEnv`]. The block cache is cut to its minimum (one block), so a data
//! block is read from the file each time it is needed; indexes and filters are loaded once per table when the
//! table is opened. After a first pass has opened every table, the reads made for absent keys are the data-block
//! reads their filters failed to avoid.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use rusty_leveldb::env::{Env, FileLock, Logger, RandomAccess};
use rusty_leveldb::{DB, FilterPolicy, Options, PosixDiskEnv};

use super::{Lookups, key, present_id, value};

/// The file system, with the reads of table files (`*.ldb`) counted.
pub struct CountingEnv {
    inner: PosixDiskEnv,
    table_reads: Arc<AtomicU64>,
}

impl CountingEnv {
    /// The disk, and the counter its table reads go to.
    pub fn new() -> (Self, Arc<AtomicU64>) {
        let table_reads = Arc::new(AtomicU64::new(0));
        (
            CountingEnv {
                inner: PosixDiskEnv::new(),
                table_reads: table_reads.clone(),
            },
            table_reads,
        )
    }
}

struct CountingFile {
    inner: Box<dyn RandomAccess>,
    reads: Arc<AtomicU64>,
}

impl RandomAccess for CountingFile {
    fn read_at(&self, off: usize, dst: &mut [u8]) -> rusty_leveldb::Result<usize> {
        self.reads.fetch_add(1, Ordering::Relaxed);
        self.inner.read_at(off, dst)
    }
}

impl Env for CountingEnv {
    fn open_sequential_file(&self, p: &Path) -> rusty_leveldb::Result<Box<dyn Read>> {
        self.inner.open_sequential_file(p)
    }
    fn open_random_access_file(&self, p: &Path) -> rusty_leveldb::Result<Box<dyn RandomAccess>> {
        let file = self.inner.open_random_access_file(p)?;
        if p.extension().is_some_and(|e| e == "ldb" || e == "sst") {
            Ok(Box::new(CountingFile {
                inner: file,
                reads: self.table_reads.clone(),
            }))
        } else {
            Ok(file)
        }
    }
    fn open_writable_file(&self, p: &Path) -> rusty_leveldb::Result<Box<dyn Write>> {
        self.inner.open_writable_file(p)
    }
    fn open_appendable_file(&self, p: &Path) -> rusty_leveldb::Result<Box<dyn Write>> {
        self.inner.open_appendable_file(p)
    }
    fn exists(&self, p: &Path) -> rusty_leveldb::Result<bool> {
        self.inner.exists(p)
    }
    fn children(&self, p: &Path) -> rusty_leveldb::Result<Vec<PathBuf>> {
        self.inner.children(p)
    }
    fn size_of(&self, p: &Path) -> rusty_leveldb::Result<usize> {
        self.inner.size_of(p)
    }
    fn delete(&self, p: &Path) -> rusty_leveldb::Result<()> {
        self.inner.delete(p)
    }
    fn mkdir(&self, p: &Path) -> rusty_leveldb::Result<()> {
        self.inner.mkdir(p)
    }
    fn rmdir(&self, p: &Path) -> rusty_leveldb::Result<()> {
        self.inner.rmdir(p)
    }
    fn rename(&self, from: &Path, to: &Path) -> rusty_leveldb::Result<()> {
        self.inner.rename(from, to)
    }
    fn lock(&self, p: &Path) -> rusty_leveldb::Result<FileLock> {
        self.inner.lock(p)
    }
    fn unlock(&self, l: FileLock) -> rusty_leveldb::Result<()> {
        self.inner.unlock(l)
    }
    fn new_logger(&self, p: &Path) -> rusty_leveldb::Result<Logger> {
        self.inner.new_logger(p)
    }
    fn micros(&self) -> u64 {
        self.inner.micros()
    }
    fn sleep_for(&self, micros: u32) {
        self.inner.sleep_for(micros);
    }
}

/// Wraps a filter policy to measure the filters it creates: keys and bytes.
pub struct Measured {
    inner: Box<dyn FilterPolicy>,
    keys: Arc<AtomicU64>,
    bytes: Arc<AtomicU64>,
}

/// Filter bits per key created through a [`Measured`] policy, read from its counters.
pub struct FilterSize {
    keys: Arc<AtomicU64>,
    bytes: Arc<AtomicU64>,
}

impl FilterSize {
    /// Filter bits per key over every filter built.
    pub fn bits_per_key(&self) -> f64 {
        8.0 * self.bytes.load(Ordering::Relaxed) as f64
            / self.keys.load(Ordering::Relaxed).max(1) as f64
    }
}

impl Measured {
    /// `inner`, measured, and the handle its filter sizes are read from.
    pub fn new(inner: Box<dyn FilterPolicy>) -> (Self, FilterSize) {
        let (keys, bytes) = (Arc::new(AtomicU64::new(0)), Arc::new(AtomicU64::new(0)));
        let stats = FilterSize {
            keys: keys.clone(),
            bytes: bytes.clone(),
        };
        (Measured { inner, keys, bytes }, stats)
    }
}

impl FilterPolicy for Measured {
    fn name(&self) -> &'static str {
        self.inner.name()
    }
    fn create_filter(&self, keys: &[u8], key_offsets: &[usize]) -> Vec<u8> {
        let filter = self.inner.create_filter(keys, key_offsets);
        self.keys
            .fetch_add(key_offsets.len() as u64, Ordering::Relaxed);
        self.bytes.fetch_add(filter.len() as u64, Ordering::Relaxed);
        filter
    }
    fn key_may_match(&self, key: &[u8], filter: &[u8]) -> bool {
        self.inner.key_may_match(key, filter)
    }
}

/// "No filter": rusty-leveldb always writes a filter block, so this one stores one byte per filter and matches
/// every key. (An empty filter would trip an assertion in rusty-leveldb's filter block reader.)
pub struct AlwaysMatch;

impl FilterPolicy for AlwaysMatch {
    fn name(&self) -> &'static str {
        "always-match"
    }
    fn create_filter(&self, _keys: &[u8], _key_offsets: &[usize]) -> Vec<u8> {
        vec![0]
    }
    fn key_may_match(&self, _key: &[u8], _filter: &[u8]) -> bool {
        true
    }
}

/// A database in `dir` holding `n` keys written in pseudo-random order, with `filter` (or none); the memtable is
/// flushed at the end so every key is in a table. Returns the database and its table-read counter.
pub fn load(dir: &Path, filter: Option<Box<dyn FilterPolicy>>, n: u64) -> (DB, Arc<AtomicU64>) {
    let (env, reads) = CountingEnv::new();
    let mut options = Options {
        create_if_missing: true,
        env: Rc::new(Box::new(env)),
        ..Options::default()
    };
    // One block: the minimum rusty-leveldb allows; data blocks are read from the file every time.
    options.block_cache_capacity_bytes = options.block_size;
    options.filter_policy = Rc::new(filter.unwrap_or_else(|| Box::new(AlwaysMatch)));
    let mut db = DB::open(dir, options).expect("open rusty-leveldb");
    for i in 0..n {
        let id = present_id(i, n);
        db.put(&key(id), &value(id)).expect("put");
    }
    db.flush().expect("flush");
    (db, reads)
}

/// Looks up every id in `ids`, checking each value found, and counts the table reads they cause.
pub fn lookup(db: &mut DB, reads: &AtomicU64, ids: impl Iterator<Item = u64>) -> Lookups {
    reads.store(0, Ordering::Relaxed);
    let start = Instant::now();
    let mut found = 0;
    for id in ids {
        if let Some(v) = db.get(&key(id)) {
            assert_eq!(v.as_ref(), value(id).as_slice(), "wrong value for key {id}");
            found += 1;
        }
    }
    Lookups {
        found,
        reads: reads.load(Ordering::Relaxed),
        elapsed: start.elapsed(),
    }
}
