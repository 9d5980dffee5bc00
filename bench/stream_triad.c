/* bench/stream_triad.c - the STREAM triad a[j] = b[j] + s·c[j] on one thread over arrays far
 * larger than the caches (McCalpin's kernel and byte count: 24 bytes per element), the
 * bandwidth bench/weights.sh sets the weight store's achieved traffic against. Prints the best
 * of the repetitions in GB/s. Usage: stream_triad [MiB per array, default 256] */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

int main(int argc, char **argv)
{
    size_t mib = argc > 1 ? (size_t)atol(argv[1]) : 256, n = mib * 1024 * 1024 / sizeof(double);
    double *a = malloc(n * sizeof *a), *b = malloc(n * sizeof *b), *c = malloc(n * sizeof *c);
    if (!a || !b || !c) {
        fprintf(stderr, "stream_triad: cannot allocate 3 x %zu MiB\n", mib);
        return 1;
    }
    for (size_t j = 0; j < n; j++) {
        a[j] = 0;
        b[j] = 1;
        c[j] = 2;
    }
    double best = 1e30, s = 3;
    for (int rep = 0; rep < 10; rep++) {
        double t0 = now();
        for (size_t j = 0; j < n; j++)
            a[j] = b[j] + s * c[j];
        double t = now() - t0;
        if (t < best) best = t;
    }
    double check = a[n / 2]; /* keeps the loop */
    printf("%.2f\n", check == 7 ? 24.0 * (double)n / best / 1e9 : -1.0);
    free(a);
    free(b);
    free(c);
    return 0;
}
