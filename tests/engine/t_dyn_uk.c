/* tests/engine/t_dyn_uk.c — numerical tests of the acceleration solve (engine/src/dyn_uk.h).
 *
 * The solver computes q'' = u + L^-T (A L^-T)^+ (b - A u), u = M_a^-1 (Q + C + alpha A^T b),
 * M_a = M + alpha A^T A = L L^T. Here it is checked, on seeded random problems (n <= 30,
 * m <= n + 5; SPD and singular M; full-rank and redundant A; ideal and non-ideal C), against
 * properties that define the acceleration and against independent formulas from the seeds:
 *   - A q'' = b;
 *   - the ideal and the non-ideal corrections are M-orthogonal (seed on-constrained-motion);
 *   - the B = A M^-1/2 form (seed multibody-dynamics-and-nonlinear-control, eq. 9), the
 *     M-inverse form with A_M^+ = M^-1 A^T (A M^-1 A^T)^+ (seed on-constrained-motion, eq. 9
 *     and the eigen-decomposition of A M^-1 A^T given there), the u + A_M^+ (b - A u) form
 *     (DESIGN.md section 1) and, for every M, the Udwadia-Phohomsiri 2006 form
 *     q'' = [(I - A^+A) M; A]^+ [(I - A^+A)(Q + C); b] (notes section 1.1);
 *   - independence of the auxiliary-mass scale (exact, not a penalty);
 *   - extended D'Alembert: w^T (M q'' - Q - C) = 0 for every w in null(A);
 *   - minimum-norm multipliers;
 *   - detection of non-unique accelerations and of inconsistent b, and no false alarms on
 *     consistent redundant constraints.
 * Every reference here is computed with LAPACK routines the solver does not use for the same
 * purpose (dsyev, dgesvd, dpotri), with its own rank cut, and naive loops for products.
 *
 * Tolerance policy: most random problems are built well conditioned (cond(A M^-1/2) below
 * ~20, printed), so every exact identity holds to a few tens of ulps; 1e-10 is ~1e6 ulps,
 * far from rounding and far below the O(1) errors a wrong formula gives. One family has
 * masses and row scales over four decades (cond(A M^-1/2) up to ~1e5): there the comparisons
 * with the references use tolerances that grow with the condition of the reference itself
 * (see run_case); the properties of the solution alone (A q'' = b, virtual work,
 * multipliers) keep 1e-10. Run by hand it prints the worst value of every check. */
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dyn_uk.h"
#include "tap.h"

#define NMAX 30
#define MMAX (NMAX + 5)

/* ---- a local, seeded PRNG (xorshift64*) --------------------------------------------- */

typedef struct Rng {
  uint64_t s;
} Rng;

static uint64_t rng_next(Rng *r) {
  uint64_t x = r->s;
  x ^= x >> 12;
  x ^= x << 25;
  x ^= x >> 27;
  r->s = x;
  return x * UINT64_C(0x2545F4914F6CDD1D);
}
/* Uniform in [0, 1). */
static double rng_unif(Rng *r) { return (double)(rng_next(r) >> 11) * (1.0 / 9007199254740992.0); }
static double rng_range(Rng *r, double lo, double hi) { return lo + (hi - lo) * rng_unif(r); }
/* Integer in [lo, hi]. */
static int rng_int(Rng *r, int lo, int hi) {
  return lo + (int)(rng_next(r) % (uint64_t)(hi - lo + 1));
}
static double rng_gauss(Rng *r) {
  double u1 = 1.0 - rng_unif(r); /* (0, 1] */
  double u2 = rng_unif(r);
  return sqrt(-2.0 * log(u1)) * cos(6.283185307179586 * u2);
}

/* ---- small dense helpers (column-major) --------------------------------------------- */

static double *dvec(size_t count) {
  double *p = calloc(count ? count : 1, sizeof *p);
  if (!p) {
    fprintf(stderr, "out of memory\n");
    exit(2);
  }
  return p;
}

static double nrm2(int n, const double *x) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * x[i];
  return sqrt(s);
}

static double nrmF(int m, int n, const double *a, int lda) {
  double s = 0;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) s += a[i + (size_t)j * lda] * a[i + (size_t)j * lda];
  return sqrt(s);
}

static double dot(int n, const double *x, const double *y) {
  double s = 0;
  for (int i = 0; i < n; i++) s += x[i] * y[i];
  return s;
}

/* y = op(A) x, A m x n (ld lda); trans: y (n) = A^T x (m). */
static void gemv(int trans, int m, int n, const double *a, int lda, const double *x, double *y) {
  if (!trans) {
    for (int i = 0; i < m; i++) y[i] = 0;
    for (int j = 0; j < n; j++)
      for (int i = 0; i < m; i++) y[i] += a[i + (size_t)j * lda] * x[j];
  } else {
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int i = 0; i < m; i++) s += a[i + (size_t)j * lda] * x[i];
      y[j] = s;
    }
  }
}

/* C (m x n, ld m) = op(A) op(B), inner dimension k. */
static void gemm(int ta, int tb, int m, int n, int k, const double *a, int lda, const double *b,
                 int ldb, double *c) {
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) {
      double s = 0;
      for (int l = 0; l < k; l++) {
        double x = ta ? a[l + (size_t)i * lda] : a[i + (size_t)l * lda];
        double y = tb ? b[j + (size_t)l * ldb] : b[l + (size_t)j * ldb];
        s += x * y;
      }
      c[i + (size_t)j * m] = s;
    }
}

static double max_d(double a, double b) { return a > b ? a : b; }

/* |x - y| / max(|x|, |y|) (0 when both vanish). */
static double rel_diff(int n, const double *x, const double *y) {
  double d = 0;
  for (int i = 0; i < n; i++) d += (x[i] - y[i]) * (x[i] - y[i]);
  double s = max_d(nrm2(n, x), nrm2(n, y));
  return s > 0 ? sqrt(d) / s : sqrt(d);
}

/* ---- reference decompositions --------------------------------------------------------- */

/* Full SVD A = U diag(s) V^T (U m x m, VT n x n); rank = #{s_i > cut * s_0}. */
typedef struct Svd {
  int m, n, k, rank;
  double *u, *s, *vt;
} Svd;

static void svd_full(int m, int n, const double *a, int lda, double cut, Svd *o) {
  o->m = m;
  o->n = n;
  o->k = m < n ? m : n;
  o->u = dvec((size_t)m * m);
  o->vt = dvec((size_t)n * n);
  o->s = dvec((size_t)(o->k > 0 ? o->k : 1));
  o->rank = 0;
  if (o->k == 0) {
    for (int i = 0; i < m; i++) o->u[i + (size_t)i * m] = 1;
    for (int i = 0; i < n; i++) o->vt[i + (size_t)i * n] = 1;
    return;
  }
  double *w = dvec((size_t)m * n);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < m; i++) w[i + (size_t)j * m] = a[i + (size_t)j * lda];
  double *superb = dvec((size_t)o->k);
  lapack_int info =
    LAPACKE_dgesvd(LAPACK_COL_MAJOR, 'A', 'A', m, n, w, m, o->s, o->u, m, o->vt, n, superb);
  if (info != 0) {
    fprintf(stderr, "dgesvd failed: %d\n", (int)info);
    exit(2);
  }
  for (int i = 0; i < o->k; i++)
    if (o->s[i] > cut * o->s[0]) o->rank++;
  free(w);
  free(superb);
}

static void svd_free(Svd *o) {
  free(o->u);
  free(o->s);
  free(o->vt);
}

/* P (n x m, ld n) = A^+ from the SVD. */
static void svd_pinv(const Svd *o, double *p) {
  int m = o->m, n = o->n;
  for (size_t i = 0; i < (size_t)m * n; i++) p[i] = 0;
  for (int l = 0; l < o->rank; l++) {
    double inv = 1.0 / o->s[l];
    for (int j = 0; j < m; j++) {
      double uj = o->u[j + (size_t)l * m] * inv;
      for (int i = 0; i < n; i++) p[i + (size_t)j * n] += o->vt[l + (size_t)i * n] * uj;
    }
  }
}

/* Symmetric eigen-decomposition (ascending): S = W diag(lam) W^T. S is overwritten by W. */
static void sym_eig(int n, double *s, double *lam) {
  if (n == 0) return;
  lapack_int info = LAPACKE_dsyev(LAPACK_COL_MAJOR, 'V', 'L', n, s, n, lam);
  if (info != 0) {
    fprintf(stderr, "dsyev failed: %d\n", (int)info);
    exit(2);
  }
}

/* M^-1 of an SPD matrix via dpotrf + dpotri. */
static void spd_inverse(int n, const double *mass, double *inv) {
  memcpy(inv, mass, sizeof(double) * (size_t)n * n);
  lapack_int info = LAPACKE_dpotrf(LAPACK_COL_MAJOR, 'L', n, inv, n);
  if (info == 0) info = LAPACKE_dpotri(LAPACK_COL_MAJOR, 'L', n, inv, n);
  if (info != 0) {
    fprintf(stderr, "dpotrf/dpotri failed: %d\n", (int)info);
    exit(2);
  }
  for (int j = 0; j < n; j++)
    for (int i = 0; i < j; i++) inv[i + (size_t)j * n] = inv[j + (size_t)i * n];
}

/* M^-1/2 (symmetric root) of an SPD matrix via dsyev. */
static void spd_inv_sqrt(int n, const double *mass, double *r) {
  double *w = dvec((size_t)n * n), *lam = dvec((size_t)n);
  memcpy(w, mass, sizeof(double) * (size_t)n * n);
  sym_eig(n, w, lam);
  for (size_t i = 0; i < (size_t)n * n; i++) r[i] = 0;
  for (int l = 0; l < n; l++) {
    double f = 1.0 / sqrt(lam[l]);
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++)
        r[i + (size_t)j * n] += w[i + (size_t)l * n] * f * w[j + (size_t)l * n];
  }
  free(w);
  free(lam);
}

/* Orthonormalizes the r columns of y (n x r, ld n) in place (dgeqrf + dorgqr). */
static void orth_cols(int n, int r, double *y) {
  if (r == 0) return;
  double *tau = dvec((size_t)r);
  if (LAPACKE_dgeqrf(LAPACK_COL_MAJOR, n, r, y, n, tau) != 0 ||
      LAPACKE_dorgqr(LAPACK_COL_MAJOR, n, r, r, y, n, tau) != 0) {
    fprintf(stderr, "dgeqrf/dorgqr failed\n");
    exit(2);
  }
  free(tau);
}

/* ---- test problems -------------------------------------------------------------------- */

typedef struct Case {
  int n, m;
  double mass[NMAX * NMAX], force[NMAX], nonideal[NMAX], jac[MMAX * NMAX], rhs[MMAX];
  int use_c; /* pass C (else NULL) in the main solve */
  int rank;  /* rank of A by construction */
} Case;

static jyUkProblem problem_of(const Case *c, int with_c) {
  jyUkProblem p = {c->n,   c->m,   c->mass, c->force, with_c ? c->nonideal : NULL,
                   c->jac, c->rhs, NULL};
  return p;
}

