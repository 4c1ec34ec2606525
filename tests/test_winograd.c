/*
 * The Winograd primitives: their transform matrices, each ISA's kernels
 * against the portable ones, and whole convolutions against the reference
 * (padding 0/1/2, implied far padding, partial tiles, channels off the SIMD
 * blocks, groups, depthwise, batch, 1 and 2 threads).
 *
 * The end-to-end cases run the kernels of the ISA in force; CTest runs this
 * file again under CONVSEL_ISA=avx2 and =scalar for the other paths.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "convsel.h"
#include "winograd.h"

/* ---------------------------------------------------------------- matrices */

/* A^T [(G g G^T) ⊙ (B^T d B)] A must be the m×m correlation of d with g. */
static void test_matrices(int m)
{
    const int a = m + 2;
    const double *at, *gm, *bt;
    convsel_wino_matrices(m, &at, &gm, &bt);
    float fd[36], fg[9];
    convsel_fill_random(fd, 36, 100 + m);
    convsel_fill_random(fg, 9, 200 + m);
    double d[6][6], g[3][3], u[6][6], v[6][6], t[6][6];
    for (int i = 0; i < a; i++)
        for (int j = 0; j < a; j++)
            d[i][j] = fd[i * a + j];
    for (int i = 0; i < 3; i++)
        for (int j = 0; j < 3; j++)
            g[i][j] = fg[i * 3 + j];
    for (int i = 0; i < a; i++)
        for (int j = 0; j < 3; j++) {
            t[i][j] = 0;
            for (int k = 0; k < 3; k++)
                t[i][j] += gm[i * 3 + k] * g[k][j];
        }
    for (int i = 0; i < a; i++)
        for (int j = 0; j < a; j++) {
            u[i][j] = 0;
            for (int k = 0; k < 3; k++)
                u[i][j] += t[i][k] * gm[j * 3 + k];
        }
    for (int i = 0; i < a; i++)
        for (int j = 0; j < a; j++) {
            t[i][j] = 0;
            for (int k = 0; k < a; k++)
                t[i][j] += bt[i * a + k] * d[k][j];
        }
    for (int i = 0; i < a; i++)
        for (int j = 0; j < a; j++) {
            v[i][j] = 0;
            for (int k = 0; k < a; k++)
                v[i][j] += t[i][k] * bt[j * a + k];
            v[i][j] *= u[i][j];
        }
    double worst = 0;
    for (int y = 0; y < m; y++) {
        for (int x = 0; x < m; x++) {
            double w = 0, direct = 0;
            for (int i = 0; i < a; i++)
                for (int j = 0; j < a; j++)
                    w += at[y * a + i] * v[i][j] * at[x * a + j];
            for (int i = 0; i < 3; i++)
                for (int j = 0; j < 3; j++)
                    direct += d[y + i][x + j] * g[i][j];
            worst = fmax(worst, fabs(w - direct));
        }
    }
    CHECK_MSG(worst < 1e-12, "F(%d,3) matrices are off by %g", m, worst);
}

/* ---------------------------------------------------------------- kernels against the portable ones */

static int cpu_has(const struct convsel_wino_kernels *k)
{
    __builtin_cpu_init();
    if (k == &convsel_wino_avx512)
        return __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("fma");
    if (k == &convsel_wino_avx2)
        return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma");
    return 1;
}

static double max_rel(const float *x, const float *y, size_t n)
{
    return convsel_rel_error(x, y, n);
}

/* Input and output transforms of every tile (borders and partial tiles
 * included) of an odd-sized image with asymmetric padding. The SIMD kernels
 * contract to FMAs and the portable ones do not, hence a tolerance. */
