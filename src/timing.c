/*
 * The measurement engine: candidates timed interleaved in short rounds.
 *
 * On the shared, noisy machines convsel runs on, the same kernel measured in
 * separate runs drifts by 1.4× while candidates timed against each other in
 * interleaved rounds agree within ~1% (docs: FACTS.md). So every comparison
 * happens here, in one process, one run of each candidate per round.
 *
 * Stopping rule: after min_rounds, stop as soon as every candidate's median is
 * known to ±target_rel_ci, or max_time_s is spent, or max_rounds are done.
 * "Known to" uses the distribution-free confidence interval of a median: with
 * m samples sorted x(1) <= ... <= x(m), the interval [x(l), x(m+1-l)] covers
 * the true median with probability 1 - 2·P(Binomial(m, 1/2) < l), whatever
 * the distribution. We take the largest l keeping that at >= 95%. Timings are
 * skewed and bursty (slow bursts of 10 ms to seconds), so an interval that
 * assumes neither normality nor independence of the tails is the honest
 * choice; it also costs only a sort. It needs m >= 6 to exist at all.
 */
#include <math.h>
#include <omp.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "internal.h"

/* Two-sided confidence of the median interval. */
#define MEDIAN_CI_CONFIDENCE 0.95
/* The largest flush_bytes: 1 GiB. */
#define TIMING_MAX_FLUSH (1 << 30)

void convsel_timing_options_default(convsel_timing_options *opts)
{
    if (!opts)
        return;
    opts->warmup_s = 0.05;
    opts->min_rounds = 5;
    opts->max_rounds = 1000;
    opts->max_time_s = 2.0;
    opts->target_rel_ci = 0.02;
    opts->settle_s = 0.15;
    opts->flush_bytes = 0;
    opts->retry_ratio = 3.0;
    opts->clock = NULL;
}

double convsel_statistic_pick(convsel_statistic statistic, double min_ms, double p10_ms, double median_ms)
{
    switch (statistic) {
    case CONVSEL_STAT_P10:
        return p10_ms;
    case CONVSEL_STAT_MIN:
        return min_ms;
    default:
        return median_ms;
    }
}

static convsel_status check_options(const convsel_timing_options *o)
{
    /* The negated comparisons also reject NaN. */
    if (!(o->warmup_s >= 0.0) || isinf(o->warmup_s))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "timing: warmup_s must be finite and >= 0 (got %g)",
                             o->warmup_s);
    if (o->min_rounds < 1)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "timing: min_rounds must be >= 1 (got %d)", o->min_rounds);
    if (o->max_rounds < o->min_rounds)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "timing: max_rounds (%d) must be >= min_rounds (%d)",
                             o->max_rounds, o->min_rounds);
    if (!(o->max_time_s >= 0.0))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "timing: max_time_s must be >= 0 (got %g)", o->max_time_s);
    if (!(o->target_rel_ci >= 0.0))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "timing: target_rel_ci must be >= 0 (got %g)",
                             o->target_rel_ci);
    if (!(o->settle_s >= 0.0) || o->settle_s > 60.0)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "timing: settle_s must be in [0, 60] (got %g)", o->settle_s);
    if (o->flush_bytes > TIMING_MAX_FLUSH)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "timing: flush_bytes must be at most %d MiB (got %zu bytes)",
                             TIMING_MAX_FLUSH >> 20, o->flush_bytes);
    if (!(o->retry_ratio == 0.0 || (o->retry_ratio >= 1.0 && !isinf(o->retry_ratio))))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "timing: retry_ratio must be 0 (never) or finite and >= 1 (got %g)",
                             o->retry_ratio);
    return CONVSEL_OK;
}

