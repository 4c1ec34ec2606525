/*
 * The training table: the conv records of several datasets with their
 * times, primitive ids, fingerprints deduplicated across datasets, and the
 * configuration ("layer") and network each belongs to.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model.h"

double convsel_record_ms(const convsel_record *record, convsel_statistic statistic)
{
    return convsel_statistic_pick(statistic, record->min_ms, record->p10_ms, record->median_ms);
}

void convsel_table_free(convsel_table *t)
{
    if (!t)
        return;
    free(t->records);
    free(t->ms);
    free(t->primitive);
    free(t->fingerprint);
    free(t->layer);
    free(t->network);
    free(t->names);
    free(t->dispatcher);
    free(t->catalogue);
    free(t->fingerprints);
    free(t->networks);
    memset(t, 0, sizeof *t);
}

typedef struct keyed {
    char key[CONVSEL_NAME_MAX + 160];
    size_t row;
} keyed;

static int cmp_keyed(const void *a, const void *b)
{
    const keyed *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    if (c)
        return c;
    return (x->row > y->row) - (x->row < y->row);
}

/* Sorts keys[0..n) and writes to ids[row] the rank of each distinct key;
 * returns the number of distinct keys. */
static size_t assign_ids(keyed *keys, size_t n, size_t *ids)
{
    qsort(keys, n, sizeof *keys, cmp_keyed);
    size_t distinct = 0;
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && strcmp(keys[i].key, keys[i - 1].key) != 0)
            distinct++;
        ids[keys[i].row] = distinct;
    }
    return n ? distinct + 1 : 0;
}

static int usable(const convsel_record *r, convsel_statistic statistic)
{
    double ms = convsel_record_ms(r, statistic);
    return r->kind == CONVSEL_RECORD_CONV && isfinite(ms) && ms > 0 && r->threads >= 1 &&
           convsel_problem_validate(&r->problem) == CONVSEL_OK;
}

