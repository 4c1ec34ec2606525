/*
 * The one function table every primitive fills (as ggml's backends and
 * oneDNN's implementation lists do). A primitive is a
 * `const struct convsel_primitive` in its family's file, registered by one
 * line in primitives/registry.c.
 */
#ifndef CONVSEL_PRIMITIVE_H
#define CONVSEL_PRIMITIVE_H

#include <stddef.h>

#include "convsel.h"

/* What create() fills in: the layouts the instance consumes and produces, the
 * scratch a run needs, and its private state. */
struct convsel_impl {
    convsel_layout src_layout;
    convsel_layout dst_layout;
    /* Bytes of scratch run() is handed (64-byte aligned). Its contents are
     * undefined at the start of every run: a network runner hands all its
     * layers one buffer, as frameworks share one oneDNN scratchpad, so
     * another instance may have written it since. Whatever must survive
     * from run to run (transformed weights, zeros a kernel relies on) is
     * state, not workspace. */
    size_t workspace_bytes;
    /* Bytes of the weights as create() keeps them in state: transformed
     * (Winograd), blocked and padded to the vector width, or plain: what a
     * network reads from memory where the layers in between evicted them. */
    size_t weights_bytes;
    void *state;
};

struct convsel_primitive {
    const char *name;
    const char *family;
    /* The activation layouts, for listings: "nchw", "nChw16c", or
     * "any (oneDNN picks)" when create() decides. */
    const char *layouts;
    /* Expected max|y - y_ref| / max|y_ref| on real network layers; tests use a
     * threshold derived from it and the selector's --max-error compares to it. */
    double expected_error;
    int is_reference;
    /* 1 if the primitive only dispatches to the implementation another
     * catalogue primitive runs (onednn_auto: oneDNN's own choice among its
     * direct, gemm and Winograd kernels). It is still measured and selectable
     * (it is the baseline), but ranking metrics score implementations, so a
     * configuration's ranking leaves it out (learner/eval.c). */
    int is_dispatcher;
    /* Its products run OpenBLAS's sgemm under ISA caps below this level
     * (a convsel_isa; 0: never): the GEMM primitives always
     * (CONVSEL_ISA_COUNT), convsel's Winograd only below AVX2, where it has
     * no GEMM of its own. The learner sees OpenBLAS's kernels only there. */
    int blas_below;
    /* 1 if the primitive computes problem; else 0 and a reason in why. Must not
     * allocate or touch a backend beyond what the decision needs. */
    int (*applicable)(const convsel_problem *problem, char *why, size_t why_size);
    /* weights: plain goihw. Transforms and reorders of the weights happen here.
     * Called only on problems applicable() accepted (it may still fail, e.g.
     * NOT_APPLICABLE when a backend refuses). */
    convsel_status (*create)(const convsel_problem *problem, int threads, const float *weights,
                             struct convsel_impl *impl);
    /* Optional: the layouts create() would choose, without creating (cheap
     * answers for the selector). NULL: the selector creates an instance. */
    convsel_status (*query_layouts)(const convsel_problem *problem, int threads, convsel_layout *src,
                                    convsel_layout *dst);
    /* Optional, for primitives that let a library pick the kernel: the
     * layouts, as query_layouts, and in *runs_as the name of the catalogue
     * primitive whose kernel the library would run here, or NULL when it is
     * this primitive's own (onednn_direct as oneDNN's im2col + sgemm code is
     * onednn_gemm's kernel; "reference" where the library would run its
     * naive reference loops). */
    convsel_status (*query_kernel)(const convsel_problem *problem, int threads, convsel_layout *src,
                                   convsel_layout *dst, const char **runs_as);
    /* workspace: impl->workspace_bytes of scratch (NULL when 0), see above. */
    convsel_status (*run)(const struct convsel_impl *impl, const float *src, float *dst, void *workspace);
    void (*destroy)(struct convsel_impl *impl);
};

/* The registry, in the order candidates are listed. */
extern const struct convsel_primitive *const convsel_primitives[];
extern const size_t convsel_primitives_count;

#endif
