#include <stdio.h>
#include <string.h>

#include "internal.h"

static const char *const status_text[] = {
#define CONVSEL_STATUS_TEXT(name, text) text,
    CONVSEL_STATUS_MAP(CONVSEL_STATUS_TEXT)
#undef CONVSEL_STATUS_TEXT
};

/* Per-thread, as LightGBM's LGBM_GetLastError: the detail of the last failure. */
static _Thread_local char last_error[1024];

const char *convsel_status_str(convsel_status status)
{
    if ((int)status < 0 || status >= CONVSEL_STATUS_COUNT)
        return "unknown status";
    return status_text[status];
}

const char *convsel_last_error(void)
{
    return last_error;
}

convsel_status convsel_error(convsel_status status, const char *fmt, ...)
{
    /* Formatted aside first: callers may pass convsel_last_error() itself as
     * an argument to add context to a detail. */
    char text[sizeof last_error];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(text, sizeof text, fmt, ap);
    va_end(ap);
    memcpy(last_error, text, sizeof last_error);
    return status;
}

void convsel_error_clear(void)
{
    last_error[0] = '\0';
}
