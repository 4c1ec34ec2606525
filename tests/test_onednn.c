/* The four oneDNN primitives against the reference, on problems that exercise
 * groups, depthwise, dilation, strides with negative far padding and
 * non-square kernels, in whatever layouts the instances declare. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "convsel.h"
#include "internal.h"
#include "onednn_util.h"
#include "primitive.h"

static const char *const primitives[] = {"onednn_direct", "onednn_winograd", "onednn_gemm", "onednn_auto"};

static const char *const problems[] = {
    "mb1ic3ih32iw32oc16oh32ow32kh3kw3ph1pw1n\"first layer\"",
    "mb2ic16ih14iw14oc32oh14ow14kh3kw3ph1pw1n\"3x3 s1\"",
    "mb1ic64ih28iw28oc64oh28ow28kh3kw3ph1pw1n\"3x3 s1 resnet-like\"",
    "mb1ic17ih9iw11oc33oh9ow11kh3kw3ph1pw1n\"3x3 odd channels\"",
    "mb1ic32ih15iw15oc48oh8ow8kh3kw3sh2sw2ph1pw1n\"3x3 s2\"",
    "mb1ic16ih16iw16oc24oh7ow7kh3kw3sh2sw2ph0pw0n\"3x3 s2 negative far pad\"",
    "mb1ic64ih14iw14oc128oh7ow7kh1kw1sh2sw2ph0pw0n\"1x1 s2 negative far pad\"",
    "mb2ic24ih12iw10oc40oh6ow5kh1kw1sh2sw2ph0pw0n\"1x1 s2 negative far pad, mb2\"",
    "mb2ic64ih7iw7oc256oh7ow7kh1kw1ph0pw0n\"1x1\"",
    "g2mb1ic32ih14iw14oc64oh14ow14kh3kw3ph1pw1n\"2 groups\"",
    "g4mb1ic16ih9iw9oc8oh9ow9kh3kw3ph1pw1n\"4 groups, 4 in 2 out\"",
    "g32mb1ic32ih14iw14oc32oh14ow14kh3kw3ph1pw1n\"depthwise\"",
    "g32mb1ic32ih15iw15oc32oh8ow8kh3kw3sh2sw2ph1pw1n\"depthwise s2\"",
    "g16mb1ic16ih10iw10oc32oh10ow10kh3kw3ph1pw1n\"depthwise multiplier 2\"",
    "mb1ic16ih20iw20oc16oh20ow20kh3kw3ph2pw2dh1dw1n\"dilation 1\"",
    "mb1ic8ih17iw19oc16oh13ow17kh3kw3ph0pw0dh1dw0n\"dilation h only\"",
    "mb1ic32ih17iw17oc32oh17ow17kh1kw7ph0pw3n\"1x7\"",
    "mb1ic32ih17iw17oc32oh17ow17kh7kw1ph3pw0n\"7x1\"",
    "mb1ic16ih14iw14oc32oh14ow14kh5kw5ph2pw2n\"5x5\"",
    /* Under an AVX2 cap oneDNN 2.6 runs this one with its gemm code. */
    "g16mb1ic16ih1iw1oc16oh1ow1kh5kw5ph2pw2n\"depthwise 5x5 on 1x1\"",
    "mb1ic3ih64iw64oc16oh32ow32kh7kw7sh2sw2ph3pw3n\"7x7 s2 first layer\"",
    "mb1ic3ih63iw63oc16oh15ow15kh11kw11sh4sw4ph2pw2n\"11x11 s4\"",
    "mb1ic48ih10iw13oc20oh10ow13kh3kw3ph1pw1n\"non-square input\"",
    /* With AVX-512 oneDNN 2.6 has no optimised kernel for 4 channels per
     * group in blocked layouts and runs its reference loops ("ref:any"). */
    "g4mb1ic16ih12iw12oc16oh12ow12kh3kw3ph1pw1n\"4 groups of 4 channels\"",
    /* The kernel covers the whole unpadded input: with AVX-512 oneDNN 2.6
     * runs it as an inner product ("ip:x64:gemm:jit"), a GEMM of its own. */
    "mb8ic16ih7iw7oc16oh1ow1kh7kw7ph0pw0n\"kernel covers the input\"",
};

