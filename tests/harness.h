/*
 * Seeded random convolution problems for tests: small enough that the
 * reference computes them in milliseconds, varied enough to reach every
 * corner of a primitive's index arithmetic (groups, depthwise, stride,
 * top and implied bottom padding — negative too —, dilation, non-square
 * kernels and images, channel counts off the SIMD blocks, batch).
 *
 * A problem is a function of (seed, index), so a failure names a problem that
 * can be drawn again on its own.
 */
#ifndef CONVSEL_HARNESS_H
#define CONVSEL_HARNESS_H

#include <stdint.h>
#include <string.h>

#include "convsel.h"

/* What a generator draws: anything, the 3×3 stride-1 layers that Winograd
 * primitives take, or 1×1 layers. */
typedef enum { HARNESS_ANY, HARNESS_3X3_S1, HARNESS_1X1 } harness_kind;

/* Multiply-adds above which a problem is drawn again: keeps the double
 * accumulating reference at a few milliseconds per problem. */
#define HARNESS_MAX_MACS 1500000.0

typedef struct {
    uint64_t state;
} harness_rng;

static inline uint64_t harness_next(harness_rng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [lo, hi]. */
static inline int64_t harness_range(harness_rng *r, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(harness_next(r) % (uint64_t)(hi - lo + 1));
}

/* 1 with probability percent/100. */
static inline int harness_chance(harness_rng *r, int percent)
{
    return harness_range(r, 0, 99) < percent;
}

static inline int64_t harness_extent(int64_t k, int64_t d)
{
    return (k - 1) * (d + 1) + 1;
}

/*
 * Picks the output size along one axis. Usually the benchdnn one (symmetric
 * padding); otherwise any size whose implied far-side padding lies in what
 * convsel_problem_validate accepts, [1 - s, max(p, extent - 1)], which gives
 * negative, zero and oversized far padding. 0 when no output size fits.
 */
static inline int64_t harness_out_size(harness_rng *r, int64_t i, int64_t k, int64_t s, int64_t p, int64_t d,
                                       int free_far)
{
    const int64_t ext = harness_extent(k, d);
    const int64_t far_max = p > ext - 1 ? p : ext - 1;
    /* far = (o - 1) * s + ext - i - p  =>  o = (i + p + far - ext) / s + 1 exactly. */
    int64_t lo = i + p + 1 - s - ext, hi = i + p + far_max - ext;
    if (hi < 0)
        return 0;
    int64_t o_lo = (lo <= 0 ? 0 : (lo + s - 1) / s) + 1, o_hi = hi / s + 1;
    if (o_lo > o_hi)
        return 0;
    int64_t standard = i + 2 * p - ext >= 0 ? (i + 2 * p - ext) / s + 1 : 0;
    if (!free_far && standard >= o_lo && standard <= o_hi)
        return standard;
    return harness_range(r, o_lo, o_hi);
}

static inline int64_t harness_channels(harness_rng *r, int64_t max)
{
    /* A quarter on multiples of 8, where blocked and SIMD primitives take
     * their fast paths; the rest anywhere, mostly off the blocks. */
    if (max >= 8 && harness_chance(r, 25))
        return 8 * harness_range(r, 1, max / 8);
    return harness_range(r, 1, max);
}

/* Draws one candidate; 0 when it is invalid or too big (draw again). */
static inline int harness_try_problem(harness_rng *r, harness_kind kind, convsel_problem *p)
{
    static const int64_t kernels[][2] = {
        {1, 1}, {1, 1}, {3, 3}, {3, 3}, {3, 3}, {5, 5}, {7, 7}, {1, 7}, {7, 1}, {2, 2}, {1, 3}, {3, 1}, {3, 5},
    };
    memset(p, 0, sizeof *p);
    p->repeat = 1;
    p->mb = harness_chance(r, 60) ? 1 : harness_range(r, 2, 3);

    int groups = harness_range(r, 0, 99);
    if (kind == HARNESS_3X3_S1)
        groups = groups < 80 ? 0 : groups; /* mostly plain layers */
    if (groups < 55) {
        p->g = 1;
        if (kind == HARNESS_3X3_S1 && harness_chance(r, 50)) {
            /* Winograd kernels often need channels on 16. */
            p->ic = 16 * harness_range(r, 1, 2);
            p->oc = 16 * harness_range(r, 1, 2);
        } else {
            p->ic = harness_channels(r, 40);
            p->oc = harness_channels(r, 40);
        }
    } else if (groups < 75) {
        /* Depthwise, sometimes with a channel multiplier of 2. */
        p->g = harness_channels(r, 32);
        p->ic = p->g;
        p->oc = p->g * (harness_chance(r, 80) ? 1 : 2);
    } else {
        p->g = harness_range(r, 2, 4);
        p->ic = p->g * harness_range(r, 1, 40 / p->g);
        p->oc = p->g * harness_range(r, 1, 40 / p->g);
    }

    if (kind == HARNESS_3X3_S1) {
        p->kh = p->kw = 3;
        p->sh = p->sw = 1;
        p->dh = p->dw = 0;
        p->ph = p->pw = harness_chance(r, 75) ? 1 : 0;
    } else {
        int ki = kind == HARNESS_1X1 ? 0 : (int)harness_range(r, 0, (int64_t)(sizeof kernels / sizeof kernels[0]) - 1);
        p->kh = kernels[ki][0];
        p->kw = kernels[ki][1];
        p->sh = harness_range(r, 1, 3);
        p->sw = harness_chance(r, 80) ? p->sh : harness_range(r, 1, 3);
        if (kind == HARNESS_1X1) {
            p->ph = p->pw = harness_chance(r, 85) ? 0 : 1;
            p->sh = p->sw = harness_chance(r, 60) ? 1 : harness_range(r, 2, 3);
        } else {
            p->ph = harness_range(r, 0, 3);
            p->pw = harness_chance(r, 70) ? p->ph : harness_range(r, 0, 3);
            p->dh = harness_chance(r, 70) ? 0 : harness_range(r, 1, 2);
            p->dw = harness_chance(r, 70) ? p->dh : harness_range(r, 0, 2);
        }
    }
    p->ih = harness_range(r, kind == HARNESS_3X3_S1 ? 2 : 1, 20);
    p->iw = harness_chance(r, 50) ? p->ih : harness_range(r, kind == HARNESS_3X3_S1 ? 2 : 1, 20);
    const int free_far = kind != HARNESS_3X3_S1 && harness_chance(r, 30);
    p->oh = harness_out_size(r, p->ih, p->kh, p->sh, p->ph, p->dh, free_far);
    p->ow = harness_out_size(r, p->iw, p->kw, p->sw, p->pw, p->dw, free_far);
    if (p->oh < 1 || p->ow < 1)
        return 0;
    const double macs = (double)p->mb * (double)p->oc * (double)p->oh * (double)p->ow * (double)(p->ic / p->g) *
                        (double)p->kh * (double)p->kw;
    if (macs > HARNESS_MAX_MACS)
        return 0;
    return convsel_problem_validate(p) == CONVSEL_OK;
}

/* The index-th problem of a seed's stream, of the given kind. Returns 0 only
 * if the generator is broken (no valid problem in many tries). */
static inline int harness_problem(uint64_t seed, uint64_t index, harness_kind kind, convsel_problem *p)
{
    harness_rng r = {seed * 0x100000001b3ull + index * 0x9e3779b97f4a7c15ull + (uint64_t)kind};
    for (int tries = 0; tries < 100000; tries++)
        if (harness_try_problem(&r, kind, p))
            return 1;
    return 0;
}

#endif
