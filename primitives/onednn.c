/*
 * oneDNN's convolutions as four primitives that differ only in what oneDNN is
 * asked for: the direct algorithm with layouts of its choice, Winograd asked
 * for explicitly (convolution_auto never picks it, although it ran 2.9×
 * faster on VGG's C256 56² 3×3 layer here, 1.7× on a Cascade Lake), the
 * direct algorithm on plain nchw
 * tensors (which leaves oneDNN 2.6 only its im2col + sgemm implementation,
 * impl_info_str "x64:gemm:jit"; tests/test_onednn.c checks it), and
 * convolution_auto, which is what oneDNN users get by default.
 *
 * Every instance declares convsel layouts for src and dst, so that a plan can
 * chain it to any other primitive through a reorder; when oneDNN's choice is
 * not one of them, the descriptor is re-created with one forced.
 */
#include <omp.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "onednn_util.h"
#include "primitive.h"

struct onednn_variant {
    const char *name;
    dnnl_alg_kind_t alg;
    /* 1: src/dst nchw and weights (g)oihw forced; 0: "any" everywhere. */
    int plain;
};

static const struct onednn_variant variant_direct = {"onednn_direct", dnnl_convolution_direct, 0};
static const struct onednn_variant variant_winograd = {"onednn_winograd", dnnl_convolution_winograd, 0};
static const struct onednn_variant variant_gemm = {"onednn_gemm", dnnl_convolution_direct, 1};
static const struct onednn_variant variant_auto = {"onednn_auto", dnnl_convolution_auto, 0};

/* One run at a time per instance: run() re-points src, dst and the
 * scratchpad. */
struct onednn_state {
    dnnl_primitive_t conv;
    /* src, dst and the scratchpad have no buffer of their own: run() attaches
     * the caller's tensors and the instance's workspace (user scratchpad
     * mode, so a runner's layers can share one, as oneDNN's own library mode
     * shares one among primitives). */
    dnnl_memory_t src, weights, dst, scratchpad;
};

static void weights_dims(const convsel_problem *p, int *ndims, dnnl_dims_t dims)
{
    if (p->g > 1) {
        *ndims = 5;
        dims[0] = p->g;
        dims[1] = p->oc / p->g;
        dims[2] = p->ic / p->g;
        dims[3] = p->kh;
        dims[4] = p->kw;
    } else {
        *ndims = 4;
        dims[0] = p->oc;
        dims[1] = p->ic;
        dims[2] = p->kh;
        dims[3] = p->kw;
    }
}

/*
 * The primitive descriptor for p with the given activation format tags
 * (dnnl_format_tag_any lets oneDNN choose). The scratchpad is the user's:
 * its size is known at create, and it is the instance's workspace, which a
 * network runner shares among its layers.
 *
 * The far-side padding is passed as implied by the output size, negative ones
 * included (ResNet's 1×1 stride-2 layers: a trailing input row no output
 * reads); oneDNN 2.6 accepts down to 1 - stride, the bound
 * convsel_problem_validate also enforces, and
 * tests/test_onednn.c checks the results on such layers.
 */
static dnnl_status_t conv_pd_create(const convsel_problem *p, const struct onednn_variant *v, dnnl_engine_t engine,
                                    dnnl_format_tag_t src_tag, dnnl_format_tag_t dst_tag,
                                    dnnl_primitive_desc_t *pd)
{
    const dnnl_dims_t src_dims = {p->mb, p->ic, p->ih, p->iw};
    const dnnl_dims_t dst_dims = {p->mb, p->oc, p->oh, p->ow};
    dnnl_dims_t wei_dims;
    int wei_ndims;
    weights_dims(p, &wei_ndims, wei_dims);
    dnnl_format_tag_t wei_tag = v->plain ? (p->g > 1 ? dnnl_goihw : dnnl_oihw) : dnnl_format_tag_any;

    dnnl_memory_desc_t src_md, wei_md, dst_md;
    dnnl_status_t st = dnnl_memory_desc_init_by_tag(&src_md, 4, src_dims, dnnl_f32, src_tag);
    if (st == dnnl_success)
        st = dnnl_memory_desc_init_by_tag(&wei_md, wei_ndims, wei_dims, dnnl_f32, wei_tag);
    if (st == dnnl_success)
        st = dnnl_memory_desc_init_by_tag(&dst_md, 4, dst_dims, dnnl_f32, dst_tag);
    if (st != dnnl_success)
        return st;

    const dnnl_dims_t strides = {p->sh, p->sw};
    const dnnl_dims_t dilates = {p->dh, p->dw};
    const dnnl_dims_t padding_l = {p->ph, p->pw};
    const dnnl_dims_t padding_r = {convsel_problem_pad_bottom(p), convsel_problem_pad_right(p)};
    dnnl_convolution_desc_t desc;
    st = dnnl_dilated_convolution_forward_desc_init(&desc, dnnl_forward_inference, v->alg, &src_md, &wei_md, NULL,
                                                    &dst_md, strides, dilates, padding_l, padding_r);
    if (st != dnnl_success)
        return st;

    dnnl_primitive_attr_t attr;
    st = dnnl_primitive_attr_create(&attr);
    if (st != dnnl_success)
        return st;
    st = dnnl_primitive_attr_set_scratchpad_mode(attr, dnnl_scratchpad_mode_user);
    if (st == dnnl_success)
        st = dnnl_primitive_desc_create(pd, &desc, attr, engine, NULL);
    dnnl_primitive_attr_destroy(attr);
    return st;
}

