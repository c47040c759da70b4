/* Operating points and linearization, above the evaluator (jy_eval_acceleration,
 * jy_eval_channels and the assembled constraint rows): a static equilibrium by Gauss–Newton
 * on the free coordinates, and the matrices A, B, C, D of the linearized motion in
 * independent coordinates by central differences with Richardson extrapolation.
 *
 * Independent coordinates: a pivoted QR (dgeqp3) of the constraint Jacobian, rows scaled to
 * unit length, the candidate columns taken from the last coordinate back (ties keep the
 * earlier coordinates independent, so a cart-pole reads cart.x, pole.theta); its first rank
 * pivots are the dependent coordinates. A state given by its independent coordinates is
 * carried onto the constraints by solving the rows for the dependent ones (dgelsd, minimum
 * norm, so redundant rows are harmless). */
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "vec.h"

/* A reduced Jacobian whose singular values fall below this fraction of the largest is
 * singular: its central differences resolve ~1e-9 of it, and stiffness ratios of real
 * mechanisms stay far above. */
#define OP_ISOLATION_RCOND 1e-7

typedef struct Op {
  jyEval *e;
  const jyModel *m;
  const jyAllocator *a;
  int n, rows;
  double t;
  unsigned char *held; /* n */
  int *pos_dep, *pos_ind, *vel_dep, *vel_ind;
  int npos_dep, npos_ind, nvel_dep, nvel_ind;
  double *mat, *rhs, *sv, *tau; /* rows x n, max(rows, n), ... */
  double *work;
  lapack_int *iwork, *jpvt;
  lapack_int lwork, liwork;
  double *x_q, *x_v, *acc, *dx; /* n each */
} Op;

static int row_active(const Op *op, int i) { return !(op->e->inactive && op->e->inactive[i]); }

/* Grows the LAPACK workspace to at least lwork doubles and liwork integers. */
static jyStatus reserve(Op *op, double lwork, lapack_int liwork) {
  lapack_int want = (lapack_int)lwork + 1;
  if (want > op->lwork) {
    jy_free(op->a, op->work);
    if (!(op->work = jy_calloc(op->a, (size_t)want, sizeof(double)))) return JY_ERR_NOMEM;
    op->lwork = want;
  }
  if (liwork + 1 > op->liwork) {
    jy_free(op->a, op->iwork);
    if (!(op->iwork = jy_calloc(op->a, (size_t)liwork + 1, sizeof(lapack_int))))
      return JY_ERR_NOMEM;
    op->liwork = liwork + 1;
  }
  return JY_OK;
}

/* Minimum-norm least squares: mat (r x c, leading dimension r) x = b, x into b (length at
 * least max(r, c)); mat is destroyed. *rank: the numerical rank at rcond. */
static jyStatus lls(Op *op, int r, int c, double *mat, double *b, double rcond, int *rank) {
  lapack_int got = 0, iquery = 0;
  double query = 0;
  int ldb = r > c ? r : c;
  *rank = 0;
  if (r == 0 || c == 0) {
    for (int k = 0; k < c; k++) b[k] = 0;
    return JY_OK;
  }
  lapack_int info = LAPACKE_dgelsd_work(LAPACK_COL_MAJOR, r, c, 1, mat, r, b, ldb, op->sv, rcond,
                                        &got, &query, -1, &iquery);
  if (info != 0) return JY_ERR_INVALID;
  jyStatus st = reserve(op, query, iquery);
  if (st != JY_OK) return st;
  info = LAPACKE_dgelsd_work(LAPACK_COL_MAJOR, r, c, 1, mat, r, b, ldb, op->sv, rcond, &got,
                             op->work, op->lwork, op->iwork);
  if (info != 0) {
    jy_set_error(op->e->error, "operating point: the least-squares solve failed (dgelsd info %d)",
                 (int)info);
    return JY_ERR_INVALID;
  }
  *rank = (int)got;
  return JY_OK;
}

/* The rows and Jacobian at (q, v): e->residual, e->rate and the dense e->jac (rows x n). */
static jyStatus assemble_rows(Op *op, const double *q, const double *v) {
  if (op->rows == 0) return JY_OK;
  if (!op->e->jac && jy_eval_dense_ready(op->e) != 0) return JY_ERR_NOMEM;
  return jy_assemble(op->e, q, v, op->t, JY_ASM_CONSTRAINTS | JY_ASM_RESIDUALS);
}

/* Whether row i takes part at this level: position rows (velocity = 0) or every row with a
 * velocity level (velocity = 1). */
static int row_used(const Op *op, int i, int velocity) {
  jyRowKind k = op->m->row_kinds[i];
  return row_active(op, i) && (k == JY_ROW_POSITION || (velocity && k == JY_ROW_VELOCITY));
}

