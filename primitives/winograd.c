/*
 * Winograd convolution, F(2×2,3×3) and F(4×4,3×3), for 3×3 stride-1 layers.
 *
 * The weights are transformed once at create time (U = G g G^T, in double)
 * and packed the way the GEMM reads them. A run walks the tiles in chunks
 * (tiles numbered over all images); for each chunk:
 *   1. the input transform of the chunk's tiles into V,
 *   2. one GEMM M[xi] = V[xi] × U[xi] per transform element xi and group,
 *   3. the output transform of M into dst.
 * Usually each thread takes whole chunks; see the plan below for when and
 * why the team shares them instead.
 *
 * Kernels: AVX-512 (nChw16c) and AVX2 (nChw8c) with their own GEMM, chosen by
 * the ISA in force at create time; below AVX2, portable transforms (nChw8c)
 * with OpenBLAS for the products. On this machine (Zen 4, 1 thread) the own
 * AVX-512 GEMM made winograd_4x4_3x3 1.5x (ic=oc=256, 56x56) and 1.36x
 * (ic=oc=512, 28x28) faster than OpenBLAS sgemm on the same V and U (equal
 * at 64 channels): no packing per call, and a run walks U once per chunk.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>
#include <omp.h>

#include "internal.h"
#include "primitive.h"
#include "winograd.h"

/* ---------------------------------------------------------------- portable kernels */

#define WINO_VEC float
#define WINO_VLANES 1
#define WINO_LOAD(p) (*(p))
#define WINO_STORE(p, x) (*(p) = (x))
#define WINO_SET1(f) (f)
#define WINO_ZERO() 0.0f
#define WINO_ADD(a, b) ((a) + (b))
#define WINO_SUB(a, b) ((a) - (b))
#define WINO_MUL(a, b) ((a) * (b))
#define WINO_FMADD(a, b, c) ((a) * (b) + (c))
#define WINO_FNMADD(a, b, c) ((c) - (a) * (b))
#define WINO_NAME(x) portable_##x

#include "winograd_simd.h"

const struct convsel_wino_kernels convsel_wino_portable = {
    .block = 8,
    .nr = 0,
    .mr = 8,
    .input = {portable_input_f23, portable_input_f43},
    .output = {portable_output_f23, portable_output_f43},
    .gemm = NULL,
};

/* ---------------------------------------------------------------- matrices */

static const double f23_at[2 * 4] = {
    1, 1, 1, 0,
    0, 1, -1, -1,
};
static const double f23_g[4 * 3] = {
    1, 0, 0,
    0.5, 0.5, 0.5,
    0.5, -0.5, 0.5,
    0, 0, 1,
};
static const double f23_bt[4 * 4] = {
    1, 0, -1, 0,
    0, 1, 1, 0,
    0, -1, 1, 0,
    0, 1, 0, -1,
};

/* Points 0, 1, -1, 2, -1/2, ∞: row j of G is [1, p, p²] / prod_{l != j} (p_j - p_l). */
static const double f43_at[4 * 6] = {
    1, 1, 1, 1, 1, 0,
    0, 1, -1, 2, -0.5, 0,
    0, 1, 1, 4, 0.25, 0,
    0, 1, -1, 8, -0.125, 1,
};
static const double f43_g[6 * 3] = {
    1, 0, 0,
    -1.0 / 3, -1.0 / 3, -1.0 / 3,
    1.0 / 3, -1.0 / 3, 1.0 / 3,
    1.0 / 15, 2.0 / 15, 4.0 / 15,
    -16.0 / 15, 8.0 / 15, -4.0 / 15,
    0, 0, 1,
};
static const double f43_bt[6 * 6] = {
    1, 1.5, -2, -1.5, 1, 0,
    0, -1, -2.5, -0.5, 1, 0,
    0, 1, 0.5, -2.5, 1, 0,
    0, -0.5, -1, 0.5, 1, 0,
    0, 2, -1, -2, 1, 0,
    0, 1, 1.5, -2, -1.5, 1,
};

void convsel_wino_matrices(int m, const double **at, const double **g, const double **bt)
{
    *at = m == 2 ? f23_at : f43_at;
    *g = m == 2 ? f23_g : f43_g;
    *bt = m == 2 ? f23_bt : f43_bt;
}

/* ---------------------------------------------------------------- plan */