/* Winograd must be there for 3×3 stride-1 layers when AVX-512 is allowed
 * (oneDNN 2.6 has it only for avx512_core) and refused on 5×5 and stride 2. */
static const struct {
    const char *name;
    int applicable;
} winograd_expect[] = {
    {"3x3 s1", 1},
    {"3x3 s1 resnet-like", 1},
    {"5x5", 0},
    {"3x3 s2", 0},
};

static int block_of(convsel_layout layout)
{
    return layout == CONVSEL_LAYOUT_NCHW8C ? 8 : layout == CONVSEL_LAYOUT_NCHW16C ? 16 : 1;
}

static int reorder(const convsel_problem *p, int64_t c, int64_t h, int64_t w, convsel_layout from, convsel_layout to,
                   const float *src, float *dst)
{
    convsel_reorder *r;
    convsel_status st = convsel_reorder_create(p->mb, c, h, w, from, to, 1, &r);
    if (st == CONVSEL_OK) {
        st = convsel_reorder_run(r, src, dst);
        convsel_reorder_destroy(r);
    }
    CHECK_MSG(st == CONVSEL_OK, "%s: reorder %s -> %s: %s", p->name, convsel_layout_name(from),
              convsel_layout_name(to), convsel_last_error());
    return st == CONVSEL_OK;
}

/* Padded channels of a blocked dst must come back zero. */
static int padding_is_zero(const float *y, convsel_layout layout, const convsel_problem *p)
{
    int64_t b = block_of(layout);
    int64_t cb = (p->oc + b - 1) / b, hw = p->oh * p->ow;
    for (int64_t n = 0; n < p->mb; n++)
        for (int64_t c = p->oc; c < cb * b; c++)
            for (int64_t i = 0; i < hw; i++)
                if (y[((n * cb + c / b) * hw + i) * b + c % b] != 0.0f)
                    return 0;
    return 1;
}

/* How many times a oneDNN primitive other than onednn_gemm ran as it. */
static int gemm_runs, naive_runs, inner_product_runs;

/* The kinds of kernel implementation names stand for, whatever this CPU runs. */
static void test_kernel_kind(void)
{
    static const struct {
        const char *impl;
        convsel_onednn_kernel kind;
    } cases[] = {
        {"x64:gemm:jit", CONVSEL_ONEDNN_KERNEL_IM2COL},
        {"gemm:jit", CONVSEL_ONEDNN_KERNEL_IM2COL},
        {"ip:x64:gemm:jit", CONVSEL_ONEDNN_KERNEL_OWN},
        {"ip:brg:avx512_core", CONVSEL_ONEDNN_KERNEL_OWN},
        {"ref:any", CONVSEL_ONEDNN_KERNEL_REFERENCE},
        {"ip:ref:any", CONVSEL_ONEDNN_KERNEL_REFERENCE},
        {"brgconv:avx512_core", CONVSEL_ONEDNN_KERNEL_OWN},
        {"brgconv_1x1:avx512_core", CONVSEL_ONEDNN_KERNEL_OWN},
        {"jit_wino_4x3:avx512_core", CONVSEL_ONEDNN_KERNEL_OWN},
        {"jit:avx2", CONVSEL_ONEDNN_KERNEL_OWN},
        {"", CONVSEL_ONEDNN_KERNEL_OWN},
        {NULL, CONVSEL_ONEDNN_KERNEL_OWN},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++)
        CHECK_MSG(convsel_onednn_kernel_kind(cases[k].impl) == cases[k].kind, "kernel kind of '%s': %d, expected %d",
                  cases[k].impl ? cases[k].impl : "(null)", (int)convsel_onednn_kernel_kind(cases[k].impl),
                  (int)cases[k].kind);
}

