/* The learner: features, bins, trees, boosting, metrics, training on datasets. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "convsel.h"
#include "../learner/features.h"
#include "../src/internal.h" /* convsel_now */
#include "../learner/learner.h"
#include "../learner/model.h"
#include "synthetic.h"

static void test_features(void)
{
    /* Names are unique and the primitive is the categorical one. */
    for (size_t i = 0; i < CONVSEL_FEATURE_COUNT; i++) {
        CHECK(strlen(convsel_feature_name(i)) > 0);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(convsel_feature_name(i), convsel_feature_name(j)) != 0);
        CHECK_EQ(convsel_feature_is_categorical(i), i == CONVSEL_FEATURE_primitive);
    }
    convsel_problem p;
    CHECK_EQ(convsel_problem_parse("mb2ic64ih56oc100oh56kh3ph1", &p), CONVSEL_OK);
    convsel_fingerprint fp;
    syn_fingerprint(&fp);
    float x[CONVSEL_FEATURE_COUNT];
    convsel_features_compute(&p, 2, 3, "gemm_1x1", &fp, x);
    double flops = 2.0 * 2 * 100 * 56 * 56 * 64 * 9;
    double bytes = 4.0 * (2 * 64 * 56 * 56 + 100 * 64 * 9 + 2 * 100 * 56 * 56);
    CHECK_NEAR(x[CONVSEL_FEATURE_log_flops], log(flops), 1e-5);
    CHECK_NEAR(x[CONVSEL_FEATURE_log_bytes], log(bytes), 1e-5);
    CHECK_NEAR(x[CONVSEL_FEATURE_intensity], flops / bytes, 1e-3);
    CHECK_NEAR(x[CONVSEL_FEATURE_gemm_m], 100, 0);
    CHECK_NEAR(x[CONVSEL_FEATURE_gemm_k], 64 * 9, 0);
    CHECK_NEAR(x[CONVSEL_FEATURE_gemm_n], 56 * 56, 0);
    CHECK_NEAR(x[CONVSEL_FEATURE_wino2_tiles], 2 * 28 * 28, 0);
    CHECK_NEAR(x[CONVSEL_FEATURE_wino4_tiles], 2 * 14 * 14, 0);
    CHECK_NEAR(x[CONVSEL_FEATURE_pad_waste_oc8], 4.0 / 104.0, 1e-7);
    CHECK_NEAR(x[CONVSEL_FEATURE_pad_waste_oc16], 12.0 / 112.0, 1e-7);
    CHECK_NEAR(x[CONVSEL_FEATURE_pad_waste_ic16], 0, 0);
    CHECK_NEAR(x[CONVSEL_FEATURE_pad_waste_ocg_block], 12.0 / 112.0, 1e-7); /* g = 1: all channels, 16 lanes */
    CHECK_NEAR(x[CONVSEL_FEATURE_channel_fit_block], 0, 0);
    CHECK_NEAR(x[CONVSEL_FEATURE_ws_over_l2], bytes / (2.0 * (1 << 20)), 1e-4);
    CHECK_NEAR(x[CONVSEL_FEATURE_isa_cap], CONVSEL_ISA_AVX512, 0);
    CHECK(isnan(x[CONVSEL_FEATURE_blas_isa])); /* "0.3.21" names no core */
    CHECK_NEAR(x[CONVSEL_FEATURE_depthwise], 0, 0);
    CHECK_NEAR(x[CONVSEL_FEATURE_primitive], 3, 0);
    /* OpenBLAS's kernels, by the core its configuration names, for the
     * primitives that run them: the GEMM ones always, convsel's Winograd
     * only below AVX2; missing for the rest and for unknown names. */
    convsel_fingerprint blas = fp;
    snprintf(blas.openblas_version, sizeof blas.openblas_version, "OpenBLAS 0.3.21 DYNAMIC_ARCH Haswell MAX_THREADS=64");
    convsel_features_compute(&p, 2, 3, "gemm_1x1", &blas, x);
    CHECK_NEAR(x[CONVSEL_FEATURE_blas_isa], CONVSEL_ISA_AVX2, 0);
    convsel_features_compute(&p, 2, 3, "im2col_gemm", &blas, x);
    CHECK_NEAR(x[CONVSEL_FEATURE_blas_isa], CONVSEL_ISA_AVX2, 0);
    convsel_features_compute(&p, 2, 3, "onednn_gemm", &blas, x); /* oneDNN's own GEMM */
    CHECK(isnan(x[CONVSEL_FEATURE_blas_isa]));
    convsel_features_compute(&p, 2, 3, "winograd_4x4_3x3", &blas, x); /* its own GEMM at AVX-512 */
    CHECK(isnan(x[CONVSEL_FEATURE_blas_isa]));
    convsel_features_compute(&p, 2, 3, "syn_gemm", &blas, x);
    CHECK(isnan(x[CONVSEL_FEATURE_blas_isa]));
    convsel_features_compute(&p, 2, 3, NULL, &blas, x);
    CHECK(isnan(x[CONVSEL_FEATURE_blas_isa]));
    blas.isa_cap = CONVSEL_ISA_SSE41;
    snprintf(blas.openblas_version, sizeof blas.openblas_version, "OpenBLAS 0.3.21 DYNAMIC_ARCH Nehalem");
    convsel_features_compute(&p, 2, 3, "winograd_4x4_3x3", &blas, x); /* OpenBLAS for the products */
    CHECK_NEAR(x[CONVSEL_FEATURE_blas_isa], CONVSEL_ISA_SSE41, 0);
    blas.isa_cap = CONVSEL_ISA_AVX512;
    snprintf(blas.openblas_version, sizeof blas.openblas_version, "OpenBLAS 0.3.21 DYNAMIC_ARCH Cooperlake");
    convsel_features_compute(&p, 2, 3, "gemm_1x1", &blas, x);
    CHECK_NEAR(x[CONVSEL_FEATURE_blas_isa], CONVSEL_ISA_AVX512, 0);
    /* No CPU: its features are missing, the rest still there. */
    convsel_features_compute(&p, 2, -1, NULL, NULL, x);
    CHECK(isnan(x[CONVSEL_FEATURE_ws_over_l1]) && isnan(x[CONVSEL_FEATURE_cores]));
    CHECK(isnan(x[CONVSEL_FEATURE_blas_isa]));
    CHECK(isnan(x[CONVSEL_FEATURE_primitive]) && isnan(x[CONVSEL_FEATURE_channel_fit_block]));
    CHECK_NEAR(x[CONVSEL_FEATURE_oc], 100, 0);
    CHECK_EQ(convsel_problem_parse("g32mb1ic32ih28oc32oh28kh3ph1", &p), CONVSEL_OK);
    convsel_features_compute(&p, 1, 0, NULL, &fp, x);
    CHECK_NEAR(x[CONVSEL_FEATURE_depthwise], 1, 0);
    CHECK_NEAR(x[CONVSEL_FEATURE_ic_per_g], 1, 0);
    CHECK_NEAR(x[CONVSEL_FEATURE_channel_fit_block], 1, 0); /* 16 groups per block */
    /* Groups of 48 input and 10 output channels: the input fills three
     * 16-lane blocks, the output neither fills nor divides one; at 8 lanes
     * (AVX2) the input fills six blocks and the output wastes 6 of 16 lanes. */
    CHECK_EQ(convsel_problem_parse("g4mb1ic192ih2oc40oh2kh1", &p), CONVSEL_OK);
    convsel_features_compute(&p, 1, 0, NULL, &fp, x);
    CHECK_NEAR(x[CONVSEL_FEATURE_pad_waste_icg_block], 0, 0);
    CHECK_NEAR(x[CONVSEL_FEATURE_pad_waste_ocg_block], 6.0 / 16.0, 1e-7);
    CHECK_NEAR(x[CONVSEL_FEATURE_channel_fit_block], 2, 0);
    fp.isa_cap = CONVSEL_ISA_AVX2;
    convsel_features_compute(&p, 1, 0, NULL, &fp, x);
    CHECK_NEAR(x[CONVSEL_FEATURE_pad_waste_ocg_block], 6.0 / 16.0, 1e-7);
    CHECK_NEAR(x[CONVSEL_FEATURE_channel_fit_block], 2, 0);
    /* Groups of 32 channels fill 8- and 16-lane blocks alike. */
    CHECK_EQ(convsel_problem_parse("g2mb1ic64ih8oc64oh8kh3ph1", &p), CONVSEL_OK);
    convsel_features_compute(&p, 1, 0, NULL, &fp, x);
    CHECK_NEAR(x[CONVSEL_FEATURE_channel_fit_block], 0, 0);
    CHECK_NEAR(x[CONVSEL_FEATURE_pad_waste_icg_block], 0, 0);
    /* Groups of 4: two share an 8-lane block. */
    CHECK_EQ(convsel_problem_parse("g4mb1ic16ih8oc16oh8kh3ph1", &p), CONVSEL_OK);
    convsel_features_compute(&p, 1, 0, NULL, &fp, x);
    CHECK_NEAR(x[CONVSEL_FEATURE_channel_fit_block], 1, 0);
    CHECK_NEAR(x[CONVSEL_FEATURE_pad_waste_icg_block], 0.5, 1e-7);
}

static int first_categorical(size_t f)
{
    return f == 0;
}