/* M = G G^T / n + I with G Gaussian: eigenvalues in about [1, 5]. */
static void gen_spd_block(Rng *r, int n, double *mass, int ld) {
  double g[NMAX * NMAX];
  for (int i = 0; i < n * n; i++) g[i] = rng_gauss(r);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < n; i++) {
      double s = 0;
      for (int l = 0; l < n; l++) s += g[i + l * n] * g[j + l * n];
      mass[i + (size_t)j * ld] = s / n + (i == j ? 1.0 : 0.0);
    }
}

/* Well-conditioned rows: Y (n x r) = [seed + eps*Gauss, Gauss] orthonormalized; the rows are
 * D K Y^T with K = I + 0.25 Gauss/sqrt(r) (cond(K) ~ 3) and row scales D from [dlo, dhi]
 * (log-uniform). rows is r x n with leading dimension ldr. */
static void gen_rows(Rng *r, int n, int nr, const double *seed, int nseed, double eps, double dlo,
                     double dhi, double *rows, int ldr) {
  double *y = dvec((size_t)n * nr), *k = dvec((size_t)nr * nr);
  for (int j = 0; j < nr; j++)
    for (int i = 0; i < n; i++)
      y[i + (size_t)j * n] = (j < nseed ? seed[i + (size_t)j * n] : 0) +
        (j < nseed ? eps : 1.0) * rng_gauss(r) / sqrt((double)n);
  orth_cols(n, nr, y);
  for (int j = 0; j < nr; j++)
    for (int i = 0; i < nr; i++)
      k[i + (size_t)j * nr] = (i == j ? 1.0 : 0.0) + 0.25 * rng_gauss(r) / sqrt((double)nr);
  for (int i = 0; i < nr; i++) {
    double d = exp(rng_range(r, log(dlo), log(dhi)));
    for (int j = 0; j < n; j++) {
      double s = 0;
      for (int l = 0; l < nr; l++) s += k[i + (size_t)l * nr] * y[j + (size_t)l * n];
      rows[i + (size_t)j * ldr] = d * s;
    }
  }
  free(y);
  free(k);
}

/* Appends `extra` redundant rows to the nr base rows in rows (ld MMAX): exact duplicates,
 * scaled duplicates, combinations of 2-3 base rows, zero rows (b = 0 through b = A x0). */
static int add_redundant_rows(Rng *r, int n, int nr, int extra, double *rows) {
  int m = nr;
  for (int e = 0; e < extra; e++, m++) {
    int kind = rng_int(r, 0, 3);
    if (nr == 0) kind = 3;
    for (int j = 0; j < n; j++) rows[m + j * MMAX] = 0;
    if (kind == 0) {
      int s = rng_int(r, 0, nr - 1);
      for (int j = 0; j < n; j++) rows[m + j * MMAX] = rows[s + j * MMAX];
    } else if (kind == 1) {
      int s = rng_int(r, 0, nr - 1);
      double f = rng_range(r, -3, 3);
      for (int j = 0; j < n; j++) rows[m + j * MMAX] = f * rows[s + j * MMAX];
    } else if (kind == 2) {
      int terms = rng_int(r, 2, 3);
      for (int t = 0; t < terms; t++) {
        int s = rng_int(r, 0, nr - 1);
        double f = rng_range(r, -2, 2);
        for (int j = 0; j < n; j++) rows[m + j * MMAX] += f * rows[s + j * MMAX];
      }
    }
  }
  return m;
}

/* Shuffles the rows, stores them as A (ld m), and sets b = A x0, Q and C Gaussian. */
static void finish_case(Rng *r, Case *c, const double *rows, int m) {
  int perm[MMAX];
  for (int i = 0; i < m; i++) perm[i] = i;
  for (int i = m - 1; i > 0; i--) {
    int j = rng_int(r, 0, i), t = perm[i];
    perm[i] = perm[j];
    perm[j] = t;
  }
  c->m = m;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < c->n; j++) c->jac[i + j * m] = rows[perm[i] + j * MMAX];
  double x0[NMAX];
  for (int j = 0; j < c->n; j++) x0[j] = rng_gauss(r);
  gemv(0, m, c->n, c->jac, m, x0, c->rhs);
  for (int j = 0; j < c->n; j++) {
    c->force[j] = rng_gauss(r);
    c->nonideal[j] = rng_gauss(r);
  }
  c->use_c = rng_int(r, 0, 1);
}

enum Family {
  F_SPD_FULL,
  F_SPD_REDUNDANT,
  F_SPD_SCALED,
  F_SPD_DIAGONAL,
  F_PSD_LOWRANK,
  F_PSD_MASSLESS,
  F_COUNT
};
static const char *family_name[F_COUNT] = {
  "SPD M, full-row-rank A",
  "SPD M, redundant A (dup/scaled/combination/zero rows)",
  "SPD M with masses 1e-2..1e2, rows scaled 1e-2..1e2, some redundant",
  "diagonal M (its own factor, no augmentation), masses 1e-2..1e2, some redundant rows",
  "singular M = G G^T (rank < n)",
  "singular M with massless coordinates (zero rows/cols), glue-like rows"};

static void gen_case(Rng *r, int fam, Case *c) {
  double rows[MMAX * NMAX];
  memset(c, 0, sizeof *c);
  if (fam == F_SPD_FULL || fam == F_SPD_REDUNDANT || fam == F_SPD_SCALED || fam == F_SPD_DIAGONAL) {
    int n = rng_int(r, 1, NMAX);
    c->n = n;
    gen_spd_block(r, n, c->mass, n);
    double dlo = 0.5, dhi = 2.0;
    if (fam == F_SPD_SCALED) {
      /* Masses of very different sizes: D M D with D^2 log-uniform in [1e-2, 1e2]. */
      double d[NMAX];
      for (int i = 0; i < n; i++) d[i] = exp(rng_range(r, log(0.1), log(10.0)));
      for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++) c->mass[i + j * n] *= d[i] * d[j];
      dlo = 1e-2;
      dhi = 1e2;
    }
    if (fam == F_SPD_DIAGONAL) /* rigid bodies and point masses: what the solver special-cases */
      for (int j = 0; j < n; j++)
        for (int i = 0; i < n; i++)
          c->mass[i + j * n] = i == j ? exp(rng_range(r, log(1e-2), log(1e2))) : 0.0;
    int nr = rng_int(r, 1, n); /* m = 0 is an edge case of its own, below */
    int extra = fam == F_SPD_REDUNDANT               ? rng_int(r, 1, 5)
      : fam == F_SPD_SCALED || fam == F_SPD_DIAGONAL ? rng_int(r, 0, 3)
                                                     : 0;
    gen_rows(r, n, nr, NULL, 0, 0, dlo, dhi, rows, MMAX);
    int m = add_redundant_rows(r, n, nr, extra, rows);
    c->rank = nr;
    finish_case(r, c, rows, m);
  } else if (fam == F_PSD_LOWRANK) {
    int n = rng_int(r, 2, NMAX);
    int rm = rng_int(r, 1, n - 1); /* rank of M */
    c->n = n;
    double o[NMAX * NMAX];
    for (int i = 0; i < n * n; i++) o[i] = rng_gauss(r);
    orth_cols(n, n, o);
    /* M = G G^T, G = O_r diag(s), s in [0.7, 2]: null(M) = span of the last n - rm columns. */
    double s[NMAX];
    for (int l = 0; l < rm; l++) s[l] = rng_range(r, 0.7, 2.0);
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        double v = 0;
        for (int l = 0; l < rm; l++) v += o[i + l * n] * s[l] * s[l] * o[j + l * n];
        c->mass[i + j * n] = v;
      }
    /* Rows: the first n - rm start from the null directions (perturbed, so the row space does
     * not contain null(M) exactly), the others random; [M; A] has full column rank. */
    int k = n - rm;
    int nr = rng_int(r, k, n);
    gen_rows(r, n, nr, o + (size_t)rm * n, k, 0.3, 0.5, 2.0, rows, MMAX);
    int m = add_redundant_rows(r, n, nr, rng_int(r, 0, 5), rows);
    c->rank = nr;
    finish_case(r, c, rows, m);
  } else { /* F_PSD_MASSLESS */
    int n = rng_int(r, 2, NMAX);
    c->n = n;
    int nml = rng_int(r, 1, (n + 1) / 2); /* massless coordinates */
    int perm[NMAX];
    for (int i = 0; i < n; i++) perm[i] = i;
    for (int i = n - 1; i > 0; i--) {
      int j = rng_int(r, 0, i), t = perm[i];
      perm[i] = perm[j];
      perm[j] = t;
    }
    const int *ml = perm, *mv = perm + nml; /* massless / massive coordinate indices */
    int nmv = n - nml;
    double blk[NMAX * NMAX];
    gen_spd_block(r, nmv, blk, nmv);
    for (int j = 0; j < nmv; j++)
      for (int i = 0; i < nmv; i++) c->mass[mv[i] + mv[j] * n] = blk[i + j * nmv];
    /* Glue rows: massless k = one or two massive coordinates, or an earlier massless one
     * (a chain of terminals): on the massless columns the rows form a unit triangle. */
    int m = 0;
    for (int t = 0; t < nml; t++, m++) {
      for (int j = 0; j < n; j++) rows[m + j * MMAX] = 0;
      rows[m + ml[t] * MMAX] = 1;
      if (t > 0 && rng_int(r, 0, 2) == 0) {
        rows[m + ml[rng_int(r, 0, t - 1)] * MMAX] = -1;
      } else {
        int terms = rng_int(r, 1, 2);
        for (int u = 0; u < terms; u++) rows[m + mv[rng_int(r, 0, nmv - 1)] * MMAX] -= 1;
      }
    }
    /* Dense rows on the massive coordinates only (joints among massive parts). */
    int nd = rng_int(r, 0, nmv / 2);
    double dense[NMAX * NMAX];
    gen_rows(r, nmv, nd, NULL, 0, 0, 0.5, 2.0, dense, NMAX);
    for (int i = 0; i < nd; i++, m++) {
      for (int j = 0; j < n; j++) rows[m + j * MMAX] = 0;
      for (int j = 0; j < nmv; j++) rows[m + mv[j] * MMAX] = dense[i + j * NMAX];
    }
    c->rank = m;
    m = add_redundant_rows(r, n, m, rng_int(r, 0, 3), rows);
    finish_case(r, c, rows, m);
  }
}

/* ---- the reference accelerations ----------------------------------------------------- */

/* (ii) seed multibody-dynamics eq. 9: q'' = a + M^-1/2 B^+ (b - A a) + M^-1/2 (I - B^+ B) M^-1/2 C,
 * B = A M^-1/2 (M^-1/2 by dsyev), B^+ by dgesvd. Returns cond(B) on its numerical range.
 * Rank cut 1e-12 relative: a structurally dependent row leaves a singular value at rounding
 * level (~1e-16 |B|), the genuine ones here are >= ~1e-5 |B| (1 / cond(B), printed); 1e-12
 * sits far from both, and the rank found is checked against the rank by construction. */
