/*
 * Per-layer primitive selection by exact dynamic programming along the
 * network's layer sequence, with reorder costs between layouts. See
 * docs/selection.md for the network model.
 */
#include <float.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "primitive.h"

/* ------------------------------------------------------------- layouts */

/* Which layouts a primitive uses on a problem is decided by oneDNN at
 * creation for some primitives; asking again costs a creation, so answers
 * are cached per process (key: canonical descriptor, threads, primitive). */
struct layout_entry {
    convsel_layout src, dst;
    size_t runs_as; /* convsel_primitive_runs_as */
    convsel_status status;
};

static pthread_mutex_t layout_lock = PTHREAD_MUTEX_INITIALIZER;
static struct layout_entry *layout_cache;
static size_t layout_count, layout_capacity;
static struct convsel_strmap layout_index; /* key -> index in layout_cache */

static void layout_key(size_t i, const convsel_problem *problem, int threads, char *key, size_t size)
{
    char desc[256];
    convsel_shape_key(problem, desc, sizeof desc);
    snprintf(key, size, "%zu|%d|%d|%s", i, threads, (int)convsel_get_isa(), desc);
}

static const struct layout_entry *layout_lookup(const char *key)
{
    size_t k;
    return convsel_strmap_get(&layout_index, key, &k) ? &layout_cache[k] : NULL;
}

static void layout_store(const char *key, convsel_layout src, convsel_layout dst, size_t runs_as,
                         convsel_status status)
{
    struct layout_entry *grown = convsel_grow(layout_cache, layout_count, &layout_capacity, 64, sizeof *grown);
    if (!grown)
        return; /* a cache miss next time, nothing worse */
    layout_cache = grown;
    if (convsel_strmap_put(&layout_index, key, layout_count) != 1)
        return; /* out of memory, or another thread stored it first */
    layout_cache[layout_count++] = (struct layout_entry){src, dst, runs_as, status};
}

/* Layouts and kernel of primitive i on problem, from the cache or asked. */
static convsel_status kernel_query(size_t i, const convsel_problem *problem, int threads, convsel_layout *src,
                                   convsel_layout *dst, size_t *runs_as)
{
    char key[320], why[256];
    *runs_as = i;
    layout_key(i, problem, threads, key, sizeof key);
    pthread_mutex_lock(&layout_lock);
    const struct layout_entry *hit = layout_lookup(key);
    if (hit) {
        convsel_status st = hit->status;
        *src = hit->src;
        *dst = hit->dst;
        *runs_as = hit->runs_as;
        pthread_mutex_unlock(&layout_lock);
        return st == CONVSEL_OK ? st
                                : convsel_error(st, "%s: not applicable to %s", convsel_primitives[i]->name,
                                                problem->name);
    }
    pthread_mutex_unlock(&layout_lock);

    const struct convsel_primitive *prim = convsel_primitives[i];
    convsel_status st;
    if (!convsel_primitive_applicable(i, problem, why, sizeof why)) {
        st = convsel_error(CONVSEL_NOT_APPLICABLE, "%s: %s", prim->name, why);
    } else if (prim->query_kernel) {
        const char *as = NULL;
        convsel_isa_lock();
        convsel_threads_set(threads);
        st = prim->query_kernel(problem, threads, src, dst, &as);
        for (size_t k = 0; st == CONVSEL_OK && as && k < convsel_primitives_count; k++)
            if (strcmp(convsel_primitives[k]->name, as) == 0)
                *runs_as = k;
    } else if (prim->query_layouts) {
        convsel_isa_lock();
        convsel_threads_set(threads);
        st = prim->query_layouts(problem, threads, src, dst);
    } else {
        /* No cheap query: create an instance on zero weights and ask it. */
        size_t n = convsel_problem_weights_elems(problem);
        float *weights = calloc(n ? n : 1, sizeof *weights);
        convsel_instance *inst = NULL;
        st = weights ? convsel_instance_create(i, problem, threads, weights, &inst)
                     : convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
        if (st == CONVSEL_OK) {
            *src = convsel_instance_src_layout(inst);
            *dst = convsel_instance_dst_layout(inst);
        }
        convsel_instance_destroy(inst);
        free(weights);
    }
    if (st == CONVSEL_OK || st == CONVSEL_NOT_APPLICABLE) {
        pthread_mutex_lock(&layout_lock);
        layout_store(key, st == CONVSEL_OK ? *src : CONVSEL_LAYOUT_NCHW, st == CONVSEL_OK ? *dst : CONVSEL_LAYOUT_NCHW,
                     *runs_as, st);
        pthread_mutex_unlock(&layout_lock);
    }
    return st;
}

