/* The acceleration solve for large models with a diagonal, positive mass matrix (rigid
 * bodies, point masses: no massless coordinates left after glue elimination).
 *
 * With W = M^-1 diagonal, the Udwadia–Kalaba acceleration is q'' = u + W A^T y with
 * u = W (Q + C) and y the minimum-norm solution of (A W A^T) y = b - A u. A W A^T is as
 * sparse as the constraint graph (rows share a column only through a common part), so
 * CHOLMOD factors it, unshifted, in a fill-reducing ordering found once, and the answer's
 * backward error is checked to be rounding. Where rows are (nearly) dependent, a redundant
 * constraint or a mechanism passing a singular configuration, the factor's pivots say so
 * and the KKT or dense rank-revealing solve is used for that evaluation instead.
 * Rows are scaled to unit length first, as in the dense solve. */
#include "dyn_sparse.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <suitesparse/cholmod.h>

#include "mem.h"
#include "vec.h"

struct jySparseWork {
  jyAllocator alloc;
  int n, m;
  cholmod_common common;
  cholmod_sparse *f;             /* F = S A W^1/2, m x n, fixed pattern */
  cholmod_sparse *s;             /* F F^T, upper triangle (stype 1), fixed pattern */
  int *pair_a, *pair_b, *pair_s; /* S entry pair_s += F entries pair_a * pair_b */
  int *perm, *inv;               /* S is stored as P S P^T: row k of it is row perm[k] of S */
  int npairs;
  cholmod_factor *l; /* of F F^T */
  cholmod_dense *rhs;
  double *row_scale, *u, *r, *sy, *y;
  double *root_w, *bound;       /* per coordinate M_jj^-1/2; per row |b| + |A| |q''|'s terms */
  double *inv_mass, *inv_pivot; /* per coordinate M_jj^-1; per row of L 1 / L_jj */
  /* The values F and the factor were made from (factored): a solve with the same M, A and
   * rows left out (a projection after the right-hand side at that state) reuses them. */
  int factored;
  int mass_known; /* root_w and inv_mass are those of factored_mass (M rarely changes) */
  double *factored_mass, *factored_jac;
  unsigned char *factored_dropped;
  int started;
  int checked; /* the last solve's answer passed the backward-error test with this factor */
};

void jy_sparse_destroy(jySparseWork *w) {
  if (!w) return;
  if (w->started) {
    cholmod_free_sparse(&w->f, &w->common);
    cholmod_free_sparse(&w->s, &w->common);
    cholmod_free_factor(&w->l, &w->common);
    cholmod_free_dense(&w->rhs, &w->common);
    cholmod_finish(&w->common);
  }
  jyAllocator a = w->alloc;
  jy_free(&a, w->row_scale);
  jy_free(&a, w->u);
  jy_free(&a, w->r);
  jy_free(&a, w->sy);
  jy_free(&a, w->y);
  jy_free(&a, w->root_w);
  jy_free(&a, w->bound);
  jy_free(&a, w->inv_mass);
  jy_free(&a, w->inv_pivot);
  jy_free(&a, w->factored_mass);
  jy_free(&a, w->factored_jac);
  jy_free(&a, w->factored_dropped);
  jy_free(&a, w->pair_a);
  jy_free(&a, w->pair_b);
  jy_free(&a, w->pair_s);
  jy_free(&a, w->perm);
  jy_free(&a, w->inv);
  jy_free(&a, w);
}

