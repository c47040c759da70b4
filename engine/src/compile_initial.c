/* The initial-state stage of compiling a model: the script's initial values made
 * consistent with the constraints (positions, then velocities) by Gauss–Newton steps that
 * move the least-held values first and least, what moved reported; then the rows that
 * depend on the others at that state (redundant constraints) decided once for every
 * evaluator. docs/numerics.md explains the levels. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compile.h"

/* How strongly an initial value is held when the state is made consistent: the script's
 * values most, then the defaults of the others; the coordinates of a glued terminal block
 * (a pendulum's pivot, a mass glued to a point) follow what they are glued to. */
enum { HOLD_SET = 0, HOLD_DEFAULT = 1, FOLLOW_GLUE = 2, NUM_LEVELS = 3 };

/* Marks the coordinates of glued terminal blocks that follow their glue. Of a glue between
 * two blocks the massless part's block follows (as glue elimination would make it), else
 * both do. Eliminated glues have no coordinates left to mark. */
static void mark_followers(const jyModel *md, unsigned char *follows) {
  for (int g = 0; g < md->nglues; g++) {
    const jyModelGlue *gl = &md->glues[g];
    if (gl->link >= 0) continue;
    const int part[2] = {gl->part_a, gl->part_b}, term[2] = {gl->terminal_a, gl->terminal_b};
    int offset[2] = {-1, -1}, massless[2] = {0, 0};
    for (int side = 0; side < 2; side++) {
      const jyModelPart *p = &md->parts[part[side]];
      if (term[side] >= p->shape->nterminals) /* a coordinate terminal: a block of one */
        offset[side] = term[side] - p->shape->nterminals;
      else if (p->shape->terminals[term[side]].is_coord_block)
        offset[side] = p->shape->terminals[term[side]].coord_offset;
      massless[side] = offset[side] >= 0 && !p->inst.type->mass;
    }
    for (int side = 0; side < 2; side++) {
      if (offset[side] < 0 || (massless[1 - side] && !massless[side])) continue;
      for (int k = 0; k < gl->dim; k++) {
        int j = md->parts[part[side]].coord_map[offset[side] + k];
        if (j >= 0) follows[j] = 1;
      }
    }
  }
}

/* Gauss-Newton on selected rows, moving only the columns in `cols`: each step solves
 * J[rows, cols] dx = -r lexicographically by the columns' levels. x is q (position stage)
 * or v (velocity stage). */
typedef struct newton {
  jyEval *e;
  int position; /* 1: residual phi over position rows, move q; 0: rates, move v */
  double t;
  int *rows, nrows;
  int *cols, ncols;
  unsigned char *level; /* per column */
  double *mat;          /* nrows x ncols: J[rows, cols] */
  int *row_at;          /* m: the position of each row in rows, or -1 (dense_step's) */
  double *rest, *proj;  /* scratch: columns of higher levels (QR), projected columns + rhs */
  double *res, *dx, *rhs, *sv, *tau;
  int *picked;
  lapack_int *jpvt;
  jyCompileSparse *sparse; /* large models: the sparse step first (NULL: dense only) */
  int *top_cols;           /* the sparse step's columns (model numbering) */
  /* LAPACK's workspace, from the model's allocator and grown to what each call's query
   * asks: LAPACKE's own would come from malloc and print to stdout when it fails. */
  const jyAllocator *alloc;
  double *work;
  lapack_int lwork, *iwork, liwork;
} newton;

static double stage_residual(const jyModel *md, jyEval *e, int position, int row) {
  if (position) return e->residual[row];
  return md->row_kinds[row] == JY_ROW_POSITION ? e->rate[row] : e->residual[row];
}

static double column_norm(const double *col, int n) {
  double sum = 0;
  for (int i = 0; i < n; i++) sum += col[i] * col[i];
  return sqrt(sum);
}

