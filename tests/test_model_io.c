/* Model files: round trips, determinism of the bytes, and broken files. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "convsel.h"
#include "../learner/features.h"
#include "../learner/model.h"
#include "synthetic.h"

static char tmp_path[256];

static convsel_model *train(const convsel_dataset *ds, const char *params, int threads)
{
    convsel_train_params p;
    convsel_train_params_default(&p);
    p.trees = 40;
    p.max_depth = 5;
    CHECK_EQ(convsel_train_params_parse(params, &p), CONVSEL_OK);
    p.threads = threads;
    const convsel_dataset *sets[1] = {ds};
    convsel_model *model = NULL;
    CHECK_EQ(convsel_model_train(sets, 1, &p, NULL, NULL, &model), CONVSEL_OK);
    return model;
}

static int bytes_of(const convsel_model *m, uint8_t **data, size_t *size)
{
    return convsel_model_serialize(m, data, size) == CONVSEL_OK;
}

static int write_file(const char *path, const uint8_t *data, size_t size)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    int ok = fwrite(data, 1, size, f) == size;
    return fclose(f) == 0 && ok;
}

/* Queries over many problems and every primitive of the model. */
static size_t make_queries(const convsel_model *m, convsel_problem *problems, size_t n_problems,
                           convsel_model_query *q)
{
    size_t n = 0;
    convsel_rng rng = {77};
    for (size_t i = 0; i < n_problems; i++) {
        syn_random_problem(&rng, "probe", (int)i, &problems[i]);
        for (size_t j = 0; j < convsel_model_primitive_count(m); j++)
            q[n++] = (convsel_model_query){&problems[i], 1 + (int)(i % 2), j, NULL};
    }
    return n;
}

static void test_round_trip(const convsel_dataset *ds, const char *params)
{
    convsel_model *model = train(ds, params, 0);
    if (!model)
        return;
    CHECK_EQ(convsel_model_save(model, tmp_path), CONVSEL_OK);
    convsel_model *loaded = NULL;
    CHECK_EQ(convsel_model_load(tmp_path, &loaded), CONVSEL_OK);
    if (!loaded) {
        convsel_model_destroy(model);
        return;
    }
    CHECK_STR(convsel_model_id(model), convsel_model_id(loaded));
    CHECK_EQ(convsel_model_primitive_count(model), convsel_model_primitive_count(loaded));
    for (size_t j = 0; j < convsel_model_primitive_count(model); j++)
        CHECK_STR(convsel_model_primitive_name(model, j), convsel_model_primitive_name(loaded, j));
    CHECK(memcmp(convsel_model_fingerprint(model, 0), convsel_model_fingerprint(loaded, 0),
                 sizeof(convsel_fingerprint)) == 0);
    CHECK_EQ(convsel_model_params(loaded)->target, convsel_model_params(model)->target);
    CHECK_EQ(convsel_model_params(loaded)->mode, convsel_model_params(model)->mode);

    enum { P = 200 };
    static convsel_problem problems[P];
    static convsel_model_query q[P * SYN_COUNT];
    static double a[P * SYN_COUNT], b[P * SYN_COUNT];
    size_t n = make_queries(model, problems, P, q);
    CHECK_EQ(convsel_model_predict_batch(model, q, n, a), CONVSEL_OK);
    CHECK_EQ(convsel_model_predict_batch(loaded, q, n, b), CONVSEL_OK);
    CHECK_MSG(memcmp(a, b, n * sizeof *a) == 0, "predictions differ after save/load (%s)", params);
    int finite = 1;
    for (size_t i = 0; i < n; i++)
        finite &= isfinite(a[i]) && a[i] > 0;
    CHECK(finite);

    /* The loaded model serialises to the very bytes of the file. */
    uint8_t *x, *y;
    size_t nx, ny;
    CHECK(bytes_of(model, &x, &nx) && bytes_of(loaded, &y, &ny));
    CHECK(nx == ny && memcmp(x, y, nx) == 0);
    free(x);
    free(y);
    convsel_model_destroy(model);
    convsel_model_destroy(loaded);
}

