/*
 * dataset_cache: a copy of a dataset whose CPU fingerprints report other
 * cache sizes. The learner's cache features (docs/learner.md) read them, so
 * scoring a model on the copy shows what it predicts for the same
 * measurements on a machine that reports its caches differently, as a
 * virtual machine without sysfs cache entries does (glibc then answers from
 * CPUID, bench/l3_sensitivity.sh).
 *
 *   dataset_cache [--l1d BYTES] [--l2 BYTES] [--l3 BYTES] IN OUT
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convsel.h"

static int parse_bytes(const char *flag, const char *text, int64_t *out)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || *end || v <= 0) {
        fprintf(stderr, "dataset_cache: %s wants a positive byte count, not '%s'\n", flag, text);
        return 0;
    }
    *out = v;
    return 1;
}

int main(int argc, char **argv)
{
    int64_t l1d = 0, l2 = 0, l3 = 0;
    const char *in = NULL, *out = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        int64_t *slot = strcmp(a, "--l1d") == 0 ? &l1d : strcmp(a, "--l2") == 0 ? &l2 : strcmp(a, "--l3") == 0 ? &l3 : NULL;
        if (slot) {
            if (i + 1 >= argc) {
                fprintf(stderr, "dataset_cache: %s needs a value\n", a);
                return 2;
            }
            if (!parse_bytes(a, argv[++i], slot))
                return 2;
        } else if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
            printf("usage: dataset_cache [--l1d BYTES] [--l2 BYTES] [--l3 BYTES] IN OUT\n\n"
                   "Writes OUT, IN with every fingerprint's cache sizes replaced by the given ones\n"
                   "(L1d and L2 per core, L3 in all). The measurements are unchanged.\n");
            return 0;
        } else if (a[0] == '-') {
            fprintf(stderr, "dataset_cache: unknown option '%s' (see --help)\n", a);
            return 2;
        } else if (!in) {
            in = a;
        } else if (!out) {
            out = a;
        } else {
            fprintf(stderr, "dataset_cache: one input and one output, not '%s' as well\n", a);
            return 2;
        }
    }
    if (!in || !out) {
        fprintf(stderr, "dataset_cache: needs IN and OUT (see --help)\n");
        return 2;
    }
    if (!l1d && !l2 && !l3) {
        fprintf(stderr, "dataset_cache: nothing to change: give --l1d, --l2 or --l3\n");
        return 2;
    }
    convsel_dataset *ds = NULL;
    convsel_status st = convsel_dataset_load(in, &ds);
    if (st != CONVSEL_OK) {
        fprintf(stderr, "dataset_cache: %s: %s (%s)\n", in, convsel_status_str(st), convsel_last_error());
        return 1;
    }
    const char *warning = convsel_dataset_warning(ds);
    if (warning[0]) {
        /* A copy that silently dropped the tail would pass for the whole file. */
        fprintf(stderr, "dataset_cache: %s; not writing a copy that lacks those records\n", warning);
        convsel_dataset_destroy(ds);
        return 1;
    }
    /* The dataset hands out its fingerprints read-only; this tool exists to
     * rewrite them, so it casts that away on a dataset it owns. */
    size_t n = 0;
    for (const convsel_fingerprint *f; (f = convsel_dataset_fingerprint(ds, n)) != NULL; n++) {
        convsel_fingerprint *w = (convsel_fingerprint *)f;
        if (l1d)
            w->l1d_bytes = l1d;
        if (l2)
            w->l2_bytes = l2;
        if (l3)
            w->l3_bytes = l3;
    }
    st = convsel_dataset_save(ds, out);
    if (st != CONVSEL_OK)
        fprintf(stderr, "dataset_cache: %s: %s (%s)\n", out, convsel_status_str(st), convsel_last_error());
    else
        printf("%s: %zu fingerprint%s rewritten\n", out, n, n == 1 ? "" : "s");
    convsel_dataset_destroy(ds);
    return st == CONVSEL_OK ? 0 : 1;
}
