/*
 * The Winograd kernels written once over a vector type, instantiated by
 * winograd_avx512.c (16 lanes), winograd_avx2.c (8 lanes) and winograd.c
 * (portable: a "vector" of one float). One text for the transform formulas
 * keeps the three paths from drifting apart; the includer maps the macros to
 * its intrinsics:
 *
 *   WINO_VEC, WINO_VLANES            vector type and its float count
 *   WINO_LOAD(p) WINO_STORE(p, x)    unaligned load / store
 *   WINO_SET1(f) WINO_ZERO()
 *   WINO_ADD WINO_SUB WINO_MUL       (a, b)
 *   WINO_FMADD(a, b, c)              a * b + c
 *   WINO_FNMADD(a, b, c)             c - a * b
 *   WINO_NAME(x)                     a file-local name for kernel x
 *
 * and, for the GEMM (not the portable path), WINO_MR rows × WINO_NV vectors.
 *
 * Transform matrices: see convsel_wino_matrices() in winograd.c; the formulas
 * below are those matrices with common subexpressions shared.
 */
#include <stdint.h>

#include "winograd.h"

/* ---------------------------------------------------------------- 1D transforms */

/* B^T d for F(2,3), points 0, 1, -1, ∞. */
#define WINO_IN4(d0, d1, d2, d3, r0, r1, r2, r3)                                                                    \
    do {                                                                                                             \
        r0 = WINO_SUB(d0, d2);                                                                                       \
        r1 = WINO_ADD(d1, d2);                                                                                       \
        r2 = WINO_SUB(d2, d1);                                                                                       \
        r3 = WINO_SUB(d1, d3);                                                                                       \
    } while (0)

/* A^T m for F(2,3). */
#define WINO_OUT4(m0, m1, m2, m3, y0, y1)                                                                           \
    do {                                                                                                             \
        y0 = WINO_ADD(WINO_ADD(m0, m1), m2);                                                                         \
        y1 = WINO_SUB(WINO_SUB(m1, m2), m3);                                                                         \
    } while (0)

/* B^T d for F(4,3), points 0, 1, -1, 2, -1/2, ∞. Rows of B^T:
 *   [1  1.5  -2  -1.5  1  0]   d0 - 2 d2 + d4 + 1.5 w       w = d1 - d3
 *   [0 -1  -2.5  -0.5  1  0]   e - o                        q = d4 - d2
 *   [0  1   0.5  -2.5  1  0]   e + o                        e = q - 1.5 d3
 *   [0 -0.5 -1    0.5  1  0]   q - 0.5 w                    o = w + 1.5 d2
 *   [0  2  -1    -2    1  0]   q + 2 w
 *   [0  1   1.5  -2  -1.5 1]   d5 + d1 - 2 d3 - 1.5 q */
#define WINO_IN6(d0, d1, d2, d3, d4, d5, r0, r1, r2, r3, r4, r5)                                                    \
    do {                                                                                                             \
        const WINO_VEC q_ = WINO_SUB(d4, d2), w_ = WINO_SUB(d1, d3);                                                 \
        const WINO_VEC e_ = WINO_FNMADD(c1_5, d3, q_), o_ = WINO_FMADD(c1_5, d2, w_);                                \
        r0 = WINO_FMADD(c1_5, w_, WINO_FNMADD(c2, d2, WINO_ADD(d0, d4)));                                             \
        r1 = WINO_SUB(e_, o_);                                                                                       \
        r2 = WINO_ADD(e_, o_);                                                                                       \
        r3 = WINO_FNMADD(c0_5, w_, q_);                                                                              \
        r4 = WINO_FMADD(c2, w_, q_);                                                                                 \
        r5 = WINO_FNMADD(c1_5, q_, WINO_FNMADD(c2, d3, WINO_ADD(d5, d1)));                                            \
    } while (0)

/* A^T m for F(4,3). Rows of A^T:
 *   [1 1  1 1  1      0]
 *   [0 1 -1 2 -1/2    0]
 *   [0 1  1 4  1/4    0]
 *   [0 1 -1 8 -1/8    1] */
#define WINO_OUT6(m0, m1, m2, m3, m4, m5, y0, y1, y2, y3)                                                           \
    do {                                                                                                             \
        const WINO_VEC a_ = WINO_ADD(m1, m2), b_ = WINO_SUB(m1, m2);                                                 \
        y0 = WINO_ADD(WINO_ADD(m0, a_), WINO_ADD(m3, m4));                                                           \
        y1 = WINO_FNMADD(c0_5, m4, WINO_FMADD(c2, m3, b_));                                                          \
        y2 = WINO_FMADD(c0_25, m4, WINO_FMADD(c4, m3, a_));                                                          \
        y3 = WINO_ADD(WINO_FNMADD(c0_125, m4, WINO_FMADD(c8, m3, b_)), m5);                                          \
    } while (0)