static void test_transforms(const struct convsel_wino_kernels *k, int variant)
{
    const int m = variant ? 4 : 2, a = m + 2, bk = k->block;
    struct convsel_wino_geom geo = {.m = m, .block = bk, .ih = 11, .iw = 9, .oh = 12, .ow = 7, .ph = 2, .pw = 0};
    geo.tiles_h = (geo.oh + m - 1) / m;
    geo.tiles_w = (geo.ow + m - 1) / m;
    geo.cb_in = 2;
    geo.cb_out = 3;
    const int64_t mb = 2, tiles = mb * geo.tiles_h * geo.tiles_w, nxi = a * a;
    const int64_t ldv = geo.cb_in * bk + 8, ldm = geo.cb_out * bk + 8;
    const size_t src_n = (size_t)(mb * geo.cb_in * geo.ih * geo.iw * bk);
    const size_t dst_n = (size_t)(mb * geo.cb_out * geo.oh * geo.ow * bk);
    const size_t v_n = (size_t)(nxi * tiles * ldv), m_n = (size_t)(nxi * tiles * ldm);
    float *src = malloc(src_n * sizeof(float)), *mbuf = malloc(m_n * sizeof(float));
    float *v0 = calloc(v_n, sizeof(float)), *v1 = calloc(v_n, sizeof(float));
    float *d0 = calloc(dst_n, sizeof(float)), *d1 = calloc(dst_n, sizeof(float));
    convsel_fill_random(src, src_n, 7);
    convsel_fill_random(mbuf, m_n, 8);

    /* The tested kernel in two calls (tiles 0..4 and the rest), to exercise
     * the tile offsets; the portable one in one. */
    k->input[variant](&geo, src, 0, geo.cb_in, 0, 5, v1, ldv, tiles * ldv);
    k->input[variant](&geo, src, 0, geo.cb_in, 5, tiles - 5, v1 + 5 * ldv, ldv, tiles * ldv);
    convsel_wino_portable.input[variant](&geo, src, 0, geo.cb_in, 0, tiles, v0, ldv, tiles * ldv);
    CHECK_MSG(max_rel(v1, v0, v_n) < 1e-6, "block %d F(%d,3) input transform differs: %g", bk, m,
              max_rel(v1, v0, v_n));

    k->output[variant](&geo, mbuf, ldm, tiles * ldm, 0, 1, 0, tiles, d1);
    k->output[variant](&geo, mbuf, ldm, tiles * ldm, 1, geo.cb_out, 0, tiles, d1);
    convsel_wino_portable.output[variant](&geo, mbuf, ldm, tiles * ldm, 0, geo.cb_out, 0, tiles, d0);
    CHECK_MSG(max_rel(d1, d0, dst_n) < 1e-6, "block %d F(%d,3) output transform differs: %g", bk, m,
              max_rel(d1, d0, dst_n));

    /* Spot check of the semantics: an input tile straddling the top padding
     * (tile 0: rows -2..a-3) must equal the transform of its zero-padded copy. */
    {
        const double *at, *gm, *bt;
        convsel_wino_matrices(m, &at, &gm, &bt);
        double worst = 0;
        for (int lane = 0; lane < bk; lane += bk - 1) {
            for (int xi = 0; xi < nxi; xi++) {
                const int i = xi / a, j = xi % a;
                double want = 0;
                for (int y = 0; y < a; y++)
                    for (int x = 0; x < a; x++) {
                        const int64_t iy = y - geo.ph, ix = x - geo.pw;
                        const double d = (iy < 0 || iy >= geo.ih || ix < 0 || ix >= geo.iw)
                                             ? 0.0
                                             : src[(iy * geo.iw + ix) * bk + lane];
                        want += bt[i * a + y] * d * bt[j * a + x];
                    }
                worst = fmax(worst, fabs(want - v0[xi * tiles * ldv + lane]));
            }
        }
        CHECK_MSG(worst < 1e-5, "F(%d,3) input transform of a padded tile is off by %g", m, worst);
    }
    free(src);
    free(mbuf);
    free(v0);
    free(v1);
    free(d0);
    free(d1);
}

/* The GEMM kernel against a double product, over row counts around the
 * register block, panel tails and k = 1. */