/* The dependent and independent coordinates at the assembled A (module comment). */
static jyStatus choose_coordinates(Op *op, int velocity) {
  int n = op->n, rows = op->rows, r = 0, c = 0;
  int *dep = velocity ? op->vel_dep : op->pos_dep, *ind = velocity ? op->vel_ind : op->pos_ind;
  int *col = (int *)op->iwork; /* scratch: reserve() made it n long */
  for (int j = n - 1; j >= 0; j--)
    if (!op->held[j]) col[c++] = j;
  for (int i = 0; i < rows; i++) {
    if (!row_used(op, i, velocity)) continue;
    double norm = 0;
    for (int j = 0; j < n; j++) norm = hypot(norm, op->e->jac[i + (size_t)j * rows]);
    if (!(norm > 0)) continue;
    for (int k = 0; k < c; k++)
      op->mat[r + (size_t)k * rows] = op->e->jac[i + (size_t)col[k] * rows] / norm;
    r++;
  }
  int rank = 0;
  if (r > 0 && c > 0) {
    /* rows of mat were written with leading dimension `rows`; compact to r */
    for (int k = 0; k < c; k++)
      memmove(op->mat + (size_t)k * r, op->mat + (size_t)k * rows, sizeof(double) * (size_t)r);
    memset(op->jpvt, 0, sizeof(lapack_int) * (size_t)c);
    double query = 0;
    lapack_int info =
      LAPACKE_dgeqp3_work(LAPACK_COL_MAJOR, r, c, op->mat, r, op->jpvt, op->tau, &query, -1);
    if (info != 0) return JY_ERR_INVALID;
    /* reserve() may replace iwork: keep the columns in dx meanwhile */
    for (int k = 0; k < c; k++) op->dx[k] = col[k];
    jyStatus st = reserve(op, query, n);
    if (st != JY_OK) return st;
    col = (int *)op->iwork;
    for (int k = 0; k < c; k++) col[k] = (int)op->dx[k];
    info = LAPACKE_dgeqp3_work(LAPACK_COL_MAJOR, r, c, op->mat, r, op->jpvt, op->tau, op->work,
                               op->lwork);
    if (info != 0) return JY_ERR_INVALID;
    double cut = jy_larger(op->m->solver.rank_rcond, 1e-10) * fabs(op->mat[0]);
    for (int k = 0; k < r && k < c; k++)
      if (fabs(op->mat[k + (size_t)k * r]) > cut) rank = k + 1;
  }
  unsigned char *is_dep = (unsigned char *)op->sv; /* scratch, n bytes */
  memset(is_dep, 0, (size_t)n);
  for (int k = 0; k < rank; k++) is_dep[col[op->jpvt[k] - 1]] = 1;
  int nd = 0, ni = 0;
  for (int j = 0; j < n; j++) {
    if (op->held[j]) continue;
    if (is_dep[j])
      dep[nd++] = j;
    else
      ind[ni++] = j;
  }
  if (velocity) {
    op->nvel_dep = nd;
    op->nvel_ind = ni;
  } else {
    op->npos_dep = nd;
    op->npos_ind = ni;
  }
  return JY_OK;
}

static double scale_of(const double *x, int n) { return jy_larger(1.0, jy_max_abs(x, n)); }

/* The position rows' worst residual at the assembled state, and its row. */
static double worst_row(const Op *op, int velocity, int *which) {
  double worst = 0;
  *which = -1;
  for (int i = 0; i < op->rows; i++) {
    if (!row_active(op, i)) continue;
    jyRowKind k = op->m->row_kinds[i];
    double r;
    if (!velocity && k == JY_ROW_POSITION)
      r = op->e->residual[i];
    else if (velocity && k == JY_ROW_POSITION)
      r = op->e->rate[i];
    else if (velocity && k == JY_ROW_VELOCITY)
      r = op->e->residual[i];
    else
      continue;
    if (fabs(r) > worst || (*which < 0 && !isfinite(r))) {
      worst = isfinite(r) ? fabs(r) : INFINITY;
      *which = i;
    }
  }
  return worst;
}

/* Solves the rows of one level for its dependent coordinates in x (q, or v at q), the others
 * held: Gauss–Newton (exact in one step for rows linear in them). */
static jyStatus solve_dependent(Op *op, double *q, double *v, int velocity) {
  int rows = op->rows, nd = velocity ? op->nvel_dep : op->npos_dep;
  const int *dep = velocity ? op->vel_dep : op->pos_dep;
  double *x = velocity ? v : q;
  if (rows == 0 || nd == 0) return JY_OK;
  double scale = scale_of(x, op->n), last = INFINITY;
  for (int it = 0; it < 30; it++) {
    jyStatus st = assemble_rows(op, q, v);
    if (st != JY_OK) return st;
    int which, r = 0;
    double worst = worst_row(op, velocity, &which);
    if (worst <= 4 * DBL_EPSILON * scale || (it > 2 && !(worst < 0.5 * last))) {
      if (worst <= 1e-10 * scale) return JY_OK;
      break;
    }
    last = worst;
    for (int i = 0; i < rows; i++) {
      if (!row_used(op, i, velocity)) continue;
      int pos = op->m->row_kinds[i] == JY_ROW_POSITION;
      op->rhs[r] = -(velocity && pos ? op->e->rate[i] : op->e->residual[i]);
      r++;
    }
    int rr = 0;
    for (int i = 0; i < rows; i++) {
      if (!row_used(op, i, velocity)) continue;
      for (int k = 0; k < nd; k++)
        op->mat[rr + (size_t)k * r] = op->e->jac[i + (size_t)dep[k] * rows];
      rr++;
    }
    for (int k = r; k < nd; k++) op->rhs[k] = 0;
    int rank;
    st = lls(op, r, nd, op->mat, op->rhs, 1e-12, &rank);
    if (st != JY_OK) return st;
    for (int k = 0; k < nd; k++) x[dep[k]] += op->rhs[k];
  }
  jyStatus st = assemble_rows(op, q, v);
  if (st != JY_OK) return st;
  int which;
  double worst = worst_row(op, velocity, &which);
  if (worst <= 1e-10 * scale) return JY_OK;
  jy_set_error(op->e->error,
               "the %s rows cannot be met with the independent coordinates given: row '%s' is "
               "off by %.3g",
               velocity ? "velocity" : "position", which >= 0 ? op->m->row_names[which] : "?",
               worst);
  return JY_ERR_INCONSISTENT;
}

