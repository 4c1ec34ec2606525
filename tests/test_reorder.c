/* Reorders between every pair of layouts: exact, in the right places, and
 * with the padded channels of blocked layouts zeroed. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "convsel.h"

static int block_of(convsel_layout layout)
{
    return layout == CONVSEL_LAYOUT_NCHW8C ? 8 : layout == CONVSEL_LAYOUT_NCHW16C ? 16 : 1;
}

/* Where element (n, c, y, x) lives, written from the layouts' definitions
 * independently of oneDNN. */
static size_t offset_of(convsel_layout layout, int64_t C, int64_t H, int64_t W, int64_t n, int64_t c, int64_t y,
                        int64_t x)
{
    switch (layout) {
    case CONVSEL_LAYOUT_NCHW: return (size_t)(((n * C + c) * H + y) * W + x);
    case CONVSEL_LAYOUT_NHWC: return (size_t)(((n * H + y) * W + x) * C + c);
    default: {
        int64_t b = block_of(layout), cb = (C + b - 1) / b;
        return (size_t)((((n * cb + c / b) * H + y) * W + x) * b + c % b);
    }
    }
}

/* x (nchw) written into layout by hand, padded channels zero. */
static void pack(convsel_layout layout, const float *x, float *out, int64_t N, int64_t C, int64_t H, int64_t W)
{
    memset(out, 0, convsel_layout_elems(layout, N, C, H, W) * sizeof(float));
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t y = 0; y < H; y++)
                for (int64_t x_ = 0; x_ < W; x_++)
                    out[offset_of(layout, C, H, W, n, c, y, x_)] = x[((n * C + c) * H + y) * W + x_];
}

/* Fills with a value no reorder produces, so that untouched elements show. */
static void poison(float *buf, size_t n)
{
    for (size_t i = 0; i < n; i++)
        buf[i] = -12345.0f;
}

static int reorder(int64_t N, int64_t C, int64_t H, int64_t W, convsel_layout from, convsel_layout to, int threads,
                   const float *src, float *dst)
{
    convsel_reorder *r = NULL;
    convsel_status st = convsel_reorder_create(N, C, H, W, from, to, threads, &r);
    CHECK_MSG(st == CONVSEL_OK, "create %s -> %s: %s", convsel_layout_name(from), convsel_layout_name(to),
              convsel_last_error());
    if (st != CONVSEL_OK)
        return 0;
    st = convsel_reorder_run(r, src, dst);
    CHECK_MSG(st == CONVSEL_OK, "run: %s", convsel_last_error());
    convsel_reorder_destroy(r);
    return st == CONVSEL_OK;
}

static void test_all_pairs(int64_t N, int64_t C, int64_t H, int64_t W, int threads)
{
    const size_t plain = (size_t)(N * C * H * W);
    const size_t most = convsel_layout_elems(CONVSEL_LAYOUT_NCHW16C, N, C, H, W);
    float *x = malloc(plain * sizeof(float));
    float *a = malloc(most * sizeof(float)), *b = malloc(most * sizeof(float));
    float *want = malloc(most * sizeof(float)), *back = malloc(most * sizeof(float));
    convsel_fill_random(x, plain, (uint64_t)(N * 1000 + C * 10 + H));
    for (int from = 0; from < CONVSEL_LAYOUT_COUNT; from++) {
        pack((convsel_layout)from, x, a, N, C, H, W);
        size_t na = convsel_layout_elems((convsel_layout)from, N, C, H, W);
        for (int to = 0; to < CONVSEL_LAYOUT_COUNT; to++) {
            size_t nb = convsel_layout_elems((convsel_layout)to, N, C, H, W);
            poison(b, nb);
            if (!reorder(N, C, H, W, (convsel_layout)from, (convsel_layout)to, threads, a, b))
                continue;
            /* Bitwise against the hand-packed tensor: every element in its
             * place, padded channels zero. */
            pack((convsel_layout)to, x, want, N, C, H, W);
            CHECK_MSG(memcmp(b, want, nb * sizeof(float)) == 0, "%s -> %s, %lldx%lldx%lldx%lld",
                      convsel_layout_name((convsel_layout)from), convsel_layout_name((convsel_layout)to),
                      (long long)N, (long long)C, (long long)H, (long long)W);
            poison(back, na);
            if (!reorder(N, C, H, W, (convsel_layout)to, (convsel_layout)from, threads, b, back))
                continue;
            CHECK_MSG(memcmp(back, a, na * sizeof(float)) == 0, "round trip %s -> %s -> %s, %lldx%lldx%lldx%lld",
                      convsel_layout_name((convsel_layout)from), convsel_layout_name((convsel_layout)to),
                      convsel_layout_name((convsel_layout)from), (long long)N, (long long)C, (long long)H,
                      (long long)W);
        }
    }
    free(x);
    free(a);
    free(b);
    free(want);
    free(back);
}

