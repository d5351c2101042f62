#!/usr/bin/env bash
# Our filters beside RocksDB's and LevelDB's, interleaved in one script so that every ratio compares two runs made
# under the same machine state: for each run and key count, RocksDB's FastLocalBloom and our BlockedBloom (plain
# and aligned), RocksDB's Standard128Ribbon and our Ribbon, LevelDB's Bloom filter and our StandardBloom, in an
# order that rotates from run to run. Prints
# every line, then the medians and the median of the per-run ratios (ours / theirs; below 1 is faster).
#
# The C++ side is this crate's filter_bench.cc: RocksDB's filters through RocksDB's own builders and readers, and
# LevelDB's through its public filter policy, over the same keys in the same order as our side_by_side binary.
# Needs g++ and Debian 12's packages, nothing else (RocksDB's internal classes the bench calls are declared in
# rocksdb_filter_bits.h, pinned to RocksDB 7.8.3; check_abi.sh rechecks them against RocksDB's source):
#
#   apt-get install -y g++ librocksdb-dev libleveldb-dev       # RocksDB 7.8.3, LevelDB 1.23
#
#   crates/side-by-side/run.sh                                         # 3 runs at 10^6 and 10^7 keys
#   RUNS=5 SIZES=1000000 PAIRS="rocks_bloom:blocked" crates/side-by-side/run.sh
#   PAIRS="rocks_bloom:rocks_bloom_reader rocks_ribbon:rocks_ribbon_reader" crates/side-by-side/run.sh
#                                  # our sstfilter::rocksdb reader against RocksDB's, on RocksDB's own bytes
#
# Compiler flags, as the earlier external bench had them so that figures stay comparable: the C++ bench is built
# with g++ -O3 -march=native, but the filter code it times is in Debian's shared libraries, portable x86-64
# builds (no AVX2 anywhere: `objdump -d` of librocksdb.so.7.8.3 and libleveldb.so.1.23.0 shows no ymm register);
# ours is `cargo build --release` for the default x86-64 target (no target-cpu=native; the script sets no
# RUSTFLAGS). So the filter code under test is baseline x86-64 on both sides, and only the C++ loops around the
# calls are compiled for this CPU.
#
# Run it on an otherwise idle machine (no build, no fuzzer): it is a benchmark. CI does not run it.
set -euo pipefail
cd "$(dirname "$0")/../.."

RUNS=${RUNS:-3}
SIZES=${SIZES:-"1000000 10000000"}
BPK=${BPK:-10}
PAIRS=${PAIRS:-"rocks_bloom:blocked,blocked_aligned rocks_ribbon:ribbon,ribbon_aligned leveldb:standard,standard_aligned"}
if [ -n "${ROCKSDB_INTERNAL_INCLUDE:-}${FILTER_BENCH_CC:-}" ]; then
    echo "note: ROCKSDB_INTERNAL_INCLUDE and FILTER_BENCH_CC are no longer used;" \
        "the bench is crates/side-by-side/filter_bench.cc" >&2
fi

# What is missing, said before the compiler says it less clearly.
install="apt-get install -y g++ librocksdb-dev libleveldb-dev   (Debian 12: RocksDB 7.8.3, LevelDB 1.23)"
command -v g++ >/dev/null || { echo "run.sh: no g++; install it and the libraries: $install" >&2; exit 1; }
for header in rocksdb/filter_policy.h leveldb/filter_policy.h; do
    printf '#include <%s>\n' "$header" | g++ -std=c++17 -fsyntax-only -x c++ - 2>/dev/null ||
        { echo "run.sh: no <$header>; install the libraries' headers: $install" >&2; exit 1; }
done
rocksdb_version=$(printf '#include <rocksdb/version.h>\nROCKSDB_MAJOR.ROCKSDB_MINOR.ROCKSDB_PATCH\n' |
    g++ -E -P -x c++ - | tail -1 | tr -d ' ')
if [ "$rocksdb_version" != 7.8.3 ]; then
    echo "run.sh: RocksDB's headers are version $rocksdb_version; the bench declares RocksDB 7.8.3's internal filter" \
        "classes (crates/side-by-side/rocksdb_filter_bits.h says how to check another version): $install" >&2
    exit 1
fi

src=crates/side-by-side
cxx=target/side-by-side/filter_bench
mkdir -p "$(dirname "$cxx")"
if [ ! -x "$cxx" ] || [ "$src/filter_bench.cc" -nt "$cxx" ] || [ "$src/rocksdb_filter_bits.h" -nt "$cxx" ] ||
    [ "$src/run.sh" -nt "$cxx" ]; then
    g++ -O3 -march=native -std=c++17 -DNDEBUG -Wall -Wextra "$src/filter_bench.cc" -o "$cxx" \
        -lleveldb -lrocksdb -lpthread ||
        { echo "run.sh: building $src/filter_bench.cc failed; are the libraries installed? $install" >&2; exit 1; }
fi
cargo build --release -p sstfilter-side-by-side
ours=target/release/side_by_side

# The ratios depend on the machine (how large its caches are beside the filter: BENCHMARKS.md 4b), so say which.
echo "machine: $(nproc) CPUs; $(lscpu | sed -n 's/^Model name: *//p' | head -1);" \
    "$(lscpu | sed -n 's/^\(L[123][di]* cache\): *\(.*\)/\1 \2/p' | paste -sd ';' -)"

log=$(mktemp)
# Our writer and reader of RocksDB's own bytes (the rocks_*_reader impls) check that they built the filters RocksDB
# built for the same keys: filter_bench writes them once per size, before the timed runs.
dumps=$(mktemp -d)
for n in $SIZES; do
    for pair in $PAIRS; do
        theirs=${pair%%:*}
        case ",${pair#*:}," in
            *_reader,*) FILTER_DUMP="$dumps/$theirs-$n.bin" "$cxx" "$theirs" "$n" "$BPK" 0 >/dev/null ;;
        esac
    done
done
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
                    FILTER_DUMP="$dumps/$theirs-$n.bin" "$ours" "$one" "$n" "$BPK" 0 |
                        sed "s/^/run=$run vs=$theirs /" | tee -a "$log"
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
rm -rf "$log" "$dumps"
