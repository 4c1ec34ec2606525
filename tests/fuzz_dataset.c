/*
 * Fuzz target for dataset files: any bytes must load into a dataset whose
 * every record passes the record checks, or fail with CORRUPT /
 * VERSION_MISMATCH and a message naming the file, never crash, hang or
 * allocate what a count in the file asks for. A dataset that loads must
 * survive a save/load round trip unchanged.
 *
 * With -DCONVSEL_FUZZ=ON (clang) this is a libFuzzer binary (fuzz_dataset).
 * Built with CONVSEL_FUZZ_STANDALONE it is a replay tool the test suite runs:
 *   fuzz_dataset_replay FILE|DIR...         runs each file (a corpus, crashes)
 *   fuzz_dataset_replay --mutate N FILE...  runs N seeded mutations of each file
 *   fuzz_dataset_replay --self N            writes a small dataset and mutates it
 * and exits non-zero when an input breaks the contract.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convsel.h"

#ifdef CONVSEL_FUZZ_STANDALONE
static int contract_broken;
#endif
static char scratch_path[256];

static void broken(const char *what)
{
    fprintf(stderr, "fuzz_dataset: %s\n", what);
#ifdef CONVSEL_FUZZ_STANDALONE
    contract_broken++;
#else
    abort();
#endif
}

static int same_record(const convsel_record *a, const convsel_record *b)
{
    char ka[512], kb[512];
    convsel_problem_format(&a->problem, ka, sizeof ka);
    convsel_problem_format(&b->problem, kb, sizeof kb);
    return strcmp(ka, kb) == 0 && a->kind == b->kind && a->tensor == b->tensor &&
           strcmp(a->primitive, b->primitive) == 0 && a->from == b->from && a->to == b->to &&
           a->threads == b->threads && a->isa == b->isa && a->fingerprint == b->fingerprint &&
           a->min_ms == b->min_ms && a->p10_ms == b->p10_ms && a->median_ms == b->median_ms &&
           a->p90_ms == b->p90_ms && a->runs == b->runs && a->create_ms == b->create_ms;
}

static void check_loaded(const convsel_dataset *ds)
{
    const size_t n_fps = convsel_dataset_fingerprint_count(ds);
    for (size_t i = 0; i < convsel_dataset_size(ds); i++) {
        const convsel_record *r = convsel_dataset_record(ds, i);
        if (r->fingerprint >= n_fps)
            broken("a record's fingerprint index is out of range");
        if (convsel_problem_validate(&r->problem) != CONVSEL_OK)
            broken("a record's problem is invalid");
        if (!isfinite(r->median_ms) || r->median_ms < 0.0 || r->threads < 1)
            broken("a record's time or thread count is out of range");
        if ((int)r->from < 0 || r->from >= CONVSEL_LAYOUT_COUNT || (int)r->isa < 0 || r->isa >= CONVSEL_ISA_COUNT)
            broken("a record's layout or ISA is out of range");
    }
    /* Round trip: what loaded saves and loads back the same. Saving fsyncs,
     * so only the first few loaded inputs of a replay make one. */
    static int round_trips;
    if (!scratch_path[0] || round_trips++ >= 64)
        return;
    convsel_dataset *back = NULL;
    if (convsel_dataset_save(ds, scratch_path) != CONVSEL_OK) {
        broken(convsel_last_error());
        return;
    }
    if (convsel_dataset_load(scratch_path, &back) != CONVSEL_OK) {
        broken(convsel_last_error());
        return;
    }
    if (convsel_dataset_size(back) != convsel_dataset_size(ds) ||
        convsel_dataset_fingerprint_count(back) != convsel_dataset_fingerprint_count(ds))
        broken("the round trip changed the counts");
    for (size_t i = 0; i < convsel_dataset_size(ds) && i < convsel_dataset_size(back); i++)
        if (!same_record(convsel_dataset_record(ds, i), convsel_dataset_record(back, i)))
            broken("the round trip changed a record");
    convsel_dataset_destroy(back);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    convsel_dataset *ds = NULL;
    convsel_status st = convsel_dataset_load_buffer(data, size, "<fuzz input>", &ds);
    if (st != CONVSEL_OK) {
        if (ds)
            broken("a failed load returned a dataset");
        if (st != CONVSEL_CORRUPT && st != CONVSEL_VERSION_MISMATCH)
            broken(convsel_status_str(st));
        if (!strstr(convsel_last_error(), "<fuzz input>"))
            broken("the error does not name the file");
        return 0;
    }
    check_loaded(ds);
    convsel_dataset_destroy(ds);
    return 0;
}

#ifdef CONVSEL_FUZZ_STANDALONE

#include "fuzz_replay.h"

/* Runs input once as is, then n seeded mutations of it: flipped, inserted
 * and deleted bytes, cuts, and "interesting" bytes (msgpack headers that
 * claim huge lengths) at random offsets. */
