/*
 * The public model API: parameters, training on datasets, prediction, and
 * the roofline estimates the targets are built on.
 */
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "features.h"
#include "internal.h"
#include "model.h"

/* ---------------------------------------------------------------- parameters */

void convsel_train_params_default(convsel_train_params *p)
{
    memset(p, 0, sizeof *p);
    p->trees = 600;
    p->learning_rate = 0.1;
    p->max_depth = 7;
    p->min_leaf = 3;
    p->lambda = 1.0;
    p->min_gain = 0.0;
    p->row_subsample = 0.8;
    p->col_subsample = 0.8;
    p->max_bins = 255;
    p->valid_fraction = 0.15;
    p->patience = 60;
    p->seed = 1;
    p->threads = 0;
    p->target = CONVSEL_TARGET_ROOFLINE_RESIDUAL;
    /* What the network costs and the oracle ranks by; the minimum is more
     * reproducible but flatters kernels with a wide spread (docs/learner.md). */
    p->statistic = CONVSEL_STAT_MEDIAN;
    p->mode = CONVSEL_MODEL_SINGLE;
    /* FACTS.md: AVX-512 FMA peak ~148 GFLOP/s on one core; triad ~12 GB/s
     * on one thread. */
    p->peak_gflops = 148.0;
    p->bandwidth_gbs = 12.0;
    /* Three bags: the held-out ranking of a model trained on the target
     * CPU's data gains as much as with five, at three times one model's
     * training (docs/learner.md, "Bagging"). */
    p->bags = 3;
}

static const char *const target_names[] = {
#define CONVSEL_TARGET_NAME(name, text) text,
    CONVSEL_TARGET_MAP(CONVSEL_TARGET_NAME)
#undef CONVSEL_TARGET_NAME
};

const char *const convsel_statistic_names[3] = {"median", "p10", "min"};
static const char *const mode_names[] = {"per_primitive", "single"};

static int parse_enum(const char *value, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (strcmp(value, names[i]) == 0)
            return i;
    return -1;
}

convsel_status convsel_statistic_parse(const char *name, convsel_statistic *statistic)
{
    int e = name ? parse_enum(name, convsel_statistic_names, 3) : -1;
    if (e < 0 || !statistic)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "statistic: expected median, p10 or min, got '%s'",
                             name ? name : "(null)");
    *statistic = (convsel_statistic)e;
    return CONVSEL_OK;
}

static int parse_long(const char *value, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(value, &end, 10);
    if (errno || end == value || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

static int parse_double(const char *value, double *out)
{
    char *end;
    errno = 0;
    double v = strtod(value, &end);
    if (errno || end == value || *end || !isfinite(v))
        return -1;
    *out = v;
    return 0;
}

static convsel_status set_param(convsel_train_params *p, const char *key, const char *value)
{
    long l;
    double d;
    int e;
#define INT_PARAM(field, lo, hi)                                                                                  \
    if (strcmp(key, #field) == 0) {                                                                               \
        if (parse_long(value, lo, hi, &l))                                                                        \
            return convsel_error(CONVSEL_INVALID_ARGUMENT, "%s: expected an integer in [%ld, %ld], got '%s'", key, \
                                 (long)(lo), (long)(hi), value);                                                   \
        p->field = (int)l;                                                                                        \
        return CONVSEL_OK;                                                                                        \
    }
#define REAL_PARAM(field)                                                                                         \
    if (strcmp(key, #field) == 0) {                                                                               \
        if (parse_double(value, &d))                                                                              \
            return convsel_error(CONVSEL_INVALID_ARGUMENT, "%s: expected a number, got '%s'", key, value);         \
        p->field = d;                                                                                             \
        return CONVSEL_OK;                                                                                        \
    }
    INT_PARAM(trees, 0, 100000)
    INT_PARAM(max_depth, 0, 30)
    INT_PARAM(min_leaf, 1, INT_MAX)
    INT_PARAM(max_bins, 2, 256)
    INT_PARAM(patience, 1, INT_MAX)
    INT_PARAM(threads, 0, 1024)
    INT_PARAM(bags, 1, CONVSEL_MAX_BAGS)
    REAL_PARAM(learning_rate)
    REAL_PARAM(lambda)
    REAL_PARAM(min_gain)
    REAL_PARAM(row_subsample)
    REAL_PARAM(col_subsample)
    REAL_PARAM(valid_fraction)
    REAL_PARAM(peak_gflops)
    REAL_PARAM(bandwidth_gbs)
    REAL_PARAM(time_limit_s)
#undef INT_PARAM
#undef REAL_PARAM
    if (strcmp(key, "seed") == 0) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(value, &end, 0);
        if (errno || end == value || *end || value[0] == '-')
            return convsel_error(CONVSEL_INVALID_ARGUMENT, "seed: expected an unsigned integer, got '%s'", value);
        p->seed = (uint64_t)v;
        return CONVSEL_OK;
    }
    if (strcmp(key, "target") == 0) {
        if ((e = parse_enum(value, target_names, CONVSEL_TARGET_COUNT)) < 0)
            return convsel_error(CONVSEL_INVALID_ARGUMENT,
                                 "target: expected log, log_per_flop or roofline_residual, got '%s'", value);
        p->target = (convsel_target)e;
        return CONVSEL_OK;
    }
    if (strcmp(key, "statistic") == 0)
        return convsel_statistic_parse(value, &p->statistic);
    if (strcmp(key, "mode") == 0) {
        if ((e = parse_enum(value, mode_names, 2)) < 0)
            return convsel_error(CONVSEL_INVALID_ARGUMENT, "mode: expected per_primitive or single, got '%s'", value);
        p->mode = (convsel_model_mode)e;
        return CONVSEL_OK;
    }
    return convsel_error(CONVSEL_INVALID_ARGUMENT, "unknown training parameter '%s'", key);
}

convsel_status convsel_train_params_parse(const char *text, convsel_train_params *params)
{
    if (!text || !params)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "NULL argument");
    char *copy = strdup(text);
    if (!copy)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    convsel_status st = CONVSEL_OK;
    char *save = NULL;
    for (char *item = strtok_r(copy, ",", &save); item && st == CONVSEL_OK; item = strtok_r(NULL, ",", &save)) {
        char *eq = strchr(item, '=');
        if (!eq) {
            st = convsel_error(CONVSEL_INVALID_ARGUMENT, "expected key=value, got '%s'", item);
            break;
        }
        *eq = '\0';
        st = set_param(params, item, eq + 1);
    }
    free(copy);
    return st;
}

const char *convsel_target_name(convsel_target target)
{
    return (unsigned)target < CONVSEL_TARGET_COUNT ? target_names[target] : "unknown";
}

static convsel_status check_params(const convsel_train_params *p)
{
    if ((unsigned)p->target >= CONVSEL_TARGET_COUNT || (unsigned)p->statistic > CONVSEL_STAT_MIN ||
        (unsigned)p->mode > CONVSEL_MODEL_SINGLE)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "unknown target, statistic or mode");
    if (!(p->valid_fraction >= 0 && p->valid_fraction < 1))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "valid_fraction must be in [0, 1) (got %g)",
                             p->valid_fraction);
    if (!(p->peak_gflops > 0) || !(p->bandwidth_gbs > 0))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "peak_gflops and bandwidth_gbs must be positive");
    if (p->threads < 0)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "threads must be >= 0 (got %d)", p->threads);
    if (p->trees < 0 || p->min_leaf < 1)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "trees must be >= 0 and min_leaf >= 1");
    if (p->bags < 1 || p->bags > CONVSEL_MAX_BAGS)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "bags must be in [1, %d] (got %d)", CONVSEL_MAX_BAGS, p->bags);
    if (!(p->time_limit_s >= 0))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "time_limit_s must be >= 0 (got %g)", p->time_limit_s);
    return CONVSEL_OK;
}

