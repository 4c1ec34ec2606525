/*
 * The profiler: configurations (shapes × thread counts) measured one after
 * another into a dataset file.
 *
 * A configuration is the unit of everything here: its primitives are timed
 * against each other in one interleaved measurement (numbers from separate
 * measurements drift 1.4× on these machines), its reorders likewise, and its
 * records reach the file together, flushed and fsynced, so a killed profile
 * loses at most the configuration in flight and a resumed one knows exactly
 * which configurations are done.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset_internal.h"
#include "internal.h"

void convsel_profile_options_default(convsel_profile_options *opts)
{
    if (!opts)
        return;
    memset(opts, 0, sizeof *opts);
    convsel_timing_options_default(&opts->timing);
    opts->reorders = 1;
    opts->shard_count = 1;
    opts->mode = CONVSEL_WRITE_CREATE;
}

struct config {
    const convsel_problem *problem;
    int threads;
};

/* A reorder being timed: from the buffer of one layout into another's. */
struct reorder_candidate {
    convsel_reorder *reorder;
    const float *src;
    float *dst;
};

static convsel_status reorder_candidate_run(void *ctx)
{
    struct reorder_candidate *c = ctx;
    return convsel_reorder_run(c->reorder, c->src, c->dst);
}

static void fill_record(convsel_record *r, const struct config *cfg, convsel_isa isa, const convsel_timing *t,
                        double create_ms)
{
    memset(r, 0, sizeof *r);
    r->problem = *cfg->problem;
    r->threads = cfg->threads;
    r->isa = isa;
    r->min_ms = t->min_ms;
    r->p10_ms = t->p10_ms;
    r->median_ms = t->median_ms;
    r->p90_ms = t->p90_ms;
    r->runs = t->runs;
    r->create_ms = create_ms;
}

/*
 * Times every reorder between the layouts in `used` of one activation
 * (mb × c × h × w), interleaved, and appends the records. One buffer per
 * layout serves as source of the reorders out of it and destination of those
 * into it: the contents do not matter for timing, and four buffers instead of
 * twelve keep the memory at most four tensors.
 */
static convsel_status profile_reorders(const struct config *cfg, convsel_tensor tensor, const int *used,
                                       const convsel_timing_options *timing, convsel_isa isa,
                                       convsel_dataset_writer *writer, size_t *records)
{
    const convsel_problem *p = cfg->problem;
    const int64_t mb = p->mb, c = tensor == CONVSEL_TENSOR_SRC ? p->ic : p->oc;
    const int64_t h = tensor == CONVSEL_TENSOR_SRC ? p->ih : p->oh, w = tensor == CONVSEL_TENSOR_SRC ? p->iw : p->ow;
    float *buffers[CONVSEL_LAYOUT_COUNT] = {0};
    struct reorder_candidate cands[CONVSEL_LAYOUT_COUNT * CONVSEL_LAYOUT_COUNT];
    convsel_timed_fn fns[CONVSEL_LAYOUT_COUNT * CONVSEL_LAYOUT_COUNT];
    void *ctxs[CONVSEL_LAYOUT_COUNT * CONVSEL_LAYOUT_COUNT];
    convsel_timing results[CONVSEL_LAYOUT_COUNT * CONVSEL_LAYOUT_COUNT];
    double create_ms[CONVSEL_LAYOUT_COUNT * CONVSEL_LAYOUT_COUNT];
    convsel_layout from[CONVSEL_LAYOUT_COUNT * CONVSEL_LAYOUT_COUNT], to[CONVSEL_LAYOUT_COUNT * CONVSEL_LAYOUT_COUNT];
    size_t n = 0;
    convsel_status st = CONVSEL_OK;

    for (int l = 0; l < CONVSEL_LAYOUT_COUNT && st == CONVSEL_OK; l++) {
        if (!used[l])
            continue;
        size_t elems = convsel_layout_elems((convsel_layout)l, mb, c, h, w);
        buffers[l] = convsel_alloc(elems * sizeof(float));
        if (!buffers[l])
            st = convsel_error(CONVSEL_OUT_OF_MEMORY, "reorders: out of memory for a %lldx%lldx%lldx%lld tensor",
                               (long long)mb, (long long)c, (long long)h, (long long)w);
        else
            convsel_fill_random(buffers[l], elems, 0x72656f72ull + (uint64_t)l);
    }
    for (int a = 0; a < CONVSEL_LAYOUT_COUNT && st == CONVSEL_OK; a++) {
        for (int b = 0; b < CONVSEL_LAYOUT_COUNT && st == CONVSEL_OK; b++) {
            if (a == b || !used[a] || !used[b])
                continue;
            struct reorder_candidate *cand = &cands[n];
            double t0 = convsel_now();
            st = convsel_reorder_create(mb, c, h, w, (convsel_layout)a, (convsel_layout)b, cfg->threads,
                                        &cand->reorder);
            if (st != CONVSEL_OK)
                break;
            create_ms[n] = 1e3 * (convsel_now() - t0);
            cand->src = buffers[a];
            cand->dst = buffers[b];
            from[n] = (convsel_layout)a;
            to[n] = (convsel_layout)b;
            fns[n] = reorder_candidate_run;
            ctxs[n] = cand;
            n++;
        }
    }
    if (st == CONVSEL_OK && n > 0)
        st = convsel_time_interleaved(n, fns, ctxs, timing, results);
    for (size_t k = 0; k < n && st == CONVSEL_OK; k++) {
        convsel_record r;
        fill_record(&r, cfg, isa, &results[k], create_ms[k]);
        r.kind = CONVSEL_RECORD_REORDER;
        r.tensor = tensor;
        snprintf(r.primitive, sizeof r.primitive, "reorder");
        r.from = from[k];
        r.to = to[k];
        st = convsel_dataset_writer_append(writer, &r);
        if (st == CONVSEL_OK)
            (*records)++;
    }
    for (size_t k = 0; k < n; k++)
        convsel_reorder_destroy(cands[k].reorder);
    for (int l = 0; l < CONVSEL_LAYOUT_COUNT; l++)
        convsel_free(buffers[l]);
    return st;
}

