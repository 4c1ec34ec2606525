/* convsel profile: measure configurations into a dataset file. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include "cli.h"

#define CMD "profile"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: convsel profile [--net FILE ...] [--sample N [--sample-from FILE|DIR ...] [--seed S]]\n"
            "                       [--mb LIST] [--threads LIST] [--primitives LIST] [--max-time-s S]\n"
            "                       [--budget-s S] [--shard I/N] [--resume | --force] [--no-reorders]\n"
            "                       [--quiet] -o FILE\n"
            "       convsel profile --redo FILE [--redo-ratio R] [--threads LIST] [options] -o OUT\n"
            "\n"
            "Measures every selected primitive on each configuration (a layer shape at a thread\n"
            "count), interleaved, plus the reorders between the layouts they use, and appends the\n"
            "records to FILE (docs/dataset-format.md), flushed after each configuration.\n"
            "\n"
            "  --net FILE         profile the distinct layers of a network file (repeatable)\n"
            "  --mb LIST          batch sizes for the --net layers, e.g. 1,8 (default: the file's)\n"
            "  --sample N         add N sampled configurations (docs/sampling.md)\n"
            "  --sample-from P    network file or directory of *.txt whose layers are perturbed\n"
            "                     (repeatable; the --net files are used too; none: random only)\n"
            "  --seed S           the sample's seed (default 1)\n"
            "  --threads LIST     thread counts, e.g. 1,2 (default 1)\n"
            "  --primitives LIST  primitives or families to measure (default: all but the reference)\n"
            "  --max-time-s S     timing cap per configuration measurement (default 2)\n"
            "  --warmup-s S       warm-up per primitive before timing (default 0.05)\n"
            "  --retry-ratio R    measure a configuration once more when a median comes out over R x\n"
            "                     its minimum, keep the less disturbed one (default 3; 0: never)\n"
            "  --budget-s S       stop before a configuration that would end past S seconds\n"
            "  --shard I/N        only this shard (0 <= I < N) of the configurations, chosen by a hash\n"
            "                     of the layer descriptor: stable whatever the order of the inputs\n"
            "  --resume           continue FILE: skip the configurations already in it\n"
            "  --force            replace FILE if it exists (default: refuse)\n"
            "  --no-reorders      do not time reorders\n"
            "  --quiet            no progress on stderr\n"
            "  --redo FILE        measure again, each at its own thread count, the configurations of\n"
            "                     FILE (measured on this CPU and cap) that have a convolution record\n"
            "                     whose median is over R x its minimum: disturbed by other load. With\n"
            "                     --threads, only those thread counts; reorders are timed when FILE has\n"
            "                     any. Then 'convsel dataset merge -o CLEAN OUT FILE' puts the new\n"
            "                     records in place of the old (merge keeps the first)\n"
            "  --redo-ratio R     (default 3)\n"
            "\n"
            "Ctrl-C (SIGINT) or SIGTERM stops after the configuration in flight (a second one\n"
            "abandons it), keeps every record written and prints the command that resumes.\n"
            "Exit status: 0 when every configuration of the shard is done or --budget-s ended the\n"
            "run (the resume command is printed), 1 when interrupted by a signal, when a\n"
            "configuration failed (rerun with --resume to retry it) or on errors, 2 on usage errors.\n");
}

/* ---------------------------------------------------------------- signals */

static volatile sig_atomic_t stop_requested;
static char abandon_text[8192];
static size_t abandon_len;

static void on_signal(int sig)
{
    static const char first[] =
        "\nconvsel profile: stopping after the configuration in flight (signal again to abandon it)\n";
    (void)sig;
    if (stop_requested) {
        /* The file holds only flushed, whole configurations: leaving now
         * loses the one in flight and nothing else. */
        ssize_t ignored = write(STDERR_FILENO, abandon_text, abandon_len);
        (void)ignored;
        _exit(CLI_FAIL);
    }
    stop_requested = 1;
    ssize_t ignored = write(STDERR_FILENO, first, sizeof first - 1);
    (void)ignored;
}

