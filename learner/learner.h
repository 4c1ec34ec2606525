/*
 * Gradient-boosted regression trees: binning, tree growth, boosting.
 * Internal to the library (never installed); pure computation, no I/O.
 *
 * Data layout: raw features are row-major floats (x[row * n_features + f]),
 * as prediction sees them; bin codes are column-major bytes
 * (codes[f * n_rows + row]), as histogram building reads them.
 */
#ifndef CONVSEL_LEARNER_H
#define CONVSEL_LEARNER_H

#include <stddef.h>
#include <stdint.h>

#include "convsel.h"

/* ---------------------------------------------------------------- PRNG */

/* splitmix64: our own generator, so that a seed gives the same model on
 * every platform and libc. */
typedef struct convsel_rng {
    uint64_t state;
} convsel_rng;

static inline uint64_t convsel_rng_next(convsel_rng *rng)
{
    uint64_t z = (rng->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, n) (n > 0); the modulo bias is below 2^-40 for our n. */
static inline size_t convsel_rng_below(convsel_rng *rng, size_t n)
{
    return (size_t)(convsel_rng_next(rng) % (uint64_t)n);
}

/* Uniform in [0, 1). */
static inline double convsel_rng_uniform(convsel_rng *rng)
{
    return (double)(convsel_rng_next(rng) >> 11) * (1.0 / 9007199254740992.0);
}

/* ---------------------------------------------------------------- bins */

/* Code 0 is the missing-value bin (NaN); it sorts below every value. */
#define CONVSEL_BIN_MISSING 0
#define CONVSEL_MAX_BINS 256
/* Categorical features hold codes 0..CONVSEL_MAX_CATEGORIES-1 (a 64-bit mask
 * per split); larger codes are treated as missing. */
#define CONVSEL_MAX_CATEGORIES 64

typedef struct convsel_bins {
    size_t n_features;
    /* Per feature: bins in use (codes 0..n_bins-1), categorical flag, and for
     * numeric features upper[f * CONVSEL_MAX_BINS + b], the largest value of
     * bin b (b >= 1; the last bin's is +inf). */
    uint16_t *n_bins;
    uint8_t *categorical;
    float *upper;
} convsel_bins;

/*
 * Fits quantile bins (at most max_bins codes per feature, missing bin
 * included, max_bins <= 256) on the rows listed in rows (all when NULL) of the
 * row-major x. A constant feature gets one value bin and can never split.
 * is_categorical(f) marks categorical features (NULL: none).
 */
convsel_status convsel_bins_fit(const float *x, size_t n_rows, size_t n_features, const size_t *rows,
                                size_t n_used, int max_bins, int (*is_categorical)(size_t f), convsel_bins *bins);
void convsel_bins_free(convsel_bins *bins);
uint8_t convsel_bins_code(const convsel_bins *bins, size_t f, float value);
/* codes[f * n_rows + r] for every row of x. */
void convsel_bins_apply(const convsel_bins *bins, const float *x, size_t n_rows, uint8_t *codes);

/* ---------------------------------------------------------------- trees */

/*
 * A node. Leaves have feature -1 and hold value. A split sends x left when
 *   numeric:     !(x[feature] > threshold)   (so NaN goes left, like bin 0)
 *   categorical: cat_left != 0, x[feature] is an integer c in [0, 64) and
 *                bit c of cat_left is set (everything else goes right).
 * Children have larger indices than their parent, so a walk always ends.
 */
typedef struct convsel_node {
    int32_t feature;
    float threshold;
    int32_t left, right;
    double value;
    uint64_t cat_left;
} convsel_node;

typedef struct convsel_tree {
    size_t n_nodes;
    convsel_node *nodes;
} convsel_tree;

typedef struct convsel_tree_params {
    int max_depth;    /* root is depth 0; leaves at most max_depth deep */
    size_t min_leaf;  /* rows per leaf at least */
    double lambda;    /* L2 penalty on leaf values */
    double min_gain;  /* a split must gain more than this */
    double shrinkage; /* leaf values are multiplied by it */
    int threads;      /* OpenMP threads for histograms (>= 1) */
    size_t parallel_min_work; /* rows × features below which one thread builds (0: default) */
} convsel_tree_params;

/* The training view shared by all trees of one ensemble. */
typedef struct convsel_tree_data {
    const uint8_t *codes; /* column-major, n_rows per column */
    size_t n_rows, n_features;
    const convsel_bins *bins;
    const double *grad, *hess; /* per row; hess NULL: every hessian is 1 */
} convsel_tree_data;

/*
 * Grows one tree on rows[0..n_used) (the array is reordered), considering
 * only the features with use_feature[f] != 0 (NULL: all). Histograms are built
 * per feature, each by one thread over rows in a fixed order, so the tree is
 * the same for any thread count. Returns OK or OUT_OF_MEMORY.
 */
convsel_status convsel_tree_grow(const convsel_tree_data *data, size_t *rows, size_t n_used,
                                 const uint8_t *use_feature, const convsel_tree_params *params, convsel_tree *tree);
void convsel_tree_free(convsel_tree *tree);

static inline double convsel_tree_predict(const convsel_tree *tree, const float *x)
{
    const convsel_node *nodes = tree->nodes;
    int32_t i = 0;
    while (nodes[i].feature >= 0) {
        const convsel_node *n = &nodes[i];
        float v = x[n->feature];
        int left;
        if (n->cat_left) {
            left = v >= 0.0f && v < (float)CONVSEL_MAX_CATEGORIES && v == (float)(int)v &&
                   ((n->cat_left >> (int)v) & 1u);
        } else {
            left = !(v > n->threshold);
        }
        i = left ? n->left : n->right;
    }
    return nodes[i].value;
}

/* ---------------------------------------------------------------- boosting */

typedef struct convsel_ensemble {
    double base; /* the constant the trees start from */
    size_t n_trees;
    convsel_tree *trees;
    int cut_by_time; /* its training stopped at its time limit (not stored in files) */
} convsel_ensemble;

static inline double convsel_ensemble_predict(const convsel_ensemble *e, const float *x)
{
    double sum = e->base;
    for (size_t t = 0; t < e->n_trees; t++)
        sum += convsel_tree_predict(&e->trees[t], x);
    return sum;
}

void convsel_ensemble_free(convsel_ensemble *e);

/*
 * An ensemble laid out for prediction (forest.c): each tree padded to a
 * complete binary tree of one depth, stored as arrays in breadth-first order:
 * the inner nodes' splits ([tree][2^depth - 1]) and the leaves' values
 * ([tree][2^depth]).
 */
#define CONVSEL_FOREST_MAX_DEPTH 8
/* Codes a category split of a forest may send left: 0 .. 31. */
#define CONVSEL_FOREST_CODES 32

typedef struct convsel_forest {
    int depth;
    size_t n_trees, n_features;
    uint8_t *feature;
    uint32_t *word;       /* a threshold split's float; a category split's codes that go right */
    double *leaf;
    uint8_t *categorical; /* per feature */
    void *block;          /* the one allocation behind the three arrays */
} convsel_forest;

/* Lays out e at depth (the training's max_depth), for rows of n_features
 * features. Returns OK, NOT_APPLICABLE (depth over CONVSEL_FOREST_MAX_DEPTH,
 * a tree deeper than depth, more than 256 features, a split that tests a
 * feature against its kind, a category split that sends a code of 32 or more
 * left) or OUT_OF_MEMORY, without an error message: f is then empty and the
 * ensemble is walked node by node. */
convsel_status convsel_forest_build(const convsel_ensemble *e, int depth, size_t n_features,
                                    int (*is_categorical)(size_t f), convsel_forest *f);
void convsel_forest_free(convsel_forest *f);

/* The row x (n_features values) as f's walks read it: xf, x with NaN for
 * the categorical features, and codes, a categorical feature's whole value
 * below CONVSEL_FOREST_CODES or else twice that, and CONVSEL_FOREST_CODES
 * for a numeric feature. */
void convsel_forest_row(const convsel_forest *f, const float *x, float *xf, uint8_t *codes);

/* sum[i] += the predictions of trees first .. first + count - 1 for row i,
 * i < n, of xf and codes (n rows of n_features each, as convsel_forest_row
 * writes them), added tree by tree in order: the same values as
 * convsel_tree_predict's. */
void convsel_forest_add_rows(const convsel_forest *f, size_t first, size_t count, const float *xf,
                             const uint8_t *codes, size_t n, double *sum);

typedef struct convsel_boost_params {
    int max_trees;
    double learning_rate;
    int max_depth;
    size_t min_leaf;
    double lambda;
    double min_gain;
    double row_subsample; /* share of training rows per tree, (0, 1] */
    double col_subsample; /* share of features per tree, (0, 1] */
    int max_bins;
    int patience;         /* stop after this many trees without a better validation loss */
    uint64_t seed;
    int threads;          /* >= 1 */
    size_t parallel_min_work; /* as in convsel_tree_params (tests force parallel code with 1) */
    double time_limit_s;  /* seconds from the call after which no tree is added (0: none); the
                             trees then depend on the machine's speed, and out->cut_by_time is set */
} convsel_boost_params;

/* Called after each tree; a non-zero return stops training (INTERRUPTED). */
typedef int (*convsel_boost_progress_fn)(int iteration, double train_rmse, double valid_rmse, int best_iteration,
                                         void *user);

/*
 * Fits an ensemble for squared error on y over the row-major x (n_features
 * columns): rows train[0..n_train) train it, rows valid[0..n_valid) (may be
 * 0) stop it early, and the ensemble is cut back to the best validation
 * iteration. Deterministic for a given seed whatever the thread count.
 * Returns OK, OUT_OF_MEMORY, INVALID_ARGUMENT or INTERRUPTED.
 */
convsel_status convsel_boost_fit(const float *x, const double *y, size_t n_rows, size_t n_features,
                                 const size_t *train, size_t n_train, const size_t *valid, size_t n_valid,
                                 const convsel_boost_params *params, int (*is_categorical)(size_t f),
                                 convsel_boost_progress_fn progress, void *user, convsel_ensemble *out);

#endif
