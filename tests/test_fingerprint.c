/*
 * The fingerprint's cache sizes: the APIC-ID grouping that counts L3
 * instances, CPUID's deterministic cache parameters against sysfs on this
 * machine (they must agree: Linux fills sysfs from the same leaf), and the
 * order convsel_fingerprint_get takes them in (sysfs first). Where this
 * machine has no sysfs cache entries or no such CPUID leaf, the comparison
 * cannot be made and the test says so and exits 77 (skipped) after the parts
 * that need neither. Also the instruction set of the OpenBLAS kernels a
 * fingerprint names, which needs no particular machine.
 */
#include <sched.h>
#include <stdio.h>
#include <string.h>

#include "../src/internal.h"
#include "check.h"
#include "convsel.h"

static void set_of(cpu_set_t *set, int from, int to)
{
    CPU_ZERO(set);
    for (int c = from; c <= to; c++)
        CPU_SET(c, set);
}

/* A cache's ID is the APIC ID without its low ceil(log2(sharing)) bits. */
static void test_instances(void)
{
    int apic[16];
    for (int i = 0; i < 16; i++)
        apic[i] = i;
    cpu_set_t set;
    set_of(&set, 0, 15);
    CHECK_EQ(convsel_cache_instances(apic, 16, &set, 16), 1);
    CHECK_EQ(convsel_cache_instances(apic, 16, &set, 8), 2);
    CHECK_EQ(convsel_cache_instances(apic, 16, &set, 6), 2); /* 6 sharers: IDs in blocks of 8 */
    CHECK_EQ(convsel_cache_instances(apic, 16, &set, 1), 16);
    set_of(&set, 0, 1);
    CHECK_EQ(convsel_cache_instances(apic, 16, &set, 2), 1); /* a 2-vCPU guest on one CCX */
    set_of(&set, 7, 8);
    CHECK_EQ(convsel_cache_instances(apic, 16, &set, 8), 2); /* straddling two */
    /* APIC IDs with gaps, as on parts whose CCXs are not full: 0-5, 8-13. */
    int gappy[12] = {0, 1, 2, 3, 4, 5, 8, 9, 10, 11, 12, 13};
    set_of(&set, 0, 11);
    CHECK_EQ(convsel_cache_instances(gappy, 12, &set, 6), 2);
    /* Unknown APIC IDs count as one cache between them; CPUs beyond the
     * table are unknown; an empty set uses none. */
    int some[4] = {0, 1, -1, -1};
    set_of(&set, 0, 3);
    CHECK_EQ(convsel_cache_instances(some, 4, &set, 2), 2);
    set_of(&set, 2, 5);
    CHECK_EQ(convsel_cache_instances(some, 4, &set, 2), 1);
    CPU_ZERO(&set);
    CHECK_EQ(convsel_cache_instances(apic, 16, &set, 2), 0);
}

static convsel_fingerprint with_blas(const convsel_fingerprint *cpu, const char *config)
{
    convsel_fingerprint fp = *cpu;
    snprintf(fp.openblas_version, sizeof fp.openblas_version, "%s", config);
    return fp;
}

/* The OpenBLAS core named in a fingerprint's configuration string, by the
 * instruction set of its kernels, and what it does to "the same setup". */
