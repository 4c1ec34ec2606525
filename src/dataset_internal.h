/*
 * Helpers shared by the dataset, sampler and profiler: configuration keys
 * (shape keys and the map of strings are in internal.h). Never installed.
 */
#ifndef CONVSEL_DATASET_INTERNAL_H
#define CONVSEL_DATASET_INTERNAL_H

#include <stddef.h>
#include <stdint.h>

#include "convsel.h"
#include "internal.h" /* shape keys, the map of strings */

/* Room for any key below. */
#define CONVSEL_KEY_MAX 384

/* The index of the writer's fingerprint in its file's header. */
uint32_t convsel_dataset_writer_fingerprint_index(const convsel_dataset_writer *writer);
/* Drops the records appended since the last flush. */
void convsel_dataset_writer_discard(convsel_dataset_writer *writer);

#endif
