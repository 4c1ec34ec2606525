/*
 * The latency model against baselines, on held-out data: a random 80/20 split
 * by layer, leave-one-network-out, and the largest 20% of layers by FLOPs
 * held out (extrapolation). Rows: the roofline (FLOPs / peak vs
 * bytes / bandwidth), the refined roofline (a utilisation and a per-call
 * overhead per primitive fitted on the training part, after ANNETTE), our
 * GBDT with each target
 * transform, one model per primitive and one for all, and XGBoost through its
 * C API on the same features when built with it. Columns: MAPE, within 10%,
 * Spearman, top-1, regret mean / p95, training seconds (all folds) and
 * predictions per second on one core (batch prediction, features included).
 *
 *   bench_learner [DATA...] [--quick] [--out PREFIX] [--peak GFLOPS] [--bw GBS]
 *                 [--write-synthetic FILE]
 *
 * Without DATA it runs on synthetic latencies (tests/synthetic.h) of the
 * layers in $CONVSEL_NETWORKS_DIR (else ../shared/networks) at batch 1 and
 * 1-2 threads, plus random configurations; --write-synthetic saves that
 * dataset instead. Writes PREFIX.md and PREFIX.csv (default
 * bench/results/learner).
 */
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convsel.h"
#include "internal.h"
#include "../learner/features.h"
#include "../learner/model.h"
#include "../tests/synthetic.h"

#ifdef CONVSEL_HAVE_XGBOOST
#include <xgboost/c_api.h>
#endif

enum { ROOFLINE, ROOFLINE_REFINED, GBDT, XGBOOST };

typedef struct method {
    char name[64];
    int kind;
    convsel_train_params params;
} method;

typedef struct result {
    convsel_metrics metrics;
    double train_s, pred_per_s;
    int ok;
} result;

static double peak_gflops = 148.0, bandwidth_gbs = 12.0;

/* ---------------------------------------------------------------- synthetic data */

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Distinct shapes of every network file (batch 1; the first name kept, as
 * the profiler does), at 1 and 2 threads, plus random configurations. */
static convsel_status synthetic_dataset(int n_random, convsel_dataset **out, size_t *n_networks)
{
    const char *dir = getenv("CONVSEL_NETWORKS_DIR");
    if (!dir || !*dir)
        dir = "../shared/networks";
    DIR *d = opendir(dir);
    if (!d)
        return convsel_error(CONVSEL_IO_ERROR, "%s: cannot open (set CONVSEL_NETWORKS_DIR)", dir);
    char *files[256];
    size_t n_files = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n_files < 256) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".txt") == 0)
            files[n_files++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(files, n_files, sizeof *files, cmp_str);

    convsel_dataset *ds;
    convsel_status st = convsel_dataset_create(&ds);
    if (st != CONVSEL_OK)
        return st;
    convsel_fingerprint fp;
    syn_fingerprint(&fp);
    uint32_t fi;
    st = convsel_dataset_add_fingerprint(ds, &fp, &fi);
    convsel_rng rng = {12345};
    size_t cap = 4096, n_shapes = 0;
    char(*shapes)[256] = malloc(cap * sizeof *shapes);
    *n_networks = 0;
    for (size_t f = 0; f < n_files && st == CONVSEL_OK; f++) {
        char path[4096];
        snprintf(path, sizeof path, "%s/%s", dir, files[f]);
        convsel_network *net;
        if (convsel_network_load(path, 1, &net) != CONVSEL_OK) {
            fprintf(stderr, "bench_learner: skipping %s: %s\n", path, convsel_last_error());
            continue;
        }
        int named = 0;
        for (size_t l = 0; l < convsel_network_size(net) && st == CONVSEL_OK; l++) {
            convsel_problem p = *convsel_network_layer(net, l);
            convsel_problem shape = p;
            shape.name[0] = '\0';
            shape.repeat = 1;
            char key[256];
            convsel_problem_format(&shape, key, sizeof key);
            size_t k = 0;
            while (k < n_shapes && strcmp(shapes[k], key) != 0)
                k++;
            if (k < n_shapes || convsel_problem_flops(&p) > 2e10)
                continue;
            if (n_shapes == cap) {
                cap *= 2;
                shapes = realloc(shapes, cap * sizeof *shapes);
            }
            snprintf(shapes[n_shapes++], 256, "%s", key);
            named |= strchr(p.name, ':') != NULL;
            for (int t = 1; t <= 2 && st == CONVSEL_OK; t++)
                st = syn_add(ds, fi, &p, t, 0.03, &rng, NULL);
        }
        *n_networks += named;
        convsel_network_destroy(net);
    }
    for (int i = 0; i < n_random && st == CONVSEL_OK; i++) {
        convsel_problem p;
        syn_random_problem(&rng, "", i, &p);
        for (int t = 1; t <= 2 && st == CONVSEL_OK; t++)
            st = syn_add(ds, fi, &p, t, 0.03, &rng, NULL);
    }
    for (size_t f = 0; f < n_files; f++)
        free(files[f]);
    free(shapes);
    if (st != CONVSEL_OK) {
        convsel_dataset_destroy(ds);
        return st;
    }
    *out = ds;
    return CONVSEL_OK;
}

