/*
 * The network runner computes the network: plans that force each primitive
 * of the catalogue onto every layer it fits, beside random choices elsewhere
 * and random reorder costs (so every layout meets every other), are run
 * with convsel_runner_check, which compares each layer with the reference
 * convolution and each tensor with what should have reached it. The networks
 * mix connected chains, broken connections, repeats, padded channel blocks,
 * batch 2, groups, strides and dilation. Then the check itself must fail on a
 * changed input, a dirty padded channel and wrong weights.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "convsel.h"
#include "internal.h"
#include "network_text.h"
#include "runner_internal.h"

static const char *const networks[] = {
    /* Padded blocks (3, 24, 40 channels), a chain, a broken connection, a stride,
     * a non-square tensor and kernel. */
    "mb1ic3ih13oc24oh13kh3ph1n\"a\"\nmb1ic24ih13oc40oh13kh1ph0n\"b\"\nmb1ic40ih13oc40oh13kh3ph1n\"c\"\n"
    "mb1ic16ih16oc16oh8kh3sh2ph1n\"d\"\nmb1ic16ih8oc20oh8kh1ph0n\"e\"\nmb1ic20ih8iw5oc24oh8ow5kh3kw1ph1pw0n\"rect\"\n",
    /* Batch 2, a depthwise layer, a 5x5, a repeat connected to itself. */
    "mb2g32ic32ih10oc32oh10kh3ph1n\"dw\"\nmb2ic32ih10oc20oh10kh1ph0n\"pw\"\nmb2ic20ih10oc20oh10kh5ph2n\"k5*2\"\n",
    /* Dilation, a strided 7x7 with odd sizes, grouped 3x3, a 1x1 stride 2. */
    "mb1ic8ih12oc8oh12kh3dh1ph2n\"dil\"\nmb1ic8ih23oc17oh12kh7sh2ph3n\"k7\"\n"
    "mb1g2ic16ih9oc32oh9kh3ph1n\"grp\"\nmb1ic32ih9oc48oh5kh1sh2ph0n\"s2\"\n",
};

struct forced {
    size_t primitive; /* the primitive made cheapest wherever it fits */
    uint64_t seed;
};

static uint64_t scramble(uint64_t x)
{
    x += 0x9e3779b97f4a7c15ull;
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    return x ^ (x >> 31);
}

static convsel_status forced_conv(void *ctx, const convsel_problem *p, int threads, size_t prim, double *ms)
{
    const struct forced *f = ctx;
    (void)threads;
    uint64_t h = scramble(f->seed ^ scramble((uint64_t)prim << 32 ^ (uint64_t)(p->oc * 977 + p->ih * 31 + p->kh)));
    *ms = prim == f->primitive ? 0.01 : 1.0 + (double)(h % 900) / 100.0;
    return CONVSEL_OK;
}

static convsel_status forced_reorder(void *ctx, int64_t mb, int64_t c, int64_t h, int64_t w, convsel_layout from,
                                     convsel_layout to, int threads, double *ms)
{
    const struct forced *f = ctx;
    (void)threads;
    uint64_t x = scramble(f->seed ^ (uint64_t)(mb + c * 13 + h * 101 + w * 7) ^ ((uint64_t)from << 20) ^
                          ((uint64_t)to << 24));
    *ms = (double)(x % 300) / 100.0;
    return CONVSEL_OK;
}

static convsel_plan *forced_plan(const convsel_network *net, size_t primitive, uint64_t seed, int threads)
{
    struct forced f = {primitive, seed};
    convsel_cost_source src = {forced_conv, forced_reorder, &f, "forced", NULL, CONVSEL_STAT_MEDIAN, NULL};
    convsel_select_options o = {threads, 0.0, NULL, 0, 0};
    convsel_plan *plan = NULL;
    convsel_status st = convsel_select(net, &o, &src, &plan);
    CHECK_MSG(st == CONVSEL_OK, "select: %s", convsel_last_error());
    return plan;
}

/* Every primitive on every layer it fits, at 1 and 2 threads: the runner's
 * results are the reference's. */