/* ---------------------------------------------------------------- one tile, one vector of lanes */

/*
 * d[i][j] is the pixel (y0 + i, x0 + j) of plane (rows rs, columns cs floats
 * apart). With border = 0 the whole tile lies inside the h × w image; with
 * border = 1 pixels outside read as zeros. border is a literal at every call
 * site, so the interior tiles get code without checks. (A zero-padded copy of
 * the tile would be simpler, but GCC turns the copy into memcpy calls that
 * cost more than the transform.)
 */
static inline __attribute__((always_inline)) WINO_VEC WINO_NAME(pixel)(const float *plane, int64_t rs, int64_t cs,
                                                                       int64_t y, int64_t x, int64_t h, int64_t w,
                                                                       int border)
{
    if (border && (y < 0 || y >= h || x < 0 || x >= w))
        return WINO_ZERO();
    return WINO_LOAD(plane + y * rs + x * cs);
}

/* V[xi = i * 4 + j] to v + xi * xs. */
static inline __attribute__((always_inline)) void WINO_NAME(tile_in4)(const float *plane, int64_t rs, int64_t cs,
                                                                      int64_t y0, int64_t x0, int64_t h, int64_t w,
                                                                      int border, float *v, int64_t xs)
{
    WINO_VEC t[4][4];
    for (int i = 0; i < 4; i++) {
        WINO_VEC d[4];
        for (int j = 0; j < 4; j++)
            d[j] = WINO_NAME(pixel)(plane, rs, cs, y0 + i, x0 + j, h, w, border);
        WINO_IN4(d[0], d[1], d[2], d[3], t[i][0], t[i][1], t[i][2], t[i][3]);
    }
    for (int j = 0; j < 4; j++) {
        WINO_VEC r0, r1, r2, r3;
        WINO_IN4(t[0][j], t[1][j], t[2][j], t[3][j], r0, r1, r2, r3);
        WINO_STORE(v + (0 * 4 + j) * xs, r0);
        WINO_STORE(v + (1 * 4 + j) * xs, r1);
        WINO_STORE(v + (2 * 4 + j) * xs, r2);
        WINO_STORE(v + (3 * 4 + j) * xs, r3);
    }
}

static inline __attribute__((always_inline)) void WINO_NAME(tile_in6)(const float *plane, int64_t rs, int64_t cs,
                                                                      int64_t y0, int64_t x0, int64_t h, int64_t w,
                                                                      int border, float *v, int64_t xs)
{
    const WINO_VEC c0_5 = WINO_SET1(0.5f), c1_5 = WINO_SET1(1.5f), c2 = WINO_SET1(2.0f);
    WINO_VEC t[6][6];
    for (int i = 0; i < 6; i++) {
        WINO_VEC d[6];
        for (int j = 0; j < 6; j++)
            d[j] = WINO_NAME(pixel)(plane, rs, cs, y0 + i, x0 + j, h, w, border);
        WINO_IN6(d[0], d[1], d[2], d[3], d[4], d[5], t[i][0], t[i][1], t[i][2], t[i][3], t[i][4], t[i][5]);
    }
    for (int j = 0; j < 6; j++) {
        WINO_VEC r0, r1, r2, r3, r4, r5;
        WINO_IN6(t[0][j], t[1][j], t[2][j], t[3][j], t[4][j], t[5][j], r0, r1, r2, r3, r4, r5);
        WINO_STORE(v + (0 * 6 + j) * xs, r0);
        WINO_STORE(v + (1 * 6 + j) * xs, r1);
        WINO_STORE(v + (2 * 6 + j) * xs, r2);
        WINO_STORE(v + (3 * 6 + j) * xs, r3);
        WINO_STORE(v + (4 * 6 + j) * xs, r4);
        WINO_STORE(v + (5 * 6 + j) * xs, r5);
    }
}

/* M[xi] at m + xi * xs; y[i][j] to o + i * rs + j * cs for i < hh, j < ww
 * (the part of the tile inside the output; all of it when border = 0). */
