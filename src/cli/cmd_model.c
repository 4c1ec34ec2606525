/* convsel model: what a model file holds, for whoever moves models across
 * CPUs: the CPUs it was trained on, whether it describes this one, and each
 * calibration's fit and in-network prices. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: convsel model [--model M] [--json]\n"
            "\n"
            "Describes a model file: its id, primitives and training parameters, the CPU setups\n"
            "it describes (its training data's and its calibrations'), whether this CPU is one\n"
            "(else 'convsel calibrate' adapts it), and each calibration, newest first: the CPU,\n"
            "the source model, the method, samples, seed and cross-validated error, the thread\n"
            "counts measured, and the prices measured inside networks: the factor on reorders,\n"
            "cold reads and each primitive's weights, per thread slot (1, 2, 3, 4+ threads).\n"
            "\n"
            "  --model M   model file (default: the shipped models/default.msgpack)\n"
            "  --json      one JSON document instead of text\n");
}

static const char *const slot_names[CONVSEL_REORDER_MODEL_THREADS] = {"1", "2", "3", "4+"};

/* The CPU in a line: name, microarchitecture, cap, cores, caches, OpenBLAS kernels. */
static void text_cpu(const convsel_fingerprint *fp)
{
    printf("%s (%s), cap %s, %d cores, L2 %" PRId64 " KiB, L3 %" PRId64 " KiB, OpenBLAS's %s kernels",
           fp->model_name, fp->microarch, convsel_isa_name(fp->isa_cap), fp->cores, fp->l2_bytes >> 10,
           fp->l3_bytes >> 10, cli_blas_isa_name(fp));
}

static void json_cpu(const convsel_fingerprint *fp)
{
    printf("{\"vendor\": ");
    cli_json_string(fp->vendor);
    printf(", \"model_name\": ");
    cli_json_string(fp->model_name);
    printf(", \"microarch\": ");
    cli_json_string(fp->microarch);
    printf(", \"isa_cap\": ");
    cli_json_string(convsel_isa_name(fp->isa_cap));
    printf(", \"cores\": %d, \"l1d_bytes\": %" PRId64 ", \"l2_bytes\": %" PRId64 ", \"l3_bytes\": %" PRId64
           ", \"onednn_version\": ",
           fp->cores, fp->l1d_bytes, fp->l2_bytes, fp->l3_bytes);
    cli_json_string(fp->onednn_version);
    printf(", \"openblas_version\": ");
    cli_json_string(fp->openblas_version);
    printf(", \"openblas_kernels\": ");
    cli_json_string(cli_blas_isa_name(fp));
    putchar('}');
}

/* v per thread slot as {"1": x, ...}, the slots where measured[t] only. */
static void json_slots(const double *v, const int *measured)
{
    putchar('{');
    for (int t = 0, first = 1; t < CONVSEL_REORDER_MODEL_THREADS; t++) {
        if (!measured[t])
            continue;
        printf("%s\"%s\": %.6g", first ? "" : ", ", slot_names[t], v[t]);
        first = 0;
    }
    putchar('}');
}

static void text_slots(const double *v, const int *measured, const char *unit)
{
    for (int t = 0; t < CONVSEL_REORDER_MODEL_THREADS; t++)
        if (measured[t])
            printf(" %.4g%s at %s thread%s", v[t], unit, slot_names[t], t ? "s" : "");
}

/* Which thread slots a calibration's in-network probes measured: those of
 * its thread counts (all four when a file does not say). */
static void slots_measured(uint64_t threads_mask, int *measured)
{
    for (int t = 0; t < CONVSEL_REORDER_MODEL_THREADS; t++)
        measured[t] = threads_mask == 0;
    for (int b = 0; b < 64; b++)
        if (threads_mask >> b & 1)
            measured[b < CONVSEL_REORDER_MODEL_THREADS ? b : CONVSEL_REORDER_MODEL_THREADS - 1] = 1;
}