/* ---------------------------------------------------------------- roofline */

/* Peak relative to AVX-512: f32 lanes per FMA (scalar 1, SSE 4, AVX2 8, 16). */
static double isa_factor(convsel_isa isa)
{
    switch (isa) {
    case CONVSEL_ISA_SCALAR:
        return 1.0 / 16.0;
    case CONVSEL_ISA_SSE41:
        return 0.25;
    case CONVSEL_ISA_AVX2:
        return 0.5;
    default:
        return 1.0;
    }
}

static double workers(int threads, const convsel_fingerprint *cpu)
{
    double w = threads > 0 ? threads : 1;
    if (cpu && cpu->cores > 0 && w > cpu->cores)
        w = cpu->cores;
    return w;
}

/* Compute-bound ms at u = 1 and memory-bound ms. */
static void roofline_parts(const convsel_problem *p, int threads, const convsel_fingerprint *cpu, double peak_gflops,
                           double bandwidth_gbs, double *compute_ms, double *memory_ms)
{
    double w = workers(threads, cpu);
    double flops_per_ms = peak_gflops * 1e6 * isa_factor(cpu ? cpu->isa_cap : CONVSEL_ISA_AVX512) * w;
    double bytes_per_ms = bandwidth_gbs * 1e6 * w;
    double g = p->g > 0 ? (double)p->g : 1.0;
    double flops = 2.0 * (double)p->mb * (double)p->oc * (double)p->oh * (double)p->ow * ((double)p->ic / g) *
                   (double)p->kh * (double)p->kw;
    *compute_ms = flops / flops_per_ms;
    *memory_ms = convsel_problem_bytes(p) / bytes_per_ms;
}

double convsel_roofline_ms(const convsel_problem *p, int threads, const convsel_fingerprint *cpu, double peak_gflops,
                           double bandwidth_gbs, double utilisation)
{
    double c, m;
    roofline_parts(p, threads, cpu, peak_gflops, bandwidth_gbs, &c, &m);
    c /= utilisation > 0 ? utilisation : 1.0;
    return c > m ? c : m;
}

/* Squared log error of the refined roofline c + max(C/u, M) with s = log u,
 * over n rows: lc = log C, lm = log M, lt = log of the measured time. */
static double fit_loss(const double *lc, const double *lm, const double *lt, size_t n, double s, double c)
{
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        double b = lc[i] - s > lm[i] ? lc[i] - s : lm[i];
        double e = lt[i] - (c > 0 ? log(c + exp(b)) : b);
        sum += e * e;
    }
    return sum;
}

/* Minimises fit_loss over x in [lo, hi] (x = s, or x = log c when over_c):
 * a grid finds the basin (the loss is a sum of non-convex pieces, a max
 * inside a square), golden-section search refines it. */
static double fit_search(const double *lc, const double *lm, const double *lt, size_t n, double s, double c,
                         int over_c, double lo, double hi, double step, double *best_loss)
{
#define LOSS(x) fit_loss(lc, lm, lt, n, over_c ? s : (x), over_c ? exp(x) : c)
    double best_x = lo, best = INFINITY;
    for (double x = lo; x <= hi + 1e-12; x += step) {
        double l = LOSS(x);
        if (l < best) {
            best = l;
            best_x = x;
        }
    }
    double a = best_x - step, b = best_x + step;
    const double r = 0.6180339887498949;
    double x1 = b - r * (b - a), x2 = a + r * (b - a);
    double f1 = LOSS(x1), f2 = LOSS(x2);
    for (int it = 0; it < 40; it++) {
        if (f1 <= f2) {
            b = x2, x2 = x1, f2 = f1;
            x1 = b - r * (b - a);
            f1 = LOSS(x1);
        } else {
            a = x1, x1 = x2, f1 = f2;
            x2 = a + r * (b - a);
            f2 = LOSS(x2);
        }
    }
    double x = 0.5 * (a + b), l = LOSS(x);
    if (l < best) {
        best = l;
        best_x = x;
    }
#undef LOSS
    *best_loss = best;
    return best_x;
}

void convsel_roofline_fit(const convsel_problem *const *problems, const int *threads,
                          const convsel_fingerprint *const *cpus, const double *ms, size_t n, double peak_gflops,
                          double bandwidth_gbs, double *utilisation, double *overhead_ms)
{
    *utilisation = 1.0;
    *overhead_ms = 0.0;
    if (n == 0)
        return;
    double *lc = malloc(4 * n * sizeof *lc);
    if (!lc)
        return;
    double *lm = lc + n, *lt = lm + n, *sorted = lt + n;
    for (size_t i = 0; i < n; i++) {
        double c, m;
        roofline_parts(problems[i], threads[i], cpus[i], peak_gflops, bandwidth_gbs, &c, &m);
        lc[i] = log(c > 0 ? c : 1e-300);
        lm[i] = log(m > 0 ? m : 1e-300);
        lt[i] = log(ms[i]);
        sorted[i] = ms[i];
    }
    qsort(sorted, n, sizeof *sorted, convsel_cmp_double);
    double loss, loss_c;
    double s = fit_search(lc, lm, lt, n, 0, 0, 0, -12.0, 4.0, 0.05, &loss), c = 0;
    /* The overhead lies below the fastest times; alternate the two searches
     * a few rounds, keeping c = 0 unless an overhead helps. */
    double hi = log(sorted[n / 10] > 1e-9 ? sorted[n / 10] : 1e-9);
    for (int round = 0; round < 3 && n >= 2; round++) {
        double lcx = fit_search(lc, lm, lt, n, s, c, 1, hi - 14.0, hi, 0.1, &loss_c);
        if (loss_c < loss) {
            c = exp(lcx);
            loss = loss_c;
        }
        s = fit_search(lc, lm, lt, n, s, c, 0, s - 3.0, s + 3.0, 0.05, &loss);
    }
    *utilisation = exp(s);
    *overhead_ms = c;
    free(lc);
}

