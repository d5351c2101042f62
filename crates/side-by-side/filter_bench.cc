// RocksDB's and LevelDB's filters through the same motions as our `side_by_side` binary (src/main.rs): the same
// 16-byte keys in the same order (src/lib.rs), the same timed phases and the same output line, so that run.sh can
// run the two interleaved and compare them run by run.
//
//   filter_bench <impl> <n_total> <bits_per_key> <keys_per_filter> [absent]
//     impl: rocks_bloom  | RocksDB's FastLocalBloom: NewBloomFilterPolicy, table format_version 5
//           rocks_legacy | RocksDB's legacy Bloom: the same policy with format_version 4
//           rocks_ribbon | RocksDB's Standard128Ribbon: NewRibbonFilterPolicy, the table's level unknown
//           leveldb      | LevelDB's NewBloomFilterPolicy (whole bits per key)
//     keys_per_filter: 0 for one filter of all n keys, else one filter per keys_per_filter consecutive keys
//     absent: how many absent keys to query (default max(n, 10^6))
//   With FILTER_DUMP=PATH set, a RocksDB impl also writes the filters it built to PATH (u32 count, then each as a
//   u32 length and its bytes), for side_by_side's rocks_*_reader impls (our writer and reader of RocksDB's bytes),
//   which check that their own bytes are these.
//
// Builds against Debian 12's packages alone (librocksdb-dev 7.8.3, libleveldb-dev 1.23): LevelDB's filter policy
// is public API; RocksDB's builders and readers come from its public FilterPolicy, and the two classes their
// calls need are declared in rocksdb_filter_bits.h (why, and the ABI they match, there).
//
// Phases, each timed on its own (steady clock, ns per key):
//   build_ns        every filter from its keys: a builder from the policy, each key added, Finish (for LevelDB:
//                   the filter's keys as slices, then CreateFilter); hashing and finishing included
//   hit_ns          every present key, in index order, against the filter that holds it (all must match)
//   miss_ns         every absent key against a pseudo-random filter (splitmix64(7i + 3) mod filters)
//   batch32_miss_ns absent keys 32 at a time through RocksDB's batched MayMatch (MultiGet's path), when there is
//                   one filter and the library has a batched call; -1 otherwise
// and prints
//   <impl> n= bpk= kpf= build_ns= hit_ns= miss_ns= batch32_miss_ns= fp= bytes_per_key= bits_per_key=
// After the timed phases (so as not to disturb them) it checks that RocksDB built the filter kind asked for and
// that every RocksDB call declared in rocksdb_filter_bits.h gives a sane answer; it prints nothing on failure.

#include <leveldb/filter_policy.h>
#include <leveldb/slice.h>
#include <rocksdb/filter_policy.h>
#include <rocksdb/table.h>
#include <rocksdb/version.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "rocksdb_filter_bits.h"

