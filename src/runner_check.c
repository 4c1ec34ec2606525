/* convsel_runner_check: one pass of a runner, every step checked against
 * the reference convolution and against the data it should have moved. The
 * checks read tensors through convsel_layout_offset, not through oneDNN's
 * reorders, so a wrong reorder cannot hide behind itself. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runner_internal.h"

/* Copies an mb×c×h×w tensor in layout into plain nchw. */
static void gather_nchw(const float *src, convsel_layout layout, int64_t mb, int64_t c, int64_t h, int64_t w,
                        float *dst)
{
    size_t k = 0;
    for (int64_t n = 0; n < mb; n++)
        for (int64_t ch = 0; ch < c; ch++)
            for (int64_t y = 0; y < h; y++)
                for (int64_t x = 0; x < w; x++)
                    dst[k++] = src[convsel_layout_offset(layout, c, h, w, n, ch, y, x)];
}

/* 1 when the padded channels of a blocked tensor (past c, up to the block)
 * are all zero, as every primitive reading one may assume. */
static int padding_zero(const float *t, convsel_layout layout, int64_t mb, int64_t c, int64_t h, int64_t w)
{
    size_t elems = convsel_layout_elems(layout, mb, c, h, w);
    int64_t padded = (int64_t)(elems / (size_t)(mb * h * w));
    for (int64_t n = 0; n < mb; n++)
        for (int64_t ch = c; ch < padded; ch++)
            for (int64_t y = 0; y < h; y++)
                for (int64_t x = 0; x < w; x++)
                    if (t[convsel_layout_offset(layout, c, h, w, n, ch, y, x)] != 0.0f)
                        return 0;
    return 1;
}

/* Index of the first element where a and b differ (bitwise, so -0 and NaN
 * count), or n when none does. */
static size_t first_difference(const float *a, const float *b, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (memcmp(&a[i], &b[i], sizeof(float)) != 0)
            return i;
    return n;
}

/* Layer i's output by the reference, from the input x it read (nchw). */
static convsel_status reference_output(const convsel_runner *r, size_t i, const float *x, float *y_ref)
{
    const convsel_problem *p = &r->problems[i];
    size_t ref;
    convsel_status st = convsel_primitive_find("reference", &ref);
    if (st != CONVSEL_OK)
        return st;
    size_t wn = convsel_problem_weights_elems(p);
    float *weights = convsel_alloc(wn * sizeof(float));
    if (!weights)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "runner check: out of memory for weights of layer %zu", i + 1);
    convsel_fill_random(weights, wn, convsel_runner_weights_seed(r->seed, i));
    convsel_instance *inst = NULL;
    st = convsel_instance_create(ref, p, r->threads, weights, &inst);
    if (st == CONVSEL_OK)
        st = convsel_instance_run(inst, x, y_ref);
    convsel_instance_destroy(inst);
    convsel_free(weights);
    return st;
}

struct check_state {
    float *x, *y, *y_ref, *expected, *moved;
    float *prev; /* the previous layer's output, nchw */
};

static convsel_status check_reorder(const struct step *s, struct check_state *c)
{
    size_t n = (size_t)(s->mb * s->c * s->h * s->w);
    const char *from = convsel_layout_name(s->in_layout), *to = convsel_layout_name(s->out_layout);
    if (!padding_zero(s->out, s->out_layout, s->mb, s->c, s->h, s->w))
        return convsel_error(CONVSEL_WRONG_RESULT, "layer %zu: the reorder %s -> %s left non-zero padded channels",
                             s->layer + 1, from, to);
    gather_nchw(s->in, s->in_layout, s->mb, s->c, s->h, s->w, c->expected);
    gather_nchw(s->out, s->out_layout, s->mb, s->c, s->h, s->w, c->moved);
    size_t at = first_difference(c->moved, c->expected, n);
    if (at < n)
        return convsel_error(CONVSEL_WRONG_RESULT,
                             "layer %zu: the reorder %s -> %s changed element %zu of %zu (%g, was %g)", s->layer + 1,
                             from, to, at, n, (double)c->moved[at], (double)c->expected[at]);
    return CONVSEL_OK;
}

