/*
 * direct_simd against the reference convolution: strides, padding (implied
 * bottom/right padding included, negative too), dilation, groups whose
 * channels are whole blocks, depthwise and small groups, groups that straddle
 * blocks, channels that are not a multiple of the block, 1×7/7×1, batch 2,
 * one and two threads. The process runs the cases at the ISA this CPU offers,
 * then re-runs itself under CONVSEL_ISA=avx2 and sse41 so that every kernel
 * family (AVX-512, AVX2, portable) is checked on a machine that has them.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "convsel.h"

static int block_of(convsel_layout layout)
{
    return layout == CONVSEL_LAYOUT_NCHW16C ? 16 : layout == CONVSEL_LAYOUT_NCHW8C ? 8 : 1;
}

/* nchw -> nChwXc, padded channels zero. */
static void to_blocked(const float *x, float *y, int64_t mb, int64_t c, int64_t hw, int64_t b)
{
    const int64_t nb = (c + b - 1) / b;
    for (int64_t n = 0; n < mb; n++)
        for (int64_t cb = 0; cb < nb; cb++)
            for (int64_t s = 0; s < hw; s++)
                for (int64_t l = 0; l < b; l++) {
                    const int64_t ch = cb * b + l;
                    y[((n * nb + cb) * hw + s) * b + l] = ch < c ? x[(n * c + ch) * hw + s] : 0.0f;
                }
}

/* nChwXc -> nchw; counts padded-channel values that are not exactly zero. */
static int64_t from_blocked(const float *y, float *x, int64_t mb, int64_t c, int64_t hw, int64_t b)
{
    const int64_t nb = (c + b - 1) / b;
    int64_t bad_pad = 0;
    for (int64_t n = 0; n < mb; n++)
        for (int64_t cb = 0; cb < nb; cb++)
            for (int64_t s = 0; s < hw; s++)
                for (int64_t l = 0; l < b; l++) {
                    const int64_t ch = cb * b + l;
                    const float v = y[((n * nb + cb) * hw + s) * b + l];
                    if (ch < c)
                        x[(n * c + ch) * hw + s] = v;
                    else if (v != 0.0f)
                        bad_pad++;
                }
    return bad_pad;
}

static void check_case(const char *desc, int threads, size_t prim, size_t ref)
{
    convsel_problem p;
    convsel_status st = convsel_problem_parse(desc, &p);
    CHECK_MSG(st == CONVSEL_OK, "%s: %s", desc, convsel_last_error());
    if (st != CONVSEL_OK)
        return;
    const size_t nw = convsel_problem_weights_elems(&p), ns = convsel_problem_src_elems(&p),
                 nd = convsel_problem_dst_elems(&p);
    float *w = malloc(nw * sizeof(float)), *x = malloc(ns * sizeof(float));
    float *y = malloc(nd * sizeof(float)), *y_ref = malloc(nd * sizeof(float));
    convsel_fill_random(w, nw, 1 + p.ic * 7 + p.oc);
    convsel_fill_random(x, ns, 2 + p.ih * 13 + p.kh);

    convsel_instance *a = NULL, *r = NULL;
    CHECK_EQ(convsel_instance_create(ref, &p, threads, w, &r), CONVSEL_OK);
    st = convsel_instance_create(prim, &p, threads, w, &a);
    CHECK_MSG(st == CONVSEL_OK, "%s: create: %s", desc, convsel_last_error());
    if (st == CONVSEL_OK && r) {
        const convsel_layout ls = convsel_instance_src_layout(a), ld = convsel_instance_dst_layout(a);
        const int b = block_of(ls);
        CHECK_EQ(b, convsel_get_isa() == CONVSEL_ISA_AVX512 ? 16 : 8);
        CHECK_EQ(ld, ls);
        const size_t bs = convsel_layout_elems(ls, p.mb, p.ic, p.ih, p.iw);
        const size_t bd = convsel_layout_elems(ld, p.mb, p.oc, p.oh, p.ow);
        float *xb = convsel_alloc(bs * sizeof(float)), *yb = convsel_alloc(bd * sizeof(float));
        to_blocked(x, xb, p.mb, p.ic, p.ih * p.iw, b);
        /* NaN everywhere, so a value the primitive forgets to write shows. */
        memset(yb, 0xff, bd * sizeof(float));
        CHECK_EQ(convsel_instance_run(r, x, y_ref), CONVSEL_OK);
        CHECK_EQ(convsel_instance_run(a, xb, yb), CONVSEL_OK);
        const int64_t bad_pad = from_blocked(yb, y, p.mb, p.oc, p.oh * p.ow, b);
        CHECK_MSG(bad_pad == 0, "%s: %lld padded dst channels not zero", desc, (long long)bad_pad);
        const double err = convsel_rel_error(y, y_ref, nd);
        CHECK_MSG(err <= convsel_primitive_expected_error(prim), "%s threads %d isa %s: rel error %.3g", desc,
                  threads, convsel_isa_name(convsel_get_isa()), err);
        /* A second run on the same buffers gives the same answer (no state). */
        CHECK_EQ(convsel_instance_run(a, xb, yb), CONVSEL_OK);
        float *y2 = malloc(nd * sizeof(float));
        from_blocked(yb, y2, p.mb, p.oc, p.oh * p.ow, b);
        CHECK(memcmp(y, y2, nd * sizeof(float)) == 0);
        free(y2);
        convsel_free(xb);
        convsel_free(yb);
    }
    convsel_instance_destroy(a);
    convsel_instance_destroy(r);
    free(w);
    free(x);
    free(y);
    free(y_ref);
}