static void test_problem(const convsel_problem *p, size_t reference, int threads)
{
    size_t nsrc = convsel_problem_src_elems(p), nw = convsel_problem_weights_elems(p);
    size_t ndst = convsel_problem_dst_elems(p);
    size_t most_src = convsel_layout_elems(CONVSEL_LAYOUT_NCHW16C, p->mb, p->ic, p->ih, p->iw);
    size_t most_dst = convsel_layout_elems(CONVSEL_LAYOUT_NCHW16C, p->mb, p->oc, p->oh, p->ow);
    float *x = convsel_alloc(nsrc * sizeof(float)), *w = convsel_alloc(nw * sizeof(float));
    float *y_ref = convsel_alloc(ndst * sizeof(float)), *y = convsel_alloc(ndst * sizeof(float));
    float *x_in = convsel_alloc(most_src * sizeof(float)), *y_out = convsel_alloc(most_dst * sizeof(float));
    convsel_fill_random(x, nsrc, 1);
    convsel_fill_random(w, nw, 2);

    convsel_instance *ref;
    CHECK_EQ(convsel_instance_create(reference, p, 1, w, &ref), CONVSEL_OK);
    CHECK_EQ(convsel_instance_run(ref, x, y_ref), CONVSEL_OK);
    convsel_instance_destroy(ref);

    printf("%-34s", p->name);
    char impls[sizeof primitives / sizeof primitives[0]][128] = {{0}};
    for (size_t k = 0; k < sizeof primitives / sizeof primitives[0]; k++) {
        size_t i;
        char why[160], impl[128] = "-";
        CHECK_EQ(convsel_primitive_find(primitives[k], &i), CONVSEL_OK);
        int applicable = convsel_primitive_applicable(i, p, why, sizeof why);
        /* oneDNN's answers are kept per process (primitives/onednn.c): asked
         * again, the same answer and the same reason. */
        char why_again[160];
        CHECK_EQ(convsel_primitive_applicable(i, p, why_again, sizeof why_again), applicable);
        CHECK_STR(why_again, why);
        for (size_t e = 0; e < sizeof winograd_expect / sizeof winograd_expect[0]; e++)
            if (strcmp(primitives[k], "onednn_winograd") == 0 && strcmp(p->name, winograd_expect[e].name) == 0)
                CHECK_MSG(applicable == (winograd_expect[e].applicable && convsel_get_isa() == CONVSEL_ISA_AVX512),
                          "%s: winograd applicable = %d (%s)", p->name, applicable, why);
        if (strcmp(primitives[k], "onednn_winograd") != 0)
            CHECK_MSG(applicable, "%s: %s not applicable: %s", p->name, primitives[k], why);
        if (!applicable) {
            CHECK(why[0] != '\0');
            convsel_instance *none = (convsel_instance *)&none;
            CHECK_EQ(convsel_instance_create(i, p, threads, w, &none), CONVSEL_NOT_APPLICABLE);
            CHECK(none == NULL);
            printf(" | %s: n/a", primitives[k] + 7);
            continue;
        }
        CHECK_EQ(convsel_onednn_impl_info(primitives[k], p, impl, sizeof impl), CONVSEL_OK);
        snprintf(impls[k], sizeof impls[k], "%s", impl);
        /* The selector prices a primitive by the kernel oneDNN would run:
         * onednn_gemm's wherever the implementation is the gemm one, and
         * the reference's where it is oneDNN's reference loops. */
        size_t as = SIZE_MAX, gemm_index;
        CHECK_EQ(convsel_primitive_find("onednn_gemm", &gemm_index), CONVSEL_OK);
        CHECK_EQ(convsel_primitive_runs_as(i, p, threads, &as), CONVSEL_OK);
        gemm_runs += i != gemm_index && as == gemm_index;
        naive_runs += as == reference;
        convsel_onednn_kernel kind = convsel_onednn_kernel_kind(impl);
        size_t expect = kind == CONVSEL_ONEDNN_KERNEL_REFERENCE ? reference
                        : kind == CONVSEL_ONEDNN_KERNEL_IM2COL  ? gemm_index
                                                                : i;
        inner_product_runs += strncmp(impl, "ip:", 3) == 0 && as == i;
        CHECK_MSG(as == expect, "%s: %s runs '%s' but runs_as says %s", p->name, primitives[k], impl,
                  as < convsel_primitive_count() ? convsel_primitive_name(as) : "?");
        CHECK_EQ(convsel_select_runs_naive(i, p, threads), as == reference);
        /* With nchw tensors and oihw weights forced, oneDNN 2.6 has only its
         * gemm-based implementation left ("x64:gemm:jit"), not a JIT kernel. */
        if (strcmp(primitives[k], "onednn_gemm") == 0)
            CHECK_MSG(strstr(impl, "gemm") != NULL, "%s: onednn_gemm runs '%s'", p->name, impl);
        if (strcmp(primitives[k], "onednn_winograd") == 0)
            CHECK_MSG(strstr(impl, "wino") != NULL, "%s: onednn_winograd runs '%s'", p->name, impl);

        convsel_instance *inst;
        convsel_status st = convsel_instance_create(i, p, threads, w, &inst);
        CHECK_MSG(st == CONVSEL_OK, "%s: create %s: %s", p->name, primitives[k], convsel_last_error());
        if (st != CONVSEL_OK)
            continue;
        convsel_layout sl = convsel_instance_src_layout(inst), dl = convsel_instance_dst_layout(inst);
        printf(" | %s: %s %s>%s", primitives[k] + 7, impl, convsel_layout_name(sl), convsel_layout_name(dl));
        CHECK(sl >= 0 && sl < CONVSEL_LAYOUT_COUNT && dl >= 0 && dl < CONVSEL_LAYOUT_COUNT);
        /* The selector's cheap query must name the layouts create() declared. */
        convsel_layout qs = CONVSEL_LAYOUT_COUNT, qd = CONVSEL_LAYOUT_COUNT;
        CHECK(convsel_primitives[i]->query_layouts != NULL);
        if (convsel_primitives[i]->query_layouts) {
            CHECK_EQ(convsel_primitives[i]->query_layouts(p, threads, &qs, &qd), CONVSEL_OK);
            CHECK_EQ(qs, sl);
            CHECK_EQ(qd, dl);
            /* The kept answer, after the one create() worked out afresh. */
            qs = qd = CONVSEL_LAYOUT_COUNT;
            CHECK_EQ(convsel_primitives[i]->query_layouts(p, threads, &qs, &qd), CONVSEL_OK);
            CHECK_EQ(qs, sl);
            CHECK_EQ(qd, dl);
        }
        if (convsel_primitives[i]->query_kernel) {
            const char *first = "unset", *again = "unset";
            CHECK_EQ(convsel_primitives[i]->query_kernel(p, threads, &qs, &qd, &first), CONVSEL_OK);
            CHECK_EQ(convsel_primitives[i]->query_kernel(p, threads, &qs, &qd, &again), CONVSEL_OK);
            CHECK_MSG(first == again || (first && again && strcmp(first, again) == 0),
                      "%s: %s's kernel asked twice: %s, then %s", p->name, primitives[k], first ? first : "its own",
                      again ? again : "its own");
            CHECK_EQ(qs, sl);
            CHECK_EQ(qd, dl);
        }

        int ok = reorder(p, p->ic, p->ih, p->iw, CONVSEL_LAYOUT_NCHW, sl, x, x_in);
        size_t ny = convsel_layout_elems(dl, p->mb, p->oc, p->oh, p->ow);
        for (size_t j = 0; j < ny; j++)
            y_out[j] = -777.0f; /* shows elements the primitive leaves untouched */
        if (ok) {
            st = convsel_instance_run(inst, x_in, y_out);
            CHECK_MSG(st == CONVSEL_OK, "%s: run %s: %s", p->name, primitives[k], convsel_last_error());
            ok = st == CONVSEL_OK;
        }
        if (ok && block_of(dl) > 1)
            CHECK_MSG(padding_is_zero(y_out, dl, p), "%s: %s left padded channels non-zero", p->name,
                      primitives[k]);
        if (ok && reorder(p, p->oc, p->oh, p->ow, dl, CONVSEL_LAYOUT_NCHW, y_out, y)) {
            double err = convsel_rel_error(y, y_ref, ndst);
            double tol = 4.0 * convsel_primitive_expected_error(i);
            CHECK_MSG(err <= tol, "%s: %s error %.3g over %.3g", p->name, primitives[k], err, tol);
        }
        convsel_instance_destroy(inst);
    }
    printf("\n");
    /* onednn_auto is a dispatcher (ranking metrics leave it out): what it
     * runs is what onednn_direct or onednn_winograd runs. */
    const char *auto_impl = NULL;
    int same = 0;
    for (size_t k = 0; k < sizeof primitives / sizeof primitives[0]; k++)
        if (strcmp(primitives[k], "onednn_auto") == 0)
            auto_impl = impls[k];
    for (size_t k = 0; auto_impl && auto_impl[0] && k < sizeof primitives / sizeof primitives[0]; k++)
        if (strcmp(primitives[k], "onednn_direct") == 0 || strcmp(primitives[k], "onednn_winograd") == 0)
            same |= strcmp(impls[k], auto_impl) == 0;
    CHECK_MSG(!auto_impl || !auto_impl[0] || same, "%s: onednn_auto runs '%s', which no other oneDNN primitive runs",
              p->name, auto_impl ? auto_impl : "");
    convsel_free(x);
    convsel_free(w);
    convsel_free(y_ref);
    convsel_free(y);
    convsel_free(x_in);
    convsel_free(y_out);
}