static void test_bins(void)
{
    enum { N = 5000, F = 4 };
    float *x = malloc(N * F * sizeof *x);
    uint8_t *codes = malloc(N * F);
    convsel_rng rng = {7};
    for (size_t i = 0; i < N; i++) {
        x[i * F + 0] = (float)convsel_rng_below(&rng, 10);        /* categorical */
        x[i * F + 1] = (float)convsel_rng_uniform(&rng);           /* continuous: quantiles */
        x[i * F + 2] = 4.25f;                                      /* constant */
        x[i * F + 3] = i % 7 == 0 ? NAN : (float)(i % 13);         /* few values + missing */
    }
    convsel_bins bins;
    CHECK_EQ(convsel_bins_fit(x, N, F, NULL, 0, 64, first_categorical, &bins), CONVSEL_OK);
    convsel_bins_apply(&bins, x, N, codes);
    CHECK_EQ(bins.categorical[0], 1);
    CHECK_EQ(bins.n_bins[0], 11);
    CHECK(bins.n_bins[1] <= 64 && bins.n_bins[1] >= 60);
    CHECK_EQ(bins.n_bins[2], 2); /* missing + one value: never splits */
    CHECK_EQ(bins.n_bins[3], 14);
    size_t counts[64] = {0};
    int consistent = 1;
    for (size_t i = 0; i < N; i++) {
        uint8_t c = codes[1 * N + i];
        counts[c]++;
        const float *upper = bins.upper + 1 * CONVSEL_MAX_BINS;
        consistent &= c >= 1 && x[i * F + 1] <= upper[c] && (c == 1 || x[i * F + 1] > upper[c - 1]);
        consistent &= codes[0 * N + i] == (uint8_t)x[i * F] + 1;
        consistent &= (i % 7 == 0) == (codes[3 * N + i] == CONVSEL_BIN_MISSING);
    }
    CHECK(consistent);
    /* Quantile bins hold about equal counts. */
    size_t lo = N, hi = 0;
    for (int b = 1; b < bins.n_bins[1]; b++) {
        lo = counts[b] < lo ? counts[b] : lo;
        hi = counts[b] > hi ? counts[b] : hi;
    }
    CHECK_MSG(hi < 2 * lo + 10, "bin counts from %zu to %zu", lo, hi);
    convsel_bins_free(&bins);
    free(x);
    free(codes);
}

static int ensembles_equal(const convsel_ensemble *a, const convsel_ensemble *b);

/* y = 5 when feature 3 > 0.37, else -2: a one-split tree must find it. */
static void test_planted_split(void)
{
    enum { N = 2000, F = 6 };
    float *x = malloc(N * F * sizeof *x);
    double *grad = malloc(N * sizeof *grad), *hess = malloc(N * sizeof *hess);
    size_t *rows = malloc(N * sizeof *rows);
    uint8_t *codes = malloc(N * F);
    convsel_rng rng = {42};
    for (size_t i = 0; i < N; i++) {
        for (size_t f = 0; f < F; f++)
            x[i * F + f] = (float)convsel_rng_uniform(&rng);
        double y = x[i * F + 3] > 0.37f ? 5.0 : -2.0;
        grad[i] = -y; /* prediction 0: gradient of squared error is pred - y */
        hess[i] = 1.0;
        rows[i] = i;
    }
    convsel_bins bins;
    CHECK_EQ(convsel_bins_fit(x, N, F, NULL, 0, 255, NULL, &bins), CONVSEL_OK);
    convsel_bins_apply(&bins, x, N, codes);
    convsel_tree_data data = {codes, N, F, &bins, grad, hess};
    convsel_tree_params tp = {.max_depth = 1, .min_leaf = 1, .lambda = 0, .min_gain = 0, .shrinkage = 1, .threads = 2};
    convsel_tree tree;
    CHECK_EQ(convsel_tree_grow(&data, rows, N, NULL, &tp, &tree), CONVSEL_OK);
    CHECK_EQ(tree.n_nodes, 3);
    CHECK_EQ(tree.nodes[0].feature, 3);
    uint8_t c = convsel_bins_code(&bins, 3, 0.37f);
    const float *upper = bins.upper + 3 * CONVSEL_MAX_BINS;
    double width = upper[c] - upper[c - 1];
    CHECK_MSG(fabs(tree.nodes[0].threshold - 0.37) <= width, "threshold %g, bin width %g", tree.nodes[0].threshold,
              width);
    CHECK_NEAR(tree.nodes[tree.nodes[0].left].value, -2.0, 0.1);
    CHECK_NEAR(tree.nodes[tree.nodes[0].right].value, 5.0, 0.1);
    float probe[F] = {0.9f, 0.9f, 0.9f, 0.2f, 0.9f, 0.9f};
    CHECK_NEAR(convsel_tree_predict(&tree, probe), -2.0, 0.1);
    probe[3] = 0.8f;
    CHECK_NEAR(convsel_tree_predict(&tree, probe), 5.0, 0.1);
    probe[3] = NAN; /* missing goes left, as bin 0 */
    CHECK_NEAR(convsel_tree_predict(&tree, probe), -2.0, 0.1);
    convsel_tree_free(&tree);

    /* Deeper trees with the subtraction trick give the same root. */
    tp.max_depth = 4;
    tp.min_leaf = 20;
    CHECK_EQ(convsel_tree_grow(&data, rows, N, NULL, &tp, &tree), CONVSEL_OK);
    CHECK_EQ(tree.nodes[0].feature, 3);
    int ordered = 1, leaves_ok = 1;
    for (size_t i = 0; i < tree.n_nodes; i++)
        if (tree.nodes[i].feature >= 0)
            ordered &= tree.nodes[i].left > (int32_t)i && tree.nodes[i].right > (int32_t)i;
        else
            leaves_ok &= fabs(tree.nodes[i].value + 2.0) < 0.5 || fabs(tree.nodes[i].value - 5.0) < 0.5 ||
                         fabs(tree.nodes[i].value) < 5.0;
    CHECK(ordered && leaves_ok);
    convsel_tree_free(&tree);

    /* Only feature 3 not allowed: the split must come from another feature. */
    uint8_t use[F] = {1, 1, 1, 0, 1, 1};
    tp.max_depth = 1;
    CHECK_EQ(convsel_tree_grow(&data, rows, N, use, &tp, &tree), CONVSEL_OK);
    CHECK(tree.nodes[0].feature != 3);
    convsel_tree_free(&tree);

    /* Hessians given as NULL (every one 1, as boosting on squared error
     * passes them) grow the same trees, bit for bit, as ones given row by
     * row: here deep, on a smooth target, over every other row backwards. */
    for (size_t i = 0; i < N; i++)
        grad[i] = sin(7.0 * x[i * F]) + x[i * F + 2] * x[i * F + 4];
    convsel_tree_data unit = data;
    unit.hess = NULL;
    convsel_tree_params deep = {.max_depth = 6, .min_leaf = 5, .lambda = 1, .shrinkage = 0.3, .threads = 2,
                                .parallel_min_work = 1};
    convsel_tree t[2];
    for (int k = 0; k < 2; k++) {
        for (size_t i = 0; i < N / 2; i++)
            rows[i] = (size_t)(N - 1) - 2 * i;
        CHECK_EQ(convsel_tree_grow(k ? &unit : &data, rows, N / 2, NULL, &deep, &t[k]), CONVSEL_OK);
    }
    convsel_ensemble with_ones = {.trees = &t[0], .n_trees = 1}, with_null = {.trees = &t[1], .n_trees = 1};
    CHECK(t[0].n_nodes > 15);
    CHECK(ensembles_equal(&with_ones, &with_null));
    convsel_tree_free(&t[0]);
    convsel_tree_free(&t[1]);
    convsel_bins_free(&bins);
    free(x);
    free(grad);
    free(hess);
    free(rows);
    free(codes);
}

/* A categorical feature: categories {1, 4, 6} give 3, others 0. */
static void test_categorical_split(void)
{
    enum { N = 1000, F = 2 };
    float x[N * F];
    double grad[N], hess[N];
    size_t rows[N];
    uint8_t codes[N * F];
    convsel_rng rng = {3};
    for (size_t i = 0; i < N; i++) {
        int cat = (int)convsel_rng_below(&rng, 9);
        x[i * F] = (float)cat;
        x[i * F + 1] = (float)convsel_rng_uniform(&rng);
        grad[i] = -((cat == 1 || cat == 4 || cat == 6) ? 3.0 : 0.0) - 0.01 * x[i * F + 1];
        hess[i] = 1;
        rows[i] = i;
    }
    convsel_bins bins;
    CHECK_EQ(convsel_bins_fit(x, N, F, NULL, 0, 255, first_categorical, &bins), CONVSEL_OK);
    convsel_bins_apply(&bins, x, N, codes);
    convsel_tree_data data = {codes, N, F, &bins, grad, hess};
    convsel_tree_params tp = {.max_depth = 1, .min_leaf = 1, .lambda = 0, .shrinkage = 1, .threads = 1};
    convsel_tree tree;
    CHECK_EQ(convsel_tree_grow(&data, rows, N, NULL, &tp, &tree), CONVSEL_OK);
    CHECK_EQ(tree.nodes[0].feature, 0);
    CHECK_EQ(tree.nodes[0].cat_left, (1u << 1) | (1u << 4) | (1u << 6));
    float probe[F] = {4.0f, 0.5f};
    CHECK_NEAR(convsel_tree_predict(&tree, probe), 3.0, 0.05);
    probe[0] = 5.0f;
    CHECK_NEAR(convsel_tree_predict(&tree, probe), 0.0, 0.05);
    probe[0] = 77.0f; /* an unseen category goes right */
    CHECK_NEAR(convsel_tree_predict(&tree, probe), 0.0, 0.05);
    convsel_tree_free(&tree);
    convsel_bins_free(&bins);
}

