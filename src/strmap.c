/*
 * Keys of shapes and a map from strings to indexes (open addressing), for
 * whatever a process looks up by descriptor: the dataset's configurations, the
 * sampler's and profiler's sets, oneDNN's answers (primitives/onednn.c).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

uint64_t convsel_hash_str(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ull;
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ull;
    }
    return h;
}

void convsel_shape_key(const convsel_problem *problem, char *buf, size_t size)
{
    convsel_problem shape = *problem;
    shape.name[0] = '\0';
    shape.repeat = 1;
    convsel_problem_format(&shape, buf, size);
}

void convsel_strmap_init(struct convsel_strmap *map)
{
    memset(map, 0, sizeof *map);
}

void convsel_strmap_free(struct convsel_strmap *map)
{
    for (size_t i = 0; i < map->cap; i++)
        free(map->keys[i]);
    free(map->keys);
    free(map->values);
    memset(map, 0, sizeof *map);
}

static size_t strmap_slot(char *const *keys, size_t cap, const char *key)
{
    size_t i = (size_t)convsel_hash_str(key) & (cap - 1);
    while (keys[i] && strcmp(keys[i], key) != 0)
        i = (i + 1) & (cap - 1);
    return i;
}

static int strmap_grow(struct convsel_strmap *map)
{
    size_t cap = map->cap ? 2 * map->cap : 64;
    char **keys = calloc(cap, sizeof *keys);
    size_t *values = calloc(cap, sizeof *values);
    if (!keys || !values) {
        free(keys);
        free(values);
        return -1;
    }
    for (size_t i = 0; i < map->cap; i++) {
        if (!map->keys[i])
            continue;
        size_t j = strmap_slot(keys, cap, map->keys[i]);
        keys[j] = map->keys[i];
        values[j] = map->values[i];
    }
    free(map->keys);
    free(map->values);
    map->keys = keys;
    map->values = values;
    map->cap = cap;
    return 0;
}

int convsel_strmap_put(struct convsel_strmap *map, const char *key, size_t value)
{
    if ((map->count + 1) * 2 > map->cap && strmap_grow(map) != 0)
        return -1;
    size_t i = strmap_slot(map->keys, map->cap, key);
    if (map->keys[i])
        return 0;
    map->keys[i] = strdup(key);
    if (!map->keys[i])
        return -1;
    map->values[i] = value;
    map->count++;
    return 1;
}

int convsel_strmap_get(const struct convsel_strmap *map, const char *key, size_t *value)
{
    if (map->cap == 0)
        return 0;
    size_t i = strmap_slot(map->keys, map->cap, key);
    if (!map->keys[i])
        return 0;
    if (value)
        *value = map->values[i];
    return 1;
}
