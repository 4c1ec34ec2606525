/*
 * Quantile binning: every feature is cut once, before boosting, into at most
 * 255 value bins plus the missing bin, so that split finding scans 256-entry
 * histograms instead of sorting rows at every node (as LightGBM and
 * XGBoost's "hist" method do).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "learner.h"

static int cmp_float(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x > y) - (x < y);
}

/* A cut between two distinct sorted values a < b that both bins_code and the
 * trees' "x <= threshold" put a on the left of and b on the right of. */
static float cut_between(float a, float b)
{
    float m = (float)(((double)a + (double)b) * 0.5);
    return m >= a && m < b ? m : a;
}

/* Cuts the sorted non-missing values v[0..n) into at most max_value_bins
 * bins of about equal counts, never splitting equal values. Writes the bins'
 * upper bounds to upper[1..] and returns the number of value bins. */
static int quantile_cuts(const float *v, size_t n, int max_value_bins, float *upper)
{
    size_t n_distinct = 0;
    for (size_t i = 0; i < n; i++)
        if (i == 0 || v[i] != v[i - 1])
            n_distinct++;
    int bins = 0;
    if (n_distinct <= (size_t)max_value_bins) {
        for (size_t i = 0; i < n; i++)
            if (i + 1 < n && v[i + 1] != v[i])
                upper[1 + bins++] = cut_between(v[i], v[i + 1]);
    } else {
        /* Greedy: each bin takes its fair share of the rows not yet binned, so
         * that a heavy value early on does not starve the later bins. */
        size_t start = 0;
        while (start < n && bins < max_value_bins - 1) {
            size_t remaining = n - start;
            size_t target = remaining / (size_t)(max_value_bins - bins);
            if (target == 0)
                target = 1;
            size_t end = start + target; /* first index past the bin */
            if (end >= n)
                break;
            while (end < n && v[end] == v[end - 1])
                end++;
            if (end >= n)
                break;
            upper[1 + bins++] = cut_between(v[end - 1], v[end]);
            start = end;
        }
    }
    upper[1 + bins++] = INFINITY;
    return bins;
}

static uint8_t category_code(float value)
{
    if (value >= 0.0f && value < (float)CONVSEL_MAX_CATEGORIES && value == (float)(int)value)
        return (uint8_t)((int)value + 1);
    return CONVSEL_BIN_MISSING;
}

convsel_status convsel_bins_fit(const float *x, size_t n_rows, size_t n_features, const size_t *rows, size_t n_used,
                                int max_bins, int (*is_categorical)(size_t f), convsel_bins *bins)
{
    memset(bins, 0, sizeof *bins);
    if (max_bins < 2 || max_bins > CONVSEL_MAX_BINS)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "max_bins must be in [2, %d] (got %d)", CONVSEL_MAX_BINS,
                             max_bins);
    if (!rows)
        n_used = n_rows;
    bins->n_features = n_features;
    bins->n_bins = calloc(n_features ? n_features : 1, sizeof *bins->n_bins);
    bins->categorical = calloc(n_features ? n_features : 1, 1);
    bins->upper = malloc((n_features ? n_features : 1) * CONVSEL_MAX_BINS * sizeof *bins->upper);
    float *v = malloc((n_used ? n_used : 1) * sizeof *v);
    if (!bins->n_bins || !bins->categorical || !bins->upper || !v) {
        free(v);
        convsel_bins_free(bins);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory binning %zu rows", n_used);
    }
    for (size_t f = 0; f < n_features; f++) {
        float *upper = bins->upper + f * CONVSEL_MAX_BINS;
        for (int b = 0; b < CONVSEL_MAX_BINS; b++)
            upper[b] = INFINITY;
        upper[0] = -INFINITY;
        if (is_categorical && is_categorical(f)) {
            int max_code = 0;
            for (size_t i = 0; i < n_used; i++) {
                float value = x[(rows ? rows[i] : i) * n_features + f];
                int code = category_code(value);
                if (code > max_code)
                    max_code = code;
            }
            bins->categorical[f] = 1;
            bins->n_bins[f] = (uint16_t)(max_code + 1);
            continue;
        }
        size_t n = 0;
        for (size_t i = 0; i < n_used; i++) {
            float value = x[(rows ? rows[i] : i) * n_features + f];
            if (!isnan(value))
                v[n++] = value;
        }
        if (n == 0) {
            bins->n_bins[f] = 1;
            continue;
        }
        qsort(v, n, sizeof *v, cmp_float);
        bins->n_bins[f] = (uint16_t)(1 + quantile_cuts(v, n, max_bins - 1, upper));
    }
    free(v);
    return CONVSEL_OK;
}

void convsel_bins_free(convsel_bins *bins)
{
    if (!bins)
        return;
    free(bins->n_bins);
    free(bins->categorical);
    free(bins->upper);
    memset(bins, 0, sizeof *bins);
}

uint8_t convsel_bins_code(const convsel_bins *bins, size_t f, float value)
{
    if (isnan(value))
        return CONVSEL_BIN_MISSING;
    if (bins->categorical[f])
        return category_code(value);
    const float *upper = bins->upper + f * CONVSEL_MAX_BINS;
    /* Smallest b in [1, n_bins) with value <= upper[b]; the last is +inf. */
    int lo = 1, hi = bins->n_bins[f] - 1;
    if (hi < 1)
        return CONVSEL_BIN_MISSING;
    while (lo < hi) {
        int mid = (lo + hi) / 2;
        if (value <= upper[mid])
            hi = mid;
        else
            lo = mid + 1;
    }
    return (uint8_t)lo;
}

void convsel_bins_apply(const convsel_bins *bins, const float *x, size_t n_rows, uint8_t *codes)
{
    size_t nf = bins->n_features;
    for (size_t f = 0; f < nf; f++)
        for (size_t r = 0; r < n_rows; r++)
            codes[f * n_rows + r] = convsel_bins_code(bins, f, x[r * nf + f]);
}
