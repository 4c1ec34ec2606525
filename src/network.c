/* Network files: one benchdnn descriptor per line, '#' comments. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>

#include "internal.h"

struct convsel_network {
    char *name;
    convsel_problem *layers;
    size_t count, capacity;
};

static convsel_network *network_new(const char *name)
{
    convsel_network *net = calloc(1, sizeof *net);
    if (!net)
        return NULL;
    net->name = strdup(name);
    if (!net->name) {
        free(net);
        return NULL;
    }
    return net;
}

static convsel_status network_push(convsel_network *net, const convsel_problem *p)
{
    convsel_problem *layers = convsel_grow(net->layers, net->count, &net->capacity, 16, sizeof *layers);
    if (!layers)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory reading network");
    net->layers = layers;
    net->layers[net->count++] = *p;
    return CONVSEL_OK;
}

static convsel_status apply_mb(convsel_problem *p, int64_t mb)
{
    if (mb > 0) {
        p->mb = mb;
        return convsel_problem_validate(p);
    }
    return CONVSEL_OK;
}

/* A line of a binary file (a model, a dataset): a NUL, DEL or a control
 * character other than tab, CR and LF. Bytes from 0x80 up pass (UTF-8 in
 * names and comments). */
static int binary_line(const char *line, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)line[i];
        if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c == 0x7f)
            return 1;
    }
    return 0;
}

/* Cuts a '#' comment (outside a quoted name) and surrounding blanks. */
static char *strip_line(char *line)
{
    int quoted = 0;
    for (char *c = line; *c; c++) {
        if (*c == '"')
            quoted = !quoted;
        else if (*c == '#' && !quoted) {
            *c = '\0';
            break;
        }
    }
    while (*line == ' ' || *line == '\t')
        line++;
    size_t n = strlen(line);
    while (n && (line[n - 1] == ' ' || line[n - 1] == '\t' || line[n - 1] == '\n' || line[n - 1] == '\r'))
        line[--n] = '\0';
    return line;
}

/* The network's name: the file name without directory and extension. */
static void base_name(const char *path, char *out, size_t size)
{
    const char *slash = strrchr(path, '/');
    const char *base = slash ? slash + 1 : path;
    snprintf(out, size, "%s", base);
    char *dot = strrchr(out, '.');
    if (dot && dot != out)
        *dot = '\0';
}

static convsel_status network_read(const char *path, int64_t mb, int skip_unsupported, convsel_network **network,
                                   size_t *skipped)
{
    char name[256];
    if (!path || !network)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "network path is NULL");
    *network = NULL;
    if (mb < 0)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "--mb must be positive (got %lld)", (long long)mb);
    FILE *f = fopen(path, "r");
    if (!f)
        return convsel_error(CONVSEL_IO_ERROR, "%s: %s", path, strerror(errno));
    base_name(path, name, sizeof name);
    convsel_network *net = network_new(name);
    if (!net) {
        fclose(f);
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory reading %s", path);
    }
    char *line = NULL;
    size_t cap = 0;
    int lineno = 0;
    convsel_status st = CONVSEL_OK;
    ssize_t len;
    while ((len = getline(&line, &cap, f)) >= 0) {
        lineno++;
        if (binary_line(line, (size_t)len)) {
            st = convsel_error(CONVSEL_PARSE_ERROR,
                               "%s:%d: binary content (a NUL or control character), not a network file of "
                               "benchdnn descriptors, one per line",
                               path, lineno);
            break;
        }
        char *text = strip_line(line);
        if (!*text)
            continue;
        convsel_problem p;
        st = convsel_problem_parse(text, &p);
        if (st == CONVSEL_UNSUPPORTED && skip_unsupported) {
            if (skipped)
                (*skipped)++;
            st = CONVSEL_OK;
            continue;
        }
        if (st == CONVSEL_OK)
            st = apply_mb(&p, mb);
        if (st == CONVSEL_OK)
            st = network_push(net, &p);
        if (st != CONVSEL_OK) {
            convsel_error(st, "%s:%d: %s", path, lineno, convsel_last_error());
            break;
        }
    }
    if (st == CONVSEL_OK && ferror(f))
        st = convsel_error(CONVSEL_IO_ERROR, "%s: read error", path);
    if (st == CONVSEL_OK && net->count == 0)
        st = (skipped && *skipped)
                 ? convsel_error(CONVSEL_UNSUPPORTED, "%s: no supported layers (%zu 1D/3D lines skipped)", path, *skipped)
                 : convsel_error(CONVSEL_PARSE_ERROR, "%s: no convolution layers in the file", path);
    free(line);
    fclose(f);
    if (st != CONVSEL_OK) {
        convsel_network_destroy(net);
        return st;
    }
    *network = net;
    return CONVSEL_OK;
}

convsel_status convsel_network_load(const char *path, int64_t mb, convsel_network **network)
{
    return network_read(path, mb, 0, network, NULL);
}