double convsel_target_offset(const convsel_train_params *params, const convsel_problem *problem, int threads,
                             const convsel_fingerprint *cpu, double utilisation, double overhead_ms)
{
    switch (params->target) {
    case CONVSEL_TARGET_LOG_PER_FLOP: {
        double g = problem->g > 0 ? (double)problem->g : 1.0;
        double flops = 2.0 * (double)problem->mb * (double)problem->oc * (double)problem->oh * (double)problem->ow *
                       ((double)problem->ic / g) * (double)problem->kh * (double)problem->kw;
        return log(flops > 1 ? flops : 1);
    }
    case CONVSEL_TARGET_ROOFLINE_RESIDUAL: {
        double ms = overhead_ms +
                    convsel_roofline_ms(problem, threads, cpu, params->peak_gflops, params->bandwidth_gbs, utilisation);
        return log(ms > 1e-300 ? ms : 1e-300);
    }
    default:
        return 0.0;
    }
}

/* ---------------------------------------------------------------- lifetime, accessors */

void convsel_model_destroy(convsel_model *model)
{
    if (!model)
        return;
    for (size_t e = 0; e < model->n_ensembles; e++) {
        convsel_ensemble_free(&model->ensembles[e]);
        if (model->forests)
            convsel_forest_free(&model->forests[e]);
    }
    free(model->ensembles);
    free(model->forests);
    free(model->fingerprints);
    free(model->primitives);
    free(model->utilisation);
    free(model->overhead_ms);
    convsel_calibrations_free(model);
    free(model->reorders);
    free(model);
}

size_t convsel_model_primitive_count(const convsel_model *model)
{
    return model ? model->n_primitives : 0;
}

const char *convsel_model_primitive_name(const convsel_model *model, size_t i)
{
    return model && i < model->n_primitives ? model->primitives[i] : NULL;
}

convsel_status convsel_model_primitive_find(const convsel_model *model, const char *name, size_t *index)
{
    if (!model || !name || !index)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "NULL argument");
    for (size_t i = 0; i < model->n_primitives; i++)
        if (strcmp(model->primitives[i], name) == 0) {
            *index = i;
            return CONVSEL_OK;
        }
    return convsel_error(CONVSEL_NOT_FOUND, "the model has no primitive '%s'", name);
}

const char *convsel_model_id(const convsel_model *model)
{
    return model ? model->id : "";
}

size_t convsel_model_fingerprint_count(const convsel_model *model)
{
    return model ? model->n_fingerprints : 0;
}

const convsel_fingerprint *convsel_model_fingerprint(const convsel_model *model, size_t i)
{
    return model && i < model->n_fingerprints ? &model->fingerprints[i] : NULL;
}

const convsel_train_params *convsel_model_params(const convsel_model *model)
{
    return model ? &model->params : NULL;
}

/* ---------------------------------------------------------------- prediction */

void convsel_model_lay_out(convsel_model *m)
{
    m->forests = calloc(m->n_ensembles ? m->n_ensembles : 1, sizeof *m->forests);
    for (size_t e = 0; m->forests && e < m->n_ensembles; e++)
        convsel_forest_build(&m->ensembles[e], m->params.max_depth, CONVSEL_FEATURE_COUNT,
                             convsel_feature_is_categorical, &m->forests[e]);
}

static double predict_one(const convsel_model *model, const convsel_problem *problem, int threads, size_t j,
                          const convsel_fingerprint *cpu)
{
    float x[CONVSEL_FEATURE_COUNT];
    if (!cpu && model->n_fingerprints)
        cpu = &model->fingerprints[0];
    convsel_features_compute(problem, threads, (int)j, model->primitives[j], cpu, x);
    const convsel_ensemble *e = &model->ensembles[model->params.mode == CONVSEL_MODEL_SINGLE ? 0 : j];
    double value = convsel_ensemble_predict(e, x);
    double log_ms = value + convsel_target_offset(&model->params, problem, threads, cpu, model->utilisation[j],
                                                  model->overhead_ms[j]);
    if (model->n_calibrations)
        log_ms = convsel_calibration_apply(model, j, cpu, x, log_ms);
    return exp(log_ms);
}

static convsel_status check_query(const convsel_problem *problem, int threads)
{
    if (!problem)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "problem is NULL");
    if (threads < 1)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "threads must be >= 1 (got %d)", threads);
    return convsel_problem_validate(problem);
}

convsel_status convsel_model_predict_ms(const convsel_model *model, const convsel_problem *problem, int threads,
                                        size_t primitive_index, const convsel_fingerprint *cpu, double *ms)
{
    if (!model || !ms)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "NULL argument");
    if (primitive_index >= convsel_primitive_count())
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "no primitive %zu in the catalogue", primitive_index);
    convsel_status st = check_query(problem, threads);
    if (st != CONVSEL_OK)
        return st;
    size_t j;
    st = convsel_model_primitive_find(model, convsel_primitive_name(primitive_index), &j);
    if (st != CONVSEL_OK)
        return st;
    *ms = predict_one(model, problem, threads, j, cpu);
    return CONVSEL_OK;
}

/* Rows predicted together, tree by tree. A model of a few hundred trees
 * takes megabytes, more than L2: walking every tree for one request after
 * another streams the whole model from memory for each request, while a
 * block of requests per tree reads each tree once. A block of 1024 holds a
 * whole network's candidates (ResNet-50's fit in one), so selection reads the
 * model once. The sums run in the order convsel_ensemble_predict uses, so the
 * results are bit-identical. */
#define PREDICT_BLOCK 1024
/* Fewest rows worth a thread of their own (convsel_model_predict_batch). */
#define PREDICT_MIN_PART 32
/* Trees whose laid-out nodes a group of rows walks before the next group
 * (about 170 KB at depth 7: they stay in L2 while every row passes). */
#define PREDICT_TREE_TILE 64

typedef struct predict_ws {
    float (*x)[CONVSEL_FEATURE_COUNT];
    double *sum, *part; /* part: the sums of one ensemble's rows, in xf's order */
    float (*xf)[CONVSEL_FEATURE_COUNT]; /* an ensemble's rows as its forest reads them */
    uint8_t (*codes)[CONVSEL_FEATURE_COUNT];
    size_t *ens, *rows;
    const convsel_fingerprint **cpu;
} predict_ws;