static double ref_b_form(const Case *c, int with_c, double *acc, int *rank) {
  int n = c->n, m = c->m;
  double *mh = dvec((size_t)n * n), *bm = dvec((size_t)m * n), *bp = dvec((size_t)n * m);
  double t[NMAX], a[NMAX], e[MMAX], z[NMAX], y[NMAX], by[MMAX];
  spd_inv_sqrt(n, c->mass, mh);
  gemv(0, n, n, mh, n, c->force, t);
  gemv(0, n, n, mh, n, t, a); /* a = M^-1 Q */
  gemm(0, 0, m, n, n, c->jac, m, mh, n, bm);
  Svd s;
  svd_full(m, n, bm, m, 1e-12, &s);
  svd_pinv(&s, bp);
  gemv(0, m, n, c->jac, m, a, e);
  for (int i = 0; i < m; i++) e[i] = c->rhs[i] - e[i];
  gemv(0, n, m, bp, n, e, z);
  if (with_c) {
    gemv(0, n, n, mh, n, c->nonideal, y); /* M^-1/2 C */
    gemv(0, m, n, bm, m, y, by);
    gemv(0, n, m, bp, n, by, t);
    for (int i = 0; i < n; i++) z[i] += y[i] - t[i];
  }
  gemv(0, n, n, mh, n, z, t);
  for (int i = 0; i < n; i++) acc[i] = a[i] + t[i];
  double cond = s.rank > 0 ? s.s[0] / s.s[s.rank - 1] : 1;
  *rank = s.rank;
  svd_free(&s);
  free(mh);
  free(bm);
  free(bp);
  return cond;
}

/* (iii) seed on-constrained-motion eq. 9 with A_M^+ = M^-1 A^T W Lam^-2 W^T, where
 * A M^-1 A^T = W Lam^2 W^T (dsyev) as the seed describes; M^-1 by dpotrf + dpotri.
 *   acc_m = a + A_M^+ (b - A a) + (I - A_M^+ A) c,   acc_u = u + A_M^+ (b - A u), u = M^-1 (Q + C).
 * The eigenvalues are squared singular values of B: rounding leaves ~1e-15 lam_max on a
 * dependent row, and in the scaled family genuine ones go down to ~1e-10 lam_max, so no
 * fixed cut separates them safely; the reference keeps the `rank` largest (the rank known
 * by construction; the solver's own rank is checked against it separately) and reports the
 * gap it relied on in *gap: (largest dropped) / (smallest kept). */
static void ref_minv_forms(const Case *c, int with_c, double *acc_m, double *acc_u, double *gap) {
  int n = c->n, m = c->m;
  double *mi = dvec((size_t)n * n), *mat = dvec((size_t)n * m), *s = dvec((size_t)m * m);
  double *sp = dvec((size_t)m * m), *amp = dvec((size_t)n * m), *lam = dvec((size_t)m);
  double a[NMAX], cc[NMAX], u[NMAX], e[MMAX], t[NMAX], ac[MMAX], qc[NMAX];
  spd_inverse(n, c->mass, mi);
  gemm(0, 1, n, m, n, mi, n, c->jac, m, mat); /* M^-1 A^T */
  gemm(0, 0, m, m, n, c->jac, m, mat, n, s);  /* A M^-1 A^T */
  sym_eig(m, s, lam);
  *gap = 0;
  if (c->rank > 0 && c->rank < m) *gap = fabs(lam[m - c->rank - 1]) / lam[m - c->rank];
  for (int l = m - c->rank; l < m; l++) {
    for (int j = 0; j < m; j++)
      for (int i = 0; i < m; i++) sp[i + j * m] += s[i + l * m] * s[j + l * m] / lam[l];
  }
  gemm(0, 0, n, m, m, mat, n, sp, m, amp); /* A_M^+ */
  gemv(0, n, n, mi, n, c->force, a);
  for (int i = 0; i < n; i++) cc[i] = with_c ? c->nonideal[i] : 0;
  gemv(0, n, n, mi, n, cc, t);
  memcpy(cc, t, sizeof(double) * n); /* c = M^-1 C */
  gemv(0, m, n, c->jac, m, a, e);
  for (int i = 0; i < m; i++) e[i] = c->rhs[i] - e[i];
  gemv(0, n, m, amp, n, e, t);
  gemv(0, m, n, c->jac, m, cc, ac);
  gemv(0, n, m, amp, n, ac, qc);
  for (int i = 0; i < n; i++) acc_m[i] = a[i] + t[i] + cc[i] - qc[i];
  for (int i = 0; i < n; i++) qc[i] = c->force[i] + (with_c ? c->nonideal[i] : 0);
  gemv(0, n, n, mi, n, qc, u);
  gemv(0, m, n, c->jac, m, u, e);
  for (int i = 0; i < m; i++) e[i] = c->rhs[i] - e[i];
  gemv(0, n, m, amp, n, e, t);
  for (int i = 0; i < n; i++) acc_u[i] = u[i] + t[i];
  free(mi);
  free(mat);
  free(s);
  free(sp);
  free(amp);
  free(lam);
}

/* Udwadia-Phohomsiri 2006 (any PSD M with rank [M; A] = n):
 * q'' = [(I - A^+ A) M; A]^+ [(I - A^+ A)(Q + C); b], both pseudo-inverses by dgesvd.
 * Cut 1e-12 for A^+ as in ref_b_form; the stacked matrix has full column rank. */
static void ref_up2006(const Case *c, int with_c, double *acc) {
  int n = c->n, m = c->m, k = n + m;
  double *ap = dvec((size_t)n * m), *p = dvec((size_t)n * n), *stk = dvec((size_t)k * n);
  double *sp = dvec((size_t)n * k), *rhs = dvec((size_t)k), *pm = dvec((size_t)n * n);
  double f[NMAX];
  Svd s;
  svd_full(m, n, c->jac, m, 1e-12, &s);
  svd_pinv(&s, ap);
  svd_free(&s);
  gemm(0, 0, n, n, m, ap, n, c->jac, m, p);
  for (int i = 0; i < n * n; i++) p[i] = -p[i];
  for (int i = 0; i < n; i++) p[i + i * n] += 1;
  gemm(0, 0, n, n, n, p, n, c->mass, n, pm);
  for (int j = 0; j < n; j++) {
    for (int i = 0; i < n; i++) stk[i + j * k] = pm[i + j * n];
    for (int i = 0; i < m; i++) stk[n + i + j * k] = c->jac[i + j * m];
  }
  for (int i = 0; i < n; i++) f[i] = c->force[i] + (with_c ? c->nonideal[i] : 0);
  gemv(0, n, n, p, n, f, rhs);
  for (int i = 0; i < m; i++) rhs[n + i] = c->rhs[i];
  svd_full(k, n, stk, k, 1e-12, &s);
  svd_pinv(&s, sp);
  svd_free(&s);
  gemv(0, n, k, sp, n, rhs, acc);
  free(ap);
  free(p);
  free(stk);
  free(sp);
  free(rhs);
  free(pm);
}

/* ---- checks on one solution ------------------------------------------------------------ */

/* |A q'' - b| / (|A| |q''| + |b|). */
static double constraint_residual(const Case *c, const double *acc) {
  double r[MMAX];
  gemv(0, c->m, c->n, c->jac, c->m, acc, r);
  for (int i = 0; i < c->m; i++) r[i] -= c->rhs[i];
  double s = nrmF(c->m, c->n, c->jac, c->m) * nrm2(c->n, acc) + nrm2(c->m, c->rhs);
  return s > 0 ? nrm2(c->m, r) / s : nrm2(c->m, r);
}

/* f = M q'' - Q - C (the ideal constraint force); returns |M q''| + |Q| + |C|, the size of
 * the terms it is the difference of (the scale of its rounding error). */
static double ideal_force(const Case *c, int with_c, const double *acc, double *f) {
  double mq[NMAX];
  gemv(0, c->n, c->n, c->mass, c->n, acc, mq);
  for (int i = 0; i < c->n; i++) f[i] = mq[i] - c->force[i] - (with_c ? c->nonideal[i] : 0);
  return nrm2(c->n, mq) + nrm2(c->n, c->force) + (with_c ? nrm2(c->n, c->nonideal) : 0);
}

typedef struct Stats {
  int cases, bad_outcome, bad_rank, ref_rank_bad, nmin, nmax, mmin, mmax, spd, n_with_c,
    n_redundant;
  double res, rep_res, morth, form_b, form_m, form_u, form_up, aug, vwork, mu_res, mu_null,
    mu_unexpl, cond_max, form_b_r, form_m_r, form_u_r, form_up_r, gram_gap, aug_r, aug_at, mu_snull;
} Stats;

static void upd(double *worst, double v) {
  if (!(v <= *worst)) *worst = v; /* NaN sticks */
}

static jyUkOptions default_opt(void) {
  jyUkOptions o = {1e-10, 1.0, 1e-8}; /* jy_default_solver_def's documented values */
  return o;
}