/* ---------------------------------------------------------------- baselines */

static void roofline_fold(const convsel_table *t, const uint8_t *train, const uint8_t *test, int refined, double *pred)
{
    double *u = malloc(t->n_names * sizeof *u), *c = calloc(t->n_names, sizeof *c);
    const convsel_problem **problems = malloc(t->n * sizeof *problems);
    const convsel_fingerprint **cpus = malloc(t->n * sizeof *cpus);
    int *threads = malloc(t->n * sizeof *threads);
    double *ms = malloc(t->n * sizeof *ms);
    for (size_t k = 0; k < t->n_names; k++) {
        u[k] = 1.0;
        if (!refined)
            continue;
        size_t n = 0;
        for (size_t i = 0; i < t->n; i++)
            if (train[i] && t->primitive[i] == (int32_t)k) {
                problems[n] = &t->records[i]->problem;
                cpus[n] = &t->fingerprints[t->fingerprint[i]];
                threads[n] = t->records[i]->threads;
                ms[n] = t->ms[i];
                n++;
            }
        convsel_roofline_fit(problems, threads, cpus, ms, n, peak_gflops, bandwidth_gbs, &u[k], &c[k]);
    }
    for (size_t i = 0; i < t->n; i++)
        if (test[i])
            pred[i] = c[t->primitive[i]] + convsel_roofline_ms(&t->records[i]->problem, t->records[i]->threads,
                                                               &t->fingerprints[t->fingerprint[i]], peak_gflops,
                                                               bandwidth_gbs, u[t->primitive[i]]);
    free(u);
    free(c);
    free(problems);
    free(cpus);
    free(threads);
    free(ms);
}

static double roofline_speed(const convsel_table *t)
{
    double start = convsel_now(), sum = 0;
    size_t done = 0;
    while (convsel_now() - start < 0.2)
        for (size_t i = 0; i < t->n; i++, done++)
            sum += convsel_roofline_ms(&t->records[i]->problem, t->records[i]->threads,
                                       &t->fingerprints[t->fingerprint[i]], peak_gflops, bandwidth_gbs, 0.5);
    return sum > 0 ? (double)done / (convsel_now() - start) : 0;
}

/* Batch predictions per second of model on the table's rows, one thread. */
static double model_speed(const convsel_model *model, const convsel_table *t)
{
    convsel_model_query *q = malloc(t->n * sizeof *q);
    double *ms = malloc(t->n * sizeof *ms);
    size_t n = 0;
    for (size_t i = 0; i < t->n; i++) {
        size_t j;
        if (convsel_model_primitive_find(model, t->names[t->primitive[i]], &j) == CONVSEL_OK)
            q[n++] = (convsel_model_query){&t->records[i]->problem, t->records[i]->threads, j,
                                           &t->fingerprints[t->fingerprint[i]]};
    }
    double start = convsel_now();
    size_t done = 0;
    while (n && convsel_now() - start < 0.3) {
        convsel_model_predict_batch(model, q, n, ms);
        done += n;
    }
    double rate = done ? (double)done / (convsel_now() - start) : 0;
    free(q);
    free(ms);
    return rate;
}

