/* Model properties the selector needs beyond prediction.
 * INTERIM: until the model file stores its validation error and a reorder
 * cost model, these return the documented defaults. */
#include "model.h"

double convsel_model_uncertainty(const convsel_model *model)
{
    (void)model;
    return 0.1;
}

const convsel_reorder_model *convsel_model_reorders(const convsel_model *model)
{
    (void)model;
    return NULL;
}
