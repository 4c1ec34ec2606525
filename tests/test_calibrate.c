/*
 * Few-shot transfer: a model trained on a synthetic source CPU, calibrated
 * with 15 configurations of a synthetic target CPU whose primitives are
 * scaled differently (synthetic_transfer.h), must predict the target's
 * held-out configurations much better than the source does; calibrated
 * models round-trip through files; the chooser is deterministic; candidates
 * and samples are taken from a dataset as calibrate --from-data takes them.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../src/dataset_internal.h"
#include "check.h"
#include "convsel.h"
#include "synthetic_transfer.h"
#include "../learner/model.h"

#define K_SAMPLES 15

/* The configurations of a dataset's conv records, as candidates, with the
 * key of each (index-aligned). */
typedef struct pool {
    size_t n;
    convsel_calibrate_candidate *cand;
    char (*key)[256];
} pool;

static void pool_build(const convsel_dataset *ds, const convsel_model *model, pool *p)
{
    size_t n = convsel_dataset_size(ds);
    p->cand = calloc(n ? n : 1, sizeof *p->cand);
    p->key = calloc(n ? n : 1, sizeof *p->key);
    p->n = 0;
    for (size_t i = 0; i < n; i++) {
        const convsel_record *r = convsel_dataset_record(ds, i);
        char key[256];
        convsel_record_config_key(r, key, sizeof key);
        size_t c = 0;
        while (c < p->n && strcmp(p->key[c], key) != 0)
            c++;
        if (c == p->n) {
            p->cand[c].problem = r->problem;
            p->cand[c].threads = r->threads;
            memcpy(p->key[c], key, sizeof key);
            p->n++;
        }
        size_t j;
        if (convsel_model_primitive_find(model, r->primitive, &j) == CONVSEL_OK)
            p->cand[c].applicable |= 1ull << j;
    }
}

/* The records of ds in the chosen configurations. */
static convsel_dataset *subset(const convsel_dataset *ds, const pool *p, const size_t *chosen, size_t k)
{
    convsel_dataset *out;
    CHECK_EQ(convsel_dataset_create(&out), CONVSEL_OK);
    uint32_t fi;
    CHECK_EQ(convsel_dataset_add_fingerprint(out, convsel_dataset_fingerprint(ds, 0), &fi), CONVSEL_OK);
    for (size_t i = 0; i < convsel_dataset_size(ds); i++) {
        convsel_record r = *convsel_dataset_record(ds, i);
        char key[256];
        convsel_record_config_key(&r, key, sizeof key);
        for (size_t c = 0; c < k; c++)
            if (strcmp(key, p->key[chosen[c]]) == 0) {
                r.fingerprint = fi;
                CHECK_EQ(convsel_dataset_append(out, &r), CONVSEL_OK);
                break;
            }
    }
    return out;
}

static convsel_metrics eval(const convsel_model *model, const convsel_dataset *test)
{
    convsel_metrics m;
    memset(&m, 0, sizeof m);
    const convsel_dataset *sets[1] = {test};
    CHECK_EQ(convsel_model_eval(model, sets, 1, &m), CONVSEL_OK);
    return m;
}

static convsel_model *calibrate(const convsel_model *source, const convsel_dataset *samples,
                                convsel_calibrate_method method)
{
    convsel_calibrate_params p;
    convsel_calibrate_params_default(&p);
    p.method = method;
    p.seed = 7;
    convsel_model *out = NULL;
    CHECK_EQ(convsel_model_calibrate(source, samples, &p, &out), CONVSEL_OK);
    return out;
}

/* Every primitive of model on every problem of test, for cpu. */
static void predict_all(const convsel_model *model, const convsel_dataset *test, const convsel_fingerprint *cpu,
                        double *ms, size_t *n)
{
    *n = 0;
    for (size_t i = 0; i < convsel_dataset_size(test) && i < 200; i++) {
        const convsel_record *r = convsel_dataset_record(test, i);
        for (size_t j = 0; j < convsel_model_primitive_count(model); j++) {
            convsel_model_query q = {.problem = &r->problem, .threads = r->threads, .primitive = j, .cpu = cpu};
            CHECK_EQ(convsel_model_predict_batch(model, &q, 1, &ms[*n]), CONVSEL_OK);
            (*n)++;
        }
    }
}

static void test_names(void)
{
    for (int m = 0; m < CONVSEL_CALIBRATE_METHOD_COUNT; m++) {
        convsel_calibrate_method back;
        CHECK_EQ(convsel_calibrate_method_parse(convsel_calibrate_method_name((convsel_calibrate_method)m), &back),
                 CONVSEL_OK);
        CHECK_EQ(back, m);
    }
    convsel_calibrate_method back;
    CHECK_EQ(convsel_calibrate_method_parse("cubic", &back), CONVSEL_INVALID_ARGUMENT);
}

/* Records first..first+count-1 of from (those of primitives source knows),
 * for cpu, each measured at exactly 2 · (what source predicts)^power. */
/* planted, with the primitive named fast (unless NULL) 8 times faster than
 * that on 1x1 layers only (planted_family). */
static convsel_dataset *planted_ex(const convsel_model *source, const convsel_dataset *from, size_t first,
                                   size_t count, const convsel_fingerprint *cpu, double power, const char *fast)
{
    convsel_dataset *ds;
    CHECK_EQ(convsel_dataset_create(&ds), CONVSEL_OK);
    uint32_t fi;
    CHECK_EQ(convsel_dataset_add_fingerprint(ds, cpu, &fi), CONVSEL_OK);
    for (size_t i = first; i < first + count && i < convsel_dataset_size(from); i++) {
        convsel_record r = *convsel_dataset_record(from, i);
        size_t j;
        if (convsel_model_primitive_find(source, r.primitive, &j) != CONVSEL_OK)
            continue;
        convsel_model_query q = {.problem = &r.problem, .threads = r.threads, .primitive = j, .cpu = cpu};
        double ms;
        CHECK_EQ(convsel_model_predict_batch(source, &q, 1, &ms), CONVSEL_OK);
        r.fingerprint = fi;
        r.min_ms = r.p10_ms = r.median_ms = r.p90_ms = 2.0 * pow(ms, power);
        if (fast && r.problem.kh == 1 && r.problem.kw == 1 && strcmp(r.primitive, fast) == 0)
            r.min_ms = r.p10_ms = r.median_ms = r.p90_ms = r.median_ms / 8.0;
        CHECK_EQ(convsel_dataset_append(ds, &r), CONVSEL_OK);
    }
    return ds;
}

static convsel_dataset *planted(const convsel_model *source, const convsel_dataset *from, size_t first,
                                size_t count, const convsel_fingerprint *cpu, double power)
{
    return planted_ex(source, from, first, count, cpu, power, NULL);
}

/* Twice the source, but one primitive 8 times faster than that on 1x1
 * layers only: a family of shapes that one library handles differently,
 * which a line per primitive cannot say and residual trees can. */
static convsel_dataset *planted_family(const convsel_model *source, const convsel_dataset *from, size_t first,
                                       size_t count, const convsel_fingerprint *cpu, const char *fast)
{
    return planted_ex(source, from, first, count, cpu, 1.0, fast);
}

/* The regret of one configuration, worked by hand: primitives measured at
 * 1, 2, 4 and e^5 ms (log ms 0, log 2, log 4, 5). */
static void test_regret_log(void)
{
    const double l2 = log(2.0);
    double y[4] = {0, l2, 2 * l2, 5};
    size_t idx[4] = {0, 1, 2, 3};
    double right[4] = {-1, 0, 1, 2};
    CHECK_NEAR(convsel_regret_log(y, right, idx, 4), 0.0, 1e-12);
    double second[4] = {0, -1, 1, 2}; /* picks the 2 ms one: log 2 */
    CHECK_NEAR(convsel_regret_log(y, second, idx, 4), l2, 1e-12);
    double worst[4] = {3, 2, 1, 0};
    CHECK_NEAR(convsel_regret_log(y, worst, idx, 4), 5.0, 1e-12);
    double tied[4] = {0, 0, 1, 2}; /* a tie goes to the first row: 0 */
    CHECK_NEAR(convsel_regret_log(y, tied, idx, 4), 0.0, 1e-12);
    size_t back[2] = {2, 1}; /* the first row of this order is 2 */
    CHECK_NEAR(convsel_regret_log(y, tied, back, 2), 0.0, 1e-12);
    double tied2[4] = {0, 1, 1, 2};
    CHECK_NEAR(convsel_regret_log(y, tied2, back, 2), l2, 1e-12);
    /* One primitive: nothing to choose. */
    CHECK(isnan(convsel_regret_log(y, right, idx, 1)));
}

/* The source's ranking of every test problem's primitives, for cpu, and
 * model's: the same order for every pair (ties aside)? */
static int same_ranking(const convsel_model *source, const convsel_model *model, const convsel_dataset *test,
                        const convsel_fingerprint *cpu)
{
    size_t np = convsel_model_primitive_count(source);
    for (size_t i = 0; i < convsel_dataset_size(test) && i < 200; i++) {
        const convsel_record *r = convsel_dataset_record(test, i);
        double a[64], b[64];
        for (size_t j = 0; j < np && j < 64; j++) {
            convsel_model_query q = {.problem = &r->problem, .threads = r->threads, .primitive = j, .cpu = cpu};
            CHECK_EQ(convsel_model_predict_batch(source, &q, 1, &a[j]), CONVSEL_OK);
            CHECK_EQ(convsel_model_predict_batch(model, &q, 1, &b[j]), CONVSEL_OK);
        }
        for (size_t j = 0; j < np && j < 64; j++)
            for (size_t k = 0; k < np && k < 64; k++)
                if (a[j] < a[k] && !(b[j] <= b[k]))
                    return 0;
    }
    return 1;
}

/* pooled moves the level and keeps the ranking; auto picks by the regret
 * on configurations left out, so a target whose primitives moved against
 * each other gets a per-primitive method, and one that only moved as a
 * whole keeps the pooled line. */
static void test_pooled_auto(const convsel_model *source, const convsel_dataset *samples,
                             const convsel_dataset *test, const convsel_fingerprint *cpu)
{
    convsel_model *pooled = calibrate(source, samples, CONVSEL_CALIBRATE_POOLED);
    convsel_model *linear = calibrate(source, samples, CONVSEL_CALIBRATE_LINEAR);
    convsel_model *both = calibrate(source, samples, CONVSEL_CALIBRATE_BOTH);
    convsel_model *chosen = calibrate(source, samples, CONVSEL_CALIBRATE_AUTO);
    convsel_calibration_info ip, il, ib, ia;
    CHECK_EQ(convsel_model_calibration(pooled, 0, &ip), CONVSEL_OK);
    CHECK_EQ(convsel_model_calibration(linear, 0, &il), CONVSEL_OK);
    CHECK_EQ(convsel_model_calibration(both, 0, &ib), CONVSEL_OK);
    CHECK_EQ(convsel_model_calibration(chosen, 0, &ia), CONVSEL_OK);
    CHECK_EQ(ip.method, CONVSEL_CALIBRATE_POOLED);
    CHECK_EQ(ip.residual_trees, 0);
    CHECK(!ip.auto_chosen && !il.auto_chosen && ia.auto_chosen);
    printf("cv regret: pooled %.4f linear %.4f both %.4f -> auto chose %s (%.4f)\n", ip.cv_regret_log,
           il.cv_regret_log, ib.cv_regret_log, convsel_calibrate_method_name(ia.method), ia.cv_regret_log);
    /* The pooled line keeps every ranking of the source, and changes the
     * level (the synthetic target is slower overall). */
    CHECK(same_ranking(source, pooled, test, cpu));
    CHECK(!same_ranking(source, linear, test, cpu));
    {
        static double x[4000], z[4000];
        size_t nx, nz;
        predict_all(pooled, test, cpu, x, &nx);
        predict_all(source, test, cpu, z, &nz);
        CHECK(memcmp(x, z, nx * sizeof *x) != 0);
    }
    /* Here the primitives moved against each other (0.6× to 2.5×): keeping
     * the source's ranking costs regret, out of sample too, and auto takes a
     * per-primitive method — the one it would be asked for by name. */
    CHECK(ip.cv_regret_log > 0.05);
    CHECK(ia.method == CONVSEL_CALIBRATE_LINEAR || ia.method == CONVSEL_CALIBRATE_BOTH);
    CHECK(ia.cv_regret_log < ip.cv_regret_log);
    const convsel_calibration_info *twin_info = ia.method == CONVSEL_CALIBRATE_LINEAR ? &il : &ib;
    CHECK(ia.cv_regret_log == twin_info->cv_regret_log);
    CHECK(ia.cv_rmse_log == twin_info->cv_rmse_log);
    const convsel_model *twin = ia.method == CONVSEL_CALIBRATE_LINEAR ? linear : both;
    {
        static double x[4000], z[4000];
        size_t nx, nz;
        predict_all(chosen, test, cpu, x, &nx);
        predict_all(twin, test, cpu, z, &nz);
        CHECK_EQ(nx, nz);
        CHECK(memcmp(x, z, nx * sizeof *x) == 0);
    }
    /* The choice survives the file. */
    uint8_t *data;
    size_t size;
    CHECK_EQ(convsel_model_serialize(chosen, &data, &size), CONVSEL_OK);
    convsel_model *back = NULL;
    CHECK_EQ(convsel_model_parse(data, size, "auto", &back), CONVSEL_OK);
    convsel_calibration_info ib2;
    CHECK_EQ(convsel_model_calibration(back, 0, &ib2), CONVSEL_OK);
    CHECK_EQ(ib2.method, ia.method);
    CHECK_EQ(ib2.auto_chosen, 1);
    CHECK(ib2.cv_regret_log == ia.cv_regret_log);
    convsel_model_destroy(back);
    /* chosen_by_auto must be a boolean; "auto" is what was asked, never
     * what a file may say was fitted (both's file, "both" → "auto", the
     * same length). */
    const char flag[] = "\xae" "chosen_by_auto\xc3";
    uint8_t *hit = memmem(data, size, flag, sizeof flag - 1);
    CHECK(hit != NULL);
    if (hit) {
        hit[sizeof flag - 2] = 0x01;
        back = NULL;
        CHECK_EQ(convsel_model_parse(data, size, "flag 1", &back), CONVSEL_CORRUPT);
        CHECK(strstr(convsel_last_error(), "chosen_by_auto") != NULL);
    }
    free(data);
    CHECK_EQ(convsel_model_serialize(both, &data, &size), CONVSEL_OK);
    hit = memmem(data, size, "\xa4" "both", 5);
    CHECK(hit != NULL);
    if (hit) {
        memcpy(hit + 1, "auto", 4);
        back = NULL;
        CHECK_EQ(convsel_model_parse(data, size, "method auto", &back), CONVSEL_CORRUPT);
        CHECK(strstr(convsel_last_error(), "calibration method") != NULL);
    }
    free(data);

    /* A target that is the source's own prediction, twice as slow: the
     * pooled line already picks every configuration's fastest (regret 0),
     * nothing can do better, and auto keeps the simplest. */
    convsel_dataset *twice = planted(source, samples, 0, convsel_dataset_size(samples), cpu, 1.0);
    convsel_model *kept = calibrate(source, twice, CONVSEL_CALIBRATE_AUTO);
    CHECK_EQ(convsel_model_calibration(kept, 0, &ia), CONVSEL_OK);
    CHECK_EQ(ia.method, CONVSEL_CALIBRATE_POOLED);
    CHECK(ia.cv_regret_log == 0);
    CHECK(ia.cv_rmse_log > 0);
    CHECK(same_ranking(source, kept, test, cpu));
    convsel_model_destroy(kept);
    convsel_dataset_destroy(twice);

    /* A target that reverses the source (time 2 / prediction): the pooled
     * line would fall; pooled fits the level alone instead, and still keeps
     * every ranking. */
    convsel_dataset *reversed = planted(source, samples, 0, convsel_dataset_size(samples), cpu, -1.0);
    convsel_model *flat = calibrate(source, reversed, CONVSEL_CALIBRATE_POOLED);
    CHECK(same_ranking(source, flat, test, cpu));
    convsel_model *falls = calibrate(source, reversed, CONVSEL_CALIBRATE_LINEAR);
    CHECK(!same_ranking(source, falls, test, cpu));
    convsel_model_destroy(flat);
    convsel_model_destroy(falls);
    convsel_dataset_destroy(reversed);

    convsel_model_destroy(pooled);
    convsel_model_destroy(linear);
    convsel_model_destroy(both);
    convsel_model_destroy(chosen);
}