static void predict_ws_free(predict_ws *w)
{
    free(w->x);
    free(w->sum);
    free(w->part);
    free(w->xf);
    free(w->codes);
    free(w->ens);
    free(w->rows);
    free((void *)w->cpu);
}

static convsel_status predict_ws_alloc(predict_ws *w)
{
    w->x = malloc(PREDICT_BLOCK * sizeof *w->x);
    w->sum = malloc(PREDICT_BLOCK * sizeof *w->sum);
    w->part = malloc(PREDICT_BLOCK * sizeof *w->part);
    w->xf = malloc(PREDICT_BLOCK * sizeof *w->xf);
    w->codes = malloc(PREDICT_BLOCK * sizeof *w->codes);
    w->ens = malloc(PREDICT_BLOCK * sizeof *w->ens);
    w->rows = malloc(PREDICT_BLOCK * sizeof *w->rows);
    w->cpu = malloc(PREDICT_BLOCK * sizeof *w->cpu);
    if (w->x && w->sum && w->part && w->xf && w->codes && w->ens && w->rows && w->cpu)
        return CONVSEL_OK;
    predict_ws_free(w);
    return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory predicting");
}

static void predict_block(const convsel_model *m, const convsel_model_query *q, size_t n, double *ms,
                          const predict_ws *w)
{
    int single = m->params.mode == CONVSEL_MODEL_SINGLE;
    for (size_t r = 0; r < n; r++) {
        w->cpu[r] = q[r].cpu ? q[r].cpu : m->n_fingerprints ? &m->fingerprints[0] : NULL;
        convsel_features_compute(q[r].problem, q[r].threads, (int)q[r].primitive, m->primitives[q[r].primitive],
                                 w->cpu[r], w->x[r]);
        w->ens[r] = single ? 0 : q[r].primitive;
        w->sum[r] = m->ensembles[w->ens[r]].base;
    }
    for (size_t e = 0; e < m->n_ensembles; e++) {
        const convsel_ensemble *en = &m->ensembles[e];
        size_t k = 0;
        for (size_t r = 0; r < n; r++)
            if (w->ens[r] == e)
                w->rows[k++] = r;
        const convsel_forest *f = m->forests && m->forests[e].leaf ? &m->forests[e] : NULL;
        if (f && k) {
            for (size_t i = 0; i < k; i++) {
                convsel_forest_row(f, w->x[w->rows[i]], w->xf[i], w->codes[i]);
                w->part[i] = w->sum[w->rows[i]];
            }
            for (size_t t = 0; t < f->n_trees; t += PREDICT_TREE_TILE)
                convsel_forest_add_rows(f, t, f->n_trees - t < PREDICT_TREE_TILE ? f->n_trees - t : PREDICT_TREE_TILE,
                                        w->xf[0], w->codes[0], k, w->part);
            for (size_t i = 0; i < k; i++)
                w->sum[w->rows[i]] = w->part[i];
            continue;
        }
        for (size_t t = 0; k && t < en->n_trees; t++)
            for (size_t i = 0; i < k; i++)
                w->sum[w->rows[i]] += convsel_tree_predict(&en->trees[t], w->x[w->rows[i]]);
    }
    for (size_t r = 0; r < n; r++) {
        size_t j = q[r].primitive;
        double log_ms = w->sum[r] + convsel_target_offset(&m->params, q[r].problem, q[r].threads, w->cpu[r],
                                                          m->utilisation[j], m->overhead_ms[j]);
        if (m->n_calibrations)
            log_ms = convsel_calibration_apply(m, j, w->cpu[r], w->x[r], log_ms);
        ms[r] = exp(log_ms);
    }
}

convsel_status convsel_model_predict_batch(const convsel_model *model, const convsel_model_query *queries, size_t n,
                                           double *ms)
{
    if (!model || (n && (!queries || !ms)))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "NULL argument");
    for (size_t i = 0; i < n; i++) {
        const convsel_model_query *q = &queries[i];
        if (q->primitive >= model->n_primitives)
            return convsel_error(CONVSEL_INVALID_ARGUMENT, "query %zu: the model has no primitive %zu", i,
                                 q->primitive);
        convsel_status st = check_query(q->problem, q->threads);
        if (st != CONVSEL_OK)
            return convsel_error(st, "query %zu: %s", i, convsel_last_error());
    }
    /* The rows split among this machine's cores: each row is one thread's,
     * summed tree by tree as alone, so the results do not depend on the
     * split. Selection is offline; its thread count is the plan's, not this. */
    int parts = omp_get_num_procs();
    if ((size_t)parts > n / PREDICT_MIN_PART)
        parts = (int)(n / PREDICT_MIN_PART);
    if (parts < 1)
        parts = 1;
    const size_t part = (n + (size_t)parts - 1) / (size_t)parts;
    int failed = 0;
#pragma omp parallel for num_threads(parts) schedule(static, 1) reduction(| : failed) if (parts > 1)
    for (int t = 0; t < parts; t++) {
        const size_t from = (size_t)t * part, to = from + part < n ? from + part : n;
        predict_ws w = {0};
        if (from < to && predict_ws_alloc(&w) != CONVSEL_OK) {
            failed = 1;
            continue;
        }
        for (size_t begin = from; begin < to; begin += PREDICT_BLOCK) {
            size_t count = to - begin < PREDICT_BLOCK ? to - begin : PREDICT_BLOCK;
            predict_block(model, queries + begin, count, ms + begin, &w);
        }
        predict_ws_free(&w);
    }
    return failed ? convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory predicting") : CONVSEL_OK;
}