static void test_gemm(const struct convsel_wino_kernels *kn)
{
    static const int64_t shapes[][3] = {
        {1, 1, 1}, {5, 3, 7}, {12, 16, 32}, {13, 17, 33}, {30, 40, 70}, {25, 64, 96}, {7, 1, 16},
        {13, 150, 40}, {24, 129, 32}, /* k past one accumulation block */
        {11, 70, 12}, {9, 20, 8}, {14, 66, 48}, {3, 5, 24}, /* panels of one vector or less (all, or the last) */
    };
    const int64_t nr = kn->nr;
    for (size_t si = 0; si < sizeof shapes / sizeof shapes[0]; si++) {
        const int64_t rows = shapes[si][0], k = shapes[si][1], n = shapes[si][2];
        const int64_t lda = k + 3, ldc = n + 5, np = (n + nr - 1) / nr;
        float *a = malloc((size_t)(rows * lda) * sizeof(float)), *b = malloc((size_t)(k * n) * sizeof(float));
        float *packed = calloc((size_t)(np * k * nr), sizeof(float));
        float *c = malloc((size_t)(rows * ldc) * sizeof(float));
        convsel_fill_random(a, (size_t)(rows * lda), 11 + si);
        convsel_fill_random(b, (size_t)(k * n), 22 + si);
        for (int64_t i = 0; i < rows * ldc; i++)
            c[i] = 12345.0f; /* must survive past column n */
        for (int64_t kk = 0; kk < k; kk++)
            for (int64_t j = 0; j < n; j++)
                packed[(j / nr) * k * nr + kk * nr + j % nr] = b[kk * n + j];
        kn->gemm(rows, k, n, a, lda, packed, c, ldc);
        double worst = 0;
        int spill = 0;
        for (int64_t i = 0; i < rows; i++) {
            for (int64_t j = 0; j < n; j++) {
                double want = 0;
                for (int64_t kk = 0; kk < k; kk++)
                    want += (double)a[i * lda + kk] * b[kk * n + j];
                worst = fmax(worst, fabs(want - c[i * ldc + j]));
            }
            for (int64_t j = n; j < ldc; j++)
                spill += c[i * ldc + j] != 12345.0f;
        }
        CHECK_MSG(worst < 1e-5 * (double)k, "nr %d gemm %lldx%lldx%lld off by %g", (int)nr, (long long)rows,
                  (long long)k, (long long)n, worst);
        CHECK_MSG(spill == 0, "gemm %lldx%lldx%lld wrote %d values past column n", (long long)rows, (long long)k,
                  (long long)n, spill);
        free(a);
        free(b);
        free(packed);
        free(c);
    }
}

/* ---------------------------------------------------------------- whole convolutions */

static int layout_block(convsel_layout layout)
{
    return layout == CONVSEL_LAYOUT_NCHW16C ? 16 : layout == CONVSEL_LAYOUT_NCHW8C ? 8 : 1;
}

/* nchw → nChw<bk>c with zeros in the padded channels. */
static void to_blocked(const float *x, float *y, int64_t mb, int64_t c, int64_t hw, int bk)
{
    const int64_t cb = (c + bk - 1) / bk;
    for (int64_t n = 0; n < mb; n++)
        for (int64_t ch = 0; ch < cb * bk; ch++)
            for (int64_t i = 0; i < hw; i++)
                y[((n * cb + ch / bk) * hw + i) * bk + ch % bk] = ch < c ? x[(n * c + ch) * hw + i] : 0.0f;
}

/* nChw<bk>c → nchw; returns how many padded-channel values are not zero. */
static int64_t from_blocked(const float *y, float *x, int64_t mb, int64_t c, int64_t hw, int bk)
{
    const int64_t cb = (c + bk - 1) / bk;
    int64_t nonzero = 0;
    for (int64_t n = 0; n < mb; n++)
        for (int64_t ch = 0; ch < cb * bk; ch++)
            for (int64_t i = 0; i < hw; i++) {
                const float val = y[((n * cb + ch / bk) * hw + i) * bk + ch % bk];
                if (ch < c)
                    x[(n * c + ch) * hw + i] = val;
                else
                    nonzero += val != 0.0f;
            }
    return nonzero;
}

