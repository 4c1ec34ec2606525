/*
 * The networks convsel ships (the .txt files in networks/): layer counts, total work
 * against the published figures, and that the layers are listed in execution
 * order (each line's output feeds the next where the shapes connect).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "convsel.h"

struct totals {
    size_t lines;
    long long layers; /* with the *N repeats */
    double macs;      /* multiply-adds at the file's batch */
};

static convsel_network *load(const char *file, int64_t mb)
{
    char path[1024];
    convsel_network *net = NULL;
    snprintf(path, sizeof path, "%s/networks/%s", CONVSEL_SOURCE_DIR, file);
    convsel_status st = convsel_network_load(path, mb, &net);
    CHECK_MSG(st == CONVSEL_OK, "%s: %s", path, convsel_last_error());
    return net;
}

static struct totals sum(const convsel_network *net)
{
    struct totals t = {0, 0, 0.0};
    t.lines = convsel_network_size(net);
    for (size_t i = 0; i < t.lines; i++) {
        const convsel_problem *p = convsel_network_layer(net, i);
        t.layers += p->repeat;
        t.macs += p->repeat * convsel_problem_flops(p) / 2;
    }
    return t;
}

static int ends_with(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int starts_with(const char *s, const char *prefix)
{
    return strncmp(s, prefix, strlen(prefix)) == 0;
}

/* b reads what a wrote: same channels, and the same size or, with a 2x2/2
 * pool between them when pool is set, half of it. */
static int feeds(const convsel_problem *a, const convsel_problem *b, int pool)
{
    if (a->oc != b->ic)
        return 0;
    if (a->oh == b->ih && a->ow == b->iw)
        return 1;
    return pool && a->oh / 2 == b->ih && a->ow / 2 == b->iw;
}

/* Every layer: batch 1, square, a name with the network's prefix. */
static void check_common(const convsel_network *net, const char *prefix)
{
    for (size_t i = 0; i < convsel_network_size(net); i++) {
        const convsel_problem *p = convsel_network_layer(net, i);
        CHECK_EQ(p->mb, 1);
        CHECK_EQ(p->ih, p->iw);
        CHECK_EQ(p->oh, p->ow);
        CHECK_EQ(p->kh, p->kw);
        CHECK_MSG(starts_with(p->name, prefix), "layer %zu is named '%s', not %s...", i, p->name, prefix);
        /* *N stands for N consecutive copies, so a repeated layer must feed itself. */
        if (p->repeat > 1)
            CHECK_MSG(feeds(p, p, 0), "%s*%d does not feed itself", p->name, p->repeat);
    }
}

static void test_resnet_50(void)
{
    convsel_network *net = load("resnet_50.txt", 0);
    if (!net)
        return;
    struct totals t = sum(net);
    CHECK_EQ(t.lines, 53);
    CHECK_EQ(t.layers, 53);
    /* He et al., Table 1: 3.8 x 10^9 multiply-adds (v1, stride on the first 1x1). */
    CHECK_MSG(fabs(t.macs / 3.8e9 - 1) < 0.03, "ResNet-50: %.4g MACs", t.macs);
    check_common(net, "resnet_50:");

    const convsel_problem *conv1 = convsel_network_layer(net, 0);
    CHECK_STR(conv1->name, "resnet_50:conv1");
    CHECK_EQ(conv1->ih, 224);
    CHECK_EQ(conv1->oh, 112);
    CHECK_EQ(conv1->kh, 7);
    CHECK_EQ(conv1->sh, 2);

    /* Block structure: a block's input is the previous block's output (after
     * conv1, a 3x3/2 max pool); branch1 and branch2a read the block's input;
     * 2a feeds 2b feeds 2c; only branch1 and 2a of stages 3-5 are strided. */
    int64_t in_c = conv1->oc, in_h = conv1->oh / 2;
    int blocks = 0, projections = 0, strided = 0;
    for (size_t i = 1; i < convsel_network_size(net); i++) {
        const convsel_problem *p = convsel_network_layer(net, i), *prev = convsel_network_layer(net, i - 1);
        if (p->sh != 1)
            strided++;
        if (ends_with(p->name, "_branch1")) {
            projections++;
            CHECK_MSG(p->ic == in_c && p->ih == in_h, "%s does not read the block input", p->name);
            CHECK_EQ(p->kh, 1);
        } else if (ends_with(p->name, "_branch2a")) {
            blocks++;
            CHECK_MSG(p->ic == in_c && p->ih == in_h, "%s does not read the block input", p->name);
            CHECK_EQ(p->kh, 1);
            CHECK_EQ(p->sh, ends_with(prev->name, "_branch1") ? (i == 2 ? 1 : 2) : 1);
        } else if (ends_with(p->name, "_branch2b")) {
            CHECK_MSG(ends_with(prev->name, "_branch2a") && feeds(prev, p, 0), "%s", p->name);
            CHECK_EQ(p->kh, 3);
            CHECK_EQ(p->sh, 1);
        } else if (ends_with(p->name, "_branch2c")) {
            CHECK_MSG(ends_with(prev->name, "_branch2b") && feeds(prev, p, 0), "%s", p->name);
            CHECK_EQ(p->kh, 1);
            CHECK_EQ(p->oc, 4 * p->ic);
            in_c = p->oc;
            in_h = p->oh;
        } else {
            CHECK_MSG(0, "unexpected layer %s", p->name);
        }
    }
    CHECK_EQ(blocks, 3 + 4 + 6 + 3);
    CHECK_EQ(projections, 4);
    CHECK_EQ(strided, 6);
    CHECK_EQ(in_c, 2048);
    CHECK_EQ(in_h, 7);

    /* ResNet v1's strided 1x1 (56 -> 28) leaves the last input row unread. */
    const convsel_problem *res3a = convsel_network_layer(net, 11);
    CHECK_STR(res3a->name, "resnet_50:res3a_branch1");
    CHECK_EQ(convsel_problem_pad_bottom(res3a), -1);
    convsel_network_destroy(net);

    /* --mb scales the work. */
    net = load("resnet_50.txt", 8);
    if (net) {
        struct totals t8 = sum(net);
        CHECK_NEAR(t8.macs, 8 * t.macs, 1.0);
        convsel_network_destroy(net);
    }
}

static void test_vgg_16(void)
{
    convsel_network *net = load("vgg_16.txt", 0);
    if (!net)
        return;
    struct totals t = sum(net);
    CHECK_EQ(t.layers, 13);
    CHECK(t.lines < 13); /* the *N repeats are used */
    /* 15.3 G multiply-adds in its 13 convolutions (15.47 G with the FC layers). */
    CHECK_MSG(fabs(t.macs / 15.35e9 - 1) < 0.02, "VGG-16: %.4g MACs", t.macs);
    check_common(net, "vgg_16:");
    const convsel_problem *first = convsel_network_layer(net, 0);
    CHECK_EQ(first->ic, 3);
    CHECK_EQ(first->ih, 224);
    for (size_t i = 0; i < t.lines; i++) {
        const convsel_problem *p = convsel_network_layer(net, i);
        CHECK_EQ(p->kh, 3);
        CHECK_EQ(p->sh, 1);
        CHECK_EQ(p->ph, 1);
        CHECK_EQ(p->oh, p->ih);
        if (i > 0)
            CHECK_MSG(feeds(convsel_network_layer(net, i - 1), p, 1), "%s does not follow its predecessor", p->name);
    }
    const convsel_problem *last = convsel_network_layer(net, t.lines - 1);
    CHECK_EQ(last->oc, 512);
    CHECK_EQ(last->oh, 14);
    convsel_network_destroy(net);
}

static void test_mobilenet_v1(void)
{
    convsel_network *net = load("mobilenet_v1.txt", 0);
    if (!net)
        return;
    struct totals t = sum(net);
    CHECK_EQ(t.lines, 27);
    CHECK_EQ(t.layers, 27);
    /* Howard et al., Table 1: 569 M multiply-adds, 1.02 M of them in the FC layer. */
    CHECK_MSG(fabs(t.macs / 568e6 - 1) < 0.02, "MobileNet v1: %.4g MACs", t.macs);
    check_common(net, "mobilenet_v1:");
    int depthwise = 0, pointwise = 0;
    for (size_t i = 0; i < t.lines; i++) {
        const convsel_problem *p = convsel_network_layer(net, i);
        if (i > 0)
            CHECK_MSG(feeds(convsel_network_layer(net, i - 1), p, 0), "%s does not follow its predecessor", p->name);
        if (ends_with(p->name, "/dw")) {
            depthwise++;
            CHECK(p->g == p->ic && p->g == p->oc && p->kh == 3);
        } else if (ends_with(p->name, "/sep")) {
            pointwise++;
            CHECK(p->g == 1 && p->kh == 1 && p->sh == 1);
        }
    }
    CHECK_EQ(depthwise, 13);
    CHECK_EQ(pointwise, 13);
    const convsel_problem *last = convsel_network_layer(net, t.lines - 1);
    CHECK_EQ(last->oc, 1024);
    CHECK_EQ(last->oh, 7);
    convsel_network_destroy(net);
}

/* Sort key of a layer's shape. */
static int by_shape(const void *a, const void *b)
{
    const convsel_problem *x = a, *y = b;
    const int64_t kx[] = {x->g, x->ic, x->ih, x->iw, x->oc, x->oh, x->ow, x->kh, x->kw, x->sh, x->sw, x->ph, x->pw};
    const int64_t ky[] = {y->g, y->ic, y->ih, y->iw, y->oc, y->oh, y->ow, y->kh, y->kw, y->sh, y->sw, y->ph, y->pw};
    for (size_t i = 0; i < sizeof kx / sizeof kx[0]; i++)
        if (kx[i] != ky[i])
            return kx[i] < ky[i] ? -1 : 1;
    return 0;
}

/* The expanded layers of a network, sorted by shape. */
static convsel_problem *expanded(const convsel_network *net, size_t *count)
{
    size_t n = 0;
    for (size_t i = 0; i < convsel_network_size(net); i++)
        n += (size_t)convsel_network_layer(net, i)->repeat;
    convsel_problem *all = calloc(n ? n : 1, sizeof *all);
    size_t k = 0;
    for (size_t i = 0; all && i < convsel_network_size(net); i++)
        for (int r = 0; r < convsel_network_layer(net, i)->repeat; r++)
            all[k++] = *convsel_network_layer(net, i);
    if (all)
        qsort(all, n, sizeof *all, by_shape);
    *count = n;
    return all;
}

/* Where oneDNN's ResNet-50 list (written independently, in benchdnn's
 * inputs) is at hand, ours must hold exactly the same convolutions. */
static void test_resnet_50_against_onednn(void)
{
    char path[1024];
    struct stat st;
    snprintf(path, sizeof path, "%s/../shared/networks/resnet_50.txt", CONVSEL_SOURCE_DIR);
    if (stat(path, &st) != 0) {
        printf("oneDNN's resnet_50.txt not found, cross-check skipped\n");
        return;
    }
    convsel_network *theirs = NULL, *ours = load("resnet_50.txt", 1);
    CHECK_EQ(convsel_network_load(path, 1, &theirs), CONVSEL_OK);
    if (theirs && ours) {
        size_t n_theirs, n_ours;
        convsel_problem *a = expanded(theirs, &n_theirs), *b = expanded(ours, &n_ours);
        CHECK_EQ(n_theirs, n_ours);
        for (size_t i = 0; a && b && i < n_ours && i < n_theirs; i++)
            CHECK_MSG(by_shape(&a[i], &b[i]) == 0, "sorted layer %zu: oneDNN's %s vs our %s", i, a[i].name,
                      b[i].name);
        free(a);
        free(b);
    }
    convsel_network_destroy(theirs);
    convsel_network_destroy(ours);
}

static void touch(const char *dir, const char *name)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CHECK_MSG(f != NULL, "cannot create %s", path);
    if (f)
        fclose(f);
}

