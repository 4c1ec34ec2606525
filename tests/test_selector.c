/*
 * The selector's dynamic programming against brute force: on small networks
 * with seeded pseudo-random costs, the plan's total must equal the cheapest
 * of all assignments of primitives to layers (times every boundary layout),
 * computed independently here from the documented network model. Also: plan
 * files round-trip, exclusions and error bounds are honoured, an impossible
 * layer is named, and the runner executes a plan.
 */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "convsel.h"
#include "network_text.h"
#include "internal.h"

static uint64_t mix(uint64_t x)
{
    x ^= x >> 33;
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    return x ^ (x >> 33);
}

static uint64_t hash_str(const char *s, uint64_t h)
{
    while (*s)
        h = mix(h ^ (unsigned char)*s++);
    return h;
}

struct synthetic {
    uint64_t seed;
};

static convsel_status syn_conv(void *ctx, const convsel_problem *p, int threads, size_t prim, double *ms)
{
    const struct synthetic *s = ctx;
    char desc[256];
    convsel_problem q = *p; /* a cost is the shape's: neither name nor repeat count */
    q.name[0] = '\0';
    q.repeat = 1;
    convsel_problem_format(&q, desc, sizeof desc);
    uint64_t h = mix(hash_str(desc, s->seed) ^ (prim * 0x9e37ull) ^ (uint64_t)threads);
    *ms = 0.1 + (double)(h % 1000) / 100.0;
    return CONVSEL_OK;
}

static convsel_status syn_reorder(void *ctx, int64_t mb, int64_t c, int64_t h, int64_t w, convsel_layout from,
                                  convsel_layout to, int threads, double *ms)
{
    const struct synthetic *s = ctx;
    uint64_t x = mix(s->seed ^ (uint64_t)(mb * 131 + c * 7 + h * 3 + w) ^ ((uint64_t)from << 40) ^
                     ((uint64_t)to << 48) ^ (uint64_t)threads);
    *ms = (double)(x % 500) / 100.0;
    return CONVSEL_OK;
}

static double reorder(const struct synthetic *s, const convsel_problem *p, int out_side, convsel_layout from,
                      convsel_layout to)
{
    double ms = 0.0;
    if (from == to)
        return 0.0;
    if (out_side)
        syn_reorder((void *)s, p->mb, p->oc, p->oh, p->ow, from, to, 1, &ms);
    else
        syn_reorder((void *)s, p->mb, p->ic, p->ih, p->iw, from, to, 1, &ms);
    return ms;
}

struct option_set {
    size_t prim[16];
    convsel_layout src[16], dst[16];
    size_t n;
};

/* The documented network model, evaluated directly for one assignment:
 * layer i runs prim[i], reading src[i] and writing dst[i]. */
static double assignment_cost(const struct synthetic *s, const convsel_problem *layers, size_t n, const size_t *prim,
                              const convsel_layout *src, const convsel_layout *dst, convsel_layout boundary)
{
    double total = 0.0;
    for (size_t i = 0; i < n; i++) {
        double ms;
        syn_conv((void *)s, &layers[i], 1, prim[i], &ms);
        total += ms;
        int connected = i > 0 && layers[i - 1].mb == layers[i].mb && layers[i - 1].oc == layers[i].ic &&
                        layers[i - 1].oh == layers[i].ih && layers[i - 1].ow == layers[i].iw;
        if (i == 0) {
            total += reorder(s, &layers[i], 0, boundary, src[i]);
        } else if (connected) {
            total += reorder(s, &layers[i], 0, dst[i - 1], src[i]);
        } else {
            total += reorder(s, &layers[i - 1], 1, dst[i - 1], boundary);
            total += reorder(s, &layers[i], 0, boundary, src[i]);
        }
        if (i + 1 == n)
            total += reorder(s, &layers[i], 1, dst[i], boundary);
    }
    return total;
}

/* The cheapest of every assignment and boundary layout. */
static double brute_force(const struct synthetic *s, convsel_problem *layers, size_t n, struct option_set *opts)
{
    double best = DBL_MAX;
    size_t idx[8] = {0}, prim[8];
    convsel_layout src[8], dst[8];
    for (int b = 0; b < CONVSEL_LAYOUT_COUNT; b++) {
        memset(idx, 0, sizeof idx);
        for (;;) {
            for (size_t i = 0; i < n; i++) {
                prim[i] = opts[i].prim[idx[i]];
                src[i] = opts[i].src[idx[i]];
                dst[i] = opts[i].dst[idx[i]];
            }
            double total = assignment_cost(s, layers, n, prim, src, dst, (convsel_layout)b);
            if (total < best)
                best = total;
            size_t k = 0;
            while (k < n && ++idx[k] == opts[k].n)
                idx[k++] = 0;
            if (k == n)
                break;
        }
    }
    return best;
}

/* The runner's per-layer times: none before timing is on; then every layer
 * has a convolution time, and a reorder time exactly where the plan moves a
 * tensor between layouts for it (into it, or out of it at an unconnected
 * boundary or the network's end). */
static void check_layer_times(const convsel_plan *plan, convsel_runner *runner)
{
    double conv, reorder;
    CHECK_EQ(convsel_runner_layer_ms(runner, 0, &conv, &reorder), CONVSEL_NOT_FOUND);
    convsel_runner_time_layers(runner, 1);
    for (int r = 0; r < 3; r++)
        CHECK_EQ(convsel_runner_run(runner), CONVSEL_OK);
    size_t n = plan->n_layers;
    for (size_t i = 0; i < n; i++) {
        const convsel_plan_layer *l = &plan->layers[i];
        convsel_layout in = i == 0 || !l->connected ? plan->boundary_layout : plan->layers[i - 1].dst_layout;
        int exits = i + 1 == n || !plan->layers[i + 1].connected;
        int moves = in != l->src_layout || (exits && l->dst_layout != plan->boundary_layout);
        CHECK_EQ(convsel_runner_layer_ms(runner, i, &conv, &reorder), CONVSEL_OK);
        CHECK_MSG(conv > 0.0, "layer %zu: convolution time %g", i + 1, conv);
        CHECK_MSG((reorder > 0.0) == moves, "layer %zu: reorder time %g, layout changes %d", i + 1, reorder, moves);
    }
    CHECK_EQ(convsel_runner_layer_ms(runner, n, &conv, &reorder), CONVSEL_INVALID_ARGUMENT);
    convsel_runner_time_layers(runner, 0);
    CHECK_EQ(convsel_runner_layer_ms(runner, 0, &conv, &reorder), CONVSEL_NOT_FOUND);
}

