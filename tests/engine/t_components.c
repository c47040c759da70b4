/* tests/engine/t_components.c — conformance of every registered part type to the part
 * protocol (joinery/part.h), plus closed-form spot checks of the built-in parts.
 *
 * For each type, each allowed dimension, default and random parameters, and a few seeded
 * random states (q, v, t, gravity) it compares analytic derivatives with central finite
 * differences: terminal J, p_t and gamma; constraint A, b and rate; Q against the
 * Lagrangian built from the part's own energy function. It checks M symmetric PSD, that
 * T = 1/2 v^T M v, and that no function writes past its outputs. */
#include <lapacke.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "joinery/joinery.h"
#include "tap.h"

enum { MAXN = JY_PART_MAX_COORDS, MAXP = 32, NGUARD = 4, NSTATES = 6 };
#define CANARY 1234.5678

/* Tolerances. First derivatives by central differences with step 1e-6 on O(1) states err
 * by ~h^2 |f'''| + eps |f| / h ~ 1e-10; 1e-6 leaves room for curvature (1/len^3 of a short
 * spring) while a wrong sign or factor errs by O(1). Second differences with step 1e-4 err
 * by ~h^2 |f''''| + 4 eps |f| / h^2 ~ 1e-8: allow 1e-5. Relative to 1 + the block's size. */
#define H1 1e-6
#define TOL1 1e-6
#define H2 1e-4
#define TOL2 1e-5
#define PI 3.14159265358979323846
#define END ((const char *)NULL) /* ends part_named's list */

/* ---- random numbers (splitmix64: the same sequence on every platform) --------------- */

static uint64_t rng_state = 20240601u;

static double urand(double lo, double hi) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15u);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  z ^= z >> 31;
  return lo + (hi - lo) * (double)(z >> 11) / 9007199254740992.0;
}

/* ---- one instance under test --------------------------------------------------------- */

typedef struct Part {
  const jyPartType *type;
  char label[96]; /* "spring dim 2 (defaults)" */
  double params[MAXP];
  jyPartShape shape;
  jyPartInstance inst;
  void *data;
  double gravity[3];
  char error[256];
  int nc, nr;
} Part;

static long overruns, failures;

static int param_index(const jyPartType *type, const char *name) {
  for (int i = 0; i < type->nparams; i++)
    if (strcmp(type->params[i].name, name) == 0) return i;
  return -1;
}

static int dim_param(const jyPartType *type) {
  for (int i = 0; i < type->nparams; i++)
    if (type->params[i].domain == JY_PARAM_DIMENSION) return i;
  return -1;
}

/* Builds an instance as the engine would: shape (into a zero-filled struct), then init.
 * Returns non-zero (message in p->error) when the type rejects the parameters. */
static int part_make(Part *p, const jyPartType *type, const double *params, const char *label) {
  memset(p, 0, sizeof *p);
  p->type = type;
  snprintf(p->label, sizeof p->label, "%s", label);
  memcpy(p->params, params, sizeof(double) * (size_t)type->nparams);
  if (type->shape(type, p->params, &p->shape, p->error, sizeof p->error) != 0) return 1;
  p->nc = p->shape.ncoords;
  p->nr = p->shape.nrows;
  p->inst = (jyPartInstance){type, "under_test", p->params, NULL, p->nc, p->nr};
  if (p->shape.instance_size > 0) {
    p->data = calloc(1, p->shape.instance_size);
    if (type->init && type->init(&p->inst, p->data, p->error, sizeof p->error) != 0) return 1;
    p->inst.data = p->data;
  }
  return 0;
}

static void part_free(Part *p) {
  free(p->data);
  p->data = NULL;
}

/* Defaults, with named overrides ("k", 2.0, ..., END). */
static int part_named(Part *p, const jyEnv *env, const char *type_name, ...) {
  const jyPartType *type = jy_env_find_type(env, type_name);
  double params[MAXP];
  memset(p, 0, sizeof *p);
  if (!type) return 1;
  for (int i = 0; i < type->nparams; i++) params[i] = type->params[i].default_value;
  va_list ap;
  va_start(ap, type_name);
  for (const char *name; (name = va_arg(ap, const char *));) {
    double value = va_arg(ap, double);
    int i = param_index(type, name);
    if (i < 0) {
      va_end(ap);
      return 1;
    }
    params[i] = value;
  }
  va_end(ap);
  return part_make(p, type, params, type_name);
}

static jyPartState state_at(Part *p, const double *q, const double *v, double t) {
  p->error[0] = '\0';
  return (jyPartState){q, v, t, p->gravity, p->error, sizeof p->error};
}

/* Output buffers arrive zero-filled, followed here by canaries that must survive. */
static void guard(double *buf, int n) {
  for (int i = 0; i < n; i++) buf[i] = 0.0;
  for (int i = 0; i < NGUARD; i++) buf[n + i] = CANARY;
}

static void check_guard(Part *p, const char *what, const double *buf, int n) {
  for (int i = 0; i < NGUARD; i++)
    if (buf[n + i] != CANARY) {
      overruns++;
      diag("%s: %s wrote past its %d outputs", p->label, what, n);
      return;
    }
}

static int note(Part *p, const char *what, int rc) {
  if (rc != 0) {
    failures++;
    diag("%s: %s failed: %s", p->label, what, p->error);
  }
  return rc;
}

static void copy(double *dst, const double *src, int n) {
  if (dst) memcpy(dst, src, sizeof(double) * (size_t)n);
}

/* ---- guarded calls; NULL outputs are passed to the part as NULL ---------------------- */

