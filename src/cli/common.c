/* Option parsing and loading shared by the subcommands. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "cli.h"

int cli_is_help(const char *arg)
{
    return strcmp(arg, "--help") == 0 || strcmp(arg, "-h") == 0;
}

int cli_status_exit(convsel_status st)
{
    switch (st) {
    case CONVSEL_OK:
        return CLI_OK;
    case CONVSEL_PARSE_ERROR:
    case CONVSEL_UNSUPPORTED:
    case CONVSEL_INVALID_ARGUMENT:
    case CONVSEL_TOO_LARGE:
        return CLI_USAGE;
    default:
        return CLI_FAIL;
    }
}

int cli_fail(const char *cmd, convsel_status st)
{
    fprintf(stderr, "convsel %s: %s\n", cmd, convsel_last_error()[0] ? convsel_last_error() : convsel_status_str(st));
    return cli_status_exit(st);
}

static int writable_dir(const char *cmd, const char *opt, const char *dir)
{
    struct stat sb;
    if (stat(dir, &sb) != 0) {
        fprintf(stderr, "convsel %s: %s: no directory '%s' (%s)\n", cmd, opt, dir, strerror(errno));
        return CLI_USAGE;
    }
    if (!S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "convsel %s: %s: '%s' is not a directory\n", cmd, opt, dir);
        return CLI_USAGE;
    }
    if (access(dir, W_OK | X_OK) != 0) {
        fprintf(stderr, "convsel %s: %s: cannot write into '%s' (%s)\n", cmd, opt, dir, strerror(errno));
        return CLI_USAGE;
    }
    return CLI_OK;
}

int cli_check_output(const char *cmd, const char *opt, const char *path)
{
    struct stat sb;
    if (!path[0]) {
        fprintf(stderr, "convsel %s: %s: an empty path\n", cmd, opt);
        return CLI_USAGE;
    }
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
        fprintf(stderr, "convsel %s: %s: '%s' is a directory, not a file\n", cmd, opt, path);
        return CLI_USAGE;
    }
    char dir[4096];
    const char *slash = strrchr(path, '/');
    if (!slash)
        snprintf(dir, sizeof dir, ".");
    else if (slash == path)
        snprintf(dir, sizeof dir, "/");
    else if ((size_t)(slash - path) < sizeof dir)
        snprintf(dir, sizeof dir, "%.*s", (int)(slash - path), path);
    else {
        fprintf(stderr, "convsel %s: %s: the path is too long\n", cmd, opt);
        return CLI_USAGE;
    }
    return writable_dir(cmd, opt, dir);
}

int cli_prepare_dir(const char *cmd, const char *opt, const char *dir)
{
    if (!dir[0]) {
        fprintf(stderr, "convsel %s: %s: an empty path\n", cmd, opt);
        return CLI_USAGE;
    }
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "convsel %s: %s: cannot create the directory '%s' (%s)\n", cmd, opt, dir, strerror(errno));
        return CLI_USAGE;
    }
    return writable_dir(cmd, opt, dir);
}

int cli_parse_long(const char *cmd, const char *opt, const char *text, long lo, long hi, long *value)
{
    char *end;
    errno = 0;
    long v = text ? strtol(text, &end, 10) : 0;
    if (!text || end == text || *end || errno || v < lo || v > hi) {
        fprintf(stderr, "convsel %s: %s needs an integer in [%ld, %ld] (got '%s')\n", cmd, opt, lo, hi,
                text ? text : "nothing");
        return 0;
    }
    *value = v;
    return 1;
}

int cli_parse_double(const char *cmd, const char *opt, const char *text, double lo, double hi, double *value)
{
    char *end;
    errno = 0;
    double v = text ? strtod(text, &end) : 0.0;
    if (!text || end == text || *end || errno || !(v >= lo) || !(v <= hi)) {
        fprintf(stderr, "convsel %s: %s needs a number in [%g, %g] (got '%s')\n", cmd, opt, lo, hi,
                text ? text : "nothing");
        return 0;
    }
    *value = v;
    return 1;
}

const char *cli_value(const char *cmd, int argc, char **argv, int *i)
{
    if (*i + 1 >= argc) {
        fprintf(stderr, "convsel %s: %s needs a value\n", cmd, argv[*i]);
        return NULL;
    }
    return argv[++*i];
}

int cli_load_network(const char *cmd, const char *net_file, const char *desc, long mb, convsel_network **net)
{
    convsel_status st;
    if (net_file && desc) {
        fprintf(stderr, "convsel %s: give either a descriptor or --net FILE, not both\n", cmd);
        return CLI_USAGE;
    }
    if (!net_file && !desc) {
        fprintf(stderr, "convsel %s: a descriptor or --net FILE is required\n", cmd);
        return CLI_USAGE;
    }
    size_t skipped = 0;
    st = net_file ? convsel_network_load_supported(net_file, mb, net, &skipped)
                  : convsel_network_from_desc(desc, mb, net);
    if (st != CONVSEL_OK)
        return cli_fail(cmd, st);
    if (skipped)
        fprintf(stderr, "convsel %s: %s: skipped %zu 1D/3D layer%s (convsel computes 2D convolutions only)\n", cmd,
                net_file, skipped, skipped == 1 ? "" : "s");
    return CLI_OK;
}

int cli_parse_primitive_set(const char *cmd, const char *list, unsigned char *mask)
{
    char *copy = strdup(list);
    if (!copy) {
        fprintf(stderr, "convsel %s: out of memory\n", cmd);
        return CLI_FAIL;
    }
    int rc = CLI_OK;
    for (char *save = NULL, *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
        int found = 0;
        for (size_t i = 0; i < convsel_primitive_count(); i++) {
            if (strcmp(convsel_primitive_name(i), name) == 0 || strcmp(convsel_primitive_family(i), name) == 0) {
                mask[i] = 1;
                found = 1;
            }
        }
        if (!found) {
            fprintf(stderr, "convsel %s: unknown primitive or family '%s' (see 'convsel primitives')\n", cmd, name);
            rc = CLI_USAGE;
            break;
        }
    }
    free(copy);
    return rc;
}

double cli_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

void cli_shape_desc(const convsel_problem *problem, char *buf, size_t size)
{
    convsel_problem shape = *problem;
    shape.name[0] = '\0';
    shape.repeat = 1;
    convsel_problem_format(&shape, buf, size);
}

void cli_json_string(const char *s)
{
    putchar('"');
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        switch (*c) {
        case '"': fputs("\\\"", stdout); break;
        case '\\': fputs("\\\\", stdout); break;
        case '\n': fputs("\\n", stdout); break;
        case '\r': fputs("\\r", stdout); break;
        case '\t': fputs("\\t", stdout); break;
        default:
            if (*c < 0x20)
                printf("\\u%04x", *c);
            else
                putchar(*c);
        }
    }
    putchar('"');
}

void cli_csv_field(FILE *out, const char *s)
{
    if (strpbrk(s, ",\"\n\r") == NULL) {
        fputs(s, out);
        return;
    }
    fputc('"', out);
    for (; *s; s++) {
        if (*s == '"')
            fputc('"', out);
        fputc(*s, out);
    }
    fputc('"', out);
}

void cli_kept_name(const convsel_check_report *report, char *buf, size_t size)
{
    if (report->kept == CONVSEL_KEPT_WITHOUT_FAMILY)
        snprintf(buf, size, "plan without the %s family", report->kept_without);
    else
        snprintf(buf, size, "%s", convsel_kept_plan_name(report->kept));
}

void cli_without_times(const convsel_check_report *report, const char *unit, char *buf, size_t size)
{
    size_t len = 0;
    if (size)
        buf[0] = '\0';
    for (size_t a = 0; a < report->n_without && len < size; a++) {
        int w = snprintf(buf + len, size - len, " / %.3f%s (without %s)", report->without[a].ms, unit,
                         report->without[a].family);
        if (w < 0)
            break;
        len += (size_t)w;
    }
}

int cli_plan_matches(const convsel_plan *plan, const convsel_network *net, const char *cmd)
{
    size_t k = 0;
    for (size_t l = 0; l < convsel_network_size(net); l++) {
        const convsel_problem *p = convsel_network_layer(net, l);
        for (int r = 0; r < p->repeat; r++, k++) {
            if (k >= plan->n_layers)
                return 0;
            convsel_problem a = *p, b = plan->layers[k].problem;
            a.repeat = b.repeat = 1;
            a.name[0] = b.name[0] = '\0';
            if (memcmp(&a, &b, sizeof a) != 0) {
                if (cmd)
                    fprintf(stderr, "convsel %s: layer %zu of the plan is not layer %zu of the network\n", cmd, k + 1,
                            l + 1);
                return 0;
            }
        }
    }
    return k == plan->n_layers;
}

void cli_network_stem(const char *path, char *buf, size_t size)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    size_t n = strlen(base);
    if (n > 4 && strcmp(base + n - 4, ".txt") == 0)
        n -= 4;
    snprintf(buf, size, "%.*s", (int)n, base);
}

int cli_gather_networks(const char *cmd, const char *const *args, size_t n_args, char ***files, size_t *n_files,
                        int *batch)
{
    *files = NULL;
    *n_files = 0;
    *batch = n_args > 1;
    for (size_t a = 0; a < n_args; a++) {
        char **some;
        size_t n;
        convsel_status st = convsel_network_files(args[a], &some, &n);
        if (st != CONVSEL_OK)
            return cli_fail(cmd, st);
        if (n != 1 || strcmp(some[0], args[a]) != 0) { /* a directory */
            *batch = 1;
            if (!n)
                fprintf(stderr, "convsel %s: --net %s: a directory without network files (*.txt)\n", cmd, args[a]);
        }
        char **all = n ? realloc(*files, (*n_files + n) * sizeof *all) : *files;
        if (n && !all) {
            convsel_network_files_free(some, n);
            fprintf(stderr, "convsel %s: out of memory\n", cmd);
            return CLI_FAIL;
        }
        *files = all;
        if (n)
            memcpy(all + *n_files, some, n * sizeof *some);
        *n_files += n;
        free(some); /* the names now belong to *files */
    }
    if (!*n_files) {
        fprintf(stderr, "convsel %s: no network file in the --net arguments\n", cmd);
        return CLI_USAGE;
    }
    return CLI_OK;
}

convsel_status cli_single_plan(const convsel_network *net, int threads, size_t primitive,
                               const convsel_cost_source *costs, convsel_plan **plan)
{
    size_t np = convsel_primitive_count();
    unsigned char *excluded = malloc(np);
    if (!excluded)
        return CONVSEL_OUT_OF_MEMORY;
    for (size_t i = 0; i < np; i++)
        excluded[i] = i != primitive;
    convsel_select_options opts = {threads, 0.0, excluded, 0, 0};
    convsel_status st = convsel_select(net, &opts, costs, plan);
    free(excluded);
    return st;
}
