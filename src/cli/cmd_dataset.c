/* convsel dataset: info, merge, export and split of profiling datasets. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

#define CMD "dataset"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: convsel dataset info [--json] FILE...\n"
            "       convsel dataset merge -o OUT FILE...\n"
            "       convsel dataset export --csv [-o OUT] FILE...\n"
            "       convsel dataset split --test-frac F [--seed S] [--by config|network] -o PREFIX FILE\n"
            "       convsel dataset filter [--threads LIST] [--primitives LIST] [--fingerprint LIST] -o OUT FILE\n"
            "\n"
            "info    records, configurations, primitives, ISA and CPU fingerprints of each file\n"
            "merge   one dataset from several: fingerprints deduplicated, duplicate measurements\n"
            "        (same configuration, primitive, layouts, fingerprint) dropped, first kept\n"
            "export  one CSV row per record (to stdout, or OUT)\n"
            "split   PREFIX-train.msgpack and PREFIX-test.msgpack, every record of a group on\n"
            "        one side: a group is a layer shape (--by config, the default) or a network\n"
            "        (--by network: the part of the layer name before ':')\n"
            "filter  the records measured at the given thread counts, of the given primitives and/or\n"
            "        under the given fingerprints (indexes as info lists them; only those are kept)\n"
            "        (reorders count as primitive 'reorder'), e.g. to drop a campaign's disturbed part\n"
            "        or to take one OpenBLAS setup out of a merged file\n");
}

static int load(const char *path, convsel_dataset **ds)
{
    convsel_status st = convsel_dataset_load(path, ds);
    if (st != CONVSEL_OK)
        return cli_fail(CMD, st);
    if (convsel_dataset_warning(*ds)[0])
        fprintf(stderr, "convsel " CMD ": warning: %s\n", convsel_dataset_warning(*ds));
    return CLI_OK;
}

/* ---------------------------------------------------------------- info */

static void json_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (; *s; s++) {
        unsigned char c = (unsigned char)*s;
        if (c == '"' || c == '\\')
            fprintf(out, "\\%c", c);
        else if (c < 0x20)
            fprintf(out, "\\u%04x", c);
        else
            fputc(c, out);
    }
    fputc('"', out);
}

/* The distinct values of a string-valued property, in order of appearance. */
struct names {
    char (*items)[32];
    size_t count;
};

static void names_add(struct names *n, const char *s, size_t max)
{
    for (size_t i = 0; i < n->count; i++)
        if (strcmp(n->items[i], s) == 0)
            return;
    if (n->count < max)
        snprintf(n->items[n->count++], sizeof n->items[0], "%s", s);
}

static void print_size(FILE *out, int64_t bytes)
{
    if (bytes >= (1 << 20) && bytes % (1 << 20) == 0)
        fprintf(out, "%lld MiB", (long long)(bytes >> 20));
    else
        fprintf(out, "%lld KiB", (long long)(bytes >> 10));
}

