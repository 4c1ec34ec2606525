/* Model properties beyond prediction: the held-out error and the reorder
 * cost model, both stored in the model file, and what the training that made
 * the model in this process cut short. */
#include "model.h"

double convsel_model_uncertainty(const convsel_model *model)
{
    /* A calibrated model predicts for its latest calibration's CPU by
     * default: that calibration's cross-validated error is the one to expect. */
    if (model && model->n_calibrations && model->calibrations[0].cv_rmse_log > 0)
        return model->calibrations[0].cv_rmse_log;
    if (!model || model->valid_rows == 0 || !(model->valid_rmse_log > 0))
        return 0.1;
    return model->valid_rmse_log;
}

const convsel_reorder_model *convsel_model_reorders(const convsel_model *model)
{
    return model ? model->reorders : NULL;
}

size_t convsel_model_training_cut(const convsel_model *model, size_t *jobs, size_t *fewest_trees)
{
    if (jobs)
        *jobs = model ? model->jobs : 0;
    if (fewest_trees)
        *fewest_trees = model && model->jobs_cut ? model->cut_fewest_trees : 0;
    return model ? model->jobs_cut : 0;
}
