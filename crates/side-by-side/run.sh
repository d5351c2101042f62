#!/usr/bin/env bash
# Our filters beside RocksDB's and LevelDB's, interleaved in one script so that every ratio compares two runs made
# under the same machine state: for each run and key count, RocksDB's FastLocalBloom and our BlockedBloom (plain
# and aligned), RocksDB's Standard128Ribbon and our Ribbon, LevelDB's Bloom filter and our StandardBloom, in an
# order that rotates from run to run. Prints
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

# The ratios depend on the machine (how large its caches are beside the filter: BENCHMARKS.md 4b), so say which.
echo "machine: $(nproc) CPUs; $(lscpu | sed -n 's/^Model name: *//p' | head -1);" \
    "$(lscpu | sed -n 's/^\(L[123][di]* cache\): *\(.*\)/\1 \2/p' | paste -sd ';' -)"

log=$(mktemp)
for run in $(seq 1 "$RUNS"); do
    for n in $SIZES; do
        for pair in $PAIRS; do
            theirs=${pair%%:*}
            # Theirs and ours in an order rotated from run to run, so that no program always runs first (or right
            # after another that just freed a few hundred MiB).
            programs=("$theirs" ${pair#*:})
            programs=(${programs[@]//,/ })
            count=${#programs[@]}
            for i in $(seq 0 $((count - 1))); do
                one=${programs[$(( (i + run) % count ))]}
                if [ "$one" = "$theirs" ]; then
                    "$cxx" "$theirs" "$n" "$BPK" 0 | sed "s/^/run=$run /" | tee -a "$log"
                else
                    "$ours" "$one" "$n" "$BPK" 0 | sed "s/^/run=$run vs=$theirs /" | tee -a "$log"
                fi
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
groups = defaultdict(list)
for r in rows:
    groups[(r["impl"], r.get("vs", ""), r["n"])].append(r)
runs = len({r["run"] for r in rows})
print(f"\nmedians over {runs} runs, ns per key; ratio = median of the per-run ratios ours/theirs (per-run ratios)")
print(f"{'impl':<17} {'n':>9} " + " ".join(f"{m[:-3]:>8}" for m in metrics) + f" {'FPR':>9} {'bits/key':>8}")
order = sorted(groups, key=lambda g: (int(g[2]), g[1] or g[0], g[1] != "", g[0]))
for imp, vs, n in order:
    rs = groups[(imp, vs, n)]
    med = [statistics.median(float(r[m]) for r in rs) for m in metrics]
    fpr = 100 * statistics.median(float(r["fp"]) for r in rs)
    bits = statistics.median(float(r["bits_per_key"]) for r in rs)
    print(f"{imp:<17} {n:>9} " + " ".join(f"{x:8.2f}" for x in med) + f" {fpr:8.4f}% {bits:8.3f}")
    if vs:
        for m in metrics:
            per_run = [float(r[m]) / float(theirs[(r["run"], vs, n)][m]) for r in rs
                       if float(r[m]) > 0 and float(theirs[(r["run"], vs, n)][m]) > 0]
            if per_run:
                print(f"    {m[:-3]:<11} {statistics.median(per_run):.2f}x vs {vs} ("
                      + " ".join(f"{x:.2f}" for x in per_run) + ")")

EOF
rm -f "$log"