static int call_terminal(Part *p, int k, const double *q, const double *v, double t,
                         double *value, double *jac, double *vel_bias, double *acc_bias) {
  int dim = p->shape.terminals[k].dim, nj = dim * p->nc;
  double bv[JY_TERMINAL_MAX_DIM + NGUARD], bj[JY_TERMINAL_MAX_DIM * MAXN + NGUARD];
  double bb[JY_TERMINAL_MAX_DIM + NGUARD], ba[JY_TERMINAL_MAX_DIM + NGUARD];
  guard(bv, dim), guard(bj, nj), guard(bb, dim), guard(ba, dim);
  jyPartState s = state_at(p, q, v, t);
  int rc = p->type->terminal ? p->type->terminal(&p->inst, &s, k, bv, jac ? bj : NULL,
                                                 vel_bias ? bb : NULL, acc_bias ? ba : NULL)
                             : 0;
  check_guard(p, "terminal value", bv, dim), check_guard(p, "terminal J", bj, nj);
  check_guard(p, "terminal p_t", bb, dim), check_guard(p, "terminal gamma", ba, dim);
  copy(value, bv, dim), copy(jac, bj, nj), copy(vel_bias, bb, dim), copy(acc_bias, ba, dim);
  return note(p, "terminal", rc);
}

static int call_mass(Part *p, const double *q, const double *v, double t, double *M) {
  int n = p->nc * p->nc;
  double b[MAXN * MAXN + NGUARD];
  guard(b, n);
  jyPartState s = state_at(p, q, v, t);
  int rc = p->type->mass ? p->type->mass(&p->inst, &s, b) : 0;
  check_guard(p, "mass", b, n);
  copy(M, b, n);
  return note(p, "mass", rc);
}

static int call_force(Part *p, const double *q, const double *v, double t, double *Q) {
  double b[MAXN + NGUARD];
  guard(b, p->nc);
  jyPartState s = state_at(p, q, v, t);
  int rc = p->type->force ? p->type->force(&p->inst, &s, b) : 0;
  check_guard(p, "force", b, p->nc);
  copy(Q, b, p->nc);
  return note(p, "force", rc);
}

static int call_nonideal(Part *p, const double *q, const double *v, double t, double *C) {
  double b[MAXN + NGUARD];
  guard(b, p->nc);
  jyPartState s = state_at(p, q, v, t);
  int rc = p->type->nonideal ? p->type->nonideal(&p->inst, &s, b) : 0;
  check_guard(p, "nonideal", b, p->nc);
  copy(C, b, p->nc);
  return note(p, "nonideal", rc);
}

static int call_constraints(Part *p, const double *q, const double *v, double t, double *A,
                            double *rhs, double *residual, double *rate) {
  int na = p->nr * p->nc;
  double ba[MAXN * MAXN + NGUARD], bb[MAXN + NGUARD], br[MAXN + NGUARD], bt[MAXN + NGUARD];
  guard(ba, na), guard(bb, p->nr), guard(br, p->nr), guard(bt, p->nr);
  jyPartState s = state_at(p, q, v, t);
  int rc = p->type->constraints ? p->type->constraints(&p->inst, &s, ba, bb,
                                                       residual ? br : NULL, rate ? bt : NULL)
                                : 0;
  check_guard(p, "constraint A", ba, na), check_guard(p, "constraint b", bb, p->nr);
  check_guard(p, "residual", br, p->nr), check_guard(p, "rate", bt, p->nr);
  copy(A, ba, na), copy(rhs, bb, p->nr), copy(residual, br, p->nr), copy(rate, bt, p->nr);
  return note(p, "constraints", rc);
}

/* Without an energy function: T = 1/2 v^T M v and V = 0, as part.h says. */
static int call_energy(Part *p, const double *q, const double *v, double t, double *kinetic,
                       double *potential) {
  double b[2 + NGUARD];
  guard(b, 2);
  if (!p->type->energy) {
    double M[MAXN * MAXN];
    if (call_mass(p, q, v, t, M)) return 1;
    for (int j = 0; j < p->nc; j++)
      for (int i = 0; i < p->nc; i++) b[0] += 0.5 * v[i] * M[i + j * p->nc] * v[j];
    *kinetic = b[0], *potential = 0.0;
    return 0;
  }
  jyPartState s = state_at(p, q, v, t);
  int rc = p->type->energy(&p->inst, &s, &b[0], &b[1]);
  check_guard(p, "energy", b, 2);
  *kinetic = b[0], *potential = b[1];
  return note(p, "energy", rc);
}

static int call_outputs(Part *p, const double *q, const double *v, double t,
                        const double *row_forces, double *out) {
  int n = p->shape.noutputs;
  double b[JY_PART_MAX_OUTPUTS + NGUARD];
  guard(b, n);
  jyPartState s = state_at(p, q, v, t);
  int rc = p->type->outputs ? p->type->outputs(&p->inst, &s, row_forces, b) : 0;
  check_guard(p, "outputs", b, n);
  copy(out, b, n);
  return note(p, "outputs", rc);
}

/* ---- vector functions of the state, and finite differences of them ------------------- */

/* Writes f(q, v, t) (a vector of at most MAXN) into out; returns its length or -1. */
typedef int (*VecFn)(Part *p, int k, const double *q, const double *v, double t, double *out);

static int fn_value(Part *p, int k, const double *q, const double *v, double t, double *out) {
  return call_terminal(p, k, q, v, t, out, NULL, NULL, NULL) ? -1 : p->shape.terminals[k].dim;
}

/* p' = J v + p_t: along (q + h v, t + h) its derivative is gamma = J' v + 2 J_t v + p_tt. */
static int fn_term_rate(Part *p, int k, const double *q, const double *v, double t,
                        double *out) {
  int dim = p->shape.terminals[k].dim;
  double value[JY_TERMINAL_MAX_DIM], jac[JY_TERMINAL_MAX_DIM * MAXN];
  if (call_terminal(p, k, q, v, t, value, jac, out, NULL)) return -1;
  for (int j = 0; j < p->nc; j++)
    for (int i = 0; i < dim; i++) out[i] += jac[i + j * dim] * v[j];
  return dim;
}

static int fn_residual(Part *p, int k, const double *q, const double *v, double t,
                       double *out) {
  (void)k;
  return call_constraints(p, q, v, t, NULL, NULL, out, NULL) ? -1 : p->nr;
}