#ifdef CONVSEL_HAVE_XGBOOST
static void xgb_param(BoosterHandle booster, const char *key, double value)
{
    char text[32];
    snprintf(text, sizeof text, "%g", value);
    XGBoosterSetParam(booster, key, text);
}

/* Features, target offsets and table rows of primitive k's rows in mask. */
static size_t xgb_rows(const convsel_table *t, const uint8_t *mask, size_t k, const convsel_train_params *p, double u,
                       double c, float *x, double *offset, size_t *rows)
{
    size_t m = 0;
    for (size_t i = 0; i < t->n; i++) {
        if (t->primitive[i] != (int32_t)k || !mask[i])
            continue;
        const convsel_record *r = t->records[i];
        const convsel_fingerprint *cpu = &t->fingerprints[t->fingerprint[i]];
        convsel_features_compute(&r->problem, r->threads, (int)k, t->names[k], cpu, x + m * CONVSEL_FEATURE_COUNT);
        offset[m] = convsel_target_offset(p, &r->problem, r->threads, cpu, u, c);
        rows[m++] = i;
    }
    return m;
}

/* XGBoost (hist) on our features, one model per primitive, the same target,
 * as many rounds and the same learning rate as our trees may use (its C API
 * has no early stopping, so it always uses all of them). */
static int xgb_fold(const convsel_table *t, const uint8_t *train, const uint8_t *test, const convsel_train_params *p,
                    double *pred, double *speed)
{
    const size_t F = CONVSEL_FEATURE_COUNT;
    float *x = malloc(t->n * F * sizeof *x), *y = malloc(t->n * sizeof *y);
    double *offset = malloc(t->n * sizeof *offset), *ms = malloc(t->n * sizeof *ms);
    size_t *rows = malloc(t->n * sizeof *rows);
    const convsel_problem **problems = malloc(t->n * sizeof *problems);
    const convsel_fingerprint **cpus = malloc(t->n * sizeof *cpus);
    int *threads = malloc(t->n * sizeof *threads);
    int ok = 1;
    double predicted = 0, pred_time = 0;
    for (size_t k = 0; k < t->n_names && ok; k++) {
        size_t n = 0;
        for (size_t i = 0; i < t->n; i++)
            if (train[i] && t->primitive[i] == (int32_t)k) {
                problems[n] = &t->records[i]->problem;
                cpus[n] = &t->fingerprints[t->fingerprint[i]];
                threads[n] = t->records[i]->threads;
                ms[n++] = t->ms[i];
            }
        if (n == 0)
            continue;
        double u = 1.0, c = 0.0;
        if (p->target == CONVSEL_TARGET_ROOFLINE_RESIDUAL)
            convsel_roofline_fit(problems, threads, cpus, ms, n, p->peak_gflops, p->bandwidth_gbs, &u, &c);
        size_t m = xgb_rows(t, train, k, p, u, c, x, offset, rows);
        for (size_t i = 0; i < m; i++)
            y[i] = (float)(log(t->ms[rows[i]]) - offset[i]);
        DMatrixHandle dtrain, dtest;
        BoosterHandle booster;
        ok &= XGDMatrixCreateFromMat(x, m, F, NAN, &dtrain) == 0;
        ok &= XGDMatrixSetFloatInfo(dtrain, "label", y, m) == 0;
        ok &= XGBoosterCreate(&dtrain, 1, &booster) == 0;
        if (!ok)
            break;
        XGBoosterSetParam(booster, "tree_method", "hist");
        XGBoosterSetParam(booster, "objective", "reg:squarederror");
        XGBoosterSetParam(booster, "verbosity", "0");
        xgb_param(booster, "max_depth", p->max_depth);
        xgb_param(booster, "eta", p->learning_rate);
        xgb_param(booster, "lambda", p->lambda);
        xgb_param(booster, "subsample", p->row_subsample);
        xgb_param(booster, "colsample_bytree", p->col_subsample);
        xgb_param(booster, "min_child_weight", p->min_leaf);
        xgb_param(booster, "nthread", 1); /* 2 threads crawl on a shared, loaded machine */
        xgb_param(booster, "seed", 1);
        for (int it = 0; ok && it < p->trees; it++)
            ok &= XGBoosterUpdateOneIter(booster, it, dtrain) == 0;
        xgb_param(booster, "nthread", 1);
        double start = convsel_now();
        m = xgb_rows(t, test, k, p, u, c, x, offset, rows);
        if (ok && m) {
            bst_ulong len = 0;
            const float *out = NULL;
            ok &= XGDMatrixCreateFromMat(x, m, F, NAN, &dtest) == 0;
            ok &= XGBoosterPredict(booster, dtest, 0, 0, 0, &len, &out) == 0;
            for (size_t i = 0; ok && i < m && i < (size_t)len; i++)
                pred[rows[i]] = exp(out[i] + offset[i]);
            XGDMatrixFree(dtest);
            pred_time += convsel_now() - start;
            predicted += (double)m;
        }
        XGBoosterFree(booster);
        XGDMatrixFree(dtrain);
    }
    if (!ok)
        fprintf(stderr, "bench_learner: xgboost: %s\n", XGBGetLastError());
    *speed = pred_time > 0 ? predicted / pred_time : 0;
    free(x);
    free(y);
    free(offset);
    free(ms);
    free(rows);
    free(problems);
    free(cpus);
    free(threads);
    return ok;
}
#endif