/* A LAPACK status as the step's: 0 solved, LEVEL_STEP_FAILED for a numerical failure (the
 * Newton loop stops and the residual test judges), JY_ERR_NOMEM when its workspace could not
 * be had (an error: a half-done step must not pass for a result). */
enum { LEVEL_STEP_FAILED = -1 };
static int lapack_outcome(lapack_int info) {
  if (info == LAPACK_WORK_MEMORY_ERROR || info == LAPACK_TRANSPOSE_MEMORY_ERROR)
    return JY_ERR_NOMEM;
  return info == 0 ? 0 : LEVEL_STEP_FAILED;
}

/* Replaces *block (of *have elements of `size` bytes) by a zeroed one of `want` elements
 * when it is smaller. 0, or JY_ERR_NOMEM. */
static int grow_block(const jyAllocator *a, void **block, lapack_int *have, lapack_int want,
                      size_t size) {
  if (want <= *have) return 0;
  void *grown = jy_calloc(a, (size_t)want, size);
  if (!grown) return JY_ERR_NOMEM;
  jy_free(a, *block);
  *block = grown;
  *have = want;
  return 0;
}

/* Grows the workspace to the answer of the query that returned info (*work_query doubles,
 * *iwork_query integers, NULL for none); pointers, so they are read after the query ran. */
static int reserve_work(newton *nw, lapack_int info, const double *work_query,
                        const lapack_int *iwork_query) {
  if (info != 0) return lapack_outcome(info);
  void *work = nw->work, *iwork = nw->iwork;
  int out = grow_block(nw->alloc, &work, &nw->lwork, (lapack_int)*work_query, sizeof(double));
  nw->work = work;
  if (out == 0 && iwork_query)
    out = grow_block(nw->alloc, &iwork, &nw->liwork, *iwork_query, sizeof(lapack_int));
  nw->iwork = iwork;
  return out;
}

/* Q^T of the nr higher levels' columns (in rest) applied to the level's nl columns and res
 * (in proj): the higher levels' range is the first *rank rows. 0, or as lapack_outcome. */
static int project_out_higher(newton *nw, int rows, int nl, int nr, int *rank) {
  double query = 0;
  memset(nw->jpvt, 0, sizeof(lapack_int) * (size_t)nr);
  int out = reserve_work(
    nw,
    LAPACKE_dgeqp3_work(LAPACK_COL_MAJOR, rows, nr, nw->rest, rows, nw->jpvt, nw->tau, &query, -1),
    &query, NULL);
  if (out == 0)
    out = lapack_outcome(LAPACKE_dgeqp3_work(LAPACK_COL_MAJOR, rows, nr, nw->rest, rows, nw->jpvt,
                                             nw->tau, nw->work, nw->lwork));
  if (out != 0) return out;
  *rank = 0;
  for (int k = 0; k < rows && k < nr; k++)
    if (fabs(nw->rest[k + (size_t)k * rows]) > 1e-12 * fabs(nw->rest[0])) *rank = k + 1;
  if (*rank == 0) return 0;
  out = reserve_work(nw,
                     LAPACKE_dormqr_work(LAPACK_COL_MAJOR, 'L', 'T', rows, nl + 1, *rank, nw->rest,
                                         rows, nw->tau, nw->proj, rows, &query, -1),
                     &query, NULL);
  if (out != 0) return out;
  return lapack_outcome(LAPACKE_dormqr_work(LAPACK_COL_MAJOR, 'L', 'T', rows, nl + 1, *rank,
                                            nw->rest, rows, nw->tau, nw->proj, rows, nw->work,
                                            nw->lwork));
}

/* Moves the columns of one level as little as lets the columns of the higher levels meet
 * what remains of res: the part of res (and of the level's columns) outside the range of
 * the higher levels' columns is solved for minimum norm; res is updated. 0 on success,
 * else as lapack_outcome. */
