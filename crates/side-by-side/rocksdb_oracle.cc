// RocksDB's own answers, for tests/rocksdb_agreement.rs: builds a filter with RocksDB 7.8.3's builder, or hashes
// keys with RocksDB's Hash64, and writes what RocksDB computed, so that the test can compare ours with it.
//
// Usage: rocksdb_oracle filter IMPL BITS_PER_KEY [OPTIMIZE_FOR_MEMORY] < input > output
//        rocksdb_oracle read < input > output
//        rocksdb_oracle hash < input > output
//        rocksdb_oracle checksum < input > output
//        rocksdb_oracle sst PATH POLICY BITS_PER_KEY FORMAT_VERSION CHECKSUM PARTITIONED WHOLE_KEYS < input
//        rocksdb_oracle ask PATH DB_DIR < input > output
//   IMPL: bloom (NewBloomFilterPolicy, table format_version 5: FastLocalBloom), legacy (the same policy with
//         format_version 4: the legacy Bloom filter), ribbon (NewRibbonFilterPolicy, the table's level unknown:
//         Standard128Ribbon, or RocksDB's own fallback for key counts Ribbon does not take); OPTIMIZE_FOR_MEMORY 1
//         sets optimize_filters_for_memory (0, RocksDB 7.8.3's default, without it).
//   input:  u32 count, then count keys (u32 length, bytes): the keys to build from (filter), to hash (hash), or
//           filter blocks given as keys (read), to checksum (checksum), to write in order (sst: each the value of
//           itself) or to look up (ask); for filter and read, then u32 count and that many query keys.
//   output: filter: u32 length and the filter's bytes, then one byte per query key (RocksDB's MayMatch, 0 or 1);
//           read: for each block, one byte per query key; hash: one u64 per key; checksum: per input, the u32
//           ComputeBuiltinChecksum of checksum types 0 to 4; ask: per key, 0 where the table's filter answered no
//           match, 1 where it answered may match, 2 where RocksDB's Get did not ask it (a key outside the table's
//           range). Every integer is little-endian.
//   sst: writes PATH with SstFileWriter: POLICY bloom or ribbon, CHECKSUM 0 to 4 (ChecksumType), PARTITIONED 1 for
//        partitioned filters (kTwoLevelIndexSearch, 256-byte metadata blocks, index restart interval 3 so that
//        separators share prefixes), WHOLE_KEYS 0 for a filter of 3-byte prefixes only.
//   ask: ingests a copy of PATH into a new DB at DB_DIR and Gets each key, reading RocksDB's Bloom filter
//        counters (PerfContext) to learn what the table's filter answered.
// Built by the test with: g++ -O2 -std=c++17 rocksdb_oracle.cc -lrocksdb -lpthread (rocksdb_filter_bits.h
// declares the internal classes; it refuses other RocksDB versions).
#include <rocksdb/db.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/perf_context.h>
#include <rocksdb/perf_level.h>
#include <rocksdb/slice.h>
#include <rocksdb/slice_transform.h>
#include <rocksdb/sst_file_writer.h>
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
// Exported by librocksdb (table/format.h): a block's checksum, of the block and its compression type byte.
uint32_t ComputeBuiltinChecksum(ChecksumType type, const char* data, size_t size);
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

// The table options of the sst mode's arguments (after PATH); false on a bad argument.
bool SstOptions(char** args, rocksdb::Options* options) {
  const std::string policy = args[0];
  if (policy != "bloom" && policy != "ribbon") return false;
  const double bpk = std::stod(args[1]);
  rocksdb::BlockBasedTableOptions table;
  table.filter_policy.reset(policy == "ribbon" ? rocksdb::NewRibbonFilterPolicy(bpk)
                                               : rocksdb::NewBloomFilterPolicy(bpk));
  table.format_version = static_cast<uint32_t>(std::stoul(args[2]));
  table.checksum = static_cast<rocksdb::ChecksumType>(std::stoi(args[3]));
  if (std::string(args[4]) == "1") {
    table.partition_filters = true;
    table.index_type = rocksdb::BlockBasedTableOptions::kTwoLevelIndexSearch;
    table.metadata_block_size = 256;
    table.index_block_restart_interval = 3;
  }
  if (std::string(args[5]) == "0") {
    table.whole_key_filtering = false;
    options->prefix_extractor.reset(rocksdb::NewFixedPrefixTransform(3));
  }
  options->table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  return true;
}