static void text_calibration(const convsel_model *model, size_t i, const convsel_calibration_info *c)
{
    char threads[256];
    int measured[CONVSEL_REORDER_MODEL_THREADS];
    slots_measured(c->threads_mask, measured);
    if (c->threads_mask)
        cli_threads_text(c->threads_mask, threads, sizeof threads);
    else
        snprintf(threads, sizeof threads, "thread counts not recorded");
    printf("  %zu%s: ", i, i == 0 ? " (newest)" : "");
    text_cpu(&c->cpu);
    printf("\n     from model %s, method %s%s, %zu samples (%zu records), seed %" PRIu64 ", %zu residual trees; "
           "cross-validated rmse_log %.3f, regret_log %.4f; %s\n",
           c->source_model, convsel_calibrate_method_name(c->method), c->auto_chosen ? " (chosen by cross-validation)" : "",
           c->samples, c->records, c->seed, c->residual_trees, c->cv_rmse_log, c->cv_regret_log, threads);
    if (c->reorder_samples) {
        printf("     reorders: %zu timed inside networks; factor on the lines", c->reorder_samples);
        text_slots(c->reorder_by_threads, measured, "");
        putchar('\n');
    }
    if (c->cold_samples) {
        printf("     cold reads: %zu timed;", c->cold_samples);
        text_slots(c->cold_ms_per_mb, measured, " ms/MB");
        putchar('\n');
    }
    if (c->network_samples) {
        printf("     weights inside networks: %zu convolutions timed; ms per MB of plain weights:\n",
               c->network_samples);
        for (size_t j = 0; j < convsel_model_primitive_count(model) && j < CONVSEL_NETWORK_PRIMITIVES; j++) {
            printf("       %-20s", convsel_model_primitive_name(model, j));
            for (int t = 0; t < CONVSEL_REORDER_MODEL_THREADS; t++)
                if (measured[t])
                    printf(" %7.4f at %s", c->network_ms_per_mb[j][t], slot_names[t]);
            putchar('\n');
        }
    }
}

static void json_calibration(const convsel_model *model, const convsel_calibration_info *c)
{
    int measured[CONVSEL_REORDER_MODEL_THREADS];
    slots_measured(c->threads_mask, measured);
    printf("{\"cpu\": ");
    json_cpu(&c->cpu);
    printf(", \"source_model\": ");
    cli_json_string(c->source_model);
    printf(", \"method\": ");
    cli_json_string(convsel_calibrate_method_name(c->method));
    printf(", \"chosen_by_cross_validation\": %s, \"samples\": %zu, \"records\": %zu, \"seed\": %" PRIu64
           ", \"residual_trees\": %zu, \"cv_rmse_log\": %.6g, \"cv_regret_log\": %.6g, \"threads\": [",
           c->auto_chosen ? "true" : "false", c->samples, c->records, c->seed, c->residual_trees, c->cv_rmse_log,
           c->cv_regret_log);
    for (int b = 0, first = 1; b < 64; b++)
        if (c->threads_mask >> b & 1) {
            printf("%s%d", first ? "" : ", ", b + 1);
            first = 0;
        }
    printf("], \"reorder_samples\": %zu, \"reorder_factor\": ", c->reorder_samples);
    json_slots(c->reorder_by_threads, measured);
    printf(", \"cold_samples\": %zu, \"cold_ms_per_mb\": ", c->cold_samples);
    json_slots(c->cold_ms_per_mb, measured);
    printf(", \"network_samples\": %zu, \"network_ms_per_mb\": {", c->network_samples);
    for (size_t j = 0; j < convsel_model_primitive_count(model) && j < CONVSEL_NETWORK_PRIMITIVES; j++) {
        printf("%s", j ? ", " : "");
        cli_json_string(convsel_model_primitive_name(model, j));
        printf(": ");
        json_slots(c->network_ms_per_mb[j], measured);
    }
    printf("}}");
}