static void test_plans_compute_the_network(void)
{
    size_t n_prim = convsel_primitive_count();
    unsigned char *checked = calloc(n_prim, 1), *fits = calloc(n_prim, 1);
    size_t runs = 0, reorders = 0;
    for (size_t t = 0; t < CONVSEL_ARRAY_SIZE(networks); t++) {
        convsel_network *net = network_from_text(networks[t]);
        CHECK(net != NULL);
        if (!net)
            continue;
        for (size_t l = 0; l < convsel_network_size(net); l++)
            for (size_t p = 0; p < n_prim; p++)
                fits[p] |= !convsel_primitive_is_reference(p) &&
                           convsel_primitive_applicable(p, convsel_network_layer(net, l), NULL, 0);
        for (size_t p = 0; p < n_prim; p++) {
            if (convsel_primitive_is_reference(p))
                continue;
            for (uint64_t seed = 1; seed <= 2; seed++) {
                int threads = (int)seed;
                convsel_plan *plan = forced_plan(net, p, seed * 7919 + t, threads);
                if (!plan)
                    continue;
                convsel_runner *runner = NULL;
                convsel_status st = convsel_runner_create(plan, seed, &runner);
                CHECK_MSG(st == CONVSEL_OK, "runner: %s", convsel_last_error());
                double worst = -1.0;
                if (runner) {
                    /* A timed pass first: buffers are reused across passes. */
                    CHECK_EQ(convsel_runner_run(runner), CONVSEL_OK);
                    st = convsel_runner_check(runner, &worst);
                    CHECK_MSG(st == CONVSEL_OK, "network %zu, %s forced, seed %llu: %s", t + 1,
                              convsel_primitive_name(p), (unsigned long long)seed, convsel_last_error());
                    CHECK(worst >= 0.0 && worst <= 1.0);
                    reorders += convsel_runner_reorder_count(runner);
                    runs++;
                }
                for (size_t i = 0; i < plan->n_layers && st == CONVSEL_OK; i++) {
                    size_t idx;
                    if (convsel_primitive_find(plan->layers[i].primitive, &idx) == CONVSEL_OK)
                        checked[idx] = 1;
                }
                convsel_runner_destroy(runner);
                convsel_plan_destroy(plan);
            }
        }
        convsel_network_destroy(net);
    }
    /* Every primitive that fits some layer ran in a checked network. */
    for (size_t p = 0; p < n_prim; p++)
        CHECK_MSG(!fits[p] || checked[p], "%s fits a layer but no checked plan ran it", convsel_primitive_name(p));
    CHECK(runs > 0);
    CHECK(reorders > 0);
    printf("checked %zu network runs (%zu reorders)\n", runs, reorders);
    free(checked);
    free(fits);
}

/* A step by kind, from the end when last is set. */
static struct step *find_step(convsel_runner *r, enum step_kind kind, int last)
{
    for (size_t k = 0; k < r->n_steps; k++) {
        struct step *s = &r->steps[last ? r->n_steps - 1 - k : k];
        if (s->kind == kind)
            return s;
    }
    return NULL;
}

/* The check fails, naming the layer, on what it is there to catch. */
static void test_check_catches(void)
{
    convsel_network *net = network_from_text(networks[0]);
    CHECK(net != NULL);
    if (!net)
        return;
    size_t direct;
    CHECK_EQ(convsel_primitive_find("direct_simd", &direct), CONVSEL_OK);
    /* A plan whose network input arrives blocked, straight into layer 1:
     * the check pass itself then writes nothing over its padded channels. */
    convsel_plan *plan = NULL;
    for (uint64_t seed = 1; seed <= 64 && !plan; seed++) {
        plan = forced_plan(net, direct, seed, 1);
        if (plan && plan->boundary_layout == CONVSEL_LAYOUT_NCHW) {
            convsel_plan_destroy(plan);
            plan = NULL;
        }
    }
    CHECK(plan != NULL);
    convsel_runner *r = NULL;
    if (plan)
        CHECK_EQ(convsel_runner_create(plan, 5, &r), CONVSEL_OK);
    if (r) {
        /* A changed network input (layer 1 reads one of its own). */
        struct step *first = find_step(r, STEP_CONV, 0);
        const float *in = first->in;
        for (size_t k = 0; k < r->n_steps && r->steps[k].kind == STEP_REORDER; k++)
            in = r->steps[k].in;
        float keep = in[1];
        ((float *)in)[1] = keep + 0.5f;
        CHECK_EQ(convsel_runner_check(r, NULL), CONVSEL_WRONG_RESULT);
        CHECK(strstr(convsel_last_error(), "layer 1 'a'") && strstr(convsel_last_error(), "input"));
        ((float *)in)[1] = keep;
        CHECK_EQ(convsel_runner_check(r, NULL), CONVSEL_OK);

        /* Layer 1 made again with other weights: off the reference. */
        struct step *s1 = find_step(r, STEP_CONV, 0);
        const convsel_problem *p = &r->problems[0];
        size_t wn = convsel_problem_weights_elems(p);
        float *weights = malloc(wn * sizeof *weights);
        convsel_instance *other = NULL;
        if (weights) {
            convsel_fill_random(weights, wn, 12345);
            CHECK_EQ(convsel_instance_create(convsel_instance_primitive(s1->conv), p, 1, weights, &other),
                     CONVSEL_OK);
        }
        if (other) {
            convsel_instance *kept = s1->conv;
            s1->conv = other;
            CHECK_EQ(convsel_runner_check(r, NULL), CONVSEL_WRONG_RESULT);
            CHECK(strstr(convsel_last_error(), "layer 1 'a'") && strstr(convsel_last_error(), "reference"));
            s1->conv = kept;
        }
        convsel_instance_destroy(other);
        free(weights);

        /* A dirty padded channel in the input of layer 1 (3 channels of a
         * block of 8 or 16), read by a primitive that may assume zeros. */
        struct step *s = &r->steps[0];
        CHECK(s->kind == STEP_CONV && convsel_layout_elems(s->in_layout, 1, 3, 13, 13) > 3 * 13 * 13);
        if (s->kind == STEP_CONV && convsel_layout_elems(s->in_layout, 1, 3, 13, 13) > 3 * 13 * 13) {
            float *pad = (float *)s->in + convsel_layout_offset(s->in_layout, 3, 13, 13, 0, 3, 0, 0);
            *pad = 1.0f;
            CHECK_EQ(convsel_runner_check(r, NULL), CONVSEL_WRONG_RESULT);
            CHECK(strstr(convsel_last_error(), "layer 1 'a'") && strstr(convsel_last_error(), "padded channels"));
            *pad = 0.0f;
        }
        CHECK_EQ(convsel_runner_check(r, NULL), CONVSEL_OK);
    }
    convsel_runner_destroy(r);
    convsel_plan_destroy(plan);
    convsel_network_destroy(net);
    CHECK_EQ(convsel_runner_check(NULL, NULL), CONVSEL_INVALID_ARGUMENT);
}