static void sleep_s(double s)
{
    if (s <= 0.0)
        return;
    struct timespec ts;
    ts.tv_sec = (time_t)s;
    ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* Declared in internal.h. Linear interpolation between order statistics
 * (Hyndman-Fan type 7), so min <= p10 <= median <= p90. */
double convsel_quantile(const double *sorted, int m, double q)
{
    double pos = q * (double)(m - 1);
    int lo = (int)floor(pos);
    if (lo >= m - 1)
        return sorted[m - 1];
    double frac = pos - (double)lo;
    return sorted[lo] + frac * (sorted[lo + 1] - sorted[lo]);
}

/*
 * The 1-based rank l of the lower end of the median's confidence interval
 * from m samples (the upper end is m + 1 - l), or 0 when m is too small for
 * any interval to reach the confidence. Binomial terms in log space so m can
 * exceed the 1074 at which 2^-m underflows.
 */
static int median_ci_rank(int m)
{
    const double alpha_half = (1.0 - MEDIAN_CI_CONFIDENCE) / 2.0;
    const double log_half_m = (double)m * log(0.5);
    const double log_m_fact = lgamma((double)m + 1.0);
    double cdf = 0.0; /* P(Binomial(m, 1/2) <= k) */
    int l = 0;
    for (int k = 0; k <= m / 2; k++) {
        cdf += exp(log_m_fact - lgamma((double)k + 1.0) - lgamma((double)(m - k) + 1.0) + log_half_m);
        if (cdf > alpha_half)
            break;
        l = k + 1; /* P(B < k + 1) <= alpha/2: x(k+1) is a valid lower end */
    }
    return l;
}

/* Run times of every candidate, one growing row per candidate. */
struct samples {
    size_t n;
    int count, capacity;
    double *times; /* n × capacity, candidate-major */
    double *sorted; /* scratch of capacity */
};

static convsel_status samples_reserve(struct samples *s, int need)
{
    if (need <= s->capacity)
        return CONVSEL_OK;
    int cap = s->capacity ? s->capacity : 64;
    while (cap < need)
        cap = cap > INT32_MAX / 2 ? need : 2 * cap;
    double *times = malloc(s->n * (size_t)cap * sizeof *times);
    double *sorted = malloc((size_t)cap * sizeof *sorted);
    if (!times || !sorted) {
        free(times);
        free(sorted);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "timing: out of memory for %d samples", cap);
    }
    for (size_t i = 0; i < s->n; i++)
        if (s->count)
            memcpy(times + i * (size_t)cap, s->times + i * (size_t)s->capacity, (size_t)s->count * sizeof *times);
    free(s->times);
    free(s->sorted);
    s->times = times;
    s->sorted = sorted;
    s->capacity = cap;
    return CONVSEL_OK;
}

static const double *samples_sorted(struct samples *s, size_t i)
{
    memcpy(s->sorted, s->times + i * (size_t)s->capacity, (size_t)s->count * sizeof *s->sorted);
    qsort(s->sorted, (size_t)s->count, sizeof *s->sorted, convsel_cmp_double);
    return s->sorted;
}

/* 1 when every candidate's median is known to ±target (relative). */
static int medians_converged(struct samples *s, double target)
{
    int l = median_ci_rank(s->count);
    if (l < 1)
        return 0;
    for (size_t i = 0; i < s->n; i++) {
        const double *x = samples_sorted(s, i);
        double med = convsel_quantile(x, s->count, 0.5);
        double lo = x[l - 1], hi = x[s->count - l];
        double half = CONVSEL_MAX(med - lo, hi - med);
        if (!(med > 0.0) || half > target * med)
            return 0;
    }
    return 1;
}

