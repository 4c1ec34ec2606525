/* calibrate's pool of candidate configurations, and profiling the chosen ones
 * (src/cli/calibrate_pool.c). Errors are printed as "convsel calibrate: ...". */
#ifndef CONVSEL_CLI_CALIBRATE_POOL_H
#define CONVSEL_CLI_CALIBRATE_POOL_H

#include "cli.h"

/* The fewest samples profiling keeps under a deadline (K when fewer). */
#define CLI_POOL_MIN_SAMPLES 5

/* Zero-initialised before use; cli_pool_free releases it. */
typedef struct cli_pool {
    convsel_calibrate_candidate *items;
    size_t n, cap;
    convsel_network **networks; /* the pool's networks, in order (for the reorder probe) */
    size_t n_networks;
} cli_pool;

void cli_pool_free(cli_pool *c);

/* ./networks, else networks/ or share/convsel/networks beside the executable's
 * directory, into buf; 0 when there is none. */
int cli_pool_default_dir(char *buf, size_t size);

/* The layers of a network file, or of every *.txt in a directory (in name
 * order), at each of the n_threads thread counts, leaving out layers above
 * max_flops; the networks are kept for the in-network probes. *added counts
 * the candidates added. CLI_OK or CLI_FAIL, said on stderr. */
int cli_pool_add_path(const char *path, double max_flops, const int *threads, size_t n_threads, cli_pool *c,
                      size_t *added);

/* n configurations drawn by the profiler's sampler (seeded) around the layers
 * of the network files or directories at paths, at each thread count. */
int cli_pool_add_sampled(const char *const *paths, size_t n_paths, long n, uint64_t seed, double max_flops,
                         const int *threads, size_t n_threads, cli_pool *c);

/*
 * Profiles the k candidates of c that chosen indexes, in that order (the
 * greedy k-median's of convsel_calibrate_choose, whose prefixes are its
 * smaller choices), timing the primitives selected[] marks, into out under
 * the fingerprint cpu. When deadline > 0 (a cli_now() time) it stops before a
 * sample, past the first CLI_POOL_MIN_SAMPLES, that the mean time of the
 * samples so far projects past the deadline. *n_done receives how many were
 * profiled. Progress on stderr unless quiet.
 */
int cli_pool_profile(const cli_pool *c, const size_t *chosen, size_t k, const unsigned char *selected,
                     const convsel_timing_options *timing, const convsel_fingerprint *cpu, double deadline, int quiet,
                     convsel_dataset *out, size_t *n_done);

#endif