/*
 * The descriptor an instance is built from, and the layouts it declares.
 * oneDNN's own choice is kept when it is one of convsel's layouts; otherwise
 * the odd side is forced, trying the layouts oneDNN's fast kernels prefer
 * first. On failure *pd is NULL and the last oneDNN status is returned.
 */
static dnnl_status_t resolve_pd(const convsel_problem *p, const struct onednn_variant *v, dnnl_engine_t engine,
                                dnnl_primitive_desc_t *pd, convsel_layout *src_layout, convsel_layout *dst_layout)
{
    static const convsel_layout fallbacks[] = {CONVSEL_LAYOUT_NCHW16C, CONVSEL_LAYOUT_NHWC, CONVSEL_LAYOUT_NCHW};
    *pd = NULL;
    if (v->plain) {
        *src_layout = *dst_layout = CONVSEL_LAYOUT_NCHW;
        return conv_pd_create(p, v, engine, dnnl_nchw, dnnl_nchw, pd);
    }
    dnnl_status_t st = conv_pd_create(p, v, engine, dnnl_format_tag_any, dnnl_format_tag_any, pd);
    if (st != dnnl_success)
        return st;
    int src = convsel_onednn_layout_of(dnnl_primitive_desc_query_md(*pd, dnnl_query_src_md, 0));
    int dst = convsel_onednn_layout_of(dnnl_primitive_desc_query_md(*pd, dnnl_query_dst_md, 0));
    if (src >= 0 && dst >= 0) {
        *src_layout = (convsel_layout)src;
        *dst_layout = (convsel_layout)dst;
        return dnnl_success;
    }
    dnnl_primitive_desc_destroy(*pd);
    *pd = NULL;
    for (size_t i = 0; i < CONVSEL_ARRAY_SIZE(fallbacks); i++) {
        convsel_layout s = src >= 0 ? (convsel_layout)src : fallbacks[i];
        convsel_layout d = dst >= 0 ? (convsel_layout)dst : fallbacks[i];
        st = conv_pd_create(p, v, engine, convsel_onednn_layout_tag(s), convsel_onednn_layout_tag(d), pd);
        if (st == dnnl_success) {
            *src_layout = s;
            *dst_layout = d;
            return dnnl_success;
        }
    }
    return st;
}

/* What oneDNN answers for a variant on a shape: whether it makes a
 * descriptor, the layouts resolve_pd settles on and the kind of kernel it
 * picked. Learning it takes a descriptor creation, milliseconds on large
 * layers for Winograd (its blocking search), and the selector asked it of
 * every layer three times each time it selected (twice whether Winograd
 * applies, once for the layouts and kernel): most of VGG-16's selection
 * time on the thirtieth session's Xeon
 * (bench/results/select_builds_session30.md). It depends on the shape, the
 * ISA in force and the number of threads oneDNN will use, and is kept per
 * process under all three, packed in the map's value: status, src and dst
 * layouts, kernel. */
enum { KERNEL_OWN, KERNEL_REFERENCE, KERNEL_IM2COL };

struct onednn_answer {
    dnnl_status_t status;
    convsel_layout src, dst;
    int kernel;
};

