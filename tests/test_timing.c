/* The measurement engine: interleaved timing statistics, option checks, and
 * convsel_measure_problem on a tiny layer. Never asserts on a timing value
 * beyond a 3× work ratio, which survives any noise this machine makes. */
#include <omp.h>
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "check.h"
#include "convsel.h"

/* A busy loop of `work` dependent steps; the volatile sink keeps it alive. */
struct busy {
    uint64_t work;
    int calls;
};

static volatile uint64_t busy_sink;

static convsel_status busy_run(void *ctx)
{
    struct busy *b = ctx;
    uint64_t x = 0x12345678u + (uint64_t)b->calls;
    for (uint64_t i = 0; i < b->work; i++)
        x = x * 6364136223846793005ull + 1442695040888963407ull;
    busy_sink = x;
    b->calls++;
    return CONVSEL_OK;
}

static convsel_status failing_run(void *ctx)
{
    int *calls = ctx;
    return ++*calls >= 3 ? CONVSEL_BACKEND_ERROR : CONVSEL_OK;
}

static int ordered(const convsel_timing *t)
{
    return t->min_ms > 0.0 && t->min_ms <= t->p10_ms && t->p10_ms <= t->median_ms && t->median_ms <= t->p90_ms;
}

static void test_interleaved(void)
{
    struct busy light = {200000, 0}, heavy = {600000, 0};
    convsel_timed_fn fns[2] = {busy_run, busy_run};
    void *ctxs[2] = {&light, &heavy};
    convsel_timing t[2];
    convsel_timing_options opts;
    convsel_timing_options_default(&opts);
    opts.warmup_s = 0.01;
    opts.min_rounds = 7;
    opts.max_rounds = 40;
    opts.max_time_s = 0.3;

    CHECK_EQ(convsel_time_interleaved(2, fns, ctxs, &opts, t), CONVSEL_OK);
    for (int i = 0; i < 2; i++) {
        CHECK_MSG(t[i].runs >= opts.min_rounds && t[i].runs <= opts.max_rounds, "runs %d", t[i].runs);
        CHECK_MSG(ordered(&t[i]), "min %g p10 %g median %g p90 %g", t[i].min_ms, t[i].p10_ms, t[i].median_ms,
                  t[i].p90_ms);
    }
    CHECK_EQ(t[0].runs, t[1].runs);
    /* Each candidate ran its timed rounds plus at least one warm-up. */
    CHECK(light.calls >= t[0].runs + 1);
    CHECK(heavy.calls >= t[1].runs + 1);
    CHECK_MSG(t[1].median_ms > t[0].median_ms, "heavy %g ms, light %g ms", t[1].median_ms, t[0].median_ms);

    /* max_rounds bounds the runs even when the target is unreachable. */
    opts.min_rounds = 3;
    opts.max_rounds = 4;
    opts.target_rel_ci = 0.0;
    opts.max_time_s = 100.0;
    CHECK_EQ(convsel_time_interleaved(2, fns, ctxs, &opts, t), CONVSEL_OK);
    CHECK_EQ(t[0].runs, 4);
    CHECK_EQ(t[1].runs, 4);

    /* A single candidate and default options (NULL) work too. */
    struct busy tiny = {1000, 0};
    convsel_timed_fn one_fn[1] = {busy_run};
    void *one_ctx[1] = {&tiny};
    CHECK_EQ(convsel_time_interleaved(1, one_fn, one_ctx, NULL, t), CONVSEL_OK);
    CHECK(t[0].runs >= 5);
    CHECK(ordered(&t[0]));
}

static void test_failure(void)
{
    int calls = 0;
    struct busy light = {1000, 0};
    convsel_timed_fn fns[2] = {busy_run, failing_run};
    void *ctxs[2] = {&light, &calls};
    convsel_timing t[2];
    CHECK_EQ(convsel_time_interleaved(2, fns, ctxs, NULL, t), CONVSEL_BACKEND_ERROR);
    CHECK(strstr(convsel_last_error(), "candidate 1") != NULL);
}

