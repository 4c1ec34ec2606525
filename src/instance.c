/* The public face of the primitive catalogue: lookup, applicability, and
 * instances that remember their thread count. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "primitive.h"

struct convsel_instance {
    const struct convsel_primitive *primitive;
    size_t index;
    int threads;
    struct convsel_impl impl;
    /* What runs use: the caller's (convsel_instance_set_workspace), or else
     * own, allocated by the first run, so that instances that will share one
     * never hold their own. */
    void *workspace, *own;
};

size_t convsel_primitive_count(void)
{
    return convsel_primitives_count;
}

static const struct convsel_primitive *primitive_at(size_t i)
{
    return i < convsel_primitives_count ? convsel_primitives[i] : NULL;
}

const char *convsel_primitive_name(size_t i)
{
    return primitive_at(i) ? primitive_at(i)->name : NULL;
}

const char *convsel_primitive_family(size_t i)
{
    return primitive_at(i) ? primitive_at(i)->family : NULL;
}

const char *convsel_primitive_layouts(size_t i)
{
    return primitive_at(i) ? primitive_at(i)->layouts : NULL;
}

double convsel_primitive_expected_error(size_t i)
{
    return primitive_at(i) ? primitive_at(i)->expected_error : 0.0;
}

int convsel_primitive_is_reference(size_t i)
{
    return primitive_at(i) ? primitive_at(i)->is_reference : 0;
}

int convsel_primitive_is_dispatcher(size_t i)
{
    return primitive_at(i) ? primitive_at(i)->is_dispatcher : 0;
}

int convsel_primitive_runs_openblas(size_t i, convsel_isa cap)
{
    return primitive_at(i) ? (int)cap < primitive_at(i)->blas_below : 0;
}

size_t convsel_primitive_index(const char *name)
{
    for (size_t i = 0; name && i < convsel_primitives_count; i++)
        if (strcmp(convsel_primitives[i]->name, name) == 0)
            return i;
    return SIZE_MAX;
}

convsel_status convsel_primitive_find(const char *name, size_t *index)
{
    size_t i = convsel_primitive_index(name);
    if (i != SIZE_MAX) {
        *index = i;
        return CONVSEL_OK;
    }
    return convsel_error(CONVSEL_NOT_FOUND, "unknown primitive '%s' (see 'convsel primitives')", name);
}

int convsel_primitive_applicable(size_t i, const convsel_problem *problem, char *why, size_t why_size)
{
    const struct convsel_primitive *prim = primitive_at(i);
    if (why && why_size)
        why[0] = '\0';
    if (!prim || !problem) {
        if (why && why_size)
            snprintf(why, why_size, "no such primitive");
        return 0;
    }
    if (convsel_problem_validate(problem) != CONVSEL_OK) {
        if (why && why_size)
            snprintf(why, why_size, "invalid problem: %s", convsel_last_error());
        return 0;
    }
    convsel_isa_init_from_env();
    return prim->applicable(problem, why, why_size);
}

convsel_status convsel_instance_create(size_t i, const convsel_problem *problem, int threads,
                                       const float *weights, convsel_instance **instance)
{
    char why[256];
    const struct convsel_primitive *prim = primitive_at(i);
    if (!instance)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "instance out-parameter is NULL");
    *instance = NULL;
    if (!prim)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "no primitive with index %zu", i);
    if (!problem || !weights)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "%s: problem and weights are required", prim->name);
    if (threads < 1)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "%s: threads must be >= 1 (got %d)", prim->name, threads);
    convsel_status st = convsel_problem_validate(problem);
    if (st != CONVSEL_OK)
        return st;
    convsel_isa_lock();
    if (!prim->applicable(problem, why, sizeof why))
        return convsel_error(CONVSEL_NOT_APPLICABLE, "%s: %s", prim->name, why);

    convsel_instance *inst = calloc(1, sizeof *inst);
    if (!inst)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "%s: out of memory", prim->name);
    inst->primitive = prim;
    inst->index = i;
    inst->threads = threads;
    /* oneDNN sizes its kernels by the thread count at creation time. */
    convsel_threads_set(threads);
    st = prim->create(problem, threads, weights, &inst->impl);
    if (st != CONVSEL_OK) {
        free(inst);
        return st;
    }
    *instance = inst;
    return CONVSEL_OK;
}

void convsel_instance_destroy(convsel_instance *instance)
{
    if (!instance)
        return;
    instance->primitive->destroy(&instance->impl);
    convsel_free(instance->own);
    free(instance);
}

convsel_status convsel_instance_run(convsel_instance *instance, const float *src, float *dst)
{
    return convsel_instance_run_in(instance, src, dst, NULL);
}

/* Declared in internal.h. */
convsel_status convsel_instance_run_in(convsel_instance *instance, const float *src, float *dst, void *workspace)
{
    if (!instance || !src || !dst)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "instance, src and dst are required");
    /* The caller's workspace, else the instance's (its own, made here). */
    if (!workspace || !instance->impl.workspace_bytes) {
        if (!instance->workspace && instance->impl.workspace_bytes) {
            /* Touched here, outside whatever the caller times after a warm-up. */
            instance->own = convsel_alloc(instance->impl.workspace_bytes);
            if (!instance->own)
                return convsel_error(CONVSEL_OUT_OF_MEMORY, "%s: out of memory for a %zu-byte workspace",
                                     instance->primitive->name, instance->impl.workspace_bytes);
            memset(instance->own, 0, instance->impl.workspace_bytes);
            instance->workspace = instance->own;
        }
        workspace = instance->workspace;
    }
    convsel_threads_set(instance->threads);
    return instance->primitive->run(&instance->impl, src, dst, workspace);
}

convsel_status convsel_instance_set_workspace(convsel_instance *instance, void *workspace, size_t bytes)
{
    if (!instance)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "instance is NULL");
    const char *name = instance->primitive->name;
    if (workspace && bytes < instance->impl.workspace_bytes)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "%s: a workspace of %zu bytes is smaller than the %zu it needs",
                             name, bytes, instance->impl.workspace_bytes);
    if ((uintptr_t)workspace % 64)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "%s: the workspace is not 64-byte aligned", name);
    convsel_free(instance->own);
    instance->own = NULL;
    instance->workspace = instance->impl.workspace_bytes ? workspace : NULL;
    return CONVSEL_OK;
}

convsel_layout convsel_instance_src_layout(const convsel_instance *instance)
{
    return instance->impl.src_layout;
}

convsel_layout convsel_instance_dst_layout(const convsel_instance *instance)
{
    return instance->impl.dst_layout;
}

size_t convsel_instance_workspace_bytes(const convsel_instance *instance)
{
    return instance->impl.workspace_bytes;
}

size_t convsel_instance_weights_bytes(const convsel_instance *instance)
{
    return instance->impl.weights_bytes;
}

size_t convsel_instance_primitive(const convsel_instance *instance)
{
    return instance->index;
}
