/*
 * Few-shot transfer of a model to a new CPU (docs/transfer.md): a per-primitive
 * log-linear map of the source's predictions, shallow boosted trees on what
 * it leaves, and the choice of the few configurations worth profiling.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_matrix.h>
#include <gsl/gsl_multifit.h>
#include <gsl/gsl_vector.h>

#include "features.h"
#include "internal.h"
#include "model.h"

/* ---------------------------------------------------------------- names, parameters */

static const char *const method_names[] = {
#define CONVSEL_CALIBRATE_METHOD_NAME(name, text) text,
    CONVSEL_CALIBRATE_METHOD_MAP(CONVSEL_CALIBRATE_METHOD_NAME)
#undef CONVSEL_CALIBRATE_METHOD_NAME
};

const char *convsel_calibrate_method_name(convsel_calibrate_method method)
{
    return (unsigned)method < CONVSEL_CALIBRATE_METHOD_COUNT ? method_names[method] : "unknown";
}

convsel_status convsel_calibrate_method_parse(const char *text, convsel_calibrate_method *method)
{
    if (!text || !method)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "NULL argument");
    for (int i = 0; i < CONVSEL_CALIBRATE_METHOD_COUNT; i++)
        if (strcmp(text, method_names[i]) == 0) {
            *method = (convsel_calibrate_method)i;
            return CONVSEL_OK;
        }
    return convsel_error(CONVSEL_INVALID_ARGUMENT,
                         "unknown calibration method '%s' (linear, trees, both, pooled, auto, retrain or linear-or-both)",
                         text);
}

void convsel_calibrate_params_default(convsel_calibrate_params *p)
{
    memset(p, 0, sizeof *p);
    /* The best on the real CPUs tested (docs/transfer.md, "linear-or-both");
     * AUTO until the eighteenth session. */
    p->method = CONVSEL_CALIBRATE_LINEAR_OR_BOTH;
    p->pooled_prior = 1.0;
    p->offset_prior = 1.0;
    p->slope_prior = 30.0;
    p->paired = 1; /* twenty-fourth session: docs/transfer.md, "Paired lines" */
    p->huber = 0.3;
    p->trees = 100;
    p->learning_rate = 0.1;
    p->max_depth = 3;
    p->min_leaf = 4;
    p->lambda = 1.0;
    p->seed = 1;
    p->retrain_copies = 5; /* chosen on splits 11-15 of the benchmark: docs/transfer.md */
    p->threads = 0;
}

static convsel_status check_params(const convsel_calibrate_params *p)
{
    if ((unsigned)p->method >= CONVSEL_CALIBRATE_METHOD_COUNT)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "unknown calibration method %d", (int)p->method);
    if (!(p->pooled_prior >= 0) || !(p->offset_prior >= 0) || !(p->slope_prior >= 0) || !isfinite(p->pooled_prior) ||
        !isfinite(p->offset_prior) || !isfinite(p->slope_prior) || !(p->huber >= 0) || !isfinite(p->huber))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "calibration priors and huber must be finite and >= 0");
    if (p->trees < 0 || p->trees > 10000 || p->max_depth < 0 || p->max_depth > 30 || p->min_leaf < 1)
        return convsel_error(CONVSEL_INVALID_ARGUMENT,
                             "calibration trees must be in [0, 10000], max_depth in [0, 30], min_leaf >= 1");
    if (!(p->learning_rate > 0 && p->learning_rate <= 1) || !(p->lambda >= 0))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "calibration learning_rate must be in (0, 1], lambda >= 0");
    if (p->retrain_copies < 1 || p->retrain_copies > 1000)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "retrain_copies must be in [1, 1000] (got %d)",
                             p->retrain_copies);
    if (p->threads < 0 || p->threads > 1024)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "calibration threads must be in [0, 1024] (got %d)",
                             p->threads);
    if (!(p->time_limit_s >= 0))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "calibration time_limit_s must be >= 0 (got %g)",
                             p->time_limit_s);
    return CONVSEL_OK;
}

/* ---------------------------------------------------------------- the calibrated prediction */

void convsel_calibrations_free(convsel_model *model)
{
    if (!model)
        return;
    for (size_t k = 0; k < model->n_calibrations; k++) {
        free(model->calibrations[k].a);
        free(model->calibrations[k].b);
        convsel_ensemble_free(&model->calibrations[k].residual);
    }
    free(model->calibrations);
    model->calibrations = NULL;
    model->n_calibrations = 0;
}

convsel_calibration *convsel_calibration_find(const convsel_model *model, const convsel_fingerprint *cpu)
{
    for (size_t k = 0; k < model->n_calibrations; k++)
        if (convsel_fingerprint_same_cpu(&model->calibrations[k].cpu, cpu))
            return &model->calibrations[k];
    return NULL;
}

double convsel_calibration_apply(const convsel_model *model, size_t primitive, const convsel_fingerprint *cpu,
                                 const float *x, double log_ms)
{
    const convsel_calibration *cal = cpu ? convsel_calibration_find(model, cpu) : NULL;
    if (!cal || primitive >= cal->n_primitives)
        return log_ms;
    double y = cal->a[primitive] + cal->b[primitive] * log_ms;
    if (cal->residual.n_trees || cal->residual.base != 0.0)
        y += convsel_ensemble_predict(&cal->residual, x);
    return y;
}

uint64_t convsel_threads_bit(int threads)
{
    if (threads < 1)
        return 0;
    return (uint64_t)1 << (threads > 64 ? 63 : threads - 1);
}

size_t convsel_model_calibration_count(const convsel_model *model)
{
    return model ? model->n_calibrations : 0;
}