static pthread_mutex_t answers_lock = PTHREAD_MUTEX_INITIALIZER;
static struct convsel_strmap answers;

static size_t answer_pack(const struct onednn_answer *a)
{
    return (size_t)a->status | (size_t)a->src << 8 | (size_t)a->dst << 16 | (size_t)a->kernel << 24;
}

static struct onednn_answer answer_unpack(size_t v)
{
    struct onednn_answer a = {(dnnl_status_t)(v & 0xff), (convsel_layout)(v >> 8 & 0xff),
                              (convsel_layout)(v >> 16 & 0xff), (int)(v >> 24 & 0xff)};
    return a;
}

static struct onednn_answer onednn_ask(const struct onednn_variant *v, const convsel_problem *p, dnnl_engine_t engine)
{
    char shape[256], key[320];
    size_t cached;
    convsel_shape_key(p, shape, sizeof shape);
    snprintf(key, sizeof key, "%s|%d|%d|%s", v->name, (int)convsel_get_isa(), omp_get_max_threads(), shape);
    pthread_mutex_lock(&answers_lock);
    const int hit = convsel_strmap_get(&answers, key, &cached);
    pthread_mutex_unlock(&answers_lock);
    if (hit)
        return answer_unpack(cached);
    struct onednn_answer a = {dnnl_success, CONVSEL_LAYOUT_NCHW, CONVSEL_LAYOUT_NCHW, KERNEL_OWN};
    dnnl_primitive_desc_t pd;
    a.status = resolve_pd(p, v, engine, &pd, &a.src, &a.dst);
    if (a.status == dnnl_success) {
        const char *impl = NULL;
        if (dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl) == dnnl_success && impl) {
            convsel_onednn_kernel kind = convsel_onednn_kernel_kind(impl);
            a.kernel = kind == CONVSEL_ONEDNN_KERNEL_REFERENCE ? KERNEL_REFERENCE
                       : kind == CONVSEL_ONEDNN_KERNEL_IM2COL  ? KERNEL_IM2COL
                                                               : KERNEL_OWN;
        }
        dnnl_primitive_desc_destroy(pd);
    }
    /* Only oneDNN's verdicts are kept; a failure of another kind (out of
     * memory) is asked again next time, as is an answer the map had no room for. */
    if (a.status == dnnl_success || a.status == dnnl_unimplemented) {
        pthread_mutex_lock(&answers_lock);
        convsel_strmap_put(&answers, key, answer_pack(&a));
        pthread_mutex_unlock(&answers_lock);
    }
    return a;
}

static int onednn_applicable(const struct onednn_variant *v, const convsel_problem *p, char *why, size_t why_size)
{
    /* oneDNN's reference implementations accept every convolution; only
     * Winograd is refused on most shapes, and only oneDNN knows where. */
    if (v->alg != dnnl_convolution_winograd)
        return 1;
    dnnl_engine_t engine;
    if (convsel_onednn_get(&engine, NULL) != CONVSEL_OK) {
        if (why && why_size)
            snprintf(why, why_size, "%s", convsel_last_error());
        return 0;
    }
    dnnl_status_t st = onednn_ask(v, p, engine).status;
    if (st != dnnl_success) {
        if (why && why_size)
            snprintf(why, why_size, "oneDNN refuses Winograd here (%s)", convsel_onednn_status_str(st));
        return 0;
    }
    return 1;
}

static void onednn_destroy(struct convsel_impl *impl)
{
    struct onednn_state *s = impl->state;
    if (!s)
        return;
    if (s->conv)
        dnnl_primitive_destroy(s->conv);
    dnnl_memory_t mems[] = {s->src, s->weights, s->dst, s->scratchpad};
    for (size_t i = 0; i < CONVSEL_ARRAY_SIZE(mems); i++)
        if (mems[i])
            dnnl_memory_destroy(mems[i]);
    free(s);
    impl->state = NULL;
}

/* Copies the caller's plain goihw weights into the layout the convolution
 * wants (blocked, or Winograd-transformed), once, outside anything timed. */