/* dT/dv = M v (T = 1/2 v^T M v is checked separately). */
static int fn_mass_v(Part *p, int k, const double *q, const double *v, double t, double *out) {
  (void)k;
  double M[MAXN * MAXN];
  if (call_mass(p, q, v, t, M)) return -1;
  for (int i = 0; i < p->nc; i++) {
    out[i] = 0.0;
    for (int j = 0; j < p->nc; j++) out[i] += M[i + j * p->nc] * v[j];
  }
  return p->nc;
}

static int fn_kinetic(Part *p, int k, const double *q, const double *v, double t, double *out) {
  (void)k;
  double V;
  return call_energy(p, q, v, t, &out[0], &V) ? -1 : 1;
}

static int fn_potential(Part *p, int k, const double *q, const double *v, double t,
                        double *out) {
  (void)k;
  double T;
  return call_energy(p, q, v, t, &T, &out[0]) ? -1 : 1;
}

/* d/ds f(q + s dq, v + s dv, t + s dt) at s = 0 (central), or with second != 0 the second
 * derivative. dq, dv may be NULL (no change). */
static int fd(Part *p, VecFn f, int k, const double *q, const double *v, double t,
              const double *dq, const double *dv, double dt, int second, double *out) {
  double h = second ? H2 : H1, qs[MAXN], vs[MAXN], fp[MAXN], fm[MAXN], f0[MAXN];
  int n = 0;
  for (int sgn = -1; sgn <= 1; sgn += 2) {
    for (int i = 0; i < p->nc; i++) {
      qs[i] = q[i] + (dq ? sgn * h * dq[i] : 0.0);
      vs[i] = v[i] + (dv ? sgn * h * dv[i] : 0.0);
    }
    n = f(p, k, qs, vs, t + sgn * h * dt, sgn < 0 ? fm : fp);
    if (n < 0) return -1;
  }
  if (second && f(p, k, q, v, t, f0) < 0) return -1;
  for (int i = 0; i < n; i++)
    out[i] = second ? (fp[i] - 2.0 * f0[i] + fm[i]) / (h * h) : (fp[i] - fm[i]) / (2.0 * h);
  return n;
}

/* Column j of d f / d q (or d v). */
static int fd_coord(Part *p, VecFn f, int k, const double *q, const double *v, double t, int j,
                    int in_v, double *out) {
  double e[MAXN] = {0};
  e[j] = 1.0;
  return fd(p, f, k, q, v, t, in_v ? NULL : e, in_v ? e : NULL, 0.0, 0, out);
}

static double maxabs(const double *a, int n) {
  double m = 0.0;
  for (int i = 0; i < n; i++) m = fmax(m, fabs(a[i]));
  return m;
}

/* max |a - b| relative to 1 + the size of the block; NaN counts as a huge error. */
static double relerr(const double *a, const double *b, int n) {
  double d = 0.0;
  for (int i = 0; i < n; i++) {
    double e = fabs(a[i] - b[i]);
    d = e == e ? fmax(d, e) : (double)INFINITY;
  }
  return d / (1.0 + fmax(maxabs(a, n), maxabs(b, n)));
}

/* ---- the conformance checks of one instance ---------------------------------------- */

typedef struct Worst {
  double jac, vel_bias, gamma, nullopt, A, rhs, rate, sym, psd, constant, kinetic, lagrange,
      power, finite;
} Worst;

/* Types whose Q must come entirely from their Lagrangian T - V (no dissipation); any other
 * type must not add energy: v . (Q - Q_lagrange) <= 0. */
static const char *const conservative[] = {"ground", "mass",     "spring", "spring_mass",
                                           "pendulum", "rod", "guide"};

static int is_conservative(const jyPartType *type) {
  for (size_t i = 0; i < sizeof conservative / sizeof conservative[0]; i++)
    if (strcmp(type->name, conservative[i]) == 0) return 1;
  return 0;
}

static void random_state(Part *p, double *q, double *v, double *t) {
  for (int i = 0; i < p->nc; i++) q[i] = urand(-1.0, 1.0), v[i] = urand(-1.0, 1.0);
  for (int i = 0; i < 3; i++) p->gravity[i] = urand(-10.0, 10.0);
  *t = urand(0.0, 10.0);
}

static void check_terminals(Part *p, const double *q, const double *v, double t, Worst *w) {
  for (int k = 0; k < p->shape.nterminals; k++) {
    int dim = p->shape.terminals[k].dim, nc = p->nc;
    double value[3], jac[3 * MAXN], vb[3], gamma[3], col[MAXN], fdv[MAXN], v1[3];
    if (call_terminal(p, k, q, v, t, value, jac, vb, gamma)) continue;
    for (int j = 0; j < nc; j++)
      if (fd_coord(p, fn_value, k, q, v, t, j, 0, col) == dim)
        w->jac = fmax(w->jac, relerr(&jac[j * dim], col, dim));
    if (fd(p, fn_value, k, q, v, t, NULL, NULL, 1.0, 0, fdv) == dim)
      w->vel_bias = fmax(w->vel_bias, relerr(vb, fdv, dim));
    if (fd(p, fn_term_rate, k, q, v, t, v, NULL, 1.0, 0, fdv) == dim)
      w->gamma = fmax(w->gamma, relerr(gamma, fdv, dim));
    /* Asking for the value alone gives the same value. */
    if (call_terminal(p, k, q, v, t, v1, NULL, NULL, NULL) == 0)
      w->nullopt = fmax(w->nullopt, relerr(value, v1, dim));
  }
}