convsel_status convsel_model_calibration(const convsel_model *model, size_t i, convsel_calibration_info *info)
{
    if (!model || !info)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "NULL argument");
    if (i >= model->n_calibrations)
        return convsel_error(CONVSEL_NOT_FOUND, "the model has %zu calibration(s), no %zu", model->n_calibrations, i);
    const convsel_calibration *cal = &model->calibrations[i];
    memset(info, 0, sizeof *info);
    memcpy(info->source_model, cal->source_id, sizeof info->source_model);
    info->source_model[sizeof info->source_model - 1] = '\0';
    info->method = cal->method;
    info->samples = (size_t)cal->samples;
    info->records = (size_t)cal->records;
    info->seed = cal->seed;
    info->residual_trees = cal->residual.n_trees;
    info->cv_rmse_log = cal->cv_rmse_log;
    info->cv_regret_log = cal->cv_regret_log;
    info->auto_chosen = cal->auto_chosen;
    info->cpu = cal->cpu;
    info->threads_mask = cal->threads_mask;
    info->reorder_samples = (size_t)cal->reorder_samples;
    memcpy(info->reorder_by_threads, cal->reorder_by_threads, sizeof info->reorder_by_threads);
    for (int t = 0; t < CONVSEL_REORDER_MODEL_THREADS; t++)
        info->reorder_fixed_ms[t] = cal->reorder_by_threads[t] * cal->reorder_offset[t];
    memcpy(info->reorder_loo_factor, cal->reorder_loo_factor, sizeof info->reorder_loo_factor);
    memcpy(info->reorder_loo_fixed, cal->reorder_loo_offset, sizeof info->reorder_loo_fixed);
    memcpy(info->reorder_loo_scaled, cal->reorder_loo_scaled, sizeof info->reorder_loo_scaled);
    memcpy(info->reorder_loo_own, cal->reorder_loo_line, sizeof info->reorder_loo_own);
    for (int t = 0; t < CONVSEL_REORDER_MODEL_THREADS; t++) {
        info->reorder_pairs_fittable[t] = (int)cal->reorder_pairs_fittable[t];
        info->reorder_pairs_own[t] = (int)cal->reorder_pairs_own[t];
        for (int f = 0; f < CONVSEL_LAYOUT_COUNT; f++)
            for (int g = 0; g < CONVSEL_LAYOUT_COUNT; g++)
                info->reorder_pairs_mean[t] += cal->reorder_line_b[f][g][t] > 0;
        info->reorder_pairs_mean[t] -= info->reorder_pairs_own[t];
    }
    info->cold_samples = (size_t)cal->cold_samples;
    memcpy(info->cold_ms_per_mb, cal->cold_ms_per_mb, sizeof info->cold_ms_per_mb);
    info->network_samples = (size_t)cal->network_samples;
    memcpy(info->network_ms_per_mb, cal->network_ms_per_mb, sizeof info->network_ms_per_mb);
    for (int t = 0; t < CONVSEL_REORDER_MODEL_THREADS; t++) {
        double lo = 0.0, hi = 0.0;
        for (size_t j = 0; j < CONVSEL_NETWORK_PRIMITIVES && j < cal->n_primitives; j++) {
            double price = cal->network_ms_per_mb[j][t];
            lo = j == 0 || price < lo ? price : lo;
            hi = j == 0 || price > hi ? price : hi;
        }
        info->network_price_min[t] = lo;
        info->network_price_max[t] = hi;
    }
    return CONVSEL_OK;
}

/* ---------------------------------------------------------------- the linear map */

/*
 * Ridge regression of y on x towards the prior line y = prior_a + prior_b x,
 * parameterised around the mean of x (y = c + b (x - mean)) so that the
 * level and the slope are shrunk separately: lambda_c is worth that many
 * samples lying on the prior line at the mean, lambda_b penalises
 * (b - prior_b)² as a spread of sqrt(lambda_b) in x would. Solved as
 * weighted least squares over the data rows plus two prior rows (GSL).
 *
 * huber > 0 makes it robust: a sample whose residual exceeds huber (in log
 * ms) gets weight huber / |residual| (Huber's loss, by iteratively
 * reweighted least squares), so that one disturbed measurement — a burst of
 * noise on a shared machine — pulls the line linearly, not quadratically.
 * With no data (or no spread and no slope prior) the prior's value is kept.
 */
#define HUBER_ITERATIONS 20

static convsel_status fit_line(const double *x, const double *y, size_t n, double prior_a, double prior_b,
                               double lambda_c, double lambda_b, double huber, double *a, double *b)
{
    *a = prior_a;
    *b = prior_b;
    if (n == 0)
        return CONVSEL_OK;
    double mean = 0, sxx = 0;
    for (size_t i = 0; i < n; i++)
        mean += x[i];
    mean /= (double)n;
    for (size_t i = 0; i < n; i++)
        sxx += (x[i] - mean) * (x[i] - mean);
    double c0 = prior_a + prior_b * mean;
    /* No information on the slope: the level alone (the slope's row is 0). */
    int level_only = sxx + lambda_b < 1e-12;
    size_t rows = n + 2;
    gsl_matrix *X = gsl_matrix_alloc(rows, 2);
    gsl_vector *Y = gsl_vector_alloc(rows), *W = gsl_vector_alloc(rows), *coef = gsl_vector_alloc(2);
    gsl_matrix *cov = gsl_matrix_alloc(2, 2);
    gsl_multifit_linear_workspace *work = gsl_multifit_linear_alloc(rows, 2);
    convsel_status st = CONVSEL_OK;
    if (!X || !Y || !W || !coef || !cov || !work) {
        st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory fitting a calibration line");
        goto done;
    }
    for (size_t i = 0; i < n; i++) {
        gsl_matrix_set(X, i, 0, 1.0);
        gsl_matrix_set(X, i, 1, level_only ? 0.0 : x[i] - mean);
        gsl_vector_set(Y, i, y[i]);
        gsl_vector_set(W, i, 1.0);
    }
    /* Prior rows: sqrt(lambda) × (the prior's value) with weight 1; the
     * slope's row also pins the slope when there is nothing else to. */
    double sc = sqrt(lambda_c), sb = level_only ? 1.0 : sqrt(lambda_b);
    gsl_matrix_set(X, n, 0, sc);
    gsl_matrix_set(X, n, 1, 0.0);
    gsl_vector_set(Y, n, sc * c0);
    gsl_vector_set(W, n, 1.0);
    gsl_matrix_set(X, n + 1, 0, 0.0);
    gsl_matrix_set(X, n + 1, 1, sb);
    gsl_vector_set(Y, n + 1, level_only ? 0.0 : sb * prior_b);
    gsl_vector_set(W, n + 1, 1.0);
    double c = c0, slope = prior_b;
    for (int it = 0; it < (huber > 0 ? HUBER_ITERATIONS : 1); it++) {
        double chisq;
        /* The sizes always match, so GSL's error handler is never reached. */
        gsl_multifit_wlinear(X, W, Y, coef, cov, &chisq, work);
        double nc = gsl_vector_get(coef, 0), nb = level_only ? prior_b : gsl_vector_get(coef, 1);
        if (!isfinite(nc) || !isfinite(nb)) {
            st = convsel_error(CONVSEL_INVALID_ARGUMENT, "calibration least squares gave a non-finite line");
            goto done;
        }
        double change = fabs(nc - c) + fabs(nb - slope);
        c = nc;
        slope = nb;
        if (huber <= 0 || (it > 0 && change < 1e-10))
            break;
        for (size_t i = 0; i < n; i++) {
            double r = fabs(y[i] - c - slope * (x[i] - mean));
            gsl_vector_set(W, i, r > huber ? huber / r : 1.0);
        }
    }
    *b = slope;
    *a = c - slope * mean;
done:
    gsl_matrix_free(X);
    gsl_vector_free(Y);
    gsl_vector_free(W);
    gsl_vector_free(coef);
    gsl_matrix_free(cov);
    if (work)
        gsl_multifit_linear_free(work);
    return st;
}

/* ---------------------------------------------------------------- calibration */

/* The target rows: one per usable conv record of a primitive the source knows. */
typedef struct target_rows {
    size_t n;
    size_t *row;     /* table row */
    size_t *prim;    /* source model primitive */
    double *s, *y;   /* log source prediction, log measured */
    size_t *layer;   /* the table's configuration id */
    float *x;        /* features, n × CONVSEL_FEATURE_COUNT */
} target_rows;

static void target_rows_free(target_rows *r)
{
    free(r->row);
    free(r->prim);
    free(r->s);
    free(r->y);
    free(r->layer);
    free(r->x);
}

/* A deep copy through the file format: the copy is what loading would give. */
static convsel_status model_copy(const convsel_model *src, convsel_model **out)
{
    uint8_t *data;
    size_t size;
    convsel_status st = convsel_model_serialize(src, &data, &size);
    if (st != CONVSEL_OK)
        return st;
    st = convsel_model_parse(data, size, "model copy", out);
    free(data);
    return st;
}

