/* Executes a plan end to end: the network's convolutions in order, with the
 * reorders its layouts imply. */
#include <stdlib.h>
#include <string.h>

#include "runner_internal.h"

uint64_t convsel_runner_weights_seed(uint64_t seed, size_t layer)
{
    return seed ^ (0x9e3779b97f4a7c15ull * (layer + 1));
}

uint64_t convsel_runner_input_seed(uint64_t seed, size_t layer)
{
    return seed + 7919 * layer;
}

static float *runner_buffer(convsel_runner *r, size_t elems)
{
    float **grown = convsel_grow(r->buffers, r->n_buffers, &r->cap_buffers, 32, sizeof *grown);
    if (!grown)
        return NULL;
    r->buffers = grown;
    /* Zeroed so the padded channels of blocked layouts start as zeros. */
    float *buf = convsel_alloc(elems * sizeof(float));
    if (buf) {
        memset(buf, 0, elems * sizeof(float));
        r->buffers[r->n_buffers++] = buf;
    }
    return buf;
}

/* A buffer holding random activations of mb×c×h×w in layout (made in nchw
 * and reordered, so blocked padding stays zero). */
static convsel_status random_activation(convsel_runner *r, int64_t mb, int64_t c, int64_t h, int64_t w,
                                        convsel_layout layout, uint64_t seed, float **out)
{
    size_t plain = convsel_layout_elems(CONVSEL_LAYOUT_NCHW, mb, c, h, w);
    float *buf = runner_buffer(r, convsel_layout_elems(layout, mb, c, h, w));
    float *tmp = convsel_alloc(plain * sizeof(float));
    if (!buf || !tmp) {
        convsel_free(tmp);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory for activations");
    }
    convsel_fill_random(tmp, plain, seed);
    convsel_status st = CONVSEL_OK;
    if (layout == CONVSEL_LAYOUT_NCHW) {
        memcpy(buf, tmp, plain * sizeof(float));
    } else {
        convsel_reorder *ro = NULL;
        st = convsel_reorder_create(mb, c, h, w, CONVSEL_LAYOUT_NCHW, layout, r->threads, &ro);
        if (st == CONVSEL_OK)
            st = convsel_reorder_run(ro, tmp, buf);
        convsel_reorder_destroy(ro);
    }
    convsel_free(tmp);
    *out = buf;
    return st;
}

static convsel_status push_step(convsel_runner *r, size_t *cap, struct step step)
{
    struct step *grown = convsel_grow(r->steps, r->n_steps, cap, 64, sizeof *grown);
    if (!grown)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    r->steps = grown;
    r->steps[r->n_steps++] = step;
    if (step.kind == STEP_REORDER)
        r->n_reorders++;
    return CONVSEL_OK;
}

/* The slot for a tensor of elems written by a step that reads in_slot (-1:
 * a buffer of its own): the other one, else the one not written last. */
static int pick_slot(convsel_runner *r, int in_slot, size_t elems)
{
    int slot = in_slot >= 0 ? 1 - in_slot : 1 - r->last_slot;
    r->slot_elems[slot] = CONVSEL_MAX(r->slot_elems[slot], elems);
    r->last_slot = slot;
    return slot;
}

/* Appends a reorder of in (layout from; in own, or in_slot) into a slot in
 * layout to, charged to plan layer `layer`; *out_slot gets the slot. */
static convsel_status push_reorder(convsel_runner *r, size_t *cap, size_t layer, int64_t mb, int64_t c, int64_t h,
                                   int64_t w, convsel_layout from, convsel_layout to, const float *own, int in_slot,
                                   int *out_slot)
{
    struct step step = {.kind = STEP_REORDER, .in = own, .in_slot = in_slot, .layer = layer, .mb = mb, .c = c,
                        .h = h, .w = w, .in_layout = from, .out_layout = to};
    step.out_slot = pick_slot(r, in_slot, convsel_layout_elems(to, mb, c, h, w));
    convsel_status st = convsel_reorder_create(mb, c, h, w, from, to, r->threads, &step.reorder);
    if (st == CONVSEL_OK)
        st = push_step(r, cap, step);
    if (st != CONVSEL_OK) {
        convsel_reorder_destroy(step.reorder);
        return st;
    }
    *out_slot = step.out_slot;
    return CONVSEL_OK;
}

/* Whether `like` has layer i of problem p made with r's seed (the seed of
 * both its weights and its random input): what either may share starts here. */