static void test_determinism(const convsel_dataset *ds)
{
    convsel_model *one = train(ds, "seed=3", 1), *two = train(ds, "seed=3", 2), *other = train(ds, "seed=4", 2);
    uint8_t *a, *b, *c;
    size_t na, nb, nc;
    CHECK(bytes_of(one, &a, &na) && bytes_of(two, &b, &nb) && bytes_of(other, &c, &nc));
    CHECK_MSG(na == nb && memcmp(a, b, na) == 0, "same seed, 1 and 2 threads: different bytes");
    CHECK_MSG(na != nc || memcmp(a, c, na) != 0, "different seeds: same bytes");
    CHECK_STR(convsel_model_id(one), convsel_model_id(two));
    CHECK(strcmp(convsel_model_id(one), convsel_model_id(other)) != 0);
    free(a);
    free(b);
    free(c);
    convsel_model_destroy(one);
    convsel_model_destroy(two);
    convsel_model_destroy(other);
}

/* Replaces the first occurrence of needle in data (same length). */
static int patch(uint8_t *data, size_t size, const char *needle, const char *replacement)
{
    size_t len = strlen(needle);
    for (size_t i = 0; i + len <= size; i++)
        if (memcmp(data + i, needle, len) == 0) {
            memcpy(data + i, replacement, len);
            return 1;
        }
    return 0;
}

static convsel_status load_bytes(const uint8_t *data, size_t size)
{
    CHECK(write_file(tmp_path, data, size));
    convsel_model *m = NULL;
    convsel_status st = convsel_model_load(tmp_path, &m);
    if (st == CONVSEL_OK)
        convsel_model_destroy(m);
    else
        CHECK_MSG(strstr(convsel_last_error(), tmp_path) != NULL, "error without the file name: %s",
                  convsel_last_error());
    return st;
}