convsel_status convsel_model_predict_table(const convsel_model *model, const convsel_table *t, const uint8_t *mask,
                                           double *pred)
{
    size_t *map = malloc((t->n_names ? t->n_names : 1) * sizeof *map);
    convsel_model_query *q = malloc(PREDICT_BLOCK * sizeof *q);
    size_t *rows = malloc(PREDICT_BLOCK * sizeof *rows);
    double *ms = malloc(PREDICT_BLOCK * sizeof *ms);
    predict_ws w = {0};
    if (!map || !q || !rows || !ms || predict_ws_alloc(&w) != CONVSEL_OK) {
        free(map);
        free(q);
        free(rows);
        free(ms);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    }
    for (size_t k = 0; k < t->n_names; k++) {
        map[k] = SIZE_MAX;
        for (size_t j = 0; j < model->n_primitives; j++)
            if (strcmp(model->primitives[j], t->names[k]) == 0)
                map[k] = j;
    }
    size_t k = 0;
    for (size_t i = 0; i <= t->n; i++) {
        if (i < t->n) {
            size_t j = map[t->primitive[i]];
            pred[i] = NAN;
            if ((mask && !mask[i]) || j == SIZE_MAX)
                continue;
            q[k] = (convsel_model_query){&t->records[i]->problem, t->records[i]->threads, j,
                                         &t->fingerprints[t->fingerprint[i]]};
            rows[k++] = i;
        }
        if (k == PREDICT_BLOCK || (i == t->n && k)) {
            predict_block(model, q, k, ms, &w);
            for (size_t r = 0; r < k; r++)
                pred[rows[r]] = ms[r];
            k = 0;
        }
    }
    free(map);
    free(q);
    free(rows);
    free(ms);
    predict_ws_free(&w);
    return CONVSEL_OK;
}

/* ---------------------------------------------------------------- training */

typedef struct train_rows {
    size_t n;            /* rows used */
    size_t *row;         /* table row of each */
    int32_t *prim;       /* model primitive of each */
    uint8_t *valid;      /* held out for early stopping */
    float *x;            /* n × CONVSEL_FEATURE_COUNT */
    double *y;
} train_rows;

static void train_rows_free(train_rows *r)
{
    free(r->row);
    free(r->prim);
    free(r->valid);
    free(r->x);
    free(r->y);
}

static int cmp_size(const void *a, const void *b)
{
    size_t x = *(const size_t *)a, y = *(const size_t *)b;
    return (x > y) - (x < y);
}

/* Holds out round(fraction × layers) of the used layers, drawn with seed: a
 * layer's primitives stay together, so validation sees unseen shapes. */
static convsel_status pick_valid(const convsel_table *t, train_rows *r, double fraction, uint64_t seed)
{
    if (fraction <= 0)
        return CONVSEL_OK;
    size_t *layers = malloc((r->n ? r->n : 1) * sizeof *layers);
    uint8_t *held = calloc(t->n_layers ? t->n_layers : 1, 1);
    if (!layers || !held) {
        free(layers);
        free(held);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    }
    for (size_t i = 0; i < r->n; i++)
        layers[i] = t->layer[r->row[i]];
    qsort(layers, r->n, sizeof *layers, cmp_size);
    size_t m = 0;
    for (size_t i = 0; i < r->n; i++)
        if (m == 0 || layers[i] != layers[m - 1])
            layers[m++] = layers[i];
    size_t k = (size_t)floor(fraction * (double)m + 0.5);
    /* Too few layers to spare any: train on all, no early stopping. */
    if (m >= 5 && k >= 1 && k < m) {
        convsel_rng rng = {seed ^ 0x76616c6964ull}; /* "valid" */
        for (size_t i = 0; i < k; i++) {
            size_t j = i + convsel_rng_below(&rng, m - i);
            size_t tmp = layers[i];
            layers[i] = layers[j];
            layers[j] = tmp;
            held[layers[i]] = 1;
        }
    }
    for (size_t i = 0; i < r->n; i++)
        r->valid[i] = held[t->layer[r->row[i]]];
    free(layers);
    free(held);
    return CONVSEL_OK;
}

/* The model's primitives and fingerprints: those of the rows used, in the
 * table's (sorted) order. */
static convsel_status model_lists(convsel_model *m, const convsel_table *t, const train_rows *r, int32_t *prim_map,
                                  uint32_t *fp_map)
{
    uint8_t *seen_prim = calloc(t->n_names ? t->n_names : 1, 1);
    uint8_t *seen_fp = calloc(t->n_fingerprints ? t->n_fingerprints : 1, 1);
    if (!seen_prim || !seen_fp) {
        free(seen_prim);
        free(seen_fp);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    }
    for (size_t i = 0; i < r->n; i++) {
        seen_prim[t->primitive[r->row[i]]] = 1;
        seen_fp[t->fingerprint[r->row[i]]] = 1;
    }
    m->primitives = calloc(t->n_names ? t->n_names : 1, sizeof *m->primitives);
    m->utilisation = calloc(t->n_names ? t->n_names : 1, sizeof *m->utilisation);
    m->overhead_ms = calloc(t->n_names ? t->n_names : 1, sizeof *m->overhead_ms);
    m->fingerprints = calloc(t->n_fingerprints ? t->n_fingerprints : 1, sizeof *m->fingerprints);
    if (!m->primitives || !m->utilisation || !m->overhead_ms || !m->fingerprints) {
        free(seen_prim);
        free(seen_fp);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    }
    for (size_t k = 0; k < t->n_names; k++) {
        prim_map[k] = -1;
        if (seen_prim[k]) {
            prim_map[k] = (int32_t)m->n_primitives;
            memcpy(m->primitives[m->n_primitives], t->names[k], CONVSEL_PRIMITIVE_NAME_MAX);
            m->utilisation[m->n_primitives] = 1.0;
            m->n_primitives++;
        }
    }
    for (size_t k = 0; k < t->n_fingerprints; k++) {
        fp_map[k] = UINT32_MAX;
        if (seen_fp[k]) {
            fp_map[k] = (uint32_t)m->n_fingerprints;
            m->fingerprints[m->n_fingerprints++] = t->fingerprints[k];
        }
    }
    free(seen_prim);
    free(seen_fp);
    return CONVSEL_OK;
}

/* Fits the refined roofline (utilisation and overhead) of every primitive on
 * its training rows (validation rows excluded). */
static convsel_status fit_utilisation(convsel_model *m, const convsel_table *t, const train_rows *r)
{
    const convsel_problem **problems = malloc((r->n ? r->n : 1) * sizeof *problems);
    const convsel_fingerprint **cpus = malloc((r->n ? r->n : 1) * sizeof *cpus);
    int *threads = malloc((r->n ? r->n : 1) * sizeof *threads);
    double *ms = malloc((r->n ? r->n : 1) * sizeof *ms);
    if (!problems || !cpus || !threads || !ms) {
        free(problems);
        free(cpus);
        free(threads);
        free(ms);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    }
    for (size_t j = 0; j < m->n_primitives; j++) {
        size_t k = 0;
        for (size_t i = 0; i < r->n; i++) {
            if ((size_t)r->prim[i] != j || r->valid[i])
                continue;
            size_t row = r->row[i];
            problems[k] = &t->records[row]->problem;
            threads[k] = t->records[row]->threads;
            cpus[k] = &t->fingerprints[t->fingerprint[row]];
            ms[k] = t->ms[row];
            k++;
        }
        convsel_roofline_fit(problems, threads, cpus, ms, k, m->params.peak_gflops, m->params.bandwidth_gbs,
                             &m->utilisation[j], &m->overhead_ms[j]);
    }
    free(problems);
    free(cpus);
    free(threads);
    free(ms);
    return CONVSEL_OK;
}

