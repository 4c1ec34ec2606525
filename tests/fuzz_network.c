/*
 * Fuzz target for network files and descriptors (`--net FILE`, a DESC
 * argument): any bytes must load into a network whose every layer is valid
 * and formats to a descriptor that parses back to the same layer, or fail
 * with PARSE_ERROR, UNSUPPORTED, INVALID_ARGUMENT or TOO_LARGE and a message
 * naming the file; never crash, hang or read out of bounds. With a batch
 * override every layer takes it. The same bytes as one descriptor must parse
 * and round-trip, or fail with one of those statuses.
 *
 * With -DCONVSEL_FUZZ=ON (clang) this is a libFuzzer binary (fuzz_network).
 * Built with CONVSEL_FUZZ_STANDALONE it is a replay tool the test suite runs:
 *   fuzz_network_replay [--mutate N] [--if-present] FILE|DIR...
 * runs each file, then N seeded mutations of it (edits that a hand-edited or
 * generated network file could carry: digits, keys, repeats, quotes,
 * newlines, comments), and exits non-zero when an input breaks the contract;
 * --if-present skips the path after it where it does not exist (the shared
 * corpus of real networks, ../shared/networks, beside the source tree).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "convsel.h"

#ifdef CONVSEL_FUZZ_STANDALONE
static int contract_broken;
#endif
/* Network loads that succeeded and failed: a replay where either is 0
 * exercised only one side of the contract. */
static long loads_ok, loads_failed;
static char input_path[256];

static void broken(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz_network: %s%s%s\n", what, detail ? ": " : "", detail ? detail : "");
#ifdef CONVSEL_FUZZ_STANDALONE
    contract_broken++;
#else
    abort();
#endif
}

static int expected_failure(convsel_status st)
{
    return st == CONVSEL_PARSE_ERROR || st == CONVSEL_UNSUPPORTED || st == CONVSEL_INVALID_ARGUMENT ||
           st == CONVSEL_TOO_LARGE;
}

static int same_problem(const convsel_problem *a, const convsel_problem *b)
{
    return a->g == b->g && a->mb == b->mb && a->ic == b->ic && a->ih == b->ih && a->iw == b->iw &&
           a->oc == b->oc && a->oh == b->oh && a->ow == b->ow && a->kh == b->kh && a->kw == b->kw &&
           a->sh == b->sh && a->sw == b->sw && a->ph == b->ph && a->pw == b->pw && a->dh == b->dh &&
           a->dw == b->dw && a->repeat == b->repeat && strcmp(a->name, b->name) == 0;
}

/* A loaded layer is valid, and its canonical descriptor gives it back. */
static void check_layer(const convsel_problem *p, int64_t mb)
{
    if (convsel_problem_validate(p) != CONVSEL_OK)
        broken("a loaded layer is invalid", convsel_last_error());
    if (mb > 0 && p->mb != mb)
        broken("a layer did not take the batch override", p->name);
    if (p->repeat < 1)
        broken("a layer repeats less than once", p->name);
    char desc[512];
    int len = convsel_problem_format(p, desc, sizeof desc);
    if (len < 0 || (size_t)len >= sizeof desc) {
        broken("a layer's descriptor does not fit 512 bytes", p->name);
        return;
    }
    convsel_problem back;
    if (convsel_problem_parse(desc, &back) != CONVSEL_OK)
        broken("a layer's descriptor does not parse", desc);
    else if (!same_problem(p, &back))
        broken("a layer's descriptor parses to another layer", desc);
}

static void check_file(int64_t mb, int supported_only)
{
    convsel_network *net = NULL;
    size_t skipped = 0;
    convsel_status st = supported_only ? convsel_network_load_supported(input_path, mb, &net, &skipped)
                                       : convsel_network_load(input_path, mb, &net);
    if (st != CONVSEL_OK) {
        loads_failed++;
        if (net)
            broken("a failed load returned a network", NULL);
        if (!expected_failure(st))
            broken("unexpected status", convsel_status_str(st));
        if (!strstr(convsel_last_error(), input_path))
            broken("the error does not name the file", convsel_last_error());
        return;
    }
    loads_ok++;
    for (size_t i = 0; i < convsel_network_size(net); i++)
        check_layer(convsel_network_layer(net, i), mb);
    convsel_network_destroy(net);
}

static void check_descriptor(const uint8_t *data, size_t size)
{
    char *desc = malloc(size + 1);
    if (!desc)
        return;
    memcpy(desc, data, size);
    desc[size] = '\0';
    convsel_problem p;
    convsel_status st = convsel_problem_parse(desc, &p);
    if (st == CONVSEL_OK)
        check_layer(&p, 0);
    else if (!expected_failure(st))
        broken("unexpected status for a descriptor", convsel_status_str(st));
    free(desc);
}

static void remove_input(void)
{
    unlink(input_path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!input_path[0]) {
        snprintf(input_path, sizeof input_path, "%s/fuzz_network_%ld.txt",
                 getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (long)getpid());
        atexit(remove_input);
    }
    FILE *f = fopen(input_path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0) {
        fprintf(stderr, "fuzz_network: cannot write %s\n", input_path);
        exit(2);
    }
    check_file(0, 0);
    check_file(3, 0);
    check_file(0, 1);
    check_descriptor(data, size);
    return 0;
}