/* paired lines: each configuration's mean residual from the pooled line
 * (pa, pb) over the rows with use[i] (all when NULL), by the table's
 * configuration id, to be taken off its samples before the per-primitive
 * fits: a primitive's line then sees how it fared against the primitives
 * timed beside it, not how far the model missed the configurations it
 * happens to apply to. */
static convsel_status configuration_shifts(const target_rows *r, const uint8_t *use, double pa, double pb,
                                           double **out)
{
    size_t n_layers = 0;
    for (size_t i = 0; i < r->n; i++)
        if (r->layer[i] + 1 > n_layers)
            n_layers = r->layer[i] + 1;
    double *shift = calloc(n_layers ? n_layers : 1, sizeof *shift);
    size_t *count = calloc(n_layers ? n_layers : 1, sizeof *count);
    if (!shift || !count) {
        free(shift);
        free(count);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    }
    for (size_t i = 0; i < r->n; i++)
        if (!use || use[i]) {
            shift[r->layer[i]] += r->y[i] - (pa + pb * r->s[i]);
            count[r->layer[i]]++;
        }
    for (size_t l = 0; l < n_layers; l++)
        if (count[l])
            shift[l] /= (double)count[l];
    free(count);
    *out = shift;
    return CONVSEL_OK;
}

/* Fits cal's line of every primitive on the rows with use[i] (all when
 * NULL), pooled first; pooled_only gives every primitive the pooled line. */
static convsel_status fit_linear(const target_rows *r, const uint8_t *use, const convsel_calibrate_params *params,
                                 int pooled_only, convsel_calibration *cal)
{
    size_t cap = r->n ? r->n : 1;
    double *xs = malloc(cap * sizeof *xs), *ys = malloc(cap * sizeof *ys);
    if (!xs || !ys) {
        free(xs);
        free(ys);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    }
    size_t m = 0;
    for (size_t i = 0; i < r->n; i++)
        if (!use || use[i]) {
            xs[m] = r->s[i];
            ys[m] = r->y[i];
            m++;
        }
    double pa, pb;
    convsel_status st =
        fit_line(xs, ys, m, 0.0, 1.0, params->pooled_prior, params->pooled_prior, params->huber, &pa, &pb);
    /* pooled keeps every ranking only with a rising line: should the data
     * say otherwise, the level alone (the slope pinned to 1). */
    if (st == CONVSEL_OK && pooled_only && !(pb > 0))
        st = fit_line(xs, ys, m, 0.0, 1.0, params->pooled_prior, 1e12, params->huber, &pa, &pb);
    for (size_t j = 0; pooled_only && j < cal->n_primitives; j++) {
        cal->a[j] = pa;
        cal->b[j] = pb;
    }
    double *shift = NULL;
    if (st == CONVSEL_OK && !pooled_only && params->paired)
        st = configuration_shifts(r, use, pa, pb, &shift);
    for (size_t j = 0; !pooled_only && j < cal->n_primitives && st == CONVSEL_OK; j++) {
        m = 0;
        for (size_t i = 0; i < r->n; i++)
            if (r->prim[i] == j && (!use || use[i])) {
                xs[m] = r->s[i];
                ys[m] = r->y[i] - (shift ? shift[r->layer[i]] : 0.0);
                m++;
            }
        st = fit_line(xs, ys, m, pa, pb, params->offset_prior, params->slope_prior, params->huber, &cal->a[j],
                      &cal->b[j]);
    }
    free(shift);
    free(xs);
    free(ys);
    return st;
}

/* Fits cal's residual trees on the rows with use[i] (all when NULL), on
 * what cal's lines leave. */
static convsel_status fit_residual(const target_rows *r, const uint8_t *use, const convsel_calibrate_params *params,
                                   convsel_calibration *cal)
{
    double *res = malloc((r->n ? r->n : 1) * sizeof *res);
    size_t *train = malloc((r->n ? r->n : 1) * sizeof *train);
    if (!res || !train) {
        free(res);
        free(train);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    }
    size_t n_train = 0;
    for (size_t i = 0; i < r->n; i++) {
        res[i] = r->y[i] - (cal->a[r->prim[i]] + cal->b[r->prim[i]] * r->s[i]);
        if (!use || use[i])
            train[n_train++] = i;
    }
    /* Every row trains (there are too few to hold any out); shrinkage, depth
     * and the leaf size keep the trees from chasing the noise. */
    convsel_boost_params bp = {.max_trees = params->trees,
                               .learning_rate = params->learning_rate,
                               .max_depth = params->max_depth,
                               .min_leaf = (size_t)params->min_leaf,
                               .lambda = params->lambda,
                               .min_gain = 0.0,
                               .row_subsample = 1.0,
                               .col_subsample = 1.0,
                               .max_bins = 255,
                               .patience = 1,
                               .seed = params->seed,
                               .threads = 1};
    convsel_status st = convsel_boost_fit(r->x, res, r->n, CONVSEL_FEATURE_COUNT, train, n_train, NULL, 0, &bp,
                                          convsel_feature_is_categorical, NULL, NULL, &cal->residual);
    free(res);
    free(train);
    return st;
}

/* The lines (identity to start with) and trees of method (not AUTO), on
 * the rows with use[i] (all when NULL). */
static convsel_status fit_rows(const target_rows *r, const uint8_t *use, const convsel_calibrate_params *params,
                               convsel_calibrate_method method, convsel_calibration *cal)
{
    for (size_t j = 0; j < cal->n_primitives; j++) {
        cal->a[j] = 0.0;
        cal->b[j] = 1.0;
    }
    convsel_ensemble_free(&cal->residual);
    convsel_status st = CONVSEL_OK;
    if (method != CONVSEL_CALIBRATE_TREES)
        st = fit_linear(r, use, params, method == CONVSEL_CALIBRATE_POOLED, cal);
    if (st == CONVSEL_OK && (method == CONVSEL_CALIBRATE_TREES || method == CONVSEL_CALIBRATE_BOTH) &&
        params->trees > 0)
        st = fit_residual(r, use, params, cal);
    return st;
}

static double predict_row(const convsel_calibration *cal, const target_rows *r, size_t i)
{
    double y = cal->a[r->prim[i]] + cal->b[r->prim[i]] * r->s[i];
    if (cal->residual.n_trees || cal->residual.base != 0.0)
        y += convsel_ensemble_predict(&cal->residual, r->x + i * CONVSEL_FEATURE_COUNT);
    return y;
}

double convsel_regret_log(const double *y, const double *pred, const size_t *idx, size_t n)
{
    if (n < 2)
        return NAN;
    size_t picked = idx[0], fastest = idx[0];
    for (size_t u = 1; u < n; u++) {
        if (pred[idx[u]] < pred[picked])
            picked = idx[u];
        if (y[idx[u]] < y[fastest])
            fastest = idx[u];
    }
    return y[picked] - y[fastest];
}

/*
 * The error to expect on configurations not sampled: cross-validation by
 * configuration (each fold holds out whole configurations, at most
 * CV_FOLDS folds). *rmse: the root mean square of the held-out log errors;
 * *regret: convsel_regret_log averaged over the held-out configurations
 * with two primitives or more, *regret_se its standard error. All 0 when
 * there are fewer than 3 configurations.
 */
