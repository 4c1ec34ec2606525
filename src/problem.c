/*
 * Convolution problem descriptors in oneDNN benchdnn's syntax, e.g.
 *   g1mb50ic3ih224oc64oh112kh7sh2ph3n"resnet_50:conv1"
 * '_' is ignored, so it can separate groups of keys.
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

enum key {
    K_G, K_MB, K_IC, K_IH, K_IW, K_OC, K_OH, K_OW, K_KH, K_KW, K_SH, K_SW, K_PH, K_PW, K_DH, K_DW,
    K_ID, K_OD, K_KD, K_SD, K_PD, K_DD, K_COUNT
};

static const char *const key_names[K_COUNT] = {
    "g", "mb", "ic", "ih", "iw", "oc", "oh", "ow", "kh", "kw", "sh", "sw", "ph", "pw", "dh", "dw",
    "id", "od", "kd", "sd", "pd", "dd",
};

static int64_t extent(int64_t k, int64_t d)
{
    return (k - 1) * (d + 1) + 1;
}

static int64_t out_size(int64_t i, int64_t k, int64_t s, int64_t p, int64_t d)
{
    return (i - extent(k, d) + 2 * p) / s + 1;
}

/* benchdnn's rule for an omitted padding when the output size is given: the
 * symmetric padding that produces that output. */
static int64_t deduced_pad(int64_t o, int64_t i, int64_t k, int64_t s, int64_t d)
{
    int64_t p = ((o - 1) * s - i + extent(k, d)) / 2;
    return p > 0 ? p : 0;
}

int64_t convsel_problem_pad_bottom(const convsel_problem *p)
{
    return (p->oh - 1) * p->sh + extent(p->kh, p->dh) - p->ih - p->ph;
}

int64_t convsel_problem_pad_right(const convsel_problem *p)
{
    return (p->ow - 1) * p->sw + extent(p->kw, p->dw) - p->iw - p->pw;
}

double convsel_problem_flops(const convsel_problem *p)
{
    return 2.0 * (double)p->mb * (double)p->oc * (double)p->oh * (double)p->ow * (double)(p->ic / p->g) *
           (double)p->kh * (double)p->kw;
}

size_t convsel_problem_src_elems(const convsel_problem *p)
{
    return (size_t)p->mb * (size_t)p->ic * (size_t)p->ih * (size_t)p->iw;
}

size_t convsel_problem_weights_elems(const convsel_problem *p)
{
    return (size_t)p->oc * (size_t)(p->ic / p->g) * (size_t)p->kh * (size_t)p->kw;
}

size_t convsel_problem_dst_elems(const convsel_problem *p)
{
    return (size_t)p->mb * (size_t)p->oc * (size_t)p->oh * (size_t)p->ow;
}

size_t convsel_max_tensor_bytes(void)
{
    const char *env = getenv("CONVSEL_MAX_TENSOR_BYTES");
    if (env && *env) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(env, &end, 10);
        if (errno == 0 && *end == '\0' && v > 0)
            return (size_t)v;
    }
    return (size_t)4 << 30;
}

/* Bytes of a 4-D f32 tensor with its second dimension padded to 16 (the
 * largest blocked layout), or 0 on size_t overflow. */
static size_t tensor_bytes(int64_t a, int64_t b, int64_t c, int64_t d)
{
    size_t r = sizeof(float), bp = (size_t)CONVSEL_DIV_UP(b, 16) * 16;
    if (__builtin_mul_overflow(r, (size_t)a, &r) || __builtin_mul_overflow(r, bp, &r) ||
        __builtin_mul_overflow(r, (size_t)c, &r) || __builtin_mul_overflow(r, (size_t)d, &r))
        return 0;
    return r;
}

static convsel_status check_tensor(const char *what, int64_t a, int64_t b, int64_t c, int64_t d)
{
    size_t bytes = tensor_bytes(a, b, c, d), limit = convsel_max_tensor_bytes();
    if (bytes == 0)
        return convsel_error(CONVSEL_TOO_LARGE, "%s tensor %lldx%lldx%lldx%lld overflows size_t", what,
                             (long long)a, (long long)b, (long long)c, (long long)d);
    if (bytes > limit)
        return convsel_error(CONVSEL_TOO_LARGE,
                             "%s tensor %lldx%lldx%lldx%lld needs %.1f GiB, over the %.1f GiB limit "
                             "(CONVSEL_MAX_TENSOR_BYTES)",
                             what, (long long)a, (long long)b, (long long)c, (long long)d,
                             (double)bytes / (1 << 30), (double)limit / (1 << 30));
    return CONVSEL_OK;
}

