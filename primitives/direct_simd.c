/*
 * direct_simd: convsel's own vectorised direct convolution on channel-blocked
 * activations (nChw16c under AVX-512, nChw8c under AVX2 and the portable
 * path). create() picks the instruction set from convsel_get_isa(), the mode
 * (whole-block tiles, lane-per-channel grouped/depthwise, or scalar general),
 * the tile shape, and reorders the weights into the layout the kernels read.
 */
#include <stdlib.h>

#include "direct_simd.h"
#include "internal.h"
#include "primitive.h"

/* Weights one pass over input channels may touch per oc-block group: they are
 * re-read for every tile of a row, so they should stay in L2 (1 MiB per core on
 * the machines measured; half of it is left to the input rows and output). */
#define DS_PASS_WEIGHT_BYTES (256 * 1024)

/* Output columns per work item of a flattened 1×1 layer: a multiple of every
 * tile width of the widest tiles, and short enough to give each thread many. */
#define DS_FLAT_SEGMENT 48

/* Largest weights of one group for which work items loop over oc-block groups
 * innermost (struct ds_plan.q_inner): beyond it they would not stay in L3. */
#define DS_Q_INNER_WEIGHT_BYTES (16 * 1024 * 1024)

struct ds_state {
    struct ds_plan plan;
    const struct ds_isa *isa;
};

static const struct ds_isa *ds_isa_for(convsel_isa isa)
{
    switch (isa) {
    case CONVSEL_ISA_AVX512: return &convsel_direct_simd_avx512;
    case CONVSEL_ISA_AVX2: return &convsel_direct_simd_avx2;
    default: return &convsel_direct_simd_portable;
    }
}

/* Estimated cycles of one input-channel step of the tiles that cover a row of
 * `cols` columns with nq oc-block groups: a tile of c blocks × w columns
 * issues c·w FMAs, c weight-vector loads that stream from L2 (about 4 cycles
 * per 64 bytes, fitted on 7-wide layers) and w broadcasts (one load each).
 * Narrow rows favour tiles that hold the whole row: 7 columns in one 3×7 tile
 * beat 4×4 + 4×3 by 13% under AVX-512; a tile of one block is broadcast-bound
 * (AVX2 ran 3.3× slower with 1×7 tiles than with 2×(4, 3)). */
static double ds_row_cost(const struct ds_isa *isa, int64_t nb, int64_t nq, int64_t cols)
{
    double cost = 0.0;
    for (int64_t q = 0; q < nq; q++) {
        int64_t first, c;
        ds_group(nb, nq, q, &first, &c);
        const int64_t wmax = isa->owb_max[c];
        for (int64_t x = 0, w; x < cols; x += w) {
            const int64_t tiles = CONVSEL_DIV_UP(cols - x, wmax);
            w = CONVSEL_DIV_UP(cols - x, tiles);
            cost += CONVSEL_MAX((double)(c * w), 4.0 * (double)isa->block / 16.0 * (double)c + (double)w);
        }
    }
    return cost;
}

/* The number of oc-block groups with the least estimated cost, among the
 * fewest groups of at most c blocks for each c the kernels have; ties go to
 * fewer, larger groups, which re-read the input fewer times. */
static int64_t ds_choose_groups(const struct ds_isa *isa, int64_t nb, int64_t cols)
{
    int64_t best = nb;
    double best_cost = ds_row_cost(isa, nb, nb, cols);
    for (int64_t c = 2; c <= CONVSEL_MIN(nb, isa->ocb_max); c++) {
        const int64_t nq = CONVSEL_DIV_UP(nb, c);
        const double cost = ds_row_cost(isa, nb, nq, cols);
        if (cost <= best_cost) {
            best = nq;
            best_cost = cost;
        }
    }
    return best;
}

static int64_t ds_group_weight_bytes(const struct ds_plan *p, int64_t khw)
{
    return p->nb_oc_g * p->block * p->nb_ic_g * p->block * khw * (int64_t)sizeof(float);
}

static int direct_simd_applicable(const convsel_problem *problem, char *why, size_t why_size)
{
    (void)problem;
    (void)why;
    (void)why_size;
    return 1;
}

static void ds_reorder_main(const struct ds_plan *p, const float *w, float *out)
{
    const int64_t B = p->block, khw = p->kh * p->kw;
    const int64_t wei_group = p->nb_oc_g * B * p->nb_ic_g * B * khw;
    for (int64_t gi = 0; gi < p->g; gi++) {
        for (int64_t q = 0; q < p->nq; q++) {
            int64_t first, ocb;
            ds_group(p->nb_oc_g, p->nq, q, &first, &ocb);
            float *wq = out + gi * wei_group + first * B * p->nb_ic_g * B * khw;
            for (int64_t ib = 0; ib < p->nb_ic_g; ib++)
                for (int64_t k = 0; k < khw; k++)
                    for (int64_t i = 0; i < B; i++)
                        for (int64_t o = 0; o < ocb; o++)
                            for (int64_t lane = 0; lane < B; lane++) {
                                const int64_t oc = (first + o) * B + lane, ic = ib * B + i;
                                float v = 0.0f;
                                if (oc < p->ocg && ic < p->icg)
                                    v = w[((gi * p->ocg + oc) * p->icg + ic) * khw + k];
                                wq[(((ib * khw + k) * B + i) * ocb + o) * B + lane] = v;
                            }
        }
    }
}

