/*
 * Synthetic latency data for the learner's tests and bench, until profiles
 * exist: five made-up primitives whose times follow known, different
 * formulas (roofline-like, with channel-padding, tiling, im2col and
 * threading effects) times log-normal noise. Each record goes into a real
 * convsel_dataset through the public API, so the data path is the one real
 * profiles take. Header-only (static functions): include it from one file.
 */
#ifndef CONVSEL_SYNTHETIC_H
#define CONVSEL_SYNTHETIC_H

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "convsel.h"
#include "../learner/learner.h"

enum { SYN_DIRECT, SYN_WINOGRAD, SYN_GEMM, SYN_POINTWISE, SYN_DEPTHWISE, SYN_COUNT };

static const char *const syn_names[SYN_COUNT] = {"syn_direct", "syn_winograd", "syn_gemm", "syn_1x1",
                                                 "syn_depthwise"};

/* A Cascade Lake like the FACTS.md machine. */
static inline void syn_fingerprint(convsel_fingerprint *fp)
{
    memset(fp, 0, sizeof *fp);
    snprintf(fp->vendor, sizeof fp->vendor, "GenuineIntel");
    snprintf(fp->model_name, sizeof fp->model_name, "Synthetic Xeon (Cascade Lake)");
    snprintf(fp->microarch, sizeof fp->microarch, "cascadelake");
    snprintf(fp->isa_flags, sizeof fp->isa_flags, "sse41 avx avx2 fma avx512f avx512bw avx512vnni");
    fp->isa_cap = CONVSEL_ISA_AVX512;
    fp->cores = 2;
    fp->l1d_bytes = 32 << 10;
    fp->l2_bytes = 1 << 20;
    fp->l3_bytes = 36 << 20;
    snprintf(fp->onednn_version, sizeof fp->onednn_version, "2.6.3");
    snprintf(fp->openblas_version, sizeof fp->openblas_version, "0.3.21");
}

static inline int syn_applicable(int prim, const convsel_problem *p)
{
    int depthwise = p->g > 1 && p->g == p->ic && p->g == p->oc;
    switch (prim) {
    case SYN_WINOGRAD:
        return p->g == 1 && p->kh == 3 && p->kw == 3 && p->sh == 1 && p->sw == 1 && p->dh == 0 && p->dw == 0;
    case SYN_POINTWISE:
        return p->g == 1 && p->kh == 1 && p->kw == 1 && p->sh == 1 && p->sw == 1;
    case SYN_DEPTHWISE:
        return depthwise;
    case SYN_GEMM:
        return !depthwise;
    default:
        return 1;
    }
}

static inline double syn_pad(int64_t c, int64_t w)
{
    return (double)c / (double)((c + w - 1) / w * w);
}

/* Noise-free ms of prim on problem p with threads threads (2 cores). */
static inline double syn_latency_ms(int prim, const convsel_problem *p, int threads)
{
    double t = threads > 2 ? 2 : threads;
    double par = t > 1 ? 0.9 * t : 1.0;
    double flops = convsel_problem_flops(p);
    double bytes = 4.0 * (double)(convsel_problem_src_elems(p) + convsel_problem_weights_elems(p) +
                                  convsel_problem_dst_elems(p));
    const double peak = 148e6, bw = 12e6; /* per ms, per core */
    double icg = (double)(p->ic / p->g), ocg = (double)(p->oc / p->g);
    switch (prim) {
    case SYN_WINOGRAD: {
        double tiles = (double)p->mb * ceil((double)p->oh / 4) * ceil((double)p->ow / 4);
        double eff_flops = 2.0 * tiles * 36.0 * icg * ocg;
        double transform = tiles * (icg + ocg) * 36.0 * 4.0 * 3.0;
        double eff = 0.55 * fmin(1.0, icg / 48.0 + 0.1);
        return 0.02 + fmax(eff_flops / (peak * par * eff), (bytes + transform) / (bw * t));
    }
    case SYN_GEMM: {
        double k = icg * (double)(p->kh * p->kw), n = (double)(p->oh * p->ow);
        double im2col = (p->kh * p->kw > 1 || p->sh > 1) ? 8.0 * k * n * (double)p->mb * (double)p->g : 0.0;
        double eff = 0.7 * fmin(1.0, ocg / 48.0 + 0.05) * fmin(1.0, n / 196.0 + 0.2);
        return 0.006 + im2col / (bw * t) + fmax(flops / (peak * par * eff), bytes / (bw * t));
    }
    case SYN_POINTWISE: {
        double eff = 0.8 * fmin(1.0, icg / 64.0 + 0.15) * syn_pad(p->oc, 16);
        return 0.003 + fmax(flops / (peak * par * eff), bytes / (bw * t));
    }
    case SYN_DEPTHWISE:
        return 0.002 + fmax(flops / (peak * par * 0.25), bytes / (bw * t * 0.8));
    default: {
        double eff = 0.6 * syn_pad(p->ic, 16) * syn_pad(p->oc, 16) * fmin(1.0, (double)p->ow / 16.0 + 0.3);
        return 0.004 + fmax(flops / (peak * par * eff), bytes / (bw * t));
    }
    }
}

static inline double syn_normal(convsel_rng *rng)
{
    double u1 = convsel_rng_uniform(rng), u2 = convsel_rng_uniform(rng);
    return sqrt(-2.0 * log(u1 > 1e-300 ? u1 : 1e-300)) * cos(6.283185307179586 * u2);
}

