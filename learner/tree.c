/*
 * One regression tree, grown depth-first to max_depth on binned features.
 *
 * Each node's split comes from per-feature histograms of gradient and hessian
 * sums over its rows. Only the smaller child's histogram is built from rows;
 * the larger one's is the parent's minus the smaller's (the subtraction trick),
 * which halves the work per level at least. Pending nodes sit on an explicit
 * stack, so at most max_depth + 2 histograms are alive at once.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "learner.h"

/* Default row × feature pairs below which a histogram is built on one
 * thread: an OpenMP barrier costs microseconds on an idle machine but can
 * cost milliseconds on a loaded one (a sibling thread descheduled), against
 * about 2 ms of work per million pairs. */
#define PARALLEL_MIN_WORK ((size_t)1 << 20)

typedef struct hist_bin {
    double g, h;
    uint64_t n;
} hist_bin;

typedef struct pending {
    int32_t node;
    size_t begin, end; /* rows[begin..end) */
    int depth;
    int hist;          /* index in the pool, -1 when not built */
    double g, h;
} pending;

typedef struct split {
    double gain;
    int32_t feature;
    int bin;           /* numeric: codes <= bin go left */
    uint64_t cat_left; /* categorical: bit (code - 1) set goes left */
    double gl, hl;
    uint64_t nl;
} split;

typedef struct grower {
    const convsel_tree_data *data;
    const convsel_tree_params *params;
    size_t *rows, *scratch;
    double *ordered_g, *ordered_h; /* a node's gradients (hessians) in its row order */
    int32_t *features; /* the features this tree may use */
    size_t n_features;
    hist_bin **pool;
    int *free_list;
    int pool_size, pool_cap, n_free;
    convsel_node *nodes;
    size_t n_nodes, cap_nodes;
} grower;

static int hist_take(grower *gr)
{
    if (gr->n_free > 0)
        return gr->free_list[--gr->n_free];
    if (gr->pool_size == gr->pool_cap)
        return -1;
    size_t bytes = gr->data->n_features * CONVSEL_MAX_BINS * sizeof(hist_bin);
    gr->pool[gr->pool_size] = malloc(bytes ? bytes : 1);
    if (!gr->pool[gr->pool_size])
        return -1;
    return gr->pool_size++;
}

static void hist_give(grower *gr, int id)
{
    if (id >= 0)
        gr->free_list[gr->n_free++] = id;
}

/* Fills the histograms of the used features over rows[begin..end). Each
 * feature is summed by one thread in row order: the sums, and so the tree, do
 * not depend on the thread count. The node's gradients are gathered once into
 * row order, not once per feature; with unit hessians (hess NULL) a bin's
 * hessian is its count, the very sum of its ones. */
static void hist_build(grower *gr, hist_bin *hist, size_t begin, size_t end)
{
    const convsel_tree_data *d = gr->data;
    const size_t *rows = gr->rows + begin;
    const size_t m = end - begin;
    double *og = gr->ordered_g, *oh = d->hess ? gr->ordered_h : NULL;
    for (size_t i = 0; i < m; i++)
        og[i] = d->grad[rows[i]];
    for (size_t i = 0; oh && i < m; i++)
        oh[i] = d->hess[rows[i]];
    long nf = (long)gr->n_features;
    size_t work = m * gr->n_features;
    size_t min_work = gr->params->parallel_min_work ? gr->params->parallel_min_work : PARALLEL_MIN_WORK;
#pragma omp parallel for num_threads(gr->params->threads) schedule(static) if (work >= min_work)
    for (long k = 0; k < nf; k++) {
        int32_t f = gr->features[k];
        hist_bin *h = hist + (size_t)f * CONVSEL_MAX_BINS;
        const uint8_t *codes = d->codes + (size_t)f * d->n_rows;
        const int nb = d->bins->n_bins[f];
        memset(h, 0, (size_t)nb * sizeof *h);
        if (oh) {
            for (size_t i = 0; i < m; i++) {
                hist_bin *b = &h[codes[rows[i]]];
                b->g += og[i];
                b->h += oh[i];
                b->n++;
            }
        } else {
            for (size_t i = 0; i < m; i++) {
                hist_bin *b = &h[codes[rows[i]]];
                b->g += og[i];
                b->n++;
            }
            for (int b = 0; b < nb; b++)
                h[b].h = (double)h[b].n;
        }
    }
}

static void hist_subtract(grower *gr, hist_bin *parent, const hist_bin *child)
{
    for (size_t k = 0; k < gr->n_features; k++) {
        int32_t f = gr->features[k];
        hist_bin *p = parent + (size_t)f * CONVSEL_MAX_BINS;
        const hist_bin *c = child + (size_t)f * CONVSEL_MAX_BINS;
        for (int b = 0; b < gr->data->bins->n_bins[f]; b++) {
            p[b].g -= c[b].g;
            p[b].h -= c[b].h;
            p[b].n -= c[b].n;
        }
    }
}

static double score(double g, double h, double lambda)
{
    return g * g / (h + lambda);
}

