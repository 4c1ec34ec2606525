/*
 * Accuracy of a model: per-record errors, and per-layer ranking quality
 * (what selection cares about: is the predicted-fastest primitive the
 * fastest, and what does it cost when it is not). Cross-validation.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model.h"

typedef struct primitive_row {
    int32_t primitive;
    size_t row;
} primitive_row;

static int cmp_primitive_row(const void *a, const void *b)
{
    const primitive_row *x = a, *y = b;
    if (x->primitive != y->primitive)
        return x->primitive < y->primitive ? -1 : 1;
    return (x->row > y->row) - (x->row < y->row);
}

typedef struct ranked {
    double value;
    size_t index;
} ranked;

static int cmp_ranked(const void *a, const void *b)
{
    const ranked *x = a, *y = b;
    if (x->value != y->value)
        return x->value < y->value ? -1 : 1;
    return (x->index > y->index) - (x->index < y->index);
}

/* Ranks of v[0..n) (1-based, ties averaged) into rank. */
static void ranks(const double *v, size_t n, ranked *tmp, double *rank)
{
    for (size_t i = 0; i < n; i++)
        tmp[i] = (ranked){v[i], i};
    qsort(tmp, n, sizeof *tmp, cmp_ranked);
    for (size_t i = 0; i < n;) {
        size_t j = i;
        while (j + 1 < n && tmp[j + 1].value == tmp[i].value)
            j++;
        double r = 0.5 * (double)(i + j) + 1.0;
        for (size_t k = i; k <= j; k++)
            rank[tmp[k].index] = r;
        i = j + 1;
    }
}

static double spearman(const double *a, const double *b, size_t n, ranked *tmp, double *ra, double *rb)
{
    ranks(a, n, tmp, ra);
    ranks(b, n, tmp, rb);
    double ma = 0, mb = 0;
    for (size_t i = 0; i < n; i++) {
        ma += ra[i];
        mb += rb[i];
    }
    ma /= (double)n;
    mb /= (double)n;
    double sab = 0, saa = 0, sbb = 0;
    for (size_t i = 0; i < n; i++) {
        sab += (ra[i] - ma) * (rb[i] - mb);
        saa += (ra[i] - ma) * (ra[i] - ma);
        sbb += (rb[i] - mb) * (rb[i] - mb);
    }
    if (saa <= 0 || sbb <= 0)
        return 0.0;
    return sab / sqrt(saa * sbb);
}

/* Records without a prediction or a positive time are left out. */
static int scored(double measured, double pred)
{
    return isfinite(pred) && measured > 0;
}

