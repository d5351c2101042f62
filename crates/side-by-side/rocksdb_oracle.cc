// RocksDB's own answers, for tests/rocksdb_agreement.rs: builds a filter with RocksDB 7.8.3's builder, or hashes
// keys with RocksDB's Hash64, and writes what RocksDB computed, so that the test can compare ours with it.
//
// Usage: rocksdb_oracle filter IMPL BITS_PER_KEY < input > output
//        rocksdb_oracle read < input > output
//        rocksdb_oracle hash < input > output
//   IMPL: bloom (NewBloomFilterPolicy, table format_version 5: FastLocalBloom), legacy (the same policy with
//         format_version 4: the legacy Bloom filter), ribbon (NewRibbonFilterPolicy, the table's level unknown:
//         Standard128Ribbon, or RocksDB's own fallback for key counts Ribbon does not take).
//   input:  u32 count, then count keys (u32 length, bytes): the keys to build from (filter), to hash (hash), or
//           filter blocks given as keys (read); for filter and read, then u32 count and that many query keys.
//   output: filter: u32 length and the filter's bytes, then one byte per query key (RocksDB's MayMatch, 0 or 1);
//           read: for each block, one byte per query key; hash: one u64 per key. Every integer is little-endian.
// Built by the test with: g++ -O2 -std=c++17 rocksdb_oracle.cc -lrocksdb -lpthread (rocksdb_filter_bits.h
// declares the internal classes; it refuses other RocksDB versions).
#include <rocksdb/filter_policy.h>
#include <rocksdb/slice.h>
#include <rocksdb/table.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "rocksdb_filter_bits.h"

namespace ROCKSDB_NAMESPACE {
// Exported by librocksdb (util/hash.h): the hash GetSliceHash64 inlines.
uint64_t Hash64(const char* data, size_t n);
}  // namespace ROCKSDB_NAMESPACE

namespace {

bool ReadU32(uint32_t* v) {
  unsigned char b[4];
  if (fread(b, 1, 4, stdin) != 4) return false;
  *v = uint32_t{b[0]} | uint32_t{b[1]} << 8 | uint32_t{b[2]} << 16 | uint32_t{b[3]} << 24;
  return true;
}

bool ReadKeys(std::vector<std::string>* keys) {
  uint32_t count;
  if (!ReadU32(&count)) return false;
  keys->resize(count);
  for (auto& key : *keys) {
    uint32_t len;
    if (!ReadU32(&len)) return false;
    key.resize(len);
    if (len > 0 && fread(&key[0], 1, len, stdin) != len) return false;
  }
  return true;
}

void WriteLe(uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) fputc(static_cast<int>((v >> (8 * i)) & 0xff), stdout);
}

int Fail(const char* why) {
  fprintf(stderr, "rocksdb_oracle: %s\n", why);
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "hash") {
    std::vector<std::string> keys;
    if (!ReadKeys(&keys)) return Fail("bad input");
    for (const auto& key : keys) WriteLe(rocksdb::Hash64(key.data(), key.size()), 8);
    return fflush(stdout) == 0 ? 0 : 1;
  }
  if (argc == 2 && std::string(argv[1]) == "read") {
    // Any policy reads any built-in filter: the reader is chosen by the block's metadata.
    std::unique_ptr<const rocksdb::FilterPolicy> policy(rocksdb::NewBloomFilterPolicy(10));
    std::vector<std::string> blocks, queries;
    if (!ReadKeys(&blocks) || !ReadKeys(&queries)) return Fail("bad input");
    for (const auto& block : blocks) {
      std::unique_ptr<rocksdb::FilterBitsReader> reader(policy->GetFilterBitsReader(block));
      if (!reader) return Fail("no reader");
      for (const auto& query : queries) fputc(reader->MayMatch(query) ? 1 : 0, stdout);
    }
    return fflush(stdout) == 0 ? 0 : 1;
  }
  if (argc != 4 || std::string(argv[1]) != "filter") return Fail("usage: filter IMPL BITS_PER_KEY | read | hash");
  const std::string impl = argv[2];
  const double bpk = std::stod(argv[3]);
  if (impl != "bloom" && impl != "legacy" && impl != "ribbon") return Fail("IMPL is bloom, legacy or ribbon");
  std::vector<std::string> keys, queries;
  if (!ReadKeys(&keys) || !ReadKeys(&queries)) return Fail("bad input");

  rocksdb::BlockBasedTableOptions table;
  table.format_version = impl == "legacy" ? 4 : 5;
  std::unique_ptr<const rocksdb::FilterPolicy> policy(impl == "ribbon" ? rocksdb::NewRibbonFilterPolicy(bpk)
                                                                       : rocksdb::NewBloomFilterPolicy(bpk));
  const rocksdb::FilterBuildingContext context(table);
  std::unique_ptr<rocksdb::FilterBitsBuilder> builder(policy->GetBuilderWithContext(context));
  if (!builder) return Fail("no builder");
  for (const auto& key : keys) builder->AddKey(key);
  std::unique_ptr<const char[]> buf;
  const rocksdb::Slice filter = builder->Finish(&buf);
  // Copied before the reader is made, as a table reader gets the block: the reader keeps a pointer to the bytes.
  const std::string bytes(filter.data(), filter.size());
  std::unique_ptr<rocksdb::FilterBitsReader> reader(policy->GetFilterBitsReader(bytes));
  if (!reader) return Fail("no reader");
  WriteLe(bytes.size(), 4);
  fwrite(bytes.data(), 1, bytes.size(), stdout);
  for (const auto& query : queries) fputc(reader->MayMatch(query) ? 1 : 0, stdout);
  return fflush(stdout) == 0 ? 0 : 1;
}
