/*
 * Model files (docs/model-format.md): one msgpack map.
 *
 * Writing uses msgpack-c's packer. Reading uses a small cursor decoder of our
 * own, because a model file is untrusted input: msgpack-c's unpacker
 * allocates a declared array's elements before reading them (a few bytes
 * claiming 2^32 elements ask for ~100 GiB) and recurses on nesting. Here
 * every count is checked against the bytes left before anything is
 * allocated, every value's type is checked before use, unknown keys are
 * skipped iteratively, and every tree is validated (feature indexes, child
 * indexes strictly after their parent, so that walking a tree ends) before
 * the model is handed out.
 */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <msgpack.h>

#include "features.h"
#include "internal.h"
#include "model.h"

/* Far above any real model (a few MB); keeps a hostile file from making us
 * read gigabytes. */
#define MODEL_MAX_FILE_BYTES ((size_t)1 << 30)
/* Files from which the id is hashed on a second core while parsing. */
#define PARALLEL_HASH_BYTES ((size_t)1 << 20)

static const char *const mode_names[] = {"per_primitive", "single"};

static const char *target_text(convsel_target t)
{
    static const char *const names[] = {
#define CONVSEL_TARGET_NAME(name, text) text,
        CONVSEL_TARGET_MAP(CONVSEL_TARGET_NAME)
#undef CONVSEL_TARGET_NAME
    };
    return (unsigned)t < CONVSEL_TARGET_COUNT ? names[t] : "unknown";
}

void convsel_model_hash_id(const uint8_t *data, size_t size, char id[17])
{
    uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
    for (size_t i = 0; i < size; i++) {
        h ^= data[i];
        h *= 0x100000001b3ull;
    }
    snprintf(id, 17, "%016llx", (unsigned long long)h);
}

/* ---------------------------------------------------------------- writing */

static int pack_string(msgpack_packer *pk, const char *s)
{
    size_t len = strlen(s);
    return msgpack_pack_str(pk, len) || msgpack_pack_str_body(pk, s, len);
}

/* A field-limited string: never reads past the array even without a NUL. */
static int pack_field(msgpack_packer *pk, const char *s, size_t size)
{
    size_t len = strnlen(s, size);
    return msgpack_pack_str(pk, len) || msgpack_pack_str_body(pk, s, len);
}

#define KEY(k) pack_string(pk, k)

static int pack_fingerprint(msgpack_packer *pk, const convsel_fingerprint *f)
{
    return msgpack_pack_map(pk, 11) || KEY("vendor") || pack_field(pk, f->vendor, sizeof f->vendor) ||
           KEY("model_name") || pack_field(pk, f->model_name, sizeof f->model_name) || KEY("microarch") ||
           pack_field(pk, f->microarch, sizeof f->microarch) || KEY("isa_flags") ||
           pack_field(pk, f->isa_flags, sizeof f->isa_flags) || KEY("isa_cap") ||
           pack_string(pk, convsel_isa_name(f->isa_cap)) || KEY("cores") || msgpack_pack_int64(pk, f->cores) ||
           KEY("l1d_bytes") || msgpack_pack_int64(pk, f->l1d_bytes) || KEY("l2_bytes") ||
           msgpack_pack_int64(pk, f->l2_bytes) || KEY("l3_bytes") || msgpack_pack_int64(pk, f->l3_bytes) ||
           KEY("onednn_version") || pack_field(pk, f->onednn_version, sizeof f->onednn_version) ||
           KEY("openblas_version") || pack_field(pk, f->openblas_version, sizeof f->openblas_version);
}

static int pack_params(msgpack_packer *pk, const convsel_train_params *p)
{
    /* threads is left out: it does not change the model, and leaving it out
     * keeps the bytes (and the id) the same whatever it was. */
    /* bags only where it is not 1: a model of one bag keeps the bytes (and
     * the id) it had before bagging existed. */
    return msgpack_pack_map(pk, p->bags != 1 ? 13 : 12) || (p->bags != 1 && (KEY("bags") || msgpack_pack_int64(pk, p->bags))) ||
           KEY("trees") || msgpack_pack_int64(pk, p->trees) || KEY("learning_rate") ||
           msgpack_pack_double(pk, p->learning_rate) || KEY("max_depth") || msgpack_pack_int64(pk, p->max_depth) ||
           KEY("min_leaf") || msgpack_pack_int64(pk, p->min_leaf) || KEY("lambda") ||
           msgpack_pack_double(pk, p->lambda) || KEY("min_gain") || msgpack_pack_double(pk, p->min_gain) ||
           KEY("row_subsample") || msgpack_pack_double(pk, p->row_subsample) || KEY("col_subsample") ||
           msgpack_pack_double(pk, p->col_subsample) || KEY("max_bins") || msgpack_pack_int64(pk, p->max_bins) ||
           KEY("valid_fraction") || msgpack_pack_double(pk, p->valid_fraction) || KEY("patience") ||
           msgpack_pack_int64(pk, p->patience) || KEY("seed") || msgpack_pack_uint64(pk, p->seed);
}

static int pack_tree(msgpack_packer *pk, const convsel_tree *t)
{
    if (msgpack_pack_array(pk, t->n_nodes))
        return -1;
    for (size_t i = 0; i < t->n_nodes; i++) {
        const convsel_node *n = &t->nodes[i];
        if (msgpack_pack_array(pk, 6) || msgpack_pack_int64(pk, n->feature) || msgpack_pack_float(pk, n->threshold) ||
            msgpack_pack_int64(pk, n->left) || msgpack_pack_int64(pk, n->right) || msgpack_pack_double(pk, n->value) ||
            msgpack_pack_uint64(pk, n->cat_left))
            return -1;
    }
    return 0;
}

static int pack_ensemble(msgpack_packer *pk, const convsel_ensemble *en);

/* Calibrations (format version 2): see docs/model-format.md. */
enum { REORDER_CELLS = CONVSEL_LAYOUT_COUNT * CONVSEL_LAYOUT_COUNT * CONVSEL_REORDER_MODEL_THREADS };

static int pack_layouts(msgpack_packer *pk)
{
    if (KEY("layouts") || msgpack_pack_array(pk, CONVSEL_LAYOUT_COUNT))
        return -1;
    for (int l = 0; l < CONVSEL_LAYOUT_COUNT; l++)
        if (pack_string(pk, convsel_layout_name((convsel_layout)l)))
            return -1;
    return 0;
}

static int pack_doubles(msgpack_packer *pk, const double *v, size_t n)
{
    if (msgpack_pack_array(pk, n))
        return -1;
    for (size_t k = 0; k < n; k++)
        if (msgpack_pack_double(pk, v[k]))
            return -1;
    return 0;
}

/* A calibration's factors on the reorder lines (written only when it has
 * them), its offsets with their leave-one-out errors (only when a slot
 * was fitted one: files from before offsets read the same), and its pairs'
 * own lines with theirs (only when some pair could fit one: files from
 * before them read the same). */
static int pack_calibration_reorders(msgpack_packer *pk, const convsel_calibration *cal)
{
    int fitted = 0, own = 0;
    for (int t = 0; t < CONVSEL_REORDER_MODEL_THREADS; t++) {
        fitted |= cal->reorder_loo_factor[t] > 0;
        own |= cal->reorder_pairs_fittable[t] > 0;
    }
    if (KEY("reorders") || msgpack_pack_map(pk, 4 + (fitted ? 3 : 0) + (own ? 6 : 0)) || pack_layouts(pk) ||
        KEY("samples") ||
        msgpack_pack_uint64(pk, cal->reorder_samples) || KEY("by_threads") ||
        pack_doubles(pk, cal->reorder_by_threads, CONVSEL_REORDER_MODEL_THREADS) || KEY("scale") ||
        pack_doubles(pk, &cal->reorder_scale[0][0][0], REORDER_CELLS))
        return -1;
    if (own && (KEY("line_a") || pack_doubles(pk, &cal->reorder_line_a[0][0][0], REORDER_CELLS) || KEY("line_b") ||
                pack_doubles(pk, &cal->reorder_line_b[0][0][0], REORDER_CELLS) || KEY("pairs_fittable") ||
                pack_doubles(pk, cal->reorder_pairs_fittable, CONVSEL_REORDER_MODEL_THREADS) || KEY("pairs_own") ||
                pack_doubles(pk, cal->reorder_pairs_own, CONVSEL_REORDER_MODEL_THREADS) ||
                KEY("loo_scaled") || pack_doubles(pk, cal->reorder_loo_scaled, CONVSEL_REORDER_MODEL_THREADS) ||
                KEY("loo_line") || pack_doubles(pk, cal->reorder_loo_line, CONVSEL_REORDER_MODEL_THREADS)))
        return -1;
    return fitted && (KEY("offset") || pack_doubles(pk, cal->reorder_offset, CONVSEL_REORDER_MODEL_THREADS) ||
                      KEY("loo_factor") ||
                      pack_doubles(pk, cal->reorder_loo_factor, CONVSEL_REORDER_MODEL_THREADS) ||
                      KEY("loo_offset") || pack_doubles(pk, cal->reorder_loo_offset, CONVSEL_REORDER_MODEL_THREADS));
}

