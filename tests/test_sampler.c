/*
 * The sampler: deterministic for a seed, every sample valid, distinct and
 * within the caps, perturbations faithful to their base, and the coverage a
 * model needs (depthwise, 1×7 / 7×1, odd channel counts, stride 2, batches).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "convsel.h"

#define N_SAMPLES 600

/* Layers in the shapes real networks have, and lines the sampler must skip
 * without failing (1D, 3D, garbage). */
static const char network_text[] =
    "# a test network\n"
    "mb50ic3ih224oc64oh112kh7sh2ph3n\"net_a:conv1\"\n"
    "mb50ic64ih56oc64oh56kh3ph1n\"net_a:res2*3\"\n"
    "mb50ic256ih56oc128oh28kh1sh2n\"net_a:down\"\n"
    "g32mb1ic32ih112oc32oh112kh3ph1n\"net_b:dw1\"\n"
    "mb1ic160ih17oc192oh17kh7kw1ph3pw0n\"net_b:7x1\"\n"
    "mb1ic128ih17oc128oh17kh1kw7ph0pw3n\"net_b:1x7\"\n"
    "ic16oc16_iw5ow5kw3pw1_n\"one_d:skip_me\"\n"
    "ic16id8ih8oc16od8oh8kd3kh3pd1ph1n\"three_d:skip_me\"\n"
    "this is not a descriptor\n"
    "mb1ic512ih14oc512oh14kh3ph2dh1n\"net_b:dilated\"\n";

static double padded16(int64_t c)
{
    return (double)((c + 15) / 16 * 16);
}

/* The memory bound, computed here independently of the sampler. */
static double bytes_needed(const convsel_problem *p)
{
    double src = (double)p->mb * padded16(p->ic) * (double)(p->ih * p->iw);
    double dst = (double)p->mb * padded16(p->oc) * (double)(p->oh * p->ow);
    double wei = (double)p->oc * (double)(p->ic / p->g) * (double)(p->kh * p->kw);
    double col = (double)p->ic * (double)(p->kh * p->kw) * (double)(p->oh * p->ow);
    return 4.0 * (src + dst + wei + col);
}

static convsel_sampler *make_sampler(uint64_t seed, const char *net_path, size_t *added)
{
    convsel_sampler_options o;
    convsel_sampler_options_default(&o);
    o.seed = seed;
    convsel_sampler *s = NULL;
    CHECK_EQ(convsel_sampler_create(&o, &s), CONVSEL_OK);
    CHECK_EQ(convsel_sampler_add_file(s, net_path, added), CONVSEL_OK);
    return s;
}

static void draw(convsel_sampler *s, convsel_problem *out, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        convsel_status st = convsel_sampler_next(s, &out[i]);
        CHECK_MSG(st == CONVSEL_OK, "sample %zu: %s", i, convsel_last_error());
    }
}

static void format_shape(const convsel_problem *p, char *buf, size_t size)
{
    convsel_problem q = *p;
    q.name[0] = '\0';
    q.repeat = 1;
    convsel_problem_format(&q, buf, size);
}

