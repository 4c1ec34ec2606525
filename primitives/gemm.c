/*
 * The OpenBLAS family: a convolution as one sgemm per (image, group),
 *   dst[n,g] (oc/g × oh*ow) = W[g] (oc/g × ic/g*kh*kw) × B (ic/g*kh*kw × oh*ow),
 * where the goihw weights already are W[g] row-major, so create() copies them
 * as they are.
 *
 * im2col_gemm builds B by im2col; gemm_1x1 handles 1×1 kernels, where B is the
 * source itself at stride 1 without padding, and a strided gather otherwise.
 *
 * Threads: with at least as many (image, group) pairs as threads, each thread
 * takes whole pairs and calls sgemm single-threaded (OpenBLAS's OpenMP build
 * runs one thread inside an active parallel region), with its own im2col
 * matrix. Otherwise the pairs run in turn, each with a parallel im2col and a
 * threaded sgemm.
 *
 * The matrices (s->workspace below) are the instance's state, not the
 * workspace a network's layers share (struct convsel_impl): their padding
 * positions are zeroed once, at create. Writing them on every run, as a
 * shared workspace requires, made im2col_gemm up to 5-15% slower alone on a
 * noisy machine (bench/results/workspace_alone_session29).
 */
#include <limits.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cblas.h>

#include "internal.h"
#include "primitive.h"

struct gemm_state {
    convsel_problem problem;
    int threads;
    /* 1: B is built in a workspace (im2col or strided gather); 0: B is src. */
    int gather;
    /* 1: threads split the (image, group) pairs; 0: they split each gemm. */
    int per_pair;
    int64_t k, n; /* gemm depth ic/g*kh*kw and width oh*ow */
    float *weights;
    float *workspace; /* workspaces × k × n */
    int workspaces;
};

/* Below this many elements of B a parallel im2col costs more to start than it
 * saves. */
#define GEMM_PARALLEL_IM2COL_MIN (32 * 1024)

static int gemm_check_sizes(const convsel_problem *p, char *why, size_t why_size)
{
    const int64_t k = p->ic / p->g * p->kh * p->kw, n = p->oh * p->ow;
    if (k > INT_MAX || n > INT_MAX || p->oc / p->g > INT_MAX) {
        snprintf(why, why_size, "gemm dimensions exceed BLAS's int (k=%lld, n=%lld)", (long long)k,
                 (long long)n);
        return 0;
    }
    /* One workspace holds k × n floats: kh*kw times the source of one group. */
    const double bytes = (double)k * (double)n * sizeof(float);
    if (bytes > (double)convsel_max_tensor_bytes()) {
        snprintf(why, why_size, "im2col workspace of %.1f GiB exceeds the tensor limit (CONVSEL_MAX_TENSOR_BYTES)",
                 bytes / (1 << 30));
        return 0;
    }
    return 1;
}

static int im2col_gemm_applicable(const convsel_problem *p, char *why, size_t why_size)
{
    return gemm_check_sizes(p, why, why_size);
}

static int gemm_1x1_applicable(const convsel_problem *p, char *why, size_t why_size)
{
    if (p->kh != 1 || p->kw != 1) {
        snprintf(why, why_size, "kernel %lldx%lld is not 1x1", (long long)p->kh, (long long)p->kw);
        return 0;
    }
    return gemm_check_sizes(p, why, why_size);
}

/*
 * Writes rows [r0, r1) of the im2col matrix of one (image, group): row
 * (c, ky, kx) holds, for every output position, the input it multiplies by
 * weight (c, ky, kx). Only the positions inside the input are written: the
 * padding positions are the same for every image and group, so they were
 * zeroed once at create() and stay zero.
 */
