/* calibrate's candidates: the pool of configurations it may profile (layers of
 * network files and configurations sampled around them, at each thread count),
 * and profiling the chosen ones. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calibrate_pool.h"

#define CMD "calibrate"

/* ---------------------------------------------------------------- the pool */

void cli_pool_free(cli_pool *c)
{
    for (size_t i = 0; i < c->n_networks; i++)
        convsel_network_destroy(c->networks[i]);
    free(c->networks);
    free(c->items);
}

static int pool_add(cli_pool *c, const convsel_problem *problem, int threads)
{
    if (c->n == c->cap) {
        size_t cap = c->cap ? 2 * c->cap : 256;
        convsel_calibrate_candidate *bigger = realloc(c->items, cap * sizeof *bigger);
        if (!bigger)
            return -1;
        c->items = bigger;
        c->cap = cap;
    }
    memset(&c->items[c->n], 0, sizeof c->items[c->n]);
    c->items[c->n].problem = *problem;
    c->items[c->n].threads = threads;
    c->n++;
    return 0;
}

static int is_dir(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 && S_ISDIR(sb.st_mode);
}

int cli_pool_default_dir(char *buf, size_t size)
{
    if (is_dir("networks")) {
        snprintf(buf, size, "networks");
        return 1;
    }
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len <= 0)
        return 0;
    exe[len] = '\0';
    char *slash = strrchr(exe, '/');
    if (slash)
        *slash = '\0';
    static const char *const rel[] = {"../networks", "../share/convsel/networks"};
    for (size_t i = 0; i < 2; i++) {
        snprintf(buf, size, "%.3000s/%s", exe, rel[i]);
        if (is_dir(buf))
            return 1;
    }
    return 0;
}

/* The layers of a network file, or of every *.txt in a directory. */
static int add_network_file(const char *path, double max_flops, const int *threads, size_t n_threads, cli_pool *c,
                            size_t *added)
{
    convsel_network *net;
    convsel_status st = convsel_network_load(path, 1, &net);
    if (st != CONVSEL_OK)
        return cli_fail(CMD, st);
    convsel_network **grown = realloc(c->networks, (c->n_networks + 1) * sizeof *grown);
    if (!grown) {
        convsel_network_destroy(net);
        fprintf(stderr, "convsel %s: out of memory\n", CMD);
        return CLI_FAIL;
    }
    c->networks = grown;
    c->networks[c->n_networks++] = net; /* the candidates own it from here */
    for (size_t i = 0; i < convsel_network_size(net); i++) {
        const convsel_problem *p = convsel_network_layer(net, i);
        if (convsel_problem_flops(p) > max_flops)
            continue;
        for (size_t t = 0; t < n_threads; t++) {
            if (pool_add(c, p, threads[t])) {
                fprintf(stderr, "convsel %s: out of memory\n", CMD);
                return CLI_FAIL;
            }
            (*added)++;
        }
    }
    return CLI_OK;
}

int cli_pool_add_path(const char *path, double max_flops, const int *threads, size_t n_threads, cli_pool *c,
                      size_t *added)
{
    /* A directory's files sorted: the same pool whatever readdir's order. */
    char **files;
    size_t n;
    convsel_status st = convsel_network_files(path, &files, &n);
    if (st != CONVSEL_OK)
        return cli_fail(CMD, st);
    int rc = CLI_OK;
    for (size_t i = 0; rc == CLI_OK && i < n; i++)
        rc = add_network_file(files[i], max_flops, threads, n_threads, c, added);
    convsel_network_files_free(files, n);
    return rc;
}