/* ---------------------------------------------------------------- the resume command */

static void append_quoted(char *buf, size_t size, const char *arg)
{
    size_t used = strlen(buf);
    if (used + 1 >= size)
        return;
    if (used)
        buf[used++] = ' ', buf[used] = '\0';
    if (*arg && strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./:=,+-@%") ==
                    strlen(arg)) {
        snprintf(buf + used, size - used, "%s", arg);
        return;
    }
    char *out = buf + used, *end = buf + size - 1;
    if (out < end)
        *out++ = '\'';
    for (; *arg && out < end; arg++) {
        if (*arg == '\'') {
            for (const char *q = "'\\''"; *q && out < end; q++)
                *out++ = *q;
        } else {
            *out++ = *arg;
        }
    }
    if (out < end)
        *out++ = '\'';
    *out = '\0';
}

/* The same command with --resume (and without --force). main() has taken
 * --isa out of argv and left the cap in CONVSEL_ISA: it goes back in, since
 * resuming needs the file's fingerprint, cap and OpenBLAS kernels included. */
static void resume_command(int argc, char **argv, char *buf, size_t size)
{
    const char *isa = getenv("CONVSEL_ISA");
    buf[0] = '\0';
    append_quoted(buf, size, "convsel");
    if (isa && *isa) {
        append_quoted(buf, size, "--isa");
        append_quoted(buf, size, isa);
    }
    int has_resume = 0;
    for (int i = 0; i < argc; i++) {
        if (strcmp(argv[i], "--force") == 0)
            continue;
        has_resume |= strcmp(argv[i], "--resume") == 0;
        append_quoted(buf, size, argv[i]);
    }
    if (!has_resume)
        append_quoted(buf, size, "--resume");
}

/* ---------------------------------------------------------------- progress */

struct progress_state {
    int tty, quiet;
    double last_line;
};

static void format_duration(double s, char *buf, size_t size)
{
    if (!(s >= 0.0) || s > 1e7)
        snprintf(buf, size, "?");
    else if (s >= 3600)
        snprintf(buf, size, "%dh%02dm", (int)(s / 3600), (int)(s / 60) % 60);
    else if (s >= 60)
        snprintf(buf, size, "%dm%02ds", (int)(s / 60), (int)s % 60);
    else
        snprintf(buf, size, "%.0fs", s);
}

static void on_progress(const convsel_profile_progress *p, void *ctx)
{
    struct progress_state *ps = ctx;
    if (p->message) {
        fprintf(stderr, "%sconvsel profile: warning: %s\n", ps->tty ? "\r\033[K" : "", p->message);
        return;
    }
    if (ps->quiet)
        return;
    const size_t finished = p->done + p->failed;
    const double rate = p->elapsed_s > 0.0 ? (double)finished / p->elapsed_s : 0.0;
    char eta[32];
    format_duration(rate > 0.0 ? (double)(p->total - finished) / rate : -1.0, eta, sizeof eta);
    if (ps->tty) {
        char bar[31];
        const size_t width = sizeof bar - 1;
        const size_t filled = p->total ? finished * width / p->total : width;
        for (size_t k = 0; k < width; k++)
            bar[k] = k < filled ? '#' : '.';
        bar[width] = '\0';
        char desc[96] = "";
        if (p->current) {
            char full[512];
            convsel_problem_format(p->current, full, sizeof full);
            snprintf(desc, sizeof desc, " t%d %.80s", p->threads, full);
        }
        /* One line that \r can take back: cut to the terminal's width. */
        char line[512];
        struct winsize ws;
        size_t cols = ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col > 20 ? ws.ws_col : 80;
        snprintf(line, sizeof line, "[%s] %zu/%zu  %.2f/s  ETA %s  %zu records%s", bar, finished, p->total, rate, eta,
                 p->records, desc);
        if (strlen(line) >= cols)
            line[cols - 1] = '\0';
        fprintf(stderr, "\r\033[K%s", line);
        fflush(stderr);
        return;
    }
    /* Not a terminal (a log file, a batch job): a line every ~10 s. */
    if (p->current || p->elapsed_s - ps->last_line < 10.0)
        return;
    ps->last_line = p->elapsed_s;
    fprintf(stderr, "convsel profile: %zu/%zu configurations, %zu records, %.2f/s, ETA %s\n", finished, p->total,
            p->records, rate, eta);
}