static void run_mutations(const unsigned char *data, size_t size, long n, uint64_t seed)
{
    static const unsigned char interesting[] = {0x00, 0xff, 0x7f, 0x80, 0xc0, 0xc1, 0xcb, 0xd3,
                                                 0xdb, 0xdd, 0xdf, 0x91, 0xa0, 0xca, 0xcf, 0xe0};
    uint64_t state = seed;
    unsigned char *buf = malloc(size + 16);
    LLVMFuzzerTestOneInput(data, size);
    for (long k = 0; k < n && buf; k++) {
        memcpy(buf, data, size);
        size_t len = size;
        int edits = 1 + (int)(k % 4);
        for (int e = 0; e < edits && len > 0; e++) {
            state = state * 6364136223846793005ull + 1442695040888963407ull;
            uint64_t r = state >> 16;
            size_t off = (size_t)(r % len);
            switch ((r >> 40) % 5) {
            case 0: buf[off] ^= (unsigned char)(1u << ((r >> 8) & 7)); break;
            case 1: buf[off] = interesting[(r >> 12) % sizeof interesting]; break;
            case 2: len = off; break;
            case 3:
                if (len < size + 16) {
                    memmove(buf + off + 1, buf + off, len - off);
                    buf[off] = (unsigned char)(r >> 20);
                    len++;
                }
                break;
            default:
                memmove(buf + off, buf + off + 1, len - off - 1);
                len--;
                break;
            }
        }
        /* An exactly sized copy, so that AddressSanitizer catches overreads. */
        unsigned char *exact = malloc(len ? len : 1);
        memcpy(exact, buf, len);
        LLVMFuzzerTestOneInput(exact, len);
        free(exact);
    }
    free(buf);
}

/* Runs one file and *(long *)ctx seeded mutations of it. */
static int run_file(const char *path, void *ctx)
{
    size_t size;
    unsigned char *data = fuzz_read_file(path, &size);
    if (!data) {
        fprintf(stderr, "fuzz_dataset: cannot read %s\n", path);
        return 1;
    }
    run_mutations(data, size, *(const long *)ctx, 0x6675ull ^ size);
    free(data);
    return 0;
}

/* A small dataset of every record kind, written by the real writer. */
static int self_test(long mutations)
{
    char path[300];
    snprintf(path, sizeof path, "%s.self", scratch_path);
    convsel_fingerprint fp;
    convsel_dataset_writer *w;
    if (convsel_fingerprint_get(&fp) != CONVSEL_OK ||
        convsel_dataset_writer_open(path, &fp, CONVSEL_WRITE_TRUNCATE, &w) != CONVSEL_OK) {
        fprintf(stderr, "fuzz_dataset: %s\n", convsel_last_error());
        return 1;
    }
    const char *descs[] = {"mb1ic64ih56oc64oh56kh3ph1n\"resnet:a\"", "g32mb2ic32ih28oc32oh28kh3ph1",
                           "mb3ic13ih17iw9oc29oh17ow9kh1kw7ph0pw3n\"x~p1\""};
    for (int i = 0; i < 6; i++) {
        convsel_record r;
        memset(&r, 0, sizeof r);
        if (convsel_problem_parse(descs[i % 3], &r.problem) != CONVSEL_OK)
            return 1;
        r.kind = i < 3 ? CONVSEL_RECORD_CONV : CONVSEL_RECORD_REORDER;
        r.tensor = i == 5 ? CONVSEL_TENSOR_DST : CONVSEL_TENSOR_SRC;
        snprintf(r.primitive, sizeof r.primitive, i < 3 ? "prim_%d" : "reorder", i);
        r.from = (convsel_layout)(i % CONVSEL_LAYOUT_COUNT);
        r.to = (convsel_layout)((i + 1) % CONVSEL_LAYOUT_COUNT);
        r.threads = 1 + i % 2;
        r.isa = convsel_get_isa();
        r.min_ms = 0.5 + i;
        r.p10_ms = r.min_ms * 1.01;
        r.median_ms = r.min_ms * 1.02;
        r.p90_ms = r.min_ms * 1.3;
        r.runs = 20 + i;
        r.create_ms = 1.5;
        if (convsel_dataset_writer_append(w, &r) != CONVSEL_OK)
            return 1;
    }
    convsel_dataset_writer_close(w);
    size_t size;
    unsigned char *data = fuzz_read_file(path, &size);
    unlink(path);
    if (!data)
        return 1;
    /* Every cut first, then the mutations. */
    for (size_t len = 0; len <= size; len++) {
        unsigned char *exact = malloc(len ? len : 1);
        memcpy(exact, data, len);
        LLVMFuzzerTestOneInput(exact, len);
        free(exact);
    }
    run_mutations(data, size, mutations, 12345);
    free(data);
    return 0;
}

int main(int argc, char **argv)
{
    long mutations = 0;
    int rc = 0, ran = 0;
    snprintf(scratch_path, sizeof scratch_path, "%s/fuzz_dataset_%ld.msgpack",
             getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
    for (int i = 1; i < argc; i++) {
        if ((strcmp(argv[i], "--mutate") == 0 || strcmp(argv[i], "--self") == 0) && i + 1 < argc) {
            mutations = strtol(argv[i + 1], NULL, 10);
            if (strcmp(argv[i], "--self") == 0) {
                rc |= self_test(mutations);
                ran = 1;
            }
            i++;
            continue;
        }
        rc |= fuzz_for_each_file(argv[i], "fuzz_dataset", run_file, &mutations);
        ran = 1;
    }
    unlink(scratch_path);
    if (!ran) {
        fprintf(stderr, "usage: fuzz_dataset_replay [--mutate N] FILE|DIR... | --self N\n");
        return 2;
    }
    if (contract_broken)
        fprintf(stderr, "fuzz_dataset: %d contract violations\n", contract_broken);
    else
        printf("fuzz_dataset: no contract violations\n");
    return rc || contract_broken ? 1 : 0;
}

#endif
