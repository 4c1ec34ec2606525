/*
 * Problem descriptors and network files: hand-checked deductions, every
 * error a user can make (status and the detail naming the problem), and the
 * network loader's line numbers, comments and --mb override.
 *
 * The round trip over the real networks in ../shared/networks is in
 * test_problem_corpus.c, which is skipped where that corpus is absent.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "convsel.h"

static int same_problem(const convsel_problem *a, const convsel_problem *b)
{
    return a->g == b->g && a->mb == b->mb && a->ic == b->ic && a->ih == b->ih && a->iw == b->iw &&
           a->oc == b->oc && a->oh == b->oh && a->ow == b->ow && a->kh == b->kh && a->kw == b->kw &&
           a->sh == b->sh && a->sw == b->sw && a->ph == b->ph && a->pw == b->pw && a->dh == b->dh &&
           a->dw == b->dw && a->repeat == b->repeat && strcmp(a->name, b->name) == 0;
}

/* Parses desc, which must succeed, and checks that format -> parse gives the
 * same problem back. */
static int parse_ok(const char *desc, convsel_problem *p)
{
    memset(p, 0xa5, sizeof *p);
    convsel_status st = convsel_problem_parse(desc, p);
    CHECK_MSG(st == CONVSEL_OK, "'%s': %s: %s", desc, convsel_status_str(st), convsel_last_error());
    if (st != CONVSEL_OK)
        return 0;
    char buf[512];
    int n = convsel_problem_format(p, buf, sizeof buf);
    CHECK(n > 0 && (size_t)n < sizeof buf);
    convsel_problem q;
    st = convsel_problem_parse(buf, &q);
    CHECK_MSG(st == CONVSEL_OK && same_problem(p, &q), "'%s' formats as '%s', which does not parse back: %s",
              desc, buf, convsel_last_error());
    return 1;
}

/* desc must fail with status, and the detail must contain every one of the
 * NULL-terminated words. */
static void parse_fails(const char *desc, convsel_status status, const char *word, ...)
{
    convsel_problem p;
    convsel_status st = convsel_problem_parse(desc, &p);
    CHECK_MSG(st == status, "'%s': got %s (%s), expected %s", desc, convsel_status_str(st), convsel_last_error(),
              convsel_status_str(status));
    const char *msg = convsel_last_error();
    CHECK_MSG(msg && *msg, "'%s': no error detail", desc);
    va_list ap;
    va_start(ap, word);
    for (const char *w = word; w; w = va_arg(ap, const char *))
        CHECK_MSG(strstr(msg, w) != NULL, "'%s': detail \"%s\" does not mention '%s'", desc, msg, w);
    va_end(ap);
}

static void test_defaults(void)
{
    convsel_problem p;
    if (!parse_ok("ic16ih10oc32kh3", &p))
        return;
    CHECK_EQ(p.g, 1);
    CHECK_EQ(p.mb, 2);
    CHECK_EQ(p.ic, 16);
    CHECK_EQ(p.oc, 32);
    CHECK_EQ(p.ih, 10);
    CHECK_EQ(p.iw, 10);
    CHECK_EQ(p.kh, 3);
    CHECK_EQ(p.kw, 3);
    CHECK_EQ(p.sh, 1);
    CHECK_EQ(p.sw, 1);
    CHECK_EQ(p.ph, 0);
    CHECK_EQ(p.pw, 0);
    CHECK_EQ(p.dh, 0);
    CHECK_EQ(p.dw, 0);
    CHECK_EQ(p.oh, 8);
    CHECK_EQ(p.ow, 8);
    CHECK_EQ(p.repeat, 1);
    CHECK_STR(p.name, "");
    CHECK_EQ(convsel_problem_pad_bottom(&p), 0);
    CHECK_EQ(convsel_problem_pad_right(&p), 0);

    /* No kernel given: 1x1. */
    if (parse_ok("mb1ic8ih7oc4", &p)) {
        CHECK_EQ(p.kh, 1);
        CHECK_EQ(p.kw, 1);
        CHECK_EQ(p.oh, 7);
        CHECK_EQ(p.ow, 7);
    }
    /* Stride, padding and dilation given for h only are copied to w. */
    if (parse_ok("mb1ic4ih20oc4kh3sh2ph2dh1", &p)) {
        CHECK_EQ(p.sw, 2);
        CHECK_EQ(p.pw, 2);
        CHECK_EQ(p.dw, 1);
        CHECK_EQ(p.kw, 3);
        /* extent (3-1)*2+1 = 5: (20 - 5 + 4) / 2 + 1 = 10 */
        CHECK_EQ(p.oh, 10);
        CHECK_EQ(p.ow, 10);
    }
    /* A width of its own stays its own. */
    if (parse_ok("mb1ic4ih20iw30oc4kh3kw1", &p)) {
        CHECK_EQ(p.iw, 30);
        CHECK_EQ(p.kw, 1);
        CHECK_EQ(p.oh, 18);
        CHECK_EQ(p.ow, 30);
    }
}