static inline __attribute__((always_inline)) void WINO_NAME(tile_out4)(const float *m, int64_t xs, float *o,
                                                                       int64_t rs, int64_t cs, int64_t hh,
                                                                       int64_t ww, int border)
{
    WINO_VEC t[2][4];
    for (int j = 0; j < 4; j++) {
        WINO_VEC m0 = WINO_LOAD(m + (0 * 4 + j) * xs), m1 = WINO_LOAD(m + (1 * 4 + j) * xs),
                 m2 = WINO_LOAD(m + (2 * 4 + j) * xs), m3 = WINO_LOAD(m + (3 * 4 + j) * xs);
        WINO_OUT4(m0, m1, m2, m3, t[0][j], t[1][j]);
    }
    for (int i = 0; i < 2; i++) {
        WINO_VEC y[2];
        WINO_OUT4(t[i][0], t[i][1], t[i][2], t[i][3], y[0], y[1]);
        for (int j = 0; j < 2; j++)
            if (!border || (i < hh && j < ww))
                WINO_STORE(o + i * rs + j * cs, y[j]);
    }
}

static inline __attribute__((always_inline)) void WINO_NAME(tile_out6)(const float *m, int64_t xs, float *o,
                                                                       int64_t rs, int64_t cs, int64_t hh,
                                                                       int64_t ww, int border)
{
    const WINO_VEC c0_5 = WINO_SET1(0.5f), c2 = WINO_SET1(2.0f), c0_25 = WINO_SET1(0.25f), c4 = WINO_SET1(4.0f),
                   c0_125 = WINO_SET1(0.125f), c8 = WINO_SET1(8.0f);
    WINO_VEC t[4][6];
    for (int j = 0; j < 6; j++) {
        WINO_VEC m0 = WINO_LOAD(m + (0 * 6 + j) * xs), m1 = WINO_LOAD(m + (1 * 6 + j) * xs),
                 m2 = WINO_LOAD(m + (2 * 6 + j) * xs), m3 = WINO_LOAD(m + (3 * 6 + j) * xs),
                 m4 = WINO_LOAD(m + (4 * 6 + j) * xs), m5 = WINO_LOAD(m + (5 * 6 + j) * xs);
        WINO_OUT6(m0, m1, m2, m3, m4, m5, t[0][j], t[1][j], t[2][j], t[3][j]);
    }
    for (int i = 0; i < 4; i++) {
        WINO_VEC y[4];
        WINO_OUT6(t[i][0], t[i][1], t[i][2], t[i][3], t[i][4], t[i][5], y[0], y[1], y[2], y[3]);
        for (int j = 0; j < 4; j++)
            if (!border || (i < hh && j < ww))
                WINO_STORE(o + i * rs + j * cs, y[j]);
    }
}

/* ---------------------------------------------------------------- tile loops */

/* Steps (image, tile row, tile column) to the next tile, without the
 * divisions that cost as much as a small transform. */
static inline void WINO_NAME(next_tile)(const struct convsel_wino_geom *g, int64_t *n, int64_t *ty, int64_t *tx)
{
    if (++*tx == g->tiles_w) {
        *tx = 0;
        if (++*ty == g->tiles_h) {
            *ty = 0;
            ++*n;
        }
    }
}

static inline __attribute__((always_inline)) void WINO_NAME(input)(const struct convsel_wino_geom *g,
                                                                   const float *src, int64_t cb0, int64_t cb1,
                                                                   int64_t tile, int64_t count, float *v,
                                                                   int64_t ldv, int64_t xs, int a)
{
    const int64_t bk = g->block, per_image = g->tiles_h * g->tiles_w, plane = g->ih * g->iw * bk;
    const int64_t rs = g->iw * bk;
    /* Channel blocks outside, tiles inside: consecutive tiles walk along the
     * same a rows of one plane, streams the hardware prefetcher follows;
     * the other order touches a rows of every plane at once. */
    for (int64_t cb = cb0; cb < cb1; cb++) {
        int64_t n = tile / per_image, ty = tile % per_image / g->tiles_w, tx = tile % g->tiles_w;
        for (int64_t r = 0; r < count; r++, WINO_NAME(next_tile)(g, &n, &ty, &tx)) {
            const int64_t y0 = ty * g->m - g->ph, x0 = tx * g->m - g->pw;
            const int inside = y0 >= 0 && x0 >= 0 && y0 + a <= g->ih && x0 + a <= g->iw;
            const float *base = src + (n * g->cb_in + cb) * plane;
            float *out = v + r * ldv + cb * bk;
            for (int64_t l = 0; l < bk; l += WINO_VLANES) {
                if (a == 4 && inside)
                    WINO_NAME(tile_in4)(base + l, rs, bk, y0, x0, g->ih, g->iw, 0, out + l, xs);
                else if (a == 4)
                    WINO_NAME(tile_in4)(base + l, rs, bk, y0, x0, g->ih, g->iw, 1, out + l, xs);
                else if (inside)
                    WINO_NAME(tile_in6)(base + l, rs, bk, y0, x0, g->ih, g->iw, 0, out + l, xs);
                else
                    WINO_NAME(tile_in6)(base + l, rs, bk, y0, x0, g->ih, g->iw, 1, out + l, xs);
            }
        }
    }
}

