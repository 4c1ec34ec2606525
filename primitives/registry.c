/* The catalogue, in listing order. Adding a primitive: one file, one line here. */
#include "primitive.h"

extern const struct convsel_primitive convsel_reference;

const struct convsel_primitive *const convsel_primitives[] = {
    &convsel_reference,
};

const size_t convsel_primitives_count = sizeof convsel_primitives / sizeof convsel_primitives[0];