static void test_deductions(void)
{
    convsel_problem p;

    /* ResNet's conv1: the output follows from the padding. */
    if (parse_ok("mb1ic3ih224oc64kh7sh2ph3", &p)) {
        CHECK_EQ(p.oh, 112);
        CHECK_EQ(p.ow, 112);
        CHECK_EQ(p.iw, 224);
        CHECK_EQ(convsel_problem_pad_bottom(&p), 2);
        CHECK_NEAR(convsel_problem_flops(&p), 2.0 * 64 * 112 * 112 * 3 * 49, 0.5);
        CHECK_EQ(convsel_problem_src_elems(&p), 3 * 224 * 224);
        CHECK_EQ(convsel_problem_weights_elems(&p), 64 * 3 * 7 * 7);
        CHECK_EQ(convsel_problem_dst_elems(&p), 64 * 112 * 112);
    }

    /* The padding follows from a given output: "same" 3x3 needs 1. */
    if (parse_ok("mb1ic64ih56oc64oh56kh3", &p)) {
        CHECK_EQ(p.ph, 1);
        CHECK_EQ(p.pw, 1);
        CHECK_EQ(convsel_problem_pad_bottom(&p), 1);
    }
    /* benchdnn's symmetric rule rounds down: ((112-1)*2 - 224 + 7) / 2 = 2,
     * and the remaining 3 rows go to the bottom. */
    if (parse_ok("mb1ic3ih224oc64oh112kh7sh2", &p)) {
        CHECK_EQ(p.ph, 2);
        CHECK_EQ(convsel_problem_pad_bottom(&p), 3);
    }
    /* A given output that needs no padding deduces none. */
    if (parse_ok("mb1ic3ih10oc3oh8kh3", &p))
        CHECK_EQ(p.ph, 0);

    /* ResNet's strided 1x1: the last input row is never read. */
    if (parse_ok("mb1ic256ih56oc512oh28kh1sh2ph0", &p)) {
        CHECK_EQ(p.oh, 28);
        CHECK_EQ(convsel_problem_pad_bottom(&p), -1);
        CHECK_EQ(convsel_problem_pad_right(&p), -1);
    }
    /* The same with the output deduced. */
    if (parse_ok("mb1ic256ih56oc512kh1sh2", &p)) {
        CHECK_EQ(p.oh, 28);
        CHECK_EQ(convsel_problem_pad_bottom(&p), -1);
    }

    /* The "gemm" case of benchdnn's tests: an output larger than the input,
     * bottom padding 7 + 3 - 5 - 3 = 2. */
    if (parse_ok("mb1ic16ih5oc16oh8kh3ph3", &p)) {
        CHECK_EQ(p.oh, 8);
        CHECK_EQ(p.ow, 8);
        CHECK_EQ(p.ph, 3);
        CHECK_EQ(convsel_problem_pad_bottom(&p), 2);
        CHECK_EQ(convsel_problem_pad_right(&p), 2);
    }

    /* Only the output given: the input follows. */
    if (parse_ok("mb1ic8oc8oh14kh3ph1", &p)) {
        CHECK_EQ(p.ih, 14);
        CHECK_EQ(p.iw, 14);
    }

    /* Depthwise. */
    if (parse_ok("g32mb1ic32ih112oc32kh3ph1", &p)) {
        CHECK_EQ(p.g, 32);
        CHECK_EQ(p.oh, 112);
        CHECK_EQ(convsel_problem_weights_elems(&p), 32 * 9);
        CHECK_NEAR(convsel_problem_flops(&p), 2.0 * 32 * 112 * 112 * 9, 0.5);
    }
}

