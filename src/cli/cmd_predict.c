/* convsel predict: every applicable primitive's predicted time, per layer, ranked. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: convsel predict [--model M] (DESC | --net FILE) [--threads N] [--mb N]\n"
            "\n"
            "Prints, for every layer, the predicted time of every applicable primitive, fastest first,\n"
            "for this machine's CPU.\n"
            "\n"
            "  DESC          one benchdnn descriptor, e.g. mb1ic64ih56oc64oh56kh3ph1\n"
            "  --net FILE    a network file\n"
            "  --model M     model file (default: models/default.msgpack)\n"
            "  --threads N   threads per primitive (default 1)\n"
            "  --mb N        override every layer's batch\n");
}

typedef struct ranked_primitive {
    size_t primitive, runs_as;
    double ms;
    int naive; /* its kernel here is a library's reference loops */
} ranked_primitive;

static int by_ms(const void *a, const void *b)
{
    const ranked_primitive *x = a, *y = b;
    if (x->ms != y->ms)
        return x->ms < y->ms ? -1 : 1;
    return (x->primitive > y->primitive) - (x->primitive < y->primitive);
}

int cmd_predict(int argc, char **argv)
{
    const char *model_file = NULL, *net_file = NULL, *desc = NULL, *v;
    long threads = 1, mb = 0;
    int rc = CLI_OK;
    for (int i = 1; i < argc && rc == CLI_OK; i++) {
        if (cli_is_help(argv[i])) {
            usage(stdout);
            return CLI_OK;
        } else if (strcmp(argv[i], "--model") == 0) {
            if (!(model_file = cli_value("predict", argc, argv, &i)))
                rc = CLI_USAGE;
        } else if (strcmp(argv[i], "--net") == 0) {
            if (!(net_file = cli_value("predict", argc, argv, &i)))
                rc = CLI_USAGE;
        } else if (strcmp(argv[i], "--threads") == 0) {
            if (!(v = cli_value("predict", argc, argv, &i)) || !cli_parse_long("predict", "--threads", v, 1, 1024, &threads))
                rc = CLI_USAGE;
        } else if (strcmp(argv[i], "--mb") == 0) {
            if (!(v = cli_value("predict", argc, argv, &i)) || !cli_parse_long("predict", "--mb", v, 1, 1 << 20, &mb))
                rc = CLI_USAGE;
        } else if (argv[i][0] == '-' && argv[i][1]) {
            fprintf(stderr, "convsel predict: unknown option '%s'\n", argv[i]);
            rc = CLI_USAGE;
        } else if (desc) {
            fprintf(stderr, "convsel predict: one descriptor at a time (or --net FILE)\n");
            rc = CLI_USAGE;
        } else {
            desc = argv[i];
        }
    }
    if (rc != CLI_OK)
        return rc;
    convsel_network *net = NULL;
    if ((rc = cli_load_network("predict", net_file, desc, mb, &net)) != CLI_OK)
        return rc;
    convsel_model *model = NULL;
    if ((rc = cli_open_model("predict", model_file, &model)) != CLI_OK) {
        convsel_network_destroy(net);
        return rc;
    }
    convsel_fingerprint here;
    convsel_status st = convsel_fingerprint_get(&here);
    if (st != CONVSEL_OK) {
        rc = cli_fail("predict", st);
        goto done;
    }
    cli_warn_cpu("predict", model, &here, (int)threads);
    convsel_model_costs costs = {.model = model, .cpu = here};

    size_t n_prims = convsel_primitive_count();
    ranked_primitive *ranked = calloc(n_prims ? n_prims : 1, sizeof *ranked);
    unsigned char *warned = calloc(n_prims ? n_prims : 1, 1);
    if (!ranked || !warned) {
        free(ranked);
        free(warned);
        rc = CLI_FAIL;
        goto done;
    }
    printf("model %s, %ld thread%s, %s\n", convsel_model_id(model), threads, threads == 1 ? "" : "s",
           here.model_name);
    for (size_t l = 0; l < convsel_network_size(net) && rc == CLI_OK; l++) {
        const convsel_problem *p = convsel_network_layer(net, l);
        char text[512];
        convsel_problem_format(p, text, sizeof text);
        printf("\n%s\n", text);
        size_t n = 0;
        for (size_t i = 0; i < n_prims; i++) {
            if (convsel_primitive_is_reference(i) || !convsel_primitive_applicable(i, p, NULL, 0))
                continue;
            /* Priced as convsel select prices it: by the kernel it runs. */
            double ms;
            size_t as = convsel_model_costs_priced_as(&costs, p, (int)threads, i);
            st = convsel_model_predict_ms(model, p, (int)threads, as, &here, &ms);
            if (st == CONVSEL_NOT_FOUND) {
                if (!warned[i])
                    fprintf(stderr, "convsel predict: warning: the model has no data for '%s'; skipped\n",
                            convsel_primitive_name(i));
                warned[i] = 1;
                continue;
            }
            if (st != CONVSEL_OK) {
                rc = cli_fail("predict", st);
                break;
            }
            size_t kernel;
            int naive = convsel_primitive_runs_as(i, p, (int)threads, &kernel) == CONVSEL_OK &&
                        convsel_primitive_is_reference(kernel);
            ranked[n++] = (ranked_primitive){i, as, ms, naive};
        }
        qsort(ranked, n, sizeof *ranked, by_ms);
        if (n == 0 && rc == CLI_OK)
            printf("  (no applicable primitive the model knows)\n");
        for (size_t k = 0; k < n; k++)
            printf("  %2zu  %-20s %10.4f ms  %6.2fx%s%s%s\n", k + 1, convsel_primitive_name(ranked[k].primitive),
                   ranked[k].ms, ranked[k].ms / ranked[0].ms,
                   ranked[k].runs_as != ranked[k].primitive ? "  runs " : "",
                   ranked[k].runs_as != ranked[k].primitive ? convsel_primitive_name(ranked[k].runs_as) : "",
                   ranked[k].naive ? "  runs the library's reference loops here: select leaves it out" : "");
    }
    free(ranked);
    free(warned);
done:
    convsel_model_destroy(model);
    convsel_network_destroy(net);
    return rc;
}