/*
 * Chunks, by where U lives:
 * - U fits in L3 (u_l3_bytes, a share of the 32 MiB here): each thread takes
 *   its own small chunks, sized so that the chunk's V and M stay in L2
 *   (small_chunk_bytes; 1 MiB per core here) while U streams from L3.
 *   Measured at 1 thread (thread CPU time, interleaved), ic=oc=256 56x56:
 *   8% faster than 6 MiB chunks.
 * - U larger (ic=oc=512: 37.7 MiB for F(4,3)): big chunks (big_chunk_bytes,
 *   V and M in L3), so that U, streamed from memory, serves many rows per
 *   pass: 9% faster than small chunks on ic=oc=512 28x28.
 * Each thread works on its own chunks, without barriers, unless the tiles
 * are too few to give every thread 2 register blocks of rows (7x7 and 14x14
 * layers): then the team shares each chunk, split over tiles for the
 * transforms and over xi for the products, so that U is read once per chunk
 * rather than once per thread. Until session 28 that was only where U is big:
 * U "fitting in L3" holds when a layer is timed alone, but in a network the
 * other layers' weights evict it between runs, and two threads each
 * streaming all of U from memory ran ResNet-50's res4 3x3 layers at
 * 1.36-1.47x their time alone (F(4,3), 9.4 MiB of U;
 * bench/results/winograd_res4_plans_session28); shared, the model's 2-thread
 * plans ran 5.5-10.6% faster end to end on five of six networks, VGG-16 1.5%
 * slower (bench/results/winograd_shared_session28.md),
 * and alone the layer is no slower (0.21 and 0.18 against 0.21 and 0.20 ms
 * warm, 0.37 against 0.42 with a 64 MiB flush, two passes;
 * bench/results/winograd_schedule_alone_session28.txt). The shared schedule needs 3 barriers
 * per chunk, which cost dearly when other processes compete for the cores:
 * on the Cascade Lake under load, 2-thread runs took 2x longer shared than
 * private.
 * ublock_bytes: the column block of U[xi] one GEMM call sweeps stays in L2
 * while every row block of V passes.
 */
struct convsel_wino_tuning convsel_wino_tuning = {
    .small_chunk_bytes = 768u << 10,
    .big_chunk_bytes = 6u << 20,
    .u_l3_bytes = 12u << 20,
    .ublock_bytes = 512u << 10,
    .force_blas = 0,
    .force_schedule = 0,
};

struct winograd_state {
    convsel_problem problem;
    struct convsel_wino_geom geom;
    const struct convsel_wino_kernels *kernels;
    int variant; /* 0: F(2,3), 1: F(4,3) */
    int threads;
    int nxi; /* (m + 2)² transform elements */
    int64_t groups, icg, ocg;
    int depthwise;             /* icg == ocg == 1: the products are elementwise */
    convsel_wino_gemm_fn gemm; /* NULL: OpenBLAS */
    int64_t nr;                /* panel width of u: kernels' nr, ocg for OpenBLAS, 1 for depthwise */
    int64_t u_stride;          /* floats per (xi, group) block of u */
    int64_t npanels, nblocks;  /* panels of u per (xi, group), split in nblocks column blocks */
    int shared;                /* 1: the team shares each chunk; 0: one chunk per thread */
    int64_t tiles, nchunks;    /* chunk c: tiles [c * tiles / nchunks, (c + 1) * tiles / nchunks) */
    int64_t ldv, ldm, xs_v, xs_m;
    size_t v_per_thread, m_per_thread; /* floats; 0 when shared */
    /* The workspace holds every copy of V, then (at m_offset floats, a
     * multiple of 16) every copy of M: copies × nxi × xs_m floats. */
    size_t m_offset, m_copies;
    /* 1: the products write M's lanes past oc themselves (as zeros, from
     * u's zero columns), so a run need not zero them first. */
    int m_pad_written;
    float *u;
};

/* Row strides that are multiples of 1 KiB put every row of a register block
 * in the same few L1 sets; 64 extra bytes spread them. */
static int64_t padded_stride(int64_t floats)
{
    return floats % 256 == 0 ? floats + 16 : floats;
}

static const struct convsel_wino_kernels *kernels_for_isa(convsel_isa isa)
{
    if (isa >= CONVSEL_ISA_AVX512)
        return &convsel_wino_avx512;
    if (isa >= CONVSEL_ISA_AVX2)
        return &convsel_wino_avx2;
    return &convsel_wino_portable;
}

