/* The catalogue, in listing order. Adding a primitive: one file, one line here. */
#include "primitive.h"

extern const struct convsel_primitive convsel_reference;
extern const struct convsel_primitive convsel_onednn_direct, convsel_onednn_winograd, convsel_onednn_gemm, convsel_onednn_auto;
extern const struct convsel_primitive convsel_im2col_gemm, convsel_gemm_1x1;
extern const struct convsel_primitive convsel_direct_simd;
extern const struct convsel_primitive convsel_winograd_2x2_3x3, convsel_winograd_4x4_3x3;

const struct convsel_primitive *const convsel_primitives[] = {
    &convsel_reference,
    &convsel_onednn_direct, &convsel_onednn_winograd, &convsel_onednn_gemm, &convsel_onednn_auto,
    &convsel_im2col_gemm, &convsel_gemm_1x1,
    &convsel_direct_simd,
    &convsel_winograd_2x2_3x3, &convsel_winograd_4x4_3x3,
};

const size_t convsel_primitives_count = sizeof convsel_primitives / sizeof convsel_primitives[0];
