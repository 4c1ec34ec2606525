/*
 * Dataset files (docs/dataset-format.md): a msgpack header map, then a stream
 * of records, each a msgpack array whose columns the header's schema names.
 *
 * Files are appended to while a profile runs, and a profile may be killed at
 * any moment, so reading trusts nothing: a small cursor-based decoder checks
 * every length against the bytes left and every value's type before use,
 * tells a tail cut short (tolerated: the whole records before it are kept)
 * from bytes that make no sense (rejected, with the offset), and allocates
 * nothing a count in the file asks for. msgpack-c's own unpacker allocates a
 * declared array's elements before reading them, so a 5-byte file claiming
 * 2^32 elements would ask for 96 GiB; it is used here for writing only.
 */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <msgpack.h>

#include "dataset_internal.h"
#include "internal.h"

#define DATASET_MAGIC "convsel-dataset"
#define DATASET_VERSION 1
/* Bounds on what a header may declare; far above real use. */
#define MAX_FINGERPRINTS 65536
#define MAX_COLUMNS 256
#define MAX_DEPTH 32

/* ---------------------------------------------------------------- keys */

int convsel_record_config_key(const convsel_record *record, char *buf, size_t size)
{
    char shape[CONVSEL_KEY_MAX];
    convsel_shape_key(&record->problem, shape, sizeof shape);
    return snprintf(buf, size, "%s/t%d/f%u", shape, record->threads, (unsigned)record->fingerprint);
}

/* What makes two records the same measurement: all but timings and names. */
static void measurement_key(const convsel_record *r, char *buf, size_t size)
{
    char config[CONVSEL_KEY_MAX];
    convsel_record_config_key(r, config, sizeof config);
    snprintf(buf, size, "%d/%d/%s/%s/%d/%d/%d", (int)r->kind, (int)r->tensor, config, r->primitive, (int)r->from,
             (int)r->to, (int)r->isa);
}

/* ---------------------------------------------------------------- the container */

struct convsel_dataset {
    convsel_record *records;
    size_t count, capacity;
    convsel_fingerprint *fingerprints;
    size_t n_fingerprints, fp_capacity;
    char warning[512];
    /* Set by loading: the bytes of the header and the whole records (where an
     * append must start), and whether the file's schema is exactly ours. */
    size_t valid_end;
    int schema_is_ours;
};

convsel_status convsel_dataset_create(convsel_dataset **dataset)
{
    if (!dataset)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "dataset out-parameter is NULL");
    *dataset = calloc(1, sizeof **dataset);
    if (!*dataset)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    (*dataset)->schema_is_ours = 1;
    return CONVSEL_OK;
}

void convsel_dataset_destroy(convsel_dataset *dataset)
{
    if (!dataset)
        return;
    free(dataset->records);
    free(dataset->fingerprints);
    free(dataset);
}

size_t convsel_dataset_size(const convsel_dataset *dataset)
{
    return dataset ? dataset->count : 0;
}

const convsel_record *convsel_dataset_record(const convsel_dataset *dataset, size_t i)
{
    return dataset && i < dataset->count ? &dataset->records[i] : NULL;
}

size_t convsel_dataset_fingerprint_count(const convsel_dataset *dataset)
{
    return dataset ? dataset->n_fingerprints : 0;
}

const convsel_fingerprint *convsel_dataset_fingerprint(const convsel_dataset *dataset, size_t i)
{
    return dataset && i < dataset->n_fingerprints ? &dataset->fingerprints[i] : NULL;
}

const char *convsel_dataset_warning(const convsel_dataset *dataset)
{
    return dataset ? dataset->warning : "";
}

static int fingerprint_equal(const convsel_fingerprint *a, const convsel_fingerprint *b)
{
    return convsel_fingerprint_same_cpu(a, b) && strcmp(a->onednn_version, b->onednn_version) == 0 &&
           strcmp(a->openblas_version, b->openblas_version) == 0;
}

static convsel_status push_fingerprint(convsel_dataset *ds, const convsel_fingerprint *fp)
{
    convsel_fingerprint *fps = convsel_grow(ds->fingerprints, ds->n_fingerprints, &ds->fp_capacity, 4, sizeof *fps);
    if (!fps)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory for fingerprints");
    ds->fingerprints = fps;
    ds->fingerprints[ds->n_fingerprints++] = *fp;
    return CONVSEL_OK;
}

convsel_status convsel_dataset_add_fingerprint(convsel_dataset *dataset, const convsel_fingerprint *fingerprint,
                                               uint32_t *index)
{
    if (!dataset || !fingerprint || !index)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "dataset, fingerprint and index are required");
    for (size_t i = 0; i < dataset->n_fingerprints; i++) {
        if (fingerprint_equal(&dataset->fingerprints[i], fingerprint)) {
            *index = (uint32_t)i;
            return CONVSEL_OK;
        }
    }
    if (dataset->n_fingerprints >= MAX_FINGERPRINTS)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "more than %d fingerprints in one dataset", MAX_FINGERPRINTS);
    convsel_status st = push_fingerprint(dataset, fingerprint);
    if (st == CONVSEL_OK)
        *index = (uint32_t)(dataset->n_fingerprints - 1);
    return st;
}

static int valid_time(double ms)
{
    return isfinite(ms) && ms >= 0.0;
}

/* The checks a record passes before it enters a dataset, whether it comes
 * from a file or from the caller. 0 when fine; else a reason in why. */
static int check_record(const convsel_record *r, size_t n_fingerprints, char *why, size_t size)
{
    if (r->kind != CONVSEL_RECORD_CONV && r->kind != CONVSEL_RECORD_REORDER)
        return snprintf(why, size, "unknown record kind %d", (int)r->kind), -1;
    if (r->tensor != CONVSEL_TENSOR_SRC && r->tensor != CONVSEL_TENSOR_DST)
        return snprintf(why, size, "unknown tensor %d", (int)r->tensor), -1;
    if (convsel_problem_validate(&r->problem) != CONVSEL_OK)
        return snprintf(why, size, "invalid problem: %s", convsel_last_error()), -1;
    if (memchr(r->problem.name, '\0', sizeof r->problem.name) == NULL ||
        memchr(r->primitive, '\0', sizeof r->primitive) == NULL || r->primitive[0] == '\0')
        return snprintf(why, size, "primitive name missing or too long"), -1;
    if (memchr(r->kernel, '\0', sizeof r->kernel) == NULL)
        return snprintf(why, size, "kernel name too long"), -1;
    if ((int)r->from < 0 || r->from >= CONVSEL_LAYOUT_COUNT || (int)r->to < 0 || r->to >= CONVSEL_LAYOUT_COUNT)
        return snprintf(why, size, "unknown layout"), -1;
    if ((int)r->isa < 0 || r->isa >= CONVSEL_ISA_COUNT)
        return snprintf(why, size, "unknown ISA %d", (int)r->isa), -1;
    if (r->threads < 1 || r->threads > 65536)
        return snprintf(why, size, "threads %d out of range", r->threads), -1;
    if (r->fingerprint >= n_fingerprints)
        return snprintf(why, size, "fingerprint index %u but %zu fingerprints", (unsigned)r->fingerprint,
                        n_fingerprints),
               -1;
    if (!valid_time(r->min_ms) || !valid_time(r->p10_ms) || !valid_time(r->median_ms) || !valid_time(r->p90_ms) ||
        !valid_time(r->create_ms))
        return snprintf(why, size, "a time is negative or not finite"), -1;
    if (r->runs < 0)
        return snprintf(why, size, "negative run count %d", r->runs), -1;
    return 0;
}

static convsel_status push_record(convsel_dataset *ds, const convsel_record *r)
{
    convsel_record *records = convsel_grow(ds->records, ds->count, &ds->capacity, 256, sizeof *records);
    if (!records)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory for %zu records", ds->count + 1);
    ds->records = records;
    ds->records[ds->count++] = *r;
    return CONVSEL_OK;
}