static void run_case(jyUkWork *work, const Case *c, int spd, Stats *st) {
  int n = c->n, m = c->m, wc = c->use_c;
  jyUkProblem p = problem_of(c, wc);
  jyUkOptions opt = default_opt();
  jyUkResult res;
  double acc[NMAX], ref[NMAX], ref2[NMAX], f[NMAX];

  st->cases++;
  if (n < st->nmin) st->nmin = n;
  if (n > st->nmax) st->nmax = n;
  if (m < st->mmin) st->mmin = m;
  if (m > st->mmax) st->mmax = m;
  st->n_with_c += wc;
  st->n_redundant += c->rank < m;

  jyUkOutcome out = jy_uk_solve(work, &p, &opt, acc, &res);
  if (out != JY_UK_OK || res.outcome != JY_UK_OK) {
    if (st->bad_outcome == 0)
      diag("first bad outcome: n=%d m=%d rank=%d -> outcome %d/%d", n, m, c->rank, (int)out,
           (int)res.outcome);
    st->bad_outcome++;
    return;
  }
  if (res.rank != c->rank) {
    if (st->bad_rank == 0)
      diag("first wrong rank: n=%d m=%d rank %d, reported %d", n, m, c->rank, res.rank);
    st->bad_rank++;
  }

  /* 1. A q'' = b, and the residual the solver reports. */
  upd(&st->res, constraint_residual(c, acc));
  upd(&st->rep_res, res.residual);

  /* 3. The other forms of the equation. */
  double tol1 = 1e-10;
  if (spd) {
    int rk;
    double cond = ref_b_form(c, wc, ref, &rk);
    upd(&st->cond_max, cond);
    if (rk != c->rank) st->ref_rank_bad++;
    /* Tolerances that follow the conditioning: 1e-10 on the well-conditioned families;
     * where cond(B) is large (the scaled family, up to ~1e5) the references themselves err
     * by ~eps cond(B) (SVD of B) and ~eps cond(B)^2 (eigen-decomposition of the Gram matrix
     * A M^-1 A^T, which squares the condition): margins 100 and 10 over what was measured
     * (at most 5 eps cond and 0.6 eps cond^2). */
    tol1 = max_d(1e-10, 100 * DBL_EPSILON * cond);
    double tol2 = max_d(1e-10, 10 * DBL_EPSILON * cond * cond);
    double d = rel_diff(n, acc, ref);
    upd(&st->form_b, d);
    upd(&st->form_b_r, d / tol1);
    double gap;
    ref_minv_forms(c, wc, ref, ref2, &gap);
    upd(&st->gram_gap, gap);
    d = rel_diff(n, acc, ref);
    upd(&st->form_m, d);
    upd(&st->form_m_r, d / tol2);
    d = rel_diff(n, acc, ref2);
    upd(&st->form_u, d);
    upd(&st->form_u_r, d / tol2);
    ref_up2006(c, wc, ref);
    d = rel_diff(n, acc, ref);
    upd(&st->form_up, d);
    upd(&st->form_up_r, d / tol1);
  } else {
    ref_up2006(c, wc, ref);
    double d = rel_diff(n, acc, ref);
    upd(&st->form_up, d);
    upd(&st->form_up_r, d / 1e-10);
  }

  /* 2. M-orthogonality of Delta_ideal = q''(C=0) - a and Delta_ni = q''(C) - q''(0). */
  if (spd) {
    double q0[NMAX], q1[NMAX], a[NMAX], di[NMAX], dn[NMAX], t[NMAX];
    double *mi = dvec((size_t)n * n);
    jyUkProblem p0 = problem_of(c, 0), p1 = problem_of(c, 1);
    jyUkResult r0, r1;
    jyUkOutcome o0 = jy_uk_solve(work, &p0, &opt, q0, &r0);
    jyUkOutcome o1 = jy_uk_solve(work, &p1, &opt, q1, &r1);
    spd_inverse(n, c->mass, mi);
    gemv(0, n, n, mi, n, c->force, a);
    for (int i = 0; i < n; i++) {
      di[i] = q0[i] - a[i];
      dn[i] = q1[i] - q0[i];
    }
    gemv(0, n, n, c->mass, n, dn, t);
    double num = fabs(dot(n, di, t)), nn = sqrt(fabs(dot(n, dn, t)));
    gemv(0, n, n, c->mass, n, di, t);
    double ni = sqrt(fabs(dot(n, di, t)));
    /* Relative to |Delta_ideal|_M |Delta_ni|_M. With rank A = n there are no virtual
     * displacements and Delta_ni = 0 exactly (rounding only): nothing to measure. */
    double v = (o0 != JY_UK_OK || o1 != JY_UK_OK || !(nn > 0)) ? INFINITY : num / (ni * nn);
    if (c->rank == n && o0 == JY_UK_OK && o1 == JY_UK_OK) v = 0;
    upd(&st->morth, v);
    free(mi);
  }

  /* 4. The auxiliary-mass scale does not change q''. */
  {
    double q2[NMAX];
    const double scales[2] = {1e-3, 1e3};
    for (int k = 0; k < 2; k++) {
      jyUkOptions o2 = opt;
      o2.augment_scale = scales[k];
      jyUkResult r2;
      jyUkOutcome oo = jy_uk_solve(work, &p, &o2, q2, &r2);
      double d = oo == JY_UK_OK ? rel_diff(n, acc, q2) : INFINITY;
      if (!(d <= st->aug)) st->aug_at = scales[k];
      upd(&st->aug, d);
      /* 1e-10, or for SPD M the conditioning-aware tolerance of the forms above: the change
       * of alpha only changes the rounding, which follows cond(B) like the references. */
      upd(&st->aug_r, d / tol1);
    }
  }

  /* 5. Virtual work: w^T (M q'' - Q - C) = 0 for w in null(A) (right singular vectors). */
  double fscale = ideal_force(c, wc, acc, f);
  Svd sa;
  svd_full(m, n, c->jac, m, 1e-12, &sa);
  for (int l = sa.rank; l < n; l++) {
    double w = 0;
    for (int i = 0; i < n; i++) w += sa.vt[l + i * n] * f[i];
    upd(&st->vwork, fabs(w) / fscale);
  }

  /* 6. Multipliers: A^T mu = f, mu orthogonal to null(A^T), nothing left unexplained. */
  {
    double mu[MMAX], atmu[NMAX], unexpl = -1;
    jy_uk_multipliers(work, &p, acc, mu, &unexpl);
    gemv(1, m, n, c->jac, m, mu, atmu);
    for (int i = 0; i < n; i++) atmu[i] -= f[i];
    double nmu = nrm2(m, mu);
    upd(&st->mu_res, nrm2(n, atmu) / (nrmF(m, n, c->jac, m) * nmu + fscale));
    for (int l = sa.rank; l < m; l++) {
      double y = dot(m, sa.u + (size_t)l * m, mu);
      upd(&st->mu_null, nmu > 0 ? fabs(y) / nmu : fabs(y));
    }
    upd(&st->mu_unexpl, unexpl >= 0 ? unexpl / fscale : INFINITY);
    /* Not asserted, printed: are they minimum-norm after scaling the rows to unit length
     * (mu_s,i = |A_i| mu_i orthogonal to null(As^T))? That is the units-invariant choice. */
    double as[MMAX * NMAX], mus[MMAX];
    for (int i = 0; i < m; i++) {
      double ni = 0;
      for (int j = 0; j < n; j++) ni = hypot(ni, c->jac[i + j * m]);
      for (int j = 0; j < n; j++) as[i + j * m] = ni > 0 ? c->jac[i + j * m] / ni : 0;
      mus[i] = ni * mu[i];
    }
    Svd ss;
    svd_full(m, n, as, m, 1e-12, &ss);
    double nmus = nrm2(m, mus);
    for (int l = ss.rank; l < m; l++) {
      double y = dot(m, ss.u + (size_t)l * m, mus);
      upd(&st->mu_snull, nmus > 0 ? fabs(y) / nmus : fabs(y));
    }
    svd_free(&ss);
  }
  svd_free(&sa);
}

/* ---- a counting allocator -------------------------------------------------------------- */

typedef struct Count {
  long allocs, frees, reallocs;
} Count;
static void *c_alloc(void *ud, size_t size) {
  ((Count *)ud)->allocs++;
  return malloc(size);
}
static void *c_realloc(void *ud, void *ptr, size_t size) {
  ((Count *)ud)->reallocs++;
  if (!ptr) ((Count *)ud)->allocs++;
  return realloc(ptr, size);
}
static void c_free(void *ud, void *ptr) {
  if (ptr) ((Count *)ud)->frees++;
  free(ptr);
}

/* ---- failure detection ------------------------------------------------------------------ */

/* SPD block on all coordinates but those in `zero` (massless: zero row and column). */
static void mass_with_massless(Rng *r, int n, const int *zero, int nzero, double *mass) {
  int mv[NMAX], nmv = 0;
  for (int i = 0; i < n; i++) {
    int z = 0;
    for (int k = 0; k < nzero; k++) z |= zero[k] == i;
    if (!z) mv[nmv++] = i;
  }
  double blk[NMAX * NMAX];
  gen_spd_block(r, nmv, blk, nmv);
  for (int i = 0; i < n * n; i++) mass[i] = 0;
  for (int j = 0; j < nmv; j++)
    for (int i = 0; i < nmv; i++) mass[mv[i] + mv[j] * n] = blk[i + j * nmv];
}

/* Random rows (ld MMAX) that do not touch the columns in `skip`. */
static void rows_avoiding(Rng *r, int n, int nr, const int *skip, int nskip, double *rows) {
  for (int i = 0; i < nr; i++)
    for (int j = 0; j < n; j++) {
      int s = 0;
      for (int k = 0; k < nskip; k++) s |= skip[k] == j;
      rows[i + j * MMAX] = s ? 0 : rng_gauss(r);
    }
}

/* Stores rows (ld MMAX) as A with b = A x0 and Q, C Gaussian, without shuffling. */
static void set_rows(Rng *r, Case *c, const double *rows, int m) {
  c->m = m;
  for (int i = 0; i < m; i++)
    for (int j = 0; j < c->n; j++) c->jac[i + j * m] = rows[i + j * MMAX];
  double x0[NMAX];
  for (int j = 0; j < c->n; j++) x0[j] = rng_gauss(r);
  gemv(0, m, c->n, c->jac, m, x0, c->rhs);
  for (int j = 0; j < c->n; j++) {
    c->force[j] = rng_gauss(r);
    c->nonideal[j] = rng_gauss(r);
  }
}

static int flags_are(const int *flags, int n, const int *want, int nwant) {
  for (int i = 0; i < n; i++) {
    int w = 0;
    for (int k = 0; k < nwant; k++) w |= want[k] == i;
    if ((flags[i] != 0) != w) return 0;
  }
  return 1;
}