/* A random valid layer named "<network>:l<index>" ("" network: "random~<index>"). */
static inline void syn_random_problem(convsel_rng *rng, const char *network, int index, convsel_problem *p)
{
    static const int64_t channels[] = {3, 8, 16, 24, 32, 48, 64, 96, 128, 192, 256, 384, 512};
    static const int64_t sizes[] = {7, 14, 28, 56, 112};
    static const int64_t kernels[] = {1, 1, 3, 3, 3, 5, 7};
    for (;;) {
        memset(p, 0, sizeof *p);
        p->g = 1;
        p->mb = (int64_t)1 << convsel_rng_below(rng, 3);
        p->ic = channels[convsel_rng_below(rng, sizeof channels / sizeof *channels)];
        p->oc = channels[1 + convsel_rng_below(rng, sizeof channels / sizeof *channels - 1)];
        p->ih = p->iw = sizes[convsel_rng_below(rng, sizeof sizes / sizeof *sizes)];
        p->kh = p->kw = kernels[convsel_rng_below(rng, sizeof kernels / sizeof *kernels)];
        p->sh = p->sw = convsel_rng_below(rng, 4) == 0 ? 2 : 1;
        if (convsel_rng_below(rng, 8) == 0 && p->ic > 3) { /* depthwise */
            p->oc = p->ic;
            p->g = p->ic;
            p->kh = p->kw = 3;
        }
        p->ph = p->pw = p->kh / 2;
        p->oh = (p->ih + 2 * p->ph - p->kh) / p->sh + 1;
        p->ow = (p->iw + 2 * p->pw - p->kw) / p->sw + 1;
        p->repeat = 1;
        if (network && *network)
            snprintf(p->name, sizeof p->name, "%s:l%d", network, index);
        else
            snprintf(p->name, sizeof p->name, "random~%d", index);
        /* Keep each configuration cheap enough to be a plausible profile. */
        if (convsel_problem_validate(p) == CONVSEL_OK && convsel_problem_flops(p) < 4e9)
            return;
    }
}

/* Names that the catalogue knows, for data the CLI can predict from. */
static const char *const syn_catalogue_names[SYN_COUNT] = {"onednn_direct", "winograd_4x4_3x3", "im2col_gemm",
                                                           "gemm_1x1", "direct_simd"};

/* Appends one convolution record of primitive name on p, median median_ms
 * (the other statistics a fixed spread around it), as the synthetic CPUs'
 * profilers would. */
static inline convsel_status syn_append(convsel_dataset *ds, uint32_t fp, const char *name, const convsel_problem *p,
                                        int threads, convsel_isa isa, double median_ms)
{
    convsel_record r;
    memset(&r, 0, sizeof r);
    r.kind = CONVSEL_RECORD_CONV;
    r.problem = *p;
    snprintf(r.primitive, sizeof r.primitive, "%s", name);
    r.from = r.to = CONVSEL_LAYOUT_NCHW;
    r.threads = threads;
    r.isa = isa;
    r.fingerprint = fp;
    r.median_ms = median_ms;
    r.min_ms = 0.97 * median_ms;
    r.p10_ms = 0.98 * median_ms;
    r.p90_ms = 1.03 * median_ms;
    r.runs = 10;
    r.create_ms = 0.1;
    r.tensor = CONVSEL_TENSOR_SRC;
    return convsel_dataset_append(ds, &r);
}

/* Appends a record for every applicable synthetic primitive of p at threads
 * threads, each time multiplied by exp(noise × N(0, 1)). names: the
 * primitives' names (NULL: syn_names). */
static inline convsel_status syn_add(convsel_dataset *ds, uint32_t fp, const convsel_problem *p, int threads,
                                     double noise, convsel_rng *rng, const char *const *names)
{
    for (int prim = 0; prim < SYN_COUNT; prim++) {
        if (!syn_applicable(prim, p))
            continue;
        double ms = syn_latency_ms(prim, p, threads) * exp(noise * syn_normal(rng));
        convsel_status st = syn_append(ds, fp, (names ? names : syn_names)[prim], p, threads, CONVSEL_ISA_AVX512, ms);
        if (st != CONVSEL_OK)
            return st;
    }
    return CONVSEL_OK;
}

/* A dataset of n_networks networks of layers_per_network random layers plus
 * n_random unnamed ones, each at 1 and 2 threads, its primitives called
 * names (as syn_add). */
static inline convsel_status syn_dataset_named(uint64_t seed, int n_networks, int layers_per_network, int n_random,
                                               double noise, const char *const *names, convsel_dataset **out)
{
    convsel_dataset *ds;
    convsel_status st = convsel_dataset_create(&ds);
    if (st != CONVSEL_OK)
        return st;
    convsel_fingerprint fp;
    syn_fingerprint(&fp);
    uint32_t fi;
    st = convsel_dataset_add_fingerprint(ds, &fp, &fi);
    convsel_rng rng = {seed};
    for (int k = 0; st == CONVSEL_OK && k <= n_networks; k++) {
        char network[32] = "";
        if (k < n_networks)
            snprintf(network, sizeof network, "net%d", k);
        int count = k < n_networks ? layers_per_network : n_random;
        for (int l = 0; st == CONVSEL_OK && l < count; l++) {
            convsel_problem p;
            syn_random_problem(&rng, network, l, &p);
            for (int t = 1; st == CONVSEL_OK && t <= 2; t++)
                st = syn_add(ds, fi, &p, t, noise, &rng, names);
        }
    }
    if (st != CONVSEL_OK) {
        convsel_dataset_destroy(ds);
        return st;
    }
    *out = ds;
    return CONVSEL_OK;
}

/* syn_dataset_named with the synthetic names. */
static inline convsel_status syn_dataset(uint64_t seed, int n_networks, int layers_per_network, int n_random,
                                         double noise, convsel_dataset **out)
{
    return syn_dataset_named(seed, n_networks, layers_per_network, n_random, noise, NULL, out);
}

#endif
