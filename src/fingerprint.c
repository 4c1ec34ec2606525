/*
 * The CPU fingerprint stored with every dataset, model and plan: what a
 * measurement was taken on, so that timings from different machines (or
 * different ISA caps on one machine) are never mixed by accident.
 */
#include <ctype.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#endif

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include "internal.h"

/* What /proc/cpuinfo's first processor block tells. */
struct cpuinfo {
    char vendor[32];
    char model_name[128];
    char flags[4096];
    int family, model, stepping;
};

static char *trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n && isspace((unsigned char)s[n - 1]))
        s[--n] = '\0';
    return s;
}

static void read_cpuinfo(struct cpuinfo *ci)
{
    memset(ci, 0, sizeof *ci);
    ci->family = ci->model = ci->stepping = -1;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, f) >= 0) {
        char *colon = strchr(line, ':');
        if (!colon) {
            if (ci->vendor[0] || ci->model_name[0])
                break; /* a blank line ends the first processor's block */
            continue;
        }
        *colon = '\0';
        char *key = trim(line), *value = trim(colon + 1);
        if (strcmp(key, "vendor_id") == 0)
            snprintf(ci->vendor, sizeof ci->vendor, "%s", value);
        else if (strcmp(key, "model name") == 0)
            snprintf(ci->model_name, sizeof ci->model_name, "%s", value);
        else if (strcmp(key, "flags") == 0)
            snprintf(ci->flags, sizeof ci->flags, "%s", value);
        else if (strcmp(key, "cpu family") == 0)
            ci->family = atoi(value);
        else if (strcmp(key, "model") == 0)
            ci->model = atoi(value);
        else if (strcmp(key, "stepping") == 0)
            ci->stepping = atoi(value);
    }
    free(line);
    fclose(f);
}

