/* Experiment: a copy of a dataset without the conv records whose kernel is a
 * library's reference loops (mode 1), or without every record that ran as
 * another primitive's kernel (mode 2). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "convsel.h"
int main(int argc, char **argv)
{
    if (argc != 4) return fprintf(stderr, "usage: dropref MODE IN OUT\n"), 2;
    int mode = atoi(argv[1]);
    convsel_dataset *in, *out;
    if (convsel_dataset_load(argv[2], &in) != CONVSEL_OK) return fprintf(stderr, "%s\n", convsel_last_error()), 1;
    convsel_dataset_create(&out);
    uint32_t idx;
    for (size_t f = 0; f < convsel_dataset_fingerprint_count(in); f++)
        convsel_dataset_add_fingerprint(out, convsel_dataset_fingerprint(in, f), &idx);
    size_t dropped = 0, unknown = 0;
    for (size_t i = 0; i < convsel_dataset_size(in); i++) {
        const convsel_record *r = convsel_dataset_record(in, i);
        if (r->kind == CONVSEL_RECORD_CONV) {
            size_t c, k = SIZE_MAX;
            if (convsel_primitive_find(r->primitive, &c) == CONVSEL_OK) {
                if (r->kernel[0]) {
                    if (convsel_primitive_find(r->kernel, &k) != CONVSEL_OK) k = SIZE_MAX;
                } else if (r->isa == convsel_get_isa()) {
                    if (convsel_primitive_runs_as(c, &r->problem, r->threads, &k) != CONVSEL_OK) k = SIZE_MAX;
                }
                if (k == SIZE_MAX) unknown++;
                else if (k != c && (mode == 2 || (convsel_primitive_is_reference(k) && !convsel_primitive_is_reference(c)))) {
                    dropped++;
                    continue;
                }
            }
        }
        if (convsel_dataset_append(out, r) != CONVSEL_OK) return fprintf(stderr, "%s\n", convsel_last_error()), 1;
    }
    if (convsel_dataset_save(out, argv[3]) != CONVSEL_OK) return fprintf(stderr, "%s\n", convsel_last_error()), 1;
    fprintf(stderr, "%s: %zu records, dropped %zu, kernel unknown %zu\n", argv[2], convsel_dataset_size(in), dropped, unknown);
    return 0;
}