/* Steps of r that use another runner's instance. */
static size_t borrowed_steps(const convsel_runner *r)
{
    size_t n = 0;
    for (size_t k = 0; k < r->n_steps; k++)
        n += r->steps[k].kind == STEP_CONV && r->steps[k].borrowed;
    return n;
}

/* Layer i's instance in r. */
static const convsel_instance *layer_instance(const convsel_runner *r, size_t i)
{
    for (size_t k = 0; k < r->n_steps; k++)
        if (r->steps[k].kind == STEP_CONV && r->steps[k].layer == i)
            return r->steps[k].conv;
    return NULL;
}

/* Runners made like one another (convsel_runner_create_like) share the
 * layers they build the same way and only those, and each still computes
 * its network: run interleaved and checked against the reference, with the
 * first-made runner destroyed before the others run again. */
static void test_shared_runners(void)
{
    size_t n_prim = convsel_primitive_count(), shared = 0, checks = 0;
    convsel_plan **plans = calloc(n_prim, sizeof *plans);
    convsel_runner **runners = calloc(n_prim, sizeof *runners);
    CHECK(plans && runners);
    for (size_t t = 0; t < CONVSEL_ARRAY_SIZE(networks) && plans && runners; t++) {
        convsel_network *net = network_from_text(networks[t]);
        CHECK(net != NULL);
        for (int threads = 1; threads <= 2 && net; threads++) {
            /* One plan per primitive forced where it fits, the same random
             * choices elsewhere; each runner like the one before. */
            size_t n = 0;
            for (size_t p = 0; p < n_prim; p++) {
                if (convsel_primitive_is_reference(p) || !(plans[n] = forced_plan(net, p, 4242 + t, threads)))
                    continue;
                convsel_status st = convsel_runner_create_like(plans[n], 3, n ? runners[n - 1] : NULL, &runners[n]);
                CHECK_MSG(st == CONVSEL_OK, "runner like another: %s", convsel_last_error());
                if (st != CONVSEL_OK) {
                    convsel_plan_destroy(plans[n]);
                    continue;
                }
                n++;
            }
            /* Shared exactly where the plan before chose the same primitive
             * (the same layouts come with it here). */
            for (size_t k = 1; k < n; k++) {
                size_t same = 0;
                for (size_t i = 0; i < plans[k]->n_layers; i++) {
                    int like = !strcmp(plans[k]->layers[i].primitive, plans[k - 1]->layers[i].primitive) &&
                               plans[k]->layers[i].src_layout == plans[k - 1]->layers[i].src_layout &&
                               plans[k]->layers[i].dst_layout == plans[k - 1]->layers[i].dst_layout;
                    CHECK_MSG((layer_instance(runners[k], i) == layer_instance(runners[k - 1], i)) == like,
                              "network %zu, runner %zu, layer %zu: shared %d, the same choice %d", t + 1, k, i + 1,
                              layer_instance(runners[k], i) == layer_instance(runners[k - 1], i), like);
                    same += like;
                }
                CHECK_EQ(borrowed_steps(runners[k]), same);
                shared += same;
            }
            /* Interleaved: a pass of each, then each checked after another's pass. */
            for (int round = 0; round < 2; round++)
                for (size_t k = 0; k < n; k++) {
                    size_t j = (k * 7 + (size_t)round) % n;
                    CHECK_EQ(convsel_runner_run(runners[(j + 1) % n]), CONVSEL_OK);
                    convsel_status st = convsel_runner_check(runners[j], NULL);
                    CHECK_MSG(st == CONVSEL_OK, "network %zu, %d threads, runner %zu of %zu: %s", t + 1, threads, j,
                              n, convsel_last_error());
                    checks++;
                }
            /* A lender destroyed stays until the runners sharing it go. */
            convsel_runner_destroy(n ? runners[0] : NULL);
            for (size_t k = 1; k < n; k++) {
                CHECK_EQ(convsel_runner_run(runners[k]), CONVSEL_OK);
                CHECK_EQ(convsel_runner_check(runners[k], NULL), CONVSEL_OK);
            }
            for (size_t k = 0; k < n; k++) {
                if (k)
                    convsel_runner_destroy(runners[k]);
                convsel_plan_destroy(plans[k]);
            }
        }
        /* The same plan like itself shares every layer and input; another seed
         * (other weights) or thread count shares none. */
        convsel_plan *plan = net ? forced_plan(net, 0, 99, 1) : NULL, *plan2 = net ? forced_plan(net, 0, 99, 2) : NULL;
        convsel_runner *a = NULL, *b = NULL, *c = NULL, *d = NULL;
        if (plan && plan2) {
            CHECK_EQ(convsel_runner_create(plan, 3, &a), CONVSEL_OK);
            CHECK_EQ(convsel_runner_create_like(plan, 3, a, &b), CONVSEL_OK);
            CHECK_EQ(convsel_runner_create_like(plan, 4, a, &c), CONVSEL_OK);
            CHECK_EQ(convsel_runner_create_like(plan2, 3, a, &d), CONVSEL_OK);
        }
        if (a && b && c && d) {
            CHECK_EQ(borrowed_steps(b), plan->n_layers);
            CHECK_EQ(borrowed_steps(c), 0);
            CHECK_EQ(borrowed_steps(d), 0);
            for (size_t i = 0; i < plan->n_layers; i++) {
                CHECK(b->inputs[i] == a->inputs[i]);
                CHECK(!c->inputs[i] || c->inputs[i] != a->inputs[i]);
            }
            /* Activations and workspace are never shared. */
            CHECK(b->workspace != a->workspace || !a->workspace);
            for (size_t k = 0; k < b->n_steps; k++)
                CHECK(b->steps[k].out != a->steps[k].out);
            CHECK_EQ(convsel_runner_check(c, NULL), CONVSEL_OK);
            CHECK_EQ(convsel_runner_check(d, NULL), CONVSEL_OK);
            CHECK_EQ(convsel_runner_check(b, NULL), CONVSEL_OK);
        }
        convsel_runner_destroy(a);
        convsel_runner_destroy(d);
        convsel_runner_destroy(c);
        convsel_runner_destroy(b);
        convsel_plan_destroy(plan);
        convsel_plan_destroy(plan2);
        convsel_network_destroy(net);
    }
    CHECK(shared > 0);
    printf("checked %zu passes of runners sharing %zu layers\n", checks, shared);
    free(runners);
    free(plans);
}

