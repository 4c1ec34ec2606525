/*
 * A synthetic "target CPU" for the few-shot transfer tests and bench: the
 * primitives of synthetic.h, each slowed or sped up by its own factor, with
 * a size-dependent drift per primitive (larger layers gain or lose on the
 * new CPU) and a narrow-channel penalty the source CPU never had, under an
 * AVX2 cap (as `--isa avx2` emulates). Rankings change, so a model that
 * merely rescales every prediction the same way cannot pick the fastest.
 * Header-only (static functions): include it after synthetic.h.
 */
#ifndef CONVSEL_SYNTHETIC_TRANSFER_H
#define CONVSEL_SYNTHETIC_TRANSFER_H

#include "synthetic.h"

/* × per primitive: direct, winograd, gemm, 1x1, depthwise. */
static const double syn_target_scale[SYN_COUNT] = {1.8, 0.6, 1.0, 1.3, 0.8};
/* × (FLOPs / 1e8)^power: the size-dependent change. */
static const double syn_target_power[SYN_COUNT] = {0.06, -0.05, 0.10, 0.0, -0.04};

static void syn_target_fingerprint(convsel_fingerprint *fp)
{
    memset(fp, 0, sizeof *fp);
    snprintf(fp->vendor, sizeof fp->vendor, "AuthenticAMD");
    snprintf(fp->model_name, sizeof fp->model_name, "Synthetic EPYC (Zen 4)");
    snprintf(fp->microarch, sizeof fp->microarch, "zen4");
    snprintf(fp->isa_flags, sizeof fp->isa_flags, "sse41 avx avx2 fma avx512f avx512bw avx512vnni");
    fp->isa_cap = CONVSEL_ISA_AVX2;
    fp->cores = 2;
    fp->l1d_bytes = 32 << 10;
    fp->l2_bytes = 1 << 20;
    fp->l3_bytes = 32 << 20;
    snprintf(fp->onednn_version, sizeof fp->onednn_version, "2.6.3");
    snprintf(fp->openblas_version, sizeof fp->openblas_version, "0.3.21");
}

static double syn_target_latency_ms(int prim, const convsel_problem *p, int threads)
{
    double t = syn_latency_ms(prim, p, threads) * syn_target_scale[prim] *
               pow(convsel_problem_flops(p) / 1e8, syn_target_power[prim]);
    if (prim == SYN_DIRECT && p->ic / p->g < 32)
        t *= 1.4;
    return t;
}

/* Records of every applicable primitive of p at threads on the target CPU. */
static convsel_status syn_target_add(convsel_dataset *ds, uint32_t fp, const convsel_problem *p, int threads,
                                     double noise, convsel_rng *rng)
{
    for (int prim = 0; prim < SYN_COUNT; prim++) {
        if (!syn_applicable(prim, p))
            continue;
        double ms = syn_target_latency_ms(prim, p, threads) * exp(noise * syn_normal(rng));
        convsel_status st = syn_append(ds, fp, syn_names[prim], p, threads, CONVSEL_ISA_AVX2, ms);
        if (st != CONVSEL_OK)
            return st;
    }
    return CONVSEL_OK;
}

/* n_layers random layers ("tnet<k>:l<i>", 20 per network) at 1 and 2 threads. */
static convsel_status syn_target_dataset(uint64_t seed, int n_layers, double noise, convsel_dataset **out)
{
    convsel_dataset *ds;
    convsel_status st = convsel_dataset_create(&ds);
    if (st != CONVSEL_OK)
        return st;
    convsel_fingerprint fp;
    syn_target_fingerprint(&fp);
    uint32_t fi;
    st = convsel_dataset_add_fingerprint(ds, &fp, &fi);
    convsel_rng rng = {seed};
    for (int l = 0; st == CONVSEL_OK && l < n_layers; l++) {
        char network[32];
        snprintf(network, sizeof network, "tnet%d", l / 20);
        convsel_problem p;
        syn_random_problem(&rng, network, l % 20, &p);
        for (int t = 1; st == CONVSEL_OK && t <= 2; t++)
            st = syn_target_add(ds, fi, &p, t, noise, &rng);
    }
    if (st != CONVSEL_OK) {
        convsel_dataset_destroy(ds);
        return st;
    }
    *out = ds;
    return CONVSEL_OK;
}

#endif