/* linear-or-both: auto's choice between the lines and the lines plus
 * residual trees, never the pooled line. It is one of the two fits, exactly;
 * it keeps the lines where the trees add nothing (a target that is the
 * source twice as slow, where auto keeps the pooled line), and takes the
 * trees where a family of shapes departs from the rest. */
static void test_linear_or_both(const convsel_model *source, const convsel_dataset *samples,
                                const convsel_dataset *train, const convsel_dataset *test,
                                const convsel_fingerprint *cpu)
{
    convsel_calibrate_method parsed;
    CHECK_EQ(convsel_calibrate_method_parse("linear-or-both", &parsed), CONVSEL_OK);
    CHECK_EQ(parsed, CONVSEL_CALIBRATE_LINEAR_OR_BOTH);
    CHECK_STR(convsel_calibrate_method_name(CONVSEL_CALIBRATE_LINEAR_OR_BOTH), "linear-or-both");

    /* The synthetic target: whichever it takes, it is that fit. */
    convsel_model *lob = calibrate(source, samples, CONVSEL_CALIBRATE_LINEAR_OR_BOTH);
    convsel_model *linear = calibrate(source, samples, CONVSEL_CALIBRATE_LINEAR);
    convsel_model *both = calibrate(source, samples, CONVSEL_CALIBRATE_BOTH);
    convsel_calibration_info io, il, ib;
    CHECK_EQ(convsel_model_calibration(lob, 0, &io), CONVSEL_OK);
    CHECK_EQ(convsel_model_calibration(linear, 0, &il), CONVSEL_OK);
    CHECK_EQ(convsel_model_calibration(both, 0, &ib), CONVSEL_OK);
    CHECK(io.auto_chosen);
    CHECK(io.method == CONVSEL_CALIBRATE_LINEAR || io.method == CONVSEL_CALIBRATE_BOTH);
    if (io.method == CONVSEL_CALIBRATE_BOTH)
        CHECK(ib.cv_regret_log < il.cv_regret_log);
    const convsel_calibration_info *twin_info = io.method == CONVSEL_CALIBRATE_LINEAR ? &il : &ib;
    CHECK(io.cv_regret_log == twin_info->cv_regret_log);
    CHECK(io.cv_rmse_log == twin_info->cv_rmse_log);
    {
        static double x[4000], z[4000];
        size_t nx, nz;
        predict_all(lob, test, cpu, x, &nx);
        predict_all(io.method == CONVSEL_CALIBRATE_LINEAR ? linear : both, test, cpu, z, &nz);
        CHECK_EQ(nx, nz);
        CHECK(nx > 0 && memcmp(x, z, nx * sizeof *x) == 0);
    }
    /* What was asked is never what a file says was fitted. */
    uint8_t *data;
    size_t size;
    CHECK_EQ(convsel_model_serialize(linear, &data, &size), CONVSEL_OK);
    uint8_t *hit = memmem(data, size, "\xa6" "linear", 7);
    CHECK(hit != NULL);
    if (hit) {
        /* "linear-or-both" is longer: rewrite the string's header and
         * bytes in a copy with room for it. */
        const char name[] = "linear-or-both";
        size_t at = (size_t)(hit - data), grow = sizeof name - 1 - 6;
        uint8_t *bigger = malloc(size + grow);
        CHECK(bigger != NULL);
        if (bigger) {
            memcpy(bigger, data, at);
            bigger[at] = (uint8_t)(0xa0 | (sizeof name - 1));
            memcpy(bigger + at + 1, name, sizeof name - 1);
            memcpy(bigger + at + 1 + sizeof name - 1, data + at + 7, size - at - 7);
            convsel_model *back = NULL;
            CHECK_EQ(convsel_model_parse(bigger, size + grow, "method linear-or-both", &back), CONVSEL_CORRUPT);
            CHECK(strstr(convsel_last_error(), "calibration method") != NULL);
            free(bigger);
        }
    }
    free(data);
    convsel_model_destroy(lob);
    convsel_model_destroy(linear);
    convsel_model_destroy(both);

    /* The source twice as slow: nothing beats the lines, and unlike auto
     * (the pooled line) it keeps them. */
    convsel_dataset *twice = planted(source, samples, 0, convsel_dataset_size(samples), cpu, 1.0);
    convsel_model *kept = calibrate(source, twice, CONVSEL_CALIBRATE_LINEAR_OR_BOTH);
    CHECK_EQ(convsel_model_calibration(kept, 0, &io), CONVSEL_OK);
    {
        /* The lines' held-out picks are not all exact here (their priors
         * leave near-ties a hair off): the trees win by ~1e-4, less than
         * the least margin a more complex method must win by. */
        convsel_model *l2 = calibrate(source, twice, CONVSEL_CALIBRATE_LINEAR);
        convsel_model *b2 = calibrate(source, twice, CONVSEL_CALIBRATE_BOTH);
        CHECK_EQ(convsel_model_calibration(l2, 0, &il), CONVSEL_OK);
        CHECK_EQ(convsel_model_calibration(b2, 0, &ib), CONVSEL_OK);
        printf("twice: cv regret linear %.3g both %.3g\n", il.cv_regret_log, ib.cv_regret_log);
        CHECK(il.cv_regret_log < 0.001 && ib.cv_regret_log <= il.cv_regret_log);
        convsel_model_destroy(l2);
        convsel_model_destroy(b2);
    }
    CHECK_EQ(io.method, CONVSEL_CALIBRATE_LINEAR);
    CHECK(io.auto_chosen);
    convsel_model *pooled = calibrate(source, twice, CONVSEL_CALIBRATE_AUTO);
    CHECK_EQ(convsel_model_calibration(pooled, 0, &io), CONVSEL_OK);
    CHECK_EQ(io.method, CONVSEL_CALIBRATE_POOLED);
    convsel_model_destroy(kept);
    convsel_model_destroy(pooled);
    convsel_dataset_destroy(twice);

    /* Fewer than 3 configurations: the lines, not cross-validated. */
    size_t two = 0;
    {
        const convsel_record *r0 = convsel_dataset_record(samples, 0);
        while (two < convsel_dataset_size(samples)) {
            const convsel_record *r = convsel_dataset_record(samples, two);
            if (memcmp(&r->problem, &r0->problem, sizeof r->problem) != 0 || r->threads != r0->threads)
                break;
            two++;
        }
    }
    CHECK(two > 1);
    convsel_dataset *one_config = planted(source, samples, 0, two, cpu, 1.0);
    convsel_model *small = calibrate(source, one_config, CONVSEL_CALIBRATE_LINEAR_OR_BOTH);
    CHECK_EQ(convsel_model_calibration(small, 0, &io), CONVSEL_OK);
    CHECK_EQ(io.method, CONVSEL_CALIBRATE_LINEAR);
    CHECK_EQ(io.samples, 1);
    CHECK(io.cv_regret_log == 0);
    convsel_model_destroy(small);
    convsel_dataset_destroy(one_config);

    /* One primitive 8 times faster on 1x1 layers only. Planted on the first
     * 300 records of the training part (the samples) and on the whole test
     * part (scored). The family must be in the samples on both sides. */
    convsel_dataset *fam = planted_family(source, train, 0, 300, cpu, "syn_gemm");
    convsel_dataset *fam_test = planted_family(source, test, 0, convsel_dataset_size(test), cpu, "syn_gemm");
    size_t in_family = 0, outside = 0;
    for (size_t i = 0; i < convsel_dataset_size(fam); i++) {
        const convsel_record *r = convsel_dataset_record(fam, i);
        if (strcmp(r->primitive, "syn_gemm") == 0)
            *(r->problem.kh == 1 && r->problem.kw == 1 ? &in_family : &outside) += 1;
    }
    CHECK_MSG(in_family >= 5 && outside >= 5, "syn_gemm on 1x1: %zu records, elsewhere %zu", in_family, outside);
    convsel_model *f_lob = calibrate(source, fam, CONVSEL_CALIBRATE_LINEAR_OR_BOTH);
    convsel_model *f_linear = calibrate(source, fam, CONVSEL_CALIBRATE_LINEAR);
    convsel_model *f_both = calibrate(source, fam, CONVSEL_CALIBRATE_BOTH);
    CHECK_EQ(convsel_model_calibration(f_lob, 0, &io), CONVSEL_OK);
    CHECK_EQ(convsel_model_calibration(f_linear, 0, &il), CONVSEL_OK);
    CHECK_EQ(convsel_model_calibration(f_both, 0, &ib), CONVSEL_OK);
    convsel_metrics m_linear = eval(f_linear, fam_test), m_both = eval(f_both, fam_test),
                    m_lob = eval(f_lob, fam_test);
    printf("1x1 family: cv regret linear %.4f both %.4f -> linear-or-both chose %s; held-out regret linear %.4f "
           "both %.4f chosen %.4f\n",
           il.cv_regret_log, ib.cv_regret_log, convsel_calibrate_method_name(io.method), m_linear.regret_mean,
           m_both.regret_mean, m_lob.regret_mean);
    CHECK_EQ(io.method, CONVSEL_CALIBRATE_BOTH);
    CHECK_MSG(m_both.regret_mean < 0.5 * m_linear.regret_mean, "held-out regret: both %.4f, linear %.4f",
              m_both.regret_mean, m_linear.regret_mean);
    CHECK(m_lob.regret_mean == m_both.regret_mean);
    convsel_model_destroy(f_lob);
    convsel_model_destroy(f_linear);
    convsel_model_destroy(f_both);
    convsel_dataset_destroy(fam);
    convsel_dataset_destroy(fam_test);
}

/* The target CPU is exactly twice as slow as the source model predicts: the
 * linear map must find a = log 2, b = 1 (up to the weak prior). */
static void test_planted_linear(const convsel_model *source, const convsel_dataset *test)
{
    convsel_fingerprint cpu;
    syn_target_fingerprint(&cpu);
    convsel_dataset *ds = planted(source, test, 0, 60, &cpu, 1.0);
    convsel_model *cal = calibrate(source, ds, CONVSEL_CALIBRATE_LINEAR);
    double worst = 0;
    for (size_t i = 60; i < 120; i++) {
        const convsel_record *r = convsel_dataset_record(test, i);
        size_t j;
        if (convsel_model_primitive_find(source, r->primitive, &j) != CONVSEL_OK)
            continue;
        convsel_model_query q = {.problem = &r->problem, .threads = r->threads, .primitive = j, .cpu = &cpu};
        double a, b;
        CHECK_EQ(convsel_model_predict_batch(source, &q, 1, &a), CONVSEL_OK);
        CHECK_EQ(convsel_model_predict_batch(cal, &q, 1, &b), CONVSEL_OK);
        worst = fmax(worst, fabs(log(b / a) - log(2.0)));
    }
    CHECK_MSG(worst < 0.03, "planted ×2: worst |log(ratio / 2)| %.4f", worst);
    convsel_model_destroy(cal);
    convsel_dataset_destroy(ds);
}

/* Paired lines. The target is exactly twice the source, but the source
 * missed half the configurations (chosen by the parity of a hash of the
 * configuration) by e^0.6, all their primitives alike, and the primitive
 * named odd was measured on those configurations only. Its true shift is the
 * others': on the lines fitted unpaired it looks e^0.3 slower than the
 * others; paired (each configuration's mean residual taken off first) it must
 * not. */
static size_t config_parity(const convsel_record *r)
{
    char shape[CONVSEL_KEY_MAX], key[CONVSEL_KEY_MAX + 16];
    convsel_shape_key(&r->problem, shape, sizeof shape);
    snprintf(key, sizeof key, "%s/t%d", shape, r->threads);
    return (size_t)(convsel_hash_str(key) & 1u);
}

static double paired_shift(const convsel_model *source, const convsel_dataset *samples, const convsel_dataset *test,
                           const convsel_fingerprint *cpu, int paired, size_t odd)
{
    convsel_calibrate_params p;
    convsel_calibrate_params_default(&p);
    p.method = CONVSEL_CALIBRATE_LINEAR;
    p.paired = paired;
    convsel_model *cal = NULL;
    CHECK_EQ(convsel_model_calibrate(source, samples, &p, &cal), CONVSEL_OK);
    /* Mean over test configurations of log(cal/source) for odd, less the
     * same for every other primitive: the relative shift the lines put in. */
    double sum_odd = 0, sum_other = 0;
    size_t n_odd = 0, n_other = 0;
    for (size_t i = 0; i < convsel_dataset_size(test); i++) {
        const convsel_record *r = convsel_dataset_record(test, i);
        size_t j;
        if (r->kind != CONVSEL_RECORD_CONV || convsel_model_primitive_find(source, r->primitive, &j) != CONVSEL_OK)
            continue;
        convsel_model_query q = {.problem = &r->problem, .threads = r->threads, .primitive = j, .cpu = cpu};
        double a, b;
        CHECK_EQ(convsel_model_predict_batch(source, &q, 1, &a), CONVSEL_OK);
        CHECK_EQ(convsel_model_predict_batch(cal, &q, 1, &b), CONVSEL_OK);
        if (j == odd) {
            sum_odd += log(b / a);
            n_odd++;
        } else {
            sum_other += log(b / a);
            n_other++;
        }
    }
    convsel_model_destroy(cal);
    CHECK(n_odd > 0 && n_other > 0);
    return sum_odd / (double)(n_odd ? n_odd : 1) - sum_other / (double)(n_other ? n_other : 1);
}