static int level_step(newton *nw, int level) {
  int rows = nw->nrows, nl = 0, nr = 0;
  double jnorm = 0;
  for (int c = 0; c < nw->ncols; c++) {
    const double *col = nw->mat + (size_t)c * rows;
    if (nw->level[c] == level) {
      memcpy(nw->proj + (size_t)nl * rows, col, sizeof(double) * (size_t)rows);
      jnorm = hypot(jnorm, column_norm(col, rows));
      nw->picked[nl++] = c;
    } else if (nw->level[c] > level) {
      memcpy(nw->rest + (size_t)nr++ * rows, col, sizeof(double) * (size_t)rows);
    }
  }
  if (nl == 0) return 0;
  memcpy(nw->proj + (size_t)nl * rows, nw->res, sizeof(double) * (size_t)rows);
  int rank = 0;
  if (nr > 0) {
    int out = project_out_higher(nw, rows, nl, nr, &rank);
    if (out != 0) return out;
  }
  int left = rows - rank, ld = left > nl ? left : nl;
  double pnorm = 0;
  for (int k = 0; k < nl; k++)
    pnorm = hypot(pnorm, column_norm(nw->proj + rank + (size_t)k * rows, left));
  /* Nothing of these columns is outside the higher levels' range (up to rounding): hold. */
  if (left == 0 || !(pnorm > 1e-12 * jnorm)) return 0;
  memset(nw->rhs, 0, sizeof(double) * (size_t)ld);
  memcpy(nw->rhs, nw->proj + rank + (size_t)nl * rows, sizeof(double) * (size_t)left);
  lapack_int got = 0; /* singular values below 1e-12 of the unprojected columns' are zero */
  double rcond = fmin(0.5, fmax(1e-12, 1e-12 * jnorm / pnorm));
  double query = 0;
  lapack_int iquery = 0;
  int out = reserve_work(nw,
                         LAPACKE_dgelsd_work(LAPACK_COL_MAJOR, left, nl, 1, nw->proj + rank, rows,
                                             nw->rhs, ld, nw->sv, rcond, &got, &query, -1, &iquery),
                         &query, &iquery);
  if (out == 0)
    out = lapack_outcome(LAPACKE_dgelsd_work(LAPACK_COL_MAJOR, left, nl, 1, nw->proj + rank, rows,
                                             nw->rhs, ld, nw->sv, rcond, &got, nw->work, nw->lwork,
                                             nw->iwork));
  if (out != 0) return out;
  for (int k = 0; k < nl; k++) {
    int c = nw->picked[k];
    nw->dx[c] = nw->rhs[k];
    for (int i = 0; i < rows; i++) nw->res[i] -= nw->mat[i + (size_t)c * rows] * nw->rhs[k];
  }
  return 0;
}

/* The dense step's limit: three m x n arrays of 32 MB and a pivoted QR of some seconds a
 * Newton step. Above it a step the sparse path cannot take (the rows lose rank there) is an
 * error saying so, not hours of dense work. */
enum { DENSE_STEP_MAX_ENTRIES = 1 << 22, DENSE_STEP_TOO_LARGE = -2 };

/* The dense arrays of the lexicographic step (m x n each), had when first needed: a large
 * model whose steps the sparse path takes never allocates them. */
static int dense_reserve(newton *nw) {
  if (nw->mat) return 0;
  const jyModel *md = nw->e->model;
  size_t m = (size_t)md->m, n = (size_t)md->n;
  if (m * n > DENSE_STEP_MAX_ENTRIES) return DENSE_STEP_TOO_LARGE;
  nw->mat = jy_calloc(nw->alloc, m * n + 1, sizeof(double));
  nw->rest = jy_calloc(nw->alloc, m * n + 1, sizeof(double));
  nw->proj = jy_calloc(nw->alloc, m * (n + 1) + 1, sizeof(double));
  nw->row_at = jy_calloc(nw->alloc, m + 1, sizeof(int));
  return nw->mat && nw->rest && nw->proj && nw->row_at ? 0 : JY_ERR_NOMEM;
}