static dnnl_status_t weights_reorder(const convsel_problem *p, dnnl_engine_t engine, dnnl_stream_t stream,
                                     const float *weights, dnnl_memory_t to)
{
    dnnl_dims_t dims;
    int ndims;
    weights_dims(p, &ndims, dims);
    dnnl_memory_desc_t plain_md;
    const dnnl_memory_desc_t *to_md;
    dnnl_status_t st =
        dnnl_memory_desc_init_by_tag(&plain_md, ndims, dims, dnnl_f32, ndims == 5 ? dnnl_goihw : dnnl_oihw);
    if (st == dnnl_success)
        st = dnnl_memory_get_memory_desc(to, &to_md);
    if (st != dnnl_success)
        return st;
    dnnl_memory_t from = NULL;
    dnnl_primitive_desc_t pd = NULL;
    dnnl_primitive_t reorder = NULL;
    /* A plain descriptor has no padding, so oneDNN does not write to the
     * caller's const buffer. */
    st = dnnl_memory_create(&from, &plain_md, engine, (void *)weights);
    if (st == dnnl_success)
        st = dnnl_reorder_primitive_desc_create(&pd, &plain_md, engine, to_md, engine, NULL);
    if (st == dnnl_success)
        st = dnnl_primitive_create(&reorder, pd);
    if (st == dnnl_success) {
        const dnnl_exec_arg_t args[] = {{DNNL_ARG_FROM, from}, {DNNL_ARG_TO, to}};
        st = dnnl_primitive_execute(reorder, stream, 2, args);
    }
    if (st == dnnl_success)
        st = dnnl_stream_wait(stream);
    if (reorder)
        dnnl_primitive_destroy(reorder);
    if (pd)
        dnnl_primitive_desc_destroy(pd);
    if (from)
        dnnl_memory_destroy(from);
    return st;
}

static convsel_status onednn_create(const struct onednn_variant *v, const convsel_problem *p, const float *weights,
                                    struct convsel_impl *impl)
{
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    convsel_status cst = convsel_onednn_get(&engine, &stream);
    if (cst != CONVSEL_OK)
        return cst;

    dnnl_primitive_desc_t pd;
    convsel_layout src_layout, dst_layout;
    dnnl_status_t st = resolve_pd(p, v, engine, &pd, &src_layout, &dst_layout);
    if (st != dnnl_success)
        return convsel_error(st == dnnl_unimplemented ? CONVSEL_NOT_APPLICABLE : CONVSEL_BACKEND_ERROR,
                             "%s: oneDNN cannot create the convolution (%s)", v->name,
                             convsel_onednn_status_str(st));

    struct onednn_state *s = calloc(1, sizeof *s);
    if (!s) {
        dnnl_primitive_desc_destroy(pd);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "%s: out of memory", v->name);
    }
    impl->state = s;
    const char *step = "the convolution";
    const dnnl_memory_desc_t *scratch_md = dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    size_t scratch_bytes = dnnl_memory_desc_get_size(scratch_md);
    size_t weights_bytes = dnnl_memory_desc_get_size(dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0));
    st = dnnl_primitive_create(&s->conv, pd);
    if (st == dnnl_success) {
        step = "the tensors";
        st = dnnl_memory_create(&s->src, dnnl_primitive_desc_query_md(pd, dnnl_query_src_md, 0), engine,
                                DNNL_MEMORY_NONE);
    }
    if (st == dnnl_success)
        st = dnnl_memory_create(&s->dst, dnnl_primitive_desc_query_md(pd, dnnl_query_dst_md, 0), engine,
                                DNNL_MEMORY_NONE);
    if (st == dnnl_success)
        st = dnnl_memory_create(&s->weights, dnnl_primitive_desc_query_md(pd, dnnl_query_weights_md, 0), engine,
                                DNNL_MEMORY_ALLOCATE);
    if (st == dnnl_success && scratch_bytes > 0)
        st = dnnl_memory_create(&s->scratchpad, scratch_md, engine, DNNL_MEMORY_NONE);
    if (st == dnnl_success) {
        step = "the weights reorder";
        st = weights_reorder(p, engine, stream, weights, s->weights);
    }
    dnnl_primitive_desc_destroy(pd);
    if (st != dnnl_success) {
        onednn_destroy(impl);
        return convsel_error(st == dnnl_out_of_memory ? CONVSEL_OUT_OF_MEMORY : CONVSEL_BACKEND_ERROR,
                             "%s: oneDNN failed creating %s (%s)", v->name, step, convsel_onednn_status_str(st));
    }
    impl->src_layout = src_layout;
    impl->dst_layout = dst_layout;
    impl->workspace_bytes = scratch_bytes;
    impl->weights_bytes = weights_bytes;
    return CONVSEL_OK;
}