static void test_paired(const convsel_model *source, const convsel_dataset *test)
{
    convsel_fingerprint cpu;
    syn_target_fingerprint(&cpu);
    convsel_dataset *exact = planted(source, test, 0, 200, &cpu, 1.0), *ds;
    CHECK_EQ(convsel_dataset_create(&ds), CONVSEL_OK);
    uint32_t fi;
    CHECK_EQ(convsel_dataset_add_fingerprint(ds, &cpu, &fi), CONVSEL_OK);
    const char *odd_name = convsel_model_primitive_name(source, 0);
    size_t odd = 0;
    for (size_t i = 0; i < convsel_dataset_size(exact); i++) {
        convsel_record r = *convsel_dataset_record(exact, i);
        int missed = config_parity(&r) == 1;
        if (strcmp(r.primitive, odd_name) == 0 && !missed)
            continue;
        if (missed)
            r.min_ms = r.p10_ms = r.median_ms = r.p90_ms = r.median_ms * exp(0.6);
        CHECK_EQ(convsel_dataset_append(ds, &r), CONVSEL_OK);
    }
    double unpaired = paired_shift(source, ds, test, &cpu, 0, odd);
    double paired = paired_shift(source, ds, test, &cpu, 1, odd);
    printf("paired lines: the odd primitive's relative shift %.3f unpaired, %.3f paired (truth 0)\n", unpaired,
           paired);
    CHECK_MSG(unpaired > 0.15, "unpaired: shift %.3f, want the bias this test plants", unpaired);
    CHECK_MSG(fabs(paired) < 0.06, "paired: shift %.3f, want about 0", paired);
    convsel_dataset_destroy(ds);
    convsel_dataset_destroy(exact);
}

/* An empty dataset with the synthetic source CPU (index *fa) and target CPU
 * (index *fb). */
static convsel_dataset *two_cpu_dataset(uint32_t *fa, uint32_t *fb)
{
    convsel_dataset *ds;
    CHECK_EQ(convsel_dataset_create(&ds), CONVSEL_OK);
    convsel_fingerprint a, b;
    syn_fingerprint(&a);
    syn_target_fingerprint(&b);
    CHECK_EQ(convsel_dataset_add_fingerprint(ds, &a, fa), CONVSEL_OK);
    CHECK_EQ(convsel_dataset_add_fingerprint(ds, &b, fb), CONVSEL_OK);
    return ds;
}

static void test_errors(const convsel_model *source, const convsel_dataset *train)
{
    convsel_model *out = (convsel_model *)1;
    convsel_dataset *empty;
    CHECK_EQ(convsel_dataset_create(&empty), CONVSEL_OK);
    CHECK_EQ(convsel_model_calibrate(source, empty, NULL, &out), CONVSEL_INVALID_ARGUMENT);
    CHECK(out == NULL);
    convsel_calibrate_params p;
    convsel_calibrate_params_default(&p);
    p.learning_rate = 0;
    CHECK_EQ(convsel_model_calibrate(source, train, &p, &out), CONVSEL_INVALID_ARGUMENT);

    /* Records of two CPUs: which one to calibrate for is ambiguous. */
    uint32_t fa, fb;
    convsel_dataset *mixed = two_cpu_dataset(&fa, &fb);
    for (size_t i = 0; i < 20; i++) {
        convsel_record r = *convsel_dataset_record(train, i);
        r.fingerprint = i % 2 ? fa : fb;
        CHECK_EQ(convsel_dataset_append(mixed, &r), CONVSEL_OK);
    }
    CHECK_EQ(convsel_model_calibrate(source, mixed, NULL, &out), CONVSEL_INVALID_ARGUMENT);
    CHECK(strstr(convsel_last_error(), "several CPUs") != NULL);
    convsel_dataset_destroy(mixed);

    /* One CPU under two OpenBLAS cores: said so, not "several CPUs". */
    {
        convsel_dataset *setups;
        CHECK_EQ(convsel_dataset_create(&setups), CONVSEL_OK);
        convsel_fingerprint haswell, cooper;
        syn_fingerprint(&haswell);
        cooper = haswell;
        snprintf(haswell.openblas_version, sizeof haswell.openblas_version, "OpenBLAS 0.3.21 DYNAMIC_ARCH Haswell");
        snprintf(cooper.openblas_version, sizeof cooper.openblas_version, "OpenBLAS 0.3.21 DYNAMIC_ARCH Cooperlake");
        CHECK_EQ(convsel_dataset_add_fingerprint(setups, &haswell, &fa), CONVSEL_OK);
        CHECK_EQ(convsel_dataset_add_fingerprint(setups, &cooper, &fb), CONVSEL_OK);
        for (size_t i = 0; i < 20; i++) {
            convsel_record r = *convsel_dataset_record(train, i);
            r.fingerprint = i % 2 ? fa : fb;
            CHECK_EQ(convsel_dataset_append(setups, &r), CONVSEL_OK);
        }
        CHECK_EQ(convsel_model_calibrate(source, setups, NULL, &out), CONVSEL_INVALID_ARGUMENT);
        CHECK(out == NULL);
        CHECK(strstr(convsel_last_error(), "two OpenBLAS setups of one CPU") != NULL);
        CHECK(strstr(convsel_last_error(), "avx2 and avx512") != NULL ||
              strstr(convsel_last_error(), "avx512 and avx2") != NULL);
        convsel_dataset_destroy(setups);
    }
    convsel_dataset_destroy(empty);

    convsel_calibration_info info;
    CHECK_EQ(convsel_model_calibration(source, 0, &info), CONVSEL_NOT_FOUND);
    CHECK_EQ(convsel_model_calibration_count(source), 0);
}

static void test_choose(const convsel_model *source, const pool *p)
{
    convsel_fingerprint cpu;
    syn_target_fingerprint(&cpu);
    size_t a[K_SAMPLES], b[K_SAMPLES];
    CHECK_EQ(convsel_calibrate_choose(source, p->cand, p->n, K_SAMPLES, 3, &cpu, a), CONVSEL_OK);
    CHECK_EQ(convsel_calibrate_choose(source, p->cand, p->n, K_SAMPLES, 3, &cpu, b), CONVSEL_OK);
    CHECK(memcmp(a, b, sizeof a) == 0);
    for (size_t i = 0; i < K_SAMPLES; i++) {
        CHECK(a[i] < p->n);
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(p->key[a[i]], p->key[a[j]]) != 0);
    }

    /* Every candidate twice: still K distinct configurations, and the same
     * ones (duplicates add demand, never a second pick). */
    convsel_calibrate_candidate *twice = malloc(2 * p->n * sizeof *twice);
    memcpy(twice, p->cand, p->n * sizeof *twice);
    memcpy(twice + p->n, p->cand, p->n * sizeof *twice);
    CHECK_EQ(convsel_calibrate_choose(source, twice, 2 * p->n, K_SAMPLES, 3, &cpu, b), CONVSEL_OK);
    for (size_t i = 0; i < K_SAMPLES; i++)
        for (size_t j = 0; j < i; j++)
            CHECK(strcmp(p->key[b[i] % p->n], p->key[b[j] % p->n]) != 0);
    free(twice);

    /* The pool's uncertain quarter holds more than K_SAMPLES, so every
     * prefix of the choice is the choice of that many: calibrate's
     * profiling, cut short at n samples by --total-time-s, keeps what
     * --samples n would have chosen. */
    for (size_t n = 1; n < K_SAMPLES; n++) {
        size_t c[K_SAMPLES];
        CHECK_EQ(convsel_calibrate_choose(source, p->cand, p->n, n, 3, &cpu, c), CONVSEL_OK);
        CHECK_MSG(memcmp(c, a, n * sizeof *c) == 0, "the first %zu of %d picks are not the %zu picks of k = %zu", n,
                  K_SAMPLES, n, n);
    }

    /* The uncertainty half comes from where the source hesitates: the mean
     * predicted gap of the picks is below the pool's. */
    double pool_gap = 0, pick_gap = 0;
    size_t n_pool = 0, n_pick = 0;
    for (size_t i = 0; i < p->n; i++) {
        double best = INFINITY, second = INFINITY;
        for (size_t j = 0; j < convsel_model_primitive_count(source); j++) {
            if (!((p->cand[i].applicable >> j) & 1))
                continue;
            convsel_model_query q = {.problem = &p->cand[i].problem, .threads = p->cand[i].threads, .primitive = j,
                                     .cpu = &cpu};
            double ms;
            CHECK_EQ(convsel_model_predict_batch(source, &q, 1, &ms), CONVSEL_OK);
            double l = log(ms);
            if (l < best)
                second = best, best = l;
            else if (l < second)
                second = l;
        }
        if (!isfinite(second))
            continue;
        pool_gap += second - best;
        n_pool++;
        for (size_t k = 1; k < K_SAMPLES; k += 2)
            if (a[k] == i)
                pick_gap += second - best, n_pick++;
    }
    CHECK_EQ(n_pick, K_SAMPLES / 2);
    CHECK_MSG(pick_gap / (double)n_pick < 0.5 * pool_gap / (double)n_pool, "uncertainty picks' gap %.3f, pool's %.3f",
              pick_gap / (double)n_pick, pool_gap / (double)n_pool);

    size_t too_many[1];
    CHECK_EQ(convsel_calibrate_choose(source, p->cand, 3, 4, 1, &cpu, too_many), CONVSEL_INVALID_ARGUMENT);
}

/* A conv record of shape at 1 thread, every time ms. */
static convsel_record hand_record(const char *shape, const char *primitive, uint32_t fingerprint, double ms)
{
    convsel_record r;
    memset(&r, 0, sizeof r);
    r.kind = CONVSEL_RECORD_CONV;
    CHECK_EQ(convsel_problem_parse(shape, &r.problem), CONVSEL_OK);
    snprintf(r.primitive, sizeof r.primitive, "%s", primitive);
    r.from = r.to = CONVSEL_LAYOUT_NCHW;
    r.threads = 1;
    r.isa = CONVSEL_ISA_AVX2;
    r.fingerprint = fingerprint;
    r.min_ms = r.p10_ms = r.median_ms = r.p90_ms = ms;
    r.runs = 5;
    r.tensor = CONVSEL_TENSOR_SRC;
    return r;
}

/* One record of shape on a CPU with this cap and core count, at threads. */
static convsel_dataset *machine_dataset(convsel_isa cap, int cores, const int *threads, size_t n_threads,
                                        convsel_record_kind kind)
{
    convsel_dataset *ds;
    CHECK_EQ(convsel_dataset_create(&ds), CONVSEL_OK);
    convsel_fingerprint f;
    syn_fingerprint(&f);
    f.isa_cap = cap;
    f.cores = cores;
    uint32_t fi;
    CHECK_EQ(convsel_dataset_add_fingerprint(ds, &f, &fi), CONVSEL_OK);
    for (size_t t = 0; t < n_threads; t++) {
        convsel_record r = hand_record("mb1ic16ih14oc32oh14kh3ph1", "syn_direct", fi, 1.0);
        r.kind = kind;
        if (kind == CONVSEL_RECORD_REORDER)
            snprintf(r.primitive, sizeof r.primitive, "reorder");
        r.isa = cap;
        r.threads = threads[t];
        CHECK_EQ(convsel_dataset_append(ds, &r), CONVSEL_OK);
    }
    return ds;
}

/* calibrate's default: linear-or-both where every sample ran on a machine (ISA
 * cap, cores, threads) that some source conv record ran on, retrain where one
 * did not; linear-or-both also without source data. Each case would fail the other way. */
static void test_default_method(void)
{
    const int t12[] = {1, 2}, t1[] = {1}, t2[] = {2}, t4[] = {4}, t14[] = {1, 4};
    convsel_dataset *zen = machine_dataset(CONVSEL_ISA_AVX512, 2, t12, 2, CONVSEL_RECORD_CONV);
    convsel_dataset *avx2_t1 = machine_dataset(CONVSEL_ISA_AVX2, 2, t1, 1, CONVSEL_RECORD_CONV);
    const convsel_dataset *one[1] = {zen}, *two[2] = {zen, avx2_t1};
    struct {
        convsel_isa cap;
        int cores;
        const int *threads;
        size_t n;
        convsel_record_kind kind;
        const convsel_dataset *const *source;
        size_t n_source;
        convsel_calibrate_method want;
    } cases[] = {
        {CONVSEL_ISA_AVX512, 2, t12, 2, CONVSEL_RECORD_CONV, one, 1, CONVSEL_CALIBRATE_LINEAR_OR_BOTH},
        {CONVSEL_ISA_AVX512, 2, t2, 1, CONVSEL_RECORD_CONV, one, 1, CONVSEL_CALIBRATE_LINEAR_OR_BOTH},
        {CONVSEL_ISA_AVX512, 2, t4, 1, CONVSEL_RECORD_CONV, one, 1, CONVSEL_CALIBRATE_RETRAIN},  /* threads */
        {CONVSEL_ISA_AVX512, 2, t14, 2, CONVSEL_RECORD_CONV, one, 1, CONVSEL_CALIBRATE_RETRAIN}, /* one of them */
        {CONVSEL_ISA_AVX512, 16, t1, 1, CONVSEL_RECORD_CONV, one, 1, CONVSEL_CALIBRATE_RETRAIN}, /* cores */
        {CONVSEL_ISA_AVX2, 2, t1, 1, CONVSEL_RECORD_CONV, one, 1, CONVSEL_CALIBRATE_RETRAIN},    /* ISA cap */
        {CONVSEL_ISA_AVX2, 2, t1, 1, CONVSEL_RECORD_CONV, two, 2, CONVSEL_CALIBRATE_LINEAR_OR_BOTH},     /* 2nd file has it */
        {CONVSEL_ISA_AVX2, 2, t2, 1, CONVSEL_RECORD_CONV, two, 2, CONVSEL_CALIBRATE_RETRAIN},
        /* Reorder records are not what the trees learn from. */
        {CONVSEL_ISA_AVX2, 2, t1, 1, CONVSEL_RECORD_REORDER, one, 1, CONVSEL_CALIBRATE_LINEAR_OR_BOTH},
        {CONVSEL_ISA_AVX512, 2, t1, 1, CONVSEL_RECORD_CONV, NULL, 0, CONVSEL_CALIBRATE_LINEAR_OR_BOTH},
    };
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        convsel_dataset *samples =
            machine_dataset(cases[c].cap, cases[c].cores, cases[c].threads, cases[c].n, cases[c].kind);
        convsel_calibrate_method got = convsel_calibrate_default_method(cases[c].source, cases[c].n_source, samples);
        CHECK_MSG(got == cases[c].want, "case %zu: %s, want %s", c, convsel_calibrate_method_name(got),
                  convsel_calibrate_method_name(cases[c].want));
        convsel_dataset_destroy(samples);
    }
    /* Source records of the key that are reorders only do not count. */
    convsel_dataset *reorders = machine_dataset(CONVSEL_ISA_AVX2, 4, t1, 1, CONVSEL_RECORD_REORDER);
    convsel_dataset *samples = machine_dataset(CONVSEL_ISA_AVX2, 4, t1, 1, CONVSEL_RECORD_CONV);
    const convsel_dataset *with_reorders[2] = {zen, reorders};
    CHECK_EQ(convsel_calibrate_default_method(with_reorders, 2, samples), CONVSEL_CALIBRATE_RETRAIN);
    CHECK_EQ(convsel_calibrate_default_method(one, 1, NULL), CONVSEL_CALIBRATE_LINEAR_OR_BOTH);
    /* And the library's default parameters ask for the same. */
    convsel_calibrate_params params;
    convsel_calibrate_params_default(&params);
    CHECK_EQ(params.method, CONVSEL_CALIBRATE_LINEAR_OR_BOTH);
    convsel_dataset_destroy(samples);
    convsel_dataset_destroy(reorders);
    convsel_dataset_destroy(avx2_t1);
    convsel_dataset_destroy(zen);
}