static void info_json(FILE *out, const char *path, const convsel_dataset *ds, const convsel_dataset_summary *s,
                      const struct names *prims, const struct names *isas, const int *threads, size_t n_threads)
{
    fprintf(out, "{\"file\": ");
    json_string(out, path);
    fprintf(out, ", \"records\": %zu, \"conv_records\": %zu, \"reorder_records\": %zu, \"configs\": %zu, "
                 "\"problems\": %zu, \"disturbed_records\": %zu, \"primitives\": [",
            s->records, s->conv_records, s->reorder_records, s->configs, s->problems, s->disturbed);
    for (size_t i = 0; i < prims->count; i++) {
        fprintf(out, "%s", i ? ", " : "");
        json_string(out, prims->items[i]);
    }
    fprintf(out, "], \"isa\": \"");
    for (size_t i = 0; i < isas->count; i++)
        fprintf(out, "%s%s", i ? "," : "", isas->items[i]);
    fprintf(out, "\", \"threads\": [");
    for (size_t i = 0; i < n_threads; i++)
        fprintf(out, "%s%d", i ? ", " : "", threads[i]);
    fprintf(out, "], \"fingerprints\": [");
    for (size_t i = 0; i < convsel_dataset_fingerprint_count(ds); i++) {
        const convsel_fingerprint *fp = convsel_dataset_fingerprint(ds, i);
        fprintf(out, "%s{\"vendor\": ", i ? ", " : "");
        json_string(out, fp->vendor);
        fprintf(out, ", \"model_name\": ");
        json_string(out, fp->model_name);
        fprintf(out, ", \"microarch\": ");
        json_string(out, fp->microarch);
        fprintf(out, ", \"isa_flags\": ");
        json_string(out, fp->isa_flags);
        fprintf(out, ", \"isa_cap\": \"%s\", \"cores\": %d, \"l1d_bytes\": %lld, \"l2_bytes\": %lld, "
                     "\"l3_bytes\": %lld, \"onednn_version\": ",
                convsel_isa_name(fp->isa_cap), fp->cores, (long long)fp->l1d_bytes, (long long)fp->l2_bytes,
                (long long)fp->l3_bytes);
        json_string(out, fp->onednn_version);
        fprintf(out, ", \"openblas_version\": ");
        json_string(out, fp->openblas_version);
        fprintf(out, "}");
    }
    fprintf(out, "], \"warning\": ");
    json_string(out, convsel_dataset_warning(ds));
    fprintf(out, "}");
}

static void info_text(FILE *out, const char *path, const convsel_dataset *ds, const convsel_dataset_summary *s,
                      const struct names *prims, const struct names *isas, const int *threads, size_t n_threads)
{
    fprintf(out, "%s: %zu records (%zu convolution, %zu reorder), %zu configurations, %zu layer shapes\n", path,
            s->records, s->conv_records, s->reorder_records, s->configs, s->problems);
    fprintf(out, "  primitives:");
    for (size_t i = 0; i < prims->count; i++)
        fprintf(out, "%s %s", i ? "," : "", prims->items[i]);
    fprintf(out, "\n  isa:");
    for (size_t i = 0; i < isas->count; i++)
        fprintf(out, "%s %s", i ? "," : "", isas->items[i]);
    fprintf(out, "\n  threads:");
    for (size_t i = 0; i < n_threads; i++)
        fprintf(out, "%s %d", i ? "," : "", threads[i]);
    fprintf(out, "\n");
    for (size_t i = 0; i < convsel_dataset_fingerprint_count(ds); i++) {
        const convsel_fingerprint *fp = convsel_dataset_fingerprint(ds, i);
        fprintf(out, "  fingerprint %zu: %s %s (%s), %d cores, ISA cap %s, L1d ", i, fp->vendor, fp->model_name,
                fp->microarch, fp->cores, convsel_isa_name(fp->isa_cap));
        print_size(out, fp->l1d_bytes);
        fprintf(out, ", L2 ");
        print_size(out, fp->l2_bytes);
        fprintf(out, ", L3 ");
        print_size(out, fp->l3_bytes);
        fprintf(out, "\n    flags: %s\n    oneDNN %s; %s\n", fp->isa_flags, fp->onednn_version, fp->openblas_version);
    }
    if (s->disturbed)
        fprintf(out, "  disturbed: %zu convolution record(s) with a median over %g x their minimum (more than half "
                     "their runs slowed by something else); measure them again on this machine with "
                     "'convsel profile --redo %s -o REDO' and merge REDO first\n",
                s->disturbed, CONVSEL_DISTURBED_RATIO, path);
    if (convsel_dataset_warning(ds)[0])
        fprintf(out, "  warning: %s\n", convsel_dataset_warning(ds));
}

