#!/usr/bin/env bash
# Checks that rocksdb_filter_bits.h calls RocksDB's filter builders and readers exactly as RocksDB's own internal
# header does: compiles one function per declared call (every virtual, the destructors included) twice, once
# against our header and once against RocksDB's table/block_based/filter_policy_internal.h, and compares the
# assembly. Same vtable offsets and same calling conventions give the same code. A maintainer's tool, for a new
# RocksDB release or a change to the header; run.sh and the bench do not need it (nor RocksDB's source).
#
#   mkdir -p /tmp/rocks && git -C <a RocksDB clone> show v7.8.3:table/block_based/filter_policy_internal.h \
#       > /tmp/rocks/filter_policy_internal.h
#   crates/side-by-side/check_abi.sh /tmp/rocks
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
internal=${1:?"usage: check_abi.sh DIR, DIR holding filter_policy_internal.h of the installed RocksDB version"}
[ -f "$internal/filter_policy_internal.h" ] || { echo "no filter_policy_internal.h in $internal" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cat >"$work/calls.inc" <<'EOF'
namespace probe {
using namespace ROCKSDB_NAMESPACE;
void DeleteBuilder(FilterBitsBuilder* b) { delete b; }
void Add(FilterBitsBuilder* b, const Slice& k) { b->AddKey(k); }
size_t Estimate(FilterBitsBuilder* b) { return b->EstimateEntriesAdded(); }
Slice Finish(FilterBitsBuilder* b, std::unique_ptr<const char[]>* buf) { return b->Finish(buf); }
Slice FinishStatus(FilterBitsBuilder* b, std::unique_ptr<const char[]>* buf, Status* s) { return b->Finish(buf, s); }
Status PostVerify(FilterBitsBuilder* b, const Slice& f) { return b->MaybePostVerify(f); }
size_t Approximate(FilterBitsBuilder* b, size_t bytes) { return b->ApproximateNumEntries(bytes); }
void DeleteReader(FilterBitsReader* r) { delete r; }
bool Match(FilterBitsReader* r, const Slice& k) { return r->MayMatch(k); }
void MatchBatch(FilterBitsReader* r, int n, Slice** k, bool* out) { r->MayMatch(n, k, out); }
}  // namespace probe
EOF
printf '#include "%s/rocksdb_filter_bits.h"\n#include "calls.inc"\n' "$here" >"$work/ours.cc"
printf '#include "filter_policy_internal.h"\n#include "calls.inc"\n' >"$work/theirs.cc"
for side in ours theirs; do
    # No speculative devirtualization: RocksDB's header gives some virtuals default bodies, which GCC would
    # otherwise compare against before calling; only the calls themselves are compared. Labels are numbered per
    # file, so they are blanked.
    g++ -std=c++17 -O2 -fno-devirtualize-speculatively -fno-asynchronous-unwind-tables -I"$internal" \
        -S "$work/$side.cc" -o - |
        sed -n '/_ZN5probe/,$p' | grep -v '^[[:space:]]*\.\(file\|ident\|loc\|section\)' |
        sed -E 's/\.L[A-Z]*[0-9]+/.L/g' >"$work/$side.s"
done
if diff -u "$work/theirs.s" "$work/ours.s"; then
    grep -c '^_ZN5probe' "$work/ours.s" | xargs printf 'ABI check passed: %s calls compile identically\n'
else
    echo "ABI check FAILED: rocksdb_filter_bits.h does not match $internal/filter_policy_internal.h" >&2
    exit 1
fi