/* One configuration: records appended to the writer (not yet flushed).
 * Returns the measurement's error, with *appended records buffered. A
 * failure of the reorders alone keeps the convolution records and is
 * reported in *warning. */
static convsel_status profile_config(const struct config *cfg, const convsel_profile_options *opts,
                                     convsel_measurement *out, convsel_dataset_writer *writer, size_t *appended,
                                     char *warning, size_t warning_size)
{
    const convsel_isa isa = convsel_get_isa();
    *appended = 0;
    warning[0] = '\0';
    convsel_status st = convsel_measure_problem(cfg->problem, cfg->threads, opts->selected, &opts->timing, out);
    if (st != CONVSEL_OK)
        return st;
    int used[CONVSEL_LAYOUT_COUNT] = {0};
    used[CONVSEL_LAYOUT_NCHW] = 1; /* what a network's input and output come in */
    for (size_t i = 0; i < convsel_primitive_count() && st == CONVSEL_OK; i++) {
        const convsel_measurement *m = &out[i];
        if (!m->applicable)
            continue;
        convsel_record r;
        fill_record(&r, cfg, isa, &m->timing, m->create_ms);
        r.kind = CONVSEL_RECORD_CONV;
        r.tensor = CONVSEL_TENSOR_SRC;
        snprintf(r.primitive, sizeof r.primitive, "%s", convsel_primitive_name(i));
        if (m->kernel != SIZE_MAX)
            snprintf(r.kernel, sizeof r.kernel, "%s", convsel_primitive_name(m->kernel));
        r.from = m->src_layout;
        r.to = m->dst_layout;
        used[m->src_layout] = used[m->dst_layout] = 1;
        st = convsel_dataset_writer_append(writer, &r);
        if (st == CONVSEL_OK)
            (*appended)++;
    }
    if (st != CONVSEL_OK || !opts->reorders || *appended == 0)
        return st;
    size_t reorders = 0;
    convsel_status rst = profile_reorders(cfg, CONVSEL_TENSOR_SRC, used, &opts->timing, isa, writer, &reorders);
    if (rst == CONVSEL_OK)
        rst = profile_reorders(cfg, CONVSEL_TENSOR_DST, used, &opts->timing, isa, writer, &reorders);
    *appended += reorders;
    if (rst == CONVSEL_IO_ERROR)
        return rst;
    if (rst != CONVSEL_OK)
        snprintf(warning, warning_size, "reorders not measured: %s", convsel_last_error());
    return CONVSEL_OK;
}

static void report(const convsel_profile_options *opts, convsel_profile_progress *progress, double t0,
                   const struct config *current, const char *message)
{
    if (!opts->progress)
        return;
    progress->elapsed_s = convsel_now() - t0;
    progress->current = current ? current->problem : NULL;
    progress->threads = current ? current->threads : 0;
    progress->message = message;
    opts->progress(progress, opts->progress_ctx);
}

