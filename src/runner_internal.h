/*
 * The network runner's insides, shared by runner.c (building and running a
 * plan) and runner_check.c (a pass checked against the reference). Never
 * installed.
 */
#ifndef CONVSEL_RUNNER_INTERNAL_H
#define CONVSEL_RUNNER_INTERNAL_H

#include "internal.h"

enum step_kind { STEP_CONV, STEP_REORDER };

struct step {
    enum step_kind kind;
    convsel_instance *conv;
    convsel_reorder *reorder;
    const float *in;
    float *out;
    int in_slot, out_slot; /* the shared slot in or out lives in, or -1: a buffer of its own */
    int borrowed; /* conv is the lender's (convsel_runner_create_like), not destroyed with this runner */
    size_t layer; /* the plan layer it is charged to (a reorder: the layer it feeds, or the layer it exits) */
    int64_t mb, c, h, w; /* a reorder's tensor (a convolution's shapes are its layer's problem) */
    convsel_layout in_layout, out_layout;
};

struct convsel_runner {
    struct step *steps;
    size_t n_steps, n_reorders;
    float **buffers; /* every buffer the runner owns */
    size_t n_buffers, cap_buffers;
    /* Every tensor a step writes is read by the next step at most, so all of
     * them take turns in two slots (a step never writes the slot it reads);
     * only the network's inputs, which must keep their values from run to
     * run, have buffers of their own. */
    size_t slot_elems[2];
    int last_slot; /* the slot written last while planning */
    /* The one workspace every convolution step uses (NULL when none needs
     * one, or when convsel_runner_share_workspace turned sharing off). */
    void *workspace;
    size_t workspace_bytes;
    int threads;
    size_t n_layers; /* the plan's */
    /* Per plan layer, the random input it reads where it is not connected
     * (NULL where it is), in the boundary layout; the runner's own or its
     * lender's. */
    float **inputs;
    convsel_layout boundary;
    /* convsel_runner_create_like: the runner whose instances and inputs this
     * one shares, and how many runners share this one's. */
    convsel_runner *lender;
    size_t n_borrowers;
    int destroyed; /* convsel_runner_destroy came while n_borrowers > 0 */
    /* What convsel_runner_check needs to recompute each layer: its problem,
     * whether it reads the previous layer's output (else random activations
     * from convsel_runner_input_seed), and the seed of the weights. */
    convsel_problem *problems;
    unsigned char *connected;
    uint64_t seed;
    /* convsel_runner_time_layers: every step's time of every run, run-major. */
    int timing;
    double *step_ms;
    size_t n_runs, cap_runs;
};

/* The seeds of layer i's random weights and, when it is not connected, of its
 * random input activations (made in nchw). */
uint64_t convsel_runner_weights_seed(uint64_t seed, size_t layer);
uint64_t convsel_runner_input_seed(uint64_t seed, size_t layer);

#endif