static void im2col_rows(const convsel_problem *p, const float *src, float *col, int64_t r0, int64_t r1)
{
    const int64_t ih = p->ih, iw = p->iw, oh = p->oh, ow = p->ow, khw = p->kh * p->kw;
    for (int64_t r = r0; r < r1; r++) {
        const int64_t c = r / khw, ky = r % khw / p->kw, kx = r % p->kw;
        const float *plane = src + c * ih * iw;
        float *row = col + r * oh * ow;
        const int64_t x_off = kx * (p->dw + 1) - p->pw;
        /* The output columns whose input column x_off + ox*sw lies in [0, iw). */
        int64_t ox0 = x_off >= 0 ? 0 : CONVSEL_DIV_UP(-x_off, p->sw);
        int64_t ox1 = x_off >= iw ? 0 : (iw - 1 - x_off) / p->sw + 1;
        ox0 = CONVSEL_MIN(ox0, ow);
        ox1 = CONVSEL_MIN(ox1, ow);
        if (ox1 <= ox0)
            continue;
        for (int64_t oy = 0; oy < oh; oy++) {
            const int64_t iy = oy * p->sh - p->ph + ky * (p->dh + 1);
            if (iy < 0 || iy >= ih)
                continue;
            const float *in = plane + iy * iw + x_off;
            float *out = row + oy * ow;
            if (p->sw == 1) {
                memcpy(out + ox0, in + ox0, (size_t)(ox1 - ox0) * sizeof(float));
            } else {
                for (int64_t ox = ox0; ox < ox1; ox++)
                    out[ox] = in[ox * p->sw];
            }
        }
    }
}

/* dst of (image, group) pair t, with B built in col when gathering. */
static void gemm_pair(const struct gemm_state *s, int64_t t, const float *src, float *dst, float *col,
                      int parallel_im2col)
{
    const convsel_problem *p = &s->problem;
    const int64_t img = t / p->g, grp = t % p->g, icg = p->ic / p->g, ocg = p->oc / p->g;
    const float *src_g = src + (img * p->ic + grp * icg) * p->ih * p->iw;
    const float *b = src_g;
    if (s->gather) {
        if (parallel_im2col) {
            const int64_t rows = s->k;
#pragma omp parallel for num_threads(s->threads) schedule(static)
            for (int64_t r = 0; r < rows; r++)
                im2col_rows(p, src_g, col, r, r + 1);
        } else {
            im2col_rows(p, src_g, col, 0, s->k);
        }
        b = col;
    }
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, (int)ocg, (int)s->n, (int)s->k, 1.0f,
                s->weights + grp * ocg * s->k, (int)s->k, b, (int)s->n, 0.0f,
                dst + (img * p->oc + grp * ocg) * s->n, (int)s->n);
}

static convsel_status gemm_run(const struct convsel_impl *impl, const float *src, float *dst, void *workspace)
{
    (void)workspace;
    const struct gemm_state *s = impl->state;
    const int64_t pairs = s->problem.mb * s->problem.g;
    if (s->per_pair) {
#pragma omp parallel num_threads(s->threads)
        {
            float *col = s->workspace ? s->workspace + (size_t)omp_get_thread_num() * (size_t)(s->k * s->n) : NULL;
#pragma omp for schedule(static)
            for (int64_t t = 0; t < pairs; t++)
                gemm_pair(s, t, src, dst, col, 0);
        }
    } else {
        const int parallel_im2col = s->threads > 1 && s->k * s->n >= GEMM_PARALLEL_IM2COL_MIN;
        for (int64_t t = 0; t < pairs; t++)
            gemm_pair(s, t, src, dst, s->workspace, parallel_im2col);
    }
    return CONVSEL_OK;
}

static void gemm_destroy(struct convsel_impl *impl)
{
    struct gemm_state *s = impl->state;
    if (!s)
        return;
    convsel_free(s->weights);
    convsel_free(s->workspace);
    free(s);
    impl->state = NULL;
}