static convsel_status check_conv(const convsel_runner *r, const struct step *s, struct check_state *c,
                                 double *worst)
{
    size_t i = s->layer;
    const convsel_problem *p = &r->problems[i];
    const char *prim = convsel_primitive_name(convsel_instance_primitive(s->conv));
    size_t n_in = convsel_problem_src_elems(p), n_out = convsel_problem_dst_elems(p);
    /* The input, before the step runs (a wrong plan of buffers could let the
     * step overwrite it). */
    if (!padding_zero(s->in, s->in_layout, p->mb, p->ic, p->ih, p->iw))
        return convsel_error(CONVSEL_WRONG_RESULT, "layer %zu '%s' (%s): its %s input has non-zero padded channels",
                             i + 1, p->name, prim, convsel_layout_name(s->in_layout));
    gather_nchw(s->in, s->in_layout, p->mb, p->ic, p->ih, p->iw, c->x);
    /* convsel_runner_create refuses a connected layer whose input is not
     * the previous output's shape, so prev holds n_in values here. */
    const float *expected = c->prev;
    if (!r->connected[i]) {
        convsel_fill_random(c->expected, n_in, convsel_runner_input_seed(r->seed, i));
        expected = c->expected;
    }
    size_t at = first_difference(c->x, expected, n_in);
    if (at < n_in)
        return convsel_error(CONVSEL_WRONG_RESULT,
                             "layer %zu '%s' (%s): its input differs from %s at element %zu of %zu (%g, not %g)",
                             i + 1, p->name, prim, r->connected[i] ? "what the previous layer wrote" : "the network's input",
                             at, n_in, (double)c->x[at], (double)expected[at]);
    convsel_status st = convsel_instance_run_in(s->conv, s->in, s->out, r->workspace);
    if (st != CONVSEL_OK)
        return st;
    if (!padding_zero(s->out, s->out_layout, p->mb, p->oc, p->oh, p->ow))
        return convsel_error(CONVSEL_WRONG_RESULT, "layer %zu '%s' (%s): its %s output has non-zero padded channels",
                             i + 1, p->name, prim, convsel_layout_name(s->out_layout));
    gather_nchw(s->out, s->out_layout, p->mb, p->oc, p->oh, p->ow, c->y);
    if ((st = reference_output(r, i, c->x, c->y_ref)) != CONVSEL_OK)
        return st;
    double err = convsel_rel_error(c->y, c->y_ref, n_out);
    double bound = fmax(CONVSEL_RUNNER_CHECK_EXACT, 4.0 * convsel_primitive_expected_error(convsel_instance_primitive(s->conv)));
    if (!(err <= bound))
        return convsel_error(CONVSEL_WRONG_RESULT,
                             "layer %zu '%s' (%s): max|y - y_ref| / max|y_ref| = %.3g against the reference, above "
                             "%.3g",
                             i + 1, p->name, prim, err, bound);
    *worst = fmax(*worst, err / bound);
    /* The output becomes the next layer's expected input. */
    float *swap = c->prev;
    c->prev = c->y;
    c->y = swap;
    return CONVSEL_OK;
}

convsel_status convsel_runner_check(convsel_runner *r, double *worst_error)
{
    if (!r)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "runner is NULL");
    /* Scratch sized for the largest tensor any step reads or writes. */
    size_t most = 1;
    for (size_t i = 0; i < r->n_layers; i++)
        most = CONVSEL_MAX(most, CONVSEL_MAX(convsel_problem_src_elems(&r->problems[i]),
                                             convsel_problem_dst_elems(&r->problems[i])));
    struct check_state c = {0};
    float **all[] = {&c.x, &c.y, &c.y_ref, &c.expected, &c.moved, &c.prev};
    convsel_status st = CONVSEL_OK;
    for (size_t k = 0; k < CONVSEL_ARRAY_SIZE(all); k++)
        if (!(*all[k] = convsel_alloc(most * sizeof(float))))
            st = convsel_error(CONVSEL_OUT_OF_MEMORY, "runner check: out of memory");
    double worst = 0.0;
    /* Instances and reorders set their thread counts themselves. */
    for (size_t k = 0; k < r->n_steps && st == CONVSEL_OK; k++) {
        const struct step *s = &r->steps[k];
        if (s->kind == STEP_CONV) {
            st = check_conv(r, s, &c, &worst);
        } else {
            st = convsel_reorder_run(s->reorder, s->in, s->out);
            if (st == CONVSEL_OK)
                st = check_reorder(s, &c);
        }
    }
    for (size_t k = 0; k < CONVSEL_ARRAY_SIZE(all); k++)
        convsel_free(*all[k]);
    if (worst_error)
        *worst_error = worst;
    return st;
}
