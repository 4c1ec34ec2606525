/*
 * Dataset files: write → load round trips, a file cut at every byte, bytes
 * flipped everywhere, foreign files, resuming, merging and splitting.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "convsel.h"

#define N_RECORDS 6

static char dir[256];

static void path_in_dir(char *buf, size_t size, const char *name)
{
    snprintf(buf, size, "%s/%s", dir, name);
}

static void fake_fingerprint(convsel_fingerprint *fp, int cores)
{
    memset(fp, 0, sizeof *fp);
    snprintf(fp->vendor, sizeof fp->vendor, "GenuineIntel");
    snprintf(fp->model_name, sizeof fp->model_name, "Intel(R) Xeon(R) \"Test\" CPU @ 2.50GHz");
    snprintf(fp->microarch, sizeof fp->microarch, "cascadelake");
    snprintf(fp->isa_flags, sizeof fp->isa_flags, "sse41 avx avx2 fma avx512f avx512bw avx512vnni");
    fp->isa_cap = CONVSEL_ISA_AVX512;
    fp->cores = cores;
    fp->l1d_bytes = 32 << 10;
    fp->l2_bytes = 1 << 20;
    fp->l3_bytes = (int64_t)36608 << 10;
    snprintf(fp->onednn_version, sizeof fp->onednn_version, "2.6.3");
    snprintf(fp->openblas_version, sizeof fp->openblas_version, "OpenBLAS 0.3.21 DYNAMIC_ARCH USE_OPENMP");
}

/* Records that exercise every field: both kinds and tensors, every layout,
 * names with quotes and commas, odd sizes, dilation, groups. */
static void make_record(convsel_record *r, int i)
{
    static const char *const descs[] = {
        "mb1ic64ih56oc64oh56kh3ph1n\"resnet_50:res2a_branch2b\"",
        "g32mb2ic32ih28oc32oh28kh3ph1",
        "mb8ic3ih224iw200oc17oh112ow100kh7kw7sh2sw2ph3pw3",
        "mb1ic13ih17oc29oh17kh1kw7ph0pw3n\"random~3\"",
        "mb4ic48ih30oc48oh26kh3dh1n\"dilated\"",
        "mb1ic256ih7oc512oh4kh3sh2ph1n\"a:b:c\"",
    };
    memset(r, 0, sizeof *r);
    convsel_status st = convsel_problem_parse(descs[i % 6], &r->problem);
    CHECK_MSG(st == CONVSEL_OK, "%s: %s", descs[i % 6], convsel_last_error());
    if (i % 6 == 1) /* quotes and a comma: names must survive CSV and JSON too */
        snprintf(r->problem.name, sizeof r->problem.name, "mobilenet:dw \"2\", x");
    r->problem.repeat = 1 + i % 3;
    r->kind = i % 3 == 2 ? CONVSEL_RECORD_REORDER : CONVSEL_RECORD_CONV;
    r->tensor = r->kind == CONVSEL_RECORD_REORDER && i % 2 ? CONVSEL_TENSOR_DST : CONVSEL_TENSOR_SRC;
    snprintf(r->primitive, sizeof r->primitive, "%s", r->kind == CONVSEL_RECORD_REORDER ? "reorder" : "prim_x");
    r->from = (convsel_layout)(i % CONVSEL_LAYOUT_COUNT);
    r->to = (convsel_layout)((i + 1) % CONVSEL_LAYOUT_COUNT);
    r->threads = 1 + i;
    r->isa = (convsel_isa)(i % CONVSEL_ISA_COUNT);
    r->fingerprint = 0;
    r->min_ms = 0.125 * (i + 1);
    r->p10_ms = r->min_ms * 1.01;
    r->median_ms = r->min_ms * 1.0625 + 1e-9;
    r->p90_ms = r->min_ms * 1.5;
    r->runs = 17 + i;
    r->create_ms = 0.3 + i;
    if (r->kind == CONVSEL_RECORD_CONV && i % 4 == 0) /* the rest: not recorded */
        snprintf(r->kernel, sizeof r->kernel, "%s", i % 8 ? "onednn_gemm" : "prim_x");
}

