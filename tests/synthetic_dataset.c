/*
 * Writes a small synthetic dataset (tests/synthetic.h) whose primitives carry
 * catalogue names, for the CLI tests of train / eval / predict:
 *   synthetic_dataset FILE [SEED]
 */
#include <stdio.h>
#include <stdlib.h>

#include "synthetic.h"

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: synthetic_dataset FILE [SEED]\n");
        return 2;
    }
    uint64_t seed = argc == 3 ? strtoull(argv[2], NULL, 10) : 1;
    convsel_dataset *ds;
    convsel_status st = syn_dataset_named(seed, 3, 15, 30, 0.03, syn_catalogue_names, &ds);
    if (st == CONVSEL_OK) {
        st = convsel_dataset_save(ds, argv[1]);
        convsel_dataset_destroy(ds);
    }
    if (st != CONVSEL_OK) {
        fprintf(stderr, "synthetic_dataset: %s\n", convsel_last_error());
        return 1;
    }
    return 0;
}