/* splitmix64, for the order of each round (deterministic, so runs repeat). */
static uint64_t next_random(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/*
 * The order of the next round. A plain rotation (ABC, BCA, CAB) keeps each
 * candidate behind the same predecessor within rounds and, for two
 * candidates, runs each twice in a row at every round boundary (AB|BA), where
 * the second run finds its own data in cache. So: a fresh shuffle per round,
 * and if it would start with the candidate that ended the previous round,
 * that one swaps places with another. Over the rounds every candidate follows
 * every other one about equally often, and never itself.
 */
static void next_order(size_t *order, size_t n, size_t previous_last, uint64_t *state)
{
    for (size_t i = 0; i < n; i++)
        order[i] = i;
    for (size_t i = n - 1; i > 0; i--) {
        size_t j = (size_t)(next_random(state) % (i + 1));
        size_t t = order[i];
        order[i] = order[j];
        order[j] = t;
    }
    if (n > 1 && order[0] == previous_last) {
        size_t j = 1 + (size_t)(next_random(state) % (n - 1));
        order[0] = order[j];
        order[j] = previous_last;
    }
}

/* Writes one byte per cache line of buf[0..n), the lines split among the
 * threads the candidates use, so that each core's private caches are
 * overwritten as well as the shared one. */
static void flush_caches(unsigned char *buf, size_t n)
{
    const size_t line = 64;
    long lines = (long)(n / line);
#pragma omp parallel for schedule(static)
    for (long k = 0; k < lines; k++)
        buf[(size_t)k * line] += 1;
}

/* The OpenMP thread count the previous call left behind (0: none yet). */
static atomic_int last_threads;

/* Now, in seconds, by the options' clock. */
static double now(const convsel_timing_options *opts)
{
    return opts->clock ? opts->clock() : convsel_now();
}

static convsel_status run_candidate(const convsel_timed_fn *fns, void *const *ctxs, size_t i,
                                    const convsel_timing_options *opts, double *seconds)
{
    double t0 = now(opts);
    convsel_status st = fns[i](ctxs[i]);
    *seconds = now(opts) - t0;
    if (st != CONVSEL_OK)
        return convsel_error(st, "candidate %zu failed: %s", i, convsel_last_error());
    return CONVSEL_OK;
}

/*
 * Warm-up, one candidate after the other, each for warmup_s (at least one
 * run). Candidates set their own thread counts when they run (instances do),
 * so the count is read after the first run: if it differs from the one the
 * previous call ended with, the other pool's workers may still be spinning,
 * and the wait comes before anything is timed.
 */
static convsel_status warm_up(size_t n, const convsel_timed_fn *fns, void *const *ctxs,
                              const convsel_timing_options *opts, double *settle_spent)
{
    int checked = 0;
    *settle_spent = 0.0;
    for (size_t i = 0; i < n; i++) {
        double start = now(opts), t;
        do {
            convsel_status st = run_candidate(fns, ctxs, i, opts, &t);
            if (st != CONVSEL_OK)
                return st;
            if (!checked) {
                checked = 1;
                int threads = omp_get_max_threads();
                int before = atomic_exchange(&last_threads, threads);
                if (before != 0 && before != threads && opts->settle_s > 0.0) {
                    double s0 = now(opts);
                    sleep_s(opts->settle_s);
                    *settle_spent = now(opts) - s0;
                    start += *settle_spent;
                }
            }
        } while (now(opts) - start < opts->warmup_s);
    }
    return CONVSEL_OK;
}

/* One measurement: warm-up, then interleaved rounds until a stopping rule. */
static convsel_status measure_once(size_t n, const convsel_timed_fn *fns, void *const *ctxs,
                                   const convsel_timing_options *opts, convsel_timing *results)
{
    convsel_status st;
    memset(results, 0, n * sizeof *results);
    struct samples s = {.n = n};
    size_t *order = malloc(n * sizeof *order);
    unsigned char *flush = opts->flush_bytes ? calloc(opts->flush_bytes, 1) : NULL;
    if (!order || (opts->flush_bytes && !flush)) {
        free(order);
        free(flush);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "timing: out of memory (flush buffer of %zu bytes)",
                             opts->flush_bytes);
    }

    double start = now(opts), settle_spent;
    st = warm_up(n, fns, ctxs, opts, &settle_spent);
    start += settle_spent;

    uint64_t rng = 0x636f6e7673656cull; /* fixed: the same order sequence every call */
    size_t previous_last = n; /* none */
    while (st == CONVSEL_OK) {
        st = samples_reserve(&s, s.count + 1);
        if (st != CONVSEL_OK)
            break;
        next_order(order, n, previous_last, &rng);
        for (size_t k = 0; k < n && st == CONVSEL_OK; k++) {
            size_t i = order[k];
            if (flush)
                flush_caches(flush, opts->flush_bytes);
            st = run_candidate(fns, ctxs, i, opts, &s.times[i * (size_t)s.capacity + (size_t)s.count]);
        }
        if (st != CONVSEL_OK)
            break;
        previous_last = order[n - 1];
        s.count++;
        if (s.count < opts->min_rounds)
            continue;
        if (s.count >= opts->max_rounds || now(opts) - start >= opts->max_time_s ||
            medians_converged(&s, opts->target_rel_ci))
            break;
    }

    if (st == CONVSEL_OK) {
        for (size_t i = 0; i < n; i++) {
            const double *x = samples_sorted(&s, i);
            results[i].min_ms = 1e3 * x[0];
            results[i].p10_ms = 1e3 * convsel_quantile(x, s.count, 0.10);
            results[i].median_ms = 1e3 * convsel_quantile(x, s.count, 0.50);
            results[i].p90_ms = 1e3 * convsel_quantile(x, s.count, 0.90);
            results[i].runs = s.count;
        }
    }
    atomic_store(&last_threads, omp_get_max_threads());
    free(order);
    free(flush);
    free(s.times);
    free(s.sorted);
    return st;
}

