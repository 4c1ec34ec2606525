/*
 * This machine's FMA peak: the denominator of "fraction of peak" in the
 * benches. A header (static functions) rather than a .c because every
 * bench/ .c file becomes its own executable: peak_fma prints the peak, and
 * bench_layers measures it in its own process before the layers.
 *
 * The kernel keeps 12 independent accumulators so that the FMA latency (4–5
 * cycles) times the FMA ports (2) is covered; one accumulator would measure
 * the latency instead of the throughput.
 */
#ifndef CONVSEL_BENCH_PEAK_FMA_H
#define CONVSEL_BENCH_PEAK_FMA_H

#include <immintrin.h>
#include <math.h>
#include <omp.h>
#include <stdint.h>

#include "internal.h"

enum peak_isa { PEAK_AVX2, PEAK_AVX512 };

#define PEAK_ACCUMULATORS 12

static volatile float peak_sink;

/* iters × 12 FMAs of 16 lanes; returns a value that depends on all of them. */
__attribute__((target("avx512f,fma"), noinline)) static float peak_kernel_avx512(int64_t iters)
{
    __m512 a = _mm512_set1_ps(0.999999f), b = _mm512_set1_ps(1e-7f);
    __m512 acc[PEAK_ACCUMULATORS];
    for (int k = 0; k < PEAK_ACCUMULATORS; k++)
        acc[k] = _mm512_set1_ps((float)k);
    for (int64_t i = 0; i < iters; i++) {
        acc[0] = _mm512_fmadd_ps(acc[0], a, b);
        acc[1] = _mm512_fmadd_ps(acc[1], a, b);
        acc[2] = _mm512_fmadd_ps(acc[2], a, b);
        acc[3] = _mm512_fmadd_ps(acc[3], a, b);
        acc[4] = _mm512_fmadd_ps(acc[4], a, b);
        acc[5] = _mm512_fmadd_ps(acc[5], a, b);
        acc[6] = _mm512_fmadd_ps(acc[6], a, b);
        acc[7] = _mm512_fmadd_ps(acc[7], a, b);
        acc[8] = _mm512_fmadd_ps(acc[8], a, b);
        acc[9] = _mm512_fmadd_ps(acc[9], a, b);
        acc[10] = _mm512_fmadd_ps(acc[10], a, b);
        acc[11] = _mm512_fmadd_ps(acc[11], a, b);
    }
    __m512 sum = acc[0];
    for (int k = 1; k < PEAK_ACCUMULATORS; k++)
        sum = _mm512_add_ps(sum, acc[k]);
    return _mm512_reduce_add_ps(sum);
}

/* iters × 12 FMAs of 8 lanes. */
__attribute__((target("avx2,fma"), noinline)) static float peak_kernel_avx2(int64_t iters)
{
    __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    __m256 acc[PEAK_ACCUMULATORS];
    for (int k = 0; k < PEAK_ACCUMULATORS; k++)
        acc[k] = _mm256_set1_ps((float)k);
    for (int64_t i = 0; i < iters; i++) {
        acc[0] = _mm256_fmadd_ps(acc[0], a, b);
        acc[1] = _mm256_fmadd_ps(acc[1], a, b);
        acc[2] = _mm256_fmadd_ps(acc[2], a, b);
        acc[3] = _mm256_fmadd_ps(acc[3], a, b);
        acc[4] = _mm256_fmadd_ps(acc[4], a, b);
        acc[5] = _mm256_fmadd_ps(acc[5], a, b);
        acc[6] = _mm256_fmadd_ps(acc[6], a, b);
        acc[7] = _mm256_fmadd_ps(acc[7], a, b);
        acc[8] = _mm256_fmadd_ps(acc[8], a, b);
        acc[9] = _mm256_fmadd_ps(acc[9], a, b);
        acc[10] = _mm256_fmadd_ps(acc[10], a, b);
        acc[11] = _mm256_fmadd_ps(acc[11], a, b);
    }
    __m256 sum = acc[0];
    for (int k = 1; k < PEAK_ACCUMULATORS; k++)
        sum = _mm256_add_ps(sum, acc[k]);
    float lanes[8];
    _mm256_storeu_ps(lanes, sum);
    return lanes[0] + lanes[1] + lanes[2] + lanes[3] + lanes[4] + lanes[5] + lanes[6] + lanes[7];
}

static int peak_supported(enum peak_isa isa)
{
    __builtin_cpu_init();
    if (isa == PEAK_AVX512)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
    return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
}

/* Seconds for iters on each of threads threads (wall clock, between barriers). */
static double peak_trial(enum peak_isa isa, int threads, int64_t iters)
{
    double t0 = 0.0, t1 = 0.0;
#pragma omp parallel num_threads(threads)
    {
#pragma omp barrier
#pragma omp master
        t0 = convsel_now();
#pragma omp barrier
        float r = isa == PEAK_AVX512 ? peak_kernel_avx512(iters) : peak_kernel_avx2(iters);
        peak_sink = r;
#pragma omp barrier
#pragma omp master
        t1 = convsel_now();
    }
    return t1 - t0;
}

/*
 * GFLOP/s of threads threads running the kernel at once, the best of trials
 * of ~20 ms each spread over about `seconds` (a peak is a maximum: slow
 * bursts on a shared machine only lower a trial). 0 when the CPU lacks isa.
 */
static double peak_fma_gflops(enum peak_isa isa, int threads, double seconds)
{
    if (!peak_supported(isa) || threads < 1)
        return 0.0;
    const int lanes = isa == PEAK_AVX512 ? 16 : 8;
    /* Calibrate the iteration count to ~20 ms per trial, on one thread (each
     * thread does the same work): a multi-threaded trial on a busy machine
     * also times the wait for a free CPU, which would make the trials too
     * short and then dominated by that wait. The first trial wakes the
     * vector units and is thrown away; the fastest of three counts. */
    int64_t iters = 1 << 16;
    double t = peak_trial(isa, 1, iters);
    for (;;) {
        t = peak_trial(isa, 1, iters);
        for (int k = 0; k < 2; k++)
            t = fmin(t, peak_trial(isa, 1, iters));
        if (t >= 0.005 || iters >= (INT64_C(1) << 40))
            break;
        iters *= 4;
    }
    iters = (int64_t)((double)iters * 0.02 / t) + 1;
    double best = 0.0, start = convsel_now();
    do {
        t = peak_trial(isa, threads, iters);
        double flops = 2.0 * PEAK_ACCUMULATORS * lanes * (double)iters * threads;
        if (t > 0.0 && flops / t > best)
            best = flops / t;
    } while (convsel_now() - start < seconds);
    return best / 1e9;
}

#endif