static int ensembles_equal(const convsel_ensemble *a, const convsel_ensemble *b)
{
    if (a->n_trees != b->n_trees || memcmp(&a->base, &b->base, sizeof a->base) != 0)
        return 0;
    for (size_t t = 0; t < a->n_trees; t++) {
        if (a->trees[t].n_nodes != b->trees[t].n_nodes)
            return 0;
        for (size_t i = 0; i < a->trees[t].n_nodes; i++) {
            const convsel_node *x = &a->trees[t].nodes[i], *y = &b->trees[t].nodes[i];
            if (x->feature != y->feature || x->left != y->left || x->right != y->right || x->cat_left != y->cat_left ||
                memcmp(&x->threshold, &y->threshold, sizeof x->threshold) ||
                memcmp(&x->value, &y->value, sizeof x->value))
                return 0;
        }
    }
    return 1;
}

static int count_iterations(int it, double train_rmse, double valid_rmse, int best, void *user)
{
    int *n = user;
    (*n)++;
    return !(train_rmse >= 0) || !(valid_rmse >= 0); /* NaN would stop */
}

/* y = 2·[x0 > 0.5] + x1² + noise, learned to within the noise on held-out rows. */
static void test_boosting(void)
{
    enum { N_TRAIN = 3000, N_VALID = 500, N_TEST = 1000, N = N_TRAIN + N_VALID + N_TEST, F = 4 };
    float *x = malloc(N * F * sizeof *x);
    double *y = malloc(N * sizeof *y), *truth = malloc(N * sizeof *truth);
    size_t train[N_TRAIN], valid[N_VALID];
    convsel_rng rng = {11};
    for (size_t i = 0; i < N; i++) {
        for (size_t f = 0; f < F; f++)
            x[i * F + f] = (float)convsel_rng_uniform(&rng);
        truth[i] = 2.0 * (x[i * F] > 0.5f) + (double)x[i * F + 1] * x[i * F + 1];
        y[i] = truth[i] + 0.05 * syn_normal(&rng);
    }
    for (size_t i = 0; i < N_TRAIN; i++)
        train[i] = i;
    for (size_t i = 0; i < N_VALID; i++)
        valid[i] = N_TRAIN + i;
    convsel_boost_params bp = {.max_trees = 400, .learning_rate = 0.1, .max_depth = 4, .min_leaf = 5, .lambda = 1,
                               .row_subsample = 0.8, .col_subsample = 1.0, .max_bins = 255, .patience = 30,
                               .seed = 5, .threads = 2, .parallel_min_work = 1 /* every loop parallel */};
    convsel_ensemble e1, e2, e3;
    int iterations = 0;
    CHECK_EQ(convsel_boost_fit(x, y, N, F, train, N_TRAIN, valid, N_VALID, &bp, NULL, count_iterations, &iterations,
                               &e1),
             CONVSEL_OK);
    CHECK(e1.n_trees > 20 && e1.n_trees <= (size_t)iterations);
    double se = 0;
    for (size_t i = N_TRAIN + N_VALID; i < N; i++) {
        double d = convsel_ensemble_predict(&e1, x + i * F) - truth[i];
        se += d * d;
    }
    double rmse = sqrt(se / N_TEST);
    CHECK_MSG(rmse < 0.08, "held-out RMSE against the noise-free function %.4f (noise 0.05)", rmse);

    /* Same seed: the same trees, with 1 thread or 2. Another seed: others. */
    bp.threads = 1;
    bp.parallel_min_work = 0;
    CHECK_EQ(convsel_boost_fit(x, y, N, F, train, N_TRAIN, valid, N_VALID, &bp, NULL, NULL, NULL, &e2), CONVSEL_OK);
    CHECK(ensembles_equal(&e1, &e2));
    bp.seed = 6;
    CHECK_EQ(convsel_boost_fit(x, y, N, F, train, N_TRAIN, valid, N_VALID, &bp, NULL, NULL, NULL, &e3), CONVSEL_OK);
    CHECK(!ensembles_equal(&e1, &e3));
    convsel_ensemble_free(&e2);
    convsel_ensemble_free(&e3);

    /* A time limit never reached changes nothing; one passed by the first
     * tree keeps that tree alone, and says so. */
    bp.seed = 5;
    bp.time_limit_s = 1e6;
    CHECK_EQ(convsel_boost_fit(x, y, N, F, train, N_TRAIN, valid, N_VALID, &bp, NULL, NULL, NULL, &e2), CONVSEL_OK);
    CHECK(ensembles_equal(&e1, &e2));
    CHECK(!e1.cut_by_time && !e2.cut_by_time);
    bp.time_limit_s = 1e-9;
    CHECK_EQ(convsel_boost_fit(x, y, N, F, train, N_TRAIN, valid, N_VALID, &bp, NULL, NULL, NULL, &e3), CONVSEL_OK);
    CHECK_EQ(e3.n_trees, 1);
    CHECK(e3.cut_by_time);
    CHECK(e3.n_trees == 1 && e1.n_trees > 1 && e3.trees[0].n_nodes == e1.trees[0].n_nodes);
    convsel_ensemble_free(&e1);
    convsel_ensemble_free(&e2);
    convsel_ensemble_free(&e3);
    bp.time_limit_s = -1;
    CHECK_EQ(convsel_boost_fit(x, y, N, F, train, N_TRAIN, NULL, 0, &bp, NULL, NULL, NULL, &e1),
             CONVSEL_INVALID_ARGUMENT);
    CHECK(strstr(convsel_last_error(), "time_limit_s") != NULL);
    bp.time_limit_s = NAN;
    CHECK_EQ(convsel_boost_fit(x, y, N, F, train, N_TRAIN, NULL, 0, &bp, NULL, NULL, NULL, &e1),
             CONVSEL_INVALID_ARGUMENT);
    bp.time_limit_s = 0;

    /* Bad parameters are refused. */
    bp.learning_rate = 0;
    CHECK_EQ(convsel_boost_fit(x, y, N, F, train, N_TRAIN, NULL, 0, &bp, NULL, NULL, NULL, &e1),
             CONVSEL_INVALID_ARGUMENT);
    free(x);
    free(y);
    free(truth);
}

static void test_params(void)
{
    convsel_train_params p;
    convsel_train_params_default(&p);
    CHECK_EQ(p.statistic, CONVSEL_STAT_MEDIAN); /* what the oracle and docs/learner.md assume */
    CHECK_EQ(convsel_train_params_parse("trees=10,target=log,mode=single,statistic=p10,learning_rate=0.2,seed=9", &p),
             CONVSEL_OK);
    CHECK_EQ(p.trees, 10);
    CHECK_EQ(p.target, CONVSEL_TARGET_LOG);
    CHECK_EQ(p.mode, CONVSEL_MODEL_SINGLE);
    CHECK_EQ(p.statistic, CONVSEL_STAT_P10);
    CHECK_NEAR(p.learning_rate, 0.2, 0);
    CHECK_EQ(p.seed, 9);
    CHECK_EQ(convsel_train_params_parse("bogus=1", &p), CONVSEL_INVALID_ARGUMENT);
    CHECK(strstr(convsel_last_error(), "bogus") != NULL);
    CHECK_EQ(convsel_train_params_parse("trees=abc", &p), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_train_params_parse("max_depth=99", &p), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_train_params_parse("target=cubic", &p), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_train_params_parse("trees", &p), CONVSEL_INVALID_ARGUMENT);
    CHECK_NEAR(p.time_limit_s, 0, 0);
    CHECK_EQ(convsel_train_params_parse("time_limit_s=2.5", &p), CONVSEL_OK);
    CHECK_NEAR(p.time_limit_s, 2.5, 0);
}

static void test_roofline_fit(void)
{
    /* Times exactly at a refined roofline with u = 0.4 and an overhead of
     * 3 µs give back both. */
    enum { N = 60 };
    convsel_problem problems[N];
    const convsel_problem *pp[N];
    const convsel_fingerprint *cpus[N];
    int threads[N];
    double ms[N];
    convsel_fingerprint fp;
    syn_fingerprint(&fp);
    convsel_rng rng = {1};
    for (int i = 0; i < N; i++) {
        syn_random_problem(&rng, "", i, &problems[i]);
        pp[i] = &problems[i];
        cpus[i] = &fp;
        threads[i] = 1 + i % 2;
        ms[i] = 0.003 + convsel_roofline_ms(&problems[i], threads[i], &fp, 148, 12, 0.4);
    }
    double u, c;
    convsel_roofline_fit(pp, threads, cpus, ms, N, 148, 12, &u, &c);
    CHECK_NEAR(u, 0.4, 1e-3);
    CHECK_NEAR(c, 0.003, 1e-5);
    /* Without an overhead in the data, none is fitted. */
    for (int i = 0; i < N; i++)
        ms[i] = convsel_roofline_ms(&problems[i], threads[i], &fp, 148, 12, 0.4);
    convsel_roofline_fit(pp, threads, cpus, ms, N, 148, 12, &u, &c);
    CHECK_NEAR(u, 0.4, 1e-4);
    CHECK(c < 1e-6);
}

/* Rows grouped by configuration: in layer order, each group in row order,
 * an empty group for a layer without rows. */
static void test_groups(void)
{
    size_t layer[7] = {3, 0, 1, 3, 0, 3, 1};
    convsel_groups g;
    CHECK_EQ(convsel_groups_build(7, layer, 4, &g), CONVSEL_OK);
    CHECK_EQ(g.n_groups, 4);
    size_t start[5] = {0, 2, 4, 4, 7}, order[7] = {1, 4, 2, 6, 0, 3, 5};
    for (size_t l = 0; l <= 4; l++)
        CHECK_EQ(g.start[l], start[l]);
    for (size_t i = 0; i < 7; i++)
        CHECK_EQ(g.order[i], order[i]);
    convsel_groups_free(&g);
    CHECK(g.order == NULL && g.start == NULL);

    CHECK_EQ(convsel_groups_build(0, NULL, 2, &g), CONVSEL_OK);
    CHECK_EQ(g.n_groups, 2);
    CHECK_EQ(g.start[0] + g.start[1] + g.start[2], 0);
    convsel_groups_free(&g);
    CHECK_EQ(convsel_groups_build(0, NULL, 0, &g), CONVSEL_OK);
    CHECK_EQ(g.n_groups, 0);
    CHECK_EQ(g.start[0], 0);
    convsel_groups_free(&g);

    CHECK_EQ(convsel_groups_build(7, layer, 3, &g), CONVSEL_INVALID_ARGUMENT);
    CHECK(g.order == NULL && g.start == NULL);
    convsel_groups_free(&g);
}