static void test_dp_against_brute_force(void)
{
    size_t reorders_seen = 0;
    /* Connected pairs, a broken connection, a repeat, a 1x1 layer. */
    const char *nets[] = {
        "mb1ic8ih10oc16oh10kh3ph1n\"a\"\nmb1ic16ih10oc16oh10kh1ph0n\"b\"\nmb1ic16ih10oc8oh10kh3ph1n\"c\"\n",
        "mb1ic8ih10oc16oh10kh3ph1n\"a\"\nmb1ic4ih12oc8oh6kh3sh2ph1n\"b\"\nmb1ic8ih6oc8oh6kh1ph0n\"c*2\"\n",
        "mb2ic3ih9oc8oh9kh3ph1n\"a\"\nmb2ic8ih9oc8oh9kh3ph1n\"b\"\n",
    };
    for (size_t t = 0; t < sizeof nets / sizeof nets[0]; t++) {
        for (uint64_t seed = 1; seed <= 3; seed++) {
            convsel_network *net = network_from_text(nets[t]);
            CHECK(net != NULL);
            if (!net)
                continue;
            struct synthetic syn = {seed * 1000 + t};
            convsel_cost_source src = {syn_conv, syn_reorder, &syn, "synthetic", NULL, CONVSEL_STAT_MEDIAN, NULL};
            convsel_select_options o = {1, 0.0, NULL, 0, 0};
            convsel_plan *plan = NULL;
            convsel_status st = convsel_select(net, &o, &src, &plan);
            CHECK_EQ(st, CONVSEL_OK);
            if (st != CONVSEL_OK) {
                fprintf(stderr, "select: %s\n", convsel_last_error());
                convsel_network_destroy(net);
                continue;
            }
            /* Expanded sequence and each layer's options, as the DP sees them. */
            convsel_problem layers[8];
            struct option_set opts[8];
            size_t n = 0;
            for (size_t l = 0; l < convsel_network_size(net); l++)
                for (int r = 0; r < convsel_network_layer(net, l)->repeat; r++)
                    layers[n++] = *convsel_network_layer(net, l);
            CHECK_EQ(plan->n_layers, n);
            for (size_t i = 0; i < n; i++) {
                opts[i].n = 0;
                for (size_t p = 0; p < convsel_primitive_count(); p++) {
                    if (convsel_primitive_is_reference(p) || !convsel_primitive_applicable(p, &layers[i], NULL, 0))
                        continue;
                    convsel_layout a, b;
                    if (convsel_primitive_layouts_for(p, &layers[i], 1, &a, &b) != CONVSEL_OK)
                        continue;
                    opts[i].prim[opts[i].n] = p;
                    opts[i].src[opts[i].n] = a;
                    opts[i].dst[opts[i].n] = b;
                    opts[i].n++;
                }
                CHECK(opts[i].n > 0);
            }
            double best = brute_force(&syn, layers, n, opts);
            CHECK_NEAR(plan->total_ms, best, 1e-9);
            /* The plan's own accounting adds up to its total. */
            double sum = 0.0;
            for (size_t i = 0; i < n; i++)
                sum += plan->layers[i].conv_ms + plan->layers[i].reorder_in_ms + plan->layers[i].reorder_out_ms;
            CHECK_NEAR(sum, plan->total_ms, 1e-9);
            for (size_t i = 0; i < n; i++)
                if (plan->layers[i].runner_up[0])
                    CHECK(plan->layers[i].runner_up_margin_ms >= -1e-9);
            /* Priced again by the costs that made it, the plan costs what it
             * said; priced by other costs, what the network model says its
             * assignment costs there. */
            double conv_ms = -1.0, reorder_ms = -1.0;
            CHECK_EQ(convsel_plan_price(plan, &src, &conv_ms, &reorder_ms), CONVSEL_OK);
            CHECK_NEAR(conv_ms + reorder_ms, plan->total_ms, 1e-9);
            CHECK_NEAR(reorder_ms, plan->reorder_ms, 1e-9);
            struct synthetic other = {seed * 1000 + t + 77};
            convsel_cost_source other_src = {syn_conv, syn_reorder, &other, "other", NULL, CONVSEL_STAT_MEDIAN, NULL};
            size_t prim[8];
            convsel_layout lsrc[8], ldst[8];
            for (size_t i = 0; i < n; i++) {
                CHECK_EQ(convsel_primitive_find(plan->layers[i].primitive, &prim[i]), CONVSEL_OK);
                lsrc[i] = plan->layers[i].src_layout;
                ldst[i] = plan->layers[i].dst_layout;
            }
            CHECK_EQ(convsel_plan_price(plan, &other_src, &conv_ms, &reorder_ms), CONVSEL_OK);
            CHECK_NEAR(conv_ms + reorder_ms, assignment_cost(&other, layers, n, prim, lsrc, ldst, plan->boundary_layout),
                       1e-9);
            /* Run, the plan's reorders show where it says they are. */
            convsel_runner *runner = NULL;
            CHECK_EQ(convsel_runner_create(plan, 1, &runner), CONVSEL_OK);
            if (runner) {
                check_layer_times(plan, runner);
                reorders_seen += convsel_runner_reorder_count(runner);
            }
            convsel_runner_destroy(runner);
            convsel_plan_destroy(plan);
            convsel_network_destroy(net);
        }
    }
    /* The random reorder costs leave some reorders in some plans, so the
     * reorder-time check above has had both kinds of layer. */
    CHECK(reorders_seen > 0);
}

static convsel_status none_conv(void *ctx, const convsel_problem *p, int threads, size_t prim, double *ms)
{
    (void)ctx, (void)p, (void)threads, (void)prim, (void)ms;
    return CONVSEL_NOT_APPLICABLE;
}