/* One lexicographic step on the dense J[rows, cols], level by level. */
static int dense_step(newton *nw) {
  int reserved = dense_reserve(nw);
  if (reserved != 0) return reserved;
  int rows = nw->nrows, m = nw->e->model->m;
  /* J[rows, cols] from the evaluator's compressed A (a large model keeps no dense one) */
  const jyCsc *a = jy_eval_constraint_matrix(nw->e);
  int *row_at = nw->row_at;
  for (int i = 0; i < m; i++) row_at[i] = -1;
  for (int k = 0; k < rows; k++) row_at[nw->rows[k]] = k;
  memset(nw->mat, 0, sizeof(double) * (size_t)rows * (size_t)nw->ncols);
  for (int c = 0; c < nw->ncols; c++)
    for (int k = a->p[nw->cols[c]]; k < a->p[nw->cols[c] + 1]; k++)
      if (row_at[a->i[k]] >= 0) nw->mat[row_at[a->i[k]] + (size_t)c * rows] = a->x[k];
  int failed = 0;
  for (int level = 0; level < NUM_LEVELS && !failed; level++) failed = level_step(nw, level);
  return failed;
}

/* The lexicographic step when the columns of the highest level present have full row rank
 * (by a wide margin): every lower level holds, since the highest one can meet any residual,
 * and the step is the highest level's minimum-norm one, as level_step would find it. 0, 1
 * when the dense step must decide, or JY_ERR_NOMEM. */
static int sparse_step(newton *nw) {
  int top = -1, ntop = 0;
  for (int c = 0; c < nw->ncols; c++) top = nw->level[c] > top ? nw->level[c] : top;
  for (int c = 0; c < nw->ncols; c++)
    if (nw->level[c] == top) {
      nw->picked[ntop] = c;
      nw->top_cols[ntop++] = nw->cols[c];
    }
  int out = jy_compile_sparse_step(nw->sparse, nw->e, nw->rows, nw->nrows, nw->top_cols, ntop,
                                   nw->res, nw->rhs);
  if (out == 0)
    for (int k = 0; k < ntop; k++) nw->dx[nw->picked[k]] = nw->rhs[k];
  return out;
}

/* Large models meet their rows and decide their dependent rows through sparse
 * factorizations first: the same solver setting as the acceleration's sparse path. */
static int compiles_sparse(const jyModel *md) {
  return md->solver.sparse_min_coords > 0 && md->n >= md->solver.sparse_min_coords;
}

static jyStatus newton_solve(newton *nw, double *q, double *v, double tol, int max_iter,
                             double *final_residual) {
  jyEval *e = nw->e;
  const jyModel *md = e->model;
  double *x = nw->position ? q : v;
  double worst = INFINITY;
  for (int it = 0; it <= max_iter; it++) {
    jyStatus st = jy_assemble(e, q, v, nw->t, JY_ASM_CONSTRAINTS | JY_ASM_RESIDUALS);
    if (st != JY_OK) return st;
    worst = 0;
    for (int k = 0; k < nw->nrows; k++)
      worst = fmax(worst, fabs(stage_residual(md, e, nw->position, nw->rows[k])));
    if (worst <= tol || it == max_iter || nw->ncols == 0) break;
    for (int k = 0; k < nw->nrows; k++)
      nw->res[k] = -stage_residual(md, e, nw->position, nw->rows[k]);
    memset(nw->dx, 0, sizeof(double) * (size_t)nw->ncols);
    int failed = nw->sparse ? sparse_step(nw) : 1;
    if (failed == 1) failed = dense_step(nw);
    if (failed == JY_ERR_NOMEM) {
      snprintf(e->error, sizeof e->error, "out of memory for the solver's workspace");
      return JY_ERR_NOMEM;
    }
    if (failed == DENSE_STEP_TOO_LARGE) {
      snprintf(e->error, sizeof e->error,
               "the %s rows lose rank at this state (redundant rows, or a singular "
               "configuration), which only the dense rank-revealing step decides, and this "
               "model (%d rows, %d coordinates) is above its limit of %d entries: start "
               "from a configuration that meets the rows, or leave out the redundant ones",
               nw->position ? "position" : "velocity", md->m, md->n, DENSE_STEP_MAX_ENTRIES);
      return JY_ERR_INVALID;
    }
    if (failed) break;
    for (int c = 0; c < nw->ncols; c++) x[nw->cols[c]] += nw->dx[c];
  }
  *final_residual = worst;
  return JY_OK;
}

