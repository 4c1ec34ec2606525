/*
 * Gradient boosting for squared error: each tree fits the negative gradient
 * (the residual) of the current ensemble on a random share of the rows and of
 * the features; leaf values are shrunk by the learning rate. A validation set
 * picks how many trees to keep (early stopping with patience).
 *
 * Determinism: one PRNG (ours, seeded) draws the rows and features in a fixed
 * order; the parallel loops either write disjoint elements (predictions) or
 * give each feature's histogram to one thread (tree.c), and every reduction
 * runs serially. So the same data and seed give the same trees, bit for bit,
 * with any thread count.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "learner.h"

/* Rows below which a tree's predictions are added on one thread by default
 * (~30 ns a row; see PARALLEL_MIN_WORK in tree.c for the cost of a parallel
 * region). */
#define PARALLEL_MIN_ROWS ((size_t)65536)

void convsel_ensemble_free(convsel_ensemble *e)
{
    if (!e)
        return;
    for (size_t t = 0; t < e->n_trees; t++)
        convsel_tree_free(&e->trees[t]);
    free(e->trees);
    memset(e, 0, sizeof *e);
}

/* Partial Fisher-Yates: the first k entries of idx become a uniform sample
 * of k of its n entries. */
static void sample(convsel_rng *rng, size_t *idx, size_t n, size_t k)
{
    for (size_t i = 0; i < k && i + 1 < n; i++) {
        size_t j = i + convsel_rng_below(rng, n - i);
        size_t t = idx[i];
        idx[i] = idx[j];
        idx[j] = t;
    }
}

/* Puts the k distinct rows of idx in ascending order through a mask of all
 * n_rows rows (left cleared): linear, where sorting cost a fifth of training. */
static void sort_rows(size_t *idx, size_t k, uint8_t *mask, size_t n_rows)
{
    for (size_t i = 0; i < k; i++)
        mask[idx[i]] = 1;
    size_t m = 0;
    for (size_t r = 0; r < n_rows && m < k; r++)
        if (mask[r]) {
            mask[r] = 0;
            idx[m++] = r;
        }
}

static double rmse(const double *pred, const double *y, const size_t *rows, size_t n)
{
    if (n == 0)
        return NAN;
    double sum = 0;
    for (size_t i = 0; i < n; i++) {
        double d = pred[rows[i]] - y[rows[i]];
        sum += d * d;
    }
    return sqrt(sum / (double)n);
}

static convsel_status check_params(const convsel_boost_params *p)
{
    if (p->max_trees < 0)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "trees must be >= 0 (got %d)", p->max_trees);
    if (!(p->learning_rate > 0 && p->learning_rate <= 1))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "learning_rate must be in (0, 1] (got %g)", p->learning_rate);
    if (p->max_depth < 0 || p->max_depth > 30)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "max_depth must be in [0, 30] (got %d)", p->max_depth);
    if (p->min_leaf < 1)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "min_leaf must be >= 1");
    if (!(p->lambda >= 0))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "lambda must be >= 0 (got %g)", p->lambda);
    if (!(p->min_gain >= 0))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "min_gain must be >= 0 (got %g)", p->min_gain);
    if (!(p->row_subsample > 0 && p->row_subsample <= 1))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "row_subsample must be in (0, 1] (got %g)", p->row_subsample);
    if (!(p->col_subsample > 0 && p->col_subsample <= 1))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "col_subsample must be in (0, 1] (got %g)", p->col_subsample);
    if (p->max_bins < 2 || p->max_bins > CONVSEL_MAX_BINS)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "max_bins must be in [2, %d] (got %d)", CONVSEL_MAX_BINS,
                             p->max_bins);
    if (p->patience < 1)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "patience must be >= 1 (got %d)", p->patience);
    if (!(p->time_limit_s >= 0))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "time_limit_s must be >= 0 (got %g)", p->time_limit_s);
    return CONVSEL_OK;
}

typedef struct workspace {
    uint8_t *codes;
    double *grad, *pred;
    size_t *rows, *features_idx;
    uint8_t *use_feature, *row_mask;
    convsel_bins bins;
} workspace;

static void workspace_free(workspace *w)
{
    free(w->codes);
    free(w->grad);
    free(w->pred);
    free(w->rows);
    free(w->features_idx);
    free(w->use_feature);
    free(w->row_mask);
    convsel_bins_free(&w->bins);
}