static void test_names_and_separators(void)
{
    convsel_problem p, q;

    if (parse_ok("mb1ic64ih56oc64oh56kh3ph1n\"resnet_50:res2a_branch2b*3\"", &p)) {
        CHECK_EQ(p.repeat, 3);
        CHECK_STR(p.name, "resnet_50:res2a_branch2b");
    }
    if (parse_ok("mb1ic64ih56oc64kh3ph1n\"plain\"", &p)) {
        CHECK_EQ(p.repeat, 1);
        CHECK_STR(p.name, "plain");
    }
    /* '_' separates groups and is otherwise ignored. */
    if (parse_ok("mb1_ic64ih56_oc64oh56_kh3_ph1_", &p) && parse_ok("mb1ic64ih56oc64oh56kh3ph1", &q))
        CHECK(same_problem(&p, &q));
    if (parse_ok("ic256oc512_ih56oh28kh1sh2dh0ph0_iw56ow56kw1sw1dw0pw0_n\"strided:1\"", &p)) {
        CHECK_EQ(p.oh, 28);
        CHECK_EQ(p.ow, 56);
        CHECK_EQ(p.sw, 1);
        CHECK_STR(p.name, "strided:1");
    }
    /* Keys in any order. */
    if (parse_ok("kh3oc64ph1ih56ic64mb1", &q) && parse_ok("mb1ic64ih56oc64kh3ph1", &p))
        CHECK(same_problem(&p, &q));

    /* Unquoted names, as they reach benchdnn through a shell. */
    if (parse_ok("mb1ic3ih8oc3kh3nconv_a", &p)) {
        CHECK_STR(p.name, "conv_a");
        CHECK_EQ(p.repeat, 1);
    }
    if (parse_ok("mb1ic3ih8oc3kh3n:x*4", &p)) {
        CHECK_STR(p.name, ":x");
        CHECK_EQ(p.repeat, 4);
    }
    if (parse_ok("mb1ic3ih8oc3kh3nresnet_50:conv1*2", &p)) {
        CHECK_STR(p.name, "resnet_50:conv1");
        CHECK_EQ(p.repeat, 2);
    }

    /* Format gives the canonical text, and a repeat without a name survives. */
    char buf[256];
    if (parse_ok("ic3ih5oc3n\"*7\"", &p)) {
        CHECK_EQ(p.repeat, 7);
        CHECK_STR(p.name, "");
        convsel_problem_format(&p, buf, sizeof buf);
        CHECK_STR(buf, "g1mb2_ic3ih5iw5_oc3oh5ow5_kh1kw1_sh1sw1_ph0pw0_dh0dw0_n\"*7\"");
    }
    if (parse_ok("mb1ic3ih224oc64kh7sh2ph3n\"conv1\"", &p)) {
        int n = convsel_problem_format(&p, buf, sizeof buf);
        CHECK_STR(buf, "g1mb1_ic3ih224iw224_oc64oh112ow112_kh7kw7_sh2sw2_ph3pw3_dh0dw0_n\"conv1\"");
        CHECK_EQ(n, (int)strlen(buf));
        /* Truncation reports the full length, as snprintf. */
        char small[8];
        CHECK_EQ(convsel_problem_format(&p, small, sizeof small), n);
        CHECK_EQ(strlen(small), sizeof small - 1);
    }
}

