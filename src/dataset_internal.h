/*
 * Helpers shared by the dataset, sampler and profiler: configuration keys and
 * a map of strings. Never installed.
 */
#ifndef CONVSEL_DATASET_INTERNAL_H
#define CONVSEL_DATASET_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "convsel.h"

/* Room for any key below. */
#define CONVSEL_KEY_MAX 384

/* The canonical descriptor of problem's shape: name cleared, repeat 1. */
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
/* The index of the writer's fingerprint in its file's header. */
uint32_t convsel_dataset_writer_fingerprint_index(const convsel_dataset_writer *writer);
/* Drops the records appended since the last flush. */
void convsel_dataset_writer_discard(convsel_dataset_writer *writer);

#endif