convsel_status convsel_network_load_supported(const char *path, int64_t mb, convsel_network **network,
                                              size_t *skipped)
{
    if (skipped)
        *skipped = 0;
    return network_read(path, mb, 1, network, skipped);
}

convsel_status convsel_network_from_desc(const char *desc, int64_t mb, convsel_network **network)
{
    convsel_problem p;
    if (!network)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "network out-parameter is NULL");
    *network = NULL;
    convsel_status st = convsel_problem_parse(desc, &p);
    if (st == CONVSEL_OK)
        st = apply_mb(&p, mb);
    if (st != CONVSEL_OK)
        return st;
    convsel_network *net = network_new(p.name[0] ? p.name : "layer");
    if (!net)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    st = network_push(net, &p);
    if (st != CONVSEL_OK) {
        convsel_network_destroy(net);
        return st;
    }
    *network = net;
    return CONVSEL_OK;
}

/* Declared in internal.h. */
convsel_status convsel_network_shrunk(const convsel_network *network, int64_t divisor, convsel_network **out)
{
    if (!network || !out || divisor < 1)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "convsel_network_shrunk: bad arguments");
    *out = NULL;
    char name[CONVSEL_NAME_MAX + 16];
    snprintf(name, sizeof name, "%s/%lld", network->name, (long long)divisor);
    convsel_network *net = network_new(name);
    if (!net)
        return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory");
    for (size_t i = 0; i < network->count; i++) {
        convsel_problem p = network->layers[i];
        /* Every side divided rounding up, so a layer that fed the next still
         * does; what no longer makes a convolution is left out. */
        p.ih = (p.ih + divisor - 1) / divisor;
        p.iw = (p.iw + divisor - 1) / divisor;
        p.oh = (p.oh + divisor - 1) / divisor;
        p.ow = (p.ow + divisor - 1) / divisor;
        if (convsel_problem_validate(&p) != CONVSEL_OK) {
            convsel_error_clear();
            continue;
        }
        convsel_status st = network_push(net, &p);
        if (st != CONVSEL_OK) {
            convsel_network_destroy(net);
            return st;
        }
    }
    *out = net;
    return CONVSEL_OK;
}

void convsel_network_destroy(convsel_network *network)
{
    if (!network)
        return;
    free(network->layers);
    free(network->name);
    free(network);
}

size_t convsel_network_size(const convsel_network *network)
{
    return network ? network->count : 0;
}

const convsel_problem *convsel_network_layer(const convsel_network *network, size_t i)
{
    return network && i < network->count ? &network->layers[i] : NULL;
}

const char *convsel_network_name(const convsel_network *network)
{
    return network ? network->name : NULL;
}

/* ---------------------------------------------------------------- files */

static int by_name(const struct dirent **a, const struct dirent **b)
{
    return strcmp((*a)->d_name, (*b)->d_name);
}

static int is_txt(const struct dirent *e)
{
    size_t n = strlen(e->d_name);
    return e->d_name[0] != '.' && n > 4 && strcmp(e->d_name + n - 4, ".txt") == 0;
}

void convsel_network_files_free(char **files, size_t n)
{
    for (size_t i = 0; files && i < n; i++)
        free(files[i]);
    free(files);
}

convsel_status convsel_network_files(const char *path, char ***files, size_t *n)
{
    if (!path || !files || !n)
        return convsel_error(CONVSEL_INVALID_ARGUMENT, "path, files and n are required");
    *files = NULL;
    *n = 0;
    struct stat sb;
    if (stat(path, &sb) != 0)
        return convsel_error(CONVSEL_IO_ERROR, "%s: %s", path, strerror(errno));
    if (!S_ISDIR(sb.st_mode)) {
        char **one = malloc(sizeof *one);
        if (!one || !(one[0] = strdup(path))) {
            free(one);
            return convsel_error(CONVSEL_OUT_OF_MEMORY, "out of memory listing %s", path);
        }
        *files = one;
        *n = 1;
        return CONVSEL_OK;
    }
    /* Sorted by byte value, not locale. */
    struct dirent **entries;
    int count = scandir(path, &entries, is_txt, by_name);
    if (count < 0)
        return convsel_error(CONVSEL_IO_ERROR, "%s: %s", path, strerror(errno));
    char **list = calloc(count ? (size_t)count : 1, sizeof *list);
    convsel_status st = list ? CONVSEL_OK : CONVSEL_OUT_OF_MEMORY;
    for (int i = 0; i < count; i++) {
        if (st == CONVSEL_OK) {
            size_t len = strlen(path) + strlen(entries[i]->d_name) + 2;
            if ((list[i] = malloc(len)))
                snprintf(list[i], len, "%s/%s", path, entries[i]->d_name);
            else
                st = CONVSEL_OUT_OF_MEMORY;
        }
        free(entries[i]);
    }
    free(entries);
    if (st != CONVSEL_OK) {
        convsel_network_files_free(list, (size_t)count);
        return convsel_error(st, "out of memory listing %s", path);
    }
    *files = list;
    *n = (size_t)count;
    return CONVSEL_OK;
}
