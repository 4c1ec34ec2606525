/* The learner's feature vector (features.h). */
#include <math.h>
#include <stdint.h>

#include "features.h"
#include "internal.h"

static const char *const feature_names[] = {
#define CONVSEL_FEATURE_NAME(name) #name,
    CONVSEL_FEATURE_MAP(CONVSEL_FEATURE_NAME)
#undef CONVSEL_FEATURE_NAME
};

const char *convsel_feature_name(size_t i)
{
    return i < CONVSEL_FEATURE_COUNT ? feature_names[i] : "";
}

int convsel_feature_is_categorical(size_t i)
{
    return i == CONVSEL_FEATURE_primitive;
}

/* log of a non-negative quantity; log(0) would be -inf, which bins handle but
 * which makes thresholds meaningless, so 0 maps to log(0.5). */
static double safe_log(double x)
{
    return log(x > 0.5 ? x : 0.5);
}

static double ratio(double a, double b)
{
    return b > 0 ? a / b : NAN;
}

/* Share of the channels a vector of width w computes on padding. */
static double pad_waste(int64_t c, int64_t w)
{
    if (c <= 0)
        return NAN;
    int64_t padded = (c + w - 1) / w * w;
    return (double)(padded - c) / (double)padded;
}

/* How one group's channels map onto the CPU's channel blocks (the lanes of
 * its vectors: 16 floats with AVX-512, 8 below, as in nChw16c / nChw8c):
 * 0 whole blocks (or g = 1, where padding the last block is the only cost),
 * 1 several whole groups share a block (ic/g = oc/g dividing it: depthwise
 * and narrow grouped layers), 2 neither — blocked kernels fall back to
 * per-channel or scalar code there (direct_simd's general mode). */
static double channel_fit(int64_t g, int64_t icg, int64_t ocg, int64_t block)
{
    if (g <= 1 || (icg % block == 0 && ocg % block == 0))
        return 0.0;
    if (icg == ocg && icg > 0 && block % icg == 0)
        return 1.0;
    return 2.0;
}

static double div_up(int64_t a, int64_t b)
{
    return b > 0 && a > 0 ? (double)((a + b - 1) / b) : 0.0;
}

double convsel_problem_bytes(const convsel_problem *p)
{
    double g = p->g > 0 ? (double)p->g : 1.0;
    double src = (double)p->mb * (double)p->ic * (double)p->ih * (double)p->iw;
    double wei = (double)p->oc * ((double)p->ic / g) * (double)p->kh * (double)p->kw;
    double dst = (double)p->mb * (double)p->oc * (double)p->oh * (double)p->ow;
    return 4.0 * (src + wei + dst);
}

/* 1 when the catalogue primitive called name runs OpenBLAS's sgemm under
 * cap; a name the catalogue lacks does not (no error is set: predictions
 * of synthetic primitives pass here). */
static int runs_openblas(const char *name, convsel_isa cap)
{
    size_t i = convsel_primitive_index(name);
    return i != SIZE_MAX && convsel_primitive_runs_openblas(i, cap);
}