static convsel_status check_axis(const char *axis, int64_t i, int64_t o, int64_t k, int64_t s, int64_t p,
                                 int64_t d)
{
    int64_t ext = extent(k, d);
    /* The implied far-side padding: at least 1-s (trailing input rows that a
     * stride skips), at most what a kernel extent or the near padding allows. */
    int64_t far = (o - 1) * s + ext - i - p;
    int64_t far_max = CONVSEL_MAX(p, ext - 1);
    if (far < 1 - s || far > far_max)
        return convsel_error(CONVSEL_INVALID_ARGUMENT,
                             "inconsistent output size o%s%lld: i%s%lld k%s%lld s%s%lld p%s%lld d%s%lld give o%s%lld",
                             axis, (long long)o, axis, (long long)i, axis, (long long)k, axis, (long long)s, axis,
                             (long long)p, axis, (long long)d, axis, (long long)out_size(i, k, s, p, d));
    return CONVSEL_OK;
}

convsel_status convsel_problem_validate(const convsel_problem *p)
{
    if (!p)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "problem is NULL");
    const struct {
        const char *name;
        int64_t value, min;
    } fields[] = {
        {"g", p->g, 1},   {"mb", p->mb, 1}, {"ic", p->ic, 1}, {"ih", p->ih, 1}, {"iw", p->iw, 1},
        {"oc", p->oc, 1}, {"oh", p->oh, 1}, {"ow", p->ow, 1}, {"kh", p->kh, 1}, {"kw", p->kw, 1},
        {"sh", p->sh, 1}, {"sw", p->sw, 1}, {"ph", p->ph, 0}, {"pw", p->pw, 0}, {"dh", p->dh, 0},
        {"dw", p->dw, 0},
    };
    for (size_t i = 0; i < CONVSEL_ARRAY_SIZE(fields); i++) {
        if (fields[i].value < fields[i].min)
            return convsel_error(CONVSEL_INVALID_ARGUMENT, "%s %s: %s=%lld (must be >= %lld)",
                                 fields[i].min ? "zero or negative size" : "negative value", fields[i].name,
                                 fields[i].name, (long long)fields[i].value, (long long)fields[i].min);
        /* Every size must fit oneDNN's and BLAS's int arithmetic. */
        if (fields[i].value > INT32_MAX)
            return convsel_error(CONVSEL_TOO_LARGE, "%s=%lld is too large", fields[i].name,
                                 (long long)fields[i].value);
    }
    if (p->ic % p->g || p->oc % p->g)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "channels ic%lld/oc%lld are not divisible by groups g%lld",
                             (long long)p->ic, (long long)p->oc, (long long)p->g);
    if (p->repeat < 1)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "repeat count %d must be >= 1", p->repeat);
    convsel_status st = check_axis("h", p->ih, p->oh, p->kh, p->sh, p->ph, p->dh);
    if (st == CONVSEL_OK)
        st = check_axis("w", p->iw, p->ow, p->kw, p->sw, p->pw, p->dw);
    if (st == CONVSEL_OK)
        st = check_tensor("src", p->mb, p->ic, p->ih, p->iw);
    if (st == CONVSEL_OK)
        st = check_tensor("weights", p->oc, p->ic / p->g, p->kh, p->kw);
    if (st == CONVSEL_OK)
        st = check_tensor("dst", p->mb, p->oc, p->oh, p->ow);
    return st;
}

/* One spatial axis: an omitted input size follows from the output, an
 * omitted padding from the output too (benchdnn's rule), an omitted output
 * from the rest. */
static convsel_status resolve_axis(const char *axis, int i_given, int64_t i, int o_given, int64_t o, int64_t k,
                                   int64_t s, int p_given, int64_t p, int64_t d, int64_t *ri, int64_t *ro,
                                   int64_t *rp)
{
    if (!p_given)
        p = 0;
    if (i_given) {
        if (!o_given) {
            if (extent(k, d) > i + 2 * p)
                return convsel_error(CONVSEL_INVALID_ARGUMENT,
                                     "kernel extent %lld along %s is larger than the padded input %lld "
                                     "(i%s%lld + 2*p%s%lld)",
                                     (long long)extent(k, d), axis, (long long)(i + 2 * p), axis, (long long)i,
                                     axis, (long long)p);
            o = out_size(i, k, s, p, d);
        }
        else if (!p_given && o != out_size(i, k, s, 0, d))
            p = deduced_pad(o, i, k, s, d);
    } else if (o_given) {
        i = (o - 1) * s - 2 * p + extent(k, d);
    } else {
        return convsel_error(CONVSEL_PARSE_ERROR, "no input or output size along %s", axis);
    }
    *ri = i;
    *ro = o;
    *rp = p;
    return CONVSEL_OK;
}