static int same_record(const convsel_record *a, const convsel_record *b)
{
    const convsel_problem *p = &a->problem, *q = &b->problem;
    return a->kind == b->kind && a->tensor == b->tensor && strcmp(p->name, q->name) == 0 && p->g == q->g &&
           p->mb == q->mb && p->ic == q->ic && p->ih == q->ih && p->iw == q->iw && p->oc == q->oc && p->oh == q->oh &&
           p->ow == q->ow && p->kh == q->kh && p->kw == q->kw && p->sh == q->sh && p->sw == q->sw && p->ph == q->ph &&
           p->pw == q->pw && p->dh == q->dh && p->dw == q->dw && p->repeat == q->repeat &&
           strcmp(a->primitive, b->primitive) == 0 && a->from == b->from && a->to == b->to &&
           a->threads == b->threads && a->isa == b->isa && a->fingerprint == b->fingerprint &&
           a->min_ms == b->min_ms && a->p10_ms == b->p10_ms && a->median_ms == b->median_ms &&
           a->p90_ms == b->p90_ms && a->runs == b->runs && a->create_ms == b->create_ms &&
           strcmp(a->kernel, b->kernel) == 0;
}

static int same_fingerprint(const convsel_fingerprint *a, const convsel_fingerprint *b)
{
    return convsel_fingerprint_same_cpu(a, b) && strcmp(a->onednn_version, b->onednn_version) == 0 &&
           strcmp(a->openblas_version, b->openblas_version) == 0;
}

static long file_size(const char *path)
{
    struct stat sb;
    return stat(path, &sb) == 0 ? (long)sb.st_size : -1;
}

static unsigned char *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *buf = malloc(n > 0 ? (size_t)n : 1);
    *size = fread(buf, 1, (size_t)n, f);
    fclose(f);
    return buf;
}

static void write_bytes(const char *path, const void *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    fwrite(data, 1, size, f);
    fclose(f);
}

/* Writes N_RECORDS records one flush at a time; ends[k] is the file size
 * after k records (ends[0]: the header alone). */
static void write_sample(const char *path, const convsel_fingerprint *fp, long *ends)
{
    convsel_dataset_writer *w;
    unlink(path);
    CHECK_EQ(convsel_dataset_writer_open(path, fp, CONVSEL_WRITE_CREATE, &w), CONVSEL_OK);
    ends[0] = file_size(path);
    for (int i = 0; i < N_RECORDS; i++) {
        convsel_record r;
        make_record(&r, i);
        r.fingerprint = 7; /* replaced by the writer's own index */
        CHECK_EQ(convsel_dataset_writer_append(w, &r), CONVSEL_OK);
        CHECK_EQ(convsel_dataset_writer_flush(w), CONVSEL_OK);
        ends[i + 1] = file_size(path);
    }
    CHECK_EQ(convsel_dataset_writer_count(w), N_RECORDS);
    CHECK_EQ(convsel_dataset_writer_close(w), CONVSEL_OK);
}

static void test_round_trip(const char *path, const convsel_fingerprint *fp)
{
    convsel_dataset *ds = NULL;
    CHECK_EQ(convsel_dataset_load(path, &ds), CONVSEL_OK);
    CHECK_EQ(convsel_dataset_size(ds), N_RECORDS);
    CHECK_EQ(convsel_dataset_fingerprint_count(ds), 1);
    CHECK(same_fingerprint(convsel_dataset_fingerprint(ds, 0), fp));
    CHECK_STR(convsel_dataset_fingerprint(ds, 0)->model_name, fp->model_name);
    CHECK_EQ(convsel_dataset_fingerprint(ds, 0)->l3_bytes, fp->l3_bytes);
    CHECK_STR(convsel_dataset_warning(ds), "");
    for (int i = 0; i < N_RECORDS; i++) {
        convsel_record want;
        make_record(&want, i);
        CHECK_MSG(same_record(convsel_dataset_record(ds, (size_t)i), &want), "record %d differs", i);
    }
    CHECK(convsel_dataset_record(ds, N_RECORDS) == NULL);
    convsel_dataset_summary s;
    convsel_dataset_summarize(ds, &s);
    CHECK_EQ(s.records, N_RECORDS);
    CHECK_EQ(s.reorder_records, 2);
    CHECK_EQ(s.conv_records, 4);
    CHECK_EQ(s.problems, 6);
    CHECK_EQ(s.configs, 6);
    CHECK_EQ(s.disturbed, 0);
    convsel_dataset_destroy(ds);

    /* Disturbed: a conv record whose median is over 10x its minimum; not at
     * 9x, and not a reorder. */
    CHECK_EQ(convsel_dataset_create(&ds), CONVSEL_OK);
    uint32_t fi = 0;
    CHECK_EQ(convsel_dataset_add_fingerprint(ds, fp, &fi), CONVSEL_OK);
    const double ratios[] = {12, 9, 12};
    for (int i = 0; ds && i < 3; i++) {
        convsel_record r;
        make_record(&r, i); /* 0, 1: conv; 2: reorder */
        r.fingerprint = fi;
        r.median_ms = r.min_ms * ratios[i];
        r.p90_ms = r.median_ms;
        CHECK_EQ(convsel_dataset_append(ds, &r), CONVSEL_OK);
    }
    convsel_dataset_summarize(ds, &s);
    CHECK_EQ(s.conv_records, 2);
    CHECK_EQ(s.disturbed, 1);
    convsel_dataset_destroy(ds);

    /* CREATE refuses to replace a file. */
    convsel_dataset_writer *w = NULL;
    CHECK_EQ(convsel_dataset_writer_open(path, fp, CONVSEL_WRITE_CREATE, &w), CONVSEL_IO_ERROR);
    CHECK(w == NULL);
    CHECK(strstr(convsel_last_error(), "exists") != NULL);
}