/* A calibration's cold-read prices (written only when it has them). */
static int pack_calibration_cold(msgpack_packer *pk, const convsel_calibration *cal)
{
    return KEY("cold") || msgpack_pack_map(pk, 2) || KEY("samples") || msgpack_pack_uint64(pk, cal->cold_samples) ||
           KEY("ms_per_mb") || pack_doubles(pk, cal->cold_ms_per_mb, CONVSEL_REORDER_MODEL_THREADS);
}

/* A calibration's weights prices inside networks (written only when it has them). */
enum { NETWORK_CELLS = CONVSEL_NETWORK_PRIMITIVES * CONVSEL_REORDER_MODEL_THREADS };

static int pack_calibration_network(msgpack_packer *pk, const convsel_calibration *cal)
{
    return KEY("in_network") || msgpack_pack_map(pk, 2) || KEY("samples") ||
           msgpack_pack_uint64(pk, cal->network_samples) || KEY("ms_per_mb") ||
           pack_doubles(pk, &cal->network_ms_per_mb[0][0], NETWORK_CELLS);
}

/* A calibration's thread counts, ascending (64: 64 or more; written only when known). */
static int pack_threads_mask(msgpack_packer *pk, uint64_t mask)
{
    int n = 0;
    for (int b = 0; b < 64; b++)
        n += (int)(mask >> b & 1);
    if (KEY("threads") || msgpack_pack_array(pk, (size_t)n))
        return -1;
    for (int b = 0; b < 64; b++)
        if ((mask >> b & 1) && msgpack_pack_int64(pk, b + 1))
            return -1;
    return 0;
}

static int pack_calibrations(msgpack_packer *pk, const convsel_model *m)
{
    if (KEY("calibrations") || msgpack_pack_array(pk, m->n_calibrations))
        return -1;
    for (size_t k = 0; k < m->n_calibrations; k++) {
        const convsel_calibration *cal = &m->calibrations[k];
        size_t n_keys = 12 + (cal->threads_mask != 0) + (cal->reorder_samples > 0) + (cal->cold_samples > 0) +
                        (cal->network_samples > 0);
        if (msgpack_pack_map(pk, n_keys) || KEY("cpu") || pack_fingerprint(pk, &cal->cpu) ||
            KEY("source_model") || pack_field(pk, cal->source_id, sizeof cal->source_id) || KEY("method") ||
            pack_string(pk, convsel_calibrate_method_name(cal->method)) || KEY("samples") ||
            msgpack_pack_uint64(pk, cal->samples) || KEY("records") || msgpack_pack_uint64(pk, cal->records) ||
            KEY("seed") || msgpack_pack_uint64(pk, cal->seed) || KEY("a") ||
            msgpack_pack_array(pk, cal->n_primitives))
            return -1;
        for (size_t j = 0; j < cal->n_primitives; j++)
            if (msgpack_pack_double(pk, cal->a[j]))
                return -1;
        if (KEY("b") || msgpack_pack_array(pk, cal->n_primitives))
            return -1;
        for (size_t j = 0; j < cal->n_primitives; j++)
            if (msgpack_pack_double(pk, cal->b[j]))
                return -1;
        if (KEY("residual") || pack_ensemble(pk, &cal->residual) || KEY("cv_rmse_log") ||
            msgpack_pack_double(pk, cal->cv_rmse_log) || KEY("cv_regret_log") ||
            msgpack_pack_double(pk, cal->cv_regret_log) || KEY("chosen_by_auto") ||
            (cal->auto_chosen ? msgpack_pack_true(pk) : msgpack_pack_false(pk)) ||
            (cal->threads_mask != 0 && pack_threads_mask(pk, cal->threads_mask)) ||
            (cal->reorder_samples > 0 && pack_calibration_reorders(pk, cal)) ||
            (cal->cold_samples > 0 && pack_calibration_cold(pk, cal)) ||
            (cal->network_samples > 0 && pack_calibration_network(pk, cal)))
            return -1;
    }
    return 0;
}

static int pack_validation(msgpack_packer *pk, const convsel_model *m)
{
    return KEY("validation") || msgpack_pack_map(pk, 2) || KEY("rmse_log") ||
           msgpack_pack_double(pk, m->valid_rmse_log) || KEY("rows") || msgpack_pack_uint64(pk, m->valid_rows);
}

static int pack_reorders(msgpack_packer *pk, const convsel_reorder_model *r)
{
    const double *a = &r->a_ms[0][0][0], *b = &r->b_ms_per_mb[0][0][0];
    const int *n = &r->n_records[0][0][0];
    if (KEY("reorders") || msgpack_pack_map(pk, 6) || pack_layouts(pk))
        return -1;
    if (KEY("threads") || msgpack_pack_int64(pk, CONVSEL_REORDER_MODEL_THREADS) || KEY("a_ms") ||
        msgpack_pack_array(pk, REORDER_CELLS))
        return -1;
    for (size_t k = 0; k < REORDER_CELLS; k++)
        if (msgpack_pack_double(pk, a[k]))
            return -1;
    if (KEY("b_ms_per_mb") || msgpack_pack_array(pk, REORDER_CELLS))
        return -1;
    for (size_t k = 0; k < REORDER_CELLS; k++)
        if (msgpack_pack_double(pk, b[k]))
            return -1;
    if (KEY("n_records") || msgpack_pack_array(pk, REORDER_CELLS))
        return -1;
    for (size_t k = 0; k < REORDER_CELLS; k++)
        if (msgpack_pack_int64(pk, n[k]))
            return -1;
    return KEY("fallback_ms_per_mb") || msgpack_pack_double(pk, r->fallback_ms_per_mb);
}

static int pack_model(msgpack_packer *pk, const convsel_model *m)
{
    const convsel_train_params *p = &m->params;
    /* A model without calibrations stays version 1, byte for byte, so that
     * its id and older readers do not change. */
    int calibrated = m->n_calibrations > 0;
    size_t n_keys = (calibrated ? 10 : 9) + 1 + (m->reorders != NULL);
    if (msgpack_pack_map(pk, n_keys) || KEY("magic") || pack_string(pk, CONVSEL_MODEL_MAGIC) ||
        KEY("version") ||
        msgpack_pack_int64(pk, calibrated ? CONVSEL_MODEL_FORMAT_VERSION_CALIBRATED : CONVSEL_MODEL_FORMAT_VERSION))
        return -1;
    if (KEY("schema") || msgpack_pack_map(pk, 2) || KEY("version") ||
        msgpack_pack_int64(pk, CONVSEL_FEATURE_SCHEMA_VERSION) || KEY("features") ||
        msgpack_pack_array(pk, CONVSEL_FEATURE_COUNT))
        return -1;
    for (size_t f = 0; f < CONVSEL_FEATURE_COUNT; f++)
        if (pack_string(pk, convsel_feature_name(f)))
            return -1;
    if (KEY("target") || msgpack_pack_map(pk, 4) || KEY("transform") || pack_string(pk, target_text(p->target)) ||
        KEY("statistic") || pack_string(pk, convsel_statistic_names[p->statistic]) || KEY("peak_gflops") ||
        msgpack_pack_double(pk, p->peak_gflops) || KEY("bandwidth_gbs") || msgpack_pack_double(pk, p->bandwidth_gbs))
        return -1;
    if (KEY("mode") || pack_string(pk, mode_names[p->mode]))
        return -1;
    if (KEY("params") || pack_params(pk, p))
        return -1;
    if (KEY("fingerprints") || msgpack_pack_array(pk, m->n_fingerprints))
        return -1;
    for (size_t i = 0; i < m->n_fingerprints; i++)
        if (pack_fingerprint(pk, &m->fingerprints[i]))
            return -1;
    if (KEY("primitives") || msgpack_pack_array(pk, m->n_primitives))
        return -1;
    for (size_t i = 0; i < m->n_primitives; i++)
        if (msgpack_pack_map(pk, 3) || KEY("name") ||
            pack_field(pk, m->primitives[i], CONVSEL_PRIMITIVE_NAME_MAX) || KEY("utilisation") ||
            msgpack_pack_double(pk, m->utilisation[i]) || KEY("overhead_ms") ||
            msgpack_pack_double(pk, m->overhead_ms[i]))
            return -1;
    if (KEY("ensembles") || msgpack_pack_array(pk, m->n_ensembles))
        return -1;
    for (size_t e = 0; e < m->n_ensembles; e++)
        if (pack_ensemble(pk, &m->ensembles[e]))
            return -1;
    if (pack_validation(pk, m) || (m->reorders && pack_reorders(pk, m->reorders)))
        return -1;
    if (calibrated && pack_calibrations(pk, m))
        return -1;
    return 0;
}