static int like_has_layer(const convsel_runner *like, const convsel_runner *r, size_t i, const convsel_problem *p)
{
    return like && like->seed == r->seed && i < like->n_layers && convsel_problem_same_shape(&like->problems[i], p);
}

/* Layer i's instance in `like` where it is the one r would make there: the
 * same problem, primitive and layouts, thread count and weights. NULL
 * otherwise. */
static convsel_instance *like_instance(const convsel_runner *like, const convsel_runner *r, size_t i, size_t index,
                                       const convsel_plan_layer *l)
{
    if (!like_has_layer(like, r, i, &l->problem) || like->threads != r->threads)
        return NULL;
    for (size_t k = 0; k < like->n_steps; k++) {
        const struct step *s = &like->steps[k];
        if (s->kind != STEP_CONV || s->layer != i)
            continue;
        int same = convsel_instance_primitive(s->conv) == index &&
                   convsel_instance_src_layout(s->conv) == l->src_layout &&
                   convsel_instance_dst_layout(s->conv) == l->dst_layout;
        return same ? s->conv : NULL;
    }
    return NULL;
}

/* Layer i's random input in `like` where it is the one r would make. */
static float *like_input(const convsel_runner *like, const convsel_runner *r, size_t i, const convsel_problem *p)
{
    return like_has_layer(like, r, i, p) && like->boundary == r->boundary ? like->inputs[i] : NULL;
}

/* Layer i's instance (plan layer l, primitive index) with its seeded random
 * weights, refused when its layouts are not the plan's. */
static convsel_status make_instance(const convsel_runner *r, size_t i, size_t index, const convsel_plan_layer *l,
                                    uint64_t seed, convsel_instance **out)
{
    const convsel_problem *p = &l->problem;
    size_t wn = convsel_problem_weights_elems(p);
    float *weights = convsel_alloc(wn * sizeof(float));
    if (!weights)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory for weights of layer %zu", i + 1);
    convsel_fill_random(weights, wn, convsel_runner_weights_seed(seed, i));
    convsel_instance *conv = NULL;
    convsel_status st = convsel_instance_create(index, p, r->threads, weights, &conv);
    convsel_free(weights);
    if (st != CONVSEL_OK)
        return convsel_error(st, "layer %zu '%s' (%s): %s", i + 1, p->name, l->primitive, convsel_last_error());
    if (convsel_instance_src_layout(conv) != l->src_layout || convsel_instance_dst_layout(conv) != l->dst_layout) {
        st = convsel_error(CONVSEL_INVALID_ARGUMENT,
                           "layer %zu '%s': %s uses %s -> %s here, the plan says %s -> %s (a plan from "
                           "another CPU or ISA?)",
                           i + 1, p->name, l->primitive, convsel_layout_name(convsel_instance_src_layout(conv)),
                           convsel_layout_name(convsel_instance_dst_layout(conv)),
                           convsel_layout_name(l->src_layout), convsel_layout_name(l->dst_layout));
        convsel_instance_destroy(conv);
        return st;
    }
    *out = conv;
    return CONVSEL_OK;
}

convsel_status convsel_runner_create(const convsel_plan *plan, uint64_t seed, convsel_runner **out)
{
    return convsel_runner_create_like(plan, seed, NULL, out);
}