convsel_status convsel_dataset_append(convsel_dataset *dataset, const convsel_record *record)
{
    char why[512];
    if (!dataset || !record)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "dataset and record are required");
    if (check_record(record, dataset->n_fingerprints, why, sizeof why) != 0)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "record rejected: %s", why);
    return push_record(dataset, record);
}

convsel_status convsel_dataset_merge(convsel_dataset *dataset, const convsel_dataset *src, size_t *added,
                                     size_t *dropped)
{
    char key[CONVSEL_KEY_MAX + 128];
    size_t n_added = 0, n_dropped = 0;
    if (added)
        *added = 0;
    if (dropped)
        *dropped = 0;
    if (!dataset || !src)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "merge: both datasets are required");
    uint32_t *remap = calloc(src->n_fingerprints ? src->n_fingerprints : 1, sizeof *remap);
    if (!remap)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "merge: out of memory");
    convsel_status st = CONVSEL_OK;
    for (size_t i = 0; i < src->n_fingerprints && st == CONVSEL_OK; i++)
        st = convsel_dataset_add_fingerprint(dataset, &src->fingerprints[i], &remap[i]);
    struct convsel_strmap seen;
    convsel_strmap_init(&seen);
    for (size_t i = 0; i < dataset->count && st == CONVSEL_OK; i++) {
        measurement_key(&dataset->records[i], key, sizeof key);
        if (convsel_strmap_put(&seen, key, i) < 0)
            st = convsel_error(CONVSEL_OUT_OF_MEMORY, "merge: out of memory");
    }
    for (size_t i = 0; i < src->count && st == CONVSEL_OK; i++) {
        convsel_record r = src->records[i];
        r.fingerprint = remap[r.fingerprint];
        measurement_key(&r, key, sizeof key);
        int put = convsel_strmap_put(&seen, key, dataset->count);
        if (put < 0)
            st = convsel_error(CONVSEL_OUT_OF_MEMORY, "merge: out of memory");
        else if (put == 0)
            n_dropped++;
        else if ((st = push_record(dataset, &r)) == CONVSEL_OK)
            n_added++;
    }
    convsel_strmap_free(&seen);
    free(remap);
    if (added)
        *added = n_added;
    if (dropped)
        *dropped = n_dropped;
    return st;
}

void convsel_dataset_summarize(const convsel_dataset *dataset, convsel_dataset_summary *summary)
{
    char key[CONVSEL_KEY_MAX];
    memset(summary, 0, sizeof *summary);
    if (!dataset)
        return;
    struct convsel_strmap configs, shapes;
    convsel_strmap_init(&configs);
    convsel_strmap_init(&shapes);
    for (size_t i = 0; i < dataset->count; i++) {
        const convsel_record *r = &dataset->records[i];
        summary->records++;
        if (r->kind == CONVSEL_RECORD_CONV) {
            summary->conv_records++;
            summary->disturbed += r->median_ms > CONVSEL_DISTURBED_RATIO * r->min_ms;
        } else {
            summary->reorder_records++;
        }
        convsel_record_config_key(r, key, sizeof key);
        convsel_strmap_put(&configs, key, 0);
        convsel_shape_key(&r->problem, key, sizeof key);
        convsel_strmap_put(&shapes, key, 0);
    }
    summary->configs = configs.count;
    summary->problems = shapes.count;
    convsel_strmap_free(&configs);
    convsel_strmap_free(&shapes);
}

convsel_status convsel_dataset_disturbed(const convsel_dataset *dataset, double ratio, const convsel_fingerprint *cpu,
                                         convsel_problem **problems, int **threads, size_t *count, size_t *elsewhere)
{
    *problems = NULL;
    *threads = NULL;
    *count = 0;
    if (elsewhere)
        *elsewhere = 0;
    if (!dataset || !(ratio >= 0.0) || isinf(ratio))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "disturbed: need a dataset and a finite ratio >= 0 (got %g)",
                             ratio);
    /* Which fingerprints are this CPU's: only there can a configuration be
     * measured again and the new records replace the old on merging. */
    unsigned char *here = calloc(dataset->n_fingerprints ? dataset->n_fingerprints : 1, 1);
    if (!here)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "disturbed: out of memory");
    for (size_t f = 0; f < dataset->n_fingerprints; f++)
        here[f] = !cpu || fingerprint_equal(&dataset->fingerprints[f], cpu);
    /* Configurations in order of first appearance; a flag per configuration. */
    struct convsel_strmap configs, other;
    convsel_strmap_init(&configs);
    convsel_strmap_init(&other);
    size_t n = 0, cap = 0;
    const convsel_record **firsts = NULL;
    unsigned char *flagged = NULL;
    char key[CONVSEL_KEY_MAX];
    convsel_status st = CONVSEL_OK;
    for (size_t i = 0; i < dataset->count && st == CONVSEL_OK; i++) {
        const convsel_record *r = &dataset->records[i];
        const int bad = r->kind == CONVSEL_RECORD_CONV && r->median_ms > ratio * r->min_ms;
        convsel_record_config_key(r, key, sizeof key);
        if (!here[r->fingerprint]) {
            if (bad && convsel_strmap_put(&other, key, 0) < 0)
                st = convsel_error(CONVSEL_OUT_OF_MEMORY, "disturbed: out of memory");
            continue;
        }
        size_t at;
        if (!convsel_strmap_get(&configs, key, &at)) {
            if (n == cap) {
                size_t c = cap ? 2 * cap : 64;
                const convsel_record **f = realloc(firsts, c * sizeof *f);
                unsigned char *g = f ? realloc(flagged, c) : NULL;
                if (f)
                    firsts = f;
                if (g)
                    flagged = g;
                if (!f || !g) {
                    st = convsel_error(CONVSEL_OUT_OF_MEMORY, "disturbed: out of memory");
                    break;
                }
                cap = c;
            }
            if (convsel_strmap_put(&configs, key, n) < 0) {
                st = convsel_error(CONVSEL_OUT_OF_MEMORY, "disturbed: out of memory");
                break;
            }
            at = n;
            firsts[n] = r;
            flagged[n++] = 0;
        }
        flagged[at] |= bad;
    }
    size_t k = 0;
    for (size_t c = 0; c < n; c++)
        k += flagged[c];
    if (st == CONVSEL_OK && k) {
        *problems = malloc(k * sizeof **problems);
        *threads = malloc(k * sizeof **threads);
        if (!*problems || !*threads) {
            free(*problems);
            free(*threads);
            *problems = NULL;
            *threads = NULL;
            st = convsel_error(CONVSEL_OUT_OF_MEMORY, "disturbed: out of memory");
        }
    }
    if (st == CONVSEL_OK) {
        for (size_t c = 0, j = 0; c < n; c++)
            if (flagged[c]) {
                (*problems)[j] = firsts[c]->problem;
                (*threads)[j++] = firsts[c]->threads;
            }
        *count = k;
        if (elsewhere)
            *elsewhere = other.count;
    }
    convsel_strmap_free(&configs);
    convsel_strmap_free(&other);
    free(firsts);
    free(flagged);
    free(here);
    return st;
}

/* splitmix64, as convsel_fill_random uses: the same split for a seed everywhere. */
static uint64_t split_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static void group_key(const convsel_record *r, convsel_split_by by, char *buf, size_t size)
{
    const char *colon = by == CONVSEL_SPLIT_BY_NETWORK ? strchr(r->problem.name, ':') : NULL;
    if (colon)
        snprintf(buf, size, "net:%.*s", (int)(colon - r->problem.name), r->problem.name);
    else
        convsel_shape_key(&r->problem, buf, size);
}