convsel_status convsel_primitive_layouts_for(size_t i, const convsel_problem *problem, int threads,
                                             convsel_layout *src, convsel_layout *dst)
{
    size_t as;
    if (i >= convsel_primitives_count || !problem || !src || !dst)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "bad arguments to convsel_primitive_layouts_for");
    return kernel_query(i, problem, threads, src, dst, &as);
}

convsel_status convsel_primitive_runs_as(size_t i, const convsel_problem *problem, int threads, size_t *runs_as)
{
    convsel_layout src, dst;
    if (i >= convsel_primitives_count || !problem || !runs_as)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "bad arguments to convsel_primitive_runs_as");
    if (!convsel_primitives[i]->query_kernel) { /* its kernel is its own */
        *runs_as = i;
        return CONVSEL_OK;
    }
    return kernel_query(i, problem, threads, &src, &dst, runs_as);
}

/* ------------------------------------------------------------- selection */

struct candidate {
    size_t primitive;
    convsel_layout src, dst;
    double conv_ms;
    int naive; /* its kernel here is a library's reference loops */
};

struct layer_choices {
    const convsel_problem *problem;
    int connected;
    struct candidate *cands;
    size_t n;
};

static double reorder_cost(const convsel_cost_source *costs, int64_t mb, int64_t c, int64_t h, int64_t w,
                           convsel_layout from, convsel_layout to, int threads)
{
    double ms = 0.0;
    if (from == to)
        return 0.0;
    if (costs->reorder_ms(costs->ctx, mb, c, h, w, from, to, threads, &ms) != CONVSEL_OK || !(ms >= 0.0))
        return 0.0;
    return ms;
}

/* What q pays reading its input from memory in the boundary layout (the
 * network's input, an unconnected layer's): 0 unless the costs price it. */
static double cold_cost(const convsel_cost_source *costs, const convsel_problem *q, convsel_layout boundary,
                        int threads)
{
    double ms = 0.0;
    if (!costs->cold_read_ms ||
        costs->cold_read_ms(costs->ctx, q->mb, q->ic, q->ih, q->iw, boundary, threads, &ms) != CONVSEL_OK ||
        !(ms >= 0.0))
        return 0.0;
    return ms;
}

/* Cost of going from layer p writing p_dst to layer q reading q_src, split
 * into the part charged to p (its exit into the boundary layout, when q does
 * not read p's output) and to q (its entry reorder, and its cold read of the
 * boundary tensor). */
static void layer_transition(const convsel_cost_source *costs, const convsel_problem *p, convsel_layout p_dst,
                             const convsel_problem *q, convsel_layout q_src, int connected, convsel_layout boundary,
                             int threads, double *exit_ms, double *entry_ms, double *cold_ms)
{
    if (connected) {
        *exit_ms = *cold_ms = 0.0;
        *entry_ms = reorder_cost(costs, q->mb, q->ic, q->ih, q->iw, p_dst, q_src, threads);
    } else {
        *exit_ms = reorder_cost(costs, p->mb, p->oc, p->oh, p->ow, p_dst, boundary, threads);
        *entry_ms = reorder_cost(costs, q->mb, q->ic, q->ih, q->iw, boundary, q_src, threads);
        *cold_ms = cold_cost(costs, q, boundary, threads);
    }
}

