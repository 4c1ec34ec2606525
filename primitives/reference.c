/*
 * The ground truth: plain loops over the definition of convolution with
 * double accumulation. Written for clarity, not speed;
 * never selected, only compared against.
 */
#include <stdlib.h>

#include "internal.h"
#include "primitive.h"

struct reference_state {
    convsel_problem problem;
    float *weights;
};

static int reference_applicable(const convsel_problem *problem, char *why, size_t why_size)
{
    (void)problem;
    (void)why;
    (void)why_size;
    return 1;
}

static convsel_status reference_create(const convsel_problem *problem, int threads, const float *weights,
                                       struct convsel_impl *impl)
{
    size_t n = convsel_problem_weights_elems(problem);
    struct reference_state *s = calloc(1, sizeof *s);
    if (!s)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "reference: out of memory");
    s->problem = *problem;
    s->weights = convsel_alloc(n * sizeof(float));
    if (!s->weights) {
        free(s);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "reference: out of memory for weights");
    }
    for (size_t i = 0; i < n; i++)
        s->weights[i] = weights[i];
    impl->src_layout = CONVSEL_LAYOUT_NCHW;
    impl->dst_layout = CONVSEL_LAYOUT_NCHW;
    impl->workspace_bytes = 0;
    impl->weights_bytes = n * sizeof(float);
    impl->state = s;
    return CONVSEL_OK;
}

static convsel_status reference_run(const struct convsel_impl *impl, const float *src, float *dst, void *workspace)
{
    (void)workspace;
    const struct reference_state *s = impl->state;
    const convsel_problem *p = &s->problem;
    const int64_t icg = p->ic / p->g, ocg = p->oc / p->g;

#pragma omp parallel for collapse(2) schedule(static)
    for (int64_t n = 0; n < p->mb; n++) {
        for (int64_t oc = 0; oc < p->oc; oc++) {
            const int64_t g = oc / ocg;
            for (int64_t oy = 0; oy < p->oh; oy++) {
                for (int64_t ox = 0; ox < p->ow; ox++) {
                    double acc = 0.0;
                    for (int64_t c = 0; c < icg; c++) {
                        const int64_t ic = g * icg + c;
                        for (int64_t ky = 0; ky < p->kh; ky++) {
                            const int64_t iy = oy * p->sh - p->ph + ky * (p->dh + 1);
                            if (iy < 0 || iy >= p->ih)
                                continue;
                            for (int64_t kx = 0; kx < p->kw; kx++) {
                                const int64_t ix = ox * p->sw - p->pw + kx * (p->dw + 1);
                                if (ix < 0 || ix >= p->iw)
                                    continue;
                                const float x = src[((n * p->ic + ic) * p->ih + iy) * p->iw + ix];
                                const float w = s->weights[((oc * icg + c) * p->kh + ky) * p->kw + kx];
                                acc += (double)x * (double)w;
                            }
                        }
                    }
                    dst[((n * p->oc + oc) * p->oh + oy) * p->ow + ox] = (float)acc;
                }
            }
        }
    }
    return CONVSEL_OK;
}

static void reference_destroy(struct convsel_impl *impl)
{
    struct reference_state *s = impl->state;
    if (!s)
        return;
    convsel_free(s->weights);
    free(s);
    impl->state = NULL;
}

const struct convsel_primitive convsel_reference = {
    .name = "reference",
    .family = "reference",
    .layouts = "nchw",
    .expected_error = 0.0,
    .is_reference = 1,
    .applicable = reference_applicable,
    .create = reference_create,
    .run = reference_run,
    .destroy = reference_destroy,
};