static convsel_status run_nchw(size_t prim, const convsel_problem *p, int threads, const float *w, const float *src,
                               float *dst)
{
    convsel_instance *inst = NULL;
    convsel_status st = convsel_instance_create(prim, p, threads, w, &inst);
    if (st != CONVSEL_OK)
        return st;
    const int bi = layout_block(convsel_instance_src_layout(inst)), bo = layout_block(convsel_instance_dst_layout(inst));
    const size_t sn = convsel_layout_elems(convsel_instance_src_layout(inst), p->mb, p->ic, p->ih, p->iw);
    const size_t dn = convsel_layout_elems(convsel_instance_dst_layout(inst), p->mb, p->oc, p->oh, p->ow);
    float *s = convsel_alloc(sn * sizeof(float)), *d = convsel_alloc(dn * sizeof(float));
    if (bi > 1)
        to_blocked(src, s, p->mb, p->ic, p->ih * p->iw, bi);
    else
        memcpy(s, src, sn * sizeof(float));
    /* Garbage in dst: every value, padded channels included, must be written. */
    for (size_t i = 0; i < dn; i++)
        d[i] = NAN;
    st = convsel_instance_run(inst, s, d);
    /* Run twice: the second must not depend on state left by the first. */
    if (st == CONVSEL_OK)
        st = convsel_instance_run(inst, s, d);
    if (bo > 1) {
        int64_t nonzero = from_blocked(d, dst, p->mb, p->oc, p->oh * p->ow, bo);
        CHECK_MSG(nonzero == 0, "%s: %lld padded dst channels are not zero", p->name, (long long)nonzero);
    } else {
        memcpy(dst, d, dn * sizeof(float));
    }
    convsel_free(s);
    convsel_free(d);
    convsel_instance_destroy(inst);
    return st;
}

static void test_problem(const char *desc)
{
    convsel_problem p;
    convsel_status st = convsel_problem_parse(desc, &p);
    CHECK_MSG(st == CONVSEL_OK, "parse %s: %s", desc, convsel_last_error());
    if (st != CONVSEL_OK)
        return;
    size_t ref_i = 0;
    CHECK(convsel_primitive_find("reference", &ref_i) == CONVSEL_OK);
    const size_t sn = convsel_problem_src_elems(&p), wn = convsel_problem_weights_elems(&p),
                 dn = convsel_problem_dst_elems(&p);
    float *src = malloc(sn * sizeof(float)), *w = malloc(wn * sizeof(float));
    float *ref = malloc(dn * sizeof(float)), *y1 = malloc(dn * sizeof(float)), *y2 = malloc(dn * sizeof(float));
    convsel_fill_random(src, sn, 1);
    convsel_fill_random(w, wn, 2);
    CHECK(run_nchw(ref_i, &p, 1, w, src, ref) == CONVSEL_OK);

    static const char *const names[] = {"winograd_2x2_3x3", "winograd_4x4_3x3"};
    for (int v = 0; v < 2; v++) {
        size_t i = 0;
        CHECK(convsel_primitive_find(names[v], &i) == CONVSEL_OK);
        char why[160];
        CHECK_MSG(convsel_primitive_applicable(i, &p, why, sizeof why), "%s on %s: %s", names[v], desc, why);
        st = run_nchw(i, &p, 1, w, src, y1);
        CHECK_MSG(st == CONVSEL_OK, "%s on %s: %s", names[v], desc, convsel_last_error());
        st = run_nchw(i, &p, 2, w, src, y2);
        CHECK_MSG(st == CONVSEL_OK, "%s on %s (2 threads): %s", names[v], desc, convsel_last_error());
        const double err = convsel_rel_error(y1, ref, dn);
        CHECK_MSG(err <= convsel_primitive_expected_error(i), "%s on %s: error %.3g > expected %.3g", names[v], desc,
                  err, convsel_primitive_expected_error(i));
        /* The threads split the same arithmetic, so the own GEMM agrees bit for
         * bit; OpenBLAS (the products below AVX2) may block its sums
         * differently per thread count, so the two runs must agree within the
         * primitive's expected error, as each agrees with the reference. */
        const double diff = convsel_rel_error(y2, y1, dn);
        CHECK_MSG(diff <= convsel_primitive_expected_error(i), "%s on %s: 1 and 2 threads differ by %.3g", names[v], desc, diff);
    }
    free(src);
    free(w);
    free(ref);
    free(y1);
    free(y2);
}