/* layer_transition from candidate a of layer i-1 to candidate b of layer i,
 * the cold read counted in the entry. */
static void transition(const convsel_cost_source *costs, const struct layer_choices *prev,
                       const struct candidate *a, const struct layer_choices *cur, const struct candidate *b,
                       convsel_layout boundary, int threads, double *exit_ms, double *entry_ms)
{
    double cold_ms;
    layer_transition(costs, prev->problem, a->dst, cur->problem, b->src, cur->connected, boundary, threads, exit_ms,
                     entry_ms, &cold_ms);
    *entry_ms += cold_ms;
}

/* best(i, c) of docs/selection.md for one boundary layout, into fwd (and the
 * argmin predecessor into from, when not NULL). with_exit adds the last
 * layer's exit reorder into the boundary layout. */
static void forward_pass(const struct layer_choices *seq, size_t n, size_t max_c, const convsel_cost_source *costs,
                         convsel_layout boundary, int threads, int with_exit, double *fwd, int *from)
{
    for (size_t i = 0; i < n; i++) {
        const convsel_problem *q = seq[i].problem;
        for (size_t c = 0; c < seq[i].n; c++) {
            const struct candidate *b = &seq[i].cands[c];
            double best = DBL_MAX;
            int arg = -1;
            if (i == 0) {
                best = reorder_cost(costs, q->mb, q->ic, q->ih, q->iw, boundary, b->src, threads) +
                       cold_cost(costs, q, boundary, threads);
            } else {
                for (size_t a = 0; a < seq[i - 1].n; a++) {
                    double exit_ms, entry_ms;
                    transition(costs, &seq[i - 1], &seq[i - 1].cands[a], &seq[i], b, boundary, threads, &exit_ms,
                               &entry_ms);
                    double v = fwd[(i - 1) * max_c + a] + exit_ms + entry_ms;
                    if (v < best) {
                        best = v;
                        arg = (int)a;
                    }
                }
            }
            if (with_exit && i + 1 == n)
                best += reorder_cost(costs, q->mb, q->oc, q->oh, q->ow, b->dst, boundary, threads);
            fwd[i * max_c + c] = best + b->conv_ms;
            if (from)
                from[i * max_c + c] = arg;
        }
    }
}

static void free_choices(struct layer_choices *layers, size_t n)
{
    if (!layers)
        return;
    for (size_t i = 0; i < n; i++)
        free(layers[i].cands);
    free(layers);
}

/* Declared in internal.h. */
int convsel_select_allowed(size_t i, const convsel_problem *p, const convsel_select_options *opts, char *why,
                           size_t size)
{
    if (why && size)
        why[0] = '\0';
    if (convsel_primitive_is_reference(i) || (opts->excluded && opts->excluded[i]))
        return 0;
    if (opts->max_error > 0.0 && convsel_primitive_expected_error(i) > opts->max_error)
        return 0;
    return convsel_primitive_applicable(i, p, why, size);
}

/* Declared in internal.h. */
int convsel_select_runs_naive(size_t i, const convsel_problem *p, int threads)
{
    size_t as;
    return !convsel_primitive_is_reference(i) && convsel_primitive_runs_as(i, p, threads, &as) == CONVSEL_OK &&
           convsel_primitive_is_reference(as);
}

/* A candidate whose kernel is a library's reference loops (oneDNN's
 * "ref:any", 500-1250x slower than the fastest primitive where it was seen)
 * stays only when the layer has no other: a model that never saw such a
 * cliff on its CPU cannot price it. */
static void drop_naive(struct layer_choices *line)
{
    size_t kept = 0;
    for (size_t c = 0; c < line->n; c++)
        kept += !line->cands[c].naive;
    if (kept == 0 || kept == line->n)
        return;
    kept = 0;
    for (size_t c = 0; c < line->n; c++)
        if (!line->cands[c].naive)
            line->cands[kept++] = line->cands[c];
    line->n = kept;
}