typedef struct cat_order {
    double ratio;
    int code;
} cat_order;

static int cmp_cat(const void *a, const void *b)
{
    const cat_order *x = a, *y = b;
    if (x->ratio != y->ratio)
        return x->ratio < y->ratio ? -1 : 1;
    return x->code - y->code;
}

/* The best split of one feature's histogram, or gain -inf when none is
 * allowed. Ties keep the first candidate, so the choice is deterministic. */
static split best_of_feature(const grower *gr, int32_t f, const hist_bin *h, double g, double hs, uint64_t n)
{
    const convsel_tree_params *p = gr->params;
    int nb = gr->data->bins->n_bins[f];
    double parent = score(g, hs, p->lambda);
    split best = {.gain = -INFINITY, .feature = f};
    if (!gr->data->bins->categorical[f]) {
        double gl = 0, hl = 0;
        uint64_t nl = 0;
        for (int b = 0; b + 1 < nb; b++) {
            gl += h[b].g;
            hl += h[b].h;
            nl += h[b].n;
            if (nl < p->min_leaf)
                continue;
            if (n - nl < p->min_leaf)
                break;
            double gain = score(gl, hl, p->lambda) + score(g - gl, hs - hl, p->lambda) - parent;
            if (gain > best.gain) {
                best.gain = gain;
                best.bin = b;
                best.gl = gl, best.hl = hl, best.nl = nl;
            }
        }
        return best;
    }
    /* Categorical: order the categories by their mean gradient and scan the
     * prefixes of that order, which finds the best two-way partition for
     * squared error (Fisher 1958), as LightGBM does. */
    cat_order order[CONVSEL_MAX_CATEGORIES];
    int m = 0;
    for (int c = 1; c < nb && c <= CONVSEL_MAX_CATEGORIES; c++)
        if (h[c].n > 0)
            order[m++] = (cat_order){h[c].g / (h[c].h + p->lambda), c};
    qsort(order, (size_t)m, sizeof *order, cmp_cat);
    double gl = 0, hl = 0;
    uint64_t nl = 0, mask = 0;
    for (int k = 0; k + 1 < m; k++) {
        const hist_bin *b = &h[order[k].code];
        gl += b->g;
        hl += b->h;
        nl += b->n;
        mask |= 1ull << (order[k].code - 1);
        if (nl < p->min_leaf || n - nl < p->min_leaf)
            continue;
        double gain = score(gl, hl, p->lambda) + score(g - gl, hs - hl, p->lambda) - parent;
        if (gain > best.gain) {
            best.gain = gain;
            best.cat_left = mask;
            best.gl = gl, best.hl = hl, best.nl = nl;
        }
    }
    return best;
}

static int goes_left(const split *s, uint8_t code)
{
    if (s->cat_left)
        return code > 0 && ((s->cat_left >> (code - 1)) & 1u);
    return code <= s->bin;
}

/* Stable partition of rows[begin..end): left rows first, in their order. */
static size_t partition(grower *gr, const split *s, size_t begin, size_t end)
{
    const uint8_t *codes = gr->data->codes + (size_t)s->feature * gr->data->n_rows;
    size_t nl = 0, nr = 0;
    for (size_t i = begin; i < end; i++) {
        size_t r = gr->rows[i];
        if (goes_left(s, codes[r]))
            gr->rows[begin + nl++] = r;
        else
            gr->scratch[nr++] = r;
    }
    memcpy(gr->rows + begin + nl, gr->scratch, nr * sizeof *gr->rows);
    return begin + nl;
}

static int32_t node_add(grower *gr)
{
    convsel_node *nodes = convsel_grow(gr->nodes, gr->n_nodes, &gr->cap_nodes, 64, sizeof *nodes);
    if (!nodes)
        return -1;
    gr->nodes = nodes;
    gr->nodes[gr->n_nodes] = (convsel_node){.feature = -1, .left = -1, .right = -1};
    return (int32_t)gr->n_nodes++;
}

static void make_leaf(grower *gr, const pending *item)
{
    convsel_node *node = &gr->nodes[item->node];
    node->feature = -1;
    node->value = -item->g / (item->h + gr->params->lambda) * gr->params->shrinkage;
}