/* Every prefix of the file: the header cut → a clean error; otherwise the
 * whole records before the cut, and a warning unless it falls between two. */
static void test_truncation(const char *path, const long *ends)
{
    size_t size;
    unsigned char *data = read_file(path, &size);
    CHECK(data != NULL && (long)size == ends[N_RECORDS]);
    int bad = 0;
    for (size_t len = 0; len <= size; len++) {
        convsel_dataset *ds = NULL;
        unsigned char *copy = malloc(len ? len : 1); /* exact size: ASan sees any overread */
        memcpy(copy, data, len);
        convsel_status st = convsel_dataset_load_buffer(copy, len, "cut.msgpack", &ds);
        if ((long)len < ends[0]) {
            bad += st != CONVSEL_CORRUPT || ds != NULL || !strstr(convsel_last_error(), "cut.msgpack");
        } else {
            size_t whole = 0;
            while (whole < N_RECORDS && ends[whole + 1] <= (long)len)
                whole++;
            int boundary = ends[whole] == (long)len;
            if (st != CONVSEL_OK || convsel_dataset_size(ds) != whole ||
                (convsel_dataset_warning(ds)[0] != '\0') == boundary) {
                bad++;
                fprintf(stderr, "cut at %zu: status %d, %zu records (want %zu), warning '%s'\n", len, (int)st,
                        convsel_dataset_size(ds), whole, convsel_dataset_warning(ds));
            }
            for (size_t k = 0; k < convsel_dataset_size(ds); k++) {
                convsel_record want;
                make_record(&want, (int)k);
                bad += !same_record(convsel_dataset_record(ds, k), &want);
            }
        }
        convsel_dataset_destroy(ds);
        free(copy);
    }
    CHECK_EQ(bad, 0);
    free(data);
}

/* Flipped bytes anywhere: a clean error or a clean load, never a crash, and
 * whatever loads passes the record checks. */
static void test_corruption(const char *path)
{
    static const unsigned char masks[] = {0xff, 0x01, 0x80, 0x10, 0x5a};
    size_t size;
    unsigned char *data = read_file(path, &size);
    int bad = 0, loaded = 0, rejected = 0;
    for (size_t off = 0; off < size; off++) {
        for (size_t m = 0; m < sizeof masks; m++) {
            unsigned char *copy = malloc(size);
            memcpy(copy, data, size);
            copy[off] ^= masks[m];
            convsel_dataset *ds = NULL;
            convsel_status st = convsel_dataset_load_buffer(copy, size, "flip.msgpack", &ds);
            if (st == CONVSEL_OK) {
                loaded++;
                for (size_t k = 0; k < convsel_dataset_size(ds); k++) {
                    const convsel_record *r = convsel_dataset_record(ds, k);
                    bad += r->fingerprint >= convsel_dataset_fingerprint_count(ds);
                    bad += convsel_problem_validate(&r->problem) != CONVSEL_OK;
                    bad += r->threads < 1 || !(r->median_ms >= 0.0);
                }
            } else {
                rejected++;
                bad += ds != NULL;
                bad += st != CONVSEL_CORRUPT && st != CONVSEL_VERSION_MISMATCH;
                bad += strstr(convsel_last_error(), "flip.msgpack") == NULL;
            }
            convsel_dataset_destroy(ds);
            free(copy);
        }
    }
    CHECK_EQ(bad, 0);
    CHECK(loaded > 0);
    CHECK(rejected > 0);
    free(data);
}

static convsel_status load_bytes(const void *bytes, size_t n)
{
    convsel_dataset *ds = NULL;
    convsel_status st = convsel_dataset_load_buffer(bytes, n, "foreign.bin", &ds);
    convsel_dataset_destroy(ds);
    return st;
}