static int has_flag(const char *flags, const char *flag)
{
    size_t len = strlen(flag);
    for (const char *p = flags; (p = strstr(p, flag)) != NULL; p += len)
        if ((p == flags || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0'))
            return 1;
    return 0;
}

/* The ISA features that decide which kernels run, under stable names: the
 * kernel's flag spelling first, ours second. */
static void normalise_flags(const char *flags, char *out, size_t size)
{
    static const char *const map[][2] = {
        {"sse4_1", "sse41"},         {"sse4_2", "sse42"},         {"avx", "avx"},
        {"f16c", "f16c"},            {"fma", "fma"},              {"avx2", "avx2"},
        {"avx_vnni", "avxvnni"},     {"avx512f", "avx512f"},      {"avx512cd", "avx512cd"},
        {"avx512bw", "avx512bw"},    {"avx512dq", "avx512dq"},    {"avx512vl", "avx512vl"},
        {"avx512ifma", "avx512ifma"}, {"avx512vbmi", "avx512vbmi"}, {"avx512_vnni", "avx512vnni"},
        {"avx512_bf16", "avx512bf16"}, {"avx512_fp16", "avx512fp16"}, {"amx_tile", "amxtile"},
        {"amx_bf16", "amxbf16"},     {"amx_int8", "amxint8"},
    };
    size_t used = 0;
    out[0] = '\0';
    for (size_t i = 0; i < CONVSEL_ARRAY_SIZE(map); i++) {
        if (!has_flag(flags, map[i][0]))
            continue;
        int n = snprintf(out + used, size - used, "%s%s", used ? " " : "", map[i][1]);
        if (n < 0 || (size_t)n >= size - used)
            break;
        used += (size_t)n;
    }
}

/* Microarchitecture names for the common server and desktop parts, from
 * the family/model numbers that Intel's and AMD's manuals list. */
static void microarch(const struct cpuinfo *ci, char *out, size_t size)
{
    const char *name = NULL;
    const int f = ci->family, m = ci->model;
    if (strcmp(ci->vendor, "GenuineIntel") == 0 && f == 6) {
        switch (m) {
        case 60: case 63: case 69: case 70: name = "haswell"; break;
        case 61: case 71: case 79: case 86: name = "broadwell"; break;
        case 78: case 94: name = "skylake"; break;
        case 85:
            /* One model number, three generations: the stepping tells them apart. */
            name = ci->stepping >= 10 ? "cooperlake" : ci->stepping >= 5 ? "cascadelake" : "skylake-x";
            break;
        case 87: name = "knl"; break;
        case 133: name = "knm"; break;
        case 142: case 158: name = "kabylake"; break;
        case 165: case 166: name = "cometlake"; break;
        case 106: case 108: name = "icelake-server"; break;
        case 125: case 126: name = "icelake-client"; break;
        case 140: case 141: name = "tigerlake"; break;
        case 151: case 154: name = "alderlake"; break;
        case 183: case 186: case 191: name = "raptorlake"; break;
        case 143: name = "sapphirerapids"; break;
        case 207: name = "emeraldrapids"; break;
        case 173: case 174: name = "graniterapids"; break;
        case 170: case 172: name = "meteorlake"; break;
        default: break;
        }
    } else if (strcmp(ci->vendor, "AuthenticAMD") == 0 || strcmp(ci->vendor, "HygonGenuine") == 0) {
        if (f == 23)
            name = m < 0x30 ? (m == 0x08 || m == 0x18 ? "zen+" : "zen") : "zen2";
        else if (f == 24)
            name = "zen"; /* Hygon Dhyana */
        else if (f == 25)
            name = (m >= 0x10 && m <= 0x1f) || (m >= 0x60 && m <= 0x7f) || (m >= 0xa0 && m <= 0xaf) ? "zen4" : "zen3";
        else if (f == 26)
            name = "zen5";
    }
    if (name)
        snprintf(out, size, "%s", name);
    else
        snprintf(out, size, "family-%d-model-%d", f, m);
}

static int64_t parse_size(const char *text)
{
    char *end;
    long long v = strtoll(text, &end, 10);
    if (end == text || v < 0)
        return 0;
    if (*end == 'K')
        v *= 1024;
    else if (*end == 'M')
        v *= 1024 * 1024;
    else if (*end == 'G')
        v *= 1024LL * 1024 * 1024;
    return (int64_t)v;
}

static int read_line(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return 0;
    int ok = fgets(buf, (int)size, f) != NULL;
    fclose(f);
    if (ok) {
        char *text = trim(buf);
        memmove(buf, text, strlen(text) + 1);
    }
    return ok;
}

/*
 * Cache sizes from sysfs. L1d and L2 are per core (cpu0's); L3 is the total
 * the process can use: the sum over the distinct L3 instances (told apart by
 * their shared_cpu_list) of the CPUs in its affinity mask, since a chip with
 * several CCXs or slices has several.
 */
void convsel_caches_sysfs(const cpu_set_t *cpus, convsel_caches *caches)
{
    char path[256], text[256];
    char seen[16][256];
    size_t n_seen = 0;
    memset(caches, 0, sizeof *caches);
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, cpus))
            continue;
        for (int idx = 0; idx < 16; idx++) {
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/level", cpu, idx);
            if (!read_line(path, text, sizeof text))
                break;
            int level = atoi(text);
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/type", cpu, idx);
            char type[32] = "";
            read_line(path, type, sizeof type);
            snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/size", cpu, idx);
            if (!read_line(path, text, sizeof text))
                continue;
            int64_t bytes = parse_size(text);
            if (level == 1 && strcmp(type, "Data") == 0 && caches->l1d == 0)
                caches->l1d = bytes;
            else if (level == 2 && strcmp(type, "Instruction") != 0 && caches->l2 == 0)
                caches->l2 = bytes;
            else if (level == 3) {
                snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", cpu,
                         idx);
                if (!read_line(path, text, sizeof text))
                    snprintf(text, sizeof text, "cpu%d", cpu);
                size_t k = 0;
                while (k < n_seen && strcmp(seen[k], text) != 0)
                    k++;
                if (k == n_seen && n_seen < CONVSEL_ARRAY_SIZE(seen)) {
                    snprintf(seen[n_seen++], sizeof seen[0], "%s", text);
                    caches->l3 += bytes;
                }
            }
        }
    }
}

int convsel_cache_instances(const int *apic, int n, const cpu_set_t *cpus, int sharing)
{
    int shift = 0;
    while (shift < 30 && (1 << shift) < sharing)
        shift++;
    int ids[64], n_ids = 0, unknown = 0, any = 0;
    for (int cpu = 0; cpu < CPU_SETSIZE; cpu++) {
        if (!CPU_ISSET(cpu, cpus))
            continue;
        any = 1;
        if (cpu >= n || apic[cpu] < 0) {
            unknown = 1;
            continue;
        }
        int id = apic[cpu] >> shift, k = 0;
        while (k < n_ids && ids[k] != id)
            k++;
        if (k == n_ids && n_ids < (int)CONVSEL_ARRAY_SIZE(ids))
            ids[n_ids++] = id;
    }
    return any ? CONVSEL_MAX(n_ids + unknown, 1) : 0;
}

#if defined(__x86_64__) || defined(__i386__)
/* apic[processor] from /proc/cpuinfo's "processor" and "apicid" lines; -1
 * where it says nothing. */
