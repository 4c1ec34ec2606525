/*
 * The numerical error of the oneDNN primitives on real layers:
 * max|y - y_ref| / max|y_ref| against the reference convolution, with seeded
 * uniform [-1, 1) inputs and weights, per layer and primitive, in the layouts
 * each instance declares (inputs reordered in, outputs reordered back to nchw).
 * The expected_error values in primitives/onednn.c come from this program.
 *
 * usage: onednn_error [-t THREADS] [-m MB] NETWORK.txt ...
 *        (default: 1 thread, mb 1; the reference is slow: ResNet-50 takes
 *        ~6 s, VGG-19 ~30 s)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "convsel.h"
#include "onednn_util.h"

static const char *const primitives[] = {"onednn_direct", "onednn_winograd", "onednn_gemm", "onednn_auto"};
#define NPRIM (sizeof primitives / sizeof primitives[0])

static int reorder(int64_t mb, int64_t c, int64_t h, int64_t w, convsel_layout from, convsel_layout to,
                   const float *src, float *dst)
{
    convsel_reorder *r;
    if (convsel_reorder_create(mb, c, h, w, from, to, 1, &r) != CONVSEL_OK)
        return 0;
    convsel_status st = convsel_reorder_run(r, src, dst);
    convsel_reorder_destroy(r);
    return st == CONVSEL_OK;
}

/* The error of primitive i on p, or a negative value when it does not apply. */
static double error_of(size_t i, const convsel_problem *p, int threads, const float *x, const float *w,
                       const float *y_ref, float *x_in, float *y_out, float *y)
{
    convsel_instance *inst;
    if (!convsel_primitive_applicable(i, p, NULL, 0) || convsel_instance_create(i, p, threads, w, &inst) != CONVSEL_OK)
        return -1.0;
    convsel_layout sl = convsel_instance_src_layout(inst), dl = convsel_instance_dst_layout(inst);
    double err = -2.0;
    if (reorder(p->mb, p->ic, p->ih, p->iw, CONVSEL_LAYOUT_NCHW, sl, x, x_in) &&
        convsel_instance_run(inst, x_in, y_out) == CONVSEL_OK &&
        reorder(p->mb, p->oc, p->oh, p->ow, dl, CONVSEL_LAYOUT_NCHW, y_out, y))
        err = convsel_rel_error(y, y_ref, convsel_problem_dst_elems(p));
    convsel_instance_destroy(inst);
    return err;
}

int main(int argc, char **argv)
{
    int threads = 1;
    int64_t mb = 1;
    int a = 1;
    for (; a + 1 < argc && argv[a][0] == '-'; a += 2) {
        if (strcmp(argv[a], "-t") == 0)
            threads = atoi(argv[a + 1]);
        else if (strcmp(argv[a], "-m") == 0)
            mb = atoll(argv[a + 1]);
    }
    if (a >= argc || threads < 1 || mb < 1) {
        fprintf(stderr, "usage: onednn_error [-t THREADS] [-m MB] NETWORK.txt ...\n");
        return 2;
    }
    size_t reference, index[NPRIM];
    if (convsel_primitive_find("reference", &reference) != CONVSEL_OK)
        return 1;
    for (size_t k = 0; k < NPRIM; k++)
        if (convsel_primitive_find(primitives[k], &index[k]) != CONVSEL_OK)
            return 1;

    double worst[NPRIM] = {0};
    printf("| layer | direct | winograd | gemm | auto | impls (direct / winograd / gemm / auto) |\n");
    printf("|---|---|---|---|---|---|\n");
    for (; a < argc; a++) {
        convsel_network *net;
        if (convsel_network_load(argv[a], mb, &net) != CONVSEL_OK) {
            fprintf(stderr, "%s: %s\n", argv[a], convsel_last_error());
            return 1;
        }
        for (size_t l = 0; l < convsel_network_size(net); l++) {
            const convsel_problem *p = convsel_network_layer(net, l);
            size_t nsrc = convsel_problem_src_elems(p), nw = convsel_problem_weights_elems(p);
            size_t ndst = convsel_problem_dst_elems(p);
            float *x = convsel_alloc(nsrc * sizeof(float)), *w = convsel_alloc(nw * sizeof(float));
            float *y_ref = convsel_alloc(ndst * sizeof(float)), *y = convsel_alloc(ndst * sizeof(float));
            float *x_in = convsel_alloc(convsel_layout_elems(CONVSEL_LAYOUT_NCHW16C, p->mb, p->ic, p->ih, p->iw) *
                                        sizeof(float));
            float *y_out = convsel_alloc(convsel_layout_elems(CONVSEL_LAYOUT_NCHW16C, p->mb, p->oc, p->oh, p->ow) *
                                         sizeof(float));
            convsel_fill_random(x, nsrc, 1);
            convsel_fill_random(w, nw, 2);
            convsel_instance *ref;
            if (convsel_instance_create(reference, p, threads, w, &ref) != CONVSEL_OK ||
                convsel_instance_run(ref, x, y_ref) != CONVSEL_OK) {
                fprintf(stderr, "%s: reference: %s\n", p->name, convsel_last_error());
                return 1;
            }
            convsel_instance_destroy(ref);
            printf("| %s |", p->name);
            char impls[NPRIM * 80] = "";
            for (size_t k = 0; k < NPRIM; k++) {
                double e = error_of(index[k], p, threads, x, w, y_ref, x_in, y_out, y);
                char impl[64] = "n/a";
                convsel_onednn_impl_info(primitives[k], p, impl, sizeof impl);
                strcat(impls, impl);
                strcat(impls, k + 1 < NPRIM ? " / " : "");
                if (e == -1.0)
                    printf(" n/a |");
                else if (e < 0.0)
                    printf(" FAILED |");
                else
                    printf(" %.2e |", e);
                if (e > worst[k])
                    worst[k] = e;
            }
            printf(" %s |\n", impls);
            fflush(stdout);
            convsel_free(x);
            convsel_free(w);
            convsel_free(y_ref);
            convsel_free(y);
            convsel_free(x_in);
            convsel_free(y_out);
        }
        convsel_network_destroy(net);
    }
    printf("| **worst** |");
    for (size_t k = 0; k < NPRIM; k++)
        printf(" %.2e |", worst[k]);
    printf(" |\n");
    return 0;
}