static int winograd_applicable(const convsel_problem *p, char *why, size_t why_size)
{
    const char *reason = NULL;
    if (p->kh != 3 || p->kw != 3)
        reason = "Winograd F(m,3) needs a 3x3 kernel";
    else if (p->sh != 1 || p->sw != 1)
        reason = "Winograd needs stride 1";
    else if (p->dh != 0 || p->dw != 0)
        reason = "Winograd needs an undilated kernel";
    else if (p->ph < 0 || p->pw < 0 || convsel_problem_pad_bottom(p) < 0 || convsel_problem_pad_right(p) < 0)
        reason = "negative padding";
    if (reason) {
        if (why && why_size)
            snprintf(why, why_size, "%s", reason);
        return 0;
    }
    return 1;
}

/* U[xi] of one (group, oc, ic): G w G^T in double, written where the GEMM
 * reads it. */
static void transform_weights(struct winograd_state *s, const float *weights)
{
    const double *at, *gm, *bt;
    const int e = s->geom.m, a = e + 2;
    convsel_wino_matrices(e, &at, &gm, &bt);
    (void)at;
    (void)bt;
    for (int64_t g = 0; g < s->groups; g++) {
        for (int64_t o = 0; o < s->ocg; o++) {
            for (int64_t i = 0; i < s->icg; i++) {
                const float *w = weights + ((g * s->ocg + o) * s->icg + i) * 9;
                double t[6][3], u[6][6];
                for (int r = 0; r < a; r++)
                    for (int c = 0; c < 3; c++)
                        t[r][c] = gm[r * 3] * w[c] + gm[r * 3 + 1] * w[3 + c] + gm[r * 3 + 2] * w[6 + c];
                for (int r = 0; r < a; r++)
                    for (int c = 0; c < a; c++)
                        u[r][c] = t[r][0] * gm[c * 3] + t[r][1] * gm[c * 3 + 1] + t[r][2] * gm[c * 3 + 2];
                const int64_t at_col = (o / s->nr) * s->icg * s->nr + i * s->nr + o % s->nr;
                for (int xi = 0; xi < s->nxi; xi++)
                    s->u[(xi * s->groups + g) * s->u_stride + at_col] = (float)u[xi / a][xi % a];
            }
        }
    }
}

static void winograd_destroy(struct convsel_impl *impl)
{
    struct winograd_state *s = impl->state;
    if (!s)
        return;
    convsel_free(s->u);
    free(s);
    impl->state = NULL;
}

/* Picks the schedule and the chunks: whole register blocks of rows where
 * the budget allows, then spread evenly (196 tiles in 12s: 17 chunks of 11
 * or 12, not 16 of 12 and one of 4). */
static void plan_chunks(struct winograd_state *s, size_t u_bytes)
{
    const struct convsel_wino_tuning *t = &convsel_wino_tuning;
    const int64_t per_tile = (int64_t)s->nxi * (s->ldv + s->ldm) * (int64_t)sizeof(float);
    const int64_t mr = s->kernels->mr, per_thread = CONVSEL_DIV_UP(s->tiles, s->threads);
    const int big = u_bytes > t->u_l3_bytes;
    if (t->force_schedule)
        s->shared = t->force_schedule == 2;
    else
        s->shared = s->threads > 1 && per_thread < 2 * mr;
    int64_t chunk;
    if (big || s->shared)
        chunk = CONVSEL_MAX((int64_t)t->big_chunk_bytes / per_tile, mr);
    else
        chunk = CONVSEL_MAX((int64_t)t->small_chunk_bytes / per_tile / mr * mr, mr);
    if (!s->shared)
        chunk = CONVSEL_MIN(chunk, per_thread); /* every thread gets a chunk */
    chunk = CONVSEL_MAX(CONVSEL_MIN(chunk, s->tiles), 1);
    s->nchunks = CONVSEL_DIV_UP(s->tiles, chunk);
    chunk = CONVSEL_DIV_UP(s->tiles, s->nchunks);
    s->xs_v = chunk * s->ldv;
    s->xs_m = chunk * s->ldm;
}