static void test_not_unique(Rng *r, jyUkWork *work) {
  jyUkOptions opt = default_opt();
  static Case c;
  int n_out = 0, n_flag = 0, trials = 8;
  /* (a) one massless coordinate that no constraint touches; the others massless ones glued. */
  for (int t = 0; t < trials; t++) {
    memset(&c, 0, sizeof c);
    int n = rng_int(r, 3, NMAX), k = rng_int(r, 0, n - 1);
    int other = (k + 1 + rng_int(r, 0, n - 2)) % n; /* a second massless coordinate, glued */
    int zero[2] = {k, other};
    c.n = n;
    mass_with_massless(r, n, zero, 2, c.mass);
    double rows[MMAX * NMAX];
    int nr = rng_int(r, 1, n - 2);
    rows_avoiding(r, n, nr, zero, 2, rows);
    for (int j = 0; j < n; j++) rows[nr + j * MMAX] = 0;
    rows[nr + other * MMAX] = 1; /* glue: other = some massive coordinate */
    rows[nr + ((other + 1) % n == k ? (other + 2) % n : (other + 1) % n) * MMAX] = -1;
    set_rows(r, &c, rows, nr + 1);
    jyUkProblem p = problem_of(&c, t % 2);
    jyUkResult res;
    double acc[NMAX];
    int flags[NMAX];
    jyUkOutcome out = jy_uk_solve(work, &p, &opt, acc, &res);
    if (out == JY_UK_NOT_UNIQUE && res.outcome == JY_UK_NOT_UNIQUE)
      n_out++;
    else
      diag("massless unconstrained coordinate %d (n=%d m=%d): outcome %d", k, n, c.m, (int)out);
    for (int i = 0; i < n; i++) flags[i] = -1;
    int cnt = out == JY_UK_NOT_UNIQUE ? jy_uk_free_directions(work, &p, 1e-10, flags) : -1;
    if (cnt == 1 && flags_are(flags, n, &k, 1))
      n_flag++;
    else {
      diag("free_directions for coordinate %d (n=%d): returned %d, flagged:", k, n, cnt);
      for (int i = 0; i < n; i++)
        if (flags[i]) diag("  flag[%d] = %d", i, flags[i]);
    }
  }
  ok(n_out == trials, "massless coordinate no constraint touches -> JY_UK_NOT_UNIQUE (%d/%d)",
     n_out, trials);
  ok(n_flag == trials,
     "jy_uk_free_directions flags exactly that coordinate, not the glued massless one (%d/%d)",
     n_flag, trials);

  /* (b) massless j, k tied only to each other (row x_j - x_k): the free direction e_j + e_k. */
  {
    memset(&c, 0, sizeof c);
    int n = 9, zero[3] = {2, 6, 4};
    c.n = n;
    mass_with_massless(r, n, zero, 3, c.mass);
    double rows[MMAX * NMAX];
    rows_avoiding(r, n, 3, zero, 3, rows);
    for (int j = 0; j < n; j++) rows[3 + j * MMAX] = rows[4 + j * MMAX] = 0;
    rows[3 + 2 * MMAX] = 1, rows[3 + 6 * MMAX] = -1; /* x2 - x6 (both massless) */
    rows[4 + 4 * MMAX] = 1, rows[4 + 0 * MMAX] = -1; /* x4 - x0 (x4 massless, glued) */
    set_rows(r, &c, rows, 5);
    jyUkProblem p = problem_of(&c, 0);
    jyUkResult res;
    double acc[NMAX];
    int flags[NMAX];
    jyUkOutcome out = jy_uk_solve(work, &p, &opt, acc, &res);
    for (int i = 0; i < n; i++) flags[i] = -1;
    int cnt = out == JY_UK_NOT_UNIQUE ? jy_uk_free_directions(work, &p, 1e-10, flags) : -1;
    int want[2] = {2, 6};
    ok(out == JY_UK_NOT_UNIQUE && cnt == 2 && flags_are(flags, n, want, 2),
       "two massless coordinates tied only to each other: NOT_UNIQUE, flags exactly {2, 6} "
       "(outcome %d, count %d)",
       (int)out, cnt);
  }

  /* (c) a non-diagonal singular M: block [[1, 1], [1, 1]] on (1, 5) (massless relative
   * motion e_1 - e_5), no constraint on 1 or 5; coordinate 3 massless and glued. */
  {
    memset(&c, 0, sizeof c);
    int n = 8, zero[3] = {1, 5, 3};
    c.n = n;
    mass_with_massless(r, n, zero, 3, c.mass);
    c.mass[1 + 1 * n] = c.mass[5 + 5 * n] = c.mass[1 + 5 * n] = c.mass[5 + 1 * n] = 1;
    double rows[MMAX * NMAX];
    rows_avoiding(r, n, 3, zero, 3, rows);
    for (int j = 0; j < n; j++) rows[3 + j * MMAX] = 0;
    rows[3 + 3 * MMAX] = 1, rows[3 + 7 * MMAX] = -1;
    set_rows(r, &c, rows, 4);
    jyUkProblem p = problem_of(&c, 1);
    jyUkResult res;
    double acc[NMAX];
    int flags[NMAX];
    jyUkOutcome out = jy_uk_solve(work, &p, &opt, acc, &res);
    for (int i = 0; i < n; i++) flags[i] = -1;
    int cnt = out == JY_UK_NOT_UNIQUE ? jy_uk_free_directions(work, &p, 1e-10, flags) : -1;
    int want[2] = {1, 5};
    ok(out == JY_UK_NOT_UNIQUE && cnt == 2 && flags_are(flags, n, want, 2),
       "massless relative motion e1 - e5 of a non-diagonal M, unconstrained: NOT_UNIQUE, flags "
       "exactly {1, 5} (outcome %d, count %d)",
       (int)out, cnt);
    /* Constrain it (x1 - x5 = given): now unique. */
    double rows2[MMAX * NMAX];
    for (int i = 0; i < 4; i++)
      for (int j = 0; j < n; j++) rows2[i + j * MMAX] = c.jac[i + j * 4];
    for (int j = 0; j < n; j++) rows2[4 + j * MMAX] = 0;
    rows2[4 + 1 * MMAX] = 1, rows2[4 + 5 * MMAX] = -1;
    set_rows(r, &c, rows2, 5);
    p = problem_of(&c, 1);
    out = jy_uk_solve(work, &p, &opt, acc, &res);
    double up[NMAX];
    ref_up2006(&c, 1, up);
    double d = rel_diff(n, acc, up);
    ok(out == JY_UK_OK && d <= 1e-10,
       "the same with a row x1'' - x5'' = b: OK and equal to the Udwadia-Phohomsiri form "
       "(outcome %d, rel diff %.3g)",
       (int)out, d);
  }
}

/* M = O diag(s^2, 0) O^T built in floating point (its null directions carry rounding, not
 * exact zeros) and rows that cover every null direction but N0: not unique. The flagged
 * coordinates must include those where N0 is large (> 0.1) and only ones where it is not
 * negligible (> 1e-6); where the line lies in between is the solver's choice. */
static void test_not_unique_rotated(Rng *r, jyUkWork *work) {
  static Case c;
  int n_out = 0, n_flag = 0, trials = 6;
  jyUkOptions opt = default_opt();
  for (int t = 0; t < trials; t++) {
    memset(&c, 0, sizeof c);
    int n = rng_int(r, 4, NMAX), rm = rng_int(r, 1, n - 2), k = n - rm;
    c.n = n;
    double o[NMAX * NMAX], rows[MMAX * NMAX];
    for (int i = 0; i < n * n; i++) o[i] = rng_gauss(r);
    orth_cols(n, n, o);
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) {
        double v = 0;
        for (int l = 0; l < rm; l++) v += o[i + l * n] * (1.0 + l % 3) * o[j + l * n];
        c.mass[i + j * n] = v;
      }
    const double *n0 = o + (size_t)rm * n; /* the null direction left free */
    int nr = rng_int(r, k - 1, n - 1);
    gen_rows(r, n, nr, o + (size_t)(rm + 1) * n, k - 1, 0.3, 0.5, 2.0, rows, MMAX);
    for (int i = 0; i < nr; i++) { /* remove the N0 component of every row */
      double d = 0;
      for (int j = 0; j < n; j++) d += rows[i + j * MMAX] * n0[j];
      for (int j = 0; j < n; j++) rows[i + j * MMAX] -= d * n0[j];
    }
    set_rows(r, &c, rows, nr);
    jyUkProblem p = problem_of(&c, 1);
    jyUkResult res;
    double acc[NMAX];
    int flags[NMAX];
    jyUkOutcome out = jy_uk_solve(work, &p, &opt, acc, &res);
    if (out == JY_UK_NOT_UNIQUE)
      n_out++;
    else
      diag("rotated singular M, n=%d rank M=%d m=%d, one null direction free: outcome %d", n, rm,
           nr, (int)out);
    int cnt = out == JY_UK_NOT_UNIQUE ? jy_uk_free_directions(work, &p, 1e-10, flags) : -1;
    int good = cnt >= 1, count = 0;
    for (int j = 0; j < n && cnt >= 0; j++) {
      if (fabs(n0[j]) > 0.1 && !flags[j]) good = 0;
      if (fabs(n0[j]) <= 1e-6 && flags[j]) good = 0;
      count += flags[j] != 0;
    }
    if (good && count == cnt) n_flag++;
  }
  ok(n_out == trials,
     "M = O diag(s^2, 0) O^T with rounding, one null direction unconstrained: "
     "NOT_UNIQUE (%d/%d)",
     n_out, trials);
  ok(n_flag == trials, "...: free_directions flags the coordinates that move in it (%d/%d)", n_flag,
     trials);
}

/* Rows of very different units (scales 1e-6 and 1e6) with a redundant pair: the rank must
 * come from the row-equilibrated matrix, and every row must be met relative to its own size. */
static void test_row_units(Rng *r, jyUkWork *work) {
  static Case c;
  double rows[MMAX * NMAX];
  memset(&c, 0, sizeof c);
  int n = 12;
  c.n = n;
  gen_spd_block(r, n, c.mass, n);
  gen_rows(r, n, 8, NULL, 0, 0, 0.5, 2, rows, MMAX);
  for (int i = 0; i < 8; i++) {
    double f = i % 2 ? 1e6 : 1e-6;
    for (int j = 0; j < n; j++) rows[i + j * MMAX] *= f;
  }
  for (int j = 0; j < n; j++) {
    rows[8 + j * MMAX] = 1e12 * rows[0 + j * MMAX];  /* row 0 again, at 1e6 */
    rows[9 + j * MMAX] = 1e-12 * rows[1 + j * MMAX]; /* row 1 again, at 1e-6 */
  }
  set_rows(r, &c, rows, 10);
  c.rank = 8;
  jyUkOptions opt = default_opt();
  jyUkProblem p = problem_of(&c, 1);
  jyUkResult res;
  double acc[NMAX], ar[MMAX], worst = 0;
  jyUkOutcome out = jy_uk_solve(work, &p, &opt, acc, &res);
  gemv(0, 10, n, c.jac, 10, acc, ar);
  for (int i = 0; i < 10; i++) {
    double ni = 0;
    for (int j = 0; j < n; j++) ni = hypot(ni, c.jac[i + j * 10]);
    worst = fmax(worst, fabs(ar[i] - c.rhs[i]) / (ni * nrm2(n, acc) + fabs(c.rhs[i])));
  }
  /* The reference gets unit rows (q'' is invariant under row scaling; an SVD cut on the raw
   * A, whose singular values span 1e12, would drop the small rows). */
  static Case cs;
  cs = c;
  for (int i = 0; i < 10; i++) {
    double ni = 0;
    for (int j = 0; j < n; j++) ni = hypot(ni, c.jac[i + j * 10]);
    for (int j = 0; j < n; j++) cs.jac[i + j * 10] /= ni;
    cs.rhs[i] /= ni;
  }
  double up[NMAX];
  ref_up2006(&cs, 1, up);
  double d = rel_diff(n, acc, up);
  /* 1e-10 as everywhere; the equilibrated problem is well conditioned. */
  ok(out == JY_UK_OK && res.rank == 8 && worst <= 1e-10 && d <= 1e-10,
     "rows at 1e-6 and 1e6 with two redundant: OK, rank 8 (got %d), worst row residual %.3g, vs "
     "Udwadia-Phohomsiri %.3g (outcome %d)",
     res.rank, worst, d, (int)out);

  /* Multipliers on the same rows: A^T mu = f, and mu minimum-norm. null(A^T) = S null(As^T)
   * with As = S A the unit-row matrix (an SVD of the raw A, singular values spanning 1e12,
   * could not tell its null space). A solver that drops the 1e-6 rows fails here. */
  double mu[MMAX], un = -1, f[NMAX], atmu[NMAX], sc[MMAX];
  double fscale = ideal_force(&c, 1, acc, f);
  jy_uk_multipliers(work, &p, acc, mu, &un);
  gemv(1, 10, n, c.jac, 10, mu, atmu);
  for (int i = 0; i < n; i++) atmu[i] -= f[i];
  double mres = nrm2(n, atmu) / (nrmF(10, n, c.jac, 10) * nrm2(10, mu) + fscale);
  for (int i = 0; i < 10; i++) { /* row scale 1/S_ii = |A_i| */
    double ni = 0;
    for (int j = 0; j < n; j++) ni = hypot(ni, c.jac[i + j * 10]);
    sc[i] = 1.0 / ni;
  }
  Svd sv;
  svd_full(10, n, cs.jac, 10, 1e-12, &sv);
  double mnull = 0, nmu = nrm2(10, mu);
  /* Row forces F_i = |A_i| mu_i = mu_i / sc_i must be orthogonal to null(As^T). */
  double rowf[MMAX];
  for (int i = 0; i < 10; i++) rowf[i] = mu[i] / sc[i];
  nmu = nrm2(10, rowf);
  for (int l = sv.rank; l < 10; l++) mnull = fmax(mnull, fabs(dot(10, sv.u + l * 10, rowf)) / nmu);
  int null_dim = 10 - sv.rank;
  svd_free(&sv);
  ok(mres <= 1e-10 && mnull <= 1e-10 && null_dim == 2,
     "...: multipliers, |A^T mu - f| relative %.3g, row forces minimum-norm %.3g "
     "(null(A^T) of dimension %d)",
     mres, mnull, null_dim);

  /* Rows whose sums of squares under- and overflow (entries ~1e-170 and ~1e165): the row
   * norms fall back to hypot, and q'' is the same as with the rows as they were. */
  static Case cx;
  cx = c;
  for (int j = 0; j < n; j++) {
    cx.jac[2 + j * 10] *= 1e-170;
    cx.jac[3 + j * 10] *= 1e165;
  }
  cx.rhs[2] *= 1e-170;
  cx.rhs[3] *= 1e165;
  jyUkProblem px = problem_of(&cx, 1);
  double accx[NMAX];
  jyUkOutcome outx = jy_uk_solve(work, &px, &opt, accx, &res);
  double dx = rel_diff(n, accx, acc);
  ok(outx == JY_UK_OK && res.rank == 8 && dx <= 1e-10,
     "rows at 1e-170 and 1e165 (squares under- and overflow): the same q'' to %.3g, rank %d", dx,
     res.rank);
}

