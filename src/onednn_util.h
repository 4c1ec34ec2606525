/*
 * What every oneDNN user in convsel shares: one CPU engine and stream for the
 * process, and the mapping between convsel_layout and oneDNN memory
 * descriptors. Internal; never installed.
 */
#ifndef CONVSEL_ONEDNN_UTIL_H
#define CONVSEL_ONEDNN_UTIL_H

#include <oneapi/dnnl/dnnl.h>

#include "convsel.h"

/* The process-wide CPU engine and stream, created on the first call (any
 * thread; later calls return the same pair). Locks the ISA cap first, since
 * oneDNN reads its maximum ISA when it initialises. Either out-parameter may
 * be NULL. Returns OK or BACKEND_ERROR. */
convsel_status convsel_onednn_get(dnnl_engine_t *engine, dnnl_stream_t *stream);

/* oneDNN's name of a status ("unimplemented"). */
const char *convsel_onednn_status_str(dnnl_status_t status);

/* The format tag of an activation layout (dnnl_nchw, dnnl_nhwc, ...). */
dnnl_format_tag_t convsel_onednn_layout_tag(convsel_layout layout);

/* Describes an mb×c×h×w f32 activation in layout. Returns OK or BACKEND_ERROR. */
convsel_status convsel_onednn_activation_md(dnnl_memory_desc_t *md, int64_t mb, int64_t c, int64_t h, int64_t w,
                                            convsel_layout layout);

/* The convsel layout md is exactly equal to (same dims, blocking, padding),
 * or -1 when it is none of them. */
int convsel_onednn_layout_of(const dnnl_memory_desc_t *md);

/* The implementation oneDNN picks for oneDNN primitive `primitive`
 * ("onednn_gemm", ...) on p, as its impl_info_str ("gemm:jit",
 * "jit_wino_4x3:avx512_core"), written into buf; for tests and benchmarks.
 * Threads as set now. Returns OK, NOT_FOUND, NOT_APPLICABLE, INVALID_ARGUMENT
 * or BACKEND_ERROR. Defined in primitives/onednn.c. */
convsel_status convsel_onednn_impl_info(const char *primitive, const convsel_problem *p, char *buf, size_t size);

/* What kind of kernel an impl_info_str names, for pricing (convsel_primitive_runs_as). */
typedef enum {
    CONVSEL_ONEDNN_KERNEL_OWN,       /* a kernel of its own: JIT, brgemm, Winograd, inner product */
    CONVSEL_ONEDNN_KERNEL_IM2COL,    /* "gemm:jit", the im2col + sgemm code onednn_gemm forces */
    CONVSEL_ONEDNN_KERNEL_REFERENCE, /* the naive reference loops, "ref:any" or "ip:ref:any" */
} convsel_onednn_kernel;

/* The kind of impl ("x64:gemm:jit", "ip:x64:gemm:jit", "brgconv:avx512_core",
 * ...). A convolution whose kernel covers its whole unpadded input is an
 * inner product, and oneDNN runs it as one ("ip:" and the inner product's
 * implementation): one GEMM without im2col, 10x faster than "gemm:jit" on
 * g1mb8_ic16ih7iw7_oc16oh1ow1_kh7kw7 (0.0017 against 0.0198 ms,
 * docs/selection.md), so "ip:...gemm..." is a kernel of its own. NULL: OWN. */
convsel_onednn_kernel convsel_onednn_kernel_kind(const char *impl);

#endif
