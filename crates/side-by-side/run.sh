#!/usr/bin/env bash
# Our filters beside RocksDB's and LevelDB's, interleaved in one script so that every ratio compares two runs made
# under the same machine state: for each run and key count, RocksDB's FastLocalBloom then our BlockedBloom (plain
# and aligned), RocksDB's Standard128Ribbon then our Ribbon, LevelDB's Bloom filter then our StandardBloom. Prints
# every line, then the medians and the median of the per-run ratios (ours / theirs; below 1 is faster).
#
# Needs (Debian 12): apt-get install librocksdb-dev libleveldb-dev g++ (RocksDB 7.8.3, LevelDB 1.23), the C++ bench
# `shared/bench/rocksdb/filter_bench.cc` (FILTER_BENCH_CC), and RocksDB's internal header
# `table/block_based/filter_policy_internal.h` at tag v7.8.3 in a directory of its own (ROCKSDB_INTERNAL_INCLUDE),
# for example `git -C <a RocksDB clone> show v7.8.3:table/block_based/filter_policy_internal.h > DIR/...`.
# Nothing of RocksDB is kept in this repository.
#
#   ROCKSDB_INTERNAL_INCLUDE=/tmp/rocks crates/side-by-side/run.sh          # 3 runs at 10^6 and 10^7 keys
#   RUNS=5 SIZES=1000000 PAIRS="rocks_bloom:blocked" crates/side-by-side/run.sh
#
# Run it on an otherwise idle machine (no build, no fuzzer): it is a benchmark. CI does not run it.
set -euo pipefail
cd "$(dirname "$0")/../.."

RUNS=${RUNS:-3}
SIZES=${SIZES:-"1000000 10000000"}
BPK=${BPK:-10}
PAIRS=${PAIRS:-"rocks_bloom:blocked,blocked_aligned rocks_ribbon:ribbon,ribbon_aligned leveldb:standard,standard_aligned"}
FILTER_BENCH_CC=${FILTER_BENCH_CC:-../shared/bench/rocksdb/filter_bench.cc}
: "${ROCKSDB_INTERNAL_INCLUDE:?set it to a directory holding filter_policy_internal.h of RocksDB v7.8.3}"

cxx=target/side-by-side/filter_bench
mkdir -p "$(dirname "$cxx")"
if [ ! -x "$cxx" ] || [ "$FILTER_BENCH_CC" -nt "$cxx" ]; then
    g++ -O3 -march=native -std=c++17 -DNDEBUG -I"$ROCKSDB_INTERNAL_INCLUDE" "$FILTER_BENCH_CC" -o "$cxx" \
        -lleveldb -lrocksdb -lpthread
fi
cargo build --release -p sstfilter-side-by-side
ours=target/release/side_by_side

log=$(mktemp)
for run in $(seq 1 "$RUNS"); do
    for n in $SIZES; do
        for pair in $PAIRS; do
            theirs=${pair%%:*}
            "$cxx" "$theirs" "$n" "$BPK" 0 | sed "s/^/run=$run /" | tee -a "$log"
            for imp in ${pair#*:}; do
                for one in ${imp//,/ }; do
                    "$ours" "$one" "$n" "$BPK" 0 | sed "s/^/run=$run vs=$theirs /" | tee -a "$log"
                done
            done
        done
    done
done

python3 - "$log" <<'EOF'
import statistics, sys
from collections import defaultdict
rows = []
for line in open(sys.argv[1]):
    fields = line.split()
    row = {"impl": next(w for w in fields if "=" not in w)}
    for w in fields:
        if "=" in w:
            k, v = w.split("=", 1)
            row[k] = v
    rows.append(row)
metrics = ["build_ns", "hit_ns", "miss_ns", "batch32_miss_ns"]
theirs = {(r["run"], r["impl"], r["n"]): r for r in rows if "vs" not in r}
print("\nmedians over %d runs (ns per key); ratio = median of per-run ours/theirs" % len({r["run"] for r in rows}))
print("%-18s %-13s %9s %9s %9s %9s %9s %8s" % ("impl", "vs", "n", *metrics, "fp", "bits/key"))
groups = defaultdict(list)
for r in rows:
    groups[(r["impl"], r.get("vs", ""), r["n"])].append(r)
for (imp, vs, n), rs in sorted(groups.items(), key=lambda g: (int(g[0][2]), g[0][1] or g[0][0], g[0][1] != "")):
    med = [statistics.median(float(r[m]) for r in rs) for m in metrics]
    print("%-18s %-13s %9s %9.2f %9.2f %9.2f %9.2f %8.4f%% %8.3f" % (imp, vs or "-", n, *med,
          100 * statistics.median(float(r["fp"]) for r in rs), statistics.median(float(r["bits_per_key"]) for r in rs)))
    if vs:
        ratios = []
        for m in metrics:
            per_run = [float(r[m]) / float(theirs[(r["run"], vs, n)][m]) for r in rs
                       if float(r[m]) > 0 and float(theirs[(r["run"], vs, n)][m]) > 0]
            ratios.append("%s %.2fx (%s)" % (m, statistics.median(per_run), " ".join("%.2f" % x for x in per_run))
                          if per_run else "%s -" % m)
        print("    ratio " + "; ".join(ratios))
EOF
rm -f "$log"