static const char *const cases[] = {
    "mb1ic16ih10oc32oh10kh3ph1n\"3x3 pad 1\"",
    "mb2ic3ih13oc20oh13kh3ph1n\"batch 2, ic 3, oc 20\"",
    "mb1ic35ih9oc70oh9kh1ph0n\"1x1 flat, odd channels\"",
    "mb1ic32ih15oc48oh8kh3sh2ph1n\"3x3 stride 2\"",
    "mb1ic64ih14oc64oh7kh1sh2ph0n\"1x1 stride 2\"",
    "mb1ic16ih8oc32oh4kh1sh2ph0n\"1x1 stride 2, bottom pad -1\"",
    "mb1ic16ih8oc16oh3kh3sh2ph0n\"3x3 stride 2, bottom pad -1\"",
    "mb1ic8ih17iw23oc24oh6ow8kh3kw3sh3sw3ph1pw2n\"stride 3\"",
    "mb1ic16ih12oc16oh8kh3dh1ph0n\"dilation 1\"",
    "mb1ic24ih11oc40oh11kh3dh2ph3n\"dilation 2 pad 3\"",
    "mb1ic32ih17oc48oh17kh1kw7ph0pw3n\"1x7\"",
    "mb1ic32ih17oc48oh17kh7kw1ph3pw0n\"7x1\"",
    "mb1ic3ih32oc64oh16kh7sh2ph3n\"7x7 stride 2 stem\"",
    "mb1ic16ih3oc16oh3kh5ph2n\"5x5 on 3x3, all border\"",
    "mb1ic8ih4oc8oh8kh3ph3n\"rows entirely in padding\"",
    "mb1ic16ih5iw61oc64oh5ow61kh3ph1n\"wide row, many tiles\"",
    "mb1ic128ih6oc64oh6kh3ph1n\"ic in two passes (avx512)\"",
    "mb1ic480ih5oc16oh5kh3ph1n\"ic in two passes (avx2)\"",
    "mb1ic96ih7oc200oh7kh3ph1n\"oc 200: uneven oc-block groups\"",
    "mb1ic1024ih3oc1056oh3kh3ph1n\"38 MiB of weights: oc groups outermost, 10 passes\"",
    "g2mb1ic64ih9oc64oh9kh3ph1n\"g2, whole blocks\"",
    "g2mb2ic48ih9oc96oh9kh3ph1n\"g2, ic/g 24\"",
    "g32mb1ic32ih12oc32oh12kh3ph1n\"depthwise\"",
    "g24mb2ic24ih11oc24oh6kh3sh2ph1n\"depthwise stride 2, 24 channels\"",
    "g40mb1ic40ih9oc40oh9kh5ph2dh0n\"depthwise 5x5\"",
    "g8mb1ic32ih9oc32oh9kh3ph1n\"groups of 4\"",
    "g16mb1ic32ih9oc32oh5kh3sh2ph1n\"groups of 2, stride 2\"",
    "g3mb1ic9ih7oc6oh7kh3ph1n\"ic/g 3, oc/g 2\"",
    "g2mb1ic6ih7oc6oh7kh3ph1n\"groups of 3\"",
    "g4mb1ic4ih7oc8oh7kh3ph1n\"depthwise multiplier 2\"",
};

/* Re-runs this test under CONVSEL_ISA=isa; returns its exit status. */
static int run_under(const char *self, const char *isa)
{
    pid_t pid = fork();
    if (pid == 0) {
        setenv("CONVSEL_ISA", isa, 1);
        setenv("DIRECT_SIMD_TEST_CHILD", "1", 1);
        execl(self, self, (char *)NULL);
        _exit(127);
    }
    int status = 0;
    if (pid < 0 || waitpid(pid, &status, 0) < 0)
        return -1;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int main(int argc, char **argv)
{
    (void)argc;
    size_t prim = 0, ref = 0;
    CHECK_EQ(convsel_primitive_find("direct_simd", &prim), CONVSEL_OK);
    CHECK_EQ(convsel_primitive_find("reference", &ref), CONVSEL_OK);
    CHECK_STR(convsel_primitive_family(prim), "direct");
    const char *want = getenv("CONVSEL_ISA");
    printf("direct_simd under ISA %s\n", convsel_isa_name(convsel_get_isa()));
    if (want && strcmp(want, "avx2") == 0)
        CHECK(convsel_get_isa() <= CONVSEL_ISA_AVX2);
    if (want && strcmp(want, "sse41") == 0)
        CHECK(convsel_get_isa() <= CONVSEL_ISA_SSE41);

    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        for (int threads = 1; threads <= 2; threads++)
            check_case(cases[i], threads, prim, ref);

    if (!getenv("DIRECT_SIMD_TEST_CHILD")) {
        CHECK_EQ(run_under("/proc/self/exe", "avx2"), 0);
        CHECK_EQ(run_under("/proc/self/exe", "sse41"), 0);
    }
    (void)argv;
    return CHECK_DONE();
}
