/* convsel train: fit the latency model on profiling datasets. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: convsel train DATA... -o MODEL [--params key=value,...] [--seed S] [--every N] [--quiet]\n"
            "\n"
            "Trains gradient-boosted trees that predict every primitive's time from the conv records of\n"
            "the datasets (docs/learner.md) and writes the model (docs/model-format.md). Progress shows\n"
            "the validation curve: the RMSE of the target on the training and validation rows.\n"
            "\n"
            "  -o MODEL        model file to write\n"
            "  --params LIST   training parameters, e.g. trees=800,max_depth=8,target=log,mode=single,\n"
            "                  statistic=p10 (keys: the fields of convsel_train_params)\n"
            "  --seed S        random seed (same data, parameters and seed: same model bytes)\n"
            "  --every N       print the curve every N trees (default 50)\n"
            "  --quiet         only errors\n");
}

typedef struct progress_state {
    int every, quiet;
    size_t ensemble;
    int bag;
    convsel_train_progress last;
    int have_last;
    double start;
} progress_state;

static void print_done(const convsel_train_progress *p)
{
    if (isnan(p->valid_rmse))
        printf("  %-20s %d trees, train rmse %.4f (no validation rows)\n", p->ensemble, p->iteration + 1,
               p->train_rmse);
    else
        printf("  %-20s %d trees, kept %d (best validation rmse at tree %d)\n", p->ensemble, p->iteration + 1,
               p->best_iteration + 1, p->best_iteration + 1);
}

static int on_progress(const convsel_train_progress *p, void *user)
{
    progress_state *s = user;
    if (s->quiet)
        return 0;
    int fresh = !s->have_last || s->ensemble != p->ensemble_index || s->bag != p->bag;
    if (s->have_last && fresh)
        print_done(&s->last);
    if (fresh && p->bag_count > 1)
        printf("[%zu/%zu] %s, bag %d/%d\n    %6s %12s %12s\n", p->ensemble_index + 1, p->ensemble_count,
               p->ensemble, p->bag + 1, p->bag_count, "tree", "train_rmse", "valid_rmse");
    else if (fresh)
        printf("[%zu/%zu] %s\n    %6s %12s %12s\n", p->ensemble_index + 1, p->ensemble_count, p->ensemble, "tree",
               "train_rmse", "valid_rmse");
    if (p->iteration == 0 || (p->iteration + 1) % s->every == 0)
        printf("    %6d %12.5f %12.5f%s\n", p->iteration + 1, p->train_rmse, p->valid_rmse,
               p->best_iteration == p->iteration ? "" : "  (no better)");
    fflush(stdout);
    s->last = *p;
    s->last.ensemble = p->ensemble; /* owned by the model being trained, alive until it returns */
    s->have_last = 1;
    s->ensemble = p->ensemble_index;
    s->bag = p->bag;
    return 0;
}

int cmd_train(int argc, char **argv)
{
    const char *out = NULL, *params_text = NULL, *v;
    const char **files = calloc((size_t)argc, sizeof *files);
    size_t n_files = 0;
    long seed = -1, every = 50;
    int quiet = 0, rc = CLI_OK;
    if (!files)
        return CLI_FAIL;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            usage(stdout);
            free(files);
            return CLI_OK;
        } else if (strcmp(argv[i], "-o") == 0 || strcmp(argv[i], "--output") == 0) {
            if (!(out = cli_value("train", argc, argv, &i)))
                rc = CLI_USAGE;
        } else if (strcmp(argv[i], "--params") == 0) {
            if (!(params_text = cli_value("train", argc, argv, &i)))
                rc = CLI_USAGE;
        } else if (strcmp(argv[i], "--seed") == 0) {
            if (!(v = cli_value("train", argc, argv, &i)) || !cli_parse_long("train", "--seed", v, 0, 0x7fffffffL, &seed))
                rc = CLI_USAGE;
        } else if (strcmp(argv[i], "--every") == 0) {
            if (!(v = cli_value("train", argc, argv, &i)) || !cli_parse_long("train", "--every", v, 1, 1000000, &every))
                rc = CLI_USAGE;
        } else if (strcmp(argv[i], "--quiet") == 0 || strcmp(argv[i], "-q") == 0) {
            quiet = 1;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "convsel train: unknown option '%s'\n", argv[i]);
            rc = CLI_USAGE;
        } else {
            files[n_files++] = argv[i];
        }
        if (rc != CLI_OK)
            break;
    }
    if (rc == CLI_OK && (n_files == 0 || !out)) {
        fprintf(stderr, "convsel train: %s\n", n_files == 0 ? "no dataset given" : "-o MODEL is required");
        usage(stderr);
        rc = CLI_USAGE;
    }
    if (rc == CLI_OK)
        rc = cli_check_output("train", "-o", out);
    convsel_train_params params;
    convsel_train_params_default(&params);
    convsel_status st;
    if (rc == CLI_OK && params_text && (st = convsel_train_params_parse(params_text, &params)) != CONVSEL_OK)
        rc = cli_fail("train", st);
    if (seed >= 0)
        params.seed = (uint64_t)seed;

    convsel_dataset **sets = calloc(n_files ? n_files : 1, sizeof *sets);
    size_t n_records = 0;
    for (size_t i = 0; rc == CLI_OK && i < n_files; i++) {
        if ((st = convsel_dataset_load(files[i], &sets[i])) != CONVSEL_OK) {
            rc = cli_fail("train", st);
            break;
        }
        if (convsel_dataset_warning(sets[i])[0])
            fprintf(stderr, "convsel train: warning: %s\n", convsel_dataset_warning(sets[i]));
        n_records += convsel_dataset_size(sets[i]);
    }
    convsel_model *model = NULL;
    if (rc == CLI_OK) {
        static const char *const stats[] = {"median", "p10", "min"};
        if (!quiet)
            printf("training on %zu records from %zu dataset(s): target %s, %s times, %s, %d bag(s), seed %llu\n",
                   n_records,
                   n_files,
                   params.target == CONVSEL_TARGET_LOG            ? "log"
                   : params.target == CONVSEL_TARGET_LOG_PER_FLOP ? "log_per_flop"
                                                                  : "roofline_residual",
                   stats[params.statistic], params.mode == CONVSEL_MODEL_SINGLE ? "one model" : "one model per primitive",
                   params.bags, (unsigned long long)params.seed);
        progress_state state = {.every = (int)every, .quiet = quiet, .start = cli_now()};
        st = convsel_model_train((const convsel_dataset *const *)sets, n_files, &params, on_progress, &state, &model);
        if (st != CONVSEL_OK) {
            rc = cli_fail("train", st);
        } else {
            if (state.have_last && !quiet)
                print_done(&state.last);
            if ((st = convsel_model_save(model, out)) != CONVSEL_OK)
                rc = cli_fail("train", st);
            else if (!quiet)
                printf("wrote %s: %zu primitives, model id %s, %.1f s\n", out, convsel_model_primitive_count(model),
                       convsel_model_id(model), cli_now() - state.start);
        }
    }
    convsel_model_destroy(model);
    for (size_t i = 0; i < n_files; i++)
        convsel_dataset_destroy(sets[i]);
    free(sets);
    free(files);
    return rc;
}