static void newton_free(const jyAllocator *a, newton *nw) {
  jy_free(a, nw->rows);
  jy_free(a, nw->cols);
  jy_free(a, nw->level);
  jy_free(a, nw->mat);
  jy_free(a, nw->row_at);
  jy_free(a, nw->rest);
  jy_free(a, nw->proj);
  jy_free(a, nw->res);
  jy_free(a, nw->dx);
  jy_free(a, nw->rhs);
  jy_free(a, nw->sv);
  jy_free(a, nw->tau);
  jy_free(a, nw->picked);
  jy_free(a, nw->jpvt);
  jy_free(a, nw->work);
  jy_free(a, nw->iwork);
  jy_free(a, nw->top_cols);
  jy_compile_sparse_destroy(nw->sparse);
}

static int newton_alloc(const jyAllocator *a, newton *nw, int n, int m) {
  size_t big = (size_t)(m > n ? m : n) + 1;
  nw->alloc = a;
  nw->rows = jy_calloc(a, (size_t)m + 1, sizeof(int));
  nw->cols = jy_calloc(a, (size_t)n + 1, sizeof(int));
  nw->level = jy_calloc(a, (size_t)n + 1, 1);
  nw->top_cols = jy_calloc(a, (size_t)n + 1, sizeof(int));
  nw->res = jy_calloc(a, (size_t)m + 1, sizeof(double));
  nw->dx = jy_calloc(a, (size_t)n + 1, sizeof(double));
  nw->rhs = jy_calloc(a, big, sizeof(double));
  nw->sv = jy_calloc(a, big, sizeof(double));
  nw->tau = jy_calloc(a, big, sizeof(double));
  nw->picked = jy_calloc(a, (size_t)n + 1, sizeof(int));
  nw->jpvt = jy_calloc(a, (size_t)n + 1, sizeof(lapack_int));
  return nw->rows && nw->cols && nw->level && nw->top_cols && nw->res && nw->dx && nw->rhs &&
    nw->sv && nw->tau && nw->picked && nw->jpvt;
}

/* Levels of the model's coordinates from the script's flags (set_q, set_v per coordinate);
 * reports the initial values given to eliminated coordinates, which follow their glue. */
static jyStatus mark_set(jyModel *md, const jySystem *sys, unsigned char *q_set,
                         unsigned char *v_set) {
  for (int i = 0; i < md->nparts; i++) {
    const jySysPart *sp = &sys->parts[i];
    for (int j = 0; j < sp->shape->ncoords; j++) {
      int k = md->parts[i].coord_map[j];
      if (k >= 0) {
        q_set[k] = sp->q_set[j];
        v_set[k] = sp->v_set[j];
      } else if (sp->q_set[j] || sp->v_set[j]) {
        const jyModelLink *link = &md->links[-1 - k];
        const jyModelPart *src = &md->parts[link->source];
        jyStatus st = jy_compile_report(
          md, "initial value of %s.%s ignored: it follows %s.%s through glue '%s'", sp->name,
          sp->shape->coord_names[j], src->inst.name,
          link->terminal < src->shape->nterminals
            ? src->shape->terminals[link->terminal].name
            : src->shape->coord_names[link->terminal - src->shape->nterminals],
          md->glues[link->glue].name);
        if (st != JY_OK) return st;
      }
    }
  }
  return JY_OK;
}