static int pack_ensemble(msgpack_packer *pk, const convsel_ensemble *en)
{
    if (msgpack_pack_map(pk, 2) || KEY("base") || msgpack_pack_double(pk, en->base) || KEY("trees") ||
        msgpack_pack_array(pk, en->n_trees))
        return -1;
    for (size_t t = 0; t < en->n_trees; t++)
        if (pack_tree(pk, &en->trees[t]))
            return -1;
    return 0;
}
#undef KEY

convsel_status convsel_model_serialize(const convsel_model *model, uint8_t **data, size_t *size)
{
    msgpack_sbuffer buf;
    msgpack_sbuffer_init(&buf);
    msgpack_packer pk;
    msgpack_packer_init(&pk, &buf, msgpack_sbuffer_write);
    if (pack_model(&pk, model)) {
        msgpack_sbuffer_destroy(&buf);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory serialising a model");
    }
    *data = (uint8_t *)buf.data;
    *size = buf.size;
    return CONVSEL_OK;
}

convsel_status convsel_model_update_id(convsel_model *model)
{
    uint8_t *data;
    size_t size;
    convsel_status st = convsel_model_serialize(model, &data, &size);
    if (st != CONVSEL_OK)
        return st;
    convsel_model_hash_id(data, size, model->id);
    free(data);
    return CONVSEL_OK;
}

convsel_status convsel_model_save(const convsel_model *model, const char *path)
{
    if (!model || !path)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "NULL argument");
    uint8_t *data;
    size_t size;
    convsel_status st = convsel_model_serialize(model, &data, &size);
    if (st != CONVSEL_OK)
        return st;
    /* Written aside and renamed, so a crash never leaves half a model. */
    char tmp[4096];
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp%ld", path, (long)getpid()) >= sizeof tmp) {
        free(data);
        return convsel_error(CONVSEL_IO_ERROR, "%s: path too long", path);
    }
    FILE *f = fopen(tmp, "wb");
    if (!f) {
        int e = errno;
        free(data);
        return convsel_error(CONVSEL_IO_ERROR, "%s: %s", path, strerror(e));
    }
    int bad = fwrite(data, 1, size, f) != size;
    bad |= fflush(f) != 0;
    bad |= fsync(fileno(f)) != 0;
    bad |= fclose(f) != 0;
    free(data);
    if (bad || rename(tmp, path) != 0) {
        int e = errno;
        unlink(tmp);
        return convsel_error(CONVSEL_IO_ERROR, "%s: %s", path, strerror(e));
    }
    return CONVSEL_OK;
}

/* ---------------------------------------------------------------- reading */

typedef struct cursor {
    const uint8_t *p;
    size_t size, pos;
    const char *name;
    convsel_status status; /* first failure; later reads do nothing */
} cursor;

static convsel_status fail(cursor *c, convsel_status st, const char *what)
{
    if (c->status == CONVSEL_OK)
        c->status = convsel_error(st, "%s: offset %zu: %s", c->name, c->pos, what);
    return c->status;
}

static int need(cursor *c, size_t n)
{
    if (c->status != CONVSEL_OK)
        return 0;
    if (c->size - c->pos < n) {
        fail(c, CONVSEL_CORRUPT, "truncated");
        return 0;
    }
    return 1;
}

static uint64_t be(const uint8_t *p, int n)
{
    uint64_t v = 0;
    for (int i = 0; i < n; i++)
        v = v << 8 | p[i];
    return v;
}

static int peek(cursor *c)
{
    return need(c, 1) ? c->p[c->pos] : -1;
}

/* A container header: map (pairs) or array (elements). Each element takes at
 * least one byte, so a count beyond the bytes left is corrupt. */
static size_t read_container(cursor *c, int map)
{
    int t = peek(c);
    if (t < 0)
        return 0;
    size_t n, head;
    if (map && (t & 0xf0) == 0x80)
        n = t & 0x0f, head = 1;
    else if (!map && (t & 0xf0) == 0x90)
        n = t & 0x0f, head = 1;
    else if (t == (map ? 0xde : 0xdc))
        head = 3, n = need(c, 3) ? (size_t)be(c->p + c->pos + 1, 2) : 0;
    else if (t == (map ? 0xdf : 0xdd))
        head = 5, n = need(c, 5) ? (size_t)be(c->p + c->pos + 1, 4) : 0;
    else {
        fail(c, CONVSEL_CORRUPT, map ? "expected a map" : "expected an array");
        return 0;
    }
    if (c->status != CONVSEL_OK)
        return 0;
    c->pos += head;
    if (n > (c->size - c->pos) / (map ? 2 : 1)) {
        fail(c, CONVSEL_CORRUPT, "count larger than the bytes left (truncated or corrupt)");
        return 0;
    }
    return n;
}

static size_t read_map(cursor *c)
{
    return read_container(c, 1);
}

static size_t read_array(cursor *c)
{
    return read_container(c, 0);
}

/* A string; *len and the returned pointer point into the buffer (not NUL-terminated). */
static const char *read_str(cursor *c, size_t *len)
{
    *len = 0;
    int t = peek(c);
    if (t < 0)
        return NULL;
    size_t n, head;
    if ((t & 0xe0) == 0xa0)
        n = t & 0x1f, head = 1;
    else if (t == 0xd9)
        head = 2, n = need(c, 2) ? c->p[c->pos + 1] : 0;
    else if (t == 0xda)
        head = 3, n = need(c, 3) ? (size_t)be(c->p + c->pos + 1, 2) : 0;
    else if (t == 0xdb)
        head = 5, n = need(c, 5) ? (size_t)be(c->p + c->pos + 1, 4) : 0;
    else {
        fail(c, CONVSEL_CORRUPT, "expected a string");
        return NULL;
    }
    if (c->status != CONVSEL_OK || !need(c, head + n))
        return NULL;
    const char *s = (const char *)c->p + c->pos + head;
    c->pos += head + n;
    *len = n;
    return s;
}

/* Reads a string into buf (size bytes with the NUL); longer ones are corrupt. */
static void read_str_into(cursor *c, char *buf, size_t size, const char *what)
{
    size_t len;
    const char *s = read_str(c, &len);
    if (!s) {
        if (c->status == CONVSEL_OK)
            fail(c, CONVSEL_CORRUPT, what);
        buf[0] = '\0';
        return;
    }
    if (len >= size || memchr(s, '\0', len)) {
        char why[160];
        snprintf(why, sizeof why, "%s: string too long or holds a NUL", what);
        fail(c, CONVSEL_CORRUPT, why);
        buf[0] = '\0';
        return;
    }
    memcpy(buf, s, len);
    buf[len] = '\0';
}

static int str_is(const char *s, size_t len, const char *text)
{
    return s && strlen(text) == len && memcmp(s, text, len) == 0;
}

/* Any msgpack integer; *is_negative tells int64 from uint64 range. */
static int read_integer(cursor *c, uint64_t *u, int *negative)
{
    int t = peek(c);
    if (t < 0)
        return 0;
    *negative = 0;
    if (t <= 0x7f) {
        *u = (uint64_t)t;
        c->pos += 1;
        return 1;
    }
    if (t >= 0xe0) {
        *u = (uint64_t)(int64_t)(int8_t)t;
        *negative = 1;
        c->pos += 1;
        return 1;
    }
    int n;
    int is_signed;
    switch (t) {
    case 0xcc: n = 1, is_signed = 0; break;
    case 0xcd: n = 2, is_signed = 0; break;
    case 0xce: n = 4, is_signed = 0; break;
    case 0xcf: n = 8, is_signed = 0; break;
    case 0xd0: n = 1, is_signed = 1; break;
    case 0xd1: n = 2, is_signed = 1; break;
    case 0xd2: n = 4, is_signed = 1; break;
    case 0xd3: n = 8, is_signed = 1; break;
    default:
        fail(c, CONVSEL_CORRUPT, "expected an integer");
        return 0;
    }
    if (!need(c, 1 + (size_t)n))
        return 0;
    uint64_t v = be(c->p + c->pos + 1, n);
    c->pos += 1 + (size_t)n;
    if (is_signed) {
        int shift = 64 - 8 * n;
        int64_t s = (int64_t)(v << shift) >> shift;
        *negative = s < 0;
        v = (uint64_t)s;
    }
    *u = v;
    return 1;
}