convsel_status convsel_metrics_compute(size_t n, const size_t *layer, const int32_t *primitive, const double *measured,
                                       const double *pred, const uint8_t *dispatcher, const uint8_t *unranked,
                                       convsel_metrics *m)
{
    memset(m, 0, sizeof *m);
    primitive_row *rows = malloc((n ? n : 1) * sizeof *rows);
    double *regret = malloc((n ? n : 1) * sizeof *regret);
    double *a = malloc(5 * (n ? n : 1) * sizeof *a);
    ranked *tmp = malloc((n ? n : 1) * sizeof *tmp);
    if (!rows || !regret || !a || !tmp) {
        free(rows);
        free(regret);
        free(a);
        free(tmp);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory computing metrics");
    }
    double *b = a + n, *ra = b + n, *rb = ra + n;
    size_t used = 0;
    double ape = 0;
    size_t within = 0;
    for (size_t i = 0; i < n; i++) {
        if (!scored(measured[i], pred[i]))
            continue;
        double e = fabs(pred[i] - measured[i]) / measured[i];
        ape += e;
        within += e <= 0.10;
        rows[used++] = (primitive_row){primitive[i], i};
    }
    m->n_records = used;
    if (used == 0) {
        free(rows);
        free(regret);
        free(a);
        free(tmp);
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "no records to evaluate");
    }
    m->mape = ape / (double)used;
    m->within10 = (double)within / (double)used;
    size_t n_groups = 0;
    for (size_t i = 0; i < n; i++)
        if (layer[i] >= n_groups)
            n_groups = layer[i] + 1;
    convsel_groups groups;
    convsel_status st = convsel_groups_build(n, layer, n_groups, &groups);
    double *pa = malloc(4 * used * sizeof *pa);
    if (st == CONVSEL_OK && !pa)
        st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory computing metrics");
    if (st != CONVSEL_OK) {
        free(rows);
        free(regret);
        free(a);
        free(tmp);
        free(pa);
        convsel_groups_free(&groups);
        return st;
    }
    for (size_t i = 0; i < used; i++) {
        pa[i] = pred[rows[i].row];
        pa[used + i] = measured[rows[i].row];
    }
    m->spearman_pooled = spearman(pa, pa + used, used, tmp, pa + 2 * used, pa + 3 * used);
    free(pa);

    size_t n_layers = 0, top1 = 0;
    double rho = 0;
    for (size_t l = 0; l < groups.n_groups; l++) {
        /* The layer's records by primitive, then record: the order in which
         * entries are taken and ties broken. */
        size_t j = 0, ranked_rows = 0;
        for (size_t g = groups.start[l]; g < groups.start[l + 1]; g++) {
            size_t i = groups.order[g];
            ranked_rows += scored(measured[i], pred[i]) && !(unranked && unranked[i]);
        }
        for (size_t g = groups.start[l]; g < groups.start[l + 1]; g++) {
            size_t i = groups.order[g];
            if (scored(measured[i], pred[i]) && !(ranked_rows && unranked && unranked[i]))
                rows[j++] = (primitive_row){primitive[i], i};
        }
        qsort(rows, j, sizeof *rows, cmp_primitive_row);
        /* A dispatcher runs one of the other primitives' implementations:
         * where at least two others are measured, ranking it too would score
         * a coin toss between two names for one kernel. */
        size_t others = 0;
        int skip_dispatcher = 0;
        if (dispatcher) {
            for (size_t r = 0; r < j; r++)
                others += !dispatcher[rows[r].primitive] && (r == 0 || rows[r].primitive != rows[r - 1].primitive);
            skip_dispatcher = others >= 2;
        }
        /* One entry per primitive: the first record of a repeated one. */
        size_t k = 0;
        for (size_t r = 0; r < j; r++) {
            if (r > 0 && rows[r].primitive == rows[r - 1].primitive)
                continue;
            if (skip_dispatcher && dispatcher[rows[r].primitive])
                continue;
            a[k] = pred[rows[r].row];
            b[k] = measured[rows[r].row];
            k++;
        }
        if (k < 2)
            continue;
        size_t best_pred = 0, best_meas = 0;
        for (size_t q = 1; q < k; q++) {
            if (a[q] < a[best_pred])
                best_pred = q;
            if (b[q] < b[best_meas])
                best_meas = q;
        }
        /* Ties in the measurement: any fastest one counts as right. */
        top1 += b[best_pred] == b[best_meas];
        regret[n_layers] = b[best_pred] / b[best_meas] - 1.0;
        rho += spearman(a, b, k, tmp, ra, rb);
        n_layers++;
    }
    m->n_layers = n_layers;
    if (n_layers) {
        m->top1 = (double)top1 / (double)n_layers;
        m->spearman = rho / (double)n_layers;
        double sum = 0;
        for (size_t l = 0; l < n_layers; l++)
            sum += regret[l];
        m->regret_mean = sum / (double)n_layers;
        qsort(regret, n_layers, sizeof *regret, convsel_cmp_double);
        double pos = 0.95 * (double)(n_layers - 1);
        size_t lo = (size_t)floor(pos);
        size_t hi = lo + 1 < n_layers ? lo + 1 : lo;
        m->regret_p95 = regret[lo] + (pos - (double)lo) * (regret[hi] - regret[lo]);
    } else {
        m->spearman = m->top1 = m->regret_mean = m->regret_p95 = NAN;
    }
    convsel_groups_free(&groups);
    free(rows);
    free(regret);
    free(a);
    free(tmp);
    return CONVSEL_OK;
}

