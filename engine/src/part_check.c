/* The part-protocol conformance suite (joinery/conformance.h): every function of a part
 * type against finite differences and the identities the protocol promises. */
#include <lapacke.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "vec.h"
#include "joinery/conformance.h"

enum { MAXN = JY_PART_MAX_COORDS, NGUARD = 4, LOG_LINES_PER_CHECK = 4 };
#define CANARY 1234.5678

/* Steps and tolerances: see the header for why. */
#define H1 1e-6
#define TOL1 1e-6
#define H2 1e-4
#define TOL2 1e-5

static const struct {
  const char *name, *what;
  int advisory;
} check_info[JY_CHECK_COUNT] = {
#define JY_CHECK_INFO(id, name, advisory, what) {name, what, advisory},
  JY_CHECK_LIST(JY_CHECK_INFO)
#undef JY_CHECK_INFO
};

/* Tolerance of each check, in its measure. */
static double check_tol(jyCheck id) {
  switch (id) {
  case JY_CHECK_TERMINAL_JAC:
  case JY_CHECK_TERMINAL_VEL_BIAS:
  case JY_CHECK_TERMINAL_ACC_BIAS:
  case JY_CHECK_CONSTRAINT_A:
  case JY_CHECK_CONSTRAINT_RATE:
  case JY_CHECK_LAGRANGE:
  case JY_CHECK_REST_FORCE:
  case JY_CHECK_PASSIVE: /* v . (Q - Q_L) with Q_L by FD: as noisy as a first difference */
    return TOL1;
  case JY_CHECK_CONSTRAINT_B: /* second differences for position rows */
    return TOL2;
  case JY_CHECK_MASS_SYMMETRIC:
    return 1e-14; /* rounding of M's entries */
  case JY_CHECK_MASS_PSD:
    return 1e-12; /* dsyev's backward error ~ n eps |M| */
  case JY_CHECK_MASS_CONSTANT:
    return 1e-13; /* rounding only */
  case JY_CHECK_KINETIC:
    return 1e-12; /* rounding of an n^2-term sum */
  case JY_CHECK_OPTIONAL:
    return 1e-15; /* the same arithmetic either way */
  default:
    return 0.0; /* yes/no checks: any failure counts */
  }
}

/* Everything one run of the suite needs; on the heap (the matrices are 32 KB each). */
typedef struct Checker {
  const jyAllocator *alloc;
  const jyPartType *type;
  jyConformanceReport *rep;
  uint64_t rng;
  int logged[JY_CHECK_COUNT]; /* failure lines written per check */
  int log_full;

  /* the instance under test */
  char label[96];
  double *params; /* type->nparams */
  jyPartShape shape;
  jyPartInstance inst;
  void *data;
  double gravity[3];
  char error[256];
  int nc, nr, conservative;

  /* the part's own scratch (shape.scratch_size), given to every call while use_scratch */
  _Alignas(16) unsigned char part_scratch[JY_PART_MAX_SCRATCH];
  int use_scratch;

  /* scratch: one buffer per nesting level of the calls below */
  double guard_buf[MAXN * MAXN + NGUARD]; /* call_mass, call_constraints */
  double mat_a[MAXN * MAXN], mat_b[MAXN * MAXN], mat_eig[MAXN * MAXN];
  double mat_energy[MAXN * MAXN], mat_massv[MAXN * MAXN];
} Checker;

/* ---- report ------------------------------------------------------------------------- */