/*
 * convsel_network_shrunk: every layer's sides divided by the divisor,
 * rounding up, the rest as it was; a layer that fed the next still does;
 * every layer kept is a valid convolution; a divisor of 1 copies the
 * network; bad arguments are refused.
 */
static void test_network_shrunk(void)
{
    for (size_t t = 0; t < CONVSEL_ARRAY_SIZE(networks); t++) {
        convsel_network *net = network_from_text(networks[t]), *small = NULL, *same = NULL;
        CHECK(net != NULL);
        if (!net)
            continue;
        CHECK_EQ(convsel_network_shrunk(net, 8, &small), CONVSEL_OK);
        CHECK_EQ(convsel_network_shrunk(net, 1, &same), CONVSEL_OK);
        CHECK_EQ(convsel_network_size(same), convsel_network_size(net));
        CHECK_EQ(convsel_network_size(small), convsel_network_size(net)); /* every test layer shrinks validly */
        for (size_t i = 0; small && i < convsel_network_size(small); i++) {
            const convsel_problem *p = convsel_network_layer(net, i), *q = convsel_network_layer(small, i);
            CHECK(convsel_problem_same_shape(p, convsel_network_layer(same, i)));
            CHECK_EQ(convsel_problem_validate(q), CONVSEL_OK);
            CHECK(q->ih == (p->ih + 7) / 8 && q->iw == (p->iw + 7) / 8 && q->oh == (p->oh + 7) / 8 &&
                  q->ow == (p->ow + 7) / 8);
            CHECK(q->ic == p->ic && q->oc == p->oc && q->g == p->g && q->mb == p->mb && q->kh == p->kh &&
                  q->sh == p->sh && q->ph == p->ph && q->dh == p->dh && q->repeat == p->repeat);
            CHECK(strcmp(q->name, p->name) == 0);
            if (i > 0 && convsel_problem_feeds(convsel_network_layer(net, i - 1), p))
                CHECK(convsel_problem_feeds(convsel_network_layer(small, i - 1), q));
        }
        convsel_network_destroy(small);
        convsel_network_destroy(same);
        CHECK_EQ(convsel_network_shrunk(net, 0, &small), CONVSEL_INVALID_ARGUMENT);
        CHECK_EQ(convsel_network_shrunk(NULL, 8, &small), CONVSEL_INVALID_ARGUMENT);
        convsel_network_destroy(net);
    }
}

/*
 * convsel_reorder_probe: on every test network, each reorder it reports is
 * a real change of layout of an activation some layer of the network, or of
 * its copy shrunk by CONVSEL_REORDER_PROBE_SHRINK, reads, timed; across the
 * networks it finds several layout pairs. In a chain of eight, six reorders
 * at the network's size, then six at the shrunk copy's. A catalogue of one
 * layout gives no reorders, an empty one an error naming the layer.
 */
/* Per catalogue index, every primitive but the reference (the caller frees it). */
static unsigned char *all_but_reference(void)
{
    size_t n_prim = convsel_primitive_count();
    unsigned char *allowed = calloc(n_prim, 1);
    for (size_t p = 0; allowed && p < n_prim; p++)
        allowed[p] = !convsel_primitive_is_reference(p);
    return allowed;
}

