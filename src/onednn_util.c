#include <pthread.h>

#include <oneapi/dnnl/dnnl_debug.h>

#include "internal.h"
#include "onednn_util.h"

static pthread_once_t onednn_once = PTHREAD_ONCE_INIT;
static dnnl_engine_t onednn_engine;
static dnnl_stream_t onednn_stream;
static dnnl_status_t onednn_init_status = dnnl_success;

/* Never destroyed: instances may outlive any scope we could tie them to, and
 * oneDNN's CPU engine holds no resource the OS does not reclaim at exit. */
static void onednn_init(void)
{
    onednn_init_status = dnnl_engine_create(&onednn_engine, dnnl_cpu, 0);
    if (onednn_init_status != dnnl_success)
        return;
    onednn_init_status = dnnl_stream_create(&onednn_stream, onednn_engine, dnnl_stream_default_flags);
    if (onednn_init_status != dnnl_success) {
        dnnl_engine_destroy(onednn_engine);
        onednn_engine = NULL;
    }
}

convsel_status convsel_onednn_get(dnnl_engine_t *engine, dnnl_stream_t *stream)
{
    convsel_isa_lock();
    pthread_once(&onednn_once, onednn_init);
    if (onednn_init_status != dnnl_success)
        return convsel_error(CONVSEL_BACKEND_ERROR, "oneDNN: cannot create the CPU engine and stream (%s)",
                             dnnl_status2str(onednn_init_status));
    if (engine)
        *engine = onednn_engine;
    if (stream)
        *stream = onednn_stream;
    return CONVSEL_OK;
}

const char *convsel_onednn_status_str(dnnl_status_t status)
{
    return dnnl_status2str(status);
}

dnnl_format_tag_t convsel_onednn_layout_tag(convsel_layout layout)
{
    switch (layout) {
    case CONVSEL_LAYOUT_NCHW: return dnnl_nchw;
    case CONVSEL_LAYOUT_NHWC: return dnnl_nhwc;
    case CONVSEL_LAYOUT_NCHW8C: return dnnl_nChw8c;
    case CONVSEL_LAYOUT_NCHW16C: return dnnl_nChw16c;
    default: return dnnl_format_tag_undef;
    }
}

convsel_status convsel_onednn_activation_md(dnnl_memory_desc_t *md, int64_t mb, int64_t c, int64_t h, int64_t w,
                                            convsel_layout layout)
{
    dnnl_format_tag_t tag = convsel_onednn_layout_tag(layout);
    if (tag == dnnl_format_tag_undef)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "unknown layout %d", (int)layout);
    const dnnl_dims_t dims = {mb, c, h, w};
    dnnl_status_t st = dnnl_memory_desc_init_by_tag(md, 4, dims, dnnl_f32, tag);
    if (st != dnnl_success)
        return convsel_error(CONVSEL_BACKEND_ERROR, "oneDNN: cannot describe a %lldx%lldx%lldx%lld %s tensor (%s)",
                             (long long)mb, (long long)c, (long long)h, (long long)w, convsel_layout_name(layout),
                             dnnl_status2str(st));
    return CONVSEL_OK;
}

int convsel_onednn_layout_of(const dnnl_memory_desc_t *md)
{
    if (!md || md->ndims != 4 || md->data_type != dnnl_f32)
        return -1;
    for (int i = 0; i < CONVSEL_LAYOUT_COUNT; i++) {
        dnnl_memory_desc_t want;
        const dnnl_dims_t dims = {md->dims[0], md->dims[1], md->dims[2], md->dims[3]};
        if (dnnl_memory_desc_init_by_tag(&want, 4, dims, dnnl_f32, convsel_onednn_layout_tag((convsel_layout)i)) !=
            dnnl_success)
            continue;
        if (dnnl_memory_desc_equal(md, &want))
            return i;
    }
    return -1;
}