static convsel_status onednn_run(const struct convsel_impl *impl, const float *src, float *dst, void *workspace)
{
    const struct onednn_state *s = impl->state;
    dnnl_stream_t stream;
    convsel_status cst = convsel_onednn_get(NULL, &stream);
    if (cst != CONVSEL_OK)
        return cst;
    /* Attaching a blocked buffer makes oneDNN zero its padded channels; src's
     * are zeros by contract, so its values do not change. */
    dnnl_status_t st = dnnl_memory_set_data_handle(s->src, (void *)src);
    if (st == dnnl_success)
        st = dnnl_memory_set_data_handle(s->dst, dst);
    if (st == dnnl_success && s->scratchpad)
        st = dnnl_memory_set_data_handle(s->scratchpad, workspace);
    if (st == dnnl_success) {
        const dnnl_exec_arg_t args[] = {
            {DNNL_ARG_SRC, s->src},
            {DNNL_ARG_WEIGHTS, s->weights},
            {DNNL_ARG_DST, s->dst},
            {DNNL_ARG_SCRATCHPAD, s->scratchpad},
        };
        st = dnnl_primitive_execute(s->conv, stream, s->scratchpad ? 4 : 3, args);
    }
    if (st == dnnl_success)
        st = dnnl_stream_wait(stream);
    if (st != dnnl_success)
        return convsel_error(CONVSEL_BACKEND_ERROR, "oneDNN: convolution failed (%s)", convsel_onednn_status_str(st));
    return CONVSEL_OK;
}

convsel_onednn_kernel convsel_onednn_kernel_kind(const char *impl)
{
    if (!impl)
        return CONVSEL_ONEDNN_KERNEL_OWN;
    /* A convolution run as an inner product: the inner product's own
     * implementation follows the prefix. */
    int inner_product = strncmp(impl, "ip:", 3) == 0;
    const char *rest = inner_product ? impl + 3 : impl;
    /* Where no optimised kernel applies, oneDNN runs its naive reference
     * loops ("ref:any"): on grouped layers of 4 channels per group on the
     * twelfth session's Xeon, 500-1250x slower than the fastest primitive
     * (docs/selection.md); that is convsel's reference, in kind. */
    if (strncmp(rest, "ref", 3) == 0)
        return CONVSEL_ONEDNN_KERNEL_REFERENCE;
    /* oneDNN's only gemm-based forward convolution on x64 is the im2col +
     * sgemm one ("x64:gemm:jit"), which is what onednn_gemm forces; an inner
     * product's GEMM needs no im2col and is not it. */
    if (!inner_product && strstr(rest, "gemm"))
        return CONVSEL_ONEDNN_KERNEL_IM2COL;
    return CONVSEL_ONEDNN_KERNEL_OWN;
}

/* The layouts create() would declare, from the primitive descriptor alone
 * (0.1-1 ms, no weights reorder, no scratchpad). */
static convsel_status onednn_query_layouts(const struct onednn_variant *v, const convsel_problem *p, int threads,
                                           convsel_layout *src, convsel_layout *dst, const char **runs_as)
{
    dnnl_engine_t engine;
    convsel_status cst = convsel_onednn_get(&engine, NULL);
    if (cst != CONVSEL_OK)
        return cst;
    /* oneDNN's choice can depend on the thread count it sees. */
    convsel_threads_set(threads);
    const struct onednn_answer a = onednn_ask(v, p, engine);
    if (a.status != dnnl_success)
        return convsel_error(a.status == dnnl_unimplemented ? CONVSEL_NOT_APPLICABLE : CONVSEL_BACKEND_ERROR,
                             "%s: oneDNN cannot create the convolution (%s)", v->name,
                             convsel_onednn_status_str(a.status));
    *src = a.src;
    *dst = a.dst;
    if (runs_as)
        *runs_as = a.kernel == KERNEL_REFERENCE                      ? "reference"
                   : v != &variant_gemm && a.kernel == KERNEL_IM2COL ? variant_gemm.name
                                                                     : NULL;
    return CONVSEL_OK;
}

