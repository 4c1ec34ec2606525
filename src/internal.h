/*
 * Internal helpers shared across the library's files. Never installed.
 */
#ifndef CONVSEL_INTERNAL_H
#define CONVSEL_INTERNAL_H

#include <sched.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "convsel.h"

#if defined(__GNUC__)
#define CONVSEL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define CONVSEL_PRINTF(a, b)
#endif

/* Sets this thread's last-error detail and returns status, so that a failure
 * reads: return convsel_error(CONVSEL_PARSE_ERROR, "line %d: ...", line); */
convsel_status convsel_error(convsel_status status, const char *fmt, ...) CONVSEL_PRINTF(2, 3);
void convsel_error_clear(void);

/* Applies CONVSEL_ISA from the environment once; every entry point that
 * creates primitives calls it first. */
void convsel_isa_init_from_env(void);
/* Marks that a backend was initialised, after which the ISA can no longer change. */
void convsel_isa_lock(void);
/* The OpenBLAS core to run instead of `core` on a CPU whose ISA is `cpu`, when
 * `core` is a pre-AVX2 fallback on an AVX2 or AVX-512 CPU; else NULL. */
const char *convsel_openblas_core_upgrade(convsel_isa cpu, const char *core);
/* The instruction set of the OpenBLAS kernels of the core named in config
 * (a core name, or OpenBLAS's configuration string with the core among its
 * words; any case), or -1 for none convsel knows (fingerprint.c). */
int convsel_openblas_core_isa(const char *config);

/* Index of the catalogue primitive called name, or SIZE_MAX; sets no error
 * (convsel_primitive_find does), for lookups where an unknown name is normal. */
size_t convsel_primitive_index(const char *name);

/* Keys and a map of strings (strmap.c). The canonical descriptor of
 * problem's shape: name cleared, repeat 1. */
void convsel_shape_key(const convsel_problem *problem, char *buf, size_t size);

/* 64-bit FNV-1a of a string: stable across runs and platforms (shards). */
uint64_t convsel_hash_str(const char *s);

/* A map from strings to indexes (open addressing; the map owns copies of
 * its keys), used as a set too. */
struct convsel_strmap {
    char **keys;
    size_t *values;
    size_t cap, count;
};

void convsel_strmap_init(struct convsel_strmap *map);
void convsel_strmap_free(struct convsel_strmap *map);
/* 1 when key was added with value, 0 when it was there already (its value
 * unchanged), -1 when out of memory. */
int convsel_strmap_put(struct convsel_strmap *map, const char *key, size_t value);
/* 1 and *value (when not NULL) when key is there, else 0. */
int convsel_strmap_get(const struct convsel_strmap *map, const char *key, size_t *value);

/* Sets OpenMP's and OpenBLAS's thread counts for the next call. */
void convsel_threads_set(int threads);

/* 1 when a and b are the same convolution shape (names and repeats aside). */
int convsel_problem_same_shape(const convsel_problem *a, const convsel_problem *b);
/* 1 when prev's output has next's input shape (batch, channels, height,
 * width), so that prev can feed next in a network. */
int convsel_problem_feeds(const convsel_problem *prev, const convsel_problem *next);

/* Whether primitive i may be chosen for p under opts, before any cost is
 * asked (not the reference, not excluded, within max_error, applicable);
 * when it is not applicable, why (may be NULL) says so, else why is "". */
int convsel_select_allowed(size_t i, const convsel_problem *p, const convsel_select_options *opts, char *why,
                           size_t size);

/* 1 when primitive i's kernel on p at threads is a library's naive reference
 * loops (convsel_primitive_runs_as names the reference); the selector takes
 * such a candidate only where a layer has no other. */
int convsel_select_runs_naive(size_t i, const convsel_problem *p, int threads);

/* --verify: the margin by which a measured candidate must beat the model
 * plan's choice (timed with it) to replace it. convsel_verify_keeps: whether
 * a measured candidate stays a candidate (the model's choice always does;
 * with model_choice_ms not positive, everything does). */
#define CONVSEL_VERIFY_SWITCH_MARGIN 0.05
/* --verify in place: this many interleaved runs of each network variant, as
 * far as CONVSEL_VERIFY_IN_PLACE_S holds them (a round priced by the networks'
 * cold passes; the environment variable of the same name sets the seconds),
 * and never fewer than CONVSEL_VERIFY_IN_PLACE_MIN_ROUNDS. */
#define CONVSEL_VERIFY_IN_PLACE_ROUNDS 15
#define CONVSEL_VERIFY_IN_PLACE_MIN_ROUNDS 3
#define CONVSEL_VERIFY_IN_PLACE_S 10.0
int convsel_verify_in_place_rounds(double round_s, double budget_s);
/* --verify in place: the variants' runners may take at most this fraction of
 * the memory available once the model plan's runner is made (the environment
 * variable CONVSEL_VERIFY_MAX_BYTES sets the bytes instead); variants beyond
 * it are not run, and their candidates are decided by their times alone. */