#define CV_FOLDS 10
/* The least cross-validated regret (log) by which a more complex method must
 * beat a simpler one to be chosen: a tenth of a percent. */
#define CV_REGRET_FLOOR 0.001

static convsel_status cross_validate(const target_rows *r, size_t n_layers, const convsel_calibrate_params *params,
                                     convsel_calibrate_method method, const convsel_calibration *shape, double *rmse,
                                     double *regret, double *regret_se)
{
    *rmse = *regret = *regret_se = 0.0;
    /* Fold of each sampled configuration: its rank of first appearance among
     * them, modulo the folds. */
    size_t *fold_of = malloc((n_layers ? n_layers : 1) * sizeof *fold_of);
    double *held = malloc((r->n ? r->n : 1) * sizeof *held);
    uint8_t *use = malloc(r->n ? r->n : 1);
    convsel_calibration cal = {.n_primitives = shape->n_primitives};
    cal.a = calloc(cal.n_primitives ? cal.n_primitives : 1, sizeof *cal.a);
    cal.b = calloc(cal.n_primitives ? cal.n_primitives : 1, sizeof *cal.b);
    convsel_groups groups = {0};
    convsel_status st = CONVSEL_OK;
    if (!fold_of || !held || !use || !cal.a || !cal.b) {
        st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    for (size_t l = 0; l < n_layers; l++)
        fold_of[l] = SIZE_MAX;
    size_t n_configs = 0;
    for (size_t i = 0; i < r->n; i++)
        if (fold_of[r->layer[i]] == SIZE_MAX)
            fold_of[r->layer[i]] = n_configs++;
    if (n_configs < 3)
        goto done;
    size_t folds = n_configs < CV_FOLDS ? n_configs : CV_FOLDS;
    double sum = 0;
    for (size_t f = 0; f < folds && st == CONVSEL_OK; f++) {
        for (size_t i = 0; i < r->n; i++)
            use[i] = fold_of[r->layer[i]] % folds != f;
        st = fit_rows(r, use, params, method, &cal);
        for (size_t i = 0; i < r->n && st == CONVSEL_OK; i++)
            if (!use[i]) {
                held[i] = predict_row(&cal, r, i);
                sum += (held[i] - r->y[i]) * (held[i] - r->y[i]);
            }
    }
    if (st != CONVSEL_OK)
        goto done;
    *rmse = sqrt(sum / (double)r->n);
    if ((st = convsel_groups_build(r->n, r->layer, n_layers, &groups)) != CONVSEL_OK)
        goto done;
    double total = 0, total2 = 0;
    size_t scored = 0;
    for (size_t l = 0; l < n_layers; l++) {
        const size_t *rows = groups.order + groups.start[l];
        double g = convsel_regret_log(r->y, held, rows, groups.start[l + 1] - groups.start[l]);
        if (!isnan(g)) {
            total += g;
            total2 += g * g;
            scored++;
        }
    }
    if (scored)
        *regret = total / (double)scored;
    if (scored > 1)
        *regret_se = sqrt(fmax(0.0, total2 / (double)scored - *regret * *regret) / (double)(scored - 1));
done:
    free(fold_of);
    convsel_groups_free(&groups);
    free(held);
    free(use);
    free(cal.a);
    free(cal.b);
    convsel_ensemble_free(&cal.residual);
    return st;
}

/* Adds the new calibration to out (first), dropping one it had for the same
 * CPU, and puts the new CPU first among its fingerprints. */
static convsel_status install(convsel_model *m, convsel_calibration *cal)
{
    convsel_calibration *list = calloc(m->n_calibrations + 1, sizeof *list);
    convsel_fingerprint *fps = calloc(m->n_fingerprints + 1, sizeof *fps);
    if (!list || !fps) {
        free(list);
        free(fps);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    }
    size_t n = 0;
    list[n++] = *cal;
    for (size_t k = 0; k < m->n_calibrations; k++) {
        convsel_calibration *old = &m->calibrations[k];
        if (convsel_fingerprint_same_cpu(&old->cpu, &cal->cpu)) {
            free(old->a);
            free(old->b);
            convsel_ensemble_free(&old->residual);
            continue;
        }
        list[n++] = *old;
    }
    free(m->calibrations);
    m->calibrations = list;
    m->n_calibrations = n;
    memset(cal, 0, sizeof *cal); /* owned by the model now */

    size_t nf = 0;
    fps[nf++] = list[0].cpu;
    for (size_t f = 0; f < m->n_fingerprints; f++)
        if (!convsel_fingerprint_same_cpu(&m->fingerprints[f], &list[0].cpu))
            fps[nf++] = m->fingerprints[f];
    free(m->fingerprints);
    m->fingerprints = fps;
    m->n_fingerprints = nf;
    return CONVSEL_OK;
}

/*
 * The samples as rows for fitting (*r, over the table *t of the samples) and
 * the calibration's provenance (*cal: CPU, source, method, records,
 * configurations, seed; a and b allocated for source's primitives, zero).
 * The caller frees all three, whatever the status.
 */
static convsel_status samples_prepare(const convsel_model *source, const convsel_dataset *target_samples,
                                      const convsel_calibrate_params *params, convsel_table *t, target_rows *r,
                                      convsel_calibration *cal)
{
    const convsel_dataset *sets[1] = {target_samples};
    convsel_status st = convsel_table_build(sets, 1, source->params.statistic, t);
    if (st != CONVSEL_OK)
        return st;
    size_t cap = t->n ? t->n : 1;
    size_t *map = malloc((t->n_names ? t->n_names : 1) * sizeof *map);
    double *pred = malloc(cap * sizeof *pred);
    uint8_t *layer_seen = calloc(t->n_layers ? t->n_layers : 1, 1);
    r->row = malloc(cap * sizeof *r->row);
    r->prim = malloc(cap * sizeof *r->prim);
    r->s = malloc(cap * sizeof *r->s);
    r->y = malloc(cap * sizeof *r->y);
    r->layer = malloc(cap * sizeof *r->layer);
    r->x = malloc(cap * CONVSEL_FEATURE_COUNT * sizeof *r->x);
    if (!map || !pred || !layer_seen || !r->row || !r->prim || !r->s || !r->y || !r->layer || !r->x) {
        st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory calibrating on %zu records", t->n);
        goto done;
    }
    for (size_t k = 0; k < t->n_names; k++) {
        map[k] = SIZE_MAX;
        for (size_t j = 0; j < source->n_primitives; j++)
            if (strcmp(source->primitives[j], t->names[k]) == 0)
                map[k] = j;
    }

    /* The base model's predictions: the source without its calibrations
     * (those are for other CPUs, or for this one and being replaced). */
    convsel_model base = *source;
    base.n_calibrations = 0;
    base.calibrations = NULL;
    if ((st = convsel_model_predict_table(&base, t, NULL, pred)) != CONVSEL_OK)
        goto done;
    uint32_t cpu_index = UINT32_MAX;
    for (size_t i = 0; i < t->n; i++) {
        size_t j = map[t->primitive[i]];
        if (j == SIZE_MAX || !(pred[i] > 0) || !isfinite(pred[i]))
            continue;
        if (cpu_index == UINT32_MAX) {
            cpu_index = t->fingerprint[i];
        } else if (t->fingerprint[i] != cpu_index) {
            const convsel_fingerprint *a = &t->fingerprints[cpu_index], *b = &t->fingerprints[t->fingerprint[i]];
            if (convsel_fingerprint_same_cpu(a, b)) {
                /* One CPU, two OpenBLAS cores: the GEMM primitives' lines
                 * would average two kernels 1.5-1.9x apart. */
                int ia = convsel_fingerprint_blas_isa(a), ib = convsel_fingerprint_blas_isa(b);
                st = convsel_error(CONVSEL_INVALID_ARGUMENT,
                                   "the target samples come from two OpenBLAS setups of one CPU ('%s' %s, OpenBLAS "
                                   "kernels %s and %s); calibrate from one setup at a time "
                                   "(convsel dataset filter --fingerprint)",
                                   a->model_name, convsel_isa_name(a->isa_cap),
                                   ia >= 0 ? convsel_isa_name((convsel_isa)ia) : "unknown",
                                   ib >= 0 ? convsel_isa_name((convsel_isa)ib) : "unknown");
                goto done;
            }
            st = convsel_error(CONVSEL_INVALID_ARGUMENT,
                               "the target samples come from several CPUs or ISA caps ('%s' %s and '%s' %s); "
                               "calibrate for one at a time",
                               a->model_name, convsel_isa_name(a->isa_cap), b->model_name,
                               convsel_isa_name(b->isa_cap));
            goto done;
        }
        size_t k = r->n++;
        r->row[k] = i;
        r->prim[k] = j;
        r->s[k] = log(pred[i]);
        r->y[k] = log(t->ms[i]);
        layer_seen[t->layer[i]] = 1;
    }
    if (r->n == 0) {
        st = convsel_error(CONVSEL_INVALID_ARGUMENT,
                           "no conv records of the model's primitives to calibrate on (%zu records in the samples)",
                           t->n);
        goto done;
    }
    const convsel_fingerprint *cpu = &t->fingerprints[cpu_index];

    cal->cpu = *cpu;
    snprintf(cal->source_id, sizeof cal->source_id, "%s", source->id);
    cal->method = params->method;
    cal->records = r->n;
    cal->seed = params->seed;
    for (size_t l = 0; l < t->n_layers; l++)
        cal->samples += layer_seen[l];
    cal->n_primitives = source->n_primitives;
    cal->a = calloc(cal->n_primitives ? cal->n_primitives : 1, sizeof *cal->a);
    cal->b = calloc(cal->n_primitives ? cal->n_primitives : 1, sizeof *cal->b);
    if (!cal->a || !cal->b) {
        st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < r->n; i++) {
        const convsel_record *rec = t->records[r->row[i]];
        cal->threads_mask |= convsel_threads_bit(rec->threads);
        convsel_features_compute(&rec->problem, rec->threads, (int)r->prim[i], source->primitives[r->prim[i]], cpu,
                                 r->x + i * CONVSEL_FEATURE_COUNT);
        r->layer[i] = t->layer[r->row[i]];
    }
done:
    free(map);
    free(pred);
    free(layer_seen);
    return st;
}

static convsel_status check_call(const convsel_model *source, const convsel_dataset *target_samples,
                                 convsel_model **out, const convsel_calibrate_params **params,
                                 convsel_calibrate_params *defaults)
{
    if (!source || !target_samples || !out)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "NULL argument");
    *out = NULL;
    if (!*params) {
        convsel_calibrate_params_default(defaults);
        *params = defaults;
    }
    return check_params(*params);
}