static void test_reorder_probe(void)
{
    size_t n_prim = convsel_primitive_count(), im2col;
    unsigned char *allowed = all_but_reference();
    int pairs[CONVSEL_LAYOUT_COUNT][CONVSEL_LAYOUT_COUNT] = {{0}};
    size_t total = 0;
    for (size_t t = 0; t < CONVSEL_ARRAY_SIZE(networks); t++) {
        convsel_network *net = network_from_text(networks[t]);
        CHECK(net != NULL);
        if (!net)
            continue;
        convsel_network *small = NULL;
        CHECK_EQ(convsel_network_shrunk(net, CONVSEL_REORDER_PROBE_SHRINK, &small), CONVSEL_OK);
        convsel_reorder_sample *s = NULL;
        size_t n = 0;
        CHECK_EQ(convsel_reorder_probe(net, 1, allowed, 0.01, 3, &s, &n), CONVSEL_OK);
        for (size_t i = 0; i < n; i++) {
            CHECK(s[i].from != s[i].to && s[i].threads == 1 && s[i].ms > 0 && isfinite(s[i].ms));
            int read = 0;
            for (size_t l = 0; l < convsel_network_size(net) + convsel_network_size(small); l++) {
                const convsel_problem *p = l < convsel_network_size(net)
                                               ? convsel_network_layer(net, l)
                                               : convsel_network_layer(small, l - convsel_network_size(net));
                read |= p->mb == s[i].mb && p->ic == s[i].c && p->ih == s[i].h && p->iw == s[i].w;
            }
            CHECK_MSG(read, "network %zu: a reorder of %lldx%lldx%lldx%lld, which no layer reads", t,
                      (long long)s[i].mb, (long long)s[i].c, (long long)s[i].h, (long long)s[i].w);
            pairs[s[i].from][s[i].to]++;
        }
        total += n;
        /* Appends: a second call at 2 threads keeps the first's samples. */
        size_t first = n;
        CHECK_EQ(convsel_reorder_probe(net, 2, allowed, 0.01, 3, &s, &n), CONVSEL_OK);
        CHECK(n >= first);
        for (size_t i = first; i < n; i++)
            CHECK(s[i].threads == 2);
        free(s);
        convsel_network_destroy(small);
        convsel_network_destroy(net);
    }
    size_t distinct = 0;
    for (int f = 0; f < CONVSEL_LAYOUT_COUNT; f++)
        for (int g = 0; g < CONVSEL_LAYOUT_COUNT; g++)
            distinct += pairs[f][g] > 0;
    printf("reorder probe: %zu reorders at 1 thread, %zu layout pairs\n", total, distinct);
    CHECK(total >= 3);
    CHECK(distinct >= 2);

    /* A chain of eight: every layer but the ends changes layout, on any
     * x86 (the catalogue has nchw primitives and blocked ones). */
    convsel_network *net = network_from_text("mb1ic16ih12oc16oh12kh3ph1n\"chain:a*4\"\n"
                                             "mb1ic16ih12oc16oh12kh1ph0n\"chain:b*4\"\n");
    CHECK(net != NULL);
    convsel_reorder_sample *s = NULL;
    size_t n = 0;
    CHECK_EQ(convsel_reorder_probe(net, 1, allowed, 0.01, 5, &s, &n), CONVSEL_OK);
    CHECK_MSG(n == 12, "%zu reorders timed in a chain of eight and its shrunk copy", n);
    for (size_t i = 0; i < n; i++) {
        int64_t side = i < 6 ? 12 : 2;
        CHECK(s[i].c == 16 && s[i].h == side && s[i].w == side && s[i].from != s[i].to && s[i].ms > 0);
    }
    free(s);
    s = NULL;
    n = 0;
    convsel_network_destroy(net);

    /* One layout only (im2col_gemm reads and writes nchw): nothing to time. */
    net = network_from_text("mb1ic8ih10oc8oh10kh3ph1n\"a\"\nmb1ic8ih10oc8oh10kh3ph1n\"b\"\n"
                                             "mb1ic8ih10oc8oh10kh1ph0n\"c\"\nmb1ic8ih10oc8oh10kh3ph1n\"d\"\n");
    CHECK(net != NULL);
    CHECK_EQ(convsel_primitive_find("im2col_gemm", &im2col), CONVSEL_OK);
    memset(allowed, 0, n_prim);
    allowed[im2col] = 1;
    CHECK_EQ(convsel_reorder_probe(net, 1, allowed, 0.01, 1, &s, &n), CONVSEL_OK);
    CHECK_EQ(n, 0);
    allowed[im2col] = 0;
    CHECK_EQ(convsel_reorder_probe(net, 1, allowed, 0.01, 1, &s, &n), CONVSEL_NOT_APPLICABLE);
    CHECK_EQ(n, 0);
    CHECK_EQ(convsel_reorder_probe(net, 0, allowed, 0.01, 1, &s, &n), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_reorder_probe(net, 1, allowed, 0.0, 1, &s, &n), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_reorder_probe(NULL, 1, allowed, 0.01, 1, &s, &n), CONVSEL_INVALID_ARGUMENT);
    free(s);
    convsel_network_destroy(net);
    free(allowed);
}

/*
 * Cold reads: under every boundary layout, the first and the unconnected
 * layer take a primitive that reads another layout, and each gives one
 * sample, its input's shape in the boundary layout; the entry reorder is
 * timed inside the network and alone (convsel_runner_entry_ms), and only
 * where there is one.
 */