convsel_status convsel_dataset_split(const convsel_dataset *dataset, double test_frac, uint64_t seed,
                                     convsel_split_by by, convsel_dataset **train, convsel_dataset **test)
{
    char key[CONVSEL_KEY_MAX];
    if (!dataset || !train || !test)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "split: dataset, train and test are required");
    *train = *test = NULL;
    if (!(test_frac >= 0.0 && test_frac <= 1.0))
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "split: test fraction must be in [0, 1] (got %g)", test_frac);
    if (by != CONVSEL_SPLIT_BY_CONFIG && by != CONVSEL_SPLIT_BY_NETWORK)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "split: unknown grouping %d", (int)by);

    struct convsel_strmap groups;
    convsel_strmap_init(&groups);
    size_t *group_of = malloc((dataset->count ? dataset->count : 1) * sizeof *group_of);
    size_t *order = NULL;
    unsigned char *in_test = NULL;
    convsel_status st = group_of ? CONVSEL_OK : convsel_error(CONVSEL_OUT_OF_MEMORY, "split: out of memory");
    for (size_t i = 0; i < dataset->count && st == CONVSEL_OK; i++) {
        group_key(&dataset->records[i], by, key, sizeof key);
        if (convsel_strmap_put(&groups, key, groups.count) < 0)
            st = convsel_error(CONVSEL_OUT_OF_MEMORY, "split: out of memory");
        else
            convsel_strmap_get(&groups, key, &group_of[i]);
    }
    const size_t n_groups = groups.count;
    if (st == CONVSEL_OK) {
        order = malloc((n_groups ? n_groups : 1) * sizeof *order);
        in_test = calloc(n_groups ? n_groups : 1, 1);
        if (!order || !in_test)
            st = convsel_error(CONVSEL_OUT_OF_MEMORY, "split: out of memory");
    }
    if (st == CONVSEL_OK) {
        /* Groups are numbered in order of first appearance, so a seed gives
         * the same split of the same file. Fisher-Yates, then a prefix. */
        uint64_t state = seed;
        for (size_t g = 0; g < n_groups; g++)
            order[g] = g;
        for (size_t g = n_groups; g > 1; g--) {
            size_t j = (size_t)(split_next(&state) % g);
            size_t t = order[g - 1];
            order[g - 1] = order[j];
            order[j] = t;
        }
        size_t n_test = (size_t)llround(test_frac * (double)n_groups);
        for (size_t g = 0; g < n_test && g < n_groups; g++)
            in_test[order[g]] = 1;
    }
    for (int side = 0; side < 2 && st == CONVSEL_OK; side++) {
        convsel_dataset **out = side ? test : train;
        st = convsel_dataset_create(out);
        for (size_t i = 0; i < dataset->n_fingerprints && st == CONVSEL_OK; i++)
            st = push_fingerprint(*out, &dataset->fingerprints[i]);
        for (size_t i = 0; i < dataset->count && st == CONVSEL_OK; i++)
            if (in_test[group_of[i]] == side)
                st = push_record(*out, &dataset->records[i]);
    }
    convsel_strmap_free(&groups);
    free(group_of);
    free(order);
    free(in_test);
    if (st != CONVSEL_OK) {
        convsel_dataset_destroy(*train);
        convsel_dataset_destroy(*test);
        *train = *test = NULL;
    }
    return st;
}

/* ---------------------------------------------------------------- schema */

enum column {
    COL_KIND, COL_TENSOR, COL_NAME, COL_G, COL_MB, COL_IC, COL_IH, COL_IW, COL_OC, COL_OH, COL_OW, COL_KH, COL_KW,
    COL_SH, COL_SW, COL_PH, COL_PW, COL_DH, COL_DW, COL_REPEAT, COL_PRIMITIVE, COL_FROM, COL_TO, COL_THREADS,
    COL_ISA, COL_FINGERPRINT, COL_MIN, COL_P10, COL_MEDIAN, COL_P90, COL_RUNS, COL_CREATE, COL_KERNEL, COL_COUNT
};

enum column_type { T_STR, T_INT, T_FLOAT };

static const struct {
    const char *name;
    enum column_type type;
    int required;
} columns[COL_COUNT] = {
    [COL_KIND] = {"kind", T_STR, 1},           [COL_TENSOR] = {"tensor", T_STR, 0},
    [COL_NAME] = {"name", T_STR, 0},           [COL_G] = {"g", T_INT, 1},
    [COL_MB] = {"mb", T_INT, 1},               [COL_IC] = {"ic", T_INT, 1},
    [COL_IH] = {"ih", T_INT, 1},               [COL_IW] = {"iw", T_INT, 1},
    [COL_OC] = {"oc", T_INT, 1},               [COL_OH] = {"oh", T_INT, 1},
    [COL_OW] = {"ow", T_INT, 1},               [COL_KH] = {"kh", T_INT, 1},
    [COL_KW] = {"kw", T_INT, 1},               [COL_SH] = {"sh", T_INT, 1},
    [COL_SW] = {"sw", T_INT, 1},               [COL_PH] = {"ph", T_INT, 1},
    [COL_PW] = {"pw", T_INT, 1},               [COL_DH] = {"dh", T_INT, 1},
    [COL_DW] = {"dw", T_INT, 1},               [COL_REPEAT] = {"repeat", T_INT, 0},
    [COL_PRIMITIVE] = {"primitive", T_STR, 1}, [COL_FROM] = {"from", T_STR, 1},
    [COL_TO] = {"to", T_STR, 1},               [COL_THREADS] = {"threads", T_INT, 1},
    [COL_ISA] = {"isa", T_STR, 1},             [COL_FINGERPRINT] = {"fingerprint", T_INT, 1},
    [COL_MIN] = {"min_ms", T_FLOAT, 1},        [COL_P10] = {"p10_ms", T_FLOAT, 1},
    [COL_MEDIAN] = {"median_ms", T_FLOAT, 1},  [COL_P90] = {"p90_ms", T_FLOAT, 1},
    [COL_RUNS] = {"runs", T_INT, 1},           [COL_CREATE] = {"create_ms", T_FLOAT, 0},
    [COL_KERNEL] = {"kernel", T_STR, 0},
};

static const char *const kind_names[] = {"conv", "reorder"};
static const char *const tensor_names[] = {"src", "dst"};

/* ---------------------------------------------------------------- writing */

/* msgpack-c's pack calls return non-zero only when the buffer cannot grow;
 * the writer ORs them into one flag instead of checking each. */
struct packer {
    msgpack_sbuffer buf;
    msgpack_packer pk;
    int failed;
};

static void packer_init(struct packer *p)
{
    msgpack_sbuffer_init(&p->buf);
    msgpack_packer_init(&p->pk, &p->buf, msgpack_sbuffer_write);
    p->failed = 0;
}

static void pack_str(struct packer *p, const char *s)
{
    size_t n = strlen(s);
    p->failed |= msgpack_pack_str(&p->pk, n) != 0;
    p->failed |= msgpack_pack_str_body(&p->pk, s, n) != 0;
}

static void pack_int(struct packer *p, int64_t v)
{
    p->failed |= msgpack_pack_int64(&p->pk, v) != 0;
}

static void pack_double(struct packer *p, double v)
{
    p->failed |= msgpack_pack_double(&p->pk, v) != 0;
}

static void pack_key_str(struct packer *p, const char *key, const char *value)
{
    pack_str(p, key);
    pack_str(p, value);
}

static void pack_key_int(struct packer *p, const char *key, int64_t value)
{
    pack_str(p, key);
    pack_int(p, value);
}

static void pack_fingerprint(struct packer *p, const convsel_fingerprint *fp)
{
    p->failed |= msgpack_pack_map(&p->pk, 11) != 0;
    pack_key_str(p, "vendor", fp->vendor);
    pack_key_str(p, "model_name", fp->model_name);
    pack_key_str(p, "microarch", fp->microarch);
    pack_key_str(p, "isa_flags", fp->isa_flags);
    pack_key_str(p, "isa_cap", convsel_isa_name(fp->isa_cap));
    pack_key_int(p, "cores", fp->cores);
    pack_key_int(p, "l1d_bytes", fp->l1d_bytes);
    pack_key_int(p, "l2_bytes", fp->l2_bytes);
    pack_key_int(p, "l3_bytes", fp->l3_bytes);
    pack_key_str(p, "onednn_version", fp->onednn_version);
    pack_key_str(p, "openblas_version", fp->openblas_version);
}