/* ---------------------------------------------------------------- folds */

typedef struct split {
    const char *name;
    size_t n_folds;
    uint8_t **train, **test;
} split;

static void split_free(split *s)
{
    for (size_t f = 0; f < s->n_folds; f++) {
        free(s->train[f]);
        free(s->test[f]);
    }
    free(s->train);
    free(s->test);
}

static split make_random(const convsel_table *t, uint64_t seed)
{
    split s = {"random 80/20 by layer", 1, malloc(sizeof(uint8_t *)), malloc(sizeof(uint8_t *))};
    s.train[0] = malloc(t->n);
    s.test[0] = malloc(t->n);
    uint8_t *held = calloc(t->n_layers, 1);
    size_t *order = malloc(t->n_layers * sizeof *order);
    for (size_t l = 0; l < t->n_layers; l++)
        order[l] = l;
    convsel_rng rng = {seed};
    size_t k = (size_t)floor(0.2 * (double)t->n_layers + 0.5);
    for (size_t i = 0; i < k; i++) {
        size_t j = i + convsel_rng_below(&rng, t->n_layers - i);
        size_t tmp = order[i];
        order[i] = order[j];
        order[j] = tmp;
        held[order[i]] = 1;
    }
    for (size_t i = 0; i < t->n; i++) {
        s.test[0][i] = held[t->layer[i]];
        s.train[0][i] = !s.test[0][i];
    }
    free(held);
    free(order);
    return s;
}

/* Trees cannot extrapolate: train on the layers up to the 80th percentile of
 * FLOPs, test on the largest 20%. */
static split make_largest(const convsel_table *t)
{
    split s = {"largest 20% of layers by FLOPs held out", 1, malloc(sizeof(uint8_t *)), malloc(sizeof(uint8_t *))};
    s.train[0] = malloc(t->n);
    s.test[0] = malloc(t->n);
    double *flops = malloc(t->n * sizeof *flops);
    for (size_t i = 0; i < t->n; i++)
        flops[i] = convsel_problem_flops(&t->records[i]->problem);
    double *sorted = malloc(t->n * sizeof *sorted);
    memcpy(sorted, flops, t->n * sizeof *sorted);
    qsort(sorted, t->n, sizeof *sorted, cmp_double);
    double cut = sorted[(size_t)(0.8 * (double)(t->n - 1))];
    for (size_t i = 0; i < t->n; i++) {
        s.test[0][i] = flops[i] > cut;
        s.train[0][i] = !s.test[0][i];
    }
    free(flops);
    free(sorted);
    return s;
}