static void test_cold_probe(void)
{
    size_t n_prim = convsel_primitive_count(), im2col;
    unsigned char *allowed = all_but_reference();
    convsel_network *net = network_from_text("mb1ic3ih16oc16oh16kh3ph1n\"first\"\n"
                                             "mb1ic16ih16oc16oh16kh3ph1n\"fed\"\n"
                                             "mb1ic8ih8oc16oh8kh3ph1n\"apart\"\n");
    CHECK(net != NULL);
    if (!net) {
        free(allowed);
        return;
    }
    convsel_cold_sample *s = NULL;
    size_t n = 0;
    CHECK_EQ(convsel_cold_probe(net, 1, allowed, 0.01, 3, &s, &n), CONVSEL_OK);
    /* The catalogue reads nchw (im2col_gemm) and blocked layouts, so every
     * boundary layout has another: 4 layouts x 2 layers. */
    CHECK_MSG(n == 2 * CONVSEL_LAYOUT_COUNT, "%zu cold reads", n);
    int per_layout[CONVSEL_LAYOUT_COUNT] = {0};
    for (size_t i = 0; i < n; i++) {
        int first = s[i].c == 3 && s[i].h == 16 && s[i].w == 16, apart = s[i].c == 8 && s[i].h == 8 && s[i].w == 8;
        CHECK_MSG(s[i].mb == 1 && (first || apart), "sample %zu: %lldx%lldx%lld", i, (long long)s[i].c,
                  (long long)s[i].h, (long long)s[i].w);
        CHECK(s[i].threads == 1 && isfinite(s[i].excess_ms));
        CHECK((int)s[i].layout >= 0 && (int)s[i].layout < CONVSEL_LAYOUT_COUNT);
        if ((int)s[i].layout >= 0 && (int)s[i].layout < CONVSEL_LAYOUT_COUNT)
            per_layout[s[i].layout]++;
    }
    for (int b = 0; b < CONVSEL_LAYOUT_COUNT; b++)
        CHECK_MSG(per_layout[b] == 2, "%d cold reads from %s", per_layout[b], convsel_layout_name((convsel_layout)b));
    /* Appends, at 2 threads. */
    size_t first = n;
    CHECK_EQ(convsel_cold_probe(net, 2, allowed, 0.01, 3, &s, &n), CONVSEL_OK);
    CHECK_EQ(n, 2 * first);
    for (size_t i = first; i < n; i++)
        CHECK(s[i].threads == 2);
    free(s);
    s = NULL;
    n = 0;

    /* Only im2col_gemm, which reads nchw: nothing to time from nchw. */
    CHECK_EQ(convsel_primitive_find("im2col_gemm", &im2col), CONVSEL_OK);
    memset(allowed, 0, n_prim);
    allowed[im2col] = 1;
    CHECK_EQ(convsel_cold_probe(net, 1, allowed, 0.01, 1, &s, &n), CONVSEL_OK);
    CHECK_MSG(n == 2 * (CONVSEL_LAYOUT_COUNT - 1), "%zu cold reads with only nchw", n);
    for (size_t i = 0; i < n; i++)
        CHECK(s[i].layout != CONVSEL_LAYOUT_NCHW);
    free(s);
    s = NULL;
    n = 0;
    allowed[im2col] = 0;
    CHECK_EQ(convsel_cold_probe(net, 1, allowed, 0.01, 1, &s, &n), CONVSEL_NOT_APPLICABLE);
    CHECK_EQ(n, 0);
    CHECK_EQ(convsel_cold_probe(net, 0, allowed, 0.01, 1, &s, &n), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_cold_probe(net, 1, allowed, 0.0, 1, &s, &n), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_cold_probe(NULL, 1, allowed, 0.01, 1, &s, &n), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_cold_probe(net, 1, NULL, 0.01, 1, &s, &n), CONVSEL_INVALID_ARGUMENT);
    free(s);

    /* The entry reorder itself: im2col_gemm everywhere, the boundary in
     * nhwc, so the first and the third layer reorder their inputs and the
     * second, connected, does not. */
    convsel_plan *plan = forced_plan(net, im2col, 11, 1);
    if (plan) {
        plan->boundary_layout = CONVSEL_LAYOUT_NHWC;
        convsel_runner *r = NULL;
        CHECK_EQ(convsel_runner_create(plan, 1, &r), CONVSEL_OK);
        double in_network = -1, alone = -1;
        CHECK_EQ(convsel_runner_entry_ms(r, 0, 3, &in_network, &alone), CONVSEL_NOT_FOUND); /* no timed pass */
        convsel_runner_time_layers(r, 1);
        for (int k = 0; k < 3; k++)
            CHECK_EQ(convsel_runner_run(r), CONVSEL_OK);
        CHECK_EQ(convsel_runner_entry_ms(r, 0, 3, &in_network, &alone), CONVSEL_OK);
        CHECK(in_network > 0 && alone > 0);
        CHECK_EQ(convsel_runner_entry_ms(r, 2, 3, &in_network, &alone), CONVSEL_OK);
        CHECK_EQ(convsel_runner_entry_ms(r, 1, 3, &in_network, &alone), CONVSEL_NOT_FOUND); /* connected */
        CHECK_EQ(convsel_runner_entry_ms(r, 3, 3, &in_network, &alone), CONVSEL_INVALID_ARGUMENT);
        CHECK_EQ(convsel_runner_entry_ms(r, 0, 0, &in_network, &alone), CONVSEL_INVALID_ARGUMENT);
        CHECK_EQ(convsel_runner_entry_ms(NULL, 0, 3, &in_network, &alone), CONVSEL_INVALID_ARGUMENT);
        convsel_runner_destroy(r);
        /* In nchw, which im2col_gemm reads: no reorder to time. */
        plan->boundary_layout = CONVSEL_LAYOUT_NCHW;
        r = NULL;
        CHECK_EQ(convsel_runner_create(plan, 1, &r), CONVSEL_OK);
        convsel_runner_time_layers(r, 1);
        CHECK_EQ(convsel_runner_run(r), CONVSEL_OK);
        CHECK_EQ(convsel_runner_entry_ms(r, 0, 3, &in_network, &alone), CONVSEL_NOT_FOUND);
        convsel_runner_destroy(r);
    }
    convsel_plan_destroy(plan);
    convsel_network_destroy(net);
    free(allowed);
}

