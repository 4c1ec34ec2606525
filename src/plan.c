/*
 * Plan files: JSON, one object, documented in docs/plan-format.md. Written
 * by hand (no JSON library among the dependencies); read by a small strict
 * recursive-descent reader that knows exactly this schema's shapes.
 */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

#define PLAN_FORMAT_VERSION 1

void convsel_plan_destroy(convsel_plan *plan)
{
    if (!plan)
        return;
    free(plan->layers);
    free(plan);
}

convsel_status convsel_plan_made_with_init(convsel_plan_made_with *mw, const convsel_select_options *opts,
                                           int verify_k, double uncertainty, int checked, double check_time_s)
{
    memset(mw, 0, sizeof *mw);
    mw->recorded = 1;
    if (opts) {
        mw->max_error = opts->max_error > 0 ? opts->max_error : 0.0;
        size_t n = 0;
        for (size_t i = 0; opts->excluded && i < convsel_primitive_count(); i++) {
            if (!opts->excluded[i])
                continue;
            int w = snprintf(mw->excluded + n, sizeof mw->excluded - n, "%s%s", n ? "," : "", convsel_primitive_name(i));
            if (w < 0 || (size_t)w >= sizeof mw->excluded - n)
                return convsel_error(CONVSEL_TOO_LARGE, "the excluded primitives' names do not fit a plan");
            n += (size_t)w;
        }
    }
    if (verify_k >= 2) {
        mw->verify_k = verify_k;
        mw->verify_alone = opts && opts->verify_alone;
        mw->uncertainty = uncertainty;
    }
    if (checked) {
        mw->checked = 1;
        mw->check_time_s = check_time_s;
    }
    return CONVSEL_OK;
}

int convsel_plan_made_with_equal(const convsel_plan_made_with *a, const convsel_plan_made_with *b)
{
    return a->recorded && b->recorded && a->max_error == b->max_error && !strcmp(a->excluded, b->excluded) &&
           a->verify_k == b->verify_k && a->verify_alone == b->verify_alone && a->uncertainty == b->uncertainty &&
           a->checked == b->checked && a->check_time_s == b->check_time_s;
}

static void json_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(f, "\\%c", c);
        else if (c < 0x20)
            fprintf(f, "\\u%04x", c);
        else
            fputc(c, f);
    }
    fputc('"', f);
}

static void json_key_string(FILE *f, const char *indent, const char *key, const char *value, int comma)
{
    fprintf(f, "%s\"%s\": ", indent, key);
    json_string(f, value);
    fprintf(f, "%s\n", comma ? "," : "");
}

/* Doubles as %.17g, so that they read back equal. */
static void write_made_with(FILE *f, const convsel_plan_made_with *mw)
{
    fprintf(f, "  \"made_with\": {\"max_error\": %.17g, \"excluded\": [", mw->max_error);
    for (const char *p = mw->excluded; *p;) {
        size_t n = strcspn(p, ",");
        fprintf(f, "%s\"%.*s\"", p == mw->excluded ? "" : ", ", (int)n, p);
        p += n + (p[n] == ',');
    }
    fprintf(f, "], \"verify\": %d, \"verify_alone\": %s, \"uncertainty\": %.17g, \"checked\": %s, "
               "\"check_time_s\": %.17g},\n",
            mw->verify_k, mw->verify_alone ? "true" : "false", mw->uncertainty, mw->checked ? "true" : "false",
            mw->check_time_s);
}

static int write_plan(FILE *f, const convsel_plan *plan);

/* Written aside and renamed over path, so that a crash or a full disk never
 * leaves half a plan where a whole one was (select --resume reads it). */
convsel_status convsel_plan_save(const convsel_plan *plan, const char *path)
{
    char tmp[4096];
    if (!plan || !path)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "plan and path are required");
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= sizeof tmp)
        return convsel_error(CONVSEL_IO_ERROR, "%s: path too long", path);
    FILE *f = fopen(tmp, "w");
    if (!f)
        return convsel_error(CONVSEL_IO_ERROR, "%s: %s", path, strerror(errno));
    int bad = write_plan(f, plan);
    bad |= fflush(f) != 0 || fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    if (bad) {
        unlink(tmp);
        return convsel_error(CONVSEL_IO_ERROR, "%s: write failed", path);
    }
    if (rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return convsel_error(CONVSEL_IO_ERROR, "%s: %s", path, strerror(e));
    }
    return CONVSEL_OK;
}

