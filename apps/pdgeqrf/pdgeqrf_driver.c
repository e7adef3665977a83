/*
 * pdgeqrf_driver: time ScaLAPACK's parallel QR factorization PDGEQRF for one configuration.
 *
 * Usage (under an MPI launcher, e.g. `mpiexec -n 2 ./pdgeqrf_driver --m 1000 ...`):
 *
 *   pdgeqrf_driver --m M --n N --mb MB --nb NB --p P [--q Q] [--repeats R] [--warmup W]
 *                  [--seed S] [--check]
 *
 *   M x N    the global matrix (rows x columns), filled with seeded uniform values in [-0.5, 0.5)
 *            that depend only on the seed and the global index, not on the process grid;
 *   MB x NB  the block size of the 2-D block-cyclic distribution;
 *   P x Q    the BLACS process grid (row-major); Q defaults to floor(ranks / P). Ranks beyond
 *            P * Q take no part in the factorization.
 *   R        timed repeats (default 3), after W untimed warm-up runs (default 1); each run
 *            factorizes a fresh copy of the matrix (the copy is not timed);
 *   --check  after the timing, compute the scaled residual
 *            ||A - Q R||_F / (||A||_F * eps * max(M, N)) and fail (exit 1) when it is above 16.
 *
 * Feasibility (checked before any BLACS call; violation: one line on stderr, exit status 2):
 *   P * Q <= ranks, MB * P <= M, NB * Q <= N, and every value positive.
 *
 * Output on rank 0's stdout, one `key value` pair per line:
 *   pdgeqrf_time_s  median over the timed repeats of the slowest rank's wall time (seconds)
 *   pdgeqrf_times_s every timed repeat (seconds, comma-separated)
 *   residual        the scaled residual (with --check only), then `check passed|failed`
 */
#include <float.h>
#include <getopt.h>
#include <limits.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* BLACS C interface and ScaLAPACK (Fortran) routines; character arguments carry their hidden
 * lengths as trailing size_t arguments (gfortran's and ifort's convention). */
extern void Cblacs_pinfo(int *mypnum, int *nprocs);
extern void Cblacs_get(int context, int request, int *value);
extern void Cblacs_gridinit(int *context, const char *order, int nprow, int npcol);
extern void Cblacs_gridinfo(int context, int *nprow, int *npcol, int *myrow, int *mycol);
extern void Cblacs_gridexit(int context);
extern int numroc_(const int *n, const int *nb, const int *iproc, const int *isrcproc,
                   const int *nprocs);
extern void descinit_(int *desc, const int *m, const int *n, const int *mb, const int *nb,
                      const int *irsrc, const int *icsrc, const int *ictxt, const int *lld,
                      int *info);
extern void pdgeqrf_(const int *m, const int *n, double *a, const int *ia, const int *ja,
                     const int *desca, double *tau, double *work, const int *lwork, int *info);
extern void pdormqr_(const char *side, const char *trans, const int *m, const int *n,
                     const int *k, const double *a, const int *ia, const int *ja,
                     const int *desca, const double *tau, double *c, const int *ic,
                     const int *jc, const int *descc, double *work, const int *lwork, int *info,
                     size_t side_len, size_t trans_len);
extern double pdlange_(const char *norm, const int *m, const int *n, const double *a,
                       const int *ia, const int *ja, const int *desca, double *work,
                       size_t norm_len);
extern void pdlaset_(const char *uplo, const int *m, const int *n, const double *alpha,
                     const double *beta, double *a, const int *ia, const int *ja,
                     const int *desca, size_t uplo_len);
extern void pdlacpy_(const char *uplo, const int *m, const int *n, const double *a,
                     const int *ia, const int *ja, const int *desca, double *b, const int *ib,
                     const int *jb, const int *descb, size_t uplo_len);

#define RESIDUAL_THRESHOLD 16.0
#define MAX_REPEATS 1000

typedef struct {
    int m, n, mb, nb, p, q, repeats, warmup, check;
    unsigned long long seed;
} Options;

