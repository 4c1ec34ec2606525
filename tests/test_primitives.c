/*
 * Every non-reference primitive of the catalogue against the reference
 * convolution: fixed edge cases, then seeded random problems until each
 * primitive has been tested on CONVSEL_TEST_PROBLEMS (default 300) problems it
 * accepts. Primitives added to the registry later are covered without a
 * change here.
 *
 * Inputs are reordered from nchw into the layout each instance asks for and
 * its output back to nchw; outputs start as NaN so an unwritten element
 * fails, and padded channels of blocked outputs must hold zeros. The
 * workspace is the test's, filled with NaN before every run (a network's
 * layers share one, so it comes with another layer's leftovers): a primitive
 * that counts on anything it left there, zeros included, fails. Every fifth
 * instance keeps its own workspace instead, as a lone instance does.
 *
 * Environment: CONVSEL_TEST_PROBLEMS (problems per primitive),
 * CONVSEL_TEST_SEED, CONVSEL_TEST_PRIMITIVES (comma-separated names to test
 * only those), CONVSEL_ISA (the ISA cap, applied by the library).
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "convsel.h"
#include "harness.h"

/*
 * Error thresholds, as max|y - y_ref| / max|y_ref|.
 *
 * Direct, gemm and every other exact algorithm sum the same products as the
 * reference, in float and in another order. With inputs and weights in [-1, 1)
 * and at most 40*49 products per output, that rounding stays around 1e-6 of
 * max|y|; 1e-5 leaves a margin for it, while one wrong or missing tap moves an
 * output by about 1/sqrt(K) of max|y|, orders of magnitude more.
 *
 * Winograd transforms amplify rounding in a way that grows with the tile; the
 * primitive states its expected error, and we allow 4 times that (never less
 * than the exact floor).
 */
#define EXACT_THRESHOLD 1e-5
#define WINOGRAD_FACTOR 4.0

/* Failure messages printed per primitive; later ones are only counted. */
#define FAILURES_SHOWN 5

struct primitive_stats {
    int selected;
    double threshold;
    int random_tested, edge_tested, refused, attempts, failures;
    double worst;
    char worst_desc[352];
};

/* One problem with its data and reference outputs. */
struct test_case {
    convsel_problem problem;
    char desc[320]; /* descriptor plus where it came from */
    float *weights, *src, *ref;
    float *src2, *ref2; /* a second input, made on first use */
    uint64_t seed;
};

static size_t reference_index;

static int is_winograd(size_t i)
{
    return strstr(convsel_primitive_family(i), "wino") || strstr(convsel_primitive_name(i), "wino");
}

static double threshold_of(size_t i)
{
    if (!is_winograd(i))
        return EXACT_THRESHOLD;
    return fmax(EXACT_THRESHOLD, WINOGRAD_FACTOR * convsel_primitive_expected_error(i));
}

static int env_int(const char *name, int fallback)
{
    const char *v = getenv(name);
    if (!v || !*v)
        return fallback;
    char *end;
    long x = strtol(v, &end, 10);
    return (*end == '\0' && x > 0 && x < 1000000) ? (int)x : fallback;
}

static int name_selected(const char *filter, const char *name)
{
    if (!filter || !*filter)
        return 1;
    size_t len = strlen(name);
    for (const char *s = filter; *s;) {
        size_t n = strcspn(s, ",");
        if (n == len && strncmp(s, name, n) == 0)
            return 1;
        s += n;
        if (*s == ',')
            s++;
    }
    return 0;
}

static void run_reference(const convsel_problem *p, const float *weights, const float *src, float *ref)
{
    convsel_instance *inst = NULL;
    convsel_status st = convsel_instance_create(reference_index, p, 2, weights, &inst);
    CHECK_MSG(st == CONVSEL_OK, "reference create: %s", convsel_last_error());
    if (st != CONVSEL_OK)
        return;
    st = convsel_instance_run(inst, src, ref);
    CHECK_MSG(st == CONVSEL_OK, "reference run: %s", convsel_last_error());
    convsel_instance_destroy(inst);
}