/* The plan as JSON into f; non-zero on a write error. */
static int write_plan(FILE *f, const convsel_plan *plan)
{
    char desc[512];
    const convsel_fingerprint *fp = &plan->cpu;
    fprintf(f, "{\n  \"format\": \"convsel-plan\",\n  \"version\": %d,\n", PLAN_FORMAT_VERSION);
    json_key_string(f, "  ", "network", plan->network, 1);
    fprintf(f, "  \"mb\": %lld,\n  \"threads\": %d,\n", (long long)plan->mb, plan->threads);
    json_key_string(f, "  ", "model_id", plan->model_id, 1);
    fprintf(f, "  \"cpu\": {\n");
    json_key_string(f, "    ", "vendor", fp->vendor, 1);
    json_key_string(f, "    ", "model_name", fp->model_name, 1);
    json_key_string(f, "    ", "microarch", fp->microarch, 1);
    json_key_string(f, "    ", "isa_flags", fp->isa_flags, 1);
    json_key_string(f, "    ", "isa_cap", convsel_isa_name(fp->isa_cap), 1);
    fprintf(f, "    \"cores\": %d,\n    \"l1d_bytes\": %lld,\n    \"l2_bytes\": %lld,\n    \"l3_bytes\": %lld,\n",
            fp->cores, (long long)fp->l1d_bytes, (long long)fp->l2_bytes, (long long)fp->l3_bytes);
    json_key_string(f, "    ", "onednn_version", fp->onednn_version, 1);
    json_key_string(f, "    ", "openblas_version", fp->openblas_version, 0);
    fprintf(f, "  },\n");
    json_key_string(f, "  ", "boundary_layout", convsel_layout_name(plan->boundary_layout), 1);
    fprintf(f, "  \"total_ms\": %.6f,\n  \"reorder_ms\": %.6f,\n", plan->total_ms, plan->reorder_ms);
    fprintf(f, "  \"verified_layers\": %zu,\n  \"verify_s\": %.6f,\n", plan->verified_layers, plan->verify_s);
    if (plan->made_with.recorded)
        write_made_with(f, &plan->made_with);
    fprintf(f, "  \"layers\": [\n");
    for (size_t i = 0; i < plan->n_layers; i++) {
        const convsel_plan_layer *l = &plan->layers[i];
        convsel_problem_format(&l->problem, desc, sizeof desc);
        fprintf(f, "    {");
        fprintf(f, "\"problem\": ");
        json_string(f, desc);
        fprintf(f, ", \"connected\": %s, \"primitive\": ", l->connected ? "true" : "false");
        json_string(f, l->primitive);
        fprintf(f, ", \"src_layout\": ");
        json_string(f, convsel_layout_name(l->src_layout));
        fprintf(f, ", \"dst_layout\": ");
        json_string(f, convsel_layout_name(l->dst_layout));
        fprintf(f, ", \"conv_ms\": %.6f, \"reorder_in_ms\": %.6f, \"reorder_out_ms\": %.6f, \"cold_in_ms\": %.6f",
                l->conv_ms, l->reorder_in_ms, l->reorder_out_ms, l->cold_in_ms);
        fprintf(f, ", \"runner_up\": ");
        json_string(f, l->runner_up);
        fprintf(f, ", \"runner_up_margin_ms\": %.6f, \"verified\": %s}%s\n", l->runner_up_margin_ms,
                l->verified ? "true" : "false", i + 1 < plan->n_layers ? "," : "");
    }
    fprintf(f, "  ]\n}\n");
    return ferror(f);
}

/* ------------------------------------------------------------- reading */

struct reader {
    const char *path;
    const char *s, *p;
    convsel_status st;
};

static convsel_status reader_fail(struct reader *r, const char *what)
{
    if (r->st == CONVSEL_OK) {
        int line = 1;
        for (const char *c = r->s; c < r->p; c++)
            line += *c == '\n';
        r->st = convsel_error(CONVSEL_CORRUPT, "%s:%d: %s", r->path, line, what);
    }
    return r->st;
}

static void skip_ws(struct reader *r)
{
    while (isspace((unsigned char)*r->p))
        r->p++;
}