/* Three layers, primitives A, B, C, 0 trees: each primitive's prediction is
 * the geometric mean of its times, so every metric can be worked by hand. */
static void test_eval_by_hand(void)
{
    convsel_dataset *ds;
    CHECK_EQ(convsel_dataset_create(&ds), CONVSEL_OK);
    convsel_fingerprint fp;
    syn_fingerprint(&fp);
    uint32_t fi;
    CHECK_EQ(convsel_dataset_add_fingerprint(ds, &fp, &fi), CONVSEL_OK);
    const char *descs[3] = {"mb1ic16ih14oc16oh14kh3ph1n\"hand:l1\"", "mb1ic32ih14oc32oh14kh3ph1n\"hand:l2\"",
                            "mb1ic64ih14oc64oh14kh3ph1n\"hand:l3\""};
    const char *prims[3] = {"A", "B", "C"};
    const double ms[3][3] = {{1, 3, 9}, {8, 2, 1}, {2, 1, 0}}; /* 0: not measured */
    for (int l = 0; l < 3; l++)
        for (int k = 0; k < 3; k++) {
            if (ms[l][k] == 0)
                continue;
            convsel_record r;
            memset(&r, 0, sizeof r);
            r.kind = CONVSEL_RECORD_CONV;
            CHECK_EQ(convsel_problem_parse(descs[l], &r.problem), CONVSEL_OK);
            snprintf(r.primitive, sizeof r.primitive, "%s", prims[k]);
            r.threads = 1;
            r.fingerprint = fi;
            r.min_ms = r.p10_ms = r.median_ms = r.p90_ms = ms[l][k];
            if (k == 0) /* A's runs spread: its median is twice its p10 */
                r.median_ms = r.p90_ms = 2 * ms[l][k];
            r.runs = 5;
            CHECK_EQ(convsel_dataset_append(ds, &r), CONVSEL_OK);
        }
    convsel_train_params p;
    convsel_train_params_default(&p);
    p.trees = 0;
    p.valid_fraction = 0;
    p.target = CONVSEL_TARGET_LOG;
    p.mode = CONVSEL_MODEL_PER_PRIMITIVE;
    p.statistic = CONVSEL_STAT_P10; /* min = p10 here; A's median differs */
    convsel_model *model;
    const convsel_dataset *sets[1] = {ds};
    CHECK_EQ(convsel_model_train(sets, 1, &p, NULL, NULL, &model), CONVSEL_OK);
    CHECK_EQ(convsel_model_primitive_count(model), 3);
    /* As a cost source the model says which statistic it predicts, the one
     * --verify then measures. */
    convsel_model_costs mc;
    memset(&mc, 0, sizeof mc);
    mc.model = model;
    CHECK_EQ(convsel_model_costs_source(&mc).statistic, CONVSEL_STAT_P10);
    convsel_metrics m;
    CHECK_EQ(convsel_model_eval(model, sets, 1, &m), CONVSEL_OK);
    double a = cbrt(1.0 * 8 * 2), b = cbrt(3.0 * 2 * 1), c = sqrt(9.0 * 1);
    double mape = (fabs(a - 1) / 1 + fabs(b - 3) / 3 + fabs(c - 9) / 9 + fabs(a - 8) / 8 + fabs(b - 2) / 2 +
                   fabs(c - 1) / 1 + fabs(a - 2) / 2 + fabs(b - 1) / 1) /
                  8;
    CHECK_EQ(m.n_records, 8);
    CHECK_EQ(m.n_layers, 3);
    CHECK_NEAR(m.mape, mape, 1e-9);
    CHECK_NEAR(m.within10, 1.0 / 8, 1e-12);    /* only B on layer 2: 1.817 vs 2 */
    CHECK_NEAR(m.top1, 1.0 / 3, 1e-12);        /* B predicted fastest everywhere; right on layer 3 */
    CHECK_NEAR(m.regret_mean, (2.0 + 1.0 + 0.0) / 3, 1e-9); /* 3/1-1, 2/1-1, 0 */
    CHECK_NEAR(m.regret_p95, 1.9, 1e-9);       /* sorted 0 1 2, position 1.9 */
    CHECK_NEAR(m.spearman, (0.5 - 0.5 + 1.0) / 3, 1e-9);
    /* The same predictions judged by medians: A measures 2, 16, 4. */
    CHECK_EQ(convsel_model_eval_against(model, sets, 1, CONVSEL_STAT_MEDIAN, &m), CONVSEL_OK);
    mape = (fabs(a - 2) / 2 + fabs(b - 3) / 3 + fabs(c - 9) / 9 + fabs(a - 16) / 16 + fabs(b - 2) / 2 +
            fabs(c - 1) / 1 + fabs(a - 4) / 4 + fabs(b - 1) / 1) /
           8;
    CHECK_NEAR(m.mape, mape, 1e-9);
    CHECK_NEAR(m.top1, 1.0 / 3, 1e-12);
    CHECK_NEAR(m.regret_mean, (0.5 + 1.0 + 0.0) / 3, 1e-9); /* B picked: 3/2-1, 2/1-1, 0 */
    convsel_metrics same;
    CHECK_EQ(convsel_model_eval_against(model, sets, 1, CONVSEL_STAT_P10, &same), CONVSEL_OK);
    CHECK_EQ(convsel_model_eval(model, sets, 1, &m), CONVSEL_OK);
    CHECK_NEAR(same.mape, m.mape, 0);
    CHECK_NEAR(same.regret_mean, m.regret_mean, 0);
    CHECK_EQ(convsel_model_eval_against(model, sets, 1, (convsel_statistic)7, &m), CONVSEL_INVALID_ARGUMENT);
    convsel_model_destroy(model);
    convsel_dataset_destroy(ds);

    /* Ties: a tie for the fastest measured counts as right; a constant
     * prediction has no rank correlation. */
    size_t layer[4] = {0, 0, 1, 1};
    int32_t prim[4] = {0, 1, 0, 1};
    double meas[4] = {1, 1, 2, 4}, pred[4] = {2, 1, 3, 3};
    CHECK_EQ(convsel_metrics_compute(4, layer, prim, meas, pred, NULL, NULL, &m), CONVSEL_OK);
    CHECK_NEAR(m.top1, 1.0, 0);
    CHECK_NEAR(m.regret_mean, 0.0, 0);
    CHECK_NEAR(m.spearman, 0.0, 0);
    /* Rows without a prediction are skipped. */
    pred[3] = NAN;
    CHECK_EQ(convsel_metrics_compute(4, layer, prim, meas, pred, NULL, NULL, &m), CONVSEL_OK);
    CHECK_EQ(m.n_records, 3);
    CHECK_EQ(m.n_layers, 1);

    /* A dispatcher (primitive 2 here) leaves a layer's ranking when two
     * others are measured, and stays in it when only one other is. Layer 0:
     * the model picks 2 (measured 1.0) over 0 (1.0) and 1 (3.0); without 2 it
     * picks 0, the fastest either way; layer 1 has only 0 and 2. */
    size_t dl[5] = {0, 0, 0, 1, 1};
    int32_t dp[5] = {0, 1, 2, 0, 2};
    double dm[5] = {1.0, 3.0, 1.0, 2.0, 1.0}, dpred[5] = {1.5, 2.0, 1.0, 1.0, 2.0};
    uint8_t disp[3] = {0, 0, 1};
    CHECK_EQ(convsel_metrics_compute(5, dl, dp, dm, dpred, disp, NULL, &m), CONVSEL_OK);
    CHECK_EQ(m.n_records, 5);
    CHECK_EQ(m.n_layers, 2);
    CHECK_NEAR(m.top1, 0.5, 1e-12);       /* layer 0 right; layer 1 picks 0 (2.0) over 2 (1.0) */
    CHECK_NEAR(m.regret_mean, 0.5, 1e-12); /* (0 + 1) / 2 */
    CHECK_NEAR(m.spearman, 0.0, 1e-12);    /* layer 0: +1 over {0, 1}; layer 1: -1 */
    disp[2] = 0; /* as a plain primitive: layer 0 has three entries */
    CHECK_EQ(convsel_metrics_compute(5, dl, dp, dm, dpred, disp, NULL, &m), CONVSEL_OK);
    CHECK_NEAR(m.top1, 0.5, 1e-12);
    CHECK(m.spearman > -0.5 && m.spearman < 0.5);

    /* Unranked rows (a naive kernel) leave their layer's ranking when another
     * primitive is there, but count in MAPE. Layer 0: primitive 1 is
     * predicted fastest (0.5) but measured 100x the best; marked, the pick is
     * primitive 0 (right). Layer 1: its only other row is marked too, so
     * both stay ranked. */
    size_t ul[5] = {0, 0, 0, 1, 1};
    int32_t up[5] = {0, 1, 2, 1, 2};
    double um[5] = {1.0, 100.0, 2.0, 1.0, 2.0}, upred[5] = {1.0, 0.5, 2.0, 1.0, 2.0};
    uint8_t unranked[5] = {0, 1, 0, 1, 1};
    CHECK_EQ(convsel_metrics_compute(5, ul, up, um, upred, NULL, NULL, &m), CONVSEL_OK);
    CHECK_NEAR(m.top1, 0.5, 1e-12);
    CHECK_NEAR(m.regret_mean, 49.5, 1e-9); /* (99 + 0) / 2 */
    convsel_metrics plain = m;
    CHECK_EQ(convsel_metrics_compute(5, ul, up, um, upred, NULL, unranked, &m), CONVSEL_OK);
    CHECK_EQ(m.n_records, 5);
    CHECK_NEAR(m.mape, plain.mape, 0);
    CHECK_EQ(m.n_layers, 2);
    CHECK_NEAR(m.top1, 1.0, 1e-12);
    CHECK_NEAR(m.regret_mean, 0.0, 1e-12);
}