static void pack_header(struct packer *p, const convsel_fingerprint *fps, size_t n_fps)
{
    char created[32];
    time_t now = time(NULL);
    struct tm tm;
    gmtime_r(&now, &tm);
    strftime(created, sizeof created, "%Y-%m-%dT%H:%M:%SZ", &tm);

    p->failed |= msgpack_pack_map(&p->pk, 6) != 0;
    pack_key_str(p, "magic", DATASET_MAGIC);
    pack_key_int(p, "version", DATASET_VERSION);
    pack_key_str(p, "creator", "convsel " CONVSEL_VERSION_STRING);
    pack_key_str(p, "created", created);
    pack_str(p, "fingerprints");
    p->failed |= msgpack_pack_array(&p->pk, n_fps) != 0;
    for (size_t i = 0; i < n_fps; i++)
        pack_fingerprint(p, &fps[i]);
    pack_str(p, "schema");
    p->failed |= msgpack_pack_array(&p->pk, COL_COUNT) != 0;
    for (int c = 0; c < COL_COUNT; c++)
        pack_str(p, columns[c].name);
}

static void pack_record(struct packer *p, const convsel_record *r)
{
    const convsel_problem *q = &r->problem;
    const int64_t sizes[] = {q->g, q->mb, q->ic, q->ih, q->iw, q->oc, q->oh, q->ow,
                             q->kh, q->kw, q->sh, q->sw, q->ph, q->pw, q->dh, q->dw};
    p->failed |= msgpack_pack_array(&p->pk, COL_COUNT) != 0;
    pack_str(p, kind_names[r->kind]);
    pack_str(p, tensor_names[r->tensor]);
    pack_str(p, q->name);
    for (size_t i = 0; i < CONVSEL_ARRAY_SIZE(sizes); i++) /* COL_G .. COL_DW, in order */
        pack_int(p, sizes[i]);
    pack_int(p, q->repeat);
    pack_str(p, r->primitive);
    pack_str(p, convsel_layout_name(r->from));
    pack_str(p, convsel_layout_name(r->to));
    pack_int(p, r->threads);
    pack_str(p, convsel_isa_name(r->isa));
    pack_int(p, r->fingerprint);
    pack_double(p, r->min_ms);
    pack_double(p, r->p10_ms);
    pack_double(p, r->median_ms);
    pack_double(p, r->p90_ms);
    pack_int(p, r->runs);
    pack_double(p, r->create_ms);
    pack_str(p, r->kernel);
}

static convsel_status write_all(int fd, const char *data, size_t size, const char *path)
{
    while (size > 0) {
        ssize_t n = write(fd, data, size);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            return convsel_error(CONVSEL_IO_ERROR, "%s: write failed: %s", path, strerror(errno));
        }
        data += n;
        size -= (size_t)n;
    }
    return CONVSEL_OK;
}

/* Writes header + records to a temporary file next to path, fsyncs it and
 * renames it over path (or, with no_replace, fails when path exists). */
static convsel_status write_file_atomic(const char *path, const convsel_fingerprint *fps, size_t n_fps,
                                        const convsel_record *records, size_t n_records, int no_replace)
{
    char tmp[4096];
    if (snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid()) >= (int)sizeof tmp)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "path too long: %s", path);
    struct packer p;
    packer_init(&p);
    pack_header(&p, fps, n_fps);
    for (size_t i = 0; i < n_records; i++)
        pack_record(&p, &records[i]);
    if (p.failed) {
        msgpack_sbuffer_destroy(&p.buf);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "%s: out of memory packing %zu records", path, n_records);
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        msgpack_sbuffer_destroy(&p.buf);
        return convsel_error(CONVSEL_IO_ERROR, "%s: %s", tmp, strerror(errno));
    }
    convsel_status st = write_all(fd, p.buf.data, p.buf.size, tmp);
    msgpack_sbuffer_destroy(&p.buf);
    if (st == CONVSEL_OK && fsync(fd) != 0)
        st = convsel_error(CONVSEL_IO_ERROR, "%s: fsync failed: %s", tmp, strerror(errno));
    if (close(fd) != 0 && st == CONVSEL_OK)
        st = convsel_error(CONVSEL_IO_ERROR, "%s: close failed: %s", tmp, strerror(errno));
    if (st == CONVSEL_OK) {
        if (no_replace) {
            /* link() fails with EEXIST instead of replacing: no window in
             * which two profiles could both "create" the same file. */
            if (link(tmp, path) != 0) {
                if (errno == EEXIST || access(path, F_OK) == 0)
                    st = convsel_error(CONVSEL_IO_ERROR,
                                       "%s: exists (use --resume to continue it, or --force to replace it)", path);
                else if (rename(tmp, path) != 0) /* a file system without hard links */
                    st = convsel_error(CONVSEL_IO_ERROR, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
            }
        } else if (rename(tmp, path) != 0) {
            st = convsel_error(CONVSEL_IO_ERROR, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        }
    }
    unlink(tmp);
    return st;
}

convsel_status convsel_dataset_save(const convsel_dataset *dataset, const char *path)
{
    if (!dataset || !path)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "dataset and path are required");
    return write_file_atomic(path, dataset->fingerprints, dataset->n_fingerprints, dataset->records, dataset->count,
                             0);
}

/* ---------------------------------------------------------------- reading */

enum { RD_OK = 0, RD_TRUNCATED, RD_BAD };

enum mp_type { MP_NIL, MP_BOOL, MP_UINT, MP_INT, MP_FLOAT, MP_STR, MP_BIN, MP_EXT, MP_ARRAY, MP_MAP };

static const char *const mp_type_names[] = {"nil", "boolean", "integer", "integer", "float",
                                            "string", "binary", "extension", "array", "map"};

/* One decoded msgpack head. Strings, binaries and extensions include their
 * payload (bytes, len); arrays and maps only their element count (len). */
struct mp_value {
    enum mp_type type;
    uint64_t u; /* MP_UINT, MP_BOOL */
    int64_t i;  /* MP_INT (negative) */
    double f;
    const char *bytes;
    uint64_t len;
};

struct reader {
    const unsigned char *data;
    size_t size, pos;
    char why[256]; /* RD_BAD: what was wrong at bad_at */
    size_t bad_at;
};

static int bad(struct reader *r, size_t at, const char *fmt, ...) CONVSEL_PRINTF(3, 4);
static int bad(struct reader *r, size_t at, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->why, sizeof r->why, fmt, ap);
    va_end(ap);
    r->bad_at = at;
    return RD_BAD;
}

static uint64_t load_be(const unsigned char *p, int n)
{
    uint64_t v = 0;
    for (int k = 0; k < n; k++)
        v = v << 8 | p[k];
    return v;
}

/* Reads n big-endian bytes as an unsigned value. */
static int take(struct reader *r, int n, uint64_t *v)
{
    if (r->size - r->pos < (size_t)n)
        return RD_TRUNCATED;
    *v = load_be(r->data + r->pos, n);
    r->pos += (size_t)n;
    return RD_OK;
}

static int take_payload(struct reader *r, uint64_t len, struct mp_value *v)
{
    if ((uint64_t)(r->size - r->pos) < len)
        return RD_TRUNCATED;
    v->bytes = (const char *)r->data + r->pos;
    v->len = len;
    r->pos += (size_t)len;
    return RD_OK;
}