static int rank0_error(int rank, const char *msg) {
    if (rank == 0) {
        fprintf(stderr, "pdgeqrf_driver: %s\n", msg);
    }
    MPI_Finalize();
    return 2;
}

/* A positive int from a command-line value; 0 when it is not one. */
static int parse_positive(const char *text) {
    char *end = NULL;
    long value = strtol(text, &end, 10);
    if (end == text || *end != '\0' || value < 1 || value > INT_MAX) {
        return 0;
    }
    return (int)value;
}

/* Parse argv into opt; on failure write the reason into msg and return 0. */
static int parse_options(int argc, char **argv, Options *opt, char *msg, size_t len) {
    static const struct option longopts[] = {
        {"m", required_argument, NULL, 'm'},       {"n", required_argument, NULL, 'n'},
        {"mb", required_argument, NULL, 'b'},      {"nb", required_argument, NULL, 'B'},
        {"p", required_argument, NULL, 'p'},       {"q", required_argument, NULL, 'q'},
        {"repeats", required_argument, NULL, 'r'}, {"warmup", required_argument, NULL, 'w'},
        {"seed", required_argument, NULL, 's'},    {"check", no_argument, NULL, 'c'},
        {NULL, 0, NULL, 0}};
    memset(opt, 0, sizeof(*opt));
    opt->repeats = 3;
    opt->warmup = 1;
    opterr = 0;
    int c;
    while ((c = getopt_long_only(argc, argv, "", longopts, NULL)) != -1) {
        int value = optarg != NULL ? parse_positive(optarg) : 0;
        switch (c) {
        case 'm': opt->m = value; break;
        case 'n': opt->n = value; break;
        case 'b': opt->mb = value; break;
        case 'B': opt->nb = value; break;
        case 'p': opt->p = value; break;
        case 'q': opt->q = value ? value : -1; break;
        case 'r': opt->repeats = value; break;
        case 'w':
            /* zero warm-up runs are allowed */
            opt->warmup = strcmp(optarg, "0") == 0 ? 0 : (value ? value : -1);
            break;
        case 's': opt->seed = strtoull(optarg, NULL, 10); break;
        case 'c': opt->check = 1; break;
        default:
            snprintf(msg, len, "unknown or incomplete option '%s' (options: --m --n --mb --nb "
                     "--p [--q --repeats --warmup --seed --check])", argv[optind - 1]);
            return 0;
        }
    }
    if (optind < argc) {
        snprintf(msg, len, "unexpected argument '%s'", argv[optind]);
        return 0;
    }
    if (!opt->m || !opt->n || !opt->mb || !opt->nb || !opt->p || opt->q < 0) {
        snprintf(msg, len, "--m, --n, --mb, --nb and --p are required positive integers "
                 "(--q, when given, too)");
        return 0;
    }
    if (opt->repeats < 1 || opt->repeats > MAX_REPEATS || opt->warmup < 0) {
        snprintf(msg, len, "--repeats must be in 1..%d and --warmup a non-negative integer",
                 MAX_REPEATS);
        return 0;
    }
    return 1;
}

/* The feasibility rules of the tuning problem; on violation the reason goes into msg. */
static int feasible(const Options *o, int ranks, char *msg, size_t len) {
    if ((long)o->p * o->q > ranks || o->q < 1) {
        snprintf(msg, len, "infeasible grid: p * q = %d * %d exceeds the %d MPI ranks", o->p,
                 o->q, ranks);
        return 0;
    }
    if ((long)o->mb * o->p > o->m) {
        snprintf(msg, len, "infeasible: mb * p = %d * %d exceeds m = %d", o->mb, o->p, o->m);
        return 0;
    }
    if ((long)o->nb * o->q > o->n) {
        snprintf(msg, len, "infeasible: nb * q = %d * %d exceeds n = %d", o->nb, o->q, o->n);
        return 0;
    }
    return 1;
}