/*
 * The weights probe's passes: a primitive's first pass is appended, a later
 * one takes its place only when its times sum to less (whatever its excess),
 * and a pass of another size or of no samples changes nothing.
 */
static void test_conv_keep_pass(void)
{
    convsel_conv_sample a[2] = {{0, 1, 2.0, 1.0, {0}, 0}, {0, 1, 4.0, 3.0, {0}, 0}};
    convsel_conv_sample slow[2] = {{0, 1, 2.5, 1.0, {0}, 0}, {0, 1, 4.5, 3.0, {0}, 0}};   /* more excess, more time */
    convsel_conv_sample fast[2] = {{0, 1, 1.9, 0.4, {0}, 0}, {0, 1, 3.9, 2.5, {0}, 0}};   /* more excess, less time */
    convsel_conv_sample lean[2] = {{0, 1, 2.0, 1.5, {0}, 0}, {0, 1, 4.0, 3.5, {0}, 0}};   /* less excess, more time */
    convsel_conv_sample other = {1, 1, 9.0, 9.0, {0}, 0};
    convsel_conv_sample *s = NULL;
    size_t n = 0;
    convsel_conv_kept kept = {0}, kept_other = {0};
    CHECK_EQ(convsel_conv_keep_pass(&kept, a, 2, 10.0, &s, &n), CONVSEL_OK);
    CHECK_EQ(convsel_conv_keep_pass(&kept_other, &other, 1, 18.0, &s, &n), CONVSEL_OK);
    CHECK(n == 3 && kept.first == 0 && kept.count == 2 && kept_other.first == 2);
    CHECK_EQ(convsel_conv_keep_pass(&kept, slow, 2, 11.0, &s, &n), CONVSEL_OK);
    CHECK(n == 3 && s[0].network_ms == 2.0 && s[1].network_ms == 4.0);
    CHECK_EQ(convsel_conv_keep_pass(&kept, lean, 2, 11.0, &s, &n), CONVSEL_OK);
    CHECK(n == 3 && s[0].alone_ms == 1.0 && s[1].alone_ms == 3.0);
    CHECK_EQ(convsel_conv_keep_pass(&kept, fast, 2, 8.7, &s, &n), CONVSEL_OK);
    CHECK(n == 3 && s[0].network_ms == 1.9 && s[0].alone_ms == 0.4 && s[1].alone_ms == 2.5 && kept.total_ms == 8.7);
    CHECK(s[2].primitive == 1 && s[2].network_ms == 9.0);
    CHECK_EQ(convsel_conv_keep_pass(&kept, a, 1, 1.0, &s, &n), CONVSEL_OK); /* another size: not comparable */
    CHECK_EQ(convsel_conv_keep_pass(&kept, a, 0, 0.0, &s, &n), CONVSEL_OK);
    CHECK(n == 3 && s[0].network_ms == 1.9 && kept.total_ms == 8.7);
    free(s);
}

/*
 * Convolutions inside networks against alone: each allowed primitive gives
 * one sample per layer it computes with a kernel of its own, every sample
 * timed both ways; bad arguments are refused.
 */