static int mp_next(struct reader *r, struct mp_value *v)
{
    uint64_t x = 0, len = 0;
    int rc;
    const size_t at = r->pos;
    memset(v, 0, sizeof *v);
    if (r->pos >= r->size)
        return RD_TRUNCATED;
    const unsigned char b = r->data[r->pos++];
    if (b <= 0x7f) {
        v->type = MP_UINT;
        v->u = b;
        return RD_OK;
    }
    if (b >= 0xe0) {
        v->type = MP_INT;
        v->i = (int8_t)b;
        return RD_OK;
    }
    if (b >= 0x80 && b <= 0x8f) {
        v->type = MP_MAP;
        v->len = b & 0x0f;
        return RD_OK;
    }
    if (b >= 0x90 && b <= 0x9f) {
        v->type = MP_ARRAY;
        v->len = b & 0x0f;
        return RD_OK;
    }
    if (b >= 0xa0 && b <= 0xbf) {
        v->type = MP_STR;
        return take_payload(r, b & 0x1f, v);
    }
    switch (b) {
    case 0xc0: v->type = MP_NIL; return RD_OK;
    case 0xc2: case 0xc3: v->type = MP_BOOL; v->u = b == 0xc3; return RD_OK;
    case 0xc4: case 0xc5: case 0xc6:
        v->type = MP_BIN;
        if ((rc = take(r, 1 << (b - 0xc4), &len)) != RD_OK)
            return rc;
        return take_payload(r, len, v);
    case 0xc7: case 0xc8: case 0xc9:
        v->type = MP_EXT;
        if ((rc = take(r, 1 << (b - 0xc7), &len)) != RD_OK)
            return rc;
        return take_payload(r, len + 1, v); /* the type byte, then the data */
    case 0xca:
        v->type = MP_FLOAT;
        if ((rc = take(r, 4, &x)) != RD_OK)
            return rc;
        {
            uint32_t bits = (uint32_t)x;
            float f;
            memcpy(&f, &bits, sizeof f);
            v->f = f;
        }
        return RD_OK;
    case 0xcb:
        v->type = MP_FLOAT;
        if ((rc = take(r, 8, &x)) != RD_OK)
            return rc;
        memcpy(&v->f, &x, sizeof v->f);
        return RD_OK;
    case 0xcc: case 0xcd: case 0xce: case 0xcf:
        v->type = MP_UINT;
        return take(r, 1 << (b - 0xcc), &v->u);
    case 0xd0: case 0xd1: case 0xd2: case 0xd3: {
        const int n = 1 << (b - 0xd0);
        v->type = MP_INT;
        if ((rc = take(r, n, &x)) != RD_OK)
            return rc;
        /* Sign-extend from n bytes. */
        if (n < 8 && (x >> (8 * n - 1)) & 1)
            x |= ~0ull << (8 * n);
        memcpy(&v->i, &x, sizeof v->i);
        return RD_OK;
    }
    case 0xd4: case 0xd5: case 0xd6: case 0xd7: case 0xd8:
        v->type = MP_EXT;
        return take_payload(r, 1 + (1u << (b - 0xd4)), v);
    case 0xd9: case 0xda: case 0xdb:
        v->type = MP_STR;
        if ((rc = take(r, 1 << (b - 0xd9), &len)) != RD_OK)
            return rc;
        return take_payload(r, len, v);
    case 0xdc: case 0xdd:
        v->type = MP_ARRAY;
        return take(r, 2 << (b - 0xdc), &v->len);
    case 0xde: case 0xdf:
        v->type = MP_MAP;
        return take(r, 2 << (b - 0xde), &v->len);
    default:
        return bad(r, at, "byte 0x%02x is not a msgpack value", b);
    }
}

/* Skips one value with everything inside it. Every element takes at least a
 * byte, so a huge declared count runs out of input instead of looping. */
static int mp_skip(struct reader *r, int depth)
{
    struct mp_value v;
    const size_t at = r->pos;
    int rc = mp_next(r, &v);
    if (rc != RD_OK)
        return rc;
    if (v.type != MP_ARRAY && v.type != MP_MAP)
        return RD_OK;
    if (depth >= MAX_DEPTH)
        return bad(r, at, "values nested deeper than %d", MAX_DEPTH);
    const uint64_t n = v.type == MP_MAP ? 2 * v.len : v.len;
    for (uint64_t k = 0; k < n; k++)
        if ((rc = mp_skip(r, depth + 1)) != RD_OK)
            return rc;
    return RD_OK;
}

static int str_is(const struct mp_value *v, const char *s)
{
    return v->type == MP_STR && v->len == strlen(s) && memcmp(v->bytes, s, v->len) == 0;
}

/* A string value into buf, or RD_BAD naming what. */
static int read_str(struct reader *r, const char *what, char *buf, size_t size)
{
    struct mp_value v;
    const size_t at = r->pos;
    int rc = mp_next(r, &v);
    if (rc != RD_OK)
        return rc;
    if (v.type != MP_STR)
        return bad(r, at, "%s: expected a string, found a %s", what, mp_type_names[v.type]);
    if (v.len >= size)
        return bad(r, at, "%s: string of %llu bytes (at most %zu)", what, (unsigned long long)v.len, size - 1);
    if (memchr(v.bytes, '\0', (size_t)v.len))
        return bad(r, at, "%s: string holds a NUL byte", what);
    memcpy(buf, v.bytes, (size_t)v.len);
    buf[v.len] = '\0';
    return RD_OK;
}

static int read_int(struct reader *r, const char *what, int64_t min, int64_t max, int64_t *out)
{
    struct mp_value v;
    const size_t at = r->pos;
    int rc = mp_next(r, &v);
    if (rc != RD_OK)
        return rc;
    int64_t x;
    if (v.type == MP_UINT && v.u <= (uint64_t)INT64_MAX)
        x = (int64_t)v.u;
    else if (v.type == MP_INT)
        x = v.i;
    else if (v.type == MP_UINT)
        return bad(r, at, "%s: integer out of range", what);
    else
        return bad(r, at, "%s: expected an integer, found a %s", what, mp_type_names[v.type]);
    if (x < min || x > max)
        return bad(r, at, "%s: %lld out of range [%lld, %lld]", what, (long long)x, (long long)min, (long long)max);
    *out = x;
    return RD_OK;
}

static int read_double(struct reader *r, const char *what, double *out)
{
    struct mp_value v;
    const size_t at = r->pos;
    int rc = mp_next(r, &v);
    if (rc != RD_OK)
        return rc;
    if (v.type == MP_FLOAT)
        *out = v.f;
    else if (v.type == MP_UINT)
        *out = (double)v.u;
    else if (v.type == MP_INT)
        *out = (double)v.i;
    else
        return bad(r, at, "%s: expected a number, found a %s", what, mp_type_names[v.type]);
    return RD_OK;
}

static int read_isa(struct reader *r, const char *what, convsel_isa *isa)
{
    char text[32];
    const size_t at = r->pos;
    int rc = read_str(r, what, text, sizeof text);
    if (rc != RD_OK)
        return rc;
    for (int i = 0; i < CONVSEL_ISA_COUNT; i++) {
        if (strcmp(text, convsel_isa_name((convsel_isa)i)) == 0) {
            *isa = (convsel_isa)i;
            return RD_OK;
        }
    }
    return bad(r, at, "%s: unknown ISA '%s'", what, text);
}

static int read_layout(struct reader *r, const char *what, convsel_layout *layout)
{
    char text[32];
    const size_t at = r->pos;
    int rc = read_str(r, what, text, sizeof text);
    if (rc != RD_OK)
        return rc;
    for (int i = 0; i < CONVSEL_LAYOUT_COUNT; i++) {
        if (strcmp(text, convsel_layout_name((convsel_layout)i)) == 0) {
            *layout = (convsel_layout)i;
            return RD_OK;
        }
    }
    return bad(r, at, "%s: unknown layout '%s'", what, text);
}