/* Moves from's trees to the end of to's and adds its base; from is left
 * empty. */
static convsel_status ensemble_append(convsel_ensemble *to, convsel_ensemble *from)
{
    size_t n = to->n_trees + from->n_trees;
    convsel_tree *trees = realloc(to->trees, (n ? n : 1) * sizeof *trees);
    if (!trees)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    if (from->n_trees)
        memcpy(trees + to->n_trees, from->trees, from->n_trees * sizeof *trees);
    to->trees = trees;
    to->n_trees = n;
    to->base += from->base;
    free(from->trees);
    from->trees = NULL;
    from->n_trees = 0;
    from->base = 0.0;
    return CONVSEL_OK;
}

/* Multiplies what e predicts by s: its base and every node's value. */
static void ensemble_scale(convsel_ensemble *e, double s)
{
    e->base *= s;
    for (size_t t = 0; t < e->n_trees; t++)
        for (size_t k = 0; k < e->trees[t].n_nodes; k++)
            e->trees[t].nodes[k].value *= s;
}

/*
 * One ensemble of one bag: the unit of training that runs on a thread of its
 * own. Jobs share nothing they write, so each one's trees are what a
 * sequential loop would grow; what they add to the model (trees, validation
 * sums) is added in job order after all are done.
 */
typedef struct train_job {
    int bag;
    size_t e;                       /* the ensemble */
    int32_t only_prim;              /* its primitive, -1 for a single model */
    const uint8_t *valid;           /* the bag's held-out rows */
    convsel_boost_params bp;
    struct job_relay *relay;
    convsel_ensemble out;
    double *sq_err;                 /* its validation rows' squared errors, in row order */
    size_t n_sq_err;
    convsel_status st;
    char error[256];                /* convsel_last_error() of the job's thread */
    convsel_train_progress info;
    convsel_train_progress *held;   /* progress waiting for the jobs before it */
    size_t n_held, cap_held;
    int done, hold_failed;
} train_job;

/* Progress reaches the caller in job order, as a sequential loop gives it:
 * the events of jobs[live] go through at once, a later job's are held until
 * every job before it is done. */
typedef struct job_relay {
    convsel_train_progress_fn fn;
    void *user;
    train_job *jobs;
    size_t n_jobs, live;
    int stop;                       /* the caller said stop, or holding progress failed */
} job_relay;

/* Under the relay's lock. */
static void relay_deliver(job_relay *r, const convsel_train_progress *p)
{
    if (!r->stop && r->fn(p, r->user))
        r->stop = 1;
}

static int relay(int iteration, double train_rmse, double valid_rmse, int best_iteration, void *user)
{
    train_job *j = user;
    job_relay *r = j->relay;
    convsel_train_progress p = j->info;
    p.iteration = iteration;
    p.train_rmse = train_rmse;
    p.valid_rmse = valid_rmse;
    p.best_iteration = best_iteration;
    int stop;
#pragma omp critical(convsel_train_relay)
    {
        if (j == &r->jobs[r->live]) {
            relay_deliver(r, &p);
        } else if (!r->stop) {
            convsel_train_progress *held = convsel_grow(j->held, j->n_held, &j->cap_held, 64, sizeof *held);
            if (held)
                j->held = held;
            if (j->n_held < j->cap_held)
                j->held[j->n_held++] = p;
            else
                r->stop = j->hold_failed = 1; /* out of memory: the job reports it */
        }
        stop = r->stop;
    }
    return stop;
}

/* A job is done: the jobs after it whose turn it now is send what they hold. */
static void relay_finish(train_job *j)
{
    job_relay *r = j->relay;
#pragma omp critical(convsel_train_relay)
    {
        j->done = 1;
        while (r->live < r->n_jobs && r->jobs[r->live].done) {
            r->live++;
            if (r->live == r->n_jobs)
                break;
            train_job *next = &r->jobs[r->live];
            for (size_t i = 0; r->fn && i < next->n_held; i++)
                relay_deliver(r, &next->held[i]);
            free(next->held);
            next->held = NULL;
            next->n_held = next->cap_held = 0;
        }
    }
}

static void run_job(const train_rows *r, train_job *j)
{
    size_t n_train = 0, n_valid = 0;
    size_t *train = malloc((r->n ? r->n : 1) * sizeof *train);
    size_t *valid = malloc((r->n ? r->n : 1) * sizeof *valid);
    if (!train || !valid) {
        j->st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < r->n; i++) {
        if (j->only_prim >= 0 && r->prim[i] != j->only_prim)
            continue;
        if (j->valid[i])
            valid[n_valid++] = i;
        else
            train[n_train++] = i;
    }
    if (n_train == 0) {
        /* Every row of this primitive landed in validation: train on them
         * rather than leave the primitive out. */
        memcpy(train, valid, n_valid * sizeof *train);
        n_train = n_valid;
        n_valid = 0;
    }
    j->st = convsel_boost_fit(r->x, r->y, r->n, CONVSEL_FEATURE_COUNT, train, n_train, valid, n_valid, &j->bp,
                              convsel_feature_is_categorical, j->relay->fn ? relay : NULL, j, &j->out);
    if (j->hold_failed)
        j->st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory holding training progress");
    /* The held-out error, summed in job order when every job is done: the
     * model's uncertainty for verified selection. */
    if (j->st == CONVSEL_OK && n_valid && !(j->sq_err = malloc(n_valid * sizeof *j->sq_err)))
        j->st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; j->st == CONVSEL_OK && i < n_valid; i++) {
        double d = convsel_ensemble_predict(&j->out, r->x + valid[i] * CONVSEL_FEATURE_COUNT) - r->y[valid[i]];
        j->sq_err[j->n_sq_err++] = d * d;
    }
done:
    if (j->st != CONVSEL_OK)
        snprintf(j->error, sizeof j->error, "%s", convsel_last_error());
    free(train);
    free(valid);
    relay_finish(j);
}

/*
 * Fits every bag's every ensemble into m. Bag b holds out its own layers
 * (pick_valid with seed + b; bag 0's are r->valid) and draws its own streams;
 * the bags' trees are appended in bag order. The jobs run on up to threads
 * threads, each growing its trees on one; a job alone grows its trees on all
 * of them (the histograms' threads). Either way the trees are the same.
 */