/* ---------------------------------------------------------------- options */

/* A comma-separated list of integers in [lo, hi]; returns the count, 0 on error. */
static size_t parse_int_list(const char *opt, const char *text, long lo, long hi, int *out, size_t max)
{
    char item[64];
    size_t n = 0;
    for (const char *s = text; *s;) {
        size_t len = strcspn(s, ",");
        if (len == 0 || len >= sizeof item || n == max) {
            fprintf(stderr, "convsel " CMD ": %s: bad list '%s' (e.g. 1,2,4; at most %zu values)\n", opt, text,
                    max);
            return 0;
        }
        memcpy(item, s, len);
        item[len] = '\0';
        long v;
        if (!cli_parse_long(CMD, opt, item, lo, hi, &v))
            return 0;
        out[n++] = (int)v;
        s += len + (s[len] == ',');
    }
    if (n == 0)
        fprintf(stderr, "convsel " CMD ": %s needs at least one value\n", opt);
    return n;
}

static int parse_shard(const char *text, unsigned *index, unsigned *count)
{
    char *end;
    unsigned long i = strtoul(text, &end, 10), n;
    if (end == text || *end != '/')
        goto bad;
    const char *rest = end + 1;
    n = strtoul(rest, &end, 10);
    if (end == rest || *end || n < 1 || n > 1000000 || i >= n)
        goto bad;
    *index = (unsigned)i;
    *count = (unsigned)n;
    return 1;
bad:
    fprintf(stderr, "convsel " CMD ": --shard needs I/N with 0 <= I < N (got '%s'); with a Slurm array use "
                    "--array=0-(N-1)\n", text);
    return 0;
}

struct problem_list {
    convsel_problem *items;
    size_t count, capacity;
};

static int list_push(struct problem_list *list, const convsel_problem *p)
{
    if (list->count == list->capacity) {
        size_t cap = list->capacity ? 2 * list->capacity : 64;
        convsel_problem *items = realloc(list->items, cap * sizeof *items);
        if (!items) {
            fprintf(stderr, "convsel " CMD ": out of memory\n");
            return 0;
        }
        list->items = items;
        list->capacity = cap;
    }
    list->items[list->count++] = *p;
    return 1;
}

/* The layers of one network at batch mb (0: the file's); nameless layers are
 * named after the network and their position, so datasets can be split by
 * network. */
static int add_network(const char *path, long mb, struct problem_list *list)
{
    convsel_network *net;
    size_t skipped = 0;
    convsel_status st = convsel_network_load_supported(path, mb, &net, &skipped);
    if (st != CONVSEL_OK)
        return cli_fail(CMD, st);
    if (skipped)
        fprintf(stderr, "convsel " CMD ": %s: skipped %zu 1D/3D layer%s (2D convolutions only)\n", path, skipped,
                skipped == 1 ? "" : "s");
    for (size_t i = 0; i < convsel_network_size(net); i++) {
        convsel_problem p = *convsel_network_layer(net, i);
        if (!p.name[0])
            snprintf(p.name, sizeof p.name, "%.100s:%zu", convsel_network_name(net), i + 1);
        if (!list_push(list, &p)) {
            convsel_network_destroy(net);
            return CLI_FAIL;
        }
    }
    convsel_network_destroy(net);
    return CLI_OK;
}

