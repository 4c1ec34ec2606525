/*
 * convsel as a convolution runtime: load the model, let it pick a primitive
 * for a layer, run the layer, and check the result against the reference.
 *
 *   conv_runtime [MODEL] [DESCRIPTOR]
 *
 * Without MODEL it uses the default model; without DESCRIPTOR a ResNet-50
 * 3x3 layer. Exits 0 when the chosen primitive's output matches the
 * reference within its expected error.
 */
#include <stdio.h>
#include <stdlib.h>

#include <convsel.h>

static int fail(const char *what, convsel_status st)
{
    fprintf(stderr, "conv_runtime: %s: %s (%s)\n", what, convsel_status_str(st), convsel_last_error());
    return 1;
}

/* Runs conv on an nchw src into an nchw dst, reordering around it. */
static convsel_status run_nchw(convsel_conv *conv, const convsel_problem *p, const float *src, float *dst)
{
    convsel_layout sl = convsel_conv_src_layout(conv), dl = convsel_conv_dst_layout(conv);
    float *s = convsel_alloc(convsel_layout_elems(sl, p->mb, p->ic, p->ih, p->iw) * sizeof(float));
    float *d = convsel_alloc(convsel_layout_elems(dl, p->mb, p->oc, p->oh, p->ow) * sizeof(float));
    convsel_reorder *in = NULL, *out = NULL;
    convsel_status st = (s && d) ? CONVSEL_OK : CONVSEL_OUT_OF_MEMORY;
    if (st == CONVSEL_OK)
        st = convsel_reorder_create(p->mb, p->ic, p->ih, p->iw, CONVSEL_LAYOUT_NCHW, sl, 1, &in);
    if (st == CONVSEL_OK)
        st = convsel_reorder_create(p->mb, p->oc, p->oh, p->ow, dl, CONVSEL_LAYOUT_NCHW, 1, &out);
    if (st == CONVSEL_OK)
        st = convsel_reorder_run(in, src, s);
    if (st == CONVSEL_OK)
        st = convsel_conv_run(conv, s, d);
    if (st == CONVSEL_OK)
        st = convsel_reorder_run(out, d, dst);
    convsel_reorder_destroy(in);
    convsel_reorder_destroy(out);
    convsel_free(s);
    convsel_free(d);
    return st;
}

int main(int argc, char **argv)
{
    const char *desc = argc > 2 ? argv[2] : "mb1ic64ih56oc64oh56kh3ph1n\"resnet_50:res2a_branch2b\"";
    char path[4096];
    convsel_model *model = NULL;
    convsel_selector *selector = NULL;
    convsel_conv *conv = NULL;
    convsel_problem p;
    convsel_status st;

    if (argc > 1)
        snprintf(path, sizeof path, "%s", argv[1]);
    else if ((st = convsel_model_default_path(path, sizeof path)) != CONVSEL_OK)
        return fail("finding the default model", st);
    if ((st = convsel_model_load(path, &model)) != CONVSEL_OK)
        return fail("loading the model", st);
    if ((st = convsel_problem_parse(desc, &p)) != CONVSEL_OK)
        return fail("parsing the layer", st);
    if ((st = convsel_selector_create(model, &selector)) != CONVSEL_OK)
        return fail("creating the selector", st);

    size_t nw = convsel_problem_weights_elems(&p), ns = convsel_problem_src_elems(&p), nd = convsel_problem_dst_elems(&p);
    float *w = malloc(nw * sizeof *w), *x = malloc(ns * sizeof *x);
    float *y = malloc(nd * sizeof *y), *y_ref = malloc(nd * sizeof *y_ref);
    if (!w || !x || !y || !y_ref)
        return fail("allocating", CONVSEL_OUT_OF_MEMORY);
    convsel_fill_random(w, nw, 1);
    convsel_fill_random(x, ns, 2);

    if ((st = convsel_conv_create(selector, &p, 1, w, &conv)) != CONVSEL_OK)
        return fail("creating the convolution", st);
    printf("%s: the model picks %s (predicted %.3f ms), %s -> %s\n", p.name, convsel_conv_primitive(conv),
           convsel_conv_predicted_ms(conv), convsel_layout_name(convsel_conv_src_layout(conv)),
           convsel_layout_name(convsel_conv_dst_layout(conv)));
    if ((st = run_nchw(conv, &p, x, y)) != CONVSEL_OK)
        return fail("running", st);

    /* The ground truth, through the library's reference primitive. */
    size_t ri;
    convsel_instance *reference = NULL;
    if ((st = convsel_primitive_find("reference", &ri)) != CONVSEL_OK ||
        (st = convsel_instance_create(ri, &p, 1, w, &reference)) != CONVSEL_OK ||
        (st = convsel_instance_run(reference, x, y_ref)) != CONVSEL_OK)
        return fail("running the reference", st);
    size_t chosen;
    convsel_primitive_find(convsel_conv_primitive(conv), &chosen);
    double err = convsel_rel_error(y, y_ref, nd), bound = convsel_primitive_expected_error(chosen);
    printf("relative error against the reference: %.3g (expected at most %.3g)\n", err, bound);

    convsel_instance_destroy(reference);
    convsel_conv_destroy(conv);
    convsel_selector_destroy(selector);
    convsel_model_destroy(model);
    free(w);
    free(x);
    free(y);
    free(y_ref);
    return err <= bound ? 0 : 1;
}