static void ds_reorder_grouped(const struct ds_plan *p, const float *w, float *out)
{
    const int64_t B = p->block, khw = p->kh * p->kw, c = p->sgc;
    for (int64_t cb = 0; cb < p->nb_oc; cb++)
        for (int64_t k = 0; k < khw; k++)
            for (int64_t ci = 0; ci < c; ci++)
                for (int64_t lane = 0; lane < B; lane++) {
                    const int64_t oc = cb * B + lane;
                    out[((cb * khw + k) * c + ci) * B + lane] =
                        oc < p->oc ? w[(oc * p->icg + ci) * khw + k] : 0.0f;
                }
}

static convsel_status direct_simd_create(const convsel_problem *problem, int threads, const float *weights,
                                         struct convsel_impl *impl)
{
    (void)threads;
    struct ds_state *s = calloc(1, sizeof *s);
    if (!s)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "direct_simd: out of memory");
    struct ds_plan *p = &s->plan;
    s->isa = ds_isa_for(convsel_get_isa());
    const int64_t B = s->isa->block;

    p->block = B;
    p->mb = problem->mb;
    p->g = problem->g;
    p->ic = problem->ic;
    p->oc = problem->oc;
    p->icg = problem->ic / problem->g;
    p->ocg = problem->oc / problem->g;
    p->ih = problem->ih, p->iw = problem->iw, p->oh = problem->oh, p->ow = problem->ow;
    p->kh = problem->kh, p->kw = problem->kw, p->sh = problem->sh, p->sw = problem->sw;
    p->ph = problem->ph, p->pw = problem->pw, p->dh = problem->dh, p->dw = problem->dw;
    p->nb_ic = CONVSEL_DIV_UP(p->ic, B);
    p->nb_oc = CONVSEL_DIV_UP(p->oc, B);
    p->seg = p->ow;

    const int flat = p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1 && p->ph == 0 && p->pw == 0 &&
                     p->oh == p->ih && p->ow == p->iw;
    if (flat) {
        p->iw = p->ow = p->ih * p->iw;
        p->ih = p->oh = 1;
        p->seg = DS_FLAT_SEGMENT;
    }

    if (p->g == 1 || (p->icg % B == 0 && p->ocg % B == 0))
        p->mode = DS_MODE_MAIN;
    else if (p->icg == p->ocg && B % p->icg == 0)
        p->mode = DS_MODE_GROUPED;
    else
        p->mode = DS_MODE_GENERAL;

    size_t wsize;
    const int64_t khw = p->kh * p->kw;
    if (p->mode == DS_MODE_MAIN) {
        p->nb_ic_g = CONVSEL_DIV_UP(p->icg, B);
        p->nb_oc_g = CONVSEL_DIV_UP(p->ocg, B);
        p->nq = ds_choose_groups(s->isa, p->nb_oc_g, p->seg);
        p->ocb = CONVSEL_DIV_UP(p->nb_oc_g, p->nq);
        const int64_t ib_bytes = khw * B * p->ocb * B * (int64_t)sizeof(float);
        p->ib_chunk = CONVSEL_MAX(1, DS_PASS_WEIGHT_BYTES / ib_bytes);
        /* Walking the oc-block groups inside each row (or segment) keeps that
         * row's input in L1/L2 while every group uses it; the weights then
         * stream once per row from L2/L3. Measured interleaved on ResNet-50
         * layers: 0-17% faster with nChw8c, 0-8% with nChw16c (the 9 MiB
         * weights of res5 included, from a 32 MiB L3), never slower than 2%. */
        p->q_inner = ds_group_weight_bytes(p, khw) <= DS_Q_INNER_WEIGHT_BYTES;
        wsize = (size_t)(p->g * p->nb_oc_g * B * p->nb_ic_g * B * khw);
    } else if (p->mode == DS_MODE_GROUPED) {
        p->sgc = p->icg;
        wsize = (size_t)(p->nb_oc * khw * p->sgc * B);
    } else {
        wsize = convsel_problem_weights_elems(problem);
    }

    p->weights = convsel_alloc(wsize * sizeof(float));
    if (p->mode == DS_MODE_GROUPED && p->sgc > 1)
        p->perm = convsel_alloc((size_t)(p->sgc * B) * sizeof(int32_t));
    if (!p->weights || (p->mode == DS_MODE_GROUPED && p->sgc > 1 && !p->perm)) {
        convsel_free(p->weights);
        convsel_free(p->perm);
        free(s);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "direct_simd: out of memory for %zu weights", wsize);
    }
    if (p->mode == DS_MODE_MAIN) {
        ds_reorder_main(p, weights, p->weights);
    } else if (p->mode == DS_MODE_GROUPED) {
        ds_reorder_grouped(p, weights, p->weights);
        /* Lane l of a block belongs to group l / sgc, whose c-th input
         * channel is lane (l / sgc) * sgc + c of the same block. */
        for (int64_t c = 0; p->perm && c < p->sgc; c++)
            for (int64_t lane = 0; lane < B; lane++)
                p->perm[c * B + lane] = (int32_t)(lane / p->sgc * p->sgc + c);
    } else {
        for (size_t i = 0; i < wsize; i++)
            p->weights[i] = weights[i];
    }

    impl->src_layout = B == 16 ? CONVSEL_LAYOUT_NCHW16C : CONVSEL_LAYOUT_NCHW8C;
    impl->dst_layout = impl->src_layout;
    impl->workspace_bytes = 0;
    impl->weights_bytes = wsize * sizeof(float);
    impl->state = s;
    return CONVSEL_OK;
}