int main(void)
{
    size_t reference;
    CHECK_EQ(convsel_primitive_find("reference", &reference), CONVSEL_OK);
    test_kernel_kind();
    for (size_t k = 0; k < sizeof primitives / sizeof primitives[0]; k++) {
        size_t i;
        CHECK_EQ(convsel_primitive_find(primitives[k], &i), CONVSEL_OK);
        CHECK_STR(convsel_primitive_family(i), "onednn");
        CHECK_EQ(convsel_primitive_is_dispatcher(i), strcmp(primitives[k], "onednn_auto") == 0);
        CHECK(convsel_primitive_expected_error(i) > 0.0);
    }
    for (size_t j = 0; j < sizeof problems / sizeof problems[0]; j++) {
        convsel_problem p;
        convsel_status st = convsel_problem_parse(problems[j], &p);
        CHECK_MSG(st == CONVSEL_OK, "%s: %s", problems[j], convsel_last_error());
        if (st != CONVSEL_OK)
            continue;
        /* Every fourth problem on two threads: oneDNN splits work by the
         * thread count it sees at creation. */
        test_problem(&p, reference, j % 4 == 3 ? 2 : 1);
    }
    /* The negative far padding really is negative in those problems. */
    convsel_problem p;
    CHECK_EQ(convsel_problem_parse(problems[6], &p), CONVSEL_OK);
    CHECK_EQ(convsel_problem_pad_bottom(&p), -1);
    CHECK_EQ(convsel_problem_pad_right(&p), -1);
    /* The gemm branch of runs_as was exercised where oneDNN is known to take it. */
    if (convsel_get_isa() == CONVSEL_ISA_AVX2)
        CHECK_MSG(gemm_runs > 0, "under AVX2 no oneDNN primitive ran as onednn_gemm");
    /* And the reference branch where oneDNN 2.6 is known to take it. */
    if (convsel_get_isa() == CONVSEL_ISA_AVX512)
        CHECK_MSG(naive_runs > 0, "under AVX-512 no oneDNN primitive ran its reference loops");
    /* And an inner product priced as itself, not as onednn_gemm's im2col. */
    if (convsel_get_isa() == CONVSEL_ISA_AVX512)
        CHECK_MSG(inner_product_runs > 0, "under AVX-512 no oneDNN primitive ran as an inner product");
    return CHECK_DONE();
}