static void test_foreign(void)
{
    char path[512];
    convsel_dataset *ds = NULL;

    path_in_dir(path, sizeof path, "text.txt");
    write_bytes(path, "hello, this is not a dataset\n", 29);
    CHECK_EQ(convsel_dataset_load(path, &ds), CONVSEL_CORRUPT);
    CHECK(ds == NULL);
    CHECK(strstr(convsel_last_error(), path) != NULL);
    CHECK(strstr(convsel_last_error(), "offset") != NULL);

    path_in_dir(path, sizeof path, "empty.msgpack");
    write_bytes(path, "", 0);
    CHECK_EQ(convsel_dataset_load(path, &ds), CONVSEL_CORRUPT);
    CHECK(strstr(convsel_last_error(), "empty") != NULL);

    path_in_dir(path, sizeof path, "missing.msgpack");
    CHECK_EQ(convsel_dataset_load(path, &ds), CONVSEL_NOT_FOUND);
    CHECK(strstr(convsel_last_error(), "missing.msgpack") != NULL);

    /* Hand-encoded msgpack, independent of the writer. */
    static const unsigned char other_magic[] = {0x82, 0xa5, 'm', 'a', 'g', 'i', 'c', 0xa9, 'o', 't', 'h', 'e', 'r',
                                                '-', 'f', 'm', 't', 0xa7, 'v', 'e', 'r', 's', 'i', 'o', 'n', 0x01};
    CHECK_EQ(load_bytes(other_magic, sizeof other_magic), CONVSEL_CORRUPT);
    CHECK(strstr(convsel_last_error(), "not a convsel dataset") != NULL);

    unsigned char future[64] = {0x82, 0xa5, 'm', 'a', 'g', 'i', 'c', 0xaf};
    size_t n = 8;
    memcpy(future + n, "convsel-dataset", 15);
    n += 15;
    future[n++] = 0xa7;
    memcpy(future + n, "version", 7);
    n += 7;
    future[n++] = 0x02;
    CHECK_EQ(load_bytes(future, n), CONVSEL_VERSION_MISMATCH);
    CHECK(strstr(convsel_last_error(), "version 2") != NULL);
    future[n - 1] = 0x01; /* version 1 but no fingerprints nor schema */
    CHECK_EQ(load_bytes(future, n), CONVSEL_CORRUPT);

    static const unsigned char array[] = {0x93, 0x01, 0x02, 0x03};
    CHECK_EQ(load_bytes(array, sizeof array), CONVSEL_CORRUPT);
    /* An array claiming 2^32-1 elements, a map claiming as many pairs, a
     * string claiming 4 GiB: nothing is allocated for them. */
    static const unsigned char huge_array[] = {0xdd, 0xff, 0xff, 0xff, 0xff, 0x01};
    CHECK_EQ(load_bytes(huge_array, sizeof huge_array), CONVSEL_CORRUPT);
    static const unsigned char huge_map[] = {0xdf, 0xff, 0xff, 0xff, 0xff, 0xa1, 'x', 0xdd, 0xff, 0xff, 0xff, 0xff};
    CHECK_EQ(load_bytes(huge_map, sizeof huge_map), CONVSEL_CORRUPT);
    static const unsigned char huge_str[] = {0x81, 0xdb, 0xff, 0xff, 0xff, 0xff, 'a'};
    CHECK_EQ(load_bytes(huge_str, sizeof huge_str), CONVSEL_CORRUPT);
    /* Deep nesting inside a header value. */
    unsigned char deep[2000];
    n = 0;
    deep[n++] = 0x81;
    deep[n++] = 0xa1;
    deep[n++] = 'x';
    while (n < sizeof deep)
        deep[n++] = 0x91;
    CHECK_EQ(load_bytes(deep, sizeof deep), CONVSEL_CORRUPT);
    static const unsigned char never_used[] = {0xc1};
    CHECK_EQ(load_bytes(never_used, sizeof never_used), CONVSEL_CORRUPT);
}