convsel_status convsel_runner_create_like(const convsel_plan *plan, uint64_t seed, convsel_runner *like,
                                          convsel_runner **out)
{
    if (!plan || !out || plan->n_layers == 0)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "runner: a plan with layers is required");
    *out = NULL;
    convsel_runner *r = calloc(1, sizeof *r);
    if (!r)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    r->threads = plan->threads > 0 ? plan->threads : 1;
    r->seed = seed;
    r->boundary = plan->boundary_layout;
    r->problems = malloc(plan->n_layers * sizeof *r->problems);
    r->connected = calloc(plan->n_layers, 1);
    r->inputs = calloc(plan->n_layers, sizeof *r->inputs);
    if (like) { /* from here on, destroying r lets go of like */
        r->lender = like;
        like->n_borrowers++;
    }
    if (!r->problems || !r->connected || !r->inputs) {
        convsel_runner_destroy(r);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    }
    for (size_t i = 0; i < plan->n_layers; i++) {
        r->problems[i] = plan->layers[i].problem;
        r->connected[i] = i > 0 && plan->layers[i].connected;
        /* A connected layer reads the previous one's output buffer as its input. */
        if (r->connected[i] && !convsel_problem_feeds(&plan->layers[i - 1].problem, &plan->layers[i].problem)) {
            convsel_runner_destroy(r);
            return convsel_error(CONVSEL_INVALID_ARGUMENT,
                                 "runner: layer %zu is marked connected, but its input is not layer %zu's output shape",
                                 i + 1, i);
        }
    }
    size_t cap = 0;
    convsel_status st = CONVSEL_OK;
    const convsel_layout boundary = plan->boundary_layout;
    int prev_slot = -1; /* the slot of the previous layer's output */
    for (size_t i = 0; i < plan->n_layers && st == CONVSEL_OK; i++) {
        const convsel_plan_layer *l = &plan->layers[i];
        const convsel_problem *p = &l->problem;
        size_t index;
        st = convsel_primitive_find(l->primitive, &index);
        if (st != CONVSEL_OK)
            break;
        /* The layer's input: the previous layer's output when connected,
         * else fresh activations arriving in the boundary layout. */
        const float *in = NULL;
        int in_slot = -1;
        convsel_layout in_layout;
        if (i > 0 && l->connected) {
            in_slot = prev_slot;
            in_layout = plan->layers[i - 1].dst_layout;
        } else {
            if (i > 0 && plan->layers[i - 1].dst_layout != boundary) {
                const convsel_problem *q = &plan->layers[i - 1].problem;
                int exit_slot;
                st = push_reorder(r, &cap, i - 1, q->mb, q->oc, q->oh, q->ow, plan->layers[i - 1].dst_layout, boundary,
                                  NULL, prev_slot, &exit_slot);
                if (st != CONVSEL_OK)
                    break;
            }
            float *fresh = like_input(like, r, i, p);
            if (!fresh)
                st = random_activation(r, p->mb, p->ic, p->ih, p->iw, boundary, convsel_runner_input_seed(seed, i),
                                       &fresh);
            in = r->inputs[i] = fresh;
            in_layout = boundary;
        }
        if (st == CONVSEL_OK && in_layout != l->src_layout) {
            int moved_slot;
            st = push_reorder(r, &cap, i, p->mb, p->ic, p->ih, p->iw, in_layout, l->src_layout, in, in_slot,
                              &moved_slot);
            in = NULL;
            in_slot = moved_slot;
        }
        if (st != CONVSEL_OK)
            break;

        struct step step = {.kind = STEP_CONV, .in = in, .in_slot = in_slot, .layer = i, .in_layout = l->src_layout,
                            .out_layout = l->dst_layout};
        step.conv = like_instance(like, r, i, index, l);
        step.borrowed = step.conv != NULL;
        if (!step.borrowed && (st = make_instance(r, i, index, l, seed, &step.conv)) != CONVSEL_OK)
            break;
        step.out_slot = pick_slot(r, in_slot, convsel_layout_elems(l->dst_layout, p->mb, p->oc, p->oh, p->ow));
        st = push_step(r, &cap, step);
        if (st != CONVSEL_OK) {
            if (!step.borrowed)
                convsel_instance_destroy(step.conv);
            break;
        }
        prev_slot = step.out_slot;
    }
    if (st == CONVSEL_OK) {
        const convsel_plan_layer *last = &plan->layers[plan->n_layers - 1];
        if (last->dst_layout != boundary) {
            int exit_slot;
            st = push_reorder(r, &cap, plan->n_layers - 1, last->problem.mb, last->problem.oc, last->problem.oh,
                              last->problem.ow, last->dst_layout, boundary, NULL, prev_slot, &exit_slot);
        }
    }
    /* The slots, once their sizes are known, and every step's pointers into
     * them. Never a lender's: they are written by every layer, so a runner
     * run after its lender would find them in cache where it left them, and
     * a runner with slots of its own would not. */
    float *slots[2] = {NULL, NULL};
    for (int k = 0; k < 2 && st == CONVSEL_OK; k++)
        if (r->slot_elems[k] && !(slots[k] = runner_buffer(r, r->slot_elems[k])))
            st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory for activations");
    for (size_t k = 0; k < r->n_steps && st == CONVSEL_OK; k++) {
        struct step *s = &r->steps[k];
        if (s->in_slot >= 0)
            s->in = slots[s->in_slot];
        s->out = slots[s->out_slot];
    }
    r->n_layers = plan->n_layers;
    if (st == CONVSEL_OK)
        st = convsel_runner_share_workspace(r, 1, NULL);
    if (st != CONVSEL_OK) {
        convsel_runner_destroy(r);
        return st;
    }
    *out = r;
    return CONVSEL_OK;
}