static void case_free(struct test_case *tc)
{
    convsel_free(tc->weights);
    convsel_free(tc->src);
    convsel_free(tc->ref);
    convsel_free(tc->src2);
    convsel_free(tc->ref2);
    memset(tc, 0, sizeof *tc);
}

static int case_init(struct test_case *tc, const convsel_problem *p, uint64_t seed, const char *origin)
{
    memset(tc, 0, sizeof *tc);
    tc->problem = *p;
    tc->seed = seed;
    char d[256];
    convsel_problem_format(p, d, sizeof d);
    snprintf(tc->desc, sizeof tc->desc, "%s (%s)", d, origin);
    size_t wn = convsel_problem_weights_elems(p), sn = convsel_problem_src_elems(p), dn = convsel_problem_dst_elems(p);
    tc->weights = convsel_alloc(wn * sizeof(float));
    tc->src = convsel_alloc(sn * sizeof(float));
    tc->ref = convsel_alloc(dn * sizeof(float));
    if (!tc->weights || !tc->src || !tc->ref) {
        case_free(tc);
        return 0;
    }
    convsel_fill_random(tc->weights, wn, seed * 3 + 1);
    convsel_fill_random(tc->src, sn, seed * 3 + 2);
    run_reference(p, tc->weights, tc->src, tc->ref);
    return 1;
}

static int case_second_input(struct test_case *tc)
{
    if (tc->src2)
        return 1;
    size_t sn = convsel_problem_src_elems(&tc->problem), dn = convsel_problem_dst_elems(&tc->problem);
    tc->src2 = convsel_alloc(sn * sizeof(float));
    tc->ref2 = convsel_alloc(dn * sizeof(float));
    if (!tc->src2 || !tc->ref2)
        return 0;
    convsel_fill_random(tc->src2, sn, tc->seed * 3 + 3);
    run_reference(&tc->problem, tc->weights, tc->src2, tc->ref2);
    return 1;
}

static convsel_status reorder(int64_t mb, int64_t c, int64_t h, int64_t w, convsel_layout from, convsel_layout to,
                              const float *src, float *dst)
{
    convsel_reorder *r = NULL;
    convsel_status st = convsel_reorder_create(mb, c, h, w, from, to, 1, &r);
    if (st == CONVSEL_OK)
        st = convsel_reorder_run(r, src, dst);
    convsel_reorder_destroy(r);
    return st;
}

/* Zeros in the padded channels of a blocked mb×c×h×w tensor? (Trivially yes
 * for unblocked layouts.) */
static int padding_is_zero(convsel_layout layout, const float *t, int64_t mb, int64_t c, int64_t h, int64_t w)
{
    const int64_t block = (int64_t)convsel_layout_elems(layout, 1, 1, 1, 1);
    if (block <= 1 || c % block == 0)
        return 1;
    const int64_t blocks = (c + block - 1) / block;
    for (int64_t n = 0; n < mb; n++) {
        const float *last = t + ((n * blocks + blocks - 1) * h * w) * block;
        for (int64_t s = 0; s < h * w; s++)
            for (int64_t b = c % block; b < block; b++)
                if (last[s * block + b] != 0.0f)
                    return 0;
    }
    return 1;
}

/*
 * Runs inst on src (nchw) and returns its error against ref; INFINITY (with
 * why filled) when the run or a reorder fails or padded channels are dirty.
 */