static void test_resume(const char *path, const convsel_fingerprint *fp, const long *ends)
{
    /* A torn tail: half of a seventh record. */
    size_t size;
    unsigned char *data = read_file(path, &size);
    size_t torn = size + (size_t)(ends[2] - ends[1]) / 2;
    unsigned char *longer = malloc(torn);
    memcpy(longer, data, size);
    memcpy(longer + size, data + ends[1], torn - size);
    write_bytes(path, longer, torn);
    free(longer);
    free(data);

    convsel_dataset *ds = NULL;
    CHECK_EQ(convsel_dataset_load(path, &ds), CONVSEL_OK);
    CHECK_EQ(convsel_dataset_size(ds), N_RECORDS);
    CHECK(strstr(convsel_dataset_warning(ds), "truncated") != NULL);
    convsel_dataset_destroy(ds);

    convsel_dataset_writer *w = NULL;
    CHECK_EQ(convsel_dataset_writer_open(path, fp, CONVSEL_WRITE_RESUME, &w), CONVSEL_OK);
    CHECK_EQ(convsel_dataset_size(convsel_dataset_writer_existing(w)), N_RECORDS);
    CHECK_EQ(file_size(path), ends[N_RECORDS]); /* the torn tail is gone */
    for (int i = 0; i < 2; i++) {
        convsel_record r;
        make_record(&r, i);
        r.threads = 40 + i;
        CHECK_EQ(convsel_dataset_writer_append(w, &r), CONVSEL_OK);
    }
    CHECK_EQ(convsel_dataset_writer_close(w), CONVSEL_OK);
    CHECK_EQ(convsel_dataset_load(path, &ds), CONVSEL_OK);
    CHECK_EQ(convsel_dataset_size(ds), N_RECORDS + 2);
    CHECK_STR(convsel_dataset_warning(ds), "");
    CHECK_EQ(convsel_dataset_record(ds, N_RECORDS + 1)->threads, 41);
    convsel_dataset_destroy(ds);

    /* Another CPU, another ISA cap, other library versions: refused. */
    convsel_fingerprint other = *fp;
    other.cores = fp->cores + 1;
    CHECK_EQ(convsel_dataset_writer_open(path, &other, CONVSEL_WRITE_RESUME, &w), CONVSEL_INVALID_ARGUMENT);
    CHECK(w == NULL);
    CHECK(strstr(convsel_last_error(), "cannot resume") != NULL);
    other = *fp;
    other.isa_cap = CONVSEL_ISA_AVX2;
    CHECK_EQ(convsel_dataset_writer_open(path, &other, CONVSEL_WRITE_RESUME, &w), CONVSEL_INVALID_ARGUMENT);
    CHECK(strstr(convsel_last_error(), "ISA cap") != NULL);
    other = *fp;
    snprintf(other.onednn_version, sizeof other.onednn_version, "3.4.0");
    CHECK_EQ(convsel_dataset_writer_open(path, &other, CONVSEL_WRITE_RESUME, &w), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(file_size(path), ends[N_RECORDS] + (ends[1] - ends[0]) + (ends[2] - ends[1])); /* untouched */

    /* RESUME on a file that does not exist creates it; on a foreign file fails. */
    char fresh[512];
    path_in_dir(fresh, sizeof fresh, "fresh.msgpack");
    unlink(fresh);
    CHECK_EQ(convsel_dataset_writer_open(fresh, fp, CONVSEL_WRITE_RESUME, &w), CONVSEL_OK);
    CHECK_EQ(convsel_dataset_size(convsel_dataset_writer_existing(w)), 0);
    CHECK_EQ(convsel_dataset_writer_close(w), CONVSEL_OK);
    write_bytes(fresh, "garbage", 7);
    CHECK_EQ(convsel_dataset_writer_open(fresh, fp, CONVSEL_WRITE_RESUME, &w), CONVSEL_CORRUPT);
    /* TRUNCATE replaces it. */
    CHECK_EQ(convsel_dataset_writer_open(fresh, fp, CONVSEL_WRITE_TRUNCATE, &w), CONVSEL_OK);
    CHECK_EQ(convsel_dataset_writer_close(w), CONVSEL_OK);
    CHECK_EQ(convsel_dataset_load(fresh, &ds), CONVSEL_OK);
    CHECK_EQ(convsel_dataset_size(ds), 0);
    convsel_dataset_destroy(ds);

    /* A record the writer must refuse. */
    CHECK_EQ(convsel_dataset_writer_open(fresh, fp, CONVSEL_WRITE_RESUME, &w), CONVSEL_OK);
    convsel_record r;
    make_record(&r, 0);
    r.median_ms = -1.0;
    CHECK_EQ(convsel_dataset_writer_append(w, &r), CONVSEL_INVALID_ARGUMENT);
    make_record(&r, 0);
    r.problem.oh = 99;
    CHECK_EQ(convsel_dataset_writer_append(w, &r), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_dataset_writer_close(w), CONVSEL_OK);
}

static void test_merge_split(const char *path, const convsel_fingerprint *fp)
{
    convsel_dataset *a = NULL, *merged = NULL, *b = NULL;
    CHECK_EQ(convsel_dataset_load(path, &a), CONVSEL_OK); /* N_RECORDS + 2 records */
    const size_t n_a = convsel_dataset_size(a);
    CHECK_EQ(convsel_dataset_create(&merged), CONVSEL_OK);
    size_t added = 0, dropped = 0;
    CHECK_EQ(convsel_dataset_merge(merged, a, &added, &dropped), CONVSEL_OK);
    CHECK_EQ(added, n_a);
    CHECK_EQ(dropped, 0);
    CHECK_EQ(convsel_dataset_merge(merged, a, &added, &dropped), CONVSEL_OK);
    CHECK_EQ(added, 0);
    CHECK_EQ(dropped, n_a);
    CHECK_EQ(convsel_dataset_fingerprint_count(merged), 1);

    /* A second machine: its fingerprint is added, its records remapped; a
     * record of the same measurement with other timings and another name is
     * a duplicate, one with another thread count is not. */
    convsel_fingerprint other;
    fake_fingerprint(&other, 64);
    uint32_t idx = 99;
    CHECK_EQ(convsel_dataset_create(&b), CONVSEL_OK);
    CHECK_EQ(convsel_dataset_add_fingerprint(b, fp, &idx), CONVSEL_OK);
    CHECK_EQ(idx, 0);
    CHECK_EQ(convsel_dataset_add_fingerprint(b, &other, &idx), CONVSEL_OK);
    CHECK_EQ(idx, 1);
    CHECK_EQ(convsel_dataset_add_fingerprint(b, &other, &idx), CONVSEL_OK);
    CHECK_EQ(idx, 1);
    convsel_record r;
    make_record(&r, 0);
    r.median_ms = 99.0;
    snprintf(r.problem.name, sizeof r.problem.name, "renamed");
    CHECK_EQ(convsel_dataset_append(b, &r), CONVSEL_OK); /* duplicate of a's first */
    r.threads = 9;
    CHECK_EQ(convsel_dataset_append(b, &r), CONVSEL_OK); /* new */
    make_record(&r, 1);
    r.fingerprint = 1;
    CHECK_EQ(convsel_dataset_append(b, &r), CONVSEL_OK); /* same measurement, other CPU: new */
    r.fingerprint = 2;
    CHECK_EQ(convsel_dataset_append(b, &r), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_dataset_merge(merged, b, &added, &dropped), CONVSEL_OK);
    CHECK_EQ(added, 2);
    CHECK_EQ(dropped, 1);
    CHECK_EQ(convsel_dataset_fingerprint_count(merged), 2);
    CHECK_EQ(convsel_dataset_size(merged), n_a + 2);
    const convsel_record *last = convsel_dataset_record(merged, n_a + 1);
    CHECK_EQ(last->fingerprint, 1);
    CHECK_EQ(convsel_dataset_fingerprint(merged, last->fingerprint)->cores, 64);
    CHECK(convsel_dataset_record(merged, 0)->median_ms != 99.0); /* the first one kept */

    /* Saved and loaded back: identical. */
    char saved[512];
    path_in_dir(saved, sizeof saved, "merged.msgpack");
    CHECK_EQ(convsel_dataset_save(merged, saved), CONVSEL_OK);
    convsel_dataset *back = NULL;
    CHECK_EQ(convsel_dataset_load(saved, &back), CONVSEL_OK);
    CHECK_EQ(convsel_dataset_size(back), convsel_dataset_size(merged));
    CHECK_EQ(convsel_dataset_fingerprint_count(back), 2);
    int diff = 0;
    for (size_t i = 0; i < convsel_dataset_size(back); i++)
        diff += !same_record(convsel_dataset_record(back, i), convsel_dataset_record(merged, i));
    CHECK_EQ(diff, 0);
    convsel_dataset_destroy(back);

    /* Split: every shape on one side, the sides partition the records, the
     * same seed the same split. */
    convsel_dataset *train = NULL, *test = NULL, *train2 = NULL, *test2 = NULL;
    CHECK_EQ(convsel_dataset_split(merged, 0.5, 7, CONVSEL_SPLIT_BY_CONFIG, &train, &test), CONVSEL_OK);
    CHECK_EQ(convsel_dataset_size(train) + convsel_dataset_size(test), convsel_dataset_size(merged));
    convsel_dataset_summary s_all, s_train, s_test;
    convsel_dataset_summarize(merged, &s_all);
    convsel_dataset_summarize(train, &s_train);
    convsel_dataset_summarize(test, &s_test);
    CHECK_EQ(s_train.problems + s_test.problems, s_all.problems);
    CHECK_EQ(s_test.problems, (s_all.problems + 1) / 2); /* round(0.5 × 6) = 3 */
    CHECK_EQ(convsel_dataset_fingerprint_count(test), 2);
    for (size_t i = 0; i < convsel_dataset_size(train); i++) {
        const convsel_record *tr = convsel_dataset_record(train, i);
        for (size_t j = 0; j < convsel_dataset_size(test); j++) {
            const convsel_record *te = convsel_dataset_record(test, j);
            char ka[512], kb[512];
            convsel_problem pa = tr->problem, pb = te->problem;
            pa.name[0] = pb.name[0] = '\0';
            pa.repeat = pb.repeat = 1;
            convsel_problem_format(&pa, ka, sizeof ka);
            convsel_problem_format(&pb, kb, sizeof kb);
            diff += strcmp(ka, kb) == 0;
        }
    }
    CHECK_EQ(diff, 0);
    CHECK_EQ(convsel_dataset_split(merged, 0.5, 7, CONVSEL_SPLIT_BY_CONFIG, &train2, &test2), CONVSEL_OK);
    CHECK_EQ(convsel_dataset_size(test2), convsel_dataset_size(test));
    for (size_t i = 0; i < convsel_dataset_size(test) && i < convsel_dataset_size(test2); i++)
        diff += !same_record(convsel_dataset_record(test, i), convsel_dataset_record(test2, i));
    CHECK_EQ(diff, 0);
    convsel_dataset_destroy(train2);
    convsel_dataset_destroy(test2);
    convsel_dataset_destroy(train);
    convsel_dataset_destroy(test);
    CHECK_EQ(convsel_dataset_split(merged, 1.5, 7, CONVSEL_SPLIT_BY_CONFIG, &train, &test), CONVSEL_INVALID_ARGUMENT);

    /* By network: the two "a:b:c"-like names group by their first part. */
    CHECK_EQ(convsel_dataset_split(merged, 1.0, 3, CONVSEL_SPLIT_BY_NETWORK, &train, &test), CONVSEL_OK);
    CHECK_EQ(convsel_dataset_size(train), 0);
    CHECK_EQ(convsel_dataset_size(test), convsel_dataset_size(merged));
    convsel_dataset_destroy(train);
    convsel_dataset_destroy(test);

    convsel_dataset_destroy(a);
    convsel_dataset_destroy(b);
    convsel_dataset_destroy(merged);
}

/* convsel_dataset_disturbed: which configurations --redo measures again. */
static void test_disturbed(const convsel_fingerprint *fp)
{
    convsel_fingerprint other = *fp;
    other.cores = fp->cores / 2;
    convsel_dataset *ds = NULL;
    uint32_t here = 0, there = 0;
    CHECK_EQ(convsel_dataset_create(&ds), CONVSEL_OK);
    if (!ds)
        return;
    CHECK_EQ(convsel_dataset_add_fingerprint(ds, fp, &here), CONVSEL_OK);
    CHECK_EQ(convsel_dataset_add_fingerprint(ds, &other, &there), CONVSEL_OK);
    struct {
        int base, threads;
        uint32_t fingerprint;
        double ratio;
        const char *primitive;
    } rows[] = {
        {0, 1, here, 1.0625, "prim_a"},  /* A at 1 thread: clean here ... */
        {0, 1, here, 3.5, "prim_b"},     /* ... disturbed there: A is flagged up to 3.5 */
        {0, 2, here, 1.0625, "prim_a"},  /* A at 2 threads: another configuration, clean */
        {1, 2, here, 2.9, "prim_a"},     /* B: under 3 */
        {2, 3, here, 50.0, "reorder"},   /* a reorder does not count */
        {4, 3, here, 5.0, "prim_a"},     /* C */
        {3, 4, there, 50.0, "prim_a"},   /* D: another CPU's */
    };
    for (size_t i = 0; i < sizeof rows / sizeof rows[0]; i++) {
        convsel_record r;
        make_record(&r, rows[i].base);
        r.threads = rows[i].threads;
        r.fingerprint = rows[i].fingerprint;
        snprintf(r.primitive, sizeof r.primitive, "%s", rows[i].primitive);
        if (i == 1)
            snprintf(r.problem.name, sizeof r.problem.name, "second_name");
        r.median_ms = r.min_ms * rows[i].ratio;
        r.p90_ms = r.median_ms * 1.5;
        CHECK_EQ(convsel_dataset_append(ds, &r), CONVSEL_OK);
    }
    convsel_problem *problems = NULL;
    int *threads = NULL;
    size_t n = 99, elsewhere = 99;
    CHECK_EQ(convsel_dataset_disturbed(ds, 3.0, fp, &problems, &threads, &n, &elsewhere), CONVSEL_OK);
    CHECK_EQ(n, 2);
    CHECK_EQ(elsewhere, 1);
    if (n == 2 && problems && threads) {
        convsel_record a, c;
        make_record(&a, 0);
        make_record(&c, 4);
        CHECK(strcmp(problems[0].name, a.problem.name) == 0); /* the configuration's first record's */
        CHECK(memcmp(&problems[0], &a.problem, sizeof a.problem) == 0);
        CHECK_EQ(threads[0], 1);
        CHECK(memcmp(&problems[1], &c.problem, sizeof c.problem) == 0);
        CHECK_EQ(threads[1], 3);
    }
    free(problems);
    free(threads);
    /* Any CPU: D too. */
    CHECK_EQ(convsel_dataset_disturbed(ds, 3.0, NULL, &problems, &threads, &n, &elsewhere), CONVSEL_OK);
    CHECK_EQ(n, 3);
    CHECK_EQ(elsewhere, 0);
    CHECK(n == 3 && threads && threads[2] == 4);
    free(problems);
    free(threads);
    /* The ratio is strict: A's 3.5 is not over 3.5, B's 2.9 is over 2.8. */
    CHECK_EQ(convsel_dataset_disturbed(ds, 3.5, fp, &problems, &threads, &n, NULL), CONVSEL_OK);
    CHECK_EQ(n, 1);
    CHECK(n == 1 && threads && threads[0] == 3);
    free(problems);
    free(threads);
    CHECK_EQ(convsel_dataset_disturbed(ds, 2.8, fp, &problems, &threads, &n, NULL), CONVSEL_OK);
    CHECK_EQ(n, 3);
    free(problems);
    free(threads);
    CHECK_EQ(convsel_dataset_disturbed(ds, 1e6, fp, &problems, &threads, &n, &elsewhere), CONVSEL_OK);
    CHECK(n == 0 && problems == NULL && threads == NULL && elsewhere == 0);
    CHECK_EQ(convsel_dataset_disturbed(ds, -1.0, fp, &problems, &threads, &n, NULL), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_dataset_disturbed(ds, NAN, fp, &problems, &threads, &n, NULL), CONVSEL_INVALID_ARGUMENT);
    CHECK(strstr(convsel_last_error(), "ratio") != NULL);
    convsel_dataset_destroy(ds);
}

static void test_real_fingerprint(void)
{
    convsel_fingerprint fp, again;
    CHECK_EQ(convsel_fingerprint_get(&fp), CONVSEL_OK);
    CHECK_EQ(convsel_fingerprint_get(&again), CONVSEL_OK);
    CHECK(fp.vendor[0] != '\0');
    CHECK(fp.microarch[0] != '\0');
    CHECK(fp.cores >= 1);
    CHECK(fp.l1d_bytes > 0);
    CHECK_EQ(fp.isa_cap, convsel_get_isa());
    CHECK(strchr(fp.onednn_version, '.') != NULL);
    CHECK(convsel_fingerprint_same_cpu(&fp, &again));
    again.cores++;
    CHECK(!convsel_fingerprint_same_cpu(&fp, &again));
    if (convsel_get_isa() >= CONVSEL_ISA_AVX2)
        CHECK(strstr(fp.isa_flags, "avx2") != NULL);
    printf("this CPU: %s %s (%s), %d cores, L1d %lld L2 %lld L3 %lld, flags: %s\n", fp.vendor, fp.model_name,
           fp.microarch, fp.cores, (long long)fp.l1d_bytes, (long long)fp.l2_bytes, (long long)fp.l3_bytes,
           fp.isa_flags);
}

int main(void)
{
    snprintf(dir, sizeof dir, "%s/convsel_test_dataset_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    convsel_fingerprint fp;
    fake_fingerprint(&fp, 8);
    char path[512];
    long ends[N_RECORDS + 1];
    path_in_dir(path, sizeof path, "sample.msgpack");
    write_sample(path, &fp, ends);
    test_round_trip(path, &fp);
    test_truncation(path, ends);
    test_corruption(path);
    test_foreign();
    test_resume(path, &fp, ends);
    test_merge_split(path, &fp);
    test_disturbed(&fp);
    test_real_fingerprint();

    char cmd[600];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
    return CHECK_DONE();
}
