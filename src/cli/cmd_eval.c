/* convsel eval: accuracy of a model, or cross-validation of training parameters. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: convsel eval [--model M] [--cv by-network|random] [--params LIST] [--seed S]\n"
            "                    [--truth median|p10|min] [--as-selector] [--predictions CSV] [--json]\n"
            "                    DATA...\n"
            "\n"
            "Evaluates a model on the conv records of the datasets, or with --cv trains and tests on\n"
            "splits of them: 'random' holds out 20%% of the layers, 'by-network' each network in turn\n"
            "(the part of a layer's name before ':'). --cv uses --model's training parameters when given,\n"
            "else the defaults, then --params and --seed.\n"
            "\n"
            "Metrics: mape (mean |pred - measured| / measured), within10 (share within 10%%), and over\n"
            "layers with 2+ primitives: spearman (rank correlation), top1 (predicted fastest is fastest),\n"
            "regret_mean / regret_p95 (measured time of the predicted fastest / fastest - 1).\n"
            "\n"
            "  --truth STAT  score against this statistic of the measurements instead of the one the\n"
            "                model learns (training is unchanged)\n"
            "  --as-selector (without --cv) price records as `convsel select` does: as the primitive\n"
            "                whose kernel ran them (the dataset's kernel column; for files without it,\n"
            "                asked of this machine's oneDNN under the record's ISA cap, so run under\n"
            "                that cap: --isa or CONVSEL_ISA), leaving reference loops out of the ranking\n"
            "  --predictions CSV  writes every scored (with --cv: held-out) record's prediction: name,\n"
            "                desc, threads, primitive, measured_ms (the statistic scored against),\n"
            "                predicted_ms\n"
            "  --json        one JSON object; shares are fractions (0.05 = 5%%)\n");
}

static void json_number(const char *key, double v, int last)
{
    if (isfinite(v))
        printf("  \"%s\": %.6g%s\n", key, v, last ? "" : ",");
    else
        printf("  \"%s\": null%s\n", key, last ? "" : ",");
}

/* One CSV row per scored record (--predictions). */
static void write_prediction(const convsel_record *r, double measured_ms, double predicted_ms, void *user)
{
    char desc[512];
    cli_shape_desc(&r->problem, desc, sizeof desc);
    cli_csv_field(user, r->problem.name);
    fprintf(user, ",%s,%d,", desc, r->threads);
    cli_csv_field(user, r->primitive);
    fprintf(user, ",%.6g,%.6g\n", measured_ms, predicted_ms);
}