static int lookup_key(const char *s, size_t len)
{
    for (int k = 0; k < K_COUNT; k++)
        if (strlen(key_names[k]) == len && strncmp(key_names[k], s, len) == 0)
            return k;
    return -1;
}

/* Splits a trailing "*N" off a name into the repeat count. */
static convsel_status split_repeat(const char *name, size_t len, convsel_problem *p)
{
    p->repeat = 1;
    const char *star = memchr(name, '*', len);
    if (star) {
        char *end;
        errno = 0;
        long r = strtol(star + 1, &end, 10);
        if (star + 1 == end || end != name + len || errno || r < 1 || r > 1000000)
            return convsel_error(CONVSEL_PARSE_ERROR, "bad repeat count '%.*s' in name (expected *N, N >= 1)",
                                 (int)(name + len - star), star);
        p->repeat = (int)r;
        len = (size_t)(star - name);
    }
    if (len >= CONVSEL_NAME_MAX)
        return convsel_error(CONVSEL_PARSE_ERROR, "name longer than %d characters", CONVSEL_NAME_MAX - 1);
    memcpy(p->name, name, len);
    p->name[len] = '\0';
    return CONVSEL_OK;
}

convsel_status convsel_problem_parse(const char *desc, convsel_problem *out)
{
    int64_t v[K_COUNT] = {0};
    int given[K_COUNT] = {0};
    convsel_problem p;
    memset(&p, 0, sizeof p);
    p.repeat = 1;

    if (!desc || !out)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "descriptor is NULL");
    const char *s = desc;
    while (*s) {
        if (*s == '_' || isspace((unsigned char)*s)) {
            s++;
            continue;
        }
        /* No other key starts with 'n', so 'n' always opens the name, quoted
         * or not (benchdnn's "nresnet_50:conv1" as it arrives from a shell). */
        if (*s == 'n') {
            const char *name = s + 1, *end;
            if (*name == '"') {
                name++;
                end = strchr(name, '"');
                if (!end)
                    return convsel_error(CONVSEL_PARSE_ERROR, "unterminated name: %s", s);
                s = end + 1;
            } else {
                end = name + strcspn(name, " \t\r\n");
                s = end;
                /* It could not be written back quoted. */
                if (memchr(name, '"', (size_t)(end - name)))
                    return convsel_error(CONVSEL_PARSE_ERROR, "'\"' inside an unquoted name: %s", name - 1);
            }
            convsel_status st = split_repeat(name, (size_t)(end - name), &p);
            if (st != CONVSEL_OK)
                return st;
            continue;
        }
        const char *key = s;
        while (isalpha((unsigned char)*s))
            s++;
        size_t key_len = (size_t)(s - key);
        if (key_len == 0)
            return convsel_error(CONVSEL_PARSE_ERROR, "unexpected '%c' at '%s' (expected a key such as mb, ic, kh)",
                                 *key, key);
        int k = lookup_key(key, key_len);
        if (k < 0)
            return convsel_error(CONVSEL_PARSE_ERROR, "unknown key '%.*s' at '%s'", (int)key_len, key, key);
        if (given[k])
            return convsel_error(CONVSEL_PARSE_ERROR, "key '%s' given twice", key_names[k]);
        char *end;
        errno = 0;
        long long value = strtoll(s, &end, 10);
        if (end == s)
            return convsel_error(CONVSEL_PARSE_ERROR, "key '%s' needs a number at '%s'", key_names[k], s);
        if (errno == ERANGE)
            return convsel_error(CONVSEL_TOO_LARGE, "value of '%s' out of range: %.*s", key_names[k],
                                 (int)(end - s), s);
        v[k] = value;
        given[k] = 1;
        s = end;
    }

    if (given[K_ID] || given[K_OD] || given[K_KD] || given[K_SD] || given[K_PD] || given[K_DD])
        return convsel_error(CONVSEL_UNSUPPORTED, "3D convolutions (id/od/kd/sd/pd/dd) are not supported: %s", desc);
    if (!given[K_IH] && !given[K_OH] && !given[K_KH]) {
        if (given[K_IW] || given[K_OW] || given[K_KW])
            return convsel_error(CONVSEL_UNSUPPORTED, "1D convolutions (only iw/ow/kw given) are not supported: %s",
                                 desc);
        return convsel_error(CONVSEL_PARSE_ERROR, "no spatial size (ih or oh) in '%s'", desc);
    }
    const int required[] = {K_IC, K_OC};
    for (size_t i = 0; i < CONVSEL_ARRAY_SIZE(required); i++)
        if (!given[required[i]])
            return convsel_error(CONVSEL_PARSE_ERROR, "missing key '%s' in '%s'", key_names[required[i]], desc);
    /* Range-check what was given before any arithmetic on it: a zero stride
     * would divide by zero, and sizes past int32 could overflow int64. */
    for (int k = 0; k < K_ID; k++) {
        int64_t min = (k == K_PH || k == K_PW || k == K_DH || k == K_DW) ? 0 : 1;
        if (given[k] && v[k] < min)
            return convsel_error(CONVSEL_INVALID_ARGUMENT, "%s %s: %s=%lld (must be >= %lld) in '%s'",
                                 min ? "zero or negative size" : "negative value", key_names[k], key_names[k],
                                 (long long)v[k], (long long)min, desc);
        if (given[k] && v[k] > INT32_MAX)
            return convsel_error(CONVSEL_TOO_LARGE, "%s=%lld is too large in '%s'", key_names[k], (long long)v[k],
                                 desc);
    }

    p.g = given[K_G] ? v[K_G] : 1;
    p.mb = given[K_MB] ? v[K_MB] : 2;
    p.ic = v[K_IC];
    p.oc = v[K_OC];
    p.kh = given[K_KH] ? v[K_KH] : 1;
    p.kw = given[K_KW] ? v[K_KW] : p.kh;
    p.sh = given[K_SH] ? v[K_SH] : 1;
    p.sw = given[K_SW] ? v[K_SW] : p.sh;
    p.dh = given[K_DH] ? v[K_DH] : 0;
    p.dw = given[K_DW] ? v[K_DW] : p.dh;

    /* Widths copy the heights unless given (benchdnn's square default). */
    int w_square = !given[K_IW] && !given[K_KW] && !given[K_SW] && !given[K_DW] && !given[K_PW];
    convsel_status st = resolve_axis("h", given[K_IH], v[K_IH], given[K_OH], v[K_OH], p.kh, p.sh, given[K_PH],
                                     v[K_PH], p.dh, &p.ih, &p.oh, &p.ph);
    if (st == CONVSEL_OK)
        st = resolve_axis("w", 1, given[K_IW] ? v[K_IW] : p.ih, given[K_OW] || (given[K_OH] && w_square),
                          given[K_OW] ? v[K_OW] : p.oh, p.kw, p.sw, given[K_PW] || given[K_PH],
                          given[K_PW] ? v[K_PW] : v[K_PH], p.dw, &p.iw, &p.ow, &p.pw);
    if (st != CONVSEL_OK)
        return convsel_error(st, "%s in '%s'", convsel_last_error(), desc);

    st = convsel_problem_validate(&p);
    if (st != CONVSEL_OK)
        return convsel_error(st, "%s (in '%s')", convsel_last_error(), desc);
    *out = p;
    return CONVSEL_OK;
}

