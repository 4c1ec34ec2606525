/* A linear model of reorder time, fitted on profiled reorders. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_fit.h>

#include "internal.h"

/* The bytes a reorder moves: it reads the source layout and writes the
 * destination layout (padded channels included). */
double convsel_reorder_mbytes(int64_t mb, int64_t c, int64_t h, int64_t w, convsel_layout from, convsel_layout to)
{
    return (double)(convsel_layout_elems(from, mb, c, h, w) + convsel_layout_elems(to, mb, c, h, w)) *
           sizeof(float) / 1e6;
}

int convsel_reorder_thread_slot(int threads)
{
    if (threads < 1)
        threads = 1;
    return threads > CONVSEL_REORDER_MODEL_THREADS ? CONVSEL_REORDER_MODEL_THREADS - 1 : threads - 1;
}

convsel_status convsel_reorder_model_fit(const convsel_dataset *const *sets, size_t n_sets,
                                         convsel_reorder_model *model)
{
    enum { N_CELLS = CONVSEL_LAYOUT_COUNT * CONVSEL_LAYOUT_COUNT * CONVSEL_REORDER_MODEL_THREADS };
    size_t counts[N_CELLS] = {0};
    double *xs[N_CELLS] = {0}, *ys[N_CELLS] = {0};
    memset(model, 0, sizeof *model);
    model->fallback_ms_per_mb = 1000.0 / 8000.0; /* 8 GB/s: a conservative one-core copy rate */

    size_t total = 0;
    for (size_t s = 0; s < n_sets; s++)
        total += convsel_dataset_size(sets[s]);
    convsel_status st = CONVSEL_OK;
    for (int pass = 0; pass < 2 && st == CONVSEL_OK; pass++) {
        if (pass == 1) {
            for (size_t k = 0; k < N_CELLS; k++) {
                if (!counts[k])
                    continue;
                xs[k] = malloc(counts[k] * sizeof(double));
                ys[k] = malloc(counts[k] * sizeof(double));
                if (!xs[k] || !ys[k])
                    st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory fitting reorder costs");
                counts[k] = 0;
            }
            if (st != CONVSEL_OK)
                break;
        }
        for (size_t s = 0; s < n_sets; s++) {
            for (size_t i = 0; i < convsel_dataset_size(sets[s]); i++) {
                const convsel_record *r = convsel_dataset_record(sets[s], i);
                if (r->kind != CONVSEL_RECORD_REORDER || r->from == r->to || !(r->median_ms > 0.0))
                    continue;
                const convsel_problem *p = &r->problem;
                int dst_side = r->tensor == CONVSEL_TENSOR_DST;
                double mbytes = dst_side ? convsel_reorder_mbytes(p->mb, p->oc, p->oh, p->ow, r->from, r->to)
                                         : convsel_reorder_mbytes(p->mb, p->ic, p->ih, p->iw, r->from, r->to);
                size_t k = ((size_t)r->from * CONVSEL_LAYOUT_COUNT + (size_t)r->to) * CONVSEL_REORDER_MODEL_THREADS +
                           (size_t)convsel_reorder_thread_slot(r->threads);
                if (pass == 1) {
                    xs[k][counts[k]] = mbytes;
                    ys[k][counts[k]] = r->median_ms;
                }
                counts[k]++;
            }
        }
    }
    double rate_sum = 0.0;
    int rate_n = 0;
    for (size_t k = 0; st == CONVSEL_OK && k < N_CELLS; k++) {
        size_t n = counts[k];
        if (n == 0)
            continue;
        size_t from = k / (CONVSEL_LAYOUT_COUNT * CONVSEL_REORDER_MODEL_THREADS);
        size_t to = (k / CONVSEL_REORDER_MODEL_THREADS) % CONVSEL_LAYOUT_COUNT;
        size_t t = k % CONVSEL_REORDER_MODEL_THREADS;
        double a = 0.0, b = 0.0, cov00, cov01, cov11, sumsq;
        if (n >= 3 && gsl_fit_linear(xs[k], 1, ys[k], 1, n, &a, &b, &cov00, &cov01, &cov11, &sumsq) == 0 &&
            isfinite(a) && isfinite(b) && b > 0.0) {
            /* A negative intercept would price small reorders below zero. */
            if (a < 0.0) {
                double sxy = 0.0, sxx = 0.0;
                for (size_t i = 0; i < n; i++) {
                    sxy += xs[k][i] * ys[k][i];
                    sxx += xs[k][i] * xs[k][i];
                }
                a = 0.0;
                b = sxx > 0.0 ? sxy / sxx : b;
            }
        } else {
            double sx = 0.0, sy = 0.0;
            for (size_t i = 0; i < n; i++) {
                sx += xs[k][i];
                sy += ys[k][i];
            }
            a = 0.0;
            b = sx > 0.0 ? sy / sx : 0.0;
        }
        model->a_ms[from][to][t] = a;
        model->b_ms_per_mb[from][to][t] = b;
        model->n_records[from][to][t] = (int)n;
        rate_sum += b * (double)(t + 1);
        rate_n++;
    }
    if (rate_n)
        model->fallback_ms_per_mb = rate_sum / rate_n;
    for (size_t k = 0; k < N_CELLS; k++) {
        free(xs[k]);
        free(ys[k]);
    }
    return st;
}

double convsel_reorder_model_predict(const convsel_reorder_model *model, int64_t mb, int64_t c, int64_t h, int64_t w,
                                     convsel_layout from, convsel_layout to, int threads)
{
    if (from == to)
        return 0.0;
    double mbytes = convsel_reorder_mbytes(mb, c, h, w, from, to);
    int t = convsel_reorder_thread_slot(threads);
    if (model && (int)from >= 0 && from < CONVSEL_LAYOUT_COUNT && (int)to >= 0 && to < CONVSEL_LAYOUT_COUNT &&
        model->n_records[from][to][t] > 0)
        return model->a_ms[from][to][t] + model->b_ms_per_mb[from][to][t] * mbytes;
    double per_mb = model ? model->fallback_ms_per_mb : 1000.0 / 8000.0;
    return per_mb * mbytes / (double)(t + 1);
}