static convsel_status winograd_create_variant(int variant, const convsel_problem *p, int threads,
                                              const float *weights, struct convsel_impl *impl)
{
    struct winograd_state *s = calloc(1, sizeof *s);
    if (!s)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "winograd: out of memory");
    impl->state = s;
    s->problem = *p;
    s->variant = variant;
    s->threads = threads;
    s->kernels = kernels_for_isa(convsel_get_isa());

    const int e = variant ? 4 : 2, a = e + 2, bk = s->kernels->block;
    struct convsel_wino_geom *geo = &s->geom;
    geo->m = e;
    geo->block = bk;
    geo->ih = p->ih;
    geo->iw = p->iw;
    geo->oh = p->oh;
    geo->ow = p->ow;
    geo->ph = p->ph;
    geo->pw = p->pw;
    geo->tiles_h = CONVSEL_DIV_UP(p->oh, e);
    geo->tiles_w = CONVSEL_DIV_UP(p->ow, e);
    geo->cb_in = CONVSEL_DIV_UP(p->ic, bk);
    geo->cb_out = CONVSEL_DIV_UP(p->oc, bk);

    s->nxi = a * a;
    s->groups = p->g;
    s->icg = p->ic / p->g;
    s->ocg = p->oc / p->g;
    s->depthwise = s->icg == 1 && s->ocg == 1;
    s->gemm = convsel_wino_tuning.force_blas ? NULL : s->kernels->gemm;
    if (s->depthwise)
        s->nr = 1;
    else if (s->gemm)
        s->nr = s->kernels->nr;
    else
        s->nr = s->ocg;
    s->npanels = CONVSEL_DIV_UP(s->ocg, s->nr);
    s->m_pad_written = s->gemm && !s->depthwise && s->groups == 1 && s->nr % bk == 0;
    s->u_stride = s->npanels * s->icg * s->nr;
    s->nblocks = 1;
    if (s->gemm && !s->depthwise) {
        const int64_t panel_bytes = s->icg * s->nr * (int64_t)sizeof(float);
        s->nblocks = CONVSEL_DIV_UP(s->npanels * panel_bytes, (int64_t)convsel_wino_tuning.ublock_bytes);
        s->nblocks = CONVSEL_MAX(CONVSEL_MIN(s->nblocks, s->npanels), 1);
    }

    s->ldv = padded_stride(geo->cb_in * bk);
    s->ldm = padded_stride(geo->cb_out * bk);
    s->tiles = p->mb * geo->tiles_h * geo->tiles_w;
    const size_t u_floats = (size_t)s->nxi * (size_t)s->groups * (size_t)s->u_stride;
    plan_chunks(s, u_floats * sizeof(float));
    const size_t copies = s->shared ? 1 : (size_t)threads;
    s->v_per_thread = s->shared ? 0 : (size_t)s->nxi * (size_t)s->xs_v;
    s->m_per_thread = s->shared ? 0 : (size_t)s->nxi * (size_t)s->xs_m;
    const size_t v_floats = copies * (size_t)s->nxi * (size_t)s->xs_v;
    const size_t m_floats = copies * (size_t)s->nxi * (size_t)s->xs_m;
    s->m_offset = (v_floats + 15) / 16 * 16;
    s->m_copies = copies;
    s->u = convsel_alloc(u_floats * sizeof(float));
    impl->weights_bytes = u_floats * sizeof(float);
    if (!s->u) {
        winograd_destroy(impl);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "winograd: out of memory for %zu MiB of weights",
                             u_floats * sizeof(float) >> 20);
    }
    /* Zero padding in u (past ocg in the last panel) keeps the products of
     * whole panels exact. */
    memset(s->u, 0, u_floats * sizeof(float));
    transform_weights(s, weights);

    impl->src_layout = bk == 16 ? CONVSEL_LAYOUT_NCHW16C : CONVSEL_LAYOUT_NCHW8C;
    impl->dst_layout = impl->src_layout;
    impl->workspace_bytes = (s->m_offset + m_floats) * sizeof(float);
    return CONVSEL_OK;
}

static convsel_status winograd_create_f23(const convsel_problem *p, int threads, const float *weights,
                                          struct convsel_impl *impl)
{
    return winograd_create_variant(0, p, threads, weights, impl);
}

static convsel_status winograd_create_f43(const convsel_problem *p, int threads, const float *weights,
                                          struct convsel_impl *impl)
{
    return winograd_create_variant(1, p, threads, weights, impl);
}

/* ---------------------------------------------------------------- run */

/* Channel blocks per transform work item in a shared chunk: tiles × block
 * groups give the team enough items even when a chunk has only a few tiles. */
#define WINO_CB_GRAIN 8

#define WINO_BLAS_KC 64

