/* Cold reads timed where a network pays them: the reorders that bring the
 * network's input, or an unconnected layer's, from the boundary layout into
 * the layer's, inside a plan run end to end, against the same reorder
 * repeated alone. A reorder only moves bytes, so what it loses inside the
 * network is what reading them from memory costs. */
#include <stdio.h>
#include <stdlib.h>

#include "convsel.h"
#include "internal.h"

/* Repetitions of a reorder alone; the median is kept. */
#define ALONE_REPS 11

/* Whether layer i of plan reads a tensor no layer just wrote. */
static int reads_cold(const convsel_plan *plan, size_t i)
{
    return i == 0 || !plan->layers[i].connected;
}

/* Gives layer i an allowed primitive reading another layout than boundary
 * (the catalogue order rotated by rot); returns 0, leaving the layer as it
 * is, when none does. */
static int read_other(convsel_plan *plan, size_t i, const unsigned char *allowed, convsel_layout boundary, size_t rot)
{
    convsel_plan_layer *l = &plan->layers[i];
    const size_t n = convsel_primitive_count();
    for (size_t k = 0; k < n; k++) {
        size_t p = (k + rot) % n;
        convsel_layout src, dst;
        if (!allowed[p] || convsel_primitive_layouts_for(p, &l->problem, plan->threads, &src, &dst) != CONVSEL_OK ||
            src == boundary)
            continue;
        snprintf(l->primitive, sizeof l->primitive, "%s", convsel_primitive_name(p));
        l->src_layout = src;
        l->dst_layout = dst;
        return 1;
    }
    return 0;
}

/* Runs plan end to end for about max_time_s and appends a sample for every
 * layer marked in sampled. */
static convsel_status time_plan(const convsel_plan *plan, const unsigned char *sampled, double max_time_s,
                                uint64_t seed, convsel_cold_sample **samples, size_t *n_samples)
{
    convsel_runner *runner = NULL;
    convsel_status st = convsel_probe_run(plan, max_time_s, CONVSEL_PROBE_MIN_RUNS, seed, &runner);
    for (size_t i = 0; st == CONVSEL_OK && i < plan->n_layers; i++) {
        if (!sampled[i])
            continue;
        const convsel_problem *q = &plan->layers[i].problem;
        double in_network, alone;
        if ((st = convsel_runner_entry_ms(runner, i, ALONE_REPS, &in_network, &alone)) != CONVSEL_OK)
            break;
        convsel_cold_sample *grown = realloc(*samples, (*n_samples + 1) * sizeof *grown); /* dozens at most */
        if (!grown) {
            st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
            break;
        }
        *samples = grown;
        grown[(*n_samples)++] =
            (convsel_cold_sample){q->mb, q->ic, q->ih, q->iw, plan->boundary_layout, plan->threads, in_network - alone};
    }
    convsel_runner_destroy(runner);
    return st;
}

convsel_status convsel_cold_probe(const convsel_network *network, int threads, const unsigned char *allowed,
                                  double max_time_s, uint64_t seed, convsel_cold_sample **samples, size_t *n_samples)
{
    if (!network || !allowed || !samples || !n_samples || threads < 1 || !(max_time_s > 0))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_cold_probe: bad arguments");
    convsel_plan *plan = NULL;
    convsel_status st = convsel_probe_skeleton(network, threads, allowed, &plan);
    if (st != CONVSEL_OK)
        return st;
    unsigned char *sampled = malloc(plan->n_layers);
    if (!sampled) {
        convsel_plan_destroy(plan);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    }
    for (int b = 0; b < CONVSEL_LAYOUT_COUNT && st == CONVSEL_OK; b++) {
        plan->boundary_layout = (convsel_layout)b;
        int any = 0;
        for (size_t i = 0; i < plan->n_layers; i++)
            any |= sampled[i] = reads_cold(plan, i) && read_other(plan, i, allowed, (convsel_layout)b, seed + i);
        if (any)
            st = time_plan(plan, sampled, max_time_s / CONVSEL_LAYOUT_COUNT, seed, samples, n_samples);
    }
    free(sampled);
    convsel_plan_destroy(plan);
    return st;
}
