// write_bandwidth.c: how fast this machine's memory takes the bytes `generate_many` writes.
//
// Not product code: a standalone probe of the ceiling under `generate_many`'s throughput (see
// python/README.md, "Speed"). It writes an array of N caves of ROWSxCOLS bytes (default
// 100,000 x 90 x 140 = 1.26 GB, what `generate_many(recipe, range(100000))` fills) on 1 and
// on 2 threads, each thread its own contiguous half, and prints GB/s and caves/s (median of
// REPS runs, wall clock) for:
//
//   nt-reused      streaming (non-temporal) 32-byte stores into an array already faulted in
//                  (`generate_many(..., out=buf)`)
//   memset-reused  glibc memset into the same array (numpy's `buf.fill`)
//   nt-new         streaming stores into a fresh anonymous mapping (each page faulted and
//                  zeroed by the kernel on first touch: `generate_many(...)` into a new array)
//   nt-new-huge    the same with madvise(MADV_HUGEPAGE) on the mapping first
//   nt+compute     streaming stores of one cave after COMPUTE_NS of register-only arithmetic
//                  per cave (the pattern of generate-then-write): caves/s against the same
//                  arithmetic with no writes, which shows how much of the write time the core
//                  hides behind the arithmetic
//
// Build and run (from the repository root):
//   cc -O2 -mavx2 -pthread -o target/write_bandwidth python/benches/write_bandwidth.c
//   target/write_bandwidth [N] [REPS] [COMPUTE_NS] [wall|cpu]
// `cpu` times each run by the threads' CPU time instead of the wall clock (for a loaded
// machine: a thread's time on a core, stalls on memory included; with 2 threads it overstates
// the pair's bandwidth when the two did not run at the same time).
#define _GNU_SOURCE
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>

enum { ROWS = 90, COLS = 140, CAVE = ROWS * COLS };

static double clock_of(clockid_t c) {
    struct timespec t;
    clock_gettime(c, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}
static double now(void) { return clock_of(CLOCK_MONOTONIC); }
// This thread's CPU time (user + system: page faults count): on a loaded machine a thread's
// time on the CPU, not the wall clock, is what its work cost.
static double cpu(void) { return clock_of(CLOCK_THREAD_CPUTIME_ID); }

typedef enum { NT, MEMSET, NT_COMPUTE, COMPUTE_ONLY } Kind;

typedef struct {
    uint8_t *dst;
    size_t len;
    Kind kind;
    double compute_ns;
    double ns_per_iter; // calibrated cost of one arithmetic iteration
    double cpu_secs;    // this thread's CPU time for its part
    volatile uint64_t sink;
} Job;

// Streaming stores of `len` bytes (a multiple of 64) at the 64-aligned `d`.
static void nt_write(uint8_t *d, size_t len, __m256i v) {
    for (size_t i = 0; i < len; i += 64) {
        _mm256_stream_si256((__m256i *)(d + i), v);
        _mm256_stream_si256((__m256i *)(d + i + 32), v);
    }
}

// Dependent register-only arithmetic: `iters` steps of an xorshift-multiply chain.
static uint64_t spin(uint64_t x, long iters) {
    for (long i = 0; i < iters; i++) {
        x ^= x >> 13;
        x *= 0x9E3779B97F4A7C15ull;
    }
    return x;
}

static void *run(void *arg) {
    Job *j = arg;
    __m256i v = _mm256_set1_epi8(1);
    uint64_t x = 12345;
    long iters = (long)(j->compute_ns / j->ns_per_iter);
    double c0 = cpu();
    switch (j->kind) {
    case NT:
        nt_write(j->dst, j->len, v);
        break;
    case MEMSET:
        memset(j->dst, 1, j->len);
        break;
    case NT_COMPUTE:
    case COMPUTE_ONLY: {
        // Cave by cave (rounded to whole lines so every store is a full aligned line).
        size_t step = (CAVE + 63) / 64 * 64;
        for (size_t off = 0; off + step <= j->len; off += step) {
            x = spin(x, iters);
            if (j->kind == NT_COMPUTE) nt_write(j->dst + off, step, v);
        }
        break;
    }
    }
    _mm_sfence();
    j->cpu_secs = cpu() - c0;
    j->sink = x;
    return NULL;
}

// Seconds of `threads` threads each writing its half of `buf` (`len` bytes): wall clock, or
// (`by_cpu`) the largest of the threads' CPU times.
static int by_cpu;
static double timed(uint8_t *buf, size_t len, int threads, Kind kind, double compute_ns,
                    double ns_per_iter) {
    pthread_t t[2];
    Job j[2];
    size_t part = len / threads / 4096 * 4096;
    double t0 = now();
    for (int i = 0; i < threads; i++) {
        j[i] = (Job){buf + i * part, part, kind, compute_ns, ns_per_iter, 0};
        pthread_create(&t[i], NULL, run, &j[i]);
    }
    double most = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        if (j[i].cpu_secs > most) most = j[i].cpu_secs;
    }
    return by_cpu ? most : now() - t0;
}

