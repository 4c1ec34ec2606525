/*
 * Plan files are user input (`convsel run --plan`, hand-edited or from
 * another machine): every truncation and a few thousand seeded mutations of a
 * real plan file must either load, or fail with CORRUPT or VERSION_MISMATCH
 * and a message naming the file. A plan that loads must save and load again,
 * and, where its layers are small enough to check quickly, it must either be
 * refused by the runner with a message or be computed right: one pass of
 * convsel_runner_check. (A plan that marked a layer connected whose input was
 * not the previous output's shape used to make the runner read past a
 * buffer.) Run under the sanitizers in CI.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "convsel.h"
#include "network_text.h"

#define MUTATIONS 1500
/* Plans whose layers multiply-accumulate more than this are loaded but not
 * run: a mutated digit can make a layer a thousand times larger. */
#define MAX_CHECKED_MACS 2e7

static uint64_t rng_state = 0x5eed;

static uint64_t rng_next(void)
{
    uint64_t z = (rng_state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static size_t rng_below(size_t n)
{
    return n ? (size_t)(rng_next() % n) : 0;
}

static convsel_status cost_conv(void *ctx, const convsel_problem *p, int threads, size_t prim, double *ms)
{
    (void)ctx;
    (void)threads;
    *ms = 1.0 + (double)((prim * 7 + (size_t)p->oc + (size_t)p->kh * 3) % 5);
    return CONVSEL_OK;
}

static convsel_status cost_reorder(void *ctx, int64_t mb, int64_t c, int64_t h, int64_t w, convsel_layout from,
                                   convsel_layout to, int threads, double *ms)
{
    (void)ctx;
    (void)threads;
    *ms = 0.1 * (double)((mb + c + h + w + (int64_t)from * 3 + (int64_t)to) % 7);
    return CONVSEL_OK;
}

static int write_file(const char *path, const char *data, size_t n)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return 0;
    size_t done = fwrite(data, 1, n, f);
    return fclose(f) == 0 && done == n;
}

static double plan_macs(const convsel_plan *plan)
{
    double macs = 0.0;
    for (size_t i = 0; i < plan->n_layers; i++) {
        const convsel_problem *p = &plan->layers[i].problem;
        macs += (double)p->mb * (double)p->oc * (double)p->oh * (double)p->ow * (double)(p->ic / p->g) *
                (double)p->kh * (double)p->kw;
    }
    return macs;
}

static size_t loaded, refused_by_runner, checked;

/* One candidate file's bytes: the contract above. */
static void try_bytes(const char *path, const char *data, size_t n)
{
    if (!write_file(path, data, n)) {
        CHECK_MSG(0, "cannot write %s", path);
        return;
    }
    convsel_plan *plan = NULL;
    convsel_status st = convsel_plan_load(path, &plan);
    if (st != CONVSEL_OK) {
        CHECK_MSG(st == CONVSEL_CORRUPT || st == CONVSEL_VERSION_MISMATCH, "load: %s (%s)", convsel_status_str(st),
                  convsel_last_error());
        CHECK_MSG(strstr(convsel_last_error(), path) != NULL, "the error does not name the file: %s",
                  convsel_last_error());
        CHECK(plan == NULL);
        return;
    }
    loaded++;
    char again[64];
    snprintf(again, sizeof again, "%s.again", path);
    convsel_plan *back = NULL;
    CHECK_MSG(convsel_plan_save(plan, again) == CONVSEL_OK && convsel_plan_load(again, &back) == CONVSEL_OK,
              "a loaded plan does not save and load again: %s", convsel_last_error());
    if (back)
        CHECK_EQ(back->n_layers, plan->n_layers);
    convsel_plan_destroy(back);
    unlink(again);
    if (plan_macs(plan) <= MAX_CHECKED_MACS && plan->threads <= 4) {
        convsel_runner *runner = NULL;
        st = convsel_runner_create(plan, 1, &runner);
        if (st != CONVSEL_OK) {
            CHECK_MSG(convsel_last_error()[0] != '\0', "the runner refused a plan without saying why (%s)",
                      convsel_status_str(st));
            refused_by_runner++;
        } else {
            st = convsel_runner_check(runner, NULL);
            CHECK_MSG(st == CONVSEL_OK, "a plan the runner accepted computes wrong: %s", convsel_last_error());
            checked++;
        }
        convsel_runner_destroy(runner);
    }
    convsel_plan_destroy(plan);
}

static const char *const words[] = {"true", "false", "nchw", "nhwc", "nChw8c", "nChw16c", "\"", "{", "}",
                                    "[", "]", ",", ":", "-1", "0", "1e308", "direct_simd", "onednn_auto"};

/* Text-aware edits: digits, booleans and layout names swapped for others,
 * ranges deleted or duplicated, bytes and JSON tokens inserted. */
static size_t mutate(const char *src, size_t n, char *buf, size_t cap)
{
    memcpy(buf, src, n);
    size_t len = n;
    int edits = 1 + (int)rng_below(3);
    for (int e = 0; e < edits && len > 0; e++) {
        size_t at = rng_below(len);
        switch (rng_below(6)) {
        case 0: /* a digit for another (sizes, strides, version, mb, threads) */
            for (size_t k = 0; k < len; k++) {
                size_t j = (at + k) % len;
                if (buf[j] >= '0' && buf[j] <= '9') {
                    buf[j] = (char)('0' + rng_below(10));
                    break;
                }
            }
            break;
        case 1: { /* a word or token in place of the text at `at` */
            const char *w = words[rng_below(sizeof words / sizeof words[0])];
            size_t wl = strlen(w), drop = rng_below(8);
            if (drop > len - at)
                drop = len - at;
            if (len - drop + wl < cap) {
                memmove(buf + at + wl, buf + at + drop, len - at - drop);
                memcpy(buf + at, w, wl);
                len = len - drop + wl;
            }
            break;
        }
        case 2: { /* delete a range */
            size_t k = 1 + rng_below(len - at < 24 ? len - at : 24);
            memmove(buf + at, buf + at + k, len - at - k);
            len -= k;
            break;
        }
        case 3: { /* duplicate a range (a layer twice, a key twice) */
            size_t k = 1 + rng_below(len - at < 400 ? len - at : 400);
            if (len + k < cap) {
                memmove(buf + at + k, buf + at, len - at);
                len += k;
            }
            break;
        }
        case 4: /* a random byte, NUL and control characters included */
            buf[at] = (char)rng_next();
            break;
        default: { /* connected: flip the first boolean after `at` */
            char *t = NULL;
            for (size_t k = at; k + 5 <= len && !t; k++)
                if (!memcmp(buf + k, "true", 4) || !memcmp(buf + k, "false", 5))
                    t = buf + k;
            if (t && *t == 't' && len + 1 < cap) {
                memmove(t + 5, t + 4, (size_t)(buf + len - (t + 4)));
                memcpy(t, "false", 5);
                len++;
            } else if (t) {
                memmove(t + 4, t + 5, (size_t)(buf + len - (t + 5)));
                memcpy(t, "true", 4);
                len--;
            }
            break;
        }
        }
    }
    return len;
}

int main(void)
{
    /* A real plan: connected layers, a broken connection, padded blocks, a
     * repeat, layouts of several kinds. */
    const char *net_text = "mb1ic3ih12oc24oh12kh3ph1n\"a\"\nmb1ic24ih12oc24oh12kh1ph0n\"b*2\"\n"
                           "mb1ic16ih8oc16oh4kh3sh2ph1n\"c\"\nmb1ic16ih4oc8oh4kh3ph1n\"d\"\n";
    char path[] = "/tmp/convsel_test_plan_mut_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return CHECK_DONE();
    close(fd);
    convsel_network *net = network_from_text(net_text);
    CHECK(net != NULL);
    convsel_cost_source src = {cost_conv, cost_reorder, NULL, "mutations", NULL, CONVSEL_STAT_MEDIAN, NULL};
    convsel_select_options o = {1, 0.0, NULL, 0, 0};
    convsel_plan *plan = NULL;
    if (net)
        CHECK_EQ(convsel_select(net, &o, &src, &plan), CONVSEL_OK);
    convsel_network_destroy(net);
    if (!plan) {
        unlink(path);
        return CHECK_DONE();
    }
    CHECK_EQ(convsel_plan_save(plan, path), CONVSEL_OK);
    convsel_plan_destroy(plan);
    FILE *f = fopen(path, "rb");
    static char original[1 << 16], buf[1 << 17];
    size_t n = f ? fread(original, 1, sizeof original, f) : 0;
    if (f)
        fclose(f);
    CHECK(n > 100 && n < sizeof original);

    /* The plan itself loads and computes right. */
    try_bytes(path, original, n);
    CHECK_EQ(checked, 1u);
    /* Layer 4 ('c', 16 channels of 8x8 after 24 of 12x12) marked connected:
     * refused, naming the layer. */
    char *c = strstr(original, "_n\\\"c\\\"");
    char *mark = c ? strstr(c, "\"connected\": false") : NULL;
    CHECK(mark != NULL);
    if (mark) {
        size_t at = (size_t)(mark - original) + strlen("\"connected\": ");
        memcpy(buf, original, at);
        memcpy(buf + at, "true", 4);
        memcpy(buf + at + 4, original + at + 5, n - at - 5);
        convsel_plan *wrong = NULL;
        CHECK(write_file(path, buf, n - 1));
        CHECK_EQ(convsel_plan_load(path, &wrong), CONVSEL_CORRUPT);
        CHECK(strstr(convsel_last_error(), "layer 4 is marked connected") != NULL);
        convsel_plan_destroy(wrong);
    }
    /* Layer 4 (stride 2) given our Winograd, which computes stride 1 only: the
     * file loads (a plan names primitives, it does not know their rules) and
     * the runner refuses it, saying why. The random mutations below may or may
     * not reach this outcome: where they fall depends on the file's bytes,
     * which hold this CPU's description. */
    char *prim = c ? strstr(c, "\"primitive\": \"im2col_gemm\"") : NULL;
    CHECK(prim != NULL);
    if (prim) {
        const char *from = "im2col_gemm", *to = "winograd_4x4_3x3";
        size_t at = (size_t)(prim - original) + strlen("\"primitive\": \""), fl = strlen(from), tl = strlen(to);
        memcpy(buf, original, at);
        memcpy(buf + at, to, tl);
        memcpy(buf + at + tl, original + at + fl, n - at - fl);
        const size_t before = refused_by_runner;
        try_bytes(path, buf, n - fl + tl);
        CHECK_EQ(refused_by_runner, before + 1);
    }
    for (size_t cut = 0; cut < n; cut++)
        try_bytes(path, original, cut);
    for (int i = 0; i < MUTATIONS; i++) {
        size_t len = mutate(original, n, buf, sizeof buf);
        try_bytes(path, buf, len);
    }
    /* The mutations reached plans that load and run, not only load errors. */
    CHECK(checked > 10);
    printf("%zu truncations and %d mutations: %zu loaded, %zu checked by a run, %zu refused by the runner\n", n,
           MUTATIONS, loaded, checked, refused_by_runner);
    unlink(path);
    return CHECK_DONE();
}