static void test_errors(void)
{
    parse_fails("mb1ic256ih56oc256oh56kh3xz", CONVSEL_PARSE_ERROR, "xz", NULL);
    parse_fails("mb1ic256ih56oc256oh56kh3xz7", CONVSEL_PARSE_ERROR, "xz", NULL);
    parse_fails("mb1ic64ih56oc64kh", CONVSEL_PARSE_ERROR, "kh", "number", NULL);
    parse_fails("mb1ic64ih_56oc64kh3", CONVSEL_PARSE_ERROR, "ih", "number", NULL);
    parse_fails("mb1ic64ih56oc64kh3ic32", CONVSEL_PARSE_ERROR, "ic", "twice", NULL);
    parse_fails("mb1ic64ih56oc64kh3ih56", CONVSEL_PARSE_ERROR, "ih", "twice", NULL);
    parse_fails("mb1ic64ih56oc64!kh3", CONVSEL_PARSE_ERROR, "!", NULL);
    parse_fails("", CONVSEL_PARSE_ERROR, NULL);
    parse_fails("mb1ih56oc64kh3", CONVSEL_PARSE_ERROR, "ic", NULL);
    parse_fails("mb1ic64ih56kh3", CONVSEL_PARSE_ERROR, "oc", NULL);
    parse_fails("mb1ic64oc64", CONVSEL_PARSE_ERROR, NULL);

    /* Sizes that do not fit together. */
    parse_fails("mb1ic64ih56oc64oh20kh3ph1", CONVSEL_INVALID_ARGUMENT, "oh20", NULL);
    parse_fails("mb1ic64ih56iw56oc64oh56ow20kh3ph1", CONVSEL_INVALID_ARGUMENT, "ow20", NULL);
    parse_fails("mb1ic3ih2oc3kh5ph0", CONVSEL_INVALID_ARGUMENT, "kernel", "padded input", NULL);
    parse_fails("mb1ic3ih2oc3kh5", CONVSEL_INVALID_ARGUMENT, "kernel", NULL);
    parse_fails("mb1ic3ih8iw2oc3kh1kw5", CONVSEL_INVALID_ARGUMENT, "kernel", NULL);

    /* Zero and negative sizes name the key. */
    parse_fails("mb1ic0ih56oc64kh3", CONVSEL_INVALID_ARGUMENT, "ic", NULL);
    parse_fails("mb1ic64ih56oc0kh3", CONVSEL_INVALID_ARGUMENT, "oc", NULL);
    parse_fails("mb0ic64ih56oc64kh3", CONVSEL_INVALID_ARGUMENT, "mb", NULL);
    parse_fails("mb1ic64ih56oc64kh-3", CONVSEL_INVALID_ARGUMENT, "kh", NULL);
    parse_fails("mb1ic64ih0oc64kh1", CONVSEL_INVALID_ARGUMENT, "ih", NULL);
    parse_fails("mb1ic64ih-5oc64oh3kh1", CONVSEL_INVALID_ARGUMENT, "ih", NULL);
    parse_fails("mb1ic64ih56oc64kh3sh0", CONVSEL_INVALID_ARGUMENT, "sh", NULL);
    parse_fails("mb1ic64ih56oc64kh3ph-1", CONVSEL_INVALID_ARGUMENT, "ph", NULL);
    parse_fails("mb1ic64ih56oc64kh3dh-1", CONVSEL_INVALID_ARGUMENT, "dh", NULL);
    parse_fails("g0mb1ic64ih56oc64kh3", CONVSEL_INVALID_ARGUMENT, "g", NULL);

    /* Groups. */
    parse_fails("g3mb1ic64ih56oc63kh3", CONVSEL_INVALID_ARGUMENT, "divisible", NULL);
    parse_fails("g2mb1ic64ih56oc63kh3", CONVSEL_INVALID_ARGUMENT, "divisible", NULL);

    /* Bad repeats. */
    parse_fails("mb1ic3ih8oc3n\"x*0\"", CONVSEL_PARSE_ERROR, "repeat", NULL);
    parse_fails("mb1ic3ih8oc3n\"x*\"", CONVSEL_PARSE_ERROR, "repeat", NULL);
    parse_fails("mb1ic3ih8oc3n\"x*2y\"", CONVSEL_PARSE_ERROR, "repeat", NULL);

    /* Unterminated or overlong names. */
    parse_fails("mb1ic3ih8oc3n\"resnet_50:conv1", CONVSEL_PARSE_ERROR, "unterminated", NULL);
    parse_fails("mb1ic3ih8oc3nconv\"1", CONVSEL_PARSE_ERROR, "unquoted name", NULL);
    char longname[CONVSEL_NAME_MAX + 40];
    snprintf(longname, sizeof longname, "mb1ic3ih8oc3n\"%0*d\"", CONVSEL_NAME_MAX + 10, 0);
    parse_fails(longname, CONVSEL_PARSE_ERROR, "name", NULL);

    /* 1D and 3D problems. */
    parse_fails("ic3oc16_iw5ow5kw3pw1_n\"conv_basic_1d:1st\"", CONVSEL_UNSUPPORTED, "1D", "not supported", NULL);
    parse_fails("ic228oc126_iw48ow12kw1sw4dw0pw0n\"strided_1d\"", CONVSEL_UNSUPPORTED, "1D", NULL);
    parse_fails("ic3oc16_id5od5kd3pd1_", CONVSEL_UNSUPPORTED, "3D", "not supported", NULL);
    parse_fails("mb1ic3id5ih5iw5oc16kd3kh3kw3", CONVSEL_UNSUPPORTED, "3D", NULL);

    /* Sizes past every limit. */
    parse_fails("mb2000000000ic2000000000ih2000000000iw2000000000oc16kh1", CONVSEL_TOO_LARGE, "overflow", NULL);
    parse_fails("mb99999999999999999999999ic3ih8oc3", CONVSEL_TOO_LARGE, "mb", NULL);
    parse_fails("mb3000000000ic3ih8oc3", CONVSEL_TOO_LARGE, "mb", NULL);
    /* 64 x 256 x 1024 x 1024 floats = 64 GiB, over the default 4 GiB. */
    parse_fails("mb64ic256ih1024oc16kh1", CONVSEL_TOO_LARGE, "src", "limit", NULL);

    /* The limit comes from the environment when set. */
    convsel_problem p;
    CHECK_EQ(convsel_max_tensor_bytes(), (size_t)4 << 30);
    setenv("CONVSEL_MAX_TENSOR_BYTES", "1000000", 1);
    CHECK_EQ(convsel_max_tensor_bytes(), 1000000);
    /* src 1x64x256x256 floats = 16 MiB */
    parse_fails("mb1ic64ih256oc16kh1", CONVSEL_TOO_LARGE, "src", "CONVSEL_MAX_TENSOR_BYTES", NULL);
    /* dst over, src under: 1x16x64x64 in, 1x1024x64x64 out */
    parse_fails("mb1ic16ih64oc1024kh1", CONVSEL_TOO_LARGE, "dst", NULL);
    /* weights 1024x1024x3x3 floats = 36 MiB */
    parse_fails("mb1ic1024ih3oc1024kh3", CONVSEL_TOO_LARGE, "weights", NULL);
    CHECK(parse_ok("mb1ic16ih32oc16kh3", &p));
    setenv("CONVSEL_MAX_TENSOR_BYTES", "not a number", 1);
    CHECK_EQ(convsel_max_tensor_bytes(), (size_t)4 << 30);
    unsetenv("CONVSEL_MAX_TENSOR_BYTES");

    /* NULL arguments are errors, not crashes. */
    CHECK_EQ(convsel_problem_parse(NULL, &p), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_problem_parse("mb1ic3ih8oc3", NULL), CONVSEL_INVALID_ARGUMENT);
    CHECK_EQ(convsel_problem_validate(NULL), CONVSEL_INVALID_ARGUMENT);
}

