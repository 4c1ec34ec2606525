/* Prints this machine's FMA peak: AVX-512 and AVX2, 1 and 2 threads (or
 * the thread counts given as arguments). */
#include <stdio.h>
#include <stdlib.h>

#include "peak_fma.h"

int main(int argc, char **argv)
{
    int threads[16] = {1, 2};
    int n = 2;
    if (argc > 1) {
        n = 0;
        for (int a = 1; a < argc && n < 16; a++) {
            int t = atoi(argv[a]);
            if (t < 1 || t > 1024) {
                fprintf(stderr, "usage: peak_fma [THREADS ...]   (default: 1 2)\n");
                return 2;
            }
            threads[n++] = t;
        }
    }
    printf("FMA peak, %d independent accumulators, best of 0.5 s of ~20 ms trials\n\n", PEAK_ACCUMULATORS);
    printf("%-8s %8s %12s\n", "isa", "threads", "GFLOP/s");
    const enum peak_isa isas[] = {PEAK_AVX512, PEAK_AVX2};
    const char *names[] = {"avx512", "avx2"};
    for (int k = 0; k < 2; k++) {
        for (int i = 0; i < n; i++) {
            double g = peak_fma_gflops(isas[k], threads[i], 0.5);
            if (g > 0.0)
                printf("%-8s %8d %12.1f\n", names[k], threads[i], g);
            else
                printf("%-8s %8d %12s\n", names[k], threads[i], "n/a");
        }
    }
    return 0;
}