static void test_exclusions_and_errors(void)
{
    convsel_network *net = network_from_text("mb1ic8ih10oc8oh10kh3ph1n\"x\"\nmb1ic8ih10oc8oh10kh3ph1n\"y\"\n");
    CHECK(net != NULL);
    if (!net)
        return;
    struct synthetic syn = {42};
    convsel_cost_source src = {syn_conv, syn_reorder, &syn, "synthetic", NULL, CONVSEL_STAT_MEDIAN, NULL};
    size_t np = convsel_primitive_count();
    unsigned char *excluded = calloc(np, 1);
    size_t keep = np;
    if (convsel_primitive_find("im2col_gemm", &keep) != CONVSEL_OK)
        keep = np;
    for (size_t p = 0; p < np; p++)
        excluded[p] = p != keep;
    convsel_select_options o = {1, 0.0, excluded, 0, 0};
    convsel_plan *plan = NULL;
    if (keep < np) {
        CHECK_EQ(convsel_select(net, &o, &src, &plan), CONVSEL_OK);
        if (plan)
            for (size_t i = 0; i < plan->n_layers; i++)
                CHECK_STR(plan->layers[i].primitive, "im2col_gemm");
        convsel_plan_destroy(plan);
        plan = NULL;
    }
    /* Everything excluded: the layer is named in the error. */
    memset(excluded, 1, np);
    CHECK_EQ(convsel_select(net, &o, &src, &plan), CONVSEL_NOT_APPLICABLE);
    CHECK(strstr(convsel_last_error(), "'x'") != NULL);
    CHECK(plan == NULL);
    /* An error bound excludes every primitive whose expected error exceeds it. */
    memset(excluded, 0, np);
    o.max_error = 1e-5;
    CHECK_EQ(convsel_select(net, &o, &src, &plan), CONVSEL_OK);
    if (plan) {
        for (size_t i = 0; i < plan->n_layers; i++) {
            size_t idx = 0;
            CHECK_EQ(convsel_primitive_find(plan->layers[i].primitive, &idx), CONVSEL_OK);
            CHECK(convsel_primitive_expected_error(idx) <= 1e-5);
        }
    }

    /* Plan files round-trip, and the runner executes the plan. */
    if (plan) {
        char path[] = "/tmp/convsel_test_plan_XXXXXX";
        int fd = mkstemp(path);
        close(fd);
        CHECK_EQ(convsel_plan_save(plan, path), CONVSEL_OK);
        convsel_plan *back = NULL;
        CHECK_EQ(convsel_plan_load(path, &back), CONVSEL_OK);
        if (back) {
            CHECK_EQ(back->n_layers, plan->n_layers);
            CHECK_EQ(back->boundary_layout, plan->boundary_layout);
            CHECK_NEAR(back->total_ms, plan->total_ms, 1e-5);
            /* What it was made with: max_error, read back exactly. */
            CHECK(plan->made_with.recorded && back->made_with.recorded);
            CHECK(back->made_with.max_error == 1e-5);
            CHECK(convsel_plan_made_with_equal(&back->made_with, &plan->made_with));
            for (size_t i = 0; i < plan->n_layers; i++) {
                CHECK_STR(back->layers[i].primitive, plan->layers[i].primitive);
                CHECK_EQ(back->layers[i].src_layout, plan->layers[i].src_layout);
                CHECK_EQ(back->layers[i].connected, plan->layers[i].connected);
                CHECK(memcmp(&back->layers[i].problem, &plan->layers[i].problem, sizeof(convsel_problem)) == 0);
            }
            /* A loaded plan prices as the plan it was saved from. */
            double c1, r1, c2, r2;
            CHECK_EQ(convsel_plan_price(plan, &src, &c1, &r1), CONVSEL_OK);
            CHECK_EQ(convsel_plan_price(back, &src, &c2, &r2), CONVSEL_OK);
            CHECK_NEAR(c1 + r1, c2 + r2, 1e-9);
            /* A cost source without this layer's primitive: the layer is named. */
            convsel_cost_source none = {none_conv, syn_reorder, &syn, "none", NULL, CONVSEL_STAT_MEDIAN, NULL};
            CHECK_EQ(convsel_plan_price(back, &none, &c1, &r1), CONVSEL_NOT_APPLICABLE);
            CHECK(strstr(convsel_last_error(), "layer 1 (x)") != NULL);
            CHECK_EQ(convsel_plan_price(NULL, &src, &c1, &r1), CONVSEL_INVALID_ARGUMENT);
            convsel_runner *runner = NULL;
            CHECK_EQ(convsel_runner_create(back, 1, &runner), CONVSEL_OK);
            if (runner) {
                CHECK_EQ(convsel_runner_run(runner), CONVSEL_OK);
                check_layer_times(back, runner);
            }
            convsel_runner_destroy(runner);
            convsel_plan_destroy(back);
        }
        /* Every primitive excluded, verified and checked: the names fit, in
         * catalogue order, and every field reads back equal. */
        size_t np = convsel_primitive_count();
        unsigned char *all = malloc(np);
        convsel_plan_made_with mw;
        if (all) {
            memset(all, 1, np);
            convsel_select_options every = {1, 0.0, all, 0, 1};
            CHECK_EQ(convsel_plan_made_with_init(&mw, &every, 3, 0.1, 1, 2.5), CONVSEL_OK);
            CHECK(strncmp(mw.excluded, convsel_primitive_name(0), strlen(convsel_primitive_name(0))) == 0);
            CHECK(strstr(mw.excluded, convsel_primitive_name(np - 1)) != NULL);
            CHECK(mw.verify_k == 3 && mw.verify_alone && mw.uncertainty == 0.1 && mw.checked && mw.check_time_s == 2.5);
            plan->made_with = mw;
            CHECK_EQ(convsel_plan_save(plan, path), CONVSEL_OK);
            CHECK_EQ(convsel_plan_load(path, &back), CONVSEL_OK);
            if (back)
                CHECK(convsel_plan_made_with_equal(&back->made_with, &mw));
            convsel_plan_destroy(back);
            back = NULL;
            /* Not verified (k < 2): alone and the uncertainty are not options
             * of the plan; an unrecorded made_with equals none. */
            convsel_plan_made_with a, b;
            CHECK_EQ(convsel_plan_made_with_init(&a, &every, 1, 0.1, 0, 0.0), CONVSEL_OK);
            every.verify_alone = 0;
            CHECK_EQ(convsel_plan_made_with_init(&b, &every, 0, 0.7, 0, 3.0), CONVSEL_OK);
            CHECK(convsel_plan_made_with_equal(&a, &b));
            CHECK_EQ(convsel_plan_made_with_init(&b, &every, 2, 0.7, 0, 0.0), CONVSEL_OK);
            CHECK(!convsel_plan_made_with_equal(&a, &b));
            a.recorded = b.recorded = 0;
            CHECK(!convsel_plan_made_with_equal(&a, &a));
        }
        free(all);
        /* Saved aside and renamed: nothing left beside it; a save that
         * cannot land (onto a directory, into a missing one) fails naming
         * the path and leaves no temporary file either. */
        char tmp_name[4200], dir[] = "/tmp/convsel_test_plandir_XXXXXX";
        snprintf(tmp_name, sizeof tmp_name, "%s.tmp.%ld", path, (long)getpid());
        CHECK(access(tmp_name, F_OK) != 0);
        CHECK(mkdtemp(dir) != NULL);
        CHECK_EQ(convsel_plan_save(plan, dir), CONVSEL_IO_ERROR);
        CHECK(strstr(convsel_last_error(), dir) != NULL);
        snprintf(tmp_name, sizeof tmp_name, "%s.tmp.%ld", dir, (long)getpid());
        CHECK(access(tmp_name, F_OK) != 0);
        snprintf(tmp_name, sizeof tmp_name, "%s/missing/plan.json", dir);
        CHECK_EQ(convsel_plan_save(plan, tmp_name), CONVSEL_IO_ERROR);
        CHECK(strstr(convsel_last_error(), tmp_name) != NULL);
        CHECK_EQ(rmdir(dir), 0); /* still empty */
        /* A corrupt plan fails cleanly. */
        FILE *f = fopen(path, "w");
        fputs("{\"format\": \"convsel-plan\", \"version\": 99, \"layers\": []}", f);
        fclose(f);
        CHECK_EQ(convsel_plan_load(path, &back), CONVSEL_VERSION_MISMATCH);
        f = fopen(path, "w");
        fputs("{\"format\": \"convsel-plan\", \"version\": 1, \"layers\": [{\"problem\": \"mb1ic8", f);
        fclose(f);
        CHECK_EQ(convsel_plan_load(path, &back), CONVSEL_CORRUPT);
        CHECK_EQ(convsel_plan_load("/nonexistent/plan.json", &back), CONVSEL_IO_ERROR);
        /* An empty file and a directory say so, not "expected '{'". */
        fclose(fopen(path, "w"));
        CHECK_EQ(convsel_plan_load(path, &back), CONVSEL_CORRUPT);
        CHECK(strstr(convsel_last_error(), path) != NULL && strstr(convsel_last_error(), "empty file") != NULL);
        CHECK_EQ(mkdir(dir, 0700), 0); /* the name mkdtemp chose above, removed since */
        CHECK_EQ(convsel_plan_load(dir, &back), CONVSEL_IO_ERROR);
        CHECK(strstr(convsel_last_error(), dir) != NULL && strstr(convsel_last_error(), "a directory") != NULL);
        CHECK(back == NULL);
        CHECK_EQ(rmdir(dir), 0);
        unlink(path);
    }
    convsel_plan_destroy(plan);
    free(excluded);
    convsel_network_destroy(net);
}