int WriteSst(const std::string& path, char** args) {
  rocksdb::Options options;
  if (!SstOptions(args, &options)) return Fail("bad sst arguments");
  std::vector<std::string> keys;
  if (!ReadKeys(&keys)) return Fail("bad input");
  rocksdb::SstFileWriter writer(rocksdb::EnvOptions(), options);
  rocksdb::Status s = writer.Open(path);
  for (size_t i = 0; s.ok() && i < keys.size(); ++i) s = writer.Put(keys[i], keys[i]);
  if (s.ok()) s = writer.Finish();
  return s.ok() ? 0 : Fail(s.ToString().c_str());
}

int Ask(const std::string& path, const std::string& db_dir) {
  std::vector<std::string> keys;
  if (!ReadKeys(&keys)) return Fail("bad input");
  rocksdb::Options options;
  options.create_if_missing = true;
  rocksdb::BlockBasedTableOptions table;
  // Any built-in policy reads any built-in filter; the table's properties say how it was built.
  table.filter_policy.reset(rocksdb::NewBloomFilterPolicy(10));
  options.table_factory.reset(rocksdb::NewBlockBasedTableFactory(table));
  rocksdb::DB* raw = nullptr;
  rocksdb::Status s = rocksdb::DB::Open(options, db_dir, &raw);
  if (!s.ok()) return Fail(s.ToString().c_str());
  std::unique_ptr<rocksdb::DB> db(raw);
  rocksdb::IngestExternalFileOptions ingest;
  ingest.move_files = false;
  s = db->IngestExternalFile({path}, ingest);
  if (!s.ok()) return Fail(s.ToString().c_str());
  rocksdb::SetPerfLevel(rocksdb::PerfLevel::kEnableCount);
  std::string value;
  for (const auto& key : keys) {
    rocksdb::get_perf_context()->Reset();
    s = db->Get(rocksdb::ReadOptions(), key, &value);
    if (!s.ok() && !s.IsNotFound()) return Fail(s.ToString().c_str());
    const auto* perf = rocksdb::get_perf_context();
    fputc(perf->bloom_sst_miss_count > 0 ? 0 : perf->bloom_sst_hit_count > 0 ? 1 : 2, stdout);
  }
  return fflush(stdout) == 0 ? 0 : 1;
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
  if (argc == 2 && std::string(argv[1]) == "checksum") {
    std::vector<std::string> inputs;
    if (!ReadKeys(&inputs)) return Fail("bad input");
    for (const auto& input : inputs) {
      for (int type = 0; type <= 4; ++type) {
        WriteLe(rocksdb::ComputeBuiltinChecksum(static_cast<rocksdb::ChecksumType>(type), input.data(), input.size()),
                4);
      }
    }
    return fflush(stdout) == 0 ? 0 : 1;
  }
  if (argc == 9 && std::string(argv[1]) == "sst") return WriteSst(argv[2], argv + 3);
  if (argc == 4 && std::string(argv[1]) == "ask") return Ask(argv[2], argv[3]);
  if ((argc != 4 && argc != 5) || std::string(argv[1]) != "filter") {
    return Fail(
        "usage: filter IMPL BITS_PER_KEY [OPTIMIZE_FOR_MEMORY] | read | hash | checksum | sst PATH ... | ask PATH DB_DIR");
  }
  const std::string impl = argv[2];
  const double bpk = std::stod(argv[3]);
  if (impl != "bloom" && impl != "legacy" && impl != "ribbon") return Fail("IMPL is bloom, legacy or ribbon");
  std::vector<std::string> keys, queries;
  if (!ReadKeys(&keys) || !ReadKeys(&queries)) return Fail("bad input");

  rocksdb::BlockBasedTableOptions table;
  table.format_version = impl == "legacy" ? 4 : 5;
  table.optimize_filters_for_memory = argc == 5 && std::string(argv[4]) == "1";
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