/* Scoring as the selector prices, from the kernel each record says ran it,
 * on a CPU and an ISA cap that are not this process's (as a dataset profiled
 * elsewhere is). onednn_direct is predicted fastest everywhere (its
 * geometric mean is the lowest). Layer 1: its record ran as the reference
 * loops (100 ms), so it leaves the ranking and im2col_gemm (1 ms, the
 * fastest) is picked. Layer 2: it ran as onednn_gemm, so it is priced as
 * onednn_gemm (2 ms predicted) and im2col_gemm (1 ms) is picked over it
 * (0.5 ms measured): regret 1. Layer 3: no kernel recorded anywhere and
 * another cap, so its rows are counted as unknown and priced as
 * themselves: onednn_direct, the fastest, is picked. */
static void test_eval_recorded_kernels(void)
{
    convsel_dataset *ds;
    CHECK_EQ(convsel_dataset_create(&ds), CONVSEL_OK);
    convsel_fingerprint fp;
    syn_fingerprint(&fp);
    const convsel_isa other = convsel_get_isa() == CONVSEL_ISA_SSE41 ? CONVSEL_ISA_AVX2 : CONVSEL_ISA_SSE41;
    fp.isa_cap = other;
    uint32_t fi;
    CHECK_EQ(convsel_dataset_add_fingerprint(ds, &fp, &fi), CONVSEL_OK);
    const char *descs[3] = {"mb1ic16ih14oc16oh14kh3ph1n\"k:l1\"", "mb1ic32ih14oc32oh14kh3ph1n\"k:l2\"",
                            "mb1ic64ih14oc64oh14kh3ph1n\"k:l3\""};
    const char *prims[3] = {"onednn_direct", "onednn_gemm", "im2col_gemm"};
    const double ms[3][3] = {{100, 2, 1}, {0.5, 2, 1}, {0.01, 2, 1}};
    const char *kernels[3][3] = {{"reference", "onednn_gemm", "im2col_gemm"},
                                 {"onednn_gemm", "onednn_gemm", "im2col_gemm"},
                                 {"", "", ""}};
    for (int l = 0; l < 3; l++)
        for (int k = 0; k < 3; k++) {
            convsel_record r;
            memset(&r, 0, sizeof r);
            r.kind = CONVSEL_RECORD_CONV;
            CHECK_EQ(convsel_problem_parse(descs[l], &r.problem), CONVSEL_OK);
            snprintf(r.primitive, sizeof r.primitive, "%s", prims[k]);
            snprintf(r.kernel, sizeof r.kernel, "%s", kernels[l][k]);
            r.threads = 1;
            r.isa = other;
            r.fingerprint = fi;
            r.min_ms = r.p10_ms = r.median_ms = r.p90_ms = ms[l][k];
            r.runs = 5;
            CHECK_EQ(convsel_dataset_append(ds, &r), CONVSEL_OK);
        }
    convsel_train_params p;
    convsel_train_params_default(&p);
    p.trees = 0;
    p.valid_fraction = 0;
    p.target = CONVSEL_TARGET_LOG;
    p.mode = CONVSEL_MODEL_PER_PRIMITIVE;
    convsel_model *model;
    const convsel_dataset *sets[1] = {ds};
    CHECK_EQ(convsel_model_train(sets, 1, &p, NULL, NULL, &model), CONVSEL_OK);
    convsel_metrics m;
    CHECK_EQ(convsel_model_eval(model, sets, 1, &m), CONVSEL_OK);
    CHECK_NEAR(m.regret_mean, 99.0 / 3, 1e-9); /* layer 1: 100 / 1 - 1; layers 2 and 3: 0 */
    CHECK_EQ(m.n_priced_as + m.n_unranked + m.n_kernel_unknown, 0);
    CHECK_EQ(convsel_model_eval_as_selector(model, sets, 1, &m), CONVSEL_OK);
    CHECK_EQ(m.n_records, 9);
    CHECK_EQ(m.n_unranked, 1);
    CHECK_EQ(m.n_priced_as, 1);
    CHECK_EQ(m.n_kernel_unknown, 3);
    CHECK_NEAR(m.regret_mean, (0.0 + 1.0 + 0.0) / 3, 1e-9);
    CHECK_NEAR(m.top1, 2.0 / 3, 1e-12);
    /* A kernel name the catalogue does not know counts as unknown. */
    convsel_dataset *bad;
    CHECK_EQ(convsel_dataset_create(&bad), CONVSEL_OK);
    CHECK_EQ(convsel_dataset_add_fingerprint(bad, &fp, &fi), CONVSEL_OK);
    for (size_t i = 0; i < convsel_dataset_size(ds); i++) {
        convsel_record r = *convsel_dataset_record(ds, i);
        if (i == 0)
            snprintf(r.kernel, sizeof r.kernel, "no_such_kernel");
        CHECK_EQ(convsel_dataset_append(bad, &r), CONVSEL_OK);
    }
    sets[0] = bad;
    CHECK_EQ(convsel_model_eval_as_selector(model, sets, 1, &m), CONVSEL_OK);
    CHECK_EQ(m.n_unranked, 0);
    CHECK_EQ(m.n_kernel_unknown, 4);
    CHECK_NEAR(m.regret_mean, (99.0 + 1.0 + 0.0) / 3, 1e-9);
    convsel_dataset_destroy(bad);
    convsel_model_destroy(model);
    convsel_dataset_destroy(ds);
}

static int quiet_progress(const convsel_train_progress *p, void *user)
{
    int *calls = user;
    (*calls)++;
    return p->ensemble_index >= p->ensemble_count;
}

/* End to end on synthetic latencies: the model must rank primitives well. */
static void test_synthetic(void)
{
    convsel_dataset *ds = NULL;
    CHECK_EQ(syn_dataset(2024, 4, 30, 60, 0.03, &ds), CONVSEL_OK);
    if (!ds)
        return;
    const convsel_dataset *sets[1] = {ds};
    convsel_train_params p;
    convsel_train_params_default(&p);
    p.trees = 250;
    p.learning_rate = 0.1;
    p.patience = 30;

    convsel_model *model;
    int calls = 0;
    CHECK_EQ(convsel_model_train(sets, 1, &p, quiet_progress, &calls, &model), CONVSEL_OK);
    CHECK(calls > 0);
    CHECK_EQ(convsel_model_primitive_count(model), SYN_COUNT);
    CHECK_EQ(convsel_model_fingerprint_count(model), 1);
    CHECK_STR(convsel_model_fingerprint(model, 0)->microarch, "cascadelake");
    CHECK_EQ(strlen(convsel_model_id(model)), 16);
    convsel_metrics m;
    CHECK_EQ(convsel_model_eval(model, sets, 1, &m), CONVSEL_OK);
    printf("synthetic, training set: mape %.3f within10 %.3f spearman %.3f top1 %.3f regret %.4f/%.4f\n", m.mape,
           m.within10, m.spearman, m.top1, m.regret_mean, m.regret_p95);
    CHECK(m.mape < 0.10);
    CHECK(m.spearman > 0.9);

    /* Prediction of a primitive the catalogue has but the model lacks. */
    convsel_problem prob;
    CHECK_EQ(convsel_problem_parse("mb1ic64ih28oc64oh28kh3ph1", &prob), CONVSEL_OK);
    double ms;
    CHECK_EQ(convsel_model_predict_ms(model, &prob, 1, 0, NULL, &ms), CONVSEL_NOT_FOUND);
    size_t j;
    CHECK_EQ(convsel_model_primitive_find(model, "syn_winograd", &j), CONVSEL_OK);
    convsel_model_query q = {&prob, 1, j, NULL};
    CHECK_EQ(convsel_model_predict_batch(model, &q, 1, &ms), CONVSEL_OK);
    double truth = syn_latency_ms(SYN_WINOGRAD, &prob, 1);
    CHECK_MSG(fabs(ms / truth - 1) < 0.3, "winograd predicted %.4f ms, true %.4f ms", ms, truth);
    q.threads = 0;
    CHECK_EQ(convsel_model_predict_batch(model, &q, 1, &ms), CONVSEL_INVALID_ARGUMENT);
    convsel_model_destroy(model);

    /* Held-out layers and held-out networks. */
    CHECK_EQ(convsel_model_cv(sets, 1, &p, CONVSEL_CV_RANDOM, &m), CONVSEL_OK);
    printf("synthetic, random 80/20: mape %.3f within10 %.3f spearman %.3f top1 %.3f regret %.4f/%.4f (%zu layers)\n",
           m.mape, m.within10, m.spearman, m.top1, m.regret_mean, m.regret_p95, m.n_layers);
    CHECK(m.n_layers > 20);
    CHECK(m.spearman > 0.8);
    CHECK(m.top1 > 0.7);
    CHECK(m.mape < 0.25);
    p.trees = 120;
    CHECK_EQ(convsel_model_cv(sets, 1, &p, CONVSEL_CV_BY_NETWORK, &m), CONVSEL_OK);
    printf("synthetic, by network: mape %.3f within10 %.3f spearman %.3f top1 %.3f regret %.4f/%.4f (%zu layers)\n",
           m.mape, m.within10, m.spearman, m.top1, m.regret_mean, m.regret_p95, m.n_layers);
    CHECK(m.n_layers >= 4 * 30 * 2 * 9 / 10); /* every network's layers were predicted */
    CHECK(m.spearman > 0.8);
    CHECK(m.top1 > 0.7);
    convsel_dataset_destroy(ds);

    /* Nothing to train on. */
    convsel_dataset *empty;
    CHECK_EQ(convsel_dataset_create(&empty), CONVSEL_OK);
    sets[0] = empty;
    CHECK_EQ(convsel_model_train(sets, 1, &p, NULL, NULL, &model), CONVSEL_INVALID_ARGUMENT);
    CHECK(model == NULL);
    CHECK_EQ(convsel_model_cv(sets, 1, &p, CONVSEL_CV_BY_NETWORK, &m), CONVSEL_INVALID_ARGUMENT);
    convsel_dataset_destroy(empty);
}

