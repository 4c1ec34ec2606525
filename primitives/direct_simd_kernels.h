/*
 * The direct_simd kernels and drivers, written once and compiled once per
 * instruction set: the including file defines the vector type and operations
 * below, then includes this header, which defines `DS_ISA_SYMBOL`.
 *
 *   DS_B                  channel block (lanes per vector)
 *   DS_VEC, DS_IDX        float vector type, int32 index vector type
 *   DS_ZERO()             all-zero vector
 *   DS_LOAD(p), DS_STORE(p, v), DS_BCAST(p), DS_LOADIDX(p)
 *   DS_FMA(a, b, c)       a * b + c
 *   DS_PERM(v, idx)       lane l of the result is v[idx[l]]
 *   DS_OCB_MAX            most oc blocks in one register tile (1..4)
 *   DS_OWB_MAX_1..4       most output columns in a tile of that many oc blocks
 *   DS_OWB_LIMIT          the largest DS_OWB_MAX_* (at most 12)
 *   DS_GOWB_MAX           most output columns in a depthwise / grouped tile
 *   DS_ISA_NAME           the name in struct ds_isa ("avx512")
 *   DS_ISA_SUFFIX         appended to every static function's name
 *   DS_ISA_SYMBOL         the struct ds_isa this file defines
 *
 * Register tiles: the accumulators of ocb oc blocks × owb columns live in
 * vector registers for the whole reduction over input channels and taps; each
 * step broadcasts one input value per column and multiplies it by ocb weight
 * vectors. ocb and owb are compile-time constants of each instantiated kernel
 * (the arrays below are scalarised once the constant loops are unrolled), so
 * the tile sizes are chosen by picking a kernel from a table.
 */
#include <stdint.h>

#include "direct_simd.h"
#include "internal.h"

#define DS_INLINE static inline __attribute__((always_inline))
#define DS_CAT_(a, b) a##b
#define DS_CAT(a, b) DS_CAT_(a, b)
#define DS_FN(name) DS_CAT(name##_, DS_ISA_SUFFIX)

/* X(o, w) for w = 1..n. */
#define DS_UPTO_1(X, o) X(o, 1)
#define DS_UPTO_2(X, o) DS_UPTO_1(X, o) X(o, 2)
#define DS_UPTO_3(X, o) DS_UPTO_2(X, o) X(o, 3)
#define DS_UPTO_4(X, o) DS_UPTO_3(X, o) X(o, 4)
#define DS_UPTO_5(X, o) DS_UPTO_4(X, o) X(o, 5)
#define DS_UPTO_6(X, o) DS_UPTO_5(X, o) X(o, 6)
#define DS_UPTO_7(X, o) DS_UPTO_6(X, o) X(o, 7)
#define DS_UPTO_8(X, o) DS_UPTO_7(X, o) X(o, 8)
#define DS_UPTO_9(X, o) DS_UPTO_8(X, o) X(o, 9)
#define DS_UPTO_10(X, o) DS_UPTO_9(X, o) X(o, 10)
#define DS_UPTO_11(X, o) DS_UPTO_10(X, o) X(o, 11)
#define DS_UPTO_12(X, o) DS_UPTO_11(X, o) X(o, 12)
#define DS_UPTO_(n) DS_UPTO_##n
#define DS_UPTO(n) DS_UPTO_(n)

#if DS_OCB_MAX >= 4
#define DS_OWB_MAX_INIT {0, DS_OWB_MAX_1, DS_OWB_MAX_2, DS_OWB_MAX_3, DS_OWB_MAX_4}
#elif DS_OCB_MAX >= 3
#define DS_OWB_MAX_INIT {0, DS_OWB_MAX_1, DS_OWB_MAX_2, DS_OWB_MAX_3, 0}
#elif DS_OCB_MAX >= 2
#define DS_OWB_MAX_INIT {0, DS_OWB_MAX_1, DS_OWB_MAX_2, 0, 0}
#else
#define DS_OWB_MAX_INIT {0, DS_OWB_MAX_1, 0, 0, 0}
#endif

