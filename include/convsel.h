/*
 * convsel — choose, per layer, how a CNN's convolutions are computed on a CPU.
 *
 * Public API. Everything exported starts with convsel_. Fallible calls return
 * a convsel_status and write results through out-parameters; the detail text
 * of the last failure on this thread is convsel_last_error().
 *
 * Ownership: the caller owns every tensor buffer; the library never keeps a
 * pointer to one past the call. Handles come in _create/_destroy pairs and
 * _destroy(NULL) does nothing. A const char * returned by a handle belongs to
 * that handle.
 */
#ifndef CONVSEL_H
#define CONVSEL_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define CONVSEL_VERSION_MAJOR 0
#define CONVSEL_VERSION_MINOR 1
#define CONVSEL_VERSION_PATCH 0
#define CONVSEL_VERSION_STRING "0.1.0"

/* ---------------------------------------------------------------- status */

/* X(name, text): the enum and its text come from one table so they cannot drift. */
#define CONVSEL_STATUS_MAP(X)                                                  \
    X(OK, "success")                                                           \
    X(INVALID_ARGUMENT, "invalid argument")                                    \
    X(PARSE_ERROR, "parse error")                                              \
    X(UNSUPPORTED, "unsupported")                                              \
    X(NOT_APPLICABLE, "primitive not applicable to this problem")             \
    X(OUT_OF_MEMORY, "out of memory")                                          \
    X(TOO_LARGE, "problem too large")                                          \
    X(IO_ERROR, "i/o error")                                                   \
    X(CORRUPT, "corrupt or foreign file")                                      \
    X(VERSION_MISMATCH, "unknown file format version")                         \
    X(NOT_FOUND, "not found")                                                  \
    X(INTERRUPTED, "interrupted")                                              \
    X(BACKEND_ERROR, "backend library error")                                  \
    X(WRONG_RESULT, "wrong result")

typedef enum {
#define CONVSEL_STATUS_ENUM(name, text) CONVSEL_##name,
    CONVSEL_STATUS_MAP(CONVSEL_STATUS_ENUM)
#undef CONVSEL_STATUS_ENUM
    CONVSEL_STATUS_COUNT
} convsel_status;

/* Short fixed text of a status ("parse error"). Never NULL. */
const char *convsel_status_str(convsel_status status);

/* Detail of the last failed call on this thread ("line 12: unknown key 'xz'"),
 * or "" when none. Valid until the next failing call on this thread. */
const char *convsel_last_error(void);

/* ---------------------------------------------------------------- problem */

#define CONVSEL_NAME_MAX 128

/*
 * A 2D, f32, forward-inference convolution without bias. Dilation follows
 * oneDNN: 0 means none (the kernel's taps are dh+1 apart). Padding ph/pw is
 * the top/left padding; the bottom/right padding is implied by the output
 * size (convsel_problem_pad_bottom/right), as in benchdnn, and may be
 * negative when trailing input rows are never read (strided layers).
 * repeat is the "*N" of a benchdnn name: how often the layer occurs.
 */
typedef struct convsel_problem {
    int64_t g, mb;
    int64_t ic, ih, iw;
    int64_t oc, oh, ow;
    int64_t kh, kw;
    int64_t sh, sw;
    int64_t ph, pw;
    int64_t dh, dw;
    int repeat;
    char name[CONVSEL_NAME_MAX]; /* without the "*N" suffix */
} convsel_problem;

/*
 * Parses one benchdnn convolution descriptor ("mb1ic64ih56oc64oh56kh3ph1n\"x\"").
 * Missing keys take benchdnn's defaults (g1, mb2, stride 1, padding 0,
 * dilation 0, iw/ow/kw/sw/pw/dw copy the h value, output sizes deduced) and
 * the result is validated (convsel_problem_validate).
 * Returns OK, PARSE_ERROR (unknown key or bad token, named in the detail),
 * UNSUPPORTED (1D/3D), INVALID_ARGUMENT (inconsistent sizes) or TOO_LARGE.
 */
convsel_status convsel_problem_parse(const char *desc, convsel_problem *problem);

/* Writes the canonical descriptor of problem into buf (NUL-terminated,
 * truncated to size). Parsing it gives back the same problem. Returns the
 * length the full string needs, as snprintf does. */
int convsel_problem_format(const convsel_problem *problem, char *buf, size_t size);

/* Checks sizes: positive dimensions, channels divisible by groups, an output
 * size consistent with input, kernel, stride, padding and dilation, a kernel
 * no larger than the padded input, and every tensor's byte count below
 * convsel_max_tensor_bytes(). Returns OK, INVALID_ARGUMENT or TOO_LARGE. */
convsel_status convsel_problem_validate(const convsel_problem *problem);

int64_t convsel_problem_pad_bottom(const convsel_problem *problem);
int64_t convsel_problem_pad_right(const convsel_problem *problem);

/* Multiply-adds × 2 of the direct algorithm (the FLOPs every primitive is
 * credited with, Winograd included). */
double convsel_problem_flops(const convsel_problem *problem);

/* Element counts of the plain tensors: src mb×ic×ih×iw, weights
 * g×(oc/g)×(ic/g)×kh×kw, dst mb×oc×oh×ow. */
size_t convsel_problem_src_elems(const convsel_problem *problem);
size_t convsel_problem_weights_elems(const convsel_problem *problem);
size_t convsel_problem_dst_elems(const convsel_problem *problem);

/* Largest tensor convsel accepts, in bytes (default 4 GiB; the environment
 * variable CONVSEL_MAX_TENSOR_BYTES overrides it). */
size_t convsel_max_tensor_bytes(void);

/* ---------------------------------------------------------------- network */

typedef struct convsel_network convsel_network;

/*
 * Reads a network file: one descriptor per line, '#' starts a comment, blank
 * lines ignored. mb > 0 overrides every layer's batch (0 keeps the file's).
 * Errors name the file and line. Returns OK, IO_ERROR, PARSE_ERROR,
 * UNSUPPORTED, INVALID_ARGUMENT or TOO_LARGE.
 */
convsel_status convsel_network_load(const char *path, int64_t mb, convsel_network **network);

/* As convsel_network_load, but lines that are valid benchdnn descriptors of
 * a kind convsel does not support (1D, 3D: UNSUPPORTED) are skipped instead
 * of failing, and counted in *skipped (may be NULL). */
convsel_status convsel_network_load_supported(const char *path, int64_t mb, convsel_network **network,
                                              size_t *skipped);

/* A network of one layer, from a descriptor (for the CLI's DESC arguments). */
convsel_status convsel_network_from_desc(const char *desc, int64_t mb, convsel_network **network);

void convsel_network_destroy(convsel_network *network);
size_t convsel_network_size(const convsel_network *network); /* lines, not repeats */
const convsel_problem *convsel_network_layer(const convsel_network *network, size_t i);
const char *convsel_network_name(const convsel_network *network);

/* The network files path names: path itself when it is not a directory,
 * else every "NAME.txt" directly in it (not hidden ones), sorted by byte
 * value so the order is the same everywhere; possibly none. *files (n of
 * them) is for convsel_network_files_free. IO_ERROR names a path that cannot
 * be read as a directory or does not exist. */
convsel_status convsel_network_files(const char *path, char ***files, size_t *n);
void convsel_network_files_free(char **files, size_t n);

/* ---------------------------------------------------------------- layouts */

/*
 * Activation layouts. Blocked layouts (nChw8c, nChw16c) pad the channel count
 * up to a multiple of the block; padded channels hold zeros.
 */
#define CONVSEL_LAYOUT_MAP(X)                                                  \
    X(NCHW, "nchw", 1)                                                         \
    X(NHWC, "nhwc", 1)                                                         \
    X(NCHW8C, "nChw8c", 8)                                                     \
    X(NCHW16C, "nChw16c", 16)

typedef enum {
#define CONVSEL_LAYOUT_ENUM(name, text, block) CONVSEL_LAYOUT_##name,
    CONVSEL_LAYOUT_MAP(CONVSEL_LAYOUT_ENUM)
#undef CONVSEL_LAYOUT_ENUM
    CONVSEL_LAYOUT_COUNT
} convsel_layout;

const char *convsel_layout_name(convsel_layout layout);
/* Parses "nchw", "nhwc", "nChw8c", "nChw16c". Returns OK or INVALID_ARGUMENT. */
convsel_status convsel_layout_parse(const char *text, convsel_layout *layout);
/* Elements of an activation tensor of mb×c×h×w in layout (channels padded). */
size_t convsel_layout_elems(convsel_layout layout, int64_t mb, int64_t c, int64_t h, int64_t w);

/* 64-byte aligned allocation for tensors; free with convsel_free. */
void *convsel_alloc(size_t bytes);
void convsel_free(void *ptr);

/* ---------------------------------------------------------------- ISA */

#define CONVSEL_ISA_MAP(X)                                                     \
    X(SCALAR, "scalar")                                                        \
    X(SSE41, "sse41")                                                          \
    X(AVX2, "avx2")                                                            \
    X(AVX512, "avx512")

typedef enum {
#define CONVSEL_ISA_ENUM(name, text) CONVSEL_ISA_##name,
    CONVSEL_ISA_MAP(CONVSEL_ISA_ENUM)
#undef CONVSEL_ISA_ENUM
    CONVSEL_ISA_COUNT
} convsel_isa;

const char *convsel_isa_name(convsel_isa isa);
convsel_status convsel_isa_parse(const char *text, convsel_isa *isa);

/*
 * Caps the instruction set of every primitive: oneDNN's maximum ISA, the own
 * kernels' dispatch, and (through OPENBLAS_CORETYPE, which OpenBLAS reads only
 * when it loads) OpenBLAS's kernels. Must be called before any primitive is
 * created; the environment variable CONVSEL_ISA does the same at the first
 * call into the library. Returns OK, INVALID_ARGUMENT (after primitives were
 * created) or BACKEND_ERROR.
 */
convsel_status convsel_set_isa(convsel_isa cap);

/* The ISA in force: min(cap, what this CPU supports). */
convsel_isa convsel_get_isa(void);

/*
 * For a program's main(), before anything else: applies an ISA cap to the
 * whole process, OpenBLAS included. The cap comes from an option "--isa X" or
 * "--isa=X" anywhere in argv (before "--"; the last one wins), else from the
 * environment variable CONVSEL_ISA. With neither, only one thing can happen:
 * when OpenBLAS did not recognise this CPU and fell back to pre-AVX2 kernels
 * on an AVX2 or AVX-512 CPU (and OPENBLAS_CORETYPE is unset), the program
 * re-executes itself once with OPENBLAS_CORETYPE set to the core this CPU's
 * ISA runs (SkylakeX, Haswell), as below; else nothing happens. The cap is
 * exported as CONVSEL_ISA, and OPENBLAS_CORETYPE is set to the OpenBLAS core
 * that uses nothing above it (avx512 → SkylakeX, avx2 → Haswell, sse41 and
 * scalar → Nehalem, from min(cap, this CPU)). OpenBLAS reads that variable
 * only when it is loaded, so when it had another value the program re-executes
 * itself once (/proc/self/exe, same argv) and this call runs again in the new
 * image. The --isa options are then removed from argv (*argc is updated, argv
 * stays NULL-terminated) and convsel_set_isa applies the cap.
 * Returns OK; INVALID_ARGUMENT for an unknown ISA (the detail names it) or a
 * missing value; BACKEND_ERROR when the re-execution failed (the cap still
 * holds for oneDNN and convsel's kernels, not for OpenBLAS).
 */
convsel_status convsel_isa_prepare_process(int *argc, char **argv);

/* OpenBLAS's name for the kernels it runs ("SkylakeX", "Haswell", ...). */
const char *convsel_openblas_corename(void);

/* oneDNN's effective ISA ("avx512_core_bf16", "avx2", "sse41"). Asking fixes
 * the ISA cap for the rest of the process, as creating a primitive does. */
const char *convsel_onednn_isa(void);

/* ---------------------------------------------------------------- primitives */