static split make_by_network(const convsel_table *t)
{
    split s = {"leave one network out", t->n_networks, malloc(t->n_networks * sizeof(uint8_t *)),
               malloc(t->n_networks * sizeof(uint8_t *))};
    for (size_t k = 0; k < t->n_networks; k++) {
        s.train[k] = malloc(t->n);
        s.test[k] = malloc(t->n);
        for (size_t i = 0; i < t->n; i++) {
            s.test[k][i] = t->network[i] == (int32_t)k;
            s.train[k][i] = !s.test[k][i];
        }
    }
    return s;
}

static result run_method(const method *m, const convsel_table *t, const split *s)
{
    result r = {.ok = 1};
    double *pred = malloc(t->n * sizeof *pred);
    for (size_t i = 0; i < t->n; i++)
        pred[i] = NAN;
    double speed_sum = 0;
    for (size_t f = 0; f < s->n_folds && r.ok; f++) {
        double start = convsel_now();
        if (m->kind == ROOFLINE || m->kind == ROOFLINE_REFINED) {
            roofline_fold(t, s->train[f], s->test[f], m->kind == ROOFLINE_REFINED, pred);
            r.train_s += convsel_now() - start;
            if (f == 0)
                speed_sum = roofline_speed(t);
        } else if (m->kind == GBDT) {
            convsel_model *model;
            convsel_status st = convsel_model_train_table(t, s->train[f], &m->params, NULL, NULL, &model);
            r.train_s += convsel_now() - start;
            if (st != CONVSEL_OK) {
                fprintf(stderr, "bench_learner: %s: %s\n", m->name, convsel_last_error());
                r.ok = 0;
                break;
            }
            double *p = malloc(t->n * sizeof *p);
            convsel_model_predict_table(model, t, s->test[f], p);
            for (size_t i = 0; i < t->n; i++)
                if (s->test[f][i])
                    pred[i] = p[i];
            free(p);
            if (f == 0)
                speed_sum = model_speed(model, t);
            convsel_model_destroy(model);
        } else {
#ifdef CONVSEL_HAVE_XGBOOST
            double speed;
            r.ok = xgb_fold(t, s->train[f], s->test[f], &m->params, pred, &speed);
            r.train_s += convsel_now() - start;
            if (f == 0)
                speed_sum = speed;
#else
            r.ok = 0;
#endif
        }
        fprintf(stderr, "\r  %-36s fold %zu/%zu", m->name, f + 1, s->n_folds);
    }
    fprintf(stderr, "\n");
    r.pred_per_s = speed_sum;
    if (r.ok && convsel_metrics_compute(t->n, t->layer, t->primitive, t->ms, pred, t->dispatcher, NULL, &r.metrics) != CONVSEL_OK)
        r.ok = 0;
    free(pred);
    return r;
}

static void print_row(FILE *md, FILE *csv, const char *split_name, const method *m, const result *r)
{
    const convsel_metrics *x = &r->metrics;
    fprintf(md, "| %s | %.2f%% | %.1f%% | %.3f | %.3f | %.1f%% | %.2f%% | %.2f%% | %.1f | %.0f |\n", m->name,
            100 * x->mape, 100 * x->within10, x->spearman, x->spearman_pooled, 100 * x->top1, 100 * x->regret_mean, 100 * x->regret_p95, r->train_s,
            r->pred_per_s);
    fprintf(csv, "%s,%s,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.3f,%.0f\n", split_name, m->name, x->mape, x->within10,
            x->spearman, x->spearman_pooled, x->top1, x->regret_mean, x->regret_p95, r->train_s, r->pred_per_s);
    printf("%-38s mape %6.2f%%  w10 %5.1f%%  rho %.3f  top1 %5.1f%%  regret %5.2f%% / %5.2f%%  train %6.1fs  %8.0f pred/s\n",
           m->name, 100 * x->mape, 100 * x->within10, x->spearman, 100 * x->top1, 100 * x->regret_mean,
           100 * x->regret_p95, r->train_s, r->pred_per_s);
    fflush(stdout);
}