static jyStatus op_init(Op *op, jyEval *e, double t) {
  memset(op, 0, sizeof *op);
  op->e = e;
  op->m = e->model;
  op->a = &e->alloc;
  op->n = op->m->n;
  op->rows = op->m->tree ? 0 : op->m->m;
  op->t = t;
  size_t n = (size_t)op->n, r = (size_t)op->rows, big = (r > n ? r : n) + 1;
  op->held = jy_calloc(op->a, n + 1, 1);
  op->pos_dep = jy_calloc(op->a, n + 1, sizeof(int));
  op->pos_ind = jy_calloc(op->a, n + 1, sizeof(int));
  op->vel_dep = jy_calloc(op->a, n + 1, sizeof(int));
  op->vel_ind = jy_calloc(op->a, n + 1, sizeof(int));
  op->mat = jy_calloc(op->a, (r + 1) * (n + 1) + big * big, sizeof(double));
  op->rhs = jy_calloc(op->a, big * big, sizeof(double));
  op->sv = jy_calloc(op->a, big, sizeof(double));
  op->tau = jy_calloc(op->a, big, sizeof(double));
  op->jpvt = jy_calloc(op->a, big, sizeof(lapack_int));
  op->x_q = jy_calloc(op->a, n + 1, sizeof(double));
  op->x_v = jy_calloc(op->a, n + 1, sizeof(double));
  op->acc = jy_calloc(op->a, n + 1, sizeof(double));
  op->dx = jy_calloc(op->a, big, sizeof(double));
  if (!op->held || !op->pos_dep || !op->pos_ind || !op->vel_dep || !op->vel_ind || !op->mat ||
      !op->rhs || !op->sv || !op->tau || !op->jpvt || !op->x_q || !op->x_v || !op->acc || !op->dx)
    return JY_ERR_NOMEM;
  return reserve(op, 1, (lapack_int)n);
}

static void op_free(Op *op) {
  void *blocks[] = {op->held, op->pos_dep, op->pos_ind, op->vel_dep, op->vel_ind, op->mat,
                    op->rhs,  op->sv,      op->tau,     op->jpvt,    op->x_q,     op->x_v,
                    op->acc,  op->dx,      op->work,    op->iwork};
  for (size_t k = 0; k < sizeof blocks / sizeof blocks[0]; k++) jy_free(op->a, blocks[k]);
}

/* Chooses both levels' coordinates at (q, v). */
static jyStatus op_choose(Op *op, const double *q, const double *v) {
  jyStatus st = assemble_rows(op, q, v);
  if (st == JY_OK) st = choose_coordinates(op, 0);
  if (st == JY_OK) st = choose_coordinates(op, 1);
  return st;
}

/* Names a direction (n values) by its largest components: "0.707 a.x - 0.707 b.x". */
static void describe_direction(const Op *op, const double *d, char *out, size_t len) {
  double big = jy_max_abs(d, op->n);
  int count = 0;
  for (int j = 0; j < op->n; j++) count += fabs(d[j]) > 0.1 * big;
  size_t used = 0;
  out[0] = '\0';
  for (int j = 0; j < op->n && used < len; j++) {
    if (!(fabs(d[j]) > 0.1 * big)) continue;
    if (count == 1)
      used += (size_t)snprintf(out + used, len - used, "%s", op->m->coord_names[j]);
    else
      used += (size_t)snprintf(out + used, len - used, "%s%.3g %s",
                               used ? (d[j] < 0 ? " - " : " + ") : (d[j] < 0 ? "-" : ""),
                               fabs(d[j]) / big, op->m->coord_names[j]);
  }
}

/* ---- static equilibrium ------------------------------------------------------------- */

jyEquilibriumDef jy_default_equilibrium_def(void) {
  jyEquilibriumDef d = {.tol = 1e-9, .max_iter = 50};
  return d;
}

typedef struct Eq {
  Op op;
  const double *zero;                                 /* n zeros: v = 0 */
  double *q;                                          /* the iterate */
  double *y, *y_try, *jac, *q_try, *basis, *gram, *w; /* see eq_residual */
  int holds;
  int kinetic_channel;
  double *channels;
} Eq;

/* 1/2 w^T M w at q (M assembled at q by the caller, or the kinetic channel of a tree model). */
static jyStatus kinetic(Eq *eq, const double *q, const double *w, double *out) {
  jyEval *e = eq->op.e;
  if (!e->model->tree) {
    *out = jy_eval_kinetic(e, w);
    return JY_OK;
  }
  jyStatus st = jy_eval_channels(e, q, w, eq->op.t, eq->channels);
  *out = eq->channels[eq->kinetic_channel];
  return st;
}

/* The free coordinates' acceleration at the independent coordinates x (q carried onto the
 * rows), into y (nvel_ind). Without holds: a[vel_ind]. With holds, the held system's: the
 * basis N of the free directions (N_i[vel_ind] = e_i, held 0, the dependent ones meeting
 * every row), r = N^T M a and y = (N^T M N)^-1 r, the products by polarization of the kinetic
 * energy, T(u + w) - T(u - w) = 2 u^T M w. */
