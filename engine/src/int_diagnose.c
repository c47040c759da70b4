/* Why an integration failed. Names the state components with the largest weighted local
 * error (error weight x estimated local error, CVODE's own test quantity) as "part.coord",
 * then probes the right-hand side near the failing state for the causes users meet:
 *  - a coordinate coming to rest against Coulomb friction: the acceleration jumps as its
 *    velocity changes sign near zero, and a part with a non-ideal law sees that velocity;
 *  - redundant rows asking for different motions: a row found dependent at the start that
 *    misses by far more than the rows kept, or that the solve with every row finds
 *    inconsistent at the rank the rows had at the start;
 *  - a singular configuration: the constraint Jacobian has lost rank against the initial
 *    state, or the constraint forces dwarf the applied ones;
 *  - a rheonomic row whose time derivative grows without bound;
 *  - stiffness: a non-stiff method whose step sits at the scale of a fast, smooth rate.
 * Each cause is said as "likely", with the numbers that support it; none is claimed that a
 * probe did not find. */
#include "int_diagnose.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "vec.h"

#define TOP_ERRORS 3

typedef struct Probe {
  jyEval *e;
  const jyModel *m;
  const jyFailure *f;
  double *q, *v;        /* n each: the probed state */
  double *a0, *a1, *a2; /* max(n, max_part_coords) each: accelerations, local velocities */
  double *mu;           /* m: row forces */
} Probe;

