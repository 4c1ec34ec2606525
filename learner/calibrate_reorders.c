/* Calibrating the model's reorder lines to reorders timed inside networks on
 * the new CPU (convsel_reorder_probe): per thread slot, a fixed cost the lines
 * may lack, a factor per layout pair, and, where a pair's samples say so, a
 * line of the pair's own, kept with the calibration for that CPU. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "model.h"

/* How many samples' worth of its thread slot's scale a pair's own scale
 * starts from: a pair timed once moves a quarter of the way to its sample. */
#define PAIR_PRIOR_SAMPLES 3.0
/* The factor is kept within [1/REORDER_SCALE_MAX, REORDER_SCALE_MAX]. */
#define REORDER_SCALE_MAX 50.0

/* A slot's fixed cost is fitted only on this many samples or more, spanning
 * lines of at least OFFSET_MIN_SPAN to one. */
#define OFFSET_MIN_SAMPLES 6
#define OFFSET_MIN_SPAN 2.0

/* A layout pair's own line is fitted on this many samples or more, whose
 * sizes span PAIR_LINE_MIN_SPAN to one or more in MB moved; a slope below
 * PAIR_LINE_MIN_MS_PER_MB (500 GB/s) is no copy's and keeps the scaled line. */
#define PAIR_LINE_MIN_SAMPLES 6
#define PAIR_LINE_MIN_SPAN 4.0
#define PAIR_LINE_MIN_MS_PER_MB 0.002

static double clamp_scale(double log_scale)
{
    double bound = log(REORDER_SCALE_MAX);
    return exp(log_scale < -bound ? -bound : log_scale > bound ? bound : log_scale);
}

/* Sums of a weighted least-squares fit of y = a + b x with weights 1 / y^2
 * (relative errors), so that one sample can be taken out. */
typedef struct {
    double w, wx, wy, wxx, wxy;
} wls_sums;

static void wls_add(wls_sums *s, double x, double y, double sign)
{
    double w = sign / (y * y);
    s->w += w;
    s->wx += w * x;
    s->wy += w * y;
    s->wxx += w * x * x;
    s->wxy += w * x * y;
}

/* The fit's (a, b), with a >= 0: a negative intercept is refitted through
 * the origin. Returns 0 when no line with b > 0 fits. */
static int wls_solve(const wls_sums *s, double *a, double *b)
{
    double det = s->w * s->wxx - s->wx * s->wx;
    *a = 0.0;
    *b = 0.0;
    if (det > 1e-12 * s->w * s->wxx) {
        *b = (s->w * s->wxy - s->wx * s->wy) / det;
        *a = (s->wy - *b * s->wx) / s->w;
    }
    if (!(*a > 0.0) || !(*b > 0.0)) {
        *a = 0.0;
        *b = s->wxx > 0 ? s->wxy / s->wxx : 0.0;
    }
    return *b > 0.0 && isfinite(*a) && isfinite(*b);
}

/* The log error of the line fitted on all's samples less (x, y) at x, into
 * *e. Returns 0 when those fit no line. */
static int wls_left_out_error(const wls_sums *all, double x, double y, double *e)
{
    wls_sums rest = *all;
    wls_add(&rest, x, y, -1.0);
    double a, b;
    if (!wls_solve(&rest, &a, &b))
        return 0;
    *e = log(y / (a + b * x));
    return 1;
}

/* One thread slot's fixed cost, in units of its lines: times y_i of reorders
 * whose lines are x_i taken as b (x + offset) rather than b x. Many threads
 * pay a team's start and end on every reorder, which lines fitted on one or
 * two threads lack (16 threads: 0.02 ms for 0.4 MB and 1.6 MB alike). The
 * offset is kept only when it predicts the samples each left out better than
 * the factor alone, in RMS of log error (*loo_factor, *loo_offset), and the
 * slope b is within the factors' bounds; else 0. */
