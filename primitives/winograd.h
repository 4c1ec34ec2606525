/*
 * Winograd F(2×2,3×3) and F(4×4,3×3): the pieces shared by primitives/winograd.c
 * (plan, weight transform, driver) and the per-ISA kernels in winograd_avx512.c,
 * winograd_avx2.c and the portable ones in winograd.c. Private: tests include it
 * to check the SIMD transforms against the portable ones.
 *
 * Data flow of one run, for a chunk of T tiles (over all images):
 *   V[xi] (T × ic)  = input transform of the chunk's tiles, lanes = channels
 *   M[xi] (T × oc)  = V[xi] × U[xi]   (one GEMM per transform element xi, per group)
 *   dst             = output transform of M
 * V and M are row-major with row strides ldv / ldm and xi_stride floats
 * between the xi planes. Activations are in nChw<block>c.
 */
#ifndef CONVSEL_WINOGRAD_H
#define CONVSEL_WINOGRAD_H

#include <stddef.h>
#include <stdint.h>

#define CONVSEL_WINO_MIN(a, b) ((a) < (b) ? (a) : (b))

/* Tile geometry. Tiles are numbered over images: tile = (n * tiles_h + ty) * tiles_w + tx. */
struct convsel_wino_geom {
    int m;     /* output tile edge: 2 for F(2,3), 4 for F(4,3); input tile edge m + 2 */
    int block; /* channels per layout block = SIMD lanes */
    int64_t ih, iw, oh, ow;
    int64_t ph, pw; /* top / left padding; the far sides follow from oh, ow */
    int64_t tiles_h, tiles_w;
    int64_t cb_in, cb_out; /* channel blocks of src and dst */
};

/* Input transform of tiles [tile, tile + count) and channel blocks [cb0, cb1):
 * for each element xi of the (m+2)² transform, row r of the chunk and lane l,
 * v[xi * xi_stride + r * ldv + cb * block + l] = (B^T d B)[xi] of channel
 * cb * block + l. Reads outside the image are zeros. */
typedef void (*convsel_wino_input_fn)(const struct convsel_wino_geom *geom, const float *src, int64_t cb0,
                                      int64_t cb1, int64_t tile, int64_t count, float *v, int64_t ldv,
                                      int64_t xi_stride);

/* Output transform: reads m as the input transform writes v, and stores the
 * m×m outputs of each tile (clipped at the image's bottom/right edge) into
 * dst's channel blocks [cb0, cb1). */
typedef void (*convsel_wino_output_fn)(const struct convsel_wino_geom *geom, const float *m, int64_t ldm,
                                       int64_t xi_stride, int64_t cb0, int64_t cb1, int64_t tile, int64_t count,
                                       float *dst);

/* C (rows × n) = A (rows × k, row stride lda) × B, where B is packed in
 * panels of nr columns (panel p: k × nr floats at b + p * k * nr, zero past n).
 * Exactly n columns of C are written. */
typedef void (*convsel_wino_gemm_fn)(int64_t rows, int64_t k, int64_t n, const float *a, int64_t lda,
                                     const float *b, float *c, int64_t ldc);

/* One instruction set's kernels. gemm is NULL where OpenBLAS does the products. */
struct convsel_wino_kernels {
    int block;
    int nr; /* GEMM panel width (multiple of block); 0 with gemm == NULL */
    int mr; /* GEMM rows per register block, a hint for the chunk size */
    convsel_wino_input_fn input[2];   /* [0]: F(2,3), [1]: F(4,3) */
    convsel_wino_output_fn output[2];
    convsel_wino_gemm_fn gemm;
};

extern const struct convsel_wino_kernels convsel_wino_portable;
extern const struct convsel_wino_kernels convsel_wino_avx2;
extern const struct convsel_wino_kernels convsel_wino_avx512;

/*
 * Knobs read at create time, for tests and bench/bench_winograd.c only (not
 * thread-safe to change while instances are being created). See the plan in
 * winograd.c for what they trade.
 */
struct convsel_wino_tuning {
    size_t small_chunk_bytes; /* V + M of a chunk when U fits in L3 (default 768 KiB: L2) */
    size_t big_chunk_bytes;   /* V + M of a chunk when it does not (default 6 MiB) */
    size_t u_l3_bytes;        /* U up to this fits in L3 (default 12 MiB) */
    size_t ublock_bytes;      /* bytes of U[xi] one GEMM call sweeps (default 512 KiB) */
    int force_blas;           /* 1: OpenBLAS does the products on the SIMD paths too */
    int force_schedule;       /* 0: automatic; 1: a chunk per thread; 2: the team shares each chunk */
};
extern struct convsel_wino_tuning convsel_wino_tuning;

/*
 * The transform matrices in double, row-major: at (m × (m+2)), g ((m+2) × 3),
 * bt ((m+2) × (m+2)). F(2,3) uses the points 0, ±1, ∞ (Lavin's matrices);
 * F(4,3) uses 0, 1, -1, 2, -1/2, ∞, whose rounding error measured ~3× below
 * that of 0, ±1, ±2 (Barabasz et al. recommend this kind of set). The SIMD
 * and portable kernels hard-code the same matrices.
 */
void convsel_wino_matrices(int m, const double **at, const double **g, const double **bt);

#endif