/* The kernel that ran a row's record (primitive c): the record's kernel
 * column where the profiler wrote it; else, for a record measured under the
 * ISA cap in force, what this machine's libraries would run (files profiled
 * before the column existed: oneDNN's choice is taken to turn on the cap and
 * the shape, not on the CPU model; docs/transfer.md checks that against a
 * run on the Xeon); SIZE_MAX when neither is known. */
static size_t row_kernel(const convsel_record *r, size_t c)
{
    size_t k;
    if (r->kernel[0])
        return convsel_primitive_find(r->kernel, &k) == CONVSEL_OK ? k : SIZE_MAX;
    if (r->isa != convsel_get_isa() || convsel_primitive_runs_as(c, &r->problem, r->threads, &k) != CONVSEL_OK)
        return SIZE_MAX;
    return k;
}

/* Re-prices the rows as the selector's cost source prices them
 * (convsel_model_costs_priced_as: a primitive run as another's kernel is
 * predicted as that kernel), and marks in unranked the rows whose kernel is
 * a library's reference loops, which the selector leaves out
 * (convsel_select_runs_naive). How many rows each happened to goes into
 * the metrics, with the rows whose kernel is not known. */
static void price_as_selector(const convsel_model *model, const convsel_table *t, double *pred, uint8_t *unranked,
                              convsel_metrics *m)
{
    for (size_t i = 0; i < t->n; i++) {
        const size_t c = t->catalogue[t->primitive[i]];
        if (!isfinite(pred[i]) || c == SIZE_MAX)
            continue;
        const convsel_record *r = t->records[i];
        const size_t as = row_kernel(r, c);
        size_t j;
        double ms;
        if (as == SIZE_MAX) {
            m->n_kernel_unknown++;
        } else if (as == c) {
            continue;
        } else if (convsel_primitive_is_reference(as)) {
            if (!convsel_primitive_is_reference(c)) {
                unranked[i] = 1;
                m->n_unranked++;
            }
        } else if (convsel_model_primitive_find(model, convsel_primitive_name(as), &j) == CONVSEL_OK &&
                   convsel_model_predict_ms(model, &r->problem, r->threads, as, &t->fingerprints[t->fingerprint[i]],
                                            &ms) == CONVSEL_OK) {
            pred[i] = ms;
            m->n_priced_as++;
        }
    }
}

/* fn (when not NULL) for every row with a prediction, in the datasets' order. */
static void report_predictions(const convsel_table *t, const double *pred, convsel_prediction_fn fn, void *user)
{
    for (size_t i = 0; fn && i < t->n; i++)
        if (!isnan(pred[i]))
            fn(t->records[i], t->ms[i], pred[i], user);
}

static convsel_status eval(const convsel_model *model, const convsel_dataset *const *sets, size_t n,
                           int as_selector, int truth, convsel_prediction_fn fn, void *user,
                           convsel_metrics *metrics);

convsel_status convsel_model_eval(const convsel_model *model, const convsel_dataset *const *sets, size_t n,
                                  convsel_metrics *metrics)
{
    return eval(model, sets, n, 0, -1, NULL, NULL, metrics);
}

convsel_status convsel_model_eval_as_selector(const convsel_model *model, const convsel_dataset *const *sets, size_t n,
                                              convsel_metrics *metrics)
{
    return eval(model, sets, n, 1, -1, NULL, NULL, metrics);
}

convsel_status convsel_model_eval_against(const convsel_model *model, const convsel_dataset *const *sets, size_t n,
                                          convsel_statistic truth, convsel_metrics *metrics)
{
    return eval(model, sets, n, 0, (int)truth, NULL, NULL, metrics);
}

convsel_status convsel_model_eval_predictions(const convsel_model *model, const convsel_dataset *const *sets,
                                              size_t n, int as_selector, convsel_statistic truth,
                                              convsel_prediction_fn fn, void *user, convsel_metrics *metrics)
{
    return eval(model, sets, n, as_selector != 0, (int)truth, fn, user, metrics);
}