/* The script's angular velocities (jy_system_set_angular_velocity) as quaternion rates at
 * the assembled orientation, set like velocities the script gave: q' = 1/2 q (x) (0, w) for
 * body axes, 1/2 (0, w) (x) q for space axes, over |q|^2 so that 2 G(q) q' is w exactly
 * (G G^T = |q|^2 I) and q . q' = 0 (the norm row's rate). v_before (may be NULL) gets them
 * too, so that the velocity stage reports them only if it moves them. */
static jyStatus set_angular_velocities(jyModel *md, const jySystem *sys, unsigned char *v_set,
                                       double *v_before) {
  for (int i = 0; i < md->nparts; i++) {
    const jySysPart *sp = &sys->parts[i];
    int off = sp->omega_axes < 0 ? -1 : jy_part_frame_quaternion(sp->shape);
    if (off < 0) continue;
    const int *map = md->parts[i].coord_map + off;
    if (map[0] < 0 || map[1] < 0 || map[2] < 0 || map[3] < 0) {
      jyStatus st = jy_compile_report(md,
                                      "initial angular velocity of %s ignored: its "
                                      "orientation follows a glue",
                                      sp->name);
      if (st != JY_OK) return st;
      continue;
    }
    double q[4], qq = 0, qd[4];
    for (int k = 0; k < 4; k++) q[k] = md->q0[map[k]], qq += q[k] * q[k];
    if (!(qq > 0)) continue; /* the norm row refuses a zero quaternion with its message */
    const double *w = sp->omega, s = sp->omega_axes == JY_OMEGA_BODY ? 1.0 : -1.0;
    /* e x w (body) or w x e (space): the sign s of the cross product is all that differs */
    double c[3] = {q[2] * w[2] - q[3] * w[1], q[3] * w[0] - q[1] * w[2], q[1] * w[1] - q[2] * w[0]};
    qd[0] = -0.5 * (q[1] * w[0] + q[2] * w[1] + q[3] * w[2]) / qq;
    for (int k = 0; k < 3; k++) qd[1 + k] = 0.5 * (q[0] * w[k] + s * c[k]) / qq;
    for (int k = 0; k < 4; k++) {
      md->v0[map[k]] = qd[k];
      if (v_set) v_set[map[k]] = 1;
      if (v_before) v_before[map[k]] = qd[k];
    }
  }
  return JY_OK;
}

/* Meets one stage's rows (positions, or velocities), moving first only the followers, then
 * the unset values too, then everything; *tol gets the stage's tolerance. */
static jyStatus meet_stage(jyModel *md, jySystem *sys, newton *nw, const unsigned char *set,
                           const unsigned char *follows, double *tol) {
  int n = md->n, m = md->m, stage = nw->position;
  double scale = 1;
  for (int j = 0; j < n; j++) scale = fmax(scale, fabs(stage ? md->q0[j] : md->v0[j]));
  *tol = md->solver.assembly_tol * scale;
  nw->nrows = 0;
  for (int i = 0; i < m; i++)
    if (stage ? md->row_kinds[i] == JY_ROW_POSITION : md->row_kinds[i] != JY_ROW_ACCELERATION)
      nw->rows[nw->nrows++] = i;
  if (nw->nrows == 0) return JY_OK;
  double residual = INFINITY;
  for (int lowest = FOLLOW_GLUE; lowest >= HOLD_SET && !(residual <= *tol); lowest--) {
    nw->ncols = 0;
    for (int j = 0; j < n; j++) {
      int level = set[j] ? HOLD_SET : follows[j] ? FOLLOW_GLUE : HOLD_DEFAULT;
      if (level < lowest) continue;
      nw->level[nw->ncols] = (unsigned char)level;
      nw->cols[nw->ncols++] = j;
    }
    jyStatus st = newton_solve(nw, md->q0, md->v0, *tol, 50, &residual);
    if (st != JY_OK) {
      jy_set_error(sys->error, "initial state: %s", nw->e->error);
      return st;
    }
  }
  if (residual <= *tol) return JY_OK;
  jy_set_error(sys->error, "inconsistent constraints: no %s satisfies these rows at t = 0: ",
               stage ? "configuration" : "velocity");
  int listed = 0;
  for (int k = 0; k < nw->nrows; k++) {
    int row = nw->rows[k];
    double r = stage_residual(md, nw->e, stage, row);
    if (fabs(r) <= *tol) continue;
    char item[300];
    snprintf(item, sizeof item, "%s%s (residual %.3g)", listed++ ? ", " : "", md->row_names[row],
             r);
    size_t used = strlen(sys->error);
    if (used + 1 < JY_ERROR_LEN) snprintf(sys->error + used, JY_ERROR_LEN - used, "%s", item);
  }
  return JY_ERR_INCONSISTENT;
}