static int read_enum(struct reader *r, const char *what, const char *const *names, int count, int *out)
{
    char text[32];
    const size_t at = r->pos;
    int rc = read_str(r, what, text, sizeof text);
    if (rc != RD_OK)
        return rc;
    for (int i = 0; i < count; i++) {
        if (strcmp(text, names[i]) == 0) {
            *out = i;
            return RD_OK;
        }
    }
    return bad(r, at, "%s: unknown value '%s'", what, text);
}

static int read_fingerprint(struct reader *r, convsel_fingerprint *fp)
{
    struct mp_value v;
    const size_t at = r->pos;
    int rc = mp_next(r, &v);
    if (rc != RD_OK)
        return rc;
    if (v.type != MP_MAP)
        return bad(r, at, "fingerprint: expected a map, found a %s", mp_type_names[v.type]);
    memset(fp, 0, sizeof *fp);
    unsigned seen = 0; /* bit 0 vendor, 1 model_name, 2 microarch, 3 isa_cap, 4 cores */
    for (uint64_t k = 0; k < v.len; k++) {
        struct mp_value key;
        const size_t key_at = r->pos;
        int64_t x;
        if ((rc = mp_next(r, &key)) != RD_OK)
            return rc;
        if (key.type != MP_STR)
            return bad(r, key_at, "fingerprint: key is a %s, not a string", mp_type_names[key.type]);
        if (str_is(&key, "vendor"))
            rc = read_str(r, "fingerprint vendor", fp->vendor, sizeof fp->vendor), seen |= 1;
        else if (str_is(&key, "model_name"))
            rc = read_str(r, "fingerprint model_name", fp->model_name, sizeof fp->model_name), seen |= 2;
        else if (str_is(&key, "microarch"))
            rc = read_str(r, "fingerprint microarch", fp->microarch, sizeof fp->microarch), seen |= 4;
        else if (str_is(&key, "isa_flags"))
            rc = read_str(r, "fingerprint isa_flags", fp->isa_flags, sizeof fp->isa_flags);
        else if (str_is(&key, "isa_cap"))
            rc = read_isa(r, "fingerprint isa_cap", &fp->isa_cap), seen |= 8;
        else if (str_is(&key, "cores")) {
            rc = read_int(r, "fingerprint cores", 1, 1 << 20, &x), seen |= 16;
            fp->cores = (int)x;
        } else if (str_is(&key, "l1d_bytes"))
            rc = read_int(r, "fingerprint l1d_bytes", 0, INT64_MAX, &fp->l1d_bytes);
        else if (str_is(&key, "l2_bytes"))
            rc = read_int(r, "fingerprint l2_bytes", 0, INT64_MAX, &fp->l2_bytes);
        else if (str_is(&key, "l3_bytes"))
            rc = read_int(r, "fingerprint l3_bytes", 0, INT64_MAX, &fp->l3_bytes);
        else if (str_is(&key, "onednn_version"))
            rc = read_str(r, "fingerprint onednn_version", fp->onednn_version, sizeof fp->onednn_version);
        else if (str_is(&key, "openblas_version"))
            rc = read_str(r, "fingerprint openblas_version", fp->openblas_version, sizeof fp->openblas_version);
        else
            rc = mp_skip(r, 1);
        if (rc != RD_OK)
            return rc;
    }
    if (seen != 31)
        return bad(r, at, "fingerprint lacks vendor, model_name, microarch, isa_cap or cores");
    return RD_OK;
}

/* The header's schema: file column j holds our column map[j], or -1 for a
 * column this version does not know (skipped). */
struct schema {
    int map[MAX_COLUMNS];
    size_t n;
};

static int read_schema(struct reader *r, struct schema *schema, int *is_ours)
{
    struct mp_value v;
    const size_t at = r->pos;
    int rc = mp_next(r, &v);
    if (rc != RD_OK)
        return rc;
    if (v.type != MP_ARRAY)
        return bad(r, at, "schema: expected an array, found a %s", mp_type_names[v.type]);
    if (v.len > MAX_COLUMNS)
        return bad(r, at, "schema: %llu columns (at most %d)", (unsigned long long)v.len, MAX_COLUMNS);
    int found[COL_COUNT] = {0};
    schema->n = (size_t)v.len;
    *is_ours = schema->n == COL_COUNT;
    for (size_t j = 0; j < schema->n; j++) {
        char name[64];
        const size_t col_at = r->pos;
        if ((rc = read_str(r, "schema column", name, sizeof name)) != RD_OK)
            return rc;
        schema->map[j] = -1;
        for (int c = 0; c < COL_COUNT; c++)
            if (strcmp(name, columns[c].name) == 0)
                schema->map[j] = c;
        if (schema->map[j] >= 0 && found[schema->map[j]]++)
            return bad(r, col_at, "schema: column '%s' listed twice", name);
        if (schema->map[j] != (int)j)
            *is_ours = 0;
    }
    for (int c = 0; c < COL_COUNT; c++)
        if (columns[c].required && !found[c])
            return bad(r, at, "schema: no '%s' column", columns[c].name);
    return RD_OK;
}

/* The header map. Magic and version are checked before anything else is
 * read, so a newer format gets VERSION_MISMATCH whatever else changed. */
static int read_header(struct reader *r, convsel_dataset *ds, struct schema *schema, int *version)
{
    struct mp_value v, key;
    *version = 0;
    int rc = mp_next(r, &v);
    if (rc != RD_OK)
        return rc;
    if (v.type != MP_MAP)
        return bad(r, 0, "not a convsel dataset (starts with a msgpack %s, not the header map)",
                   mp_type_names[v.type]);
    size_t fps_at = 0, schema_at = 0;
    int magic = 0, file_version = 0;
    for (uint64_t k = 0; k < v.len; k++) {
        const size_t key_at = r->pos;
        if ((rc = mp_next(r, &key)) != RD_OK)
            return rc;
        if (key.type != MP_STR)
            return bad(r, key_at, "header key is a %s, not a string", mp_type_names[key.type]);
        const size_t value_at = r->pos;
        if (str_is(&key, "magic")) {
            char text[64];
            if ((rc = read_str(r, "magic", text, sizeof text)) == RD_BAD || (rc == RD_OK && strcmp(text, DATASET_MAGIC)))
                return bad(r, value_at, "not a convsel dataset (magic is not \"%s\")", DATASET_MAGIC);
            magic = 1;
        } else if (str_is(&key, "version")) {
            int64_t x;
            if ((rc = read_int(r, "version", 0, INT64_MAX, &x)) == RD_OK)
                file_version = x > INT32_MAX ? INT32_MAX : (int)x;
        } else {
            if (str_is(&key, "fingerprints"))
                fps_at = value_at;
            else if (str_is(&key, "schema"))
                schema_at = value_at;
            rc = mp_skip(r, 1);
        }
        if (rc != RD_OK)
            return rc;
    }
    const size_t end = r->pos;
    if (!magic)
        return bad(r, 0, "not a convsel dataset (no \"magic\" in the first map)");
    /* Only a file with our magic is "another version" of ours. */
    *version = file_version;
    if (*version != DATASET_VERSION)
        return bad(r, 0, "format version %d; this convsel reads version %d", *version, DATASET_VERSION);
    if (!fps_at || !schema_at)
        return bad(r, 0, "header lacks %s", fps_at ? "the schema" : "the fingerprints");

    r->pos = fps_at;
    if ((rc = mp_next(r, &v)) != RD_OK)
        return rc;
    if (v.type != MP_ARRAY)
        return bad(r, fps_at, "fingerprints: expected an array, found a %s", mp_type_names[v.type]);
    if (v.len > MAX_FINGERPRINTS)
        return bad(r, fps_at, "%llu fingerprints (at most %d)", (unsigned long long)v.len, MAX_FINGERPRINTS);
    for (uint64_t k = 0; k < v.len; k++) {
        convsel_fingerprint fp;
        if ((rc = read_fingerprint(r, &fp)) != RD_OK)
            return rc;
        if (push_fingerprint(ds, &fp) != CONVSEL_OK)
            return bad(r, fps_at, "out of memory");
    }
    r->pos = schema_at;
    if ((rc = read_schema(r, schema, &ds->schema_is_ours)) != RD_OK)
        return rc;
    r->pos = end;
    return RD_OK;
}