static int valid_truth(int truth)
{
    return truth == -1 || truth == CONVSEL_STAT_MEDIAN || truth == CONVSEL_STAT_P10 || truth == CONVSEL_STAT_MIN;
}

/* Scores against another statistic than the one learnt: the rows stay the
 * same (a record's four timings are all valid or it is not loaded). */
static void rescore(convsel_table *t, int truth)
{
    if (truth < 0)
        return;
    for (size_t i = 0; i < t->n; i++)
        t->ms[i] = convsel_record_ms(t->records[i], (convsel_statistic)truth);
}

static convsel_status eval(const convsel_model *model, const convsel_dataset *const *sets, size_t n,
                           int as_selector, int truth, convsel_prediction_fn fn, void *user,
                           convsel_metrics *metrics)
{
    if (!model || !metrics || (n && !sets))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "NULL argument");
    if (!valid_truth(truth))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "unknown statistic %d to score against", truth);
    convsel_table t;
    convsel_status st = convsel_table_build(sets, n, model->params.statistic, &t);
    if (st != CONVSEL_OK)
        return st;
    double *pred = malloc((t.n ? t.n : 1) * sizeof *pred);
    uint8_t *unranked = as_selector ? calloc(t.n ? t.n : 1, 1) : NULL;
    if (!pred || (as_selector && !unranked)) {
        free(pred);
        free(unranked);
        convsel_table_free(&t);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    }
    convsel_metrics priced = {0};
    st = convsel_model_predict_table(model, &t, NULL, pred);
    if (st == CONVSEL_OK && as_selector)
        price_as_selector(model, &t, pred, unranked, &priced);
    rescore(&t, truth);
    if (st == CONVSEL_OK)
        st = convsel_metrics_compute(t.n, t.layer, t.primitive, t.ms, pred, t.dispatcher, unranked, metrics);
    if (st == CONVSEL_OK) {
        metrics->n_priced_as = priced.n_priced_as;
        metrics->n_unranked = priced.n_unranked;
        metrics->n_kernel_unknown = priced.n_kernel_unknown;
    }
    free(unranked);
    if (st == CONVSEL_OK)
        report_predictions(&t, pred, fn, user);
    free(pred);
    convsel_table_free(&t);
    return st;
}

/* Trains on the rows where train_mask is set and predicts the rows where
 * test_mask is set, into pred. */
static convsel_status fold(const convsel_table *t, const uint8_t *train_mask, const uint8_t *test_mask,
                           const convsel_train_params *params, double *pred)
{
    convsel_model *model;
    convsel_status st = convsel_model_train_table(t, train_mask, params, NULL, NULL, &model);
    if (st != CONVSEL_OK)
        return st;
    double *p = malloc((t->n ? t->n : 1) * sizeof *p);
    if (!p) {
        convsel_model_destroy(model);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    }
    st = convsel_model_predict_table(model, t, test_mask, p);
    for (size_t i = 0; st == CONVSEL_OK && i < t->n; i++)
        if (test_mask[i])
            pred[i] = p[i];
    free(p);
    convsel_model_destroy(model);
    return st;
}

static convsel_status cv(const convsel_dataset *const *sets, size_t n, const convsel_train_params *params,
                         convsel_cv_kind kind, int truth, convsel_prediction_fn fn, void *user,
                         convsel_metrics *metrics);

convsel_status convsel_model_cv(const convsel_dataset *const *sets, size_t n, const convsel_train_params *params,
                                convsel_cv_kind kind, convsel_metrics *metrics)
{
    return cv(sets, n, params, kind, -1, NULL, NULL, metrics);
}

convsel_status convsel_model_cv_against(const convsel_dataset *const *sets, size_t n,
                                        const convsel_train_params *params, convsel_cv_kind kind,
                                        convsel_statistic truth, convsel_metrics *metrics)
{
    return cv(sets, n, params, kind, (int)truth, NULL, NULL, metrics);
}