/* Number of primitives in the catalogue, and the i-th one's properties. */
size_t convsel_primitive_count(void);
const char *convsel_primitive_name(size_t i);
const char *convsel_primitive_family(size_t i);
/* The activation layouts the primitive uses ("nchw", "any (oneDNN picks)"). */
const char *convsel_primitive_layouts(size_t i);
/* Expected max|y - y_ref| / max|y_ref| on real layers (Winograd's is larger). */
double convsel_primitive_expected_error(size_t i);
/* 1 when the primitive is only for testing (the reference) and never selected. */
int convsel_primitive_is_reference(size_t i);
/* 1 when the primitive only dispatches to what another catalogue primitive
 * runs (onednn_auto, the baseline): ranking metrics leave it out. */
int convsel_primitive_is_dispatcher(size_t i);
/* 1 when the primitive's products run OpenBLAS's sgemm under ISA cap cap
 * (the GEMM primitives always, convsel's Winograd below AVX2), else 0. */
int convsel_primitive_runs_openblas(size_t i, convsel_isa cap);
/* Index of a primitive by name. Returns OK or NOT_FOUND. */
convsel_status convsel_primitive_find(const char *name, size_t *index);

/* 1 if primitive i can compute problem; otherwise 0 and, when why is not NULL,
 * the reason in why. */
int convsel_primitive_applicable(size_t i, const convsel_problem *problem, char *why, size_t why_size);

typedef struct convsel_instance convsel_instance;

/*
 * Creates primitive i for problem on threads OpenMP threads. weights are the
 * plain goihw f32 weights (g × oc/g × ic/g × kh × kw); they are copied,
 * transformed and reordered here, so run() costs only the convolution (the
 * first run also allocates the workspace, unless one was set: time after a
 * warm-up).
 * Returns OK, NOT_APPLICABLE, OUT_OF_MEMORY, INVALID_ARGUMENT or BACKEND_ERROR.
 */
convsel_status convsel_instance_create(size_t i, const convsel_problem *problem, int threads,
                                       const float *weights, convsel_instance **instance);
void convsel_instance_destroy(convsel_instance *instance);

/* src in convsel_instance_src_layout, dst in convsel_instance_dst_layout,
 * sized by convsel_layout_elems. Any alignment; 64 bytes is fastest. */
convsel_status convsel_instance_run(convsel_instance *instance, const float *src, float *dst);

convsel_layout convsel_instance_src_layout(const convsel_instance *instance);
convsel_layout convsel_instance_dst_layout(const convsel_instance *instance);
/* Bytes of scratch the instance's runs use (0: none), allocated by its first
 * run unless one is set. Nothing in it carries from one run to the next, so
 * instances that never run at the same time may share one buffer (the
 * network runner gives all its layers one). */
size_t convsel_instance_workspace_bytes(const convsel_instance *instance);
/* Bytes of weights the instance keeps, in the form its runs read them:
 * transformed (Winograd), blocked and padded to the vector width, or plain
 * goihw. */
size_t convsel_instance_weights_bytes(const convsel_instance *instance);
/*
 * Runs from now on use workspace, of bytes >= convsel_instance_workspace_bytes
 * and 64-byte aligned, in place of the instance's own (freed here); NULL goes
 * back to one of its own. The caller keeps workspace alive while the instance
 * may run, and never runs two instances sharing it at once. Returns OK or
 * INVALID_ARGUMENT (too small, misaligned).
 */
convsel_status convsel_instance_set_workspace(convsel_instance *instance, void *workspace, size_t bytes);
size_t convsel_instance_primitive(const convsel_instance *instance);

/* ---------------------------------------------------------------- reorders */

typedef struct convsel_reorder convsel_reorder;

/* A oneDNN reorder of an mb×c×h×w activation tensor between two layouts. */
convsel_status convsel_reorder_create(int64_t mb, int64_t c, int64_t h, int64_t w, convsel_layout from,
                                      convsel_layout to, int threads, convsel_reorder **reorder);
convsel_status convsel_reorder_run(convsel_reorder *reorder, const float *src, float *dst);
void convsel_reorder_destroy(convsel_reorder *reorder);

/* ---------------------------------------------------------------- timing */

/*
 * Candidates are timed interleaved in short rounds (A B C A B C ...) after a
 * warm-up, in one process: on noisy shared machines separate runs drift 1.4×
 * while interleaved rounds agree within ~1%.
 */
typedef struct convsel_timing_options {
    double warmup_s;      /* warm-up time per candidate before measuring (default 0.05) */
    int min_rounds;       /* at least this many timed runs of each candidate (default 5) */
    int max_rounds;       /* at most this many (default 1000) */
    double max_time_s;    /* stop after this much total time once min_rounds are done (default 2) */
    double target_rel_ci; /* stop when every median is known to ± this fraction (default 0.02) */
    double settle_s;      /* pause when the thread count changes between calls (default 0.15) */
    /* Before every timed run (not the warm-up), write this many bytes of a
     * buffer of the call's own, with the thread count the candidates left
     * (each thread its share), so that the run starts with its data out of
     * the caches those writes reach. 0 (the default): off, every run after
     * the first finds what the candidates before it left in cache. At most
     * 1 GiB; the writes count towards max_time_s. A diagnostic: datasets
     * and --verify time with 0. */
    size_t flush_bytes;
    /* When a candidate's median comes out over this many times its minimum —
     * more than half its runs slowed by something else — the whole
     * measurement is made once more (warm-up included) and, of the two, the
     * one with the lower medians (geometric mean over the candidates) is
     * kept: other load only ever slows a run. 0: never. Else
     * at least 1 (default 3: on this project's data a median over 3× the
     * minimum was nearly always a disturbed run, data/README.md). */
    double retry_ratio;
    /* The clock every duration above and every timing is read from, in
     * seconds. NULL (the default): CLOCK_MONOTONIC. A test or a simulation
     * gives its own (its candidates advance it), and every statistic, stopping
     * rule and retry decision then follows from the durations it makes up. */
    double (*clock)(void);
} convsel_timing_options;

/* Fills opts with the defaults above. */
void convsel_timing_options_default(convsel_timing_options *opts);

/* Which of a measurement's timings stands for its time: the one a model
 * learns, and the one --verify measures to replace its predictions. */
typedef enum { CONVSEL_STAT_MEDIAN = 0, CONVSEL_STAT_P10 = 1, CONVSEL_STAT_MIN = 2 } convsel_statistic;

typedef struct convsel_timing {
    double min_ms, p10_ms, median_ms, p90_ms;
    int runs;
    int retried; /* 1: the measurement was made twice (retry_ratio) */
} convsel_timing;

/* A timed candidate: run(ctx) does one execution. */
typedef convsel_status (*convsel_timed_fn)(void *ctx);

/*
 * Times n candidates interleaved. fns[i](ctxs[i]) runs candidate i; results[i]
 * receives its statistics. A candidate that fails stops the measurement with
 * its status. Returns OK, INVALID_ARGUMENT or the failing candidate's status.
 */
convsel_status convsel_time_interleaved(size_t n, const convsel_timed_fn *fns, void *const *ctxs,
                                        const convsel_timing_options *opts, convsel_timing *results);

/* The measurement of one primitive on one problem, as bench-layer and the
 * profiler make it. */
typedef struct convsel_measurement {
    size_t primitive;      /* index in the catalogue */
    int applicable;        /* 0: why holds the reason, the rest is unset */
    char why[160];
    convsel_layout src_layout, dst_layout;
    double create_ms;      /* time convsel_instance_create took */
    convsel_timing timing; /* of convsel_instance_run alone */
    double gflops;         /* convsel_problem_flops / median time */
    size_t kernel;         /* the primitive whose kernel ran (convsel_primitive_runs_as);
                              SIZE_MAX when the library could not say */
    size_t weights_bytes;  /* the weights its instance kept (convsel_instance_weights_bytes) */
} convsel_measurement;

/*
 * Creates every selected primitive (selected[i] != 0, or all non-reference
 * primitives when selected is NULL) on problem with random weights and input,
 * and times the applicable ones interleaved. out has convsel_primitive_count()
 * entries; inapplicable or unselected primitives get applicable = 0.
 * Returns OK, or the first error that is not NOT_APPLICABLE.
 */
convsel_status convsel_measure_problem(const convsel_problem *problem, int threads, const unsigned char *selected,
                                       const convsel_timing_options *opts, convsel_measurement *out);

/*
 * What else the machine did while this process measured: a mark of the
 * machine's busy and stolen CPU time (Linux's /proc/stat), this process's
 * CPU time (all its threads) and the wall clock. Between two marks, the CPU
 * time other processes used and the hypervisor stole, per second of wall
 * time: in CPUs, so 1.0 is one CPU kept busy throughout. Interleaved timing
 * cancels a slow spell that falls on every candidate alike; a measurement
 * set against another taken seconds apart (a layer inside a network against
 * alone, as calibrate's probes do) does not, and this says when to distrust
 * one.
 */
typedef struct convsel_busy_mark {
    double wall_s, busy_s, steal_s, self_s; /* busy_s, steal_s < 0: /proc/stat unreadable */
} convsel_busy_mark;
void convsel_busy_mark_now(convsel_busy_mark *mark);
/* From a to b: *others_cpus (other processes, in CPUs) and *steal_cpus
 * (either may be NULL). Returns 0, or -1 (both set to -1) where either mark
 * has no /proc/stat or no time passed. */
int convsel_busy_between(const convsel_busy_mark *a, const convsel_busy_mark *b, double *others_cpus,
                         double *steal_cpus);
/* The first line of /proc/stat's text ("cpu  user nice system idle iowait
 * irq softirq steal ...", in clock ticks) into busy ticks (user, nice,
 * system, irq, softirq; guest time is inside user) and steal ticks (0 where
 * the kernel gives none). Returns 0, or -1 on text that is not such a line. */
int convsel_proc_stat_parse(const char *text, double *busy_ticks, double *steal_ticks);

/* ---------------------------------------------------------------- CPU fingerprint */

typedef struct convsel_fingerprint {
    char vendor[32];        /* "GenuineIntel", "AuthenticAMD" */
    char model_name[128];   /* /proc/cpuinfo's model name */
    char microarch[32];     /* e.g. "cascadelake", "zen4", or "family-6-model-85" */
    char isa_flags[256];    /* space-separated: sse41 avx avx2 fma avx512f avx512bw avx512vnni ... */
    convsel_isa isa_cap;    /* the cap convsel ran under */
    int cores;              /* logical CPUs available */
    int64_t l1d_bytes, l2_bytes, l3_bytes; /* per core for L1/L2, total for L3 */
    char onednn_version[32];
    char openblas_version[96];
} convsel_fingerprint;

/* Reads this machine's fingerprint (with the ISA cap in force). Cache sizes
 * come from sysfs; a size sysfs lacks from CPUID's deterministic cache leaf
 * (4 on Intel, 0x8000001D on AMD), which sysfs is filled from; glibc's
 * sysconf last (on AMD a whole package's L3 in virtual machines). L3 is the
 * sum over the L3 instances of the CPUs in the affinity mask. */
convsel_status convsel_fingerprint_get(convsel_fingerprint *fingerprint);
/* 1 when a and b describe the same CPU and cap (library versions ignored). */
int convsel_fingerprint_same_cpu(const convsel_fingerprint *a, const convsel_fingerprint *b);
/* The instruction set of the OpenBLAS kernels that ran where the fingerprint
 * was taken: Debian's DYNAMIC_ARCH build names the core in use in its
 * configuration (openblas_version: "... USE_OPENMP Haswell MAX_THREADS=64"),
 * and the core is chosen by OpenBLAS's detection or by OPENBLAS_CORETYPE in
 * the environment, not by the CPU alone. AVX512 for SkylakeX, Cooperlake and
 * SapphireRapids, AVX2 for Haswell, Zen and Excavator, SSE41 for Nehalem to
 * Steamroller, SCALAR for older cores; -1 when it names no core convsel knows. */
int convsel_fingerprint_blas_isa(const convsel_fingerprint *fingerprint);
/* 1 when a and b are the same CPU and cap and their OpenBLAS kernels use the
 * same instruction set (or either's is unknown): a model's measurements of a
 * and a run on b then agree on the GEMM primitives too. */