static void check_constraints(Part *p, const double *q, const double *v, double t, Worst *w) {
  int nr = p->nr, nc = p->nc;
  double A[MAXN * MAXN], b[MAXN], res[MAXN], rate[MAXN], A2[MAXN * MAXN], b2[MAXN];
  double col[MAXN], d2[MAXN], dt[MAXN], av[MAXN];
  if (nr == 0 || call_constraints(p, q, v, t, A, b, res, rate)) return;
  if (call_constraints(p, q, v, t, A2, b2, NULL, NULL) == 0)
    w->nullopt = fmax(w->nullopt, fmax(relerr(A, A2, nr * nc), relerr(b, b2, nr)));
  /* A = d phi / d q for position rows, d psi / d v for velocity rows. */
  for (int j = 0; j < nc; j++) {
    double Aj[MAXN], cv[MAXN];
    fd_coord(p, fn_residual, 0, q, v, t, j, 0, col);
    fd_coord(p, fn_residual, 0, q, v, t, j, 1, cv);
    for (int i = 0; i < nr; i++) {
      Aj[i] = A[i + j * nr];
      if (p->shape.row_kinds[i] == JY_ROW_VELOCITY) col[i] = cv[i];
    }
    w->A = fmax(w->A, relerr(Aj, col, nr));
  }
  /* Position rows: b = -(d^2/ds^2) phi(q + s v, t + s), rate = A v + phi_t.
   * Velocity rows: b = -(d/ds) psi(q + s v, v, t + s). */
  fd(p, fn_residual, 0, q, v, t, v, NULL, 1.0, 1, d2);
  fd(p, fn_residual, 0, q, v, t, NULL, NULL, 1.0, 0, dt);
  fd(p, fn_residual, 0, q, v, t, v, NULL, 1.0, 0, col);
  for (int i = 0; i < nr; i++) {
    av[i] = 0.0;
    for (int j = 0; j < nc; j++) av[i] += A[i + j * nr] * v[j];
    double want_b = p->shape.row_kinds[i] == JY_ROW_POSITION ? -d2[i] : -col[i];
    w->rhs = fmax(w->rhs, fabs(b[i] - want_b) / (1.0 + fabs(want_b)));
    if (p->shape.row_kinds[i] == JY_ROW_POSITION) {
      double want = av[i] + dt[i];
      w->rate = fmax(w->rate, fabs(rate[i] - want) / (1.0 + fabs(want)));
    }
  }
}

/* Smallest eigenvalue of the symmetric n x n matrix M (upper triangle), via dsyev. */
static double min_eig(const double *M, int n) {
  double a[MAXN * MAXN], e[MAXN];
  memcpy(a, M, sizeof(double) * (size_t)(n * n));
  if (LAPACKE_dsyev(LAPACK_COL_MAJOR, 'N', 'U', n, a, n, e) != 0) return -INFINITY;
  return e[0];
}

static void check_mass(Part *p, const double *q, const double *v, double t, Worst *w) {
  int n = p->nc;
  double M[MAXN * MAXN], M2[MAXN * MAXN], q2[MAXN], T, V;
  if (n == 0 || call_mass(p, q, v, t, M)) return;
  double big = maxabs(M, n * n);
  for (int j = 0; j < n; j++)
    for (int i = 0; i < j; i++)
      w->sym = fmax(w->sym, fabs(M[i + j * n] - M[j + i * n]) / (big > 0 ? big : 1.0));
  /* PSD up to rounding: smallest eigenvalue >= -1e-12 max|M|, reported as a multiple. */
  double lo = min_eig(M, n);
  w->psd = fmax(w->psd, lo < 0 ? -lo / (1e-12 * (big > 0 ? big : 1.0)) : 0.0);
  if (p->shape.flags & JY_PART_CONSTANT_MASS) {
    for (int i = 0; i < n; i++) q2[i] = urand(-3.0, 3.0);
    if (call_mass(p, q2, v, t + 1.0, M2) == 0)
      w->constant = fmax(w->constant, relerr(M, M2, n * n));
  }
  if (call_energy(p, q, v, t, &T, &V) == 0) {
    double vmv = 0.0;
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++) vmv += v[i] * M[i + j * n] * v[j];
    w->kinetic = fmax(w->kinetic, fabs(T - 0.5 * vmv) / (1.0 + fabs(T)));
  }
}

/* Lagrange's equations of L = T - V with T = 1/2 v^T M(q, t) v, at q'' = 0:
 * Q_lagrange = -dV/dq + dT/dq - d/ds [M(q + s v, t + s) v]. At v = 0 this is -dV/dq. */
static int lagrange_force(Part *p, const double *q, const double *v, double t, double *out) {
  int n = p->nc;
  double dv[1], dk[1], mv[MAXN];
  if (fd(p, fn_mass_v, 0, q, v, t, v, NULL, 1.0, 0, mv) < 0) return 1;
  for (int j = 0; j < n; j++) {
    if (fd_coord(p, fn_potential, 0, q, v, t, j, 0, dv) < 0) return 1;
    if (fd_coord(p, fn_kinetic, 0, q, v, t, j, 0, dk) < 0) return 1;
    out[j] = -dv[0] + dk[0] - mv[j];
  }
  return 0;
}

static void check_force(Part *p, const double *q, const double *v, double t, Worst *w) {
  int n = p->nc;
  double Q[MAXN], QL[MAXN], zero[MAXN] = {0}, C[MAXN];
  if (n == 0) return;
  /* At rest every part's Q is -dV/dq: there is nothing to dissipate. */
  if (call_force(p, q, zero, t, Q) == 0 && lagrange_force(p, q, zero, t, QL) == 0)
    w->lagrange = fmax(w->lagrange, relerr(Q, QL, n));
  if (call_force(p, q, v, t, Q) || lagrange_force(p, q, v, t, QL)) return;
  if (is_conservative(p->type)) {
    w->lagrange = fmax(w->lagrange, relerr(Q, QL, n));
  } else {
    /* Dissipative: the part of Q its Lagrangian does not explain may only take energy out. */
    double power = 0.0;
    for (int i = 0; i < n; i++) power += v[i] * (Q[i] - QL[i]);
    w->power = fmax(w->power, power / (1.0 + maxabs(Q, n)));
  }
  if (call_nonideal(p, q, v, t, C) == 0)
    for (int i = 0; i < n; i++)
      if (!isfinite(C[i])) w->finite = INFINITY;
}