/* One step of a pass, on its buffers. */
static convsel_status run_step(const convsel_runner *r, const struct step *s)
{
    return s->kind == STEP_CONV ? convsel_instance_run_in(s->conv, s->in, s->out, r->workspace)
                                : convsel_reorder_run(s->reorder, s->in, s->out);
}

/* Step s run reps times in a row (reps >= 1), its median ms into *ms. */
static convsel_status time_step_alone(const convsel_runner *r, const struct step *s, int reps, double *ms)
{
    double *times = malloc((size_t)reps * sizeof *times);
    if (!times)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    convsel_threads_set(r->threads);
    convsel_status st = CONVSEL_OK;
    for (int k = 0; k < reps && st == CONVSEL_OK; k++) {
        double t0 = convsel_now();
        st = run_step(r, s);
        times[k] = (convsel_now() - t0) * 1e3;
    }
    if (st == CONVSEL_OK) {
        qsort(times, (size_t)reps, sizeof *times, convsel_cmp_double);
        *ms = convsel_quantile(times, reps, 0.5);
    }
    free(times);
    return st;
}

convsel_status convsel_runner_run(convsel_runner *r)
{
    if (!r)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "runner is NULL");
    convsel_threads_set(r->threads);
    double *times = NULL;
    if (r->timing) {
        if (r->n_runs == r->cap_runs) {
            size_t cap = r->cap_runs ? 2 * r->cap_runs : 64;
            double *grown = realloc(r->step_ms, cap * r->n_steps * sizeof *grown);
            if (!grown)
                return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory for layer times");
            r->step_ms = grown;
            r->cap_runs = cap;
        }
        times = r->step_ms + r->n_runs * r->n_steps;
    }
    double t0 = times ? convsel_now() : 0.0;
    for (size_t i = 0; i < r->n_steps; i++) {
        convsel_status st = run_step(r, &r->steps[i]);
        if (st != CONVSEL_OK)
            return st;
        if (times) {
            double t1 = convsel_now();
            times[i] = (t1 - t0) * 1e3;
            t0 = t1;
        }
    }
    if (times)
        r->n_runs++;
    return CONVSEL_OK;
}

void convsel_runner_time_layers(convsel_runner *r, int on)
{
    if (!r)
        return;
    r->timing = on != 0;
    r->n_runs = 0;
}

convsel_status convsel_runner_layer_ms(const convsel_runner *r, size_t layer, double *conv_ms, double *reorder_ms)
{
    if (!r || !conv_ms || !reorder_ms || layer >= r->n_layers)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_runner_layer_ms: no layer %zu", layer + 1);
    if (r->n_runs == 0)
        return convsel_error(CONVSEL_NOT_FOUND, "convsel_runner_layer_ms: no timed runs (convsel_runner_time_layers)");
    double *conv = malloc(2 * r->n_runs * sizeof *conv);
    if (!conv)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    double *reorder = conv + r->n_runs;
    for (size_t k = 0; k < r->n_runs; k++) {
        const double *times = r->step_ms + k * r->n_steps;
        conv[k] = reorder[k] = 0.0;
        for (size_t i = 0; i < r->n_steps; i++)
            if (r->steps[i].layer == layer)
                *(r->steps[i].kind == STEP_CONV ? &conv[k] : &reorder[k]) += times[i];
    }
    qsort(conv, r->n_runs, sizeof *conv, convsel_cmp_double);
    qsort(reorder, r->n_runs, sizeof *reorder, convsel_cmp_double);
    *conv_ms = convsel_quantile(conv, (int)r->n_runs, 0.5);
    *reorder_ms = convsel_quantile(reorder, (int)r->n_runs, 0.5);
    free(conv);
    return CONVSEL_OK;
}

convsel_status convsel_runner_layer_alone_ms(convsel_runner *r, size_t layer, int reps, double *conv_ms)
{
    if (!r || !conv_ms || layer >= r->n_layers || reps < 1 || reps > 1000)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_runner_layer_alone_ms: bad arguments");
    for (size_t i = 0; i < r->n_steps; i++)
        if (r->steps[i].kind == STEP_CONV && r->steps[i].layer == layer)
            return time_step_alone(r, &r->steps[i], reps, conv_ms);
    return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_runner_layer_alone_ms: no layer %zu", layer + 1);
}

convsel_status convsel_runner_layer_weights_bytes(const convsel_runner *r, size_t layer, size_t *bytes)
{
    if (!r || !bytes || layer >= r->n_layers)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_runner_layer_weights_bytes: bad arguments");
    for (size_t i = 0; i < r->n_steps; i++)
        if (r->steps[i].kind == STEP_CONV && r->steps[i].layer == layer) {
            *bytes = convsel_instance_weights_bytes(r->steps[i].conv);
            return CONVSEL_OK;
        }
    return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_runner_layer_weights_bytes: no layer %zu", layer + 1);
}

