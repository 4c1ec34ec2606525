/*
 * A network for a test, from the text of a network file: written to a
 * scratch file, loaded with convsel_network_load (the path real networks
 * take), the file removed. NULL when any step fails. Header-only.
 */
#ifndef CONVSEL_NETWORK_TEXT_H
#define CONVSEL_NETWORK_TEXT_H

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "convsel.h"

static inline convsel_network *network_from_text(const char *text)
{
    char path[] = "/tmp/convsel_test_net_XXXXXX";
    int fd = mkstemp(path);
    if (fd < 0)
        return NULL;
    size_t n = strlen(text);
    ssize_t written = write(fd, text, n);
    close(fd);
    convsel_network *net = NULL;
    if (written == (ssize_t)n)
        convsel_network_load(path, 0, &net);
    unlink(path);
    return net;
}

#endif
