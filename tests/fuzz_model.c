/*
 * Fuzz target for model files: any bytes must parse into a usable model or
 * fail with CORRUPT / VERSION_MISMATCH, never crash, hang or over-allocate.
 * A model that parses must predict and survive a save/parse round trip.
 *
 * With -DCONVSEL_FUZZ=ON (clang) this is a libFuzzer binary (fuzz_model).
 * Built with CONVSEL_FUZZ_STANDALONE it is a replay tool the test suite runs:
 *   fuzz_model_replay FILE|DIR...         runs each file (a corpus, crashes)
 *   fuzz_model_replay --mutate N FILE...  runs N seeded mutations of each file
 *   fuzz_model_replay --self N            trains a tiny model and mutates it
 * and exits non-zero when an input breaks the contract.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../learner/model.h"

#ifdef CONVSEL_FUZZ_STANDALONE
static int contract_broken;
#endif

static void broken(const char *what)
{
    fprintf(stderr, "fuzz_model: %s\n", what);
#ifdef CONVSEL_FUZZ_STANDALONE
    contract_broken++;
#else
    abort();
#endif
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    convsel_model *model;
    convsel_status st = convsel_model_parse(data, size, "<fuzz input>", &model);
    if (st != CONVSEL_OK) {
        if (st != CONVSEL_CORRUPT && st != CONVSEL_VERSION_MISMATCH)
            broken(convsel_status_str(st));
        if (!strstr(convsel_last_error(), "<fuzz input>"))
            broken("the error does not name the file");
        return 0;
    }
    convsel_problem problem;
    if (convsel_problem_parse("mb2ic32ih28oc64oh28kh3ph1", &problem) != CONVSEL_OK)
        broken("problem");
    for (size_t j = 0; j < convsel_model_primitive_count(model); j++) {
        convsel_model_query q = {&problem, 2, j, NULL};
        double ms;
        if (convsel_model_predict_batch(model, &q, 1, &ms) != CONVSEL_OK || isnan(ms))
            broken("a parsed model does not predict");
    }
    uint8_t *bytes;
    size_t n;
    if (convsel_model_serialize(model, &bytes, &n) != CONVSEL_OK) {
        broken("a parsed model does not serialise");
    } else {
        convsel_model *again;
        if (convsel_model_parse(bytes, n, "<round trip>", &again) != CONVSEL_OK)
            broken(convsel_last_error());
        else
            convsel_model_destroy(again);
        free(bytes);
    }
    convsel_model_destroy(model);
    return 0;
}

#ifdef CONVSEL_FUZZ_STANDALONE
#include "../learner/learner.h"
#include "fuzz_replay.h"
#include "synthetic.h"

/* Runs one file as it is. */
static int run_file(const char *path, void *ctx)
{
    (void)ctx;
    size_t size;
    uint8_t *data = fuzz_read_file(path, &size);
    if (!data) {
        perror(path);
        return -1;
    }
    LLVMFuzzerTestOneInput(data, size);
    free(data);
    return 0;
}

/* Every truncation, then n seeded mutations typical of fuzzers: bit flips,
 * random bytes, msgpack markers that declare huge counts, deletions,
 * duplications and insertions. */