static convsel_status check_options(const convsel_profile_options *o)
{
    for (size_t t = 0; t < o->n_threads; t++)
        if (o->threads[t] < 1 || o->threads[t] > 4096)
            return convsel_error(CONVSEL_INVALID_ARGUMENT, "profile: thread count %d out of range", o->threads[t]);
    if (o->n_threads > 0 && !o->threads)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "profile: n_threads is %zu but threads is NULL", o->n_threads);
    if (o->shard_count < 1 || o->shard_index >= o->shard_count)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "profile: shard %u/%u (need 0 <= I < N)", o->shard_index,
                             o->shard_count);
    if (!(o->budget_s >= 0.0))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "profile: budget must be >= 0 seconds");
    return CONVSEL_OK;
}

/* The configurations of this shard, thread-count-major: the timing engine
 * pauses whenever the thread count changes, so keep those changes few. */
static convsel_status build_configs(const convsel_problem *problems, size_t n, const int *threads, size_t n_threads,
                                    const convsel_profile_options *opts, struct config **configs, size_t *count,
                                    size_t *total)
{
    char key[CONVSEL_KEY_MAX];
    struct convsel_strmap shapes;
    convsel_strmap_init(&shapes);
    const convsel_problem **distinct = malloc((n ? n : 1) * sizeof *distinct);
    *configs = malloc((n ? n : 1) * (n_threads ? n_threads : 1) * sizeof **configs);
    if (!distinct || !*configs) {
        free(distinct);
        free(*configs);
        *configs = NULL;
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "profile: out of memory");
    }
    size_t n_distinct = 0, n_shard = 0;
    convsel_status st = CONVSEL_OK;
    for (size_t i = 0; i < n && st == CONVSEL_OK; i++) {
        if (convsel_problem_validate(&problems[i]) != CONVSEL_OK) {
            char desc[CONVSEL_KEY_MAX];
            convsel_problem_format(&problems[i], desc, sizeof desc);
            st = convsel_error(CONVSEL_INVALID_ARGUMENT, "profile: invalid problem %s: %s", desc,
                               convsel_last_error());
            break;
        }
        convsel_shape_key(&problems[i], key, sizeof key);
        int put = convsel_strmap_put(&shapes, key, i);
        if (put < 0)
            st = convsel_error(CONVSEL_OUT_OF_MEMORY, "profile: out of memory");
        else if (put == 1 && convsel_hash_str(key) % opts->shard_count == opts->shard_index)
            distinct[n_shard++] = &problems[i];
        n_distinct += put == 1;
    }
    for (size_t t = 0; t < n_threads && st == CONVSEL_OK; t++)
        for (size_t i = 0; i < n_shard; i++)
            (*configs)[t * n_shard + i] = (struct config){distinct[i], threads[t]};
    *count = n_shard * n_threads;
    *total = n_distinct * n_threads;
    convsel_strmap_free(&shapes);
    free(distinct);
    if (st != CONVSEL_OK) {
        free(*configs);
        *configs = NULL;
    }
    return st;
}

/* The configurations already in a resumed file ("shape/tN" of the records of
 * this machine's fingerprint). A configuration's records are flushed
 * together, so one convolution record means the configuration is done. */
static convsel_status done_configs(const convsel_dataset_writer *writer, struct convsel_strmap *done)
{
    char shape[CONVSEL_KEY_MAX], key[CONVSEL_KEY_MAX + 16];
    const convsel_dataset *existing = convsel_dataset_writer_existing(writer);
    const uint32_t fp = convsel_dataset_writer_fingerprint_index(writer);
    for (size_t i = 0; i < convsel_dataset_size(existing); i++) {
        const convsel_record *r = convsel_dataset_record(existing, i);
        if (r->kind != CONVSEL_RECORD_CONV || r->fingerprint != fp)
            continue;
        convsel_shape_key(&r->problem, shape, sizeof shape);
        snprintf(key, sizeof key, "%s/t%d", shape, r->threads);
        if (convsel_strmap_put(done, key, i) < 0)
            return convsel_error(CONVSEL_OUT_OF_MEMORY, "profile: out of memory");
    }
    return CONVSEL_OK;
}

