/*
 * Profiling configurations beyond the networks at hand (docs/sampling.md):
 * perturbations of real layers, which stay close to what networks contain,
 * and random configurations, which reach the corners no network lists
 * (odd channel counts, 1×7 kernels, tiny or huge spatial sizes). A learned
 * model is only as good as the spread of what it was trained on.
 *
 * Everything is drawn from one seeded generator, in a fixed order, so a
 * seed and a base list name the same sample everywhere: shards of one
 * profile and a resumed profile see the same configurations.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dataset_internal.h"
#include "internal.h"

/* Attempts to find a configuration not drawn before, before giving up. */
#define MAX_ATTEMPTS 1000
#define MAX_SPATIAL 448

struct convsel_sampler {
    convsel_sampler_options opts;
    uint64_t state;
    convsel_problem *bases;
    size_t n_bases, capacity;
    struct convsel_strmap base_shapes; /* bases deduplicated by shape */
    struct convsel_strmap drawn;       /* samples deduplicated by shape */
    size_t n_drawn;
};

void convsel_sampler_options_default(convsel_sampler_options *opts)
{
    if (!opts)
        return;
    opts->seed = 1;
    opts->max_flops = 2e9;
    opts->max_bytes = 256.0 * 1024 * 1024;
    opts->perturb_frac = 0.6;
}

/* ---------------------------------------------------------------- the generator */

/* splitmix64: one 64-bit word of state, statistically sound for this use,
 * and the same stream on every platform. */
static uint64_t next_u64(convsel_sampler *s)
{
    uint64_t z = (s->state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

/* Uniform in [0, 1). */
static double uniform(convsel_sampler *s)
{
    return (double)(next_u64(s) >> 11) * 0x1.0p-53;
}

/* Uniform integer in [lo, hi]. */
static int64_t range(convsel_sampler *s, int64_t lo, int64_t hi)
{
    return lo + (int64_t)(next_u64(s) % (uint64_t)(hi - lo + 1));
}

/* Log-uniform integer in [lo, hi]: as many 3-channel layers as 300-channel
 * ones would be wrong, so sizes spread evenly over magnitudes. */
static int64_t log_range(convsel_sampler *s, int64_t lo, int64_t hi)
{
    double x = exp(log((double)lo) + uniform(s) * (log((double)hi + 1.0) - log((double)lo)));
    int64_t v = (int64_t)x;
    return v < lo ? lo : v > hi ? hi : v;
}

/* ---------------------------------------------------------------- bases */

convsel_status convsel_sampler_create(const convsel_sampler_options *opts, convsel_sampler **sampler)
{
    if (!sampler)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "sampler out-parameter is NULL");
    *sampler = NULL;
    convsel_sampler_options o;
    convsel_sampler_options_default(&o);
    if (opts)
        o = *opts;
    if (!(o.max_flops > 0.0) || !(o.max_bytes > 0.0) || !(o.perturb_frac >= 0.0 && o.perturb_frac <= 1.0))
        return convsel_error(CONVSEL_INVALID_ARGUMENT,
                             "sampler: max_flops and max_bytes must be > 0 and perturb_frac in [0, 1]");
    convsel_sampler *s = calloc(1, sizeof *s);
    if (!s)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "sampler: out of memory");
    s->opts = o;
    s->state = o.seed;
    convsel_strmap_init(&s->base_shapes);
    convsel_strmap_init(&s->drawn);
    *sampler = s;
    return CONVSEL_OK;
}

void convsel_sampler_destroy(convsel_sampler *sampler)
{
    if (!sampler)
        return;
    convsel_strmap_free(&sampler->base_shapes);
    convsel_strmap_free(&sampler->drawn);
    free(sampler->bases);
    free(sampler);
}

size_t convsel_sampler_base_count(const convsel_sampler *sampler)
{
    return sampler ? sampler->n_bases : 0;
}

/* 1 when added, 0 when its shape (at any batch) is there already. */
static int add_base(convsel_sampler *s, const convsel_problem *layer, convsel_status *st)
{
    char key[CONVSEL_KEY_MAX];
    convsel_problem p = *layer;
    p.mb = 1;
    *st = CONVSEL_OK;
    if (convsel_problem_validate(&p) != CONVSEL_OK) {
        *st = convsel_error(CONVSEL_INVALID_ARGUMENT, "sampler: invalid base layer: %s", convsel_last_error());
        return 0;
    }
    convsel_shape_key(&p, key, sizeof key);
    int put = convsel_strmap_put(&s->base_shapes, key, s->n_bases);
    if (put <= 0) {
        if (put < 0)
            *st = convsel_error(CONVSEL_OUT_OF_MEMORY, "sampler: out of memory");
        return 0;
    }
    convsel_problem *bases = convsel_grow(s->bases, s->n_bases, &s->capacity, 64, sizeof *bases);
    if (!bases) {
        *st = convsel_error(CONVSEL_OUT_OF_MEMORY, "sampler: out of memory");
        return 0;
    }
    s->bases = bases;
    s->bases[s->n_bases++] = p;
    return 1;
}