static double run_and_compare(convsel_instance *inst, void *workspace, size_t workspace_bytes,
                              const convsel_problem *p, const float *src, const float *ref, char *why,
                              size_t why_size)
{
    const convsel_layout sl = convsel_instance_src_layout(inst), dl = convsel_instance_dst_layout(inst);
    const size_t sn = convsel_layout_elems(sl, p->mb, p->ic, p->ih, p->iw);
    const size_t dn = convsel_layout_elems(dl, p->mb, p->oc, p->oh, p->ow);
    const size_t n = convsel_problem_dst_elems(p);
    float *src_in = NULL, *dst = convsel_alloc(dn * sizeof(float)), *out = NULL;
    double err = INFINITY;
    convsel_status st = CONVSEL_OK;
    why[0] = '\0';
    if (!dst) {
        snprintf(why, why_size, "out of memory");
        return err;
    }
    for (size_t i = 0; i < dn; i++)
        dst[i] = NAN;
    if (sl != CONVSEL_LAYOUT_NCHW) {
        src_in = convsel_alloc(sn * sizeof(float));
        st = src_in ? reorder(p->mb, p->ic, p->ih, p->iw, CONVSEL_LAYOUT_NCHW, sl, src, src_in) : CONVSEL_OUT_OF_MEMORY;
        if (st != CONVSEL_OK) {
            snprintf(why, why_size, "reorder nchw->%s: %s", convsel_layout_name(sl), convsel_last_error());
            goto done;
        }
    }
    if (workspace)
        memset(workspace, 0xff, workspace_bytes); /* all-ones bits: NaN in every float */
    st = convsel_instance_run(inst, src_in ? src_in : src, dst);
    if (st != CONVSEL_OK) {
        snprintf(why, why_size, "run: %s: %s", convsel_status_str(st), convsel_last_error());
        goto done;
    }
    if (!padding_is_zero(dl, dst, p->mb, p->oc, p->oh, p->ow)) {
        snprintf(why, why_size, "padded channels of the %s output are not zero", convsel_layout_name(dl));
        goto done;
    }
    if (dl != CONVSEL_LAYOUT_NCHW) {
        out = convsel_alloc(n * sizeof(float));
        st = out ? reorder(p->mb, p->oc, p->oh, p->ow, dl, CONVSEL_LAYOUT_NCHW, dst, out) : CONVSEL_OUT_OF_MEMORY;
        if (st != CONVSEL_OK) {
            snprintf(why, why_size, "reorder %s->nchw: %s", convsel_layout_name(dl), convsel_last_error());
            goto done;
        }
    }
    err = convsel_rel_error(out ? out : dst, ref, n);
done:
    convsel_free(src_in);
    convsel_free(dst);
    convsel_free(out);
    return err;
}

static void record_failure(struct primitive_stats *s, size_t i, const char *fmt, const char *desc, int threads,
                           const char *detail)
{
    s->failures++;
    check_failed++;
    if (s->failures <= FAILURES_SHOWN) {
        fprintf(stderr, "FAIL %s on %s, %d thread%s: ", convsel_primitive_name(i), desc, threads,
                threads > 1 ? "s" : "");
        fprintf(stderr, fmt, detail);
        fputc('\n', stderr);
    }
}

static int64_t pad64(int64_t n)
{
    return (n + 63) / 64 * 64;
}

/*
 * Tests primitive i on tc with threads threads. Returns 1 when tested, 0 when
 * the primitive declined (NOT_APPLICABLE from create) or failed to create.
 */