/* ---------------------------------------------------------------- columns */

/* Where a tile's columns read the input row: column j at tap kx reads input
 * column ix0 + j * sw + kx * dil, which may lie in the padding (ix0 < 0 at the
 * left edge, past iw at the right). */
struct ds_cols {
    int64_t ix0, iw, sw, dil, kw;
};

/* The columns [*lo, *hi) of a tile of owb whose input at tap kx is inside the
 * row. Tiles that touch the padding ("masked" kernels) skip the others' FMAs
 * instead of multiplying zeros, so edge columns cost what they compute. */
DS_INLINE void ds_cols_valid(const struct ds_cols *c, int64_t kx, int owb, int sw, int *lo, int *hi)
{
    /* sw: the stride when the kernel knows it (no division), else 0. */
    const int64_t step = sw ? sw : c->sw;
    const int64_t a = c->ix0 + kx * c->dil;
    const int64_t first = a >= 0 ? 0 : (-a + step - 1) / step;
    const int64_t room = c->iw - 1 - a;
    const int64_t end = room < 0 ? 0 : room / step + 1;
    *lo = (int)CONVSEL_MIN(first, owb);
    *hi = (int)CONVSEL_MIN(end, owb);
}

/* ---------------------------------------------------------------- MAIN tiles */

/* How many input-channel blocks ahead a tile prefetches its input. */
#define DS_PREFETCH_BLOCKS 2

struct ds_tile {
    const float *src; /* input of the first column at the first row tap, kx = 0 */
    const float *wei; /* [ib][ky][kx][i][ocb][B] from the first row tap */
    float *dst;       /* first column of the first oc block */
    int64_t nib, last_ic, nky;
    int64_t src_ib, src_ky, src_kx, src_ow;
    int64_t wei_ib, wei_ky, wei_kx;
    int64_t dst_ob;
    struct ds_cols cols;
    int accumulate; /* add to dst (a later pass over input channels) */
};

typedef void (*ds_tile_fn)(const struct ds_tile *t);

DS_INLINE void ds_tile_body(const struct ds_tile *t, const int ocb, const int owb, const int sw, const int masked)
{
    DS_VEC acc[DS_OCB_MAX][DS_OWB_LIMIT];
    const int64_t sow = sw ? sw * DS_B : t->src_ow;

    if (t->accumulate) {
#pragma GCC unroll 4
        for (int o = 0; o < ocb; o++)
#pragma GCC unroll 12
            for (int j = 0; j < owb; j++)
                acc[o][j] = DS_LOAD(t->dst + o * t->dst_ob + j * DS_B);
    } else {
#pragma GCC unroll 4
        for (int o = 0; o < ocb; o++)
#pragma GCC unroll 12
            for (int j = 0; j < owb; j++)
                acc[o][j] = DS_ZERO();
    }
    for (int64_t ib = 0; ib < t->nib; ib++) {
        const int64_t nic = ib == t->nib - 1 ? t->last_ic : DS_B;
        /* The columns of one channel block are a short run far from the
         * next block's (nChwXc), too many streams for the hardware prefetcher:
         * without this, 1×1 layers with many input channels ran 1.2-1.8×
         * slower under AVX2 (nChw8c) and up to 4% under AVX-512. */
        if (ib + DS_PREFETCH_BLOCKS < t->nib) {
            const char *ahead = (const char *)(t->src + (ib + DS_PREFETCH_BLOCKS) * t->src_ib);
            for (int64_t l = 0; l < owb * sow * (int64_t)sizeof(float); l += 64)
                __builtin_prefetch(ahead + l);
        }
        for (int64_t ky = 0; ky < t->nky; ky++) {
            for (int64_t kx = 0; kx < t->cols.kw; kx++) {
                int lo = 0, hi = owb;
                if (masked) {
                    ds_cols_valid(&t->cols, kx, owb, sw, &lo, &hi);
                    if (lo >= hi)
                        continue;
                }
                const float *s = t->src + ib * t->src_ib + ky * t->src_ky + kx * t->src_kx;
                const float *w = t->wei + ib * t->wei_ib + ky * t->wei_ky + kx * t->wei_kx;
                for (int64_t i = 0; i < nic; i++, s++, w += ocb * DS_B) {
                    DS_VEC wv[DS_OCB_MAX];
#pragma GCC unroll 4
                    for (int o = 0; o < ocb; o++)
                        wv[o] = DS_LOAD(w + o * DS_B);
#pragma GCC unroll 12
                    for (int j = 0; j < owb; j++) {
                        if (masked && (j < lo || j >= hi))
                            continue;
                        const DS_VEC x = DS_BCAST(s + j * sow);
#pragma GCC unroll 4
                        for (int o = 0; o < ocb; o++)
                            acc[o][j] = DS_FMA(x, wv[o], acc[o][j]);
                    }
                }
            }
        }
    }
#pragma GCC unroll 4
    for (int o = 0; o < ocb; o++)
#pragma GCC unroll 12
        for (int j = 0; j < owb; j++)
            DS_STORE(t->dst + o * t->dst_ob + j * DS_B, acc[o][j]);
}