static void test_conv_probe(void)
{
    size_t n_prim = convsel_primitive_count(), im2col;
    unsigned char *allowed = all_but_reference();
    convsel_network *net = network_from_text("mb1ic3ih16oc16oh16kh3ph1n\"first\"\n"
                                             "mb1ic16ih16oc16oh16kh3ph1n\"fed\"\n"
                                             "mb1ic8ih8oc16oh8kh1n\"apart\"\n");
    CHECK(net != NULL);
    if (!net) {
        free(allowed);
        return;
    }
    convsel_conv_sample *s = NULL;
    size_t n = 0, want = 0;
    CHECK_EQ(convsel_conv_probe(net, 1, allowed, 0.01, 3, &s, &n), CONVSEL_OK);
    size_t *per = calloc(n_prim, sizeof *per);
    for (size_t i = 0; i < n; i++) {
        CHECK(s[i].primitive < n_prim && allowed[s[i].primitive]);
        CHECK(s[i].threads == 1 && s[i].network_ms > 0 && s[i].alone_ms > 0);
        CHECK(isfinite(s[i].network_ms) && isfinite(s[i].alone_ms));
        if (s[i].primitive < n_prim)
            per[s[i].primitive]++;
        /* The weights the layer's instance kept, as one made here keeps. */
        const size_t elems = convsel_problem_weights_elems(&s[i].problem);
        float *w = calloc(elems, sizeof *w);
        convsel_instance *inst = NULL;
        CHECK(w != NULL);
        if (w && s[i].primitive < n_prim &&
            convsel_instance_create(s[i].primitive, &s[i].problem, 1, w, &inst) == CONVSEL_OK) {
            CHECK_EQ(s[i].weights_bytes, convsel_instance_weights_bytes(inst));
            CHECK(s[i].weights_bytes >= elems * sizeof(float));
        } else {
            CHECK_MSG(0, "%s on %s: %s", convsel_primitive_name(s[i].primitive), s[i].problem.name,
                      convsel_last_error());
        }
        convsel_instance_destroy(inst);
        free(w);
    }
    for (size_t p = 0; p < n_prim; p++) {
        size_t fits = 0;
        for (size_t l = 0; allowed[p] && l < convsel_network_size(net); l++) {
            const convsel_problem *q = convsel_network_layer(net, l);
            fits += convsel_primitive_applicable(p, q, NULL, 0) && !convsel_select_runs_naive(p, q, 1);
        }
        CHECK_MSG(per[p] == fits, "%s: %zu samples, %zu layers it computes", convsel_primitive_name(p), per[p], fits);
        want += fits;
    }
    CHECK_EQ(n, want);
    CHECK(n >= 6);
    free(per);

    /* One pass or three: the same samples in the same order, a primitive's
     * later pass put in place of its first, not appended. */
    for (int passes = 1; passes <= 3; passes += 2) {
        convsel_conv_sample *t = NULL;
        size_t m = 0;
        CHECK_EQ(convsel_conv_probe_passes(net, 1, allowed, 0.01, passes, 2, 3, &t, &m), CONVSEL_OK);
        CHECK_MSG(m == n, "%d passes: %zu samples, %zu with two", passes, m, n);
        for (size_t i = 0; i < m && i < n; i++) {
            CHECK(t[i].primitive == s[i].primitive && strcmp(t[i].problem.name, s[i].problem.name) == 0);
            CHECK(t[i].network_ms > 0 && t[i].alone_ms > 0 && isfinite(t[i].network_ms) && isfinite(t[i].alone_ms));
        }
        free(t);
    }
    CHECK_EQ(convsel_conv_probe_passes(net, 1, allowed, 0.01, 0, 3, 3, &s, &n), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_conv_probe_passes(net, 1, allowed, 0.01, 17, 3, 3, &s, &n), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_conv_probe_passes(net, 1, allowed, 0.01, 2, 0, 3, &s, &n), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_conv_probe_passes(net, 1, allowed, 0.01, 2, 51, 3, &s, &n), CONVSEL_INVALID_ARGUMENT);
    free(s);
    s = NULL;
    n = 0;

    CHECK_EQ(convsel_primitive_find("im2col_gemm", &im2col), CONVSEL_OK);
    memset(allowed, 0, n_prim);
    allowed[im2col] = 1;
    CHECK_EQ(convsel_conv_probe(net, 2, allowed, 0.01, 1, &s, &n), CONVSEL_OK);
    CHECK_EQ(n, 3);
    for (size_t i = 0; i < n; i++) {
        CHECK(s[i].primitive == im2col && s[i].threads == 2);
        /* Each sample carries its layer's problem, in the network's order. */
        CHECK(i >= convsel_network_size(net) || strcmp(s[i].problem.name, convsel_network_layer(net, i)->name) == 0);
        CHECK(i >= convsel_network_size(net) || s[i].problem.ic == convsel_network_layer(net, i)->ic);
    }
    free(s);
    s = NULL;
    n = 0;
    allowed[im2col] = 0;
    CHECK_EQ(convsel_conv_probe(net, 1, allowed, 0.01, 1, &s, &n), CONVSEL_NOT_APPLICABLE);
    CHECK_EQ(n, 0);
    CHECK_EQ(convsel_conv_probe(net, 0, allowed, 0.01, 1, &s, &n), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_conv_probe(net, 1, allowed, -1.0, 1, &s, &n), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_conv_probe(NULL, 1, allowed, 0.01, 1, &s, &n), CONVSEL_INVALID_ARGUMENT);
    free(s);

    /* A layer alone, on the runner's buffers. */
    convsel_plan *plan = forced_plan(net, im2col, 3, 1);
    convsel_runner *r = NULL;
    if (plan && convsel_runner_create(plan, 1, &r) == CONVSEL_OK) {
        double ms = -1;
        CHECK_EQ(convsel_runner_layer_alone_ms(r, 1, 3, &ms), CONVSEL_OK);
        CHECK(ms > 0);
        CHECK_EQ(convsel_runner_layer_alone_ms(r, 3, 3, &ms), CONVSEL_INVALID_ARGUMENT);
        CHECK_EQ(convsel_runner_layer_alone_ms(r, 0, 0, &ms), CONVSEL_INVALID_ARGUMENT);
        CHECK_EQ(convsel_runner_layer_alone_ms(NULL, 0, 3, &ms), CONVSEL_INVALID_ARGUMENT);
        /* The network still computes what the reference does after it. */
        CHECK_EQ(convsel_runner_check(r, NULL), CONVSEL_OK);
    }
    convsel_runner_destroy(r);
    convsel_plan_destroy(plan);
    convsel_network_destroy(net);
    free(allowed);
}

int main(void)
{
    test_plans_compute_the_network();
    test_check_catches();
    test_shared_runners();
    test_network_shrunk();
    test_reorder_probe();
    test_cold_probe();
    test_conv_keep_pass();
    test_conv_probe();
    return CHECK_DONE();
}