static void test_validate(void)
{
    convsel_problem p;
    if (!parse_ok("mb1ic64ih56oc64oh56kh3ph1", &p))
        return;
    CHECK_EQ(convsel_problem_validate(&p), CONVSEL_OK);
    convsel_problem q = p;
    /* oh55 only drops the bottom padding (0 instead of 1), oh60 needs 5. */
    q.oh = 55;
    CHECK_EQ(convsel_problem_validate(&q), CONVSEL_OK);
    CHECK_EQ(convsel_problem_pad_bottom(&q), 0);
    q.oh = 60;
    CHECK_EQ(convsel_problem_validate(&q), CONVSEL_INVALID_ARGUMENT);
    CHECK(strstr(convsel_last_error(), "oh60") != NULL);
    q = p;
    q.repeat = 0;
    CHECK_EQ(convsel_problem_validate(&q), CONVSEL_INVALID_ARGUMENT);
    CHECK(strstr(convsel_last_error(), "repeat") != NULL);
    q = p;
    q.kw = 0;
    CHECK_EQ(convsel_problem_validate(&q), CONVSEL_INVALID_ARGUMENT);
    CHECK(strstr(convsel_last_error(), "kw") != NULL);
    q = p;
    q.ic = (int64_t)1 << 40;
    CHECK_EQ(convsel_problem_validate(&q), CONVSEL_TOO_LARGE);
    CHECK(strstr(convsel_last_error(), "ic") != NULL);
}

/* Writes text to a fresh temporary file; its path goes to path. */
static void write_temp(char *path, size_t size, const char *stem, const char *text)
{
    const char *dir = getenv("TMPDIR");
    snprintf(path, size, "%s/%s_XXXXXX", dir && *dir ? dir : "/tmp", stem);
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    if (fd < 0)
        return;
    FILE *f = fdopen(fd, "w");
    fputs(text, f);
    fclose(f);
}

