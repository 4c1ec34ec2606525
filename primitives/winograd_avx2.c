/* Winograd kernels with AVX2 + FMA: 8 channel lanes (nChw8c) and a 6 × 16
 * GEMM register block (12 accumulators of the 16 ymm registers). */
#include <immintrin.h>

#include "winograd.h"

#define WINO_VEC __m256
#define WINO_VLANES 8
#define WINO_LOAD(p) _mm256_loadu_ps(p)
#define WINO_STORE(p, x) _mm256_storeu_ps((p), (x))
#define WINO_SET1(f) _mm256_set1_ps(f)
#define WINO_ZERO() _mm256_setzero_ps()
#define WINO_ADD(a, b) _mm256_add_ps((a), (b))
#define WINO_SUB(a, b) _mm256_sub_ps((a), (b))
#define WINO_MUL(a, b) _mm256_mul_ps((a), (b))
#define WINO_FMADD(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define WINO_FNMADD(a, b, c) _mm256_fnmadd_ps((a), (b), (c))
#define WINO_NAME(x) avx2_##x
#define WINO_MR 6
#define WINO_NV 2

#include "winograd_simd.h"

const struct convsel_wino_kernels convsel_wino_avx2 = {
    .block = 8,
    .nr = WINO_NR,
    .mr = WINO_MR,
    .input = {avx2_input_f23, avx2_input_f43},
    .output = {avx2_output_f23, avx2_output_f43},
    .gemm = avx2_gemm,
};
