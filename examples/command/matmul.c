/* Blocked matrix multiply C = A * B (n x n, doubles) whose runtime depends on its tuning
 * parameters: the block size, the unrolling of the innermost loop and the loop order.
 *
 *   ./matmul --n 300 --nb 32 --unroll 4 --order ikj
 *
 * prints "checksum: <sum of C>" and "time: <seconds>" (the multiply only, best of --reps runs).
 * Bad arguments: a message on stderr and exit status 2.
 */
#define _POSIX_C_SOURCE 199309L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double now(void) {
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static int min(int a, int b) { return a < b ? a : b; }

/* One block of C += A * B in i-k-j order; the j loop unrolled by u (1, 2, 4 or 8). */
static void block_ikj(int n, const double *A, const double *B, double *C, int i0, int i1,
                      int k0, int k1, int j0, int j1, int u) {
    for (int i = i0; i < i1; i++)
        for (int k = k0; k < k1; k++) {
            const double a = A[(size_t)i * n + k];
            const double *b = B + (size_t)k * n;
            double *c = C + (size_t)i * n;
            int j = j0;
            switch (u) {
            case 8:
                for (; j + 8 <= j1; j += 8) {
                    c[j] += a * b[j]; c[j + 1] += a * b[j + 1];
                    c[j + 2] += a * b[j + 2]; c[j + 3] += a * b[j + 3];
                    c[j + 4] += a * b[j + 4]; c[j + 5] += a * b[j + 5];
                    c[j + 6] += a * b[j + 6]; c[j + 7] += a * b[j + 7];
                }
                break;
            case 4:
                for (; j + 4 <= j1; j += 4) {
                    c[j] += a * b[j]; c[j + 1] += a * b[j + 1];
                    c[j + 2] += a * b[j + 2]; c[j + 3] += a * b[j + 3];
                }
                break;
            case 2:
                for (; j + 2 <= j1; j += 2) { c[j] += a * b[j]; c[j + 1] += a * b[j + 1]; }
                break;
            }
            for (; j < j1; j++) c[j] += a * b[j];
        }
}

/* One block in i-j-k order (a dot product per element, B read with stride n); k unrolled. */
static void block_ijk(int n, const double *A, const double *B, double *C, int i0, int i1,
                      int k0, int k1, int j0, int j1, int u) {
    for (int i = i0; i < i1; i++)
        for (int j = j0; j < j1; j++) {
            double s = 0.0;
            int k = k0;
            for (; k + u <= k1; k += u)
                for (int v = 0; v < u; v++) s += A[(size_t)i * n + k + v] * B[(size_t)(k + v) * n + j];
            for (; k < k1; k++) s += A[(size_t)i * n + k] * B[(size_t)k * n + j];
            C[(size_t)i * n + j] += s;
        }
}

static int usage(const char *msg) {
    fprintf(stderr, "matmul: %s\nusage: matmul --n N --nb NB --unroll 1|2|4|8 "
                    "--order ikj|ijk [--reps R]\n", msg);
    return 2;
}

int main(int argc, char **argv) {
    int n = 256, nb = 32, u = 1, reps = 1, ikj = 1;
    for (int a = 1; a < argc; a++) {
        if (a + 1 >= argc) return usage("every option needs a value");
        const char *key = argv[a], *val = argv[++a];
        if (!strcmp(key, "--n")) n = atoi(val);
        else if (!strcmp(key, "--nb")) nb = atoi(val);
        else if (!strcmp(key, "--unroll")) u = atoi(val);
        else if (!strcmp(key, "--reps")) reps = atoi(val);
        else if (!strcmp(key, "--order")) {
            if (!strcmp(val, "ikj")) ikj = 1;
            else if (!strcmp(val, "ijk")) ikj = 0;
            else return usage("--order must be ikj or ijk");
        } else return usage("unknown option");
    }
    if (n < 1 || n > 4096) return usage("--n must be in 1..4096");
    if (nb < 1) return usage("--nb must be positive");
    if (u != 1 && u != 2 && u != 4 && u != 8) return usage("--unroll must be 1, 2, 4 or 8");
    if (reps < 1) return usage("--reps must be positive");
    double *A = malloc(sizeof(double) * n * n), *B = malloc(sizeof(double) * n * n);
    double *C = malloc(sizeof(double) * n * n);
    if (!A || !B || !C) return usage("out of memory");
    for (size_t i = 0; i < (size_t)n * n; i++) {
        A[i] = (double)(i % 7) - 3.0;
        B[i] = (double)(i % 5) * 0.5;
    }
    double best = 1e300, checksum = 0.0;
    for (int r = 0; r < reps; r++) {
        memset(C, 0, sizeof(double) * n * n);
        double t0 = now();
        for (int i0 = 0; i0 < n; i0 += nb)
            for (int k0 = 0; k0 < n; k0 += nb)
                for (int j0 = 0; j0 < n; j0 += nb) {
                    if (ikj) block_ikj(n, A, B, C, i0, min(i0 + nb, n), k0, min(k0 + nb, n), j0, min(j0 + nb, n), u);
                    else block_ijk(n, A, B, C, i0, min(i0 + nb, n), k0, min(k0 + nb, n), j0, min(j0 + nb, n), u);
                }
        double t = now() - t0;
        if (t < best) best = t;
    }
    for (size_t i = 0; i < (size_t)n * n; i++) checksum += C[i];
    printf("checksum: %.6e\ntime: %.6e\n", checksum, best);
    free(A); free(B); free(C);
    return 0;
}