static int cmd_info(int argc, char **argv)
{
    int json = 0, n_files = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--json") == 0)
            json = 1;
        else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "convsel " CMD " info: unknown option '%s'\n", argv[i]);
            return CLI_USAGE;
        } else
            n_files++;
    }
    if (n_files == 0) {
        fprintf(stderr, "convsel " CMD " info: no FILE given\n");
        return CLI_USAGE;
    }
    char prim_items[256][32], isa_items[CONVSEL_ISA_COUNT][32];
    int rc = CLI_OK, first = 1;
    if (json && n_files > 1)
        printf("[");
    for (int i = 1; i < argc; i++) {
        if (argv[i][0] == '-' && argv[i][1])
            continue;
        convsel_dataset *ds;
        convsel_status st = convsel_dataset_load(argv[i], &ds);
        if (st != CONVSEL_OK) {
            rc = cli_fail(CMD " info", st);
            continue;
        }
        convsel_dataset_summary s;
        convsel_dataset_summarize(ds, &s);
        struct names prims = {prim_items, 0}, isas = {isa_items, 0};
        int threads[64];
        size_t n_threads = 0;
        for (size_t r = 0; r < convsel_dataset_size(ds); r++) {
            const convsel_record *rec = convsel_dataset_record(ds, r);
            names_add(&prims, rec->primitive, 256);
            names_add(&isas, convsel_isa_name(rec->isa), CONVSEL_ISA_COUNT);
            size_t t = 0;
            while (t < n_threads && threads[t] != rec->threads)
                t++;
            if (t == n_threads && n_threads < 64)
                threads[n_threads++] = rec->threads;
        }
        if (json) {
            printf("%s", first ? "" : ",\n ");
            info_json(stdout, argv[i], ds, &s, &prims, &isas, threads, n_threads);
        } else {
            info_text(stdout, argv[i], ds, &s, &prims, &isas, threads, n_threads);
        }
        first = 0;
        convsel_dataset_destroy(ds);
    }
    if (json)
        printf(n_files > 1 ? "]\n" : "\n");
    return rc;
}

/* ---------------------------------------------------------------- merge */

static int cmd_merge(int argc, char **argv)
{
    const char *output = NULL;
    int n_files = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0) {
            if (!(output = cli_value(CMD " merge", argc, argv, &i)))
                return CLI_USAGE;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "convsel " CMD " merge: unknown option '%s'\n", argv[i]);
            return CLI_USAGE;
        } else {
            n_files++;
        }
    }
    if (!output || n_files == 0) {
        fprintf(stderr, "convsel " CMD " merge: needs -o OUT and at least one FILE\n");
        return CLI_USAGE;
    }
    convsel_dataset *merged;
    convsel_status st = convsel_dataset_create(&merged);
    if (st != CONVSEL_OK)
        return cli_fail(CMD " merge", st);
    size_t added = 0, dropped = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0) {
            i++;
            continue;
        }
        convsel_dataset *ds;
        int rc = load(argv[i], &ds);
        if (rc != CLI_OK) {
            convsel_dataset_destroy(merged);
            return rc;
        }
        size_t a, d;
        st = convsel_dataset_merge(merged, ds, &a, &d);
        convsel_dataset_destroy(ds);
        if (st != CONVSEL_OK) {
            convsel_dataset_destroy(merged);
            return cli_fail(CMD " merge", st);
        }
        added += a;
        dropped += d;
    }
    st = convsel_dataset_save(merged, output);
    if (st == CONVSEL_OK)
        fprintf(stderr, "convsel " CMD " merge: %d files, %zu records (%zu duplicates dropped), %zu fingerprints -> %s\n",
                n_files, added, dropped, convsel_dataset_fingerprint_count(merged), output);
    convsel_dataset_destroy(merged);
    return st == CONVSEL_OK ? CLI_OK : cli_fail(CMD " merge", st);
}

/* ---------------------------------------------------------------- export */