static void test_broken_files(const convsel_dataset *ds)
{
    convsel_model *model = train(ds, "trees=6,max_depth=3,mode=single", 0);
    uint8_t *good, *bad;
    size_t size;
    if (!model || !bytes_of(model, &good, &size))
        return;
    bad = malloc(size + 16);

    /* Truncated at every offset: CORRUPT, with the file named. */
    int all_corrupt = 1;
    for (size_t cut = 0; cut < size; cut++) {
        convsel_model *m = NULL;
        convsel_status st = convsel_model_parse(good, cut, "cut.msgpack", &m);
        all_corrupt &= st == CONVSEL_CORRUPT && m == NULL && strstr(convsel_last_error(), "cut.msgpack");
    }
    CHECK(all_corrupt);
    CHECK_EQ(load_bytes(good, size), CONVSEL_OK);
    CHECK_EQ(load_bytes(good, size / 2), CONVSEL_CORRUPT);
    CHECK(strstr(convsel_last_error(), "truncated") != NULL);

    /* Flipped bytes: a clean status whatever the byte. */
    int clean = 1;
    for (size_t i = 0; i < size; i += 3) {
        memcpy(bad, good, size);
        bad[i] ^= 0x5a;
        convsel_model *m = NULL;
        convsel_status st = convsel_model_parse(bad, size, "flip", &m);
        clean &= st == CONVSEL_OK || st == CONVSEL_CORRUPT || st == CONVSEL_VERSION_MISMATCH;
        convsel_model_destroy(m);
    }
    CHECK(clean);

    /* Wrong magic, another format, an unknown version, trailing bytes. */
    memcpy(bad, good, size);
    CHECK(patch(bad, size, "convsel-model", "convsel-m0del"));
    CHECK_EQ(load_bytes(bad, size), CONVSEL_CORRUPT);
    CHECK(strstr(convsel_last_error(), "magic") != NULL);
    CHECK_EQ(load_bytes((const uint8_t *)"\x92\x01\x02", 3), CONVSEL_CORRUPT);
    CHECK_EQ(load_bytes((const uint8_t *)"", 0), CONVSEL_CORRUPT);

    memcpy(bad, good, size);
    CHECK(patch(bad, size, "\xa7version\x01", "\xa7version\x7f"));
    CHECK_EQ(load_bytes(bad, size), CONVSEL_VERSION_MISMATCH);
    CHECK(strstr(convsel_last_error(), "version 127") != NULL);

    memcpy(bad, good, size);
    bad[size] = 0xc0;
    CHECK_EQ(load_bytes(bad, size + 1), CONVSEL_CORRUPT);

    /* A feature schema other than this build's. */
    memcpy(bad, good, size);
    CHECK(patch(bad, size, "log_flops_per_thread", "log_flops_per_threaD"));
    CHECK_EQ(load_bytes(bad, size), CONVSEL_VERSION_MISMATCH);
    CHECK(strstr(convsel_last_error(), "log_flops_per_threaD") != NULL);
    memcpy(bad, good, size);
    /* fixstr "version", this build's version (a positive fixint), fixstr "features" */
    char ours[] = "\xa7version?\xa8" "features", other[] = "\xa7version\x7f\xa8" "features";
    ours[8] = (char)CONVSEL_FEATURE_SCHEMA_VERSION;
    CHECK(patch(bad, size, ours, other));
    CHECK_EQ(load_bytes(bad, size), CONVSEL_VERSION_MISMATCH);

    /* A child index pointing back up (a loop) and a feature out of range. */
    memcpy(bad, good, size);
    /* The first internal node: [feature, f32 threshold, 1, 2, ...]. */
    int patched = 0;
    for (size_t i = 0; i + 8 < size && !patched; i++)
        if (bad[i] == 0x96 && bad[i + 1] <= 0x7f && bad[i + 2] == 0xca && bad[i + 7] == 0x01 && bad[i + 8] == 0x02) {
            bad[i + 7] = 0x00;
            patched = 1;
        }
    CHECK(patched);
    CHECK_EQ(load_bytes(bad, size), CONVSEL_CORRUPT);
    CHECK(strstr(convsel_last_error(), "child") != NULL);
    memcpy(bad, good, size);
    patched = 0;
    for (size_t i = 0; i + 8 < size && !patched; i++)
        if (bad[i] == 0x96 && bad[i + 1] <= 0x7f && bad[i + 2] == 0xca && bad[i + 7] == 0x01 && bad[i + 8] == 0x02) {
            bad[i + 1] = 0x7f; /* feature 127 */
            patched = 1;
        }
    CHECK(patched);
    CHECK_EQ(load_bytes(bad, size), CONVSEL_CORRUPT);

    /* A count far beyond the file: refused before any allocation. */
    memcpy(bad, good, size);
    CHECK(patch(bad, size, "\xa9" "ensembles\x91", "\xa9" "ensembles\xdd"));
    CHECK_EQ(load_bytes(bad, size), CONVSEL_CORRUPT);

    /* No file at all. */
    convsel_model *m = NULL;
    CHECK_EQ(convsel_model_load("/nonexistent/model.msgpack", &m), CONVSEL_IO_ERROR);
    CHECK(strstr(convsel_last_error(), "/nonexistent/model.msgpack") != NULL);
    CHECK(m == NULL);
    /* A directory (fopen opens it; reading it fails) names itself as one. */
    char dir[] = "/tmp/convsel_model_dirXXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    CHECK_EQ(convsel_model_load(dir, &m), CONVSEL_IO_ERROR);
    CHECK(strstr(convsel_last_error(), dir) != NULL && strstr(convsel_last_error(), "a directory") != NULL);
    CHECK(m == NULL);
    CHECK_EQ(rmdir(dir), 0);
    free(bad);
    free(good);
    convsel_model_destroy(model);
}