static int64_t read_int(cursor *c, int64_t lo, int64_t hi, const char *what)
{
    uint64_t u;
    int negative;
    if (!read_integer(c, &u, &negative))
        return lo;
    if (!negative && u > (uint64_t)INT64_MAX) {
        fail(c, CONVSEL_CORRUPT, what);
        return lo;
    }
    int64_t v = (int64_t)u;
    if (v < lo || v > hi) {
        char why[160];
        snprintf(why, sizeof why, "%s out of range (%lld)", what, (long long)v);
        fail(c, CONVSEL_CORRUPT, why);
        return lo;
    }
    return v;
}

static uint64_t read_uint(cursor *c, const char *what)
{
    uint64_t u;
    int negative;
    if (!read_integer(c, &u, &negative))
        return 0;
    if (negative) {
        fail(c, CONVSEL_CORRUPT, what);
        return 0;
    }
    return u;
}

/* A float32 or float64 (integers accepted for hand-written files). */
static double read_real(cursor *c)
{
    int t = peek(c);
    if (t < 0)
        return 0;
    if (t == 0xca || t == 0xcb) {
        size_t n = t == 0xca ? 4 : 8;
        if (!need(c, 1 + n))
            return 0;
        uint64_t bits = be(c->p + c->pos + 1, (int)n);
        c->pos += 1 + n;
        if (n == 4) {
            uint32_t b32 = (uint32_t)bits;
            float f;
            memcpy(&f, &b32, sizeof f);
            return f;
        }
        double d;
        memcpy(&d, &bits, sizeof d);
        return d;
    }
    uint64_t u;
    int negative;
    if (!read_integer(c, &u, &negative))
        return 0;
    return negative ? (double)(int64_t)u : (double)u;
}

static double read_finite(cursor *c, const char *what)
{
    double v = read_real(c);
    if (c->status == CONVSEL_OK && !isfinite(v))
        fail(c, CONVSEL_CORRUPT, what);
    return v;
}

static int read_bool(cursor *c, const char *what)
{
    int t = peek(c);
    if (t < 0)
        return 0;
    if (t != 0xc2 && t != 0xc3) {
        fail(c, CONVSEL_CORRUPT, what);
        return 0;
    }
    c->pos++;
    return t == 0xc3;
}

/* Skips one value of any type, iteratively: pending counts the values still
 * to skip, so a deeply nested file costs no stack. */
static void skip(cursor *c)
{
    size_t pending = 1;
    while (pending > 0 && c->status == CONVSEL_OK) {
        pending--;
        int t = peek(c);
        if (t < 0)
            return;
        size_t len;
        if (t <= 0x7f || t >= 0xe0 || t == 0xc0 || t == 0xc2 || t == 0xc3) {
            c->pos++;
        } else if ((t & 0xf0) == 0x80 || t == 0xde || t == 0xdf) {
            size_t n = read_map(c);
            if (n > SIZE_MAX / 2 - pending)
                return (void)fail(c, CONVSEL_CORRUPT, "count overflow");
            pending += 2 * n;
        } else if ((t & 0xf0) == 0x90 || t == 0xdc || t == 0xdd) {
            pending += read_array(c);
        } else if ((t & 0xe0) == 0xa0 || t == 0xd9 || t == 0xda || t == 0xdb) {
            read_str(c, &len);
        } else if (t == 0xc4 || t == 0xc5 || t == 0xc6) { /* bin */
            int n = t == 0xc4 ? 1 : t == 0xc5 ? 2 : 4;
            if (!need(c, 1 + (size_t)n))
                return;
            size_t body = (size_t)be(c->p + c->pos + 1, n);
            c->pos += 1 + (size_t)n;
            if (!need(c, body))
                return;
            c->pos += body;
        } else if (t == 0xca || t == 0xcb) {
            read_real(c);
        } else if ((t >= 0xcc && t <= 0xd3)) {
            uint64_t u;
            int negative;
            read_integer(c, &u, &negative);
        } else if (t >= 0xd4 && t <= 0xd8) { /* fixext */
            size_t body = (size_t)1 << (t - 0xd4);
            if (!need(c, 2 + body))
                return;
            c->pos += 2 + body;
        } else if (t == 0xc7 || t == 0xc8 || t == 0xc9) { /* ext */
            int n = t == 0xc7 ? 1 : t == 0xc8 ? 2 : 4;
            if (!need(c, 2 + (size_t)n))
                return;
            size_t body = (size_t)be(c->p + c->pos + 1, n);
            c->pos += 2 + (size_t)n;
            if (!need(c, body))
                return;
            c->pos += body;
        } else {
            fail(c, CONVSEL_CORRUPT, "invalid msgpack type byte");
        }
    }
}

static int parse_name(const char *s, size_t len, const char *const *names, int n)
{
    for (int i = 0; i < n; i++)
        if (str_is(s, len, names[i]))
            return i;
    return -1;
}

/* Iterates over a map's keys: for (size_t i = 0; map_next(c, n, &i, &key, &len);) */
static int map_next(cursor *c, size_t n, size_t *i, const char **key, size_t *len)
{
    if (c->status != CONVSEL_OK || *i >= n)
        return 0;
    (*i)++;
    *key = read_str(c, len);
    return c->status == CONVSEL_OK;
}

static void parse_fingerprint(cursor *c, convsel_fingerprint *f)
{
    memset(f, 0, sizeof *f);
    size_t n = read_map(c), len;
    const char *k;
    unsigned seen = 0;
    for (size_t i = 0; map_next(c, n, &i, &k, &len);) {
        if (str_is(k, len, "vendor"))
            read_str_into(c, f->vendor, sizeof f->vendor, "vendor"), seen |= 1;
        else if (str_is(k, len, "model_name"))
            read_str_into(c, f->model_name, sizeof f->model_name, "model_name"), seen |= 2;
        else if (str_is(k, len, "microarch"))
            read_str_into(c, f->microarch, sizeof f->microarch, "microarch"), seen |= 4;
        else if (str_is(k, len, "isa_flags"))
            read_str_into(c, f->isa_flags, sizeof f->isa_flags, "isa_flags"), seen |= 8;
        else if (str_is(k, len, "isa_cap")) {
            char isa[32];
            read_str_into(c, isa, sizeof isa, "isa_cap");
            if (c->status == CONVSEL_OK && convsel_isa_parse(isa, &f->isa_cap) != CONVSEL_OK)
                fail(c, CONVSEL_CORRUPT, "unknown isa_cap");
            seen |= 16;
        } else if (str_is(k, len, "cores"))
            f->cores = (int)read_int(c, 0, 1 << 20, "cores"), seen |= 32;
        else if (str_is(k, len, "l1d_bytes"))
            f->l1d_bytes = read_int(c, 0, INT64_MAX, "l1d_bytes"), seen |= 64;
        else if (str_is(k, len, "l2_bytes"))
            f->l2_bytes = read_int(c, 0, INT64_MAX, "l2_bytes"), seen |= 128;
        else if (str_is(k, len, "l3_bytes"))
            f->l3_bytes = read_int(c, 0, INT64_MAX, "l3_bytes"), seen |= 256;
        else if (str_is(k, len, "onednn_version"))
            read_str_into(c, f->onednn_version, sizeof f->onednn_version, "onednn_version"), seen |= 512;
        else if (str_is(k, len, "openblas_version"))
            read_str_into(c, f->openblas_version, sizeof f->openblas_version, "openblas_version"), seen |= 1024;
        else
            skip(c);
    }
    if (c->status == CONVSEL_OK && seen != 2047)
        fail(c, CONVSEL_CORRUPT, "fingerprint lacks a field");
}

static void parse_params(cursor *c, convsel_train_params *p)
{
    size_t n = read_map(c), len;
    const char *k;
    for (size_t i = 0; map_next(c, n, &i, &k, &len);) {
        if (str_is(k, len, "trees"))
            p->trees = (int)read_int(c, 0, 100000, "trees");
        else if (str_is(k, len, "learning_rate"))
            p->learning_rate = read_finite(c, "learning_rate");
        else if (str_is(k, len, "max_depth"))
            p->max_depth = (int)read_int(c, 0, 30, "max_depth");
        else if (str_is(k, len, "min_leaf"))
            p->min_leaf = (int)read_int(c, 1, INT32_MAX, "min_leaf");
        else if (str_is(k, len, "lambda"))
            p->lambda = read_finite(c, "lambda");
        else if (str_is(k, len, "min_gain"))
            p->min_gain = read_finite(c, "min_gain");
        else if (str_is(k, len, "row_subsample"))
            p->row_subsample = read_finite(c, "row_subsample");
        else if (str_is(k, len, "col_subsample"))
            p->col_subsample = read_finite(c, "col_subsample");
        else if (str_is(k, len, "max_bins"))
            p->max_bins = (int)read_int(c, 2, 256, "max_bins");
        else if (str_is(k, len, "valid_fraction"))
            p->valid_fraction = read_finite(c, "valid_fraction");
        else if (str_is(k, len, "patience"))
            p->patience = (int)read_int(c, 1, INT32_MAX, "patience");
        else if (str_is(k, len, "seed"))
            p->seed = read_uint(c, "seed");
        else if (str_is(k, len, "bags"))
            p->bags = (int)read_int(c, 1, CONVSEL_MAX_BAGS, "bags");
        else
            skip(c);
    }
}

