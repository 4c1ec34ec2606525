/* The measurement engine: interleaved timing statistics, option checks, and
 * convsel_measure_problem on a tiny layer. Real-clock checks assert nothing
 * beyond a 3× work ratio, which survives any noise this machine makes; the
 * retry, whose decisions hang on medians, is checked on a virtual clock. */
#include <math.h>
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

/* A virtual clock: the candidates below advance it by the durations they are
 * given, so the statistics and the retry's decisions follow from those
 * durations exactly, whatever else the machine runs. It counts ticks of
 * 1/1024 s, so that every difference and ratio of its readings is exact. */
static uint64_t virtual_ticks;
#define TICK_MS (1000.0 / 1024.0)

static double virtual_clock(void)
{
    return (double)virtual_ticks / 1024.0;
}

/* A candidate whose calls take `ticks`, except calls numbered (from 1) in
 * [first, last], which take slow, and those in [first2, last2], slow2: bursts
 * of other load, as the candidate sees them. */
struct bursty {
    int calls;
    uint64_t ticks, slow;
    int first, last, first2, last2;
    uint64_t slow2;
};

static convsel_status bursty_run(void *ctx)
{
    struct bursty *c = ctx;
    const int call = ++c->calls;
    uint64_t ticks = c->ticks;
    if (call >= c->first && call <= c->last)
        ticks = c->slow;
    else if (call >= c->first2 && call <= c->last2)
        ticks = c->slow2;
    virtual_ticks += ticks;
    return CONVSEL_OK;
}

/* retry_ratio: a measurement whose median is over R x its minimum is made
 * again, and the one with the lower medians (geometric mean over the
 * candidates) kept. Each measurement is one warm-up call and nine timed ones
 * (calls 1..10, then 11..20). Timed on the virtual clock: a first version
 * timed real busy loops and failed on CI, where one preemption of a 0.1 ms
 * run decided a median. */