static void check_outputs(Part *p, const double *q, const double *v, double t, Worst *w) {
  double rowf[MAXN], out[JY_PART_MAX_OUTPUTS];
  for (int i = 0; i < p->nr; i++) rowf[i] = urand(-5.0, 5.0);
  if (call_outputs(p, q, v, t, rowf, out) == 0)
    for (int i = 0; i < p->shape.noutputs; i++)
      if (!isfinite(out[i])) w->finite = INFINITY;
}

static int shape_sane(const Part *p) {
  const jyPartShape *s = &p->shape;
  if (s->ncoords < 0 || s->ncoords > JY_PART_MAX_COORDS || s->nterminals < 0 ||
      s->nterminals > JY_PART_MAX_TERMINALS || s->nrows < 0 || s->nrows > JY_PART_MAX_ROWS ||
      s->noutputs < 0 || s->noutputs > JY_PART_MAX_OUTPUTS)
    return 0;
  for (int i = 0; i < s->ncoords; i++) {
    if (!s->coord_names[i] || !s->coord_names[i][0] || !isfinite(s->coord_defaults[i])) return 0;
    for (int j = 0; j < i; j++)
      if (strcmp(s->coord_names[i], s->coord_names[j]) == 0) return 0;
  }
  for (int i = 0; i < s->nterminals; i++)
    if (!s->terminals[i].name || s->terminals[i].dim < 1 ||
        s->terminals[i].dim > JY_TERMINAL_MAX_DIM)
      return 0;
  for (int i = 0; i < s->nrows; i++)
    if (!s->row_names[i] ||
        (s->row_kinds[i] != JY_ROW_POSITION && s->row_kinds[i] != JY_ROW_VELOCITY))
      return 0;
  for (int i = 0; i < s->noutputs; i++)
    if (!s->output_names[i] || !s->output_names[i][0]) return 0;
  return 1;
}

/* Runs every check on one instance; returns the worst first-derivative FD error and, in
 * *second, the worst second-difference error. */
static double conform(Part *p, double *second) {
  Worst w = {0};
  long over0 = overruns, fail0 = failures;
  double q[MAXN], v[MAXN], t;
  ok(shape_sane(p), "%s: shape within limits, names set and unique", p->label);
  for (int s = 0; s < NSTATES; s++) {
    random_state(p, q, v, &t);
    check_terminals(p, q, v, t, &w);
    check_constraints(p, q, v, t, &w);
    check_mass(p, q, v, t, &w);
    check_force(p, q, v, t, &w);
    check_outputs(p, q, v, t, &w);
  }
  ok(failures == fail0, "%s: no function failed at random states", p->label);
  ok(overruns == over0, "%s: no function wrote past its outputs", p->label);
  if (p->shape.nterminals > 0) {
    ok(w.jac <= TOL1, "%s: terminal J = FD of the value (worst %.2g)", p->label, w.jac);
    ok(w.vel_bias <= TOL1, "%s: terminal p_t = FD in t (worst %.2g)", p->label, w.vel_bias);
    ok(w.gamma <= TOL1, "%s: terminal gamma = d/ds[J v + p_t](q + s v, t + s) (worst %.2g)",
       p->label, w.gamma);
  }
  ok(w.nullopt <= 1e-15, "%s: NULL optional outputs change nothing (worst %.2g)", p->label,
     w.nullopt);
  if (p->nr > 0) {
    ok(w.A <= TOL1, "%s: constraint A = FD of the residual (worst %.2g)", p->label, w.A);
    ok(w.rhs <= TOL2, "%s: constraint b = -(2nd derivative along v) (worst %.2g)", p->label,
       w.rhs);
    ok(w.rate <= TOL1, "%s: rate = A v + phi_t (worst %.2g)", p->label, w.rate);
  }
  if (p->nc > 0) {
    ok(w.sym <= 1e-14, "%s: M symmetric (worst %.2g)", p->label, w.sym);
    ok(w.psd <= 1.0, "%s: M positive semi-definite (min eigenvalue %.2g x 1e-12 max|M|)",
       p->label, -w.psd);
    if (p->shape.flags & JY_PART_CONSTANT_MASS)
      ok(w.constant == 0.0, "%s: M constant as flagged (worst %.2g)", p->label, w.constant);
    ok(w.kinetic <= 1e-13, "%s: T = 1/2 v^T M v (worst %.2g)", p->label, w.kinetic);
    if (is_conservative(p->type))
      ok(w.lagrange <= TOL1, "%s: Q = Lagrange's equations of T - V, at rest and moving "
         "(worst %.2g)", p->label, w.lagrange);
    else {
      ok(w.lagrange <= TOL1, "%s: Q(q, v = 0) = -dV/dq (worst %.2g)", p->label, w.lagrange);
      ok(w.power <= 1e-12, "%s: v . (Q - Q_lagrange) <= 0: dissipates (worst %.2g)", p->label,
         w.power);
    }
  }
  ok(w.finite == 0.0, "%s: outputs and C finite", p->label);
  *second = fmax(*second, w.rhs);
  return fmax(fmax(fmax(w.jac, w.vel_bias), fmax(w.gamma, w.A)), fmax(w.rate, w.lagrange));
}

static int check_schema(const jyPartType *type) {
  int good = type->version == JY_PART_PROTOCOL_VERSION && type->name && type->name[0] &&
             type->doc && type->doc[0] && !strchr(type->doc, '\n') && type->shape &&
             type->nparams >= 0 && type->nparams <= MAXP;
  for (int i = 0; good && i < type->nparams; i++) {
    const jyParamSpec *s = &type->params[i];
    double d = s->default_value;
    good = s->name && s->name[0] && s->unit && s->unit[0] && s->doc && s->doc[0] &&
           !strchr(s->doc, '\n') && isfinite(d);
    if (s->domain == JY_PARAM_POSITIVE) good = good && d > 0;
    if (s->domain == JY_PARAM_NONNEGATIVE) good = good && d >= 0;
    if (s->domain == JY_PARAM_DIMENSION) good = good && (d == 1 || d == 2 || d == 3);
    for (int j = 0; good && j < i; j++) good = strcmp(s->name, type->params[j].name) != 0;
    if (!good) diag("%s: parameter %d (%s) lacks a unit/doc or has a bad default", type->name, i,
                    s->name ? s->name : "?");
  }
  return ok(good, "%s: schema (version, doc, every parameter named with unit, doc, default)",
            type->name);
}