/* The first earlier line with the same shape, or l itself. */
static size_t twin_of(const convsel_network *network, size_t l)
{
    const convsel_problem *p = convsel_network_layer(network, l);
    for (size_t k = 0; k < l; k++)
        if (convsel_problem_same_shape(convsel_network_layer(network, k), p))
            return k;
    return l;
}

/* With a batching cost source: every (distinct layer, allowed primitive)
 * priced in one call, into ms and status ([line * n_prims + primitive]; done
 * marks what was priced). Returns 0 when the source cannot batch or failed,
 * and gather asks one by one. */
static int prefetch(const convsel_network *network, const size_t *twin, const convsel_select_options *opts,
                    const convsel_cost_source *costs, double *ms, convsel_status *status, unsigned char *done)
{
    size_t n_lines = convsel_network_size(network), n_prims = convsel_primitive_count(), n = 0;
    if (!costs->conv_ms_batch)
        return 0;
    size_t cap = n_lines * n_prims + 1;
    const convsel_problem **problems = malloc(cap * sizeof *problems);
    size_t *prims = malloc(cap * sizeof *prims), *slot = malloc(cap * sizeof *slot);
    double *out = malloc(cap * sizeof *out);
    convsel_status *sts = malloc(cap * sizeof *sts);
    int ok = problems && prims && slot && out && sts;
    for (size_t l = 0; ok && l < n_lines; l++) {
        const convsel_problem *p = convsel_network_layer(network, l);
        if (twin[l] != l)
            continue;
        for (size_t i = 0; i < n_prims; i++)
            if (convsel_select_allowed(i, p, opts, NULL, 0)) {
                problems[n] = p;
                prims[n] = i;
                slot[n++] = l * n_prims + i;
            }
    }
    ok = ok && costs->conv_ms_batch(costs->ctx, n, problems, opts->threads, prims, out, sts) == CONVSEL_OK;
    for (size_t k = 0; ok && k < n; k++) {
        ms[slot[k]] = out[k];
        status[slot[k]] = sts[k];
        done[slot[k]] = 1;
    }
    free(problems);
    free(prims);
    free(slot);
    free(out);
    free(sts);
    return ok;
}

/* Collects every allowed, applicable primitive's candidate for each distinct
 * network line; expanded copies share their line's candidates. */
