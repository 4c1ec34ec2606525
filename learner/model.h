/*
 * The model behind the public convsel_model_* API, the training table built
 * from datasets, metrics and the roofline estimates. Internal to the library;
 * bench/ and tests/ use it to compare baselines with the same code paths.
 */
#ifndef CONVSEL_MODEL_H
#define CONVSEL_MODEL_H

#include <stddef.h>
#include <stdint.h>

#include "convsel.h"
#include "learner.h"

#define CONVSEL_MODEL_MAGIC "convsel-model"
#define CONVSEL_MODEL_FORMAT_VERSION 1
#define CONVSEL_PRIMITIVE_NAME_MAX 32

/* convsel_train_params.bags at most. */
#define CONVSEL_MAX_BAGS 64

typedef char convsel_primitive_name_buf[CONVSEL_PRIMITIVE_NAME_MAX];

struct convsel_model {
    convsel_train_params params; /* target, mode and roofline constants included */
    size_t n_fingerprints;
    convsel_fingerprint *fingerprints;
    size_t n_primitives;
    convsel_primitive_name_buf *primitives;
    double *utilisation;         /* per primitive: the refined roofline's u (1 when unused) */
    double *overhead_ms;         /* per primitive: its per-call time c (0 when unused) */
    size_t n_ensembles;          /* n_primitives (PER_PRIMITIVE) or 1 (SINGLE) */
    convsel_ensemble *ensembles;
    convsel_forest *forests;     /* per ensemble, laid out for prediction (NULL: walk the trees) */
    double valid_rmse_log;       /* RMS log-space error on the early-stopping rows */
    uint64_t valid_rows;         /* how many (0: none held out; uncertainty then defaults) */
    size_t jobs, jobs_cut;       /* of the training that made it in this process, its ensembles (one per
                                    bag and ensemble) and those cut short by time_limit_s (not stored) */
    size_t cut_fewest_trees;     /* the fewest trees one of those kept */
    convsel_reorder_model *reorders; /* fitted on the training data's reorder records, or NULL */
    size_t n_calibrations;       /* few-shot transfers to other CPUs (calibrate.c) */
    struct convsel_calibration *calibrations;
    char id[17];
};

/* Lays out model's ensembles for prediction (forest.c) once they are final:
 * after training and after parsing. An ensemble the layout cannot hold, or
 * no memory for it, leaves its forest empty: its trees are walked node by
 * node, to the same predictions. */
void convsel_model_lay_out(convsel_model *model);

/* ---------------------------------------------------------------- calibration */

/*
 * A transfer of the model to one more CPU (calibrate.c, docs/transfer.md).
 * For predictions on cpu, the base model's log ms s of primitive j becomes
 * a[j] + b[j] s + residual(x), x the features of the prediction. Files store
 * it from format version 2 on (docs/model-format.md).
 */
typedef struct convsel_calibration {
    convsel_fingerprint cpu;
    char source_id[17];
    convsel_calibrate_method method;
    uint64_t samples, records, seed;
    /* The thread counts the samples and the in-network probes (reorders,
     * cold reads, convolutions) measured: bit t - 1 for t threads (bit
     * 63: 64 or more); 0 where unknown (files written before the fortieth
     * session). */
    uint64_t threads_mask;
    size_t n_primitives;       /* entries of a and b: the model's primitives */
    double *a, *b;
    convsel_ensemble residual; /* no trees and base 0 for LINEAR */
    double cv_rmse_log;        /* cross-validated log error on the samples (0: unknown) */
    double cv_regret_log;      /* cross-validated log regret on the samples (0: unknown) */
    int auto_chosen;           /* method was chosen by cross-validation (AUTO, LINEAR_OR_BOTH) */
    /* Reorders inside networks on cpu (convsel_model_calibrate_reorders):
     * the model's reorder line for (from, to, thread slot) plus the slot's
     * reorder_offset, times reorder_scale; 0 where nothing was measured (the
     * line as it is). reorder_by_threads: the scale of all of a thread slot's
     * samples. reorder_loo_factor, reorder_loo_offset: the slot's
     * leave-one-out RMS log error without and with an offset (0: not fitted;
     * the offset is 0 unless the second is lower). */
    uint64_t reorder_samples;
    double reorder_by_threads[CONVSEL_REORDER_MODEL_THREADS];
    double reorder_offset[CONVSEL_REORDER_MODEL_THREADS];
    double reorder_loo_factor[CONVSEL_REORDER_MODEL_THREADS], reorder_loo_offset[CONVSEL_REORDER_MODEL_THREADS];
    double reorder_scale[CONVSEL_LAYOUT_COUNT][CONVSEL_LAYOUT_COUNT][CONVSEL_REORDER_MODEL_THREADS];
    /* A layout pair's own line on cpu, where its samples spanned sizes
     * enough to fit one and it predicted them, each left out, better than
     * the scaled model line: reorder_line_a + reorder_line_b x MB moved
     * replaces the scaled line (reorder_line_b 0: none). reorder_loo_scaled,
     * reorder_loo_line: per thread slot, the leave-one-out RMS log error of
     * the pairs that could fit a line, without and with their lines (0: none
     * could); reorder_pairs_fittable, reorder_pairs_own: how many pairs
     * could, and how many keep theirs (counts). Where most of a slot's
     * fittable pairs keep their own, the pairs never timed there take the
     * mean of those lines. */
    double reorder_line_a[CONVSEL_LAYOUT_COUNT][CONVSEL_LAYOUT_COUNT][CONVSEL_REORDER_MODEL_THREADS];
    double reorder_line_b[CONVSEL_LAYOUT_COUNT][CONVSEL_LAYOUT_COUNT][CONVSEL_REORDER_MODEL_THREADS];
    double reorder_loo_scaled[CONVSEL_REORDER_MODEL_THREADS], reorder_loo_line[CONVSEL_REORDER_MODEL_THREADS];
    double reorder_pairs_fittable[CONVSEL_REORDER_MODEL_THREADS], reorder_pairs_own[CONVSEL_REORDER_MODEL_THREADS];
    /* Cold reads inside networks on cpu (convsel_model_calibrate_cold):
     * ms per MB per thread slot, 0 where nothing was measured. */
    uint64_t cold_samples;
    double cold_ms_per_mb[CONVSEL_REORDER_MODEL_THREADS];
    /* Convolutions inside networks on cpu (convsel_model_calibrate_network):
     * what model primitive j's layers pay at a thread slot per MB of their
     * plain weights, 0 where nothing was measured. */
    uint64_t network_samples;
    double network_ms_per_mb[CONVSEL_NETWORK_PRIMITIVES][CONVSEL_REORDER_MODEL_THREADS];
} convsel_calibration;