static void say(char *out, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void say(char *out, size_t len, const char *fmt, ...) {
  size_t used = strlen(out);
  if (used + 1 >= len) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(out + used, len - used, fmt, ap);
  va_end(ap);
}

/* "part.coord", "der(part.coord)", "lambda(row)" or "der(lambda(row))" for component k. */
static void component_name(const jyModel *m, int nq, int k, char *buf, size_t len) {
  int i = k >= nq ? k - nq : k;
  const char *base = i < m->n ? m->coord_names[i] : m->row_names[i - m->n];
  const char *wrap = i < m->n ? "" : "lambda(";
  if (k >= nq)
    snprintf(buf, len, "der(%s%s%s)", wrap, base, *wrap ? ")" : "");
  else
    snprintf(buf, len, "%s%s%s", wrap, base, *wrap ? ")" : "");
}

/* The part that owns global coordinate j (or, for a multiplier, whose row it is). */
static const char *component_part(const jyModel *m, int nq, int k) {
  int i = k >= nq ? k - nq : k;
  if (i >= m->n) {
    int part = m->row_part[i - m->n];
    return part >= 0 ? m->parts[part].inst.name : "a glue";
  }
  for (int p = 0; p < m->nparts; p++)
    for (int c = 0; c < m->parts[p].inst.ncoords; c++)
      if (m->parts[p].coord_map[c] == i) return m->parts[p].inst.name;
  return "?";
}

/* Keeps in idx/key (count of TOP_ERRORS so far, largest key first) the entries with the
 * largest keys: adds (index, key) if it is among them. Returns the new count. */
static int keep_largest(int *idx, double *key, int count, int index, double value) {
  if (count == TOP_ERRORS && value <= key[TOP_ERRORS - 1]) return count;
  int at = count < TOP_ERRORS ? count++ : TOP_ERRORS - 1;
  for (; at > 0 && key[at - 1] < value; at--) {
    idx[at] = idx[at - 1];
    key[at] = key[at - 1];
  }
  idx[at] = index;
  key[at] = value;
  return count;
}

/* The components with the largest weighted local error, largest first. */
static int top_errors(const jyFailure *f, int *idx, double *val) {
  int count = 0;
  if (!f->weights || !f->local_errors) return 0;
  for (int k = 0; k < 2 * f->nq; k++) {
    double w = fabs(f->weights[k] * f->local_errors[k]);
    if (w > 0) count = keep_largest(idx, val, count, k, w);
  }
  return count;
}

/* The size of component k the run's tolerances regard as an error of one. */
static double tolerance(const jyFailure *f, int k) {
  if (f->weights && f->weights[k] > 0) return 1 / f->weights[k];
  return f->rtol * fabs(f->y[k]) + f->atol;
}

static void reset(Probe *p) {
  memcpy(p->q, p->f->y, sizeof(double) * (size_t)p->m->n);
  memcpy(p->v, p->f->y + p->f->nq, sizeof(double) * (size_t)p->m->n);
}

static int accel(Probe *p, double *out) {
  return jy_eval_acceleration(p->e, p->q, p->v, p->f->t, out) == JY_OK;
}

/* The jump of the acceleration as der(coordinate j) changes sign near zero, between
 * +-delta and between +-100 delta (delta: its tolerance). A smooth right-hand side changes
 * 100 times more over the wider interval; a switching one (Coulomb friction reversing
 * with the sliding direction) by about the same, a good part of its own size. */
static int jump_at_rest(Probe *p, int j, double *jump) {
  int n = p->m->n;
  /* At least 1e-9 (m/s or rad/s): parts switch on a dead zone of their own (the guide
   * takes the acceleration's direction below 1e-12), which a tolerance of 1e-13 falls in. */
  double delta = fmax(tolerance(p->f, p->f->nq + j), 1e-9), size[2] = {0, 0}, scale = 0;
  for (int s = 0; s < 2; s++) {
    reset(p);
    p->v[j] = s ? 100 * delta : delta;
    if (!accel(p, p->a1)) return 0;
    p->v[j] = -p->v[j];
    if (!accel(p, p->a2)) return 0;
    size[s] = jy_max_diff(p->a1, p->a2, n);
    if (s == 0) scale = fmax(jy_max_abs(p->a1, n), jy_max_abs(p->a2, n));
  }
  *jump = size[0];
  return size[0] > 1e-3 * scale && size[1] < 10 * size[0];
}

/* A part with an active non-ideal law (friction) whose velocity follows der(coordinate j):
 * its index, and its speed (largest local velocity) at the failing state; -1 if none. */
static int law_part_moved_by(Probe *p, int j, double *speed) {
  const jyModel *m = p->m;
  for (int k = 0; k < m->nparts; k++) {
    const jyModelPart *part = &m->parts[k];
    int nc = part->inst.ncoords;
    if (!part->inst.type->nonideal_law || (part->shape->flags & JY_PART_NO_LAW)) continue;
    const double *ql, *vl;
    int mapped;
    reset(p);
    if (jy_localize(p->e, part, p->q, p->v, p->f->t, &ql, &vl, &mapped) != JY_OK) continue;
    memcpy(p->a1, vl, sizeof(double) * (size_t)nc);
    p->v[j] += 1; /* local velocities are linear in v: any change means it follows v_j */
    if (jy_localize(p->e, part, p->q, p->v, p->f->t, &ql, &vl, &mapped) != JY_OK) continue;
    if (jy_max_diff(p->a1, vl, nc) > 0) {
      *speed = jy_max_abs(p->a1, nc);
      return k;
    }
  }
  return -1;
}

/* How fast the acceleration answers a change of coordinate j: sqrt(|da/dq_j|) and
 * |da/dv_j| (1/s), the larger. *smooth: both derivatives agree between a step of 100 and
 * of 1000 tolerances (to a factor 3), i.e. the rate is a property of a smooth field. */
static double fast_rate(Probe *p, int j, int *smooth) {
  int n = p->m->n, nq = p->f->nq;
  double rate[2][2];
  reset(p);
  if (!accel(p, p->a0)) return 0;
  for (int w = 0; w < 2; w++) { /* 0: position, 1: velocity */
    double *x = w ? p->v : p->q, base = x[j];
    double d = 100 * tolerance(p->f, j + (w ? nq : 0));
    for (int s = 0; s < 2; s++) {
      x[j] = base + (s ? 10 * d : d);
      if (!accel(p, p->a1)) return 0;
      rate[w][s] = jy_max_diff(p->a1, p->a0, n) / (s ? 10 * d : d);
    }
    x[j] = base;
  }
  *smooth = 1;
  for (int w = 0; w < 2; w++)
    if (rate[w][0] > 0 && !(rate[w][1] > rate[w][0] / 3 && rate[w][1] < 3 * rate[w][0]))
      *smooth = 0;
  return fmax(sqrt(rate[0][0]), rate[1][0]);
}

/* The dense rank-revealing solve with every row (the compile's dependent ones too) at
 * (q, v), the acceleration into p->a0 and the problem into *prob: its outcome, or -1 where
 * it is not probed (no dense M in a large model, or the assembly failed). */
static int solve_every_row(Probe *p, const double *q, const double *v, jyUkProblem *prob,
                           jyUkResult *res) {
  jyEval *e = p->e;
  const jyModel *m = p->m;
  unsigned what = JY_ASM_MASS | JY_ASM_FORCE | JY_ASM_NONIDEAL | JY_ASM_CONSTRAINTS;
  if (e->large || jy_eval_dense_ready(e) != 0) return -1;
  if (jy_assemble(e, q, v, p->f->t, what) != JY_OK) return -1;
  *prob = (jyUkProblem){m->n, m->m, e->mass, e->force, e->nonideal, e->jac, e->rhs, NULL};
  jyUkOptions opt = {m->solver.rank_rcond, m->solver.augment_scale, m->solver.consistency_tol};
  return (int)jy_uk_solve(e->uk, prob, &opt, p->a0, res);
}

/* Rank of the constraint Jacobian at (q, v) (dense rank-revealing solve) and the ratio of
 * the largest constraint force to the largest applied force (0 when there is none). */
static int constraint_rank(Probe *p, const double *q, const double *v, double *force_ratio) {
  jyEval *e = p->e;
  const jyModel *m = p->m;
  jyUkProblem prob;
  jyUkResult res;
  *force_ratio = 0;
  int outcome = solve_every_row(p, q, v, &prob, &res);
  if (outcome < 0) return -1;
  if (outcome != JY_UK_OK) return res.rank;
  if (jy_uk_multipliers(e->uk, &prob, p->a0, p->mu, NULL) != 0) return res.rank;
  double applied = 0, constraint = 0;
  for (int j = 0; j < m->n; j++) {
    double fc = 0;
    for (int i = 0; i < m->m; i++) fc += e->jac[i + (size_t)j * m->m] * p->mu[i];
    constraint = fmax(constraint, fabs(fc));
    applied = fmax(applied, fabs(e->force[j] + e->nonideal[j]));
  }
  if (applied > 0) *force_ratio = constraint / applied;
  return res.rank;
}

static int say_singular(Probe *p, char *out, size_t len) {
  const jyModel *m = p->m;
  if (m->m == 0) return 0;
  double ratio = 0, ratio0 = 0;
  reset(p);
  int rank = constraint_rank(p, p->q, p->v, &ratio);
  int rank0 = constraint_rank(p, m->q0, m->v0, &ratio0);
  if (rank < 0 || rank0 < 0) return 0;
  int lost = rank<rank0, huge = ratio> 1e3 * fmax(ratio0, 1);
  if (!lost && !huge) return 0;
  say(out, len, "\n  likely cause: a singular configuration (");
  if (lost)
    say(out, len, "the constraint Jacobian has rank %d of %d rows here, %d at the start", rank,
        m->m, rank0);
  if (lost && huge) say(out, len, "; ");
  if (huge)
    say(out, len, "constraint forces %.3g times the applied forces, %.3g at the start", ratio,
        ratio0);
  say(out, len,
      "): a mechanism locking or passing a flat position; BDF with projection "
      "goes through such passages (--method bdf), or check the geometry there");
  return 1;
}

/* Redundant rows that no longer agree: every solve leaves out the rows found dependent at
 * the start (docs/numerics.md, "Redundant constraints"), so the run follows the others
 * while the left-out ones stop holding, the dependent rows are decided again, the solves'
 * choice turns from one row to the other, and the steps fail. Two drives on one joint
 * whose accelerations part after a common start: refused at the start where they part
 * there, said here where they part later. Found at the failing state by the left-out rows'
 * own residuals (a row missing by more than CONFLICT_TOLERANCES tolerances of the state's
 * size, ten times the worst of the rows kept), or by the dense solve with every row finding
 * them inconsistent at the rank the rows had at the start (a rank lost is a singular
 * configuration, said apart). */
#define CONFLICT_TOLERANCES 10.0
#define CONFLICT_CAUSE "\n  likely cause: redundant constraint rows asking for different motions"
#define CONFLICT_ADVICE                                                                      \
  ": a row left out as redundant must agree with the rows it depends on; make them ask for " \
  "the same motion, or drop one"

/* How many tolerances row i misses by in the last JY_ASM_RESIDUALS assembly: its residual,
 * and a position row's rate, against rtol times the state's size plus atol. */
static double row_miss(const Probe *p, int i, double pos_tol, double vel_tol) {
  const jyModel *m = p->m;
  const jyEval *e = p->e;
  if (m->row_kinds[i] == JY_ROW_POSITION)
    return fmax(fabs(e->residual[i]) / pos_tol, fabs(e->rate[i]) / vel_tol);
  return fabs(e->residual[i]) / vel_tol;
}

static int say_conflict(Probe *p, char *out, size_t len) {
  const jyModel *m = p->m;
  jyEval *e = p->e;
  if (m->ndependent == 0) return 0;
  reset(p);
  if (jy_assemble(e, p->q, p->v, p->f->t, JY_ASM_RESIDUALS) != JY_OK) return 0;
  double pos_tol = p->f->rtol * jy_max_abs(p->q, m->n) + p->f->atol;
  double vel_tol = p->f->rtol * jy_max_abs(p->v, m->n) + p->f->atol;
  double kept = 0, left_out = 0;
  for (int i = 0; i < m->m; i++) {
    double miss = row_miss(p, i, pos_tol, vel_tol);
    if (m->dependent_rows[i])
      left_out = fmax(left_out, miss);
    else
      kept = fmax(kept, miss);
  }
  int listed = 0;
  if (left_out > CONFLICT_TOLERANCES && left_out > CONFLICT_TOLERANCES * kept) {
    say(out, len, "%s (", CONFLICT_CAUSE);
    for (int i = 0; i < m->m; i++) {
      double miss = row_miss(p, i, pos_tol, vel_tol);
      if (m->dependent_rows[i] && miss > CONFLICT_TOLERANCES)
        say(out, len, "%s%s misses by %.3g tolerances", listed++ ? ", " : "", m->row_names[i],
            miss);
    }
    say(out, len,
        " here, left out of the solve as redundant, while the rows kept miss by %.3g at most)%s",
        kept, CONFLICT_ADVICE);
    return 1;
  }
  jyUkProblem prob;
  jyUkResult res;
  if (solve_every_row(p, p->q, p->v, &prob, &res) != JY_UK_INCONSISTENT ||
      res.rank < m->m - m->ndependent)
    return 0;
  say(out, len,
      "%s (with every row the solve misses by %.3g, relative; the rows it misses: ", CONFLICT_CAUSE,
      res.residual);
  for (int i = 0; i < m->m; i++)
    if (fabs(res.row_residual[i]) > m->solver.consistency_tol)
      say(out, len, "%s%s%s", listed++ ? ", " : "", m->row_names[i],
          m->dependent_rows[i] ? ", left out as redundant" : "");
  say(out, len, ")%s", CONFLICT_ADVICE);
  return 1;
}

static int say_friction_rest(Probe *p, const int *idx, int count, char *out, size_t len) {
  int nq = p->f->nq;
  for (int r = 0; r < count; r++) {
    int j = idx[r] % nq;
    double jump = 0, speed = 0, vj = p->f->y[nq + j];
    if (j >= p->m->n || fabs(vj) > fmax(1e3 * tolerance(p->f, nq + j), 1e-6) ||
        !jump_at_rest(p, j, &jump))
      continue;
    const char *name = p->m->coord_names[j];
    int law = law_part_moved_by(p, j, &speed);
    if (law < 0) {
      say(out, len,
          "\n  likely cause: the right-hand side switches as der(%s) changes sign "
          "(%s nearly at rest: der(%s) = %.3g; the acceleration jumps by %.3g): a force that "
          "depends on the sign of a velocity; end the run before it stops, or smooth the force",
          name, name, name, vj, jump);
      return 1;
    }
    say(out, len,
        "\n  likely cause: %s coming to rest against Coulomb friction (der(%s) = "
        "%.3g; part '%s' has a friction law and moves at %.3g; the acceleration jumps by %.3g "
        "as der(%s) changes sign): the friction force reverses with the sliding direction "
        "and sticking is not modelled; end the run before it stops (t_end)",
        name, name, vj, p->m->parts[law].inst.name, speed, jump, name);
    return 1;
  }
  return 0;
}

/* Time derivatives of the rows' residuals at fixed (q, v): by backward differences at t
 * and at t - dt, for dt a tenth of the elapsed time down to a thousandth. A rheonomic row
 * whose derivative grew tenfold over such an interval grows without bound near t. */
static int say_rheonomic(Probe *p, char *out, size_t len) {
  const jyModel *m = p->m;
  double t = p->f->t;
  if (m->m == 0 || !(t > 0) || !isfinite(t)) return 0;
  reset(p);
  double *now = p->a0, *rate = p->mu; /* m each */
  for (double frac = 0.1; frac >= 1e-3; frac /= 10) {
    double dt = frac * t;
    double *at[3] = {now, p->a1, p->a2};
    for (int s = 0; s < 3; s++) {
      if (jy_assemble(p->e, p->q, p->v, t - s * dt, JY_ASM_RESIDUALS) != JY_OK) return 0;
      memcpy(at[s], p->e->residual, sizeof(double) * (size_t)m->m);
    }
    int worst = -1;
    double growth = 0;
    for (int i = 0; i < m->m; i++) {
      if (m->row_kinds[i] == JY_ROW_ACCELERATION) continue;
      double d_now = (now[i] - p->a1[i]) / dt, d_before = (p->a1[i] - p->a2[i]) / dt;
      rate[i] = d_now;
      double g = fabs(d_now) / fmax(fabs(d_before), 1e-300);
      if (fabs(d_now) > 1e-9 && g > growth) {
        growth = g;
        worst = i;
      }
    }
    if (worst >= 0 && growth >= 10) {
      say(out, len,
          "\n  likely cause: the rheonomic row %s moves ever faster (its time "
          "derivative at fixed coordinates is %.3g here, %.3g times its value %.3g s "
          "earlier): a prescribed motion whose derivative grows without bound near t = %.9g; "
          "check its formula there",
          m->row_names[worst], rate[worst], growth, dt, t);
      return 1;
    }
  }
  return 0;
}

static int say_stiff(Probe *p, const int *idx, int count, char *out, size_t len) {
  const jyFailure *f = p->f;
  if (!isfinite(f->h) || !(f->h > 0)) return 0;
  for (int r = 0; r < count; r++) {
    int j = idx[r] % f->nq, smooth = 0;
    if (j >= p->m->n) continue;
    double rate = fast_rate(p, j, &smooth);
    if (!smooth || !(f->h * rate >= 0.1)) continue;
    const char *name = p->m->coord_names[j];
    if (f->nonstiff_method) {
      say(out, len,
          "\n  likely cause: stiffness: the step h = %.3g s is held at the scale of "
          "a fast rate of %.3g 1/s at %s (h x rate = %.2g) while the motion is smooth; a "
          "non-stiff method cannot step past it: try --method bdf",
          f->h, rate, name, f->h * rate);
    } else {
      say(out, len,
          "\n  likely cause: a fast mode at %s (rate %.3g 1/s, step h = %.3g s) "
          "that the stiff method still resolves step by step: if it is an undamped "
          "oscillation, damp it or raise max_steps",
          name, rate, f->h);
    }
    return 1;
  }
  return 0;
}

/* The components with the largest weighted local errors, with their parts. */
static void say_errors(const jyModel *m, const jyFailure *f, const int *idx, const double *val,
                       int count, char *out, size_t len) {
  if (count == 0) {
    say(out, len, "\n  (no local error estimate to name the coordinates by)");
    return;
  }
  say(out, len, "\n  largest weighted local errors:");
  for (int r = 0; r < count; r++) {
    char name[300];
    component_name(m, f->nq, idx[r], name, sizeof name);
    say(out, len, "%s %s (part %s) %.3g", r ? "," : "", name, component_part(m, f->nq, idx[r]),
        val[r]);
  }
}

/* The velocity components closest to rest (at most TOP_ERRORS), as state indices. */
static int slowest_velocities(const jyModel *m, const jyFailure *f, int *idx) {
  double minus_speed[TOP_ERRORS];
  int count = 0;
  for (int j = 0; j < m->n; j++)
    count = keep_largest(idx, minus_speed, count, f->nq + j, -fabs(f->y[f->nq + j]));
  return count;
}

/* The velocity components that move most against what the tolerances resolve (at most
 * TOP_ERRORS), as state indices: where a fast mode shows when no error estimate says. */
static int fastest_velocities(const jyModel *m, const jyFailure *f, int *idx, double *key) {
  int count = 0;
  for (int j = 0; j < m->n; j++) {
    double speed = fabs(f->y[f->nq + j]) / tolerance(f, f->nq + j);
    if (speed > 0) count = keep_largest(idx, key, count, f->nq + j, speed);
  }
  return count;
}

void jy_diagnose_failure(jyEval *eval, const jyFailure *f, char *out, size_t len) {
  if (!out || len == 0) return;
  out[0] = '\0';
  say(out, len, "integrator failure at t = %.9g", f->t);
  if (isfinite(f->h)) say(out, len, " (last step h = %.3g s)", f->h);
  say(out, len, ": %s (%s)", f->flag ? f->flag : "?",
      f->detail && *f->detail ? f->detail : "no detail");
  if (!eval) return;
  const jyModel *m = eval->model;
  int idx[TOP_ERRORS];
  double val[TOP_ERRORS];
  int count = top_errors(f, idx, val);
  say_errors(m, f, idx, val, count, out, len);
  /* Scratch for the probes, on this error path only: q, v, and four arrays wide enough
   * for accelerations, a part's local velocities or the rows' residuals. */
  int wide = m->n > m->m ? m->n : m->m;
  if (m->max_part_coords > wide) wide = m->max_part_coords;
  size_t a = (size_t)wide + 1;
  double *scratch = jy_calloc(&m->alloc, 2 * (size_t)m->n + 4 * a, sizeof(double));
  if (scratch) {
    double *w = scratch + 2 * m->n;
    Probe p = {eval, m, f, scratch, scratch + m->n, w, w + a, w + 2 * a, w + 3 * a};
    int found = say_singular(&p, out, len); /* a rank lost can leave a row behind too */
    if (!found) found = say_conflict(&p, out, len);
    /* Without error estimates (a failure before any estimate, or a failing nonlinear
     * solve), the friction probe looks at the velocities nearest rest instead. */
    int near_rest[TOP_ERRORS], nr = count;
    if (count == 0) nr = slowest_velocities(m, f, near_rest);
    found += say_friction_rest(&p, count ? idx : near_rest, nr, out, len);
    found += say_rheonomic(&p, out, len);
    if (!found && count == 0) { /* no estimate (all zero): the fastest velocities instead */
      double speed[TOP_ERRORS];
      int fast[TOP_ERRORS], nf = fastest_velocities(m, f, fast, speed);
      found = say_stiff(&p, fast, nf, out, len);
    } else if (!found) {
      found = say_stiff(&p, idx, count, out, len);
    }
    if (!found)
      say(out, len,
          "\n  no likely cause stands out in the state at t (probed: redundant rows, rank of "
          "the constraints, friction at rest, rheonomic rows, stiffness)");
    jy_free(&m->alloc, scratch);
  }
  if (f->rhs_trouble && *f->rhs_trouble)
    say(out, len, "\n  last trouble of the right-hand side: %s", f->rhs_trouble);
}