#define CONVSEL_VERIFY_MEMORY_SHARE 0.5
/* --verify in place: the candidates' times alone only screen them (the model
 * plan's choice's time prices the layer; the network's runs decide), so they
 * take at most this many seconds per layer and CONVSEL_VERIFY_SCREEN_ROUNDS
 * rounds at least; a layer whose candidates the networks did not all run is
 * timed alone again in full. */
#define CONVSEL_VERIFY_SCREEN_S 0.3
#define CONVSEL_VERIFY_SCREEN_ROUNDS 3
int convsel_verify_keeps(double model_choice_ms, int is_model_choice, double ms);

/* One candidate --verify measured on one layer shape (a group: the verified
 * shapes in order of first use). */
typedef struct convsel_verify_candidate {
    convsel_problem shape; /* name cleared */
    size_t group;
    size_t primitive;
    int anchor;         /* the model plan's choice on this shape */
    int baseline;       /* oneDNN alone's choice (onednn_auto): kept without the margin in place */
    double alone_ms;    /* timed alone, in the costs' statistic (a screen's time where in place ran) */
    double in_place_ms; /* in place: its median inside the network, else 0 (opts->verify_alone) */
    double ms;          /* its cost to the selector */
    int kept;           /* one the selector may choose (convsel_verify_keeps) */
    int alone_runs;     /* the timed runs behind alone_ms */
} convsel_verify_candidate;

/* convsel_runner_run as a convsel_timed_fn (ctx: the runner). */
convsel_status convsel_runner_timed(void *runner);
/* convsel_instance_run with the caller's workspace for this run (when not
 * NULL: 64-byte aligned and at least convsel_instance_workspace_bytes), the
 * instance's own setting left as it is. A runner's layers that other runners
 * share run in its workspace this way, whichever runner set it last. */
convsel_status convsel_instance_run_in(convsel_instance *instance, const float *src, float *dst, void *workspace);

/* Which measured candidates the selector may take (kept), and at what cost
 * (ms): the margin rule on the in-place times where both the candidate and
 * its group's anchor have one, else on the times alone. In place, oneDNN
 * alone's choice (baseline) is kept whatever its time: the selector then
 * weighs it against the anchor by their in-place costs and the reorders
 * around them. */
void convsel_verify_decide(convsel_verify_candidate *candidates, size_t n);

/* convsel_select_verified, and (when candidates is not NULL) every candidate
 * measured, in an array the caller frees. */
convsel_status convsel_verify_select(const convsel_network *network, const convsel_select_options *opts,
                                     const convsel_cost_source *costs, int k, double uncertainty,
                                     const convsel_timing_options *timing, convsel_plan **plan,
                                     convsel_verify_candidate **candidates, size_t *n_candidates);

/* The cache sizes a fingerprint records (fingerprint.c): L1d and L2 per core,
 * L3 the sum over the distinct L3 instances of the CPUs in a set. */
typedef struct convsel_caches {
    int64_t l1d, l2, l3;
} convsel_caches;
/* From sysfs (/sys/devices/system/cpu/cpuN/cache); a size it lacks stays 0. */
void convsel_caches_sysfs(const cpu_set_t *cpus, convsel_caches *caches);
/* From CPUID's deterministic cache parameters, the leaf Linux fills sysfs from
 * (4 on Intel, 0x8000001D on AMD and Hygon with TOPOEXT); L3 instances are
 * told apart by the APIC IDs /proc/cpuinfo lists. 0 when the CPU has no such
 * leaf (or is not x86), with every size 0. */
int convsel_caches_cpuid(const cpu_set_t *cpus, convsel_caches *caches);
/* How many distinct caches shared by `sharing` logical CPUs the CPUs of a set
 * use, from their APIC IDs (apic[cpu], -1 where unknown; n entries): a cache's
 * ID is the APIC ID with its low ceil(log2(sharing)) bits dropped. CPUs of
 * unknown APIC ID count as one cache between them; 0 for an empty set. */
int convsel_cache_instances(const int *apic, int n, const cpu_set_t *cpus, int sharing);

/* Monotonic time in seconds. */
double convsel_now(void);
/* The megabytes a reorder from one layout to another moves: it reads the
 * source and writes the destination, padded channels included
 * (reorder_model.c). */
double convsel_reorder_mbytes(int64_t mb, int64_t c, int64_t h, int64_t w, convsel_layout from, convsel_layout to);
/* The reorder cost model's slot for a thread count (reorder_model.c). */
int convsel_reorder_thread_slot(int threads);
/* A copy of network (named NAME/divisor) whose every layer has its sides
 * divided by divisor, rounding up, so that layers that fed each other still
 * do; a layer that no longer makes a valid convolution is left out. */