/* Whether method chooses among others by cross-validation (AUTO,
 * LINEAR_OR_BOTH): what may be asked, never what a calibration fits. */
static inline int convsel_calibrate_method_chooses(convsel_calibrate_method method)
{
    return method == CONVSEL_CALIBRATE_AUTO || method == CONVSEL_CALIBRATE_LINEAR_OR_BOTH;
}

/* What a network charges per MB read, from the excess ms its samples lost
 * inside networks against alone over the megabytes they read: prior_mb
 * counts as megabytes read for free (a few small samples' timer noise then
 * prices little), and the price is clamped to [0, max]. */
static inline double convsel_price_per_mb(double excess_ms, double megabytes, double prior_mb, double max)
{
    double price = excess_ms / (megabytes + prior_mb);
    return price < 0.0 ? 0.0 : price > max ? max : price;
}

/* The first version that may hold calibrations; a model without one is
 * written as CONVSEL_MODEL_FORMAT_VERSION, so older readers still read it. */
#define CONVSEL_MODEL_FORMAT_VERSION_CALIBRATED 2

/* The regret of pred on the rows idx[0..n) of one configuration (one row
 * per primitive), in log: y of the row pred puts fastest (the first of a
 * tie) minus the least y; y and pred in log ms. NaN when n < 2 (nothing to
 * choose). */
double convsel_regret_log(const double *y, const double *pred, const size_t *idx, size_t n);

/* model's calibration for cpu (the same CPU by convsel_fingerprint_same_cpu),
 * or NULL; writable when model is (as strchr's result). */
convsel_calibration *convsel_calibration_find(const convsel_model *model, const convsel_fingerprint *cpu);
/* log_ms transformed by model's calibration for cpu, or unchanged when it
 * has none for cpu. x: the features of the prediction. */
double convsel_calibration_apply(const convsel_model *model, size_t primitive, const convsel_fingerprint *cpu,
                                 const float *x, double log_ms);
/* Frees model's calibrations (destroy calls it). */
void convsel_calibrations_free(convsel_model *model);

/* ---------------------------------------------------------------- roofline */

/* ms of problem at the roofline: max(FLOPs / (peak × u), bytes / bandwidth),
 * peak and bandwidth scaled by the threads that run (at most cpu->cores) and
 * peak by the ISA cap's vector width (cpu NULL: AVX-512, threads unbounded). */
double convsel_roofline_ms(const convsel_problem *problem, int threads, const convsel_fingerprint *cpu,
                           double peak_gflops, double bandwidth_gbs, double utilisation);

/* The refined roofline of a primitive, c + convsel_roofline_ms(.., u): the
 * u and per-call overhead c (ms, >= 0) minimising its squared log error over
 * n problems with measured ms (grid and golden-section searches, alternated;
 * deterministic). Tiny layers take microseconds whatever their FLOPs, which
 * the roofline alone cannot say. */
void convsel_roofline_fit(const convsel_problem *const *problems, const int *threads,
                          const convsel_fingerprint *const *cpus, const double *ms, size_t n, double peak_gflops,
                          double bandwidth_gbs, double *utilisation, double *overhead_ms);