/* Every type, every dimension, defaults then random parameters. */
static void conform_type(const jyPartType *type) {
  int di = dim_param(type);
  double worst = 0.0, second = 0.0;
  for (int dim = 1; dim <= 3; dim++) {
    if (di < 0 && dim > 1) break;
    for (int variant = 0; variant < 2; variant++) {
      double params[MAXP];
      char label[96];
      for (int i = 0; i < type->nparams; i++) {
        const jyParamSpec *s = &type->params[i];
        params[i] = s->default_value;
        if (variant == 0) continue;
        if (s->domain == JY_PARAM_REAL) params[i] = urand(-2.0, 2.0);
        if (s->domain == JY_PARAM_POSITIVE) params[i] = urand(0.3, 3.0);
        if (s->domain == JY_PARAM_NONNEGATIVE) params[i] = urand(0.0, 3.0);
      }
      if (di >= 0) params[di] = dim;
      const char *what = variant ? "random params" : "defaults";
      if (di >= 0)
        snprintf(label, sizeof label, "%s dim %d (%s)", type->name, dim, what);
      else
        snprintf(label, sizeof label, "%s (%s)", type->name, what);
      Part p;
      if (part_make(&p, type, params, label) != 0) {
        /* Allowed (guide's default normal has no x component), but it must say why. */
        ok(p.error[0] != '\0', "%s: rejected with a message: %s", label, p.error);
        part_free(&p);
        continue;
      }
      worst = fmax(worst, conform(&p, &second));
      part_free(&p);
    }
  }
  diag("%s: worst relative FD error %.3g (first derivatives), %.3g (second differences)",
       type->name, worst, second);
}

/* ---- closed-form spot checks of the built-in parts ---------------------------------- */

static int names_are(const char *const *got, int n, const char *want) {
  char buf[256] = "";
  for (int i = 0; i < n; i++) {
    strcat(buf, got[i]);
    if (i + 1 < n) strcat(buf, ",");
  }
  int good = strcmp(buf, want) == 0;
  if (!good) diag("names: got '%s', want '%s'", buf, want);
  return good;
}

static int terminal_names_are(const jyPartShape *s, const char *want) {
  const char *names[JY_PART_MAX_TERMINALS];
  for (int i = 0; i < s->nterminals; i++) names[i] = s->terminals[i].name;
  return names_are(names, s->nterminals, want);
}

static void spot_names(const jyEnv *env) {
  static const struct {
    const char *type, *coords, *terminals, *rows, *outputs;
  } want[] = {
    {"ground", "", "pos", "", ""},
    {"mass", "x,y,z", "pos", "", ""},
    {"spring", "ax,ay,az,bx,by,bz", "a,b", "", "tension,length"},
    {"damper", "ax,ay,az,bx,by,bz", "a,b", "", "force"},
    {"rod", "ax,ay,az,bx,by,bz", "a,b", "length", "tension"},
    {"spring_mass", "xi,x", "base,tip", "", "tension"},
    {"pendulum", "px,py,theta", "pivot,bob", "", ""},
    {"guide", "x,y", "pos", "surface", "normal_force,friction_force,friction_power"},
  };
  for (size_t i = 0; i < sizeof want / sizeof want[0]; i++) {
    Part p;
    int built = part_named(&p, env, want[i].type, END) == 0;
    ok(built && names_are(p.shape.coord_names, p.nc, want[i].coords) &&
           terminal_names_are(&p.shape, want[i].terminals) &&
           names_are(p.shape.row_names, p.nr, want[i].rows) &&
           names_are(p.shape.output_names, p.shape.noutputs, want[i].outputs),
       "%s (defaults): coordinates %s, terminals %s, rows '%s', outputs '%s'", want[i].type,
       want[i].coords, want[i].terminals, want[i].rows, want[i].outputs);
    part_free(&p);
  }
}

static void spot_ground_mass(const jyEnv *env) {
  Part p;
  double value[3], q[3] = {0.5, -0.25, 2}, v[3] = {1, 2, 3}, M[9], Q[3], T, V;
  part_named(&p, env, "ground", "dim", 2.0, "x", 1.0, "y", 2.0, "z", 3.0, END);
  call_terminal(&p, 0, q, v, 0, value, NULL, NULL, NULL);
  ok(value[0] == 1 && value[1] == 2 && p.shape.terminals[0].dim == 2,
     "ground dim 2 at (1, 2, 3): pos = (1, 2)");
  part_free(&p);

  part_named(&p, env, "mass", "m", 2.0, END);
  p.gravity[0] = 0, p.gravity[1] = 0, p.gravity[2] = -9.81;
  call_mass(&p, q, v, 0, M);
  call_force(&p, q, v, 0, Q);
  call_energy(&p, q, v, 0, &T, &V);
  ok(M[0] == 2 && M[4] == 2 && M[8] == 2 && M[1] == 0, "mass m = 2: M = 2 I");
  ok(Q[0] == 0 && Q[2] == 2 * -9.81, "mass m = 2: Q = m g points down");
  is_near(T, 0.5 * 2 * 14, 1e-14, "mass: T = 1/2 m |v|^2");
  is_near(V, 2 * 9.81 * 2, 1e-13, "mass: V = m g h rises with height");
  part_free(&p);
}

