/*
 * An ensemble laid out for prediction: every tree padded to a complete binary
 * tree of one depth, so a walk is depth steps of index arithmetic
 * (child = 2 i + 1 + right) with no branch and no leaf test, and several rows
 * walk one tree side by side. A leaf above the last level becomes splits that
 * send everything left ("v > +inf" is false, NaN too) down to copies of its
 * value. A node is one 32-bit word and a feature byte: a threshold split's
 * float, or a category split's mask of the codes that go right; the row the
 * walk reads has NaN for categorical features (so "x > word" is false at
 * every category split) and codes 32 for numeric ones (so the mask's bit is
 * 0 at every threshold split), and one expression decides both kinds
 * (convsel_forest_row). The sums are those of convsel_tree_predict, added in
 * the same order, so predictions are bit-identical.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "learner.h"

/* Rows that walk a tree side by side: 8 keeps every walk's state in
 * registers (4 and 16 were slower on the model's 1798 trees). */
#define LOCKSTEP 8

/* Writes tree t in breadth-first order: at[k] is the source node at
 * position k of the complete tree. Returns 0 when the tree is deeper than
 * the forest or a split tests its feature against the feature's kind. */
static int lay_out_tree(const convsel_forest *f, size_t t, const convsel_tree *tree, int32_t *at)
{
    const size_t inner = ((size_t)1 << f->depth) - 1;
    const convsel_node *nodes = tree->nodes;
    uint8_t *feature = f->feature + t * inner;
    uint32_t *word = f->word + t * inner;
    const float inf = INFINITY;
    if (!tree->n_nodes)
        return 0;
    at[0] = 0;
    for (size_t k = 0; k < inner; k++) {
        const convsel_node *n = &nodes[at[k]];
        if (n->feature < 0) {
            feature[k] = 0;
            memcpy(&word[k], &inf, sizeof inf);
            at[2 * k + 1] = at[2 * k + 2] = at[k];
            continue;
        }
        if ((size_t)n->feature >= f->n_features || (n->cat_left != 0) != f->categorical[n->feature] ||
            (n->cat_left >> CONVSEL_FOREST_CODES))
            return 0;
        feature[k] = (uint8_t)n->feature;
        if (n->cat_left)
            word[k] = (uint32_t)~n->cat_left;
        else
            memcpy(&word[k], &n->threshold, sizeof n->threshold);
        at[2 * k + 1] = n->left;
        at[2 * k + 2] = n->right;
    }
    double *leaf = f->leaf + t * (inner + 1);
    for (size_t k = 0; k <= inner; k++) {
        const convsel_node *n = &nodes[at[inner + k]];
        if (n->feature >= 0)
            return 0;
        leaf[k] = n->value;
    }
    return 1;
}

convsel_status convsel_forest_build(const convsel_ensemble *e, int depth, size_t n_features,
                                    int (*is_categorical)(size_t f), convsel_forest *f)
{
    memset(f, 0, sizeof *f);
    if (depth < 0 || depth > CONVSEL_FOREST_MAX_DEPTH || n_features > 256)
        return CONVSEL_NOT_APPLICABLE;
    /* One block for the three arrays, leaves first (8-byte aligned). */
    const size_t inner = ((size_t)1 << depth) - 1, n = e->n_trees;
    const size_t bytes = n * ((inner + 1) * sizeof *f->leaf + inner * (sizeof *f->word + 1));
    f->depth = depth;
    f->n_trees = n;
    f->n_features = n_features;
    f->categorical = calloc(n_features ? n_features : 1, 1);
    f->block = malloc(bytes ? bytes : 1);
    if (!f->block || !f->categorical) {
        convsel_forest_free(f);
        return CONVSEL_OUT_OF_MEMORY; /* no message: the caller walks the trees instead */
    }
    f->leaf = f->block;
    f->word = (uint32_t *)(f->leaf + n * (inner + 1));
    f->feature = (uint8_t *)(f->word + n * inner);
    for (size_t j = 0; j < n_features; j++)
        f->categorical[j] = is_categorical(j) != 0;
    int32_t at[((size_t)2 << CONVSEL_FOREST_MAX_DEPTH) - 1];
    for (size_t t = 0; t < n; t++)
        if (!lay_out_tree(f, t, &e->trees[t], at)) {
            convsel_forest_free(f);
            return CONVSEL_NOT_APPLICABLE;
        }
    return CONVSEL_OK;
}

void convsel_forest_free(convsel_forest *f)
{
    if (!f)
        return;
    free(f->block);
    free(f->categorical);
    memset(f, 0, sizeof *f);
}

void convsel_forest_row(const convsel_forest *f, const float *x, float *xf, uint8_t *codes)
{
    for (size_t j = 0; j < f->n_features; j++) {
        float v = x[j];
        xf[j] = v;
        codes[j] = CONVSEL_FOREST_CODES;
        if (f->categorical[j]) {
            xf[j] = NAN;
            codes[j] = 2 * CONVSEL_FOREST_CODES;
            if (v >= 0.0f && v < (float)CONVSEL_FOREST_CODES && v == (float)(int)v)
                codes[j] = (uint8_t)(int)v;
        }
    }
}

void convsel_forest_add_rows(const convsel_forest *f, size_t first, size_t count, const float *xf,
                             const uint8_t *codes, size_t n, double *sum)
{
    const size_t inner = ((size_t)1 << f->depth) - 1, nf = f->n_features;
    for (size_t r0 = 0; r0 < n; r0 += LOCKSTEP) {
        const size_t m = n - r0 < LOCKSTEP ? n - r0 : LOCKSTEP;
        const float *row[LOCKSTEP];
        const uint8_t *code[LOCKSTEP];
        double acc[LOCKSTEP];
        for (size_t r = 0; r < LOCKSTEP; r++) { /* the last row again where fewer are left */
            row[r] = xf + (r0 + (r < m ? r : m - 1)) * nf;
            code[r] = codes + (r0 + (r < m ? r : m - 1)) * nf;
            acc[r] = sum[r0 + (r < m ? r : m - 1)];
        }
        for (size_t t = first; t < first + count; t++) {
            const uint8_t *feature = f->feature + t * inner;
            const uint32_t *word = f->word + t * inner;
            size_t at[LOCKSTEP] = {0};
            for (int d = 0; d < f->depth; d++)
                for (size_t r = 0; r < LOCKSTEP; r++) {
                    /* Right: x > the threshold (false at a category split,
                     * where x is NaN); or the code's bit in the mask (0 at a
                     * threshold split: a numeric feature's code is 32 and
                     * the word is widened to 64 bits); or no code (64, whose shift is 0). */
                    size_t k = at[r], j = feature[k], c = code[r][j];
                    float threshold;
                    memcpy(&threshold, &word[k], sizeof threshold);
                    size_t right = (size_t)(row[r][j] > threshold) | (size_t)(((uint64_t)word[k] >> (c & 63u)) & 1u) | (c >> 6);
                    at[r] = 2 * k + 1 + right;
                }
            const double *leaf = f->leaf + t * (inner + 1);
            for (size_t r = 0; r < LOCKSTEP; r++)
                acc[r] += leaf[at[r] - inner];
        }
        for (size_t r = 0; r < m; r++)
            sum[r0 + r] = acc[r];
    }
}