static int add_samples(long n, uint64_t seed, const char **nets, size_t n_nets, const char **from, size_t n_from,
                       struct problem_list *list)
{
    convsel_sampler_options so;
    convsel_sampler_options_default(&so);
    so.seed = seed;
    convsel_sampler *sampler;
    convsel_status st = convsel_sampler_create(&so, &sampler);
    for (size_t i = 0; i < n_nets && st == CONVSEL_OK; i++)
        st = convsel_sampler_add_file(sampler, nets[i], NULL);
    for (size_t i = 0; i < n_from && st == CONVSEL_OK; i++)
        st = convsel_sampler_add_file(sampler, from[i], NULL);
    for (long k = 0; k < n && st == CONVSEL_OK; k++) {
        convsel_problem p;
        st = convsel_sampler_next(sampler, &p);
        if (st == CONVSEL_OK && !list_push(list, &p))
            st = CONVSEL_OUT_OF_MEMORY;
    }
    convsel_sampler_destroy(sampler);
    return st == CONVSEL_OK ? CLI_OK : cli_fail(CMD, st);
}

/* The configurations of FILE to measure again (--redo), at the thread counts
 * in keep (all when n_keep is 0), grouped by thread count in order of first
 * appearance: each group is one profile run. */
static int add_redo(const char *path, double ratio, const int *keep, size_t n_keep, struct problem_list *list,
                    int **threads, int *has_reorders)
{
    convsel_dataset *ds;
    convsel_status st = convsel_dataset_load(path, &ds);
    if (st != CONVSEL_OK)
        return cli_fail(CMD, st);
    if (convsel_dataset_warning(ds)[0])
        fprintf(stderr, "convsel " CMD ": warning: %s\n", convsel_dataset_warning(ds));
    convsel_fingerprint cpu;
    convsel_problem *problems = NULL;
    int *t = NULL;
    size_t n = 0, elsewhere = 0;
    if ((st = convsel_fingerprint_get(&cpu)) == CONVSEL_OK)
        st = convsel_dataset_disturbed(ds, ratio, &cpu, &problems, &t, &n, &elsewhere);
    *has_reorders = 0;
    for (size_t i = 0; i < convsel_dataset_size(ds) && !*has_reorders; i++)
        *has_reorders = convsel_dataset_record(ds, i)->kind == CONVSEL_RECORD_REORDER;
    convsel_dataset_destroy(ds);
    if (st != CONVSEL_OK)
        return cli_fail(CMD, st);
    if (elsewhere)
        fprintf(stderr,
                "convsel " CMD ": %s: %zu disturbed configuration%s measured on another CPU, ISA cap or library "
                "version left out (measure them there)\n",
                path, elsewhere, elsewhere == 1 ? "" : "s");
    size_t kept = 0;
    int rc = CLI_OK;
    *threads = malloc((n ? n : 1) * sizeof **threads);
    if (!*threads) {
        fprintf(stderr, "convsel " CMD ": out of memory\n");
        rc = CLI_FAIL;
    }
    for (size_t g = 0; g < n && rc == CLI_OK; g++) {
        int first_of_group = 1, wanted = n_keep == 0;
        for (size_t i = 0; i < g; i++)
            first_of_group &= t[i] != t[g];
        for (size_t k = 0; k < n_keep; k++)
            wanted |= keep[k] == t[g];
        for (size_t i = g; i < n && rc == CLI_OK && first_of_group && wanted; i++) {
            if (t[i] != t[g])
                continue;
            if (!list_push(list, &problems[i]))
                rc = CLI_FAIL;
            else
                (*threads)[kept++] = t[i];
        }
    }
    free(problems);
    free(t);
    return rc;
}

#define MAX_LIST 64
#define MAX_FILES 256