/* Base rows (independent, well conditioned) with a conflict added; checks the outcome and
 * that row_residual is large exactly on `bad` rows. */
static void check_inconsistent(jyUkWork *work, const Case *c, int with_c, const int *bad, int nbad,
                               const char *what) {
  jyUkOptions opt = default_opt();
  jyUkProblem p = problem_of(c, with_c);
  jyUkResult res;
  double acc[NMAX];
  jyUkOutcome out = jy_uk_solve(work, &p, &opt, acc, &res);
  double big = NAN, small = NAN; /* stay NaN (and fail) unless row_residual is given */
  if (out == JY_UK_INCONSISTENT && res.row_residual) {
    big = INFINITY;
    small = 0;
    for (int i = 0; i < c->m; i++) {
      int isbad = 0;
      for (int k = 0; k < nbad; k++) isbad |= bad[k] == i;
      if (isbad)
        big = fmin(big, fabs(res.row_residual[i]));
      else
        small = fmax(small, fabs(res.row_residual[i]));
    }
  }
  ok(out == JY_UK_INCONSISTENT && res.outcome == JY_UK_INCONSISTENT,
     "%s: JY_UK_INCONSISTENT (got %d)", what, (int)out);
  /* A conflict of O(1) in b gives relative row residuals of O(0.1); rows outside the conflict
   * are met by the least-squares solution up to rounding (~1e-15). */
  ok(big >= 1e-3 && small <= 1e-10,
     "%s: row_residual large exactly on the conflicting rows (smallest there %.3g, largest "
     "elsewhere %.3g)",
     what, big, small);
  ok(res.rank == c->rank, "%s: rank %d reported as %d", what, c->rank, res.rank);
}

static void test_inconsistent(Rng *r, jyUkWork *work) {
  static Case c;
  double rows[MMAX * NMAX];
  /* (a) SPD M; rows 2 and 5 equal, b differing by 1. */
  memset(&c, 0, sizeof c);
  c.n = 10;
  gen_spd_block(r, 10, c.mass, 10);
  gen_rows(r, 10, 6, NULL, 0, 0, 0.5, 2, rows, MMAX);
  for (int j = 0; j < 10; j++) rows[5 + j * MMAX] = rows[2 + j * MMAX];
  set_rows(r, &c, rows, 6);
  c.rank = 5;
  c.rhs[5] = c.rhs[2] + 1.0;
  int bad1[2] = {2, 5};
  check_inconsistent(work, &c, 0, bad1, 2, "SPD M, two equal rows with b differing by 1");

  /* (b) SPD M; row 6 = row 1 - 2 row 3, b_6 off by 1 (conflict spread over rows 1, 3, 6). */
  memset(&c, 0, sizeof c);
  c.n = 12;
  gen_spd_block(r, 12, c.mass, 12);
  gen_rows(r, 12, 7, NULL, 0, 0, 0.5, 2, rows, MMAX);
  for (int j = 0; j < 12; j++) {
    rows[6 + j * MMAX] = rows[1 + j * MMAX] - 2 * rows[3 + j * MMAX];
    rows[7 + j * MMAX] = 0; /* plus a zero row (b = 0) */
  }
  set_rows(r, &c, rows, 8);
  c.rank = 6;
  c.rhs[6] += 1.0;
  int bad2[3] = {1, 3, 6};
  check_inconsistent(work, &c, 1, bad2, 3, "SPD M, row 6 = row 1 - 2 row 3 with b_6 off by 1");

  /* (c) singular M (massless coordinates 0 and 4, glued twice with different b). */
  memset(&c, 0, sizeof c);
  c.n = 7;
  int zero[2] = {0, 4};
  mass_with_massless(r, 7, zero, 2, c.mass);
  rows_avoiding(r, 7, 2, zero, 2, rows);
  for (int i = 2; i < 5; i++)
    for (int j = 0; j < 7; j++) rows[i + j * MMAX] = 0;
  rows[2 + 0 * MMAX] = 1, rows[2 + 1 * MMAX] = -1;
  rows[3 + 4 * MMAX] = 1, rows[3 + 6 * MMAX] = -1;
  rows[4 + 0 * MMAX] = 1, rows[4 + 1 * MMAX] = -1; /* the glue of 0 again */
  set_rows(r, &c, rows, 5);
  c.rank = 4;
  c.rhs[4] = c.rhs[2] - 0.5;
  int bad3[2] = {2, 4};
  check_inconsistent(work, &c, 1, bad3, 2, "singular M, a massless coordinate glued twice apart");

  /* (d) consistent redundancy and a rounding-level disagreement are not inconsistencies. */
  memset(&c, 0, sizeof c);
  c.n = 10;
  gen_spd_block(r, 10, c.mass, 10);
  gen_rows(r, 10, 6, NULL, 0, 0, 0.5, 2, rows, MMAX);
  for (int j = 0; j < 10; j++) {
    rows[6 + j * MMAX] = rows[2 + j * MMAX];
    rows[7 + j * MMAX] = 0.5 * rows[0 + j * MMAX] + 3 * rows[4 + j * MMAX];
  }
  set_rows(r, &c, rows, 8);
  c.rank = 6;
  jyUkOptions opt = default_opt();
  jyUkProblem p = problem_of(&c, 1);
  jyUkResult res;
  double acc[NMAX];
  jyUkOutcome out = jy_uk_solve(work, &p, &opt, acc, &res);
  ok(out == JY_UK_OK && res.rank == 6 && constraint_residual(&c, acc) <= 1e-10,
     "consistent redundant rows (a duplicate, a combination): OK, rank 6 (outcome %d, rank %d)",
     (int)out, res.rank);
  /* 1e-12 relative, 1e4 below consistency_tol = 1e-8: the drift a simulation produces. */
  c.rhs[6] += 1e-12 * fabs(c.rhs[2]);
  out = jy_uk_solve(work, &p, &opt, acc, &res);
  ok(out == JY_UK_OK && res.rank == 6,
     "a duplicate row whose b differs by 1e-12 relative is not inconsistent (outcome %d, "
     "residual %.3g)",
     (int)out, res.residual);
}

/* ---- edge cases ------------------------------------------------------------------------- */

static void test_edges(Rng *r, jyUkWork *work) {
  static Case c;
  jyUkOptions opt = default_opt();
  jyUkResult res;
  double acc[NMAX], want[NMAX], mi[NMAX * NMAX], f[NMAX];

  /* No constraints at all (a free system): q'' = M^-1 (Q + C). */
  memset(&c, 0, sizeof c);
  c.n = 6;
  gen_spd_block(r, 6, c.mass, 6);
  set_rows(r, &c, NULL, 0);
  jyUkProblem p = problem_of(&c, 1);
  jyUkOutcome out = jy_uk_solve(work, &p, &opt, acc, &res);
  spd_inverse(6, c.mass, mi);
  for (int i = 0; i < 6; i++) f[i] = c.force[i] + c.nonideal[i];
  gemv(0, 6, 6, mi, 6, f, want);
  double d = rel_diff(6, acc, want);
  ok(out == JY_UK_OK && d <= 1e-12 && res.rank == 0,
     "m = 0: q'' = M^-1 (Q + C) (outcome %d, rel diff %.3g, rank %d)", (int)out, d, res.rank);

  /* Only zero rows with b = 0: the same acceleration, rank 0. */
  c.m = 3;
  memset(c.jac, 0, sizeof c.jac);
  memset(c.rhs, 0, sizeof c.rhs);
  p = problem_of(&c, 1);
  out = jy_uk_solve(work, &p, &opt, acc, &res);
  d = rel_diff(6, acc, want);
  ok(out == JY_UK_OK && d <= 1e-12 && res.rank == 0 && isfinite(res.residual),
     "A = 0 (3 zero rows), b = 0: q'' = M^-1 (Q + C), rank 0 (outcome %d, rel diff %.3g, rank "
     "%d)",
     (int)out, d, res.rank);

  /* n = 1, m = 1: q'' = b / a. */
  memset(&c, 0, sizeof c);
  c.n = 1;
  c.m = 1;
  c.mass[0] = 2.5;
  c.force[0] = 7;
  c.jac[0] = -4;
  c.rhs[0] = 3;
  p = problem_of(&c, 0);
  out = jy_uk_solve(work, &p, &opt, acc, &res);
  /* 1e-14: a few tens of ulps of the O(1) intermediate terms u and z. */
  is_near(acc[0], -0.75, 1e-14, "n = m = 1: q'' = b / a");

  /* n = 1, massless, constrained twice consistently. */
  c.mass[0] = 0;
  c.m = 2;
  c.jac[0] = 2, c.jac[1] = -6;
  c.rhs[0] = 1, c.rhs[1] = -3;
  p = problem_of(&c, 0);
  out = jy_uk_solve(work, &p, &opt, acc, &res);
  ok(out == JY_UK_OK && fabs(acc[0] - 0.5) <= 1e-14 && res.rank == 1,
     "n = 1 massless, two proportional rows: q'' = 0.5, rank 1 (outcome %d, q'' %.17g)", (int)out,
     acc[0]);

  /* A light but not massless coordinate (1e-9 of the others), unconstrained: unique, and
   * q''_k = (Q_k + C_k) / m_k. 1e-12: the decoupled division is exact to rounding. */
  memset(&c, 0, sizeof c);
  c.n = 7;
  int light = 3;
  mass_with_massless(r, 7, &light, 1, c.mass);
  c.mass[light + light * 7] = 1e-9;
  double lrows[MMAX * NMAX];
  rows_avoiding(r, 7, 4, &light, 1, lrows);
  set_rows(r, &c, lrows, 4);
  p = problem_of(&c, 1);
  out = jy_uk_solve(work, &p, &opt, acc, &res);
  double wk = (c.force[light] + c.nonideal[light]) / 1e-9;
  ok(out == JY_UK_OK && fabs(acc[light] - wk) <= 1e-12 * fabs(wk) &&
       constraint_residual(&c, acc) <= 1e-10,
     "a coordinate of mass 1e-9 (others ~1), unconstrained: OK, q''_k = (Q_k + C_k) / m_k "
     "(outcome %d, q''_k %.17g, want %.17g)",
     (int)out, acc[light], wk);

  /* m = n + 5 > n on a small SPD system (square full-rank part plus 5 redundant rows). */
  memset(&c, 0, sizeof c);
  c.n = 4;
  gen_spd_block(r, 4, c.mass, 4);
  double rows[MMAX * NMAX];
  gen_rows(r, 4, 4, NULL, 0, 0, 0.5, 2, rows, MMAX);
  int m = add_redundant_rows(r, 4, 4, 5, rows);
  set_rows(r, &c, rows, m);
  p = problem_of(&c, 1);
  out = jy_uk_solve(work, &p, &opt, acc, &res);
  /* With rank A = n the constraints alone fix q'': A^+ b. */
  Svd s;
  svd_full(m, 4, c.jac, m, 1e-12, &s);
  double ap[4 * MMAX];
  svd_pinv(&s, ap);
  svd_free(&s);
  gemv(0, 4, m, ap, 4, c.rhs, want);
  d = rel_diff(4, acc, want);
  ok(out == JY_UK_OK && d <= 1e-10 && res.rank == 4,
     "n = 4, m = 9, rank A = n: q'' = A^+ b regardless of M, Q, C (outcome %d, rel diff %.3g)",
     (int)out, d);
}