int main(int argc, char **argv)
{
    const char *out = "bench/results/learner", *write_synthetic = NULL;
    const char *files[256];
    size_t n_files = 0;
    int quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0)
            quick = 1;
        else if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            out = argv[++i];
        else if (strcmp(argv[i], "--peak") == 0 && i + 1 < argc)
            peak_gflops = atof(argv[++i]);
        else if (strcmp(argv[i], "--bw") == 0 && i + 1 < argc)
            bandwidth_gbs = atof(argv[++i]);
        else if (strcmp(argv[i], "--write-synthetic") == 0 && i + 1 < argc)
            write_synthetic = argv[++i];
        else if (argv[i][0] == '-') {
            fprintf(stderr, "usage: bench_learner [DATA...] [--quick] [--out PREFIX] [--peak GFLOPS] [--bw GBS] "
                            "[--write-synthetic FILE]\n");
            return 2;
        } else if (n_files < 256)
            files[n_files++] = argv[i];
    }
    convsel_dataset *sets[256];
    size_t n_sets = 0, n_networks = 0;
    char source[512];
    if (n_files == 0 || write_synthetic) {
        if (synthetic_dataset(quick ? 150 : 600, &sets[0], &n_networks) != CONVSEL_OK) {
            fprintf(stderr, "bench_learner: %s\n", convsel_last_error());
            return 1;
        }
        n_sets = 1;
        snprintf(source, sizeof source,
                 "synthetic latencies (tests/synthetic.h: 5 made-up primitives, 3%% log-normal noise) of the "
                 "distinct layers of the network files at batch 1, 1 and 2 threads, plus random configurations");
        if (write_synthetic) {
            convsel_status st = convsel_dataset_save(sets[0], write_synthetic);
            if (st != CONVSEL_OK)
                fprintf(stderr, "bench_learner: %s\n", convsel_last_error());
            else
                printf("wrote %s: %zu records\n", write_synthetic, convsel_dataset_size(sets[0]));
            convsel_dataset_destroy(sets[0]);
            return st == CONVSEL_OK ? 0 : 1;
        }
    } else {
        int len = snprintf(source, sizeof source, "measured datasets:");
        for (size_t i = 0; i < n_files; i++) {
            if (convsel_dataset_load(files[i], &sets[n_sets]) != CONVSEL_OK) {
                fprintf(stderr, "bench_learner: %s\n", convsel_last_error());
                return 1;
            }
            n_sets++;
            if (len < (int)sizeof source)
                len += snprintf(source + len, sizeof source - (size_t)len, " %s", files[i]);
        }
    }
    /* Learn and score the statistic the model learns by default. */
    convsel_train_params defaults;
    convsel_train_params_default(&defaults);
    convsel_table t;
    if (convsel_table_build((const convsel_dataset *const *)sets, n_sets, defaults.statistic, &t) != CONVSEL_OK) {
        fprintf(stderr, "bench_learner: %s\n", convsel_last_error());
        return 1;
    }
    printf("%zu conv records, %zu layers, %zu primitives, %zu networks\n", t.n, t.n_layers, t.n_names, t.n_networks);

    method methods[16];
    size_t n_methods = 0;
    methods[n_methods++] = (method){"roofline", ROOFLINE, {0}};
    methods[n_methods++] = (method){"refined roofline (u, overhead per primitive)", ROOFLINE_REFINED, {0}};
    static const char *const targets[] = {"log", "log_per_flop", "roofline_residual"};
    for (int mode = 0; mode < 2; mode++)
        for (int target = 0; target < 3; target++) {
            method *m = &methods[n_methods++];
            m->kind = GBDT;
            convsel_train_params_default(&m->params);
            m->params.target = (convsel_target)target;
            m->params.mode = (convsel_model_mode)mode;
            m->params.peak_gflops = peak_gflops;
            m->params.bandwidth_gbs = bandwidth_gbs;
            if (quick)
                m->params.trees = 200, m->params.learning_rate = 0.1;
            snprintf(m->name, sizeof m->name, "GBDT %s, %s", targets[target],
                     mode ? "single model" : "per primitive");
        }
