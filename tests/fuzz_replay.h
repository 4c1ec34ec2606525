/*
 * What the standalone replay tools of the fuzz targets share (tests/fuzz_*.c
 * built with CONVSEL_FUZZ_STANDALONE): reading a whole file, and running a
 * callback on every file under a path (a file, or a directory walked
 * recursively, dot files skipped).
 */
#ifndef CONVSEL_TESTS_FUZZ_REPLAY_H
#define CONVSEL_TESTS_FUZZ_REPLAY_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/stat.h>

/* The whole file, malloc'd (one spare byte at the end, so that a caller may
 * NUL-terminate it), its length in *size; NULL where it cannot be read. */
static inline unsigned char *fuzz_read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return NULL;
    size_t cap = 4096, used = 0, n;
    unsigned char *buf = malloc(cap + 1);
    while (buf && (n = fread(buf + used, 1, cap - used, f)) > 0) {
        used += n;
        if (used == cap) {
            unsigned char *grown = realloc(buf, 2 * cap + 1);
            if (!grown)
                free(buf);
            buf = grown;
            cap *= 2;
        }
    }
    fclose(f);
    *size = used;
    return buf;
}

/* Calls fn(file, ctx) on path, or on every file under it where it is a
 * directory. Returns nonzero where path does not exist or any call did
 * (tool names the replay tool in the messages). */
static inline int fuzz_for_each_file(const char *path, const char *tool, int (*fn)(const char *file, void *ctx),
                                     void *ctx)
{
    struct stat sb;
    if (stat(path, &sb) != 0) {
        fprintf(stderr, "%s: %s: not found\n", tool, path);
        return 1;
    }
    if (!S_ISDIR(sb.st_mode))
        return fn(path, ctx);
    DIR *d = opendir(path);
    if (!d) {
        fprintf(stderr, "%s: cannot open the directory %s\n", tool, path);
        return 1;
    }
    struct dirent *e;
    int rc = 0;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char child[4096];
        if (snprintf(child, sizeof child, "%s/%s", path, e->d_name) >= (int)sizeof child) {
            fprintf(stderr, "%s: a path under %s is too long\n", tool, path);
            rc = 1;
            continue;
        }
        rc |= fuzz_for_each_file(child, tool, fn, ctx);
    }
    closedir(d);
    return rc;
}

#endif