static double fit_offset(const double *x, const double *y, size_t n, double *loo_factor, double *loo_offset)
{
    *loo_factor = *loo_offset = 0.0;
    if (n < OFFSET_MIN_SAMPLES)
        return 0.0;
    double lo = x[0], hi = x[0], log_sum = 0.0;
    wls_sums all = {0};
    for (size_t i = 0; i < n; i++) {
        lo = fmin(lo, x[i]);
        hi = fmax(hi, x[i]);
        log_sum += log(y[i] / x[i]);
        wls_add(&all, x[i], y[i], 1.0);
    }
    if (!(hi >= OFFSET_MIN_SPAN * lo))
        return 0.0;
    double se_factor = 0.0, se_offset = 0.0;
    for (size_t i = 0; i < n; i++) {
        double scale = exp((log_sum - log(y[i] / x[i])) / (double)(n - 1));
        double e = log(y[i] / (scale * x[i]));
        se_factor += e * e;
        if (!wls_left_out_error(&all, x[i], y[i], &e))
            return 0.0;
        se_offset += e * e;
    }
    *loo_factor = sqrt(se_factor / (double)n);
    *loo_offset = sqrt(se_offset / (double)n);
    /* A slope outside the factors' range would leave the whole time to the
     * offset and the factor to its clamp: times that do not grow with the
     * line are left to the factor alone. */
    double a, b;
    if (!(*loo_offset < *loo_factor) || !wls_solve(&all, &a, &b) || b < 1.0 / REORDER_SCALE_MAX ||
        b > REORDER_SCALE_MAX)
        return 0.0;
    return a / b;
}

double convsel_model_reorder_ms(const convsel_model *model, const convsel_fingerprint *cpu, int64_t mb, int64_t c,
                                int64_t h, int64_t w, convsel_layout from, convsel_layout to, int threads)
{
    double line = convsel_reorder_model_predict(model ? model->reorders : NULL, mb, c, h, w, from, to, threads);
    if (!(line > 0) || !model || !cpu || (int)from < 0 || from >= CONVSEL_LAYOUT_COUNT || (int)to < 0 ||
        to >= CONVSEL_LAYOUT_COUNT)
        return line;
    const convsel_calibration *cal = convsel_calibration_find(model, cpu);
    if (!cal || cal->reorder_samples == 0)
        return line;
    int t = convsel_reorder_thread_slot(threads);
    if (cal->reorder_line_b[from][to][t] > 0)
        return cal->reorder_line_a[from][to][t] +
               cal->reorder_line_b[from][to][t] * convsel_reorder_mbytes(mb, c, h, w, from, to);
    double s = cal->reorder_scale[from][to][t];
    return s > 0 ? s * (line + cal->reorder_offset[t]) : line;
}

/* The leave-one-out squared log errors of one layout pair's n samples (MB
 * moved x, time y, log of time over its offset line r; all: their sums,
 * r_sum: the sum of r) with the pair's factor shrunk towards its slot's
 * (slot_sum, slot_n: the slot's r) and with a line of the pair's own, into
 * *se_scaled and *se_line. Returns 0 when some sample left out leaves no
 * line to fit. */
static int pair_loo(const double *x, const double *y, const double *r, size_t n, const wls_sums *all, double r_sum,
                    double slot_sum, size_t slot_n, double *se_scaled, double *se_line)
{
    *se_scaled = *se_line = 0.0;
    for (size_t i = 0; i < n; i++) {
        double slot_mean = slot_n > 1 ? (slot_sum - r[i]) / (double)(slot_n - 1) : 0.0;
        double scale = clamp_scale((r_sum - r[i] + PAIR_PRIOR_SAMPLES * slot_mean) /
                                   ((double)(n - 1) + PAIR_PRIOR_SAMPLES));
        double e = r[i] - log(scale);
        *se_scaled += e * e;
        if (!wls_left_out_error(all, x[i], y[i], &e))
            return 0;
        *se_line += e * e;
    }
    return 1;
}

/* Gives each layout pair of cal whose samples span sizes enough a line of
 * its own where it predicts them, each left out, better than the pair's
 * scaled line: a pair's reorders may have a fixed cost, or a slope, that
 * the model's line (fitted on another CPU) lacks, which no factor mends.
 * Where most of a slot's fittable pairs keep a line of their own, the pairs
 * never timed there take the mean of those lines (a boundary layout no
 * primitive reads, say, would otherwise keep the scaled line and look the
 * cheapest to reorder into). xs, ys, rs: room for n doubles each. */