static int compare_ints(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* F by rows (row_ptr, row_col, row_entry: the columns and entry indices of each row's entries)
 * next to its columns (cp, ri), and the row order of S (inv, perm). */
typedef struct {
  const int *cp, *ri, *inv, *perm, *row_ptr, *row_col, *row_entry;
} ProductWalk;

/* The products F_ia F_ib that land in column k of S = F F^T (upper, rows in the order inv):
 * row perm[k]'s entries a times the entries b of the same F columns in rows i < k, and each
 * entry a times itself (i = k). Every unordered pair of entries of an F column lands in
 * exactly one column this way. Stores (a, b, i) when the arrays are given; returns how many. */
static int column_products(const ProductWalk *pw, int k, int *ea, int *eb, int *row) {
  int count = 0, r = pw->perm[k];
  for (int at = pw->row_ptr[r]; at < pw->row_ptr[r + 1]; at++) {
    int j = pw->row_col[at], a = pw->row_entry[at];
    for (int b = pw->cp[j]; b < pw->cp[j + 1]; b++) {
      int i = pw->inv[pw->ri[b]];
      if (i > k || (i == k && b != a)) continue;
      if (ea) {
        ea[count] = a;
        eb[count] = b;
        row[count] = i;
      }
      count++;
    }
  }
  return count;
}

/* F's row structure next to its columns: the entries of row r are row_col / row_entry
 * [row_ptr[r] .. row_ptr[r + 1]) (their columns and entry indices). stamp: m zeros. */
static void row_structure(const cholmod_sparse *f, int m, int *row_ptr, int *row_col,
                          int *row_entry, int *stamp) {
  const int *cp = f->p, *ri = f->i;
  int n = (int)f->ncol;
  for (int e = 0; e < cp[n]; e++) row_ptr[ri[e] + 1]++;
  for (int r = 0; r < m; r++) row_ptr[r + 1] += row_ptr[r];
  for (int j = 0; j < n; j++)
    for (int e = cp[j]; e < cp[j + 1]; e++) {
      int at = row_ptr[ri[e]] + stamp[ri[e]]++;
      row_col[at] = j;
      row_entry[at] = e;
    }
}

/* The entries of S's upper triangle: in column k the rows its products land in, and k
 * itself (a left-out row's unit diagonal needs a place). stamp: m scratch; ea, eb, erow: the
 * widest column. */
static int count_entries(const ProductWalk *pw, int m, int *stamp, int *ea, int *eb, int *erow) {
  int nnz = 0;
  for (int i = 0; i < m; i++) stamp[i] = -1;
  for (int k = 0; k < m; k++) {
    int c = column_products(pw, k, ea, eb, erow);
    stamp[k] = k;
    nnz++;
    for (int q = 0; q < c; q++)
      if (stamp[erow[q]] != k) {
        stamp[erow[q]] = k;
        nnz++;
      }
  }
  return nnz;
}

/* The upper-triangle pattern of F F^T (stype 1) in the row order inv, and for every product
 * of two entries of a column of F where it lands in S. Built column by column from F's row
 * and column structure: time and memory in proportion to the products, not to m^2.
 * Allocation happens here only. */
static int build_product_pattern(jySparseWork *w, const int *inv) {
  int m = w->m, n = w->n, nnz_f = ((const int *)w->f->p)[n];
  const int *cp = w->f->p, *ri = w->f->i;
  int *row_ptr = jy_calloc(&w->alloc, (size_t)m + 1, sizeof(int));
  int *row_col = jy_calloc(&w->alloc, (size_t)nnz_f + 1, sizeof(int));
  int *row_entry = jy_calloc(&w->alloc, (size_t)nnz_f + 1, sizeof(int));
  int *stamp = jy_calloc(&w->alloc, (size_t)m, sizeof(int));
  int *rows = jy_calloc(&w->alloc, (size_t)m, sizeof(int));
  int *ea = NULL, *eb = NULL, *erow = NULL, status = -1;
  if (!row_ptr || !row_col || !row_entry || !stamp || !rows) goto done;
  row_structure(w->f, m, row_ptr, row_col, row_entry, stamp);
  ProductWalk pw = {cp, ri, inv, w->perm, row_ptr, row_col, row_entry};
  int npairs = 0, widest = 1;
  for (int k = 0; k < m; k++) {
    int c = column_products(&pw, k, NULL, NULL, NULL);
    npairs += c;
    if (c > widest) widest = c;
  }
  ea = jy_calloc(&w->alloc, (size_t)widest, sizeof(int));
  eb = jy_calloc(&w->alloc, (size_t)widest, sizeof(int));
  erow = jy_calloc(&w->alloc, (size_t)widest, sizeof(int));
  if (!ea || !eb || !erow) goto done;
  int nnz = count_entries(&pw, m, stamp, ea, eb, erow);
  w->s =
    cholmod_allocate_sparse((size_t)m, (size_t)m, (size_t)nnz, 1, 1, 1, CHOLMOD_REAL, &w->common);
  w->pair_a = jy_calloc(&w->alloc, (size_t)npairs + 1, sizeof(int));
  w->pair_b = jy_calloc(&w->alloc, (size_t)npairs + 1, sizeof(int));
  w->pair_s = jy_calloc(&w->alloc, (size_t)npairs + 1, sizeof(int));
  if (!w->s || !w->pair_a || !w->pair_b || !w->pair_s) goto done;
  /* Fill: column k's rows sorted (CHOLMOD's sorted form), then where each product lands
   * (stamp[i] becomes the position of row i in column k). */
  int *sp = w->s->p, *si = w->s->i, at = 0;
  for (int i = 0; i < m; i++) stamp[i] = -1;
  for (int k = 0; k < m; k++) {
    int c = column_products(&pw, k, ea, eb, erow), nr = 0;
    rows[nr++] = k;
    stamp[k] = -2 - k; /* seen in column k: -2 - k, never a position (>= 0) */
    for (int q = 0; q < c; q++)
      if (stamp[erow[q]] != -2 - k) {
        stamp[erow[q]] = -2 - k;
        if (erow[q] != k) rows[nr++] = erow[q];
      }
    qsort(rows, (size_t)nr, sizeof(int), compare_ints);
    sp[k] = at;
    for (int q = 0; q < nr; q++) {
      stamp[rows[q]] = at;
      si[at++] = rows[q];
    }
    for (int q = 0; q < c; q++) {
      w->pair_a[w->npairs] = ea[q];
      w->pair_b[w->npairs] = eb[q];
      w->pair_s[w->npairs] = stamp[erow[q]];
      w->npairs++;
    }
  }
  sp[m] = at;
  double *sx = w->s->x;
  for (int k = 0; k < at; k++) sx[k] = 1.0; /* any non-zero for the analysis */
  status = 0;
done:
  jy_free(&w->alloc, row_ptr);
  jy_free(&w->alloc, row_col);
  jy_free(&w->alloc, row_entry);
  jy_free(&w->alloc, stamp);
  jy_free(&w->alloc, rows);
  jy_free(&w->alloc, ea);
  jy_free(&w->alloc, eb);
  jy_free(&w->alloc, erow);
  return status;
}

/* The first factorization allocates L's values and CHOLMOD's workspace: it is done here,
 * on the identity, so that no solve allocates and memory running out is an error of the
 * creation rather than a silently different (dense) solve later. 0, or -1. */
static int warm_up(jySparseWork *w) {
  double identity_shift[2] = {1, 0}; /* beta I + 0: factors whatever the pattern */
  memset(w->s->x, 0, sizeof(double) * (size_t)((int *)w->s->p)[w->m]);
  cholmod_factorize_p(w->s, identity_shift, NULL, 0, w->l, &w->common);
  return w->common.status == CHOLMOD_OUT_OF_MEMORY ? -1 : 0; /* else a solve will tell */
}

jySparseWork *jy_sparse_create(const jyAllocator *alloc, const jyCsc *jac) {
  if (!jac || jac->ncol <= 0 || jac->nrow <= 0) return NULL;
  int n = jac->ncol, m = jac->nrow;
  jyAllocator a = alloc ? *alloc : (jyAllocator){0};
  jySparseWork *w = jy_calloc(&a, 1, sizeof *w);
  if (!w) return NULL;
  w->alloc = a;
  w->n = n;
  w->m = m;
  w->row_scale = jy_calloc(&a, (size_t)m, sizeof(double));
  w->u = jy_calloc(&a, (size_t)n, sizeof(double));
  w->r = jy_calloc(&a, (size_t)m, sizeof(double));
  w->sy = jy_calloc(&a, (size_t)m, sizeof(double));
  w->y = jy_calloc(&a, (size_t)m, sizeof(double));
  w->root_w = jy_calloc(&a, (size_t)n, sizeof(double));
  w->bound = jy_calloc(&a, (size_t)m, sizeof(double));
  w->inv_mass = jy_calloc(&a, (size_t)n, sizeof(double));
  w->inv_pivot = jy_calloc(&a, (size_t)m, sizeof(double));
  w->perm = jy_calloc(&a, (size_t)m, sizeof(int));
  w->inv = jy_calloc(&a, (size_t)m, sizeof(int));
  w->factored_mass = jy_calloc(&a, (size_t)n, sizeof(double));
  w->factored_jac = jy_calloc(&a, (size_t)jac->p[n] + 1, sizeof(double));
  w->factored_dropped = jy_calloc(&a, (size_t)m, 1);
  if (!w->row_scale || !w->u || !w->r || !w->sy || !w->y || !w->root_w || !w->bound ||
      !w->inv_mass || !w->inv_pivot || !w->perm || !w->inv || !w->factored_mass ||
      !w->factored_jac || !w->factored_dropped)
    goto fail;
  cholmod_start(&w->common);
  w->started = 1;
  w->common.print = 0;
  w->common.supernodal = CHOLMOD_SIMPLICIAL; /* small, banded-like factors */
  w->common.final_ll = 1;
  size_t nnz = (size_t)jac->p[n];
  w->f = cholmod_allocate_sparse((size_t)m, (size_t)n, nnz > 0 ? nnz : 1, 1, 1, 0, CHOLMOD_REAL,
                                 &w->common);
  if (!w->f) goto fail;
  double *fx = w->f->x; /* F has A's pattern: entry k of F is entry k of A */
  memcpy(w->f->p, jac->p, sizeof(int) * ((size_t)n + 1));
  memcpy(w->f->i, jac->i, sizeof(int) * (nnz > 0 ? nnz : 1));
  for (size_t k = 0; k < nnz; k++) fx[k] = 1.0; /* any non-zero for the analysis */
  /* S = F F^T is formed here, not by CHOLMOD, and already in the fill-reducing order, so
   * that factorizing it permutes and transposes nothing (which would allocate on every
   * call): first the pattern in the natural order to let CHOLMOD choose the ordering, then
   * the permuted pattern, analysed with the natural ordering. */
  for (int i = 0; i < m; i++) w->perm[i] = w->inv[i] = i;
  if (build_product_pattern(w, w->inv) != 0) goto fail;
  cholmod_factor *order = cholmod_analyze(w->s, &w->common);
  if (!order) goto fail;
  const int *perm = order->Perm;
  for (int k = 0; k < m; k++) {
    w->perm[k] = perm[k];
    w->inv[perm[k]] = k;
  }
  cholmod_free_factor(&order, &w->common);
  cholmod_free_sparse(&w->s, &w->common);
  jy_free(&a, w->pair_a);
  jy_free(&a, w->pair_b);
  jy_free(&a, w->pair_s);
  w->pair_a = w->pair_b = w->pair_s = NULL;
  w->npairs = 0;
  if (build_product_pattern(w, w->inv) != 0) goto fail;
  w->common.nmethods = 1;
  w->common.method[0].ordering = CHOLMOD_NATURAL;
  w->common.postorder = 0;
  w->l = cholmod_analyze(w->s, &w->common);
  if (w->l && w->l->ordering != CHOLMOD_NATURAL) goto fail; /* solve_factor assumes none */
  w->rhs = cholmod_zeros((size_t)m, 1, CHOLMOD_REAL, &w->common);
  if (!w->l || !w->rhs || warm_up(w) != 0) goto fail;
  return w;
fail:
  jy_sparse_destroy(w);
  return NULL;
}

/* x <- (L L^T)^-1 x with the simplicial factor CHOLMOD computed (natural ordering, so no
 * permutation; column-compressed, diagonal first in each column) and its pivots' reciprocals
 * (a chain of dependent divisions is most of a banded solve's time). cholmod_solve2 would
 * reallocate its workspace on every call. */
static void solve_factor(const cholmod_factor *l, const double *inv_pivot, double *x) {
  const int *lp = l->p, *li = l->i, *lnz = l->nz;
  const double *lx = l->x;
  int n = (int)l->n;
  /* x[j] is kept in a register while its column is walked (li[k] > j: no alias), so that
   * no entry waits on the store of the one before it. */
  for (int j = 0; j < n; j++) { /* L z = x */
    double xj = x[j] * inv_pivot[j];
    x[j] = xj;
    for (int k = lp[j] + 1; k < lp[j] + lnz[j]; k++) x[li[k]] -= lx[k] * xj;
  }
  for (int j = n - 1; j >= 0; j--) { /* L^T x = z */
    double xj = x[j];
    for (int k = lp[j] + 1; k < lp[j] + lnz[j]; k++) xj -= lx[k] * x[li[k]];
    x[j] = xj * inv_pivot[j];
  }
}

/* solve_factor on two right-hand sides, walking L once: the two chains of dependent
 * operations interleave. */
static void solve_factor_pair(const cholmod_factor *l, const double *inv_pivot, double *x,
                              double *z) {
  const int *lp = l->p, *li = l->i, *lnz = l->nz;
  const double *lx = l->x;
  int n = (int)l->n;
  for (int j = 0; j < n; j++) {
    double xj = x[j] * inv_pivot[j], zj = z[j] * inv_pivot[j];
    x[j] = xj;
    z[j] = zj;
    for (int k = lp[j] + 1; k < lp[j] + lnz[j]; k++) {
      x[li[k]] -= lx[k] * xj;
      z[li[k]] -= lx[k] * zj;
    }
  }
  for (int j = n - 1; j >= 0; j--) {
    double xj = x[j], zj = z[j];
    for (int k = lp[j] + 1; k < lp[j] + lnz[j]; k++) {
      xj -= lx[k] * x[li[k]];
      zj -= lx[k] * z[li[k]];
    }
    x[j] = xj * inv_pivot[j];
    z[j] = zj * inv_pivot[j];
  }
}

int jy_sparse_applies(const double *mass_diag, int n) {
  for (int j = 0; j < n; j++)
    if (!(mass_diag[j] > 0)) return 0;
  return 1;
}

/* u = W (Q + C), the unconstrained acceleration. */
static void free_acceleration(jySparseWork *w, const jyUkProblem *p) {
  for (int j = 0; j < p->n; j++)
    w->u[j] = (p->force[j] + (p->nonideal ? p->nonideal[j] : 0)) * w->inv_mass[j];
}

/* Whether F and the factor are those of this M, A and rows left out; if not, they are
 * recorded as such (the caller factors, and clears w->factored when that fails), and
 * M^-1/2 and M^-1 made for a new M. */
static int factor_current(jySparseWork *w, const jyUkProblem *p, const double *mass,
                          const double *jac) {
  int n = p->n, m = p->m, same = w->factored;
  size_t nnz = (size_t)((const int *)w->f->p)[n];
  for (int i = 0; same && i < m; i++)
    same = w->factored_dropped[i] == (p->dropped && p->dropped[i]);
  int same_mass = w->mass_known && !memcmp(w->factored_mass, mass, sizeof(double) * (size_t)n);
  same = same && same_mass && !memcmp(w->factored_jac, jac, sizeof(double) * nnz);
  if (same) return 1;
  for (int i = 0; i < m; i++) w->factored_dropped[i] = p->dropped && p->dropped[i];
  if (!same_mass) {
    memcpy(w->factored_mass, mass, sizeof(double) * (size_t)n);
    for (int j = 0; j < n; j++) {
      w->root_w[j] = 1.0 / sqrt(mass[j]);
      w->inv_mass[j] = 1.0 / mass[j];
    }
    w->mass_known = 1;
  }
  memcpy(w->factored_jac, jac, sizeof(double) * nnz);
  w->factored = 1;
  return 0;
}

/* F = S A W^1/2 in the fixed pattern (S: rows scaled to unit length, dropped rows zero).
 * Walks the pattern (a few entries per row), not dense rows. */
static void scaled_rows(jySparseWork *w, const jyUkProblem *p, const double *jac) {
  int n = p->n, m = p->m;
  const int *cp = w->f->p, *ri = w->f->i;
  memset(w->row_scale, 0, sizeof(double) * (size_t)m); /* sums of squares, then norms */
  for (int k = 0; k < cp[n]; k++) w->row_scale[ri[k]] += jac[k] * jac[k];
  for (int i = 0; i < m; i++)
    w->row_scale[i] = w->row_scale[i] > 0 ? 1.0 / sqrt(w->row_scale[i]) : 0.0;
  /* Dropped rows (implied by the others) are zero rows of F: decoupled in F F^T, y = 0. */
  const unsigned char *dropped = p->dropped;
  double *fx = w->f->x;
  for (int j = 0; j < n; j++) {
    double root_w = w->root_w[j];
    for (int k = cp[j]; k < cp[j + 1]; k++)
      fx[k] = dropped && dropped[ri[k]] ? 0.0 : w->row_scale[ri[k]] * jac[k] * root_w;
  }
}

/* R = S (b - A u) into w->r, rows in their own order; returns the scale of the rows solved
 * (as in the dense path), and marks a zero row with b != 0 inconsistent. */
static double scaled_residual(jySparseWork *w, const jyUkProblem *p, const double *jac,
                              jyUkResult *result) {
  int n = p->n, m = p->m;
  const int *cp = w->f->p, *ri = w->f->i;
  const unsigned char *dropped = p->dropped;
  double scale = 0;
  memcpy(w->sy, p->rhs, sizeof(double) * (size_t)m); /* b - A u */
  for (int j = 0; j < n; j++)
    for (int k = cp[j]; k < cp[j + 1]; k++) w->sy[ri[k]] -= jac[k] * w->u[j];
  for (int i = 0; i < m; i++) {
    w->r[i] = dropped && dropped[i] ? 0.0 : w->row_scale[i] * w->sy[i];
    if (w->row_scale[i] == 0 && p->rhs[i] != 0) result->outcome = JY_UK_INCONSISTENT;
    if (dropped && dropped[i]) continue;
    scale = jy_larger(scale, fabs(w->row_scale[i] * p->rhs[i]));
    scale = jy_larger(scale, fabs(w->r[i]));
  }
  return scale > 0 ? scale : 1;
}

/* Factors F F^T as it is, a dropped row (a zero row of F) with a unit diagonal: it is
 * decoupled, its y stays 0. 0, or -1 for a zero row of A not dropped, and when the
 * factorization fails or shows (nearly) dependent rows, tiny or non-positive pivots (a
 * redundant constraint not left out, a singular configuration), where a small inconsistency
 * of the right side (drift) would be amplified without bound: the KKT or dense
 * rank-revealing solve takes over. */
static int factor_rows(jySparseWork *w, const unsigned char *dropped) {
  int m = w->m;
  const int *sp = w->s->p;
  double *sx = w->s->x, no_shift[2] = {0, 0};
  const double *fx = w->f->x;
  memset(sx, 0, sizeof(double) * (size_t)sp[m]);
  for (int k = 0; k < w->npairs; k++) sx[w->pair_s[k]] += fx[w->pair_a[k]] * fx[w->pair_b[k]];
  for (int k = 0; k < m; k++) { /* column k's diagonal is its last entry (upper, sorted) */
    int row = w->perm[k];
    if (w->row_scale[row] == 0 && !(dropped && dropped[row])) return -1; /* zero row of A */
    if (dropped && dropped[row]) sx[sp[k + 1] - 1] = 1.0;
  }
  /* S is already in the factor's (natural) order and L simplicial LL^T from the warm-up:
   * cholmod_factorize_p would only add its size checks and workspace calls to the row
   * factorization it calls, a third of its cost for a few rows. Rows 0 .. m-1: the whole
   * factor, its previous values overwritten. */
  if (!cholmod_rowfac(w->s, NULL, no_shift, 0, (size_t)m, w->l, &w->common) ||
      w->common.status != CHOLMOD_OK || !w->l->is_ll || w->l->is_super)
    return -1;
  const int *lp = w->l->p;
  const double *lx = w->l->x;
  double dmin = INFINITY, dmax = 0;
  for (int j = 0; j < m; j++) {
    w->inv_pivot[j] = 1.0 / lx[lp[j]];
    if (dropped && dropped[w->perm[j]]) continue; /* its pivot is the unit diagonal */
    double d = lx[lp[j]] * lx[lp[j]];
    dmin = fmin(dmin, d);
    dmax = jy_larger(dmax, d);
  }
  return dmin > 1e-6 * dmax ? 0 : -1;
}

/* y = (F F^T)^-1 R (rows in their own order), through the permuted factor. */
static void solve_rows(jySparseWork *w) {
  double *x = w->rhs->x;
  for (int k = 0; k < w->m; k++) x[k] = w->r[w->perm[k]];
  solve_factor(w->l, w->inv_pivot, x);
  for (int k = 0; k < w->m; k++) w->y[w->perm[k]] = x[k];
}

/* q'' = u + W^1/2 F^T y and what it leaves of the rows, b - A q'' (into sy), in one walk of
 * the columns (F and A share the pattern). Returns the largest backward error of a solved
 * row, |b - A q''|_i / (|b| + |A| (|u| + W^1/2 |F^T| |y|))_i: the terms q'' is made of bound
 * the rounding of every step, so a few DBL_EPSILON is all that rounding leaves in it. */
static double acceleration(jySparseWork *w, const jyUkProblem *p, const double *jac, double *acc) {
  int n = p->n, m = p->m;
  const int *cp = w->f->p, *ri = w->f->i;
  const double *fx = w->f->x, *y = w->y;
  double *sy = w->sy, *bound = w->bound;
  for (int i = 0; i < m; i++) {
    sy[i] = p->rhs[i];
    bound[i] = fabs(p->rhs[i]);
  }
  for (int j = 0; j < n; j++) {
    double t = 0, t_size = 0;
    for (int k = cp[j]; k < cp[j + 1]; k++) {
      t += fx[k] * y[ri[k]];
      t_size += fabs(fx[k] * y[ri[k]]);
    }
    double a = w->u[j] + w->root_w[j] * t, size = fabs(w->u[j]) + w->root_w[j] * t_size;
    acc[j] = a;
    for (int k = cp[j]; k < cp[j + 1]; k++) {
      sy[ri[k]] -= jac[k] * a;
      bound[ri[k]] += fabs(jac[k]) * size;
    }
  }
  double worst = 0;
  for (int i = 0; i < m; i++) {
    if (p->dropped && p->dropped[i]) continue; /* zero rows not dropped never get here */
    double e = bound[i] > 0 ? fabs(sy[i]) / bound[i] : (sy[i] == 0 ? 0.0 : INFINITY);
    worst = jy_larger(worst, e);
  }
  return worst;
}

/* The residual of A q'' = b as the dense path measures it, from sy = b - A q'' (zero when b
 * is in range(A)). */
static void report_residual(jySparseWork *w, const jyUkProblem *p, double scale,
                            jyUkResult *result) {
  double worst = 0, dropped_worst = 0;
  for (int i = 0; i < p->m; i++) {
    w->r[i] = w->row_scale[i] != 0 ? -w->row_scale[i] * w->sy[i] / scale : p->rhs[i];
    worst = jy_larger(worst, fabs(w->r[i]));
    if (p->dropped && p->dropped[i]) dropped_worst = jy_larger(dropped_worst, fabs(w->r[i]));
  }
  result->residual = worst;
  result->dropped_residual = dropped_worst;
}

int jy_sparse_correction_pair(jySparseWork *w, const double *mass, const double *jac,
                              const unsigned char *dropped, const double *target_a,
                              const double *target_b, double *dx_a, double *dx_b) {
  int n = w->n, m = w->m;
  jyUkProblem p = {n, m, mass, NULL, NULL, jac, NULL, dropped};
  if (!factor_current(w, &p, mass, jac)) {
    w->factored = 0; /* recorded as this one's, but not factored: the next solve factors */
    return -1;
  }
  if (!w->checked) return -1;
  /* S target, permuted into the factor's order (w->r and w->sy: scratch here) */
  double *ya = w->r, *yb = w->sy, *y_b = w->rhs->x;
  for (int k = 0; k < m; k++) {
    int row = w->perm[k], free_row = dropped && dropped[row];
    ya[k] = free_row ? 0.0 : w->row_scale[row] * target_a[row];
    yb[k] = free_row ? 0.0 : w->row_scale[row] * target_b[row];
  }
  solve_factor_pair(w->l, w->inv_pivot, ya, yb);
  for (int k = 0; k < m; k++) { /* back in the rows' own order */
    w->y[w->perm[k]] = ya[k];
    y_b[w->perm[k]] = yb[k];
  }
  const int *cp = w->f->p, *ri = w->f->i;
  const double *fx = w->f->x, *y_a = w->y;
  for (int j = 0; j < n; j++) { /* dx = W^1/2 F^T y */
    double sa = 0, sb = 0;
    for (int k = cp[j]; k < cp[j + 1]; k++) {
      sa += fx[k] * y_a[ri[k]];
      sb += fx[k] * y_b[ri[k]];
    }
    dx_a[j] = w->root_w[j] * sa;
    dx_b[j] = w->root_w[j] * sb;
  }
  return 0;
}

jyUkOutcome jy_sparse_solve(jySparseWork *w, const double *mass, const double *jac,
                            const jyUkProblem *p, const jyUkOptions *opt, double *acc, double *mu,
                            jyUkResult *result) {
  result->outcome = JY_UK_OK;
  result->rank = -1; /* not revealed by this path */
  result->residual = 0;
  result->dropped_residual = 0;
  result->row_residual = w->r;
  w->checked = 0;
  int current = factor_current(w, p, mass, jac);
  if (!current) scaled_rows(w, p, jac);
  free_acceleration(w, p);
  double scale = scaled_residual(w, p, jac, result);
  if (!current && factor_rows(w, p->dropped) != 0) {
    w->factored = 0;
    return result->outcome = JY_UK_NOT_UNIQUE;
  }
  solve_rows(w);
  /* Cholesky is backward stable: measured, the answer's backward error is at most 2.3
   * DBL_EPSILON (docs/numerics.md). One far above that is not rounding: the KKT solve,
   * which refines, takes the problem. */
  if (!(acceleration(w, p, jac, acc) <= 64 * DBL_EPSILON))
    return result->outcome = JY_UK_NOT_UNIQUE;
  w->checked = 1;
  report_residual(w, p, scale, result);
  if (mu) /* A^T mu = M (q'' - u) = A^T S y */
    for (int i = 0; i < p->m; i++)
      mu[i] = p->dropped && p->dropped[i] ? 0.0 : w->row_scale[i] * w->y[i];
  if (!(result->residual <= opt->consistency_tol)) result->outcome = JY_UK_INCONSISTENT;
  return result->outcome;
}