static int cmp(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int n) {
    qsort(v, n, sizeof *v, cmp);
    return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

static uint8_t *map(size_t len, int huge) {
    uint8_t *p = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) {
        perror("mmap");
        exit(1);
    }
    if (huge) madvise(p, len, MADV_HUGEPAGE);
    return p;
}

int main(int argc, char **argv) {
    long n = argc > 1 ? atol(argv[1]) : 100000;
    int reps = argc > 2 ? atoi(argv[2]) : 5;
    double compute_ns = argc > 3 ? atof(argv[3]) : 2470; // the CLI's ns per cave per thread
    by_cpu = argc > 4 && strcmp(argv[4], "cpu") == 0;
    if (reps < 1 || reps > 99 || n < 100) {
        fprintf(stderr, "usage: write_bandwidth [N>=100] [REPS 1..99] [COMPUTE_NS] [wall|cpu]\n");
        return 2;
    }
    size_t len = (size_t)n * CAVE / 4096 * 4096;
    // Calibrate the arithmetic's cost per iteration (one thread, alone).
    long cal = 50 * 1000 * 1000;
    double c0 = cpu();
    uint64_t s = spin(1, cal);
    double ns_per_iter = (cpu() - c0) * 1e9 / cal;
    printf("# %ld caves of %dx%d (%.2f GB), %d runs each, medians of %s; arithmetic "
           "%.3f ns/iter (sink %llu)\n",
           n, ROWS, COLS, len / 1e9, reps,
           by_cpu ? "the threads' largest CPU time (thread clock)" : "wall time", ns_per_iter,
           (unsigned long long)(s & 1));
    printf("| what | threads | GB/s | caves/s |\n|---|---|---|---|\n");
    uint8_t *reused = map(len, 0);
    memset(reused, 0, len); // fault it in
    const char *names[] = {"nt-reused", "memset-reused", "nt-new", "nt-new-huge"};
    for (int threads = 1; threads <= 2; threads++) {
        for (int m = 0; m < 4; m++) {
            double secs[99];
            for (int r = 0; r < reps; r++) {
                if (m < 2) {
                    secs[r] = timed(reused, len, threads, m == 0 ? NT : MEMSET, 0, ns_per_iter);
                } else {
                    double t0 = now();
                    uint8_t *p = map(len, m == 3);
                    secs[r] = timed(p, len, threads, NT, 0, ns_per_iter);
                    if (!by_cpu) secs[r] = now() - t0;
                    munmap(p, len);
                }
            }
            double t = median(secs, reps);
            printf("| %s | %d | %.2f | %.0f |\n", names[m], threads, len / t / 1e9,
                   len / (double)CAVE / t);
        }
        double both[2];
        for (int k = 0; k < 2; k++) {
            double secs[99];
            for (int r = 0; r < reps; r++)
                secs[r] = timed(reused, len, threads, k ? NT_COMPUTE : COMPUTE_ONLY, compute_ns,
                                ns_per_iter);
            both[k] = median(secs, reps);
        }
        double caves = (double)len / ((CAVE + 63) / 64 * 64);
        printf("| compute only (%.0f ns/cave) | %d | - | %.0f |\n", compute_ns, threads,
               caves / both[0]);
        printf("| nt+compute (%.0f ns/cave, then one cave's stores) | %d | %.2f | %.0f |\n",
               compute_ns, threads, len / both[1] / 1e9, caves / both[1]);
    }
    munmap(reused, len);
    return 0;
}
