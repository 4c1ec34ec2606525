/*
 * Private to the direct_simd primitive: the plan that create() builds and the
 * per-ISA drivers (direct_simd_avx512.c, direct_simd_avx2.c, and the portable
 * one in direct_simd.c) execute. The kernels themselves are written once in
 * direct_simd_kernels.h and compiled once per instruction set.
 */
#ifndef CONVSEL_DIRECT_SIMD_H
#define CONVSEL_DIRECT_SIMD_H

#include <stdint.h>

#include "convsel.h"

enum ds_mode {
    /* Whole channel blocks per group (g = 1, or ic/g and oc/g multiples of
     * the block): register tiles of oc blocks × output columns. */
    DS_MODE_MAIN,
    /* ic/g = oc/g = c with block % c == 0 (depthwise when c = 1): lanes are
     * channels, c permuted copies of the input vector per tap. */
    DS_MODE_GROUPED,
    /* Everything else (groups straddling channel blocks): scalar loops. */
    DS_MODE_GENERAL,
};

struct ds_plan {
    enum ds_mode mode;
    int64_t block;
    /* The geometry the kernels see. A 1×1, stride-1, unpadded layer is
     * presented as one row of oh·ow columns, so tiles never end at a row. */
    int64_t mb, g, ih, iw, oh, ow, kh, kw, sh, sw, ph, pw, dh, dw;
    int64_t ic, oc, icg, ocg;
    int64_t nb_ic, nb_oc;       /* channel blocks of the src / dst tensors */
    int64_t nb_ic_g, nb_oc_g;   /* channel blocks per group (MAIN) */
    int64_t ocb;                /* most oc blocks per register tile (MAIN) */
    int64_t nq;                 /* oc-block groups per group, sizes ocb or ocb - 1 */
    int64_t ib_chunk;           /* ic blocks per pass, to keep the pass's weights in L2 */
    int64_t seg;                /* output columns per work item */
    int q_inner;                /* work items walk oc-block groups inside a segment */
    int64_t sgc;                /* group size c (GROUPED) */
    float *weights;             /* reordered for the mode (plain goihw for GENERAL) */
    int32_t *perm;              /* GROUPED, c > 1: c index vectors of block lanes */
};

/* The q-th of nq groups that share nb oc blocks as evenly as possible (sizes
 * differ by at most one): its first block and its size. */
static inline void ds_group(int64_t nb, int64_t nq, int64_t q, int64_t *first, int64_t *size)
{
    const int64_t base = nb / nq, rem = nb % nq;
    *first = q * base + (q < rem ? q : rem);
    *size = base + (q < rem);
}

/* What one instruction set provides: its channel block, the register tiles
 * it has kernels for, and the driver. */
struct ds_isa {
    const char *name;
    int64_t block;
    int64_t ocb_max;
    int64_t owb_max[5]; /* most columns in a tile of [ocb] oc blocks */
    void (*run)(const struct ds_plan *plan, const float *src, float *dst);
};

extern const struct ds_isa convsel_direct_simd_avx512;
extern const struct ds_isa convsel_direct_simd_avx2;
extern const struct ds_isa convsel_direct_simd_portable;

/* The scalar path of DS_MODE_GENERAL, shared by every ISA's driver. */
void convsel_direct_simd_run_general(const struct ds_plan *plan, const float *src, float *dst);

#endif
