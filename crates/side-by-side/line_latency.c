// Random 64-byte-line reads from a buffer of a given size, for reading the side-by-side figures against what the
// machine's memory can do (BENCHMARKS.md 4b). Three loops over 2·10^7 reads:
//   independent: the next address does not depend on the last read (as many reads in flight as the CPU allows);
//   dependent:   the next address depends on the last read's value (one read at a time: the latency);
//   worked:      independent, with about 60 instructions of arithmetic computing each address (a chain of six
//                splitmix64 rounds), as a query's hashing puts instructions between its reads.
// With `huge` = 1 the buffer is madvised MADV_HUGEPAGE (transparent huge pages in the guest).
//
//   gcc -O2 crates/side-by-side/line_latency.c -o target/line_latency && target/line_latency 125 0
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

static uint64_t splitmix64(uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

static double now_ns(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e9 + t.tv_nsec;
}

enum { READS = 20000000 };

int main(int argc, char** argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s MiB huge(0|1)\n", argv[0]);
    return 1;
  }
  size_t len = (size_t)atoi(argv[1]) << 20;
  size_t align = 2u << 20;
  uint8_t* raw = mmap(NULL, len + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (raw == MAP_FAILED) return 1;
  uint8_t* buf = (uint8_t*)(((uintptr_t)raw + align - 1) & ~(uintptr_t)(align - 1));
  if (atoi(argv[2])) madvise(buf, len, MADV_HUGEPAGE);
  memset(buf, 1, len);
  size_t lines = len / 64;
  const char* names[3] = {"independent", "dependent", "worked"};
  for (int mode = 0; mode < 3; mode++) {
    uint64_t sum = 0;
    double t0 = now_ns();
    for (uint64_t i = 0; i < READS; i++) {
      uint64_t h = mode == 1 ? splitmix64(i + sum) : splitmix64(i);
      if (mode == 2) h = splitmix64(splitmix64(splitmix64(splitmix64(splitmix64(h)))));
      sum += buf[(h % lines) * 64 + (h >> 58)];
    }
    printf("%s MiB=%s huge=%s ns/read=%.1f (%lu)\n", names[mode], argv[1], argv[2], (now_ns() - t0) / READS,
           (unsigned long)sum);
  }
  return 0;
}