static int test_one(size_t i, struct primitive_stats *s, struct test_case *tc, int threads)
{
    const convsel_problem *p = &tc->problem;
    convsel_instance *inst = NULL;
    char why[400];
    s->attempts++;
    convsel_status st = convsel_instance_create(i, p, threads, tc->weights, &inst);
    if (st == CONVSEL_NOT_APPLICABLE) {
        s->refused++;
        return 0;
    }
    if (st != CONVSEL_OK) {
        snprintf(why, sizeof why, "%s: %s", convsel_status_str(st), convsel_last_error());
        record_failure(s, i, "create failed: %s", tc->desc, threads, why);
        return 0;
    }
    /* The weights it says it keeps: at least the plain ones (transformed,
     * blocked and padded forms are larger), exactly those where it keeps
     * them plain (the GEMM family, the reference), and no more than F(4,3)
     * Winograd's 36 taps for 9 with groups and channels padded to 64. */
    const size_t plain = (size_t)convsel_problem_weights_elems(p) * sizeof(float);
    const size_t kept = convsel_instance_weights_bytes(inst);
    const int keeps_plain = convsel_primitive_is_reference(i) || !strcmp(convsel_primitive_family(i), "gemm");
    const int64_t most = 4 * pad64(p->g) * pad64(p->oc / p->g) * pad64(p->ic / p->g) * p->kh * p->kw *
                         (int64_t)sizeof(float);
    if (kept < plain || kept > (size_t)most || (keeps_plain && kept != plain)) {
        snprintf(why, sizeof why, "keeps %zu bytes of weights, plain ones are %zu", kept, plain);
        record_failure(s, i, "%s", tc->desc, threads, why);
    } else {
        check_passed++;
    }
    const size_t wbytes = convsel_instance_workspace_bytes(inst);
    void *ws = NULL;
    int ready = 1;
    if (wbytes && s->attempts % 5 != 0) {
        ws = convsel_alloc(wbytes);
        ready = ws && convsel_instance_set_workspace(inst, ws, wbytes) == CONVSEL_OK;
        if (!ready)
            snprintf(why, sizeof why, "%s", ws ? convsel_last_error() : "out of memory for the workspace");
    }
    double err = ready ? run_and_compare(inst, ws, wbytes, p, tc->src, tc->ref, why, sizeof why) : INFINITY;
    /* Every fourth problem runs the same instance again on another input:
     * an instance that kept something of its first input fails here. */
    if (err <= s->threshold && (s->random_tested + s->edge_tested) % 4 == 3) {
        if (case_second_input(tc))
            err = fmax(err, run_and_compare(inst, ws, wbytes, p, tc->src2, tc->ref2, why, sizeof why));
    }
    convsel_instance_destroy(inst);
    convsel_free(ws);

    if (!(err <= s->threshold)) {
        char detail[512];
        if (why[0])
            snprintf(detail, sizeof detail, "%s", why);
        else
            snprintf(detail, sizeof detail, "error %.3g > threshold %.1e", err, s->threshold);
        record_failure(s, i, "%s", tc->desc, threads, detail);
    } else {
        check_passed++;
    }
    if (!(err <= s->worst)) {
        s->worst = err;
        snprintf(s->worst_desc, sizeof s->worst_desc, "%s, %d thread%s", tc->desc, threads, threads > 1 ? "s" : "");
    }
    return 1;
}

/* Descriptors of the corners random draws reach too rarely to rely on. */
static const char *const edge_cases[] = {
    "mb1ic8ih1oc8oh1kh1",                     /* 1×1 image, 1×1 kernel */
    "mb1ic5ih1oc7oh1kh3ph1",                  /* 1×1 image, all taps but the centre in padding */
    "mb2ic3ih2iw3oc4kh5ph2",                  /* kernel larger than the input, padded */
    "mb1ic4ih3oc6oh1kh7ph2",                  /* kernel larger, bottom padding 2 implied */
    "mb2ic4ih9oc6kh1sh3",                     /* stride larger than the kernel */
    "mb1ic5ih11oc3kh2sh3",                    /* even kernel, stride 3 */
    "mb1ic1ih7oc1kh3ph1",                     /* one channel */
    "mb1ic1ih9iw5oc3kh3ph1",                  /* one input channel, non-square */
    "g8mb1ic8ih10oc8kh3ph1",                  /* depthwise */
    "g32mb2ic32ih14oc32kh3sh2ph1",            /* depthwise, strided */
    "g3mb1ic3ih6oc6kh3ph1",                   /* depthwise, channel multiplier 2 */
    "g4mb1ic12ih7oc20kh3ph1",                 /* groups */
    "g2mb2ic10ih9oc6kh1",                     /* grouped 1×1 */
    "mb1ic3ih7iw13oc5kh3ph1",                 /* odd, non-square image */
    "mb1ic17ih13iw5oc9kh3sh2ph1",             /* odd channels, strided, non-square */
    "mb1ic16ih12oc24kh1kw7ph0pw3",            /* 1×7 */
    "mb1ic16ih12oc24kh7kw1ph3pw0",            /* 7×1 */
    "mb1ic8ih15oc8kh3ph2dh1",                 /* dilation */
    "mb1ic6ih16iw11oc10kh3kw5ph3pw2dh2dw1",   /* dilation differing per axis */
    "mb3ic5ih9oc7kh3ph1",                     /* batch > 1 */
    "mb1ic8ih8oc8kh3sh2",                     /* bottom padding -1: the last row is never read */
    "mb2ic4ih10oc4oh4kh3sh3ph1",              /* bottom padding 1 with top padding 1, stride 3 */
    "mb1ic16ih12oc16kh3ph1",                  /* Winograd-friendly */
    "mb2ic32ih8oc48kh3ph1",                   /* Winograd-friendly, batch 2 */
    "mb1ic64ih14oc128kh1sh2",                 /* ResNet-50's strided 1×1, scaled down */
    "mb1ic64ih7oc32kh1",                      /* plain 1×1 */
    "mb1ic3ih20oc16kh7sh2ph3",                /* a first layer */
    "mb2ic24ih1iw20oc8kh1kw5pw2",             /* a one-row image */
    "mb1ic3ih1iw1oc5kh1sh2ph1",               /* 1×1 kernel with padding: a zero border */
};