static void export_records(FILE *out, const char *path, const convsel_dataset *ds)
{
    char desc[512];
    for (size_t i = 0; i < convsel_dataset_size(ds); i++) {
        const convsel_record *r = convsel_dataset_record(ds, i);
        const convsel_problem *p = &r->problem;
        const convsel_fingerprint *fp = convsel_dataset_fingerprint(ds, r->fingerprint);
        cli_shape_desc(p, desc, sizeof desc);
        cli_csv_field(out, path);
        fputc(',', out);
        fputs(r->kind == CONVSEL_RECORD_CONV ? "conv" : "reorder", out);
        fputc(',', out);
        fputs(r->tensor == CONVSEL_TENSOR_SRC ? "src" : "dst", out);
        fputc(',', out);
        cli_csv_field(out, p->name);
        fprintf(out, ",%s,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,%lld,", desc,
                (long long)p->g, (long long)p->mb, (long long)p->ic, (long long)p->ih, (long long)p->iw,
                (long long)p->oc, (long long)p->oh, (long long)p->ow, (long long)p->kh, (long long)p->kw,
                (long long)p->sh, (long long)p->sw, (long long)p->ph, (long long)p->pw, (long long)p->dh,
                (long long)p->dw);
        cli_csv_field(out, r->primitive);
        fprintf(out, ",%s,%s,%d,%s,%u,", convsel_layout_name(r->from), convsel_layout_name(r->to), r->threads,
                convsel_isa_name(r->isa), (unsigned)r->fingerprint);
        cli_csv_field(out, fp ? fp->microarch : "");
        fprintf(out, ",%.6g,%.6g,%.6g,%.6g,%d,%.6g,%.6g,", r->min_ms, r->p10_ms, r->median_ms, r->p90_ms, r->runs,
                r->create_ms, r->median_ms > 0 ? convsel_problem_flops(p) / (r->median_ms * 1e6) : 0.0);
        cli_csv_field(out, r->kernel);
        fputc('\n', out);
    }
}

static int cmd_export(int argc, char **argv)
{
    const char *output = NULL;
    int csv = 0, n_files = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0) {
            if (!(output = cli_value(CMD " export", argc, argv, &i)))
                return CLI_USAGE;
        } else if (strcmp(argv[i], "--csv") == 0) {
            csv = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "convsel " CMD " export: unknown option '%s'\n", argv[i]);
            return CLI_USAGE;
        } else {
            n_files++;
        }
    }
    if (!csv || n_files == 0) {
        fprintf(stderr, "convsel " CMD " export: needs --csv (the only format) and at least one FILE\n");
        return CLI_USAGE;
    }
    FILE *out = output ? fopen(output, "w") : stdout;
    if (!out) {
        perror(output);
        return CLI_FAIL;
    }
    fprintf(out, "file,kind,tensor,name,desc,g,mb,ic,ih,iw,oc,oh,ow,kh,kw,sh,sw,ph,pw,dh,dw,primitive,from,to,"
                 "threads,isa,fingerprint,microarch,min_ms,p10_ms,median_ms,p90_ms,runs,create_ms,gflops,kernel\n");
    int rc = CLI_OK;
    for (int i = 1; i < argc && rc == CLI_OK; i++) {
        if (strcmp(argv[i], "-o") == 0) {
            i++;
            continue;
        }
        if (argv[i][0] == '-' && argv[i][1])
            continue;
        convsel_dataset *ds;
        if ((rc = load(argv[i], &ds)) != CLI_OK)
            break;
        export_records(out, argv[i], ds);
        convsel_dataset_destroy(ds);
    }
    if (output && fclose(out) != 0) {
        perror(output);
        rc = CLI_FAIL;
    }
    return rc;
}

/* ---------------------------------------------------------------- split */