static jyStatus eq_residual(Eq *eq, double *q, double *y) {
  Op *op = &eq->op;
  jyEval *e = op->e;
  int n = op->n, nk = op->nvel_ind, rows = op->rows;
  double *v = op->x_v;
  memset(v, 0, sizeof(double) * (size_t)n);
  jyStatus st = solve_dependent(op, q, v, 0);
  if (st == JY_OK) st = jy_eval_acceleration(e, q, eq->zero, op->t, op->acc);
  if (st != JY_OK) return st;
  if (!eq->holds) {
    for (int k = 0; k < nk; k++) y[k] = op->acc[op->vel_ind[k]];
    return JY_OK;
  }
  st = assemble_rows(op, q, eq->zero);
  if (st != JY_OK) return st;
  for (int k = 0; k < nk; k++) { /* the basis column of free coordinate k */
    double *col = eq->basis + (size_t)k * n;
    memset(col, 0, sizeof(double) * (size_t)n);
    col[op->vel_ind[k]] = 1;
    int nd = op->nvel_dep, r = 0;
    if (nd == 0) continue;
    for (int i = 0; i < rows; i++) {
      if (!row_used(op, i, 1)) continue;
      op->rhs[r] = -e->jac[i + (size_t)op->vel_ind[k] * rows];
      r++;
    }
    int rr = 0;
    for (int i = 0; i < rows; i++) {
      if (!row_used(op, i, 1)) continue;
      for (int d = 0; d < nd; d++)
        op->mat[rr + (size_t)d * r] = e->jac[i + (size_t)op->vel_dep[d] * rows];
      rr++;
    }
    for (int d = r; d < nd; d++) op->rhs[d] = 0;
    int rank;
    st = lls(op, r, nd, op->mat, op->rhs, 1e-12, &rank);
    if (st != JY_OK) return st;
    for (int d = 0; d < nd; d++) col[op->vel_dep[d]] = op->rhs[d];
  }
  if (!e->model->tree && (st = jy_assemble(e, q, eq->zero, op->t, JY_ASM_MASS)) != JY_OK) return st;
  for (int i = 0; i < nk; i++) {
    const double *ni = eq->basis + (size_t)i * n;
    double tp, tm;
    for (int j = 0; j < n; j++) eq->w[j] = ni[j] + op->acc[j];
    st = kinetic(eq, q, eq->w, &tp);
    for (int j = 0; j < n; j++) eq->w[j] = ni[j] - op->acc[j];
    if (st == JY_OK) st = kinetic(eq, q, eq->w, &tm);
    if (st != JY_OK) return st;
    y[i] = 0.5 * (tp - tm);
    for (int k = 0; k <= i; k++) {
      const double *nk_col = eq->basis + (size_t)k * n;
      for (int j = 0; j < n; j++) eq->w[j] = ni[j] + nk_col[j];
      st = kinetic(eq, q, eq->w, &tp);
      for (int j = 0; j < n; j++) eq->w[j] = ni[j] - nk_col[j];
      if (st == JY_OK) st = kinetic(eq, q, eq->w, &tm);
      if (st != JY_OK) return st;
      eq->gram[i + (size_t)k * nk] = eq->gram[k + (size_t)i * nk] = 0.5 * (tp - tm);
    }
  }
  int rank;
  memcpy(op->mat, eq->gram, sizeof(double) * (size_t)nk * nk);
  return lls(op, nk, nk, op->mat, y, 1e-13, &rank);
}

/* The reduced Jacobian dy/dx (nk x np) at eq->q by central differences. */
static jyStatus eq_jacobian(Eq *eq) {
  Op *op = &eq->op;
  int np = op->npos_ind, nk = op->nvel_ind, n = op->n;
  for (int c = 0; c < np; c++) {
    int j = op->pos_ind[c];
    double h = 1e-6 * jy_larger(1.0, fabs(eq->q[j]));
    for (int side = 0; side < 2; side++) {
      memcpy(eq->q_try, eq->q, sizeof(double) * (size_t)n);
      eq->q_try[j] += side ? -h : h;
      jyStatus st = eq_residual(eq, eq->q_try, side ? eq->y_try : eq->jac + (size_t)c * nk);
      if (st != JY_OK) return st;
    }
    for (int k = 0; k < nk; k++)
      eq->jac[k + (size_t)c * nk] = (eq->jac[k + (size_t)c * nk] - eq->y_try[k]) / (2 * h);
  }
  return JY_OK;
}

static double residual_norm(const double *y, int nk, int *which) {
  double worst = 0;
  *which = -1;
  for (int k = 0; k < nk; k++)
    if (!(fabs(y[k]) <= worst)) {
      worst = fabs(y[k]);
      *which = k;
    }
  return worst;
}

/* The singular values of the reduced Jacobian (eq->jac, nk x np) and, when it is singular,
 * its null directions named into e->error. Returns JY_OK or JY_ERR_NOT_UNIQUE. */