static convsel_status fit_jobs(convsel_model *m, const convsel_table *t, train_rows *r,
                               const convsel_train_params *params, const convsel_boost_params *bp,
                               convsel_train_progress_fn progress, void *user)
{
    const size_t n_bags = (size_t)params->bags, n_jobs = n_bags * m->n_ensembles;
    train_job *jobs = calloc(n_jobs, sizeof *jobs);
    uint8_t **masks = calloc(n_bags, sizeof *masks);
    job_relay shared = {.fn = progress, .user = user, .jobs = jobs, .n_jobs = n_jobs};
    convsel_status st = jobs && masks ? CONVSEL_OK : convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    for (size_t b = 0; st == CONVSEL_OK && b < n_bags; b++) {
        if (b == 0) {
            masks[0] = r->valid;
            continue;
        }
        if (!(masks[b] = malloc(r->n ? r->n : 1))) {
            st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
            break;
        }
        memcpy(masks[b], masks[b - 1], r->n);
        train_rows view = *r;
        view.valid = masks[b];
        st = pick_valid(t, &view, params->valid_fraction, params->seed + (uint64_t)b);
    }
    /* One job on each thread; when one job is left over after the rounds,
     * as three bags on two threads leave one, it runs last on them all. */
    const int threads = bp->threads;
    const int outer = n_jobs < (size_t)threads ? (int)n_jobs : threads;
    const size_t tail = outer > 1 && n_jobs % (size_t)outer == 1 ? 1 : 0;
    for (size_t k = 0; st == CONVSEL_OK && k < n_jobs; k++) {
        train_job *j = &jobs[k];
        j->bag = (int)(k / m->n_ensembles);
        j->e = k % m->n_ensembles;
        j->only_prim = params->mode == CONVSEL_MODEL_SINGLE ? -1 : (int32_t)j->e;
        j->valid = masks[j->bag];
        j->bp = *bp;
        /* Each ensemble draws from its own stream, so adding a primitive to
         * the data does not change the others' trees. */
        j->bp.seed = params->seed + (uint64_t)j->bag + 0x9e3779b97f4a7c15ull * (j->e + 1);
        j->bp.threads = outer > 1 && k < n_jobs - tail ? 1 : threads;
        /* The rounds share the time limit evenly. */
        j->bp.time_limit_s = bp->time_limit_s / (double)((n_jobs - tail + (size_t)outer - 1) / (size_t)outer + tail);
        j->relay = &shared;
        j->info = (convsel_train_progress){.ensemble = j->only_prim >= 0 ? m->primitives[j->only_prim] : "all",
                                           .ensemble_index = j->e,
                                           .ensemble_count = m->n_ensembles,
                                           .bag = j->bag,
                                           .bag_count = params->bags};
    }
    if (st == CONVSEL_OK) {
#pragma omp parallel for num_threads(outer) schedule(dynamic, 1) if (outer > 1)
        for (long k = 0; k < (long)(n_jobs - tail); k++)
            run_job(r, &jobs[k]);
        if (tail)
            run_job(r, &jobs[n_jobs - 1]);
    }
    /* In job order: the first failure, else the trees and the sums. The
     * caller may have said stop to progress held until every job was done. */
    for (size_t k = 0; st == CONVSEL_OK && k < n_jobs; k++)
        if (jobs[k].st != CONVSEL_OK)
            st = convsel_error(jobs[k].st, "%s", jobs[k].error);
    if (st == CONVSEL_OK && shared.stop)
        st = convsel_error(CONVSEL_INTERRUPTED, "training interrupted by its progress callback");
    for (size_t k = 0; st == CONVSEL_OK && k < n_jobs; k++) {
        train_job *j = &jobs[k];
        for (size_t i = 0; i < j->n_sq_err; i++)
            m->valid_rmse_log += j->sq_err[i];
        m->valid_rows += j->n_sq_err;
        if (j->out.cut_by_time && (!m->jobs_cut++ || j->out.n_trees < m->cut_fewest_trees))
            m->cut_fewest_trees = j->out.n_trees;
        if (j->bag == 0) {
            m->ensembles[j->e] = j->out;
            memset(&j->out, 0, sizeof j->out);
        } else {
            st = ensemble_append(&m->ensembles[j->e], &j->out);
        }
    }
    for (size_t k = 0; jobs && k < n_jobs; k++) {
        convsel_ensemble_free(&jobs[k].out);
        free(jobs[k].sq_err);
        free(jobs[k].held);
    }
    for (size_t b = 1; masks && b < n_bags; b++)
        free(masks[b]);
    free(masks);
    free(jobs);
    return st;
}

double convsel_time_left(double limit_s, double t0)
{
    return limit_s > 0 ? fmax(limit_s - (convsel_now() - t0), 1e-9) : 0.0;
}