static int cmd_split(int argc, char **argv)
{
    const char *output = NULL, *input = NULL, *by_text = "config";
    double frac = -1.0;
    long seed = 1;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v;
        if (strcmp(a, "-o") == 0 || strcmp(a, "--test-frac") == 0 || strcmp(a, "--seed") == 0 ||
            strcmp(a, "--by") == 0) {
            if (!(v = cli_value(CMD " split", argc, argv, &i)))
                return CLI_USAGE;
            if (a[1] == 'o')
                output = v;
            else if (strcmp(a, "--by") == 0)
                by_text = v;
            else if (strcmp(a, "--seed") == 0 ? !cli_parse_long(CMD " split", a, v, 0, 0x7fffffffL, &seed)
                                                : !cli_parse_double(CMD " split", a, v, 0.0, 1.0, &frac))
                return CLI_USAGE;
        } else if (a[0] == '-' && a[1]) {
            fprintf(stderr, "convsel " CMD " split: unknown option '%s'\n", a);
            return CLI_USAGE;
        } else if (input) {
            fprintf(stderr, "convsel " CMD " split: one FILE only (merge first)\n");
            return CLI_USAGE;
        } else {
            input = a;
        }
    }
    convsel_split_by by;
    if (strcmp(by_text, "config") == 0)
        by = CONVSEL_SPLIT_BY_CONFIG;
    else if (strcmp(by_text, "network") == 0)
        by = CONVSEL_SPLIT_BY_NETWORK;
    else {
        fprintf(stderr, "convsel " CMD " split: --by config or --by network (got '%s')\n", by_text);
        return CLI_USAGE;
    }
    if (!output || !input || frac < 0.0) {
        fprintf(stderr, "convsel " CMD " split: needs --test-frac F, -o PREFIX and FILE\n");
        return CLI_USAGE;
    }
    convsel_dataset *ds, *train, *test;
    int rc = load(input, &ds);
    if (rc != CLI_OK)
        return rc;
    convsel_status st = convsel_dataset_split(ds, frac, (uint64_t)seed, by, &train, &test);
    convsel_dataset_destroy(ds);
    if (st != CONVSEL_OK)
        return cli_fail(CMD " split", st);
    char path[2][4096];
    snprintf(path[0], sizeof path[0], "%s-train.msgpack", output);
    snprintf(path[1], sizeof path[1], "%s-test.msgpack", output);
    st = convsel_dataset_save(train, path[0]);
    if (st == CONVSEL_OK)
        st = convsel_dataset_save(test, path[1]);
    if (st == CONVSEL_OK) {
        convsel_dataset_summary s_train, s_test;
        convsel_dataset_summarize(train, &s_train);
        convsel_dataset_summarize(test, &s_test);
        fprintf(stderr, "convsel " CMD " split: %s: %zu records, %zu shapes; %s: %zu records, %zu shapes\n", path[0],
                s_train.records, s_train.problems, path[1], s_test.records, s_test.problems);
    }
    convsel_dataset_destroy(train);
    convsel_dataset_destroy(test);
    return st == CONVSEL_OK ? CLI_OK : cli_fail(CMD " split", st);
}

/* ---------------------------------------------------------------- filter */

/* A comma-separated list of whole numbers in [lo, hi] into flags (keep[v] =
 * 1), and the largest in *top when top is not NULL; 0 after a message when
 * one is not such a number. */
static int parse_index_list(const char *option, const char *list, long lo, long hi, uint8_t *keep, long *top)
{
    char *copy = strdup(list);
    int ok = copy != NULL;
    for (char *save = NULL, *t = ok ? strtok_r(copy, ",", &save) : NULL; t && ok; t = strtok_r(NULL, ",", &save)) {
        long v;
        ok = cli_parse_long(CMD " filter", option, t, lo, hi, &v);
        if (ok) {
            keep[v] = 1;
            if (top && v > *top)
                *top = v;
        }
    }
    free(copy);
    return ok;
}