static void parse_schema(cursor *c)
{
    size_t n = read_map(c), len;
    const char *k;
    int have_version = 0, have_features = 0;
    for (size_t i = 0; map_next(c, n, &i, &k, &len);) {
        if (str_is(k, len, "version")) {
            int64_t v = read_int(c, INT64_MIN, INT64_MAX, "schema version");
            have_version = 1;
            if (c->status == CONVSEL_OK && v != CONVSEL_FEATURE_SCHEMA_VERSION) {
                char why[160];
                snprintf(why, sizeof why, "feature schema version %lld, this build reads %d", (long long)v,
                         CONVSEL_FEATURE_SCHEMA_VERSION);
                fail(c, CONVSEL_VERSION_MISMATCH, why);
            }
        } else if (str_is(k, len, "features")) {
            size_t nf = read_array(c);
            have_features = 1;
            if (c->status == CONVSEL_OK && nf != CONVSEL_FEATURE_COUNT) {
                char why[160];
                snprintf(why, sizeof why, "the model has %zu features, this build's schema has %d", nf,
                         CONVSEL_FEATURE_COUNT);
                fail(c, CONVSEL_VERSION_MISMATCH, why);
            }
            for (size_t f = 0; f < nf && c->status == CONVSEL_OK; f++) {
                const char *s = read_str(c, &len);
                if (c->status == CONVSEL_OK && !str_is(s, len, convsel_feature_name(f))) {
                    char why[200];
                    snprintf(why, sizeof why, "feature %zu is '%.*s' in the model, '%s' in this build's schema", f,
                             (int)(len < 64 ? len : 64), s ? s : "", convsel_feature_name(f));
                    fail(c, CONVSEL_VERSION_MISMATCH, why);
                }
            }
        } else {
            skip(c);
        }
    }
    if (c->status == CONVSEL_OK && (!have_version || !have_features))
        fail(c, CONVSEL_CORRUPT, "schema lacks version or features");
}

static void parse_target(cursor *c, convsel_train_params *p)
{
    size_t n = read_map(c), len;
    const char *k, *s;
    unsigned seen = 0;
    for (size_t i = 0; map_next(c, n, &i, &k, &len);) {
        if (str_is(k, len, "transform")) {
            s = read_str(c, &len);
            int t = -1;
            for (int j = 0; s && j < CONVSEL_TARGET_COUNT; j++)
                if (str_is(s, len, target_text((convsel_target)j)))
                    t = j;
            if (c->status == CONVSEL_OK && t < 0)
                fail(c, CONVSEL_CORRUPT, "unknown target transform");
            p->target = (convsel_target)(t < 0 ? 0 : t);
            seen |= 1;
        } else if (str_is(k, len, "statistic")) {
            s = read_str(c, &len);
            int t = parse_name(s, len, convsel_statistic_names, 3);
            if (c->status == CONVSEL_OK && t < 0)
                fail(c, CONVSEL_CORRUPT, "unknown statistic");
            p->statistic = (convsel_statistic)(t < 0 ? 0 : t);
            seen |= 2;
        } else if (str_is(k, len, "peak_gflops")) {
            p->peak_gflops = read_finite(c, "peak_gflops");
            seen |= 4;
        } else if (str_is(k, len, "bandwidth_gbs")) {
            p->bandwidth_gbs = read_finite(c, "bandwidth_gbs");
            seen |= 8;
        } else {
            skip(c);
        }
    }
    if (c->status == CONVSEL_OK && (seen != 15 || !(p->peak_gflops > 0) || !(p->bandwidth_gbs > 0)))
        fail(c, CONVSEL_CORRUPT, "target lacks a field or has a non-positive peak or bandwidth");
}

/* A tree: nodes [feature, threshold, left, right, value, cat_left]. Children
 * must come after their parent, which makes every walk finite. */
static void parse_tree(cursor *c, convsel_tree *t)
{
    size_t n = read_array(c);
    if (c->status != CONVSEL_OK)
        return;
    if (n == 0 || n > INT32_MAX) {
        fail(c, CONVSEL_CORRUPT, "a tree needs 1 to 2^31 nodes");
        return;
    }
    t->nodes = calloc(n, sizeof *t->nodes);
    if (!t->nodes) {
        fail(c, CONVSEL_OUT_OF_MEMORY, "out of memory");
        return;
    }
    t->n_nodes = n;
    for (size_t i = 0; i < n && c->status == CONVSEL_OK; i++) {
        convsel_node *node = &t->nodes[i];
        size_t fields = read_array(c);
        if (c->status == CONVSEL_OK && fields != 6) {
            fail(c, CONVSEL_CORRUPT, "a node has 6 fields");
            return;
        }
        node->feature = (int32_t)read_int(c, -1, CONVSEL_FEATURE_COUNT - 1, "node feature");
        double threshold = read_real(c);
        node->threshold = (float)threshold;
        node->left = (int32_t)read_int(c, -1, INT32_MAX, "node left");
        node->right = (int32_t)read_int(c, -1, INT32_MAX, "node right");
        node->value = read_finite(c, "node value");
        node->cat_left = read_uint(c, "node categories");
        if (c->status != CONVSEL_OK)
            return;
        if (node->feature < 0) {
            if (node->left != -1 || node->right != -1 || node->cat_left)
                fail(c, CONVSEL_CORRUPT, "a leaf with children");
        } else {
            if (node->left <= (int32_t)i || node->right <= (int32_t)i || (size_t)node->left >= n ||
                (size_t)node->right >= n)
                fail(c, CONVSEL_CORRUPT, "a child index outside (parent, node count)");
            else if (isnan(threshold))
                fail(c, CONVSEL_CORRUPT, "a NaN threshold");
            else if (node->cat_left && !convsel_feature_is_categorical((size_t)node->feature))
                fail(c, CONVSEL_CORRUPT, "a category split on a numeric feature");
        }
    }
}

static void parse_ensemble(cursor *c, convsel_ensemble *e)
{
    size_t n = read_map(c), len;
    const char *k;
    int have_base = 0, have_trees = 0;
    for (size_t i = 0; map_next(c, n, &i, &k, &len);) {
        if (str_is(k, len, "base")) {
            e->base = read_finite(c, "ensemble base");
            have_base = 1;
        } else if (str_is(k, len, "trees") && !have_trees) {
            size_t nt = read_array(c);
            have_trees = 1;
            if (c->status != CONVSEL_OK)
                return;
            e->trees = calloc(nt ? nt : 1, sizeof *e->trees);
            if (!e->trees) {
                fail(c, CONVSEL_OUT_OF_MEMORY, "out of memory");
                return;
            }
            for (size_t t = 0; t < nt && c->status == CONVSEL_OK; t++) {
                parse_tree(c, &e->trees[t]);
                e->n_trees = t + 1; /* so that a failure frees what was read */
            }
        } else {
            skip(c);
        }
    }
    if (c->status == CONVSEL_OK && (!have_base || !have_trees))
        fail(c, CONVSEL_CORRUPT, "ensemble lacks base or trees");
}

static void parse_fingerprints(cursor *c, convsel_model *m)
{
    size_t nf = read_array(c);
    if (c->status != CONVSEL_OK)
        return;
    m->fingerprints = calloc(nf ? nf : 1, sizeof *m->fingerprints);
    if (!m->fingerprints) {
        fail(c, CONVSEL_OUT_OF_MEMORY, "out of memory");
        return;
    }
    m->n_fingerprints = nf;
    for (size_t f = 0; f < nf && c->status == CONVSEL_OK; f++)
        parse_fingerprint(c, &m->fingerprints[f]);
}

static void parse_primitives(cursor *c, convsel_model *m)
{
    size_t np = read_array(c), len;
    const char *k;
    if (c->status != CONVSEL_OK)
        return;
    m->primitives = calloc(np ? np : 1, sizeof *m->primitives);
    m->utilisation = calloc(np ? np : 1, sizeof *m->utilisation);
    m->overhead_ms = calloc(np ? np : 1, sizeof *m->overhead_ms);
    if (!m->primitives || !m->utilisation || !m->overhead_ms) {
        fail(c, CONVSEL_OUT_OF_MEMORY, "out of memory");
        return;
    }
    m->n_primitives = np;
    for (size_t p = 0; p < np && c->status == CONVSEL_OK; p++) {
        size_t nk = read_map(c);
        unsigned got = 0;
        for (size_t q = 0; map_next(c, nk, &q, &k, &len);) {
            if (str_is(k, len, "name")) {
                read_str_into(c, m->primitives[p], CONVSEL_PRIMITIVE_NAME_MAX, "primitive name");
                got |= 1;
            } else if (str_is(k, len, "utilisation")) {
                m->utilisation[p] = read_finite(c, "utilisation");
                got |= 2;
            } else if (str_is(k, len, "overhead_ms")) {
                m->overhead_ms[p] = read_finite(c, "overhead_ms");
                if (c->status == CONVSEL_OK && m->overhead_ms[p] < 0)
                    fail(c, CONVSEL_CORRUPT, "a negative overhead_ms");
            } else {
                skip(c);
            }
        }
        if (c->status == CONVSEL_OK && (got != 3 || !m->primitives[p][0] || !(m->utilisation[p] > 0)))
            fail(c, CONVSEL_CORRUPT, "a primitive needs a name and a positive utilisation");
        for (size_t q = 0; q < p && c->status == CONVSEL_OK; q++)
            if (strcmp(m->primitives[q], m->primitives[p]) == 0)
                fail(c, CONVSEL_CORRUPT, "a primitive listed twice");
    }
}