static convsel_status grow(grower *gr, size_t n_used)
{
    const convsel_tree_data *d = gr->data;
    const convsel_tree_params *p = gr->params;
    pending stack[2 * 64 + 4];
    int top = 0;
    double g = 0, h = 0;
    for (size_t i = 0; i < n_used; i++) {
        g += d->grad[gr->rows[i]];
        h += d->hess ? d->hess[gr->rows[i]] : 1.0;
    }
    if (node_add(gr) < 0)
        return CONVSEL_OUT_OF_MEMORY;
    stack[top++] = (pending){.node = 0, .begin = 0, .end = n_used, .depth = 0, .hist = -1, .g = g, .h = h};
    while (top > 0) {
        pending item = stack[--top];
        size_t n = item.end - item.begin;
        if (item.depth >= p->max_depth || n < 2 * p->min_leaf || n < 2 || gr->n_features == 0) {
            make_leaf(gr, &item);
            hist_give(gr, item.hist);
            continue;
        }
        if (item.hist < 0) {
            item.hist = hist_take(gr);
            if (item.hist < 0)
                return CONVSEL_OUT_OF_MEMORY;
            hist_build(gr, gr->pool[item.hist], item.begin, item.end);
        }
        hist_bin *hist = gr->pool[item.hist];
        split best = {.gain = -INFINITY, .feature = -1};
        for (size_t k = 0; k < gr->n_features; k++) {
            int32_t f = gr->features[k];
            split s = best_of_feature(gr, f, hist + (size_t)f * CONVSEL_MAX_BINS, item.g, item.h, n);
            if (s.gain > best.gain)
                best = s;
        }
        /* The epsilon keeps rounding noise from growing useless splits. */
        if (best.feature < 0 || !(best.gain > p->min_gain + 1e-12)) {
            make_leaf(gr, &item);
            hist_give(gr, item.hist);
            continue;
        }
        size_t mid = partition(gr, &best, item.begin, item.end);
        int32_t left = node_add(gr), right = node_add(gr);
        if (left < 0 || right < 0)
            return CONVSEL_OUT_OF_MEMORY;
        convsel_node *node = &gr->nodes[item.node];
        node->feature = best.feature;
        node->cat_left = best.cat_left;
        node->threshold = best.cat_left ? 0.0f : d->bins->upper[(size_t)best.feature * CONVSEL_MAX_BINS + best.bin];
        if (!best.cat_left && best.bin == 0)
            node->threshold = -INFINITY; /* only the missing bin goes left */
        node->left = left;
        node->right = right;
        node->value = -item.g / (item.h + p->lambda) * p->shrinkage; /* kept for inspection */

        pending l = {left, item.begin, mid, item.depth + 1, -1, best.gl, best.hl};
        pending r = {right, mid, item.end, item.depth + 1, -1, item.g - best.gl, item.h - best.hl};
        int children_split = item.depth + 1 < p->max_depth;
        if (children_split) {
            pending *small = (mid - item.begin <= item.end - mid) ? &l : &r;
            pending *large = small == &l ? &r : &l;
            small->hist = hist_take(gr);
            if (small->hist < 0)
                return CONVSEL_OUT_OF_MEMORY;
            hist_build(gr, gr->pool[small->hist], small->begin, small->end);
            hist_subtract(gr, hist, gr->pool[small->hist]);
            large->hist = item.hist;
        } else {
            hist_give(gr, item.hist);
        }
        stack[top++] = r;
        stack[top++] = l;
    }
    return CONVSEL_OK;
}

convsel_status convsel_tree_grow(const convsel_tree_data *data, size_t *rows, size_t n_used,
                                 const uint8_t *use_feature, const convsel_tree_params *params, convsel_tree *tree)
{
    memset(tree, 0, sizeof *tree);
    if (params->max_depth < 0 || params->max_depth > 64)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "max_depth must be in [0, 64] (got %d)", params->max_depth);
    grower gr = {.data = data, .params = params, .rows = rows};
    gr.pool_cap = params->max_depth + 3;
    gr.pool = calloc((size_t)gr.pool_cap, sizeof *gr.pool);
    gr.free_list = calloc((size_t)gr.pool_cap, sizeof *gr.free_list);
    gr.scratch = malloc((n_used ? n_used : 1) * sizeof *gr.scratch);
    gr.ordered_g = malloc((n_used ? n_used : 1) * sizeof *gr.ordered_g);
    gr.ordered_h = data->hess ? malloc((n_used ? n_used : 1) * sizeof *gr.ordered_h) : NULL;
    gr.features = malloc((data->n_features ? data->n_features : 1) * sizeof *gr.features);
    convsel_status st = CONVSEL_OUT_OF_MEMORY;
    if (gr.pool && gr.free_list && gr.scratch && gr.ordered_g && (gr.ordered_h || !data->hess) && gr.features) {
        for (size_t f = 0; f < data->n_features; f++)
            if (!use_feature || use_feature[f])
                gr.features[gr.n_features++] = (int32_t)f;
        st = grow(&gr, n_used);
    }
    for (int i = 0; i < gr.pool_size; i++)
        free(gr.pool[i]);
    free(gr.pool);
    free(gr.free_list);
    free(gr.scratch);
    free(gr.ordered_g);
    free(gr.ordered_h);
    free(gr.features);
    if (st != CONVSEL_OK) {
        free(gr.nodes);
        return convsel_error(st, "out of memory growing a tree on %zu rows", n_used);
    }
    tree->nodes = gr.nodes;
    tree->n_nodes = gr.n_nodes;
    return CONVSEL_OK;
}

void convsel_tree_free(convsel_tree *tree)
{
    if (!tree)
        return;
    free(tree->nodes);
    tree->nodes = NULL;
    tree->n_nodes = 0;
}