convsel_status convsel_onednn_impl_info(const char *primitive, const convsel_problem *p, char *buf, size_t size)
{
    static const struct onednn_variant *const variants[] = {&variant_direct, &variant_winograd, &variant_gemm,
                                                            &variant_auto};
    const struct onednn_variant *v = NULL;
    for (size_t i = 0; i < CONVSEL_ARRAY_SIZE(variants); i++)
        if (strcmp(variants[i]->name, primitive) == 0)
            v = variants[i];
    if (!v)
        return convsel_error(CONVSEL_NOT_FOUND, "'%s' is not a oneDNN primitive", primitive);
    convsel_status cst = convsel_problem_validate(p);
    if (cst != CONVSEL_OK)
        return cst;
    dnnl_engine_t engine;
    if ((cst = convsel_onednn_get(&engine, NULL)) != CONVSEL_OK)
        return cst;
    dnnl_primitive_desc_t pd;
    convsel_layout src, dst;
    dnnl_status_t st = resolve_pd(p, v, engine, &pd, &src, &dst);
    if (st != dnnl_success)
        return convsel_error(st == dnnl_unimplemented ? CONVSEL_NOT_APPLICABLE : CONVSEL_BACKEND_ERROR,
                             "%s: oneDNN cannot create the convolution (%s)", v->name,
                             convsel_onednn_status_str(st));
    const char *impl = NULL;
    st = dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0, &impl);
    snprintf(buf, size, "%s", st == dnnl_success && impl ? impl : "?");
    dnnl_primitive_desc_destroy(pd);
    return CONVSEL_OK;
}

/* The function table wants one function per primitive; these bind a variant. */
#define ONEDNN_PRIMITIVE(id, layouts_text, error, dispatcher)                                                \
    static int id##_applicable(const convsel_problem *p, char *why, size_t why_size)                         \
    {                                                                                                        \
        return onednn_applicable(&variant_##id, p, why, why_size);                                           \
    }                                                                                                        \
    static convsel_status id##_create(const convsel_problem *p, int threads, const float *weights,          \
                                      struct convsel_impl *impl)                                             \
    {                                                                                                        \
        (void)threads; /* instance.c has set OpenMP's count, which oneDNN reads */                          \
        return onednn_create(&variant_##id, p, weights, impl);                                               \
    }                                                                                                        \
    static convsel_status id##_query_layouts(const convsel_problem *p, int threads, convsel_layout *src,    \
                                             convsel_layout *dst)                                            \
    {                                                                                                        \
        return onednn_query_layouts(&variant_##id, p, threads, src, dst, NULL);                              \
    }                                                                                                        \
    static convsel_status id##_query_kernel(const convsel_problem *p, int threads, convsel_layout *src,     \
                                            convsel_layout *dst, const char **runs_as)                       \
    {                                                                                                        \
        return onednn_query_layouts(&variant_##id, p, threads, src, dst, runs_as);                           \
    }                                                                                                        \
    const struct convsel_primitive convsel_onednn_##id = {                                                   \
        .name = "onednn_" #id,                                                                               \
        .family = "onednn",                                                                                  \
        .layouts = layouts_text,                                                                             \
        .expected_error = error,                                                                             \
        .is_reference = 0,                                                                                   \
        .is_dispatcher = dispatcher,                                                                         \
        .applicable = id##_applicable,                                                                       \
        .create = id##_create,                                                                               \
        .query_layouts = id##_query_layouts,                                                                 \
        .query_kernel = id##_query_kernel,                                                                   \
        .run = onednn_run,                                                                                   \
        .destroy = onednn_destroy,                                                                           \
    };

/*
 * expected_error: a little above the worst max|y - y_ref| / max|y_ref| that
 * bench/onednn_error measured on every layer of resnet_50 and vgg_19 at mb1
 * (uniform [-1, 1) data, 1 and 2 threads, oneDNN 2.6.3, AVX-512;
 * bench/results/onednn_error.md): direct and auto 2.08e-6 (brgconv),
 * Winograd 3.15e-6 (jit_wino_4x3 on VGG's conv4_1), gemm 6.8e-7.
 */
ONEDNN_PRIMITIVE(direct, "any (oneDNN picks)", 2.5e-6, 0)
ONEDNN_PRIMITIVE(winograd, "any (oneDNN picks)", 4e-6, 0)
ONEDNN_PRIMITIVE(gemm, "nchw", 1e-6, 0)
ONEDNN_PRIMITIVE(auto, "any (oneDNN picks)", 2.5e-6, 1)
