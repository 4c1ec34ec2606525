/*
 * The feature vector the learner sees for one (problem, threads, primitive,
 * CPU). The list is a versioned schema: a model file stores the names, and a
 * model trained on another list is refused at load time.
 */
#ifndef CONVSEL_FEATURES_H
#define CONVSEL_FEATURES_H

#include <stddef.h>

#include "convsel.h"

/* Bump whenever a feature is added, removed, reordered or its meaning changes. */
#define CONVSEL_FEATURE_SCHEMA_VERSION 4

/* X(name): the order is the column order. */
#define CONVSEL_FEATURE_MAP(X)                                                                     \
    X(g) X(mb) X(ic) X(oc) X(ih) X(iw) X(oh) X(ow) X(kh) X(kw) X(sh) X(sw) X(ph) X(pw) X(dh) X(dw) \
    X(ic_per_g) X(oc_per_g)                                                                        \
    X(threads)                                                                                     \
    X(log_flops) X(log_bytes) X(intensity)                                                         \
    X(gemm_m) X(gemm_k) X(gemm_n) X(log_gemm_m) X(log_gemm_k) X(log_gemm_n) X(log_im2col_bytes)    \
    X(wino2_tiles) X(wino4_tiles) X(wino2_waste) X(wino4_waste)                                    \
    X(pad_waste_ic8) X(pad_waste_oc8) X(pad_waste_ic16) X(pad_waste_oc16)                          \
    X(pad_waste_icg_block) X(pad_waste_ocg_block) X(channel_fit_block)                             \
    X(ws_over_l1) X(ws_over_l2) X(ws_over_l3) X(weights_over_l2)                                   \
    X(log_flops_per_thread) X(rows_per_thread) X(thread_imbalance)                                 \
    X(isa_cap) X(cores) X(blas_isa)                                                                \
    X(depthwise)                                                                                   \
    X(primitive)

enum {
#define CONVSEL_FEATURE_ENUM(name) CONVSEL_FEATURE_##name,
    CONVSEL_FEATURE_MAP(CONVSEL_FEATURE_ENUM)
#undef CONVSEL_FEATURE_ENUM
    CONVSEL_FEATURE_COUNT
};

/* Name of feature i (i < CONVSEL_FEATURE_COUNT). */
const char *convsel_feature_name(size_t i);

/* 1 for features whose values are category codes, not ordered numbers. */
int convsel_feature_is_categorical(size_t i);

/*
 * Fills out[CONVSEL_FEATURE_COUNT]. primitive is the primitive's index in the
 * model's list (categorical), or -1 when unknown; name its name (NULL when
 * unknown), which says whether it runs OpenBLAS (blas_isa is missing for a
 * primitive that does not, or is not in the catalogue). cpu may be NULL: the
 * CPU's features are then missing (NaN), which the trees route like the
 * smallest value. Never fails; degenerate sizes give NaN or 0, never a trap.
 */
void convsel_features_compute(const convsel_problem *problem, int threads, int primitive, const char *name,
                              const convsel_fingerprint *cpu, float *out);

/* Bytes a convolution moves at least: f32 src + weights + dst. */
double convsel_problem_bytes(const convsel_problem *problem);

#endif