convsel_status convsel_table_build(const convsel_dataset *const *sets, size_t n_sets, convsel_statistic statistic,
                                   convsel_table *t)
{
    memset(t, 0, sizeof *t);
    size_t n = 0, n_fps = 0;
    for (size_t s = 0; s < n_sets; s++) {
        if (!sets[s])
            return convsel_error(CONVSEL_INVALID_ARGUMENT, "dataset %zu is NULL", s);
        for (size_t i = 0; i < convsel_dataset_size(sets[s]); i++)
            n += usable(convsel_dataset_record(sets[s], i), statistic);
        n_fps += convsel_dataset_fingerprint_count(sets[s]);
    }
    size_t cap = n ? n : 1;
    t->records = malloc(cap * sizeof *t->records);
    t->ms = malloc(cap * sizeof *t->ms);
    t->primitive = malloc(cap * sizeof *t->primitive);
    t->fingerprint = malloc(cap * sizeof *t->fingerprint);
    t->layer = malloc(cap * sizeof *t->layer);
    t->network = malloc(cap * sizeof *t->network);
    t->fingerprints = malloc((n_fps ? n_fps : 1) * sizeof *t->fingerprints);
    keyed *keys = malloc(cap * sizeof *keys);
    size_t *ids = malloc(cap * sizeof *ids);
    if (!t->records || !t->ms || !t->primitive || !t->fingerprint || !t->layer || !t->network || !t->fingerprints ||
        !keys || !ids) {
        free(keys);
        free(ids);
        convsel_table_free(t);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory building a table of %zu records", n);
    }

    /* Fingerprints: one entry per distinct setup across datasets: CPU, ISA
     * cap and OpenBLAS's kernels (the same CPU with AVX2 and AVX-512 GEMM
     * kernels is two sets of layers, told apart by the blas_isa feature). */
    size_t row = 0;
    for (size_t s = 0; s < n_sets; s++) {
        size_t nf = convsel_dataset_fingerprint_count(sets[s]);
        uint32_t map_small[64], *map = nf <= 64 ? map_small : malloc(nf * sizeof *map);
        if (!map) {
            free(keys);
            free(ids);
            convsel_table_free(t);
            return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
        }
        for (size_t f = 0; f < nf; f++) {
            const convsel_fingerprint *fp = convsel_dataset_fingerprint(sets[s], f);
            size_t k = 0;
            while (k < t->n_fingerprints && !convsel_fingerprint_same_setup(&t->fingerprints[k], fp))
                k++;
            if (k == t->n_fingerprints)
                t->fingerprints[t->n_fingerprints++] = *fp;
            map[f] = (uint32_t)k;
        }
        for (size_t i = 0; i < convsel_dataset_size(sets[s]); i++) {
            const convsel_record *r = convsel_dataset_record(sets[s], i);
            if (!usable(r, statistic) || r->fingerprint >= nf)
                continue;
            t->records[row] = r;
            t->ms[row] = convsel_record_ms(r, statistic);
            t->fingerprint[row] = map[r->fingerprint];
            row++;
        }
        if (map != map_small)
            free(map);
    }
    t->n = row;

    /* Primitive names, sorted, so ids do not depend on record order. */
    for (size_t i = 0; i < t->n; i++) {
        snprintf(keys[i].key, sizeof keys[i].key, "%.*s", CONVSEL_PRIMITIVE_NAME_MAX - 1, t->records[i]->primitive);
        keys[i].row = i;
    }
    t->n_names = assign_ids(keys, t->n, ids);
    t->names = calloc(t->n_names ? t->n_names : 1, sizeof *t->names);
    t->dispatcher = calloc(t->n_names ? t->n_names : 1, 1);
    t->catalogue = malloc((t->n_names ? t->n_names : 1) * sizeof *t->catalogue);
    if (!t->names || !t->dispatcher || !t->catalogue) {
        free(keys);
        free(ids);
        convsel_table_free(t);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    }
    for (size_t i = 0; i < t->n; i++) {
        t->primitive[keys[i].row] = (int32_t)ids[keys[i].row];
        snprintf(t->names[ids[keys[i].row]], CONVSEL_PRIMITIVE_NAME_MAX, "%s", keys[i].key);
    }
    for (size_t k = 0; k < t->n_names; k++) {
        t->catalogue[k] = convsel_primitive_index(t->names[k]);
        t->dispatcher[k] = t->catalogue[k] != SIZE_MAX && convsel_primitive_is_dispatcher(t->catalogue[k]);
    }

    /* Layers: the shape without its name, the threads and the CPU. */
    for (size_t i = 0; i < t->n; i++) {
        convsel_problem shape = t->records[i]->problem;
        shape.name[0] = '\0';
        shape.repeat = 1;
        int len = convsel_problem_format(&shape, keys[i].key, sizeof keys[i].key);
        if (len < 0 || (size_t)len >= sizeof keys[i].key)
            len = 0;
        snprintf(keys[i].key + len, sizeof keys[i].key - (size_t)len, "/t%d/f%u", t->records[i]->threads,
                 t->fingerprint[i]);
        keys[i].row = i;
    }
    t->n_layers = assign_ids(keys, t->n, t->layer);

    /* Networks: the name up to its first ':'; names without one are not in a
     * network (sampled configurations). */
    size_t n_named = 0;
    for (size_t i = 0; i < t->n; i++) {
        const char *name = t->records[i]->problem.name;
        const char *colon = strchr(name, ':');
        t->network[i] = -1;
        if (!colon || colon == name)
            continue;
        snprintf(keys[n_named].key, sizeof keys[n_named].key, "%.*s", (int)(colon - name), name);
        keys[n_named].row = i;
        n_named++;
    }
    t->n_networks = assign_ids(keys, n_named, ids);
    t->networks = calloc(t->n_networks ? t->n_networks : 1, sizeof *t->networks);
    if (!t->networks) {
        free(keys);
        free(ids);
        convsel_table_free(t);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    }
    for (size_t i = 0; i < n_named; i++) {
        size_t id = ids[keys[i].row];
        t->network[keys[i].row] = (int32_t)id;
        snprintf(t->networks[id], CONVSEL_NAME_MAX, "%s", keys[i].key);
    }
    free(keys);
    free(ids);
    return CONVSEL_OK;
}

void convsel_groups_free(convsel_groups *groups)
{
    if (!groups)
        return;
    free(groups->order);
    free(groups->start);
    memset(groups, 0, sizeof *groups);
}

convsel_status convsel_groups_build(size_t n, const size_t *layer, size_t n_layers, convsel_groups *groups)
{
    memset(groups, 0, sizeof *groups);
    size_t *start = calloc(n_layers + 1, sizeof *start);
    size_t *order = malloc((n ? n : 1) * sizeof *order);
    if (!start || !order) {
        free(start);
        free(order);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory grouping %zu rows", n);
    }
    for (size_t i = 0; i < n; i++) {
        if (layer[i] >= n_layers) {
            free(start);
            free(order);
            return convsel_error(CONVSEL_INVALID_ARGUMENT, "row %zu: layer %zu of %zu", i, layer[i], n_layers);
        }
        start[layer[i] + 1]++;
    }
    for (size_t l = 0; l < n_layers; l++)
        start[l + 1] += start[l];
    /* A counting sort, stable; placing a row moves its layer's start on, so
     * afterwards start[l] is where layer l + 1 begins: shift back by one. */
    for (size_t i = 0; i < n; i++)
        order[start[layer[i]]++] = i;
    memmove(start + 1, start, n_layers * sizeof *start);
    start[0] = 0;
    *groups = (convsel_groups){.n_groups = n_layers, .order = order, .start = start};
    return CONVSEL_OK;
}
