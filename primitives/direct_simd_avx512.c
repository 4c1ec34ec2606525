/* direct_simd kernels for AVX-512: nChw16c, one channel block per zmm. The
 * tile limits keep accumulators + weight vectors within the 32 zmm registers;
 * tiles of one or two blocks could be wider, but 8 columns already make them
 * FMA-bound and every width is one more kernel to compile (×6 variants). */
#include <immintrin.h>

#define DS_B 16
#define DS_VEC __m512
#define DS_IDX __m512i
#define DS_ZERO() _mm512_setzero_ps()
#define DS_LOAD(p) _mm512_loadu_ps(p)
#define DS_STORE(p, v) _mm512_storeu_ps((p), (v))
#define DS_BCAST(p) _mm512_set1_ps(*(p))
#define DS_LOADIDX(p) _mm512_loadu_si512((const void *)(p))
#define DS_FMA(a, b, c) _mm512_fmadd_ps((a), (b), (c))
#define DS_PERM(v, idx) _mm512_permutexvar_ps((idx), (v))
#define DS_OCB_MAX 4
#define DS_OWB_MAX_1 8
#define DS_OWB_MAX_2 8
#define DS_OWB_MAX_3 8
#define DS_OWB_MAX_4 6
#define DS_OWB_LIMIT 8
#define DS_GOWB_MAX 8
#define DS_ISA_NAME "avx512"
#define DS_ISA_SUFFIX avx512
#define DS_ISA_SYMBOL convsel_direct_simd_avx512

#include "direct_simd_kernels.h"