/* Candidates from a hand-built dataset of two configurations, measured in
 * an order other than their keys': one record repeated, a reorder record
 * (no candidate), a primitive source does not know (no applicable bit);
 * then the chosen ones' records, in the dataset's order. */
static void test_candidates_from_dataset(const convsel_model *source)
{
    const char *late = "mb1ic32ih28oc64oh28kh3ph1", *early = "mb1ic16ih14oc32oh14kh1";
    size_t direct, gemm, winograd;
    CHECK_EQ(convsel_model_primitive_find(source, "syn_direct", &direct), CONVSEL_OK);
    CHECK_EQ(convsel_model_primitive_find(source, "syn_gemm", &gemm), CONVSEL_OK);
    CHECK_EQ(convsel_model_primitive_find(source, "syn_winograd", &winograd), CONVSEL_OK);
    uint32_t f0, f1;
    convsel_dataset *ds = two_cpu_dataset(&f0, &f1);
    convsel_fingerprint cpu;
    syn_target_fingerprint(&cpu);
    convsel_record records[6] = {
        hand_record(late, "syn_direct", f1, 1.0),  hand_record(early, "syn_gemm", f1, 2.0),
        hand_record(late, "reorder", f1, 3.0),     hand_record(late, "no_such_primitive", f1, 4.0),
        hand_record(late, "syn_direct", f1, 5.0),  hand_record(early, "syn_winograd", f1, 6.0),
    };
    records[2].kind = CONVSEL_RECORD_REORDER;
    records[2].to = CONVSEL_LAYOUT_NCHW16C;
    for (size_t i = 0; i < 6; i++)
        CHECK_EQ(convsel_dataset_append(ds, &records[i]), CONVSEL_OK);
    char late_key[256], early_key[256];
    convsel_record_config_key(&records[0], late_key, sizeof late_key);
    convsel_record_config_key(&records[1], early_key, sizeof early_key);
    CHECK(strcmp(early_key, late_key) < 0);

    convsel_calibrate_candidate cands[6];
    size_t n_cands = 99, record_candidate[6];
    CHECK_EQ(convsel_calibrate_candidates_from_dataset(ds, source, cands, &n_cands, record_candidate), CONVSEL_OK);
    CHECK_EQ(n_cands, 2);
    CHECK(memcmp(&cands[0].problem, &records[1].problem, sizeof cands[0].problem) == 0);
    CHECK(memcmp(&cands[1].problem, &records[0].problem, sizeof cands[1].problem) == 0);
    CHECK_EQ(cands[0].threads, 1);
    CHECK_EQ(cands[1].threads, 1);
    CHECK(cands[0].applicable == ((1ull << gemm) | (1ull << winograd)));
    CHECK(cands[1].applicable == 1ull << direct);
    const size_t want_candidate[6] = {1, 0, SIZE_MAX, 1, 1, 0};
    for (size_t i = 0; i < 6; i++)
        CHECK_EQ(record_candidate[i], want_candidate[i]);
    /* Without record_candidate: the same candidates. */
    convsel_calibrate_candidate again[6];
    size_t n_again = 0;
    CHECK_EQ(convsel_calibrate_candidates_from_dataset(ds, source, again, &n_again, NULL), CONVSEL_OK);
    CHECK_EQ(n_again, 2);
    CHECK(memcmp(again, cands, 2 * sizeof *cands) == 0);

    /* The later configuration: its three conv records, in the dataset's order. */
    convsel_dataset *samples = NULL;
    const size_t just_late[1] = {1};
    CHECK_EQ(convsel_calibrate_samples_from_dataset(ds, record_candidate, n_cands, just_late, 1, &samples), CONVSEL_OK);
    CHECK_EQ(convsel_dataset_size(samples), 3);
    CHECK_EQ(convsel_dataset_fingerprint_count(samples), 2);
    const size_t want_late[3] = {0, 3, 4};
    for (size_t i = 0; i < 3 && i < convsel_dataset_size(samples); i++) {
        const convsel_record *r = convsel_dataset_record(samples, i);
        CHECK_STR(r->primitive, records[want_late[i]].primitive);
        CHECK_NEAR(r->median_ms, records[want_late[i]].median_ms, 0);
        CHECK(convsel_fingerprint_same_cpu(convsel_dataset_fingerprint(samples, r->fingerprint), &cpu));
    }
    convsel_dataset_destroy(samples);
    /* Both, one of them twice: every conv record once, in order. */
    const size_t both[3] = {1, 0, 1};
    CHECK_EQ(convsel_calibrate_samples_from_dataset(ds, record_candidate, n_cands, both, 3, &samples), CONVSEL_OK);
    CHECK_EQ(convsel_dataset_size(samples), 5);
    const size_t want_both[5] = {0, 1, 3, 4, 5};
    for (size_t i = 0; i < 5 && i < convsel_dataset_size(samples); i++)
        CHECK_NEAR(convsel_dataset_record(samples, i)->median_ms, records[want_both[i]].median_ms, 0);
    convsel_dataset_destroy(samples);

    /* Bad arguments fail with a message, and no dataset. */
    samples = (convsel_dataset *)1;
    const size_t out_of_range[1] = {2};
    CHECK_EQ(convsel_calibrate_samples_from_dataset(ds, record_candidate, n_cands, out_of_range, 1, &samples),
             CONVSEL_INVALID_ARGUMENT);
    CHECK(samples == NULL);
    CHECK(strstr(convsel_last_error(), "2 candidates") != NULL);
    CHECK_EQ(convsel_calibrate_samples_from_dataset(ds, NULL, n_cands, both, 3, &samples), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_calibrate_candidates_from_dataset(ds, source, NULL, &n_cands, NULL), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(n_cands, 0);
    CHECK_EQ(convsel_calibrate_candidates_from_dataset(ds, NULL, cands, &n_cands, NULL), CONVSEL_INVALID_ARGUMENT);
    convsel_dataset *empty;
    CHECK_EQ(convsel_dataset_create(&empty), CONVSEL_OK);
    n_cands = 99;
    CHECK_EQ(convsel_calibrate_candidates_from_dataset(empty, source, NULL, &n_cands, NULL), CONVSEL_OK);
    CHECK_EQ(n_cands, 0);
    convsel_dataset_destroy(empty);
    convsel_dataset_destroy(ds);
}

/* The calibration part of a model file is read as carefully as the rest:
 * truncations and byte flips in it give CORRUPT (or, for a flip that keeps
 * the file valid, a model), never a crash or a read out of bounds (run
 * under CONVSEL_SANITIZE to check the latter). */
static void test_parse_damaged(const convsel_model *calibrated)
{
    uint8_t *data;
    size_t size;
    CHECK_EQ(convsel_model_serialize(calibrated, &data, &size), CONVSEL_OK);
    convsel_model *m = NULL;
    CHECK_EQ(convsel_model_parse(data, size, "calibrated", &m), CONVSEL_OK);
    convsel_model_destroy(m);
    /* The calibrations are the file's tail: find where they start. */
    const char key[] = "\xac" "calibrations";
    size_t start = 0;
    for (size_t i = 0; i + sizeof key - 1 <= size; i++)
        if (memcmp(data + i, key, sizeof key - 1) == 0)
            start = i;
    CHECK(start > 0);
    size_t step = (size - start) / 600 + 1, truncated_ok = 0;
    for (size_t len = start; len < size; len += step) {
        m = NULL;
        convsel_status st = convsel_model_parse(data, len, "truncated", &m);
        truncated_ok += st == CONVSEL_CORRUPT && m == NULL;
    }
    CHECK_EQ(truncated_ok, (size - start + step - 1) / step);
    uint8_t *copy = malloc(size);
    convsel_rng rng = {99};
    for (int t = 0; t < 600; t++) {
        memcpy(copy, data, size);
        for (int f = 0; f < 3; f++)
            copy[start + convsel_rng_below(&rng, size - start)] ^= (uint8_t)(1 + convsel_rng_below(&rng, 255));
        m = NULL;
        convsel_status st = convsel_model_parse(copy, size, "mutated", &m);
        CHECK(st == CONVSEL_OK || st == CONVSEL_CORRUPT || st == CONVSEL_VERSION_MISMATCH);
        CHECK((st == CONVSEL_OK) == (m != NULL));
        if (m) {
            /* Whatever loaded predicts without trouble. */
            convsel_problem p;
            CHECK_EQ(convsel_problem_parse("mb1ic32ih28oc64oh28kh3ph1", &p), CONVSEL_OK);
            convsel_model_query q = {.problem = &p, .threads = 1, .primitive = 0, .cpu = NULL};
            double ms;
            CHECK_EQ(convsel_model_predict_batch(m, &q, 1, &ms), CONVSEL_OK);
            convsel_calibration_info info;
            if (convsel_model_calibration(m, 0, &info) == CONVSEL_OK) {
                double cold = convsel_model_cold_read_ms(m, &info.cpu, 1, 3, 224, 224, CONVSEL_LAYOUT_NCHW16C, 1);
                CHECK(isfinite(cold) && cold >= 0.0);
            }
            convsel_model_destroy(m);
        }
    }
    free(copy);
    free(data);
}

/*
 * The retrain method: a model trained on the source's own data plus the
 * samples. It must learn the target from them (far better than the source
 * on held-out target configurations), record its provenance, survive a file
 * round trip, and refuse what it cannot do.
 */
static void test_retrain(const convsel_model *source, const convsel_dataset *src, const convsel_dataset *samples,
                         const convsel_dataset *test, const convsel_fingerprint *cpu)
{
    convsel_calibrate_params p;
    convsel_calibrate_params_default(&p);
    CHECK_EQ(p.retrain_copies, 5);
    p.seed = 7;
    const convsel_dataset *sets[1] = {src};
    convsel_model *re = NULL;
    CHECK_EQ(convsel_model_retrain(source, sets, 1, samples, &p, &re), CONVSEL_OK);
    if (!re)
        return;
    /* The control: the same training on the source's data alone, same
     * seed. What the retrained model knows better, it has from the samples. */
    convsel_train_params tp = source->params;
    tp.seed = 7;
    convsel_model *alone = NULL;
    CHECK_EQ(convsel_model_train(sets, 1, &tp, NULL, NULL, &alone), CONVSEL_OK);
    convsel_metrics control = eval(alone, test), after = eval(re, test);
    convsel_model_destroy(alone);
    printf("retrained alone: mape %.3f top1 %.3f spearman %.3f regret %.3f\n", control.mape, control.top1,
           control.spearman, control.regret_mean);
    printf("retrain:    mape %.3f top1 %.3f spearman %.3f regret %.3f\n", after.mape, after.top1, after.spearman,
           after.regret_mean);
    CHECK_MSG(after.mape < 0.75 * control.mape, "mape %.3f -> %.3f", control.mape, after.mape);
    CHECK_MSG(after.regret_mean < 0.5 * control.regret_mean, "regret %.3f -> %.3f", control.regret_mean,
              after.regret_mean);
    CHECK_MSG(after.spearman > control.spearman + 0.25, "spearman %.3f -> %.3f", control.spearman, after.spearman);
    /* retrain_copies is used: given once each, the samples make another model. */
    p.retrain_copies = 1;
    convsel_model *once = NULL;
    CHECK_EQ(convsel_model_retrain(source, sets, 1, samples, &p, &once), CONVSEL_OK);
    if (once)
        CHECK(strcmp(convsel_model_id(once), convsel_model_id(re)) != 0);
    convsel_model_destroy(once);
    p.retrain_copies = 5;
    /* The thread count that trains changes nothing in the model. */
    CHECK_EQ(p.threads, 0);
    for (int threads = 1; threads <= 2; threads++) {
        convsel_model *threaded = NULL;
        p.threads = threads;
        CHECK_EQ(convsel_model_retrain(source, sets, 1, samples, &p, &threaded), CONVSEL_OK);
        if (threaded)
            CHECK_STR(convsel_model_id(threaded), convsel_model_id(re));
        convsel_model_destroy(threaded);
    }
    p.threads = 0;
    /* A time limit passed at once cuts every bag after its first tree, and
     * the model says so; the unlimited one was not cut. */
    size_t jobs = 0;
    CHECK_EQ(convsel_model_training_cut(re, &jobs, NULL), 0);
    CHECK(jobs > 0);
    p.time_limit_s = 1e-9;
    convsel_model *cut = NULL;
    CHECK_EQ(convsel_model_retrain(source, sets, 1, samples, &p, &cut), CONVSEL_OK);
    if (cut) {
        size_t cut_jobs = 0, fewest = 0;
        CHECK_EQ(convsel_model_training_cut(cut, &cut_jobs, &fewest), jobs);
        CHECK_EQ(cut_jobs, jobs);
        CHECK_EQ(fewest, 1);
        CHECK(strcmp(convsel_model_id(cut), convsel_model_id(re)) != 0);
    }
    convsel_model_destroy(cut);
    p.time_limit_s = 0;

    convsel_calibration_info info;
    CHECK_EQ(convsel_model_calibration_count(re), 1);
    CHECK_EQ(convsel_model_calibration(re, 0, &info), CONVSEL_OK);
    CHECK_STR(info.source_model, convsel_model_id(source));
    CHECK_EQ(info.method, CONVSEL_CALIBRATE_RETRAIN);
    CHECK_EQ(info.samples, K_SAMPLES);
    CHECK_EQ(info.records, convsel_dataset_size(samples));
    CHECK_EQ(info.seed, 7);
    CHECK_EQ(info.residual_trees, 0);
    CHECK(!info.auto_chosen);
    CHECK(info.cv_rmse_log > 0);
    CHECK_NEAR(convsel_model_uncertainty(re), info.cv_rmse_log, 0);
    CHECK(convsel_fingerprint_same_cpu(&info.cpu, cpu));
    CHECK(convsel_fingerprint_same_cpu(convsel_model_fingerprint(re, 0), cpu));
    CHECK(strcmp(convsel_model_id(re), convsel_model_id(source)) != 0);

    /* Save → load: "retrain" is a method a file may name. */
    char path[256];
    snprintf(path, sizeof path, "/tmp/test_calibrate_retrain_%ld.msgpack", (long)getpid());
    CHECK_EQ(convsel_model_save(re, path), CONVSEL_OK);
    convsel_model *loaded = NULL;
    CHECK_EQ(convsel_model_load(path, &loaded), CONVSEL_OK);
    unlink(path);
    if (loaded) {
        CHECK_STR(convsel_model_id(loaded), convsel_model_id(re));
        CHECK_EQ(convsel_model_calibration(loaded, 0, &info), CONVSEL_OK);
        CHECK_EQ(info.method, CONVSEL_CALIBRATE_RETRAIN);
        static double a[4000], b[4000];
        size_t na, nb;
        predict_all(re, test, cpu, a, &na);
        predict_all(loaded, test, cpu, b, &nb);
        CHECK_EQ(na, nb);
        for (size_t i = 0; i < na && i < nb; i++)
            CHECK_NEAR(a[i], b[i], 0);
        convsel_model_destroy(loaded);
    }
    convsel_model_destroy(re);

    /* Refusals. */
    p.method = CONVSEL_CALIBRATE_RETRAIN;
    convsel_model *out = (convsel_model *)1;
    CHECK_EQ(convsel_model_calibrate(source, samples, &p, &out), CONVSEL_INVALID_ARGUMENT);
    CHECK(out == NULL);
    CHECK(strstr(convsel_last_error(), "convsel_model_retrain") != NULL);
    CHECK_EQ(convsel_model_retrain(source, sets, 0, samples, &p, &out), CONVSEL_INVALID_ARGUMENT);
    CHECK(strstr(convsel_last_error(), "datasets") != NULL);
    const convsel_dataset *null_set[1] = {NULL};
    CHECK_EQ(convsel_model_retrain(source, null_set, 1, samples, &p, &out), CONVSEL_INVALID_ARGUMENT);
    p.retrain_copies = 0;
    CHECK_EQ(convsel_model_retrain(source, sets, 1, samples, &p, &out), CONVSEL_INVALID_ARGUMENT);
    CHECK(strstr(convsel_last_error(), "retrain_copies") != NULL);
    CHECK(out == NULL);
    p.retrain_copies = 5;
    p.threads = -1;
    CHECK_EQ(convsel_model_retrain(source, sets, 1, samples, &p, &out), CONVSEL_INVALID_ARGUMENT);
    CHECK(strstr(convsel_last_error(), "threads") != NULL);
    CHECK(out == NULL);
    p.threads = 0;
    p.time_limit_s = -1;
    CHECK_EQ(convsel_model_retrain(source, sets, 1, samples, &p, &out), CONVSEL_INVALID_ARGUMENT);
    CHECK(strstr(convsel_last_error(), "time_limit_s") != NULL);
    CHECK(out == NULL);
}

/* The byte offset of the first double of the array after key in data (a
 * msgpack fixarray or array16 of doubles), or 0. */
static size_t doubles_after(const uint8_t *data, size_t size, const char *key, size_t from)
{
    size_t len = strlen(key);
    for (size_t i = from; i + len + 4 < size; i++) {
        if (data[i] != (0xa0 | len) || memcmp(data + i + 1, key, len) != 0)
            continue;
        uint8_t head = data[i + 1 + len];
        if (head == 0xdc)
            return i + 1 + len + 3;
        if ((head & 0xf0) == 0x90)
            return i + 1 + len + 1;
    }
    return 0;
}

/* model written with the sign of double `cell` of the array after key
 * (the first such key after the array after `after`, when not NULL)
 * flipped (a positive price or factor made negative) is refused as
 * corrupt, the error naming `why`. */
static void check_negative_refused(const convsel_model *model, const char *after, const char *key, size_t cell,
                                   const char *why)
{
    uint8_t *data;
    size_t size;
    CHECK_EQ(convsel_model_serialize(model, &data, &size), CONVSEL_OK);
    size_t from = after ? doubles_after(data, size, after, 0) : 0;
    CHECK(!after || from > 0);
    size_t at = doubles_after(data, size, key, from);
    CHECK(at > 0);
    CHECK_EQ(data[at + 9 * cell], 0xcb);
    CHECK(data[at + 9 * cell + 1] < 0x80); /* positive before */
    data[at + 9 * cell + 1] ^= 0x80;
    convsel_model *back = NULL;
    CHECK_EQ(convsel_model_parse(data, size, "negative", &back), CONVSEL_CORRUPT);
    CHECK(back == NULL);
    CHECK_MSG(strstr(convsel_last_error(), why) != NULL, "%s", convsel_last_error());
    free(data);
}

/*
 * Reorder prices calibrated to reorders timed inside networks: a thread
 * slot's factor is the geometric mean of time / line over its samples, a
 * layout pair's is its own samples' shrunk towards that with three samples'
 * weight, pairs never timed take the slot's, slots never timed keep the
 * line, and other CPUs are not touched. The factors survive a file round
 * trip, a negative one is refused, and refitting replaces them.
 */
/* model written and read back: a copy that may be changed. */
static convsel_model *reread(const convsel_model *model, const char *name)
{
    uint8_t *data = NULL;
    size_t size = 0;
    convsel_model *copy = NULL;
    CHECK_EQ(convsel_model_serialize(model, &data, &size), CONVSEL_OK);
    CHECK_EQ(convsel_model_parse(data, size, name, &copy), CONVSEL_OK);
    free(data);
    return copy;
}

/* Gives m reorder lines of a_ms + b_ms_per_mb per MB for every layout pair
 * and thread slot, and returns them (m owns them). */
static const convsel_reorder_model *set_uniform_lines(convsel_model *m, double a_ms, double b_ms_per_mb)
{
    convsel_reorder_model *lines = calloc(1, sizeof *lines);
    CHECK(lines != NULL);
    for (int f = 0; f < CONVSEL_LAYOUT_COUNT; f++)
        for (int g = 0; g < CONVSEL_LAYOUT_COUNT; g++)
            for (int t = 0; t < CONVSEL_REORDER_MODEL_THREADS; t++) {
                lines->a_ms[f][g][t] = a_ms;
                lines->b_ms_per_mb[f][g][t] = b_ms_per_mb;
                lines->n_records[f][g][t] = 1;
            }
    free(m->reorders);
    m->reorders = lines;
    return lines;
}

static convsel_model *test_reorder_scale(const convsel_model *calibrated, const convsel_fingerprint *cpu)
{
    const convsel_layout NCHW = CONVSEL_LAYOUT_NCHW, NHWC = CONVSEL_LAYOUT_NHWC, B16 = CONVSEL_LAYOUT_NCHW16C;
    convsel_model *m = reread(calibrated, "copy");
    const convsel_reorder_model *lines = set_uniform_lines(m, 0.01, 0.1);

    convsel_reorder_sample s[5];
    for (int i = 0; i < 5; i++) {
        s[i] = (convsel_reorder_sample){1, 16 << i, 14, 14, NCHW, B16, 1, 0.0};
        if (i == 4)
            s[i].from = NHWC, s[i].to = NCHW;
        double line = convsel_reorder_model_predict(lines, s[i].mb, s[i].c, s[i].h, s[i].w, s[i].from, s[i].to, 1);
        s[i].ms = (i == 4 ? 2.0 : 0.5) * line; /* four at half the line, one at twice */
    }
    CHECK_EQ(convsel_model_calibrate_reorders(m, cpu, s, 0), CONVSEL_OK);
    CHECK_NEAR(convsel_model_reorder_ms(m, cpu, 1, 64, 14, 14, NCHW, B16, 1),
               convsel_reorder_model_predict(lines, 1, 64, 14, 14, NCHW, B16, 1), 1e-12);
    CHECK_EQ(convsel_model_calibrate_reorders(m, cpu, s, 5), CONVSEL_OK);

    const double slot = (4 * log(0.5) + log(2.0)) / 5;
    const double pair = exp((4 * log(0.5) + 3 * slot) / 7), lone = exp((log(2.0) + 3 * slot) / 4);
    convsel_calibration_info info;
    CHECK_EQ(convsel_model_calibration(m, 0, &info), CONVSEL_OK);
    CHECK_EQ(info.reorder_samples, 5);
    CHECK_NEAR(info.reorder_by_threads[0], exp(slot), 1e-9);
    CHECK_EQ(info.reorder_by_threads[1], 0.0);
    const struct {
        convsel_layout from, to;
        int threads;
        double factor;
    } want[] = {
        {NCHW, B16, 1, pair},       {NHWC, NCHW, 1, lone}, {NCHW, NHWC, 1, exp(slot)}, {B16, NHWC, 1, exp(slot)},
        {NCHW, B16, 2, 1.0},        {NHWC, NCHW, 4, 1.0},  {NCHW, NCHW, 1, 1.0},
    };
    for (size_t k = 0; k < sizeof want / sizeof want[0]; k++) {
        double line = convsel_reorder_model_predict(lines, 1, 64, 28, 28, want[k].from, want[k].to, want[k].threads);
        double got = convsel_model_reorder_ms(m, cpu, 1, 64, 28, 28, want[k].from, want[k].to, want[k].threads);
        CHECK_MSG(fabs(got - want[k].factor * line) <= 1e-9 * (1 + line), "case %zu: %.6g, want %.6g x %.6g", k, got,
                  want[k].factor, line);
    }
    /* Another CPU: the lines as they are. */
    convsel_fingerprint other = *cpu;
    snprintf(other.model_name, sizeof other.model_name, "another CPU");
    CHECK_NEAR(convsel_model_reorder_ms(m, &other, 1, 64, 28, 28, NCHW, B16, 1),
               convsel_reorder_model_predict(lines, 1, 64, 28, 28, NCHW, B16, 1), 1e-12);
    /* The selector's price is the same. */
    convsel_model_costs mc = {.model = m, .cpu = *cpu};
    convsel_cost_source costs = convsel_model_costs_source(&mc);
    double ms;
    CHECK_EQ(costs.reorder_ms(costs.ctx, 1, 64, 28, 28, NCHW, B16, 1, &ms), CONVSEL_OK);
    CHECK_NEAR(ms, pair * convsel_reorder_model_predict(lines, 1, 64, 28, 28, NCHW, B16, 1), 1e-12);

    /* Bad samples, and a model not calibrated for the CPU. */
    convsel_reorder_sample bad = s[0];
    bad.to = bad.from;
    CHECK_EQ(convsel_model_calibrate_reorders(m, cpu, &bad, 1), CONVSEL_INVALID_ARGUMENT);
    bad = s[0];
    bad.ms = NAN;
    CHECK_EQ(convsel_model_calibrate_reorders(m, cpu, &bad, 1), CONVSEL_INVALID_ARGUMENT);
    bad = s[0];
    bad.c = 0;
    CHECK_EQ(convsel_model_calibrate_reorders(m, cpu, &bad, 1), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_model_calibrate_reorders(m, &other, s, 5), CONVSEL_NOT_FOUND);
    CHECK_EQ(convsel_model_calibrate_reorders(m, NULL, s, 5), CONVSEL_INVALID_ARGUMENT);
    /* The failed calls changed nothing. */
    CHECK_NEAR(convsel_model_reorder_ms(m, cpu, 1, 64, 28, 28, NCHW, B16, 1),
               pair * convsel_reorder_model_predict(lines, 1, 64, 28, 28, NCHW, B16, 1), 1e-12);

    /* A file round trip keeps the factors; the id tells the models apart. */
    convsel_model *back = reread(m, "round trip");
    CHECK_NEAR(convsel_model_reorder_ms(back, cpu, 1, 64, 28, 28, NHWC, NCHW, 1),
               lone * convsel_reorder_model_predict(lines, 1, 64, 28, 28, NHWC, NCHW, 1), 1e-12);
    CHECK(strcmp(convsel_model_id(back), convsel_model_id(calibrated)) != 0);
    convsel_model_destroy(back);
    /* A negative factor (the sign bit of nchw -> nChw16c at 1 thread) is refused. */
    check_negative_refused(m, NULL, "scale", ((size_t)NCHW * CONVSEL_LAYOUT_COUNT + B16) * CONVSEL_REORDER_MODEL_THREADS,
                           "negative reorder scale");

    /* Refitting on nothing takes the factors away. */
    convsel_model *twice = reread(m, "twice");
    CHECK_EQ(convsel_model_calibrate_reorders(twice, cpu, NULL, 0), CONVSEL_OK);
    CHECK_NEAR(convsel_model_reorder_ms(twice, cpu, 1, 64, 28, 28, NCHW, B16, 1),
               convsel_reorder_model_predict(lines, 1, 64, 28, 28, NCHW, B16, 1), 1e-12);
    CHECK_EQ(convsel_model_calibration(twice, 0, &info), CONVSEL_OK);
    CHECK_EQ(info.reorder_samples, 0);
    convsel_model_destroy(twice);
    return m;
}

/* model written with key (which must occur once) renamed, so that a reader
 * skips it, is CORRUPT with an error naming why. */
static void check_key_renamed_refused(const convsel_model *model, const char *key, const char *why)
{
    uint8_t *data;
    size_t size, len = strlen(key);
    CHECK_EQ(convsel_model_serialize(model, &data, &size), CONVSEL_OK);
    int renamed = 0;
    for (size_t i = 0; i + len <= size; i++)
        if (memcmp(data + i, key, len) == 0) {
            data[i + len - 1] = 'x';
            renamed++;
        }
    CHECK_EQ(renamed, 1);
    convsel_model *back = NULL;
    CHECK_EQ(convsel_model_parse(data, size, key, &back), CONVSEL_CORRUPT);
    CHECK(back == NULL);
    CHECK_MSG(strstr(convsel_last_error(), why) != NULL, "%s", convsel_last_error());
    free(data);
}

/*
 * A fixed cost per reorder, fitted per thread slot: reorders timed at 16
 * threads at 1.5 x (line + 0.05 ms), over lines that span 2:1 and more, give
 * back an offset of 0.05 and a factor of 1.5 for every size, and the
 * leave-one-out error with the offset is below the factor's alone; another
 * slot's samples and a later size are priced by it. Fewer than 6 samples, or
 * lines within 2:1 of each other, fit none. The offset survives a file round
 * trip, damage to it is caught, and an offset written without its errors is
 * refused.
 */
static void test_reorder_offset(const convsel_model *calibrated, const convsel_fingerprint *cpu)
{
    const convsel_layout NHWC = CONVSEL_LAYOUT_NHWC, B16 = CONVSEL_LAYOUT_NCHW16C;
    const int T = CONVSEL_REORDER_MODEL_THREADS;
    convsel_model *m = reread(calibrated, "offset");
    const convsel_reorder_model *lines = set_uniform_lines(m, 0.001, 0.02);

    convsel_reorder_sample s[8];
    for (int i = 0; i < 8; i++) {
        s[i] = (convsel_reorder_sample){1, 16 << (i % 4), 14 << (i / 4), 14, i % 2 ? NHWC : B16, i % 2 ? B16 : NHWC,
                                        16, 0.0};
        double line = convsel_reorder_model_predict(lines, s[i].mb, s[i].c, s[i].h, s[i].w, s[i].from, s[i].to, 16);
        s[i].ms = 1.5 * (line + 0.05);
    }
    CHECK_EQ(convsel_model_calibrate_reorders(m, cpu, s, 8), CONVSEL_OK);
    convsel_calibration_info info;
    CHECK_EQ(convsel_model_calibration(m, 0, &info), CONVSEL_OK);
    CHECK_NEAR(info.reorder_by_threads[T - 1], 1.5, 1e-9);
    CHECK_NEAR(info.reorder_fixed_ms[T - 1], 1.5 * 0.05, 1e-9);
    CHECK(info.reorder_loo_factor[T - 1] > 0.1);
    CHECK(info.reorder_loo_fixed[T - 1] < 1e-6);
    CHECK_EQ(info.reorder_loo_factor[0], 0.0);
    CHECK_EQ(info.reorder_fixed_ms[0], 0.0);
    for (int64_t c = 8; c <= 2048; c *= 4) {
        double line = convsel_reorder_model_predict(lines, 1, c, 7, 7, B16, NHWC, 16);
        CHECK_NEAR(convsel_model_reorder_ms(m, cpu, 1, c, 7, 7, B16, NHWC, 16), 1.5 * (line + 0.05), 1e-9);
        /* 1 thread was not timed: the line as it is. */
        CHECK_NEAR(convsel_model_reorder_ms(m, cpu, 1, c, 7, 7, B16, NHWC, 1),
                   convsel_reorder_model_predict(lines, 1, c, 7, 7, B16, NHWC, 1), 1e-12);
    }

    /* The round trip keeps it. */
    convsel_model *back = reread(m, "offset round trip");
    double line = convsel_reorder_model_predict(lines, 1, 256, 14, 14, NHWC, B16, 16);
    CHECK_NEAR(convsel_model_reorder_ms(back, cpu, 1, 256, 14, 14, NHWC, B16, 16), 1.5 * (line + 0.05), 1e-9);
    CHECK_EQ(convsel_model_calibration(back, 0, &info), CONVSEL_OK);
    CHECK(info.reorder_loo_factor[T - 1] > 0.1);
    convsel_model_destroy(back);
    test_parse_damaged(m);

    /* An offset whose errors are missing (their key renamed) is corrupt. */
    check_key_renamed_refused(m, "loo_offset", "offset");

    /* Five samples, or six within 2:1, fit no offset: the factor alone. */
    CHECK_EQ(convsel_model_calibrate_reorders(m, cpu, s, 5), CONVSEL_OK);
    CHECK_EQ(convsel_model_calibration(m, 0, &info), CONVSEL_OK);
    CHECK_EQ(info.reorder_fixed_ms[T - 1], 0.0);
    CHECK_EQ(info.reorder_loo_factor[T - 1], 0.0);
    convsel_reorder_sample narrow[6];
    for (int i = 0; i < 6; i++) {
        narrow[i] = s[0];
        narrow[i].c = 64 + 8 * i;
        double l = convsel_reorder_model_predict(lines, 1, narrow[i].c, 14, 14, narrow[i].from, narrow[i].to, 16);
        narrow[i].ms = 1.5 * (l + 0.05);
    }
    CHECK_EQ(convsel_model_calibrate_reorders(m, cpu, narrow, 6), CONVSEL_OK);
    CHECK_EQ(convsel_model_calibration(m, 0, &info), CONVSEL_OK);
    CHECK_EQ(info.reorder_fixed_ms[T - 1], 0.0);
    CHECK(info.reorder_by_threads[T - 1] > 1.5);
    /* Times that hardly grow with the line (a slope of 1e-4, below the
     * factors' bound) keep no offset, which would take the whole time. */
    for (int i = 0; i < 8; i++) {
        double line = convsel_reorder_model_predict(lines, s[i].mb, s[i].c, s[i].h, s[i].w, s[i].from, s[i].to, 16);
        s[i].ms = 0.02 + 1e-4 * line;
    }
    CHECK_EQ(convsel_model_calibrate_reorders(m, cpu, s, 8), CONVSEL_OK);
    CHECK_EQ(convsel_model_calibration(m, 0, &info), CONVSEL_OK);
    CHECK(info.reorder_loo_fixed[T - 1] < info.reorder_loo_factor[T - 1]);
    CHECK_EQ(info.reorder_fixed_ms[T - 1], 0.0);
    convsel_model_destroy(m);
}

/*
 * A layout pair's own reorder line: at 2 threads, nchw -> nChw16c timed at
 * 0.004 ms + 0.03 ms/MB and nChw16c -> nchw at 0.003 + 0.02 (each sample
 * off by +-2%), over sizes spanning 4:1 and more, against model lines of
 * 0.01 + 0.1 ms/MB: both pairs keep a line of their own (it predicts the
 * samples left out better than a factor on the model's line), which prices
 * small and large reorders alike within 5%; the pairs never timed at 2
 * threads take the mean of the two lines; 1 thread keeps the model's line.
 * Five samples, or sizes within 4:1, fit no line of a pair's own; where only
 * one of two fittable pairs keeps its own, the pairs never timed keep the
 * scaled line. The lines survive a file round trip; a negative slope, and
 * lines without their errors, are refused.
 */
static double mbytes(int64_t c, int64_t h, convsel_layout from, convsel_layout to)
{
    return (double)(convsel_layout_elems(from, 1, c, h, h) + convsel_layout_elems(to, 1, c, h, h)) * 4 / 1e6;
}

static void test_reorder_pair_lines(const convsel_model *calibrated, const convsel_fingerprint *cpu)
{
    const convsel_layout NCHW = CONVSEL_LAYOUT_NCHW, NHWC = CONVSEL_LAYOUT_NHWC, B16 = CONVSEL_LAYOUT_NCHW16C;
    convsel_model *m = reread(calibrated, "pair lines");
    const convsel_reorder_model *lines = set_uniform_lines(m, 0.01, 0.1);
    convsel_reorder_sample s[16];
    for (int i = 0; i < 16; i++) {
        int forward = i < 8, k = i % 8;
        s[i] = (convsel_reorder_sample){1, 16 << (k % 4), 2 << (k / 4) * 3, 2 << (k / 4) * 3, forward ? NCHW : B16,
                                        forward ? B16 : NCHW, 2, 0.0};
        double x = mbytes(s[i].c, s[i].h, s[i].from, s[i].to);
        s[i].ms = (forward ? 0.004 + 0.03 * x : 0.003 + 0.02 * x) * (k % 2 ? 1.02 : 0.98);
    }
    CHECK_EQ(convsel_model_calibrate_reorders(m, cpu, s, 16), CONVSEL_OK);
    convsel_calibration_info info;
    CHECK_EQ(convsel_model_calibration(m, 0, &info), CONVSEL_OK);
    CHECK_EQ(info.reorder_pairs_fittable[1], 2);
    CHECK_EQ(info.reorder_pairs_own[1], 2);
    CHECK_EQ(info.reorder_pairs_mean[1], CONVSEL_LAYOUT_COUNT * (CONVSEL_LAYOUT_COUNT - 1) - 2);
    CHECK(info.reorder_loo_own[1] < 0.05 && info.reorder_loo_own[1] < info.reorder_loo_scaled[1]);
    CHECK_EQ(info.reorder_pairs_fittable[0], 0);
    const int64_t sizes[][2] = {{16, 2}, {256, 56}, {64, 14}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        int64_t c = sizes[k][0], h = sizes[k][1];
        double x = mbytes(c, h, NCHW, B16), got = convsel_model_reorder_ms(m, cpu, 1, c, h, h, NCHW, B16, 2);
        CHECK_MSG(fabs(got / (0.004 + 0.03 * x) - 1) < 0.05, "nchw -> nChw16c %lldx%lld: %.6f ms", (long long)c,
                  (long long)h, got);
        got = convsel_model_reorder_ms(m, cpu, 1, c, h, h, B16, NCHW, 2);
        CHECK_MSG(fabs(got / (0.003 + 0.02 * x) - 1) < 0.05, "nChw16c -> nchw %lldx%lld: %.6f ms", (long long)c,
                  (long long)h, got);
        /* Never timed: the mean of the two. */
        double y = mbytes(c, h, NHWC, NCHW);
        got = convsel_model_reorder_ms(m, cpu, 1, c, h, h, NHWC, NCHW, 2);
        CHECK_MSG(fabs(got / (0.0035 + 0.025 * y) - 1) < 0.05, "nhwc -> nchw %lldx%lld: %.6f ms", (long long)c,
                  (long long)h, got);
        /* 1 thread was not timed: the model's line. */
        CHECK_NEAR(convsel_model_reorder_ms(m, cpu, 1, c, h, h, NCHW, B16, 1),
                   convsel_reorder_model_predict(lines, 1, c, h, h, NCHW, B16, 1), 1e-12);
    }
    /* The selector prices the same. */
    convsel_model_costs mc = {.model = m, .cpu = *cpu};
    convsel_cost_source costs = convsel_model_costs_source(&mc);
    double ms;
    CHECK_EQ(costs.reorder_ms(costs.ctx, 1, 16, 2, 2, NCHW, B16, 2, &ms), CONVSEL_OK);
    CHECK_NEAR(ms, convsel_model_reorder_ms(m, cpu, 1, 16, 2, 2, NCHW, B16, 2), 1e-12);

    /* The round trip keeps the lines. */
    convsel_model *back = reread(m, "pair lines round trip");
    CHECK_NEAR(convsel_model_reorder_ms(back, cpu, 1, 16, 2, 2, NCHW, B16, 2), ms, 1e-12);
    CHECK_EQ(convsel_model_calibration(back, 0, &info), CONVSEL_OK);
    CHECK_EQ(info.reorder_pairs_own[1], 2);
    convsel_model_destroy(back);
    /* A negative slope (nchw -> nChw16c at 2 threads) is refused. */
    check_negative_refused(m, NULL, "line_b",
                           ((size_t)NCHW * CONVSEL_LAYOUT_COUNT + B16) * CONVSEL_REORDER_MODEL_THREADS + 1,
                           "negative reorder line");
    /* Lines whose errors are missing (a key renamed) are corrupt. */
    check_key_renamed_refused(m, "loo_line", "own reorder lines");

    /* Five samples of a pair, or eight within 4:1, fit none. */
    CHECK_EQ(convsel_model_calibrate_reorders(m, cpu, s, 5), CONVSEL_OK);
    CHECK_EQ(convsel_model_calibration(m, 0, &info), CONVSEL_OK);
    CHECK_EQ(info.reorder_pairs_fittable[1], 0);
    CHECK_EQ(info.reorder_pairs_mean[1], 0);
    double line = convsel_reorder_model_predict(lines, 1, 16, 2, 2, NCHW, B16, 2);
    CHECK_NEAR(convsel_model_reorder_ms(m, cpu, 1, 16, 2, 2, NCHW, B16, 2),
               info.reorder_by_threads[1] * line, 1e-9 * (1 + line));
    convsel_reorder_sample narrow[8];
    for (int i = 0; i < 8; i++) {
        narrow[i] = s[0];
        narrow[i].c = 64 + 16 * i;
        narrow[i].ms = (0.004 + 0.03 * mbytes(narrow[i].c, narrow[i].h, NCHW, B16)) * (i % 2 ? 1.02 : 0.98);
    }
    CHECK_EQ(convsel_model_calibrate_reorders(m, cpu, narrow, 8), CONVSEL_OK);
    CHECK_EQ(convsel_model_calibration(m, 0, &info), CONVSEL_OK);
    CHECK_EQ(info.reorder_pairs_fittable[1], 0);

    /* nChw16c -> nchw and nhwc -> nChw16c at half the model's line, off by
     * x1.3 and /1.3 in turn: a factor predicts them, each left out, better
     * than a line of their own, so only one of the three fittable pairs
     * keeps its own, and the pairs never timed keep the scaled line. */
    convsel_reorder_sample three[24];
    for (int i = 0; i < 24; i++) {
        three[i] = s[i % 16];
        if (i >= 16)
            three[i].from = NHWC, three[i].to = B16;
        if (i >= 8) {
            double l = convsel_reorder_model_predict(lines, 1, three[i].c, three[i].h, three[i].w, three[i].from,
                                                     three[i].to, 2);
            three[i].ms = 0.5 * l * ((i + i / 2) % 2 ? 1.3 : 1 / 1.3);
        }
    }
    CHECK_EQ(convsel_model_calibrate_reorders(m, cpu, three, 24), CONVSEL_OK);
    CHECK_EQ(convsel_model_calibration(m, 0, &info), CONVSEL_OK);
    CHECK_EQ(info.reorder_pairs_fittable[1], 3);
    CHECK_EQ(info.reorder_pairs_own[1], 1);
    CHECK_EQ(info.reorder_pairs_mean[1], 0);
    line = convsel_reorder_model_predict(lines, 1, 64, 14, 14, NHWC, NCHW, 2);
    CHECK_NEAR(convsel_model_reorder_ms(m, cpu, 1, 64, 14, 14, NHWC, NCHW, 2), info.reorder_by_threads[1] * line,
               1e-9 * (1 + line));
    convsel_model_destroy(m);
}

/*
 * Cold reads priced from samples timed inside networks: per thread slot the
 * samples' excess over their megabytes, clamped to [0, 1] ms/MB; charged by
 * the bytes of the input in the layout asked (a 3-channel image costs 16/3
 * as much in nChw16c as in nhwc); nothing for other CPUs or slots never
 * timed. The prices survive a file round trip, a negative one is refused,
 * bad samples are refused, and refitting replaces them.
 */
static convsel_model *test_cold_price(const convsel_model *calibrated, const convsel_fingerprint *cpu)
{
    const convsel_layout NHWC = CONVSEL_LAYOUT_NHWC, B8 = CONVSEL_LAYOUT_NCHW8C, B16 = CONVSEL_LAYOUT_NCHW16C;
    convsel_model *m = reread(calibrated, "copy");
    /* Before any fit: nothing. */
    CHECK_EQ(convsel_model_cold_read_ms(m, cpu, 1, 3, 224, 224, B16, 1), 0.0);
    /* 1 thread: 0.08 ms/MB on every sample but two whose errors cancel
     * over the same megabytes; 2 threads: a negative excess (clamped to
     * 0); 3 threads: 5 ms/MB (clamped to 1). */
    convsel_cold_sample s[] = {
        {1, 3, 224, 224, NHWC, 1, 0.0}, {1, 3, 224, 224, B16, 1, 0.0},    {1, 64, 56, 56, B8, 1, 0.0},
        {1, 3, 224, 224, B8, 1, 0.0},   {1, 3, 224, 224, B8, 1, 0.0},     {1, 64, 56, 56, NHWC, 2, -0.01},
        {1, 3, 224, 224, B16, 3, 0.0},
    };
    const size_t n = sizeof s / sizeof s[0];
    for (size_t i = 0; i < n; i++) {
        double mb = (double)convsel_layout_elems(s[i].layout, s[i].mb, s[i].c, s[i].h, s[i].w) * 4 / 1e6;
        if (s[i].threads == 1)
            s[i].excess_ms = 0.08 * mb + (i == 3 ? 0.05 : i == 4 ? -0.05 : 0.0);
        else if (s[i].threads == 3)
            s[i].excess_ms = 5.0 * mb;
    }
    CHECK_EQ(convsel_model_calibrate_cold(m, cpu, s, n), CONVSEL_OK);
    convsel_calibration_info info;
    CHECK_EQ(convsel_model_calibration(m, 0, &info), CONVSEL_OK);
    CHECK_EQ(info.cold_samples, n);
    CHECK_NEAR(info.cold_ms_per_mb[0], 0.08, 1e-12);
    CHECK_EQ(info.cold_ms_per_mb[1], 0.0);
    CHECK_NEAR(info.cold_ms_per_mb[2], 1.0, 1e-12);
    CHECK_EQ(info.cold_ms_per_mb[3], 0.0);
    const double image_nhwc = 3 * 224 * 224 * 4 / 1e6, image_b16 = 16 * 224 * 224 * 4 / 1e6;
    CHECK_NEAR(convsel_model_cold_read_ms(m, cpu, 1, 3, 224, 224, NHWC, 1), 0.08 * image_nhwc, 1e-12);
    CHECK_NEAR(convsel_model_cold_read_ms(m, cpu, 1, 3, 224, 224, B16, 1), 0.08 * image_b16, 1e-12);
    CHECK_NEAR(convsel_model_cold_read_ms(m, cpu, 2, 3, 224, 224, B16, 1), 2 * 0.08 * image_b16, 1e-12);
    CHECK_EQ(convsel_model_cold_read_ms(m, cpu, 1, 3, 224, 224, B16, 2), 0.0);
    CHECK_NEAR(convsel_model_cold_read_ms(m, cpu, 1, 3, 224, 224, B16, 3), image_b16, 1e-12);
    CHECK_EQ(convsel_model_cold_read_ms(m, cpu, 1, 3, 224, 224, B16, 8), 0.0);
    CHECK_EQ(convsel_model_cold_read_ms(m, cpu, 1, 3, 224, 224, (convsel_layout)CONVSEL_LAYOUT_COUNT, 1), 0.0);
    CHECK_EQ(convsel_model_cold_read_ms(m, cpu, 0, 3, 224, 224, B16, 1), 0.0);
    /* Another CPU: nothing. */
    convsel_fingerprint other = *cpu;
    snprintf(other.model_name, sizeof other.model_name, "another CPU");
    CHECK_EQ(convsel_model_cold_read_ms(m, &other, 1, 3, 224, 224, B16, 1), 0.0);
    /* The selector's price is the same. */
    convsel_model_costs mc = {.model = m, .cpu = *cpu};
    convsel_cost_source costs = convsel_model_costs_source(&mc);
    double ms = -1;
    CHECK(costs.cold_read_ms != NULL);
    CHECK_EQ(costs.cold_read_ms(costs.ctx, 1, 3, 224, 224, B16, 1, &ms), CONVSEL_OK);
    CHECK_NEAR(ms, 0.08 * image_b16, 1e-12);

    /* Bad samples, and a model not calibrated for the CPU; none changes anything. */
    convsel_cold_sample bad = s[0];
    bad.excess_ms = NAN;
    CHECK_EQ(convsel_model_calibrate_cold(m, cpu, &bad, 1), CONVSEL_INVALID_ARGUMENT);
    bad = s[0];
    bad.c = 0;
    CHECK_EQ(convsel_model_calibrate_cold(m, cpu, &bad, 1), CONVSEL_INVALID_ARGUMENT);
    bad = s[0];
    bad.layout = (convsel_layout)CONVSEL_LAYOUT_COUNT;
    CHECK_EQ(convsel_model_calibrate_cold(m, cpu, &bad, 1), CONVSEL_INVALID_ARGUMENT);
    bad = s[0];
    bad.threads = 0;
    CHECK_EQ(convsel_model_calibrate_cold(m, cpu, &bad, 1), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_model_calibrate_cold(m, &other, s, n), CONVSEL_NOT_FOUND);
    CHECK_EQ(convsel_model_calibrate_cold(m, NULL, s, n), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_model_calibrate_cold(m, cpu, NULL, 1), CONVSEL_INVALID_ARGUMENT);
    CHECK_NEAR(convsel_model_cold_read_ms(m, cpu, 1, 3, 224, 224, B16, 1), 0.08 * image_b16, 1e-12);

    /* A file round trip keeps the prices. */
    convsel_model *back = reread(m, "round trip");
    CHECK_NEAR(convsel_model_cold_read_ms(back, cpu, 1, 3, 224, 224, NHWC, 1), 0.08 * image_nhwc, 1e-12);
    CHECK_EQ(convsel_model_calibration(back, 0, &info), CONVSEL_OK);
    CHECK_EQ(info.cold_samples, n);
    convsel_model_destroy(back);
    /* A negative price (the sign bit of the 1-thread slot's) is refused. */
    check_negative_refused(m, NULL, "ms_per_mb", 0, "negative cold-read price");

    /* Refitting on nothing takes the prices away. */
    convsel_model *twice = reread(m, "twice");
    CHECK_EQ(convsel_model_calibrate_cold(twice, cpu, NULL, 0), CONVSEL_OK);
    CHECK_EQ(convsel_model_cold_read_ms(twice, cpu, 1, 3, 224, 224, B16, 1), 0.0);
    CHECK_EQ(convsel_model_calibration(twice, 0, &info), CONVSEL_OK);
    CHECK_EQ(info.cold_samples, 0);
    convsel_model_destroy(twice);
    return m;
}

/*
 * Convolutions inside networks: per model primitive and thread slot, its
 * samples' excess over alone over their plain weights' MB plus one free MB,
 * clamped to [0, 1] ms per MB; added by the selector's cost source only,
 * never by predict; nothing for other CPUs, slots or primitives not timed.
 * Samples of primitives the model does not know are skipped. The prices
 * survive a file round trip, a file of factors only (the thirty-sixth
 * session's) and a negative price are refused, bad samples are refused,
 * and refitting replaces the prices.
 */
static double sample_weights_mb(const convsel_conv_sample *s)
{
    return (double)convsel_problem_weights_elems(&s->problem) * 4 / 1e6;
}

static convsel_model *test_network_weights(const convsel_model *calibrated, const convsel_fingerprint *cpu)
{
    convsel_model *m = reread(calibrated, "copy");
    CHECK(m->n_primitives >= 3);
    /* The synthetic model's primitives under catalogue names. */
    size_t direct, wino, gemm, j_direct = SIZE_MAX, j_wino = SIZE_MAX;
    CHECK_EQ(convsel_primitive_find("onednn_direct", &direct), CONVSEL_OK);
    CHECK_EQ(convsel_primitive_find("winograd_4x4_3x3", &wino), CONVSEL_OK);
    CHECK_EQ(convsel_primitive_find("im2col_gemm", &gemm), CONVSEL_OK);
    snprintf(m->primitives[0], sizeof m->primitives[0], "onednn_direct");
    snprintf(m->primitives[1], sizeof m->primitives[1], "winograd_4x4_3x3");
    snprintf(m->primitives[2], sizeof m->primitives[2], "not_in_this_model");
    CHECK_EQ(convsel_model_primitive_find(m, "onednn_direct", &j_direct), CONVSEL_OK);
    CHECK_EQ(convsel_model_primitive_find(m, "winograd_4x4_3x3", &j_wino), CONVSEL_OK);
    convsel_problem big;
    CHECK_EQ(convsel_problem_parse("mb1ic512ih7oc512oh7kh3ph1", &big), CONVSEL_OK);
    const double big_mb = 512.0 * 512 * 9 * 4 / 1e6;
    CHECK_EQ(convsel_model_network_weights_ms(m, cpu, j_direct, &big, 1), 0.0);
    /* onednn_direct at 1 thread: layers of 16..512 channels, 3x3 (plain
     * weights of 0.009..9.4 MB), each 0.08 ms per MB slower inside; plus a
     * layer faster inside by 0.05 ms (noise is signed). */
    enum { N = 60 };
    convsel_conv_sample s[N + 3];
    double sum_mb = 0.0, sum_excess = 0.0;
    for (size_t i = 0; i < N; i++) {
        char desc[96];
        const int64_t c = 16 << (i % 6), hw = 112 >> (i % 6);
        snprintf(desc, sizeof desc, "mb1ic%" PRId64 "ih%" PRId64 "oc%" PRId64 "oh%" PRId64 "kh3ph1", c, hw, c, hw);
        s[i] = (convsel_conv_sample){direct, 1, 0.0, 0.05 + 0.01 * (double)(i % 17), {0}, 0};
        CHECK_EQ(convsel_problem_parse(desc, &s[i].problem), CONVSEL_OK);
        s[i].network_ms = s[i].alone_ms + 0.08 * sample_weights_mb(&s[i]) - (i == 7 ? 0.05 : 0.0);
        sum_mb += sample_weights_mb(&s[i]);
        sum_excess += s[i].network_ms - s[i].alone_ms;
    }
    /* winograd at 2 threads: one small layer, much slower inside (the free
     * MB keeps its price low); once faster inside (no negative price) at 1
     * thread; im2col_gemm: the model does not know it. */
    s[N] = s[N + 1] = s[N + 2] = s[0];
    s[N].primitive = s[N + 1].primitive = wino;
    s[N].threads = 2;
    s[N].network_ms = s[N].alone_ms + 0.2;
    s[N + 1].network_ms = s[N + 1].alone_ms * 0.5;
    s[N + 2].primitive = gemm;
    const size_t n = N + 3;
    CHECK_MSG(convsel_model_calibrate_network(m, cpu, s, n) == CONVSEL_OK, "%s", convsel_last_error());
    const double want_direct = sum_excess / (sum_mb + 1.0);
    CHECK(want_direct > 0.05 && want_direct < 0.08); /* the free MB and the fast layer pull it down */
    CHECK_NEAR(convsel_model_network_weights_ms(m, cpu, j_direct, &big, 1), want_direct * big_mb, 1e-9);
    const double want_wino = 0.2 / (sample_weights_mb(&s[N]) + 1.0);
    CHECK_NEAR(convsel_model_network_weights_ms(m, cpu, j_wino, &big, 2), want_wino * big_mb, 1e-9);
    CHECK_EQ(convsel_model_network_weights_ms(m, cpu, j_wino, &big, 1), 0.0);
    CHECK_EQ(convsel_model_network_weights_ms(m, cpu, j_direct, &big, 2), 0.0);
    CHECK_EQ(convsel_model_network_weights_ms(m, cpu, 2, &big, 1), 0.0);
    CHECK_EQ(convsel_model_network_weights_ms(m, cpu, CONVSEL_NETWORK_PRIMITIVES, &big, 1), 0.0);
    convsel_calibration_info info;
    CHECK_EQ(convsel_model_calibration(m, 0, &info), CONVSEL_OK);
    CHECK_EQ(info.network_samples, n - 1);
    CHECK_EQ(info.network_price_min[0], 0.0);
    CHECK_NEAR(info.network_price_max[0], want_direct, 1e-12);
    CHECK_NEAR(info.network_price_max[1], want_wino, 1e-12);
    CHECK_EQ(info.network_price_max[2], 0.0);
    CHECK_NEAR(info.network_ms_per_mb[j_direct][0], want_direct, 1e-12);
    CHECK_NEAR(info.network_ms_per_mb[j_wino][1], want_wino, 1e-12);
    CHECK_EQ(info.network_ms_per_mb[j_wino][0], 0.0);
    CHECK_EQ(info.network_ms_per_mb[2][0], 0.0);
    /* A layer far slower: clamped. */
    convsel_conv_sample slow = s[5];
    slow.network_ms = slow.alone_ms + 1000.0;
    convsel_model *clamped = reread(m, "clamped");
    CHECK_EQ(convsel_model_calibrate_network(clamped, cpu, &slow, 1), CONVSEL_OK);
    CHECK_NEAR(convsel_model_network_weights_ms(clamped, cpu, j_direct, &big, 1), big_mb, 1e-9);
    convsel_model_destroy(clamped);
    /* Another CPU: nothing. */
    convsel_fingerprint other = *cpu;
    snprintf(other.model_name, sizeof other.model_name, "another CPU");
    CHECK_EQ(convsel_model_network_weights_ms(m, &other, j_direct, &big, 1), 0.0);
    /* The selector's price carries it; predict does not. */
    double predicted = 0.0, priced = 0.0;
    CHECK_EQ(convsel_model_predict_ms(m, &big, 1, direct, cpu, &predicted), CONVSEL_OK);
    convsel_model_costs mc = {.model = m, .cpu = *cpu, .ignore_runs_as = 1};
    convsel_cost_source costs = convsel_model_costs_source(&mc);
    CHECK_EQ(costs.conv_ms(costs.ctx, &big, 1, direct, &priced), CONVSEL_OK);
    CHECK_NEAR(priced, predicted + want_direct * big_mb, 1e-9 * priced);
    const convsel_problem *batch[1] = {&big};
    size_t prims[1] = {direct};
    double batch_ms[1] = {0};
    convsel_status batch_st[1];
    CHECK_EQ(costs.conv_ms_batch(costs.ctx, 1, batch, 1, prims, batch_ms, batch_st), CONVSEL_OK);
    CHECK_EQ(batch_st[0], CONVSEL_OK);
    CHECK_NEAR(batch_ms[0], priced, 1e-9 * priced);

    /* Bad samples, and a model not calibrated for the CPU; none changes anything. */
    convsel_conv_sample bad = s[0];
    bad.alone_ms = 0.0;
    CHECK_EQ(convsel_model_calibrate_network(m, cpu, &bad, 1), CONVSEL_INVALID_ARGUMENT);
    bad = s[0];
    bad.network_ms = INFINITY;
    CHECK_EQ(convsel_model_calibrate_network(m, cpu, &bad, 1), CONVSEL_INVALID_ARGUMENT);
    bad = s[0];
    bad.primitive = convsel_primitive_count();
    CHECK_EQ(convsel_model_calibrate_network(m, cpu, &bad, 1), CONVSEL_INVALID_ARGUMENT);
    bad = s[0];
    bad.threads = 0;
    CHECK_EQ(convsel_model_calibrate_network(m, cpu, &bad, 1), CONVSEL_INVALID_ARGUMENT);
    bad = s[0];
    memset(&bad.problem, 0, sizeof bad.problem);
    CHECK_EQ(convsel_model_calibrate_network(m, cpu, &bad, 1), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_model_calibrate_network(m, &other, s, n), CONVSEL_NOT_FOUND);
    CHECK_EQ(convsel_model_calibrate_network(m, NULL, s, n), CONVSEL_INVALID_ARGUMENT);
    CHECK_NEAR(convsel_model_network_weights_ms(m, cpu, j_direct, &big, 1), want_direct * big_mb, 1e-9);

    /* A file round trip keeps the prices. */
    convsel_model *back = reread(m, "round trip");
    CHECK_NEAR(convsel_model_network_weights_ms(back, cpu, j_wino, &big, 2), want_wino * big_mb, 1e-9);
    convsel_model_destroy(back);
    /* A file whose in-network map has another key in place of the prices
     * (the thirty-sixth session's factors) is refused, naming them. */
    uint8_t *data = NULL;
    size_t size = 0;
    CHECK_EQ(convsel_model_serialize(m, &data, &size), CONVSEL_OK);
    const size_t cold_at = doubles_after(data, size, "ms_per_mb", 0);
    const size_t price_at = doubles_after(data, size, "ms_per_mb", cold_at);
    CHECK(cold_at > 0 && price_at > cold_at);
    const size_t key_at = price_at - 3 - strlen("ms_per_mb"); /* a 16-bit array header follows the key */
    CHECK(memcmp(data + key_at, "ms_per_mb", strlen("ms_per_mb")) == 0);
    data[key_at] = 'x';
    convsel_model *old = NULL;
    CHECK_EQ(convsel_model_parse(data, size, "factors", &old), CONVSEL_CORRUPT);
    CHECK(old == NULL);
    CHECK_MSG(strstr(convsel_last_error(), "in-network weights prices lack") != NULL, "%s", convsel_last_error());
    free(data);
    /* A negative price (the sign bit of onednn_direct's at 1 thread) is refused. */
    check_negative_refused(m, "ms_per_mb", "ms_per_mb", j_direct * CONVSEL_REORDER_MODEL_THREADS,
                           "negative in-network weights price");

    /* Refitting on nothing takes the prices away. */
    convsel_model *twice = reread(m, "twice");
    CHECK_EQ(convsel_model_calibrate_network(twice, cpu, NULL, 0), CONVSEL_OK);
    CHECK_EQ(convsel_model_network_weights_ms(twice, cpu, j_direct, &big, 1), 0.0);
    convsel_model_destroy(twice);
    return m;
}

int main(void)
{
    test_names();
    test_regret_log();

    convsel_dataset *src = NULL;
    CHECK_EQ(syn_dataset(5, 6, 20, 150, 0.03, &src), CONVSEL_OK);
    convsel_train_params tp;
    convsel_train_params_default(&tp);
    tp.trees = 200;
    convsel_model *source;
    const convsel_dataset *sets[1] = {src};
    CHECK_EQ(convsel_model_train(sets, 1, &tp, NULL, NULL, &source), CONVSEL_OK);

    convsel_dataset *target = NULL, *train = NULL, *test = NULL;
    CHECK_EQ(syn_target_dataset(9, 300, 0.03, &target), CONVSEL_OK);
    CHECK_EQ(convsel_dataset_split(target, 0.3, 4, CONVSEL_SPLIT_BY_CONFIG, &train, &test), CONVSEL_OK);
    pool p;
    pool_build(train, source, &p);
    CHECK(p.n > 100);

    test_choose(source, &p);
    test_candidates_from_dataset(source);
    test_default_method();
    test_errors(source, train);
    test_planted_linear(source, test);
    test_paired(source, test);

    convsel_fingerprint cpu;
    syn_target_fingerprint(&cpu);
    size_t chosen[K_SAMPLES];
    CHECK_EQ(convsel_calibrate_choose(source, p.cand, p.n, K_SAMPLES, 1, &cpu, chosen), CONVSEL_OK);
    convsel_dataset *samples = subset(train, &p, chosen, K_SAMPLES);

    /* Accuracy on held-out target configurations. The target's primitives
     * moved by 0.6× to 2.5× relative to each other, so the source ranks
     * badly there; calibration must fix most of it. */
    convsel_metrics before = eval(source, test);
    convsel_model *both = calibrate(source, samples, CONVSEL_CALIBRATE_BOTH);
    convsel_model *linear = calibrate(source, samples, CONVSEL_CALIBRATE_LINEAR);
    convsel_model *trees = calibrate(source, samples, CONVSEL_CALIBRATE_TREES);
    convsel_metrics after = eval(both, test), after_linear = eval(linear, test), after_trees = eval(trees, test);
    printf("source:     mape %.3f top1 %.3f spearman %.3f regret %.3f\n", before.mape, before.top1, before.spearman,
           before.regret_mean);
    printf("linear:     mape %.3f top1 %.3f spearman %.3f regret %.3f\n", after_linear.mape, after_linear.top1,
           after_linear.spearman, after_linear.regret_mean);
    printf("trees:      mape %.3f top1 %.3f spearman %.3f regret %.3f\n", after_trees.mape, after_trees.top1,
           after_trees.spearman, after_trees.regret_mean);
    printf("both:       mape %.3f top1 %.3f spearman %.3f regret %.3f\n", after.mape, after.top1, after.spearman,
           after.regret_mean);
    CHECK_MSG(after.mape < 0.4 * before.mape && after.mape < 0.3, "mape %.3f -> %.3f", before.mape, after.mape);
    CHECK_MSG(after.top1 >= before.top1 + 0.15 && after.top1 >= 0.8, "top1 %.3f -> %.3f", before.top1, after.top1);
    CHECK_MSG(after.spearman >= before.spearman + 0.3, "spearman %.3f -> %.3f", before.spearman, after.spearman);
    CHECK_MSG(after.regret_mean < 0.5 * before.regret_mean, "regret %.3f -> %.3f", before.regret_mean,
              after.regret_mean);
    CHECK(after_linear.mape < 0.6 * before.mape);
    CHECK(after_trees.mape < 0.6 * before.mape);

    test_parse_damaged(both);
    convsel_model *with_reorders = test_reorder_scale(both, &cpu);
    test_reorder_offset(both, &cpu);
    test_reorder_pair_lines(both, &cpu);
    test_parse_damaged(with_reorders);
    convsel_model *with_cold = test_cold_price(with_reorders, &cpu);
    test_parse_damaged(with_cold);
    convsel_model *with_network = test_network_weights(with_cold, &cpu);
    test_parse_damaged(with_network);
    convsel_model_destroy(with_network);
    convsel_model_destroy(with_cold);
    convsel_model_destroy(with_reorders);
    test_pooled_auto(source, samples, test, &cpu);
    test_linear_or_both(source, samples, train, test, &cpu);
    test_retrain(source, src, samples, test, &cpu);
    convsel_dataset_destroy(src);

    /* Provenance. */
    CHECK_EQ(convsel_model_calibration_count(both), 1);
    convsel_calibration_info info;
    CHECK_EQ(convsel_model_calibration(both, 0, &info), CONVSEL_OK);
    CHECK_STR(info.source_model, convsel_model_id(source));
    CHECK_EQ(info.method, CONVSEL_CALIBRATE_BOTH);
    CHECK_EQ(info.samples, K_SAMPLES);
    size_t conv_records = convsel_dataset_size(samples);
    CHECK_EQ(info.records, conv_records);
    CHECK_EQ(info.seed, 7);
    CHECK(info.residual_trees > 0);
    /* The thread counts the samples measured, as read back from a file. */
    {
        uint64_t want = 0;
        for (size_t i = 0; i < convsel_dataset_size(samples); i++)
            want |= convsel_threads_bit(convsel_dataset_record(samples, i)->threads);
        CHECK(want != 0);
        CHECK_EQ(info.threads_mask, want);
        convsel_model *back = reread(both, "threads");
        convsel_calibration_info again;
        CHECK_EQ(convsel_model_calibration(back, 0, &again), CONVSEL_OK);
        CHECK_EQ(again.threads_mask, want);
        convsel_model_destroy(back);
        CHECK_EQ(convsel_threads_bit(0), 0);
        CHECK_EQ(convsel_threads_bit(1), 1);
        CHECK_EQ(convsel_threads_bit(16), (uint64_t)1 << 15);
        CHECK_EQ(convsel_threads_bit(64), convsel_threads_bit(1000));
        /* A thread count of 0 or 65 in the file is corrupt: the first count's
         * byte (a positive fixint after the key) made 0, then 65. */
        uint8_t *data;
        size_t size;
        CHECK_EQ(convsel_model_serialize(both, &data, &size), CONVSEL_OK);
        size_t at = 0, from = 0;
        for (size_t i = 0; i + 13 < size && !from; i++)
            if (memcmp(data + i, "\xac" "calibrations", 13) == 0)
                from = i;
        for (size_t i = from; from && i + 8 < size && !at; i++)
            if (memcmp(data + i, "\xa7threads", 8) == 0)
                at = i + 8;
        CHECK(at > 0);
        CHECK((data[at] & 0xf0) == 0x90 && data[at + 1] >= 1 && data[at + 1] <= 64);
        for (int bad = 0; bad < 2; bad++) {
            uint8_t keep = data[at + 1];
            data[at + 1] = bad ? 65 : 0;
            convsel_model *m = NULL;
            CHECK_EQ(convsel_model_parse(data, size, "bad threads", &m), CONVSEL_CORRUPT);
            CHECK(m == NULL);
            CHECK_MSG(strstr(convsel_last_error(), "thread count") != NULL, "%s", convsel_last_error());
            data[at + 1] = keep;
        }
        free(data);
    }
    CHECK(convsel_fingerprint_same_cpu(&info.cpu, &cpu));
    CHECK(convsel_fingerprint_same_cpu(convsel_model_fingerprint(both, 0), &cpu));
    CHECK(strcmp(convsel_model_id(both), convsel_model_id(source)) != 0);
    /* The cross-validated error estimates the held-out one, and is the
     * model's uncertainty. */
    {
        double sum = 0;
        size_t n = 0;
        for (size_t i = 0; i < convsel_dataset_size(test); i++) {
            const convsel_record *r = convsel_dataset_record(test, i);
            size_t j;
            if (convsel_model_primitive_find(both, r->primitive, &j) != CONVSEL_OK)
                continue;
            convsel_model_query q = {.problem = &r->problem, .threads = r->threads, .primitive = j, .cpu = &cpu};
            double ms;
            CHECK_EQ(convsel_model_predict_batch(both, &q, 1, &ms), CONVSEL_OK);
            sum += (log(ms) - log(r->median_ms)) * (log(ms) - log(r->median_ms));
            n++;
        }
        double held_out = sqrt(sum / (double)n);
        CHECK_EQ(convsel_model_calibration(both, 0, &info), CONVSEL_OK);
        printf("cv rmse_log %.3f, held-out %.3f\n", info.cv_rmse_log, held_out);
        CHECK_MSG(info.cv_rmse_log > 0.4 * held_out && info.cv_rmse_log < 2.5 * held_out,
                  "cv rmse_log %.3f, held-out %.3f", info.cv_rmse_log, held_out);
        CHECK_NEAR(convsel_model_uncertainty(both), info.cv_rmse_log, 0);
        CHECK(convsel_model_uncertainty(source) != info.cv_rmse_log);
        /* Two configurations: nothing to cross-validate with. */
        convsel_dataset *two_configs = subset(train, &p, chosen, 2);
        convsel_model *small = calibrate(source, two_configs, CONVSEL_CALIBRATE_BOTH);
        CHECK_EQ(convsel_model_calibration(small, 0, &info), CONVSEL_OK);
        CHECK_EQ(info.samples, 2);
        CHECK(info.cv_rmse_log == 0);
        convsel_model_destroy(small);
        convsel_dataset_destroy(two_configs);
    }
    CHECK_EQ(convsel_model_calibration(linear, 0, &info), CONVSEL_OK);
    CHECK_EQ(info.residual_trees, 0);
    CHECK_EQ(info.method, CONVSEL_CALIBRATE_LINEAR);

    /* Save → load: the same bytes' id and identical predictions, for the
     * new CPU (explicitly and by default) and for the source's CPU, where
     * the calibration does not apply. */
    char path[256];
    snprintf(path, sizeof path, "/tmp/test_calibrate_%ld.msgpack", (long)getpid());
    CHECK_EQ(convsel_model_save(both, path), CONVSEL_OK);
    convsel_model *loaded = NULL;
    CHECK_EQ(convsel_model_load(path, &loaded), CONVSEL_OK);
    unlink(path);
    if (loaded) {
        CHECK_STR(convsel_model_id(loaded), convsel_model_id(both));
        CHECK_EQ(convsel_model_calibration_count(loaded), 1);
        convsel_fingerprint src_cpu;
        syn_fingerprint(&src_cpu);
        static double x[4000], y[4000], z[4000];
        size_t nx, ny, nz;
        predict_all(both, test, &cpu, x, &nx);
        predict_all(loaded, test, &cpu, y, &ny);
        CHECK_EQ(nx, ny);
        CHECK(memcmp(x, y, nx * sizeof *x) == 0);
        predict_all(loaded, test, NULL, y, &ny);
        CHECK(memcmp(x, y, nx * sizeof *x) == 0);
        predict_all(loaded, test, &src_cpu, y, &ny);
        predict_all(source, test, &src_cpu, z, &nz);
        CHECK(memcmp(y, z, ny * sizeof *y) == 0);
        predict_all(source, test, &cpu, z, &nz);
        CHECK(memcmp(x, z, nx * sizeof *x) != 0);
    }

    /* Calibrating again for the same CPU replaces the calibration;
     * another CPU adds one, and leaves the first CPU's predictions alone. */
    convsel_model *again = calibrate(both, samples, CONVSEL_CALIBRATE_LINEAR);
    CHECK_EQ(convsel_model_calibration_count(again), 1);
    CHECK_EQ(convsel_model_calibration(again, 0, &info), CONVSEL_OK);
    CHECK_STR(info.source_model, convsel_model_id(both));
    {
        static double x[4000], y[4000];
        size_t nx, ny;
        predict_all(again, test, &cpu, x, &nx);
        predict_all(linear, test, &cpu, y, &ny);
        CHECK(memcmp(x, y, nx * sizeof *x) == 0);
    }
    convsel_dataset *third;
    CHECK_EQ(convsel_dataset_create(&third), CONVSEL_OK);
    convsel_fingerprint third_cpu = cpu;
    snprintf(third_cpu.model_name, sizeof third_cpu.model_name, "Synthetic third CPU");
    uint32_t fi;
    CHECK_EQ(convsel_dataset_add_fingerprint(third, &third_cpu, &fi), CONVSEL_OK);
    for (size_t i = 0; i < convsel_dataset_size(samples); i++) {
        convsel_record r = *convsel_dataset_record(samples, i);
        r.fingerprint = fi;
        r.min_ms *= 3, r.p10_ms *= 3, r.median_ms *= 3, r.p90_ms *= 3;
        CHECK_EQ(convsel_dataset_append(third, &r), CONVSEL_OK);
    }
    convsel_model *two = calibrate(both, third, CONVSEL_CALIBRATE_BOTH);
    CHECK_EQ(convsel_model_calibration_count(two), 2);
    CHECK(convsel_fingerprint_same_cpu(convsel_model_fingerprint(two, 0), &third_cpu));
    {
        static double x[4000], y[4000];
        size_t nx, ny;
        predict_all(two, test, &cpu, x, &nx);
        predict_all(both, test, &cpu, y, &ny);
        CHECK(memcmp(x, y, nx * sizeof *x) == 0);
        predict_all(two, test, &third_cpu, x, &nx);
        double ratio = 0;
        for (size_t i = 0; i < nx; i++)
            ratio += log(x[i] / y[i]) / (double)nx;
        CHECK_MSG(fabs(ratio - log(3.0)) < 0.15, "third CPU: mean log ratio %.3f, want log 3", ratio);
    }
    convsel_dataset_destroy(third);
    convsel_model_destroy(two);
    convsel_model_destroy(again);

    convsel_model_destroy(loaded);
    convsel_model_destroy(both);
    convsel_model_destroy(linear);
    convsel_model_destroy(trees);
    convsel_dataset_destroy(samples);
    free(p.cand);
    free(p.key);
    convsel_dataset_destroy(train);
    convsel_dataset_destroy(test);
    convsel_dataset_destroy(target);
    convsel_model_destroy(source);
    return CHECK_DONE();
}