convsel_status convsel_sampler_add_base(convsel_sampler *sampler, const convsel_problem *layer)
{
    convsel_status st;
    if (!sampler || !layer)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "sampler and layer are required");
    add_base(sampler, layer, &st);
    return st;
}

/* Cuts a '#' comment outside a quoted name, and trailing blanks. */
static void strip_comment(char *line)
{
    int quoted = 0;
    for (char *c = line; *c; c++) {
        if (*c == '"')
            quoted = !quoted;
        else if (*c == '#' && !quoted) {
            *c = '\0';
            break;
        }
    }
}

static convsel_status add_network_file(convsel_sampler *s, const char *path, size_t *added)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return convsel_error(CONVSEL_IO_ERROR, "%s: %s", path, strerror(errno));
    const char *slash = strrchr(path, '/');
    char base[64];
    snprintf(base, sizeof base, "%s", slash ? slash + 1 : path);
    char *dot = strrchr(base, '.');
    if (dot && dot != base)
        *dot = '\0';
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0;
    convsel_status st = CONVSEL_OK;
    while (st == CONVSEL_OK && getline(&line, &cap, f) >= 0) {
        lineno++;
        strip_comment(line);
        convsel_problem p;
        /* Lines convsel does not support (1D, 3D, too large) are not bases;
         * the shared benchmark lists contain some on purpose. */
        if (strspn(line, " \t\r\n") == strlen(line) || convsel_problem_parse(line, &p) != CONVSEL_OK)
            continue;
        if (!p.name[0])
            snprintf(p.name, sizeof p.name, "%s:%d", base, lineno);
        *added += (size_t)add_base(s, &p, &st);
    }
    free(line);
    fclose(f);
    return st;
}

convsel_status convsel_sampler_add_file(convsel_sampler *sampler, const char *path, size_t *added)
{
    size_t count = 0;
    if (added)
        *added = 0;
    if (!sampler || !path)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "sampler and path are required");
    /* A directory's files sorted by byte value, not locale, so the base
     * order (and with it the sample) is the same everywhere. */
    char **files;
    size_t n;
    convsel_status st = convsel_network_files(path, &files, &n);
    for (size_t i = 0; st == CONVSEL_OK && i < n; i++)
        st = add_network_file(sampler, files[i], &count);
    convsel_network_files_free(files, n);
    if (added)
        *added = count;
    return st;
}

/* ---------------------------------------------------------------- drawing */

static int64_t extent(int64_t k, int64_t d)
{
    return (k - 1) * (d + 1) + 1;
}

/* Sets the output sizes from the rest; 0 when the kernel does not fit. */
static int set_outputs(convsel_problem *p)
{
    int64_t eh = extent(p->kh, p->dh), ew = extent(p->kw, p->dw);
    if (eh > p->ih + 2 * p->ph || ew > p->iw + 2 * p->pw)
        return 0;
    p->oh = (p->ih - eh + 2 * p->ph) / p->sh + 1;
    p->ow = (p->iw - ew + 2 * p->pw) / p->sw + 1;
    return 1;
}

static double padded16(int64_t c)
{
    return (double)((c + 15) / 16 * 16);
}

/* Bytes a primitive may need: activations with channels padded to the
 * largest block, weights, and an im2col buffer for one image. */
static double problem_bytes(const convsel_problem *p)
{
    double src = (double)p->mb * padded16(p->ic) * (double)p->ih * (double)p->iw;
    double dst = (double)p->mb * padded16(p->oc) * (double)p->oh * (double)p->ow;
    double wei = (double)p->oc * (double)(p->ic / p->g) * (double)p->kh * (double)p->kw;
    double col = (double)p->ic * (double)p->kh * (double)p->kw * (double)p->oh * (double)p->ow;
    return 4.0 * (src + dst + wei + col);
}

static int within_caps(const convsel_sampler *s, const convsel_problem *p)
{
    return convsel_problem_flops(p) <= s->opts.max_flops && problem_bytes(p) <= s->opts.max_bytes;
}

/* Mostly 1-8 (inference), sometimes up to 32. */
static int64_t draw_batch(convsel_sampler *s)
{
    double u = uniform(s);
    if (u < 0.35)
        return 1;
    if (u < 0.85)
        return range(s, 2, 8);
    return range(s, 9, 32);
}

/* Channel counts: multiples of 16 as in most networks, multiples of 8 that
 * are not of 16, and arbitrary counts whose tails blocked kernels must pad. */