/* Log of model's prediction for primitive j on problem at 1 thread. */
static double log_pred(const convsel_model *model, const convsel_problem *problem, size_t j)
{
    double ms = NAN;
    convsel_model_query q = {problem, 1 + (int)(j % 2), j, NULL};
    CHECK_EQ(convsel_model_predict_batch(model, &q, 1, &ms), CONVSEL_OK);
    return log(ms);
}

static void test_bags(void)
{
    convsel_dataset *ds = NULL;
    CHECK_EQ(syn_dataset(77, 2, 20, 40, 0.05, &ds), CONVSEL_OK);
    if (!ds)
        return;
    const convsel_dataset *sets[1] = {ds};
    convsel_train_params p;
    convsel_train_params_default(&p);
    CHECK_EQ(p.bags, 3);
    p.trees = 40;
    p.seed = 5;
    /* Without early-stopping layers every bag fits the same roofline, and
     * bag b is exactly the model of seed 5 + b: the bagged model predicts
     * the mean of their logs. */
    p.valid_fraction = 0;
    convsel_model *single[3] = {NULL, NULL, NULL}, *bagged = NULL;
    p.bags = 1;
    for (int b = 0; b < 3; b++) {
        p.seed = 5 + (uint64_t)b;
        CHECK_EQ(convsel_model_train(sets, 1, &p, NULL, NULL, &single[b]), CONVSEL_OK);
    }
    p.seed = 5;
    p.bags = 3;
    CHECK_EQ(convsel_model_train(sets, 1, &p, NULL, NULL, &bagged), CONVSEL_OK);
    if (!bagged || !single[0] || !single[1] || !single[2])
        return;
    CHECK(strcmp(convsel_model_id(bagged), convsel_model_id(single[0])) != 0);
    CHECK_EQ(bagged->ensembles[0].n_trees, single[0]->ensembles[0].n_trees + single[1]->ensembles[0].n_trees +
                                               single[2]->ensembles[0].n_trees);
    convsel_rng rng = {11};
    double spread = 0;
    for (int i = 0; i < 40; i++) {
        convsel_problem prob;
        syn_random_problem(&rng, "", i, &prob);
        for (size_t j = 0; j < convsel_model_primitive_count(bagged); j++) {
            double l0 = log_pred(single[0], &prob, j), l1 = log_pred(single[1], &prob, j),
                   l2 = log_pred(single[2], &prob, j);
            CHECK_NEAR(log_pred(bagged, &prob, j), (l0 + l1 + l2) / 3, 1e-9);
            spread += fabs(l0 - l1) + fabs(l1 - l2);
        }
    }
    CHECK(spread > 0); /* the seeds' models differ: the mean is not one of them */

    /* bags survives the file, and a model of one bag is written as before
     * bagging existed (its id does not depend on it). */
    const char *path = "test_learner_bags.msgpack";
    convsel_model *loaded = NULL;
    CHECK_EQ(convsel_model_save(bagged, path), CONVSEL_OK);
    CHECK_EQ(convsel_model_load(path, &loaded), CONVSEL_OK);
    if (loaded) {
        CHECK_EQ(convsel_model_params(loaded)->bags, 3);
        CHECK_STR(convsel_model_id(loaded), convsel_model_id(bagged));
    }
    convsel_model_destroy(loaded);
    loaded = NULL;
    CHECK_EQ(convsel_model_save(single[0], path), CONVSEL_OK);
    CHECK_EQ(convsel_model_load(path, &loaded), CONVSEL_OK);
    if (loaded) {
        CHECK_EQ(convsel_model_params(loaded)->bags, 1);
        CHECK_STR(convsel_model_id(loaded), convsel_model_id(single[0]));
    }
    convsel_model_destroy(loaded);
    remove(path);

    /* With early stopping each bag holds out its own layers; the
     * uncertainty is the bags' error on the rows each did not see. */
    convsel_model_destroy(bagged);
    p.valid_fraction = 0.2;
    CHECK_EQ(convsel_model_train(sets, 1, &p, NULL, NULL, &bagged), CONVSEL_OK);
    if (bagged) {
        CHECK(bagged->valid_rows > 0);
        CHECK(bagged->valid_rmse_log > 0 && isfinite(bagged->valid_rmse_log));
    }
    convsel_model_destroy(bagged);

    /* Out of range. */
    p.bags = 0;
    CHECK_EQ(convsel_model_train(sets, 1, &p, NULL, NULL, &bagged), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_train_params_parse("bags=0", &p), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_train_params_parse("bags=65", &p), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_train_params_parse("bags=4", &p), CONVSEL_OK);
    CHECK_EQ(p.bags, 4);
    for (int b = 0; b < 3; b++)
        convsel_model_destroy(single[b]);
    convsel_dataset_destroy(ds);
}

/* Training's jobs (each bag's each ensemble) run on threads of their own;
 * the caller sees the same model and the same progress, in the same order, at
 * any thread count, and a stop said to progress stops training. */
typedef struct progress_log {
    convsel_train_progress *events;
    size_t n, cap;
    size_t stop_at; /* return non-zero at this event (1-based; 0: never) */
    size_t after_stop;
} progress_log;

static int log_progress(const convsel_train_progress *p, void *user)
{
    progress_log *l = user;
    if (l->stop_at && l->n >= l->stop_at) {
        l->after_stop++;
        return 1;
    }
    if (l->n == l->cap) {
        size_t cap = l->cap ? 2 * l->cap : 256;
        convsel_train_progress *e = realloc(l->events, cap * sizeof *e);
        if (!e)
            return 1;
        l->events = e;
        l->cap = cap;
    }
    l->events[l->n++] = *p;
    return l->stop_at && l->n == l->stop_at;
}

static int same_progress(const convsel_train_progress *a, const convsel_train_progress *b)
{
    return strcmp(a->ensemble, b->ensemble) == 0 && a->ensemble_index == b->ensemble_index &&
           a->ensemble_count == b->ensemble_count && a->iteration == b->iteration && a->bag == b->bag &&
           a->bag_count == b->bag_count && a->best_iteration == b->best_iteration &&
           a->train_rmse == b->train_rmse &&
           (a->valid_rmse == b->valid_rmse || (isnan(a->valid_rmse) && isnan(b->valid_rmse)));
}

/* Training stopped by progress at event stop_at: INTERRUPTED, no model, and
 * progress not called after it said stop. */
static void check_stop(const convsel_dataset *const *sets, convsel_train_params p, int threads, size_t stop_at)
{
    progress_log s = {.stop_at = stop_at};
    convsel_model *m = NULL;
    p.threads = threads;
    CHECK_EQ(convsel_model_train(sets, 1, &p, log_progress, &s, &m), CONVSEL_INTERRUPTED);
    CHECK(m == NULL);
    CHECK_EQ(s.n, stop_at);
    CHECK_EQ(s.after_stop, 0);
    convsel_model_destroy(m);
    free(s.events);
}

/* The training of the job tests: 30 trees in each of 3 bags, one model for
 * all primitives (mode 0) or one per primitive (1). */
static const char *const job_modes[2] = {"mode=single", "mode=per_primitive"};

static convsel_train_params job_params(int mode)
{
    convsel_train_params p;
    convsel_train_params_default(&p);
    CHECK_EQ(convsel_train_params_parse(job_modes[mode], &p), CONVSEL_OK);
    p.trees = 30;
    p.bags = 3;
    return p;
}