#ifdef CONVSEL_HAVE_XGBOOST
    methods[n_methods] = methods[2 + 2]; /* per primitive, roofline residual */
    methods[n_methods].kind = XGBOOST;
    snprintf(methods[n_methods].name, sizeof methods[n_methods].name, "XGBoost roofline_residual, per primitive");
    n_methods++;
#endif

    char path[4096];
    snprintf(path, sizeof path, "%s.md", out);
    FILE *md = fopen(path, "w");
    snprintf(path, sizeof path, "%s.csv", out);
    FILE *csv = fopen(path, "w");
    if (!md || !csv) {
        fprintf(stderr, "bench_learner: cannot write %s.md/.csv\n", out);
        return 1;
    }
    fprintf(md, "# Latency model vs baselines\n\nData: %s. %zu conv records, %zu layers (configurations), "
                "%zu primitives, %zu networks; each record's %s time (the default statistic).\n\n",
            source, t.n, t.n_layers, t.n_names, t.n_networks,
            defaults.statistic == CONVSEL_STAT_MIN ? "minimum" : defaults.statistic == CONVSEL_STAT_P10 ? "p10" : "median");
    fprintf(md, "Shares are of held-out records (MAPE, within 10%%) or held-out layers with 2+ primitives "
                "(Spearman per configuration, top-1, regret; onednn_auto, which dispatches to onednn_direct's kernel, "
                "is left out of a configuration's ranking); Spearman pooled ranks all held-out records at once. "
                "Training time sums all folds; predictions per second are batch "
                "predictions on one core, features included. Roofline: peak %.0f GFLOP/s per core "
                "(scaled by the ISA's vector width), %.0f GB/s per thread.%s\n",
            peak_gflops, bandwidth_gbs, quick ? " Quick mode: 200 trees, learning rate 0.1." : "");
    convsel_fingerprint here;
    if (convsel_fingerprint_get(&here) == CONVSEL_OK)
        fprintf(md, "\nRun on %s (%d logical CPUs): training and prediction times are this machine's.\n",
                here.model_name, here.cores);
    fprintf(csv, "split,method,mape,within10,spearman,spearman_pooled,top1,regret_mean,regret_p95,train_s,pred_per_s\n");

    split splits[3] = {make_random(&t, 1), make_by_network(&t), make_largest(&t)};
    for (int s = 0; s < 3; s++) {
        if (splits[s].n_folds == 0)
            continue;
        printf("\n%s (%zu fold%s)\n", splits[s].name, splits[s].n_folds, splits[s].n_folds == 1 ? "" : "s");
        fprintf(md, "\n## %s (%zu fold%s)\n\n", splits[s].name, splits[s].n_folds, splits[s].n_folds == 1 ? "" : "s");
        fprintf(md, "| method | MAPE | within 10%% | Spearman per config | Spearman pooled | top-1 | regret mean | "
                    "regret p95 | train s | pred/s |\n");
        fprintf(md, "|---|---|---|---|---|---|---|---|---|---|\n");
        for (size_t k = 0; k < n_methods; k++) {
            result r = run_method(&methods[k], &t, &splits[s]);
            if (r.ok)
                print_row(md, csv, splits[s].name, &methods[k], &r);
        }
        split_free(&splits[s]);
    }
    fclose(md);
    fclose(csv);
    printf("\nwrote %s.md and %s.csv\n", out, out);
    convsel_table_free(&t);
    for (size_t i = 0; i < n_sets; i++)
        convsel_dataset_destroy(sets[i]);
    return 0;
}
