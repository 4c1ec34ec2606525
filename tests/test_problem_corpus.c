/*
 * Every layer of the real networks in ../shared/networks (oneDNN's benchdnn
 * inputs, read in place, never copied into the repo): each 2D line parses and
 * survives parse -> format -> parse unchanged, field by field with its name
 * and repeat count; each 1D or 3D line fails with UNSUPPORTED saying so.
 *
 * The corpus is looked for in $CONVSEL_NETWORKS_CORPUS, then next to the
 * source tree (../shared/networks), then inside it (shared/networks). Where
 * none exists the test exits 77, which CTest reports as skipped.
 */
#include <ctype.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "check.h"
#include "convsel.h"

#define SKIP_CODE 77

static int same_problem(const convsel_problem *a, const convsel_problem *b)
{
    return a->g == b->g && a->mb == b->mb && a->ic == b->ic && a->ih == b->ih && a->iw == b->iw &&
           a->oc == b->oc && a->oh == b->oh && a->ow == b->ow && a->kh == b->kh && a->kw == b->kw &&
           a->sh == b->sh && a->sw == b->sw && a->ph == b->ph && a->pw == b->pw && a->dh == b->dh &&
           a->dw == b->dw && a->repeat == b->repeat && strcmp(a->name, b->name) == 0;
}

static int is_dir(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* Which spatial dimensions a descriptor names, judged from its keys alone
 * (independently of the parser under test): 3 if any depth key, 1 if no
 * height key, else 2. */
static int dimensions(const char *desc)
{
    int depth = 0, height = 0;
    for (const char *s = desc; *s;) {
        if (*s == 'n')
            break; /* the name runs to the end */
        if (!isalpha((unsigned char)*s)) {
            s++;
            continue;
        }
        char key[8] = "";
        size_t len = 0;
        while (isalpha((unsigned char)*s)) {
            if (len + 1 < sizeof key)
                key[len++] = *s;
            s++;
        }
        key[len] = '\0';
        if (len == 2 && key[1] == 'd' && strchr("iokspd", key[0]))
            depth = 1;
        if (len == 2 && key[1] == 'h' && strchr("iok", key[0]))
            height = 1;
    }
    return depth ? 3 : height ? 2 : 1;
}

/* The descriptor on a line: up to an unquoted '#', blanks trimmed. */
static char *line_descriptor(char *line)
{
    int quoted = 0;
    for (char *c = line; *c; c++) {
        if (*c == '"')
            quoted = !quoted;
        else if (*c == '#' && !quoted) {
            *c = '\0';
            break;
        }
    }
    while (isspace((unsigned char)*line))
        line++;
    size_t n = strlen(line);
    while (n && isspace((unsigned char)line[n - 1]))
        line[--n] = '\0';
    return line;
}

static int count_2d, count_other, count_files;

static void check_file(const char *path)
{
    FILE *f = fopen(path, "r");
    CHECK_MSG(f != NULL, "cannot open %s", path);
    if (!f)
        return;
    count_files++;
    char line[4096];
    int lineno = 0, in_file = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        char *desc = line_descriptor(line);
        if (!*desc)
            continue;
        in_file++;
        convsel_problem p, q;
        convsel_status st = convsel_problem_parse(desc, &p);
        int dims = dimensions(desc);
        if (dims != 2) {
            count_other++;
            CHECK_MSG(st == CONVSEL_UNSUPPORTED, "%s:%d: %dD line gave %s: %s", path, lineno, dims,
                      convsel_status_str(st), convsel_last_error());
            const char *want = dims == 1 ? "1D" : "3D";
            CHECK_MSG(strstr(convsel_last_error(), want) && strstr(convsel_last_error(), "not supported"),
                      "%s:%d: detail \"%s\" does not say %s is not supported", path, lineno, convsel_last_error(),
                      want);
            continue;
        }
        count_2d++;
        CHECK_MSG(st == CONVSEL_OK, "%s:%d: '%s': %s: %s", path, lineno, desc, convsel_status_str(st),
                  convsel_last_error());
        if (st != CONVSEL_OK)
            continue;
        char text[512];
        int n = convsel_problem_format(&p, text, sizeof text);
        CHECK_MSG(n > 0 && (size_t)n < sizeof text, "%s:%d: format returned %d", path, lineno, n);
        st = convsel_problem_parse(text, &q);
        CHECK_MSG(st == CONVSEL_OK, "%s:%d: '%s' formats as '%s', which fails: %s", path, lineno, desc, text,
                  convsel_last_error());
        if (st == CONVSEL_OK)
            CHECK_MSG(same_problem(&p, &q), "%s:%d: '%s' -> '%s' parses to a different problem", path, lineno,
                      desc, text);
        /* Every parsed layer is valid and has work to do. */
        CHECK_EQ(convsel_problem_validate(&p), CONVSEL_OK);
        CHECK(convsel_problem_flops(&p) > 0);
        CHECK(p.repeat >= 1);
    }
    fclose(f);
    CHECK_MSG(in_file > 0, "%s: no layers", path);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

int main(void)
{
    char dir[1024] = "";
    const char *env = getenv("CONVSEL_NETWORKS_CORPUS");
    if (env && *env)
        snprintf(dir, sizeof dir, "%s", env);
    else if (is_dir(CONVSEL_SOURCE_DIR "/../shared/networks"))
        snprintf(dir, sizeof dir, "%s", CONVSEL_SOURCE_DIR "/../shared/networks");
    else if (is_dir(CONVSEL_SOURCE_DIR "/shared/networks"))
        snprintf(dir, sizeof dir, "%s", CONVSEL_SOURCE_DIR "/shared/networks");
    if (!*dir || !is_dir(dir)) {
        printf("skipped: no network corpus (set CONVSEL_NETWORKS_CORPUS or place it in ../shared/networks)\n");
        return SKIP_CODE;
    }

    DIR *d = opendir(dir);
    CHECK(d != NULL);
    if (!d)
        return CHECK_DONE();
    char *names[256];
    size_t count = 0;
    for (struct dirent *e; (e = readdir(d)) != NULL && count < 256;) {
        size_t len = strlen(e->d_name);
        if (len > 4 && strcmp(e->d_name + len - 4, ".txt") == 0)
            names[count++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, count, sizeof names[0], by_name);
    for (size_t i = 0; i < count; i++) {
        char path[2048];
        snprintf(path, sizeof path, "%s/%s", dir, names[i]);
        check_file(path);
        free(names[i]);
    }

    printf("%s: %d files, %d 2D layers round-tripped, %d 1D/3D layers rejected\n", dir, count_files, count_2d,
           count_other);
    /* oneDNN's inputs hold 18 files of about 540 layers, most of them 2D. */
    CHECK_MSG(count_files >= 10, "only %d network files", count_files);
    CHECK_MSG(count_2d > 400, "only %d 2D layers", count_2d);
    CHECK_MSG(count_other > 0 && count_other < count_2d, "%d 1D/3D layers", count_other);
    return CHECK_DONE();
}
