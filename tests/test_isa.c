/*
 * convsel_isa_prepare_process in-process: which arguments it takes out of
 * argv, its errors, and the caps it leaves (convsel's, oneDNN's). The cap
 * tested is sse41 with OPENBLAS_CORETYPE already Nehalem, the core it asks
 * for on every CPU, so the call never re-executes the test; tests/cli_isa.sh
 * covers the re-execution through the convsel tool.
 */
#include <stdlib.h>
#include <string.h>

#include "../src/internal.h"
#include "check.h"
#include "convsel.h"

/* Which OpenBLAS choices are fallbacks to replace: pre-AVX2 cores on an AVX2
 * or AVX-512 CPU (a CPU OpenBLAS does not know yet); OpenBLAS's own AVX2 and
 * AVX-512 picks, and anything on an older CPU, stand. */
static void test_core_upgrade(void)
{
    CHECK_STR(convsel_openblas_core_upgrade(CONVSEL_ISA_AVX512, "Prescott"), "SkylakeX");
    CHECK_STR(convsel_openblas_core_upgrade(CONVSEL_ISA_AVX512, "Nehalem"), "SkylakeX");
    CHECK_STR(convsel_openblas_core_upgrade(CONVSEL_ISA_AVX512, "Sandybridge"), "SkylakeX");
    CHECK_STR(convsel_openblas_core_upgrade(CONVSEL_ISA_AVX2, "Prescott"), "Haswell");
    CHECK_STR(convsel_openblas_core_upgrade(CONVSEL_ISA_AVX2, "Core2"), "Haswell");
    CHECK(convsel_openblas_core_upgrade(CONVSEL_ISA_AVX512, "SkylakeX") == NULL);
    CHECK(convsel_openblas_core_upgrade(CONVSEL_ISA_AVX512, "cooperlake") == NULL); /* any case */
    CHECK(convsel_openblas_core_upgrade(CONVSEL_ISA_AVX512, "Zen") == NULL);
    CHECK(convsel_openblas_core_upgrade(CONVSEL_ISA_AVX512, "Haswell") == NULL);
    CHECK(convsel_openblas_core_upgrade(CONVSEL_ISA_AVX2, "SapphireRapids") == NULL);
    CHECK(convsel_openblas_core_upgrade(CONVSEL_ISA_SSE41, "Prescott") == NULL);
    CHECK(convsel_openblas_core_upgrade(CONVSEL_ISA_SCALAR, "Prescott") == NULL);
    CHECK(convsel_openblas_core_upgrade(CONVSEL_ISA_AVX512, NULL) == NULL);
}

int main(void)
{
    test_core_upgrade();
    unsetenv("CONVSEL_ISA");
    setenv("OPENBLAS_CORETYPE", "Nehalem", 1);

    /* Nothing asked: nothing changes. */
    char *plain[] = {"prog", "primitives", "-x", NULL};
    int argc = 3;
    CHECK_EQ(convsel_isa_prepare_process(&argc, plain), CONVSEL_OK);
    CHECK_EQ(argc, 3);
    CHECK_STR(plain[1], "primitives");
    CHECK(getenv("CONVSEL_ISA") == NULL);

    /* Errors come before anything is set. */
    char *bogus[] = {"prog", "--isa", "bogus", "primitives", NULL};
    argc = 4;
    CHECK_EQ(convsel_isa_prepare_process(&argc, bogus), CONVSEL_INVALID_ARGUMENT);
    CHECK(strstr(convsel_last_error(), "'bogus'") != NULL);
    CHECK_EQ(argc, 4);
    char *missing[] = {"prog", "primitives", "--isa", NULL};
    argc = 3;
    CHECK_EQ(convsel_isa_prepare_process(&argc, missing), CONVSEL_INVALID_ARGUMENT);
    CHECK(strstr(convsel_last_error(), "--isa") != NULL);
    setenv("CONVSEL_ISA", "avx3", 1);
    char *from_env[] = {"prog", "primitives", NULL};
    argc = 2;
    CHECK_EQ(convsel_isa_prepare_process(&argc, from_env), CONVSEL_INVALID_ARGUMENT);
    CHECK(strstr(convsel_last_error(), "'avx3'") != NULL);
    unsetenv("CONVSEL_ISA");

    /* Both spellings, before and after the command; "--" ends the options;
     * the last one wins. */
    char *both[] = {"prog", "--isa", "avx2", "run", "--isa=sse41", "--", "--isa", "keep", NULL};
    argc = 8;
    CHECK_EQ(convsel_isa_prepare_process(&argc, both), CONVSEL_OK);
    CHECK_EQ(argc, 5);
    CHECK_STR(both[0], "prog");
    CHECK_STR(both[1], "run");
    CHECK_STR(both[2], "--");
    CHECK_STR(both[3], "--isa");
    CHECK_STR(both[4], "keep");
    CHECK(both[5] == NULL);
    CHECK_STR(getenv("CONVSEL_ISA"), "sse41");
    CHECK_STR(getenv("OPENBLAS_CORETYPE"), "Nehalem");
    CHECK(convsel_get_isa() <= CONVSEL_ISA_SSE41);
    if (convsel_get_isa() == CONVSEL_ISA_SSE41)
        CHECK_STR(convsel_onednn_isa(), "sse41");
    CHECK(convsel_openblas_corename() != NULL && convsel_openblas_corename()[0] != '\0');
    return CHECK_DONE();
}