int cmd_profile(int argc, char **argv)
{
    const char *nets[MAX_FILES], *from[MAX_FILES], *output = NULL;
    size_t n_nets = 0, n_from = 0, n_mb = 0, n_threads = 0;
    int mbs[MAX_LIST], threads[MAX_LIST], quiet = 0, resume_flag = 0, force_flag = 0;
    long n_samples = 0, seed = 1;
    const char *primitives = NULL, *redo = NULL;
    double redo_ratio = 3.0;
    convsel_profile_options opts;
    convsel_profile_options_default(&opts);

    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = NULL;
        if (cli_is_help(a)) {
            usage(stdout);
            return CLI_OK;
        }
        int takes_value = strcmp(a, "--net") == 0 || strcmp(a, "--sample") == 0 || strcmp(a, "--sample-from") == 0 ||
                          strcmp(a, "--seed") == 0 || strcmp(a, "--mb") == 0 || strcmp(a, "--threads") == 0 ||
                          strcmp(a, "--primitives") == 0 || strcmp(a, "--max-time-s") == 0 || strcmp(a, "--warmup-s") == 0 ||
                          strcmp(a, "--budget-s") == 0 || strcmp(a, "--shard") == 0 || strcmp(a, "-o") == 0 ||
                          strcmp(a, "--redo") == 0 || strcmp(a, "--redo-ratio") == 0 || strcmp(a, "--retry-ratio") == 0;
        if (takes_value && !(v = cli_value(CMD, argc, argv, &i)))
            return CLI_USAGE;
        if (strcmp(a, "--net") == 0 || strcmp(a, "--sample-from") == 0) {
            if ((a[2] == 'n' ? n_nets : n_from) == MAX_FILES) {
                fprintf(stderr, "convsel " CMD ": more than %d %s files\n", MAX_FILES, a);
                return CLI_USAGE;
            }
            if (a[2] == 'n')
                nets[n_nets++] = v;
            else
                from[n_from++] = v;
        } else if (strcmp(a, "--sample") == 0) {
            if (!cli_parse_long(CMD, a, v, 0, 10000000, &n_samples))
                return CLI_USAGE;
        } else if (strcmp(a, "--seed") == 0) {
            if (!cli_parse_long(CMD, a, v, 0, 0x7fffffffL, &seed))
                return CLI_USAGE;
        } else if (strcmp(a, "--mb") == 0) {
            if (!(n_mb = parse_int_list(a, v, 1, 100000, mbs, MAX_LIST)))
                return CLI_USAGE;
        } else if (strcmp(a, "--threads") == 0) {
            if (!(n_threads = parse_int_list(a, v, 1, 4096, threads, MAX_LIST)))
                return CLI_USAGE;
        } else if (strcmp(a, "--primitives") == 0) {
            primitives = v;
        } else if (strcmp(a, "--max-time-s") == 0) {
            if (!cli_parse_double(CMD, a, v, 0.0, 3600.0, &opts.timing.max_time_s))
                return CLI_USAGE;
        } else if (strcmp(a, "--warmup-s") == 0) {
            if (!cli_parse_double(CMD, a, v, 0.0, 60.0, &opts.timing.warmup_s))
                return CLI_USAGE;
        } else if (strcmp(a, "--budget-s") == 0) {
            if (!cli_parse_double(CMD, a, v, 0.0, 1e9, &opts.budget_s))
                return CLI_USAGE;
        } else if (strcmp(a, "--shard") == 0) {
            if (!parse_shard(v, &opts.shard_index, &opts.shard_count))
                return CLI_USAGE;
        } else if (strcmp(a, "-o") == 0) {
            output = v;
        } else if (strcmp(a, "--retry-ratio") == 0) {
            if (!cli_parse_double(CMD, a, v, 0.0, 1e6, &opts.timing.retry_ratio))
                return CLI_USAGE;
            if (opts.timing.retry_ratio > 0.0 && opts.timing.retry_ratio < 1.0) {
                fprintf(stderr, "convsel " CMD ": --retry-ratio must be 0 (never) or at least 1 (got %s)\n", v);
                return CLI_USAGE;
            }
        } else if (strcmp(a, "--redo") == 0) {
            redo = v;
        } else if (strcmp(a, "--redo-ratio") == 0) {
            if (!cli_parse_double(CMD, a, v, 0.0, 1e6, &redo_ratio))
                return CLI_USAGE;
        } else if (strcmp(a, "--resume") == 0) {
            resume_flag = 1;
        } else if (strcmp(a, "--force") == 0) {
            force_flag = 1;
        } else if (strcmp(a, "--no-reorders") == 0) {
            opts.reorders = 0;
        } else if (strcmp(a, "--quiet") == 0) {
            quiet = 1;
        } else {
            fprintf(stderr, "convsel " CMD ": unknown option '%s' (see --help)\n", a);
            return CLI_USAGE;
        }
    }
    if (!output) {
        fprintf(stderr, "convsel " CMD ": -o FILE is required\n");
        return CLI_USAGE;
    }
    if (redo && (n_nets || n_samples)) {
        fprintf(stderr, "convsel " CMD ": --redo takes its configurations from its file: no --net or --sample\n");
        return CLI_USAGE;
    }
    if (redo && opts.shard_count > 1) {
        fprintf(stderr, "convsel " CMD ": --redo measures one file's few configurations: no --shard\n");
        return CLI_USAGE;
    }
    if (!redo && n_nets == 0 && n_samples == 0) {
        fprintf(stderr, "convsel " CMD ": nothing to profile: give --net FILE and/or --sample N (or --redo FILE)\n");
        return CLI_USAGE;
    }
    if (resume_flag && force_flag) {
        fprintf(stderr, "convsel " CMD ": --resume and --force contradict each other\n");
        return CLI_USAGE;
    }
    opts.mode = resume_flag ? CONVSEL_WRITE_RESUME : force_flag ? CONVSEL_WRITE_TRUNCATE : CONVSEL_WRITE_CREATE;

    unsigned char *selected = NULL;
    if (primitives) {
        selected = calloc(convsel_primitive_count() ? convsel_primitive_count() : 1, 1);
        if (!selected)
            return CLI_FAIL;
        int rc = cli_parse_primitive_set(CMD, primitives, selected);
        if (rc != CLI_OK) {
            free(selected);
            return rc;
        }
        opts.selected = selected;
    }

    struct problem_list list = {0};
    int *redo_threads = NULL, redo_reorders = 0;
    int rc = CLI_OK;
    for (size_t i = 0; i < n_nets && rc == CLI_OK; i++)
        for (size_t m = 0; m < (n_mb ? n_mb : 1) && rc == CLI_OK; m++)
            rc = add_network(nets[i], n_mb ? mbs[m] : 0, &list);
    if (rc == CLI_OK && n_samples > 0)
        rc = add_samples(n_samples, (uint64_t)seed, nets, n_nets, from, n_from, &list);
    if (rc == CLI_OK && redo)
        rc = add_redo(redo, redo_ratio, threads, n_threads, &list, &redo_threads, &redo_reorders);
    if (rc == CLI_OK && redo && list.count == 0) {
        fprintf(stderr, "convsel " CMD ": %s: no configuration with a median over %g x its minimum%s: nothing to "
                        "measure again, %s not written\n",
                redo, redo_ratio, n_threads ? " at those thread counts" : "", output);
        free(list.items);
        free(redo_threads);
        free(selected);
        return CLI_OK;
    }
    if (rc != CLI_OK) {
        free(list.items);
        free(redo_threads);
        free(selected);
        return rc;
    }
    if (redo) {
        opts.reorders &= redo_reorders;
        if (!quiet)
            fprintf(stderr, "convsel " CMD ": measuring again %zu configuration%s of %s (a median over %g x its "
                            "minimum)%s\n",
                    list.count, list.count == 1 ? "" : "s", redo, redo_ratio, opts.reorders ? ", with reorders" : "");
    }

    struct progress_state ps = {.tty = isatty(STDERR_FILENO), .quiet = quiet, .last_line = 0.0};
    opts.progress = on_progress;
    opts.progress_ctx = &ps;
    opts.stop = (const volatile int *)&stop_requested;

    char resume[sizeof abandon_text - 256];
    resume_command(argc, argv, resume, sizeof resume);
    abandon_len = (size_t)snprintf(abandon_text, sizeof abandon_text,
                                   "\nconvsel profile: abandoned the configuration in flight; every earlier one is in "
                                   "%s.\nresume with: %s\n",
                                   output, resume);
    if (abandon_len >= sizeof abandon_text)
        abandon_len = sizeof abandon_text - 1;
    struct sigaction sa, old_int, old_term;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);

    /* One run, or with --redo one per thread count (each configuration at its
     * own), the later ones appending to the file the first one opened; the
     * budget is the whole command's. */
    convsel_profile_result res;
    memset(&res, 0, sizeof res);
    const double t0 = cli_now(), budget = opts.budget_s;
    convsel_status st = CONVSEL_OK;
    size_t first = 0;
    do {
        convsel_problem *items = list.items;
        size_t n = list.count;
        int t = 0;
        if (redo) {
            t = redo_threads[first];
            n = 0;
            while (first + n < list.count && redo_threads[first + n] == t)
                n++;
            items = &list.items[first];
            opts.threads = &t;
            opts.n_threads = 1;
            if (first > 0)
                opts.mode = CONVSEL_WRITE_RESUME;
            if (budget > 0.0) {
                const double left = budget - (cli_now() - t0);
                opts.budget_s = left > 1e-9 ? left : 1e-9;
            }
        } else {
            opts.threads = n_threads ? threads : NULL;
            opts.n_threads = n_threads;
        }
        convsel_profile_result part;
        st = convsel_profile_run(items, n, &opts, output, &part);
        res.configs += part.configs;
        res.in_shard += part.in_shard;
        res.skipped += part.skipped;
        res.done += part.done;
        res.failed += part.failed;
        res.records += part.records;
        res.retried += part.retried;
        res.budget_reached |= part.budget_reached;
        res.interrupted |= part.interrupted;
        first += n;
    } while (redo && st == CONVSEL_OK && !res.budget_reached && !res.interrupted && first < list.count);
    const double elapsed = cli_now() - t0;
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    if (ps.tty && !quiet)
        fprintf(stderr, "\r\033[K");
    size_t listed = list.count;
    free(list.items);
    free(redo_threads);
    free(selected);

    if (st != CONVSEL_OK && st != CONVSEL_INTERRUPTED)
        return cli_fail(CMD, st);
    if (!quiet || res.interrupted || res.budget_reached || res.failed)
        fprintf(stderr,
                "convsel profile: %zu configurations profiled (%zu records, %zu measured twice) in %.1f s into %s; "
                "%zu already there, %zu failed, %zu in this shard of %zu\n",
                res.done, res.records, res.retried, elapsed, output, res.skipped, res.failed, res.in_shard,
                res.configs);
    if (res.interrupted || res.budget_reached) {
        fprintf(stderr, "convsel profile: %s with %zu configurations left; resume with:\n  %s\n",
                res.interrupted ? "interrupted" : "budget reached",
                (redo ? listed : res.in_shard) - res.skipped - res.done - res.failed, resume);
        return res.interrupted ? CLI_FAIL : CLI_OK;
    }
    if (res.failed) {
        fprintf(stderr, "convsel profile: %zu configurations failed (see the warnings); retry them with:\n  %s\n",
                res.failed, resume);
        return CLI_FAIL;
    }
    if (redo && !quiet)
        fprintf(stderr, "convsel profile: to put the new records in place of the old ones:\n  convsel dataset merge -o "
                        "CLEAN.msgpack %s %s\n",
                output, redo);
    return CLI_OK;
}
