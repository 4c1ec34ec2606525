/* convsel's command line: one cmd_<name>.c per subcommand, as git's builtins. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

static const struct cli_command commands[] = {
    {"primitives", cmd_primitives, "list the primitives: name, family, layouts"},
    {"select", cmd_select, "choose the fastest primitive per layer of a network"},
    {"run", cmd_run, "run a network with a plan and report its latency"},
    {"compare", cmd_compare, "model plan vs oneDNN alone vs single best vs oracle, end to end"},
    {"bench-layer", cmd_bench_layer, "time every primitive on one layer, interleaved"},
    {"profile", cmd_profile, "measure layers and sampled configurations into a dataset"},
    {"dataset", cmd_dataset, "inspect, merge, export and split profiling datasets"},
    {"train", cmd_train, "train the latency model on datasets"},
    {"predict", cmd_predict, "predicted time of every applicable primitive, per layer"},
    {"eval", cmd_eval, "accuracy of a model, or cross-validation of training parameters"},
    {"calibrate", cmd_calibrate, "fit a model to this CPU from a few measurements"},
    {"model", cmd_model, "what a model file holds: its CPUs, calibrations and prices"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: convsel [--version] [--help] [--isa scalar|sse41|avx2|avx512] COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'convsel COMMAND --help' describes a command. --isa (or CONVSEL_ISA) caps the\n"
                 "instruction set of every primitive, OpenBLAS's included; it may also follow COMMAND.\n");
}

static void version(void)
{
    printf("convsel %s\n", CONVSEL_VERSION_STRING);
    printf("isa: %s\n", convsel_isa_name(convsel_get_isa()));
    printf("onednn isa: %s\n", convsel_onednn_isa());
    printf("openblas core: %s\n", convsel_openblas_corename());
}

/* A core forced by OPENBLAS_CORETYPE below the instruction set convsel runs
 * at (a cap sets the variable to match itself) makes every GEMM primitive
 * slower than this CPU allows: say so once, where primitives are timed or
 * chosen, since the datasets, plans and calibrations made so record it. */
static void note_blas_core(int argc, char **argv)
{
    static const char *const timing[] = {"select", "run", "compare", "bench-layer", "profile", "calibrate"};
    const char *forced = getenv("OPENBLAS_CORETYPE");
    int times = 0;
    for (size_t i = 0; i < sizeof timing / sizeof timing[0]; i++)
        times |= strcmp(argv[1], timing[i]) == 0;
    for (int i = 2; i < argc; i++)
        if (cli_is_help(argv[i]))
            return;
    if (!times || !forced || !*forced)
        return;
    convsel_fingerprint here;
    if (convsel_fingerprint_get(&here) != CONVSEL_OK)
        return;
    int kernels = convsel_fingerprint_blas_isa(&here);
    convsel_isa isa = convsel_get_isa();
    if (kernels >= 0 && kernels < (int)isa)
        fprintf(stderr,
                "convsel: note: OPENBLAS_CORETYPE=%s in the environment: OpenBLAS runs its %s kernels on this %s "
                "CPU, and the GEMM primitives are timed and chosen with them (unset it for OpenBLAS's own choice)\n",
                forced, cli_blas_isa_name(&here), convsel_isa_name(isa));
}

int main(int argc, char **argv)
{
    /* First: it may re-execute the program so that OpenBLAS loads capped. */
    convsel_status st = convsel_isa_prepare_process(&argc, argv);
    if (st == CONVSEL_INVALID_ARGUMENT) {
        fprintf(stderr, "convsel: %s\n", convsel_last_error());
        return CLI_USAGE;
    }
    if (st != CONVSEL_OK)
        fprintf(stderr, "convsel: warning: %s\n", convsel_last_error());
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        version();
        return CLI_OK;
    }
    note_blas_core(argc, argv);
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "convsel: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return CLI_USAGE;
}