convsel_status convsel_network_shrunk(const convsel_network *network, int64_t divisor, convsel_network **out);
/* A plan over network that the probes (reorder_probe.c, cold_probe.c) fill
 * in: its layers in order, expanded and connected, each with some allowed
 * primitive (convsel_select under costs that are all equal). */
convsel_status convsel_probe_skeleton(const convsel_network *network, int threads, const unsigned char *allowed,
                                      convsel_plan **plan);
/* Runs plan end to end for the probes: a runner made into *runner (destroy
 * it even on failure), two passes to warm up, then timed passes
 * (convsel_runner_time_layers) until max_time_s, at least min_runs (1 to
 * 50), at most 50. The reorder and cold probes ask for
 * CONVSEL_PROBE_MIN_RUNS. */
#define CONVSEL_PROBE_MIN_RUNS 5
convsel_status convsel_probe_run(const convsel_plan *plan, double max_time_s, int min_runs, uint64_t seed,
                                 convsel_runner **runner);
/* One primitive's kept pass in convsel_conv_probe_passes: its samples at
 * [first, first + count) of the caller's, and their summed times. */
typedef struct convsel_conv_kept {
    size_t first, count;
    double total_ms;
} convsel_conv_kept;
/* A primitive's pass of n samples whose times sum to total_ms: appended to
 * *samples (realloc'd) when *kept (zeroed at first) holds none, else put in
 * place of the kept ones when it has as many and took less time; OK or
 * OUT_OF_MEMORY. */
convsel_status convsel_conv_keep_pass(convsel_conv_kept *kept, const convsel_conv_sample *pass, size_t n,
                                      double total_ms, convsel_conv_sample **samples, size_t *n_samples);
/* convsel_conv_probe with passes (1 to 16) passes over the primitives, each
 * making timings (1 to 50) runs end to end and repetitions of each layer
 * alone, and max_time_s shared by all passes; each primitive keeps the pass
 * in which its layers' times (in the network and alone) sum least.
 * convsel_conv_probe makes CONVSEL_CONV_PROBE_PASSES of
 * CONVSEL_CONV_PROBE_TIMINGS; one pass of 5 is the probe before the
 * fifty-fifth session. */
#define CONVSEL_CONV_PROBE_PASSES 2
#define CONVSEL_CONV_PROBE_TIMINGS 5
convsel_status convsel_conv_probe_passes(const convsel_network *network, int threads, const unsigned char *allowed,
                                         double max_time_s, int passes, int timings, uint64_t seed,
                                         convsel_conv_sample **samples, size_t *n_samples);
/* qsort comparator of doubles, ascending. */
int convsel_cmp_double(const void *a, const void *b);
/* Room for element `count` of an array of elem_size bytes that doubles as it
 * fills (first capacity `first`): the array, moved when it had to grow, with
 * *cap updated; NULL when out of memory or the size overflows, the array and
 * *cap then unchanged. Use:
 *     T *grown = convsel_grow(a->items, a->n, &a->cap, 64, sizeof *grown);
 *     if (!grown) return convsel_error(CONVSEL_OUT_OF_MEMORY, "...");
 *     a->items = grown; a->items[a->n++] = item; */
void *convsel_grow(void *array, size_t count, size_t *cap, size_t first, size_t elem_size);
/* Bytes of memory the system could still give (/proc/meminfo's
 * MemAvailable), and this process's resident bytes; 0 when unknown. */
size_t convsel_memory_available(void);
size_t convsel_resident_bytes(void);
/* The environment variable name as a number >= min, or fallback when it is
 * unset, empty, not wholly a finite number, or below min. */
double convsel_env_double(const char *name, double min, double fallback);

/* Index of element (n, c, y, x) of an activation of c_count channels and
 * h×w pixels stored in layout; c may run into a blocked layout's padded
 * channels (up to the next multiple of the block). */
size_t convsel_layout_offset(convsel_layout layout, int64_t c_count, int64_t h, int64_t w, int64_t n, int64_t c,
                             int64_t y, int64_t x);

/* Quantile q (0..1) of sorted[0..m), m >= 1, ascending (timing.c). */
double convsel_quantile(const double *sorted, int m, double q);

/* Which of a measurement's (or a record's) times statistic names (timing.c). */
double convsel_statistic_pick(convsel_statistic statistic, double min_ms, double p10_ms, double median_ms);

#define CONVSEL_MIN(a, b) ((a) < (b) ? (a) : (b))
#define CONVSEL_MAX(a, b) ((a) > (b) ? (a) : (b))
#define CONVSEL_DIV_UP(a, b) (((a) + (b)-1) / (b))
#define CONVSEL_ARRAY_SIZE(a) (sizeof(a) / sizeof((a)[0]))

#endif