static int64_t draw_channels(convsel_sampler *s, int64_t max)
{
    double u = uniform(s);
    int64_t c;
    if (u < 0.5)
        c = 16 * log_range(s, 1, max / 16);
    else if (u < 0.7)
        c = 8 * (2 * log_range(s, 1, max / 16) - 1);
    else
        c = log_range(s, 1, max);
    return c < 1 ? 1 : c > max ? max : c;
}

static void draw_padding(convsel_sampler *s, int64_t ext, int64_t *pad)
{
    double u = uniform(s);
    if (u < 0.7)
        *pad = (ext - 1) / 2; /* "same" */
    else if (u < 0.95)
        *pad = 0;
    else
        *pad = range(s, 0, ext - 1);
}

static void draw_random(convsel_sampler *s, convsel_problem *p)
{
    static const int64_t kernels[][2] = {{1, 1}, {3, 3}, {5, 5}, {7, 7}, {1, 7}, {7, 1}};
    static const double kernel_cdf[] = {0.30, 0.65, 0.75, 0.83, 0.915, 1.0};
    static const int64_t group_counts[] = {2, 4, 8, 16, 32};
    memset(p, 0, sizeof *p);
    p->repeat = 1;
    p->mb = draw_batch(s);

    double u = uniform(s);
    size_t k = 0;
    while (k + 1 < CONVSEL_ARRAY_SIZE(kernel_cdf) && u >= kernel_cdf[k])
        k++;
    p->kh = kernels[k][0];
    p->kw = kernels[k][1];

    u = uniform(s);
    if (u < 0.70) {
        p->g = 1;
        p->ic = uniform(s) < 0.06 ? range(s, 1, 4) : draw_channels(s, 1024);
        p->oc = draw_channels(s, 1024);
    } else if (u < 0.88) { /* depthwise, sometimes with a channel multiplier */
        p->g = p->ic = draw_channels(s, 1024);
        p->oc = p->ic * (uniform(s) < 0.1 ? 2 : 1);
    } else {
        p->g = group_counts[range(s, 0, (int64_t)CONVSEL_ARRAY_SIZE(group_counts) - 1)];
        p->ic = p->g * draw_channels(s, 64);
        p->oc = p->g * draw_channels(s, 64);
    }

    p->ih = log_range(s, 1, 224);
    p->iw = uniform(s) < 0.8 ? p->ih : log_range(s, 1, 224);
    p->sh = p->sw = uniform(s) < 0.7 ? 1 : 2;
    if (uniform(s) < 0.1) {
        int64_t d = range(s, 1, 2);
        p->dh = p->kh > 1 ? d : 0;
        p->dw = p->kw > 1 ? d : 0;
    }
    draw_padding(s, extent(p->kh, p->dh), &p->ph);
    draw_padding(s, extent(p->kw, p->dw), &p->pw);
    /* A kernel larger than the padded input: grow the input to fit. */
    p->ih = CONVSEL_MAX(p->ih, extent(p->kh, p->dh) - 2 * p->ph);
    p->iw = CONVSEL_MAX(p->iw, extent(p->kw, p->dw) - 2 * p->pw);
    set_outputs(p);
    snprintf(p->name, sizeof p->name, "random~%zu", s->n_drawn);
}

/* Rounds a scaled channel count: half the time to a multiple of 16 as most
 * networks have, a quarter to a multiple of 8, a quarter left as it is. */
static int64_t round_channels(int64_t c, double u)
{
    if (u < 0.5 && c >= 16)
        c = c / 16 * 16;
    else if (u < 0.75 && c >= 8)
        c = c / 8 * 8;
    return c < 1 ? 1 : c;
}

/* Scales the channels of a base by f, keeping its group structure. */
static void scale_channels(convsel_sampler *s, convsel_problem *p, double f_ic, double f_oc)
{
    const double u = uniform(s);
    const int depthwise = p->g > 1 && p->g == p->ic;
    int64_t icg = p->ic / p->g, ocg = p->oc / p->g;
    if (depthwise) {
        const int64_t mult = ocg;
        p->g = p->ic = round_channels((int64_t)llround((double)p->g * f_ic), u);
        p->oc = p->ic * mult;
        return;
    }
    /* First layers (3 or 4 channels) keep their input channels. */
    if (p->ic > 4 || p->g > 1)
        icg = round_channels((int64_t)llround((double)icg * f_ic), u);
    ocg = round_channels((int64_t)llround((double)ocg * f_oc), u);
    p->ic = icg * p->g;
    p->oc = ocg * p->g;
}