static int read_record(struct reader *r, const struct schema *schema, size_t n_fingerprints, convsel_record *rec)
{
    struct mp_value v;
    const size_t at = r->pos;
    int rc = mp_next(r, &v);
    if (rc != RD_OK)
        return rc;
    if (v.type != MP_ARRAY)
        return bad(r, at, "record is a %s, not an array", mp_type_names[v.type]);
    if (v.len != schema->n)
        return bad(r, at, "record has %llu values, the schema %zu", (unsigned long long)v.len, schema->n);
    memset(rec, 0, sizeof *rec);
    rec->problem.repeat = 1;
    convsel_problem *q = &rec->problem;
    int64_t *const sizes[] = {&q->g,  &q->mb, &q->ic, &q->ih, &q->iw, &q->oc, &q->oh, &q->ow,
                              &q->kh, &q->kw, &q->sh, &q->sw, &q->ph, &q->pw, &q->dh, &q->dw};
    for (size_t j = 0; j < schema->n; j++) {
        const int c = schema->map[j];
        int64_t x = 0;
        int e = 0;
        if (c < 0) {
            rc = mp_skip(r, 1);
        } else if (c >= COL_G && c <= COL_DW) {
            rc = read_int(r, columns[c].name, INT32_MIN, INT32_MAX, sizes[c - COL_G]);
        } else {
            switch ((enum column)c) {
            case COL_KIND:
                rc = read_enum(r, "kind", kind_names, 2, &e);
                rec->kind = (convsel_record_kind)e;
                break;
            case COL_TENSOR:
                rc = read_enum(r, "tensor", tensor_names, 2, &e);
                rec->tensor = (convsel_tensor)e;
                break;
            case COL_NAME: rc = read_str(r, "name", q->name, sizeof q->name); break;
            case COL_REPEAT:
                rc = read_int(r, "repeat", 1, 1000000, &x);
                q->repeat = (int)x;
                break;
            case COL_PRIMITIVE: rc = read_str(r, "primitive", rec->primitive, sizeof rec->primitive); break;
            case COL_FROM: rc = read_layout(r, "from", &rec->from); break;
            case COL_TO: rc = read_layout(r, "to", &rec->to); break;
            case COL_THREADS:
                rc = read_int(r, "threads", 1, 65536, &x);
                rec->threads = (int)x;
                break;
            case COL_ISA: rc = read_isa(r, "isa", &rec->isa); break;
            case COL_FINGERPRINT:
                rc = read_int(r, "fingerprint", 0, (int64_t)n_fingerprints - 1, &x);
                rec->fingerprint = (uint32_t)x;
                break;
            case COL_MIN: rc = read_double(r, "min_ms", &rec->min_ms); break;
            case COL_P10: rc = read_double(r, "p10_ms", &rec->p10_ms); break;
            case COL_MEDIAN: rc = read_double(r, "median_ms", &rec->median_ms); break;
            case COL_P90: rc = read_double(r, "p90_ms", &rec->p90_ms); break;
            case COL_RUNS:
                rc = read_int(r, "runs", 0, INT32_MAX, &x);
                rec->runs = (int)x;
                break;
            case COL_CREATE: rc = read_double(r, "create_ms", &rec->create_ms); break;
            case COL_KERNEL: rc = read_str(r, "kernel", rec->kernel, sizeof rec->kernel); break;
            default: rc = mp_skip(r, 1); break;
            }
        }
        if (rc != RD_OK)
            return rc;
    }
    char why[sizeof r->why];
    if (check_record(rec, n_fingerprints, why, sizeof why) != 0)
        return bad(r, at, "%s", why);
    return RD_OK;
}

static convsel_status parse(const unsigned char *data, size_t size, const char *name, convsel_dataset **out)
{
    struct reader r = {.data = data, .size = size};
    struct schema schema = {.n = 0};
    int version;
    convsel_dataset *ds;
    *out = NULL;
    if (size == 0)
        return convsel_error(CONVSEL_CORRUPT, "%s: empty file, not a convsel dataset", name);
    convsel_status st = convsel_dataset_create(&ds);
    if (st != CONVSEL_OK)
        return st;
    ds->schema_is_ours = 0;
    int rc = read_header(&r, ds, &schema, &version);
    if (rc != RD_OK) {
        convsel_dataset_destroy(ds);
        if (rc == RD_TRUNCATED)
            return convsel_error(CONVSEL_CORRUPT, "%s: byte offset %zu: file ends inside the header", name, r.pos);
        if (version > DATASET_VERSION)
            return convsel_error(CONVSEL_VERSION_MISMATCH, "%s: dataset format version %d (this convsel reads %d)",
                                 name, version, DATASET_VERSION);
        return convsel_error(version != 0 && version < DATASET_VERSION ? CONVSEL_VERSION_MISMATCH : CONVSEL_CORRUPT,
                             "%s: byte offset %zu: %s", name, r.bad_at, r.why);
    }
    while (r.pos < r.size) {
        const size_t start = r.pos;
        convsel_record rec;
        rc = read_record(&r, &schema, ds->n_fingerprints, &rec);
        if (rc == RD_TRUNCATED) {
            snprintf(ds->warning, sizeof ds->warning,
                     "%s: truncated record at byte offset %zu (%zu trailing bytes ignored); %zu whole records kept",
                     name, start, size - start, ds->count);
            r.pos = start;
            break;
        }
        if (rc == RD_BAD) {
            const size_t index = ds->count;
            convsel_dataset_destroy(ds);
            return convsel_error(CONVSEL_CORRUPT, "%s: byte offset %zu (record %zu): %s", name, r.bad_at, index,
                                 r.why);
        }
        if (push_record(ds, &rec) != CONVSEL_OK) {
            convsel_dataset_destroy(ds);
            return convsel_error(CONVSEL_OUT_OF_MEMORY, "%s: out of memory", name);
        }
    }
    ds->valid_end = r.pos;
    *out = ds;
    return CONVSEL_OK;
}

convsel_status convsel_dataset_load_buffer(const void *data, size_t size, const char *name,
                                           convsel_dataset **dataset)
{
    if (!dataset)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "dataset out-parameter is NULL");
    *dataset = NULL;
    if (!data && size)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "data is NULL");
    return parse(data, size, name ? name : "(buffer)", dataset);
}

static convsel_status read_whole_file(const char *path, unsigned char **data, size_t *size)
{
    *data = NULL;
    *size = 0;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return convsel_error(errno == ENOENT ? CONVSEL_NOT_FOUND : CONVSEL_IO_ERROR, "%s: %s", path,
                             strerror(errno));
    struct stat sb;
    if (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode)) {
        close(fd);
        return convsel_error(CONVSEL_IO_ERROR, "%s: not a regular file", path);
    }
    size_t cap = (size_t)sb.st_size + 1, used = 0;
    unsigned char *buf = malloc(cap);
    if (!buf) {
        close(fd);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "%s: out of memory for %zu bytes", path, cap);
    }
    for (;;) {
        if (used == cap) {
            unsigned char *grown = realloc(buf, 2 * cap);
            if (!grown) {
                free(buf);
                close(fd);
                return convsel_error(CONVSEL_OUT_OF_MEMORY, "%s: out of memory", path);
            }
            buf = grown;
            cap *= 2;
        }
        ssize_t n = read(fd, buf + used, cap - used);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            free(buf);
            close(fd);
            return convsel_error(CONVSEL_IO_ERROR, "%s: read failed: %s", path, strerror(errno));
        }
        if (n == 0)
            break;
        used += (size_t)n;
    }
    close(fd);
    *data = buf;
    *size = used;
    return CONVSEL_OK;
}