/* m[xi] = v[xi] × U[xi] for one group and one column block of U. */
static void products(const struct winograd_state *s, const float *v, float *m, int64_t xi, int64_t g, int64_t b,
                     int64_t rows)
{
    /* Panels split as evenly as they go, so the threads' shares match. */
    const int64_t p0 = b * s->npanels / s->nblocks, p1 = (b + 1) * s->npanels / s->nblocks;
    const int64_t last = s->m_pad_written ? s->geom.cb_out * s->geom.block : s->ocg;
    const int64_t col0 = p0 * s->nr, ncols = CONVSEL_MIN(p1 * s->nr, last) - col0;
    if (ncols <= 0)
        return;
    const float *u = s->u + (xi * s->groups + g) * s->u_stride + col0 * s->icg;
    v += xi * s->xs_v + g * s->icg;
    m += xi * s->xs_m + g * s->ocg + col0;
    if (s->gemm) {
        s->gemm(rows, s->icg, ncols, v, s->ldv, u, m, s->ldm);
        return;
    }
    /* OpenBLAS sums k in one chain; calls over blocks of WINO_BLAS_KC
     * channels round like the own kernels (see WINO_KC in winograd_simd.h),
     * so expected_error holds on every ISA path. */
    for (int64_t k0 = 0; k0 < s->icg; k0 += WINO_BLAS_KC) {
        const int64_t kc = CONVSEL_MIN(WINO_BLAS_KC, s->icg - k0);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)rows, (int)ncols, (int)kc, 1.0f, v + k0,
                    (int)s->ldv, u + k0 * s->ocg, (int)s->ocg, k0 ? 1.0f : 0.0f, m, (int)s->ldm);
    }
}

/* Depthwise: a GEMM per channel would be 1 × 1, so multiply lanes instead. */
static void products_depthwise(const struct winograd_state *s, const float *v, float *m, int64_t xi, int64_t rows)
{
    const float *u = s->u + xi * s->groups;
    v += xi * s->xs_v;
    m += xi * s->xs_m;
    for (int64_t r = 0; r < rows; r++)
        for (int64_t c = 0; c < s->groups; c++)
            m[r * s->ldm + c] = v[r * s->ldv + c] * u[c];
}

/* GEMM work items of a chunk: (xi, group, column block), or xi alone when
 * depthwise. */
static int64_t product_items(const struct winograd_state *s)
{
    return s->depthwise ? s->nxi : s->nxi * s->groups * s->nblocks;
}

static void product_item(const struct winograd_state *s, const float *v, float *m, int64_t item, int64_t rows)
{
    if (s->depthwise)
        products_depthwise(s, v, m, item, rows);
    else
        products(s, v, m, item / (s->groups * s->nblocks), (item / s->nblocks) % s->groups, item % s->nblocks,
                 rows);
}

/* The output transform turns M's lanes past oc into dst's padded channels,
 * which must be zeros, and the workspace comes with whatever another layer
 * left there. With one group and the own GEMM the products write those lanes
 * (u's columns past ocg are zeros, and a panel, a multiple of the block,
 * covers them); otherwise they are zeroed at the start of every run. */
static void zero_m_padding(const struct winograd_state *s, float *m)
{
    const int64_t oc = s->problem.oc, lanes = s->geom.cb_out * s->geom.block;
    if (oc == lanes || s->m_pad_written)
        return;
    const int64_t rows = s->xs_m / s->ldm;
    for (size_t c = 0; c < s->m_copies; c++)
        for (int64_t xi = 0; xi < s->nxi; xi++)
            for (int64_t r = 0; r < rows; r++)
                memset(m + c * s->m_per_thread + xi * s->xs_m + r * s->ldm + oc, 0,
                       (size_t)(lanes - oc) * sizeof(float));
}

static void run_private(const struct winograd_state *s, const float *src, float *dst, float *vs, float *ms)
{
    const struct convsel_wino_geom *geo = &s->geom;
    const convsel_wino_input_fn input = s->kernels->input[s->variant];
    const convsel_wino_output_fn output = s->kernels->output[s->variant];
    const int64_t items = product_items(s);
#pragma omp parallel num_threads(s->threads)
    {
        float *v = vs + (size_t)omp_get_thread_num() * s->v_per_thread;
        float *m = ms + (size_t)omp_get_thread_num() * s->m_per_thread;
        /* Dynamic: on a shared machine one thread may be slowed for a while. */
#pragma omp for schedule(dynamic, 1)
        for (int64_t c = 0; c < s->nchunks; c++) {
            const int64_t t0 = c * s->tiles / s->nchunks, count = (c + 1) * s->tiles / s->nchunks - t0;
            input(geo, src, 0, geo->cb_in, t0, count, v, s->ldv, s->xs_v);
            for (int64_t item = 0; item < items; item++)
                product_item(s, v, m, item, count);
            output(geo, m, s->ldm, s->xs_m, 0, geo->cb_out, t0, count, dst);
        }
    }
}