int convsel_fingerprint_same_setup(const convsel_fingerprint *a, const convsel_fingerprint *b);
/* How many of the fields convsel_fingerprint_same_cpu compares differ
 * between here and other (0: the same CPU and cap). Writes them to buf,
 * here's value first, e.g. "ISA cap avx2 against sse41, L3 508 MiB against
 * 32 MiB" (ISA flags as "other ISA flags"; "" when none differ); size 0
 * writes nothing. */
int convsel_fingerprint_diff(const convsel_fingerprint *here, const convsel_fingerprint *other, char *buf,
                             size_t size);

/* ---------------------------------------------------------------- datasets */

/* What a record measured: a convolution primitive on a problem, or a reorder
 * of one of the problem's activations between layouts: the src-shaped one
 * (mb × ic × ih × iw) or the dst-shaped one (mb × oc × oh × ow), as
 * record.tensor says. */
typedef enum { CONVSEL_RECORD_CONV = 0, CONVSEL_RECORD_REORDER = 1 } convsel_record_kind;
typedef enum { CONVSEL_TENSOR_SRC = 0, CONVSEL_TENSOR_DST = 1 } convsel_tensor;

typedef struct convsel_record {
    convsel_record_kind kind;
    convsel_problem problem;
    char primitive[32];        /* conv: primitive name; reorder: "reorder" */
    convsel_layout from, to;   /* conv: the instance's src/dst layouts; reorder: from → to */
    int threads;
    convsel_isa isa;           /* the cap in force */
    uint32_t fingerprint;      /* index into the dataset's fingerprints */
    double min_ms, p10_ms, median_ms, p90_ms;
    int runs;
    double create_ms;
    convsel_tensor tensor;     /* reorder: which activation; conv: SRC */
    char kernel[32];           /* conv: the primitive whose kernel ran (convsel_primitive_runs_as:
                                  "onednn_gemm" for a oneDNN variant run as its gemm code, the
                                  reference for its reference loops, else the primitive itself);
                                  "" when not recorded (files written before the column) */
} convsel_record;

typedef struct convsel_dataset convsel_dataset;

/*
 * Loads a dataset file (docs/dataset-format.md). A truncated tail is tolerated:
 * every whole record is kept and a warning is available through
 * convsel_dataset_warning(). A foreign, corrupt or unknown-version file fails
 * with CORRUPT / VERSION_MISMATCH and a detail naming the file and offset; a
 * missing file with NOT_FOUND, an unreadable one with IO_ERROR.
 */
convsel_status convsel_dataset_load(const char *path, convsel_dataset **dataset);
/* An empty in-memory dataset (to merge into, or to split). */
convsel_status convsel_dataset_create(convsel_dataset **dataset);
void convsel_dataset_destroy(convsel_dataset *dataset);
size_t convsel_dataset_size(const convsel_dataset *dataset);
const convsel_record *convsel_dataset_record(const convsel_dataset *dataset, size_t i);
size_t convsel_dataset_fingerprint_count(const convsel_dataset *dataset);
const convsel_fingerprint *convsel_dataset_fingerprint(const convsel_dataset *dataset, size_t i);
/* "" when loading found nothing to warn about. */
const char *convsel_dataset_warning(const convsel_dataset *dataset);

/* Loads a dataset from size bytes of memory, as convsel_dataset_load does a
 * file; name stands for the file in messages. */
convsel_status convsel_dataset_load_buffer(const void *data, size_t size, const char *name,
                                           convsel_dataset **dataset);

/* Adds a fingerprint, or finds an identical one (every field equal), and
 * writes its index. Returns OK, INVALID_ARGUMENT or OUT_OF_MEMORY. */
convsel_status convsel_dataset_add_fingerprint(convsel_dataset *dataset, const convsel_fingerprint *fingerprint,
                                               uint32_t *index);
/* Appends a copy of record, checked as loading checks records (valid
 * problem, known layouts and ISA, existing fingerprint index, finite times).
 * Returns OK, INVALID_ARGUMENT or OUT_OF_MEMORY. */
convsel_status convsel_dataset_append(convsel_dataset *dataset, const convsel_record *record);

/* Adds src's fingerprints and records to dataset: fingerprints deduplicated,
 * record indexes remapped, and a record dropped when one with the same
 * measurement key is already there (everything but the timings, create_ms and
 * the problem's name and repeat). added and dropped may be NULL. */
convsel_status convsel_dataset_merge(convsel_dataset *dataset, const convsel_dataset *src, size_t *added,
                                     size_t *dropped);

/* Writes dataset to path, atomically (a temporary file renamed over path).
 * Returns OK or IO_ERROR. */
convsel_status convsel_dataset_save(const convsel_dataset *dataset, const char *path);

/* A configuration is a problem's shape (every size, not the name) measured at
 * a thread count on one fingerprint. Writes its key
 * ("g1mb1_ic..._dh0dw0/t2/f0") into buf as snprintf does. */
int convsel_record_config_key(const convsel_record *record, char *buf, size_t size);

typedef struct convsel_dataset_summary {
    size_t records, conv_records, reorder_records;
    size_t configs;  /* distinct configuration keys */
    size_t problems; /* distinct shapes */
    size_t disturbed; /* conv records whose median exceeds CONVSEL_DISTURBED_RATIO x their minimum */
} convsel_dataset_summary;
/* A median this many times the minimum: more than half the runs were slowed
 * by something else, and the median is not the kernel's time. */
#define CONVSEL_DISTURBED_RATIO 10.0
void convsel_dataset_summarize(const convsel_dataset *dataset, convsel_dataset_summary *summary);

/*
 * The configurations of dataset worth measuring again: those measured on a CPU
 * identical to cpu (every fingerprint field, library versions included, so
 * that merging the new records replaces the old; NULL: any) with a
 * convolution record whose median exceeds ratio × its minimum. (Not reorders:
 * at 2 threads a fifth of them have a median over twice their minimum however
 * quiet the machine — a measurement again gives as many — so they would flag
 * most configurations.) Writes
 * each one's shape (the configuration's first record's problem, name
 * included) and thread count, in order of first appearance, into *problems
 * and *threads (malloc'ed, NULL when count is 0; the caller frees them), and
 * into *elsewhere (may be NULL) how many such configurations were measured on
 * another CPU or cap. Returns OK, INVALID_ARGUMENT (a negative or non-finite
 * ratio) or OUT_OF_MEMORY.
 */
convsel_status convsel_dataset_disturbed(const convsel_dataset *dataset, double ratio, const convsel_fingerprint *cpu,
                                         convsel_problem **problems, int **threads, size_t *count, size_t *elsewhere);

/*
 * Splits dataset into a train and a test part with every record of a group on
 * one side: groups are shapes (CONFIG: all thread counts of a shape together)
 * or networks (NETWORK: the part of the problem's name before its first ':',
 * so perturbed layers go with their network; a name without ':' is its own
 * group). round(test_frac × groups) groups, drawn with seed, go to test.
 */
typedef enum { CONVSEL_SPLIT_BY_CONFIG = 0, CONVSEL_SPLIT_BY_NETWORK = 1 } convsel_split_by;
convsel_status convsel_dataset_split(const convsel_dataset *dataset, double test_frac, uint64_t seed,
                                     convsel_split_by by, convsel_dataset **train, convsel_dataset **test);

/*
 * An appending, crash-safe dataset writer. CREATE fails when path exists;
 * TRUNCATE replaces it; RESUME appends to it (creating it when absent) after
 * checking that its header holds a fingerprint identical to this one (same
 * CPU, ISA cap and library versions; else INVALID_ARGUMENT naming both) and
 * cutting a torn tail. A new file's
 * header is written to a temporary file renamed into place, so path never
 * holds half a header. Records are buffered until _flush, which writes them
 * and fsyncs: a process killed between flushes loses only the unflushed ones.
 */
typedef enum { CONVSEL_WRITE_CREATE = 0, CONVSEL_WRITE_TRUNCATE = 1, CONVSEL_WRITE_RESUME = 2 } convsel_write_mode;
typedef struct convsel_dataset_writer convsel_dataset_writer;

convsel_status convsel_dataset_writer_open(const char *path, const convsel_fingerprint *fingerprint,
                                           convsel_write_mode mode, convsel_dataset_writer **writer);
/* The records that were in the file when it was opened (RESUME), else empty. */
const convsel_dataset *convsel_dataset_writer_existing(const convsel_dataset_writer *writer);
/* Buffers a record; its fingerprint index is replaced by the writer's. */
convsel_status convsel_dataset_writer_append(convsel_dataset_writer *writer, const convsel_record *record);
convsel_status convsel_dataset_writer_flush(convsel_dataset_writer *writer);
/* Records appended through this writer (flushed or not). */
size_t convsel_dataset_writer_count(const convsel_dataset_writer *writer);
/* Flushes, closes and frees (NULL does nothing); returns the flush's status. */
convsel_status convsel_dataset_writer_close(convsel_dataset_writer *writer);

/* ---------------------------------------------------------------- sampler */

/*
 * Draws profiling configurations (docs/sampling.md): perturbations of real
 * network layers (the bases) and random configurations, each valid and
 * within the caps, all distinct, deterministic for a seed and base list.
 */
typedef struct convsel_sampler_options {
    uint64_t seed;
    double max_flops;    /* per configuration (default 2e9) */
    double max_bytes;    /* src + weights + dst (channels padded to 16) + one image's im2col (default 256 MiB) */
    double perturb_frac; /* share of perturbed bases when there are bases (default 0.6) */
} convsel_sampler_options;

void convsel_sampler_options_default(convsel_sampler_options *opts);

typedef struct convsel_sampler convsel_sampler;
convsel_status convsel_sampler_create(const convsel_sampler_options *opts, convsel_sampler **sampler);
void convsel_sampler_destroy(convsel_sampler *sampler);
/* Adds a base layer (its batch is ignored: samples draw their own). */
convsel_status convsel_sampler_add_base(convsel_sampler *sampler, const convsel_problem *layer);
/* Adds every layer of a network file that parses as a supported 2D problem
 * (others are skipped, not errors), or of every *.txt in a directory, in
 * name order. added (may be NULL) receives the count. Returns OK or IO_ERROR. */
convsel_status convsel_sampler_add_file(convsel_sampler *sampler, const char *path, size_t *added);
size_t convsel_sampler_base_count(const convsel_sampler *sampler);
/* The next configuration, named "<base name>~pN" (perturbed) or "random~N". */
convsel_status convsel_sampler_next(convsel_sampler *sampler, convsel_problem *problem);

/* ---------------------------------------------------------------- profiler */

typedef struct convsel_profile_progress {
    size_t done, total;    /* configurations finished / to do in this run */
    size_t skipped;        /* already in the file (resume) or in another shard */
    size_t failed;
    size_t records;        /* written in this run */
    double elapsed_s;
    const convsel_problem *current; /* the configuration starting, or NULL */
    int threads;
    const char *message;   /* a warning (a configuration that failed), or NULL */
} convsel_profile_progress;

typedef struct convsel_profile_options {
    const int *threads;          /* thread counts (default {1}) */
    size_t n_threads;
    const unsigned char *selected; /* per primitive, or NULL: every non-reference one */
    convsel_timing_options timing;
    int reorders;                /* also time the layouts' reorders (default 1) */
    double budget_s;             /* stop before a configuration that would end past it (0: none) */
    unsigned shard_index, shard_count; /* this shard of the configurations (default 0 of 1) */
    convsel_write_mode mode;     /* default CREATE; RESUME skips the configurations already there */
    const volatile int *stop;    /* when it becomes non-zero, stop after the configuration in flight */
    void (*progress)(const convsel_profile_progress *progress, void *ctx);
    void *progress_ctx;
} convsel_profile_options;

void convsel_profile_options_default(convsel_profile_options *opts);

typedef struct convsel_profile_result {
    size_t configs;          /* distinct configurations (shapes × thread counts) */
    size_t in_shard;
    size_t skipped;          /* in the shard but already in the file */
    size_t done, failed;
    size_t records;          /* written in this run */
    size_t retried;          /* configurations whose convolutions were measured twice (timing.retry_ratio) */
    int budget_reached, interrupted;
} convsel_profile_result;