int cmd_model(int argc, char **argv)
{
    const char *model_file = NULL;
    int json = 0;
    for (int i = 1; i < argc; i++) {
        if (cli_is_help(argv[i])) {
            usage(stdout);
            return CLI_OK;
        } else if (strcmp(argv[i], "--model") == 0) {
            if (!(model_file = cli_value("model", argc, argv, &i)))
                return CLI_USAGE;
        } else if (strcmp(argv[i], "--json") == 0) {
            json = 1;
        } else {
            fprintf(stderr, "convsel model: unexpected argument '%s'\n", argv[i]);
            usage(stderr);
            return CLI_USAGE;
        }
    }
    convsel_model *model = NULL;
    int rc = cli_open_model("model", model_file, &model);
    if (rc != CLI_OK)
        return rc;
    convsel_fingerprint here;
    convsel_status st = convsel_fingerprint_get(&here);
    if (st != CONVSEL_OK) {
        convsel_model_destroy(model);
        return cli_fail("model", st);
    }
    const convsel_train_params *params = convsel_model_params(model);
    const size_t n_fp = convsel_model_fingerprint_count(model), n_cal = convsel_model_calibration_count(model);
    const int describes = cli_model_describes(model, &here, NULL);
    char foreign[512] = "";
    if (!describes)
        cli_foreign_cpu_text(model, &here, foreign, sizeof foreign);
    convsel_calibration_info info;
    if (json) {
        printf("{\"model\": ");
        cli_json_string(convsel_model_id(model));
        printf(", \"primitives\": [");
        for (size_t j = 0; j < convsel_model_primitive_count(model); j++) {
            printf("%s", j ? ", " : "");
            cli_json_string(convsel_model_primitive_name(model, j));
        }
        printf("], \"training\": {\"trees\": %d, \"learning_rate\": %.6g, \"max_depth\": %d, \"bags\": %d, "
               "\"seed\": %" PRIu64 "}, \"cpus\": [",
               params->trees, params->learning_rate, params->max_depth, params->bags, params->seed);
        for (size_t i = 0; i < n_fp; i++) {
            printf("%s", i ? ", " : "");
            json_cpu(convsel_model_fingerprint(model, i));
        }
        printf("], \"this_cpu\": ");
        json_cpu(&here);
        printf(", \"describes_this_cpu\": %s, \"calibrations\": [", describes ? "true" : "false");
        for (size_t i = 0; i < n_cal; i++)
            if (convsel_model_calibration(model, i, &info) == CONVSEL_OK) {
                printf("%s", i ? ", " : "");
                json_calibration(model, &info);
            }
        printf("]}\n");
    } else {
        printf("model %s: %zu primitives (", convsel_model_id(model), convsel_model_primitive_count(model));
        for (size_t j = 0; j < convsel_model_primitive_count(model); j++)
            printf("%s%s", j ? " " : "", convsel_model_primitive_name(model, j));
        printf("); %d bag%s of at most %d trees, learning rate %.3g, depth %d, seed %" PRIu64 "\n", params->bags,
               params->bags == 1 ? "" : "s", params->trees, params->learning_rate, params->max_depth, params->seed);
        printf("describes %zu CPU setup%s (its training data's and its calibrations'):\n", n_fp, n_fp == 1 ? "" : "s");
        for (size_t i = 0; i < n_fp; i++) {
            printf("  ");
            text_cpu(convsel_model_fingerprint(model, i));
            putchar('\n');
        }
        printf("this CPU: ");
        text_cpu(&here);
        if (describes)
            printf("\n  the model describes it\n");
        else
            printf("\n  %s; 'convsel calibrate' adapts the model from a few measurements\n", foreign);
        printf("calibrations: %zu\n", n_cal);
        for (size_t i = 0; i < n_cal; i++)
            if (convsel_model_calibration(model, i, &info) == CONVSEL_OK)
                text_calibration(model, i, &info);
    }
    convsel_model_destroy(model);
    return CLI_OK;
}