static void test_options(void)
{
    struct busy b = {10, 0};
    convsel_timed_fn fns[1] = {busy_run};
    void *ctxs[1] = {&b};
    convsel_timing t[1];
    convsel_timing_options d, o;
    convsel_timing_options_default(&d);
    CHECK_NEAR(d.warmup_s, 0.05, 1e-12);
    CHECK_EQ(d.min_rounds, 5);
    CHECK_EQ(d.max_rounds, 1000);
    CHECK_NEAR(d.max_time_s, 2.0, 1e-12);
    CHECK_NEAR(d.target_rel_ci, 0.02, 1e-12);
    CHECK_NEAR(d.settle_s, 0.15, 1e-12);
    CHECK_EQ(d.flush_bytes, 0);

    CHECK_EQ(convsel_time_interleaved(0, fns, ctxs, &d, t), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_time_interleaved(1, NULL, ctxs, &d, t), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_time_interleaved(1, fns, ctxs, &d, NULL), CONVSEL_INVALID_ARGUMENT);
    convsel_timed_fn no_fn[1] = {NULL};
    CHECK_EQ(convsel_time_interleaved(1, no_fn, ctxs, &d, t), CONVSEL_INVALID_ARGUMENT);

    o = d;
    o.min_rounds = 0;
    CHECK_EQ(convsel_time_interleaved(1, fns, ctxs, &o, t), CONVSEL_INVALID_ARGUMENT);
    CHECK(strstr(convsel_last_error(), "min_rounds") != NULL);
    o = d;
    o.max_rounds = 3; /* below min_rounds 5 */
    CHECK_EQ(convsel_time_interleaved(1, fns, ctxs, &o, t), CONVSEL_INVALID_ARGUMENT);
    CHECK(strstr(convsel_last_error(), "max_rounds") != NULL);
    o = d;
    o.warmup_s = -1.0;
    CHECK_EQ(convsel_time_interleaved(1, fns, ctxs, &o, t), CONVSEL_INVALID_ARGUMENT);
    o = d;
    o.max_time_s = NAN;
    CHECK_EQ(convsel_time_interleaved(1, fns, ctxs, &o, t), CONVSEL_INVALID_ARGUMENT);
    o = d;
    o.target_rel_ci = -0.1;
    CHECK_EQ(convsel_time_interleaved(1, fns, ctxs, &o, t), CONVSEL_INVALID_ARGUMENT);
    o = d;
    o.settle_s = -0.5;
    CHECK_EQ(convsel_time_interleaved(1, fns, ctxs, &o, t), CONVSEL_INVALID_ARGUMENT);
    o = d;
    o.flush_bytes = ((size_t)1 << 30) + 1;
    CHECK_EQ(convsel_time_interleaved(1, fns, ctxs, &o, t), CONVSEL_INVALID_ARGUMENT);
    CHECK(strstr(convsel_last_error(), "flush_bytes") != NULL);
    CHECK_EQ(b.calls, 0); /* nothing ran on a rejected call */

    /* With a flush before every timed run the rounds are the same: exactly
     * max_rounds of each candidate, each run timed, the warm-up untouched. */
    o = d;
    o.flush_bytes = (size_t)4 << 20;
    o.min_rounds = o.max_rounds = 7;
    o.warmup_s = 0;
    o.max_time_s = 60;
    CHECK_EQ(convsel_time_interleaved(1, fns, ctxs, &o, t), CONVSEL_OK);
    CHECK_EQ(t[0].runs, 7);
    CHECK_EQ(b.calls, 8); /* one warm-up run, seven timed */
    CHECK(t[0].min_ms <= t[0].median_ms && t[0].median_ms <= t[0].p90_ms);
    o.flush_bytes = 100; /* less than a cache line's worth of lines: harmless */
    CHECK_EQ(convsel_time_interleaved(1, fns, ctxs, &o, t), CONVSEL_OK);
    CHECK_EQ(t[0].runs, 7);
}

/* Every call appends its candidate's id, to check the order of the rounds. */
static int call_log[4096];
static int call_count;

static convsel_status logged_run(void *ctx)
{
    if (call_count < (int)(sizeof call_log / sizeof call_log[0]))
        call_log[call_count++] = *(const int *)ctx;
    return CONVSEL_OK;
}

/* One warm-up run each (warmup_s = 0), then rounds that hold every candidate
 * once, never the same candidate twice in a row, and varied predecessors. */
static void test_round_order(void)
{
    enum { N = 3, ROUNDS = 30 };
    int ids[N] = {0, 1, 2};
    convsel_timed_fn fns[N] = {logged_run, logged_run, logged_run};
    void *ctxs[N] = {&ids[0], &ids[1], &ids[2]};
    convsel_timing t[N];
    convsel_timing_options o;
    convsel_timing_options_default(&o);
    o.warmup_s = 0.0;
    o.min_rounds = ROUNDS;
    o.max_rounds = ROUNDS;
    call_count = 0;
    CHECK_EQ(convsel_time_interleaved(N, fns, ctxs, &o, t), CONVSEL_OK);
    CHECK_EQ(call_count, N + N * ROUNDS);
    for (int i = 0; i < N; i++)
        CHECK_EQ(call_log[i], i); /* warm-up in order */
    int repeats = 0, follows[N][N] = {{0}};
    for (int r = 0; r < ROUNDS; r++) {
        int seen[N] = {0};
        for (int k = 0; k < N; k++)
            seen[call_log[N + r * N + k]]++;
        for (int i = 0; i < N; i++)
            CHECK_EQ(seen[i], 1);
    }
    for (int c = N + 1; c < call_count; c++) {
        repeats += call_log[c] == call_log[c - 1];
        follows[call_log[c]][call_log[c - 1]]++;
    }
    CHECK_EQ(repeats, 0);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N; j++)
            if (i != j)
                CHECK_MSG(follows[i][j] > 0, "candidate %d never follows %d", i, j);
}

static convsel_status one_thread_run(void *ctx)
{
    omp_set_num_threads(1);
    return busy_run(ctx);
}