#ifdef CONVSEL_FUZZ_STANDALONE
#include "fuzz_replay.h"

/* Text a network file's edits insert: keys, digit runs, the extremes of
 * int64, repeats, quotes, separators. */
static const char *const tokens[] = {
    "mb", "g", "ic", "ih", "iw", "id", "oc", "oh", "ow", "od", "kh", "kw", "kd", "sh", "sw", "ph", "pw", "dh",
    "dw", "n\"", "\"", "*", "*0", "*-1", "*99999999999", "#", "\n", "\r\n", " ", "\t", "0", "1", "-1", "7",
    "9223372036854775807", "9223372036854775808", "-9223372036854775808", "4294967297", "_", "x", "\\",
};

static uint64_t next_random(uint64_t *state)
{
    *state = *state * 6364136223846793005ull + 1442695040888963407ull;
    return *state >> 16;
}

/* One to four edits of text (size bytes) into out (capacity cap): a byte
 * flipped, a token inserted or put in place of a byte, a byte or a line
 * deleted, a cut. Returns the new length. */
static size_t mutate(const char *text, size_t size, char *out, size_t cap, uint64_t *state)
{
    size_t len = size < cap ? size : cap;
    memcpy(out, text, len);
    int edits = 1 + (int)(next_random(state) % 4);
    for (int e = 0; e < edits; e++) {
        uint64_t r = next_random(state);
        size_t off = len ? (size_t)(r % len) : 0;
        const char *tok = tokens[(r >> 20) % (sizeof tokens / sizeof tokens[0])];
        size_t tl = strlen(tok);
        switch ((r >> 40) % 6) {
        case 0:
            if (len)
                out[off] ^= (char)(1u << ((r >> 8) & 7));
            break;
        case 1: /* insert a token */
            if (len + tl <= cap) {
                memmove(out + off + tl, out + off, len - off);
                memcpy(out + off, tok, tl);
                len += tl;
            }
            break;
        case 2: /* a token in place of a byte */
            if (len && len - 1 + tl <= cap) {
                memmove(out + off + tl, out + off + 1, len - off - 1);
                memcpy(out + off, tok, tl);
                len += tl - 1;
            }
            break;
        case 3:
            if (len) {
                memmove(out + off, out + off + 1, len - off - 1);
                len--;
            }
            break;
        case 4: { /* delete the rest of a line */
            size_t end = off;
            while (end < len && out[end] != '\n')
                end++;
            memmove(out + off, out + end, len - end);
            len -= end - off;
            break;
        }
        default:
            len = off;
            break;
        }
    }
    return len;
}

/* Runs one file, then the mutations (*(long *)ctx of them). */
static int run_file(const char *path, void *ctx)
{
    const long mutations = *(const long *)ctx;
    size_t size = 0;
    char *text = (char *)fuzz_read_file(path, &size);
    if (!text) {
        fprintf(stderr, "fuzz_network: cannot read %s\n", path);
        return 1;
    }
    LLVMFuzzerTestOneInput((const uint8_t *)text, size);
    size_t cap = size + 256;
    char *buf = malloc(cap);
    uint64_t state = 0x6e6574ull ^ size;
    for (long k = 0; k < mutations && buf; k++) {
        size_t len = mutate(text, size, buf, cap, &state);
        /* An exactly sized copy, so that AddressSanitizer catches overreads. */
        uint8_t *exact = malloc(len ? len : 1);
        if (!exact)
            break;
        memcpy(exact, buf, len);
        LLVMFuzzerTestOneInput(exact, len);
        free(exact);
    }
    free(buf);
    free(text);
    return 0;
}

int main(int argc, char **argv)
{
    long mutations = 0;
    int rc = 0, ran = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--mutate") == 0 && i + 1 < argc) {
            mutations = strtol(argv[++i], NULL, 10);
            continue;
        }
        if (strcmp(argv[i], "--if-present") == 0 && i + 1 < argc) {
            struct stat sb;
            if (stat(argv[++i], &sb) != 0) {
                printf("fuzz_network: %s not present, skipped\n", argv[i]);
                continue;
            }
        }
        rc |= fuzz_for_each_file(argv[i], "fuzz_network", run_file, &mutations);
        ran = 1;
    }
    if (!ran) {
        fprintf(stderr, "usage: fuzz_network_replay [--mutate N] [--if-present] FILE|DIR...\n");
        return 2;
    }
    printf("fuzz_network: %ld loads succeeded, %ld failed\n", loads_ok, loads_failed);
    if (!loads_ok || !loads_failed) {
        fprintf(stderr, "fuzz_network: the inputs exercised only one side of the contract\n");
        rc = 1;
    }
    if (contract_broken)
        fprintf(stderr, "fuzz_network: %d contract violations\n", contract_broken);
    else
        printf("fuzz_network: no contract violations\n");
    return rc || contract_broken ? 1 : 0;
}

#endif