static inline __attribute__((always_inline)) void WINO_NAME(output)(const struct convsel_wino_geom *g,
                                                                    const float *m, int64_t ldm, int64_t xs,
                                                                    int64_t cb0, int64_t cb1, int64_t tile,
                                                                    int64_t count, float *dst, int a)
{
    const int e = g->m;
    const int64_t bk = g->block, per_image = g->tiles_h * g->tiles_w, plane = g->oh * g->ow * bk;
    const int64_t rs = g->ow * bk;
    for (int64_t cb = cb0; cb < cb1; cb++) {
        int64_t n = tile / per_image, ty = tile % per_image / g->tiles_w, tx = tile % g->tiles_w;
        for (int64_t r = 0; r < count; r++, WINO_NAME(next_tile)(g, &n, &ty, &tx)) {
            const int64_t y0 = ty * e, x0 = tx * e;
            const int64_t hh = CONVSEL_WINO_MIN(e, g->oh - y0), ww = CONVSEL_WINO_MIN(e, g->ow - x0);
            const int whole = hh == e && ww == e;
            const float *in = m + r * ldm + cb * bk;
            float *o = dst + (n * g->cb_out + cb) * plane + y0 * rs + x0 * bk;
            for (int64_t l = 0; l < bk; l += WINO_VLANES) {
                if (a == 4 && whole)
                    WINO_NAME(tile_out4)(in + l, xs, o + l, rs, bk, hh, ww, 0);
                else if (a == 4)
                    WINO_NAME(tile_out4)(in + l, xs, o + l, rs, bk, hh, ww, 1);
                else if (whole)
                    WINO_NAME(tile_out6)(in + l, xs, o + l, rs, bk, hh, ww, 0);
                else
                    WINO_NAME(tile_out6)(in + l, xs, o + l, rs, bk, hh, ww, 1);
            }
        }
    }
}

static void WINO_NAME(input_f23)(const struct convsel_wino_geom *g, const float *src, int64_t cb0, int64_t cb1,
                                 int64_t tile, int64_t count, float *v, int64_t ldv, int64_t xs)
{
    WINO_NAME(input)(g, src, cb0, cb1, tile, count, v, ldv, xs, 4);
}

static void WINO_NAME(input_f43)(const struct convsel_wino_geom *g, const float *src, int64_t cb0, int64_t cb1,
                                 int64_t tile, int64_t count, float *v, int64_t ldv, int64_t xs)
{
    WINO_NAME(input)(g, src, cb0, cb1, tile, count, v, ldv, xs, 6);
}

static void WINO_NAME(output_f23)(const struct convsel_wino_geom *g, const float *m, int64_t ldm, int64_t xs,
                                  int64_t cb0, int64_t cb1, int64_t tile, int64_t count, float *dst)
{
    WINO_NAME(output)(g, m, ldm, xs, cb0, cb1, tile, count, dst, 4);
}

static void WINO_NAME(output_f43)(const struct convsel_wino_geom *g, const float *m, int64_t ldm, int64_t xs,
                                  int64_t cb0, int64_t cb1, int64_t tile, int64_t count, float *dst)
{
    WINO_NAME(output)(g, m, ldm, xs, cb0, cb1, tile, count, dst, 6);
}

/* ---------------------------------------------------------------- GEMM */

#ifdef WINO_MR

#define WINO_NR (WINO_NV * WINO_VLANES)

#ifndef WINO_KC
#define WINO_KC 64
#endif

/*
 * One register block: mr rows × nv vectors of columns. mr and nv are literals
 * at every call site (see gemm below), so the compiler unrolls the loops and
 * keeps the mr × nv accumulators in registers; A is broadcast from memory. B
 * is packed in panels of WINO_NR columns; with nv < WINO_NV only the panel's
 * first nv vectors are read (a narrow last panel: past ncols it holds zeros).
 *
 * k is summed in blocks of WINO_KC, each block in registers and then added
 * to C (an L1-resident tile): one float accumulation over all of k (512 on
 * VGG's deep layers) was most of F(4,3)'s rounding error, and blocks of 64
 * cut that error ~3.5x (max error over a 512-channel layer, ~2e-6 instead
 * of ~6e-6) for a few per cent of C traffic.
 */