/* What the selector believes about layouts is what instances really use. */
static void test_layout_queries(void)
{
    const char *descs[] = {"mb1ic16ih14oc32oh14kh3ph1", "mb2ic3ih9oc8oh9kh1ph0", "g8mb1ic8ih10oc8oh10kh3ph1",
                           "mb1ic20ih7oc12oh4kh3sh2ph1"};
    for (size_t d = 0; d < sizeof descs / sizeof descs[0]; d++) {
        convsel_problem p;
        CHECK_EQ(convsel_problem_parse(descs[d], &p), CONVSEL_OK);
        float *w = calloc(convsel_problem_weights_elems(&p), sizeof *w);
        for (size_t i = 0; i < convsel_primitive_count(); i++) {
            convsel_layout src, dst;
            convsel_instance *inst = NULL;
            if (!convsel_primitive_applicable(i, &p, NULL, 0))
                continue;
            convsel_status st = convsel_primitive_layouts_for(i, &p, 1, &src, &dst);
            convsel_status st2 = convsel_instance_create(i, &p, 1, w, &inst);
            CHECK_EQ(st, st2);
            if (st == CONVSEL_OK && st2 == CONVSEL_OK) {
                CHECK_MSG(src == convsel_instance_src_layout(inst) && dst == convsel_instance_dst_layout(inst),
                          "%s on %s: query says %s->%s, instance uses %s->%s", convsel_primitive_name(i), descs[d],
                          convsel_layout_name(src), convsel_layout_name(dst),
                          convsel_layout_name(convsel_instance_src_layout(inst)),
                          convsel_layout_name(convsel_instance_dst_layout(inst)));
            }
            convsel_instance_destroy(inst);
        }
        free(w);
    }
}

/* The batch path: syn_conv per query, except that a primitive the source
 * "lacks" gets NOT_FOUND; fail_batch makes the whole call fail. */
static size_t lacking = SIZE_MAX;
static int fail_batch;

static convsel_status syn_conv_lacking(void *ctx, const convsel_problem *p, int threads, size_t prim, double *ms)
{
    if (prim == lacking)
        return CONVSEL_NOT_FOUND;
    return syn_conv(ctx, p, threads, prim, ms);
}

static convsel_status syn_conv_batch(void *ctx, size_t n, const convsel_problem *const *problems, int threads,
                                     const size_t *prims, double *ms, convsel_status *status)
{
    if (fail_batch)
        return CONVSEL_BACKEND_ERROR;
    for (size_t k = 0; k < n; k++)
        status[k] = syn_conv_lacking(ctx, problems[k], threads, prims[k], &ms[k]);
    return CONVSEL_OK;
}

/* A batching cost source gives the very plan the one-by-one source gives,
 * also when it lacks a primitive and when the batch call fails. */
static void test_batch_same_plan(void)
{
    const char *text = "mb1ic8ih10oc16oh10kh3ph1n\"a\"\nmb1ic16ih10oc16oh10kh1ph0n\"b*3\"\n"
                       "mb1ic16ih10oc8oh10kh3ph1n\"c\"\nmb1ic8ih10oc16oh10kh3ph1n\"a again\"\n";
    size_t direct;
    CHECK_EQ(convsel_primitive_find("direct_simd", &direct), CONVSEL_OK);
    for (int variant = 0; variant < 3; variant++) {
        lacking = variant == 1 ? direct : SIZE_MAX;
        fail_batch = variant == 2;
        convsel_network *net = network_from_text(text);
        CHECK(net != NULL);
        if (!net)
            continue;
        struct synthetic syn = {77};
        convsel_cost_source one = {syn_conv_lacking, syn_reorder, &syn, "synthetic", NULL, CONVSEL_STAT_MEDIAN, NULL};
        convsel_cost_source many = {syn_conv_lacking, syn_reorder, &syn, "synthetic", syn_conv_batch,
                                    CONVSEL_STAT_MEDIAN, NULL};
        convsel_select_options o = {1, 0.0, NULL, 0, 0};
        convsel_plan *a = NULL, *b = NULL;
        CHECK_EQ(convsel_select(net, &o, &one, &a), CONVSEL_OK);
        CHECK_EQ(convsel_select(net, &o, &many, &b), CONVSEL_OK);
        if (a && b) {
            CHECK_EQ(a->n_layers, b->n_layers);
            CHECK(a->total_ms == b->total_ms);
            for (size_t i = 0; i < a->n_layers && i < b->n_layers; i++) {
                CHECK_STR(a->layers[i].primitive, b->layers[i].primitive);
                if (variant == 1)
                    CHECK(strcmp(a->layers[i].primitive, "direct_simd") != 0);
            }
        }
        convsel_plan_destroy(a);
        convsel_plan_destroy(b);
        convsel_network_destroy(net);
    }
    lacking = SIZE_MAX;
    fail_batch = 0;
}

/* syn_conv scaled to nanoseconds: every prediction far below any real
 * measurement, the case where an unmeasured candidate could undercut. */
static convsel_status syn_conv_tiny(void *ctx, const convsel_problem *p, int threads, size_t prim, double *ms)
{
    convsel_status st = syn_conv(ctx, p, threads, prim, ms);
    *ms *= 1e-6;
    return st;
}

/* Three connected layers and timing options that keep measuring them short,
 * for the tests of --verify and --check. */
static convsel_network *three_layers(void)
{
    return network_from_text("mb1ic8ih8oc8oh8kh3ph1n\"a\"\nmb1ic8ih8oc16oh8kh1ph0n\"b\"\nmb1ic16ih8oc8oh8kh3ph1n\"c\"\n");
}

static convsel_timing_options quick_timing(void)
{
    convsel_timing_options t;
    convsel_timing_options_default(&t);
    t.warmup_s = 0.0;
    t.min_rounds = 3;
    t.max_time_s = 0.02;
    return t;
}

/* --verify with every layer "too close to call": each layer is measured, and
 * its choice is one of the K the model ranked best there (a candidate never
 * measured must not undercut the measured ones with a prediction). The
 * timings themselves are not checked. */
/* --verify's switch rule: the model's choice always stays a candidate; another
 * measured candidate only when it beats the model's choice by more than the
 * margin; with the model's choice unmeasured, every measured one stays. */
static void test_verify_keeps(void)
{
    const double m = CONVSEL_VERIFY_SWITCH_MARGIN;
    CHECK(m > 0.0 && m < 0.5);
    CHECK(convsel_verify_keeps(1.0, 1, 5.0));
    CHECK(convsel_verify_keeps(1.0, 0, 1.0 / (1.0 + m) * 0.999));
    CHECK(!convsel_verify_keeps(1.0, 0, 1.0 / (1.0 + m) * 1.001));
    CHECK(!convsel_verify_keeps(1.0, 0, 0.99));
    CHECK(!convsel_verify_keeps(1.0, 0, 1.0));
    CHECK(!convsel_verify_keeps(1.0, 0, 2.0));
    CHECK(convsel_verify_keeps(0.0, 0, 2.0));
}

/* The decision on measured candidates: in place, the in-place times decide
 * and set the cost (a candidate 10% faster alone but slower in place stays
 * out; one 20% faster in place costs 80% of the anchor's time alone), and
 * without them the times alone do. */
