/*
 * One problem, every selected primitive, timed against each other: the
 * measurement bench-layer prints and the profiler records.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

#define WEIGHTS_SEED 0x77656967ull
#define SRC_SEED 0x737263ull

/* One created primitive with its own input and output, in its layouts, so
 * that no candidate finds another's tensors in cache. */
struct candidate {
    size_t primitive;
    convsel_instance *instance;
    float *src, *dst;
};

static convsel_status candidate_run(void *ctx)
{
    struct candidate *c = ctx;
    return convsel_instance_run(c->instance, c->src, c->dst);
}

/* Copies the plain nchw tensor into layout; blocked layouts' padded channels
 * get zeros, as their contract requires. */
static void place_activations(const float *nchw, int64_t mb, int64_t c, int64_t h, int64_t w, convsel_layout layout,
                              float *out)
{
    const int64_t hw = h * w;
    if (layout == CONVSEL_LAYOUT_NCHW) {
        memcpy(out, nchw, (size_t)(mb * c * hw) * sizeof *out);
        return;
    }
    if (layout == CONVSEL_LAYOUT_NHWC) {
        for (int64_t n = 0; n < mb; n++)
            for (int64_t ch = 0; ch < c; ch++)
                for (int64_t p = 0; p < hw; p++)
                    out[(n * hw + p) * c + ch] = nchw[(n * c + ch) * hw + p];
        return;
    }
    const int64_t block = layout == CONVSEL_LAYOUT_NCHW8C ? 8 : 16;
    const int64_t blocks = CONVSEL_DIV_UP(c, block);
    for (int64_t n = 0; n < mb; n++)
        for (int64_t cb = 0; cb < blocks; cb++)
            for (int64_t p = 0; p < hw; p++)
                for (int64_t ci = 0; ci < block; ci++) {
                    const int64_t ch = cb * block + ci;
                    out[((n * blocks + cb) * hw + p) * block + ci] = ch < c ? nchw[(n * c + ch) * hw + p] : 0.0f;
                }
}

/* "name: reason" from instance_create becomes "reason": the table already
 * names the primitive. */
static void set_reason(convsel_measurement *m, const char *name, const char *detail)
{
    size_t len = strlen(name);
    if (strncmp(detail, name, len) == 0 && detail[len] == ':' && detail[len + 1] == ' ')
        detail += len + 2;
    snprintf(m->why, sizeof m->why, "%s", detail);
}

static convsel_status candidate_prepare(struct candidate *c, const convsel_problem *p, const float *src_nchw)
{
    convsel_layout sl = convsel_instance_src_layout(c->instance);
    convsel_layout dl = convsel_instance_dst_layout(c->instance);
    size_t src_elems = convsel_layout_elems(sl, p->mb, p->ic, p->ih, p->iw);
    size_t dst_elems = convsel_layout_elems(dl, p->mb, p->oc, p->oh, p->ow);
    c->src = convsel_alloc(src_elems * sizeof(float));
    c->dst = convsel_alloc(dst_elems * sizeof(float));
    if (!c->src || !c->dst)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "%s: out of memory for src/dst (%zu + %zu floats)",
                             convsel_primitive_name(c->primitive), src_elems, dst_elems);
    place_activations(src_nchw, p->mb, p->ic, p->ih, p->iw, sl, c->src);
    /* Touch dst so that page faults are not timed in the first runs. */
    memset(c->dst, 0, dst_elems * sizeof(float));
    return CONVSEL_OK;
}

static void candidates_free(struct candidate *cands, size_t n)
{
    for (size_t k = 0; k < n; k++) {
        convsel_instance_destroy(cands[k].instance);
        convsel_free(cands[k].src);
        convsel_free(cands[k].dst);
    }
    free(cands);
}