int cmd_eval(int argc, char **argv)
{
    const char *model_file = NULL, *cv = NULL, *params_text = NULL, *predictions = NULL, *v;
    const char **files = calloc((size_t)argc, sizeof *files);
    size_t n_files = 0;
    long seed = -1;
    int json = 0, truth = -1, as_selector = 0, rc = CLI_OK;
    if (!files)
        return CLI_FAIL;
    for (int i = 1; i < argc && rc == CLI_OK; i++) {
        if (cli_is_help(argv[i])) {
            usage(stdout);
            free(files);
            return CLI_OK;
        } else if (strcmp(argv[i], "--model") == 0) {
            if (!(model_file = cli_value("eval", argc, argv, &i)))
                rc = CLI_USAGE;
        } else if (strcmp(argv[i], "--cv") == 0) {
            if (!(cv = cli_value("eval", argc, argv, &i)))
                rc = CLI_USAGE;
            else if (strcmp(cv, "by-network") != 0 && strcmp(cv, "random") != 0) {
                fprintf(stderr, "convsel eval: --cv takes by-network or random (got '%s')\n", cv);
                rc = CLI_USAGE;
            }
        } else if (strcmp(argv[i], "--params") == 0) {
            if (!(params_text = cli_value("eval", argc, argv, &i)))
                rc = CLI_USAGE;
        } else if (strcmp(argv[i], "--seed") == 0) {
            if (!(v = cli_value("eval", argc, argv, &i)) || !cli_parse_long("eval", "--seed", v, 0, 0x7fffffffL, &seed))
                rc = CLI_USAGE;
        } else if (strcmp(argv[i], "--truth") == 0) {
            convsel_statistic s;
            if (!(v = cli_value("eval", argc, argv, &i)))
                rc = CLI_USAGE;
            else if (convsel_statistic_parse(v, &s) != CONVSEL_OK) {
                fprintf(stderr, "convsel eval: --truth: %s\n", convsel_last_error());
                rc = CLI_USAGE;
            } else
                truth = (int)s;
        } else if (strcmp(argv[i], "--predictions") == 0) {
            if (!(predictions = cli_value("eval", argc, argv, &i)))
                rc = CLI_USAGE;
        } else if (strcmp(argv[i], "--as-selector") == 0) {
            as_selector = 1;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "convsel eval: unknown option '%s'\n", argv[i]);
            rc = CLI_USAGE;
        } else {
            files[n_files++] = argv[i];
        }
    }
    if (rc == CLI_OK && n_files == 0) {
        fprintf(stderr, "convsel eval: no dataset given\n");
        usage(stderr);
        rc = CLI_USAGE;
    }
    if (rc == CLI_OK && !cv && (params_text || seed >= 0)) {
        fprintf(stderr, "convsel eval: --params and --seed go with --cv\n");
        rc = CLI_USAGE;
    }
    if (rc == CLI_OK && cv && as_selector) {
        fprintf(stderr, "convsel eval: --as-selector goes without --cv\n");
        rc = CLI_USAGE;
    }
    if (rc != CLI_OK) {
        free(files);
        return rc;
    }

    convsel_model *model = NULL;
    convsel_dataset **sets = calloc(n_files, sizeof *sets);
    convsel_status st;
    if (!sets)
        rc = CLI_FAIL;
    if (rc == CLI_OK && (model_file || !cv))
        rc = cli_open_model("eval", model_file, &model);
    for (size_t i = 0; rc == CLI_OK && i < n_files; i++) {
        if ((st = convsel_dataset_load(files[i], &sets[i])) != CONVSEL_OK)
            rc = cli_fail("eval", st);
        else if (convsel_dataset_warning(sets[i])[0])
            fprintf(stderr, "convsel eval: warning: %s\n", convsel_dataset_warning(sets[i]));
    }
    convsel_metrics m;
    convsel_train_params params;
    if (rc == CLI_OK) {
        if (model)
            params = *convsel_model_params(model);
        else
            convsel_train_params_default(&params);
        if (cv && params_text && (st = convsel_train_params_parse(params_text, &params)) != CONVSEL_OK)
            rc = cli_fail("eval", st);
        if (seed >= 0)
            params.seed = (uint64_t)seed;
    }
    /* Opened before any fold trains, so that a bad path fails at once; a
     * failed run leaves no file. */
    FILE *out = NULL;
    if (rc == CLI_OK && predictions && !(out = fopen(predictions, "w"))) {
        fprintf(stderr, "convsel eval: cannot write '%s': %s\n", predictions, strerror(errno));
        rc = CLI_FAIL;
    }
    if (rc == CLI_OK) {
        const convsel_dataset *const *view = (const convsel_dataset *const *)sets;
        convsel_statistic against = truth < 0 ? params.statistic : (convsel_statistic)truth;
        if (out)
            fprintf(out, "name,desc,threads,primitive,measured_ms,predicted_ms\n");
        if (cv) {
            convsel_cv_kind kind = strcmp(cv, "random") == 0 ? CONVSEL_CV_RANDOM : CONVSEL_CV_BY_NETWORK;
            st = convsel_model_cv_predictions(view, n_files, &params, kind, against, out ? write_prediction : NULL,
                                              out, &m);
        } else {
            st = convsel_model_eval_predictions(model, view, n_files, as_selector, against,
                                                out ? write_prediction : NULL, out, &m);
        }
        if (st != CONVSEL_OK)
            rc = cli_fail("eval", st);
    }
    if (out) {
        if (fclose(out) != 0 && rc == CLI_OK) {
            fprintf(stderr, "convsel eval: writing '%s' failed\n", predictions);
            rc = CLI_FAIL;
        }
        if (rc != CLI_OK)
            remove(predictions);
    }
    if (rc == CLI_OK) {
        if (json) {
            printf("{\n");
            json_number("mape", m.mape, 0);
            json_number("within10", m.within10, 0);
            json_number("spearman", m.spearman, 0);
            json_number("spearman_pooled", m.spearman_pooled, 0);
            json_number("top1", m.top1, 0);
            json_number("regret_mean", m.regret_mean, 0);
            json_number("regret_p95", m.regret_p95, 0);
            printf("  \"n_records\": %zu,\n  \"n_layers\": %zu", m.n_records, m.n_layers);
            if (as_selector)
                printf(",\n  \"n_priced_as\": %zu,\n  \"n_unranked\": %zu,\n  \"n_kernel_unknown\": %zu",
                       m.n_priced_as, m.n_unranked, m.n_kernel_unknown);
            printf("\n}\n");
        } else {
            if (cv)
                printf("cross-validation (%s)\n", cv);
            else
                printf("model %s\n", convsel_model_id(model));
            printf("records      %zu\n", m.n_records);
            printf("layers       %zu (with 2+ primitives)\n", m.n_layers);
            printf("MAPE         %.2f%%\n", 100 * m.mape);
            printf("within 10%%   %.1f%%\n", 100 * m.within10);
            printf("Spearman     %.3f per configuration, %.3f pooled over records\n", m.spearman,
                   m.spearman_pooled);
            printf("top-1        %.1f%%\n", 100 * m.top1);
            printf("regret       mean %.2f%%, p95 %.2f%%\n", 100 * m.regret_mean, 100 * m.regret_p95);
            if (as_selector)
                printf("as selector  %zu records priced as another kernel, %zu left out as reference loops, "
                       "%zu of unknown kernel\n",
                       m.n_priced_as, m.n_unranked, m.n_kernel_unknown);
        }
        if (as_selector && m.n_kernel_unknown)
            fprintf(stderr,
                    "convsel eval: warning: %zu records have no kernel recorded and were measured under another "
                    "ISA cap than this run's (%s): priced as themselves; run under their cap (--isa)\n",
                    m.n_kernel_unknown, convsel_isa_name(convsel_get_isa()));
    }
    convsel_model_destroy(model);
    for (size_t i = 0; sets && i < n_files; i++)
        convsel_dataset_destroy(sets[i]);
    free(sets);
    free(files);
    return rc;
}