/* Keeps and reports the values that moved beyond the stage's tolerance. */
static jyStatus record_moved(jyModel *md, const double *before, const double *after,
                             const unsigned char *set, const unsigned char *follows, int velocity,
                             double tol) {
  int count = 0; /* counted first: the list grows once per stage, not once per value */
  for (int j = 0; j < md->n; j++) count += fabs(after[j] - before[j]) > tol;
  if (count == 0) return JY_OK;
  jyMovedValue *grown = jy_alloc(&md->alloc, sizeof *grown * (size_t)(md->nmoved + count));
  if (!grown) return JY_ERR_NOMEM;
  if (md->nmoved) memcpy(grown, md->moved, sizeof *grown * (size_t)md->nmoved);
  jy_free(&md->alloc, md->moved);
  md->moved = grown;
  for (int j = 0; j < md->n; j++) {
    if (!(fabs(after[j] - before[j]) > tol)) continue;
    md->moved[md->nmoved++] =
      (jyMovedValue){j, velocity, set[j], !set[j] && follows[j], before[j], after[j]};
    if (md->nmoved > 20) continue;
    jyStatus st = jy_compile_report(md, "initial %s %s: %.9g -> %.9g (by %.3g)%s",
                                    velocity ? "velocity" : "value", md->coord_names[j], before[j],
                                    after[j], after[j] - before[j],
                                    set[j]         ? " [set by the script]"
                                      : follows[j] ? " [follows its glue]"
                                                   : "");
    if (st != JY_OK) return st;
  }
  return JY_OK;
}

/* Makes (q0, v0) consistent: positions, then velocities. Each stage first moves only the
 * coordinates of glued terminal blocks, then the values the script did not set, then all;
 * within a step the most-held values move least (set, then unset, then followers). */