static void test_blas_isa(const convsel_fingerprint *cpu)
{
    static const struct {
        const char *config;
        int isa;
    } cases[] = {
        {"OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY USE_OPENMP Haswell MAX_THREADS=64", CONVSEL_ISA_AVX2},
        {"OpenBLAS 0.3.21 NO_LAPACKE DYNAMIC_ARCH NO_AFFINITY USE_OPENMP Cooperlake MAX_THREADS=64",
         CONVSEL_ISA_AVX512},
        {"OpenBLAS 0.3.21 DYNAMIC_ARCH USE_OPENMP SkylakeX MAX_THREADS=64", CONVSEL_ISA_AVX512},
        {"OpenBLAS 0.3.26 DYNAMIC_ARCH SapphireRapids", CONVSEL_ISA_AVX512},
        {"OpenBLAS 0.3.21 DYNAMIC_ARCH USE_OPENMP Zen MAX_THREADS=64", CONVSEL_ISA_AVX2},
        {"OpenBLAS 0.3.21 DYNAMIC_ARCH USE_OPENMP Sandybridge MAX_THREADS=64", CONVSEL_ISA_SSE41},
        {"OpenBLAS 0.3.21 DYNAMIC_ARCH USE_OPENMP Nehalem MAX_THREADS=64", CONVSEL_ISA_SSE41},
        {"OpenBLAS 0.3.21 DYNAMIC_ARCH USE_OPENMP Prescott MAX_THREADS=64", CONVSEL_ISA_SCALAR},
        {"OpenBLAS 0.3.21 DYNAMIC_ARCH USE_OPENMP haswell", CONVSEL_ISA_AVX2}, /* any case, at the end */
        {"Cooperlake", CONVSEL_ISA_AVX512},                                    /* the core alone */
        {"  Zen  ", CONVSEL_ISA_AVX2},                                          /* blanks around it */
        {"OpenBLAS 0.3.21 DYNAMIC_ARCH USE_OPENMP MAX_THREADS=64", -1},       /* no core named */
        {"OpenBLAS 0.3.21 DYNAMIC_ARCH HaswellX", -1},                        /* a word, not a prefix */
        {"OpenBLAS 0.3.21 DYNAMIC_ARCH Zen4", -1},
        {"unknown", -1},
        {"", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        convsel_fingerprint fp = with_blas(cpu, cases[i].config);
        CHECK_EQ(convsel_fingerprint_blas_isa(&fp), cases[i].isa);
    }
    CHECK_EQ(convsel_fingerprint_blas_isa(NULL), -1);

    convsel_fingerprint haswell = with_blas(cpu, cases[0].config), cooper = with_blas(cpu, cases[1].config),
                        skx = with_blas(cpu, cases[2].config), unknown = with_blas(cpu, "unknown");
    CHECK(convsel_fingerprint_same_cpu(&haswell, &cooper));
    CHECK(!convsel_fingerprint_same_setup(&haswell, &cooper));
    CHECK(!convsel_fingerprint_same_setup(&cooper, &haswell));
    CHECK(convsel_fingerprint_same_setup(&cooper, &skx)); /* the same instruction set */
    CHECK(convsel_fingerprint_same_setup(&haswell, &unknown));
    CHECK(convsel_fingerprint_same_setup(&unknown, &cooper));
    convsel_fingerprint other_cpu = cooper;
    other_cpu.cores += 1;
    CHECK(!convsel_fingerprint_same_setup(&cooper, &other_cpu));
    CHECK(!convsel_fingerprint_same_setup(NULL, &cooper));
}

/* What sets one CPU apart from another, as the notes say it: every field
 * convsel_fingerprint_same_cpu compares, and nothing else. */
static void test_diff(void)
{
    convsel_fingerprint a;
    memset(&a, 0, sizeof a);
    snprintf(a.vendor, sizeof a.vendor, "AuthenticAMD");
    snprintf(a.model_name, sizeof a.model_name, "AMD EPYC");
    snprintf(a.microarch, sizeof a.microarch, "zen5");
    snprintf(a.isa_flags, sizeof a.isa_flags, "sse41 avx avx2 fma avx512f");
    a.isa_cap = CONVSEL_ISA_AVX512;
    a.cores = 2;
    a.l1d_bytes = 48 << 10;
    a.l2_bytes = 1 << 20;
    a.l3_bytes = (int64_t)32 << 20;
    snprintf(a.openblas_version, sizeof a.openblas_version, "OpenBLAS 0.3.21 DYNAMIC_ARCH Haswell");
    char buf[256];

    convsel_fingerprint b = a;
    snprintf(b.openblas_version, sizeof b.openblas_version, "OpenBLAS 0.3.21 DYNAMIC_ARCH SkylakeX");
    snprintf(b.onednn_version, sizeof b.onednn_version, "9.9.9");
    CHECK_EQ(convsel_fingerprint_diff(&a, &b, buf, sizeof buf), 0); /* library versions are not the CPU */
    CHECK_STR(buf, "");
    b.l3_bytes = (int64_t)508 << 20;
    CHECK_EQ(convsel_fingerprint_diff(&b, &a, buf, sizeof buf), 1);
    CHECK_STR(buf, "L3 508 MiB against 32 MiB");
    b.isa_cap = CONVSEL_ISA_AVX2;
    b.cores = 16;
    b.l1d_bytes = 0;
    CHECK_EQ(convsel_fingerprint_diff(&b, &a, buf, sizeof buf), 4);
    CHECK_STR(buf, "ISA cap avx2 against avx512, cores 16 against 2, L1d unknown against 48 KiB, "
                   "L3 508 MiB against 32 MiB");
    convsel_fingerprint c = a;
    snprintf(c.vendor, sizeof c.vendor, "GenuineIntel");
    snprintf(c.model_name, sizeof c.model_name, "Intel Xeon");
    snprintf(c.microarch, sizeof c.microarch, "cascadelake");
    snprintf(c.isa_flags, sizeof c.isa_flags, "sse41 avx avx2 fma avx512f avx512vnni");
    c.l2_bytes = 1536 << 10;
    CHECK_EQ(convsel_fingerprint_diff(&c, &a, buf, sizeof buf), 5);
    CHECK_STR(buf, "vendor GenuineIntel against AuthenticAMD, model Intel Xeon against AMD EPYC, microarchitecture "
                   "cascadelake against zen5, other ISA flags, L2 1536 KiB against 1 MiB");
    /* It agrees with convsel_fingerprint_same_cpu field by field. */
    const convsel_fingerprint *all[] = {&a, &b, &c};
    for (size_t i = 0; i < 3; i++)
        for (size_t j = 0; j < 3; j++)
            CHECK_EQ(convsel_fingerprint_diff(all[i], all[j], NULL, 0) == 0, convsel_fingerprint_same_cpu(all[i], all[j]));
    /* A short buffer is cut, still a string; the count is whole. */
    char small[12];
    CHECK_EQ(convsel_fingerprint_diff(&c, &a, small, sizeof small), 5);
    CHECK_EQ(strlen(small), sizeof small - 1);
    CHECK(strncmp(small, "vendor Genu", sizeof small - 1) == 0);
    CHECK_EQ(convsel_fingerprint_diff(NULL, &a, buf, sizeof buf), 0);
    CHECK_STR(buf, "");
}

int main(void)
{
    test_instances();
    test_diff();

    cpu_set_t mine;
    CPU_ZERO(&mine);
    CHECK(sched_getaffinity(0, sizeof mine, &mine) == 0);
    convsel_caches sys, id;
    convsel_caches_sysfs(&mine, &sys);
    const int have_cpuid = convsel_caches_cpuid(&mine, &id);
    printf("sysfs: L1d %lld, L2 %lld, L3 %lld; cpuid (%s): L1d %lld, L2 %lld, L3 %lld\n", (long long)sys.l1d,
           (long long)sys.l2, (long long)sys.l3, have_cpuid ? "read" : "no leaf", (long long)id.l1d,
           (long long)id.l2, (long long)id.l3);
    if (have_cpuid) {
        /* Sizes a cache can have: L1d of 8 KiB to 1 MiB, each level larger. */
        CHECK(id.l1d >= 8 * 1024 && id.l1d <= 1024 * 1024);
        CHECK(id.l2 > id.l1d);
        CHECK(id.l3 == 0 || id.l3 > id.l2);
    } else {
        CHECK(id.l1d == 0 && id.l2 == 0 && id.l3 == 0);
    }

    convsel_fingerprint fp;
    CHECK_EQ(convsel_fingerprint_get(&fp), CONVSEL_OK);
    test_blas_isa(&fp);
    /* This process's own kernels: the core OpenBLAS runs is in its configuration. */
    printf("openblas: %s (kernels: %d)\n", fp.openblas_version, convsel_fingerprint_blas_isa(&fp));
    if (strcmp(convsel_openblas_corename(), "unknown") != 0 && strstr(fp.openblas_version, "DYNAMIC_ARCH"))
        CHECK(convsel_fingerprint_blas_isa(&fp) >= 0);
    if (sys.l1d)
        CHECK_EQ(fp.l1d_bytes, sys.l1d);
    if (sys.l2)
        CHECK_EQ(fp.l2_bytes, sys.l2);
    if (sys.l3)
        CHECK_EQ(fp.l3_bytes, sys.l3);
    if (!sys.l1d && have_cpuid)
        CHECK_EQ(fp.l1d_bytes, id.l1d);
    if (!sys.l3 && id.l3)
        CHECK_EQ(fp.l3_bytes, id.l3);

    if (!have_cpuid || !sys.l1d || !sys.l2 || !sys.l3) {
        printf("test_fingerprint: %s, so CPUID's sizes are not compared with sysfs here\n",
               have_cpuid ? "sysfs lacks a cache size" : "no deterministic cache leaf");
        const int done = CHECK_DONE();
        return done ? done : 77;
    }
    CHECK_EQ(id.l1d, sys.l1d);
    CHECK_EQ(id.l2, sys.l2);
    CHECK_EQ(id.l3, sys.l3);
    return CHECK_DONE();
}
