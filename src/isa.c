#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#include <oneapi/dnnl/dnnl.h>

#include "internal.h"

static const char *const isa_names[] = {
#define CONVSEL_ISA_TEXT(name, text) text,
    CONVSEL_ISA_MAP(CONVSEL_ISA_TEXT)
#undef CONVSEL_ISA_TEXT
};

static convsel_isa isa_cap = CONVSEL_ISA_AVX512;
static int isa_locked;
static pthread_once_t isa_env_once = PTHREAD_ONCE_INIT;

const char *convsel_isa_name(convsel_isa isa)
{
    if ((int)isa < 0 || isa >= CONVSEL_ISA_COUNT)
        return "unknown";
    return isa_names[isa];
}

convsel_status convsel_isa_parse(const char *text, convsel_isa *isa)
{
    for (int i = 0; i < CONVSEL_ISA_COUNT; i++) {
        if (strcmp(text, isa_names[i]) == 0) {
            *isa = (convsel_isa)i;
            return CONVSEL_OK;
        }
    }
    return convsel_error(CONVSEL_INVALID_ARGUMENT, "unknown ISA '%s' (scalar, sse41, avx2, avx512)", text);
}

static convsel_isa isa_detected(void)
{
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512bw") &&
        __builtin_cpu_supports("avx512dq") && __builtin_cpu_supports("avx512vl"))
        return CONVSEL_ISA_AVX512;
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
        return CONVSEL_ISA_AVX2;
    if (__builtin_cpu_supports("sse4.1"))
        return CONVSEL_ISA_SSE41;
    return CONVSEL_ISA_SCALAR;
}

/* oneDNN's names for our caps: sse41 and avx2 map directly; avx512 is
 * avx512_core (the level oneDNN's Winograd needs); scalar has no oneDNN
 * equivalent below sse41, so oneDNN keeps sse41 there. */
static dnnl_cpu_isa_t onednn_isa(convsel_isa isa)
{
    switch (isa) {
    case CONVSEL_ISA_AVX512: return dnnl_cpu_isa_all;
    case CONVSEL_ISA_AVX2: return dnnl_cpu_isa_avx2;
    default: return dnnl_cpu_isa_sse41;
    }
}

convsel_status convsel_set_isa(convsel_isa cap)
{
    if ((int)cap < 0 || cap >= CONVSEL_ISA_COUNT)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "unknown ISA %d", (int)cap);
    if (isa_locked && cap != isa_cap)
        return convsel_error(CONVSEL_INVALID_ARGUMENT,
                             "the ISA cap must be set before any primitive is created");
    if (!isa_locked) {
        dnnl_status_t st = dnnl_set_max_cpu_isa(onednn_isa(cap));
        if (st != dnnl_success && cap != CONVSEL_ISA_AVX512)
            return convsel_error(CONVSEL_BACKEND_ERROR, "oneDNN refused max ISA %s (status %d)",
                                 convsel_isa_name(cap), (int)st);
    }
    isa_cap = cap;
    return CONVSEL_OK;
}

convsel_isa convsel_get_isa(void)
{
    convsel_isa_init_from_env();
    convsel_isa d = isa_detected();
    return isa_cap < d ? isa_cap : d;
}

static void isa_env_apply(void)
{
    const char *env = getenv("CONVSEL_ISA");
    convsel_isa cap;
    if (env && *env && convsel_isa_parse(env, &cap) == CONVSEL_OK)
        convsel_set_isa(cap);
}

void convsel_isa_init_from_env(void)
{
    pthread_once(&isa_env_once, isa_env_apply);
}

void convsel_isa_lock(void)
{
    convsel_isa_init_from_env();
    isa_locked = 1;
}