void convsel_features_compute(const convsel_problem *p, int threads, int primitive, const char *name,
                              const convsel_fingerprint *cpu, float *out)
{
    double g = p->g > 0 ? (double)p->g : 1.0;
    double icg = (double)p->ic / g, ocg = (double)p->oc / g;
    double flops = 2.0 * (double)p->mb * (double)p->oc * (double)p->oh * (double)p->ow * icg * (double)p->kh *
                   (double)p->kw;
    double bytes = convsel_problem_bytes(p);
    double weights_bytes = 4.0 * (double)p->oc * icg * (double)p->kh * (double)p->kw;
    double gemm_k = icg * (double)p->kh * (double)p->kw;
    double gemm_n = (double)p->oh * (double)p->ow;
    int cores = cpu && cpu->cores > 0 ? cpu->cores : 0;
    /* Threads beyond the logical CPUs only time-share. */
    double workers = threads > 0 ? (double)threads : 1.0;
    if (cores > 0 && workers > cores)
        workers = cores;
    double rows = (double)p->mb * (double)p->oh;
    double px = (double)p->oh * (double)p->ow;

    double f[CONVSEL_FEATURE_COUNT];
    f[CONVSEL_FEATURE_g] = (double)p->g;
    f[CONVSEL_FEATURE_mb] = (double)p->mb;
    f[CONVSEL_FEATURE_ic] = (double)p->ic;
    f[CONVSEL_FEATURE_oc] = (double)p->oc;
    f[CONVSEL_FEATURE_ih] = (double)p->ih;
    f[CONVSEL_FEATURE_iw] = (double)p->iw;
    f[CONVSEL_FEATURE_oh] = (double)p->oh;
    f[CONVSEL_FEATURE_ow] = (double)p->ow;
    f[CONVSEL_FEATURE_kh] = (double)p->kh;
    f[CONVSEL_FEATURE_kw] = (double)p->kw;
    f[CONVSEL_FEATURE_sh] = (double)p->sh;
    f[CONVSEL_FEATURE_sw] = (double)p->sw;
    f[CONVSEL_FEATURE_ph] = (double)p->ph;
    f[CONVSEL_FEATURE_pw] = (double)p->pw;
    f[CONVSEL_FEATURE_dh] = (double)p->dh;
    f[CONVSEL_FEATURE_dw] = (double)p->dw;
    f[CONVSEL_FEATURE_ic_per_g] = icg;
    f[CONVSEL_FEATURE_oc_per_g] = ocg;
    f[CONVSEL_FEATURE_threads] = (double)threads;
    f[CONVSEL_FEATURE_log_flops] = safe_log(flops);
    f[CONVSEL_FEATURE_log_bytes] = safe_log(bytes);
    f[CONVSEL_FEATURE_intensity] = ratio(flops, bytes);
    f[CONVSEL_FEATURE_gemm_m] = ocg;
    f[CONVSEL_FEATURE_gemm_k] = gemm_k;
    f[CONVSEL_FEATURE_gemm_n] = gemm_n;
    f[CONVSEL_FEATURE_log_gemm_m] = safe_log(ocg);
    f[CONVSEL_FEATURE_log_gemm_k] = safe_log(gemm_k);
    f[CONVSEL_FEATURE_log_gemm_n] = safe_log(gemm_n);
    f[CONVSEL_FEATURE_log_im2col_bytes] = safe_log(4.0 * gemm_k * gemm_n);
    /* Winograd F(2x2,3x3) and F(4x4,3x3) output tiles, and the share of a
     * tile grid that falls outside the output (computed for nothing). */
    double t2 = div_up(p->oh, 2) * div_up(p->ow, 2), t4 = div_up(p->oh, 4) * div_up(p->ow, 4);
    f[CONVSEL_FEATURE_wino2_tiles] = (double)p->mb * t2;
    f[CONVSEL_FEATURE_wino4_tiles] = (double)p->mb * t4;
    f[CONVSEL_FEATURE_wino2_waste] = px > 0 ? 4.0 * t2 / px - 1.0 : NAN;
    f[CONVSEL_FEATURE_wino4_waste] = px > 0 ? 16.0 * t4 / px - 1.0 : NAN;
    f[CONVSEL_FEATURE_pad_waste_ic8] = pad_waste(p->ic, 8);
    f[CONVSEL_FEATURE_pad_waste_oc8] = pad_waste(p->oc, 8);
    f[CONVSEL_FEATURE_pad_waste_ic16] = pad_waste(p->ic, 16);
    f[CONVSEL_FEATURE_pad_waste_oc16] = pad_waste(p->oc, 16);
    /* The same per group, at this CPU's channel block. */
    if (cpu && p->g > 0) {
        int64_t block = cpu->isa_cap >= CONVSEL_ISA_AVX512 ? 16 : 8;
        f[CONVSEL_FEATURE_pad_waste_icg_block] = pad_waste(p->ic / p->g, block);
        f[CONVSEL_FEATURE_pad_waste_ocg_block] = pad_waste(p->oc / p->g, block);
        f[CONVSEL_FEATURE_channel_fit_block] = channel_fit(p->g, p->ic / p->g, p->oc / p->g, block);
    } else {
        f[CONVSEL_FEATURE_pad_waste_icg_block] = f[CONVSEL_FEATURE_pad_waste_ocg_block] = NAN;
        f[CONVSEL_FEATURE_channel_fit_block] = NAN;
    }
    /* Unknown cache sizes (0) are missing, not infinite ratios. */
    double l1 = cpu && cpu->l1d_bytes > 0 ? (double)cpu->l1d_bytes : 0.0;
    double l2 = cpu && cpu->l2_bytes > 0 ? (double)cpu->l2_bytes * workers : 0.0;
    double l3 = cpu && cpu->l3_bytes > 0 ? (double)cpu->l3_bytes : 0.0;
    f[CONVSEL_FEATURE_ws_over_l1] = ratio(bytes, l1);
    f[CONVSEL_FEATURE_ws_over_l2] = ratio(bytes, l2);
    f[CONVSEL_FEATURE_ws_over_l3] = ratio(bytes, l3);
    f[CONVSEL_FEATURE_weights_over_l2] = ratio(weights_bytes, cpu && cpu->l2_bytes > 0 ? (double)cpu->l2_bytes : 0.0);
    f[CONVSEL_FEATURE_log_flops_per_thread] = safe_log(flops / workers);
    f[CONVSEL_FEATURE_rows_per_thread] = rows / workers;
    /* Output rows are the usual unit of parallel work: the share of the last
     * round of rows that leaves threads idle. */
    double rounds = ceil(rows / workers);
    f[CONVSEL_FEATURE_thread_imbalance] = rounds > 0 ? 1.0 - rows / (rounds * workers) : 0.0;
    f[CONVSEL_FEATURE_isa_cap] = cpu ? (double)cpu->isa_cap : NAN;
    f[CONVSEL_FEATURE_cores] = cores > 0 ? (double)cores : NAN;
    /* The ISA of OpenBLAS's kernels, for the primitives that run them: the
     * same CPU runs the GEMM primitives 1.5-1.9x apart with AVX2 and AVX-512
     * kernels (docs/transfer.md). Missing for the others, so that it cannot
     * become a label of the CPU for kernels it does not touch (docs/learner.md). */
    int blas = cpu && runs_openblas(name, cpu->isa_cap) ? convsel_fingerprint_blas_isa(cpu) : -1;
    f[CONVSEL_FEATURE_blas_isa] = blas >= 0 ? (double)blas : NAN;
    f[CONVSEL_FEATURE_depthwise] = p->g > 1 && p->g == p->ic && p->g == p->oc ? 1.0 : 0.0;
    f[CONVSEL_FEATURE_primitive] = primitive >= 0 ? (double)primitive : NAN;

    for (size_t i = 0; i < CONVSEL_FEATURE_COUNT; i++)
        out[i] = (float)f[i];
}