static inline __attribute__((always_inline)) void WINO_NAME(block)(const int mr, const int nv, int64_t k,
                                                                   const float *a, int64_t lda, const float *b,
                                                                   float *c, int64_t ldc, int64_t ncols)
{
    float part[WINO_MR * WINO_NR];
    const int64_t width = (int64_t)nv * WINO_VLANES;
    float *cc = ncols == width ? c : part;
    const int64_t ldcc = ncols == width ? ldc : WINO_NR;
    for (int64_t k0 = 0; k0 < k; k0 += WINO_KC) {
        const int64_t k1 = CONVSEL_WINO_MIN(k, k0 + WINO_KC);
        WINO_VEC acc[WINO_MR][WINO_NV];
        for (int i = 0; i < mr; i++)
            for (int j = 0; j < nv; j++)
                acc[i][j] = WINO_ZERO();
        for (int64_t kk = k0; kk < k1; kk++) {
            WINO_VEC bv[WINO_NV];
            for (int j = 0; j < nv; j++)
                bv[j] = WINO_LOAD(b + kk * WINO_NR + j * WINO_VLANES);
            for (int i = 0; i < mr; i++) {
                const WINO_VEC av = WINO_SET1(a[i * lda + kk]);
                for (int j = 0; j < nv; j++)
                    acc[i][j] = WINO_FMADD(av, bv[j], acc[i][j]);
            }
        }
        for (int i = 0; i < mr; i++) {
            for (int j = 0; j < nv; j++) {
                float *p = cc + i * ldcc + j * WINO_VLANES;
                WINO_STORE(p, k0 == 0 ? acc[i][j] : WINO_ADD(WINO_LOAD(p), acc[i][j]));
            }
        }
    }
    if (cc == part)
        for (int i = 0; i < mr; i++)
            for (int64_t j = 0; j < ncols; j++)
                c[i * ldc + j] = part[i * WINO_NR + j];
}

/* Rows in blocks of at most WINO_MR, and for each, every panel: the A block
 * (mr × k) stays in L1 while the panels stream from L2. The blocks are made
 * equal (49 rows: 10+10+10+10+9, not 12+12+12+12+1) because a block of
 * one or two rows runs at the speed of loading B, several times slower per
 * row than a full one. A panel of at most one vector of columns (a layer of
 * few output channels, or the last panel of some) multiplies that vector
 * only: under AVX-512, 12 output channels filled 12 of the 32 columns
 * computed. */
static void WINO_NAME(gemm)(int64_t rows, int64_t k, int64_t n, const float *a, int64_t lda, const float *b, float *c,
                            int64_t ldc)
{
    const int64_t nblk = (rows + WINO_MR - 1) / WINO_MR;
    for (int64_t blk = 0, r = 0; blk < nblk; blk++) {
        const int64_t mr = (rows - r) / (nblk - blk);
        r += mr;
        const float *ar = a + (r - mr) * lda;
        float *cr = c + (r - mr) * ldc;
        for (int64_t p = 0; p * WINO_NR < n; p++) {
            const float *bp = b + p * k * WINO_NR;
            const int64_t nc = CONVSEL_WINO_MIN(WINO_NR, n - p * WINO_NR);
            float *cp = cr + p * WINO_NR;
            const int narrow = nc <= WINO_VLANES;
            switch (mr) {
#define WINO_CASE(R)                                                                                                 \
    case R:                                                                                                          \
        if (narrow)                                                                                                  \
            WINO_NAME(block)(R, 1, k, ar, lda, bp, cp, ldc, nc);                                                     \
        else                                                                                                         \
            WINO_NAME(block)(R, WINO_NV, k, ar, lda, bp, cp, ldc, nc);                                               \
        break;
                WINO_CASE(1) WINO_CASE(2) WINO_CASE(3) WINO_CASE(4) WINO_CASE(5) WINO_CASE(6)
#if WINO_MR > 6
                WINO_CASE(7) WINO_CASE(8)
#endif
#if WINO_MR > 8
                WINO_CASE(9) WINO_CASE(10) WINO_CASE(11) WINO_CASE(12)
#endif
#if WINO_MR > 12
                WINO_CASE(13) WINO_CASE(14)
#endif
#undef WINO_CASE
            default: break;
            }
        }
    }
}

#endif