static int accept(struct reader *r, char c)
{
    skip_ws(r);
    if (*r->p == c) {
        r->p++;
        return 1;
    }
    return 0;
}

static int expect(struct reader *r, char c)
{
    if (accept(r, c))
        return 1;
    char msg[64];
    snprintf(msg, sizeof msg, "expected '%c'", c);
    reader_fail(r, msg);
    return 0;
}

static int read_string(struct reader *r, char *out, size_t size)
{
    size_t n = 0;
    if (!expect(r, '"'))
        return 0;
    while (*r->p && *r->p != '"') {
        char c = *r->p++;
        if (c == '\\') {
            c = *r->p++;
            if (c == 'u') {
                unsigned v = 0;
                for (int i = 0; i < 4; i++) {
                    if (!isxdigit((unsigned char)*r->p)) {
                        reader_fail(r, "bad \\u escape");
                        return 0;
                    }
                    char h = *r->p++;
                    v = v * 16 + (unsigned)(isdigit((unsigned char)h) ? h - '0' : tolower(h) - 'a' + 10);
                }
                c = v < 0x80 ? (char)v : '?';
            } else if (c == 'n') {
                c = '\n';
            } else if (c == 't') {
                c = '\t';
            } else if (c != '"' && c != '\\' && c != '/') {
                reader_fail(r, "bad escape in string");
                return 0;
            }
        }
        if (n + 1 >= size) {
            reader_fail(r, "string too long");
            return 0;
        }
        out[n++] = c;
    }
    if (*r->p != '"') {
        reader_fail(r, "unterminated string");
        return 0;
    }
    r->p++;
    out[n] = '\0';
    return 1;
}

static int read_number(struct reader *r, double *out)
{
    skip_ws(r);
    char *end;
    errno = 0;
    double v = strtod(r->p, &end);
    if (end == r->p || errno == ERANGE || !isfinite(v)) {
        reader_fail(r, "expected a number");
        return 0;
    }
    r->p = end;
    *out = v;
    return 1;
}

static int read_bool(struct reader *r, int *out)
{
    skip_ws(r);
    if (strncmp(r->p, "true", 4) == 0) {
        r->p += 4;
        *out = 1;
        return 1;
    }
    if (strncmp(r->p, "false", 5) == 0) {
        r->p += 5;
        *out = 0;
        return 1;
    }
    reader_fail(r, "expected true or false");
    return 0;
}

static int read_int(struct reader *r, int64_t lo, int64_t hi, int64_t *out)
{
    double v;
    if (!read_number(r, &v))
        return 0;
    if (v != floor(v) || v < (double)lo || v > (double)hi) {
        reader_fail(r, "integer out of range");
        return 0;
    }
    *out = (int64_t)v;
    return 1;
}

static int read_layout(struct reader *r, convsel_layout *out)
{
    char text[32];
    if (!read_string(r, text, sizeof text))
        return 0;
    if (convsel_layout_parse(text, out) != CONVSEL_OK) {
        reader_fail(r, "unknown layout");
        return 0;
    }
    return 1;
}

static int read_cpu(struct reader *r, convsel_fingerprint *fp)
{
    char key[64], text[64];
    int64_t v;
    if (!expect(r, '{'))
        return 0;
    if (accept(r, '}'))
        return 1;
    do {
        if (!read_string(r, key, sizeof key) || !expect(r, ':'))
            return 0;
        int ok;
        if (!strcmp(key, "vendor"))
            ok = read_string(r, fp->vendor, sizeof fp->vendor);
        else if (!strcmp(key, "model_name"))
            ok = read_string(r, fp->model_name, sizeof fp->model_name);
        else if (!strcmp(key, "microarch"))
            ok = read_string(r, fp->microarch, sizeof fp->microarch);
        else if (!strcmp(key, "isa_flags"))
            ok = read_string(r, fp->isa_flags, sizeof fp->isa_flags);
        else if (!strcmp(key, "onednn_version"))
            ok = read_string(r, fp->onednn_version, sizeof fp->onednn_version);
        else if (!strcmp(key, "openblas_version"))
            ok = read_string(r, fp->openblas_version, sizeof fp->openblas_version);
        else if (!strcmp(key, "isa_cap")) {
            ok = read_string(r, text, sizeof text);
            if (ok && convsel_isa_parse(text, &fp->isa_cap) != CONVSEL_OK)
                ok = reader_fail(r, "unknown isa_cap") == CONVSEL_OK;
        } else if (!strcmp(key, "cores")) {
            ok = read_int(r, 0, 1 << 20, &v);
            fp->cores = (int)v;
        } else if (!strcmp(key, "l1d_bytes")) {
            ok = read_int(r, 0, INT64_C(1) << 50, &fp->l1d_bytes);
        } else if (!strcmp(key, "l2_bytes")) {
            ok = read_int(r, 0, INT64_C(1) << 50, &fp->l2_bytes);
        } else if (!strcmp(key, "l3_bytes")) {
            ok = read_int(r, 0, INT64_C(1) << 50, &fp->l3_bytes);
        } else {
            ok = reader_fail(r, "unknown key in cpu") == CONVSEL_OK;
        }
        if (!ok)
            return 0;
    } while (accept(r, ','));
    return expect(r, '}');
}