static void test_retry(void)
{
    convsel_timing_options opts;
    convsel_timing_options_default(&opts);
    CHECK(opts.retry_ratio == 3.0);
    CHECK(opts.clock == NULL);
    opts.clock = virtual_clock;
    opts.warmup_s = 0.0; /* one warm-up run */
    opts.min_rounds = opts.max_rounds = 9;
    opts.max_time_s = 100.0;
    convsel_timed_fn fns[2] = {bursty_run, bursty_run};
    convsel_timing t[2];

    /* Calls 2..7 take 20x as long, six of the first measurement's nine timed
     * runs: its median is 20x its minimum. Off, that is the result; on, the
     * clean second measurement replaces it. */
    for (int retry = 0; retry < 2; retry++) {
        struct bursty c = {0, 10, 200, 2, 7, 0, -1, 0};
        struct bursty calm = {0, 20, 0, 0, -1, 0, -1, 0};
        void *ctxs[2] = {&c, &calm};
        opts.retry_ratio = retry ? 3.0 : 0.0;
        CHECK_EQ(convsel_time_interleaved(2, fns, ctxs, &opts, t), CONVSEL_OK);
        CHECK_EQ(t[0].runs, 9);
        CHECK_NEAR(t[0].min_ms, 10 * TICK_MS, 1e-9);
        CHECK_NEAR(t[1].median_ms, 20 * TICK_MS, 1e-9);
        if (!retry) {
            CHECK_EQ(c.calls, 10);
            CHECK(t[0].retried == 0 && t[1].retried == 0);
            CHECK_NEAR(t[0].median_ms, 200 * TICK_MS, 1e-9);
        } else {
            CHECK_EQ(c.calls, 20);
            CHECK_EQ(calm.calls, 20); /* every candidate measured again, to stay comparable */
            CHECK(t[0].retried == 1 && t[1].retried == 1);
            CHECK_NEAR(t[0].median_ms, 10 * TICK_MS, 1e-9);
            CHECK_NEAR(t[0].p90_ms, 10 * TICK_MS, 1e-9);
        }
    }
    /* The ratio is strict and per candidate: a median of exactly 3x its
     * minimum is not retried, one just over is. Calls 2..6 (five of nine
     * timed runs, the median) take 3x as long, or 3.1x. */
    for (int over = 0; over < 2; over++) {
        struct bursty c = {0, 10, over ? 31 : 30, 2, 6, 0, -1, 0};
        struct bursty calm = {0, 20, 0, 0, -1, 0, -1, 0};
        void *ctxs[2] = {&calm, &c};
        opts.retry_ratio = 3.0;
        CHECK_EQ(convsel_time_interleaved(2, fns, ctxs, &opts, t), CONVSEL_OK);
        CHECK_EQ(c.calls, over ? 20 : 10);
        CHECK_EQ(t[1].retried, over);
        CHECK_NEAR(t[1].median_ms, (over ? 10 : 30) * TICK_MS, 1e-9);
    }
    /* The second measurement slowed too: in all its runs (calls 11..20), and
     * 3x more than the first's burst, so its medians are higher and the first
     * is kept, though its spread is the smaller; in four of its nine timed
     * runs (12..15), under its median, so it is kept. */
    for (int worse = 1; worse >= 0; worse--) {
        struct bursty c = {0, 10, 200, 2, 7, worse ? 11 : 12, worse ? 20 : 15, 600};
        struct bursty calm = {0, 20, 0, 0, -1, 0, -1, 0};
        void *ctxs[2] = {&c, &calm};
        CHECK_EQ(convsel_time_interleaved(2, fns, ctxs, &opts, t), CONVSEL_OK);
        CHECK_EQ(c.calls, 20);
        CHECK(t[0].retried == 1 && t[1].retried == 1);
        CHECK_NEAR(t[0].median_ms, (worse ? 200 : 10) * TICK_MS, 1e-9);
        CHECK_NEAR(t[0].p90_ms, (worse ? 200 : 600) * TICK_MS, 1e-9);
    }
    /* The choice is by the geometric mean over all candidates: here the
     * second measurement is clean for candidate 0 (median 200 -> 10 ticks)
     * but slows candidate 1 from 20 to 600 ticks in every run, 30x against 20x: the
     * first is kept, whole (measurements are never mixed). */
    {
        struct bursty c = {0, 10, 200, 2, 7, 0, -1, 0};
        struct bursty calm = {0, 20, 600, 11, 20, 0, -1, 0};
        void *ctxs[2] = {&c, &calm};
        CHECK_EQ(convsel_time_interleaved(2, fns, ctxs, &opts, t), CONVSEL_OK);
        CHECK_EQ(c.calls, 20);
        CHECK_NEAR(t[0].median_ms, 200 * TICK_MS, 1e-9);
        CHECK_NEAR(t[1].median_ms, 20 * TICK_MS, 1e-9);
    }
    /* A clean measurement is made once. */
    {
        struct bursty a = {0, 10, 0, 0, -1, 0, -1, 0}, b = {0, 30, 0, 0, -1, 0, -1, 0};
        void *ctxs[2] = {&a, &b};
        CHECK_EQ(convsel_time_interleaved(2, fns, ctxs, &opts, t), CONVSEL_OK);
        CHECK(a.calls == 10 && t[0].retried == 0 && t[1].retried == 0);
    }
    /* Out of range: between 0 and 1, negative, infinite, NaN. */
    const double bad[] = {0.5, -1.0, INFINITY, NAN};
    for (int i = 0; i < 4; i++) {
        struct busy a = {10, 0};
        convsel_timed_fn one[1] = {busy_run};
        void *ctx[1] = {&a};
        opts.retry_ratio = bad[i];
        CHECK_EQ(convsel_time_interleaved(1, one, ctx, &opts, t), CONVSEL_INVALID_ARGUMENT);
        CHECK(strstr(convsel_last_error(), "retry_ratio") != NULL);
    }
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
    o.retry_ratio = 0; /* runs of a few ns spread over 3x on a busy machine; the retry has its own test */
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
    o.retry_ratio = 0; /* empty runs: their spread is the clock's; the retry has its own test */
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

/*
 * What else the machine did: /proc/stat's first line parsed (busy = user,
 * nice, system, irq, softirq; steal apart; an old kernel's four fields),
 * other lines and junk refused; between two marks, the others' CPU time per
 * second (this process's own taken out, never below 0) and the steal; marks
 * without /proc/stat or without time between give -1; and real marks here.
 */
static void test_busy(void)
{
    double busy = -1, steal = -1;
    CHECK_EQ(convsel_proc_stat_parse("cpu  100 20 30 400 5 6 7 8 9 0\n", &busy, &steal), 0);
    CHECK_EQ(busy, 163.0);
    CHECK_EQ(steal, 8.0);
    CHECK_EQ(convsel_proc_stat_parse("cpu  1 2 3 4\n", &busy, &steal), 0);
    CHECK_EQ(busy, 6.0);
    CHECK_EQ(steal, 0.0);
    CHECK_EQ(convsel_proc_stat_parse("cpu0 1 2 3 4 5 6 7 8\n", &busy, &steal), -1);
    CHECK_EQ(convsel_proc_stat_parse("intr 1 2 3 4\n", &busy, &steal), -1);
    CHECK_EQ(convsel_proc_stat_parse("cpu  1 2 x\n", &busy, &steal), -1);
    CHECK_EQ(convsel_proc_stat_parse(NULL, &busy, &steal), -1);

    convsel_busy_mark a = {10.0, 100.0, 5.0, 20.0}, b = {12.0, 104.0, 5.5, 21.0};
    double others = 0, stolen = 0;
    CHECK_EQ(convsel_busy_between(&a, &b, &others, &stolen), 0);
    CHECK_NEAR(others, 1.5, 1e-12); /* (4 - 1) CPU-seconds over 2 s */
    CHECK_NEAR(stolen, 0.25, 1e-12);
    b.self_s = 26.0; /* the process counted more than the machine: 0, not negative */
    CHECK_EQ(convsel_busy_between(&a, &b, &others, NULL), 0);
    CHECK_EQ(others, 0.0);
    convsel_busy_mark unknown = b;
    unknown.busy_s = unknown.steal_s = -1.0;
    CHECK_EQ(convsel_busy_between(&a, &unknown, &others, &stolen), -1);
    CHECK(others == -1.0 && stolen == -1.0);
    CHECK_EQ(convsel_busy_between(&a, &a, &others, &stolen), -1);

    convsel_busy_mark m0, m1;
    convsel_busy_mark_now(&m0);
    volatile double x = 0;
    for (long i = 0; i < 20000000; i++)
        x += 1e-9;
    convsel_busy_mark_now(&m1);
    CHECK(m0.busy_s >= 0 && m1.busy_s >= m0.busy_s); /* Linux has /proc/stat */
    CHECK(m1.self_s > m0.self_s && m1.wall_s > m0.wall_s);
    CHECK_EQ(convsel_busy_between(&m0, &m1, &others, &stolen), 0);
    CHECK(others >= 0 && stolen >= 0);
}

int main(void)
{
    test_busy();
    test_options();
    test_interleaved();
    test_failure();
    test_retry();
    test_settle();
    test_round_order();
    test_measure_problem();
    return CHECK_DONE();
}