static void test_parallel_jobs(void)
{
    convsel_dataset *ds = NULL;
    CHECK_EQ(syn_dataset(91, 2, 20, 40, 0.05, &ds), CONVSEL_OK);
    if (!ds)
        return;
    const convsel_dataset *sets[1] = {ds};
    for (int mi = 0; mi < 2; mi++) {
        convsel_train_params p = job_params(mi);
        p.seed = 7;
        p.threads = 1;
        convsel_model *ref = NULL;
        progress_log ref_log = {0};
        CHECK_EQ(convsel_model_train(sets, 1, &p, log_progress, &ref_log, &ref), CONVSEL_OK);
        if (!ref)
            continue;
        /* Every job reported, in order: bag by bag, ensemble by ensemble. */
        CHECK(mi == 0 ? ref->n_ensembles == 1 : ref->n_ensembles > 1);
        size_t job = 0;
        for (size_t i = 0; i < ref_log.n; i++) {
            const convsel_train_progress *e = &ref_log.events[i];
            size_t k = (size_t)e->bag * e->ensemble_count + e->ensemble_index;
            CHECK_MSG(k == job || k == job + 1, "progress of job %zu after job %zu", k, job);
            CHECK(k == job && i > 0 ? e->iteration == ref_log.events[i - 1].iteration + 1 : e->iteration == 0);
            job = k;
        }
        CHECK_EQ(job + 1, 3 * ref->n_ensembles);
        for (int threads = 2; threads <= 5; threads += 3) { /* fewer and more threads than jobs */
            convsel_model *m = NULL;
            progress_log l = {0};
            p.threads = threads;
            CHECK_EQ(convsel_model_train(sets, 1, &p, log_progress, &l, &m), CONVSEL_OK);
            if (m) {
                CHECK_STR(convsel_model_id(m), convsel_model_id(ref));
                CHECK_EQ(m->valid_rows, ref->valid_rows);
                CHECK(m->valid_rmse_log == ref->valid_rmse_log);
            }
            CHECK_EQ(l.n, ref_log.n);
            size_t same = 0;
            for (size_t i = 0; i < l.n && i < ref_log.n; i++)
                same += same_progress(&l.events[i], &ref_log.events[i]);
            CHECK_MSG(same == ref_log.n, "%s, %d threads: %zu of %zu progress events as at 1 thread", job_modes[mi],
                      threads, same, ref_log.n);
            convsel_model_destroy(m);
            free(l.events);
        }
        /* A stop in the second or the last bag's first job. */
        for (int bag = 1; bag <= 2; bag++) {
            size_t stop_at = 0;
            for (size_t i = 0; i < ref_log.n && !stop_at; i++)
                if (ref_log.events[i].bag == bag && ref_log.events[i].iteration == 4)
                    stop_at = i + 1;
            CHECK(stop_at > 0);
            for (int threads = 1; threads <= 5; threads += 2)
                check_stop(sets, p, threads, stop_at);
        }
        convsel_model_destroy(ref);
        free(ref_log.events);
    }
    convsel_dataset_destroy(ds);
}

/* time_limit_s: the rounds of jobs share it; passed at once, every job keeps
 * one tree and counts as cut; never reached, the model is the one without a
 * limit. Neither is stored: a loaded model reports nothing cut. */
static void test_time_limit(void)
{
    /* What is left of a limit: none without one, never nothing with one. */
    double now = convsel_now();
    CHECK_NEAR(convsel_time_left(0, now - 100), 0, 0);
    CHECK(convsel_time_left(1e6, now) > 1e6 - 60 && convsel_time_left(1e6, now) <= 1e6);
    CHECK_NEAR(convsel_time_left(1, now - 10), 1e-9, 0);

    convsel_dataset *ds = NULL;
    CHECK_EQ(syn_dataset(93, 2, 20, 40, 0.05, &ds), CONVSEL_OK);
    if (!ds)
        return;
    const convsel_dataset *sets[1] = {ds};
    for (int mi = 0; mi < 2; mi++) {
        convsel_train_params p = job_params(mi);
        convsel_model *free_run = NULL, *long_limit = NULL;
        CHECK_EQ(convsel_model_train(sets, 1, &p, NULL, NULL, &free_run), CONVSEL_OK);
        p.time_limit_s = 1e6;
        CHECK_EQ(convsel_model_train(sets, 1, &p, NULL, NULL, &long_limit), CONVSEL_OK);
        if (!free_run || !long_limit) {
            convsel_model_destroy(free_run);
            convsel_model_destroy(long_limit);
            continue;
        }
        size_t jobs = 0;
        CHECK_STR(convsel_model_id(long_limit), convsel_model_id(free_run));
        size_t none = 1;
        CHECK_EQ(convsel_model_training_cut(free_run, &jobs, &none), 0);
        CHECK_EQ(none, 0);
        CHECK_EQ(jobs, 3 * free_run->n_ensembles);
        CHECK_EQ(convsel_model_training_cut(long_limit, NULL, NULL), 0);
        CHECK_NEAR(long_limit->params.time_limit_s, 0, 0);
        for (int threads = 1; threads <= 2; threads++) {
            convsel_model *cut = NULL;
            p.time_limit_s = 1e-9;
            p.threads = threads;
            CHECK_EQ(convsel_model_train(sets, 1, &p, NULL, NULL, &cut), CONVSEL_OK);
            if (!cut)
                continue;
            size_t fewest = 0;
            CHECK_EQ(convsel_model_training_cut(cut, &jobs, &fewest), 3 * cut->n_ensembles);
            CHECK_EQ(fewest, 1);
            CHECK_EQ(jobs, 3 * cut->n_ensembles);
            for (size_t e = 0; e < cut->n_ensembles; e++)
                CHECK_MSG(cut->ensembles[e].n_trees == 3, "%s, ensemble %zu: %zu trees, one per bag", job_modes[mi], e,
                          cut->ensembles[e].n_trees);
            CHECK(strcmp(convsel_model_id(cut), convsel_model_id(free_run)) != 0);
            char path[256];
            snprintf(path, sizeof path, "/tmp/test_learner_cut_%ld.msgpack", (long)getpid());
            convsel_model *loaded = NULL;
            CHECK_EQ(convsel_model_save(cut, path), CONVSEL_OK);
            CHECK_EQ(convsel_model_load(path, &loaded), CONVSEL_OK);
            unlink(path);
            if (loaded) {
                CHECK_STR(convsel_model_id(loaded), convsel_model_id(cut));
                CHECK_EQ(convsel_model_training_cut(loaded, &jobs, NULL), 0);
                CHECK_EQ(jobs, 0);
            }
            convsel_model_destroy(loaded);
            convsel_model_destroy(cut);
        }
        p.threads = 0;
        p.time_limit_s = -1;
        convsel_model *bad = NULL;
        CHECK_EQ(convsel_model_train(sets, 1, &p, NULL, NULL, &bad), CONVSEL_INVALID_ARGUMENT);
        CHECK(bad == NULL && strstr(convsel_last_error(), "time_limit_s") != NULL);
        convsel_model_destroy(free_run);
        convsel_model_destroy(long_limit);
    }
    convsel_dataset_destroy(ds);
}

/* One CPU profiled with two OpenBLAS cores, the GEMM primitives 1.8x slower
 * with the AVX2 one: the model keeps the two setups apart (two fingerprints,
 * two sets of layers) and predicts each its own times, the GEMM primitives'
 * apart and the others' alike (blas_isa is missing for them). */
static void test_blas_setups(void)
{
    convsel_fingerprint fp[2];
    syn_fingerprint(&fp[0]);
    fp[1] = fp[0];
    snprintf(fp[0].openblas_version, sizeof fp[0].openblas_version, "OpenBLAS 0.3.21 DYNAMIC_ARCH SkylakeX");
    snprintf(fp[1].openblas_version, sizeof fp[1].openblas_version, "OpenBLAS 0.3.21 DYNAMIC_ARCH Haswell");
    CHECK(convsel_fingerprint_same_cpu(&fp[0], &fp[1]) && !convsel_fingerprint_same_setup(&fp[0], &fp[1]));
    convsel_dataset *ds[2] = {NULL, NULL};
    uint32_t fi[2];
    for (int k = 0; k < 2; k++) {
        CHECK_EQ(convsel_dataset_create(&ds[k]), CONVSEL_OK);
        CHECK_EQ(convsel_dataset_add_fingerprint(ds[k], &fp[k], &fi[k]), CONVSEL_OK);
    }
    const double slow = 1.8;
    convsel_rng rng = {31};
    for (int l = 0; l < 120; l++) {
        convsel_problem prob;
        syn_random_problem(&rng, "", l, &prob);
        size_t first = convsel_dataset_size(ds[0]);
        CHECK_EQ(syn_add(ds[0], fi[0], &prob, 1, 0.02, &rng, syn_catalogue_names), CONVSEL_OK);
        for (size_t i = first; i < convsel_dataset_size(ds[0]); i++) {
            convsel_record r = *convsel_dataset_record(ds[0], i);
            int gemm = strcmp(r.primitive, "im2col_gemm") == 0 || strcmp(r.primitive, "gemm_1x1") == 0;
            double f = gemm ? slow : 1.0;
            r.fingerprint = fi[1];
            r.min_ms *= f;
            r.p10_ms *= f;
            r.median_ms *= f;
            r.p90_ms *= f;
            CHECK_EQ(convsel_dataset_append(ds[1], &r), CONVSEL_OK);
        }
    }
    const convsel_dataset *sets[2] = {ds[0], ds[1]};
    convsel_train_params p;
    convsel_train_params_default(&p);
    p.trees = 200;
    p.bags = 1;
    convsel_model *model = NULL;
    CHECK_EQ(convsel_model_train(sets, 2, &p, NULL, NULL, &model), CONVSEL_OK);
    if (!model) {
        convsel_dataset_destroy(ds[0]);
        convsel_dataset_destroy(ds[1]);
        return;
    }
    CHECK_EQ(convsel_model_fingerprint_count(model), 2);
    size_t gemm, direct;
    CHECK_EQ(convsel_model_primitive_find(model, "im2col_gemm", &gemm), CONVSEL_OK);
    CHECK_EQ(convsel_model_primitive_find(model, "onednn_direct", &direct), CONVSEL_OK);
    /* Geometric means over the training layers of each primitive's
     * prediction on the AVX2 kernels over the AVX-512 ones. */
    double lg = 0, ld = 0;
    int n = 0;
    for (size_t i = 0; i < convsel_dataset_size(ds[0]); i++) {
        const convsel_record *r = convsel_dataset_record(ds[0], i);
        if (strcmp(r->primitive, "im2col_gemm") != 0)
            continue;
        double ms[4];
        convsel_model_query q[4] = {{&r->problem, 1, gemm, &fp[0]},
                                    {&r->problem, 1, gemm, &fp[1]},
                                    {&r->problem, 1, direct, &fp[0]},
                                    {&r->problem, 1, direct, &fp[1]}};
        CHECK_EQ(convsel_model_predict_batch(model, q, 4, ms), CONVSEL_OK);
        lg += log(ms[1] / ms[0]);
        ld += log(ms[3] / ms[2]);
        n++;
    }
    CHECK(n > 50);
    double rg = exp(lg / n), rd = exp(ld / n);
    CHECK_MSG(rg > 1.5 && rg < 2.1, "gemm predicted %.3fx slower with the Haswell kernels, measured %.1fx", rg, slow);
    /* The setups differ only in blas_isa, which onednn_direct does not see. */
    CHECK_MSG(fabs(rd - 1) < 1e-12, "direct predicted %.6fx with the Haswell kernels, measured 1x", rd);
    convsel_model_destroy(model);
    convsel_dataset_destroy(ds[0]);
    convsel_dataset_destroy(ds[1]);
}