/* made_with's excluded names, back into catalogue order. */
static int read_excluded(struct reader *r, char *out, size_t size)
{
    size_t np = convsel_primitive_count(), index, n = 0;
    char name[64], msg[128];
    unsigned char *flags = calloc(np ? np : 1, 1);
    if (!flags)
        return reader_fail(r, "out of memory") == CONVSEL_OK;
    int ok = expect(r, '[');
    if (ok && !accept(r, ']')) {
        do {
            ok = read_string(r, name, sizeof name);
            if (ok && convsel_primitive_find(name, &index) != CONVSEL_OK) {
                snprintf(msg, sizeof msg, "unknown primitive '%s' in made_with", name);
                ok = reader_fail(r, msg) == CONVSEL_OK;
            }
            if (ok)
                flags[index] = 1;
        } while (ok && accept(r, ','));
        ok = ok && expect(r, ']');
    }
    out[0] = '\0';
    for (size_t i = 0; ok && i < np; i++) {
        if (!flags[i])
            continue;
        int w = snprintf(out + n, size - n, "%s%s", n ? "," : "", convsel_primitive_name(i));
        if (w < 0 || (size_t)w >= size - n)
            ok = reader_fail(r, "made_with's excluded names are too long") == CONVSEL_OK;
        else
            n += (size_t)w;
    }
    free(flags);
    return ok;
}

static int read_made_with(struct reader *r, convsel_plan_made_with *mw)
{
    char key[64];
    int64_t v = 0;
    memset(mw, 0, sizeof *mw);
    if (!expect(r, '{'))
        return 0;
    if (accept(r, '}'))
        return reader_fail(r, "made_with without keys") == CONVSEL_OK;
    do {
        if (!read_string(r, key, sizeof key) || !expect(r, ':'))
            return 0;
        int ok;
        if (!strcmp(key, "max_error")) {
            ok = read_number(r, &mw->max_error);
        } else if (!strcmp(key, "excluded")) {
            ok = read_excluded(r, mw->excluded, sizeof mw->excluded);
        } else if (!strcmp(key, "verify")) {
            ok = read_int(r, 0, 1 << 20, &v);
            mw->verify_k = (int)v;
        } else if (!strcmp(key, "verify_alone")) {
            ok = read_bool(r, &mw->verify_alone);
        } else if (!strcmp(key, "uncertainty")) {
            ok = read_number(r, &mw->uncertainty);
        } else if (!strcmp(key, "checked")) {
            ok = read_bool(r, &mw->checked);
        } else if (!strcmp(key, "check_time_s")) {
            ok = read_number(r, &mw->check_time_s);
        } else {
            ok = reader_fail(r, "unknown key in made_with") == CONVSEL_OK;
        }
        if (!ok)
            return 0;
    } while (accept(r, ','));
    mw->recorded = 1;
    return expect(r, '}');
}