/* The smallest redundant case, by hand: rows x1'' = 1 and 2 x1'' = 2, M = I, Q = (3, 0).
 * q'' = (1, 0); the ideal force f = M q'' - Q = (-2, 0) = A^T mu needs mu1 + 2 mu2 = -2.
 * The row forces are F1 = mu1 and F2 = 2 mu2 (|A_i| mu_i); the smallest F1^2 + F2^2 with
 * F1 + F2 = -2 shares the load equally, F = (-1, -1), so mu = (-1, -0.5). */
static void test_multipliers_by_hand(jyUkWork *work) {
  const double mass[4] = {1, 0, 0, 1}, force[2] = {3, 0}, jac[4] = {1, 2, 0, 0}, rhs[2] = {1, 2};
  jyUkProblem p = {2, 2, mass, force, NULL, jac, rhs, NULL};
  jyUkOptions opt = default_opt();
  jyUkResult res;
  double acc[2] = {0, 0}, mu[2] = {0, 0}, un = -1;
  jyUkOutcome out = jy_uk_solve(work, &p, &opt, acc, &res);
  ok(out == JY_UK_OK && res.rank == 1 && fabs(acc[0] - 1) <= 1e-14 && fabs(acc[1]) <= 1e-14,
     "rows x1'' = 1, 2 x1'' = 2, M = I, Q = (3, 0): q'' = (1, 0), rank 1 (got (%.17g, %.17g), "
     "rank %d)",
     acc[0], acc[1], res.rank);
  jy_uk_multipliers(work, &p, acc, mu, &un);
  /* 1e-14: a few ulps of O(1) numbers. */
  ok(fabs(mu[0] + 1) <= 1e-14 && fabs(mu[1] + 0.5) <= 1e-14,
     "...: equal row forces, multipliers (-1, -0.5) (got (%.17g, %.17g))", mu[0], mu[1]);
}

/* A dependent row left out of the solve (p.dropped). M = I, Q = (0, -g, 0); rows
 * (1, 1, 0) q'' = 0, (0, 1, 1) q'' = 0 and their difference (1, eps, -1) q'' = 0, the last
 * one off by eps as a state off the manifold makes it. The motion is along
 * n = (1, -1, 1) / sqrt 3: q'' = (g / 3) (1, -1, 1). With eps = 1e-8, above the rank cut,
 * solving every row finds rank 3 and q'' = 0 (locked); leaving the third row out keeps the
 * motion, measures that row's residual (eps g / (3 sqrt 2) over |A_3| = sqrt 2, against a
 * scale of |A u| = g / sqrt 2: eps / 3 relative), and the
 * multipliers are still the minimum-norm ones over all three rows. */
static void test_dropped_rows(jyUkWork *work) {
  const double g = 9.81, mass[9] = {1, 0, 0, 0, 1, 0, 0, 0, 1}, force[3] = {0, -g, 0};
  const double rhs[3] = {0, 0, 0};
  const double want[3] = {g / 3, -g / 3, g / 3};
  double exact_mu[3], acc[3], mu[3];
  jyUkOptions opt = default_opt();
  jyUkResult res;
  unsigned char dropped[3] = {0, 0, 1}, flags[3];
  for (int k = 0; k < 2; k++) {
    double eps = k ? 1e-8 : 0;
    const double jac[9] = {1, 0, 1, 1, 1, eps, 0, 1, -1}; /* column-major, rows as above */
    jyUkProblem all = {3, 3, mass, force, NULL, jac, rhs, NULL}, some = all;
    some.dropped = dropped;
    int strict = jy_uk_dependent_rows(work, &all, 1e-10, 0, -1, flags);
    if (k == 0) {
      ok(strict == 1 && flags[2] && !flags[0] && !flags[1],
         "rows r1, r2, r1 - r2: the last one declared is the dependent one (%d rows: %d %d %d)",
         strict, flags[0], flags[1], flags[2]);
      jy_uk_solve(work, &all, &opt, acc, &res);
      jy_uk_multipliers(work, &all, acc, exact_mu, NULL);
      continue;
    }
    int loose = jy_uk_dependent_rows(work, &all, 1e-10, 1e-3, 1, flags);
    ok(strict == 0 && loose == 1 && flags[2],
       "off the manifold by 1e-8: strictly independent, dependent within dependent_rcond 1e-3 "
       "(%d, %d rows)",
       strict, loose);
    jy_uk_solve(work, &all, &opt, acc, &res);
    ok(res.rank == 3 && fabs(acc[0]) + fabs(acc[1]) + fabs(acc[2]) < 1e-6,
       "solving every row there locks the motion (rank %d, q'' = (%.3g, %.3g, %.3g))", res.rank,
       acc[0], acc[1], acc[2]);
    jyUkOutcome out = jy_uk_solve(work, &some, &opt, acc, &res);
    double d = 0, dmu = 0;
    for (int j = 0; j < 3; j++) d = fmax(d, fabs(acc[j] - want[j]));
    /* eps / 3 = 3.3e-9 relative; the bounds only check that it is measured, not lost. */
    ok(out == JY_UK_OK && d <= 1e-12 && res.dropped_residual > 1e-9 && res.dropped_residual <= 1e-8,
       "with the dependent row left out: q'' = (g/3)(1, -1, 1) to %.3g, the row's residual "
       "measured (%.3g)",
       d, res.dropped_residual);
    jy_uk_multipliers(work, &some, acc, mu, NULL);
    for (int i = 0; i < 3; i++) dmu = fmax(dmu, fabs(mu[i] - exact_mu[i]));
    /* The multipliers move by O(eps g) = 1e-7 with the rows. */
    ok(dmu <= 1e-6, "...: multipliers minimum-norm over all rows, as on the manifold (%.3g)", dmu);
  }
}

/* ---- main ----------------------------------------------------------------------------- */

/* The regular case (the kept rows independent) goes through an unpivoted QR of B^T, not
 * the rank-revealing one: on random problems with a full or a diagonal M it agrees with the
 * SVD reference to 1e-12 relative (cond(B) below ~30 here: rounding leaves ~1e-14; a wrong
 * formula leaves O(1)), and reports rank m. A rank loss (row 0 repeated, scaled by 2, with a
 * consistent b) makes the last pivot vanish: the rank-revealing solve takes over, reports
 * rank m (the regular path would say m + 1), and the acceleration is the same. A row within
 * 1e-6 rad of row 0 (below the regular path's 1e-3 cut, above the rank cut) is solved by the
 * rank-revealing path as a full-rank row: rank m + 1, A q'' = b on every row. */
static void test_regular_path(Rng *r, jyUkWork *w) {
  static Case c, dup;
  double worst = 0, worst_dup = 0, worst_near = 0;
  int ranks_ok = 1, dup_ranks_ok = 1, near_ranks_ok = 1;
  for (int trial = 0; trial < 20; trial++) {
    int n = rng_int(r, 2, NMAX - 1), m = rng_int(r, 1, n - 1 < MMAX - 1 ? n - 1 : MMAX - 1);
    memset(&c, 0, sizeof c);
    c.n = n, c.m = m, c.rank = m;
    if (trial % 2)
      gen_spd_block(r, n, c.mass, n);
    else
      for (int j = 0; j < n; j++) c.mass[j + (size_t)j * n] = exp(rng_range(r, -1, 1));
    gen_rows(r, n, m, NULL, 0, 0, 0.5, 2, c.jac, m);
    for (int j = 0; j < n; j++) c.force[j] = rng_gauss(r);
    for (int i = 0; i < m; i++) c.rhs[i] = rng_gauss(r);
    jyUkProblem p = problem_of(&c, 0);
    jyUkOptions opt = default_opt();
    jyUkResult res;
    double acc[NMAX], ref[NMAX], acc_dup[NMAX];
    int ref_rank = 0;
    jyUkOutcome out = jy_uk_solve(w, &p, &opt, acc, &res);
    ref_b_form(&c, 0, ref, &ref_rank);
    worst = max_d(worst, rel_diff(n, acc, ref));
    ranks_ok &= out == JY_UK_OK && res.rank == m && ref_rank == m;
    /* the same with row 0 repeated (scaled by 2) as row m */
    dup = c;
    dup.m = m + 1;
    for (int j = 0; j < n; j++) {
      for (int i = 0; i < m; i++) dup.jac[i + (size_t)j * (m + 1)] = c.jac[i + (size_t)j * m];
      dup.jac[m + (size_t)j * (m + 1)] = 2 * c.jac[(size_t)j * m];
    }
    dup.rhs[m] = 2 * c.rhs[0];
    p = problem_of(&dup, 0);
    out = jy_uk_solve(w, &p, &opt, acc_dup, &res);
    worst_dup = max_d(worst_dup, rel_diff(n, acc_dup, acc));
    dup_ranks_ok &= out == JY_UK_OK && res.rank == m;
    /* row m now 1e-6 rad off row 0's direction, with its own b */
    for (int j = 0; j < n; j++)
      dup.jac[m + (size_t)j * (m + 1)] += (j == trial % n ? 1e-6 : 0) * fabs(c.jac[(size_t)j * m]);
    dup.rhs[m] = 2 * c.rhs[0] + 1e-7;
    if (m + 1 <= n) {
      p = problem_of(&dup, 0);
      out = jy_uk_solve(w, &p, &opt, acc_dup, &res);
      near_ranks_ok &= out == JY_UK_OK && res.rank == m + 1;
      worst_near = max_d(worst_near, res.residual);
    }
  }
  ok(ranks_ok && worst <= 1e-12,
     "regular rows (unpivoted QR of B^T): q'' agrees with the SVD reference to %.2e (bound 1e-12), "
     "rank m",
     worst);
  ok(dup_ranks_ok && worst_dup <= 1e-12,
     "a repeated row falls back to the rank-revealing solve: rank m of m + 1 rows, q'' the same "
     "to %.2e (bound 1e-12)",
     worst_dup);
  ok(near_ranks_ok && worst_near <= 1e-8,
     "a row 1e-6 rad from another: the rank-revealing solve keeps it, rank m + 1, residual "
     "%.2e (bound 1e-8: rounding amplified by 1/sin 1e-6)",
     worst_near);
}