static void test_edge_cases(struct primitive_stats *stats, size_t count, uint64_t seed)
{
    for (size_t e = 0; e < sizeof edge_cases / sizeof edge_cases[0]; e++) {
        convsel_problem p;
        convsel_status st = convsel_problem_parse(edge_cases[e], &p);
        CHECK_MSG(st == CONVSEL_OK, "edge case '%s' does not parse: %s", edge_cases[e], convsel_last_error());
        if (st != CONVSEL_OK)
            continue;
        struct test_case tc;
        char origin[96];
        snprintf(origin, sizeof origin, "edge case %zu", e);
        if (!case_init(&tc, &p, seed + 1000003 * (e + 1), origin)) {
            CHECK_MSG(0, "out of memory for %s", edge_cases[e]);
            continue;
        }
        for (size_t i = 0; i < count; i++) {
            if (!stats[i].selected || !convsel_primitive_applicable(i, &p, NULL, 0))
                continue;
            for (int threads = 1; threads <= 2; threads++)
                stats[i].edge_tested += test_one(i, &stats[i], &tc, threads);
        }
        case_free(&tc);
    }
}

static void test_random(struct primitive_stats *stats, size_t count, int target, uint64_t seed)
{
    /* Draws are cheap (the applicability checks); only problems some primitive
     * still needs get data and a reference. The bound stops a primitive that
     * accepts almost nothing from looping forever; the check after reports it. */
    const uint64_t max_draws = (uint64_t)target * 200 + 1000;
    size_t *needing = calloc(count, sizeof *needing);
    if (!needing) {
        CHECK_MSG(0, "out of memory");
        return;
    }
    for (uint64_t d = 0; d < max_draws; d++) {
        /* Half the draws anywhere, a quarter 3×3 stride 1 (Winograd's
         * domain), a quarter 1×1. */
        static const harness_kind kinds[4] = {HARNESS_ANY, HARNESS_3X3_S1, HARNESS_ANY, HARNESS_1X1};
        int open = 0;
        for (size_t i = 0; i < count; i++)
            open += stats[i].selected && stats[i].random_tested < target;
        if (!open)
            break;
        convsel_problem p;
        if (!harness_problem(seed, d, kinds[d % 4], &p)) {
            CHECK_MSG(0, "the problem generator found no valid problem (seed %llu, draw %llu)",
                      (unsigned long long)seed, (unsigned long long)d);
            break;
        }
        size_t nneed = 0;
        for (size_t i = 0; i < count; i++)
            if (stats[i].selected && stats[i].random_tested < target && convsel_primitive_applicable(i, &p, NULL, 0))
                needing[nneed++] = i;
        if (!nneed)
            continue;
        struct test_case tc;
        char origin[96];
        snprintf(origin, sizeof origin, "seed %llu draw %llu", (unsigned long long)seed, (unsigned long long)d);
        if (!case_init(&tc, &p, seed ^ (d * 0x9e3779b97f4a7c15ull), origin)) {
            CHECK_MSG(0, "out of memory for %s", origin);
            continue;
        }
        for (size_t k = 0; k < nneed; k++) {
            struct primitive_stats *s = &stats[needing[k]];
            /* Alternate 1 and 2 threads per primitive, so each sees both. */
            s->random_tested += test_one(needing[k], s, &tc, 1 + s->attempts % 2);
        }
        case_free(&tc);
    }
    free(needing);
}