static void fit_pair_lines(convsel_calibration *cal, const convsel_reorder_model *lines,
                           const convsel_reorder_sample *samples, size_t n, const double *slot_sum,
                           const size_t *slot_n, double *xs, double *ys, double *rs)
{
    enum { L = CONVSEL_LAYOUT_COUNT, T = CONVSEL_REORDER_MODEL_THREADS };
    for (int t = 0; t < T; t++) {
        double se_scaled = 0.0, se_line = 0.0, a_sum = 0.0, b_sum = 0.0;
        size_t counted = 0, timed[L][L] = {{0}};
        int own = 0;
        for (int f = 0; f < L; f++)
            for (int g = 0; g < L; g++) {
                size_t m = 0;
                double lo = 0.0, hi = 0.0, r_sum = 0.0;
                wls_sums all = {0};
                for (size_t i = 0; f != g && i < n; i++) {
                    const convsel_reorder_sample *s = &samples[i];
                    if ((int)s->from != f || (int)s->to != g || convsel_reorder_thread_slot(s->threads) != t)
                        continue;
                    double line = convsel_reorder_model_predict(lines, s->mb, s->c, s->h, s->w, s->from, s->to,
                                                                s->threads);
                    if (!(line > 0))
                        continue;
                    xs[m] = convsel_reorder_mbytes(s->mb, s->c, s->h, s->w, s->from, s->to);
                    ys[m] = s->ms;
                    rs[m] = log(s->ms / (line + cal->reorder_offset[t]));
                    lo = m == 0 ? xs[m] : fmin(lo, xs[m]);
                    hi = m == 0 ? xs[m] : fmax(hi, xs[m]);
                    wls_add(&all, xs[m], ys[m], 1.0);
                    r_sum += rs[m];
                    m++;
                }
                timed[f][g] = m;
                double pair_scaled, pair_line, a, b;
                if (m < PAIR_LINE_MIN_SAMPLES || !(hi >= PAIR_LINE_MIN_SPAN * lo) ||
                    !pair_loo(xs, ys, rs, m, &all, r_sum, slot_sum[t], slot_n[t], &pair_scaled, &pair_line))
                    continue;
                cal->reorder_pairs_fittable[t] += 1.0;
                se_scaled += pair_scaled;
                se_line += pair_line;
                counted += m;
                if (pair_line < pair_scaled && wls_solve(&all, &a, &b) && b >= PAIR_LINE_MIN_MS_PER_MB) {
                    cal->reorder_line_a[f][g][t] = a;
                    cal->reorder_line_b[f][g][t] = b;
                    a_sum += a;
                    b_sum += b;
                    own++;
                }
            }
        cal->reorder_pairs_own[t] = own;
        for (int f = 0; 2 * own > (int)cal->reorder_pairs_fittable[t] && f < L; f++)
            for (int g = 0; g < L; g++)
                if (f != g && !timed[f][g]) {
                    cal->reorder_line_a[f][g][t] = a_sum / own;
                    cal->reorder_line_b[f][g][t] = b_sum / own;
                }
        if (counted) {
            cal->reorder_loo_scaled[t] = sqrt(se_scaled / (double)counted);
            cal->reorder_loo_line[t] = sqrt(se_line / (double)counted);
        }
    }
}