int main(void) {
  Rng rng = {UINT64_C(0x9E3779B97F4A7C15)};
  enum { CASES = 60 };
  static Case c;

  /* Memory: everything comes from the given allocator and goes back to it. */
  {
    Count cnt = {0, 0, 0};
    jyAllocator al = {c_alloc, c_realloc, c_free, &cnt};
    jyUkWork *w = jy_uk_create(&al, NMAX, MMAX);
    int made = w != NULL;
    long after_create = cnt.allocs;
    if (w) {
      Rng r2 = {42};
      gen_case(&r2, F_PSD_MASSLESS, &c);
      jyUkProblem p = problem_of(&c, 1);
      jyUkOptions opt = default_opt();
      jyUkResult res;
      double acc[NMAX], mu[MMAX], un;
      jy_uk_solve(w, &p, &opt, acc, &res);
      jy_uk_multipliers(w, &p, acc, mu, &un);
    }
    long after_solve = cnt.allocs;
    jy_uk_destroy(w);
    jy_uk_destroy(NULL);
    ok(made && after_create > 0 && after_solve == after_create && cnt.allocs == cnt.frees,
       "jy_uk_create takes its memory from the allocator, solve/multipliers none, destroy returns "
       "it all (allocs %ld, after solve %ld, frees %ld)",
       after_create, after_solve, cnt.frees);
  }

  jyUkWork *big = jy_uk_create(NULL, NMAX, MMAX);
  if (!big) {
    ok(0, "jy_uk_create(NULL, %d, %d)", NMAX, MMAX);
    plan(tap_count);
    return done();
  }

  /* The solve must not write to its inputs. */
  {
    static Case c0;
    gen_case(&rng, F_PSD_MASSLESS, &c);
    c0 = c;
    jyUkProblem p = problem_of(&c, 1);
    jyUkOptions opt = default_opt();
    jyUkResult res;
    double acc[NMAX], mu[MMAX], un;
    jy_uk_solve(big, &p, &opt, acc, &res);
    jy_uk_multipliers(big, &p, acc, mu, &un);
    ok(memcmp(&c, &c0, sizeof c) == 0, "solve and multipliers leave M, Q, C, A, b untouched");
  }

  static Stats all[F_COUNT];
  for (int fam = 0; fam < F_COUNT; fam++) {
    Stats st;
    memset(&st, 0, sizeof st);
    st.nmin = st.mmin = 1 << 30;
    int spd = fam <= F_SPD_DIAGONAL;
    for (int k = 0; k < CASES; k++) {
      gen_case(&rng, fam, &c);
      /* Every other case gets a workspace of exactly its own size. */
      jyUkWork *w = big, *own = NULL;
      if (k % 2) {
        own = jy_uk_create(NULL, c.n, c.m);
        if (own) w = own;
      }
      run_case(w, &c, spd, &st);
      jy_uk_destroy(own);
    }
    const char *f = family_name[fam];
    diag("%s: %d cases, n %d..%d, m %d..%d, %d redundant, %d with C", f, st.cases, st.nmin, st.nmax,
         st.mmin, st.mmax, st.n_redundant, st.n_with_c);
    ok(st.bad_outcome == 0 && st.bad_rank == 0 && st.ref_rank_bad == 0,
       "%s: outcome OK and rank as constructed in all cases (%d bad outcomes, %d bad ranks; "
       "reference SVD rank off in %d)",
       f, st.bad_outcome, st.bad_rank, st.ref_rank_bad);
    /* The tolerances below are the policy stated at the top. */
    ok(st.res <= 1e-10, "%s: |A q'' - b| / (|A||q''| + |b|) worst %.3g", f, st.res);
    ok(st.rep_res <= 1e-10, "%s: result.residual worst %.3g", f, st.rep_res);
    if (spd) {
      diag("%s: cond(A M^-1/2) at most %.3g; eigenvalues of A M^-1 A^T: dropped/kept at most "
           "%.3g",
           f, st.cond_max, st.gram_gap);
      ok(st.morth <= 1e-10,
         "%s: Delta_ideal^T M Delta_nonideal / (|Delta_ideal|_M |Delta_nonideal|_M) worst %.3g", f,
         st.morth);
      ok(st.form_b_r <= 1,
         "%s: vs a + M^-1/2 B^+ (b - A a) + M^-1/2 (I - B^+B) M^-1/2 C: worst %.3g "
         "(worst diff/tol %.3g, tol max(1e-10, 100 eps cond B))",
         f, st.form_b, st.form_b_r);
      ok(st.form_m_r <= 1,
         "%s: vs a + A_M^+ (b - A a) + (I - A_M^+ A) c with A_M^+ = M^-1 A^T (A M^-1 A^T)^+: "
         "worst %.3g (worst diff/tol %.3g, tol max(1e-10, 10 eps cond(B)^2))",
         f, st.form_m, st.form_m_r);
      ok(st.form_u_r <= 1,
         "%s: vs u + A_M^+ (b - A u), u = M^-1 (Q + C): worst %.3g (worst diff/tol %.3g, tol "
         "max(1e-10, 10 eps cond(B)^2))",
         f, st.form_u, st.form_u_r);
    }
    ok(st.form_up_r <= 1,
       "%s: vs [(I - A^+A) M; A]^+ [(I - A^+A)(Q + C); b]: worst %.3g (worst diff/tol %.3g)", f,
       st.form_up, st.form_up_r);
    ok(st.aug_r <= 1,
       "%s: augment_scale 1e-3 and 1e3 vs 1: worst rel change %.3g (at %g; worst "
       "change/tol %.3g)",
       f, st.aug, st.aug_at, st.aug_r);
    ok(st.vwork <= 1e-10,
       "%s: virtual work |w^T (M q'' - Q - C)| / (|M q''| + |Q| + |C|), w in null(A): worst %.3g",
       f, st.vwork);
    ok(st.mu_res <= 1e-10, "%s: multipliers |A^T mu - (M q'' - Q - C)| relative worst %.3g", f,
       st.mu_res);
    /* The multipliers are minimum-norm in the row forces |A_i| mu_i (the size of the force
     * each row applies), which does not depend on the units rows are written in. */
    ok(st.mu_snull <= 1e-10,
       "%s: row forces |A_i| mu_i minimum-norm (orthogonal to null(As^T)): worst %.3g", f,
       st.mu_snull);
    diag("%s: (not asserted) plain mu orthogonal to null(A^T): worst %.3g", f, st.mu_null);
    ok(st.mu_unexpl <= 1e-10, "%s: multipliers 'unexplained' / (|M q''| + |Q| + |C|) worst %.3g", f,
       st.mu_unexpl);
    all[fam] = st;
  }

  /* 'unexplained' must see a wrong acceleration: move q'' by d in null(A) (A q'' = b still
   * holds); then M q'' - Q - C gains M d, whose part outside range(A^T) is unexplained. */
  {
    gen_case(&rng, F_SPD_REDUNDANT, &c);
    while (c.rank >= c.n) gen_case(&rng, F_SPD_REDUNDANT, &c);
    int n = c.n, m = c.m;
    jyUkProblem p = problem_of(&c, 1);
    jyUkOptions opt = default_opt();
    jyUkResult res;
    double acc[NMAX], mu[MMAX], un = -1, md[NMAX], expect = 0;
    jy_uk_solve(big, &p, &opt, acc, &res);
    Svd s;
    svd_full(m, n, c.jac, m, 1e-12, &s);
    for (int i = 0; i < n; i++) acc[i] += 1e-3 * s.vt[s.rank + i * n];
    for (int i = 0; i < n; i++) {
      double v = 0;
      for (int l = 0; l < n; l++) v += c.mass[i + l * n] * 1e-3 * s.vt[s.rank + l * n];
      md[i] = v;
    }
    for (int l = s.rank; l < n; l++) {
      double y = 0;
      for (int i = 0; i < n; i++) y += s.vt[l + i * n] * md[i];
      expect += y * y;
    }
    expect = sqrt(expect); /* |P_null(A) M d| */
    svd_free(&s);
    jy_uk_multipliers(big, &p, acc, mu, &un);
    /* Within a factor 10 either way: the norm used (2-norm, max-norm, scaled) is the solver's
     * choice; a zero or an O(1) value means it does not measure what it says. */
    ok(un >= 0.1 * expect && un <= 10 * expect,
       "multipliers of a wrong q'' (moved 1e-3 along null(A)): unexplained %.3g vs |P_null(A) M "
       "d| = %.3g",
       un, expect);
  }

  test_multipliers_by_hand(big);
  test_dropped_rows(big);
  test_not_unique(&rng, big);
  test_not_unique_rotated(&rng, big);
  test_row_units(&rng, big);
  test_inconsistent(&rng, big);
  test_edges(&rng, big);
  test_regular_path(&rng, big);

  /* One table of the worst values, for the project's notes. */
  diag("summary (worst over %d seeded cases per family; '-' = not applicable):", CASES);
  diag("%-10s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s %9s", "family", "A q''=b", "M-orth", "B form",
       "Minv form", "u form", "UP2006", "aug 1e+-3", "virt.work", "A^T mu=f", "mu minnorm",
       "cond B");
  static const char *tag[F_COUNT] = {"spd-full", "spd-redund", "spd-scaled",
                                     "spd-diag", "psd-lowrnk", "psd-mless"};
  for (int fam = 0; fam < F_COUNT; fam++) {
    const Stats *a = &all[fam];
    int spd = fam <= F_SPD_DIAGONAL;
    char b1[16] = "-", b2[16] = "-", b3[16] = "-", b4[16] = "-", b5[16] = "-";
    if (spd) {
      snprintf(b1, sizeof b1, "%.2e", a->morth);
      snprintf(b2, sizeof b2, "%.2e", a->form_b);
      snprintf(b3, sizeof b3, "%.2e", a->form_m);
      snprintf(b4, sizeof b4, "%.2e", a->form_u);
      snprintf(b5, sizeof b5, "%.2e", a->cond_max);
    }
    diag("%-10s %9.2e %9s %9s %9s %9s %9.2e %9.2e %9.2e %9.2e %9.2e %9s", tag[fam], a->res, b1, b2,
         b3, b4, a->form_up, a->aug, a->vwork, a->mu_res, a->mu_null, b5);
  }

  jy_uk_destroy(big);
  plan(tap_count);
  return done();
}