static convsel_status gather(const convsel_network *network, const convsel_select_options *opts,
                             const convsel_cost_source *costs, struct layer_choices **lines_out)
{
    size_t n_lines = convsel_network_size(network), n_prims = convsel_primitive_count();
    struct layer_choices *lines = calloc(n_lines, sizeof *lines);
    unsigned char *warned = calloc(n_prims, 1);
    size_t *twin = malloc((n_lines ? n_lines : 1) * sizeof *twin);
    if (!lines || !warned || !twin) {
        free(lines);
        free(warned);
        free(twin);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    }
    /* Real networks repeat shapes (ResNet's blocks): each is priced once,
     * at its first line, and later lines copy it. */
    for (size_t l = 0; l < n_lines; l++)
        twin[l] = twin_of(network, l);
    convsel_status st = CONVSEL_OK;
    double *pre_ms = malloc((n_lines * n_prims + 1) * sizeof *pre_ms);
    convsel_status *pre_st = malloc((n_lines * n_prims + 1) * sizeof *pre_st);
    unsigned char *pre_done = calloc(n_lines * n_prims + 1, 1);
    if (pre_ms && pre_st && pre_done)
        prefetch(network, twin, opts, costs, pre_ms, pre_st, pre_done);
    for (size_t l = 0; l < n_lines && st == CONVSEL_OK; l++) {
        const convsel_problem *p = convsel_network_layer(network, l);
        lines[l].problem = p;
        lines[l].cands = calloc(n_prims, sizeof *lines[l].cands);
        if (!lines[l].cands) {
            st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
            break;
        }
        if (twin[l] < l) {
            memcpy(lines[l].cands, lines[twin[l]].cands, lines[twin[l]].n * sizeof *lines[l].cands);
            lines[l].n = lines[twin[l]].n;
            continue;
        }
        char reasons[1024] = "";
        for (size_t i = 0; i < n_prims; i++) {
            char why[256];
            if (!convsel_select_allowed(i, p, opts, why, sizeof why)) {
                if (!why[0])
                    continue; /* excluded, not inapplicable */
                size_t len = strlen(reasons);
                snprintf(reasons + len, sizeof reasons - len, "%s%s: %s", len ? "; " : "", convsel_primitive_name(i),
                         why);
                continue;
            }
            double ms = 0.0;
            size_t at = l * n_prims + i;
            convsel_status cs = pre_done && pre_done[at] ? (ms = pre_ms[at], pre_st[at])
                                                         : costs->conv_ms(costs->ctx, p, opts->threads, i, &ms);
            if (cs == CONVSEL_NOT_FOUND) {
                if (opts->verbose && !warned[i])
                    fprintf(stderr, "convsel: warning: %s has no costs for %s; skipping it\n",
                            costs->id ? costs->id : "the cost source", convsel_primitive_name(i));
                warned[i] = 1;
                continue;
            }
            if (cs == CONVSEL_NOT_APPLICABLE)
                continue;
            if (cs != CONVSEL_OK) {
                st = cs;
                break;
            }
            struct candidate *c = &lines[l].cands[lines[l].n];
            cs = convsel_primitive_layouts_for(i, p, opts->threads, &c->src, &c->dst);
            if (cs == CONVSEL_NOT_APPLICABLE)
                continue;
            if (cs != CONVSEL_OK) {
                st = cs;
                break;
            }
            c->primitive = i;
            c->conv_ms = ms;
            c->naive = convsel_select_runs_naive(i, p, opts->threads);
            lines[l].n++;
        }
        drop_naive(&lines[l]);
        if (st == CONVSEL_OK && lines[l].n == 0)
            st = convsel_error(CONVSEL_NOT_APPLICABLE, "layer %zu '%s': no allowed primitive computes it%s%s", l + 1,
                               p->name[0] ? p->name : "unnamed", reasons[0] ? ": " : "", reasons);
    }
    free(warned);
    free(twin);
    free(pre_ms);
    free(pre_st);
    free(pre_done);
    if (st != CONVSEL_OK) {
        free_choices(lines, n_lines);
        return st;
    }
    *lines_out = lines;
    return CONVSEL_OK;
}

