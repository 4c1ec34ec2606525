/* convsel's command line: one cmd_<name>.c per subcommand, as git's builtins. */
#include <stdio.h>
#include <string.h>

#include "cli.h"

static const struct cli_command commands[] = {
    {"primitives", cmd_primitives, "list the primitives: name, family, layouts"},
    {"select", cmd_select, "choose the fastest primitive per layer of a network"},
    {"run", cmd_run, "run a network with a plan and report its latency"},
    {"compare", cmd_compare, "model plan vs oneDNN alone vs single best vs oracle, end to end"},
    {"bench-layer", cmd_bench_layer, "time every primitive on one layer, interleaved"},
};

static void usage(FILE *out)
{
    fprintf(out, "usage: convsel [--version] [--help] COMMAND [ARGS]\n\ncommands:\n");
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        fprintf(out, "  %-12s %s\n", commands[i].name, commands[i].summary);
    fprintf(out, "\n'convsel COMMAND --help' describes a command.\n");
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return CLI_USAGE;
    }
    if (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "help") == 0) {
        usage(stdout);
        return CLI_OK;
    }
    if (strcmp(argv[1], "--version") == 0) {
        printf("convsel %s\n", CONVSEL_VERSION_STRING);
        return CLI_OK;
    }
    for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
        if (strcmp(argv[1], commands[i].name) == 0)
            return commands[i].run(argc - 1, argv + 1);
    fprintf(stderr, "convsel: unknown command '%s'\n", argv[1]);
    usage(stderr);
    return CLI_USAGE;
}
