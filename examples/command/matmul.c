/* Blocked matrix multiply C = A * B (n x n, doubles) whose runtime depends on its tuning
 * parameters: the block size, the unrolling of the innermost loop, the loop order and the
 * number of POSIX threads (the rows of C are split into --threads contiguous parts).
 *
 *   ./matmul --n 300 --nb 32 --unroll 4 --order ikj --threads 2
 *
 * prints "checksum: <sum of C>", "time: <seconds>" (wall time of the multiply only) and
 * "cpu: <seconds>" (the process's CPU time, user + system over all its threads, spent in the
 * multiply), each the smallest of --reps runs. Every element of C is summed in the same order
 * whatever the number of threads, so the checksum does not depend on it.
 * Bad arguments: a message on stderr and exit status 2.
 */
#define _POSIX_C_SOURCE 199309L
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double clock_seconds(clockid_t clock) {
    struct timespec t;
    clock_gettime(clock, &t);
    return t.tv_sec + 1e-9 * t.tv_nsec;
}

static double now(void) { return clock_seconds(CLOCK_MONOTONIC); }

/* CPU time of the whole process (every thread), user + system. */
static double cpu_now(void) { return clock_seconds(CLOCK_PROCESS_CPUTIME_ID); }

static int min(int a, int b) { return a < b ? a : b; }

#define MAX_THREADS 64

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

/* The rows [r0, r1) of C, in blocks of nb: one thread's part. */
struct part {
    int n, nb, u, ikj, r0, r1;
    const double *A, *B;
    double *C;
};

static void *multiply_part(void *arg) {
    const struct part *p = arg;
    const int n = p->n, nb = p->nb;
    for (int i0 = p->r0; i0 < p->r1; i0 += nb)
        for (int k0 = 0; k0 < n; k0 += nb)
            for (int j0 = 0; j0 < n; j0 += nb) {
                const int i1 = min(i0 + nb, p->r1), k1 = min(k0 + nb, n), j1 = min(j0 + nb, n);
                if (p->ikj) block_ikj(n, p->A, p->B, p->C, i0, i1, k0, k1, j0, j1, p->u);
                else block_ijk(n, p->A, p->B, p->C, i0, i1, k0, k1, j0, j1, p->u);
            }
    return NULL;
}

/* C += A * B with the rows of C split into `threads` parts; 0, or -1 if a thread could not
 * be started. One thread: no thread is created. */
static int multiply(struct part base, int threads) {
    struct part parts[MAX_THREADS];
    pthread_t ids[MAX_THREADS];
    int started = 0, failed = 0;
    for (int t = 0; t < threads; t++) {
        parts[t] = base;
        parts[t].r0 = (int)((long)base.n * t / threads);
        parts[t].r1 = (int)((long)base.n * (t + 1) / threads);
    }
    if (threads == 1) {
        multiply_part(&parts[0]);
        return 0;
    }
    for (int t = 0; t < threads; t++) {
        if (pthread_create(&ids[t], NULL, multiply_part, &parts[t]) != 0) {
            failed = 1;
            break;
        }
        started++;
    }
    for (int t = 0; t < started; t++) pthread_join(ids[t], NULL);
    return failed ? -1 : 0;
}

static int usage(const char *msg) {
    fprintf(stderr, "matmul: %s\nusage: matmul --n N --nb NB --unroll 1|2|4|8 "
                    "--order ikj|ijk [--threads T] [--reps R]\n", msg);
    return 2;
}

int main(int argc, char **argv) {
    int n = 256, nb = 32, u = 1, reps = 1, ikj = 1, threads = 1;
    for (int a = 1; a < argc; a++) {
        if (a + 1 >= argc) return usage("every option needs a value");
        const char *key = argv[a], *val = argv[++a];
        if (!strcmp(key, "--n")) n = atoi(val);
        else if (!strcmp(key, "--nb")) nb = atoi(val);
        else if (!strcmp(key, "--unroll")) u = atoi(val);
        else if (!strcmp(key, "--reps")) reps = atoi(val);
        else if (!strcmp(key, "--threads")) threads = atoi(val);
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
    if (threads < 1 || threads > MAX_THREADS) return usage("--threads must be in 1..64");
    double *A = malloc(sizeof(double) * n * n), *B = malloc(sizeof(double) * n * n);
    double *C = malloc(sizeof(double) * n * n);
    if (!A || !B || !C) return usage("out of memory");
    for (size_t i = 0; i < (size_t)n * n; i++) {
        A[i] = (double)(i % 7) - 3.0;
        B[i] = (double)(i % 5) * 0.5;
    }
    double best = 1e300, best_cpu = 1e300, checksum = 0.0;
    const struct part whole = {n, nb, u, ikj, 0, n, A, B, C};
    for (int r = 0; r < reps; r++) {
        memset(C, 0, sizeof(double) * n * n);
        double t0 = now(), c0 = cpu_now();
        if (multiply(whole, threads) != 0) {
            fprintf(stderr, "matmul: cannot start %d threads\n", threads);
            return 1;
        }
        double c = cpu_now() - c0, t = now() - t0;
        if (t < best) best = t;
        if (c < best_cpu) best_cpu = c;
    }
    for (size_t i = 0; i < (size_t)n * n; i++) checksum += C[i];
    printf("checksum: %.6e\ntime: %.6e\ncpu: %.6e\n", checksum, best, best_cpu);
    free(A); free(B); free(C);
    return 0;
}