/* The held-out error and the reorder cost model travel with the model. */
static void test_extras(void)
{
    convsel_dataset *ds = NULL;
    CHECK_EQ(syn_dataset(8, 2, 10, 10, 0.05, &ds), CONVSEL_OK);
    if (!ds)
        return;
    convsel_model *plain = train(ds, "trees=30", 0);
    CHECK(plain && convsel_model_reorders(plain) == NULL);
    double u = convsel_model_uncertainty(plain);
    CHECK_MSG(u > 0.01 && u < 1.0, "uncertainty %g", u);
    convsel_model *none = train(ds, "trees=30,valid_fraction=0", 0);
    CHECK_NEAR(convsel_model_uncertainty(none), 0.1, 0); /* nothing held out: the default */
    convsel_model_destroy(none);

    /* Reorder records: time = 0.02 ms + 0.1 ms per MB moved. */
    size_t n = convsel_dataset_size(ds);
    for (size_t i = 0; i < n; i += 7) {
        convsel_record r = *convsel_dataset_record(ds, i);
        r.kind = CONVSEL_RECORD_REORDER;
        snprintf(r.primitive, sizeof r.primitive, "reorder");
        r.from = CONVSEL_LAYOUT_NCHW;
        r.to = CONVSEL_LAYOUT_NCHW16C;
        r.tensor = CONVSEL_TENSOR_SRC;
        const convsel_problem *p = &r.problem;
        double mb = 4e-6 * (double)(convsel_layout_elems(r.from, p->mb, p->ic, p->ih, p->iw) +
                                    convsel_layout_elems(r.to, p->mb, p->ic, p->ih, p->iw));
        r.min_ms = r.p10_ms = r.median_ms = r.p90_ms = 0.02 + 0.1 * mb;
        CHECK_EQ(convsel_dataset_append(ds, &r), CONVSEL_OK);
    }
    convsel_model *with = train(ds, "trees=30", 0);
    const convsel_reorder_model *rm = with ? convsel_model_reorders(with) : NULL;
    CHECK(rm != NULL);
    if (rm) {
        double want = 0.02 + 0.1 * 4e-6 * (double)(convsel_layout_elems(CONVSEL_LAYOUT_NCHW, 1, 64, 56, 56) +
                                                   convsel_layout_elems(CONVSEL_LAYOUT_NCHW16C, 1, 64, 56, 56));
        double got = convsel_reorder_model_predict(rm, 1, 64, 56, 56, CONVSEL_LAYOUT_NCHW, CONVSEL_LAYOUT_NCHW16C, 1);
        CHECK_NEAR(got, want, 1e-6);
    }
    /* Conv predictions do not depend on the reorder records. */
    CHECK(strcmp(convsel_model_id(plain), convsel_model_id(with)) != 0);
    CHECK_EQ(convsel_model_save(with, tmp_path), CONVSEL_OK);
    convsel_model *loaded = NULL;
    CHECK_EQ(convsel_model_load(tmp_path, &loaded), CONVSEL_OK);
    if (loaded && rm) {
        CHECK(convsel_model_reorders(loaded) && memcmp(convsel_model_reorders(loaded), rm, sizeof *rm) == 0);
        CHECK(convsel_model_uncertainty(loaded) == convsel_model_uncertainty(with));
        CHECK_STR(convsel_model_id(loaded), convsel_model_id(with));
    }
    convsel_model_destroy(plain);
    convsel_model_destroy(with);
    convsel_model_destroy(loaded);
    convsel_dataset_destroy(ds);
}

/* Batch prediction (tree by tree over blocks, through the laid-out forests
 * where the trees fit them) gives exactly what one-at-a-time prediction
 * (node by node) gives, through the catalogue's indexes too, and so does a
 * model saved and loaded again. */
static void test_batch_equals_single(void)
{
    convsel_dataset *ds = NULL;
    CHECK_EQ(syn_dataset_named(21, 2, 10, 20, 0.03, syn_catalogue_names, &ds), CONVSEL_OK);
    if (!ds)
        return;
    const char *modes[3] = {"mode=single", "mode=per_primitive", "mode=single,max_depth=10"};
    for (int k = 0; k < 6; k++) {
        convsel_model *model = train(ds, modes[k % 3], 0);
        if (model && k >= 3) { /* the same model through a file */
            uint8_t *data = NULL;
            size_t size = 0;
            convsel_model *loaded = NULL;
            CHECK(bytes_of(model, &data, &size));
            CHECK_EQ(convsel_model_parse(data, size, "copy", &loaded), CONVSEL_OK);
            free(data);
            convsel_model_destroy(model);
            model = loaded;
        }
        if (!model)
            continue;
        /* trees of depth 5 are laid out; those of max_depth 10 are not */
        int laid_out = model->forests != NULL;
        for (size_t e = 0; laid_out && e < model->n_ensembles; e++)
            laid_out &= model->forests[e].leaf != NULL;
        CHECK_MSG(laid_out == (k % 3 != 2), "%s: forests %s", modes[k % 3], laid_out ? "laid out" : "missing");
        enum { P = 150 };
        static convsel_problem problems[P];
        static convsel_model_query q[P * SYN_COUNT];
        static double batch[P * SYN_COUNT];
        size_t n = make_queries(model, problems, P, q);
        CHECK_EQ(convsel_model_predict_batch(model, q, n, batch), CONVSEL_OK);
        int same = 1;
        for (size_t i = 0; i < n; i++) {
            size_t catalogue;
            double one, single;
            CHECK_EQ(convsel_primitive_find(convsel_model_primitive_name(model, q[i].primitive), &catalogue),
                     CONVSEL_OK);
            CHECK_EQ(convsel_model_predict_ms(model, q[i].problem, q[i].threads, catalogue, NULL, &one), CONVSEL_OK);
            CHECK_EQ(convsel_model_predict_batch(model, &q[i], 1, &single), CONVSEL_OK);
            same &= memcmp(&one, &batch[i], sizeof one) == 0 && memcmp(&single, &batch[i], sizeof one) == 0;
        }
        CHECK_MSG(same, "%s%s: batch and single predictions differ", modes[k % 3], k >= 3 ? " (loaded)" : "");
        convsel_model_destroy(model);
    }
    convsel_dataset_destroy(ds);
}