convsel_status convsel_model_calibrate_reorders(convsel_model *model, const convsel_fingerprint *cpu,
                                                const convsel_reorder_sample *samples, size_t n)
{
    if (!model || !cpu || (n && !samples))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_model_calibrate_reorders: NULL argument");
    convsel_calibration *cal = convsel_calibration_find(model, cpu);
    if (!cal)
        return convsel_error(CONVSEL_NOT_FOUND, "the model has no calibration for %s to add reorders to",
                             cpu->model_name);
    enum { L = CONVSEL_LAYOUT_COUNT, T = CONVSEL_REORDER_MODEL_THREADS };
    double slot_sum[T] = {0}, pair_sum[L][L][T], offset[T] = {0};
    size_t slot_n[T] = {0}, pair_n[L][L][T], used = 0;
    memset(pair_sum, 0, sizeof pair_sum);
    memset(pair_n, 0, sizeof pair_n);
    for (size_t i = 0; i < n; i++) {
        const convsel_reorder_sample *s = &samples[i];
        if ((int)s->from < 0 || (int)s->from >= L || (int)s->to < 0 || (int)s->to >= L || s->from == s->to ||
            s->mb < 1 || s->c < 1 || s->h < 1 || s->w < 1 || s->threads < 1 || !(s->ms > 0) || !isfinite(s->ms))
            return convsel_error(CONVSEL_INVALID_ARGUMENT, "reorder sample %zu is not a timed reorder", i + 1);
    }
    double *xs = n ? malloc(n * sizeof *xs) : NULL, *ys = n ? malloc(n * sizeof *ys) : NULL;
    double *rs = n ? malloc(n * sizeof *rs) : NULL;
    if (n && (!xs || !ys || !rs)) {
        free(xs);
        free(ys);
        free(rs);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory calibrating reorders");
    }
    for (int t = 0; t < T; t++) {
        size_t m = 0;
        for (size_t i = 0; i < n; i++) {
            const convsel_reorder_sample *s = &samples[i];
            double line = convsel_reorder_model_predict(model->reorders, s->mb, s->c, s->h, s->w, s->from, s->to,
                                                        s->threads);
            if (convsel_reorder_thread_slot(s->threads) == t && line > 0) {
                xs[m] = line;
                ys[m++] = s->ms;
            }
        }
        offset[t] = fit_offset(xs, ys, m, &cal->reorder_loo_factor[t], &cal->reorder_loo_offset[t]);
    }
    for (size_t i = 0; i < n; i++) {
        const convsel_reorder_sample *s = &samples[i];
        double line = convsel_reorder_model_predict(model->reorders, s->mb, s->c, s->h, s->w, s->from, s->to,
                                                    s->threads);
        if (!(line > 0))
            continue;
        int t = convsel_reorder_thread_slot(s->threads);
        cal->threads_mask |= convsel_threads_bit(s->threads);
        double r = log(s->ms / (line + offset[t]));
        slot_sum[t] += r;
        slot_n[t]++;
        pair_sum[s->from][s->to][t] += r;
        pair_n[s->from][s->to][t]++;
        used++;
    }
    /* A thread slot's pairs scale by their own samples, shrunk towards the
     * slot's mean (pairs never timed take the slot's mean itself); slots
     * never timed keep the lines as they are. */
    memset(cal->reorder_scale, 0, sizeof cal->reorder_scale);
    for (int t = 0; t < T; t++) {
        cal->reorder_by_threads[t] = 0.0;
        cal->reorder_offset[t] = 0.0;
        if (!slot_n[t])
            continue;
        cal->reorder_offset[t] = offset[t];
        double slot_mean = slot_sum[t] / (double)slot_n[t];
        cal->reorder_by_threads[t] = clamp_scale(slot_mean);
        for (int f = 0; f < L; f++)
            for (int g = 0; g < L; g++)
                if (f != g)
                    cal->reorder_scale[f][g][t] = clamp_scale((pair_sum[f][g][t] + PAIR_PRIOR_SAMPLES * slot_mean) /
                                                              ((double)pair_n[f][g][t] + PAIR_PRIOR_SAMPLES));
    }
    memset(cal->reorder_line_a, 0, sizeof cal->reorder_line_a);
    memset(cal->reorder_line_b, 0, sizeof cal->reorder_line_b);
    memset(cal->reorder_loo_scaled, 0, sizeof cal->reorder_loo_scaled);
    memset(cal->reorder_loo_line, 0, sizeof cal->reorder_loo_line);
    memset(cal->reorder_pairs_fittable, 0, sizeof cal->reorder_pairs_fittable);
    memset(cal->reorder_pairs_own, 0, sizeof cal->reorder_pairs_own);
    if (n)
        fit_pair_lines(cal, model->reorders, samples, n, slot_sum, slot_n, xs, ys, rs);
    free(xs);
    free(ys);
    free(rs);
    cal->reorder_samples = used;
    return CONVSEL_OK;
}