int convsel_problem_format(const convsel_problem *p, char *buf, size_t size)
{
    char name[CONVSEL_NAME_MAX + 32] = "";
    if (p->name[0] || p->repeat > 1) {
        if (p->repeat > 1)
            snprintf(name, sizeof name, "_n\"%s*%d\"", p->name, p->repeat);
        else
            snprintf(name, sizeof name, "_n\"%s\"", p->name);
    }
    return snprintf(buf, size,
                    "g%lldmb%lld_ic%lldih%lldiw%lld_oc%lldoh%lldow%lld_kh%lldkw%lld_sh%lldsw%lld_ph%lldpw%lld"
                    "_dh%llddw%lld%s",
                    (long long)p->g, (long long)p->mb, (long long)p->ic, (long long)p->ih, (long long)p->iw,
                    (long long)p->oc, (long long)p->oh, (long long)p->ow, (long long)p->kh, (long long)p->kw,
                    (long long)p->sh, (long long)p->sw, (long long)p->ph, (long long)p->pw, (long long)p->dh,
                    (long long)p->dw, name);
}

int convsel_problem_same_shape(const convsel_problem *a, const convsel_problem *b)
{
    return a->g == b->g && a->mb == b->mb && a->ic == b->ic && a->ih == b->ih && a->iw == b->iw && a->oc == b->oc &&
           a->oh == b->oh && a->ow == b->ow && a->kh == b->kh && a->kw == b->kw && a->sh == b->sh && a->sw == b->sw &&
           a->ph == b->ph && a->pw == b->pw && a->dh == b->dh && a->dw == b->dw;
}

int convsel_problem_feeds(const convsel_problem *prev, const convsel_problem *next)
{
    return prev->mb == next->mb && prev->oc == next->ic && prev->oh == next->ih && prev->ow == next->iw;
}
