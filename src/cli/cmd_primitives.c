#include <stdio.h>
#include <string.h>

#include "cli.h"

int cmd_primitives(int argc, char **argv)
{
    if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
        printf("usage: convsel primitives\n\nLists every primitive: name, family, layouts, expected error.\n");
        return CLI_OK;
    }
    if (argc > 1) {
        fprintf(stderr, "convsel primitives: unexpected argument '%s'\n", argv[1]);
        return CLI_USAGE;
    }
    printf("%-18s %-12s %-26s %s\n", "primitive", "family", "layouts", "expected_error");
    for (size_t i = 0; i < convsel_primitive_count(); i++)
        printf("%-18s %-12s %-26s %.1e%s\n", convsel_primitive_name(i), convsel_primitive_family(i),
               convsel_primitive_layouts(i), convsel_primitive_expected_error(i),
               convsel_primitive_is_reference(i) ? "  (reference, never selected)" : "");
    return CLI_OK;
}