/* The line of network_text whose layer is named name[0..len). */
static int find_base(const char *name, size_t len, convsel_problem *base)
{
    for (const char *q = network_text; (q = strchr(q, '"')) != NULL; q++) {
        if (strncmp(q + 1, name, len) != 0 || (q[1 + len] != '"' && q[1 + len] != '*'))
            continue;
        const char *start = q, *end = strchr(q + 1, '"');
        while (start > network_text && start[-1] != '\n')
            start--;
        char desc[256];
        snprintf(desc, sizeof desc, "%.*s", (int)(end + 1 - start), start);
        return convsel_problem_parse(desc, base) == CONVSEL_OK;
    }
    return 0;
}

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
    char dir[256], net_path[300];
    snprintf(dir, sizeof dir, "%s/convsel_test_sampler_XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
    if (!mkdtemp(dir)) {
        perror("mkdtemp");
        return 1;
    }
    snprintf(net_path, sizeof net_path, "%s/test_net.txt", dir);
    FILE *f = fopen(net_path, "w");
    fputs(network_text, f);
    fclose(f);

    size_t added = 0;
    convsel_sampler *s1 = make_sampler(42, net_path, &added);
    CHECK_EQ(added, 7); /* the 2D lines only */
    CHECK_EQ(convsel_sampler_base_count(s1), 7);
    /* The same layers again (another batch) add nothing; a directory adds
     * its *.txt files. */
    CHECK_EQ(convsel_sampler_add_file(s1, net_path, &added), CONVSEL_OK);
    CHECK_EQ(added, 0);
    CHECK_EQ(convsel_sampler_add_file(s1, dir, &added), CONVSEL_OK);
    CHECK_EQ(added, 0);
    CHECK_EQ(convsel_sampler_add_file(s1, "/nonexistent/net.txt", &added), CONVSEL_IO_ERROR);

    static convsel_problem a[N_SAMPLES], b[N_SAMPLES], c[N_SAMPLES];
    draw(s1, a, N_SAMPLES);
    convsel_sampler *s2 = make_sampler(42, net_path, NULL);
    draw(s2, b, N_SAMPLES);
    convsel_sampler *s3 = make_sampler(43, net_path, NULL);
    draw(s3, c, N_SAMPLES);

    /* Determinism: same seed, same sample (names included); another seed,
     * another sample. */
    int same = 0, same_other_seed = 0;
    char ka[512], kb[512];
    for (int i = 0; i < N_SAMPLES; i++) {
        convsel_problem_format(&a[i], ka, sizeof ka);
        convsel_problem_format(&b[i], kb, sizeof kb);
        same += strcmp(ka, kb) == 0;
        convsel_problem_format(&c[i], kb, sizeof kb);
        same_other_seed += strcmp(ka, kb) == 0;
    }
    CHECK_EQ(same, N_SAMPLES);
    CHECK(same_other_seed < N_SAMPLES / 10);

    /* Valid, within the caps, distinct shapes. */
    int invalid = 0, over = 0;
    char **keys = malloc(N_SAMPLES * sizeof *keys);
    for (int i = 0; i < N_SAMPLES; i++) {
        if (convsel_problem_validate(&a[i]) != CONVSEL_OK) {
            invalid++;
            fprintf(stderr, "invalid sample %d: %s\n", i, convsel_last_error());
        }
        if (convsel_problem_flops(&a[i]) > 2e9 || bytes_needed(&a[i]) > 256.0 * 1024 * 1024)
            over++;
        format_shape(&a[i], ka, sizeof ka);
        keys[i] = strdup(ka);
    }
    CHECK_EQ(invalid, 0);
    CHECK_EQ(over, 0);
    qsort(keys, N_SAMPLES, sizeof *keys, cmp_str);
    int dups = 0;
    for (int i = 1; i < N_SAMPLES; i++)
        dups += strcmp(keys[i - 1], keys[i]) == 0;
    CHECK_EQ(dups, 0);
    for (int i = 0; i < N_SAMPLES; i++)
        free(keys[i]);
    free(keys);

    /* Coverage. */
    int depthwise = 0, grouped = 0, k1x7 = 0, k7x1 = 0, k1 = 0, k3 = 0, k5 = 0, k7 = 0, odd16 = 0, odd8 = 0;
    int stride2 = 0, dilated = 0, mb1 = 0, mb_small = 0, mb_large = 0, perturbed = 0, random = 0, big = 0;
    int spatial_small = 0, spatial_large = 0, unfaithful = 0;
    for (int i = 0; i < N_SAMPLES; i++) {
        const convsel_problem *p = &a[i];
        depthwise += p->g > 1 && p->g == p->ic;
        grouped += p->g > 1 && p->g != p->ic;
        k1x7 += p->kh == 1 && p->kw == 7;
        k7x1 += p->kh == 7 && p->kw == 1;
        k1 += p->kh == 1 && p->kw == 1;
        k3 += p->kh == 3 && p->kw == 3;
        k5 += p->kh == 5 && p->kw == 5;
        k7 += p->kh == 7 && p->kw == 7;
        odd16 += p->ic % 16 != 0 || p->oc % 16 != 0;
        odd8 += p->ic % 8 != 0 || p->oc % 8 != 0;
        stride2 += p->sh == 2;
        dilated += p->dh > 0 || p->dw > 0;
        mb1 += p->mb == 1;
        mb_small += p->mb >= 1 && p->mb <= 8;
        mb_large += p->mb > 8;
        spatial_small += p->ih <= 7;
        spatial_large += p->ih >= 100;
        big += convsel_problem_flops(p) > 2e8;
        if (strstr(p->name, "~p")) {
            perturbed++;
            /* A perturbation keeps its base's kernel, stride, dilation and
             * group structure. */
            const char *tilde = strstr(p->name, "~p");
            convsel_problem base;
            int found = find_base(p->name, (size_t)(tilde - p->name), &base);
            if (found)
                unfaithful += base.kh != p->kh || base.kw != p->kw || base.sh != p->sh || base.sw != p->sw ||
                              base.dh != p->dh || base.dw != p->dw || (base.g == 1) != (p->g == 1);
            CHECK_MSG(found, "no base for %s", p->name);
        } else if (strncmp(p->name, "random~", 7) == 0) {
            random++;
        }
    }
    printf("%d samples: %d perturbed, %d random; depthwise %d, grouped %d, 1x1 %d, 3x3 %d, 5x5 %d, 7x7 %d, "
           "1x7 %d, 7x1 %d, channels not /16 %d, not /8 %d, stride 2 %d, dilated %d, mb1 %d, mb<=8 %d, "
           "mb>8 %d, ih<=7 %d, ih>=100 %d, >0.2 GFLOP %d\n",
           N_SAMPLES, perturbed, random, depthwise, grouped, k1, k3, k5, k7, k1x7, k7x1, odd16, odd8, stride2, dilated,
           mb1, mb_small, mb_large, spatial_small, spatial_large, big);
    CHECK_EQ(perturbed + random, N_SAMPLES);
    CHECK(perturbed > N_SAMPLES / 2 - N_SAMPLES / 10 && random > N_SAMPLES / 4);
    CHECK_EQ(unfaithful, 0);
    CHECK(depthwise >= 20);
    CHECK(grouped >= 5);
    CHECK(k1x7 >= 10 && k7x1 >= 10);
    CHECK(k1 >= 30 && k3 >= 30 && k5 >= 5 && k7 >= 5);
    CHECK(odd16 >= 60);
    CHECK(odd8 >= 30);
    CHECK(stride2 >= 60);
    CHECK(dilated >= 10);
    CHECK(mb1 >= N_SAMPLES / 5);
    CHECK(mb_small >= N_SAMPLES * 3 / 4);
    CHECK(mb_large >= 5);
    CHECK(spatial_small >= 20 && spatial_large >= 10);
    CHECK(big >= 20); /* the caps do not squeeze everything tiny */

    /* Without bases: random only. Tight caps are honoured. */
    convsel_sampler_options o;
    convsel_sampler_options_default(&o);
    o.seed = 5;
    o.max_flops = 1e7;
    o.max_bytes = 1 << 20;
    convsel_sampler *s4 = NULL;
    CHECK_EQ(convsel_sampler_create(&o, &s4), CONVSEL_OK);
    over = 0;
    for (int i = 0; i < 200; i++) {
        convsel_problem p;
        CHECK_EQ(convsel_sampler_next(s4, &p), CONVSEL_OK);
        over += convsel_problem_flops(&p) > 1e7 || bytes_needed(&p) > (double)(1 << 20) ||
                strncmp(p.name, "random~", 7) != 0 || convsel_problem_validate(&p) != CONVSEL_OK;
    }
    CHECK_EQ(over, 0);
    o.max_flops = -1.0;
    convsel_sampler *s5 = NULL;
    CHECK_EQ(convsel_sampler_create(&o, &s5), CONVSEL_INVALID_ARGUMENT);

    /* The project's own network files, when present, are bases too. */
    convsel_sampler *s6 = make_sampler(1, net_path, NULL);
    if (access(CONVSEL_SOURCE_DIR "/networks", F_OK) == 0) {
        CHECK_EQ(convsel_sampler_add_file(s6, CONVSEL_SOURCE_DIR "/networks", &added), CONVSEL_OK);
        CHECK(added > 0);
    }

    convsel_sampler_destroy(s1);
    convsel_sampler_destroy(s2);
    convsel_sampler_destroy(s3);
    convsel_sampler_destroy(s4);
    convsel_sampler_destroy(s6);
    convsel_sampler_destroy(NULL);
    unlink(net_path);
    rmdir(dir);
    return CHECK_DONE();
}
