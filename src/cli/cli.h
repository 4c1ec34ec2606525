#ifndef CONVSEL_CLI_H
#define CONVSEL_CLI_H

#include "convsel.h"

/* Exit codes: 0 success, 1 failure, 2 usage error. */
enum { CLI_OK = 0, CLI_FAIL = 1, CLI_USAGE = 2 };

struct cli_command {
    const char *name;
    int (*run)(int argc, char **argv); /* argv[0] is the command's name */
    const char *summary;
};

int cmd_primitives(int argc, char **argv);

#endif