static jyStatus eq_isolated(Eq *eq, double *rcond) {
  Op *op = &eq->op;
  int np = op->npos_ind, nk = op->nvel_ind, n = op->n;
  *rcond = 1;
  if (np == 0) return JY_OK;
  double *a = op->mat, *vt = op->rhs, query = 0;
  memcpy(a, eq->jac, sizeof(double) * (size_t)nk * np);
  memset(op->sv, 0, sizeof(double) * (size_t)np);
  lapack_int info = nk == 0 ? 0
                            : LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, 'N', 'A', nk, np, a, nk, op->sv,
                                                  NULL, 1, vt, np, &query, -1);
  if (info != 0) return JY_ERR_INVALID;
  if (nk > 0) {
    jyStatus st = reserve(op, query, 0);
    if (st != JY_OK) return st;
    info = LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, 'N', 'A', nk, np, a, nk, op->sv, NULL, 1, vt, np,
                               op->work, op->lwork);
    if (info != 0) return JY_ERR_INVALID;
  } else {
    for (int i = 0; i < np; i++)
      for (int j = 0; j < np; j++) vt[i + (size_t)j * np] = i == j;
  }
  double big = op->sv[0];
  int first_free = np;
  for (int k = 0; k < np; k++)
    if (!(k < nk && op->sv[k] > OP_ISOLATION_RCOND * big)) {
      first_free = k;
      break;
    }
  *rcond = big > 0 && nk >= np ? op->sv[np - 1] / big : 0;
  if (first_free == np) return JY_OK;
  char *msg = op->e->error;
  size_t used = (size_t)snprintf(msg, JY_ERROR_LEN,
                                 "the equilibrium is not isolated: the accelerations do not "
                                 "change along %d direction%s (",
                                 np - first_free, np - first_free > 1 ? "s" : "");
  char dir[256];
  for (int k = first_free; k < np && used < JY_ERROR_LEN; k++) {
    memset(eq->w, 0, sizeof(double) * (size_t)n);
    for (int c = 0; c < np; c++) eq->w[op->pos_ind[c]] = vt[k + (size_t)c * np];
    describe_direction(op, eq->w, dir, sizeof dir);
    used +=
      (size_t)snprintf(msg + used, JY_ERROR_LEN - used, "%s%s", k > first_free ? "; " : "", dir);
  }
  if (used < JY_ERROR_LEN)
    snprintf(msg + used, JY_ERROR_LEN - used, "): hold %s, or add what fixes %s",
             np - first_free > 1 ? "them" : "it", np - first_free > 1 ? "them" : "it");
  return JY_ERR_NOT_UNIQUE;
}

static jyStatus eq_solve(Eq *eq, const jyEquilibriumDef *def, jyEquilibriumReport *rep) {
  Op *op = &eq->op;
  jyEval *e = op->e;
  int n = op->n, np, nk, which;
  jyStatus st = op_choose(op, eq->q, eq->zero);
  if (st != JY_OK) return st;
  np = op->npos_ind;
  nk = op->nvel_ind;
  rep->nfree = np;
  st = eq_residual(eq, eq->q, eq->y);
  if (st != JY_OK) return st;
  double res = residual_norm(eq->y, nk, &which);
  int it = 0;
  for (; it < def->max_iter && !(res <= def->tol); it++) {
    st = eq_jacobian(eq);
    if (st != JY_OK) return st;
    int ld = nk > np ? nk : np, rank;
    memcpy(op->mat, eq->jac, sizeof(double) * (size_t)nk * np);
    for (int k = 0; k < ld; k++) op->dx[k] = k < nk ? -eq->y[k] : 0;
    /* op->mat is lls's matrix and scratch of eq_residual: keep the step in dx */
    double *step = op->dx;
    st = lls(op, nk, np, op->mat, step, 1e-10, &rank);
    if (st != JY_OK) return st;
    double lambda = 1, tried = INFINITY;
    memcpy(eq->y_try, step, sizeof(double) * (size_t)np); /* the full step, kept */
    for (int half = 0; half < 30; half++, lambda *= 0.5) {
      memcpy(eq->q_try, eq->q, sizeof(double) * (size_t)n);
      for (int c = 0; c < np; c++) eq->q_try[op->pos_ind[c]] += lambda * eq->y_try[c];
      double *y_new = eq->w + n; /* nk values past the scratch vector */
      st = eq_residual(eq, eq->q_try, y_new);
      if (st == JY_ERR_INCONSISTENT || st == JY_ERR_NOT_UNIQUE) continue; /* too far: shorter */
      if (st != JY_OK) return st;
      int w2;
      tried = residual_norm(y_new, nk, &w2);
      if (tried < res || half == 29) {
        memcpy(eq->q, eq->q_try, sizeof(double) * (size_t)n);
        memcpy(eq->y, y_new, sizeof(double) * (size_t)nk);
        break;
      }
    }
    if (!(tried < res)) { /* no step decreased it: stalled */
      it++;
      break;
    }
    res = residual_norm(eq->y, nk, &which);
  }
  /* the dependent coordinates at the final iterate */
  st = eq_residual(eq, eq->q, eq->y);
  if (st != JY_OK) return st;
  res = residual_norm(eq->y, nk, &which);
  rep->iterations = it;
  rep->residual = res;
  if (!(res <= def->tol)) {
    jy_set_error(e->error,
                 "no equilibrium found: after %d Newton iterations the acceleration of '%s' is "
                 "still %.3g (tolerance %.3g); start from a guess nearer one, or hold the "
                 "coordinates something else holds",
                 it, which >= 0 ? op->m->coord_names[op->vel_ind[which]] : "?", res, def->tol);
    return JY_ERR_CONVERGENCE;
  }
  st = eq_jacobian(eq);
  if (st != JY_OK) return st;
  return eq_isolated(eq, &rep->rcond);
}

