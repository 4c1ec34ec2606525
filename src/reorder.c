/* Activation reorders between convsel layouts, done by oneDNN. They are what a
 * plan pays when consecutive layers run primitives with different layouts. */
#include <stdlib.h>

#include "internal.h"
#include "onednn_util.h"

struct convsel_reorder {
    dnnl_primitive_t primitive;
    /* Memory objects without a buffer; run() points them at the caller's. */
    dnnl_memory_t src, dst;
    int threads;
};

void convsel_reorder_destroy(convsel_reorder *reorder)
{
    if (!reorder)
        return;
    if (reorder->primitive)
        dnnl_primitive_destroy(reorder->primitive);
    if (reorder->src)
        dnnl_memory_destroy(reorder->src);
    if (reorder->dst)
        dnnl_memory_destroy(reorder->dst);
    free(reorder);
}

convsel_status convsel_reorder_create(int64_t mb, int64_t c, int64_t h, int64_t w, convsel_layout from,
                                      convsel_layout to, int threads, convsel_reorder **reorder)
{
    if (!reorder)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "reorder out-parameter is NULL");
    *reorder = NULL;
    if (mb < 1 || c < 1 || h < 1 || w < 1)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "reorder: sizes must be positive (got %lldx%lldx%lldx%lld)",
                             (long long)mb, (long long)c, (long long)h, (long long)w);
    if ((int)from < 0 || from >= CONVSEL_LAYOUT_COUNT || (int)to < 0 || to >= CONVSEL_LAYOUT_COUNT)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "reorder: unknown layout (%d -> %d)", (int)from, (int)to);
    if (threads < 1)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "reorder: threads must be >= 1 (got %d)", threads);
    size_t limit = convsel_max_tensor_bytes();
    size_t elems = CONVSEL_MAX(convsel_layout_elems(from, mb, c, h, w), convsel_layout_elems(to, mb, c, h, w));
    if (elems > limit / sizeof(float))
        return convsel_error(CONVSEL_TOO_LARGE, "reorder: %lldx%lldx%lldx%lld tensor over the size limit",
                             (long long)mb, (long long)c, (long long)h, (long long)w);

    dnnl_engine_t engine;
    convsel_status st = convsel_onednn_get(&engine, NULL);
    if (st != CONVSEL_OK)
        return st;
    dnnl_memory_desc_t src_md, dst_md;
    if ((st = convsel_onednn_activation_md(&src_md, mb, c, h, w, from)) != CONVSEL_OK ||
        (st = convsel_onednn_activation_md(&dst_md, mb, c, h, w, to)) != CONVSEL_OK)
        return st;

    convsel_reorder *r = calloc(1, sizeof *r);
    if (!r)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "reorder: out of memory");
    r->threads = threads;
    /* oneDNN's OpenMP kernels size their work split at creation. */
    convsel_threads_set(threads);
    dnnl_primitive_desc_t pd = NULL;
    dnnl_status_t status = dnnl_reorder_primitive_desc_create(&pd, &src_md, engine, &dst_md, engine, NULL);
    if (status == dnnl_success) {
        status = dnnl_primitive_create(&r->primitive, pd);
        dnnl_primitive_desc_destroy(pd);
    }
    if (status == dnnl_success)
        status = dnnl_memory_create(&r->src, &src_md, engine, DNNL_MEMORY_NONE);
    if (status == dnnl_success)
        status = dnnl_memory_create(&r->dst, &dst_md, engine, DNNL_MEMORY_NONE);
    if (status != dnnl_success) {
        convsel_reorder_destroy(r);
        return convsel_error(status == dnnl_out_of_memory ? CONVSEL_OUT_OF_MEMORY : CONVSEL_BACKEND_ERROR,
                             "oneDNN: cannot create the %s -> %s reorder (%s)", convsel_layout_name(from),
                             convsel_layout_name(to), convsel_onednn_status_str(status));
    }
    *reorder = r;
    return CONVSEL_OK;
}

convsel_status convsel_reorder_run(convsel_reorder *reorder, const float *src, float *dst)
{
    if (!reorder || !src || !dst)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "reorder, src and dst are required");
    dnnl_stream_t stream;
    convsel_status st = convsel_onednn_get(NULL, &stream);
    if (st != CONVSEL_OK)
        return st;
    convsel_threads_set(reorder->threads);
    /* oneDNN writes zeros into the padded channels of a blocked buffer when it
     * is attached, src included: the contract says they are zeros already,
     * so src's values do not change. */
    dnnl_status_t s = dnnl_memory_set_data_handle(reorder->src, (void *)src);
    if (s == dnnl_success)
        s = dnnl_memory_set_data_handle(reorder->dst, dst);
    if (s == dnnl_success) {
        const dnnl_exec_arg_t args[] = {
            {DNNL_ARG_FROM, reorder->src},
            {DNNL_ARG_TO, reorder->dst},
        };
        s = dnnl_primitive_execute(reorder->primitive, stream, 2, args);
    }
    if (s == dnnl_success)
        s = dnnl_stream_wait(stream);
    if (s != dnnl_success)
        return convsel_error(CONVSEL_BACKEND_ERROR, "oneDNN: reorder failed (%s)", convsel_onednn_status_str(s));
    return CONVSEL_OK;
}