convsel_status convsel_model_calibrate(const convsel_model *source, const convsel_dataset *target_samples,
                                       const convsel_calibrate_params *params, convsel_model **out)
{
    convsel_calibrate_params defaults;
    convsel_status st = check_call(source, target_samples, out, &params, &defaults);
    if (st != CONVSEL_OK)
        return st;
    if (params->method == CONVSEL_CALIBRATE_RETRAIN)
        return convsel_error(CONVSEL_INVALID_ARGUMENT,
                             "the retrain method needs the datasets the model was trained on: convsel_model_retrain");
    convsel_table t = {0};
    target_rows r = {0};
    convsel_calibration cal = {0};
    convsel_model *m = NULL;
    if ((st = samples_prepare(source, target_samples, params, &t, &r, &cal)) != CONVSEL_OK)
        goto done;
    if (convsel_calibrate_method_chooses(params->method)) {
        /* The one-standard-error rule: the simplest method whose
         * cross-validated regret is within one standard error of the best
         * one's. With fewer than 3 configurations there is no
         * cross-validation (every regret 0), and the simplest is taken:
         * for AUTO the pooled line, which keeps the source's ranking; for
         * LINEAR_OR_BOTH, which starts one step later, the lines. */
        static const convsel_calibrate_method tried[] = {CONVSEL_CALIBRATE_POOLED, CONVSEL_CALIBRATE_LINEAR,
                                                          CONVSEL_CALIBRATE_BOTH};
        enum { TRIED = sizeof tried / sizeof tried[0] };
        double rmse[TRIED] = {0}, regret[TRIED] = {0}, se[TRIED] = {0};
        const size_t first = params->method == CONVSEL_CALIBRATE_AUTO ? 0 : 1;
        size_t best = first, pick = first;
        for (size_t k = first; k < TRIED; k++) {
            if ((st = cross_validate(&r, t.n_layers, params, tried[k], &cal, &rmse[k], &regret[k], &se[k])) !=
                CONVSEL_OK)
                goto done;
            if (regret[k] < regret[best])
                best = k;
        }
        /* Winning by less than CV_REGRET_FLOOR is no win, even where the
         * best method's standard error is 0 (every held-out pick right). */
        while (regret[pick] > regret[best] + fmax(se[best], CV_REGRET_FLOOR))
            pick++;
        cal.method = tried[pick];
        cal.cv_rmse_log = rmse[pick];
        cal.cv_regret_log = regret[pick];
        cal.auto_chosen = 1;
    } else {
        double se;
        if ((st = cross_validate(&r, t.n_layers, params, params->method, &cal, &cal.cv_rmse_log, &cal.cv_regret_log,
                                 &se)) != CONVSEL_OK)
            goto done;
    }
    if ((st = fit_rows(&r, NULL, params, cal.method, &cal)) != CONVSEL_OK)
        goto done;

    if ((st = model_copy(source, &m)) != CONVSEL_OK)
        goto done;
    if ((st = install(m, &cal)) != CONVSEL_OK)
        goto done;
    st = convsel_model_update_id(m);

done:
    free(cal.a);
    free(cal.b);
    convsel_ensemble_free(&cal.residual);
    target_rows_free(&r);
    convsel_table_free(&t);
    if (st != CONVSEL_OK) {
        convsel_model_destroy(m);
        return st;
    }
    *out = m;
    return CONVSEL_OK;
}