convsel_status convsel_measure_problem(const convsel_problem *problem, int threads, const unsigned char *selected,
                                       const convsel_timing_options *opts, convsel_measurement *out)
{
    if (!problem || !out)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "measure: problem and out are required");
    if (threads < 1)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "measure: threads must be >= 1 (got %d)", threads);
    convsel_status st = convsel_problem_validate(problem);
    if (st != CONVSEL_OK)
        return st;

    const size_t count = convsel_primitive_count();
    for (size_t i = 0; i < count; i++) {
        memset(&out[i], 0, sizeof out[i]);
        out[i].primitive = i;
        out[i].kernel = SIZE_MAX;
        snprintf(out[i].why, sizeof out[i].why, "not selected");
    }

    float *weights = NULL, *src_nchw = NULL;
    struct candidate *cands = calloc(count ? count : 1, sizeof *cands);
    convsel_timed_fn *fns = calloc(count ? count : 1, sizeof *fns);
    void **ctxs = calloc(count ? count : 1, sizeof *ctxs);
    convsel_timing *timings = calloc(count ? count : 1, sizeof *timings);
    size_t n = 0;
    if (!cands || !fns || !ctxs || !timings) {
        st = convsel_error(CONVSEL_OUT_OF_MEMORY, "measure: out of memory");
        goto done;
    }
    weights = convsel_alloc(convsel_problem_weights_elems(problem) * sizeof(float));
    src_nchw = convsel_alloc(convsel_problem_src_elems(problem) * sizeof(float));
    if (!weights || !src_nchw) {
        st = convsel_error(CONVSEL_OUT_OF_MEMORY, "measure: out of memory for weights and input");
        goto done;
    }
    convsel_fill_random(weights, convsel_problem_weights_elems(problem), WEIGHTS_SEED);
    convsel_fill_random(src_nchw, convsel_problem_src_elems(problem), SRC_SEED);

    for (size_t i = 0; i < count; i++) {
        int wanted = selected ? selected[i] != 0 : !convsel_primitive_is_reference(i);
        if (!wanted)
            continue;
        if (!convsel_primitive_applicable(i, problem, out[i].why, sizeof out[i].why))
            continue;
        struct candidate *c = &cands[n];
        c->primitive = i;
        double t0 = convsel_now();
        st = convsel_instance_create(i, problem, threads, weights, &c->instance);
        out[i].create_ms = 1e3 * (convsel_now() - t0);
        if (st == CONVSEL_NOT_APPLICABLE) {
            /* A backend refused what applicable() accepted (oneDNN's
             * "unimplemented"): a reason, not a failure. */
            set_reason(&out[i], convsel_primitive_name(i), convsel_last_error());
            out[i].create_ms = 0.0;
            st = CONVSEL_OK;
            continue;
        }
        n++; /* from here on the candidate's resources are freed with the rest */
        if (st != CONVSEL_OK)
            goto done;
        out[i].weights_bytes = convsel_instance_weights_bytes(c->instance);
        if (convsel_primitive_runs_as(i, problem, threads, &out[i].kernel) != CONVSEL_OK)
            out[i].kernel = SIZE_MAX; /* recorded as unknown, the measurement stands */
        st = candidate_prepare(c, problem, src_nchw);
        if (st != CONVSEL_OK)
            goto done;
        fns[n - 1] = candidate_run;
        ctxs[n - 1] = c;
    }
    /* The nchw copy is not needed while timing; give its memory back first. */
    convsel_free(src_nchw);
    src_nchw = NULL;

    if (n > 0) {
        st = convsel_time_interleaved(n, fns, ctxs, opts, timings);
        if (st != CONVSEL_OK)
            goto done;
    }
    const double flops = convsel_problem_flops(problem);
    for (size_t k = 0; k < n; k++) {
        convsel_measurement *m = &out[cands[k].primitive];
        m->applicable = 1;
        m->why[0] = '\0';
        m->src_layout = convsel_instance_src_layout(cands[k].instance);
        m->dst_layout = convsel_instance_dst_layout(cands[k].instance);
        m->timing = timings[k];
        m->gflops = timings[k].median_ms > 0.0 ? flops / (timings[k].median_ms * 1e-3) / 1e9 : 0.0;
    }

done:
    if (cands)
        candidates_free(cands, n);
    free(fns);
    free(ctxs);
    free(timings);
    convsel_free(weights);
    convsel_free(src_nchw);
    return st;
}