static void read_apic_ids(int *apic, int n)
{
    for (int i = 0; i < n; i++)
        apic[i] = -1;
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char *line = NULL;
    size_t cap = 0;
    int cpu = -1;
    while (getline(&line, &cap, f) >= 0) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        *colon = '\0';
        char *key = trim(line), *value = trim(colon + 1);
        if (strcmp(key, "processor") == 0)
            cpu = atoi(value);
        else if (strcmp(key, "apicid") == 0 && cpu >= 0 && cpu < n)
            apic[cpu] = atoi(value);
    }
    free(line);
    fclose(f);
}
#endif

int convsel_caches_cpuid(const cpu_set_t *cpus, convsel_caches *caches)
{
    memset(caches, 0, sizeof *caches);
#if defined(__x86_64__) || defined(__i386__)
    unsigned a, b, c, d;
    if (!__get_cpuid(0, &a, &b, &c, &d))
        return 0;
    const unsigned max_basic = a;
    char vendor[13];
    memcpy(vendor, &b, 4);
    memcpy(vendor + 4, &d, 4);
    memcpy(vendor + 8, &c, 4);
    vendor[12] = '\0';
    unsigned leaf;
    if (strcmp(vendor, "GenuineIntel") == 0) {
        if (max_basic < 4)
            return 0;
        leaf = 4;
    } else if (strcmp(vendor, "AuthenticAMD") == 0 || strcmp(vendor, "HygonGenuine") == 0) {
        /* TOPOEXT (0x80000001 ECX bit 22) says leaf 0x8000001D is there. */
        if (__get_cpuid_max(0x80000000, NULL) < 0x8000001d || !__get_cpuid(0x80000001, &a, &b, &c, &d) ||
            !(c & (1u << 22)))
            return 0;
        leaf = 0x8000001d;
    } else {
        return 0;
    }
    int l3_sharing = 1;
    for (unsigned i = 0; i < 16; i++) {
        __cpuid_count(leaf, i, a, b, c, d);
        const unsigned type = a & 0x1f; /* 1 data, 2 instruction, 3 unified, 0 no more */
        if (type == 0)
            break;
        const unsigned level = (a >> 5) & 7;
        const int64_t ways = (b >> 22) + 1, partitions = ((b >> 12) & 0x3ff) + 1, line = (b & 0xfff) + 1;
        const int64_t bytes = ways * partitions * line * ((int64_t)c + 1);
        if (level == 1 && type == 1 && caches->l1d == 0)
            caches->l1d = bytes;
        else if (level == 2 && type != 2 && caches->l2 == 0)
            caches->l2 = bytes;
        else if (level == 3 && type != 2 && caches->l3 == 0) {
            caches->l3 = bytes;
            l3_sharing = (int)((a >> 14) & 0xfff) + 1;
        }
    }
    if (caches->l3) {
        int *apic = malloc(CPU_SETSIZE * sizeof *apic);
        if (!apic) {
            caches->l3 = 0;
        } else {
            read_apic_ids(apic, CPU_SETSIZE);
            caches->l3 *= convsel_cache_instances(apic, CPU_SETSIZE, cpus, l3_sharing);
            free(apic);
        }
    }
    return caches->l1d || caches->l2 || caches->l3;
#else
    (void)cpus;
    return 0;
#endif
}

/*
 * The fingerprint's caches: sysfs first; where it lacks a size (a container
 * that hides it, a virtual machine without cache entries), CPUID's
 * deterministic cache parameters, which are what sysfs would have said; glibc
 * last. glibc answers L3 on AMD from CPUID 0x80000006, the whole package's
 * size as a hypervisor passes it on (320 MiB on a 2-vCPU Zen 4 guest whose
 * sysfs says 32 MiB; docs/transfer.md, "The L3 a virtual machine reports").
 */
static void read_caches(const cpu_set_t *cpus, convsel_fingerprint *fp)
{
    convsel_caches sys, id;
    convsel_caches_sysfs(cpus, &sys);
    if (!sys.l1d || !sys.l2 || !sys.l3) {
        convsel_caches_cpuid(cpus, &id);
        sys.l1d = sys.l1d ? sys.l1d : id.l1d;
        sys.l2 = sys.l2 ? sys.l2 : id.l2;
        sys.l3 = sys.l3 ? sys.l3 : id.l3;
    }
    fp->l1d_bytes = sys.l1d;
    fp->l2_bytes = sys.l2;
    fp->l3_bytes = sys.l3;
    if (fp->l1d_bytes == 0 && sysconf(_SC_LEVEL1_DCACHE_SIZE) > 0)
        fp->l1d_bytes = sysconf(_SC_LEVEL1_DCACHE_SIZE);
    if (fp->l2_bytes == 0 && sysconf(_SC_LEVEL2_CACHE_SIZE) > 0)
        fp->l2_bytes = sysconf(_SC_LEVEL2_CACHE_SIZE);
    if (fp->l3_bytes == 0 && sysconf(_SC_LEVEL3_CACHE_SIZE) > 0)
        fp->l3_bytes = sysconf(_SC_LEVEL3_CACHE_SIZE);
}