/*
 * Profiles the distinct shapes of problems (the first one's name is kept) at
 * every thread count: each configuration's primitives measured interleaved
 * (convsel_measure_problem) and, with reorders, every reorder between the
 * layouts they use (nchw included) of the src- and dst-shaped activations,
 * then its records appended to path and flushed. The shard is chosen by a
 * hash of the shape's descriptor, so it does not depend on the list's order.
 * A configuration that fails is reported through progress and counted.
 * Returns OK (also when the budget ends the run), INTERRUPTED (stop flag),
 * INVALID_ARGUMENT, IO_ERROR or the writer's errors; result is filled in all
 * cases.
 */
convsel_status convsel_profile_run(const convsel_problem *problems, size_t n, const convsel_profile_options *opts,
                                   const char *path, convsel_profile_result *result);

/* ---------------------------------------------------------------- plans */

/*
 * A network is read as a sequence: layer i feeds layer i+1 when the shapes
 * connect (i+1's mb, input channels and size equal i's output). Where they do
 * not, the tensor crosses the boundary in one network-wide layout (the plan's
 * boundary_layout), so every such layer pays an exit and an entry reorder;
 * the network's input and output are in the boundary layout too.
 * docs/selection.md describes the model.
 */
typedef struct convsel_plan_layer {
    convsel_problem problem;     /* one copy per repeat: "*N" is expanded */
    int connected;               /* 1 when the previous layer feeds this one */
    char primitive[32];
    convsel_layout src_layout, dst_layout;
    double conv_ms;              /* predicted (or measured) time of the convolution */
    double reorder_in_ms;        /* reorder(s) before this layer: from the previous
                                    layer's dst or from the boundary layout */
    double reorder_out_ms;       /* exit reorder to the boundary layout (0 if connected onward) */
    double cold_in_ms;           /* reading its input from memory, not cache: the first layer's and an
                                    unconnected layer's, in the boundary layout (0 when the costs
                                    do not price it) */
    char runner_up[32];          /* best alternative primitive for this layer, "" if none */
    double runner_up_margin_ms;  /* total network cost through it minus the plan's */
    int verified;                /* 1 when --verify timed the candidates here */
} convsel_plan_layer;

/*
 * What a plan was made with beyond its network, threads, model and CPU: the
 * selection options that change its choices ("made_with" in the file,
 * docs/plan-format.md). convsel_select, convsel_select_verified and
 * convsel_select_checked fill it from their arguments; `select --resume`
 * keeps an earlier plan only when its made_with equals the run's.
 */
typedef struct convsel_plan_made_with {
    int recorded;               /* 0: read from a file written before plans recorded it */
    double max_error;           /* the selector's max_error; 0 = no bound */
    char excluded[2048];        /* the excluded primitives' names, in catalogue order,
                                   comma-separated; "" for none */
    int verify_k;               /* convsel_select_verified's k; 0 when not verified (k < 2) */
    int verify_alone;           /* with verify_k: decided by the candidates' times alone */
    double uncertainty;         /* with verify_k: the relative uncertainty it used */
    int checked;                /* 1: convsel_select_checked kept the fastest end to end */
    double check_time_s;        /* with checked: its max_time_s */
} convsel_plan_made_with;

typedef struct convsel_plan {
    char network[128];
    int64_t mb;
    int threads;
    char model_id[64];           /* "measured" for plans from measurements */
    convsel_fingerprint cpu;
    convsel_layout boundary_layout;
    size_t n_layers;
    convsel_plan_layer *layers;  /* owned by the plan */
    double total_ms;             /* conv + reorders */
    double reorder_ms;           /* reorders and cold reads (the layers' cold_in_ms) */
    size_t verified_layers;
    double verify_s;
    convsel_plan_made_with made_with;
} convsel_plan;

/*
 * Where selection gets its costs: a learned model, or measurements. conv_ms
 * returns OK with the cost, NOT_APPLICABLE, or NOT_FOUND when the source has
 * nothing for that primitive (it is skipped with a warning). reorder_ms
 * prices a reorder of an mb×c×h×w activation from one layout to another.
 */
typedef struct convsel_cost_source {
    convsel_status (*conv_ms)(void *ctx, const convsel_problem *problem, int threads, size_t primitive,
                              double *ms);
    convsel_status (*reorder_ms)(void *ctx, int64_t mb, int64_t c, int64_t h, int64_t w, convsel_layout from,
                                 convsel_layout to, int threads, double *ms);
    void *ctx;
    const char *id; /* recorded as the plan's model_id */
    /* Optional: conv_ms of n queries at once (a model reads each tree once
     * per batch instead of once per query), status[k] as conv_ms would
     * return for query k; a non-OK return makes the selector ask one by one. */
    convsel_status (*conv_ms_batch)(void *ctx, size_t n, const convsel_problem *const *problems, int threads,
                                    const size_t *primitives, double *ms, convsel_status *status);
    /* Which statistic of a measurement conv_ms stands for (a model: the one
     * it learnt); --verify measures the same, so that measured and predicted
     * layers add up in the same units. Left 0: the median, as measured. */
    convsel_statistic statistic;
    /* Optional (NULL: nothing): what reading an mb×c×h×w activation in
     * layout costs over reading it from cache, charged where a layer reads
     * a tensor no layer just wrote (the network's input, an unconnected
     * layer's input, both in the boundary layout). A layout that pads the
     * channels to its block reads more bytes: in nChw16c a 3-channel
     * image is 5.3 times its nhwc size. */
    convsel_status (*cold_read_ms)(void *ctx, int64_t mb, int64_t c, int64_t h, int64_t w, convsel_layout layout,
                                   int threads, double *ms);
} convsel_cost_source;

typedef struct convsel_select_options {
    int threads;                    /* default 1 */
    double max_error;               /* exclude primitives whose expected error exceeds it; 0 = no bound */
    const unsigned char *excluded;  /* per primitive index, or NULL */
    int verbose;                    /* warnings on stderr (skipped primitives) */
    int verify_alone;               /* convsel_select_verified: decide by the candidates' times
                                       alone, not inside the network (as before session 26) */
} convsel_select_options;

/*
 * The layouts primitive i consumes and produces on problem (oneDNN decides
 * some at creation; the answer is cached per process). Returns OK,
 * NOT_APPLICABLE or a creation error.
 */
convsel_status convsel_primitive_layouts_for(size_t i, const convsel_problem *problem, int threads,
                                             convsel_layout *src, convsel_layout *dst);

/*
 * The catalogue index of the primitive whose kernel primitive i runs on
 * problem on this CPU and ISA cap: i itself, except where a library picks the
 * kernel and picks another primitive's — onednn_direct and onednn_auto where
 * oneDNN would run its im2col + sgemm code are onednn_gemm. The learned cost
 * source prices such a candidate with that primitive's prediction
 * (docs/selection.md). Cached with the layouts. Returns as
 * convsel_primitive_layouts_for.
 */
convsel_status convsel_primitive_runs_as(size_t i, const convsel_problem *problem, int threads, size_t *runs_as);

/*
 * Chooses a primitive for every layer of network ("*N" expanded into N
 * consecutive copies) by exact dynamic programming over (layer, primitive)
 * along the sequence, counting the reorders between consecutive layers and,
 * for every network-wide boundary layout, the entry and exit reorders at
 * unconnected boundaries; the cheapest boundary layout wins. Fails with
 * NOT_APPLICABLE naming the layer when no allowed primitive computes it.
 */
convsel_status convsel_select(const convsel_network *network, const convsel_select_options *opts,
                              const convsel_cost_source *costs, convsel_plan **plan);

/*
 * What a plan costs under another cost source (a plan made from the model,
 * priced by measurement, say): its layers' convolutions into *conv_ms and its
 * reorders into *reorder_ms, by the selector's own rules (the connected
 * layers' reorders, the boundary layout's entry and exit reorders). A reorder
 * the source cannot price counts 0, as in selection; a convolution it cannot
 * price fails the call with NOT_APPLICABLE naming the layer.
 */
convsel_status convsel_plan_price(const convsel_plan *plan, const convsel_cost_source *costs, double *conv_ms,
                                  double *reorder_ms);

/*
 * A cost source that measures: every applicable primitive of a layer timed
 * interleaved (convsel_measure_problem) on first request, reorders timed on
 * first request; both cached. This is exhaustive profiling — the oracle.
 */
typedef struct convsel_measured_costs convsel_measured_costs;

convsel_status convsel_measured_costs_create(const convsel_timing_options *opts, convsel_measured_costs **costs);
void convsel_measured_costs_destroy(convsel_measured_costs *costs);
/* The cost source view (valid while costs lives). */
convsel_cost_source convsel_measured_costs_source(convsel_measured_costs *costs);
/* Seconds spent measuring so far (creation, warm-up and timing). */
double convsel_measured_costs_seconds(const convsel_measured_costs *costs);

/*
 * The made_with a selection with these arguments records (opts NULL: the
 * defaults; verify_k < 2: not verified; checked 0: not checked). Fails with
 * TOO_LARGE when the excluded names do not fit.
 */
convsel_status convsel_plan_made_with_init(convsel_plan_made_with *mw, const convsel_select_options *opts,
                                           int verify_k, double uncertainty, int checked, double check_time_s);
/* 1 when a and b record the same options (both recorded). */
int convsel_plan_made_with_equal(const convsel_plan_made_with *a, const convsel_plan_made_with *b);

void convsel_plan_destroy(convsel_plan *plan);
/* Writes / reads the JSON plan file of docs/plan-format.md. Reading checks
 * the format version and every primitive and layout name. */
convsel_status convsel_plan_save(const convsel_plan *plan, const char *path);
convsel_status convsel_plan_load(const char *path, convsel_plan **plan);

/* ---------------------------------------------------------------- reorder cost model */

#define CONVSEL_REORDER_MODEL_THREADS 4

/*
 * Reorder time as a + b × megabytes moved, per (from, to, threads), fitted by
 * least squares on a dataset's reorder records. Pairs without records fall
 * back to the bandwidth estimate of the fitted pairs (or 8 GB/s per thread
 * when nothing was fitted).
 */
typedef struct convsel_reorder_model {
    double a_ms[CONVSEL_LAYOUT_COUNT][CONVSEL_LAYOUT_COUNT][CONVSEL_REORDER_MODEL_THREADS];
    double b_ms_per_mb[CONVSEL_LAYOUT_COUNT][CONVSEL_LAYOUT_COUNT][CONVSEL_REORDER_MODEL_THREADS];
    int n_records[CONVSEL_LAYOUT_COUNT][CONVSEL_LAYOUT_COUNT][CONVSEL_REORDER_MODEL_THREADS];
    double fallback_ms_per_mb; /* per thread */
} convsel_reorder_model;

/* Fits on every CONVSEL_RECORD_REORDER record of the datasets (median ms). */
convsel_status convsel_reorder_model_fit(const convsel_dataset *const *sets, size_t n_sets,
                                         convsel_reorder_model *model);
/* Predicted ms of reordering an mb×c×h×w activation; 0 when from == to. */
double convsel_reorder_model_predict(const convsel_reorder_model *model, int64_t mb, int64_t c, int64_t h, int64_t w,
                                     convsel_layout from, convsel_layout to, int threads);

/* One reorder of an mb×c×h×w activation timed inside a network run. */
typedef struct convsel_reorder_sample {
    int64_t mb, c, h, w;
    convsel_layout from, to;
    int threads;
    double ms; /* median over the timed passes */
} convsel_reorder_sample;

/*
 * Times reorders as a network pays them, which is not what they cost alone
 * (a reorder timed alone runs on buffers its last repetition left in cache):
 * builds a plan over network whose layers take, each, an allowed primitive
 * (allowed: per catalogue index) that reads another layout than the previous
 * layer writes, the layout pair timed least so far first; runs it end to end
 * (two passes to warm up, then at least 5 and at most 50 passes or until
 * max_time_s) and appends to *samples (realloc'd; the caller frees it) the
 * median time of every reorder between connected layers, *n_samples counting
 * them. Then does the same on a copy of network with its sides divided by
 * CONVSEL_REORDER_PROBE_SHRINK, so that small reorders are timed too (what a
 * fixed cost per reorder is fitted from); its samples follow the network's,
 * and a shrunk layer no allowed primitive computes only ends that part.
 * Returns OK, INVALID_ARGUMENT, OUT_OF_MEMORY or the error of building
 * or running the plan (NOT_APPLICABLE naming a layer no allowed primitive
 * computes).
 */