convsel_status convsel_select(const convsel_network *network, const convsel_select_options *opts_in,
                              const convsel_cost_source *costs, convsel_plan **plan_out)
{
    convsel_select_options opts = {1, 0.0, NULL, 0, 0};
    if (opts_in)
        opts = *opts_in;
    if (opts.threads < 1)
        opts.threads = 1;
    if (!network || !costs || !costs->conv_ms || !costs->reorder_ms || !plan_out)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_select: network, costs and plan are required");
    *plan_out = NULL;

    struct layer_choices *lines = NULL;
    convsel_status st = gather(network, &opts, costs, &lines);
    if (st != CONVSEL_OK)
        return st;

    /* Expand "*N" into N consecutive copies. */
    size_t n_lines = convsel_network_size(network), n = 0;
    for (size_t l = 0; l < n_lines; l++)
        n += (size_t)lines[l].problem->repeat;
    struct layer_choices *seq = calloc(n, sizeof *seq);
    size_t max_c = 0;
    for (size_t l = 0, k = 0; seq && l < n_lines; l++) {
        for (int r = 0; r < lines[l].problem->repeat; r++, k++) {
            seq[k] = lines[l];
            seq[k].connected = k > 0 && convsel_problem_feeds(seq[k - 1].problem, seq[k].problem);
        }
        max_c = CONVSEL_MAX(max_c, lines[l].n);
    }
    double *fwd = seq ? malloc(n * max_c * sizeof *fwd) : NULL;
    double *bwd = seq ? malloc(n * max_c * sizeof *bwd) : NULL;
    int *from = seq ? malloc(n * max_c * sizeof *from) : NULL;
    int *best_choice = seq ? malloc(n * sizeof *best_choice) : NULL;
    convsel_plan *plan = calloc(1, sizeof *plan);
    if (plan)
        plan->layers = calloc(n, sizeof *plan->layers);
    if (!seq || !fwd || !bwd || !from || !best_choice || !plan || !plan->layers) {
        st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
        goto done;
    }

    double best_total = DBL_MAX;
    convsel_layout best_boundary = CONVSEL_LAYOUT_NCHW;
    for (int bl = 0; bl < CONVSEL_LAYOUT_COUNT; bl++) {
        convsel_layout boundary = (convsel_layout)bl;
        forward_pass(seq, n, max_c, costs, boundary, opts.threads, 1, fwd, from);
        double total = DBL_MAX;
        int last = -1;
        for (size_t c = 0; c < seq[n - 1].n; c++) {
            if (fwd[(n - 1) * max_c + c] < total) {
                total = fwd[(n - 1) * max_c + c];
                last = (int)c;
            }
        }
        if (total < best_total) {
            best_total = total;
            best_boundary = boundary;
            best_choice[n - 1] = last;
            for (size_t i = n - 1; i > 0; i--)
                best_choice[i - 1] = from[i * max_c + best_choice[i]];
        }
    }

    /* Backward pass for the chosen boundary layout: the cheapest completion
     * from each (layer, candidate), to price the runner-up at every layer. */
    for (size_t ii = n; ii-- > 0;) {
        const convsel_problem *q = seq[ii].problem;
        for (size_t c = 0; c < seq[ii].n; c++) {
            const struct candidate *a = &seq[ii].cands[c];
            double best = DBL_MAX;
            if (ii + 1 == n) {
                best = reorder_cost(costs, q->mb, q->oc, q->oh, q->ow, a->dst, best_boundary, opts.threads);
            } else {
                for (size_t b = 0; b < seq[ii + 1].n; b++) {
                    double exit_ms, entry_ms;
                    transition(costs, &seq[ii], a, &seq[ii + 1], &seq[ii + 1].cands[b], best_boundary, opts.threads,
                               &exit_ms, &entry_ms);
                    double v = exit_ms + entry_ms + seq[ii + 1].cands[b].conv_ms + bwd[(ii + 1) * max_c + b];
                    if (v < best)
                        best = v;
                }
            }
            bwd[ii * max_c + c] = best;
        }
    }
    /* The forward pass again for the chosen boundary, without the final exit
     * reorder, which bwd already counts: fwd + bwd is the total through a
     * candidate. */
    forward_pass(seq, n, max_c, costs, best_boundary, opts.threads, 0, fwd, NULL);

    snprintf(plan->network, sizeof plan->network, "%s", convsel_network_name(network));
    plan->mb = seq[0].problem->mb;
    plan->threads = opts.threads;
    snprintf(plan->model_id, sizeof plan->model_id, "%s", costs->id ? costs->id : "");
    convsel_fingerprint_get(&plan->cpu);
    plan->boundary_layout = best_boundary;
    plan->n_layers = n;
    plan->total_ms = best_total;
    for (size_t i = 0; i < n; i++) {
        const struct candidate *b = &seq[i].cands[best_choice[i]];
        const convsel_problem *q = seq[i].problem;
        convsel_plan_layer *out = &plan->layers[i];
        out->problem = *q;
        out->problem.repeat = 1;
        out->connected = seq[i].connected;
        snprintf(out->primitive, sizeof out->primitive, "%s", convsel_primitive_name(b->primitive));
        out->src_layout = b->src;
        out->dst_layout = b->dst;
        out->conv_ms = b->conv_ms;
        if (i == 0) {
            out->reorder_in_ms = reorder_cost(costs, q->mb, q->ic, q->ih, q->iw, best_boundary, b->src, opts.threads);
            out->cold_in_ms = cold_cost(costs, q, best_boundary, opts.threads);
        } else {
            double exit_ms;
            layer_transition(costs, seq[i - 1].problem, seq[i - 1].cands[best_choice[i - 1]].dst, q, b->src,
                             seq[i].connected, best_boundary, opts.threads, &exit_ms, &out->reorder_in_ms,
                             &out->cold_in_ms);
            plan->layers[i - 1].reorder_out_ms = exit_ms;
        }
        if (i + 1 == n)
            out->reorder_out_ms = reorder_cost(costs, q->mb, q->oc, q->oh, q->ow, b->dst, best_boundary, opts.threads);
        /* Runner-up: the best total through another candidate of this layer. */
        double runner = DBL_MAX;
        int runner_c = -1;
        for (size_t c = 0; c < seq[i].n; c++) {
            if ((int)c == best_choice[i])
                continue;
            double through = fwd[i * max_c + c] + bwd[i * max_c + c];
            if (through < runner) {
                runner = through;
                runner_c = (int)c;
            }
        }
        if (runner_c >= 0) {
            snprintf(out->runner_up, sizeof out->runner_up, "%s",
                     convsel_primitive_name(seq[i].cands[runner_c].primitive));
            out->runner_up_margin_ms = runner - best_total;
        }
    }
    for (size_t i = 0; i < n; i++) {
        const convsel_plan_layer *l = &plan->layers[i];
        plan->reorder_ms += l->reorder_in_ms + l->reorder_out_ms + l->cold_in_ms;
    }
    if ((st = convsel_plan_made_with_init(&plan->made_with, &opts, 0, 0.0, 0, 0.0)) != CONVSEL_OK)
        goto done;
    *plan_out = plan;
    plan = NULL;

done:
    convsel_plan_destroy(plan);
    free(fwd);
    free(bwd);
    free(from);
    free(best_choice);
    free(seq);
    free_choices(lines, n_lines);
    return st;
}