convsel_status convsel_fingerprint_get(convsel_fingerprint *fp)
{
    if (!fp)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "fingerprint out-parameter is NULL");
    memset(fp, 0, sizeof *fp);
    struct cpuinfo *ci = malloc(sizeof *ci);
    if (!ci)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "fingerprint: out of memory");
    read_cpuinfo(ci);
    snprintf(fp->vendor, sizeof fp->vendor, "%s", ci->vendor[0] ? ci->vendor : "unknown");
    snprintf(fp->model_name, sizeof fp->model_name, "%s", ci->model_name[0] ? ci->model_name : "unknown");
    microarch(ci, fp->microarch, sizeof fp->microarch);
    normalise_flags(ci->flags, fp->isa_flags, sizeof fp->isa_flags);
    free(ci);

    fp->isa_cap = convsel_get_isa();
    cpu_set_t cpus;
    CPU_ZERO(&cpus);
    if (sched_getaffinity(0, sizeof cpus, &cpus) == 0) {
        fp->cores = CPU_COUNT(&cpus);
    } else {
        long n = sysconf(_SC_NPROCESSORS_ONLN);
        fp->cores = n > 0 ? (int)n : 1;
        CPU_ZERO(&cpus);
        for (long c = 0; c < n && c < CPU_SETSIZE; c++)
            CPU_SET((int)c, &cpus);
    }
    read_caches(&cpus, fp);

    const dnnl_version_t *v = dnnl_version();
    snprintf(fp->onednn_version, sizeof fp->onednn_version, "%d.%d.%d", v->major, v->minor, v->patch);
    char blas[sizeof fp->openblas_version];
    snprintf(blas, sizeof blas, "%s", openblas_get_config() ? openblas_get_config() : "unknown");
    /* openblas_get_config() ends with a blank on some builds. */
    snprintf(fp->openblas_version, sizeof fp->openblas_version, "%s", trim(blas));
    return CONVSEL_OK;
}

int convsel_fingerprint_same_cpu(const convsel_fingerprint *a, const convsel_fingerprint *b)
{
    if (!a || !b)
        return 0;
    return strcmp(a->vendor, b->vendor) == 0 && strcmp(a->model_name, b->model_name) == 0 &&
           strcmp(a->microarch, b->microarch) == 0 && strcmp(a->isa_flags, b->isa_flags) == 0 &&
           a->isa_cap == b->isa_cap && a->cores == b->cores && a->l1d_bytes == b->l1d_bytes &&
           a->l2_bytes == b->l2_bytes && a->l3_bytes == b->l3_bytes;
}

/* A cache size as people write it: "48 KiB", "508 MiB", "unknown" for 0. */
static void size_text(int64_t bytes, char *out, size_t size)
{
    if (bytes <= 0)
        snprintf(out, size, "unknown");
    else if (bytes >= (1 << 20) && bytes % (1 << 20) == 0)
        snprintf(out, size, "%lld MiB", (long long)(bytes >> 20));
    else if (bytes >= (1 << 10) && bytes % (1 << 10) == 0)
        snprintf(out, size, "%lld KiB", (long long)(bytes >> 10));
    else
        snprintf(out, size, "%lld bytes", (long long)bytes);
}

/* Appends one difference to buf at *len (", " between them); cut short, buf
 * still ends in '\0'. */
static void diff_add(char *buf, size_t size, size_t *len, int n, const char *what, const char *here,
                     const char *other)
{
    if (*len >= size)
        return;
    int k = here ? snprintf(buf + *len, size - *len, "%s%s %s against %s", n ? ", " : "", what, here, other)
                 : snprintf(buf + *len, size - *len, "%s%s", n ? ", " : "", what);
    *len += k > 0 ? (size_t)k : 0;
}