#define CONVSEL_REORDER_PROBE_SHRINK 8
convsel_status convsel_reorder_probe(const convsel_network *network, int threads, const unsigned char *allowed,
                                     double max_time_s, uint64_t seed, convsel_reorder_sample **samples,
                                     size_t *n_samples);

/*
 * A cold read timed: inside a network run end to end, the reorder that
 * brings a layer's input (the network's, or an unconnected layer's) from
 * the boundary layout into the layout the layer reads, its median time
 * there minus its median time alone, repeated on the same buffers (its
 * input then in cache). The input is an mb×c×h×w activation in layout.
 */
typedef struct convsel_cold_sample {
    int64_t mb, c, h, w;
    convsel_layout layout;
    int threads;
    double excess_ms; /* inside the network minus alone; may be negative (noise) */
} convsel_cold_sample;

/*
 * Times what reading a layer's input from memory rather than cache costs,
 * as a network pays it: for each boundary layout, builds a plan over
 * network whose first and unconnected layers take an allowed primitive
 * (allowed: per catalogue index; the catalogue order rotated by seed) that
 * reads another layout, so that a reorder reads each of those inputs,
 * runs it end to end (two passes to warm up, then at least 5 and at most 50
 * passes or until that layout's share of max_time_s) and appends to
 * *samples (realloc'd; the caller frees it) one sample per such reorder,
 * *n_samples counting them. Returns as convsel_reorder_probe.
 */
convsel_status convsel_cold_probe(const convsel_network *network, int threads, const unsigned char *allowed,
                                  double max_time_s, uint64_t seed, convsel_cold_sample **samples,
                                  size_t *n_samples);

/*
 * A convolution timed inside a network run end to end against the same
 * convolution repeated alone on the same buffers (as profiling times it).
 */
typedef struct convsel_conv_sample {
    size_t primitive; /* catalogue index */
    int threads;
    double network_ms, alone_ms; /* medians */
    convsel_problem problem;      /* the layer's */
    /* The weights as the primitive kept them (convsel_instance_weights_bytes);
     * the price calibrate fits is per MB of plain weights all the same. */
    size_t weights_bytes;
} convsel_conv_sample;

/*
 * Times what running inside a network costs each primitive over running
 * alone (its weights, workspace and output no longer in cache, among
 * others): for each allowed primitive (per catalogue index) in turn, builds
 * a plan over network with that primitive on every layer it computes (not
 * with a library's reference loops) and some allowed primitive elsewhere,
 * runs it end to end (two runs to warm up, then at least 5 and at most 50
 * runs or until that primitive's share of max_time_s), times each of those
 * layers alone 5 times in a row (the medians kept), and appends to *samples
 * (realloc'd; the caller frees it) one sample per such layer, *n_samples
 * counting them. That is done in two passes, each given half of max_time_s,
 * the primitives in the same order each time, and each primitive keeps the
 * pass its layers took least time in (in the network and alone together): a
 * disturbance (another process) shorter than a pass slows only one of a
 * primitive's passes.
 * Returns as convsel_reorder_probe.
 */
convsel_status convsel_conv_probe(const convsel_network *network, int threads, const unsigned char *allowed,
                                  double max_time_s, uint64_t seed, convsel_conv_sample **samples,
                                  size_t *n_samples);

/* ---------------------------------------------------------------- network runner */

typedef struct convsel_runner convsel_runner;

/*
 * Instantiates a plan: every layer's primitive with its own random weights
 * (seeded), activation buffers, and the reorders the plan implies (between
 * connected layers whose layouts differ, and into/out of the boundary layout
 * at unconnected boundaries and at the network's ends).
 */
convsel_status convsel_runner_create(const convsel_plan *plan, uint64_t seed, convsel_runner **runner);
/*
 * As convsel_runner_create, but sharing what `like` (may be NULL) already
 * holds and only reads: a layer with the same problem, primitive, layouts,
 * threads and seed (so the same weights) uses like's primitive instance, and
 * an unconnected layer like's random input. Plans that differ on a few layers
 * (--verify's variants of the model's plan) then cost only those to build and
 * to hold. Activations and workspace stay the runner's own, each layer
 * running in its runner's workspace. Shared weights are in cache as often as
 * any runner sharing them runs, so only runners whose differing layers are
 * compared (as --verify's variants) should share; --check and compare time
 * their finalists unshared. Runners that share must not run at the same
 * time. `like` may be destroyed first: it goes when the last runner sharing
 * it does.
 */
convsel_status convsel_runner_create_like(const convsel_plan *plan, uint64_t seed, convsel_runner *like,
                                          convsel_runner **runner);
/* One end-to-end pass over the network's convolutions and reorders. */
convsel_status convsel_runner_run(convsel_runner *runner);
void convsel_runner_destroy(convsel_runner *runner);
/*
 * One pass checked step by step, for tests and `convsel run --check`: every
 * convolution's output against the reference convolution of the input it
 * read, within 4 times the primitive's expected error and at least
 * CONVSEL_RUNNER_CHECK_EXACT (max|y - y_ref| / max|y_ref|); every layer's
 * input against what the previous layer wrote, or the network's random input
 * where it is not connected, and every reorder's output against its input,
 * exactly; and the padded channels of every blocked tensor read or written
 * zero. Slow: the reference is plain loops. *worst_error (may be NULL) gets
 * the largest convolution error relative to its bound (<= 1 when all pass).
 * Returns OK, WRONG_RESULT naming the layer and what differs, or the error of
 * a step that failed.
 */
#define CONVSEL_RUNNER_CHECK_EXACT 1e-4
convsel_status convsel_runner_check(convsel_runner *runner, double *worst_error);
/* Number of reorders one pass executes. */
size_t convsel_runner_reorder_count(const convsel_runner *runner);
/* The layers run one at a time, so they share one workspace (the largest any
 * needs), as frameworks share oneDNN's scratchpad: it stays in cache from
 * layer to layer. With on = 0 every layer has a workspace of its own
 * instead (for benchmarks of what sharing saves). *bytes (may be NULL) gets
 * the workspace memory the runner's layers then hold. Layers shared with
 * another runner (convsel_runner_create_like) keep their owner's setting.
 * Returns OK, INVALID_ARGUMENT (runner NULL) or OUT_OF_MEMORY. */
convsel_status convsel_runner_share_workspace(convsel_runner *runner, int on, size_t *bytes);
/* Where the time goes inside the network: with on, every later pass also
 * times each layer's convolution and the reorders charged to it (those into
 * it, and the last layer's and an unconnected layer's exit reorder), and
 * convsel_runner_layer_ms gives the median over those passes (NOT_FOUND
 * before any). Turning it on or off forgets earlier passes. */
void convsel_runner_time_layers(convsel_runner *runner, int on);
convsel_status convsel_runner_layer_ms(const convsel_runner *runner, size_t layer, double *conv_ms,
                                       double *reorder_ms);
/* The layer's convolution alone: run reps times in a row (1..1000) on the
 * buffers it uses inside the network, whatever they hold, the median time
 * into *conv_ms; its input and weights are then in cache, as a profiled
 * layer's are. Returns OK, INVALID_ARGUMENT or the convolution's error. */
convsel_status convsel_runner_layer_alone_ms(convsel_runner *runner, size_t layer, int reps, double *conv_ms);
/* The bytes of weights the layer's convolution keeps
 * (convsel_instance_weights_bytes) into *bytes. Returns OK or
 * INVALID_ARGUMENT. */
convsel_status convsel_runner_layer_weights_bytes(const convsel_runner *runner, size_t layer, size_t *bytes);
/* The reorder that brings layer's input from the boundary layout (on the
 * first layer or an unconnected one, where it reads another layout): its
 * median over the timed passes into *in_network_ms, and its median run
 * reps times in a row (1..1000) on the same buffers, so its input in cache,
 * into *alone_ms. Returns OK, INVALID_ARGUMENT, NOT_FOUND (no timed pass,
 * or no such reorder) or the reorder's error. */
convsel_status convsel_runner_entry_ms(convsel_runner *runner, size_t layer, int reps, double *in_network_ms,
                                       double *alone_ms);

/* ---------------------------------------------------------------- model */

/*
 * A learned latency model: gradient-boosted regression trees that predict
 * each primitive's time on a (problem, threads, CPU) from the features of
 * docs/learner.md. Files: docs/model-format.md. A model does not change
 * once trained or loaded: predictions may run on several threads at once.
 */
typedef struct convsel_model convsel_model;

/* What the trees predict; the time is recovered from it. */
#define CONVSEL_TARGET_MAP(X)                                                  \
    X(LOG, "log")                          /* log(ms) */                       \
    X(LOG_PER_FLOP, "log_per_flop")        /* log(ms / FLOPs) */               \
    X(ROOFLINE_RESIDUAL, "roofline_residual") /* log(ms / refined roofline) */

typedef enum {
#define CONVSEL_TARGET_ENUM(name, text) CONVSEL_TARGET_##name,
    CONVSEL_TARGET_MAP(CONVSEL_TARGET_ENUM)
#undef CONVSEL_TARGET_ENUM
    CONVSEL_TARGET_COUNT
} convsel_target;

/* One ensemble per primitive, or one ensemble with the primitive as a
 * categorical feature. */
typedef enum { CONVSEL_MODEL_PER_PRIMITIVE = 0, CONVSEL_MODEL_SINGLE = 1 } convsel_model_mode;

typedef struct convsel_train_params {
    int trees;              /* boosting iterations at most (default 600) */
    double learning_rate;   /* shrinkage (0.1) */
    int max_depth;          /* (7) */
    int min_leaf;           /* rows per leaf at least (3) */
    double lambda;          /* L2 penalty on leaf values (1) */
    double min_gain;        /* a split must gain more (0) */
    double row_subsample;   /* share of rows per tree (0.8) */
    double col_subsample;   /* share of features per tree (0.8) */
    int max_bins;           /* quantile bins per feature, <= 256 (255) */
    double valid_fraction;  /* share of layers held out for early stopping (0.15; 0: none) */
    int patience;           /* stop after this many trees without a better validation loss (60) */
    uint64_t seed;          /* (1) */
    int threads;            /* OpenMP threads for training; 0: all (0). The model does not depend on it. */
    convsel_target target;  /* (ROOFLINE_RESIDUAL) */
    convsel_statistic statistic; /* (MEDIAN) */
    convsel_model_mode mode;     /* (SINGLE) */
    double peak_gflops;     /* roofline: AVX-512 f32 peak per core (148, docs/learner.md) */
    double bandwidth_gbs;   /* roofline: memory bandwidth per thread (12) */
    int bags;               /* ensembles averaged, bag b drawn with seed + b (3; docs/learner.md) */
    double time_limit_s;    /* seconds training may take from the call (building its table counts);
                               the trees get what is left, shared evenly by the rounds of bags
                               that run side by side; a tree is always grown (0: no limit) (0). Not
                               stored; a model it cut depends on the machine's speed
                               (convsel_model_training_cut) */
} convsel_train_params;

void convsel_train_params_default(convsel_train_params *params);

/* Sets params from "key=value,key=value" (keys are the field names; target,
 * statistic and mode take "log", "median", "single", ...). Returns OK or
 * INVALID_ARGUMENT naming the key. */
convsel_status convsel_train_params_parse(const char *text, convsel_train_params *params);

/* The statistic named "median", "p10" or "min". Returns OK or INVALID_ARGUMENT. */
convsel_status convsel_statistic_parse(const char *name, convsel_statistic *statistic);

/* Progress of training, once per tree. */
typedef struct convsel_train_progress {
    const char *ensemble;        /* the primitive, or "all" for a single model */
    size_t ensemble_index, ensemble_count;
    int iteration;               /* 0-based tree index */
    double train_rmse;           /* of the target on the training rows */
    double valid_rmse;           /* on the validation rows (NaN when none) */
    int best_iteration;
    int bag, bag_count;          /* 0-based bag of convsel_train_params.bags */
} convsel_train_progress;