/* Kernels are instantiated for stride 1 and 2 (the input offsets of the
 * columns become immediates, and the masks need no division) and for any
 * stride, each unmasked and masked (tiles at the row's edges). */
#define DS_DEFINE_TILE(o, w)                                                                             \
    static void DS_FN(ds_tile_##o##_##w##_s1)(const struct ds_tile *t) { ds_tile_body(t, o, w, 1, 0); }  \
    static void DS_FN(ds_tile_##o##_##w##_s2)(const struct ds_tile *t) { ds_tile_body(t, o, w, 2, 0); }  \
    static void DS_FN(ds_tile_##o##_##w##_sn)(const struct ds_tile *t) { ds_tile_body(t, o, w, 0, 0); }  \
    static void DS_FN(ds_tile_##o##_##w##_m1)(const struct ds_tile *t) { ds_tile_body(t, o, w, 1, 1); }  \
    static void DS_FN(ds_tile_##o##_##w##_m2)(const struct ds_tile *t) { ds_tile_body(t, o, w, 2, 1); }  \
    static void DS_FN(ds_tile_##o##_##w##_mn)(const struct ds_tile *t) { ds_tile_body(t, o, w, 0, 1); }
#define DS_TILE_S1(o, w) [w] = DS_FN(ds_tile_##o##_##w##_s1),
#define DS_TILE_S2(o, w) [w] = DS_FN(ds_tile_##o##_##w##_s2),
#define DS_TILE_SN(o, w) [w] = DS_FN(ds_tile_##o##_##w##_sn),
#define DS_TILE_M1(o, w) [w] = DS_FN(ds_tile_##o##_##w##_m1),
#define DS_TILE_M2(o, w) [w] = DS_FN(ds_tile_##o##_##w##_m2),
#define DS_TILE_MN(o, w) [w] = DS_FN(ds_tile_##o##_##w##_mn),

DS_UPTO(DS_OWB_MAX_1)(DS_DEFINE_TILE, 1)
#if DS_OCB_MAX >= 2
DS_UPTO(DS_OWB_MAX_2)(DS_DEFINE_TILE, 2)
#endif
#if DS_OCB_MAX >= 3
DS_UPTO(DS_OWB_MAX_3)(DS_DEFINE_TILE, 3)
#endif
#if DS_OCB_MAX >= 4
DS_UPTO(DS_OWB_MAX_4)(DS_DEFINE_TILE, 4)
#endif

/* [ds_variant()][ocb][owb] */
static const ds_tile_fn DS_FN(ds_tiles)[6][DS_OCB_MAX + 1][DS_OWB_LIMIT + 1] = {
    {
        [1] = {DS_UPTO(DS_OWB_MAX_1)(DS_TILE_S1, 1)},
#if DS_OCB_MAX >= 2
        [2] = {DS_UPTO(DS_OWB_MAX_2)(DS_TILE_S1, 2)},
#endif
#if DS_OCB_MAX >= 3
        [3] = {DS_UPTO(DS_OWB_MAX_3)(DS_TILE_S1, 3)},
#endif
#if DS_OCB_MAX >= 4
        [4] = {DS_UPTO(DS_OWB_MAX_4)(DS_TILE_S1, 4)},
#endif
    },
    {
        [1] = {DS_UPTO(DS_OWB_MAX_1)(DS_TILE_S2, 1)},
#if DS_OCB_MAX >= 2
        [2] = {DS_UPTO(DS_OWB_MAX_2)(DS_TILE_S2, 2)},
#endif
#if DS_OCB_MAX >= 3
        [3] = {DS_UPTO(DS_OWB_MAX_3)(DS_TILE_S2, 3)},
#endif
#if DS_OCB_MAX >= 4
        [4] = {DS_UPTO(DS_OWB_MAX_4)(DS_TILE_S2, 4)},
#endif
    },
    {
        [1] = {DS_UPTO(DS_OWB_MAX_1)(DS_TILE_SN, 1)},
#if DS_OCB_MAX >= 2
        [2] = {DS_UPTO(DS_OWB_MAX_2)(DS_TILE_SN, 2)},
#endif
#if DS_OCB_MAX >= 3
        [3] = {DS_UPTO(DS_OWB_MAX_3)(DS_TILE_SN, 3)},
#endif
#if DS_OCB_MAX >= 4
        [4] = {DS_UPTO(DS_OWB_MAX_4)(DS_TILE_SN, 4)},
#endif
    },
    {
        [1] = {DS_UPTO(DS_OWB_MAX_1)(DS_TILE_M1, 1)},
#if DS_OCB_MAX >= 2
        [2] = {DS_UPTO(DS_OWB_MAX_2)(DS_TILE_M1, 2)},
#endif
#if DS_OCB_MAX >= 3
        [3] = {DS_UPTO(DS_OWB_MAX_3)(DS_TILE_M1, 3)},
#endif
#if DS_OCB_MAX >= 4
        [4] = {DS_UPTO(DS_OWB_MAX_4)(DS_TILE_M1, 4)},
#endif
    },
    {
        [1] = {DS_UPTO(DS_OWB_MAX_1)(DS_TILE_M2, 1)},
#if DS_OCB_MAX >= 2
        [2] = {DS_UPTO(DS_OWB_MAX_2)(DS_TILE_M2, 2)},
#endif
#if DS_OCB_MAX >= 3
        [3] = {DS_UPTO(DS_OWB_MAX_3)(DS_TILE_M2, 3)},
#endif
#if DS_OCB_MAX >= 4
        [4] = {DS_UPTO(DS_OWB_MAX_4)(DS_TILE_M2, 4)},
#endif
    },
    {
        [1] = {DS_UPTO(DS_OWB_MAX_1)(DS_TILE_MN, 1)},
#if DS_OCB_MAX >= 2
        [2] = {DS_UPTO(DS_OWB_MAX_2)(DS_TILE_MN, 2)},
#endif
#if DS_OCB_MAX >= 3
        [3] = {DS_UPTO(DS_OWB_MAX_3)(DS_TILE_MN, 3)},
#endif
#if DS_OCB_MAX >= 4
        [4] = {DS_UPTO(DS_OWB_MAX_4)(DS_TILE_MN, 4)},
#endif
    },
};

/* ---------------------------------------------------------------- GROUPED tiles */

struct ds_gtile {
    const float *src; /* input of the first column at the first row tap, kx = 0 */
    const float *wei; /* [ky][kx][c][B] from the first row tap */
    float *dst;
    int64_t nky, sgc;
    int64_t src_ky, src_kx, src_ow;
    int64_t wei_ky, wei_kx;
    struct ds_cols cols;
    const int32_t *perm; /* [c][B] */
};

typedef void (*ds_gtile_fn)(const struct ds_gtile *t);

DS_INLINE void ds_gtile_body(const struct ds_gtile *t, const int owb, const int sw, const int masked,
                             const int permuted)
{
    DS_VEC acc[DS_GOWB_MAX];
    const int64_t sow = sw ? sw * DS_B : t->src_ow;

#pragma GCC unroll 12
    for (int j = 0; j < owb; j++)
        acc[j] = DS_ZERO();
    for (int64_t ky = 0; ky < t->nky; ky++) {
        for (int64_t kx = 0; kx < t->cols.kw; kx++) {
            int lo = 0, hi = owb;
            if (masked) {
                ds_cols_valid(&t->cols, kx, owb, sw, &lo, &hi);
                if (lo >= hi)
                    continue;
            }
            const float *s = t->src + ky * t->src_ky + kx * t->src_kx;
            const float *w = t->wei + ky * t->wei_ky + kx * t->wei_kx;
            if (!permuted) {
                const DS_VEC wv = DS_LOAD(w);
#pragma GCC unroll 12
                for (int j = 0; j < owb; j++)
                    if (!masked || (j >= lo && j < hi))
                        acc[j] = DS_FMA(DS_LOAD(s + j * sow), wv, acc[j]);
                continue;
            }
            for (int64_t c = 0; c < t->sgc; c++) {
                const DS_IDX idx = DS_LOADIDX(t->perm + c * DS_B);
                const DS_VEC wv = DS_LOAD(w + c * DS_B);
#pragma GCC unroll 12
                for (int j = 0; j < owb; j++)
                    if (!masked || (j >= lo && j < hi))
                        acc[j] = DS_FMA(DS_PERM(DS_LOAD(s + j * sow), idx), wv, acc[j]);
            }
        }
    }
#pragma GCC unroll 12
    for (int j = 0; j < owb; j++)
        DS_STORE(t->dst + j * DS_B, acc[j]);
}

#define DS_DEFINE_GTILE_P(w, p, tag)                                                                           \
    static void DS_FN(ds_gtile_##w##_s1##tag)(const struct ds_gtile *t) { ds_gtile_body(t, w, 1, 0, p); }     \
    static void DS_FN(ds_gtile_##w##_s2##tag)(const struct ds_gtile *t) { ds_gtile_body(t, w, 2, 0, p); }     \
    static void DS_FN(ds_gtile_##w##_sn##tag)(const struct ds_gtile *t) { ds_gtile_body(t, w, 0, 0, p); }     \
    static void DS_FN(ds_gtile_##w##_m1##tag)(const struct ds_gtile *t) { ds_gtile_body(t, w, 1, 1, p); }     \
    static void DS_FN(ds_gtile_##w##_m2##tag)(const struct ds_gtile *t) { ds_gtile_body(t, w, 2, 1, p); }     \
    static void DS_FN(ds_gtile_##w##_mn##tag)(const struct ds_gtile *t) { ds_gtile_body(t, w, 0, 1, p); }
#define DS_DEFINE_GTILE(unused, w) DS_DEFINE_GTILE_P(w, 0, _d) DS_DEFINE_GTILE_P(w, 1, _p)
#define DS_GTILE_ENTRY(kind, w) [w] = DS_CAT(DS_CAT(ds_gtile_##w##_, kind), DS_CAT(_, DS_ISA_SUFFIX)),
#define DS_GTILE_S1D(unused, w) DS_GTILE_ENTRY(s1_d, w)
#define DS_GTILE_S2D(unused, w) DS_GTILE_ENTRY(s2_d, w)
#define DS_GTILE_SND(unused, w) DS_GTILE_ENTRY(sn_d, w)
#define DS_GTILE_M1D(unused, w) DS_GTILE_ENTRY(m1_d, w)
#define DS_GTILE_M2D(unused, w) DS_GTILE_ENTRY(m2_d, w)
#define DS_GTILE_MND(unused, w) DS_GTILE_ENTRY(mn_d, w)
#define DS_GTILE_S1P(unused, w) DS_GTILE_ENTRY(s1_p, w)
#define DS_GTILE_S2P(unused, w) DS_GTILE_ENTRY(s2_p, w)
#define DS_GTILE_SNP(unused, w) DS_GTILE_ENTRY(sn_p, w)
#define DS_GTILE_M1P(unused, w) DS_GTILE_ENTRY(m1_p, w)
#define DS_GTILE_M2P(unused, w) DS_GTILE_ENTRY(m2_p, w)
#define DS_GTILE_MNP(unused, w) DS_GTILE_ENTRY(mn_p, w)

DS_UPTO(DS_GOWB_MAX)(DS_DEFINE_GTILE, 0)

/* [permuted][ds_variant()][owb] */
static const ds_gtile_fn DS_FN(ds_gtiles)[2][6][DS_GOWB_MAX + 1] = {
    {{DS_UPTO(DS_GOWB_MAX)(DS_GTILE_S1D, 0)},
     {DS_UPTO(DS_GOWB_MAX)(DS_GTILE_S2D, 0)},
     {DS_UPTO(DS_GOWB_MAX)(DS_GTILE_SND, 0)},
     {DS_UPTO(DS_GOWB_MAX)(DS_GTILE_M1D, 0)},
     {DS_UPTO(DS_GOWB_MAX)(DS_GTILE_M2D, 0)},
     {DS_UPTO(DS_GOWB_MAX)(DS_GTILE_MND, 0)}},
    {{DS_UPTO(DS_GOWB_MAX)(DS_GTILE_S1P, 0)},
     {DS_UPTO(DS_GOWB_MAX)(DS_GTILE_S2P, 0)},
     {DS_UPTO(DS_GOWB_MAX)(DS_GTILE_SNP, 0)},
     {DS_UPTO(DS_GOWB_MAX)(DS_GTILE_M1P, 0)},
     {DS_UPTO(DS_GOWB_MAX)(DS_GTILE_M2P, 0)},
     {DS_UPTO(DS_GOWB_MAX)(DS_GTILE_MNP, 0)}},
};

/* ---------------------------------------------------------------- drivers */

/* The taps [lo, hi) of a kernel extent k (dilation d) at output position o
 * whose input index lies in [0, n); hi <= lo when none does. */
DS_INLINE void ds_taps(int64_t o, int64_t s, int64_t p, int64_t d, int64_t k, int64_t n, int64_t *lo,
                       int64_t *hi)
{
    const int64_t base = o * s - p, step = d + 1;
    *lo = base >= 0 ? 0 : (-base + step - 1) / step;
    const int64_t room = n - 1 - base;
    *hi = room < 0 ? 0 : CONVSEL_MIN(k, room / step + 1);
}

/* Output columns [lo, hi) whose every tap is inside the input row. */
DS_INLINE void ds_interior(const struct ds_plan *p, int64_t *lo, int64_t *hi)
{
    const int64_t span = (p->kw - 1) * (p->dw + 1);
    *lo = p->pw > 0 ? (p->pw + p->sw - 1) / p->sw : 0;
    const int64_t room = p->iw - 1 + p->pw - span;
    *hi = room < 0 ? 0 : CONVSEL_MIN(p->ow, room / p->sw + 1);
    if (*hi < *lo)
        *hi = *lo;
}

/* Width of the next tile of a run of n columns: the run is cut into
 * ceil(n / wmax) tiles whose widths differ by at most one, so that a 56-wide
 * row with wmax 6 becomes 6×6 + 4×5 rather than 9×6 + 1×2. */
DS_INLINE int64_t ds_tile_width(int64_t n, int64_t wmax)
{
    const int64_t tiles = (n + wmax - 1) / wmax;
    return (n + tiles - 1) / tiles;
}

/* Which kernel variant a tile of columns [ox, ox + width) needs: stride 1,
 * 2 or other, plus 3 when the tile reaches into the padding. */
DS_INLINE int ds_variant(const struct ds_plan *p, int64_t ox, int64_t width, int64_t ox_lo, int64_t ox_hi)
{
    const int stride = p->sw == 1 ? 0 : p->sw == 2 ? 1 : 2;
    return ox < ox_lo || ox + width > ox_hi ? 3 + stride : stride;
}

extern const struct ds_isa DS_ISA_SYMBOL;

static void DS_FN(ds_run_main)(const struct ds_plan *p, const float *src, float *dst)
{
    const int64_t B = DS_B;
    const int64_t nseg = (p->ow + p->seg - 1) / p->seg;
    const int64_t items = p->mb * p->g * p->nq * p->oh * nseg;
    const int64_t src_ib = p->ih * p->iw * B, dst_ob = p->oh * p->ow * B;
    const int64_t wei_group = p->nb_oc_g * B * p->nb_ic_g * B * p->kh * p->kw;
    int64_t ox_lo, ox_hi;
    ds_interior(p, &ox_lo, &ox_hi);

#pragma omp parallel for schedule(static)
    for (int64_t it = 0; it < items; it++) {
        int64_t r = it, seg, oy, q;
        if (p->q_inner) {
            q = r % p->nq;
            r /= p->nq;
            seg = r % nseg;
            r /= nseg;
            oy = r % p->oh;
            r /= p->oh;
        } else {
            seg = r % nseg;
            r /= nseg;
            oy = r % p->oh;
            r /= p->oh;
            q = r % p->nq;
            r /= p->nq;
        }
        const int64_t gi = r % p->g;
        const int64_t n = r / p->g;

        int64_t first, ocb;
        ds_group(p->nb_oc_g, p->nq, q, &first, &ocb);
        const int64_t wmax = DS_ISA_SYMBOL.owb_max[ocb];
        const float *src_n = src + (n * p->nb_ic + gi * p->nb_ic_g) * src_ib;
        float *dst_row = dst + (n * p->nb_oc + gi * p->nb_oc_g + first) * dst_ob + oy * p->ow * B;
        const float *wei_q = p->weights + gi * wei_group + first * B * p->nb_ic_g * B * p->kh * p->kw;
        int64_t ky_lo, ky_hi;
        ds_taps(oy, p->sh, p->ph, p->dh, p->kh, p->ih, &ky_lo, &ky_hi);
        const int64_t nky = ky_hi > ky_lo ? ky_hi - ky_lo : 0;
        const int64_t iy0 = nky ? oy * p->sh - p->ph + ky_lo * (p->dh + 1) : 0;

        struct ds_tile t;
        t.src_ib = src_ib;
        t.src_ky = (p->dh + 1) * p->iw * B;
        t.src_kx = (p->dw + 1) * B;
        t.src_ow = p->sw * B;
        t.wei_kx = B * ocb * B;
        t.wei_ky = p->kw * t.wei_kx;
        t.wei_ib = p->kh * t.wei_ky;
        t.dst_ob = dst_ob;
        t.nky = nky;
        t.cols.iw = p->iw;
        t.cols.sw = p->sw;
        t.cols.dil = p->dw + 1;
        t.cols.kw = p->kw;

        const int64_t x0 = seg * p->seg, x1 = CONVSEL_MIN(p->ow, x0 + p->seg);
        for (int64_t ib0 = 0; ib0 < p->nb_ic_g; ib0 += p->ib_chunk) {
            t.nib = CONVSEL_MIN(p->ib_chunk, p->nb_ic_g - ib0);
            t.last_ic = ib0 + t.nib == p->nb_ic_g ? p->icg - (p->nb_ic_g - 1) * B : B;
            t.accumulate = ib0 > 0;
            for (int64_t ox = x0, width; ox < x1; ox += width) {
                width = ds_tile_width(x1 - ox, wmax);
                t.cols.ix0 = ox * p->sw - p->pw;
                t.src = src_n + ib0 * src_ib + (iy0 * p->iw + t.cols.ix0) * B;
                t.wei = wei_q + ib0 * t.wei_ib + ky_lo * t.wei_ky;
                t.dst = dst_row + ox * B;
                DS_FN(ds_tiles)[ds_variant(p, ox, width, ox_lo, ox_hi)][ocb][width](&t);
            }
        }
    }
}

static void DS_FN(ds_run_grouped)(const struct ds_plan *p, const float *src, float *dst)
{
    const int64_t B = DS_B;
    const int64_t nseg = (p->ow + p->seg - 1) / p->seg;
    const int64_t items = p->mb * p->nb_oc * p->oh * nseg;
    const int64_t src_cb = p->ih * p->iw * B, dst_ob = p->oh * p->ow * B;
    const int64_t wei_cb = p->kh * p->kw * p->sgc * B;
    const int permuted = p->sgc > 1;
    int64_t ox_lo, ox_hi;
    ds_interior(p, &ox_lo, &ox_hi);

#pragma omp parallel for schedule(static)
    for (int64_t it = 0; it < items; it++) {
        int64_t r = it;
        const int64_t seg = r % nseg;
        r /= nseg;
        const int64_t oy = r % p->oh;
        r /= p->oh;
        const int64_t cb = r % p->nb_oc;
        const int64_t n = r / p->nb_oc;

        int64_t ky_lo, ky_hi;
        ds_taps(oy, p->sh, p->ph, p->dh, p->kh, p->ih, &ky_lo, &ky_hi);
        const int64_t nky = ky_hi > ky_lo ? ky_hi - ky_lo : 0;
        const int64_t iy0 = nky ? oy * p->sh - p->ph + ky_lo * (p->dh + 1) : 0;
        const float *src_c = src + (n * p->nb_ic + cb) * src_cb;
        float *dst_row = dst + (n * p->nb_oc + cb) * dst_ob + oy * p->ow * B;

        struct ds_gtile t;
        t.nky = nky;
        t.sgc = p->sgc;
        t.src_ky = (p->dh + 1) * p->iw * B;
        t.src_kx = (p->dw + 1) * B;
        t.src_ow = p->sw * B;
        t.wei_kx = p->sgc * B;
        t.wei_ky = p->kw * t.wei_kx;
        t.perm = p->perm;
        t.cols.iw = p->iw;
        t.cols.sw = p->sw;
        t.cols.dil = p->dw + 1;
        t.cols.kw = p->kw;

        const int64_t x0 = seg * p->seg, x1 = CONVSEL_MIN(p->ow, x0 + p->seg);
        for (int64_t ox = x0, width; ox < x1; ox += width) {
            width = ds_tile_width(x1 - ox, DS_GOWB_MAX);
            t.cols.ix0 = ox * p->sw - p->pw;
            t.src = src_c + (iy0 * p->iw + t.cols.ix0) * B;
            t.wei = p->weights + cb * wei_cb + ky_lo * t.wei_ky;
            t.dst = dst_row + ox * B;
            DS_FN(ds_gtiles)[permuted][ds_variant(p, ox, width, ox_lo, ox_hi)][width](&t);
        }
    }
}

static void DS_FN(ds_run)(const struct ds_plan *p, const float *src, float *dst)
{
    switch (p->mode) {
    case DS_MODE_MAIN: DS_FN(ds_run_main)(p, src, dst); break;
    case DS_MODE_GROUPED: DS_FN(ds_run_grouped)(p, src, dst); break;
    default: convsel_direct_simd_run_general(p, src, dst); break;
    }
}

const struct ds_isa DS_ISA_SYMBOL = {
    .name = DS_ISA_NAME,
    .block = DS_B,
    .ocb_max = DS_OCB_MAX,
    .owb_max = DS_OWB_MAX_INIT,
    .run = DS_FN(ds_run),
};