/* A few positions computed by hand, so that offset_of itself is checked. */
static void test_known_positions(void)
{
    enum { N = 2, C = 17, H = 5, W = 7 };
    float *x = calloc(N * C * H * W, sizeof(float));
    float *y = malloc(convsel_layout_elems(CONVSEL_LAYOUT_NCHW16C, N, C, H, W) * sizeof(float));
    /* (n=1, c=9, y=2, x=3) in nchw: ((1*17 + 9)*5 + 2)*7 + 3 = 927. */
    x[927] = 1.5f;
    /* (n=0, c=16, y=4, x=6): (16*5 + 4)*7 + 6 = 594. */
    x[594] = -2.0f;

    if (reorder(N, C, H, W, CONVSEL_LAYOUT_NCHW, CONVSEL_LAYOUT_NHWC, 1, x, y)) {
        /* nhwc: ((1*5 + 2)*7 + 3)*17 + 9 = 893; ((0*5 + 4)*7 + 6)*17 + 16 = 594. */
        CHECK(y[893] == 1.5f);
        CHECK(y[594] == -2.0f);
    }
    if (reorder(N, C, H, W, CONVSEL_LAYOUT_NCHW, CONVSEL_LAYOUT_NCHW8C, 1, x, y)) {
        /* 3 blocks of 8: (((1*3 + 1)*5 + 2)*7 + 3)*8 + 1 = 1257;
         * (((0*3 + 2)*5 + 4)*7 + 6)*8 + 0 = 832. */
        CHECK(y[1257] == 1.5f);
        CHECK(y[832] == -2.0f);
        CHECK(y[833] == 0.0f); /* channel 17, padding */
    }
    if (reorder(N, C, H, W, CONVSEL_LAYOUT_NCHW, CONVSEL_LAYOUT_NCHW16C, 1, x, y)) {
        /* 2 blocks of 16: (((1*2 + 0)*5 + 2)*7 + 3)*16 + 9 = 1401;
         * (((0*2 + 1)*5 + 4)*7 + 6)*16 + 0 = 1104. */
        CHECK(y[1401] == 1.5f);
        CHECK(y[1104] == -2.0f);
    }
    free(x);
    free(y);
}

static void test_errors(void)
{
    convsel_reorder *r = (convsel_reorder *)&r;
    CHECK_EQ(convsel_reorder_create(0, 3, 5, 5, CONVSEL_LAYOUT_NCHW, CONVSEL_LAYOUT_NHWC, 1, &r),
             CONVSEL_INVALID_ARGUMENT);
    CHECK(r == NULL);
    CHECK_EQ(convsel_reorder_create(1, 3, 5, 5, CONVSEL_LAYOUT_NCHW, CONVSEL_LAYOUT_COUNT, 1, &r),
             CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_reorder_create(1, 3, 5, 5, CONVSEL_LAYOUT_NCHW, CONVSEL_LAYOUT_NHWC, 0, &r),
             CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_reorder_create(1, 3, 5, 5, CONVSEL_LAYOUT_NCHW, CONVSEL_LAYOUT_NHWC, 1, NULL),
             CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_reorder_create(1, 3, 5, 5, CONVSEL_LAYOUT_NCHW, CONVSEL_LAYOUT_NHWC, 1, &r), CONVSEL_OK);
    float buf[75];
    CHECK_EQ(convsel_reorder_run(r, NULL, buf), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_reorder_run(NULL, buf, buf), CONVSEL_INVALID_ARGUMENT);
    convsel_reorder_destroy(r);
    convsel_reorder_destroy(NULL);
}

int main(void)
{
    static const int64_t channels[] = {1, 3, 16, 17, 33};
    for (size_t i = 0; i < sizeof channels / sizeof channels[0]; i++) {
        test_all_pairs(1, channels[i], 5, 7, 1);
        test_all_pairs(3, channels[i], 3, 9, 1);
    }
    /* Two threads split the work differently; the result must not change. */
    test_all_pairs(3, 33, 11, 13, 2);
    test_known_positions();
    test_errors();
    return CHECK_DONE();
}