/* Both solves work on dense matrices (the constraint Jacobian, the reduced Jacobian): a model
 * beyond the dense solves' size is refused, saying so, rather than run out of memory. */
static int too_large(jyEval *e, const char *what) {
  const jyModel *m = e->model;
  if (m->n <= JY_DENSE_FALLBACK_MAX_COORDS) return 0;
  jy_set_error(e->error,
               "%s works with dense matrices, for models of at most %d coordinates; this one "
               "has %d",
               what, JY_DENSE_FALLBACK_MAX_COORDS, m->n);
  return 1;
}

jyStatus jy_model_equilibrium(jyEval *e, const jyEquilibriumDef *def, double *q,
                              jyEquilibriumReport *report) {
  if (!e || !q) return JY_ERR_INVALID;
  const jyModel *m = e->model;
  jyEquilibriumDef d = def ? *def : jy_default_equilibrium_def();
  jyEquilibriumReport rep = {0, NAN, 0, NAN};
  if (report) *report = rep;
  e->error[0] = '\0';
  if (!(d.tol > 0) || !isfinite(d.tol) || d.max_iter < 0 || !isfinite(d.t)) {
    jy_set_error(e->error, "equilibrium: tol must be a positive number, max_iter >= 0, t finite");
    return JY_ERR_INVALID;
  }
  if (too_large(e, "equilibrium")) return JY_ERR_INVALID;
  Eq eq;
  memset(&eq, 0, sizeof eq);
  jyStatus st = op_init(&eq.op, e, d.t);
  int n = m->n, nk_max = n + 1;
  const jyAllocator *a = eq.op.a;
  double *zero = jy_calloc(a, (size_t)n + 1, sizeof(double));
  eq.zero = zero;
  eq.q = jy_calloc(a, (size_t)n + 1, sizeof(double));
  eq.y = jy_calloc(a, (size_t)nk_max, sizeof(double));
  eq.y_try = jy_calloc(a, (size_t)nk_max, sizeof(double));
  eq.jac = jy_calloc(a, (size_t)nk_max * nk_max, sizeof(double));
  eq.q_try = jy_calloc(a, (size_t)n + 1, sizeof(double));
  eq.basis = jy_calloc(a, (size_t)nk_max * nk_max, sizeof(double));
  eq.gram = jy_calloc(a, (size_t)nk_max * nk_max, sizeof(double));
  eq.w = jy_calloc(a, 2 * (size_t)nk_max, sizeof(double));
  eq.channels = jy_calloc(a, (size_t)m->nchannels + 1, sizeof(double));
  eq.kinetic_channel = m->ch_derived + JY_CH_KINETIC;
  if (st == JY_OK &&
      (!zero || !eq.q || !eq.y || !eq.y_try || !eq.jac || !eq.q_try || !eq.basis || !eq.gram ||
       !eq.w || !eq.channels))
    st = JY_ERR_NOMEM;
  if (st == JY_OK) {
    const double *guess = d.q ? d.q : m->q0;
    memcpy(eq.q, guess, sizeof(double) * (size_t)n);
    if (!jy_all_finite(eq.q, (size_t)n)) {
      jy_set_error(e->error, "equilibrium: the guess q is not finite");
      st = JY_ERR_INVALID;
    }
    for (int k = 0; st == JY_OK && k < d.nhold; k++) {
      int j = d.hold ? d.hold[k] : -1;
      if (j < 0 || j >= n || eq.op.held[j]) {
        jy_set_error(e->error, "equilibrium: held coordinate %d is %s", j,
                     j < 0 || j >= n ? "out of range" : "held twice");
        st = JY_ERR_INVALID;
        break;
      }
      eq.op.held[j] = 1;
      eq.holds = 1;
    }
  }
  if (st == JY_OK) st = eq_solve(&eq, &d, &rep);
  if (st == JY_OK || st == JY_ERR_NOT_UNIQUE || st == JY_ERR_CONVERGENCE)
    memcpy(q, eq.q, sizeof(double) * (size_t)n);
  if (report) *report = rep;
  if (st == JY_ERR_NOMEM && !e->error[0]) jy_set_error(e->error, "equilibrium: out of memory");
  op_free(&eq.op);
  void *blocks[] = {zero,     eq.q,     eq.y,    eq.y_try, eq.jac,
                    eq.q_try, eq.basis, eq.gram, eq.w,     eq.channels};
  for (size_t k = 0; k < sizeof blocks / sizeof blocks[0]; k++) jy_free(a, blocks[k]);
  return st;
}

/* ---- linearization ------------------------------------------------------------------ */

jyLinearizeDef jy_default_linearize_def(void) {
  jyLinearizeDef d = {.tol = 1e-8, .step = 1e-4};
  return d;
}

void jy_linearization_destroy(jyLinearization *lin) {
  if (!lin) return;
  jyAllocator a = lin->alloc;
  jy_free(&a, lin); /* one block */
}

typedef struct Lin {
  Op op;
  const double *q0, *v0;
  double *f;    /* nx + ny: the function at a perturbed point */
  double *f2;   /* nx + ny */
  double *chan; /* nchannels */
  int nx, ny;
  const int *outputs;
} Lin;

/* f(x, u) = (der of the independent positions, accelerations of the independent velocities,
 * the outputs) at the state offset by dx (nx) from the operating point, carried onto the
 * rows. */
