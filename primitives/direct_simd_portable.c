/* direct_simd kernels without intrinsics, for caps below AVX2 (sse41,
 * scalar): nChw8c with GNU C vector types, compiled for the baseline target.
 * Tiles are small because x86-64's baseline has 16 xmm registers and a block
 * takes two: 2 blocks × 2 columns (8 accumulators + 4 weights + broadcast)
 * or 1 block × 6 columns. */
#include <stdint.h>

/* A channel block of 8 is two 16-byte GNU C vectors, the width every x86-64
 * has (SSE2) and most other targets too; 32-byte vector types would be
 * lowered through the stack here and passed differently with and without
 * AVX. The operations are macros over the two halves; their arguments are
 * loads or variables, so evaluating them twice costs nothing. ds_v4u reads and
 * writes any float array. */
typedef float ds_v4 __attribute__((vector_size(16)));
typedef float ds_v4u __attribute__((vector_size(16), aligned(4), may_alias));
typedef int32_t ds_i4 __attribute__((vector_size(16)));
typedef int32_t ds_i4u __attribute__((vector_size(16), aligned(4), may_alias));
typedef struct {
    ds_v4 lo, hi;
} ds_v8;
typedef struct {
    ds_i4 lo, hi;
} ds_i8;

#define DS_LD4(p) (*(const ds_v4u *)(const void *)(p))
#define DS_LDI4(p) (*(const ds_i4u *)(const void *)(p))
#define DS_LANE(v, l) ((l) < 4 ? (v).lo[(l)] : (v).hi[(l)-4])

#define DS_B 8
#define DS_VEC ds_v8
#define DS_IDX ds_i8
#define DS_ZERO() ((ds_v8){{0, 0, 0, 0}, {0, 0, 0, 0}})
#define DS_LOAD(p) ((ds_v8){DS_LD4(p), DS_LD4((p) + 4)})
#define DS_STORE(p, v)                                                                            \
    (*(ds_v4u *)(void *)(p) = (v).lo, *(ds_v4u *)(void *)((p) + 4) = (v).hi)
#define DS_BCAST(p) ((ds_v8){(ds_v4){0, 0, 0, 0} + *(p), (ds_v4){0, 0, 0, 0} + *(p)})
#define DS_LOADIDX(p) ((ds_i8){DS_LDI4(p), DS_LDI4((p) + 4)})
#define DS_FMA(a, b, c) ((ds_v8){(a).lo * (b).lo + (c).lo, (a).hi * (b).hi + (c).hi})
#define DS_PERM(v, idx)                                                                           \
    ((ds_v8){{DS_LANE(v, (idx).lo[0]), DS_LANE(v, (idx).lo[1]), DS_LANE(v, (idx).lo[2]),         \
              DS_LANE(v, (idx).lo[3])},                                                           \
             {DS_LANE(v, (idx).hi[0]), DS_LANE(v, (idx).hi[1]), DS_LANE(v, (idx).hi[2]),          \
              DS_LANE(v, (idx).hi[3])}})
#define DS_OCB_MAX 2
#define DS_OWB_MAX_1 6
#define DS_OWB_MAX_2 2
#define DS_OWB_LIMIT 6
#define DS_GOWB_MAX 4
#define DS_ISA_NAME "portable"
#define DS_ISA_SUFFIX portable
#define DS_ISA_SYMBOL convsel_direct_simd_portable

#include "direct_simd_kernels.h"