static void run_shared(const struct winograd_state *s, const float *src, float *dst, float *v, float *m)
{
    const struct convsel_wino_geom *geo = &s->geom;
    const convsel_wino_input_fn input = s->kernels->input[s->variant];
    const convsel_wino_output_fn output = s->kernels->output[s->variant];
    const int64_t cbg_in = CONVSEL_DIV_UP(geo->cb_in, WINO_CB_GRAIN);
    const int64_t cbg_out = CONVSEL_DIV_UP(geo->cb_out, WINO_CB_GRAIN);
    const int64_t items = product_items(s);
#pragma omp parallel num_threads(s->threads)
    for (int64_t c = 0; c < s->nchunks; c++) {
        const int64_t t0 = c * s->tiles / s->nchunks, count = (c + 1) * s->tiles / s->nchunks - t0;

#pragma omp for schedule(static)
        for (int64_t item = 0; item < count * cbg_in; item++) {
            const int64_t r = item / cbg_in, cb0 = (item % cbg_in) * WINO_CB_GRAIN;
            input(geo, src, cb0, CONVSEL_MIN(cb0 + WINO_CB_GRAIN, geo->cb_in), t0 + r, 1, v + r * s->ldv, s->ldv,
                  s->xs_v);
        }

#pragma omp for schedule(static)
        for (int64_t item = 0; item < items; item++)
            product_item(s, v, m, item, count);

#pragma omp for schedule(static)
        for (int64_t item = 0; item < count * cbg_out; item++) {
            const int64_t r = item / cbg_out, cb0 = (item % cbg_out) * WINO_CB_GRAIN;
            output(geo, m + r * s->ldm, s->ldm, s->xs_m, cb0, CONVSEL_MIN(cb0 + WINO_CB_GRAIN, geo->cb_out),
                   t0 + r, 1, dst);
        }
    }
}

/* The chunk buffers V and M live in the workspace. */
static convsel_status winograd_run(const struct convsel_impl *impl, const float *src, float *dst, void *workspace)
{
    const struct winograd_state *s = impl->state;
    float *v = workspace, *m = v + s->m_offset;
    zero_m_padding(s, m);
    if (s->shared)
        run_shared(s, src, dst, v, m);
    else
        run_private(s, src, dst, v, m);
    return CONVSEL_OK;
}

/* ---------------------------------------------------------------- primitives */

/* The layout follows the kernels the ISA in force selects, as in create. */
static convsel_status winograd_query_layouts(const convsel_problem *problem, int threads, convsel_layout *src,
                                             convsel_layout *dst)
{
    (void)problem;
    (void)threads;
    *src = *dst = kernels_for_isa(convsel_get_isa())->block == 16 ? CONVSEL_LAYOUT_NCHW16C : CONVSEL_LAYOUT_NCHW8C;
    return CONVSEL_OK;
}

const struct convsel_primitive convsel_winograd_2x2_3x3 = {
    .name = "winograd_2x2_3x3",
    .family = "winograd",
    .blas_below = CONVSEL_ISA_AVX2,
    .layouts = "nChw16c (avx512), nChw8c",
    /* Worst measured on ResNet-50's and VGG-19's 3x3 layers, every ISA
     * path: 3.96e-7 (bench/results/winograd_error.md). */
    .expected_error = 5e-7,
    .is_reference = 0,
    .applicable = winograd_applicable,
    .create = winograd_create_f23,
    .query_layouts = winograd_query_layouts,
    .run = winograd_run,
    .destroy = winograd_destroy,
};

const struct convsel_primitive convsel_winograd_4x4_3x3 = {
    .name = "winograd_4x4_3x3",
    .family = "winograd",
    .blas_below = CONVSEL_ISA_AVX2,
    .layouts = "nChw16c (avx512), nChw8c",
    /* Worst measured: 2.93e-6 (bench/results/winograd_error.md); oneDNN's
     * F(4,3) showed 3.45e-6 on the same layers. */
    .expected_error = 4e-6,
    .is_reference = 0,
    .applicable = winograd_applicable,
    .create = winograd_create_f43,
    .query_layouts = winograd_query_layouts,
    .run = winograd_run,
    .destroy = winograd_destroy,
};
