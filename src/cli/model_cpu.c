/* The CLI's model and this CPU: opening the model, and the notes that say
 * when it was trained on or calibrated for another CPU, setup or thread
 * count than the one running. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int cli_open_model(const char *cmd, const char *path, convsel_model **model)
{
    char found[4096];
    convsel_status st;
    if (!path) {
        st = convsel_model_default_path(found, sizeof found);
        if (st != CONVSEL_OK)
            return cli_fail(cmd, st);
        path = found;
    }
    st = convsel_model_load(path, model);
    if (st != CONVSEL_OK)
        return cli_fail(cmd, st);
    return CLI_OK;
}

int cli_model_describes(const convsel_model *model, const convsel_fingerprint *here,
                        const convsel_fingerprint **same_cpu)
{
    const convsel_fingerprint *found = NULL;
    for (size_t i = 0; i < convsel_model_fingerprint_count(model); i++) {
        const convsel_fingerprint *fp = convsel_model_fingerprint(model, i);
        if (convsel_fingerprint_same_setup(fp, here))
            return 1;
        if (convsel_fingerprint_same_cpu(fp, here))
            found = fp;
    }
    if (same_cpu)
        *same_cpu = found;
    return 0;
}

const char *cli_blas_isa_name(const convsel_fingerprint *fp)
{
    int isa = convsel_fingerprint_blas_isa(fp);
    return isa < 0 ? "unknown" : convsel_isa_name((convsel_isa)isa);
}

uint64_t cli_calibrated_threads(const convsel_model *model, const convsel_fingerprint *here)
{
    convsel_calibration_info info;
    for (size_t i = 0; i < convsel_model_calibration_count(model); i++)
        if (convsel_model_calibration(model, i, &info) == CONVSEL_OK && convsel_fingerprint_same_cpu(&info.cpu, here))
            return info.threads_mask;
    return 0;
}

void cli_threads_text(uint64_t mask, char *buf, size_t size)
{
    int n = 0, total = 0, one = 0;
    size_t len = 0;
    for (int b = 0; b < 64; b++)
        total += (int)(mask >> b & 1);
    buf[0] = '\0';
    for (int b = 0; b < 64 && len < size; b++) {
        if (!(mask >> b & 1))
            continue;
        one = b == 0 && total == 1;
        n++;
        len += (size_t)snprintf(buf + len, size - len, "%s%d%s", n == 1 ? "" : n == total ? " and " : ", ", b + 1,
                                b == 63 ? " or more" : "");
    }
    if (len < size)
        snprintf(buf + len, size - len, " thread%s", one ? "" : "s");
}

void cli_warn_cpu(const char *cmd, const convsel_model *model, const convsel_fingerprint *here, int threads)
{
    const convsel_fingerprint *same_cpu;
    if (cli_model_describes(model, here, &same_cpu)) {
        uint64_t mask = cli_calibrated_threads(model, here);
        if (threads > 0 && mask && !(mask & convsel_threads_bit(threads))) {
            /* Worded as calibrate --if-needed words it. */
            char had[256], want[64];
            cli_threads_text(mask, had, sizeof had);
            cli_threads_text(convsel_threads_bit(threads), want, sizeof want);
            fprintf(stderr,
                    "convsel %s: note: the model's calibration measured this CPU at %s, not %s: its prices at %s "
                    "are extrapolated; 'convsel calibrate --threads %d' fits it to them\n",
                    cmd, had, want, want, threads);
        }
        return;
    }
    if (same_cpu) {
        fprintf(stderr,
                "convsel %s: note: the model measured this CPU with OpenBLAS's %s kernels and this process runs "
                "its %s ones (OPENBLAS_CORETYPE); 'convsel calibrate' adapts it from a few measurements\n",
                cmd, cli_blas_isa_name(same_cpu), cli_blas_isa_name(here));
        return;
    }
    char text[512];
    cli_foreign_cpu_text(model, here, text, sizeof text);
    fprintf(stderr, "convsel %s: note: %s; 'convsel calibrate' adapts it from a few measurements\n", cmd, text);
}

void cli_foreign_cpu_text(const convsel_model *model, const convsel_fingerprint *here, char *buf, size_t size)
{
    /* The nearest of the model's CPUs: the fewest fields apart. */
    size_t n = convsel_model_fingerprint_count(model), cpus = 0;
    const convsel_fingerprint *nearest = NULL;
    int fewest = 0;
    for (size_t i = 0; i < n; i++) {
        const convsel_fingerprint *fp = convsel_model_fingerprint(model, i);
        size_t k = 0;
        while (k < i && !convsel_fingerprint_same_cpu(convsel_model_fingerprint(model, k), fp))
            k++;
        cpus += k == i; /* setups of one CPU (OpenBLAS's kernels) count once */
        int d = convsel_fingerprint_diff(here, fp, NULL, 0);
        if (!nearest || d < fewest)
            nearest = fp, fewest = d;
    }
    if (!nearest) {
        snprintf(buf, size, "the model names no CPU it was trained on");
        return;
    }
    char diff[384];
    convsel_fingerprint_diff(here, nearest, diff, sizeof diff);
    if (cpus == 1)
        snprintf(buf, size, "the model was trained on another CPU than this one (%s, %s): this one differs in %s",
                 here->model_name, convsel_isa_name(here->isa_cap), diff);
    else
        snprintf(buf, size,
                 "the model was trained on %zu CPUs, not this one (%s, %s): the nearest of them differs in %s", cpus,
                 here->model_name, convsel_isa_name(here->isa_cap), diff);
}