static jyStatus lin_eval(Lin *l, const double *dx, double *out) {
  Op *op = &l->op;
  int n = op->n, np = op->npos_ind;
  double *q = op->x_q, *v = op->x_v;
  memcpy(q, l->q0, sizeof(double) * (size_t)n);
  memcpy(v, l->v0, sizeof(double) * (size_t)n);
  for (int c = 0; c < np; c++) q[op->pos_ind[c]] += dx[c];
  for (int c = 0; c < op->nvel_ind; c++) v[op->vel_ind[c]] += dx[np + c];
  jyStatus st = solve_dependent(op, q, v, 0);
  if (st == JY_OK) st = solve_dependent(op, q, v, 1);
  if (st == JY_OK) st = jy_eval_acceleration(op->e, q, v, op->t, op->acc);
  if (st != JY_OK) return st;
  for (int c = 0; c < np; c++) out[c] = v[op->pos_ind[c]];
  for (int c = 0; c < op->nvel_ind; c++) out[np + c] = op->acc[op->vel_ind[c]];
  if (l->ny > 0) {
    st = jy_eval_channels(op->e, q, v, op->t, l->chan);
    if (st != JY_OK) return st;
    for (int k = 0; k < l->ny; k++) out[l->nx + k] = l->chan[l->outputs[k]];
  }
  return JY_OK;
}

/* One column of [A; C] (input < 0: perturbing state c) or [B; D] (input k) by central
 * differences at h and h/2 with Richardson extrapolation: values into col (nx + ny), the
 * estimated errors into err. */
static jyStatus lin_column(Lin *l, int c, int input, double base, double h, double *dx, double *col,
                           double *err, const double *f0) {
  int rows = l->nx + l->ny;
  double *plus = l->f, *minus = l->f2;
  for (int level = 0; level < 2; level++) {
    double step = level ? h / 2 : h;
    for (int side = 0; side < 2; side++) {
      double s = side ? -step : step;
      jyStatus st;
      if (input < 0) {
        dx[c] = s;
        st = lin_eval(l, dx, side ? minus : plus);
        dx[c] = 0;
      } else {
        st = jy_eval_set_input(l->op.e, input, base + s);
        if (st == JY_OK) st = lin_eval(l, dx, side ? minus : plus);
        jyStatus back = jy_eval_set_input(l->op.e, input, base);
        if (st == JY_OK) st = back;
      }
      if (st != JY_OK) return st;
    }
    for (int i = 0; i < rows; i++) {
      double diff = (plus[i] - minus[i]) / (2 * step);
      if (level == 0) {
        col[i] = diff;
      } else {
        double coarse = col[i];
        col[i] = diff + (diff - coarse) / 3;
        /* rounding: each f carries a few ulps of its size, divided by the step */
        double rounding = 8 * DBL_EPSILON * jy_larger(fabs(f0[i]), 1e-300) / step;
        err[i] = fabs(diff - coarse) / 3 + rounding;
      }
    }
  }
  return JY_OK;
}

