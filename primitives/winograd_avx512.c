/* Winograd kernels with AVX-512: 16 channel lanes (nChw16c) and a 12 × 32
 * GEMM register block (24 accumulators, 2 panel loads, 12 broadcasts per k). */
#include <immintrin.h>

#include "winograd.h"

#define WINO_VEC __m512
#define WINO_VLANES 16
#define WINO_LOAD(p) _mm512_loadu_ps(p)
#define WINO_STORE(p, x) _mm512_storeu_ps((p), (x))
#define WINO_SET1(f) _mm512_set1_ps(f)
#define WINO_ZERO() _mm512_setzero_ps()
#define WINO_ADD(a, b) _mm512_add_ps((a), (b))
#define WINO_SUB(a, b) _mm512_sub_ps((a), (b))
#define WINO_MUL(a, b) _mm512_mul_ps((a), (b))
#define WINO_FMADD(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define WINO_FNMADD(a, b, c) _mm512_fnmadd_ps((a), (b), (c))
#define WINO_NAME(x) avx512_##x
#define WINO_MR 12
#define WINO_NV 2

#include "winograd_simd.h"

const struct convsel_wino_kernels convsel_wino_avx512 = {
    .block = 16,
    .nr = WINO_NR,
    .mr = WINO_MR,
    .input = {avx512_input_f23, avx512_input_f43},
    .output = {avx512_output_f23, avx512_output_f43},
    .gemm = avx512_gemm,
};