/* What is left now of a time limit of limit_s seconds that started at t0
 * (convsel_now): at least 1e-9, so that training still grows a tree per job;
 * 0 when limit_s is 0 (no limit). */
double convsel_time_left(double limit_s, double t0);

/* The value the trees learn for a time, and back. offset is what the target
 * subtracts from log(ms): 0, log FLOPs, or log of the refined roofline
 * c + convsel_roofline_ms(.., u). */
double convsel_target_offset(const convsel_train_params *params, const convsel_problem *problem, int threads,
                             const convsel_fingerprint *cpu, double utilisation, double overhead_ms);

/* "log", "log_per_flop", "roofline_residual". */
const char *convsel_target_name(convsel_target target);

/* ---------------------------------------------------------------- training table */

/* The conv records of some datasets, with what training and evaluation need. */
typedef struct convsel_table {
    size_t n;
    const convsel_record **records;
    double *ms;            /* the chosen statistic */
    int32_t *primitive;    /* index in names */
    uint32_t *fingerprint; /* index in fingerprints (deduplicated across datasets) */
    size_t *layer;         /* configuration id: shape, threads, fingerprint */
    int32_t *network;      /* index in networks, -1 when the name has no ':' */
    size_t n_layers;
    convsel_primitive_name_buf *names; /* sorted */
    size_t n_names;
    size_t *catalogue;   /* per name: its catalogue index, SIZE_MAX when the catalogue lacks it */
    uint8_t *dispatcher; /* per name: convsel_primitive_is_dispatcher */
    convsel_fingerprint *fingerprints;
    size_t n_fingerprints;
    char (*networks)[CONVSEL_NAME_MAX]; /* sorted */
    size_t n_networks;
} convsel_table;

convsel_status convsel_table_build(const convsel_dataset *const *sets, size_t n_sets, convsel_statistic statistic,
                                   convsel_table *table);
void convsel_table_free(convsel_table *table);

/* Rows grouped by configuration: order[start[l] .. start[l + 1]) are the
 * rows of layer l in increasing order (an empty range when l has none). */
typedef struct convsel_groups {
    size_t n_groups;
    size_t *order; /* the n rows */
    size_t *start; /* n_groups + 1 entries */
} convsel_groups;

/* Groups rows 0..n-1 by layer[i], each below n_layers (n_groups = n_layers).
 * Returns OK, INVALID_ARGUMENT (a layer out of range) or OUT_OF_MEMORY; on
 * failure *groups is empty. The caller frees it with convsel_groups_free. */
convsel_status convsel_groups_build(size_t n, const size_t *layer, size_t n_layers, convsel_groups *groups);
void convsel_groups_free(convsel_groups *groups);

/* Trains on the rows with use[i] != 0 (all when use is NULL). */
convsel_status convsel_model_train_table(const convsel_table *table, const uint8_t *use,
                                         const convsel_train_params *params, convsel_train_progress_fn progress,
                                         void *user, convsel_model **model);

/* pred[i] for the rows with mask[i] != 0 (all when NULL); NaN for rows
 * whose primitive the model lacks and for rows outside the mask. */
convsel_status convsel_model_predict_table(const convsel_model *model, const convsel_table *table, const uint8_t *mask,
                                           double *pred);

/* The metrics of convsel_metrics over rows with a finite pred; layer and
 * primitive are ids (a primitive repeated within a layer counts once).
 * dispatcher (indexed by primitive id, may be NULL): primitives left out of a
 * layer's ranking (Spearman, top-1, regret) when it has two others; MAPE and
 * within10 still count them. unranked (indexed by row, may be NULL): rows
 * left out of their layer's ranking when it has another primitive, as the
 * selector leaves out a kernel that is a library's reference loops. */
convsel_status convsel_metrics_compute(size_t n, const size_t *layer, const int32_t *primitive, const double *measured,
                                       const double *pred, const uint8_t *dispatcher, const uint8_t *unranked,
                                       convsel_metrics *metrics);

/* The statistics' names, indexed by convsel_statistic (model.c). */
extern const char *const convsel_statistic_names[3];

/* The time of a record under statistic. */
double convsel_record_ms(const convsel_record *record, convsel_statistic statistic);

/* ---------------------------------------------------------------- model I/O */

/* Serialises model (docs/model-format.md) into a malloc'ed buffer. */
convsel_status convsel_model_serialize(const convsel_model *model, uint8_t **data, size_t *size);
/* Parses a model from memory; name stands for the file in messages. Never
 * reads outside data[0..size) and never recurses on the file's depth. */
convsel_status convsel_model_parse(const uint8_t *data, size_t size, const char *name, convsel_model **model);
/* Sets model->id from its serialisation. */
convsel_status convsel_model_update_id(convsel_model *model);
void convsel_model_hash_id(const uint8_t *data, size_t size, char id[17]);

#endif