static convsel_status two_threads_run(void *ctx)
{
    omp_set_num_threads(2);
    return busy_run(ctx);
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* A change of the OpenMP thread count between calls costs a settle pause:
 * the call takes at least settle_s (a lower bound a sleep guarantees, not a
 * performance assertion). */
static void test_settle(void)
{
    struct busy b = {100, 0};
    void *ctxs[1] = {&b};
    convsel_timing t[1];
    convsel_timing_options o;
    convsel_timing_options_default(&o);
    o.warmup_s = 0.0;
    o.min_rounds = 1;
    o.max_rounds = 1;
    o.settle_s = 0.2;
    convsel_timed_fn one[1] = {one_thread_run}, two[1] = {two_threads_run};
    CHECK_EQ(convsel_time_interleaved(1, one, ctxs, &o, t), CONVSEL_OK);
    double t0 = wall_now();
    CHECK_EQ(convsel_time_interleaved(1, two, ctxs, &o, t), CONVSEL_OK);
    CHECK_MSG(wall_now() - t0 >= 0.2, "no settle pause after 1 -> 2 threads (%.3f s)", wall_now() - t0);
    CHECK_EQ(t[0].runs, 1);
    omp_set_num_threads(1);
}

static void test_measure_problem(void)
{
    convsel_problem p;
    CHECK_EQ(convsel_problem_parse("mb1ic8ih8oc8oh8kh3ph1", &p), CONVSEL_OK);
    size_t count = convsel_primitive_count();
    convsel_measurement *m = calloc(count, sizeof *m);
    unsigned char *all = calloc(count, 1);
    convsel_timing_options opts;
    convsel_timing_options_default(&opts);
    opts.warmup_s = 0.005;
    opts.max_time_s = 0.2;
    for (size_t i = 0; i < count; i++)
        all[i] = 1; /* the reference too, so that at least one primitive is applicable */

    CHECK_EQ(convsel_measure_problem(&p, 1, all, &opts, m), CONVSEL_OK);
    const double flops = convsel_problem_flops(&p);
    int applicable = 0;
    for (size_t i = 0; i < count; i++) {
        CHECK_EQ(m[i].primitive, i);
        if (!m[i].applicable) {
            CHECK_MSG(m[i].why[0] != '\0', "%s: inapplicable without a reason", convsel_primitive_name(i));
            continue;
        }
        applicable++;
        CHECK_MSG(m[i].timing.median_ms > 0.0 && ordered(&m[i].timing), "%s: median %g",
                  convsel_primitive_name(i), m[i].timing.median_ms);
        CHECK(m[i].timing.runs >= opts.min_rounds);
        CHECK(m[i].create_ms >= 0.0);
        CHECK_NEAR(m[i].gflops, flops / (m[i].timing.median_ms * 1e-3) / 1e9, 1e-6 * m[i].gflops);
        CHECK(m[i].src_layout >= 0 && m[i].src_layout < CONVSEL_LAYOUT_COUNT);
        CHECK(m[i].dst_layout >= 0 && m[i].dst_layout < CONVSEL_LAYOUT_COUNT);
    }
    CHECK(applicable >= 1);

    /* Default selection: every non-reference primitive; the reference is
     * "not selected". */
    CHECK_EQ(convsel_measure_problem(&p, 1, NULL, &opts, m), CONVSEL_OK);
    for (size_t i = 0; i < count; i++)
        if (convsel_primitive_is_reference(i)) {
            CHECK_EQ(m[i].applicable, 0);
            CHECK_STR(m[i].why, "not selected");
        }

    /* A Winograd primitive cannot compute a 1×1 layer: inapplicable, with a reason. */
    convsel_problem one;
    CHECK_EQ(convsel_problem_parse("mb1ic16ih8oc16oh8kh1", &one), CONVSEL_OK);
    size_t wino = count;
    for (size_t i = 0; i < count && wino == count; i++)
        if (strstr(convsel_primitive_name(i), "winograd"))
            wino = i;
    if (wino < count) {
        memset(all, 0, count);
        all[wino] = 1;
        CHECK_EQ(convsel_measure_problem(&one, 1, all, &opts, m), CONVSEL_OK);
        CHECK_EQ(m[wino].applicable, 0);
        CHECK_MSG(m[wino].why[0] != '\0' && strcmp(m[wino].why, "not selected") != 0, "%s: reason '%s'",
                  convsel_primitive_name(wino), m[wino].why);
    } else {
        printf("no Winograd primitive registered: inapplicable case skipped\n");
    }

    /* Argument checks. */
    CHECK_EQ(convsel_measure_problem(NULL, 1, NULL, &opts, m), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_measure_problem(&p, 0, NULL, &opts, m), CONVSEL_INVALID_ARGUMENT);
    convsel_problem bad = p;
    bad.oh = 99;
    CHECK(convsel_measure_problem(&bad, 1, NULL, &opts, m) != CONVSEL_OK);
    free(m);
    free(all);
}

int main(void)
{
    test_options();
    test_interleaved();
    test_failure();
    test_settle();
    test_round_order();
    test_measure_problem();
    return CHECK_DONE();
}