static void test_applicable(void)
{
    static const char *const refused[] = {
        "mb1ic16ih14oc16oh14kh5ph2",       /* 5x5 */
        "mb1ic16ih14oc16oh7kh3sh2ph1",     /* stride 2 */
        "mb1ic16ih14oc16oh12kh3dh1ph1",    /* dilated */
        "mb1ic16ih14iw14oc16oh14ow14kh3kw1ph1pw0", /* 3x1 */
    };
    size_t i = 0;
    CHECK(convsel_primitive_find("winograd_4x4_3x3", &i) == CONVSEL_OK);
    for (size_t k = 0; k < sizeof refused / sizeof refused[0]; k++) {
        convsel_problem p;
        CHECK_MSG(convsel_problem_parse(refused[k], &p) == CONVSEL_OK, "parse %s: %s", refused[k],
                  convsel_last_error());
        char why[160] = "";
        CHECK_MSG(!convsel_primitive_applicable(i, &p, why, sizeof why), "%s accepted", refused[k]);
        CHECK_MSG(why[0] != '\0', "%s refused without a reason", refused[k]);
    }
    CHECK_STR(convsel_primitive_family(i), "winograd");
}

int main(void)
{
    test_matrices(2);
    test_matrices(4);

    const struct convsel_wino_kernels *const simd[] = {&convsel_wino_avx2, &convsel_wino_avx512};
    for (size_t k = 0; k < 2; k++) {
        if (!cpu_has(simd[k]))
            continue;
        test_transforms(simd[k], 0);
        test_transforms(simd[k], 1);
        test_gemm(simd[k]);
    }

    test_applicable();

    static const char *const problems[] = {
        "mb1ic16ih8oc16oh8kh3ph1n\"exact tiles\"",
        "mb1ic3ih7oc5oh7kh3ph1n\"odd sizes, partial tiles\"",
        "mb2ic20ih9iw11oc36oh9ow11kh3ph1n\"batch 2, channels off the blocks\"",
        "mb1ic17ih10oc33oh8kh3ph0n\"no padding\"",
        "mb1ic8ih6oc8oh8kh3ph2n\"padding 2\"",
        "mb1ic8ih9iw7oc12oh8ow6kh3ph1pw1n\"implied far padding 0\"",
        "mb1ic12ih9oc12oh10kh3ph2n\"top 2, bottom 1\"",
        "mb1ic5ih2oc4oh2kh3ph1n\"image smaller than a tile\"",
        "g2mb1ic24ih9oc40oh9kh3ph1n\"groups\"",
        "g3mb2ic9ih7oc6oh7kh3ph1n\"groups of 3 and 2 channels\"",
        "g24mb1ic24ih10oc24oh10kh3ph1n\"depthwise\"",
        "g8mb1ic8ih7oc16oh7kh3ph1n\"depthwise, multiplier 2\"",
        "mb1ic64ih14oc48oh14kh3ph1n\"several column panels\"",
        "mb1ic150ih6oc20oh6kh3ph1n\"channels summed in several blocks\"",
    };
    /* Both schedules on every problem: threads on private chunks, and the
     * team sharing each chunk. */
    for (int sched = 1; sched <= 2; sched++) {
        convsel_wino_tuning.force_schedule = sched;
        for (size_t k = 0; k < sizeof problems / sizeof problems[0]; k++)
            test_problem(problems[k]);
    }

    /* Small budgets: many chunks (uneven ones) and column blocks of U. */
    convsel_wino_tuning.small_chunk_bytes = 64u << 10;
    convsel_wino_tuning.big_chunk_bytes = 64u << 10;
    convsel_wino_tuning.ublock_bytes = 4u << 10;
    for (int sched = 1; sched <= 2; sched++) {
        convsel_wino_tuning.force_schedule = sched;
        convsel_wino_tuning.u_l3_bytes = sched == 1 ? 0 : 12u << 20; /* big-U chunking on private ones */
        test_problem("mb2ic40ih13oc72oh13kh3ph1n\"chunks and column blocks\"");
        test_problem("g2mb1ic34ih11oc70oh11kh3ph1n\"chunks, groups, column blocks\"");
    }
    /* OpenBLAS for the products, as below AVX2. */
    convsel_wino_tuning.force_blas = 1;
    convsel_wino_tuning.force_schedule = 0;
    test_problem("g2mb2ic34ih11oc70oh11kh3ph1n\"OpenBLAS products\"");
    test_problem("mb1ic150ih6oc20oh6kh3ph1n\"OpenBLAS products, several channel blocks\"");
    return CHECK_DONE();
}