static void parse_ensembles(cursor *c, convsel_model *m)
{
    size_t ne = read_array(c);
    if (c->status != CONVSEL_OK)
        return;
    m->ensembles = calloc(ne ? ne : 1, sizeof *m->ensembles);
    if (!m->ensembles) {
        fail(c, CONVSEL_OUT_OF_MEMORY, "out of memory");
        return;
    }
    m->n_ensembles = ne;
    for (size_t e = 0; e < ne && c->status == CONVSEL_OK; e++)
        parse_ensemble(c, &m->ensembles[e]);
}

/* An array of finite reals into a new array; *n receives the count. */
static double *parse_reals(cursor *c, size_t *n, const char *what)
{
    *n = read_array(c);
    if (c->status != CONVSEL_OK)
        return NULL;
    double *v = calloc(*n ? *n : 1, sizeof *v);
    if (!v) {
        fail(c, CONVSEL_OUT_OF_MEMORY, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < *n && c->status == CONVSEL_OK; i++)
        v[i] = read_finite(c, what);
    return v;
}

static void parse_cells(cursor *c, double *out, int *out_int, const char *what);

/* A list of layout names, which must be this build's (cells are indexed by them). */
static void parse_layouts(cursor *c, const char *what)
{
    size_t len, nl = read_array(c);
    if (c->status == CONVSEL_OK && nl != CONVSEL_LAYOUT_COUNT)
        fail(c, CONVSEL_VERSION_MISMATCH, what);
    for (size_t l = 0; l < nl && c->status == CONVSEL_OK; l++) {
        const char *s = read_str(c, &len);
        if (c->status == CONVSEL_OK && !str_is(s, len, convsel_layout_name((convsel_layout)l)))
            fail(c, CONVSEL_VERSION_MISMATCH, what);
    }
}

/* One finite number per thread slot of this build (other counts are
 * VERSION_MISMATCH) into v. */
static void parse_slots(cursor *c, double *v, const char *what)
{
    size_t nt = read_array(c);
    if (c->status == CONVSEL_OK && nt != CONVSEL_REORDER_MODEL_THREADS)
        fail(c, CONVSEL_VERSION_MISMATCH, "a calibration's thread slots are not this build's");
    for (size_t t = 0; t < nt && c->status == CONVSEL_OK; t++)
        v[t] = read_finite(c, what);
}

static void parse_calibration_reorders(cursor *c, convsel_calibration *cal)
{
    size_t n = read_map(c), len;
    const char *k;
    unsigned seen = 0;
    for (size_t i = 0; map_next(c, n, &i, &k, &len);) {
        if (str_is(k, len, "layouts")) {
            parse_layouts(c, "a calibration's reorder layouts are not this build's");
            seen |= 1;
        } else if (str_is(k, len, "samples")) {
            cal->reorder_samples = read_uint(c, "calibration reorder samples");
            seen |= 2;
        } else if (str_is(k, len, "by_threads") && !(seen & 4)) {
            parse_slots(c, cal->reorder_by_threads, "calibration reorder by_threads");
            seen |= 4;
        } else if (str_is(k, len, "scale")) {
            parse_cells(c, &cal->reorder_scale[0][0][0], NULL, "calibration reorder scale");
            seen |= 8;
        } else if (str_is(k, len, "offset") && !(seen & 16)) {
            parse_slots(c, cal->reorder_offset, "calibration reorder offset");
            seen |= 16;
        } else if (str_is(k, len, "loo_factor") && !(seen & 32)) {
            parse_slots(c, cal->reorder_loo_factor, "calibration reorder loo_factor");
            seen |= 32;
        } else if (str_is(k, len, "loo_offset") && !(seen & 64)) {
            parse_slots(c, cal->reorder_loo_offset, "calibration reorder loo_offset");
            seen |= 64;
        } else if (str_is(k, len, "line_a") && !(seen & 128)) {
            parse_cells(c, &cal->reorder_line_a[0][0][0], NULL, "calibration reorder line_a");
            seen |= 128;
        } else if (str_is(k, len, "line_b") && !(seen & 256)) {
            parse_cells(c, &cal->reorder_line_b[0][0][0], NULL, "calibration reorder line_b");
            seen |= 256;
        } else if (str_is(k, len, "pairs_fittable") && !(seen & 512)) {
            parse_slots(c, cal->reorder_pairs_fittable, "calibration reorder pairs_fittable");
            seen |= 512;
        } else if (str_is(k, len, "pairs_own") && !(seen & 4096)) {
            parse_slots(c, cal->reorder_pairs_own, "calibration reorder pairs_own");
            seen |= 4096;
        } else if (str_is(k, len, "loo_scaled") && !(seen & 1024)) {
            parse_slots(c, cal->reorder_loo_scaled, "calibration reorder loo_scaled");
            seen |= 1024;
        } else if (str_is(k, len, "loo_line") && !(seen & 2048)) {
            parse_slots(c, cal->reorder_loo_line, "calibration reorder loo_line");
            seen |= 2048;
        } else {
            skip(c);
        }
    }
    if (c->status != CONVSEL_OK)
        return;
    if ((seen & 15) != 15 || cal->reorder_samples == 0)
        fail(c, CONVSEL_CORRUPT, "a calibration's reorders lack a field or samples");
    else if ((seen & 112) != 0 && (seen & 112) != 112)
        fail(c, CONVSEL_CORRUPT, "a calibration's reorder offset comes without its errors, or they without it");
    else if ((seen & 8064) != 0 && (seen & 8064) != 8064)
        fail(c, CONVSEL_CORRUPT, "a calibration's own reorder lines come without their errors, or they without them");
    const double *v = &cal->reorder_scale[0][0][0];
    for (size_t j = 0; j < REORDER_CELLS && c->status == CONVSEL_OK; j++)
        if (v[j] < 0)
            fail(c, CONVSEL_CORRUPT, "a negative reorder scale in a calibration");
    const double *la = &cal->reorder_line_a[0][0][0], *lb = &cal->reorder_line_b[0][0][0];
    for (size_t j = 0; j < REORDER_CELLS && c->status == CONVSEL_OK; j++)
        if (la[j] < 0 || lb[j] < 0 || (la[j] > 0 && lb[j] == 0))
            fail(c, CONVSEL_CORRUPT, "a negative reorder line, or a fixed cost without its slope, in a calibration");
    for (size_t t = 0; t < CONVSEL_REORDER_MODEL_THREADS && c->status == CONVSEL_OK; t++)
        if (cal->reorder_pairs_fittable[t] < 0 || cal->reorder_pairs_own[t] < 0 || cal->reorder_loo_scaled[t] < 0 ||
            cal->reorder_loo_line[t] < 0)
            fail(c, CONVSEL_CORRUPT, "a negative reorder line count or error in a calibration");
    for (size_t t = 0; t < CONVSEL_REORDER_MODEL_THREADS && c->status == CONVSEL_OK; t++)
        if (cal->reorder_by_threads[t] < 0)
            fail(c, CONVSEL_CORRUPT, "a negative reorder scale in a calibration");
        else if (cal->reorder_offset[t] < 0 || cal->reorder_loo_factor[t] < 0 || cal->reorder_loo_offset[t] < 0)
            fail(c, CONVSEL_CORRUPT, "a negative reorder offset or error in a calibration");
}

/* An optional map of a calibration: {"samples": uint >= 1, key: n numbers
 * >= 0} (cold-read prices, in-network weights prices), what naming one number in
 * errors. Another count of numbers is VERSION_MISMATCH (a build with other
 * thread slots or primitives). */
static void parse_counted_cells(cursor *c, const char *key, uint64_t *samples, double *v, size_t n_values,
                                const char *what)
{
    char msg[128];
    size_t n = read_map(c), len;
    const char *k;
    unsigned seen = 0;
    for (size_t i = 0; map_next(c, n, &i, &k, &len);) {
        if (str_is(k, len, "samples")) {
            *samples = read_uint(c, what);
            seen |= 1;
        } else if (str_is(k, len, key) && !(seen & 2)) {
            size_t nv = read_array(c);
            snprintf(msg, sizeof msg, "a calibration's %ss are not this build's", what);
            if (c->status == CONVSEL_OK && nv != n_values)
                fail(c, CONVSEL_VERSION_MISMATCH, msg);
            snprintf(msg, sizeof msg, "a negative %s in a calibration", what);
            for (size_t t = 0; t < nv && c->status == CONVSEL_OK; t++) {
                v[t] = read_finite(c, what);
                if (c->status == CONVSEL_OK && v[t] < 0)
                    fail(c, CONVSEL_CORRUPT, msg);
            }
            seen |= 2;
        } else {
            skip(c);
        }
    }
    snprintf(msg, sizeof msg, "a calibration's %ss lack a field or samples", what);
    if (c->status == CONVSEL_OK && (seen != 3 || *samples == 0))
        fail(c, CONVSEL_CORRUPT, msg);
}

/* A calibration's thread counts: 1 to 64 threads each (64: 64 or more), at least one. */
static void parse_threads_mask(cursor *c, uint64_t *mask)
{
    size_t n = read_array(c);
    if (c->status == CONVSEL_OK && (n == 0 || n > 64))
        fail(c, CONVSEL_CORRUPT, "a calibration's thread counts are not 1 to 64 of them");
    for (size_t i = 0; i < n && c->status == CONVSEL_OK; i++) {
        uint64_t t = read_uint(c, "a calibration's thread count");
        if (c->status == CONVSEL_OK && (t < 1 || t > 64))
            fail(c, CONVSEL_CORRUPT, "a calibration's thread count is not in [1, 64]");
        else if (c->status == CONVSEL_OK)
            *mask |= (uint64_t)1 << (t - 1);
    }
}

static void parse_calibration(cursor *c, convsel_calibration *cal)
{
    size_t n = read_map(c), len, na = 0, nb = 0;
    const char *k;
    unsigned seen = 0;
    for (size_t i = 0; map_next(c, n, &i, &k, &len);) {
        if (str_is(k, len, "cpu")) {
            parse_fingerprint(c, &cal->cpu);
            seen |= 1;
        } else if (str_is(k, len, "source_model")) {
            read_str_into(c, cal->source_id, sizeof cal->source_id, "source_model");
            seen |= 2;
        } else if (str_is(k, len, "method")) {
            char text[32];
            read_str_into(c, text, sizeof text, "method");
            if (c->status == CONVSEL_OK && (convsel_calibrate_method_parse(text, &cal->method) != CONVSEL_OK ||
                                            convsel_calibrate_method_chooses(cal->method)))
                fail(c, CONVSEL_CORRUPT, "unknown calibration method");
            seen |= 4;
        } else if (str_is(k, len, "samples")) {
            cal->samples = read_uint(c, "samples");
            seen |= 8;
        } else if (str_is(k, len, "records")) {
            cal->records = read_uint(c, "records");
            seen |= 16;
        } else if (str_is(k, len, "seed")) {
            cal->seed = read_uint(c, "seed");
            seen |= 32;
        } else if (str_is(k, len, "a") && !(seen & 64)) {
            cal->a = parse_reals(c, &na, "calibration a");
            seen |= 64;
        } else if (str_is(k, len, "b") && !(seen & 128)) {
            cal->b = parse_reals(c, &nb, "calibration b");
            seen |= 128;
        } else if (str_is(k, len, "residual") && !(seen & 256)) {
            parse_ensemble(c, &cal->residual);
            seen |= 256;
        } else if (str_is(k, len, "cv_rmse_log")) {
            cal->cv_rmse_log = read_finite(c, "cv_rmse_log");
            if (c->status == CONVSEL_OK && cal->cv_rmse_log < 0)
                fail(c, CONVSEL_CORRUPT, "a negative cv_rmse_log");
        } else if (str_is(k, len, "cv_regret_log")) {
            cal->cv_regret_log = read_finite(c, "cv_regret_log");
            if (c->status == CONVSEL_OK && cal->cv_regret_log < 0)
                fail(c, CONVSEL_CORRUPT, "a negative cv_regret_log");
        } else if (str_is(k, len, "chosen_by_auto")) {
            cal->auto_chosen = read_bool(c, "chosen_by_auto is not true or false");
        } else if (str_is(k, len, "threads") && !(seen & 4096)) {
            parse_threads_mask(c, &cal->threads_mask);
            seen |= 4096;
        } else if (str_is(k, len, "reorders") && !(seen & 512)) {
            parse_calibration_reorders(c, cal);
            seen |= 512;
        } else if (str_is(k, len, "cold") && !(seen & 1024)) {
            parse_counted_cells(c, "ms_per_mb", &cal->cold_samples, cal->cold_ms_per_mb,
                                CONVSEL_REORDER_MODEL_THREADS, "cold-read price");
            seen |= 1024;
        } else if (str_is(k, len, "in_network") && !(seen & 2048)) {
            /* The thirty-sixth session's factors ("factor") are no longer
             * read: a file with them alone is refused. */
            parse_counted_cells(c, "ms_per_mb", &cal->network_samples, &cal->network_ms_per_mb[0][0], NETWORK_CELLS,
                                "in-network weights price");
            seen |= 2048;
        } else {
            skip(c);
        }
    }
    cal->n_primitives = na;
    if (c->status == CONVSEL_OK && ((seen & 511) != 511 || na != nb))
        fail(c, CONVSEL_CORRUPT, "a calibration lacks a field or its a and b differ in length");
}

static void parse_calibrations(cursor *c, convsel_model *m)
{
    size_t nc = read_array(c);
    if (c->status != CONVSEL_OK)
        return;
    m->calibrations = calloc(nc ? nc : 1, sizeof *m->calibrations);
    if (!m->calibrations) {
        fail(c, CONVSEL_OUT_OF_MEMORY, "out of memory");
        return;
    }
    for (size_t k = 0; k < nc && c->status == CONVSEL_OK; k++) {
        m->n_calibrations = k + 1; /* so that a failure frees what was read */
        parse_calibration(c, &m->calibrations[k]);
    }
}

static void parse_validation(cursor *c, convsel_model *m)
{
    size_t n = read_map(c), len;
    const char *k;
    for (size_t i = 0; map_next(c, n, &i, &k, &len);) {
        if (str_is(k, len, "rmse_log"))
            m->valid_rmse_log = read_finite(c, "validation rmse_log");
        else if (str_is(k, len, "rows"))
            m->valid_rows = read_uint(c, "validation rows");
        else
            skip(c);
    }
    if (c->status == CONVSEL_OK && !(m->valid_rmse_log >= 0))
        fail(c, CONVSEL_CORRUPT, "a negative validation error");
}

/* A flat array of exactly REORDER_CELLS numbers. */
static void parse_cells(cursor *c, double *out, int *out_int, const char *what)
{
    size_t n = read_array(c);
    if (c->status == CONVSEL_OK && n != REORDER_CELLS) {
        fail(c, CONVSEL_CORRUPT, what);
        return;
    }
    for (size_t k = 0; k < n && c->status == CONVSEL_OK; k++) {
        if (out)
            out[k] = read_finite(c, what);
        else
            out_int[k] = (int)read_int(c, 0, INT32_MAX, what);
    }
}

static void parse_reorders(cursor *c, convsel_model *m)
{
    size_t n = read_map(c), len;
    const char *k;
    if (c->status != CONVSEL_OK)
        return;
    convsel_reorder_model *r = calloc(1, sizeof *r);
    if (!r) {
        fail(c, CONVSEL_OUT_OF_MEMORY, "out of memory");
        return;
    }
    m->reorders = r;
    unsigned seen = 0;
    for (size_t i = 0; map_next(c, n, &i, &k, &len);) {
        if (str_is(k, len, "layouts")) {
            /* Another list means another build's model. */
            parse_layouts(c, "the reorder model's layouts are not this build's");
            seen |= 1;
        } else if (str_is(k, len, "threads")) {
            if (read_int(c, INT64_MIN, INT64_MAX, "reorder threads") != CONVSEL_REORDER_MODEL_THREADS &&
                c->status == CONVSEL_OK)
                fail(c, CONVSEL_VERSION_MISMATCH, "the reorder model's thread slots are not this build's");
            seen |= 2;
        } else if (str_is(k, len, "a_ms")) {
            parse_cells(c, &r->a_ms[0][0][0], NULL, "reorder a_ms");
            seen |= 4;
        } else if (str_is(k, len, "b_ms_per_mb")) {
            parse_cells(c, &r->b_ms_per_mb[0][0][0], NULL, "reorder b_ms_per_mb");
            seen |= 8;
        } else if (str_is(k, len, "n_records")) {
            parse_cells(c, NULL, &r->n_records[0][0][0], "reorder n_records");
            seen |= 16;
        } else if (str_is(k, len, "fallback_ms_per_mb")) {
            r->fallback_ms_per_mb = read_finite(c, "reorder fallback_ms_per_mb");
            seen |= 32;
        } else {
            skip(c);
        }
    }
    if (c->status == CONVSEL_OK && seen != 63)
        fail(c, CONVSEL_CORRUPT, "the reorder model lacks a field");
}

static void parse_model(cursor *c, convsel_model *m)
{
    size_t n = read_map(c), len;
    const char *k;
    if (c->status != CONVSEL_OK) {
        c->status = CONVSEL_OK;
        fail(c, CONVSEL_CORRUPT, "not a convsel model (no top-level map)");
        return;
    }
    /* magic and version come first, so that a foreign or future file is
     * told apart from a broken one before anything else is read. */
    size_t i = 0;
    const char *s;
    if (!map_next(c, n, &i, &k, &len) || !str_is(k, len, "magic") || !(s = read_str(c, &len)) ||
        !str_is(s, len, CONVSEL_MODEL_MAGIC)) {
        c->status = CONVSEL_OK;
        fail(c, CONVSEL_CORRUPT, "not a convsel model (bad magic)");
        return;
    }
    if (!map_next(c, n, &i, &k, &len) || !str_is(k, len, "version")) {
        fail(c, CONVSEL_CORRUPT, "no format version after the magic");
        return;
    }
    int64_t version = read_int(c, INT64_MIN, INT64_MAX, "version");
    if (c->status != CONVSEL_OK)
        return;
    if (version != CONVSEL_MODEL_FORMAT_VERSION && version != CONVSEL_MODEL_FORMAT_VERSION_CALIBRATED) {
        char why[160];
        snprintf(why, sizeof why, "model format version %lld, this build reads versions %d and %d",
                 (long long)version, CONVSEL_MODEL_FORMAT_VERSION, CONVSEL_MODEL_FORMAT_VERSION_CALIBRATED);
        fail(c, CONVSEL_VERSION_MISMATCH, why);
        return;
    }
    unsigned seen = 0;
    int mode = -1;
    convsel_train_params_default(&m->params);
    m->params.threads = 0;
    m->params.bags = 1; /* a file names bags only when it is not 1 */
    static const char *const keys[] = {"schema", "target", "mode", "params", "fingerprints", "primitives",
                                       "ensembles", "calibrations"};
    /* Calibrations exist from version 2 on; in a version 1 file the key is
     * an unknown one. */
    int n_keys = version >= CONVSEL_MODEL_FORMAT_VERSION_CALIBRATED ? 8 : 7;
    while (map_next(c, n, &i, &k, &len)) {
        /* Optional keys: the held-out error and the reorder cost model. */
        if (str_is(k, len, "validation") || str_is(k, len, "reorders")) {
            unsigned bit = str_is(k, len, "validation") ? 1u << 20 : 1u << 21;
            if (seen & bit) {
                fail(c, CONVSEL_CORRUPT, "a key appears twice");
                return;
            }
            seen |= bit;
            if (bit == 1u << 20)
                parse_validation(c, m);
            else
                parse_reorders(c, m);
            continue;
        }
        int which = parse_name(k, len, keys, n_keys);
        if (which < 0) {
            skip(c);
            continue;
        }
        if (seen & (1u << which)) {
            fail(c, CONVSEL_CORRUPT, "a key appears twice");
            return;
        }
        seen |= 1u << which;
        switch (which) {
        case 0:
            parse_schema(c);
            break;
        case 1:
            parse_target(c, &m->params);
            break;
        case 2:
            s = read_str(c, &len);
            mode = parse_name(s, len, mode_names, 2);
            if (c->status == CONVSEL_OK && mode < 0)
                fail(c, CONVSEL_CORRUPT, "unknown mode");
            break;
        case 3:
            parse_params(c, &m->params);
            break;
        case 4:
            parse_fingerprints(c, m);
            break;
        case 5:
            parse_primitives(c, m);
            break;
        case 6:
            parse_ensembles(c, m);
            break;
        default:
            parse_calibrations(c, m);
            break;
        }
    }
    if (c->status != CONVSEL_OK)
        return;
    if ((seen & 127) != 127) {
        fail(c, CONVSEL_CORRUPT, "a required key is missing (schema, target, mode, params, fingerprints, "
                                 "primitives, ensembles)");
        return;
    }
    if (c->pos != c->size) {
        fail(c, CONVSEL_CORRUPT, "trailing bytes after the model");
        return;
    }
    m->params.mode = (convsel_model_mode)mode;
    size_t want = m->params.mode == CONVSEL_MODEL_SINGLE ? 1 : m->n_primitives;
    if (m->n_primitives == 0 || m->n_ensembles != want) {
        fail(c, CONVSEL_CORRUPT, "the ensembles do not match the primitives and mode");
        return;
    }
    if (m->params.mode == CONVSEL_MODEL_SINGLE && m->n_primitives > CONVSEL_MAX_CATEGORIES)
        fail(c, CONVSEL_CORRUPT, "too many primitives for a single model");
    for (size_t k = 0; k < m->n_calibrations && c->status == CONVSEL_OK; k++)
        if (m->calibrations[k].n_primitives != m->n_primitives)
            fail(c, CONVSEL_CORRUPT, "a calibration does not match the model's primitives");
}

convsel_status convsel_model_parse(const uint8_t *data, size_t size, const char *name, convsel_model **out)
{
    *out = NULL;
    convsel_model *m = calloc(1, sizeof *m);
    if (!m)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "%s: out of memory", name);
    cursor c = {.p = data, .size = size, .pos = 0, .name = name, .status = CONVSEL_OK};
    if (size == 0) {
        free(m);
        return convsel_error(CONVSEL_CORRUPT, "%s: empty file, not a convsel model", name);
    }
    /* The id's hash (a byte at a time, about a third of a large model's
     * load) runs on a second core beside the parse and the layout. The
     * calling thread (0) parses, so that a failure's message is its own. */
    char id[17];
#pragma omp parallel num_threads(2) if (size >= PARALLEL_HASH_BYTES)
    {
        if (omp_get_thread_num() == 0) {
            parse_model(&c, m);
            if (c.status == CONVSEL_OK)
                convsel_model_lay_out(m);
        }
        if (omp_get_thread_num() == omp_get_num_threads() - 1)
            convsel_model_hash_id(data, size, id);
    }
    if (c.status != CONVSEL_OK) {
        convsel_model_destroy(m);
        return c.status;
    }
    memcpy(m->id, id, sizeof id);
    *out = m;
    return CONVSEL_OK;
}