convsel_status convsel_model_retrain(const convsel_model *source, const convsel_dataset *const *source_data,
                                     size_t n_data, const convsel_dataset *target_samples,
                                     const convsel_calibrate_params *params, convsel_model **out)
{
    const double t_start = convsel_now();
    convsel_calibrate_params defaults;
    convsel_status st = check_call(source, target_samples, out, &params, &defaults);
    if (st != CONVSEL_OK)
        return st;
    if (!source_data || n_data == 0)
        return convsel_error(CONVSEL_INVALID_ARGUMENT,
                             "retraining needs the datasets the model was trained on (none given)");
    for (size_t i = 0; i < n_data; i++)
        if (!source_data[i])
            return convsel_error(CONVSEL_INVALID_ARGUMENT, "source dataset %zu is NULL", i);
    convsel_table t = {0};
    target_rows r = {0};
    convsel_calibration cal = {0};
    convsel_model *m = NULL;
    size_t copies = (size_t)params->retrain_copies;
    const convsel_dataset **sets = malloc((n_data + copies) * sizeof *sets);
    if (!sets) {
        st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    /* The samples are checked (one CPU, records of the source's
     * primitives) and give the provenance, as for the other methods. */
    if ((st = samples_prepare(source, target_samples, params, &t, &r, &cal)) != CONVSEL_OK)
        goto done;
    memcpy(sets, source_data, n_data * sizeof *sets);
    for (size_t c = 0; c < copies; c++)
        sets[n_data + c] = target_samples;
    convsel_train_params tp = source->params;
    tp.seed = params->seed;
    tp.threads = params->threads;
    tp.time_limit_s = convsel_time_left(params->time_limit_s, t_start); /* checking the samples counts */
    if ((st = convsel_model_train(sets, n_data + copies, &tp, NULL, NULL, &m)) != CONVSEL_OK)
        goto done;
    /* The calibration keeps the provenance and predicts what the new trees
     * predict: log ms = 0 + 1 · s, for every primitive of the new model. */
    free(cal.a);
    free(cal.b);
    cal.method = CONVSEL_CALIBRATE_RETRAIN;
    cal.n_primitives = m->n_primitives;
    cal.a = calloc(cal.n_primitives ? cal.n_primitives : 1, sizeof *cal.a);
    cal.b = malloc((cal.n_primitives ? cal.n_primitives : 1) * sizeof *cal.b);
    if (!cal.a || !cal.b) {
        st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    for (size_t j = 0; j < cal.n_primitives; j++)
        cal.b[j] = 1.0;
    cal.cv_rmse_log = convsel_model_uncertainty(m);
    if ((st = install(m, &cal)) != CONVSEL_OK)
        goto done;
    st = convsel_model_update_id(m);

done:
    free(sets);
    free(cal.a);
    free(cal.b);
    convsel_ensemble_free(&cal.residual);
    target_rows_free(&r);
    convsel_table_free(&t);
    if (st != CONVSEL_OK) {
        convsel_model_destroy(m);
        return st;
    }
    *out = m;
    return CONVSEL_OK;
}

/* ---------------------------------------------------------------- the default method */

/* What the learner's features know of the machine a record ran on: the CPU
 * features (ISA cap, cores) and the thread count. Two CPUs alike in all
 * three differ to the trees only through the cache ratios and the ISA of
 * OpenBLAS's kernels (blas_isa). That one is left out of the key: a setup
 * with other OpenBLAS kernels moves the two GEMM primitives by a factor,
 * which is what the per-primitive lines fit. */
typedef struct {
    convsel_isa isa_cap;
    int cores, threads;
} machine_key;

static machine_key record_machine(const convsel_dataset *ds, const convsel_record *r)
{
    const convsel_fingerprint *f = convsel_dataset_fingerprint(ds, r->fingerprint);
    machine_key k = {f ? f->isa_cap : r->isa, f ? f->cores : 0, r->threads};
    return k;
}

static int machine_key_in(const machine_key *keys, size_t n, machine_key k)
{
    for (size_t j = 0; j < n; j++)
        if (keys[j].isa_cap == k.isa_cap && keys[j].cores == k.cores && keys[j].threads == k.threads)
            return 1;
    return 0;
}

convsel_calibrate_method convsel_calibrate_default_method(const convsel_dataset *const *source_data, size_t n_data,
                                                          const convsel_dataset *target_samples)
{
    if (!source_data || n_data == 0 || !target_samples)
        return CONVSEL_CALIBRATE_LINEAR_OR_BOTH;
    /* The distinct keys of the source's records: a handful (CPUs × caps ×
     * thread counts), so a list searched linearly. */
    machine_key *seen = NULL;
    size_t n_seen = 0, cap = 0;
    for (size_t d = 0; d < n_data; d++) {
        const convsel_dataset *ds = source_data[d];
        for (size_t i = 0; ds && i < convsel_dataset_size(ds); i++) {
            const convsel_record *r = convsel_dataset_record(ds, i);
            if (r->kind != CONVSEL_RECORD_CONV)
                continue;
            machine_key k = record_machine(ds, r);
            if (machine_key_in(seen, n_seen, k))
                continue;
            machine_key *grown = convsel_grow(seen, n_seen, &cap, 16, sizeof *grown);
            if (!grown) {
                free(seen);
                return CONVSEL_CALIBRATE_RETRAIN; /* the former default */
            }
            seen = grown;
            seen[n_seen++] = k;
        }
    }
    convsel_calibrate_method method = CONVSEL_CALIBRATE_LINEAR_OR_BOTH;
    for (size_t i = 0; i < convsel_dataset_size(target_samples) && method == CONVSEL_CALIBRATE_LINEAR_OR_BOTH; i++) {
        const convsel_record *r = convsel_dataset_record(target_samples, i);
        if (r->kind != CONVSEL_RECORD_CONV)
            continue;
        if (!machine_key_in(seen, n_seen, record_machine(target_samples, r)))
            method = CONVSEL_CALIBRATE_RETRAIN;
    }
    free(seen);
    return method;
}

/* ---------------------------------------------------------------- choosing what to profile */

enum { SPACE_DIMS = 8 };
/* Demand points of the k-median at most (a seeded sample of larger pools). */
#define CHOOSE_MAX_DEMAND 1024
/* Farther than any two normalised points: "no pick near yet". */
#define CHOOSE_FAR 1e3

/* Where a configuration sits for coverage: sizes on log scales, so that a
 * 7×7 and a 14×14 layer are as far apart as a 56×56 and a 112×112 one. */
static void space_point(const convsel_calibrate_candidate *c, double *v)
{
    const convsel_problem *p = &c->problem;
    double g = p->g > 0 ? (double)p->g : 1.0;
    double flops = convsel_problem_flops(p);
    v[0] = log(flops > 1 ? flops : 1);
    v[1] = log((double)p->ic / g + 1);
    v[2] = log((double)p->oc / g + 1);
    v[3] = log((double)(p->oh * p->ow) + 1);
    v[4] = log((double)(p->kh * p->kw));
    v[5] = (double)(p->sh > p->sw ? p->sh : p->sw);
    v[6] = p->g > 1 && p->g == p->ic && p->g == p->oc ? 1.0 : 0.0;
    v[7] = log2((double)c->threads);
}

static double dist2(const double *a, const double *b)
{
    double s = 0;
    for (int d = 0; d < SPACE_DIMS; d++)
        s += (a[d] - b[d]) * (a[d] - b[d]);
    return s;
}

/* A configuration's identity: every size and the threads, not the name. */
typedef struct config_key {
    int64_t v[17];
    size_t index;
} config_key;

static void config_key_fill(const convsel_calibrate_candidate *c, size_t index, config_key *key)
{
    const convsel_problem *p = &c->problem;
    const int64_t v[17] = {p->g,  p->mb, p->ic, p->ih, p->iw, p->oc, p->oh, p->ow,      p->kh,
                           p->kw, p->sh, p->sw, p->ph, p->pw, p->dh, p->dw, c->threads};
    memcpy(key->v, v, sizeof v);
    key->index = index;
}

static int cmp_config_key(const void *a, const void *b)
{
    const config_key *x = a, *y = b;
    for (int k = 0; k < 17; k++)
        if (x->v[k] != y->v[k])
            return x->v[k] < y->v[k] ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* log(second fastest / fastest) predicted among the applicable primitives;
 * +inf when fewer than two apply (nothing to rank). */
static convsel_status ranking_gap(const convsel_model *source, const convsel_calibrate_candidate *c,
                                  const convsel_fingerprint *cpu, const size_t *catalogue, double *gap)
{
    double best = INFINITY, second = INFINITY;
    *gap = INFINITY;
    for (size_t j = 0; j < source->n_primitives; j++) {
        int applies;
        if (c->applicable)
            applies = j < 64 ? (int)((c->applicable >> j) & 1u) : 1;
        else
            applies = catalogue[j] == SIZE_MAX || convsel_primitive_applicable(catalogue[j], &c->problem, NULL, 0);
        if (!applies)
            continue;
        convsel_model_query q = {.problem = &c->problem, .threads = c->threads, .primitive = j, .cpu = cpu};
        double ms;
        convsel_status st = convsel_model_predict_batch(source, &q, 1, &ms);
        if (st != CONVSEL_OK)
            return st;
        double l = log(ms);
        if (l < best) {
            second = best;
            best = l;
        } else if (l < second) {
            second = l;
        }
    }
    if (isfinite(second))
        *gap = second - best;
    return CONVSEL_OK;
}

convsel_status convsel_calibrate_choose(const convsel_model *source, const convsel_calibrate_candidate *pool,
                                        size_t n_pool, size_t k, uint64_t seed, const convsel_fingerprint *cpu,
                                        size_t *chosen)
{
    if (!source || (n_pool && !pool) || (k && !chosen))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "NULL argument");
    if (k == 0)
        return CONVSEL_OK;
    if (!cpu && source->n_fingerprints)
        cpu = &source->fingerprints[0];
    for (size_t i = 0; i < n_pool; i++) {
        if (pool[i].threads < 1)
            return convsel_error(CONVSEL_INVALID_ARGUMENT, "candidate %zu: threads must be >= 1", i);
        if (convsel_problem_validate(&pool[i].problem) != CONVSEL_OK)
            return convsel_error(CONVSEL_INVALID_ARGUMENT, "candidate %zu: %s", i, convsel_last_error());
    }
    size_t cap = n_pool ? n_pool : 1;
    config_key *order = malloc(cap * sizeof *order);
    uint8_t *open = calloc(cap, 1), *uncertain = calloc(cap, 1);
    double *points = malloc(cap * SPACE_DIMS * sizeof *points);
    double *gap = malloc(cap * sizeof *gap), *sorted_gap = malloc(cap * sizeof *sorted_gap);
    double *nearest = malloc(cap * sizeof *nearest);
    size_t *demand = malloc(cap * sizeof *demand);
    size_t *catalogue = malloc((source->n_primitives ? source->n_primitives : 1) * sizeof *catalogue);
    convsel_status st = CONVSEL_OK;
    if (!order || !open || !uncertain || !points || !gap || !sorted_gap || !nearest || !demand || !catalogue) {
        st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory choosing among %zu candidates", n_pool);
        goto done;
    }

    /* Distinct configurations only: the first of each run of duplicates. */
    for (size_t i = 0; i < n_pool; i++)
        config_key_fill(&pool[i], i, &order[i]);
    qsort(order, n_pool, sizeof *order, cmp_config_key);
    size_t n_open = 0;
    for (size_t i = 0; i < n_pool; i++)
        if (i == 0 || memcmp(order[i].v, order[i - 1].v, sizeof order[i].v) != 0) {
            open[order[i].index] = 1;
            n_open++;
        }
    if (n_open < k) {
        st = convsel_error(CONVSEL_INVALID_ARGUMENT, "%zu samples asked for, the pool has %zu distinct configurations",
                           k, n_open);
        goto done;
    }

    /* Coverage space: every dimension scaled to unit spread over the pool. */
    double mean[SPACE_DIMS] = {0}, sd[SPACE_DIMS] = {0};
    for (size_t i = 0; i < n_pool; i++) {
        space_point(&pool[i], points + i * SPACE_DIMS);
        for (int d = 0; d < SPACE_DIMS; d++)
            mean[d] += points[i * SPACE_DIMS + d] / (double)n_pool;
    }
    for (size_t i = 0; i < n_pool; i++)
        for (int d = 0; d < SPACE_DIMS; d++)
            sd[d] += (points[i * SPACE_DIMS + d] - mean[d]) * (points[i * SPACE_DIMS + d] - mean[d]);
    for (int d = 0; d < SPACE_DIMS; d++)
        sd[d] = sqrt(sd[d] / (double)n_pool);
    for (size_t i = 0; i < n_pool; i++)
        for (int d = 0; d < SPACE_DIMS; d++)
            points[i * SPACE_DIMS + d] = sd[d] > 1e-12 ? (points[i * SPACE_DIMS + d] - mean[d]) / sd[d] : 0.0;

    /* Uncertainty: the quarter of the open pool (at least k of it) with the
     * smallest predicted gap between the two fastest primitives. */
    for (size_t j = 0; j < source->n_primitives; j++)
        if (convsel_primitive_find(source->primitives[j], &catalogue[j]) != CONVSEL_OK)
            catalogue[j] = SIZE_MAX;
    size_t n_gaps = 0;
    for (size_t i = 0; i < n_pool && st == CONVSEL_OK; i++) {
        gap[i] = INFINITY;
        if (open[i] && (st = ranking_gap(source, &pool[i], cpu, catalogue, &gap[i])) == CONVSEL_OK)
            sorted_gap[n_gaps++] = gap[i];
    }
    if (st != CONVSEL_OK)
        goto done;
    qsort(sorted_gap, n_gaps, sizeof *sorted_gap, convsel_cmp_double);
    size_t quarter = n_gaps / 4 > k ? n_gaps / 4 : k;
    double threshold = sorted_gap[quarter - 1];
    for (size_t i = 0; i < n_pool; i++)
        uncertain[i] = open[i] && isfinite(gap[i]) && gap[i] <= threshold;

    /* Demand points: where the picks should be close to. A large pool is
     * represented by a seeded sample of it, which keeps a pick O(pool). */
    size_t n_demand = 0;
    convsel_rng rng = {seed ^ 0x63616c6962ull}; /* "calib" */
    for (size_t i = 0; i < n_pool; i++)
        demand[i] = i;
    if (n_pool > CHOOSE_MAX_DEMAND) {
        for (size_t i = 0; i < CHOOSE_MAX_DEMAND; i++) {
            size_t j = i + convsel_rng_below(&rng, n_pool - i);
            size_t t = demand[i];
            demand[i] = demand[j];
            demand[j] = t;
        }
        n_demand = CHOOSE_MAX_DEMAND;
    } else {
        n_demand = n_pool;
    }
    for (size_t i = 0; i < n_demand; i++)
        nearest[i] = CHOOSE_FAR;
    for (size_t pick = 0; pick < k; pick++) {
        /* Coverage, uncertainty, coverage, ...: k / 2 picks by uncertainty. */
        int by_uncertainty = pick % 2 == 1;
        size_t best = SIZE_MAX;
        for (int attempt = 0; attempt < 2 && best == SIZE_MAX; attempt++) {
            /* Greedy k-median: the pick that most reduces the distance from
             * the demand points (the uncertain ones only, for an
             * uncertainty pick) to their nearest pick. The first pick is
             * the medoid. Ties go to the lower index. */
            double best_gain = -1;
            for (size_t c = 0; c < n_pool; c++) {
                if (!open[c] || (by_uncertainty && !uncertain[c]))
                    continue;
                const double *pc = points + c * SPACE_DIMS;
                double gain = 0;
                for (size_t q = 0; q < n_demand; q++) {
                    size_t i = demand[q];
                    if (by_uncertainty && !uncertain[i])
                        continue;
                    double d = sqrt(dist2(points + i * SPACE_DIMS, pc));
                    if (d < nearest[q])
                        gain += nearest[q] - d;
                }
                if (gain > best_gain) {
                    best_gain = gain;
                    best = c;
                }
            }
            by_uncertainty = 0; /* the uncertain ones are used up: cover instead */
        }
        if (best == SIZE_MAX) { /* cannot happen: n_open >= k */
            st = convsel_error(CONVSEL_INVALID_ARGUMENT, "ran out of candidates after %zu picks", pick);
            goto done;
        }
        chosen[pick] = best;
        open[best] = 0;
        for (size_t q = 0; q < n_demand; q++) {
            double d = sqrt(dist2(points + demand[q] * SPACE_DIMS, points + best * SPACE_DIMS));
            if (d < nearest[q])
                nearest[q] = d;
        }
    }

done:
    free(order);
    free(open);
    free(uncertain);
    free(points);
    free(gap);
    free(sorted_gap);
    free(nearest);
    free(demand);
    free(catalogue);
    return st;
}

/* ---------------------------------------------------------------- candidates from a dataset */

/* A conv record's configuration key; the record index keeps records of one
 * configuration in dataset order, since qsort is not stable. */
typedef struct keyed_record {
    char key[256];
    size_t record;
} keyed_record;

static int cmp_keyed_record(const void *a, const void *b)
{
    const keyed_record *x = a, *y = b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->record > y->record) - (x->record < y->record);
}

convsel_status convsel_calibrate_candidates_from_dataset(const convsel_dataset *dataset, const convsel_model *model,
                                                         convsel_calibrate_candidate *cands, size_t *n_cands,
                                                         size_t *record_candidate)
{
    if (n_cands)
        *n_cands = 0;
    if (!dataset || !model || !n_cands)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "NULL argument");
    size_t n = convsel_dataset_size(dataset), m = 0;
    if (n && !cands)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "NULL candidates for a dataset of %zu records", n);
    keyed_record *keys = malloc((n ? n : 1) * sizeof *keys);
    if (!keys)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory sorting %zu records by configuration", n);
    for (size_t i = 0; i < n; i++) {
        const convsel_record *r = convsel_dataset_record(dataset, i);
        if (record_candidate)
            record_candidate[i] = SIZE_MAX;
        if (r->kind != CONVSEL_RECORD_CONV)
            continue;
        convsel_record_config_key(r, keys[m].key, sizeof keys[m].key);
        keys[m++].record = i;
    }
    qsort(keys, m, sizeof *keys, cmp_keyed_record);
    size_t c = 0;
    for (size_t i = 0; i < m; i++) {
        const convsel_record *r = convsel_dataset_record(dataset, keys[i].record);
        if (i == 0 || strcmp(keys[i].key, keys[i - 1].key) != 0) {
            memset(&cands[c], 0, sizeof cands[c]);
            cands[c].problem = r->problem;
            cands[c].threads = r->threads;
            c++;
        }
        if (record_candidate)
            record_candidate[keys[i].record] = c - 1;
        size_t j;
        if (convsel_model_primitive_find(model, r->primitive, &j) == CONVSEL_OK && j < 64)
            cands[c - 1].applicable |= 1ull << j;
    }
    free(keys);
    *n_cands = c;
    return CONVSEL_OK;
}