static void mutate_all(const uint8_t *data, size_t size, long n, uint64_t seed)
{
    for (size_t cut = 0; cut < size; cut++)
        LLVMFuzzerTestOneInput(data, cut);
    static const uint8_t markers[] = {0x00, 0x7f, 0x80, 0x8f, 0x90, 0x9f, 0xc0, 0xca, 0xcb, 0xcf, 0xd3,
                                      0xd9, 0xdb, 0xdc, 0xdd, 0xde, 0xdf, 0xff, 0xa0, 0xbf};
    uint8_t *buf = malloc(2 * size + 64);
    convsel_rng rng = {seed};
    for (long i = 0; i < n && buf; i++) {
        memcpy(buf, data, size);
        size_t len = size;
        int edits = 1 + (int)convsel_rng_below(&rng, 3);
        for (int e = 0; e < edits && len > 0; e++) {
            size_t at = convsel_rng_below(&rng, len);
            switch (convsel_rng_below(&rng, 6)) {
            case 0:
                buf[at] ^= (uint8_t)(1u << convsel_rng_below(&rng, 8));
                break;
            case 1:
                buf[at] = (uint8_t)convsel_rng_next(&rng);
                break;
            case 2:
                buf[at] = markers[convsel_rng_below(&rng, sizeof markers)];
                if (at + 4 < len && convsel_rng_below(&rng, 2))
                    memset(buf + at + 1, 0xff, 4);
                break;
            case 3: { /* delete a range */
                size_t k = 1 + convsel_rng_below(&rng, len - at < 16 ? len - at : 16);
                memmove(buf + at, buf + at + k, len - at - k);
                len -= k;
                break;
            }
            case 4: { /* duplicate a range */
                size_t k = 1 + convsel_rng_below(&rng, len - at < 32 ? len - at : 32);
                if (len + k <= 2 * size + 64) {
                    memmove(buf + at + k, buf + at, len - at);
                    len += k;
                }
                break;
            }
            default: /* insert a random byte */
                if (len + 1 <= 2 * size + 64) {
                    memmove(buf + at + 1, buf + at, len - at);
                    buf[at] = (uint8_t)convsel_rng_next(&rng);
                    len++;
                }
                break;
            }
        }
        LLVMFuzzerTestOneInput(buf, len);
    }
    free(buf);
}

static int self_test(long n)
{
    convsel_dataset *ds;
    if (syn_dataset(99, 2, 8, 8, 0.03, &ds) != CONVSEL_OK)
        return 1;
    convsel_train_params p;
    convsel_train_params_default(&p);
    p.trees = 4;
    p.max_depth = 3;
    p.mode = CONVSEL_MODEL_SINGLE; /* categorical splits in the file too */
    const convsel_dataset *sets[1] = {ds};
    convsel_model *model;
    uint8_t *bytes;
    size_t size;
    if (convsel_model_train(sets, 1, &p, NULL, NULL, &model) != CONVSEL_OK ||
        convsel_model_serialize(model, &bytes, &size) != CONVSEL_OK) {
        fprintf(stderr, "fuzz_model: cannot train the seed model: %s\n", convsel_last_error());
        return 1;
    }
    convsel_model *parsed;
    if (convsel_model_parse(bytes, size, "<seed model>", &parsed) != CONVSEL_OK) {
        fprintf(stderr, "fuzz_model: the seed model does not parse: %s\n", convsel_last_error());
        return 1;
    }
    convsel_model_destroy(parsed);
    mutate_all(bytes, size, n, 1);
    fflush(stderr);
    printf("fuzz_model: %zu-byte model, %zu truncations and %ld mutations\n", size, size, n);
    free(bytes);
    convsel_model_destroy(model);
    convsel_dataset_destroy(ds);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        fprintf(stderr, "usage: %s FILE|DIR... | --mutate N FILE... | --self N\n", argv[0]);
        return 2;
    }
    int failed = 0;
    if (strcmp(argv[1], "--self") == 0 && argc == 3) {
        failed = self_test(atol(argv[2]));
    } else if (strcmp(argv[1], "--mutate") == 0 && argc >= 4) {
        long n = atol(argv[2]);
        for (int i = 3; i < argc; i++) {
            FILE *f = fopen(argv[i], "rb");
            if (!f) {
                perror(argv[i]);
                failed = 1;
                continue;
            }
            static uint8_t data[1 << 22];
            size_t size = fread(data, 1, sizeof data, f);
            fclose(f);
            mutate_all(data, size, n, (uint64_t)i);
        }
    } else {
        for (int i = 1; i < argc; i++)
            failed |= fuzz_for_each_file(argv[i], "fuzz_model", run_file, NULL) != 0;
    }
    if (contract_broken)
        fprintf(stderr, "fuzz_model: %d inputs broke the contract\n", contract_broken);
    return failed || contract_broken ? 1 : 0;
}
#endif