/* The shipped model, large enough that its id is hashed on a second core
 * while it is parsed: the id is the file's hash, the trees are laid out,
 * and batch predictions through the layout equal one-at-a-time ones. */
static void test_shipped_model(void)
{
    const char *path = CONVSEL_SOURCE_DIR "/models/default.msgpack";
    FILE *f = fopen(path, "rb");
    CHECK_MSG(f != NULL, "cannot open %s", path);
    if (!f)
        return;
    static uint8_t data[16 << 20];
    size_t size = fread(data, 1, sizeof data, f);
    fclose(f);
    CHECK(size > ((size_t)1 << 20) && size < sizeof data);
    char id[17];
    convsel_model_hash_id(data, size, id);
    convsel_model *model = NULL;
    CHECK_EQ(convsel_model_load(path, &model), CONVSEL_OK);
    if (!model)
        return;
    CHECK_STR(convsel_model_id(model), id);
    CHECK(model->forests != NULL && model->forests[0].leaf != NULL);
    enum { P = 40 };
    static convsel_problem problems[P];
    static convsel_model_query q[P * 64];
    static double batch[P * 64];
    size_t n = make_queries(model, problems, P, q);
    CHECK_EQ(convsel_model_predict_batch(model, q, n, batch), CONVSEL_OK);
    int same = 1;
    for (size_t i = 0; i < n; i++) {
        size_t catalogue;
        double one = 0.0;
        if (convsel_primitive_find(convsel_model_primitive_name(model, q[i].primitive), &catalogue) != CONVSEL_OK)
            continue;
        CHECK_EQ(convsel_model_predict_ms(model, q[i].problem, q[i].threads, catalogue, NULL, &one), CONVSEL_OK);
        same &= memcmp(&one, &batch[i], sizeof one) == 0;
    }
    CHECK_MSG(same, "the shipped model: batch and single predictions differ");
    convsel_model_destroy(model);
}

static void test_default_path(void)
{
    char path[4096];
    setenv("CONVSEL_MODEL", "/nonexistent/x.msgpack", 1);
    CHECK_EQ(convsel_model_default_path(path, sizeof path), CONVSEL_NOT_FOUND);
    CHECK(strstr(convsel_last_error(), "/nonexistent/x.msgpack") != NULL);
    setenv("CONVSEL_MODEL", tmp_path, 1);
    CHECK_EQ(convsel_model_default_path(path, sizeof path), CONVSEL_OK);
    CHECK_STR(path, tmp_path);
    unsetenv("CONVSEL_MODEL");
}

int main(void)
{
    snprintf(tmp_path, sizeof tmp_path, "/tmp/convsel_test_model_%ld.msgpack", (long)getpid());
    convsel_dataset *ds = NULL;
    CHECK_EQ(syn_dataset(5, 3, 12, 20, 0.03, &ds), CONVSEL_OK);
    if (!ds)
        return CHECK_DONE();
    test_round_trip(ds, "target=log");
    test_round_trip(ds, "target=log_per_flop,mode=single");
    test_round_trip(ds, "target=roofline_residual,statistic=p10");
    test_determinism(ds);
    test_broken_files(ds);
    test_extras();
    test_batch_equals_single();
    test_shipped_model();
    test_default_path();
    unlink(tmp_path);
    convsel_dataset_destroy(ds);
    return CHECK_DONE();
}