convsel_status convsel_model_cv_predictions(const convsel_dataset *const *sets, size_t n,
                                            const convsel_train_params *params, convsel_cv_kind kind,
                                            convsel_statistic truth, convsel_prediction_fn fn, void *user,
                                            convsel_metrics *metrics)
{
    return cv(sets, n, params, kind, (int)truth, fn, user, metrics);
}

static convsel_status cv(const convsel_dataset *const *sets, size_t n, const convsel_train_params *params,
                         convsel_cv_kind kind, int truth, convsel_prediction_fn fn, void *user,
                         convsel_metrics *metrics)
{
    if (!metrics || (n && !sets))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "NULL argument");
    if (!valid_truth(truth))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "unknown statistic %d to score against", truth);
    convsel_train_params defaults;
    if (!params) {
        convsel_train_params_default(&defaults);
        params = &defaults;
    }
    convsel_table t;
    convsel_status st = convsel_table_build(sets, n, params->statistic, &t);
    if (st != CONVSEL_OK)
        return st;
    size_t cap = t.n ? t.n : 1;
    double *pred = malloc(cap * sizeof *pred);
    uint8_t *train = malloc(cap), *test = malloc(cap);
    size_t *order = malloc((t.n_layers ? t.n_layers : 1) * sizeof *order);
    if (!pred || !train || !test || !order) {
        st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
        goto done;
    }
    for (size_t i = 0; i < t.n; i++)
        pred[i] = NAN;
    if (kind == CONVSEL_CV_RANDOM) {
        if (t.n_layers < 2) {
            st = convsel_error(CONVSEL_INVALID_ARGUMENT, "random cross-validation needs at least 2 layers (got %zu)",
                               t.n_layers);
            goto done;
        }
        convsel_rng rng = {params->seed ^ 0x6376ull}; /* "cv" */
        for (size_t l = 0; l < t.n_layers; l++)
            order[l] = l;
        size_t k = (size_t)floor(0.2 * (double)t.n_layers + 0.5);
        if (k < 1)
            k = 1;
        uint8_t *held = calloc(t.n_layers, 1);
        if (!held) {
            st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
            goto done;
        }
        for (size_t i = 0; i < k; i++) {
            size_t j = i + convsel_rng_below(&rng, t.n_layers - i);
            size_t tmp = order[i];
            order[i] = order[j];
            order[j] = tmp;
            held[order[i]] = 1;
        }
        for (size_t i = 0; i < t.n; i++) {
            test[i] = held[t.layer[i]];
            train[i] = !test[i];
        }
        free(held);
        st = fold(&t, train, test, params, pred);
    } else {
        if (t.n_networks == 0) {
            st = convsel_error(CONVSEL_INVALID_ARGUMENT,
                               "no network names in the data (a network is the part of a layer's name before ':')");
            goto done;
        }
        for (size_t k = 0; k < t.n_networks && st == CONVSEL_OK; k++) {
            size_t n_train = 0;
            for (size_t i = 0; i < t.n; i++) {
                test[i] = t.network[i] == (int32_t)k;
                train[i] = !test[i];
                n_train += train[i];
            }
            if (n_train == 0) {
                st = convsel_error(CONVSEL_INVALID_ARGUMENT,
                                   "leave-one-network-out needs records outside network '%s' to train on",
                                   t.networks[k]);
                break;
            }
            st = fold(&t, train, test, params, pred);
            if (st != CONVSEL_OK)
                st = convsel_error(st, "fold '%s': %s", t.networks[k], convsel_last_error());
        }
    }
    rescore(&t, truth);
    if (st == CONVSEL_OK)
        st = convsel_metrics_compute(t.n, t.layer, t.primitive, t.ms, pred, t.dispatcher, NULL, metrics);
    if (st == CONVSEL_OK)
        report_predictions(&t, pred, fn, user);
done:
    free(pred);
    free(train);
    free(test);
    free(order);
    convsel_table_free(&t);
    return st;
}