static void test_verify_decide(void)
{
    convsel_verify_candidate c[] = {
        {.group = 0, .primitive = 1, .anchor = 1, .alone_ms = 1.0, .in_place_ms = 2.0},
        {.group = 0, .primitive = 2, .alone_ms = 0.9, .in_place_ms = 2.1},
        {.group = 0, .primitive = 3, .alone_ms = 1.1, .in_place_ms = 1.6},
        {.group = 1, .primitive = 1, .anchor = 1, .alone_ms = 1.0},
        {.group = 1, .primitive = 2, .alone_ms = 0.9},
        {.group = 1, .primitive = 3, .alone_ms = 0.97},
        {.group = 2, .primitive = 2, .alone_ms = 3.0, .in_place_ms = 1.0}, /* no anchor measured */
        /* oneDNN alone's choice: kept in place though 3% slower there, at its
         * in-place cost; alone, the margin holds for it as for the others. */
        {.group = 3, .primitive = 1, .anchor = 1, .alone_ms = 1.0, .in_place_ms = 2.0},
        {.group = 3, .primitive = 4, .baseline = 1, .alone_ms = 0.9, .in_place_ms = 2.06},
        {.group = 4, .primitive = 1, .anchor = 1, .alone_ms = 1.0},
        {.group = 4, .primitive = 4, .baseline = 1, .alone_ms = 0.97},
    };
    convsel_verify_decide(c, sizeof c / sizeof c[0]);
    CHECK(c[0].kept);
    CHECK(c[0].ms == 1.0);
    CHECK(!c[1].kept);
    CHECK(c[2].kept);
    CHECK_NEAR(c[2].ms, 0.8, 1e-12);
    CHECK(c[3].kept);
    CHECK(c[4].kept);
    CHECK(c[4].ms == 0.9);
    CHECK(!c[5].kept);
    CHECK(c[6].kept);
    CHECK(c[6].ms == 3.0);
    CHECK(c[8].kept);
    CHECK_NEAR(c[8].ms, 1.03, 1e-12);
    CHECK(!c[10].kept);
}

/* mode 0: --alone; 1: in place; 2: in place with no memory for a variant
 * (CONVSEL_VERIFY_MAX_BYTES=0), which must decide by the times alone; 3: in
 * place with no time for rounds (CONVSEL_VERIFY_IN_PLACE_S=0). */
static void test_verified_choices(int mode)
{
    int in_place = mode == 1 || mode == 3;
    if (mode == 2)
        setenv("CONVSEL_VERIFY_MAX_BYTES", "0", 1);
    if (mode == 3) /* no time for rounds: the fewest are still run in place */
        setenv("CONVSEL_VERIFY_IN_PLACE_S", "0", 1);
    convsel_network *net = three_layers();
    CHECK(net != NULL);
    if (!net)
        return;
    struct synthetic syn = {5};
    convsel_cost_source src = {syn_conv_tiny, syn_reorder, &syn, "synthetic", NULL, CONVSEL_STAT_MEDIAN, NULL};
    convsel_select_options o = {1, 0.0, NULL, 0, mode == 0};
    convsel_timing_options t = quick_timing();
    t.min_rounds = 12; /* more than the screen's: a full timing alone shows in alone_runs */
    convsel_plan *plan = NULL;
    const int k = 2;
    convsel_plan *model_plan = NULL;
    convsel_verify_candidate *cand = NULL;
    size_t n_cand = 0;
    size_t baseline;
    CHECK_EQ(convsel_primitive_find("onednn_auto", &baseline), CONVSEL_OK);
    CHECK_EQ(convsel_select(net, &o, &src, &model_plan), CONVSEL_OK);
    CHECK_EQ(convsel_verify_select(net, &o, &src, k, 100.0, &t, &plan, &cand, &n_cand), CONVSEL_OK);
    if (plan && model_plan) {
        CHECK_EQ(plan->verified_layers, 3);
        for (size_t i = 0; i < plan->n_layers; i++) {
            const convsel_problem *p = &plan->layers[i].problem;
            CHECK(plan->layers[i].verified);
            /* The chosen primitive's predicted rank on this layer. */
            size_t chosen;
            CHECK_EQ(convsel_primitive_find(plan->layers[i].primitive, &chosen), CONVSEL_OK);
            double mine;
            CHECK_EQ(syn_conv(&syn, p, 1, chosen, &mine), CONVSEL_OK);
            int better = 0;
            for (size_t q = 0; q < convsel_primitive_count(); q++) {
                double ms;
                if (q == chosen || convsel_primitive_is_reference(q) || !convsel_primitive_applicable(q, p, NULL, 0))
                    continue;
                if (syn_conv(&syn, p, 1, q, &ms) == CONVSEL_OK && ms < mine)
                    better++;
            }
            /* Measured: the top k, the model plan's own choice here and oneDNN alone's. */
            int models_choice = !strcmp(plan->layers[i].primitive, model_plan->layers[i].primitive);
            CHECK_MSG(better < k || models_choice || chosen == baseline,
                      "layer %zu: %s is predicted rank %d, beyond the %d measured, and not the model plan's %s", i,
                      plan->layers[i].primitive, better + 1, k, model_plan->layers[i].primitive);
            /* oneDNN alone's choice was measured wherever it applies. */
            int baseline_measured = 0;
            for (size_t c = 0; c < n_cand; c++)
                if (cand[c].primitive == baseline && convsel_problem_same_shape(&cand[c].shape, p))
                    baseline_measured = 1;
            if (convsel_select_allowed(baseline, p, &o, NULL, 0) && !convsel_select_runs_naive(baseline, p, 1))
                CHECK_MSG(baseline_measured, "layer %zu: onednn_auto applies but was not measured", i);
            /* And it is a candidate the rule kept, at the cost it was given. */
            int kept = 0;
            for (size_t c = 0; c < n_cand; c++)
                if (cand[c].primitive == chosen && convsel_problem_same_shape(&cand[c].shape, p)) {
                    kept = cand[c].kept;
                    CHECK_NEAR(plan->layers[i].conv_ms, cand[c].ms, 1e-12);
                }
            CHECK_MSG(kept, "layer %zu: %s was not a kept candidate", i, plan->layers[i].primitive);
        }
    }
    /* The candidates: per layer the model plan's choice (the anchor) and up to
     * k + 1 others (the top k, oneDNN alone's choice); with in_place every one
     * was run inside the network (in the model's plan or one of its variants),
     * and the margin rule (which oneDNN alone's choice skips in place) and the
     * cost follow the in-place times, else the times alone. */
    CHECK(n_cand >= 3 && n_cand <= 3 * (size_t)(k + 2));
    for (size_t c = 0; c < n_cand; c++) {
        const convsel_verify_candidate *e = &cand[c], *a = NULL;
        int anchors = 0;
        for (size_t d = 0; d < n_cand; d++)
            if (cand[d].group == e->group && cand[d].anchor) {
                a = &cand[d];
                anchors++;
            }
        CHECK_EQ(anchors, 1);
        CHECK_EQ(e->baseline, e->primitive == baseline);
        CHECK(e->group < 3);
        CHECK(e->alone_ms > 0.0);
        /* In place the times alone only screen; where they decide (alone, or
         * no memory for the networks) they are timed in full. */
        size_t in_group = 0;
        for (size_t d = 0; d < n_cand; d++)
            in_group += cand[d].group == e->group;
        CHECK(e->alone_runs >= (in_place ? CONVSEL_VERIFY_SCREEN_ROUNDS : in_group > 1 ? t.min_rounds : 1));
        if (!a)
            continue;
        CHECK(convsel_problem_same_shape(&a->shape, &e->shape));
        if (in_place) {
            CHECK_MSG(e->in_place_ms > 0.0, "candidate %s of group %zu never ran in place",
                      convsel_primitive_name(e->primitive), e->group);
            CHECK_EQ(e->kept, e->baseline || convsel_verify_keeps(a->in_place_ms, e->anchor, e->in_place_ms));
            double want = e->anchor ? e->alone_ms : a->alone_ms * e->in_place_ms / a->in_place_ms;
            CHECK_NEAR(e->ms, want, 1e-12 * want);
        } else {
            CHECK_MSG(e->in_place_ms == 0.0, "candidate %s of group %zu ran in place (mode %d)", convsel_primitive_name(e->primitive), e->group, mode);
            CHECK_EQ(e->kept, convsel_verify_keeps(a->alone_ms, e->anchor, e->alone_ms));
            CHECK(e->ms == e->alone_ms);
        }
    }
    free(cand);
    convsel_plan_destroy(model_plan);
    convsel_plan_destroy(plan);
    convsel_network_destroy(net);
    unsetenv("CONVSEL_VERIFY_MAX_BYTES");
    unsetenv("CONVSEL_VERIFY_IN_PLACE_S");
}