convsel_status convsel_dataset_load(const char *path, convsel_dataset **dataset)
{
    unsigned char *data;
    size_t size;
    if (!path || !dataset)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "path and dataset are required");
    *dataset = NULL;
    convsel_status st = read_whole_file(path, &data, &size);
    if (st != CONVSEL_OK)
        return st;
    st = parse(data, size, path, dataset);
    free(data);
    return st;
}

/* ---------------------------------------------------------------- appending writer */

struct convsel_dataset_writer {
    char *path;
    int fd;
    uint32_t fingerprint;
    convsel_dataset *existing;
    struct packer pending;
    size_t appended, flushed;
};

static const char *describe(const convsel_fingerprint *fp, char *buf, size_t size)
{
    snprintf(buf, size, "%s %s (%s), %d cores, ISA cap %s, oneDNN %s", fp->vendor, fp->model_name, fp->microarch,
             fp->cores, convsel_isa_name(fp->isa_cap), fp->onednn_version);
    return buf;
}

/* RESUME on an existing file: its fingerprint must be ours, its schema ours,
 * and a torn tail is cut before anything is appended. */
static convsel_status open_existing(convsel_dataset_writer *w, const convsel_fingerprint *fp)
{
    char mine[400], theirs[400];
    convsel_status st = convsel_dataset_load(w->path, &w->existing);
    if (st != CONVSEL_OK)
        return convsel_error(st, "cannot resume: %s", convsel_last_error());
    convsel_dataset *ds = w->existing;
    if (!ds->schema_is_ours)
        return convsel_error(CONVSEL_INVALID_ARGUMENT,
                             "cannot resume %s: written with another record schema; profile into a new file and "
                             "merge", w->path);
    size_t i = 0;
    while (i < ds->n_fingerprints && !fingerprint_equal(&ds->fingerprints[i], fp))
        i++;
    if (i == ds->n_fingerprints) {
        const convsel_fingerprint *other = ds->n_fingerprints ? &ds->fingerprints[0] : NULL;
        return convsel_error(CONVSEL_INVALID_ARGUMENT,
                             "cannot resume %s: it was measured on %s%s; this run is on %s (%s). Profile into a "
                             "new file and merge them",
                             w->path, other ? describe(other, theirs, sizeof theirs) : "no CPU",
                             ds->n_fingerprints > 1 ? " and others" : "", describe(fp, mine, sizeof mine),
                             other && convsel_fingerprint_same_cpu(other, fp) ? "same CPU, other library versions"
                             : other && other->isa_cap != fp->isa_cap      ? "another ISA cap"
                                                                           : "another CPU");
    }
    w->fingerprint = (uint32_t)i;
    w->fd = open(w->path, O_WRONLY | O_CLOEXEC);
    if (w->fd < 0)
        return convsel_error(CONVSEL_IO_ERROR, "%s: %s", w->path, strerror(errno));
    struct stat sb;
    if (fstat(w->fd, &sb) != 0)
        return convsel_error(CONVSEL_IO_ERROR, "%s: %s", w->path, strerror(errno));
    if ((size_t)sb.st_size > ds->valid_end && ftruncate(w->fd, (off_t)ds->valid_end) != 0)
        return convsel_error(CONVSEL_IO_ERROR, "%s: cannot cut the torn tail: %s", w->path, strerror(errno));
    if (lseek(w->fd, (off_t)ds->valid_end, SEEK_SET) < 0)
        return convsel_error(CONVSEL_IO_ERROR, "%s: %s", w->path, strerror(errno));
    return CONVSEL_OK;
}

convsel_status convsel_dataset_writer_open(const char *path, const convsel_fingerprint *fingerprint,
                                           convsel_write_mode mode, convsel_dataset_writer **writer)
{
    if (!writer)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "writer out-parameter is NULL");
    *writer = NULL;
    if (!path || !fingerprint)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "path and fingerprint are required");
    if (mode != CONVSEL_WRITE_CREATE && mode != CONVSEL_WRITE_TRUNCATE && mode != CONVSEL_WRITE_RESUME)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "unknown write mode %d", (int)mode);
    convsel_dataset_writer *w = calloc(1, sizeof *w);
    if (!w || !(w->path = strdup(path))) {
        free(w);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    }
    w->fd = -1;
    packer_init(&w->pending);
    convsel_status st;
    if (mode == CONVSEL_WRITE_RESUME && access(path, F_OK) == 0) {
        st = open_existing(w, fingerprint);
    } else {
        st = write_file_atomic(path, fingerprint, 1, NULL, 0, mode == CONVSEL_WRITE_CREATE);
        if (st == CONVSEL_OK)
            st = convsel_dataset_create(&w->existing);
        if (st == CONVSEL_OK)
            st = push_fingerprint(w->existing, fingerprint);
        if (st == CONVSEL_OK && (w->fd = open(path, O_WRONLY | O_APPEND | O_CLOEXEC)) < 0)
            st = convsel_error(CONVSEL_IO_ERROR, "%s: %s", path, strerror(errno));
        w->fingerprint = 0;
    }
    if (st != CONVSEL_OK) {
        if (w->fd >= 0)
            close(w->fd);
        convsel_dataset_destroy(w->existing);
        msgpack_sbuffer_destroy(&w->pending.buf);
        free(w->path);
        free(w);
        return st;
    }
    *writer = w;
    return CONVSEL_OK;
}

const convsel_dataset *convsel_dataset_writer_existing(const convsel_dataset_writer *writer)
{
    return writer ? writer->existing : NULL;
}

convsel_status convsel_dataset_writer_append(convsel_dataset_writer *writer, const convsel_record *record)
{
    char why[512];
    if (!writer || !record)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "writer and record are required");
    convsel_record r = *record;
    r.fingerprint = writer->fingerprint;
    if (check_record(&r, writer->existing->n_fingerprints, why, sizeof why) != 0)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "%s: record rejected: %s", writer->path, why);
    pack_record(&writer->pending, &r);
    if (writer->pending.failed)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "%s: out of memory buffering records", writer->path);
    writer->appended++;
    return CONVSEL_OK;
}

convsel_status convsel_dataset_writer_flush(convsel_dataset_writer *writer)
{
    if (!writer)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "writer is NULL");
    if (writer->pending.buf.size == 0)
        return CONVSEL_OK;
    convsel_status st = write_all(writer->fd, writer->pending.buf.data, writer->pending.buf.size, writer->path);
    msgpack_sbuffer_clear(&writer->pending.buf);
    writer->flushed = writer->appended;
    if (st == CONVSEL_OK && fsync(writer->fd) != 0)
        st = convsel_error(CONVSEL_IO_ERROR, "%s: fsync failed: %s", writer->path, strerror(errno));
    return st;
}

void convsel_dataset_writer_discard(convsel_dataset_writer *writer)
{
    /* Only whole records are ever buffered, so the count can be kept exact
     * by remembering it at each flush. */
    writer->appended = writer->flushed;
    msgpack_sbuffer_clear(&writer->pending.buf);
    writer->pending.failed = 0;
}

uint32_t convsel_dataset_writer_fingerprint_index(const convsel_dataset_writer *writer)
{
    return writer->fingerprint;
}

size_t convsel_dataset_writer_count(const convsel_dataset_writer *writer)
{
    return writer ? writer->appended : 0;
}

convsel_status convsel_dataset_writer_close(convsel_dataset_writer *writer)
{
    if (!writer)
        return CONVSEL_OK;
    convsel_status st = convsel_dataset_writer_flush(writer);
    if (close(writer->fd) != 0 && st == CONVSEL_OK)
        st = convsel_error(CONVSEL_IO_ERROR, "%s: close failed: %s", writer->path, strerror(errno));
    convsel_dataset_destroy(writer->existing);
    msgpack_sbuffer_destroy(&writer->pending.buf);
    free(writer->path);
    free(writer);
    return st;
}