int main(void)
{
    const int target = env_int("CONVSEL_TEST_PROBLEMS", 300);
    const uint64_t seed = (uint64_t)env_int("CONVSEL_TEST_SEED", 20240611);
    const char *filter = getenv("CONVSEL_TEST_PRIMITIVES");
    const char *isa_env = getenv("CONVSEL_ISA");
    const convsel_isa isa = convsel_get_isa();
    const size_t count = convsel_primitive_count();

    printf("ISA in force: %s (CONVSEL_ISA=%s, OPENBLAS_CORETYPE=%s); %d problems per primitive, seed %llu\n",
           convsel_isa_name(isa), isa_env ? isa_env : "unset",
           getenv("OPENBLAS_CORETYPE") ? getenv("OPENBLAS_CORETYPE") : "unset", target, (unsigned long long)seed);
    convsel_fingerprint fp;
    if (convsel_fingerprint_get(&fp) == CONVSEL_OK)
        printf("CPU: %s; %s\n", fp.model_name, fp.openblas_version);
    if (isa_env && *isa_env) {
        convsel_isa cap;
        CHECK_MSG(convsel_isa_parse(isa_env, &cap) == CONVSEL_OK, "CONVSEL_ISA=%s is not an ISA", isa_env);
        if (convsel_isa_parse(isa_env, &cap) == CONVSEL_OK)
            CHECK_MSG(isa <= cap, "ISA in force %s is above the cap %s", convsel_isa_name(isa), isa_env);
    }

    CHECK_MSG(convsel_primitive_find("reference", &reference_index) == CONVSEL_OK, "no reference primitive");
    struct primitive_stats *stats = calloc(count, sizeof *stats);
    if (!stats) {
        CHECK_MSG(0, "out of memory");
        return CHECK_DONE();
    }
    size_t selected = 0;
    for (size_t i = 0; i < count; i++) {
        stats[i].selected = !convsel_primitive_is_reference(i) && name_selected(filter, convsel_primitive_name(i));
        stats[i].threshold = threshold_of(i);
        selected += (size_t)stats[i].selected;
        /* An exact primitive that claims more error than it is tested
         * against would mislead the selector's --max-error. */
        if (stats[i].selected && !is_winograd(i))
            CHECK_MSG(convsel_primitive_expected_error(i) <= EXACT_THRESHOLD,
                      "%s states expected error %.1e above the exact threshold %.1e", convsel_primitive_name(i),
                      convsel_primitive_expected_error(i), EXACT_THRESHOLD);
    }
    /* Only uncapped on an AVX-512 machine must every primitive find work. */
    const int full_isa = isa == CONVSEL_ISA_AVX512 && !(isa_env && *isa_env);
    CHECK_MSG(selected > 0, "no primitive selected (CONVSEL_TEST_PRIMITIVES=%s)", filter ? filter : "");

    test_edge_cases(stats, count, seed);
    test_random(stats, count, target, seed);

    printf("%-20s %-10s %6s %5s %7s %9s %9s  (ISA %s)\n", "primitive", "family", "random", "edge", "refused",
           "worst", "threshold", convsel_isa_name(isa));
    for (size_t i = 0; i < count; i++) {
        const struct primitive_stats *s = &stats[i];
        if (!s->selected)
            continue;
        printf("%-20s %-10s %6d %5d %7d %9.2e %9.1e\n    worst on %s\n", convsel_primitive_name(i),
               convsel_primitive_family(i), s->random_tested, s->edge_tested, s->refused, s->worst, s->threshold,
               s->worst_desc[0] ? s->worst_desc : "-");
        if (s->random_tested == 0 && s->edge_tested == 0 && s->failures == 0 && !full_isa) {
            /* Under a cap below AVX-512 a primitive may have no kernel at
             * all (oneDNN's Winograd, say): it accepts no problem, or every
             * create declines. Uncapped on AVX-512 that would be a bug. */
            printf("    not available under ISA %s: accepted no problem (%d declined by create)\n",
                   convsel_isa_name(isa), s->refused);
            continue;
        }
        CHECK_MSG(s->random_tested >= target,
                  "%s was tested on only %d random problems (target %d; %d declined by create): the generator "
                  "in tests/harness.h does not reach it often enough",
                  convsel_primitive_name(i), s->random_tested, target, s->refused);
        if (s->failures)
            fprintf(stderr, "%s: %d failures\n", convsel_primitive_name(i), s->failures);
    }
    free(stats);
    return CHECK_DONE();
}