/* ---------------------------------------------------------------- trees laid out for prediction */

enum { FOREST_F = 5 }; /* feature 0 categorical, as first_categorical says */

/* Grows node i of a random tree at depth d (< max_depth splits below it),
 * appending children after it as training does. */
static void random_subtree(convsel_rng *rng, convsel_node *nodes, size_t *n, int32_t i, int d, int max_depth,
                           int cat_bits)
{
    convsel_node *node = &nodes[i];
    if (d == max_depth || (d > 0 && convsel_rng_below(rng, 4) == 0)) {
        *node = (convsel_node){.feature = -1, .left = -1, .right = -1,
                               .value = convsel_rng_uniform(rng) - 0.5 + 1e-9 * (double)convsel_rng_below(rng, 1000)};
        return;
    }
    int32_t f = (int32_t)convsel_rng_below(rng, FOREST_F);
    *node = (convsel_node){.feature = f};
    if (f == 0) {
        do
            node->cat_left = (uint64_t)convsel_rng_below(rng, (size_t)1 << 31) * 2654435761u &
                             (cat_bits == 64 ? ~(uint64_t)0 : (((uint64_t)1 << cat_bits) - 1));
        while (!node->cat_left);
    } else {
        node->threshold = (float)(convsel_rng_uniform(rng) * 4.0 - 2.0);
    }
    int32_t left = (int32_t)(*n)++, right = (int32_t)(*n)++;
    node->left = left;
    node->right = right;
    random_subtree(rng, nodes, n, left, d + 1, max_depth, cat_bits);
    random_subtree(rng, nodes, n, right, d + 1, max_depth, cat_bits);
}

static void random_ensemble(convsel_rng *rng, size_t n_trees, int max_depth, int cat_bits, convsel_ensemble *e)
{
    e->base = 0.25;
    e->n_trees = n_trees;
    e->trees = calloc(n_trees, sizeof *e->trees);
    for (size_t t = 0; e->trees && t < n_trees; t++) {
        convsel_node *nodes = calloc(((size_t)2 << max_depth), sizeof *nodes);
        size_t n = 1;
        if (nodes)
            random_subtree(rng, nodes, &n, 0, 0, max_depth, cat_bits);
        e->trees[t] = (convsel_tree){nodes ? n : 0, nodes};
    }
}

/* A row of the kinds of values a walk meets: categories in and out of the
 * masks' range, fractions, negative, NaN and infinite values, and values
 * equal to a split's threshold. */
static void random_row(convsel_rng *rng, const convsel_ensemble *e, float *x)
{
    static const float odd[] = {NAN, INFINITY, -INFINITY, -1.0f, 2.5f, 31.0f, 32.0f, 63.0f, 64.0f, 1e9f};
    for (size_t j = 0; j < FOREST_F; j++) {
        size_t pick = convsel_rng_below(rng, 10);
        const convsel_tree *tree = &e->trees[convsel_rng_below(rng, e->n_trees)];
        const convsel_node *node = &tree->nodes[convsel_rng_below(rng, tree->n_nodes)];
        if (pick == 0)
            x[j] = odd[convsel_rng_below(rng, sizeof odd / sizeof *odd)];
        else if (pick <= 3 && j > 0 && node->feature > 0)
            x[j] = node->threshold;
        else if (j == 0)
            x[j] = (float)convsel_rng_below(rng, 34);
        else
            x[j] = (float)(convsel_rng_uniform(rng) * 5.0 - 2.5);
    }
}

/* Every row's sum through the laid-out forest, in tiles of trees and groups
 * of rows of every size, is bit for bit the sum of convsel_tree_predict. */
static void test_forest_matches_trees(void)
{
    enum { ROWS = 37 };
    convsel_rng rng = {41};
    for (int max_depth = 0; max_depth <= CONVSEL_FOREST_MAX_DEPTH; max_depth++) {
        convsel_ensemble e = {0};
        random_ensemble(&rng, 40, max_depth, 32, &e);
        convsel_forest f;
        CHECK_EQ(convsel_forest_build(&e, max_depth, FOREST_F, first_categorical, &f), CONVSEL_OK);
        float x[ROWS][FOREST_F], xf[ROWS][FOREST_F];
        uint8_t codes[ROWS][FOREST_F];
        double want[ROWS], got[ROWS];
        for (size_t r = 0; r < ROWS; r++) {
            random_row(&rng, &e, x[r]);
            want[r] = got[r] = e.base;
            for (size_t t = 0; t < e.n_trees; t++)
                want[r] += convsel_tree_predict(&e.trees[t], x[r]);
        }
        int same = f.leaf != NULL;
        for (size_t n = 1; same && n <= ROWS; n += 6) {
            for (size_t r = 0; r < n; r++) {
                convsel_forest_row(&f, x[r], xf[r], codes[r]);
                got[r] = e.base;
            }
            for (size_t t = 0; t < e.n_trees; t += 7)
                convsel_forest_add_rows(&f, t, e.n_trees - t < 7 ? e.n_trees - t : 7, xf[0], codes[0], n, got);
            for (size_t r = 0; r < n; r++)
                same &= memcmp(&want[r], &got[r], sizeof want[r]) == 0;
        }
        CHECK_MSG(same, "depth %d: the laid-out forest predicts other sums than the trees", max_depth);
        /* laid out deeper than its trees, the same sums */
        if (max_depth < CONVSEL_FOREST_MAX_DEPTH) {
            convsel_forest deeper;
            CHECK_EQ(convsel_forest_build(&e, max_depth + 1, FOREST_F, first_categorical, &deeper), CONVSEL_OK);
            for (size_t r = 0; r < ROWS; r++) {
                convsel_forest_row(&deeper, x[r], xf[r], codes[r]);
                got[r] = e.base;
            }
            convsel_forest_add_rows(&deeper, 0, e.n_trees, xf[0], codes[0], ROWS, got);
            same = 1;
            for (size_t r = 0; r < ROWS; r++)
                same &= memcmp(&want[r], &got[r], sizeof want[r]) == 0;
            CHECK_MSG(same, "depth %d laid out at %d: other sums", max_depth, max_depth + 1);
            convsel_forest_free(&deeper);
        }
        convsel_forest_free(&f);
        convsel_ensemble_free(&e);
    }
}

/* What the layout cannot hold is refused, and the trees stay walkable. */
static void test_forest_refuses(void)
{
    convsel_rng rng = {43};
    convsel_ensemble e = {0};
    convsel_forest f;
    random_ensemble(&rng, 10, 5, 32, &e);
    /* a tree deeper than the depth asked for */
    CHECK_EQ(convsel_forest_build(&e, 4, FOREST_F, first_categorical, &f), CONVSEL_NOT_APPLICABLE);
    CHECK(f.leaf == NULL && f.block == NULL);
    CHECK_EQ(convsel_forest_build(&e, CONVSEL_FOREST_MAX_DEPTH + 1, FOREST_F, first_categorical, &f),
             CONVSEL_NOT_APPLICABLE);
    CHECK_EQ(convsel_forest_build(&e, 5, FOREST_F, first_categorical, &f), CONVSEL_OK);
    convsel_forest_free(&f);
    /* a threshold split on the categorical feature, a category split on a numeric one */
    convsel_node *root = &e.trees[0].nodes[0];
    convsel_node saved = *root;
    *root = (convsel_node){.feature = 0, .threshold = 1.5f, .left = saved.left, .right = saved.right};
    if (saved.feature >= 0) {
        CHECK_EQ(convsel_forest_build(&e, 5, FOREST_F, first_categorical, &f), CONVSEL_NOT_APPLICABLE);
        root->feature = 2;
        root->cat_left = 5;
        CHECK_EQ(convsel_forest_build(&e, 5, FOREST_F, first_categorical, &f), CONVSEL_NOT_APPLICABLE);
        /* a category set that sends a code of 32 or more left */
        root->feature = 0;
        root->cat_left = (uint64_t)1 << 40 | 1u;
        CHECK_EQ(convsel_forest_build(&e, 5, FOREST_F, first_categorical, &f), CONVSEL_NOT_APPLICABLE);
    }
    *root = saved;
    convsel_ensemble_free(&e);
    /* masks over all 64 codes: refused when a high bit is set */
    random_ensemble(&rng, 30, 3, 64, &e);
    int high = 0;
    for (size_t t = 0; t < e.n_trees; t++)
        for (size_t i = 0; i < e.trees[t].n_nodes; i++)
            high |= (e.trees[t].nodes[i].cat_left >> 32) != 0;
    CHECK(high);
    CHECK_EQ(convsel_forest_build(&e, 3, FOREST_F, first_categorical, &f), CONVSEL_NOT_APPLICABLE);
    convsel_ensemble_free(&e);
}

int main(void)
{
    test_features();
    test_bins();
    test_planted_split();
    test_categorical_split();
    test_forest_matches_trees();
    test_forest_refuses();
    test_boosting();
    test_params();
    test_roofline_fit();
    test_groups();
    test_eval_by_hand();
    test_eval_recorded_kernels();
    test_synthetic();
    test_bags();
    test_parallel_jobs();
    test_time_limit();
    test_blas_setups();
    return CHECK_DONE();
}