convsel_status convsel_calibrate_samples_from_dataset(const convsel_dataset *dataset, const size_t *record_candidate,
                                                      size_t n_cands, const size_t *chosen, size_t k,
                                                      convsel_dataset **samples)
{
    if (samples)
        *samples = NULL;
    if (!dataset || !samples || (convsel_dataset_size(dataset) && !record_candidate) || (k && !chosen))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "NULL argument");
    for (size_t s = 0; s < k; s++)
        if (chosen[s] >= n_cands)
            return convsel_error(CONVSEL_INVALID_ARGUMENT, "chosen[%zu] is %zu, there are %zu candidates", s,
                                 chosen[s], n_cands);
    size_t n = convsel_dataset_size(dataset), nf = convsel_dataset_fingerprint_count(dataset);
    uint8_t *keep = calloc(n_cands ? n_cands : 1, 1);
    uint32_t *map = malloc((nf ? nf : 1) * sizeof *map);
    convsel_dataset *out = NULL;
    convsel_status st = CONVSEL_OK;
    if (!keep || !map) {
        st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory taking %zu candidates' records", k);
        goto done;
    }
    for (size_t s = 0; s < k; s++)
        keep[chosen[s]] = 1;
    if ((st = convsel_dataset_create(&out)) != CONVSEL_OK)
        goto done;
    /* Every fingerprint, used or not, in the source's order: the new
     * dataset's indexes are then the same as long as none repeats. */
    for (size_t f = 0; f < nf && st == CONVSEL_OK; f++)
        st = convsel_dataset_add_fingerprint(out, convsel_dataset_fingerprint(dataset, f), &map[f]);
    for (size_t i = 0; i < n && st == CONVSEL_OK; i++) {
        size_t c = record_candidate[i];
        if (c == SIZE_MAX)
            continue;
        if (c >= n_cands) {
            st = convsel_error(CONVSEL_INVALID_ARGUMENT, "record %zu: candidate %zu, there are %zu", i, c, n_cands);
            break;
        }
        if (!keep[c])
            continue;
        convsel_record r = *convsel_dataset_record(dataset, i);
        if (r.fingerprint >= nf) {
            st = convsel_error(CONVSEL_INVALID_ARGUMENT, "record %zu: fingerprint %u, the dataset has %zu", i,
                               (unsigned)r.fingerprint, nf);
            break;
        }
        r.fingerprint = map[r.fingerprint];
        st = convsel_dataset_append(out, &r);
    }

done:
    free(keep);
    free(map);
    if (st != CONVSEL_OK) {
        convsel_dataset_destroy(out);
        return st;
    }
    *samples = out;
    return CONVSEL_OK;
}