int convsel_fingerprint_diff(const convsel_fingerprint *here, const convsel_fingerprint *other, char *buf,
                             size_t size)
{
    int n = 0;
    size_t len = 0;
    if (size)
        buf[0] = '\0';
    if (!here || !other)
        return 0;
    if (strcmp(here->vendor, other->vendor) != 0)
        diff_add(buf, size, &len, n++, "vendor", here->vendor, other->vendor);
    if (strcmp(here->model_name, other->model_name) != 0)
        diff_add(buf, size, &len, n++, "model", here->model_name, other->model_name);
    if (strcmp(here->microarch, other->microarch) != 0)
        diff_add(buf, size, &len, n++, "microarchitecture", here->microarch, other->microarch);
    if (strcmp(here->isa_flags, other->isa_flags) != 0)
        diff_add(buf, size, &len, n++, "other ISA flags", NULL, NULL);
    if (here->isa_cap != other->isa_cap)
        diff_add(buf, size, &len, n++, "ISA cap", convsel_isa_name(here->isa_cap), convsel_isa_name(other->isa_cap));
    if (here->cores != other->cores) {
        char a[16], b[16];
        snprintf(a, sizeof a, "%d", here->cores);
        snprintf(b, sizeof b, "%d", other->cores);
        diff_add(buf, size, &len, n++, "cores", a, b);
    }
    const struct {
        const char *name;
        int64_t here, other;
    } caches[] = {{"L1d", here->l1d_bytes, other->l1d_bytes},
                  {"L2", here->l2_bytes, other->l2_bytes},
                  {"L3", here->l3_bytes, other->l3_bytes}};
    for (size_t i = 0; i < sizeof caches / sizeof caches[0]; i++) {
        if (caches[i].here == caches[i].other)
            continue;
        char a[32], b[32];
        size_text(caches[i].here, a, sizeof a);
        size_text(caches[i].other, b, sizeof b);
        diff_add(buf, size, &len, n++, caches[i].name, a, b);
    }
    return n;
}

/* OpenBLAS's DYNAMIC_ARCH core names (driver/others/dynamic.c), by the widest
 * of convsel's ISA levels their kernels stay within. */
static const struct {
    const char *core;
    convsel_isa isa;
} blas_cores[] = {
    {"SkylakeX", CONVSEL_ISA_AVX512},   {"Cooperlake", CONVSEL_ISA_AVX512}, {"SapphireRapids", CONVSEL_ISA_AVX512},
    {"Haswell", CONVSEL_ISA_AVX2},      {"Zen", CONVSEL_ISA_AVX2},          {"Excavator", CONVSEL_ISA_AVX2},
    {"Nehalem", CONVSEL_ISA_SSE41},     {"Penryn", CONVSEL_ISA_SSE41},      {"Dunnington", CONVSEL_ISA_SSE41},
    {"Sandybridge", CONVSEL_ISA_SSE41}, {"Bulldozer", CONVSEL_ISA_SSE41},   {"Piledriver", CONVSEL_ISA_SSE41},
    {"Steamroller", CONVSEL_ISA_SSE41}, {"Prescott", CONVSEL_ISA_SCALAR},   {"Core2", CONVSEL_ISA_SCALAR},
    {"Atom", CONVSEL_ISA_SCALAR},       {"Barcelona", CONVSEL_ISA_SCALAR},  {"Opteron", CONVSEL_ISA_SCALAR},
    {"Opteron_SSE3", CONVSEL_ISA_SCALAR}, {"Athlon", CONVSEL_ISA_SCALAR}, {"Nano", CONVSEL_ISA_SCALAR},
    {"Bobcat", CONVSEL_ISA_SCALAR},     {"Katmai", CONVSEL_ISA_SCALAR},     {"Coppermine", CONVSEL_ISA_SCALAR},
    {"Northwood", CONVSEL_ISA_SCALAR},
};

int convsel_openblas_core_isa(const char *config)
{
    if (!config)
        return -1;
    /* A configuration is blank-separated words; the core is one of them. */
    const char *s = config;
    while (*s) {
        while (*s == ' ')
            s++;
        size_t n = strcspn(s, " ");
        for (size_t i = 0; n && i < sizeof blas_cores / sizeof blas_cores[0]; i++)
            if (strlen(blas_cores[i].core) == n && strncasecmp(s, blas_cores[i].core, n) == 0)
                return (int)blas_cores[i].isa;
        s += n;
    }
    return -1;
}

int convsel_fingerprint_blas_isa(const convsel_fingerprint *fp)
{
    return fp ? convsel_openblas_core_isa(fp->openblas_version) : -1;
}

int convsel_fingerprint_same_setup(const convsel_fingerprint *a, const convsel_fingerprint *b)
{
    if (!convsel_fingerprint_same_cpu(a, b))
        return 0;
    int blas_a = convsel_fingerprint_blas_isa(a), blas_b = convsel_fingerprint_blas_isa(b);
    return blas_a < 0 || blas_b < 0 || blas_a == blas_b;
}