static int cmd_filter(int argc, char **argv)
{
    const char *output = NULL, *input = NULL, *threads = NULL, *primitives = NULL, *fingerprints = NULL;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "-o") == 0) {
            if (!(output = cli_value(CMD " filter", argc, argv, &i)))
                return CLI_USAGE;
        } else if (strcmp(argv[i], "--threads") == 0) {
            if (!(threads = cli_value(CMD " filter", argc, argv, &i)))
                return CLI_USAGE;
        } else if (strcmp(argv[i], "--primitives") == 0) {
            if (!(primitives = cli_value(CMD " filter", argc, argv, &i)))
                return CLI_USAGE;
        } else if (strcmp(argv[i], "--fingerprint") == 0) {
            if (!(fingerprints = cli_value(CMD " filter", argc, argv, &i)))
                return CLI_USAGE;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "convsel " CMD " filter: unknown option '%s'\n", argv[i]);
            return CLI_USAGE;
        } else if (input) {
            fprintf(stderr, "convsel " CMD " filter: one input FILE only\n");
            return CLI_USAGE;
        } else {
            input = argv[i];
        }
    }
    if (!output || !input || (!threads && !primitives && !fingerprints)) {
        fprintf(stderr,
                "convsel " CMD " filter: needs --threads, --primitives and/or --fingerprint, -o OUT and FILE\n");
        return CLI_USAGE;
    }
    /* --fingerprint: indexes as `dataset info` lists them (one setup of a
     * merged file, say, to calibrate from). */
    uint8_t keep_threads[64] = {0}, keep_fp[1024] = {0};
    long top_fp = -1;
    if ((threads && !parse_index_list("--threads", threads, 1, 63, keep_threads, NULL)) ||
        (fingerprints && !parse_index_list("--fingerprint", fingerprints, 0, 1023, keep_fp, &top_fp)))
        return CLI_USAGE;
    convsel_dataset *ds, *out;
    int rc = load(input, &ds);
    if (rc != CLI_OK)
        return rc;
    size_t nf = convsel_dataset_fingerprint_count(ds), kept = 0;
    if (top_fp >= 0 && (size_t)top_fp >= nf) {
        fprintf(stderr, "convsel " CMD " filter: --fingerprint %ld: %s has %zu fingerprint(s), 0 to %zu\n", top_fp,
                input, nf, nf ? nf - 1 : 0);
        convsel_dataset_destroy(ds);
        return CLI_USAGE;
    }
    convsel_status st = convsel_dataset_create(&out);
    uint32_t map[1024];
    for (size_t f = 0; f < nf && f < 1024 && st == CONVSEL_OK; f++)
        if (!fingerprints || keep_fp[f]) /* only the kept ones: the output is one setup's file */
            st = convsel_dataset_add_fingerprint(out, convsel_dataset_fingerprint(ds, f), &map[f]);
    for (size_t i = 0; i < convsel_dataset_size(ds) && st == CONVSEL_OK; i++) {
        convsel_record r = *convsel_dataset_record(ds, i);
        if (threads && (r.threads < 1 || r.threads > 63 || !keep_threads[r.threads]))
            continue;
        if (primitives) {
            size_t len = strlen(r.primitive);
            const char *hit = strstr(primitives, r.primitive);
            int named = 0;
            for (; hit && !named; hit = strstr(hit + 1, r.primitive))
                named = (hit == primitives || hit[-1] == ',') && (hit[len] == ',' || hit[len] == '\0');
            if (!named)
                continue;
        }
        if (r.fingerprint >= 1024 || (fingerprints && !keep_fp[r.fingerprint]))
            continue;
        r.fingerprint = map[r.fingerprint];
        st = convsel_dataset_append(out, &r);
        kept++;
    }
    if (st == CONVSEL_OK)
        st = convsel_dataset_save(out, output);
    if (st == CONVSEL_OK)
        fprintf(stderr, "convsel " CMD " filter: kept %zu of %zu records -> %s\n", kept, convsel_dataset_size(ds),
                output);
    convsel_dataset_destroy(ds);
    convsel_dataset_destroy(out);
    return st == CONVSEL_OK ? CLI_OK : cli_fail(CMD " filter", st);
}

int cmd_dataset(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    if (cli_is_help(argv[1])) {
        usage(stdout);
        return CLI_OK;
    }
    for (int i = 2; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            usage(stdout);
            return CLI_OK;
        }
    }
    if (strcmp(argv[1], "info") == 0)
        return cmd_info(argc - 1, argv + 1);
    if (strcmp(argv[1], "merge") == 0)
        return cmd_merge(argc - 1, argv + 1);
    if (strcmp(argv[1], "export") == 0)
        return cmd_export(argc - 1, argv + 1);
    if (strcmp(argv[1], "split") == 0)
        return cmd_split(argc - 1, argv + 1);
    if (strcmp(argv[1], "filter") == 0)
        return cmd_filter(argc - 1, argv + 1);
    fprintf(stderr, "convsel " CMD ": unknown subcommand '%s' (info, merge, export, split, filter)\n", argv[1]);
    return CLI_USAGE;
}