convsel_status convsel_runner_entry_ms(convsel_runner *r, size_t layer, int reps, double *in_network_ms,
                                      double *alone_ms)
{
    if (!r || !in_network_ms || !alone_ms || layer >= r->n_layers || reps < 1 || reps > 1000)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_runner_entry_ms: bad arguments");
    if (r->n_runs == 0)
        return convsel_error(CONVSEL_NOT_FOUND, "convsel_runner_entry_ms: no timed runs (convsel_runner_time_layers)");
    size_t at = r->n_steps;
    for (size_t i = 0; i < r->n_steps && at == r->n_steps; i++)
        if (r->steps[i].kind == STEP_REORDER && r->steps[i].layer == layer && r->inputs[layer] &&
            r->steps[i].in == r->inputs[layer])
            at = i;
    if (at == r->n_steps)
        return convsel_error(CONVSEL_NOT_FOUND, "layer %zu reads no reordered boundary tensor", layer + 1);
    double *times = malloc(r->n_runs * sizeof *times);
    if (!times)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    for (size_t k = 0; k < r->n_runs; k++)
        times[k] = r->step_ms[k * r->n_steps + at];
    qsort(times, r->n_runs, sizeof *times, convsel_cmp_double);
    *in_network_ms = convsel_quantile(times, (int)r->n_runs, 0.5);
    free(times);
    return time_step_alone(r, &r->steps[at], reps, alone_ms);
}

convsel_status convsel_runner_share_workspace(convsel_runner *r, int on, size_t *bytes)
{
    if (!r)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "runner is NULL");
    size_t largest = 0, sum = 0;
    for (size_t i = 0; i < r->n_steps; i++) {
        if (r->steps[i].kind != STEP_CONV)
            continue;
        const size_t b = convsel_instance_workspace_bytes(r->steps[i].conv);
        largest = CONVSEL_MAX(largest, b);
        sum += b;
    }
    /* Never a lender's workspace, as never its slots. */
    if (on && largest && !r->workspace) {
        r->workspace = convsel_alloc(largest);
        if (!r->workspace)
            return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory for a %zu-byte workspace", largest);
        memset(r->workspace, 0, largest);
        r->workspace_bytes = largest;
    }
    /* Cannot fail: the buffer is large enough for every layer and aligned. A
     * borrowed instance keeps its lender's setting: this runner's runs hand it
     * the workspace (convsel_instance_run_in), and the lender may outlive it. */
    for (size_t i = 0; i < r->n_steps; i++)
        if (r->steps[i].kind == STEP_CONV && !r->steps[i].borrowed)
            convsel_instance_set_workspace(r->steps[i].conv, on ? r->workspace : NULL, r->workspace_bytes);
    if (!on) {
        convsel_free(r->workspace);
        r->workspace = NULL;
        r->workspace_bytes = 0;
    }
    if (bytes)
        *bytes = on ? largest : sum;
    return CONVSEL_OK;
}

size_t convsel_runner_reorder_count(const convsel_runner *r)
{
    return r ? r->n_reorders : 0;
}

static void runner_free(convsel_runner *r)
{
    for (size_t i = 0; i < r->n_steps; i++) {
        if (!r->steps[i].borrowed)
            convsel_instance_destroy(r->steps[i].conv);
        convsel_reorder_destroy(r->steps[i].reorder);
    }
    convsel_free(r->workspace);
    for (size_t i = 0; i < r->n_buffers; i++)
        convsel_free(r->buffers[i]);
    free(r->buffers);
    free(r->problems);
    free(r->connected);
    free(r->inputs);
    free(r->steps);
    free(r->step_ms);
    convsel_runner *lender = r->lender;
    free(r);
    /* The last borrower of a lender already destroyed frees it. */
    if (lender && --lender->n_borrowers == 0 && lender->destroyed)
        runner_free(lender);
}

void convsel_runner_destroy(convsel_runner *r)
{
    if (!r)
        return;
    /* A lender whose instances and inputs others still use outlives its
     * destruction until the last of them goes. */
    if (r->n_borrowers) {
        r->destroyed = 1;
        return;
    }
    runner_free(r);
}

/* Declared in internal.h. */
convsel_status convsel_runner_timed(void *runner)
{
    return convsel_runner_run(runner);
}