static void spot_spring(const jyEnv *env) {
  Part p;
  double q[6] = {0, 0, 0, 3, 0, 0}, v[6] = {0}, Q[6], out[2];
  part_named(&p, env, "spring", "k", 2.0, "L", 1.0, END);
  ok(p.shape.coord_defaults[3] == 1.0, "spring: b.x defaults to L");
  call_force(&p, q, v, 0, Q);
  call_outputs(&p, q, v, 0, NULL, out);
  is_near(Q[3], -4.0, 1e-14, "spring stretched to 3 (k 2, L 1): Q_b = -k (len - L) u pulls b back");
  is_near(Q[0], 4.0, 1e-14, "spring stretched: Q_a = +k (len - L) u pulls a toward b");
  ok(out[0] == 4.0 && out[1] == 3.0, "spring stretched: tension 4, length 3");
  q[3] = 0.5;
  call_force(&p, q, v, 0, Q);
  is_near(Q[3], 1.0, 1e-14, "spring compressed to 0.5: pushes b away from a");
  part_free(&p);

  part_named(&p, env, "spring", "dim", 1.0, "k", 1.0, "L", 1.0, END);
  double q1[2] = {0, -2}, Q1[2];
  call_force(&p, q1, v, 0, Q1);
  ok(Q1[0] == -3.0 && Q1[1] == 3.0,
     "spring dim 1 with b - a = -2 (L 1): signed length, Q = (-3, 3)");
  part_free(&p);

  part_named(&p, env, "spring", "dim", 2.0, "L", 1.0, END);
  double qc[4] = {1, 1, 1, 1};
  jyPartState s = state_at(&p, qc, v, 0);
  int rc = p.type->force(&p.inst, &s, Q);
  ok(rc != 0 && p.error[0], "spring 2-D with coincident ends and L > 0 fails: %s", p.error);
  part_free(&p);
  part_named(&p, env, "spring", "dim", 2.0, "L", 0.0, END);
  ok(call_force(&p, qc, v, 0, Q) == 0 && maxabs(Q, 4) == 0,
     "spring 2-D with coincident ends and L = 0: force k d = 0");
  part_free(&p);
}

static void spot_damper(const jyEnv *env) {
  Part p;
  double q[4] = {0, 0, 1, 0}, v[4] = {0, 0, 2, 5}, Q[4], out[1];
  part_named(&p, env, "damper", "dim", 2.0, "c", 3.0, END);
  ok(p.shape.coord_defaults[2] == 1.0, "damper: b.x defaults to 1");
  call_force(&p, q, v, 0, Q);
  call_outputs(&p, q, v, 0, NULL, out);
  ok(Q[0] == 6 && Q[1] == 0 && Q[2] == -6 && Q[3] == 0,
     "damper lengthening at 2 m/s (c 3): Q_b = -6 u resists, the sideways speed is ignored");
  ok(out[0] == 6, "damper: force output = c len' = 6");
  double qc[4] = {1, 1, 1, 1};
  jyPartState s = state_at(&p, qc, v, 0);
  ok(p.type->force(&p.inst, &s, Q) != 0 && p.error[0], "damper with coincident ends fails: %s",
     p.error);
  part_free(&p);
}

static void spot_rod(const jyEnv *env) {
  Part p;
  double q[6] = {0, 0, 0, 2, 0, 0}, v[6] = {0}, A[6], b[1], res[1], rate[1], out[1];
  part_named(&p, env, "rod", "L", 1.5, END);
  ok(p.shape.coord_defaults[3] == 1.5, "rod: b.x defaults to L");
  call_constraints(&p, q, v, 0, A, b, res, rate);
  ok(A[0] == -1 && A[3] == 1 && A[1] == 0 && A[4] == 0, "rod along +x: A = [-u, u], u = (1, 0, 0)");
  is_near(res[0], 0.5, 1e-15, "rod: residual = len - L");
  part_free(&p);

  /* A bob of mass m hangs from a grounded rod: the rod must pull b up with m g, and that is a
   * positive tension. Solve u lambda = (0, m g) for lambda from the part's own A. */
  part_named(&p, env, "rod", "dim", 2.0, "L", 1.0, END);
  double q2[4] = {0, 0, 0, -1}, v2[4] = {0, 0, 1, 0}, A2[4], mg = 2 * 9.81;
  call_constraints(&p, q2, v2, 0, A2, b, NULL, NULL);
  double lambda = (A2[2] * 0 + A2[3] * mg) / (A2[2] * A2[2] + A2[3] * A2[3]);
  call_outputs(&p, q2, v2, 0, &lambda, out);
  is_near(out[0], mg, 1e-12, "rod holding a hanging mass: tension = +m g");
  is_near(b[0], -1.0, 1e-15, "rod swinging at 1 m/s (len 1): b = -|d'|^2 / len (centripetal)");
  double qc[4] = {1, 1, 1, 1};
  jyPartState s = state_at(&p, qc, v2, 0);
  ok(p.type->constraints(&p.inst, &s, A2, b, NULL, NULL) != 0 && p.error[0],
     "rod with coincident ends fails: %s", p.error);
  part_free(&p);
}

static void spot_spring_mass(const jyEnv *env) {
  Part p;
  double q[2] = {0.5, 0.25}, v[2] = {1, 2}, M[4], Q[2], tip[1], base[1], out[1], T, V;
  part_named(&p, env, "spring_mass", "m", 2.0, "k", 4.0, "X", 3.0, END);
  p.gravity[0] = -9.81;
  call_mass(&p, q, v, 0, M);
  call_force(&p, q, v, 0, Q);
  call_terminal(&p, 0, q, v, 0, base, NULL, NULL, NULL);
  call_terminal(&p, 1, q, v, 0, tip, NULL, NULL, NULL);
  call_outputs(&p, q, v, 0, NULL, out);
  call_energy(&p, q, v, 0, &T, &V);
  ok(M[0] == 2 && M[1] == 2 && M[2] == 2 && M[3] == 2, "spring_mass: M = m [[1, 1], [1, 1]]");
  is_near(Q[0], 2 * -9.81, 1e-13, "spring_mass: Q_xi = m g0");
  is_near(Q[1], 2 * -9.81 - 4 * 0.25, 1e-13, "spring_mass: Q_x = m g0 - k x");
  ok(base[0] == 0.5 && tip[0] == 0.5 + 3 + 0.25, "spring_mass: base = xi, tip = xi + X + x");
  ok(out[0] == 1.0, "spring_mass: tension = k x");
  is_near(T, 0.5 * 2 * 9, 1e-14, "spring_mass: T = 1/2 m (xi' + x')^2");
  part_free(&p);
}

