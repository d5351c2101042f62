//! Real stores on the local disk, with the reads that reach storage counted: shared by the adapters' integration
//! tests (`crates/sstfilter-slatedb/tests/`, `crates/sstfilter-rusty-leveldb/tests/`) and the reads-avoided
//! benchmark (`crates/bench/benches/reads_avoided.rs`). Workspace-internal, not published.

#![deny(missing_docs)]

use std::time::Duration;

pub mod leveldb;
pub mod slatedb;

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
/// (so each SST spans the whole key space and every lookup consults every SST).
pub fn present_id(i: u64, n: u64) -> u64 {
    2 * permute(i, n, 12_345)
}

/// The `i`-th absent key id of a store of `n` keys: the odd ids `1, 3, …, 2n-1` (every gap between two present
/// keys), in a pseudo-random order so that consecutive lookups do not land in the same data block; from `i = n`
/// on, the same ids again in the same order.
pub fn absent_id(i: u64, n: u64) -> u64 {
    2 * permute(i, n, 54_321) + 1
}

/// An affine map of `i mod n` onto `0..n`, a permutation because the multiplier is a prime that does not divide
/// `n`.
fn permute(i: u64, n: u64, offset: u64) -> u64 {
    const MUL: u64 = 2_654_435_761;
    assert!(!n.is_multiple_of(MUL));
    ((i % n) * MUL + offset) % n
}

/// Where a tenant of the prefix-scan stores has keys: tenant `t` (keys `"t{t:05}/…"`) is in every table when
/// `t % 4 == 0`, in the one table `t / 4 % tables` when `t % 4 == 2`, and in none when `t` is odd. So absent
/// tenants sit between present ones, inside every table's key range, where only a filter can skip the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tenant {
    /// No key in any table.
    Absent,
    /// Keys in this one table only.
    InOne(u64),
    /// Keys in every table.
    InAll,
}

impl Tenant {
    /// Where tenant `t` has keys in a store of `tables` tables.
    pub fn of(t: u64, tables: u64) -> Tenant {
        match t % 4 {
            0 => Tenant::InAll,
            2 => Tenant::InOne(t / 4 % tables),
            _ => Tenant::Absent,
        }
    }

    /// Whether the tenant has keys in table `table`.
    pub fn in_table(self, table: u64) -> bool {
        match self {
            Tenant::Absent => false,
            Tenant::InOne(t) => t == table,
            Tenant::InAll => true,
        }
    }
}

/// The scan prefix of tenant `t`: `"t{t:05}/"`.
pub fn tenant_prefix(t: u64) -> Vec<u8> {
    format!("t{t:05}/").into_bytes()
}

/// The `j`-th key of tenant `t` in table `table`: the tenant's prefix, the table, then `j`.
pub fn tenant_key(t: u64, table: u64, j: u64) -> Vec<u8> {
    let mut key = tenant_prefix(t);
    key.extend_from_slice(format!("{table:03}-{j:05}").as_bytes());
    key
}

/// What a pass of prefix scans found.
#[derive(Debug, Clone, Copy)]
pub struct Scans {
    /// Rows returned by every scan together.
    pub rows: u64,
    /// Reads of table files that reached storage.
    pub reads: u64,
    /// Wall time of the pass.
    pub elapsed: Duration,
}

/// What a pass of lookups found.
#[derive(Debug, Clone, Copy)]
pub struct Lookups {
    /// Lookups that found their key.
    pub found: u64,
    /// Reads of table files that reached storage.
    pub reads: u64,
    /// Wall time of the pass.
    pub elapsed: Duration,
}