static void log_line(Checker *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void log_line(Checker *c, const char *fmt, ...) {
  char *log = c->rep->log;
  size_t cap = sizeof c->rep->log, used = strlen(log);
  if (c->log_full) return;
  char line[512];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  size_t len = strlen(line);
  if (used + len + 2 + 4 >= cap) { /* keep room for "...\n" */
    memcpy(log + used, "...\n", 5);
    c->log_full = 1;
    return;
  }
  memcpy(log + used, line, len);
  log[used + len] = '\n';
  log[used + len + 1] = '\0';
}

/* Records one comparison: err against the check's tolerance (NaN counts as +inf). */
static void measure(Checker *c, jyCheck id, double err, const char *fmt, ...)
  __attribute__((format(printf, 4, 5)));

static void measure(Checker *c, jyCheck id, double err, const char *fmt, ...) {
  jyCheckResult *r = &c->rep->checks[id];
  if (err != err) err = INFINITY;
  r->count++;
  char detail[128];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(detail, sizeof detail, fmt, ap);
  va_end(ap);
  if (err > r->worst) {
    r->worst = err;
    snprintf(r->where, sizeof r->where, "%s%s%s", c->label, detail[0] ? ": " : "", detail);
  }
  if (err > r->tol) {
    r->failed++;
    if (c->logged[id]++ < LOG_LINES_PER_CHECK)
      log_line(c, "  %s %s: %s%s%s (error %.3g, tol %.3g)", r->advisory ? "note" : "FAIL", r->name,
               c->label, detail[0] ? ": " : "", detail, err, r->tol);
  }
}

/* ---- random numbers (splitmix64: the same sequence on every platform) --------------- */

static double urand(Checker *c, double lo, double hi) {
  uint64_t z = (c->rng += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  z ^= z >> 31;
  return lo + (hi - lo) * (double)(z >> 11) / 9007199254740992.0;
}

/* ---- guarded calls: outputs arrive zero-filled, followed by canaries that must survive */

static void guard(double *buf, int n) {
  for (int i = 0; i < n; i++) buf[i] = 0.0;
  for (int i = 0; i < NGUARD; i++) buf[n + i] = CANARY;
}

static void check_guard(Checker *c, const char *what, const double *buf, int n) {
  int good = 1;
  for (int i = 0; i < NGUARD; i++) good = good && buf[n + i] == CANARY;
  measure(c, JY_CHECK_BOUNDS, good ? 0.0 : 1.0, "%s wrote past its %d outputs", what, n);
}

static void check_finite(Checker *c, const char *what, const double *buf, int n) {
  int good = 1;
  for (int i = 0; i < n; i++) good = good && isfinite(buf[i]);
  measure(c, JY_CHECK_FINITE, good ? 0.0 : 1.0, "%s returned a non-finite number", what);
}

static int note(Checker *c, const char *what, int rc) {
  measure(c, JY_CHECK_CALLS, rc ? 1.0 : 0.0, "%s failed: %s", what, rc ? c->error : "");
  return rc;
}

static void copy(double *dst, const double *src, int n) {
  if (dst) memcpy(dst, src, sizeof(double) * (size_t)n);
}

static jyPartState state_at(Checker *c, const double *q, const double *v, double t) {
  c->error[0] = '\0';
  void *scratch = c->use_scratch && c->shape.scratch_size ? c->part_scratch : NULL;
  return (jyPartState){q,    v, t,    c->gravity, c->error, sizeof c->error, 0, scratch, 0, 0,
                       NULL, 0, NULL, NULL,       NULL};
}

/* NULL outputs are passed to the part as NULL. */
static int call_terminal(Checker *c, int k, const double *q, const double *v, double t,
                         double *value, double *jac, double *vel_bias, double *acc_bias) {
  int dim = c->shape.terminals[k].dim, nj = dim * c->nc;
  double bv[JY_TERMINAL_MAX_DIM + NGUARD], bj[JY_TERMINAL_MAX_DIM * MAXN + NGUARD];
  double bb[JY_TERMINAL_MAX_DIM + NGUARD], ba[JY_TERMINAL_MAX_DIM + NGUARD];
  guard(bv, dim), guard(bj, nj), guard(bb, dim), guard(ba, dim);
  jyPartState s = state_at(c, q, v, t);
  int rc = c->type->terminal ? c->type->terminal(&c->inst, &s, k, bv, jac ? bj : NULL,
                                                 vel_bias ? bb : NULL, acc_bias ? ba : NULL)
                             : 0;
  check_guard(c, "terminal value", bv, dim), check_guard(c, "terminal J", bj, nj);
  check_guard(c, "terminal p_t", bb, dim), check_guard(c, "terminal gamma", ba, dim);
  copy(value, bv, dim), copy(jac, bj, nj), copy(vel_bias, bb, dim), copy(acc_bias, ba, dim);
  return note(c, "terminal", rc);
}

static int call_mass(Checker *c, const double *q, const double *v, double t, double *M) {
  int n = c->nc * c->nc;
  double *b = c->guard_buf;
  guard(b, n);
  jyPartState s = state_at(c, q, v, t);
  int rc = c->type->mass ? c->type->mass(&c->inst, &s, b) : 0;
  check_guard(c, "mass", b, n);
  copy(M, b, n);
  return note(c, "mass", rc);
}

static int call_force(Checker *c, const double *q, const double *v, double t, double *Q) {
  double b[MAXN + NGUARD];
  guard(b, c->nc);
  jyPartState s = state_at(c, q, v, t);
  int rc = c->type->force ? c->type->force(&c->inst, &s, b) : 0;
  check_guard(c, "force", b, c->nc);
  copy(Q, b, c->nc);
  return note(c, "force", rc);
}

static int call_nonideal(Checker *c, const double *q, const double *v, double t, double *C) {
  double b[MAXN + NGUARD];
  guard(b, c->nc);
  jyPartState s = state_at(c, q, v, t);
  int rc = c->type->nonideal ? c->type->nonideal(&c->inst, &s, b) : 0;
  check_guard(c, "nonideal", b, c->nc);
  copy(C, b, c->nc);
  return note(c, "nonideal", rc);
}

static int call_constraints(Checker *c, const double *q, const double *v, double t, double *A,
                            double *rhs, double *residual, double *rate) {
  int na = c->nr * c->nc;
  double *ba = c->guard_buf, bb[JY_PART_MAX_ROWS + NGUARD], br[JY_PART_MAX_ROWS + NGUARD];
  double bt[JY_PART_MAX_ROWS + NGUARD];
  guard(ba, na), guard(bb, c->nr), guard(br, c->nr), guard(bt, c->nr);
  jyPartState s = state_at(c, q, v, t);
  int rc = c->type->constraints
    ? c->type->constraints(&c->inst, &s, ba, bb, residual ? br : NULL, rate ? bt : NULL)
    : 0;
  check_guard(c, "constraint A", ba, na), check_guard(c, "constraint b", bb, c->nr);
  check_guard(c, "residual", br, c->nr), check_guard(c, "rate", bt, c->nr);
  copy(A, ba, na), copy(rhs, bb, c->nr), copy(residual, br, c->nr), copy(rate, bt, c->nr);
  return note(c, "constraints", rc);
}

/* Without an energy function: T = 1/2 v^T M v and V = 0, as part.h says. */
static int call_energy(Checker *c, const double *q, const double *v, double t, double *kinetic,
                       double *potential) {
  double b[2 + NGUARD];
  guard(b, 2);
  if (!c->type->energy) {
    double *M = c->mat_energy;
    if (call_mass(c, q, v, t, M)) return 1;
    for (int j = 0; j < c->nc; j++)
      for (int i = 0; i < c->nc; i++) b[0] += 0.5 * v[i] * M[i + j * c->nc] * v[j];
    *kinetic = b[0], *potential = 0.0;
    return 0;
  }
  jyPartState s = state_at(c, q, v, t);
  int rc = c->type->energy(&c->inst, &s, &b[0], &b[1]);
  check_guard(c, "energy", b, 2);
  *kinetic = b[0], *potential = b[1];
  return note(c, "energy", rc);
}

static int call_outputs(Checker *c, const double *q, const double *v, double t,
                        const double *row_forces, double *out) {
  int n = c->shape.noutputs;
  double b[JY_PART_MAX_OUTPUTS + NGUARD];
  guard(b, n);
  jyPartState s = state_at(c, q, v, t);
  int rc = c->type->outputs ? c->type->outputs(&c->inst, &s, row_forces, b) : 0;
  check_guard(c, "outputs", b, n);
  copy(out, b, n);
  return note(c, "outputs", rc);
}

/* ---- vector functions of the state, and finite differences of them ------------------- */

/* Writes f(q, v, t) (at most MAXN values) into out; returns its length or -1. */
typedef int (*VecFn)(Checker *c, int k, const double *q, const double *v, double t, double *out);

static int fn_value(Checker *c, int k, const double *q, const double *v, double t, double *out) {
  return call_terminal(c, k, q, v, t, out, NULL, NULL, NULL) ? -1 : c->shape.terminals[k].dim;
}

/* p' = J v + p_t: along (q + s v, v, t + s) its derivative is gamma = J' v + 2 J_t v + p_tt. */
static int fn_term_rate(Checker *c, int k, const double *q, const double *v, double t,
                        double *out) {
  int dim = c->shape.terminals[k].dim;
  double value[JY_TERMINAL_MAX_DIM], jac[JY_TERMINAL_MAX_DIM * MAXN];
  if (call_terminal(c, k, q, v, t, value, jac, out, NULL)) return -1;
  for (int j = 0; j < c->nc; j++)
    for (int i = 0; i < dim; i++) out[i] += jac[i + j * dim] * v[j];
  return dim;
}

static int fn_residual(Checker *c, int k, const double *q, const double *v, double t, double *out) {
  (void)k;
  return call_constraints(c, q, v, t, NULL, NULL, out, NULL) ? -1 : c->nr;
}

/* dT/dv = M v. */
static int fn_mass_v(Checker *c, int k, const double *q, const double *v, double t, double *out) {
  (void)k;
  double *M = c->mat_massv;
  if (call_mass(c, q, v, t, M)) return -1;
  for (int i = 0; i < c->nc; i++) {
    out[i] = 0.0;
    for (int j = 0; j < c->nc; j++) out[i] += M[i + j * c->nc] * v[j];
  }
  return c->nc;
}

static int fn_kinetic(Checker *c, int k, const double *q, const double *v, double t, double *out) {
  (void)k;
  double V;
  return call_energy(c, q, v, t, &out[0], &V) ? -1 : 1;
}

static int fn_potential(Checker *c, int k, const double *q, const double *v, double t,
                        double *out) {
  (void)k;
  double T;
  return call_energy(c, q, v, t, &T, &out[0]) ? -1 : 1;
}

/* d/ds f(q + s dq, v + s dv, t + s dt) at s = 0 (central), or with second != 0 the second
 * derivative. dq, dv may be NULL (no change). */
static int fd(Checker *c, VecFn f, int k, const double *q, const double *v, double t,
              const double *dq, const double *dv, double dt, int second, double *out) {
  double h = second ? H2 : H1, qs[MAXN], vs[MAXN], fp[MAXN], fm[MAXN], f0[MAXN];
  int n = 0;
  for (int sgn = -1; sgn <= 1; sgn += 2) {
    for (int i = 0; i < c->nc; i++) {
      qs[i] = q[i] + (dq ? sgn * h * dq[i] : 0.0);
      vs[i] = v[i] + (dv ? sgn * h * dv[i] : 0.0);
    }
    n = f(c, k, qs, vs, t + sgn * h * dt, sgn < 0 ? fm : fp);
    if (n < 0) return -1;
  }
  if (second && f(c, k, q, v, t, f0) < 0) return -1;
  for (int i = 0; i < n; i++)
    out[i] = second ? (fp[i] - 2.0 * f0[i] + fm[i]) / (h * h) : (fp[i] - fm[i]) / (2.0 * h);
  return n;
}

/* Column j of df/dq (or df/dv). */
static int fd_coord(Checker *c, VecFn f, int k, const double *q, const double *v, double t, int j,
                    int in_v, double *out) {
  double e[MAXN] = {0};
  e[j] = 1.0;
  return fd(c, f, k, q, v, t, in_v ? NULL : e, in_v ? e : NULL, 0.0, 0, out);
}

/* max |a - b| relative to 1 + the size of the block; NaN counts as +inf. */
static double relerr(const double *a, const double *b, int n) {
  double d = 0.0;
  for (int i = 0; i < n; i++) {
    double e = fabs(a[i] - b[i]);
    d = e == e ? fmax(d, e) : (double)INFINITY;
  }
  return d / (1.0 + fmax(jy_max_abs(a, n), jy_max_abs(b, n)));
}

/* ---- the checks of one instance at one state --------------------------------------- */

static void check_terminals(Checker *c, const double *q, const double *v, double t) {
  for (int k = 0; k < c->shape.nterminals; k++) {
    const jyTerminalSpec *ts = &c->shape.terminals[k];
    int dim = ts->dim, nc = c->nc;
    double value[JY_TERMINAL_MAX_DIM], jac[JY_TERMINAL_MAX_DIM * MAXN], vb[JY_TERMINAL_MAX_DIM],
      gamma[JY_TERMINAL_MAX_DIM], col[MAXN], fdv[MAXN], v1[JY_TERMINAL_MAX_DIM];
    if (call_terminal(c, k, q, v, t, value, jac, vb, gamma)) continue;
    check_finite(c, "terminal value", value, dim), check_finite(c, "terminal J", jac, dim * nc);
    check_finite(c, "terminal p_t", vb, dim), check_finite(c, "terminal gamma", gamma, dim);
    for (int j = 0; j < nc; j++)
      if (fd_coord(c, fn_value, k, q, v, t, j, 0, col) == dim)
        measure(c, JY_CHECK_TERMINAL_JAC, relerr(&jac[j * dim], col, dim), "terminal %s, column %s",
                ts->name, c->shape.coord_names[j]);
    if (fd(c, fn_value, k, q, v, t, NULL, NULL, 1.0, 0, fdv) == dim)
      measure(c, JY_CHECK_TERMINAL_VEL_BIAS, relerr(vb, fdv, dim), "terminal %s", ts->name);
    if (fd(c, fn_term_rate, k, q, v, t, v, NULL, 1.0, 0, fdv) == dim)
      measure(c, JY_CHECK_TERMINAL_ACC_BIAS, relerr(gamma, fdv, dim), "terminal %s", ts->name);
    if (call_terminal(c, k, q, v, t, v1, NULL, NULL, NULL) == 0)
      measure(c, JY_CHECK_OPTIONAL, relerr(value, v1, dim), "terminal %s value alone", ts->name);
    if (ts->is_coord_block) {
      int good = ts->coord_offset >= 0 && ts->coord_offset + dim <= nc;
      for (int i = 0; good && i < dim; i++) {
        good = value[i] == q[ts->coord_offset + i] && vb[i] == 0.0 && gamma[i] == 0.0;
        for (int j = 0; j < nc; j++)
          good = good && jac[i + j * dim] == (j == ts->coord_offset + i ? 1.0 : 0.0);
      }
      measure(c, JY_CHECK_COORD_BLOCK, good ? 0.0 : 1.0,
              "terminal %s is not q[%d..%d) with J = [0 I 0] and no biases", ts->name,
              ts->coord_offset, ts->coord_offset + dim);
    }
  }
}

static void check_constraints(Checker *c, const double *q, const double *v, double t) {
  int nr = c->nr, nc = c->nc;
  double *A = c->mat_a, *A2 = c->mat_b, b[MAXN], res[MAXN], rate[MAXN], b2[MAXN];
  double col[MAXN], d2[MAXN], dt[MAXN], av[MAXN];
  if (nr == 0 || call_constraints(c, q, v, t, A, b, res, rate)) return;
  check_finite(c, "constraint A", A, nr * nc), check_finite(c, "constraint b", b, nr);
  check_finite(c, "residual", res, nr), check_finite(c, "rate", rate, nr);
  if (call_constraints(c, q, v, t, A2, b2, NULL, NULL) == 0)
    measure(c, JY_CHECK_OPTIONAL, fmax(relerr(A, A2, nr * nc), relerr(b, b2, nr)),
            "constraints without residual and rate");
  /* A = dphi/dq for position rows, dpsi/dv for velocity rows. */
  for (int j = 0; j < nc; j++) {
    double Aj[MAXN], cv[MAXN];
    if (fd_coord(c, fn_residual, 0, q, v, t, j, 0, col) != nr) return;
    if (fd_coord(c, fn_residual, 0, q, v, t, j, 1, cv) != nr) return;
    for (int i = 0; i < nr; i++) {
      Aj[i] = A[i + j * nr];
      if (c->shape.row_kinds[i] == JY_ROW_VELOCITY) col[i] = cv[i];
      if (c->shape.row_kinds[i] == JY_ROW_ACCELERATION) col[i] = Aj[i]; /* given, not derived */
    }
    measure(c, JY_CHECK_CONSTRAINT_A, relerr(Aj, col, nr), "column %s", c->shape.coord_names[j]);
  }
  /* Position rows: b = -d2/ds2 phi(q + s v, t + s), rate = A v + phi_t.
   * Velocity rows: b = -d/ds psi(q + s v, v, t + s) = -(psi_q v + psi_t).
   * Acceleration-level rows give A and b directly: no residual and no rate. */
  if (fd(c, fn_residual, 0, q, v, t, v, NULL, 1.0, 1, d2) != nr ||
      fd(c, fn_residual, 0, q, v, t, NULL, NULL, 1.0, 0, dt) != nr ||
      fd(c, fn_residual, 0, q, v, t, v, NULL, 1.0, 0, col) != nr)
    return;
  for (int i = 0; i < nr; i++) {
    av[i] = 0.0;
    for (int j = 0; j < nc; j++) av[i] += A[i + j * nr] * v[j];
    if (c->shape.row_kinds[i] == JY_ROW_ACCELERATION) {
      measure(c, JY_CHECK_CONSTRAINT_RATE, fabs(res[i]) + fabs(rate[i]),
              "row %s (acceleration level: residual and rate must be 0)", c->shape.row_names[i]);
      continue;
    }
    int pos = c->shape.row_kinds[i] == JY_ROW_POSITION;
    double want_b = pos ? -d2[i] : -col[i];
    measure(c, JY_CHECK_CONSTRAINT_B, fabs(b[i] - want_b) / (1.0 + fabs(want_b)), "row %s",
            c->shape.row_names[i]);
    if (pos) {
      double want = av[i] + dt[i];
      measure(c, JY_CHECK_CONSTRAINT_RATE, fabs(rate[i] - want) / (1.0 + fabs(want)), "row %s",
              c->shape.row_names[i]);
    }
  }
}

/* Smallest eigenvalue of the symmetric n x n matrix M (upper triangle), via dsyev with a
 * workspace of its own (3n - 1 is dsyev's minimum): LAPACKE's would come from malloc, whose
 * failure it prints on stdout and this check would report as an indefinite M. */
static double min_eig(Checker *c, const double *M, int n) {
  double *a = c->mat_eig, e[MAXN], work[3 * MAXN];
  memcpy(a, M, sizeof(double) * (size_t)(n * n));
  if (LAPACKE_dsyev_work(LAPACK_COL_MAJOR, 'N', 'U', n, a, n, e, work, 3 * MAXN) != 0)
    return -INFINITY;
  return e[0];
}

static void check_mass(Checker *c, const double *q, const double *v, double t) {
  int n = c->nc;
  double *M = c->mat_a, *M2 = c->mat_b, q2[MAXN], T, V;
  if (n == 0 || call_mass(c, q, v, t, M)) return;
  check_finite(c, "mass", M, n * n);
  double big = jy_max_abs(M, n * n), scale = big > 0 ? big : 1.0, sym = 0.0;
  for (int j = 0; j < n; j++)
    for (int i = 0; i < j; i++) sym = fmax(sym, fabs(M[i + j * n] - M[j + i * n]) / scale);
  measure(c, JY_CHECK_MASS_SYMMETRIC, sym, "max |M_ij - M_ji| / max|M|");
  if (isfinite(big)) {
    double lo = min_eig(c, M, n);
    measure(c, JY_CHECK_MASS_PSD, lo < 0 ? -lo / scale : 0.0, "smallest eigenvalue %.3g", lo);
  }
  if (c->shape.flags & JY_PART_CONSTANT_MASS) {
    for (int i = 0; i < n; i++) q2[i] = urand(c, -3.0, 3.0);
    if (call_mass(c, q2, v, t + 1.0, M2) == 0)
      measure(c, JY_CHECK_MASS_CONSTANT, relerr(M, M2, n * n), "M at another q and t");
  }
  if (c->type->energy && call_energy(c, q, v, t, &T, &V) == 0) {
    double e2[2] = {T, V}, vmv = 0.0;
    check_finite(c, "energy", e2, 2);
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) vmv += v[i] * M[i + j * n] * v[j];
    measure(c, JY_CHECK_KINETIC, fabs(T - 0.5 * vmv) / (1.0 + fabs(T)), "T = %.6g", T);
  }
}

/* Lagrange's equations of L = T - V with T = 1/2 v^T M(q, t) v, at q'' = 0:
 * Q_L = -dV/dq + dT/dq - d/ds [M(q + s v, t + s) v]. At v = 0 this is -dV/dq. */
static int lagrange_force(Checker *c, const double *q, const double *v, double t, double *out) {
  double dv[1], dk[1], mv[MAXN];
  if (fd(c, fn_mass_v, 0, q, v, t, v, NULL, 1.0, 0, mv) < 0) return 1;
  for (int j = 0; j < c->nc; j++) {
    if (fd_coord(c, fn_potential, 0, q, v, t, j, 0, dv) < 0) return 1;
    if (fd_coord(c, fn_kinetic, 0, q, v, t, j, 0, dk) < 0) return 1;
    out[j] = -dv[0] + dk[0] - mv[j];
  }
  return 0;
}

static void check_force(Checker *c, const double *q, const double *v, double t) {
  int n = c->nc;
  double Q[MAXN], QL[MAXN], zero[MAXN] = {0}, C[MAXN];
  if (n == 0) return;
  jyCheck rest = c->conservative ? JY_CHECK_LAGRANGE : JY_CHECK_REST_FORCE;
  if (call_force(c, q, zero, t, Q) == 0 && lagrange_force(c, q, zero, t, QL) == 0)
    measure(c, rest, relerr(Q, QL, n), "at rest");
  if (call_nonideal(c, q, v, t, C) == 0) check_finite(c, "nonideal", C, n);
  if (call_force(c, q, v, t, Q) || lagrange_force(c, q, v, t, QL)) return;
  check_finite(c, "force", Q, n);
  if (c->conservative) {
    measure(c, JY_CHECK_LAGRANGE, relerr(Q, QL, n), "moving");
  } else {
    double power = 0.0;
    for (int i = 0; i < n; i++) power += v[i] * (Q[i] - QL[i]);
    measure(c, JY_CHECK_PASSIVE, fmax(power, 0.0) / (1.0 + jy_max_abs(Q, n)),
            "power %.3g W of the non-Lagrangian force", power);
  }
}

/* The non-ideal force law C(q, v, t, row forces, q'') of the previous iterate. */
static int call_nonideal_law(Checker *c, const double *q, const double *v, double t,
                             const double *row_forces, const double *acc, double *C) {
  double b[MAXN + NGUARD];
  guard(b, c->nc);
  jyPartState s = state_at(c, q, v, t);
  int rc = c->type->nonideal_law ? c->type->nonideal_law(&c->inst, &s, row_forces, acc, b) : 0;
  check_guard(c, "nonideal_law", b, c->nc);
  copy(C, b, c->nc);
  return note(c, "nonideal_law", rc);
}

static void check_outputs(Checker *c, const double *q, const double *v, double t) {
  double rowf[JY_PART_MAX_ROWS], out[JY_PART_MAX_OUTPUTS], acc[MAXN], C[MAXN];
  for (int i = 0; i < c->nr; i++) rowf[i] = urand(c, -5.0, 5.0);
  for (int i = 0; i < c->nc; i++) acc[i] = urand(c, -5.0, 5.0);
  if (c->type->outputs && call_outputs(c, q, v, t, rowf, out) == 0)
    check_finite(c, "outputs", out, c->shape.noutputs);
  if (c->type->nonideal_law && call_nonideal_law(c, q, v, t, rowf, acc, C) == 0)
    check_finite(c, "nonideal_law", C, c->nc);
}

/* ---- schema and shape ---------------------------------------------------------------- */

static int one_line(const char *s) { return s && s[0] && !strchr(s, '\n'); }

static void check_schema(Checker *c) {
  const jyPartType *type = c->type;
  measure(c, JY_CHECK_SCHEMA, jy_protocol_supported(type->version) ? 0.0 : 1.0,
          "version %u, this joinery speaks %u to %u", type->version,
          (unsigned)JY_PART_PROTOCOL_OLDEST, (unsigned)JY_PART_PROTOCOL_VERSION);
  measure(c, JY_CHECK_SCHEMA, one_line(type->doc) ? 0.0 : 1.0, "the type has no one-line doc");
  measure(c, JY_CHECK_SCHEMA,
          type->nparams >= 0 && (type->nparams == 0 || type->params) ? 0.0 : 1.0,
          "nparams %d without a table", type->nparams);
  for (int i = 0; type->params && i < type->nparams; i++) {
    const jyParamSpec *s = &type->params[i];
    double d = s->default_value;
    const char *name = s->name ? s->name : "?";
    int in_domain = jy_param_in_domain(s->domain, d);
    int unique = 1;
    for (int j = 0; s->name && j < i; j++)
      unique = unique && !(type->params[j].name && strcmp(s->name, type->params[j].name) == 0);
    measure(c, JY_CHECK_SCHEMA, s->name && s->name[0] ? 0.0 : 1.0, "parameter %d has no name", i);
    measure(c, JY_CHECK_SCHEMA, s->unit && s->unit[0] ? 0.0 : 1.0,
            "parameter %s has no unit (\"1\" if dimensionless)", name);
    measure(c, JY_CHECK_SCHEMA, one_line(s->doc) ? 0.0 : 1.0, "parameter %s has no one-line doc",
            name);
    measure(c, JY_CHECK_SCHEMA, in_domain ? 0.0 : 1.0,
            "parameter %s: default %g outside its domain", name, d);
    measure(c, JY_CHECK_SCHEMA, unique ? 0.0 : 1.0, "parameter %s named twice", name);
  }
}

static int shape_problem(const Checker *c, char *why, size_t len) {
  const jyPartShape *s = &c->shape;
  if (s->ncoords < 0 || s->ncoords > JY_PART_MAX_COORDS || s->nterminals < 0 ||
      s->nterminals > JY_PART_MAX_TERMINALS || s->nrows < 0 || s->nrows > JY_PART_MAX_ROWS ||
      s->noutputs < 0 || s->noutputs > JY_PART_MAX_OUTPUTS || s->scratch_size > JY_PART_MAX_SCRATCH)
    return snprintf(why, len, "a count is outside the limits of part.h"), 1;
  for (int i = 0; i < s->ncoords; i++) {
    if (!s->coord_names[i] || !s->coord_names[i][0] || !isfinite(s->coord_defaults[i]))
      return snprintf(why, len, "coordinate %d has no name or a non-finite default", i), 1;
    for (int j = 0; j < i; j++)
      if (strcmp(s->coord_names[i], s->coord_names[j]) == 0)
        return snprintf(why, len, "coordinate name %s twice", s->coord_names[i]), 1;
  }
  for (int i = 0; i < s->nterminals; i++) {
    if (!s->terminals[i].name || !s->terminals[i].name[0] || s->terminals[i].dim < 1 ||
        s->terminals[i].dim > JY_TERMINAL_MAX_DIM)
      return snprintf(why, len, "terminal %d has no name or a dimension outside 1..3", i), 1;
    for (int j = 0; j < i; j++)
      if (strcmp(s->terminals[i].name, s->terminals[j].name) == 0)
        return snprintf(why, len, "terminal name %s twice", s->terminals[i].name), 1;
  }
  for (int i = 0; i < s->nrows; i++)
    if (!s->row_names[i] || !s->row_names[i][0] ||
        (s->row_kinds[i] != JY_ROW_POSITION && s->row_kinds[i] != JY_ROW_VELOCITY &&
         s->row_kinds[i] != JY_ROW_ACCELERATION))
      return snprintf(why, len, "row %d has no name or an unknown kind", i), 1;
  for (int i = 0; i < s->noutputs; i++)
    if (!s->output_names[i] || !s->output_names[i][0])
      return snprintf(why, len, "output %d has no name", i), 1;
  if (s->noutputs < 32 && (s->angle_outputs >> s->noutputs) != 0)
    return snprintf(why, len, "angle_outputs marks an output beyond its %d", s->noutputs), 1;
  return 0;
}

/* ---- one instance ------------------------------------------------------------------- */

static void instance_free(Checker *c) {
  jy_free(c->alloc, c->data);
  c->data = NULL;
}

/* Builds an instance as the engine would: shape (into a zero-filled struct), then init.
 * Returns 1 when the type refused the parameters (message in c->error), -1 when memory
 * ran out. */
static int instance_make(Checker *c) {
  memset(&c->shape, 0, sizeof c->shape);
  c->error[0] = '\0';
  c->data = NULL;
  c->use_scratch = 1; /* every check's calls go through it, as the engine's do */
  memset(c->part_scratch, 0, sizeof c->part_scratch);
  if (jy_part_shape(c->type, c->params, &c->shape, c->error, sizeof c->error) != 0) return 1;
  c->nc = c->shape.ncoords;
  c->nr = c->shape.nrows;
  c->inst = (jyPartInstance){c->type, "under_test", c->params, NULL, c->nc, c->nr};
  char why[160];
  if (shape_problem(c, why, sizeof why)) {
    measure(c, JY_CHECK_SHAPE, 1.0, "%s", why);
    return 2;
  }
  measure(c, JY_CHECK_SHAPE, 0.0, "shape");
  if (c->shape.instance_size > 0) {
    c->data = jy_calloc(c->alloc, 1, c->shape.instance_size);
    if (!c->data) return -1;
    c->inst.data = c->data;
    if (c->type->init && c->type->init(&c->inst, c->data, c->error, sizeof c->error) != 0) {
      instance_free(c);
      return 1;
    }
  }
  return 0;
}

/* The next count entries of out (NULL while counting). */
static double *slot(double *out, size_t *at, int count) {
  double *here = out ? out + *at : NULL;
  *at += (size_t)count;
  return here;
}

/* Every function's outputs at (q, v, t), and whether each call failed, into out (NULL: only
 * the count). Fixed row forces and accelerations for the outputs and the law. */
static size_t all_outputs(Checker *c, const double *q, const double *v, double t, double *out) {
  const jyPartType *ty = c->type;
  int nc = c->nc, nr = c->nr;
  size_t at = 0;
  double rowf[JY_PART_MAX_ROWS], acc[MAXN];
  for (int i = 0; i < nr; i++) rowf[i] = 0.5 * (i + 1);
  for (int i = 0; i < nc; i++) acc[i] = 0.25 * (i + 1);
  for (int k = 0; k < c->shape.nterminals && ty->terminal; k++) {
    int dim = c->shape.terminals[k].dim;
    double *value = slot(out, &at, dim), *jac = slot(out, &at, dim * nc);
    double *vb = slot(out, &at, dim), *ab = slot(out, &at, dim), *failed = slot(out, &at, 1);
    if (out) *failed = call_terminal(c, k, q, v, t, value, jac, vb, ab) != 0;
  }
  if (ty->mass && nc > 0) {
    double *M = slot(out, &at, nc * nc), *failed = slot(out, &at, 1);
    if (out) *failed = call_mass(c, q, v, t, M) != 0;
  }
  if (ty->force && nc > 0) {
    double *Q = slot(out, &at, nc), *failed = slot(out, &at, 1);
    if (out) *failed = call_force(c, q, v, t, Q) != 0;
  }
  if (ty->nonideal && nc > 0) {
    double *C = slot(out, &at, nc), *failed = slot(out, &at, 1);
    if (out) *failed = call_nonideal(c, q, v, t, C) != 0;
  }
  if (ty->constraints && nr > 0) {
    double *A = slot(out, &at, nr * nc), *b = slot(out, &at, nr), *res = slot(out, &at, nr);
    double *rate = slot(out, &at, nr), *failed = slot(out, &at, 1);
    if (out) *failed = call_constraints(c, q, v, t, A, b, res, rate) != 0;
  }
  if (ty->energy) {
    double *e = slot(out, &at, 2), *failed = slot(out, &at, 1);
    if (out) *failed = call_energy(c, q, v, t, &e[0], &e[1]) != 0;
  }
  if (ty->outputs && c->shape.noutputs > 0) {
    double *o = slot(out, &at, c->shape.noutputs), *failed = slot(out, &at, 1);
    if (out) *failed = call_outputs(c, q, v, t, rowf, o) != 0;
  }
  if (ty->nonideal_law && nc > 0) {
    double *C = slot(out, &at, nc), *failed = slot(out, &at, 1);
    if (out) *failed = call_nonideal_law(c, q, v, t, rowf, acc, C) != 0;
  }
  return at;
}

/* A part with scratch: every function answers with it as without it, bit for bit, at
 * (q, v, t) and then at that state with one input changed (each coordinate, velocity, the
 * time, gravity), the scratch filled at (q, v, t) first each time: a value kept there is
 * reused only for the inputs it was computed from. 0, or -1 (no memory). */
static int check_scratch(Checker *c, const double *q, const double *v, double t) {
  if (!c->shape.scratch_size) return 0;
  size_t count = all_outputs(c, q, v, t, NULL);
  double *with = jy_calloc(c->alloc, count + 1, sizeof(double));
  double *without = jy_calloc(c->alloc, count + 1, sizeof(double));
  if (!with || !without) {
    jy_free(c->alloc, with);
    jy_free(c->alloc, without);
    return -1;
  }
  double q2[MAXN], v2[MAXN], g0[3];
  memcpy(g0, c->gravity, sizeof g0);
  memset(c->part_scratch, 0, c->shape.scratch_size);
  for (int change = -1; change < 2 * c->nc + 2; change++) {
    memcpy(q2, q, sizeof(double) * (size_t)c->nc);
    memcpy(v2, v, sizeof(double) * (size_t)c->nc);
    double t2 = t;
    c->use_scratch = 1;
    all_outputs(c, q, v, t, with); /* the scratch now holds (q, v, t)'s */
    const char *what = "the state itself";
    if (change >= 0 && change < c->nc) q2[change] += 1e-3, what = "a coordinate";
    if (change >= c->nc && change < 2 * c->nc) v2[change - c->nc] += 1e-3, what = "a velocity";
    if (change == 2 * c->nc) t2 += 1e-3, what = "the time";
    if (change == 2 * c->nc + 1) c->gravity[0] += 0.5, what = "gravity";
    all_outputs(c, q2, v2, t2, with);
    c->use_scratch = 0;
    all_outputs(c, q2, v2, t2, without);
    c->use_scratch = 1;
    memcpy(c->gravity, g0, sizeof g0);
    int same = memcmp(with, without, sizeof(double) * count) == 0;
    measure(c, JY_CHECK_SCRATCH, same ? 0.0 : 1.0,
            "with its scratch a function answers otherwise after %s changed", what);
  }
  jy_free(c->alloc, with);
  jy_free(c->alloc, without);
  return 0;
}

static int check_instance(Checker *c, int nstates) {
  double q[MAXN], v[MAXN], t;
  for (int s = 0; s < nstates; s++) {
    for (int i = 0; i < c->nc; i++) q[i] = urand(c, -1.0, 1.0), v[i] = urand(c, -1.0, 1.0);
    for (int i = 0; i < 3; i++) c->gravity[i] = urand(c, -10.0, 10.0);
    t = urand(c, 0.0, 10.0);
    check_terminals(c, q, v, t);
    check_constraints(c, q, v, t);
    check_mass(c, q, v, t);
    check_force(c, q, v, t);
    check_outputs(c, q, v, t);
    if (check_scratch(c, q, v, t) != 0) return -1;
  }
  return 0;
}

/* "k=2, L=0.5" */
static void describe_params(const Checker *c, char *buf, size_t len) {
  size_t used = 0;
  buf[0] = '\0';
  for (int i = 0; i < c->type->nparams && used + 1 < len; i++) {
    int w = snprintf(buf + used, len - used, "%s%s=%.6g", i ? ", " : "",
                     c->type->params[i].name ? c->type->params[i].name : "?", c->params[i]);
    if (w < 0) break;
    used += (size_t)w;
  }
}

/* ---- the suite ---------------------------------------------------------------------- */

jyConformanceDef jy_default_conformance_def(void) {
  return (jyConformanceDef){.seed = 1, .nstates = 6, .random_params = 1, .conservative = -1};
}

static jyStatus run_suite(Checker *c, const jyParamSetting *settings, int nsettings,
                          const jyConformanceDef *def, unsigned char *fixed) {
  const jyPartType *type = c->type;
  jyConformanceReport *rep = c->rep;
  char why[512];
  jyStatus filled = jy_params_fill(type, NULL, settings, nsettings, c->params, why, sizeof why);
  if (filled != JY_OK) {
    log_line(c, "%s", why);
    return filled;
  }
  for (int k = 0; k < nsettings; k++) fixed[jy_param_index(type, settings[k].name)] = 1;
  check_schema(c);

  int dim_index = -1;
  for (int i = 0; i < type->nparams; i++)
    if (type->params[i].domain == JY_PARAM_DIMENSION && !fixed[i]) dim_index = i;
  for (int dim = 1; dim <= 3; dim++) {
    if (dim_index < 0 && dim > 1) break;
    for (int variant = 0; variant < (def->random_params ? 2 : 1); variant++) {
      for (int i = 0; i < type->nparams; i++) {
        const jyParamSpec *s = &type->params[i];
        if (fixed[i]) continue;
        c->params[i] = s->default_value;
        if (variant == 0) continue;
        if (s->domain == JY_PARAM_REAL) c->params[i] = urand(c, -2.0, 2.0);
        if (s->domain == JY_PARAM_POSITIVE) c->params[i] = urand(c, 0.3, 3.0);
        if (s->domain == JY_PARAM_NONNEGATIVE) c->params[i] = urand(c, 0.0, 3.0);
      }
      if (dim_index >= 0) c->params[dim_index] = dim;
      const char *what = variant ? "random params" : "defaults";
      if (dim_index >= 0)
        snprintf(c->label, sizeof c->label, "%s dim %d (%s)", type->name, dim, what);
      else
        snprintf(c->label, sizeof c->label, "%s (%s)", type->name, what);
      char plist[320];
      describe_params(c, plist, sizeof plist);
      int made = instance_make(c);
      if (made < 0) return JY_ERR_NOMEM;
      if (made == 1) {
        rep->rejected++;
        log_line(c, "%s [%s]: rejected: %s", c->label, plist,
                 c->error[0] ? c->error : "(no message)");
        measure(c, JY_CHECK_SHAPE, c->error[0] ? 0.0 : 1.0,
                "the parameters were rejected without a message");
        continue;
      }
      if (made == 2) continue;
      log_line(c, "%s [%s]: %d coordinates, %d terminals, %d rows", c->label, plist, c->nc,
               c->shape.nterminals, c->nr);
      c->conservative =
        def->conservative >= 0 ? def->conservative : (c->shape.flags & JY_PART_CONSERVATIVE) != 0;
      rep->instances++;
      int checked = check_instance(c, def->nstates);
      instance_free(c);
      if (checked != 0) return JY_ERR_NOMEM;
    }
  }
  snprintf(c->label, sizeof c->label, "%s", type->name);
  if (rep->instances == 0) measure(c, JY_CHECK_SHAPE, 1.0, "no parameter set made a part to check");
  return JY_OK;
}

jyStatus jy_check_part_type_def(const jyEnv *env, const jyPartType *type,
                                const jyParamSetting *params, int nparams,
                                const jyConformanceDef *def, jyConformanceReport *out) {
  if (!out) return JY_ERR_INVALID;
  memset(out, 0, sizeof *out);
  for (int i = 0; i < JY_CHECK_COUNT; i++) {
    out->checks[i].name = check_info[i].name;
    out->checks[i].what = check_info[i].what;
    out->checks[i].advisory = check_info[i].advisory;
    out->checks[i].tol = check_tol((jyCheck)i);
  }
  if (!type || !type->name || !type->shape || nparams < 0 || (nparams > 0 && !params) ||
      type->nparams < 0 || (type->nparams > 0 && !type->params)) {
    snprintf(out->log, sizeof out->log,
             "not a part type that can be checked (NULL name, "
             "shape or parameter table)\n");
    return JY_ERR_INVALID;
  }
  jyConformanceDef d = def ? *def : jy_default_conformance_def();
  if (d.nstates < 1) d.nstates = 1;
  const jyAllocator *alloc = env ? &env->alloc : NULL;
  Checker *c = jy_calloc(alloc, 1, sizeof *c);
  size_t np = type->nparams > 0 ? (size_t)type->nparams : 1;
  double *params_buf = jy_calloc(alloc, np, sizeof(double));
  unsigned char *fixed = jy_calloc(alloc, np, 1);
  jyStatus status = JY_ERR_NOMEM;
  if (c && params_buf && fixed) {
    c->alloc = alloc;
    c->type = type;
    c->rep = out;
    c->rng = 0x6a6f696e65727900u ^ (uint64_t)d.seed; /* "joinery" */
    c->params = params_buf;
    out->states = d.nstates;
    snprintf(c->label, sizeof c->label, "%s", type->name);
    status = run_suite(c, params, nparams, &d, fixed);
    if (status == JY_OK) {
      out->passed = 1;
      for (int i = 0; i < JY_CHECK_COUNT; i++) {
        const jyCheckResult *r = &out->checks[i];
        if (r->failed > 0 && !r->advisory) out->passed = 0;
        if (r->count == 0)
          log_line(c, "%-18s -", r->name);
        else
          log_line(c, "%-18s %s %d/%d over %.3g (worst %.3g%s%s)", r->name,
                   r->failed == 0  ? "ok  "
                     : r->advisory ? "note"
                                   : "FAIL",
                   r->failed, r->count, r->tol, r->worst, r->where[0] ? " at " : "", r->where);
      }
      log_line(c, "%s: %s (%d instances, %d rejected, %d states each)", type->name,
               out->passed ? "conforms" : "DOES NOT CONFORM", out->instances, out->rejected,
               out->states);
    }
  }
  jy_free(alloc, fixed);
  jy_free(alloc, params_buf);
  jy_free(alloc, c);
  return status;
}

jyStatus jy_check_part_type(const jyEnv *env, const jyPartType *type, const jyParamSetting *params,
                            int nparams, unsigned seed, jyConformanceReport *out) {
  jyConformanceDef def = jy_default_conformance_def();
  def.seed = seed;
  return jy_check_part_type_def(env, type, params, nparams, &def, out);
}