convsel_status convsel_model_load(const char *path, convsel_model **model)
{
    if (!path || !model)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "NULL argument");
    *model = NULL;
    FILE *f = fopen(path, "rb");
    if (!f)
        return convsel_error(CONVSEL_IO_ERROR, "%s: %s", path, strerror(errno));
    /* A regular file is read into a buffer of its size (one allocation,
     * each page touched once); anything else grows one as it is read. The
     * file's end is still found by reading, not trusted from stat. */
    struct stat sb;
    size_t cap = 1 << 16, size = 0;
    const int have_stat = fstat(fileno(f), &sb) == 0;
    if (have_stat && S_ISDIR(sb.st_mode)) {
        fclose(f);
        return convsel_error(CONVSEL_IO_ERROR, "%s: a directory, not a model file", path);
    }
    if (have_stat && S_ISREG(sb.st_mode) && sb.st_size > 0 &&
        (uint64_t)sb.st_size < MODEL_MAX_FILE_BYTES)
        cap = (size_t)sb.st_size + 1;
    uint8_t *data = malloc(cap);
    convsel_status st = CONVSEL_OK;
    while (data) {
        if (size == cap) {
            if (cap >= MODEL_MAX_FILE_BYTES) {
                st = convsel_error(CONVSEL_CORRUPT, "%s: larger than %zu bytes, not a model", path,
                                   MODEL_MAX_FILE_BYTES);
                break;
            }
            uint8_t *bigger = realloc(data, cap * 2);
            if (!bigger)
                break;
            data = bigger;
            cap *= 2;
        }
        size_t got = fread(data + size, 1, cap - size, f);
        size += got;
        if (got == 0) {
            if (ferror(f))
                st = convsel_error(CONVSEL_IO_ERROR, "%s: read error", path);
            break;
        }
    }
    fclose(f);
    if (!data || (st == CONVSEL_OK && size == cap))
        st = convsel_error(CONVSEL_OUT_OF_MEMORY, "%s: out of memory", path);
    if (st == CONVSEL_OK)
        st = convsel_model_parse(data, size, path, model);
    free(data);
    return st;
}