/* Returns non-zero to stop training (convsel_model_train returns INTERRUPTED). */
typedef int (*convsel_train_progress_fn)(const convsel_train_progress *progress, void *user);

/*
 * Trains a model on the CONVSEL_RECORD_CONV records of n datasets (the
 * statistic of params, records with a non-positive or non-finite time
 * skipped). params NULL means the defaults; progress may be NULL. The model
 * is the same, byte for byte, for the same records, parameters and seed,
 * whatever params->threads. The datasets' reorder records are fitted into the
 * model's reorder cost model (convsel_model_reorders).
 * Returns OK, INVALID_ARGUMENT (bad parameters, no records), OUT_OF_MEMORY or
 * INTERRUPTED.
 */
convsel_status convsel_model_train(const convsel_dataset *const *sets, size_t n, const convsel_train_params *params,
                                   convsel_train_progress_fn progress, void *user, convsel_model **model);

/* Writes the model to path (docs/model-format.md). Returns OK or IO_ERROR. */
convsel_status convsel_model_save(const convsel_model *model, const char *path);

/* Reads a model file. Fails with IO_ERROR, CORRUPT (foreign, truncated or
 * inconsistent file) or VERSION_MISMATCH (another format version, or a
 * feature schema other than this build's), the detail naming the file. */
convsel_status convsel_model_load(const char *path, convsel_model **model);

/* The default model's path: $CONVSEL_MODEL, else models/default.msgpack
 * next to the executable's directory (../models), in the source tree, then
 * in the installed data directory. Returns OK or NOT_FOUND (listing where it
 * looked). */
convsel_status convsel_model_default_path(char *path, size_t size);

void convsel_model_destroy(convsel_model *model);

/*
 * Predicted milliseconds of catalogue primitive primitive_index on problem
 * with threads threads on cpu (NULL: the model's first training CPU).
 * Returns OK, INVALID_ARGUMENT (invalid problem, threads < 1) or NOT_FOUND
 * (the model has no data for that primitive).
 */
convsel_status convsel_model_predict_ms(const convsel_model *model, const convsel_problem *problem, int threads,
                                        size_t primitive_index, const convsel_fingerprint *cpu, double *ms);

/* A prediction request; primitive indexes the model's own list
 * (convsel_model_primitive_name), not the catalogue. */
typedef struct convsel_model_query {
    const convsel_problem *problem;
    int threads;
    size_t primitive;
    const convsel_fingerprint *cpu; /* NULL: the model's first training CPU */
} convsel_model_query;

/* ms[i] for every query, on the calling thread. Returns OK or
 * INVALID_ARGUMENT (naming the first bad query; ms is then incomplete). */
convsel_status convsel_model_predict_batch(const convsel_model *model, const convsel_model_query *queries, size_t n,
                                           double *ms);

/* The primitives the model knows, in its order. */
size_t convsel_model_primitive_count(const convsel_model *model);
const char *convsel_model_primitive_name(const convsel_model *model, size_t i);
/* Index of a primitive by name in the model's list. Returns OK or NOT_FOUND. */
convsel_status convsel_model_primitive_find(const convsel_model *model, const char *name, size_t *index);

/* A stable identifier: 16 hex digits of a hash of the model's file bytes. */
const char *convsel_model_id(const convsel_model *model);

/* The CPUs of the training data, and the training parameters. */
size_t convsel_model_fingerprint_count(const convsel_model *model);
const convsel_fingerprint *convsel_model_fingerprint(const convsel_model *model, size_t i);
const convsel_train_params *convsel_model_params(const convsel_model *model);

/*
 * Accuracy over conv records. Shares are fractions (0.05 is 5%).
 *   mape, within10: mean |pred - measured| / measured, and the share of
 *     records with that error <= 0.10, over every record predicted.
 *   A layer is a configuration (problem shape, threads, CPU); over layers
 *   with at least 2 primitives:
 *   spearman: rank correlation of predicted and measured times (ties get
 *     average ranks; 0 when either side is constant), averaged over layers;
 *   top1: share of layers whose predicted-fastest primitive is the fastest;
 *   regret_mean, regret_p95: measured time of the predicted-fastest over the
 *     fastest's, minus 1 (p95 by linear interpolation).
 */
typedef struct convsel_metrics {
    /* spearman: the rank correlation of predicted and measured time among a
     * configuration's primitives, averaged over configurations (what choosing
     * needs); spearman_pooled: the same over every record at once (how well
     * latencies are ordered across layers too). */
    double mape, within10, spearman, top1, regret_mean, regret_p95, spearman_pooled;
    size_t n_records, n_layers;
    /* As the selector prices (convsel_model_eval_as_selector), else 0: rows
     * predicted as the kernel that ran them, rows left out of the ranking as
     * a library's reference loops, and rows whose kernel is not known (no
     * kernel recorded and measured under another ISA cap than this
     * process's), which stay priced as themselves. */
    size_t n_priced_as, n_unranked, n_kernel_unknown;
} convsel_metrics;

/* Evaluates model on the datasets' conv records (records of primitives the
 * model lacks are skipped). Returns OK, INVALID_ARGUMENT (nothing to
 * evaluate) or OUT_OF_MEMORY. */
convsel_status convsel_model_eval(const convsel_model *model, const convsel_dataset *const *sets, size_t n,
                                  convsel_metrics *metrics);

/* As convsel_model_eval, but priced as the selector prices: records measured
 * on this process's CPU and ISA cap are predicted as the primitive whose
 * kernel they run (convsel_primitive_runs_as); others as convsel_model_eval. */
convsel_status convsel_model_eval_as_selector(const convsel_model *model, const convsel_dataset *const *sets, size_t n,
                                              convsel_metrics *metrics);

/*
 * Cross-validation of params on the datasets. RANDOM: one 80/20 split by
 * layer, drawn with params->seed; metrics on the 20%. BY_NETWORK: leave one
 * network out (the network is the part of a problem's name before ':';
 * records whose name has none always train), metrics pooled over every
 * held-out network. Returns OK, INVALID_ARGUMENT (fewer than 2 groups),
 * OUT_OF_MEMORY or the training's errors.
 */
typedef enum { CONVSEL_CV_RANDOM = 0, CONVSEL_CV_BY_NETWORK = 1 } convsel_cv_kind;
convsel_status convsel_model_cv(const convsel_dataset *const *sets, size_t n, const convsel_train_params *params,
                                convsel_cv_kind kind, convsel_metrics *metrics);

/* As convsel_model_eval and convsel_model_cv, but the metrics compare the
 * predictions with truth, a measured statistic other than the one the model
 * learns (a model of the minimum judged by medians). */
convsel_status convsel_model_eval_against(const convsel_model *model, const convsel_dataset *const *sets, size_t n,
                                          convsel_statistic truth, convsel_metrics *metrics);
convsel_status convsel_model_cv_against(const convsel_dataset *const *sets, size_t n,
                                        const convsel_train_params *params, convsel_cv_kind kind,
                                        convsel_statistic truth, convsel_metrics *metrics);

/*
 * As convsel_model_cv_against, and fn is called once for every held-out
 * record, in the order of the datasets' records: the record, its measured
 * truth statistic and the fold's prediction (ms). What the metrics are made
 * of, for a look at where the errors are (convsel eval --predictions).
 */
typedef void (*convsel_prediction_fn)(const convsel_record *record, double measured_ms, double predicted_ms,
                                      void *user);
convsel_status convsel_model_cv_predictions(const convsel_dataset *const *sets, size_t n,
                                            const convsel_train_params *params, convsel_cv_kind kind,
                                            convsel_statistic truth, convsel_prediction_fn fn, void *user,
                                            convsel_metrics *metrics);

/* As convsel_model_eval_against (as_selector: as convsel_model_eval_as_selector),
 * and fn is called once for every scored record with its truth statistic and
 * the model's prediction (convsel eval --predictions without --cv). */
convsel_status convsel_model_eval_predictions(const convsel_model *model, const convsel_dataset *const *sets,
                                              size_t n, int as_selector, convsel_statistic truth,
                                              convsel_prediction_fn fn, void *user, convsel_metrics *metrics);

/* ---------------------------------------------------------------- selection with a model */

/*
 * Costs from a learned model: conv times predicted for cpu (the machine the
 * plan is for), reorder times from reorders (NULL: the model's own reorder
 * model, or a bandwidth estimate when it has none).
 */
typedef struct convsel_model_costs {
    const convsel_model *model;
    const convsel_reorder_model *reorders;
    convsel_fingerprint cpu;
    /* 1: price every primitive by its own prediction; 0 (default): by the
     * prediction of the primitive whose kernel it runs (convsel_primitive_runs_as). */
    int ignore_runs_as;
} convsel_model_costs;

/* The cost source view of costs (valid while costs and its model live). */
convsel_cost_source convsel_model_costs_source(convsel_model_costs *costs);

/* The catalogue primitive whose prediction the cost source prices primitive
 * with on problem: convsel_primitive_runs_as, unless costs->ignore_runs_as is
 * set, the query fails, or the model lacks that primitive; then primitive. */
size_t convsel_model_costs_priced_as(const convsel_model_costs *costs, const convsel_problem *problem, int threads,
                                     size_t primitive);

/* The model's relative uncertainty: the root mean square of its log-space
 * error on its validation rows (0.1 when it has none recorded). */
double convsel_model_uncertainty(const convsel_model *model);

/* Of the training that made model in this process (convsel_model_train,
 * convsel_model_retrain): how many of its ensembles time_limit_s cut short.
 * When not NULL, *jobs gets how many ensembles there were (one per bag and
 * ensemble), *fewest_trees the fewest trees a cut one kept (0: none cut).
 * All 0 for a model loaded from a file. */
size_t convsel_model_training_cut(const convsel_model *model, size_t *jobs, size_t *fewest_trees);

/* The model's reorder cost model, or NULL when it was trained without reorder
 * records. */
const convsel_reorder_model *convsel_model_reorders(const convsel_model *model);
/* The model's price of a reorder on cpu: its reorder lines (a bandwidth
 * estimate without them), times the factor its calibration for cpu measured
 * inside networks (convsel_model_calibrate_reorders), if any. */
double convsel_model_reorder_ms(const convsel_model *model, const convsel_fingerprint *cpu, int64_t mb, int64_t c,
                                int64_t h, int64_t w, convsel_layout from, convsel_layout to, int threads);

/*
 * convsel_select with measurement where the model cannot decide: for every
 * distinct layer whose two best predicted primitives are within the model's
 * uncertainty (relative gap below 2 × uncertainty, e.g. the model's log-space
 * validation RMSE), the top k predicted primitives, the primitive the
 * model's own plan (convsel_select on costs) runs there and onednn_auto
 * (oneDNN alone's choice) are timed interleaved and their measured times
 * replace the predictions; a candidate other than the plan's choice stays
 * only if it was measured more than 5% faster than that choice (a near tie
 * timed alone can be a loss inside the network). Then, unless
 * opts->verify_alone, every candidate measured is timed inside the network
 * too: the model's plan and up to k + 1 variants of it (on each verified
 * layer its next measured candidate, the layouts and reorders around it
 * chosen again) run interleaved with their layers timed, and the margin and
 * the candidates' costs come from those in-network times (a candidate costs
 * the plan's choice's time alone scaled by their ratio in place; onednn_auto
 * stays a candidate there without the margin). plan->verified_layers and
 * plan->verify_s report how many layers needed it and the seconds spent.
 */
convsel_status convsel_select_verified(const convsel_network *network, const convsel_select_options *opts,
                                       const convsel_cost_source *costs, int k, double uncertainty,
                                       const convsel_timing_options *timing, convsel_plan **plan);