namespace {

constexpr size_t kKeyLen = 16;
// The key's decimal field has 9 digits: more indices would repeat its digits (src/lib.rs keeps the low 9 too).
constexpr uint64_t kMaxKeys = 1000000000;
// Keys per batched query, as a MultiGet batch.
constexpr size_t kBatch = 32;

uint64_t Splitmix64(uint64_t x) {
  uint64_t z = x + 0x9e3779b97f4a7c15ULL;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

// Keys first .. first + count back to back, each "key", its index as 9 decimal digits, then 4 hex digits from
// the low nibbles of splitmix64(index) (lowest first), as src/lib.rs makes them.
std::vector<char> Keys(uint64_t first, size_t count) {
  static const char kHex[] = "0123456789abcdef";
  std::vector<char> out(count * kKeyLen);
  for (size_t i = 0; i < count; i++) {
    char* key = &out[i * kKeyLen];
    uint64_t idx = first + i;
    key[0] = 'k';
    key[1] = 'e';
    key[2] = 'y';
    uint64_t rest = idx;
    for (int d = 11; d >= 3; d--) {
      key[d] = static_cast<char>('0' + rest % 10);
      rest /= 10;
    }
    uint64_t h = Splitmix64(idx);
    for (int j = 0; j < 4; j++) key[12 + j] = kHex[(h >> (4 * j)) & 15];
  }
  return out;
}

double NowNs() {
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

bool ParseCount(const char* text, uint64_t* out) {
  char* end = nullptr;
  unsigned long long v = std::strtoull(text, &end, 10);
  if (end == text || *end != '\0' || text[0] == '-') return false;
  *out = v;
  return true;
}

struct Timings {
  double hit_ns = 0;
  double miss_ns = 0;
  double batch_ns = -1;
  size_t false_positives = 0;
  size_t batch_positives = 0;
};

// The query phases for either library, `probe(filter, key)` answering one key. Never inlined, so that each
// library's timed loops start a function of their own rather than wherever they would fall inside `main`, as
// side_by_side's `queries` does (its comment, and BENCHMARKS.md 4b, on a loop's placement moving its time).
template <typename Probe>
__attribute__((noinline)) void SingleQueries(const std::vector<char>& present, size_t n, size_t kpf,
                                             const std::vector<char>& missing, size_t absent,
                                             const std::vector<uint32_t>& filter_of_absent, Probe probe,
                                             Timings* t) {
  size_t hits = 0;
  double start = NowNs();
  // `i / kpf` per key, as side_by_side indexes its filters, so both sides do the same work around the probe.
  for (size_t i = 0; i < n; i++) hits += probe(i / kpf, &present[i * kKeyLen]);
  t->hit_ns = (NowNs() - start) / n;
  if (hits != n) {
    std::fprintf(stderr, "FALSE NEGATIVES: %zu of %zu\n", n - hits, n);
    std::exit(2);
  }

  size_t positives = 0;
  start = NowNs();
  for (size_t i = 0; i < absent; i++) positives += probe(filter_of_absent[i], &missing[i * kKeyLen]);
  t->miss_ns = (NowNs() - start) / absent;
  t->false_positives = positives;
}

__attribute__((noinline)) void BatchedMisses(rocksdb::FilterBitsReader* reader, const std::vector<char>& missing,
                                             size_t absent, Timings* t) {
  rocksdb::Slice keys[kBatch];
  rocksdb::Slice* key_ptrs[kBatch];
  bool answers[kBatch];
  size_t whole = absent / kBatch * kBatch;
  size_t positives = 0;
  double start = NowNs();
  for (size_t i = 0; i < whole; i += kBatch) {
    for (size_t j = 0; j < kBatch; j++) {
      keys[j] = rocksdb::Slice(&missing[(i + j) * kKeyLen], kKeyLen);
      key_ptrs[j] = &keys[j];
    }
    reader->MayMatch(static_cast<int>(kBatch), key_ptrs, answers);
    for (size_t j = 0; j < kBatch; j++) positives += answers[j];
  }
  t->batch_ns = whole ? (NowNs() - start) / whole : -1;
  t->batch_positives = positives;
}

// The marker RocksDB writes in the first of a built-in filter's 5 trailing metadata bytes: -1 for its newer Bloom
// filters (FastLocalBloom), -2 for Standard128Ribbon, the probe count (1..127) for legacy Bloom. Checked after the
// run so that a result line never names a kind RocksDB did not build (a Ribbon builder falls back to Bloom when
// it cannot solve, for one).
bool IsKind(const std::string& impl, const rocksdb::Slice& filter) {
  if (filter.size() <= 5) return false;
  int8_t marker = static_cast<int8_t>(filter.data()[filter.size() - 5]);
  if (impl == "rocks_bloom") return marker == -1;
  if (impl == "rocks_ribbon") return marker == -2;
  return marker >= 1;  // rocks_legacy
}

// Calls every virtual function rocksdb_filter_bits.h declares once, on a small filter, and checks each answer: a
// slot declared out of order would call another function and fail here (or crash) rather than skew a timing
// silently. Untimed; the builder keeps nothing between filters, so the timed ones are unaffected.
bool CheckDeclaredCalls(const rocksdb::FilterPolicy& policy, const rocksdb::FilterBuildingContext& context,
                        const std::vector<char>& present, size_t n, const std::vector<char>& missing,
                        size_t absent) {
  const size_t count = std::min<size_t>(n, 1000);
  std::unique_ptr<rocksdb::FilterBitsBuilder> builder(policy.GetBuilderWithContext(context));
  if (!builder) return false;
  for (size_t i = 0; i < count; i++) builder->AddKey(rocksdb::Slice(&present[i * kKeyLen], kKeyLen));
  if (builder->EstimateEntriesAdded() != count) return false;  // distinct keys, added in order
  std::unique_ptr<const char[]> buf;
  rocksdb::Status status;
  rocksdb::Slice filter = builder->Finish(&buf, &status);
  if (!status.ok() || filter.size() <= 5 || !builder->MaybePostVerify(filter).ok()) return false;
  size_t fits = builder->ApproximateNumEntries(filter.size());
  if (fits < count / 2 || fits > count * 2) return false;

  std::unique_ptr<rocksdb::FilterBitsReader> reader(policy.GetFilterBitsReader(filter));
  if (!reader) return false;
  rocksdb::Slice keys[kBatch];
  rocksdb::Slice* key_ptrs[kBatch];
  bool answers[kBatch];
  const size_t batch = std::min(count, kBatch);
  for (size_t j = 0; j < batch; j++) {
    keys[j] = rocksdb::Slice(&present[j * kKeyLen], kKeyLen);
    key_ptrs[j] = &keys[j];
  }
  reader->MayMatch(static_cast<int>(batch), key_ptrs, answers);
  for (size_t j = 0; j < batch; j++) {
    if (!answers[j]) return false;
  }
  for (size_t i = 0; i < count; i++) {
    if (!reader->MayMatch(rocksdb::Slice(&present[i * kKeyLen], kKeyLen))) return false;
  }
  // A reader that matches everything (what RocksDB returns for bytes it does not recognise) would pass the
  // checks above; at 1 bit per key or more, a real filter rejects most absent keys.
  size_t probes = std::min<size_t>(absent, 1000), positives = 0;
  for (size_t i = 0; i < probes; i++) positives += reader->MayMatch(rocksdb::Slice(&missing[i * kKeyLen], kKeyLen));
  return probes == 0 || positives * 2 < probes;
}

}  // namespace

int main(int argc, char** argv) {
  uint64_t n = 0, kpf = 0, absent = 0;
  double bpk = argc > 3 ? std::atof(argv[3]) : 0;
  if (argc < 5 || argc > 6 || !ParseCount(argv[2], &n) || !ParseCount(argv[4], &kpf) || !(bpk > 0) ||
      (argc == 6 && !ParseCount(argv[5], &absent))) {
    std::fprintf(stderr,
                 "usage: %s <rocks_bloom|rocks_legacy|rocks_ribbon|leveldb> <n_total> <bits_per_key> "
                 "<keys_per_filter, 0 = one filter> [absent]\n",
                 argv[0]);
    return 1;
  }
  const std::string impl = argv[1];
  const bool leveldb = impl == "leveldb";
  if (!leveldb && impl != "rocks_bloom" && impl != "rocks_legacy" && impl != "rocks_ribbon") {
    std::fprintf(stderr, "unknown impl %s: rocks_bloom, rocks_legacy, rocks_ribbon or leveldb\n", impl.c_str());
    return 1;
  }
  if (argc < 6) absent = std::max<uint64_t>(n, 1000000);
  if (n == 0 || n + absent > kMaxKeys) {
    std::fprintf(stderr, "n must be at least 1 and n + absent at most %llu (the keys' 9 digits)\n",
                 static_cast<unsigned long long>(kMaxKeys));
    return 1;
  }
  // The declarations in rocksdb_filter_bits.h match 7.8.3's library; the headers were checked at compile time,
  // this checks the library the loader found.
  if (!leveldb && rocksdb::GetRocksVersionAsString(true) != "7.8.3") {
    std::fprintf(stderr, "librocksdb is %s; rocksdb_filter_bits.h declares 7.8.3's classes\n",
                 rocksdb::GetRocksVersionAsString(true).c_str());
    return 1;
  }
  if (kpf == 0 || kpf > n) kpf = n;
  const size_t filters = (n + kpf - 1) / kpf;

  const std::vector<char> present = Keys(0, n);
  const std::vector<char> missing = Keys(n, absent);
  std::vector<uint32_t> filter_of_absent(absent);
  for (size_t i = 0; i < absent; i++) filter_of_absent[i] = static_cast<uint32_t>(Splitmix64(i * 7 + 3) % filters);

  double build_ns = 0;
  size_t total_bytes = 0;
  Timings t;
  if (leveldb) {
    std::unique_ptr<const leveldb::FilterPolicy> policy(leveldb::NewBloomFilterPolicy(static_cast<int>(bpk)));
    std::vector<std::string> built(filters);
    std::vector<leveldb::Slice> slices(kpf);
    double start = NowNs();
    for (size_t f = 0; f < filters; f++) {
      size_t first = f * kpf, end = std::min<size_t>(n, first + kpf);
      for (size_t i = first; i < end; i++) slices[i - first] = leveldb::Slice(&present[i * kKeyLen], kKeyLen);
      policy->CreateFilter(slices.data(), static_cast<int>(end - first), &built[f]);
    }
    build_ns = (NowNs() - start) / n;
    for (const std::string& b : built) total_bytes += b.size();
    const leveldb::FilterPolicy* p = policy.get();
    SingleQueries(
        present, n, kpf, missing, absent, filter_of_absent,
        [&](size_t f, const char* key) { return p->KeyMayMatch(leveldb::Slice(key, kKeyLen), built[f]); }, &t);
  } else {
    rocksdb::BlockBasedTableOptions table;
    // The policies choose the filter from the table's format (legacy Bloom below 5) and, for Ribbon, the level: a
    // context with no level (-1, not a flush) gets Standard128Ribbon from NewRibbonFilterPolicy's default.
    table.format_version = impl == "rocks_legacy" ? 4 : 5;
    std::unique_ptr<const rocksdb::FilterPolicy> policy(impl == "rocks_ribbon" ? rocksdb::NewRibbonFilterPolicy(bpk)
                                                                               : rocksdb::NewBloomFilterPolicy(bpk));
    const rocksdb::FilterBuildingContext context(table);
    std::vector<std::unique_ptr<const char[]>> owned(filters);
    std::vector<rocksdb::Slice> built(filters);
    double start = NowNs();
    for (size_t f = 0; f < filters; f++) {
      size_t first = f * kpf, end = std::min<size_t>(n, first + kpf);
      std::unique_ptr<rocksdb::FilterBitsBuilder> builder(policy->GetBuilderWithContext(context));
      for (size_t i = first; i < end; i++) builder->AddKey(rocksdb::Slice(&present[i * kKeyLen], kKeyLen));
      built[f] = builder->Finish(&owned[f]);
    }
    build_ns = (NowNs() - start) / n;
    if (const char* dump = std::getenv("FILTER_DUMP")) {
      // The filters as built, for our reader of RocksDB's bytes (side_by_side's rocks_*_reader impls): u32 count,
      // then each filter as u32 length and bytes.
      std::FILE* out = std::fopen(dump, "wb");
      auto put32 = [&](uint32_t v) {
        for (int i = 0; i < 4; i++) std::fputc(static_cast<int>((v >> (8 * i)) & 0xff), out);
      };
      if (out == nullptr) {
        std::fprintf(stderr, "cannot write FILTER_DUMP %s\n", dump);
        return 1;
      }
      put32(static_cast<uint32_t>(filters));
      for (const rocksdb::Slice& b : built) {
        put32(static_cast<uint32_t>(b.size()));
        std::fwrite(b.data(), 1, b.size(), out);
      }
      if (std::fclose(out) != 0) {
        std::fprintf(stderr, "cannot write FILTER_DUMP %s\n", dump);
        return 1;
      }
    }
    std::vector<std::unique_ptr<rocksdb::FilterBitsReader>> readers(filters);
    for (size_t f = 0; f < filters; f++) {
      total_bytes += built[f].size();
      readers[f].reset(policy->GetFilterBitsReader(built[f]));
    }
    SingleQueries(
        present, n, kpf, missing, absent, filter_of_absent,
        [&](size_t f, const char* key) { return readers[f]->MayMatch(rocksdb::Slice(key, kKeyLen)); }, &t);
    if (filters == 1) BatchedMisses(readers[0].get(), missing, absent, &t);

    for (size_t f = 0; f < filters; f++) {
      if (!IsKind(impl, built[f])) {
        std::fprintf(stderr, "filter %zu is not the kind %s asks for (RocksDB fell back?)\n", f, impl.c_str());
        return 3;
      }
    }
    // With one filter the batch asked the same filter about the first `whole` absent keys the single queries
    // asked about: the same answers, so no more positives, and exactly as many when that is every key.
    size_t whole = absent / kBatch * kBatch;
    if (filters == 1 && (t.batch_positives > t.false_positives ||
                         (whole == absent && t.batch_positives != t.false_positives))) {
      std::fprintf(stderr, "batched MayMatch disagrees: %zu positives against %zu single\n", t.batch_positives,
                   t.false_positives);
      return 3;
    }
    if (!CheckDeclaredCalls(*policy, context, present, n, missing, absent)) {
      std::fprintf(stderr, "a RocksDB call declared in rocksdb_filter_bits.h answered wrongly: ABI mismatch?\n");
      return 3;
    }
  }

  std::printf(
      "%s n=%llu bpk=%g kpf=%llu build_ns=%.2f hit_ns=%.2f miss_ns=%.2f batch32_miss_ns=%.2f fp=%.6f "
      "bytes_per_key=%.4f bits_per_key=%.3f\n",
      impl.c_str(), static_cast<unsigned long long>(n), bpk, static_cast<unsigned long long>(kpf), build_ns, t.hit_ns,
      t.miss_ns, t.batch_ns, static_cast<double>(t.false_positives) / absent, static_cast<double>(total_bytes) / n,
      8.0 * total_bytes / n);
  return 0;
}
