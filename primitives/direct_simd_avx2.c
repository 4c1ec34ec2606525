/* direct_simd kernels for AVX2 + FMA: nChw8c, one channel block per ymm. With
 * 16 ymm registers a tile holds at most 12 accumulators, the weight vectors
 * and one broadcast (3 × 4 + 3 + 1). */
#include <immintrin.h>

#define DS_B 8
#define DS_VEC __m256
#define DS_IDX __m256i
#define DS_ZERO() _mm256_setzero_ps()
#define DS_LOAD(p) _mm256_loadu_ps(p)
#define DS_STORE(p, v) _mm256_storeu_ps((p), (v))
#define DS_BCAST(p) _mm256_broadcast_ss(p)
#define DS_LOADIDX(p) _mm256_loadu_si256((const __m256i *)(const void *)(p))
#define DS_FMA(a, b, c) _mm256_fmadd_ps((a), (b), (c))
#define DS_PERM(v, idx) _mm256_permutevar8x32_ps((v), (idx))
#define DS_OCB_MAX 3
#define DS_OWB_MAX_1 8
#define DS_OWB_MAX_2 6
#define DS_OWB_MAX_3 4
#define DS_OWB_LIMIT 8
#define DS_GOWB_MAX 8
#define DS_ISA_NAME "avx2"
#define DS_ISA_SUFFIX avx2
#define DS_ISA_SYMBOL convsel_direct_simd_avx2

#include "direct_simd_kernels.h"