jyStatus jy_compile_initial_state(jyModel *md, jySystem *sys, jyEval *e) {
  int n = md->n, m = md->m;
  const jyAllocator *a = &md->alloc;
  if (m == 0) return set_angular_velocities(md, sys, NULL, NULL);
  unsigned char *q_set = jy_calloc(a, (size_t)n + 1, 1), *v_set = jy_calloc(a, (size_t)n + 1, 1);
  unsigned char *follows = jy_calloc(a, (size_t)n + 1, 1);
  double *q_before = jy_calloc(a, (size_t)n + 1, sizeof(double));
  double *v_before = jy_calloc(a, (size_t)n + 1, sizeof(double));
  newton nw = {.e = e, .t = 0};
  jyStatus st = JY_ERR_NOMEM;
  if (!newton_alloc(a, &nw, n, m) || !q_set || !v_set || !follows || !q_before || !v_before)
    goto out;
  if (compiles_sparse(md) && !(nw.sparse = jy_compile_sparse_create(a))) goto out;
  st = mark_set(md, sys, q_set, v_set);
  if (st != JY_OK) goto out;
  mark_followers(md, follows);
  memcpy(q_before, md->q0, sizeof(double) * (size_t)n);
  memcpy(v_before, md->v0, sizeof(double) * (size_t)n);
  double q_tol = 0, v_tol = 0;
  nw.position = 1;
  st = meet_stage(md, sys, &nw, q_set, follows, &q_tol);
  if (st != JY_OK) goto out;
  st = set_angular_velocities(md, sys, v_set, v_before);
  if (st != JY_OK) goto out;
  nw.position = 0;
  st = meet_stage(md, sys, &nw, v_set, follows, &v_tol);
  if (st != JY_OK) goto out;
  st = record_moved(md, q_before, md->q0, q_set, follows, 0, q_tol);
  if (st == JY_OK) st = record_moved(md, v_before, md->v0, v_set, follows, 1, v_tol);
  if (st == JY_OK && md->nmoved > 20)
    st = jy_compile_report(md, "... and %d more initial values moved", md->nmoved - 20);
out:
  newton_free(a, &nw);
  jy_free(a, q_set);
  jy_free(a, v_set);
  jy_free(a, follows);
  jy_free(a, q_before);
  jy_free(a, v_before);
  return st;
}

/* 1 when the assembled A has full row rank by a wide margin (no dependent rows, no dense
 * decision needed), 0 when the dense decision must be made, or JY_ERR_NOMEM. */
static int sparse_full_rank(const jyModel *md, jyEval *e) {
  const jyAllocator *a = &md->alloc;
  jyCompileSparse *s = jy_compile_sparse_create(a);
  int *rows = jy_calloc(a, (size_t)md->m + 1, sizeof(int));
  int *cols = jy_calloc(a, (size_t)md->n + 1, sizeof(int));
  int out =
    s && rows && cols ? jy_compile_sparse_no_dependent_rows(s, e, rows, cols) : JY_ERR_NOMEM;
  jy_compile_sparse_destroy(s);
  jy_free(a, rows);
  jy_free(a, cols);
  return out;
}

/* Decides the rows that depend on the others at the consistent initial state (QR with
 * column pivoting of the row-scaled A^T), keeps them in the model, so that every evaluator
 * leaves them out of its solves, and names them in the report. */
jyStatus jy_compile_dependent_rows(jyModel *md, jyEval *e) {
  int m = md->m;
  if (m == 0 || md->n == 0) return JY_OK;
  jyStatus st = jy_assemble(e, md->q0, md->v0, 0, JY_ASM_CONSTRAINTS);
  if (st != JY_OK) return st;
  if (compiles_sparse(md)) {
    int full_rank = sparse_full_rank(md, e);
    if (full_rank != 0) return full_rank == 1 ? JY_OK : JY_ERR_NOMEM;
  }
  int count = jy_eval_decide_dependent(e);
  for (int i = 0; e->inactive && count > 0 && i < m; i++)
    if (e->inactive[i] && e->dependent[i]) { /* a zero row now, not a redundant one */
      e->dependent[i] = 0;
      count--;
    }
  if (count <= 0) return JY_OK;
  md->dependent_rows = jy_calloc(&md->alloc, (size_t)m, 1);
  if (!md->dependent_rows) return JY_ERR_NOMEM;
  memcpy(md->dependent_rows, e->dependent, (size_t)m);
  md->ndependent = count;
  char list[2048] = "";
  for (int i = 0, listed = 0; i < m; i++) {
    size_t used = strlen(list);
    if (md->dependent_rows[i] && used + 1 < sizeof list)
      snprintf(list + used, sizeof list - used, "%s%s", listed++ ? ", " : "", md->row_names[i]);
  }
  return jy_compile_report(md, "redundant constraints: rank %d of %d rows; dependent rows: %s",
                           m - count, m, list);
}