jyStatus jy_model_linearize(jyEval *e, const jyLinearizeDef *def, jyLinearization **out) {
  if (!e || !out) return JY_ERR_INVALID;
  *out = NULL;
  const jyModel *m = e->model;
  jyLinearizeDef d = def ? *def : jy_default_linearize_def();
  e->error[0] = '\0';
  int n = m->n, nin_model = jy_model_num_inputs(m);
  int nu = d.inputs ? d.ninputs : nin_model, ny = d.outputs ? d.noutputs : 0;
  if (nu < 0 || ny < 0 || !(d.tol > 0) || !isfinite(d.tol) || !(d.step > 0) || !(d.step < 1) ||
      !isfinite(d.t)) {
    jy_set_error(e->error,
                 "linearize: ninputs and noutputs must be >= 0, tol > 0, 0 < step < 1 "
                 "and t finite");
    return JY_ERR_INVALID;
  }
  if (too_large(e, "linearize")) return JY_ERR_INVALID;
  for (int k = 0; d.inputs && k < nu; k++)
    if (d.inputs[k] < 0 || d.inputs[k] >= nin_model) {
      jy_set_error(e->error, "linearize: input index %d out of range (the model has %d)",
                   d.inputs[k], nin_model);
      return JY_ERR_INVALID;
    }
  for (int k = 0; k < ny; k++)
    if (d.outputs[k] < 0 || d.outputs[k] >= m->nchannels) {
      jy_set_error(e->error, "linearize: output channel %d out of range (the model has %d)",
                   d.outputs[k], m->nchannels);
      return JY_ERR_INVALID;
    }
  const double *q0 = d.q ? d.q : m->q0, *v0 = d.v ? d.v : m->v0;
  if (!jy_all_finite(q0, (size_t)n) || !jy_all_finite(v0, (size_t)n)) {
    jy_set_error(e->error, "linearize: the operating point (q, v) is not finite");
    return JY_ERR_INVALID;
  }
  Lin l;
  memset(&l, 0, sizeof l);
  l.q0 = q0;
  l.v0 = v0;
  l.ny = ny;
  l.outputs = d.outputs;
  jyStatus st = op_init(&l.op, e, d.t);
  Op *op = &l.op;
  const jyAllocator *a = op->a;
  jyLinearization *lin = NULL;
  double *dx = NULL, *col = NULL, *err = NULL, *f0 = NULL, *u0 = NULL;
  int nx = 0;
  if (st != JY_OK) goto done;
  /* the point must meet the rows */
  st = assemble_rows(op, q0, v0);
  if (st != JY_OK) goto done;
  for (int velocity = 0; velocity < 2 && op->rows > 0; velocity++) {
    int which;
    double worst = worst_row(op, velocity, &which);
    if (worst > d.tol) {
      jy_set_error(e->error,
                   "linearize: the state violates the %s constraints: row '%s' is off by %.3g "
                   "(%s; tolerance %.3g); start from model:initial() or an equilibrium",
                   velocity ? "velocity" : "position", m->row_names[which], worst,
                   velocity ? "its rate" : "its residual", d.tol);
      st = JY_ERR_INCONSISTENT;
      goto done;
    }
  }
  st = op_choose(op, q0, v0);
  if (st != JY_OK) goto done;
  nx = op->npos_ind + op->nvel_ind;
  l.nx = nx;
  size_t rows = (size_t)nx + (size_t)ny;
  size_t bytes = sizeof(jyLinearization) +
    sizeof(double) * ((size_t)nx * nx + (size_t)nx * nu + (size_t)ny * nx + (size_t)ny * nu) +
    sizeof(int) * ((size_t)nx + (size_t)nu + (size_t)ny) + 16;
  lin = jy_calloc(a, 1, bytes);
  dx = jy_calloc(a, (size_t)nx + 1, sizeof(double));
  col = jy_calloc(a, rows + 1, sizeof(double));
  err = jy_calloc(a, rows + 1, sizeof(double));
  f0 = jy_calloc(a, rows + 1, sizeof(double));
  l.f = jy_calloc(a, rows + 1, sizeof(double));
  l.f2 = jy_calloc(a, rows + 1, sizeof(double));
  l.chan = jy_calloc(a, (size_t)m->nchannels + 1, sizeof(double));
  if (!lin || !dx || !col || !err || !f0 || !l.f || !l.f2 || !l.chan) {
    st = JY_ERR_NOMEM;
    goto done;
  }
  lin->alloc = *a;
  lin->nx = nx;
  lin->nu = nu;
  lin->ny = ny;
  lin->npos = op->npos_ind;
  double *mats = (double *)(lin + 1);
  lin->A = mats;
  lin->B = lin->A + (size_t)nx * nx;
  lin->C = lin->B + (size_t)nx * nu;
  lin->D = lin->C + (size_t)ny * nx;
  lin->state_coord = (int *)(lin->D + (size_t)ny * nu);
  lin->input = lin->state_coord + nx;
  lin->output = lin->input + nu;
  for (int c = 0; c < op->npos_ind; c++) lin->state_coord[c] = op->pos_ind[c];
  for (int c = 0; c < op->nvel_ind; c++) lin->state_coord[op->npos_ind + c] = op->vel_ind[c];
  for (int k = 0; k < nu; k++) lin->input[k] = d.inputs ? d.inputs[k] : k;
  for (int k = 0; k < ny; k++) lin->output[k] = d.outputs[k];
  u0 = jy_calloc(a, (size_t)nu + 1, sizeof(double));
  if (!u0) {
    st = JY_ERR_NOMEM;
    goto done;
  }
  for (int k = 0; k < nu && st == JY_OK; k++) {
    u0[k] = d.u ? d.u[k] : jy_model_input_initial(m, lin->input[k]);
    st = jy_eval_set_input(e, lin->input[k], u0[k]);
  }
  if (st == JY_OK) st = lin_eval(&l, dx, f0);
  if (st != JY_OK) goto done;
  double worst_rel = 0;
  for (int c = 0; c < nx + nu && st == JY_OK; c++) {
    int state = c < nx, input = state ? -1 : lin->input[c - nx];
    double base = 0, x0;
    if (state) {
      int j = lin->state_coord[c];
      x0 = c < op->npos_ind ? q0[j] : v0[j];
    } else {
      base = x0 = u0[c - nx];
    }
    double h = d.step * jy_larger(1.0, fabs(x0));
    st = lin_column(&l, c, input, base, h, dx, col, err, f0);
    if (st != JY_OK) break;
    for (int i = 0; i < (int)rows; i++) {
      double *dst;
      int which;
      if (i < nx)
        dst = state ? &lin->A[i + (size_t)c * nx] : &lin->B[i + (size_t)(c - nx) * nx],
        which = state ? 0 : 1;
      else
        dst =
          state ? &lin->C[(i - nx) + (size_t)c * ny] : &lin->D[(i - nx) + (size_t)(c - nx) * ny],
        which = state ? 2 : 3;
      *dst = col[i];
      lin->error_abs[which] = jy_larger(lin->error_abs[which], err[i]);
      worst_rel = jy_larger(worst_rel, err[i] / jy_larger(1.0, fabs(col[i])));
    }
  }
  lin->error = worst_rel;
done:
  if (st == JY_ERR_NOMEM && !e->error[0]) jy_set_error(e->error, "linearize: out of memory");
  if (st == JY_OK)
    *out = lin;
  else
    jy_linearization_destroy(lin);
  void *blocks[] = {dx, col, err, f0, u0, l.f, l.f2, l.chan};
  for (size_t k = 0; k < sizeof blocks / sizeof blocks[0]; k++) jy_free(a, blocks[k]);
  op_free(op);
  return st;
}