/* SplitMix64: a uniform value in [-0.5, 0.5) from the seed and the global index. */
static double entry(unsigned long long seed, long long i, long long j, long long m) {
    uint64_t z = (uint64_t)seed * 0x9E3779B97F4A7C15ULL + (uint64_t)(j * m + i) + 1;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    z ^= z >> 31;
    return (double)(z >> 11) * (1.0 / 9007199254740992.0) - 0.5;
}

/* Global index of local index `l` in a dimension distributed in blocks of `nb` over `np`. */
static long long global_index(int l, int nb, int iproc, int np) {
    return ((long long)(l / nb) * np + iproc) * nb + l % nb;
}

static int compare_double(const void *a, const void *b) {
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static double median(double *v, int k) {
    qsort(v, (size_t)k, sizeof(double), compare_double);
    return k % 2 ? v[k / 2] : 0.5 * (v[k / 2 - 1] + v[k / 2]);
}

static void *xmalloc(size_t bytes) {
    void *ptr = malloc(bytes > 0 ? bytes : 1);
    if (ptr == NULL) {
        fprintf(stderr, "pdgeqrf_driver: out of memory (%zu bytes)\n", bytes);
        MPI_Abort(MPI_COMM_WORLD, 3);
    }
    return ptr;
}

/* ||A0 - Q R||_F / (||A0||_F * eps * max(m, n)) for the factored `af` with `tau`. */
static double residual(const Options *o, const int *desc, const double *a0, const double *af,
                       const double *tau, size_t local) {
    const int one = 1, k = o->m < o->n ? o->m : o->n;
    const double zero = 0.0;
    double *r = xmalloc(local * sizeof(double));
    double query, anorm, rnorm;
    int lwork = -1, info = 0;
    /* R: the upper triangle of the factored matrix, zeros below. */
    pdlaset_("L", &o->m, &o->n, &zero, &zero, r, &one, &one, desc, 1);
    pdlacpy_("U", &o->m, &o->n, af, &one, &one, desc, r, &one, &one, desc, 1);
    pdormqr_("L", "N", &o->m, &o->n, &k, af, &one, &one, desc, tau, r, &one, &one, desc, &query,
             &lwork, &info, 1, 1);
    lwork = (int)query + 1;
    double *work = xmalloc((size_t)lwork * sizeof(double));
    pdormqr_("L", "N", &o->m, &o->n, &k, af, &one, &one, desc, tau, r, &one, &one, desc, work,
             &lwork, &info, 1, 1);
    if (info != 0) {
        fprintf(stderr, "pdgeqrf_driver: pdormqr failed with info=%d\n", info);
        MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (size_t i = 0; i < local; i++) {
        r[i] = a0[i] - r[i];
    }
    anorm = pdlange_("F", &o->m, &o->n, a0, &one, &one, desc, work, 1);
    rnorm = pdlange_("F", &o->m, &o->n, r, &one, &one, desc, work, 1);
    free(work);
    free(r);
    return rnorm / (anorm * DBL_EPSILON * (o->m > o->n ? o->m : o->n));
}

int main(int argc, char **argv) {
    int rank, ranks;
    char msg[256];
    Options o;
    MPI_Init(&argc, &argv);
    MPI_Comm_rank(MPI_COMM_WORLD, &rank);
    MPI_Comm_size(MPI_COMM_WORLD, &ranks);
    if (!parse_options(argc, argv, &o, msg, sizeof(msg))) {
        return rank0_error(rank, msg);
    }
    if (!o.q) {
        o.q = ranks / o.p;
    }
    if (!feasible(&o, ranks, msg, sizeof(msg))) {
        return rank0_error(rank, msg);
    }

    int ctxt, nprow, npcol, myrow = -1, mycol = -1, me, np;
    Cblacs_pinfo(&me, &np);
    Cblacs_get(-1, 0, &ctxt);
    Cblacs_gridinit(&ctxt, "Row", o.p, o.q);
    if (rank < o.p * o.q) {
        Cblacs_gridinfo(ctxt, &nprow, &npcol, &myrow, &mycol);
    }
    const int in_grid = myrow >= 0 && mycol >= 0;
    const int total = o.warmup + o.repeats;
    double *times = xmalloc((size_t)total * sizeof(double));
    double *a0 = NULL, *a = NULL, *tau = NULL, *work = NULL;
    int desc[9], info = 0;
    size_t local = 0;

    if (in_grid) {
        const int zero = 0, one = 1, minus = -1;
        int mloc = numroc_(&o.m, &o.mb, &myrow, &zero, &o.p);
        int nloc = numroc_(&o.n, &o.nb, &mycol, &zero, &o.q);
        int lld = mloc > 1 ? mloc : 1;
        descinit_(desc, &o.m, &o.n, &o.mb, &o.nb, &zero, &zero, &ctxt, &lld, &info);
        if (info != 0) {
            fprintf(stderr, "pdgeqrf_driver: descinit failed with info=%d\n", info);
            MPI_Abort(MPI_COMM_WORLD, 1);
        }
        local = (size_t)lld * (size_t)nloc;
        a0 = xmalloc(local * sizeof(double));
        a = xmalloc(local * sizeof(double));
        tau = xmalloc(((size_t)nloc + 1) * sizeof(double));
        for (int jl = 0; jl < nloc; jl++) {
            long long j = global_index(jl, o.nb, mycol, o.q);
            for (int il = 0; il < mloc; il++) {
                a0[(size_t)jl * lld + il] =
                    entry(o.seed, global_index(il, o.mb, myrow, o.p), j, o.m);
            }
        }
        double query;
        pdgeqrf_(&o.m, &o.n, a, &one, &one, desc, tau, &query, &minus, &info);
        int lwork = (int)query + 1;
        work = xmalloc((size_t)lwork * sizeof(double));
        for (int run = 0; run < total; run++) {
            memcpy(a, a0, local * sizeof(double));
            MPI_Barrier(MPI_COMM_WORLD);
            double start = MPI_Wtime();
            pdgeqrf_(&o.m, &o.n, a, &one, &one, desc, tau, work, &lwork, &info);
            times[run] = MPI_Wtime() - start;
            if (info != 0) {
                fprintf(stderr, "pdgeqrf_driver: pdgeqrf failed with info=%d\n", info);
                MPI_Abort(MPI_COMM_WORLD, 1);
            }
        }
    } else {
        for (int run = 0; run < total; run++) {
            MPI_Barrier(MPI_COMM_WORLD);
            times[run] = 0.0;
        }
    }
    MPI_Allreduce(MPI_IN_PLACE, times, total, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);

    double res = 0.0;
    if (o.check && in_grid) {
        res = residual(&o, desc, a0, a, tau, local);
    }
    MPI_Allreduce(MPI_IN_PLACE, &res, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
    int status = 0;
    if (rank == 0) {
        printf("pdgeqrf m=%d n=%d mb=%d nb=%d p=%d q=%d ranks=%d warmup=%d repeats=%d\n", o.m,
               o.n, o.mb, o.nb, o.p, o.q, ranks, o.warmup, o.repeats);
        printf("pdgeqrf_times_s ");
        for (int run = o.warmup; run < total; run++) {
            printf("%s%.6e", run > o.warmup ? "," : "", times[run]);
        }
        printf("\npdgeqrf_time_s %.6e\n", median(times + o.warmup, o.repeats));
        if (o.check) {
            status = !(res <= RESIDUAL_THRESHOLD);
            printf("residual %.3e\ncheck %s\n", res, status ? "failed" : "passed");
        }
        fflush(stdout);
    }
    MPI_Bcast(&status, 1, MPI_INT, 0, MPI_COMM_WORLD);
    free(times);
    free(a0);
    free(a);
    free(tau);
    free(work);
    if (in_grid) {
        Cblacs_gridexit(ctxt);
    }
    MPI_Finalize();
    return status;
}