/* The largest median / minimum over the candidates. */
static double worst_spread(size_t n, const convsel_timing *t)
{
    double worst = 1.0;
    for (size_t i = 0; i < n; i++)
        if (t[i].min_ms > 0.0)
            worst = CONVSEL_MAX(worst, t[i].median_ms / t[i].min_ms);
    return worst;
}

/* The mean log median over the candidates. */
static double log_medians(size_t n, const convsel_timing *t)
{
    double sum = 0.0;
    for (size_t i = 0; i < n; i++)
        sum += log(CONVSEL_MAX(t[i].median_ms, 1e-12));
    return sum / (double)n;
}

convsel_status convsel_time_interleaved(size_t n, const convsel_timed_fn *fns, void *const *ctxs,
                                        const convsel_timing_options *opts, convsel_timing *results)
{
    convsel_timing_options defaults;
    if (!opts) {
        convsel_timing_options_default(&defaults);
        opts = &defaults;
    }
    if (n == 0 || !fns || !ctxs || !results)
        return convsel_error(CONVSEL_INVALID_ARGUMENT,
                             "timing: need at least one candidate, its functions, contexts and results");
    for (size_t i = 0; i < n; i++)
        if (!fns[i])
            return convsel_error(CONVSEL_INVALID_ARGUMENT, "timing: candidate %zu has no function", i);
    convsel_status st = check_options(opts);
    if (st != CONVSEL_OK)
        return st;
    st = measure_once(n, fns, ctxs, opts, results);
    if (st != CONVSEL_OK || opts->retry_ratio == 0.0 || worst_spread(n, results) <= opts->retry_ratio)
        return st;
    /* Disturbed: all candidates again, so that they stay comparable. */
    convsel_timing *again = malloc(n * sizeof *again);
    if (!again)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "timing: out of memory");
    st = measure_once(n, fns, ctxs, opts, again);
    /* Other load only ever slows a run: the measurement with the lower
     * medians is the less disturbed one (a spread alone would prefer one made
     * entirely under load). */
    if (st == CONVSEL_OK && log_medians(n, again) < log_medians(n, results))
        memcpy(results, again, n * sizeof *again);
    free(again);
    if (st == CONVSEL_OK)
        for (size_t i = 0; i < n; i++)
            results[i].retried = 1;
    return st;
}