static int read_layer(struct reader *r, convsel_plan_layer *l)
{
    char key[64], text[512];
    size_t index;
    int have_problem = 0, have_primitive = 0;
    if (!expect(r, '{'))
        return 0;
    do {
        if (!read_string(r, key, sizeof key) || !expect(r, ':'))
            return 0;
        int ok = 1;
        if (!strcmp(key, "problem")) {
            ok = read_string(r, text, sizeof text);
            if (ok && convsel_problem_parse(text, &l->problem) != CONVSEL_OK) {
                char msg[600];
                snprintf(msg, sizeof msg, "bad problem: %s", convsel_last_error());
                return reader_fail(r, msg) == CONVSEL_OK;
            }
            have_problem = ok;
        } else if (!strcmp(key, "primitive")) {
            ok = read_string(r, l->primitive, sizeof l->primitive);
            if (ok && convsel_primitive_find(l->primitive, &index) != CONVSEL_OK) {
                snprintf(text, sizeof text, "unknown primitive '%s'", l->primitive);
                return reader_fail(r, text) == CONVSEL_OK;
            }
            have_primitive = ok;
        } else if (!strcmp(key, "runner_up")) {
            ok = read_string(r, l->runner_up, sizeof l->runner_up);
        } else if (!strcmp(key, "src_layout")) {
            ok = read_layout(r, &l->src_layout);
        } else if (!strcmp(key, "dst_layout")) {
            ok = read_layout(r, &l->dst_layout);
        } else if (!strcmp(key, "connected")) {
            ok = read_bool(r, &l->connected);
        } else if (!strcmp(key, "verified")) {
            ok = read_bool(r, &l->verified);
        } else if (!strcmp(key, "conv_ms")) {
            ok = read_number(r, &l->conv_ms);
        } else if (!strcmp(key, "reorder_in_ms")) {
            ok = read_number(r, &l->reorder_in_ms);
        } else if (!strcmp(key, "reorder_out_ms")) {
            ok = read_number(r, &l->reorder_out_ms);
        } else if (!strcmp(key, "cold_in_ms")) {
            ok = read_number(r, &l->cold_in_ms);
        } else if (!strcmp(key, "runner_up_margin_ms")) {
            ok = read_number(r, &l->runner_up_margin_ms);
        } else {
            ok = reader_fail(r, "unknown key in layer") == CONVSEL_OK;
        }
        if (!ok)
            return 0;
    } while (accept(r, ','));
    if (!have_problem || !have_primitive)
        return reader_fail(r, "layer without problem or primitive") == CONVSEL_OK;
    return expect(r, '}');
}

static char *read_file(const char *path, convsel_status *st)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        *st = convsel_error(CONVSEL_IO_ERROR, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat sb; /* a pipe is read as a file is; a directory would read as nothing */
    if (fstat(fileno(f), &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fclose(f);
        *st = convsel_error(CONVSEL_IO_ERROR, "%s: a directory, not a plan file", path);
        return NULL;
    }
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap);
    while (buf) {
        n += fread(buf + n, 1, cap - n - 1, f);
        if (n < cap - 1)
            break;
        if (cap > ((size_t)256 << 20)) {
            free(buf);
            fclose(f);
            *st = convsel_error(CONVSEL_TOO_LARGE, "%s: plan file over 256 MiB", path);
            return NULL;
        }
        char *grown = realloc(buf, cap * 2);
        if (!grown) {
            free(buf);
            buf = NULL;
            break;
        }
        buf = grown;
        cap *= 2;
    }
    const int failed = ferror(f);
    fclose(f);
    if (!buf) {
        *st = convsel_error(CONVSEL_OUT_OF_MEMORY, "%s: out of memory", path);
        return NULL;
    }
    if (failed || n == 0) {
        free(buf);
        *st = failed ? convsel_error(CONVSEL_IO_ERROR, "%s: read error", path)
                     : convsel_error(CONVSEL_CORRUPT, "%s: empty file, not a convsel plan", path);
        return NULL;
    }
    buf[n] = '\0';
    if (strlen(buf) != n) {
        free(buf);
        *st = convsel_error(CONVSEL_CORRUPT, "%s: not a text file", path);
        return NULL;
    }
    return buf;
}