convsel_status convsel_model_train_table(const convsel_table *t, const uint8_t *use, const convsel_train_params *params,
                                         convsel_train_progress_fn progress, void *user, convsel_model **out)
{
    const double t_start = convsel_now();
    *out = NULL;
    convsel_train_params defaults;
    if (!params) {
        convsel_train_params_default(&defaults);
        params = &defaults;
    }
    convsel_status st = check_params(params);
    if (st != CONVSEL_OK)
        return st;

    train_rows r = {0};
    for (size_t i = 0; i < t->n; i++)
        r.n += !use || use[i];
    if (r.n == 0)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "no conv records to train on");
    convsel_model *m = calloc(1, sizeof *m);
    r.row = malloc(r.n * sizeof *r.row);
    r.prim = malloc(r.n * sizeof *r.prim);
    r.valid = calloc(r.n, 1);
    r.x = malloc(r.n * CONVSEL_FEATURE_COUNT * sizeof *r.x);
    r.y = malloc(r.n * sizeof *r.y);
    int32_t *prim_map = malloc((t->n_names ? t->n_names : 1) * sizeof *prim_map);
    uint32_t *fp_map = malloc((t->n_fingerprints ? t->n_fingerprints : 1) * sizeof *fp_map);
    if (!m || !r.row || !r.prim || !r.valid || !r.x || !r.y || !prim_map || !fp_map) {
        st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory training on %zu records", r.n);
        goto done;
    }
    m->params = *params;
    m->params.time_limit_s = 0; /* how it was trained, not what it is */
    size_t k = 0;
    for (size_t i = 0; i < t->n; i++)
        if (!use || use[i])
            r.row[k++] = i;
    if ((st = model_lists(m, t, &r, prim_map, fp_map)) != CONVSEL_OK)
        goto done;
    if (params->mode == CONVSEL_MODEL_SINGLE && m->n_primitives > CONVSEL_MAX_CATEGORIES) {
        st = convsel_error(CONVSEL_INVALID_ARGUMENT, "a single model holds at most %d primitives (the data has %zu)",
                           CONVSEL_MAX_CATEGORIES, m->n_primitives);
        goto done;
    }
    for (size_t i = 0; i < r.n; i++)
        r.prim[i] = prim_map[t->primitive[r.row[i]]];
    if ((st = pick_valid(t, &r, params->valid_fraction, params->seed)) != CONVSEL_OK)
        goto done;
    if (params->target == CONVSEL_TARGET_ROOFLINE_RESIDUAL && (st = fit_utilisation(m, t, &r)) != CONVSEL_OK)
        goto done;

    for (size_t i = 0; i < r.n; i++) {
        const convsel_record *rec = t->records[r.row[i]];
        const convsel_fingerprint *cpu = &t->fingerprints[t->fingerprint[r.row[i]]];
        convsel_features_compute(&rec->problem, rec->threads, r.prim[i], m->primitives[r.prim[i]], cpu,
                                 r.x + i * CONVSEL_FEATURE_COUNT);
        r.y[i] = log(t->ms[r.row[i]]) -
                 convsel_target_offset(params, &rec->problem, rec->threads, cpu, m->utilisation[r.prim[i]],
                                       m->overhead_ms[r.prim[i]]);
    }

    m->n_ensembles = params->mode == CONVSEL_MODEL_SINGLE ? 1 : m->n_primitives;
    m->ensembles = calloc(m->n_ensembles, sizeof *m->ensembles);
    if (!m->ensembles) {
        st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    convsel_boost_params bp = {.max_trees = params->trees,
                               .learning_rate = params->learning_rate,
                               .max_depth = params->max_depth,
                               .min_leaf = (size_t)params->min_leaf,
                               .lambda = params->lambda,
                               .min_gain = params->min_gain,
                               .row_subsample = params->row_subsample,
                               .col_subsample = params->col_subsample,
                               .max_bins = params->max_bins,
                               .patience = params->patience,
                               .threads = params->threads > 0 ? params->threads : omp_get_max_threads(),
                               /* The features and the roofline fit count. */
                               .time_limit_s = convsel_time_left(params->time_limit_s, t_start)};
    m->jobs = (size_t)params->bags * m->n_ensembles;
    st = fit_jobs(m, t, &r, params, &bp, progress, user);
    for (size_t e = 0; st == CONVSEL_OK && params->bags > 1 && e < m->n_ensembles; e++)
        ensemble_scale(&m->ensembles[e], 1.0 / params->bags);
    if (m->valid_rows)
        m->valid_rmse_log = sqrt(m->valid_rmse_log / (double)m->valid_rows);
    if (st == CONVSEL_OK)
        convsel_model_lay_out(m);
    if (st == CONVSEL_OK)
        st = convsel_model_update_id(m);

done:
    train_rows_free(&r);
    free(prim_map);
    free(fp_map);
    if (st != CONVSEL_OK) {
        convsel_model_destroy(m);
        return st;
    }
    *out = m;
    return CONVSEL_OK;
}

convsel_status convsel_model_train(const convsel_dataset *const *sets, size_t n, const convsel_train_params *params,
                                   convsel_train_progress_fn progress, void *user, convsel_model **model)
{
    if (!model || (n && !sets))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "NULL argument");
    *model = NULL;
    const double t_start = convsel_now();
    convsel_table t;
    convsel_status st = convsel_table_build(sets, n, params ? params->statistic : CONVSEL_STAT_MEDIAN, &t);
    if (st != CONVSEL_OK)
        return st;
    convsel_train_params left;
    if (params && params->time_limit_s > 0) {
        /* Building the table counts. */
        left = *params;
        left.time_limit_s = convsel_time_left(params->time_limit_s, t_start);
        params = &left;
    }
    st = convsel_model_train_table(&t, NULL, params, progress, user, model);
    convsel_table_free(&t);
    /* The reorder records of the same data make the model a complete cost
     * source for selection. */
    convsel_reorder_model reorders;
    if (st == CONVSEL_OK && (st = convsel_reorder_model_fit(sets, n, &reorders)) == CONVSEL_OK) {
        int any = 0;
        for (size_t k = 0; k < sizeof reorders.n_records / sizeof(int); k++)
            any |= ((const int *)reorders.n_records)[k] > 0;
        if (any && !((*model)->reorders = malloc(sizeof reorders)))
            st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
        else if (any) {
            *(*model)->reorders = reorders;
            st = convsel_model_update_id(*model);
        }
    }
    if (st != CONVSEL_OK) {
        convsel_model_destroy(*model);
        *model = NULL;
    }
    return st;
}

/* ---------------------------------------------------------------- default model */

static int readable(const char *path)
{
    return access(path, R_OK) == 0;
}

convsel_status convsel_model_default_path(char *path, size_t size)
{
    if (!path || size == 0)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "NULL argument");
    const char *env = getenv("CONVSEL_MODEL");
    if (env && *env) {
        if (!readable(env))
            return convsel_error(CONVSEL_NOT_FOUND, "CONVSEL_MODEL=%s: %s", env, strerror(errno));
        snprintf(path, size, "%s", env);
        return CONVSEL_OK;
    }
    char candidates[3][4096];
    size_t n = 0;
    char exe[4096];
    ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
    if (len > 0) {
        exe[len] = '\0';
        char *slash = strrchr(exe, '/');
        if (slash)
            *slash = '\0';
        snprintf(candidates[n++], sizeof candidates[0], "%.4000s/../models/default.msgpack", exe);
    }
#ifdef CONVSEL_SOURCE_DIR
    snprintf(candidates[n++], sizeof candidates[0], "%s/models/default.msgpack", CONVSEL_SOURCE_DIR);
#endif
#ifdef CONVSEL_DATA_INSTALL_DIR
    snprintf(candidates[n++], sizeof candidates[0], "%s/models/default.msgpack", CONVSEL_DATA_INSTALL_DIR);
#endif
    for (size_t i = 0; i < n; i++)
        if (readable(candidates[i])) {
            if ((size_t)snprintf(path, size, "%s", candidates[i]) >= size)
                return convsel_error(CONVSEL_INVALID_ARGUMENT, "path buffer too small");
            return CONVSEL_OK;
        }
    char looked[3 * 4096 + 16] = "";
    for (size_t i = 0; i < n; i++) {
        strcat(looked, i ? ", " : "");
        strcat(looked, candidates[i]);
    }
    return convsel_error(CONVSEL_NOT_FOUND, "no default model (looked for %s; train one with 'convsel train' or pass --model)",
                         looked);
}