static void spot_pendulum(const jyEnv *env) {
  Part p;
  double q[3] = {0.5, 2, PI / 2}, v[3] = {0}, bob[2], M[9], Q[3], g = 9.81;
  part_named(&p, env, "pendulum", "m", 2.0, "l", 1.5, END);
  p.gravity[1] = -g;
  call_terminal(&p, 1, q, v, 0, bob, NULL, NULL, NULL);
  is_near(bob[0], 0.5 + 1.5, 1e-15, "pendulum at theta = pi/2: bob x = px + l");
  is_near(bob[1], 2, 1e-15, "pendulum at theta = pi/2: bob y = py");
  call_force(&p, q, v, 0, Q);
  is_near(Q[2], -2 * g * 1.5, 1e-13, "pendulum at theta = pi/2: gravity torque -m g l restores");
  q[2] = 0;
  call_terminal(&p, 1, q, v, 0, bob, NULL, NULL, NULL);
  ok(bob[0] == 0.5 && bob[1] == 2 - 1.5, "pendulum at theta = 0: bob hangs below the pivot");
  call_mass(&p, q, v, 0, M);
  ok(M[0] == 2 && M[4] == 2 && M[6] == 2 * 1.5 && M[7] == 0 && fabs(M[8] - 2 * 2.25) < 1e-15,
     "pendulum at theta = 0: M = m [[1, 0, l], [0, 1, 0], [l, 0, l^2]]");
  part_free(&p);
}

static void spot_guide(const jyEnv *env) {
  Part p;
  /* Udwadia-Kalaba-Fan 2005, section 4: the line k x1 - x2 = 0 (k = 2) with c = (1, 2). */
  part_named(&p, env, "guide", "nx", 2.0, "ny", -1.0, "cx", 1.0, "cy", 2.0, END);
  double q[2] = {1, 2}, v[2] = {1, 2}, A[2], b[1], res[1], rate[1], C[2], out[3], lambda = 1;
  call_constraints(&p, q, v, 0, A, b, res, rate);
  call_nonideal(&p, q, v, 0, C);
  ok(A[0] == 2 && A[1] == -1 && b[0] == 0 && res[0] == 0 && rate[0] == 0,
     "guide (UKF 2005 example): A = (k, -1), b = 0, on the line");
  ok(C[0] == 1 && C[1] == 2, "guide: non-ideal force C = (1, 2)");
  part_free(&p);
  part_named(&p, env, "guide", "nx", 3.0, "ny", 4.0, "d", 1.0, END);
  call_outputs(&p, q, v, 0, &lambda, out);
  call_constraints(&p, q, v, 0, A, b, res, NULL);
  is_near(out[0], 5.0, 1e-15, "guide n = (3, 4), lambda = 1: normal_force = lambda |n| = 5");
  is_near(res[0], 3 + 8 - 1, 1e-15, "guide: residual = n . p - d");
  part_free(&p);
  /* Friction on a floor (n = (0, 1)) under a normal force of 10 N (lambda = 10): Coulomb
   * mu |N| = 5 N against the sliding direction, viscous c v_t = 0.2 N. */
  part_named(&p, env, "guide", "mu", 0.5, "c", 0.1, END);
  ok(!(p.shape.flags & JY_PART_NO_LAW), "guide with mu > 0 has an active non-ideal law");
  double slide[2] = {2, 0}, rest[2] = {0, 0}, pushed[2] = {-3, 7}, law[2] = {0, 0};
  double ten = 10;
  jyPartState s = state_at(&p, q, slide, 0);
  p.type->nonideal_law(&p.inst, &s, &ten, NULL, law);
  call_nonideal(&p, q, slide, 0, C);
  ok(law[0] == -5 && law[1] == 0 && fabs(C[0] + 0.2) < 1e-15 && C[1] == 0,
     "guide sliding at (2, 0): Coulomb (-5, 0), viscous (-0.2, 0) (got (%g, %g), (%g, %g))",
     law[0], law[1], C[0], C[1]);
  s = state_at(&p, q, rest, 0);
  law[0] = law[1] = 0;
  p.type->nonideal_law(&p.inst, &s, &ten, pushed, law);
  ok(law[0] == 5 && law[1] == 0,
     "guide at rest pushed towards -x: Coulomb friction (5, 0) opposes the tangential "
     "acceleration (got (%g, %g))", law[0], law[1]);
  part_free(&p);
  part_named(&p, env, "guide", END);
  ok(p.shape.flags & JY_PART_NO_LAW, "guide with mu = 0 says its law is inactive");
  part_free(&p);
  ok(part_named(&p, env, "guide", "ny", 0.0, END) != 0 && strstr(p.error, "normal"),
     "guide with a zero normal is rejected: %s", p.error);
  part_free(&p);
}

int main(void) {
  jyEnv *env = jy_env_create(NULL);
  ok(env && jy_components_register(env) == JY_OK, "the built-in parts register");
  if (!env) return done();
  static const char *const builtins[] = {"ground",      "mass",     "spring", "damper", "rod",
                                         "spring_mass", "pendulum", "guide"};
  int found = 0;
  for (size_t i = 0; i < sizeof builtins / sizeof builtins[0]; i++)
    found += jy_env_find_type(env, builtins[i]) != NULL;
  ok(found == 8 && jy_env_num_types(env) == 8, "all 8 built-in types are registered (%d)",
     jy_env_num_types(env));
  ok(jy_components_register(env) != JY_OK, "registering them twice is refused");

  for (int i = 0; i < jy_env_num_types(env); i++) {
    const jyPartType *type = jy_env_type(env, i);
    check_schema(type);
    conform_type(type);
  }

  spot_names(env);
  spot_ground_mass(env);
  spot_spring(env);
  spot_damper(env);
  spot_rod(env);
  spot_spring_mass(env);
  spot_pendulum(env);
  spot_guide(env);

  jy_env_destroy(env);
  plan(tap_count);
  return done();
}
