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

/* Shared helpers (common.c). Parsers print their own message and return 0 on
 * bad input; the others return an exit code. */
int cli_is_help(const char *arg);
int cli_status_exit(convsel_status st);
/* Prints "convsel CMD: <last error>" and returns the exit code for st. */
int cli_fail(const char *cmd, convsel_status st);
int cli_parse_long(const char *cmd, const char *opt, const char *text, long lo, long hi, long *value);
int cli_parse_double(const char *cmd, const char *opt, const char *text, double lo, double hi, double *value);
/* The value after option argv[*i] (advancing *i), or NULL with a message. */
const char *cli_value(const char *cmd, int argc, char **argv, int *i);
/* A network from --net FILE or a single descriptor (exactly one given). */
int cli_load_network(const char *cmd, const char *net_file, const char *desc, long mb, convsel_network **net);
/* 1 when plan describes net's expanded layer sequence (each layer's shape and
 * batch, names aside); else 0, with the first layer that differs said on
 * stderr under cmd's name (cmd NULL: silent). */
int cli_plan_matches(const convsel_plan *plan, const convsel_network *net, const char *cmd);
/* The network files of the --net arguments, directories expanded (their
 * *.txt in byte order, convsel_network_files); *batch set when there are
 * several or a directory was named. Free with convsel_network_files_free. */
int cli_gather_networks(const char *cmd, const char *const *args, size_t n_args, char ***files, size_t *n_files,
                        int *batch);
/* A network file's name without its directory and ".txt": its plan's NAME. */
void cli_network_stem(const char *path, char *buf, size_t size);
/* A plan in which every layer of net uses one primitive (the others
 * excluded), priced by costs: oneDNN alone is onednn_auto's. NOT_APPLICABLE
 * when it cannot compute some layer. */
convsel_status cli_single_plan(const convsel_network *net, int threads, size_t primitive,
                               const convsel_cost_source *costs, convsel_plan **plan);
/* Marks in mask (convsel_primitive_count() entries) the primitives named, or
 * belonging to the families named, in a comma-separated list. */
int cli_parse_primitive_set(const char *cmd, const char *list, unsigned char *mask);

/* Where a command writes only after its work (profiling, verifying, training):
 * a path it cannot write found before that work, not after. cli_check_output:
 * the directory a file goes into exists and is writable, and the path is not a
 * directory. cli_prepare_dir: a directory for several files, created (one
 * level) when missing. Each prints what is wrong and returns CLI_USAGE. */
int cli_check_output(const char *cmd, const char *opt, const char *path);
int cli_prepare_dir(const char *cmd, const char *opt, const char *dir);

/* Seconds on a monotonic clock. */
double cli_now(void);
/* problem's descriptor without its name and repeat count: the shape alone. */
void cli_shape_desc(const convsel_problem *problem, char *buf, size_t size);
/* Which plan --check kept, in words ("plan without the winograd family"). */
void cli_kept_name(const convsel_check_report *report, char *buf, size_t size);
/* --check's plans without one family: " / 51.2<unit> (without winograd) / ..." (or ""). */
void cli_without_times(const convsel_check_report *report, const char *unit, char *buf, size_t size);
/* s as one CSV field: quoted, its quotes doubled, where it holds a comma,
 * a quote or a line break. */
void cli_csv_field(FILE *out, const char *s);
/* s as a JSON string, quoted and escaped, on stdout. */
void cli_json_string(const char *s);
/* Loads --model M, or the default model when path is NULL. */
int cli_open_model(const char *cmd, const char *path, convsel_model **model);
/* 1 when one of the model's fingerprints is here's setup (the same CPU, cap
 * and OpenBLAS kernels); else 0, with *same_cpu (when not NULL) a fingerprint
 * of this CPU and cap measured with other OpenBLAS kernels, or NULL. */
int cli_model_describes(const convsel_model *model, const convsel_fingerprint *here,
                        const convsel_fingerprint **same_cpu);
/* The instruction set of the OpenBLAS kernels a fingerprint ran, by name. */
const char *cli_blas_isa_name(const convsel_fingerprint *fp);
/* One line when the model was trained on another CPU than here, or measured
 * it with other OpenBLAS kernels, or when its calibration for here measured
 * other thread counts than threads (0: do not ask). */
void cli_warn_cpu(const char *cmd, const convsel_model *model, const convsel_fingerprint *here, int threads);
/* One clause saying that model was not trained on here's CPU and what sets
 * here apart from the nearest CPU it was trained on (convsel_fingerprint_diff). */
void cli_foreign_cpu_text(const convsel_model *model, const convsel_fingerprint *here, char *buf, size_t size);
/* The thread counts (convsel_threads_bit) the model's calibration for this
 * CPU measured: 0 when it has none for here or its file predates them. */
uint64_t cli_calibrated_threads(const convsel_model *model, const convsel_fingerprint *here);
/* mask's thread counts as text: "16 threads", "1 and 2 threads", "1, 2 and 4 threads". */
void cli_threads_text(uint64_t mask, char *buf, size_t size);
/* The plan table: layer, primitive, predicted ms, runner-up, margin, reorders. */
void cli_print_plan(const convsel_plan *plan);

int cmd_primitives(int argc, char **argv);
int cmd_select(int argc, char **argv);
int cmd_compare(int argc, char **argv);
int cmd_run(int argc, char **argv);
int cmd_bench_layer(int argc, char **argv);
int cmd_profile(int argc, char **argv);
int cmd_dataset(int argc, char **argv);
int cmd_train(int argc, char **argv);
int cmd_predict(int argc, char **argv);
int cmd_eval(int argc, char **argv);
int cmd_calibrate(int argc, char **argv);
int cmd_model(int argc, char **argv);

#endif