int cli_pool_add_sampled(const char *const *paths, size_t n_paths, long n, uint64_t seed, double max_flops,
                         const int *threads, size_t n_threads, cli_pool *c)
{
    convsel_sampler_options so;
    convsel_sampler_options_default(&so);
    so.seed = seed;
    so.max_flops = max_flops;
    convsel_sampler *sampler;
    convsel_status st = convsel_sampler_create(&so, &sampler);
    for (size_t i = 0; st == CONVSEL_OK && i < n_paths; i++)
        st = convsel_sampler_add_file(sampler, paths[i], NULL);
    for (long i = 0; st == CONVSEL_OK && i < n; i++) {
        convsel_problem p;
        st = convsel_sampler_next(sampler, &p);
        for (size_t t = 0; st == CONVSEL_OK && t < n_threads; t++)
            if (pool_add(c, &p, threads[t]))
                st = CONVSEL_OUT_OF_MEMORY;
    }
    convsel_sampler_destroy(sampler);
    return st == CONVSEL_OK ? CLI_OK : cli_fail(CMD, st);
}

/* ---------------------------------------------------------------- profiling */

int cli_pool_profile(const cli_pool *c, const size_t *chosen, size_t k, const unsigned char *selected,
                     const convsel_timing_options *timing, const convsel_fingerprint *cpu, double deadline, int quiet,
                     convsel_dataset *out, size_t *n_done)
{
    *n_done = 0;
    uint32_t fi;
    convsel_status st = convsel_dataset_add_fingerprint(out, cpu, &fi);
    if (st != CONVSEL_OK)
        return cli_fail(CMD, st);
    convsel_measurement *m = calloc(convsel_primitive_count(), sizeof *m);
    if (!m) {
        fprintf(stderr, "convsel %s: out of memory\n", CMD);
        return CLI_FAIL;
    }
    const convsel_isa isa = convsel_get_isa();
    const double t_first = cli_now();
    for (size_t s = 0; s < k; s++) {
        const double now = cli_now();
        if (deadline > 0 && s >= CLI_POOL_MIN_SAMPLES && now + (now - t_first) / (double)s > deadline)
            break;
        const convsel_calibrate_candidate *cand = &c->items[chosen[s]];
        char desc[512];
        convsel_problem_format(&cand->problem, desc, sizeof desc);
        double t0 = cli_now();
        st = convsel_measure_problem(&cand->problem, cand->threads, selected, timing, m);
        if (st != CONVSEL_OK) {
            free(m);
            return cli_fail(CMD, st);
        }
        size_t measured = 0;
        for (size_t i = 0; i < convsel_primitive_count() && st == CONVSEL_OK; i++) {
            if (!m[i].applicable)
                continue;
            convsel_record r;
            memset(&r, 0, sizeof r);
            r.kind = CONVSEL_RECORD_CONV;
            r.problem = cand->problem;
            snprintf(r.primitive, sizeof r.primitive, "%s", convsel_primitive_name(i));
            if (m[i].kernel != SIZE_MAX)
                snprintf(r.kernel, sizeof r.kernel, "%s", convsel_primitive_name(m[i].kernel));
            r.from = m[i].src_layout;
            r.to = m[i].dst_layout;
            r.threads = cand->threads;
            r.isa = isa;
            r.fingerprint = fi;
            r.min_ms = m[i].timing.min_ms;
            r.p10_ms = m[i].timing.p10_ms;
            r.median_ms = m[i].timing.median_ms;
            r.p90_ms = m[i].timing.p90_ms;
            r.runs = m[i].timing.runs;
            r.create_ms = m[i].create_ms;
            r.tensor = CONVSEL_TENSOR_SRC;
            st = convsel_dataset_append(out, &r);
            measured++;
        }
        if (st != CONVSEL_OK) {
            free(m);
            return cli_fail(CMD, st);
        }
        if (!quiet)
            fprintf(stderr, "convsel %s: [%zu/%zu] %s t%d: %zu primitives, %.2f s\n", CMD, s + 1, k,
                    cand->problem.name[0] ? cand->problem.name : desc, cand->threads, measured, cli_now() - t0);
        *n_done = s + 1;
    }
    free(m);
    return CLI_OK;
}
