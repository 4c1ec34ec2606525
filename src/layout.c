#include <string.h>

#include "internal.h"

static const struct {
    const char *name;
    int block;
} layouts[] = {
#define CONVSEL_LAYOUT_ROW(name, text, block) {text, block},
    CONVSEL_LAYOUT_MAP(CONVSEL_LAYOUT_ROW)
#undef CONVSEL_LAYOUT_ROW
};

const char *convsel_layout_name(convsel_layout layout)
{
    if ((int)layout < 0 || layout >= CONVSEL_LAYOUT_COUNT)
        return "unknown";
    return layouts[layout].name;
}

convsel_status convsel_layout_parse(const char *text, convsel_layout *layout)
{
    for (int i = 0; i < CONVSEL_LAYOUT_COUNT; i++) {
        if (strcmp(text, layouts[i].name) == 0) {
            *layout = (convsel_layout)i;
            return CONVSEL_OK;
        }
    }
    return convsel_error(CONVSEL_INVALID_ARGUMENT, "unknown layout '%s' (nchw, nhwc, nChw8c, nChw16c)", text);
}

size_t convsel_layout_elems(convsel_layout layout, int64_t mb, int64_t c, int64_t h, int64_t w)
{
    int block = ((int)layout >= 0 && layout < CONVSEL_LAYOUT_COUNT) ? layouts[layout].block : 1;
    int64_t cp = CONVSEL_DIV_UP(c, block) * block;
    return (size_t)mb * (size_t)cp * (size_t)h * (size_t)w;
}

size_t convsel_layout_offset(convsel_layout layout, int64_t c_count, int64_t h, int64_t w, int64_t n, int64_t c,
                             int64_t y, int64_t x)
{
    int64_t block = ((int)layout >= 0 && layout < CONVSEL_LAYOUT_COUNT) ? layouts[layout].block : 1;
    if (layout == CONVSEL_LAYOUT_NHWC)
        return (size_t)(((n * h + y) * w + x) * c_count + c);
    int64_t blocks = CONVSEL_DIV_UP(c_count, block);
    return (size_t)((((n * blocks + c / block) * h + y) * w + x) * block + c % block);
}