/* --verify in place: the rounds the budget allows (15 where they fit, then as
 * many as fit, never fewer than 3; an unknown round time keeps 15). */
static void test_in_place_rounds(void)
{
    CHECK_EQ(convsel_verify_in_place_rounds(0.01, 10.0), CONVSEL_VERIFY_IN_PLACE_ROUNDS);
    CHECK_EQ(convsel_verify_in_place_rounds(10.0 / 15.0, 10.0), 15);
    CHECK_EQ(convsel_verify_in_place_rounds(1.0, 10.0), 10);
    CHECK_EQ(convsel_verify_in_place_rounds(2.4, 10.0), 4);
    CHECK_EQ(convsel_verify_in_place_rounds(5.6, 10.0), CONVSEL_VERIFY_IN_PLACE_MIN_ROUNDS);
    CHECK_EQ(convsel_verify_in_place_rounds(1.0, 0.0), CONVSEL_VERIFY_IN_PLACE_MIN_ROUNDS);
    CHECK_EQ(convsel_verify_in_place_rounds(1.0, -1.0), CONVSEL_VERIFY_IN_PLACE_MIN_ROUNDS);
    CHECK_EQ(convsel_verify_in_place_rounds(1.0, NAN), CONVSEL_VERIFY_IN_PLACE_MIN_ROUNDS);
    CHECK_EQ(convsel_verify_in_place_rounds(0.0, 10.0), CONVSEL_VERIFY_IN_PLACE_ROUNDS);
    CHECK_EQ(convsel_verify_in_place_rounds(1.0, 1e300), CONVSEL_VERIFY_IN_PLACE_ROUNDS);
}

/* The verify budgets' environment variables: a number >= the minimum, or the
 * fallback for anything else (a typo must not read as 0). */
static void test_env_double(void)
{
    const char *name = "CONVSEL_TEST_ENV_DOUBLE";
    unsetenv(name);
    CHECK(convsel_env_double(name, 0.0, 7.0) == 7.0);
    const char *bad[] = {"", "abc", "12abc", "-1", "inf", "nan", "1e999"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        setenv(name, bad[i], 1);
        CHECK_MSG(convsel_env_double(name, 0.0, 7.0) == 7.0, "'%s' was taken", bad[i]);
    }
    setenv(name, "0", 1);
    CHECK(convsel_env_double(name, 0.0, 7.0) == 0.0);
    setenv(name, "2.5", 1);
    CHECK(convsel_env_double(name, 0.0, 7.0) == 2.5);
    setenv(name, "6e8", 1);
    CHECK(convsel_env_double(name, 0.0, 7.0) == 6e8);
    unsetenv(name);
}

/* convsel_grow, behind every growing array of the library (the plan's
 * layers, the selector's caches, the runner's steps): the first capacity,
 * doubling, the contents kept, and a size that overflows refused with the
 * array and its capacity untouched. */
static void test_grow(void)
{
    int *a = NULL;
    size_t n = 0, cap = 0;
    for (int i = 0; i < 1000; i++) {
        size_t before = cap;
        int *grown = convsel_grow(a, n, &cap, 16, sizeof *grown);
        CHECK(grown != NULL);
        if (!grown)
            break;
        a = grown;
        if (n < before)
            CHECK_EQ(cap, before);
        else
            CHECK_EQ(cap, before ? 2 * before : 16);
        a[n++] = 3 * i + 1;
    }
    CHECK_EQ(n, 1000);
    CHECK_EQ(cap, 1024);
    for (size_t i = 0; i < n; i++)
        CHECK_MSG(a[i] == 3 * (int)i + 1, "element %zu lost", i);
    size_t full = cap;
    n = cap;
    CHECK(convsel_grow(a, n, &cap, 16, SIZE_MAX / 1000) == NULL);
    CHECK_EQ(cap, full);
    CHECK(a[999] == 3 * 999 + 1);
    size_t zero = 0;
    void *first = convsel_grow(NULL, 0, &zero, 0, sizeof(double));
    CHECK(first != NULL && zero == 1);
    free(first);
    free(a);
}

/* --check: the plan returned is the one the report names — the model's
 * plan, a verified plan (every choice among the top K), or onednn_auto on
 * every layer — and its end-to-end median is the smallest of those timed;
 * excluding onednn_auto leaves it out; a negative time is refused. */