static void scale_spatial(convsel_sampler *s, convsel_problem *p)
{
    static const int64_t sizes[] = {7, 13, 14, 17, 28, 31, 35, 56, 64, 73, 112, 150, 224};
    double u = uniform(s);
    double ratio = (double)p->iw / (double)p->ih;
    int64_t ih = p->ih;
    if (u < 0.25)
        return;
    if (u < 0.75)
        ih = (int64_t)llround((double)p->ih * (0.5 + 1.5 * uniform(s)));
    else
        ih = sizes[range(s, 0, (int64_t)CONVSEL_ARRAY_SIZE(sizes) - 1)];
    ih = ih < 1 ? 1 : ih > MAX_SPATIAL ? MAX_SPATIAL : ih;
    int64_t iw = (int64_t)llround((double)ih * ratio);
    p->ih = ih;
    p->iw = iw < 1 ? 1 : iw > MAX_SPATIAL ? MAX_SPATIAL : iw;
}

static void draw_perturbed(convsel_sampler *s, convsel_problem *p)
{
    const size_t b = (size_t)range(s, 0, (int64_t)s->n_bases - 1);
    *p = s->bases[b];
    double f_ic = 0.4 + 1.1 * uniform(s);
    double f_oc = uniform(s) < 0.6 ? f_ic : 0.4 + 1.1 * uniform(s);
    scale_channels(s, p, f_ic, f_oc);
    scale_spatial(s, p);
    p->mb = draw_batch(s);
    p->repeat = 1;
    p->ih = CONVSEL_MAX(p->ih, extent(p->kh, p->dh) - 2 * p->ph);
    p->iw = CONVSEL_MAX(p->iw, extent(p->kw, p->dw) - 2 * p->pw);
    set_outputs(p);
    char name[CONVSEL_NAME_MAX];
    snprintf(name, sizeof name, "%s", s->bases[b].name);
    /* Room for the suffix: a long base name is cut, the suffix kept. */
    char suffix[32];
    int n = snprintf(suffix, sizeof suffix, "~p%zu", s->n_drawn);
    name[CONVSEL_MIN(strlen(name), sizeof name - 1 - (size_t)n)] = '\0';
    snprintf(p->name, sizeof p->name, "%s%s", name, suffix);
}

static void shrink_channels(convsel_problem *p)
{
    const int64_t icg = p->ic / p->g, ocg = p->oc / p->g;
    if (p->g > 1 && p->g == p->ic) {
        const int64_t c = CONVSEL_MAX(1, p->g * 3 / 4);
        p->oc = c * ocg;
        p->g = p->ic = c;
    } else {
        p->ic = CONVSEL_MAX(1, icg * 3 / 4) * p->g;
        p->oc = CONVSEL_MAX(1, ocg * 3 / 4) * p->g;
    }
}

/* Brings a configuration within the caps: batch first, then spatial size
 * (deep layers of real networks are large in channels, small in space),
 * then channels. Stops after a bounded number of steps; the caller rejects
 * what is still too large. */
static void shrink_to_caps(const convsel_sampler *s, convsel_problem *p)
{
    for (int step = 0; step < 200 && !within_caps(s, p); step++) {
        if (p->mb > 1) {
            p->mb /= 2;
        } else {
            /* Not below what the kernel needs (its extent minus the padding). */
            const int64_t ih = CONVSEL_MAX(CONVSEL_MAX(1, p->ih * 3 / 4), extent(p->kh, p->dh) - 2 * p->ph);
            const int64_t iw = CONVSEL_MAX(CONVSEL_MAX(1, p->iw * 3 / 4), extent(p->kw, p->dw) - 2 * p->pw);
            if (ih < p->ih || iw < p->iw) {
                p->ih = CONVSEL_MIN(ih, p->ih);
                p->iw = CONVSEL_MIN(iw, p->iw);
            } else {
                shrink_channels(p);
            }
        }
        set_outputs(p);
    }
}

convsel_status convsel_sampler_next(convsel_sampler *sampler, convsel_problem *problem)
{
    char key[CONVSEL_KEY_MAX];
    if (!sampler || !problem)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "sampler and problem are required");
    convsel_sampler *s = sampler;
    convsel_problem p;
    int found = 0;
    for (int attempt = 0; attempt < MAX_ATTEMPTS && !found; attempt++) {
        if (s->n_bases > 0 && uniform(s) < s->opts.perturb_frac)
            draw_perturbed(s, &p);
        else
            draw_random(s, &p);
        shrink_to_caps(s, &p);
        if (!set_outputs(&p) || !within_caps(s, &p) || convsel_problem_validate(&p) != CONVSEL_OK)
            continue;
        convsel_shape_key(&p, key, sizeof key);
        int put = convsel_strmap_put(&s->drawn, key, s->n_drawn);
        if (put < 0)
            return convsel_error(CONVSEL_OUT_OF_MEMORY, "sampler: out of memory");
        found = put == 1;
    }
    if (!found)
        return convsel_error(CONVSEL_NOT_FOUND, "sampler: no new configuration within the caps after %d attempts",
                             MAX_ATTEMPTS);
    s->n_drawn++;
    *problem = p;
    return CONVSEL_OK;
}