/*
 * convsel_select_verified, then checked end to end: the model's plan, the
 * verified plan, oneDNN alone (onednn_auto on every layer, where it can
 * run every layer) and, for each family of primitives the verified plan
 * uses but oneDNN's, the plan chosen from costs without that family, are
 * each instantiated and timed running the whole network, interleaved, and
 * the fastest median is returned (ties: in that order). Per-layer
 * timings (each layer alone, its data warm) do not always add up inside a
 * network; this check keeps a plan they mislead from being returned when
 * the network itself says otherwise. Each finalist runs once cold; one over
 * 10x the fastest cold pass is out, the others run once warm, and one whose
 * warm pass takes over 1.5x the fastest warm pass is out (its time: its last
 * pass). The rest are timed interleaved, at least 5 rounds, then up to
 * max_time_s. The plan's verify_s includes the check; report (may be NULL)
 * says which plan was kept and the times.
 */
typedef enum {
    CONVSEL_KEPT_MODEL_PLAN,    /* the plan from costs */
    CONVSEL_KEPT_VERIFIED,      /* the plan with its close calls measured */
    CONVSEL_KEPT_ONEDNN_ALONE,  /* onednn_auto on every layer */
    CONVSEL_KEPT_WITHOUT_FAMILY /* the plan chosen from costs without one family (kept_without) */
} convsel_kept_plan;

typedef struct convsel_check_report {
    convsel_kept_plan kept;
    double model_plan_ms;   /* end-to-end medians; 0 for a finalist not timed (onednn_auto
                               cannot run every layer, or all are the same plan) */
    double verified_ms;
    double onednn_alone_ms;
    double check_s;         /* seconds the end-to-end check took */
    /* The plans chosen again without each family of primitives the verified
     * (else the model's) plan uses, oneDNN's excepted, in order of first use:
     * the family and the end-to-end median (0: not timed, or no plan computes
     * the network without it). */
    size_t n_without;
    struct {
        char family[16];
        double ms;
    } without[4];
    char kept_without[16];  /* the family left out of the kept plan, or "" */
} convsel_check_report;

const char *convsel_kept_plan_name(convsel_kept_plan kept);

/*
 * The check alone, on plans already made: model_plan, verified_plan (may be
 * NULL), oneDNN alone and the plans without each family (both built here
 * from costs and opts) timed as above;
 * *plan receives a copy of the fastest, with verified_plan's
 * verified_layers and its verify_s plus the check's seconds.
 */
convsel_status convsel_check_plans(const convsel_network *network, const convsel_select_options *opts,
                                   const convsel_cost_source *costs, const convsel_plan *model_plan,
                                   const convsel_plan *verified_plan, double max_time_s, convsel_plan **plan,
                                   convsel_check_report *report);

convsel_status convsel_select_checked(const convsel_network *network, const convsel_select_options *opts,
                                      const convsel_cost_source *costs, int k, double uncertainty,
                                      const convsel_timing_options *timing, double max_time_s, convsel_plan **plan,
                                      convsel_check_report *report);

/* ---------------------------------------------------------------- few-shot transfer */

/*
 * A model trained on one CPU, fitted to another from a few configurations
 * profiled there (docs/transfer.md). For the new CPU, with s the source's
 * log-ms prediction of primitive p:
 *   LINEAR: log ms = a_p + b_p s, least squares per primitive, pulled towards
 *           the line pooled over every primitive, itself pulled towards
 *           identity (a = 0, b = 1); a primitive without samples takes the
 *           pooled line.
 *   TREES:  log ms = s + r(x), r a few shallow boosted trees on the residuals
 *           log(measured) - s, over the learner's features.
 *   BOTH:   the linear map, then trees on its residuals.
 *   POOLED: the pooled line alone, the same for every primitive: it moves
 *           the level, never the ranking of a configuration's primitives.
 *   AUTO:   POOLED, LINEAR or BOTH by cross-validation by configuration
 *           over the samples: the simplest whose regret on the
 *           configurations it is not fitted on (the time of the primitive it
 *           predicts fastest over the fastest one's) is within one standard
 *           error of the best method's, or within 0.001, whichever is
 *           larger. POOLED with fewer than 3 configurations. The
 *           calibration records the method chosen.
 *   LINEAR_OR_BOTH: the same choice between LINEAR and BOTH only: BOTH
 *           where its cross-validated regret is lower than LINEAR's by more
 *           than one standard error and more than 0.001, else LINEAR (also
 *           with fewer than 3 configurations). The default of the params,
 *           and what convsel_calibrate_default_method answers unless the new
 *           CPU is new to the trees.
 *   RETRAIN: not a fit on top of the source but a new model, trained with
 *           the source's parameters on the datasets the source was trained
 *           on plus the samples, each given retrain_copies times: the trees
 *           learn the new CPU (its ISA cap, its thread counts) from the
 *           samples alongside everything the source knew.
 *           convsel_model_retrain does it (it needs those datasets);
 *           convsel_model_calibrate refuses it. Seconds, not milliseconds.
 */
#define CONVSEL_CALIBRATE_METHOD_MAP(X)                                        \
    X(LINEAR, "linear")                                                        \
    X(TREES, "trees")                                                          \
    X(BOTH, "both")                                                            \
    X(POOLED, "pooled")                                                        \
    X(AUTO, "auto")                                                            \
    X(RETRAIN, "retrain")                                                      \
    X(LINEAR_OR_BOTH, "linear-or-both")

typedef enum {
#define CONVSEL_CALIBRATE_METHOD_ENUM(name, text) CONVSEL_CALIBRATE_##name,
    CONVSEL_CALIBRATE_METHOD_MAP(CONVSEL_CALIBRATE_METHOD_ENUM)
#undef CONVSEL_CALIBRATE_METHOD_ENUM
    CONVSEL_CALIBRATE_METHOD_COUNT
} convsel_calibrate_method;

const char *convsel_calibrate_method_name(convsel_calibrate_method method);
/* Parses "linear", "trees", "both", "pooled", "auto", "retrain",
 * "linear-or-both". Returns OK or INVALID_ARGUMENT. */
convsel_status convsel_calibrate_method_parse(const char *text, convsel_calibrate_method *method);

typedef struct convsel_calibrate_params {
    convsel_calibrate_method method; /* (LINEAR_OR_BOTH; AUTO until the eighteenth session) */
    /* Ridge strengths, in samples: how many observations the prior is worth. */
    double pooled_prior;   /* pooled line towards identity (1) */
    double offset_prior;   /* a primitive's level towards the pooled line (1) */
    double slope_prior;    /* a primitive's slope towards the pooled slope, per unit log-ms² (30) */
    int paired;            /* 1: a primitive's line is fitted on its samples less their
                              configuration's mean residual from the pooled line (the
                              primitives of a configuration were timed interleaved) (1) */
    double huber;          /* robust fit: samples off the line by more than this (log ms) weigh
                              huber / |residual| (0.3; 0: plain least squares) */
    /* Residual trees (shallow, shrunk). */
    int trees;             /* (100) */
    double learning_rate;  /* (0.1) */
    int max_depth;         /* (3) */
    int min_leaf;          /* rows per leaf at least (4) */
    double lambda;         /* L2 penalty on leaf values (1) */
    uint64_t seed;         /* recorded with the calibration (1); the trees use every row and
                              feature, so the fit does not depend on it; RETRAIN trains with it */
    int retrain_copies;    /* RETRAIN: how many times each sample is given (5; 1..1000) */
    int threads;           /* RETRAIN: OpenMP threads that train (0: OpenMP's current count); the
                              trees do not depend on it */
    double time_limit_s;   /* RETRAIN: seconds it may take (convsel_train_params.time_limit_s;
                              0: no limit) (0) */
} convsel_calibrate_params;

void convsel_calibrate_params_default(convsel_calibrate_params *params);

/*
 * Fine-tunes source to the CPU of target_samples' conv records (one CPU and
 * ISA cap; records of primitives source lacks are skipped), with the source's
 * statistic. The result is an ordinary model (saved and loaded as any other):
 * source's primitives and trees, the new CPU first in its fingerprints (so a
 * NULL cpu means the new one), and the calibration, applied when a prediction
 * is for that CPU; for other CPUs it predicts what source predicts.
 * Calibrating again for a CPU the model is already calibrated for replaces
 * that calibration. params NULL means the defaults. Returns OK,
 * INVALID_ARGUMENT (no usable records, several CPUs, bad parameters) or
 * OUT_OF_MEMORY.
 */
convsel_status convsel_model_calibrate(const convsel_model *source, const convsel_dataset *target_samples,
                                       const convsel_calibrate_params *params, convsel_model **out);

/*
 * The RETRAIN method: a model trained with source's training parameters
 * (seed: params->seed) on source_data (the n_data datasets source was
 * trained on; the caller vouches for that) plus target_samples' conv
 * records, given params->retrain_copies times each, so that a few
 * configurations weigh against thousands. The result carries a calibration
 * for the samples' CPU that records the provenance (source's id, method
 * RETRAIN, samples, records, seed; cv_rmse_log is the new model's own
 * validation error, cv_regret_log 0) and predicts what the new trees
 * predict; that CPU comes first among its fingerprints. params NULL means
 * the defaults (params->method is ignored). Returns OK, INVALID_ARGUMENT (no
 * datasets, no usable samples, several CPUs, bad parameters) or
 * OUT_OF_MEMORY.
 */
convsel_status convsel_model_retrain(const convsel_model *source, const convsel_dataset *const *source_data,
                                     size_t n_data, const convsel_dataset *target_samples,
                                     const convsel_calibrate_params *params, convsel_model **out);

/*
 * The method a plain `convsel calibrate` uses, given the datasets the source
 * was trained on (source_data, n_data) and the samples profiled on the new
 * CPU. RETRAIN where some sample conv record ran on a machine the learner's
 * features have not seen in source_data — an ISA cap, a core count or a
 * thread count that no source record has —, because retraining can then
 * learn where the new rows depart; LINEAR_OR_BOTH where every sample's is
 * seen: to the trees such a CPU looks like one they know (only the cache
 * ratios differ), retraining hardly moves them, and the per-primitive lines
 * (with residual trees on top where cross-validation says they pay) are what
 * adapts the model (docs/transfer.md, "The default method"). LINEAR_OR_BOTH
 * too when source_data is NULL or empty or target_samples is NULL (nothing
 * to retrain on; AUTO until the eighteenth session). Never fails: without
 * memory for the list it answers RETRAIN.
 */
convsel_calibrate_method convsel_calibrate_default_method(const convsel_dataset *const *source_data, size_t n_data,
                                                          const convsel_dataset *target_samples);