convsel_status convsel_profile_run(const convsel_problem *problems, size_t n, const convsel_profile_options *opts,
                                   const char *path, convsel_profile_result *result)
{
    static const int default_threads[] = {1};
    char shape[CONVSEL_KEY_MAX], key[CONVSEL_KEY_MAX + 16], warning[1200], message[1600];
    convsel_profile_result res;
    memset(&res, 0, sizeof res);
    if (result)
        *result = res;
    if (!opts || !path || (!problems && n > 0))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "profile: options, path and problems are required");
    convsel_status st = check_options(opts);
    if (st != CONVSEL_OK)
        return st;
    const int *threads = opts->n_threads ? opts->threads : default_threads;
    const size_t n_threads = opts->n_threads ? opts->n_threads : 1;

    struct config *configs = NULL;
    size_t n_configs = 0;
    if ((st = build_configs(problems, n, threads, n_threads, opts, &configs, &n_configs, &res.configs)) != CONVSEL_OK)
        return st;
    res.in_shard = n_configs;

    convsel_fingerprint fp;
    convsel_dataset_writer *writer = NULL;
    convsel_measurement *out = calloc(convsel_primitive_count() ? convsel_primitive_count() : 1, sizeof *out);
    unsigned char *skip = calloc(n_configs ? n_configs : 1, 1);
    struct convsel_strmap done;
    convsel_strmap_init(&done);
    if (!out || !skip)
        st = convsel_error(CONVSEL_OUT_OF_MEMORY, "profile: out of memory");
    if (st == CONVSEL_OK)
        st = convsel_fingerprint_get(&fp);
    if (st == CONVSEL_OK)
        st = convsel_dataset_writer_open(path, &fp, opts->mode, &writer);
    if (st == CONVSEL_OK)
        st = done_configs(writer, &done);
    for (size_t i = 0; i < n_configs && st == CONVSEL_OK; i++) {
        convsel_shape_key(configs[i].problem, shape, sizeof shape);
        snprintf(key, sizeof key, "%s/t%d", shape, configs[i].threads);
        skip[i] = (unsigned char)convsel_strmap_get(&done, key, NULL);
        res.skipped += skip[i];
    }

    convsel_profile_progress progress;
    memset(&progress, 0, sizeof progress);
    progress.total = n_configs - res.skipped;
    progress.skipped = res.configs - n_configs + res.skipped;
    const double t0 = convsel_now();
    double busy_s = 0.0;
    for (size_t i = 0; i < n_configs && st == CONVSEL_OK; i++) {
        if (skip[i])
            continue;
        if (opts->stop && *opts->stop) {
            res.interrupted = 1;
            break;
        }
        const double now = convsel_now() - t0;
        const size_t finished = res.done + res.failed;
        if (opts->budget_s > 0.0 &&
            (now >= opts->budget_s || (finished > 0 && now + busy_s / (double)finished > opts->budget_s))) {
            res.budget_reached = 1;
            break;
        }
        report(opts, &progress, t0, &configs[i], NULL);
        const double c0 = convsel_now();
        size_t appended = 0;
        st = profile_config(&configs[i], opts, out, writer, &appended, warning, sizeof warning);
        busy_s += convsel_now() - c0;
        if (st == CONVSEL_IO_ERROR)
            break;
        convsel_problem_format(configs[i].problem, shape, sizeof shape);
        if (st != CONVSEL_OK) {
            convsel_dataset_writer_discard(writer);
            /* One configuration a backend cannot do is no reason to stop a
             * campaign: it is reported, counted, and retried on resume. */
            snprintf(message, sizeof message, "%s at %d threads failed: %s", shape, configs[i].threads,
                     convsel_last_error());
            st = CONVSEL_OK;
            res.failed++;
            progress.failed++;
            report(opts, &progress, t0, NULL, message);
            continue;
        }
        if ((st = convsel_dataset_writer_flush(writer)) != CONVSEL_OK)
            break;
        res.done++;
        res.records += appended;
        for (size_t k = 0; k < convsel_primitive_count(); k++)
            if (out[k].applicable && out[k].timing.retried) {
                res.retried++;
                break;
            }
        progress.done++;
        progress.records += appended;
        if (warning[0]) {
            snprintf(message, sizeof message, "%s at %d threads: %s", shape, configs[i].threads, warning);
            report(opts, &progress, t0, NULL, message);
        }
        report(opts, &progress, t0, NULL, NULL);
    }
    convsel_status close_st = convsel_dataset_writer_close(writer);
    if (st == CONVSEL_OK)
        st = close_st;
    convsel_strmap_free(&done);
    free(skip);
    free(out);
    free(configs);
    if (result)
        *result = res;
    if (st == CONVSEL_OK && res.interrupted)
        st = convsel_error(CONVSEL_INTERRUPTED, "profile interrupted after %zu configurations (%zu records)",
                           res.done, res.records);
    return st;
}
