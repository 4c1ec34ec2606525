#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <cblas.h>
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

/* oneDNN's names for our caps: sse41 and avx2 map directly; avx512 leaves
 * oneDNN uncapped (what lies above avx512_core adds int8/bf16 instructions,
 * unused by f32 convolutions); scalar has no oneDNN equivalent below sse41, so
 * oneDNN keeps sse41 there. */
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

/* ---------------------------------------------------------------- processes */

/* The OpenBLAS core (Debian's DYNAMIC_ARCH build) matching each cap: the
 * newest kernels that use no instruction above it. */
static const char *openblas_coretype(convsel_isa isa)
{
    switch (isa) {
    case CONVSEL_ISA_AVX512: return "SkylakeX";
    case CONVSEL_ISA_AVX2: return "Haswell";
    default: return "Nehalem";
    }
}

/* The kernels OpenBLAS chose fall short of this CPU when they are one of its
 * pre-AVX2 cores on a CPU with AVX2 or more: a CPU its detection does not know
 * yet gets its generic fallback (OpenBLAS 0.3.21 runs Prescott's SSE3 kernels
 * on a recent Xeon, 3x slower on a 1x1 convolution than SkylakeX's,
 * docs/transfer.md). Returns the core to run instead (the one a cap at this
 * CPU's ISA asks for), or NULL when OpenBLAS's choice stands: an AVX2 or
 * AVX-512 core on such a CPU is OpenBLAS's own, deliberate pick. */
const char *convsel_openblas_core_upgrade(convsel_isa cpu, const char *core)
{
    if (cpu < CONVSEL_ISA_AVX2 || !core || convsel_openblas_core_isa(core) >= (int)CONVSEL_ISA_AVX2)
        return NULL;
    return openblas_coretype(cpu);
}

/* Set in the environment of the re-executed process, so that a core type
 * OpenBLAS ignores cannot make the process re-execute itself forever. */
#define REEXEC_MARK "CONVSEL_ISA_REEXECUTED"

/* Removes argv[i] .. argv[i + n - 1], keeping argv NULL-terminated. */
static void argv_remove(int *argc, char **argv, int i, int n)
{
    for (int j = i; j + n <= *argc; j++)
        argv[j] = argv[j + n];
    *argc -= n;
}

/* 1 when this image is the re-executed one; the mark is taken out of the
 * environment either way, so that no child inherits it. */
static int take_reexec_mark(void)
{
    const int reexecuted = getenv(REEXEC_MARK) != NULL;
    unsetenv(REEXEC_MARK);
    return reexecuted;
}

/* OpenBLAS chose its kernels when it was loaded, before main(): only a fresh
 * image of this program sees a new OPENBLAS_CORETYPE. Returns only when
 * execv failed. */
static convsel_status reexecute(char **argv)
{
    setenv(REEXEC_MARK, "1", 1);
    execv("/proc/self/exe", argv);
    const int err = errno;
    unsetenv(REEXEC_MARK);
    return convsel_error(CONVSEL_BACKEND_ERROR, "cannot re-execute /proc/self/exe (%s): OpenBLAS keeps its %s kernels",
                         strerror(err), openblas_get_corename());
}

/* No cap asked: only when OpenBLAS fell back to kernels below this CPU (and
 * the user did not choose them with OPENBLAS_CORETYPE), re-execute with the
 * right ones. */
static convsel_status upgrade_openblas(char **argv)
{
    const int reexecuted = take_reexec_mark();
    const char *want = convsel_openblas_core_upgrade(isa_detected(), openblas_get_corename());
    if (!want || reexecuted || getenv("OPENBLAS_CORETYPE"))
        return CONVSEL_OK;
    if (setenv("OPENBLAS_CORETYPE", want, 1) != 0)
        return convsel_error(CONVSEL_BACKEND_ERROR, "cannot set the environment: %s", strerror(errno));
    convsel_status st = reexecute(argv);
    unsetenv("OPENBLAS_CORETYPE");
    return st;
}

convsel_status convsel_isa_prepare_process(int *argc, char **argv)
{
    if (!argc || !argv)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "argc and argv are required");
    const char *value = NULL;
    for (int i = 1; i < *argc && argv[i]; i++) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--isa") == 0) {
            if (i + 1 >= *argc || !argv[i + 1])
                return convsel_error(CONVSEL_INVALID_ARGUMENT, "--isa needs a value (scalar, sse41, avx2, avx512)");
            value = argv[i + 1];
        } else if (strncmp(argv[i], "--isa=", 6) == 0) {
            value = argv[i] + 6;
        }
    }
    if (!value) {
        value = getenv("CONVSEL_ISA");
        if (!value || !*value)
            return upgrade_openblas(argv);
    }
    convsel_isa cap;
    if (convsel_isa_parse(value, &cap) != CONVSEL_OK)
        return CONVSEL_INVALID_ARGUMENT;

    const char *want = openblas_coretype(cap < isa_detected() ? cap : isa_detected());
    const char *have = getenv("OPENBLAS_CORETYPE");
    const int stale = !have || strcasecmp(have, want) != 0;
    const int reexecuted = take_reexec_mark();
    if (setenv("CONVSEL_ISA", convsel_isa_name(cap), 1) != 0 || setenv("OPENBLAS_CORETYPE", want, 1) != 0)
        return convsel_error(CONVSEL_BACKEND_ERROR, "cannot set the environment: %s", strerror(errno));
    const convsel_status reexec_status = stale && !reexecuted ? reexecute(argv) : CONVSEL_OK;

    for (int i = 1; i < *argc && argv[i];) {
        if (strcmp(argv[i], "--") == 0)
            break;
        if (strcmp(argv[i], "--isa") == 0)
            argv_remove(argc, argv, i, 2);
        else if (strncmp(argv[i], "--isa=", 6) == 0)
            argv_remove(argc, argv, i, 1);
        else
            i++;
    }
    convsel_status st = convsel_set_isa(cap);
    return st != CONVSEL_OK ? st : reexec_status;
}

const char *convsel_openblas_corename(void)
{
    return openblas_get_corename();
}

const char *convsel_onednn_isa(void)
{
    /* Asking oneDNN fixes its ISA for the rest of the process; ours too. */
    convsel_isa_lock();
    switch (dnnl_get_effective_cpu_isa()) {
    case dnnl_cpu_isa_sse41: return "sse41";
    case dnnl_cpu_isa_avx: return "avx";
    case dnnl_cpu_isa_avx2: return "avx2";
    case dnnl_cpu_isa_avx2_vnni: return "avx2_vnni";
    case dnnl_cpu_isa_avx512_mic: return "avx512_mic";
    case dnnl_cpu_isa_avx512_mic_4ops: return "avx512_mic_4ops";
    case dnnl_cpu_isa_avx512_core: return "avx512_core";
    case dnnl_cpu_isa_avx512_core_vnni: return "avx512_core_vnni";
    case dnnl_cpu_isa_avx512_core_bf16: return "avx512_core_bf16";
    case dnnl_cpu_isa_avx512_core_amx: return "avx512_core_amx";
    default: return "unknown";
    }
}