static void test_checked_plan(void)
{
    convsel_network *net = three_layers();
    CHECK(net != NULL);
    if (!net)
        return;
    size_t np = convsel_primitive_count(), auto_index;
    CHECK_EQ(convsel_primitive_find("onednn_auto", &auto_index), CONVSEL_OK);
    unsigned char *no_auto = calloc(np, 1);
    no_auto[auto_index] = 1;
    convsel_timing_options t = quick_timing();
    size_t ablations = 0;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        struct synthetic syn = {seed};
        convsel_cost_source src = {syn_conv_tiny, syn_reorder, &syn, "synthetic", NULL, CONVSEL_STAT_MEDIAN, NULL};
        convsel_select_options o = {1, 0.0, seed == 4 ? no_auto : NULL, 0, 0};
        convsel_plan *model_plan = NULL, *plan = NULL;
        convsel_check_report rep;
        CHECK_EQ(convsel_select(net, &o, &src, &model_plan), CONVSEL_OK);
        CHECK_EQ(convsel_select_checked(net, &o, &src, 2, 100.0, &t, 0.05, &plan, &rep), CONVSEL_OK);
        if (!plan || !model_plan) {
            convsel_plan_destroy(model_plan);
            convsel_plan_destroy(plan);
            continue;
        }
        int same_as_model = 1, all_auto = 1;
        for (size_t i = 0; i < plan->n_layers; i++) {
            same_as_model &= strcmp(plan->layers[i].primitive, model_plan->layers[i].primitive) == 0;
            all_auto &= strcmp(plan->layers[i].primitive, "onednn_auto") == 0;
        }
        double kept_ms = rep.kept == CONVSEL_KEPT_MODEL_PLAN ? rep.model_plan_ms
                         : rep.kept == CONVSEL_KEPT_VERIFIED ? rep.verified_ms
                                                             : rep.onednn_alone_ms;
        double timed[3 + 4] = {rep.model_plan_ms, rep.verified_ms, rep.onednn_alone_ms};
        CHECK(rep.n_without <= 4);
        ablations += rep.n_without;
        for (size_t a = 0; a < rep.n_without && a < 4; a++) {
            timed[3 + a] = rep.without[a].ms;
            CHECK(strcmp(rep.without[a].family, "onednn") != 0 && rep.without[a].family[0]);
            if (rep.kept == CONVSEL_KEPT_WITHOUT_FAMILY && strcmp(rep.kept_without, rep.without[a].family) == 0)
                kept_ms = rep.without[a].ms;
        }
        CHECK((rep.kept == CONVSEL_KEPT_WITHOUT_FAMILY) == (rep.kept_without[0] != '\0'));
        /* A plan without a family has none of its primitives. */
        for (size_t i = 0; rep.kept == CONVSEL_KEPT_WITHOUT_FAMILY && i < plan->n_layers; i++) {
            size_t k;
            CHECK_EQ(convsel_primitive_find(plan->layers[i].primitive, &k), CONVSEL_OK);
            CHECK_MSG(strcmp(convsel_primitive_family(k), rep.kept_without) != 0, "kept without %s but layer %zu runs %s",
                      rep.kept_without, i, plan->layers[i].primitive);
        }
        for (size_t f = 0; f < 3 + rep.n_without && f < 7; f++)
            CHECK_MSG(timed[f] == 0.0 || kept_ms <= timed[f], "seed %llu: kept the %s at %g ms, another took %g ms",
                      (unsigned long long)seed, convsel_kept_plan_name(rep.kept), kept_ms, timed[f]);
        CHECK(rep.check_s > 0.0);
        if (rep.kept == CONVSEL_KEPT_MODEL_PLAN)
            CHECK_MSG(same_as_model, "seed %llu: kept the model plan but returned another", (unsigned long long)seed);
        if (rep.kept == CONVSEL_KEPT_ONEDNN_ALONE)
            CHECK_MSG(all_auto, "seed %llu: kept oneDNN alone but a layer runs something else",
                      (unsigned long long)seed);
        if (rep.kept == CONVSEL_KEPT_VERIFIED)
            CHECK(plan->verified_layers == 3);
        if (seed == 4) {
            CHECK(rep.kept != CONVSEL_KEPT_ONEDNN_ALONE);
            CHECK(rep.onednn_alone_ms == 0.0);
        }
        convsel_plan_destroy(model_plan);
        convsel_plan_destroy(plan);
    }
    struct synthetic syn = {1};
    convsel_cost_source src = {syn_conv_tiny, syn_reorder, &syn, "synthetic", NULL, CONVSEL_STAT_MEDIAN, NULL};
    convsel_plan *plan = NULL;
    CHECK_EQ(convsel_select_checked(net, NULL, &src, 2, 100.0, &t, -1.0, &plan, NULL), CONVSEL_INVALID_ARGUMENT);
    CHECK(plan == NULL);
    /* The synthetic plans use other families than oneDNN's: plans without them were timed. */
    CHECK(ablations > 0);
    free(no_auto);
    convsel_network_destroy(net);
}

/* oneDNN's direct and auto kernels cost next to nothing, everything else 1 ms. */
static convsel_status syn_conv_onednn_cheap(void *ctx, const convsel_problem *p, int threads, size_t prim,
                                            double *ms)
{
    (void)ctx;
    (void)p;
    (void)threads;
    const char *name = convsel_primitive_name(prim);
    *ms = strcmp(name, "onednn_direct") == 0 || strcmp(name, "onednn_auto") == 0 ? 0.001 : 1.0;
    return CONVSEL_OK;
}

static convsel_status free_reorder(void *ctx, int64_t mb, int64_t c, int64_t h, int64_t w, convsel_layout from,
                                   convsel_layout to, int threads, double *ms)
{
    (void)ctx, (void)mb, (void)c, (void)h, (void)w, (void)from, (void)to, (void)threads;
    *ms = 0.0;
    return CONVSEL_OK;
}

/* A candidate that would run a library's reference loops is taken only where
 * nothing else computes the layer, however cheap its price. */
static void test_naive_kernels(void)
{
    convsel_network *net = network_from_text("g4mb1ic16ih12iw12oc16oh12ow12kh3kw3ph1pw1n\"g4\"\n"
                                         "mb1ic16ih12oc16oh12kh3ph1n\"dense\"\n");
    CHECK(net != NULL);
    if (!net)
        return;
    size_t np = convsel_primitive_count(), reference, direct, as = SIZE_MAX;
    CHECK_EQ(convsel_primitive_find("reference", &reference), CONVSEL_OK);
    CHECK_EQ(convsel_primitive_find("onednn_direct", &direct), CONVSEL_OK);
    const convsel_problem *g4 = convsel_network_layer(net, 0), *dense = convsel_network_layer(net, 1);
    CHECK_EQ(convsel_primitive_runs_as(direct, g4, 1, &as), CONVSEL_OK);
    int naive = as == reference;
    /* oneDNN 2.6 runs its reference loops there under AVX-512 (test_onednn). */
    if (convsel_get_isa() == CONVSEL_ISA_AVX512)
        CHECK(naive);
    CHECK_EQ(convsel_primitive_runs_as(direct, dense, 1, &as), CONVSEL_OK);
    CHECK(as != reference);
    convsel_cost_source src = {syn_conv_onednn_cheap, free_reorder, NULL, "synthetic", NULL, CONVSEL_STAT_MEDIAN,
                               NULL};
    convsel_select_options o = {1, 0.0, NULL, 0, 0};
    convsel_plan *plan = NULL;
    CHECK_EQ(convsel_select(net, &o, &src, &plan), CONVSEL_OK);
    if (plan && plan->n_layers == 2) {
        int onednn_first = strcmp(plan->layers[0].primitive, "onednn_direct") == 0 ||
                           strcmp(plan->layers[0].primitive, "onednn_auto") == 0;
        CHECK_MSG(onednn_first == !naive, "g4 layer: %s (naive kernels there: %d)", plan->layers[0].primitive, naive);
        CHECK_MSG(strcmp(plan->layers[1].primitive, "onednn_direct") == 0 ||
                      strcmp(plan->layers[1].primitive, "onednn_auto") == 0,
                  "dense layer: %s", plan->layers[1].primitive);
    }
    convsel_plan_destroy(plan);
    plan = NULL;
    /* Nothing else allowed: the naive kernel is the plan (oneDNN alone). */
    unsigned char *excluded = malloc(np);
    if (excluded) {
        for (size_t i = 0; i < np; i++)
            excluded[i] = i != direct;
        o.excluded = excluded;
        CHECK_EQ(convsel_select(net, &o, &src, &plan), CONVSEL_OK);
        for (size_t i = 0; plan && i < plan->n_layers; i++)
            CHECK_STR(plan->layers[i].primitive, "onednn_direct");
        convsel_plan_destroy(plan);
    }
    /* --verify does not measure the naive kernel either: with onednn_direct
     * and one other primitive allowed, the g4 layer has two candidates to
     * measure only where oneDNN runs a real kernel there (a layer with fewer
     * than two is left to the prediction). */
    size_t other = SIZE_MAX;
    for (size_t i = 0; i < np && other == SIZE_MAX; i++)
        if (!convsel_primitive_is_reference(i) && strcmp(convsel_primitive_family(i), "onednn") != 0 &&
            convsel_primitive_applicable(i, g4, NULL, 0) && convsel_primitive_applicable(i, dense, NULL, 0))
            other = i;
    CHECK(other != SIZE_MAX);
    if (excluded && other != SIZE_MAX) {
        for (size_t i = 0; i < np; i++)
            excluded[i] = i != direct && i != other;
        o.excluded = excluded;
        convsel_timing_options t = quick_timing();
        plan = NULL;
        CHECK_EQ(convsel_select_verified(net, &o, &src, 2, 1e9, &t, &plan), CONVSEL_OK);
        if (plan && plan->n_layers == 2) {
            CHECK_MSG(plan->layers[0].verified == !naive, "g4 layer verified: %d (naive kernels there: %d)",
                      plan->layers[0].verified, naive);
            CHECK(plan->layers[1].verified);
            CHECK_EQ(plan->verified_layers, naive ? 1 : 2);
        }
        convsel_plan_destroy(plan);
    }
    free(excluded);
    convsel_network_destroy(net);
}