void convsel_direct_simd_run_general(const struct ds_plan *p, const float *src, float *dst)
{
    const int64_t B = p->block, khw = p->kh * p->kw;

#pragma omp parallel for collapse(3) schedule(static)
    for (int64_t n = 0; n < p->mb; n++) {
        for (int64_t ob = 0; ob < p->nb_oc; ob++) {
            for (int64_t oy = 0; oy < p->oh; oy++) {
                float *d = dst + ((n * p->nb_oc + ob) * p->oh + oy) * p->ow * B;
                for (int64_t ox = 0; ox < p->ow; ox++) {
                    for (int64_t lane = 0; lane < B; lane++) {
                        const int64_t oc = ob * B + lane;
                        float acc = 0.0f;
                        if (oc < p->oc) {
                            const int64_t gi = oc / p->ocg;
                            for (int64_t c = 0; c < p->icg; c++) {
                                const int64_t ic = gi * p->icg + c;
                                const float *sc = src + (n * p->nb_ic + ic / B) * p->ih * p->iw * B + ic % B;
                                const float *wc = p->weights + (oc * p->icg + c) * khw;
                                for (int64_t ky = 0; ky < p->kh; ky++) {
                                    const int64_t iy = oy * p->sh - p->ph + ky * (p->dh + 1);
                                    if (iy < 0 || iy >= p->ih)
                                        continue;
                                    for (int64_t kx = 0; kx < p->kw; kx++) {
                                        const int64_t ix = ox * p->sw - p->pw + kx * (p->dw + 1);
                                        if (ix < 0 || ix >= p->iw)
                                            continue;
                                        acc += sc[(iy * p->iw + ix) * B] * wc[ky * p->kw + kx];
                                    }
                                }
                            }
                        }
                        d[ox * B + lane] = acc;
                    }
                }
            }
        }
    }
}

static convsel_status direct_simd_run(const struct convsel_impl *impl, const float *src, float *dst, void *workspace)
{
    (void)workspace;
    const struct ds_state *s = impl->state;
    s->isa->run(&s->plan, src, dst);
    return CONVSEL_OK;
}

static void direct_simd_destroy(struct convsel_impl *impl)
{
    struct ds_state *s = impl->state;
    if (!s)
        return;
    convsel_free(s->plan.weights);
    convsel_free(s->plan.perm);
    free(s);
    impl->state = NULL;
}

/* The layout follows the ISA's block, as in create. */
static convsel_status direct_simd_query_layouts(const convsel_problem *problem, int threads, convsel_layout *src,
                                                convsel_layout *dst)
{
    (void)problem;
    (void)threads;
    *src = *dst = ds_isa_for(convsel_get_isa())->block == 16 ? CONVSEL_LAYOUT_NCHW16C : CONVSEL_LAYOUT_NCHW8C;
    return CONVSEL_OK;
}

const struct convsel_primitive convsel_direct_simd = {
    .name = "direct_simd",
    .family = "direct",
    .layouts = "nChw16c (avx512), nChw8c",
    /* Worst measured on every layer of the shared networks up to 10 GFLOP
     * (batch 1, all three ISAs): 2.8e-6. */
    .expected_error = 5e-6,
    .is_reference = 0,
    .applicable = direct_simd_applicable,
    .create = direct_simd_create,
    .query_layouts = direct_simd_query_layouts,
    .run = direct_simd_run,
    .destroy = direct_simd_destroy,
};