convsel_status convsel_boost_fit(const float *x, const double *y, size_t n_rows, size_t n_features,
                                 const size_t *train, size_t n_train, const size_t *valid, size_t n_valid,
                                 const convsel_boost_params *params, int (*is_categorical)(size_t f),
                                 convsel_boost_progress_fn progress, void *user, convsel_ensemble *out)
{
    const double t_start = convsel_now();
    memset(out, 0, sizeof *out);
    convsel_status st = check_params(params);
    if (st != CONVSEL_OK)
        return st;
    if (n_train == 0)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "no training rows");

    workspace w = {0};
    size_t nf = n_features ? n_features : 1;
    w.codes = malloc(n_rows * nf);
    w.grad = calloc(n_rows, sizeof *w.grad);
    w.pred = calloc(n_rows, sizeof *w.pred);
    w.rows = malloc(n_train * sizeof *w.rows);
    w.features_idx = malloc(nf * sizeof *w.features_idx);
    w.use_feature = calloc(nf, 1);
    w.row_mask = calloc(n_rows ? n_rows : 1, 1);
    out->trees = calloc(params->max_trees ? (size_t)params->max_trees : 1, sizeof *out->trees);
    if (!w.codes || !w.grad || !w.pred || !w.rows || !w.features_idx || !w.use_feature || !w.row_mask ||
        !out->trees) {
        workspace_free(&w);
        free(out->trees);
        out->trees = NULL;
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory boosting on %zu rows", n_rows);
    }
    st = convsel_bins_fit(x, n_rows, n_features, train, n_train, params->max_bins, is_categorical, &w.bins);
    if (st != CONVSEL_OK) {
        workspace_free(&w);
        free(out->trees);
        out->trees = NULL;
        return st;
    }
    convsel_bins_apply(&w.bins, x, n_rows, w.codes);

    double base = 0;
    for (size_t i = 0; i < n_train; i++)
        base += y[train[i]];
    base /= (double)n_train;
    out->base = base;
    for (size_t r = 0; r < n_rows; r++)
        w.pred[r] = base;

    convsel_rng rng = {params->seed ^ 0x636f6e7673656cull}; /* "convsel" */
    convsel_tree_params tp = {.max_depth = params->max_depth,
                              .min_leaf = params->min_leaf,
                              .lambda = params->lambda,
                              .min_gain = params->min_gain,
                              .shrinkage = params->learning_rate,
                              .threads = params->threads > 0 ? params->threads : 1,
                              .parallel_min_work = params->parallel_min_work};
    size_t min_rows = params->parallel_min_work ? params->parallel_min_work : PARALLEL_MIN_ROWS;
    convsel_tree_data data = {.codes = w.codes, .n_rows = n_rows, .n_features = n_features, .bins = &w.bins,
                              .grad = w.grad, .hess = NULL /* squared error */};
    size_t n_sample = (size_t)ceil(params->row_subsample * (double)n_train);
    size_t n_cols = (size_t)ceil(params->col_subsample * (double)n_features);
    if (n_sample < 1)
        n_sample = 1;
    if (n_sample > n_train)
        n_sample = n_train;
    if (n_cols > n_features)
        n_cols = n_features;

    double best_loss = INFINITY;
    int best_iter = -1;
    for (int it = 0; it < params->max_trees; it++) {
        memcpy(w.rows, train, n_train * sizeof *w.rows);
        if (n_sample < n_train) {
            sample(&rng, w.rows, n_train, n_sample);
            /* In row order again: histogram building reads codes in sequence. */
            sort_rows(w.rows, n_sample, w.row_mask, n_rows);
        }
        for (size_t f = 0; f < n_features; f++)
            w.features_idx[f] = f;
        sample(&rng, w.features_idx, n_features, n_cols);
        memset(w.use_feature, 0, nf);
        for (size_t k = 0; k < n_cols; k++)
            w.use_feature[w.features_idx[k]] = 1;

        for (size_t i = 0; i < n_sample; i++) {
            size_t r = w.rows[i];
            w.grad[r] = w.pred[r] - y[r];
        }
        convsel_tree *tree = &out->trees[out->n_trees];
        st = convsel_tree_grow(&data, w.rows, n_sample, w.use_feature, &tp, tree);
        if (st != CONVSEL_OK)
            break;
        out->n_trees++;

        long nt = (long)n_train, nv = (long)n_valid;
#pragma omp parallel for num_threads(tp.threads) schedule(static) if (n_train >= min_rows)
        for (long i = 0; i < nt; i++)
            w.pred[train[i]] += convsel_tree_predict(tree, x + train[i] * n_features);
#pragma omp parallel for num_threads(tp.threads) schedule(static) if (n_valid >= min_rows)
        for (long i = 0; i < nv; i++)
            w.pred[valid[i]] += convsel_tree_predict(tree, x + valid[i] * n_features);

        double train_loss = rmse(w.pred, y, train, n_train);
        double valid_loss = rmse(w.pred, y, valid, n_valid);
        double loss = n_valid ? valid_loss : train_loss;
        if (loss < best_loss) {
            best_loss = loss;
            best_iter = it;
        }
        if (progress && progress(it, train_loss, valid_loss, best_iter, user)) {
            st = convsel_error(CONVSEL_INTERRUPTED, "training interrupted at tree %d", it);
            break;
        }
        if (n_valid && it - best_iter >= params->patience)
            break;
        /* Checked after a tree, so that every fit has one. */
        if (params->time_limit_s > 0 && it + 1 < params->max_trees && convsel_now() - t_start >= params->time_limit_s) {
            out->cut_by_time = 1;
            break;
        }
    }
    if (st == CONVSEL_OK && n_valid) {
        /* Keep the trees up to the best validation loss. */
        while (out->n_trees > (size_t)(best_iter + 1))
            convsel_tree_free(&out->trees[--out->n_trees]);
    }
    workspace_free(&w);
    if (st != CONVSEL_OK)
        convsel_ensemble_free(out);
    return st;
}