/* convsel_network_files: a file is itself; a directory its *.txt, sorted
 * by byte value, hidden files and other names left out. */
static void test_network_files(void)
{
    char **files;
    size_t n;
    char dir[1024];
    snprintf(dir, sizeof dir, "%s/networks", CONVSEL_SOURCE_DIR);
    CHECK_EQ(convsel_network_files(dir, &files, &n), CONVSEL_OK);
    CHECK_EQ(n, 3);
    if (n == 3) {
        CHECK(ends_with(files[0], "/networks/mobilenet_v1.txt"));
        CHECK(ends_with(files[1], "/networks/resnet_50.txt"));
        CHECK(ends_with(files[2], "/networks/vgg_16.txt"));
    }
    convsel_network_files_free(files, n);

    char tmp[] = "/tmp/convsel_netfiles_XXXXXX";
    CHECK(mkdtemp(tmp) != NULL);
    const char *names[] = {"b.txt", "a.txt", "B.txt", ".hidden.txt", "notes.md", "txt", "x.txt.bak"};
    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
        touch(tmp, names[i]);
    CHECK_EQ(convsel_network_files(tmp, &files, &n), CONVSEL_OK);
    const char *want[] = {"B.txt", "a.txt", "b.txt"}; /* byte order: upper case first */
    CHECK_EQ(n, 3);
    for (size_t i = 0; i < n && i < 3; i++) {
        char path[1100];
        snprintf(path, sizeof path, "%s/%s", tmp, want[i]);
        CHECK_STR(files[i], path);
    }
    convsel_network_files_free(files, n);

    char file[1100];
    snprintf(file, sizeof file, "%s/notes.md", tmp);
    CHECK_EQ(convsel_network_files(file, &files, &n), CONVSEL_OK); /* a file is itself, whatever its name */
    CHECK_EQ(n, 1);
    if (n == 1)
        CHECK_STR(files[0], file);
    convsel_network_files_free(files, n);

    for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
        snprintf(file, sizeof file, "%s/%s", tmp, names[i]);
        CHECK_EQ(remove(file), 0);
    }
    CHECK_EQ(convsel_network_files(tmp, &files, &n), CONVSEL_OK); /* empty: none, not an error */
    CHECK_EQ(n, 0);
    convsel_network_files_free(files, n);
    CHECK_EQ(rmdir(tmp), 0);
    CHECK_EQ(convsel_network_files(tmp, &files, &n), CONVSEL_IO_ERROR);
    CHECK(strstr(convsel_last_error(), tmp) != NULL);
    CHECK(files == NULL && n == 0);
    CHECK_EQ(convsel_network_files(NULL, &files, &n), CONVSEL_INVALID_ARGUMENT);
}

int main(void)
{
    test_network_files();
    test_resnet_50();
    test_vgg_16();
    test_mobilenet_v1();
    test_resnet_50_against_onednn();
    return CHECK_DONE();
}