/* A planted cold-read price: per_mb ms per MB of the input in the layout
 * asked, except in `cheap` (when not -1), which reads for nothing. */
static struct {
    int cheap;
    double per_mb;
} cold_plant;

static convsel_status planted_cold(void *ctx, int64_t mb, int64_t c, int64_t h, int64_t w, convsel_layout layout,
                                   int threads, double *ms)
{
    (void)ctx, (void)threads;
    *ms = (int)layout == cold_plant.cheap ? 0.0
                                          : cold_plant.per_mb * (double)convsel_layout_elems(layout, mb, c, h, w) * 4e-6;
    return CONVSEL_OK;
}

/*
 * Cold reads: charged to the first layer and to an unconnected one (its
 * input in the boundary layout), never to a connected one; counted in the
 * plan's total and reorder share, and by convsel_plan_price; kept by a
 * plan file. A price that spares one layout takes the boundary there.
 */
static void test_cold_reads(void)
{
    convsel_network *net = network_from_text("mb1ic3ih16oc16oh16kh3ph1n\"first\"\n"
                                             "mb1ic16ih16oc16oh16kh3ph1n\"fed\"\n"
                                             "mb1ic8ih8oc16oh8kh3ph1n\"apart\"\n"
                                             "mb1ic16ih8oc16oh8kh1n\"fed_too\"\n");
    CHECK(net != NULL);
    if (!net)
        return;
    struct synthetic syn = {5};
    convsel_cost_source src = {syn_conv, syn_reorder, &syn, "synthetic", NULL, CONVSEL_STAT_MEDIAN, planted_cold};
    convsel_cost_source plain = src;
    plain.cold_read_ms = NULL;
    convsel_select_options o = {1, 0.0, NULL, 0, 0};
    /* Everywhere 0.5 ms/MB. */
    cold_plant.cheap = -1;
    cold_plant.per_mb = 0.5;
    convsel_plan *plan = NULL;
    CHECK_EQ(convsel_select(net, &o, &src, &plan), CONVSEL_OK);
    if (plan && plan->n_layers == 4) {
        convsel_layout b = plan->boundary_layout;
        const double want[4] = {0.5 * (double)convsel_layout_elems(b, 1, 3, 16, 16) * 4e-6, 0.0,
                                0.5 * (double)convsel_layout_elems(b, 1, 8, 8, 8) * 4e-6, 0.0};
        double sum = 0.0, moved = 0.0, cold = 0.0;
        for (size_t i = 0; i < 4; i++) {
            const convsel_plan_layer *l = &plan->layers[i];
            CHECK_MSG(fabs(l->cold_in_ms - want[i]) < 1e-12, "layer %zu: cold %.6g, want %.6g", i, l->cold_in_ms,
                      want[i]);
            sum += l->conv_ms + l->reorder_in_ms + l->reorder_out_ms + l->cold_in_ms;
            moved += l->reorder_in_ms + l->reorder_out_ms + l->cold_in_ms;
            cold += l->cold_in_ms;
        }
        CHECK(want[0] > 0 && want[2] > 0);
        CHECK_NEAR(plan->total_ms, sum, 1e-9);
        CHECK_NEAR(plan->reorder_ms, moved, 1e-9);
        double conv_ms, reorder_ms;
        CHECK_EQ(convsel_plan_price(plan, &src, &conv_ms, &reorder_ms), CONVSEL_OK);
        CHECK_NEAR(reorder_ms, plan->reorder_ms, 1e-9);
        CHECK_NEAR(conv_ms + reorder_ms, plan->total_ms, 1e-9);
        CHECK_EQ(convsel_plan_price(plan, &plain, &conv_ms, &reorder_ms), CONVSEL_OK);
        CHECK_NEAR(reorder_ms, plan->reorder_ms - cold, 1e-9);
        /* A plan file keeps the cold reads. */
        char path[] = "/tmp/convsel_test_cold_XXXXXX";
        int fd = mkstemp(path);
        close(fd);
        CHECK_EQ(convsel_plan_save(plan, path), CONVSEL_OK);
        convsel_plan *back = NULL;
        CHECK_EQ(convsel_plan_load(path, &back), CONVSEL_OK);
        for (size_t i = 0; back && i < 4; i++)
            CHECK_NEAR(back->layers[i].cold_in_ms, plan->layers[i].cold_in_ms, 1e-6);
        convsel_plan_destroy(back);
        remove(path);
    }
    convsel_plan_destroy(plan);
    /* Without a price the plan is the plain source's, with no cold reads. */
    convsel_plan *plain_plan = NULL;
    CHECK_EQ(convsel_select(net, &o, &plain, &plain_plan), CONVSEL_OK);
    for (size_t i = 0; plain_plan && i < plain_plan->n_layers; i++)
        CHECK_EQ(plain_plan->layers[i].cold_in_ms, 0.0);
    /* A price that only one layout escapes takes the boundary there, for
     * every layout, whatever the plain plan's boundary. */
    cold_plant.per_mb = 1e6;
    for (int cheap = 0; cheap < CONVSEL_LAYOUT_COUNT; cheap++) {
        cold_plant.cheap = cheap;
        plan = NULL;
        CHECK_EQ(convsel_select(net, &o, &src, &plan), CONVSEL_OK);
        if (plan) {
            CHECK_MSG((int)plan->boundary_layout == cheap, "boundary %s, the cold reads spare %s",
                      convsel_layout_name(plan->boundary_layout), convsel_layout_name((convsel_layout)cheap));
            CHECK_EQ(plan->layers[0].cold_in_ms, 0.0);
        }
        convsel_plan_destroy(plan);
    }
    convsel_plan_destroy(plain_plan);
    convsel_network_destroy(net);
}

int main(void)
{
    test_cold_reads();
    test_naive_kernels();
    test_verify_keeps();
    test_verify_decide();
    test_verified_choices(0);
    test_verified_choices(1);
    test_verified_choices(2);
    test_verified_choices(3);
    test_in_place_rounds();
    test_env_double();
    test_grow();
    test_checked_plan();
    test_layout_queries();
    test_dp_against_brute_force();
    test_exclusions_and_errors();
    test_batch_same_plan();
    return CHECK_DONE();
}
