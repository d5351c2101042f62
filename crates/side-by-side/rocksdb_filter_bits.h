// The two RocksDB classes filter_bench.cc calls that Debian's librocksdb-dev does not declare, written here so that
// the bench builds from Debian's packages alone.
//
// RocksDB's public `rocksdb/filter_policy.h` gives everything else the bench needs: `FilterPolicy` with its
// virtual `GetBuilderWithContext` and `GetFilterBitsReader`, the `FilterBuildingContext` they take, and the
// policies from `NewBloomFilterPolicy` / `NewRibbonFilterPolicy`. But since RocksDB 7.0 the two classes those
// virtuals return are only forward-declared there ("the details of these classes are internal"): a program can get
// a builder and a reader but not add a key or ask a question. No public call of 7.8.3 answers a probe against a
// filter's bits (the C API has none; `DB::Get` goes through a whole table), so to time the probe alone, as our
// side does, the bench calls the two classes' virtual functions, declared below.
//
// Where the layout comes from, pinned to RocksDB 7.8.3 (Debian 12's librocksdb7.8, 7.8.3-2): the class
// definitions in RocksDB's `table/block_based/filter_policy_internal.h` at tag v7.8.3 (commit 52c381b8), which
// are not part of the installed headers. Only what the calls depend on is reproduced, in RocksDB's names:
//   - each class has no data members, so an object is its vtable pointer;
//   - the virtual functions in declaration order, which is their vtable order under the Itanium C++ ABI (GCC and
//     Clang on Linux), overloads included: the virtual destructor (two slots), then the functions below. Every
//     slot up to the last one called is declared, so each call lands in the library's function.
// The functions RocksDB gives default bodies (`Finish` with a status, `MaybePostVerify`, the batched `MayMatch`)
// are declared pure here: a slot is a slot whatever it holds, the bench never derives from these classes, and the
// library's concrete builders and readers supply the code. Nothing of RocksDB's implementation is copied.
// RocksDB's `BuiltinFilterBitsBuilder` / `BuiltinFilterBitsReader` subclasses add slots after these and are not
// needed.
//
// To recheck against another release (or after editing this file): check_abi.sh DIR, with DIR holding that
// release's filter_policy_internal.h, compiles a call to each function declared here against both headers and
// compares the code (same vtable offsets, same calling conventions); then widen the version check below.
// filter_bench.cc also calls every function declared here once after its timed phases and checks the answers,
// and refuses to run against a library that reports another version.
#pragma once

#include <rocksdb/filter_policy.h>
#include <rocksdb/slice.h>
#include <rocksdb/status.h>
#include <rocksdb/version.h>

#include <cstddef>
#include <memory>

#if !(ROCKSDB_MAJOR == 7 && ROCKSDB_MINOR == 8 && ROCKSDB_PATCH == 3)
#error "rocksdb_filter_bits.h declares RocksDB 7.8.3's internal filter classes; these headers are another version"
#endif

namespace ROCKSDB_NAMESPACE {

// Collects keys (RocksDB keeps their 64-bit hashes) and writes the filter at Finish.
class FilterBitsBuilder {
 public:
  virtual ~FilterBitsBuilder() = default;
  virtual void AddKey(const Slice& key) = 0;
  // The number of distinct keys added so far (approximate in general; exact for distinct keys added in order).
  virtual size_t EstimateEntriesAdded() = 0;
  // The filter; `*buf` owns its bytes.
  virtual Slice Finish(std::unique_ptr<const char[]>* buf) = 0;
  virtual Slice Finish(std::unique_ptr<const char[]>* buf, Status* status) = 0;
  virtual Status MaybePostVerify(const Slice& filter_content) = 0;
  // About how many keys a filter of `bytes` bytes holds at the configured rate.
  virtual size_t ApproximateNumEntries(size_t bytes) = 0;
};

// Answers for a filter's bytes (which the caller keeps alive).
class FilterBitsReader {
 public:
  virtual ~FilterBitsReader() = default;
  virtual bool MayMatch(const Slice& entry) = 0;
  // `num_keys` keys at once (MultiGet's path): the built-in readers prefetch every key's cache line first.
  virtual void MayMatch(int num_keys, Slice** keys, bool* may_match) = 0;
};

}  // namespace ROCKSDB_NAMESPACE