convsel_status convsel_plan_load(const char *path, convsel_plan **out)
{
    convsel_status st = CONVSEL_OK;
    char key[64], text[128];
    double num;
    int64_t v;
    if (!path || !out)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "plan path is NULL");
    *out = NULL;
    char *buf = read_file(path, &st);
    if (!buf)
        return st;
    struct reader r = {path, buf, buf, CONVSEL_OK};
    convsel_plan *plan = calloc(1, sizeof *plan);
    size_t cap = 0;
    int have_format = 0, version = 0;
    if (!plan) {
        free(buf);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    }
    if (!expect(&r, '{'))
        goto done;
    do {
        if (!read_string(&r, key, sizeof key) || !expect(&r, ':'))
            goto done;
        int ok = 1;
        if (!strcmp(key, "format")) {
            ok = read_string(&r, text, sizeof text);
            if (ok && strcmp(text, "convsel-plan") != 0) {
                reader_fail(&r, "not a convsel plan (format is not \"convsel-plan\")");
                goto done;
            }
            have_format = 1;
        } else if (!strcmp(key, "version")) {
            ok = read_int(&r, 0, 1 << 30, &v);
            version = (int)v;
            if (ok && version != PLAN_FORMAT_VERSION) {
                r.st = convsel_error(CONVSEL_VERSION_MISMATCH, "%s: plan format version %d, this convsel reads %d",
                                     path, version, PLAN_FORMAT_VERSION);
                goto done;
            }
        } else if (!strcmp(key, "network")) {
            ok = read_string(&r, plan->network, sizeof plan->network);
        } else if (!strcmp(key, "model_id")) {
            ok = read_string(&r, plan->model_id, sizeof plan->model_id);
        } else if (!strcmp(key, "mb")) {
            ok = read_int(&r, 1, INT32_MAX, &plan->mb);
        } else if (!strcmp(key, "threads")) {
            ok = read_int(&r, 1, 4096, &v);
            plan->threads = (int)v;
        } else if (!strcmp(key, "cpu")) {
            ok = read_cpu(&r, &plan->cpu);
        } else if (!strcmp(key, "made_with")) {
            ok = read_made_with(&r, &plan->made_with);
        } else if (!strcmp(key, "boundary_layout")) {
            ok = read_layout(&r, &plan->boundary_layout);
        } else if (!strcmp(key, "total_ms")) {
            ok = read_number(&r, &plan->total_ms);
        } else if (!strcmp(key, "reorder_ms")) {
            ok = read_number(&r, &plan->reorder_ms);
        } else if (!strcmp(key, "verify_s")) {
            ok = read_number(&r, &plan->verify_s);
        } else if (!strcmp(key, "verified_layers")) {
            ok = read_number(&r, &num);
            plan->verified_layers = (size_t)(num >= 0 ? num : 0);
        } else if (!strcmp(key, "layers")) {
            if (!expect(&r, '['))
                goto done;
            if (!accept(&r, ']')) {
                do {
                    convsel_plan_layer *grown = convsel_grow(plan->layers, plan->n_layers, &cap, 64, sizeof *grown);
                    if (!grown) {
                        r.st = convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
                        goto done;
                    }
                    plan->layers = grown;
                    convsel_plan_layer *l = &plan->layers[plan->n_layers];
                    memset(l, 0, sizeof *l);
                    if (!read_layer(&r, l))
                        goto done;
                    plan->n_layers++;
                } while (accept(&r, ','));
                if (!expect(&r, ']'))
                    goto done;
            }
        } else {
            snprintf(text, sizeof text, "unknown key '%.60s'", key);
            reader_fail(&r, text);
            goto done;
        }
        if (!ok)
            goto done;
    } while (accept(&r, ','));
    if (!expect(&r, '}'))
        goto done;
    skip_ws(&r);
    if (*r.p)
        reader_fail(&r, "trailing text after the plan");
    else if (!have_format || version == 0)
        reader_fail(&r, "missing \"format\" or \"version\"");
    else if (plan->n_layers == 0)
        reader_fail(&r, "plan has no layers");
    else if (plan->threads < 1 || plan->mb < 1)
        reader_fail(&r, "missing mb or threads");
    for (size_t i = 0; i < plan->n_layers && r.st == CONVSEL_OK; i++)
        if (plan->layers[i].connected && (i == 0 || !convsel_problem_feeds(&plan->layers[i - 1].problem,
                                                                             &plan->layers[i].problem)))
            r.st = convsel_error(CONVSEL_CORRUPT,
                                 "%s: layer %zu is marked connected, but %s", path, i + 1,
                                 i == 0 ? "it is the first" : "its input is not the previous layer's output shape");
done:
    free(buf);
    if (r.st != CONVSEL_OK) {
        convsel_plan_destroy(plan);
        return r.st;
    }
    *out = plan;
    return CONVSEL_OK;
}