static void test_network_files(void)
{
    char path[256];
    convsel_network *net = NULL;

    write_temp(path, sizeof path, "net_ok",
               "# a network\n"
               "\n"
               "   \t\n"
               "mb4ic3ih32oc16kh3ph1n\"tiny:conv1\"   # trailing comment\n"
               "  # indented comment\n"
               "mb4ic16ih32oc16kh3ph1n\"tiny:conv2*2\"\r\n"
               "mb4ic16ih32oc32kh1sh2n\"tiny:down#1\"\n"
               "g32mb4ic32ih16oc32kh3ph1n\"tiny:dw\"");
    convsel_status st = convsel_network_load(path, 0, &net);
    CHECK_MSG(st == CONVSEL_OK, "%s", convsel_last_error());
    if (st == CONVSEL_OK) {
        CHECK_EQ(convsel_network_size(net), 4);
        CHECK_STR(convsel_network_name(net), strrchr(path, '/') + 1);
        const convsel_problem *l0 = convsel_network_layer(net, 0), *l1 = convsel_network_layer(net, 1),
                              *l2 = convsel_network_layer(net, 2), *l3 = convsel_network_layer(net, 3);
        CHECK(l0 && l1 && l2 && l3);
        if (l0 && l1 && l2 && l3) {
            CHECK_STR(l0->name, "tiny:conv1");
            CHECK_EQ(l0->mb, 4);
            CHECK_EQ(l0->ic, 3);
            CHECK_STR(l1->name, "tiny:conv2");
            CHECK_EQ(l1->repeat, 2);
            /* '#' inside a quoted name is part of the name. */
            CHECK_STR(l2->name, "tiny:down#1");
            CHECK_EQ(l2->oh, 16);
            CHECK_EQ(l3->g, 32);
        }
        CHECK(convsel_network_layer(net, 4) == NULL);
        convsel_network_destroy(net);
        net = NULL;
    }

    /* --mb overrides every layer's batch. */
    st = convsel_network_load(path, 1, &net);
    CHECK_EQ(st, CONVSEL_OK);
    if (st == CONVSEL_OK) {
        for (size_t i = 0; i < convsel_network_size(net); i++)
            CHECK_EQ(convsel_network_layer(net, i)->mb, 1);
        convsel_network_destroy(net);
    }
    st = convsel_network_load(path, 64, &net);
    CHECK_EQ(st, CONVSEL_OK);
    if (st == CONVSEL_OK) {
        for (size_t i = 0; i < convsel_network_size(net); i++)
            CHECK_EQ(convsel_network_layer(net, i)->mb, 64);
        convsel_network_destroy(net);
    }
    static int not_a_network;
    net = (convsel_network *)&not_a_network; /* a failed load must reset it to NULL */
    CHECK_EQ(convsel_network_load(path, -1, &net), CONVSEL_INVALID_ARGUMENT);
    CHECK(net == NULL);
    /* An override that makes a layer too large names its line. */
    setenv("CONVSEL_MAX_TENSOR_BYTES", "10000000", 1);
    CHECK_EQ(convsel_network_load(path, 1000, &net), CONVSEL_TOO_LARGE);
    CHECK(strstr(convsel_last_error(), ":4:") != NULL);
    unsetenv("CONVSEL_MAX_TENSOR_BYTES");
    unlink(path);

    /* Errors carry FILE:LINE: */
    static const struct {
        const char *text;
        int line;
        convsel_status status;
        const char *word;
    } bad[] = {
        {"mb1ic3ih8oc3\n# c\n\nmb1ic3ih8oc3xz\n", 4, CONVSEL_PARSE_ERROR, "xz"},
        {"mb1ic3ih8oc3\nmb1ic3ih8oc3oh2kh3\n", 2, CONVSEL_INVALID_ARGUMENT, "oh2"},
        {"\n\n\nmb1ic3ih8oc3n\"open\n", 4, CONVSEL_PARSE_ERROR, "unterminated"},
        {"mb1ic3ih8oc3\nic3oc16iw5kw3\n", 2, CONVSEL_UNSUPPORTED, "1D"},
        {"# 3D\nic3oc16id5kd3\n", 2, CONVSEL_UNSUPPORTED, "3D"},
        {"g2mb1ic3ih8oc4\n", 1, CONVSEL_INVALID_ARGUMENT, "divisible"},
        /* A binary file (a model's msgpack, say) is said to be one. */
        {"\x85\xa5magic\xad" "convsel-model\xa7version\x01\n", 1, CONVSEL_PARSE_ERROR, "binary content"},
        {"mb1ic3ih8oc3 # ok\nmb1ic3ih8oc3\x7f\n", 2, CONVSEL_PARSE_ERROR, "binary content"},
        {"# caf\xc3\xa9 (UTF-8 passes)\nmb1ic3ih8oc3\x1b[0m\n", 2, CONVSEL_PARSE_ERROR, "binary content"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char want[300];
        write_temp(path, sizeof path, "net_bad", bad[i].text);
        net = NULL;
        st = convsel_network_load(path, 0, &net);
        CHECK_MSG(st == bad[i].status, "case %zu: %s: %s", i, convsel_status_str(st), convsel_last_error());
        CHECK(net == NULL);
        snprintf(want, sizeof want, "%s:%d: ", path, bad[i].line);
        CHECK_MSG(strstr(convsel_last_error(), want) != NULL, "case %zu: \"%s\" lacks \"%s\"", i,
                  convsel_last_error(), want);
        CHECK_MSG(strstr(convsel_last_error(), bad[i].word) != NULL, "case %zu: \"%s\" lacks \"%s\"", i,
                  convsel_last_error(), bad[i].word);
        unlink(path);
    }

    /* A NUL byte inside a line. */
    write_temp(path, sizeof path, "net_nul", "");
    FILE *nul = fopen(path, "wb");
    static const char nul_text[] = "mb1ic3ih8oc3\nmb1ic3\0ih8oc3\n";
    if (nul) {
        fwrite(nul_text, 1, sizeof nul_text - 1, nul);
        fclose(nul);
    }
    net = NULL;
    CHECK_EQ(convsel_network_load(path, 0, &net), CONVSEL_PARSE_ERROR);
    CHECK(net == NULL);
    CHECK(strstr(convsel_last_error(), ":2: binary content") != NULL);
    unlink(path);

    /* Empty files and files of comments only have no layers. */
    const char *empty[] = {"", "# only a comment\n\n   \n"};
    for (size_t i = 0; i < 2; i++) {
        write_temp(path, sizeof path, "net_empty", empty[i]);
        st = convsel_network_load(path, 0, &net);
        CHECK_EQ(st, CONVSEL_PARSE_ERROR);
        CHECK(strstr(convsel_last_error(), path) != NULL);
        CHECK(strstr(convsel_last_error(), "no convolution layers") != NULL);
        unlink(path);
    }

    /* A missing file names its path. */
    const char *missing = "/nonexistent-dir/convsel/no_such_net.txt";
    st = convsel_network_load(missing, 0, &net);
    CHECK_EQ(st, CONVSEL_IO_ERROR);
    CHECK(strstr(convsel_last_error(), missing) != NULL);
    CHECK_EQ(convsel_network_load(NULL, 0, &net), CONVSEL_INVALID_ARGUMENT);

    /* A network from one descriptor, as the CLI builds for DESC arguments. */
    st = convsel_network_from_desc("mb8ic3ih8oc3kh3n\"one\"", 2, &net);
    CHECK_EQ(st, CONVSEL_OK);
    if (st == CONVSEL_OK) {
        CHECK_EQ(convsel_network_size(net), 1);
        CHECK_STR(convsel_network_name(net), "one");
        CHECK_EQ(convsel_network_layer(net, 0)->mb, 2);
        convsel_network_destroy(net);
    }
    st = convsel_network_from_desc("mb8ic3ih8oc3kh3", 0, &net);
    CHECK_EQ(st, CONVSEL_OK);
    if (st == CONVSEL_OK) {
        CHECK_EQ(convsel_network_layer(net, 0)->mb, 8);
        CHECK(convsel_network_name(net) && *convsel_network_name(net));
        convsel_network_destroy(net);
    }
    CHECK_EQ(convsel_network_from_desc("mb8ic3ih8oc3kh3qq", 0, &net), CONVSEL_PARSE_ERROR);
    CHECK(net == NULL);
    convsel_network_destroy(NULL);
    CHECK_EQ(convsel_network_size(NULL), 0);
}

int main(void)
{
    test_defaults();
    test_deductions();
    test_names_and_separators();
    test_errors();
    test_validate();
    test_network_files();
    return CHECK_DONE();
}