convsel_status convsel_plan_price(const convsel_plan *plan, const convsel_cost_source *costs, double *conv_ms,
                                  double *reorder_ms)
{
    if (!plan || !costs || !conv_ms || !reorder_ms)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_plan_price: missing arguments");
    double conv = 0.0, reorder = 0.0;
    convsel_layout boundary = plan->boundary_layout;
    for (size_t i = 0; i < plan->n_layers; i++) {
        const convsel_plan_layer *l = &plan->layers[i];
        const convsel_problem *q = &l->problem;
        size_t idx;
        double ms;
        convsel_status st = convsel_primitive_find(l->primitive, &idx);
        if (st != CONVSEL_OK)
            return st;
        if ((st = costs->conv_ms(costs->ctx, q, plan->threads, idx, &ms)) != CONVSEL_OK)
            return convsel_error(st,
                                 "convsel_plan_price: layer %zu (%s): no cost for %s", i + 1, q->name, l->primitive);
        conv += ms;
        if (i == 0) {
            reorder += reorder_cost(costs, q->mb, q->ic, q->ih, q->iw, boundary, l->src_layout, plan->threads) +
                       cold_cost(costs, q, boundary, plan->threads);
        } else {
            const convsel_plan_layer *a = &plan->layers[i - 1];
            double exit_ms, entry_ms, cold_ms;
            layer_transition(costs, &a->problem, a->dst_layout, q, l->src_layout, l->connected, boundary,
                             plan->threads, &exit_ms, &entry_ms, &cold_ms);
            reorder += exit_ms + entry_ms + cold_ms;
        }
        if (i + 1 == plan->n_layers)
            reorder += reorder_cost(costs, q->mb, q->oc, q->oh, q->ow, l->dst_layout, boundary, plan->threads);
    }
    *conv_ms = conv;
    *reorder_ms = reorder;
    return CONVSEL_OK;
}