static convsel_status gemm_create(const char *name, int gather, const convsel_problem *p, int threads,
                                  const float *weights, struct convsel_impl *impl)
{
    struct gemm_state *s = calloc(1, sizeof *s);
    if (!s)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "%s: out of memory", name);
    impl->state = s;
    s->problem = *p;
    s->threads = threads;
    s->gather = gather;
    s->k = p->ic / p->g * p->kh * p->kw;
    s->n = p->oh * p->ow;

    const size_t wn = convsel_problem_weights_elems(p);
    s->weights = convsel_alloc(wn * sizeof(float));
    if (!s->weights) {
        gemm_destroy(impl);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "%s: out of memory for weights", name);
    }
    memcpy(s->weights, weights, wn * sizeof(float));
    impl->weights_bytes = wn * sizeof(float);

    const size_t ws_elems = (size_t)s->k * (size_t)s->n;
    s->per_pair = threads > 1 && p->mb * p->g >= threads;
    /* Per-thread workspaces only while they stay within the tensor limit;
     * beyond it the pairs run in turn through one workspace. */
    if (gather && s->per_pair && (double)threads * (double)ws_elems * sizeof(float) > (double)convsel_max_tensor_bytes())
        s->per_pair = 0;
    s->workspaces = gather ? (s->per_pair ? threads : 1) : 0;
    if (s->workspaces) {
        const size_t bytes = (size_t)s->workspaces * ws_elems * sizeof(float);
        s->workspace = convsel_alloc(bytes);
        if (!s->workspace) {
            gemm_destroy(impl);
            return convsel_error(CONVSEL_OUT_OF_MEMORY, "%s: out of memory for a %zu-byte workspace", name, bytes);
        }
        memset(s->workspace, 0, bytes);
    }
    impl->workspace_bytes = 0;
    impl->src_layout = CONVSEL_LAYOUT_NCHW;
    impl->dst_layout = CONVSEL_LAYOUT_NCHW;
    return CONVSEL_OK;
}

static convsel_status im2col_gemm_create(const convsel_problem *p, int threads, const float *weights,
                                         struct convsel_impl *impl)
{
    return gemm_create("im2col_gemm", 1, p, threads, weights, impl);
}

static convsel_status gemm_1x1_create(const convsel_problem *p, int threads, const float *weights,
                                      struct convsel_impl *impl)
{
    /* A 1×1 kernel at stride 1 without padding reads every input position
     * once, in order: the source is already B. (ph = 0 at stride 1 forces
     * oh = ih, so there is no bottom padding either.) */
    const int gather = !(p->sh == 1 && p->sw == 1 && p->ph == 0 && p->pw == 0 && p->oh == p->ih && p->ow == p->iw);
    return gemm_create("gemm_1x1", gather, p, threads, weights, impl);
}

static convsel_status gemm_query_layouts(const convsel_problem *problem, int threads, convsel_layout *src,
                                         convsel_layout *dst)
{
    (void)problem;
    (void)threads;
    *src = *dst = CONVSEL_LAYOUT_NCHW;
    return CONVSEL_OK;
}

const struct convsel_primitive convsel_im2col_gemm = {
    .name = "im2col_gemm",
    .family = "gemm",
    .blas_below = CONVSEL_ISA_COUNT,
    .layouts = "nchw",
    .expected_error = 1e-6,
    .is_reference = 0,
    .applicable = im2col_gemm_applicable,
    .create = im2col_gemm_create,
    .query_layouts = gemm_query_layouts,
    .run = gemm_run,
    .destroy = gemm_destroy,
};

const struct convsel_primitive convsel_gemm_1x1 = {
    .name = "gemm_1x1",
    .family = "gemm",
    .blas_below = CONVSEL_ISA_COUNT,
    .layouts = "nchw",
    .expected_error = 1e-6,
    .is_reference = 0,
    .applicable = gemm_1x1_applicable,
    .create = gemm_1x1_create,
    .query_layouts = gemm_query_layouts,
    .run = gemm_run,
    .destroy = gemm_destroy,
};