/* Provenance of one calibration of a model. */
/* The model primitives (its first ones) a calibration prices weights for. */
#define CONVSEL_NETWORK_PRIMITIVES 32
typedef struct convsel_calibration_info {
    char source_model[17];   /* id of the model it was calibrated from */
    convsel_calibrate_method method;
    size_t samples;          /* configurations profiled on the new CPU */
    size_t records;          /* conv records used */
    uint64_t seed;
    size_t residual_trees;
    /* Root mean square log error on configurations left out of the fit
     * (cross-validation by configuration over the samples, at most 10
     * folds); 0 with fewer than 3 configurations. */
    double cv_rmse_log;
    /* The same cross-validation's regret: over the configurations left out
     * (those with two primitives or more), the mean of log(time of the
     * primitive predicted fastest / the fastest's); 0 with fewer than 3
     * configurations. */
    double cv_regret_log;
    int auto_chosen;         /* method was chosen by cross-validation (AUTO or LINEAR_OR_BOTH) */
    convsel_fingerprint cpu; /* the new CPU */
    /* The thread counts the samples and the in-network probes measured
     * (convsel_threads_bit of each; 0: unknown, a file written before the
     * fortieth session). The in-network prices have one slot for 4 threads
     * and more, and retraining learns the counts measured: predictions at
     * another count are extrapolated. */
    uint64_t threads_mask;
    /* Reorders timed inside networks (convsel_model_calibrate_reorders; 0:
     * none) and, per thread slot (1, 2, 3, 4+ threads), the factor on the
     * reorder lines over all of them (0: the slot was not timed), the fixed
     * cost it adds to every reorder there, ms (0: none fitted), and the
     * leave-one-out RMS log error of the slot's samples without and with that
     * fixed cost (0: not fitted: fewer than 6 samples or too narrow a span). */
    size_t reorder_samples;
    double reorder_by_threads[CONVSEL_REORDER_MODEL_THREADS];
    double reorder_fixed_ms[CONVSEL_REORDER_MODEL_THREADS];
    double reorder_loo_factor[CONVSEL_REORDER_MODEL_THREADS], reorder_loo_fixed[CONVSEL_REORDER_MODEL_THREADS];
    /* Per thread slot: the layout pairs whose samples could fit a line of
     * their own (6 or more, spanning 4:1 in MB or more), how many of them
     * keep it (it replaces the scaled line), how many pairs never timed take
     * the mean of those lines (only where most keep theirs), and the
     * fittable pairs' leave-one-out RMS log error with the scaled lines and
     * with their own (0: none could). */
    int reorder_pairs_fittable[CONVSEL_REORDER_MODEL_THREADS], reorder_pairs_own[CONVSEL_REORDER_MODEL_THREADS];
    int reorder_pairs_mean[CONVSEL_REORDER_MODEL_THREADS];
    double reorder_loo_scaled[CONVSEL_REORDER_MODEL_THREADS], reorder_loo_own[CONVSEL_REORDER_MODEL_THREADS];
    /* Cold reads timed inside networks (convsel_model_calibrate_cold; 0:
     * none) and, per thread slot, the price fitted, ms per MB (0: the slot
     * was not measured; cold reads cost nothing in selection there). */
    size_t cold_samples;
    double cold_ms_per_mb[CONVSEL_REORDER_MODEL_THREADS];
    /* Convolutions timed inside networks against alone
     * (convsel_model_calibrate_network; 0: none) and, per thread slot, the
     * least and largest of the primitives' prices per MB of weights (both
     * 0: no primitive pays anything there). */
    size_t network_samples;
    double network_price_min[CONVSEL_REORDER_MODEL_THREADS], network_price_max[CONVSEL_REORDER_MODEL_THREADS];
    /* Each price: model primitive j (convsel_model_primitive_name) at a
     * thread slot, ms per MB of plain weights (0: nothing measured). */
    double network_ms_per_mb[CONVSEL_NETWORK_PRIMITIVES][CONVSEL_REORDER_MODEL_THREADS];
} convsel_calibration_info;

/*
 * Calibrates model's reorder lines for cpu, on which it must already be
 * calibrated (NOT_FOUND otherwise), to reorders timed inside networks there
 * (convsel_reorder_probe). Per thread slot, first an offset: with 6
 * samples or more whose lines span 2:1 or more, time = b (line + offset)
 * fitted by least squares in relative error (offset >= 0), kept when it
 * predicts each sample left out better than a factor alone (RMS of log
 * error), else 0; it is the fixed cost of a reorder at many threads (a
 * thread team's start) that lines fitted on fewer threads lack. Then the
 * slot's factor, the geometric mean of time / (line + offset) over the slot's
 * samples, and per layout pair the same over the pair's samples with three
 * samples' weight on the slot's mean. Last, a layout pair with 6 samples or
 * more spanning 4:1 or more in MB moved fits a line of its own (time = a +
 * b MB, least squares in relative error, a >= 0), kept when it predicts
 * each of the pair's samples left out better than the pair's factor does;
 * where most fittable pairs of a slot keep theirs, the pairs never timed
 * there take their mean line. Selection for cpu then prices a reorder by
 * its pair's own line where it has one, else as (line + offset) times the
 * factor; slots without samples keep the line. Refitting replaces what an
 * earlier call fitted.
 * Returns OK, INVALID_ARGUMENT (a sample that is no timed reorder) or
 * NOT_FOUND.
 */
convsel_status convsel_model_calibrate_reorders(convsel_model *model, const convsel_fingerprint *cpu,
                                                const convsel_reorder_sample *samples, size_t n);

/*
 * Prices cold reads for cpu, on which model must already be calibrated
 * (NOT_FOUND otherwise), from convsel_cold_probe's samples: per thread slot,
 * the samples' excess time over the megabytes they read (in their layout),
 * clamped to [0, 1] ms per MB. Selection for cpu then charges the first and
 * every unconnected layer that price times the bytes of its input in the
 * boundary layout (convsel_cost_source.cold_read_ms), so that a layout which
 * pads a 3-channel image to 16 channels pays for reading 5.3 times the
 * bytes. Slots without samples price nothing. Refitting replaces what an
 * earlier call fitted. Returns OK, INVALID_ARGUMENT (a sample with no shape,
 * layout or threads, or a time that is not finite) or NOT_FOUND.
 */
convsel_status convsel_model_calibrate_cold(convsel_model *model, const convsel_fingerprint *cpu,
                                            const convsel_cold_sample *samples, size_t n);
/* The model's price of a cold read of an mb×c×h×w activation in layout on
 * cpu: 0 unless its calibration for cpu measured one at that thread slot. */
double convsel_model_cold_read_ms(const convsel_model *model, const convsel_fingerprint *cpu, int64_t mb, int64_t c,
                                  int64_t h, int64_t w, convsel_layout layout, int threads);

/*
 * Prices the weights each primitive's convolutions read inside a network
 * (evicted by the layers that ran since) for cpu, on which model must
 * already be calibrated (NOT_FOUND otherwise), from convsel_conv_probe's
 * samples: per model primitive (the first CONVSEL_NETWORK_PRIMITIVES of the
 * model's) and thread slot, its samples' time in the network minus alone
 * over their layers' plain weights in MB plus one MB read for free (a prior,
 * so that a few small layers' noise prices little), clamped to [0, 1] ms
 * per MB. The selector's cost source (convsel_model_costs_source) then adds
 * that price times a layer's weights to the primitive's prediction; predict,
 * eval and transfer still compare with times alone, as profiled, and do
 * not. Samples of primitives the model does not know are skipped. Refitting
 * replaces what an earlier call fitted. Returns OK, INVALID_ARGUMENT (a
 * sample with no primitive, threads or valid problem, or a time that is not
 * positive and finite) or NOT_FOUND.
 */
convsel_status convsel_model_calibrate_network(convsel_model *model, const convsel_fingerprint *cpu,
                                               const convsel_conv_sample *samples, size_t n);
/* What model primitive j adds inside a network on cpu at threads for
 * problem's weights: 0 unless its calibration for cpu measured a price. */
double convsel_model_network_weights_ms(const convsel_model *model, const convsel_fingerprint *cpu, size_t j,
                                        const convsel_problem *problem, int threads);

/* Number of calibrations a model carries (0 for a trained one). */
/* A thread count's bit in convsel_calibration_info.threads_mask: bit t - 1,
 * bit 63 for 64 threads or more, 0 for t < 1. */
uint64_t convsel_threads_bit(int threads);

size_t convsel_model_calibration_count(const convsel_model *model);
/* The i-th one (the latest is 0). Returns OK or NOT_FOUND. */
convsel_status convsel_model_calibration(const convsel_model *model, size_t i, convsel_calibration_info *info);

/* A configuration that may be profiled: a shape at a thread count. */
typedef struct convsel_calibrate_candidate {
    convsel_problem problem;
    int threads;
    /* Bit j set: the model's primitive j applies here. 0: ask the catalogue
     * (primitives it does not know count as applicable). */
    uint64_t applicable;
} convsel_calibrate_candidate;

/*
 * Chooses k distinct configurations of pool to profile for calibrating
 * source to cpu (NULL: source's first CPU), by greedy k-median in a space of
 * normalised log FLOPs, log channels in and out, log output size, log kernel
 * size, stride, depthwise and log threads (each pick the candidate that most
 * reduces the distance from the pool to its nearest pick; the first is the
 * medoid). Picks alternate, coverage first: coverage picks serve the whole
 * pool; uncertainty picks (k / 2 of them) serve and come from the quarter of
 * the pool (at least k) where source's predicted gap between the two fastest
 * applicable primitives is smallest. chosen receives k indexes into pool, in
 * the order picked; where that quarter holds k or more, the first n of them
 * are the choice of k = n. The same pool, source and seed give the same choice (the
 * seed draws the 1024 points a larger pool is represented by). Returns OK,
 * INVALID_ARGUMENT (fewer than k distinct configurations, a bad candidate) or
 * OUT_OF_MEMORY.
 */
convsel_status convsel_calibrate_choose(const convsel_model *source, const convsel_calibrate_candidate *pool,
                                        size_t n_pool, size_t k, uint64_t seed, const convsel_fingerprint *cpu,
                                        size_t *chosen);

/*
 * The configurations of dataset's conv records as candidates for
 * convsel_calibrate_choose, for calibrating from a dataset profiled on the
 * new CPU instead of profiling: one per configuration key
 * (convsel_record_config_key), in the keys' sorted order, with bit j of
 * applicable set when model's primitive j (j < 64) was measured there.
 * cands needs room for convsel_dataset_size(dataset) entries; *n_cands
 * receives how many were written. record_candidate (NULL, or room for
 * convsel_dataset_size(dataset) entries) receives each record's candidate
 * index, SIZE_MAX for a reorder record. Returns OK, INVALID_ARGUMENT or
 * OUT_OF_MEMORY.
 */
convsel_status convsel_calibrate_candidates_from_dataset(const convsel_dataset *dataset, const convsel_model *model,
                                                         convsel_calibrate_candidate *cands, size_t *n_cands,
                                                         size_t *record_candidate);
/*
 * The records of the chosen candidates, in dataset's order, as a new dataset
 * (the caller destroys it) with all of dataset's fingerprints, record indexes
 * remapped: the target_samples of convsel_model_calibrate. record_candidate
 * and n_cands are what convsel_calibrate_candidates_from_dataset gave for
 * dataset; chosen holds k indexes below n_cands (repeats allowed). *samples is
 * NULL on failure. Returns OK, INVALID_ARGUMENT or OUT_OF_MEMORY.
 */
convsel_status convsel_calibrate_samples_from_dataset(const convsel_dataset *dataset, const size_t *record_candidate,
                                                      size_t n_cands, const size_t *chosen, size_t k,
                                                      convsel_dataset **samples);

/* ---------------------------------------------------------------- convolution runtime */

/*
 * convsel as a convolution runtime with learned dispatch: a selector holds a
 * model (and the CPU it predicts for); each convolution created through it
 * runs the primitive the model predicts fastest for that layer alone. (Whole
 * networks, with reorders between layers, go through convsel_select.)
 */
typedef struct convsel_selector convsel_selector;
typedef struct convsel_conv convsel_conv;

/* model must outlive the selector. Returns OK, INVALID_ARGUMENT or
 * OUT_OF_MEMORY. */
convsel_status convsel_selector_create(const convsel_model *model, convsel_selector **selector);
void convsel_selector_destroy(convsel_selector *selector);

/*
 * Predicts every applicable primitive on problem at threads threads, creates
 * the fastest with the plain goihw weights (copied and transformed here).
 * Returns OK, NOT_APPLICABLE (no primitive computes it; the detail says why),
 * INVALID_ARGUMENT or the creation's error.
 */
convsel_status convsel_conv_create(convsel_selector *selector, const convsel_problem *problem, int threads,
                                   const float *weights, convsel_conv **conv);
/* src and dst in convsel_conv_src_layout / convsel_conv_dst_layout. */
convsel_status convsel_conv_run(convsel_conv *conv, const float *src, float *dst);
void convsel_conv_destroy(convsel_conv *conv);
const char *convsel_conv_primitive(const convsel_conv *conv);
convsel_layout convsel_conv_src_layout(const convsel_conv *conv);
convsel_layout convsel_conv_dst_layout(const convsel_conv *conv);
/* The model's predicted ms for the chosen primitive. */
double convsel_conv_predicted_ms(const convsel_conv *conv);

/* ---------------------------------------------------------------- reference helpers */

/* Fills buf with n uniform values in [-1, 1) from a seeded generator
 * (deterministic across platforms). */
void convsel_fill_random(float *buf, size_t n, uint64_t seed);

/* max|y - y_ref| / max|y_ref| over n values (0 when both are all zero). */
double convsel_rel_error(const float *y, const float *y_ref, size_t n);

#ifdef __cplusplus
}
#endif

#endif /* CONVSEL_H */
