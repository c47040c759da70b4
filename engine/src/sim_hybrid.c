/* Parts with modes inside a simulation (sim_events.h; part.h jyPartHybrid): their guards,
 * and at a crossing the transitions, the impact (jy_eval_impulse: the impulsive
 * Udwadia-Kalaba equation) and the search for modes that hold. The modes themselves live in
 * the evaluator (jy_eval_set_modes), which leaves the inactive rows out of every solve. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "sim_events.h"

/* Mode switches at one instant before the modes are said not to settle: each part switches
 * a few times at most (contact -> open, stick -> slide) when its laws are consistent. */
enum { MAX_SETTLE_PASSES = 32 };

typedef struct Hybrid {
  int nparts;       /* parts with modes */
  int *parts;       /* their indices in the model */
  int *guard_at;    /* first guard of each (into the parts' guard block) */
  int nguards;      /* all of them */
  int any_max_step; /* some part limits the step (jyPartHybrid.max_step) */
  int *modes;       /* scratch: the model's nparts */
  double *acc;      /* n: the acceleration at the state the guards or transitions see */
  double *dv;       /* n: velocity change of an impact */
  double *restitution, *impulse; /* m each */
} Hybrid;

static void hybrid_free(jySim *sim) {
  Hybrid *h = sim->hybrid;
  if (!h) return;
  const jyAllocator *a = &sim->model->alloc;
  jy_free(a, h->parts);
  jy_free(a, h->guard_at);
  jy_free(a, h->modes);
  jy_free(a, h->acc);
  jy_free(a, h->dv);
  jy_free(a, h->restitution);
  jy_free(a, h->impulse);
  jy_free(a, h);
  sim->hybrid = NULL;
}

void jy_hybrid_destroy(jySim *sim) { hybrid_free(sim); }

int jy_hybrid_count(const jySim *sim) {
  const Hybrid *h = sim->hybrid;
  return h ? h->nguards : 0;
}

static Hybrid *hybrid_alloc(jySim *sim, int count) {
  const jyModel *m = sim->model;
  const jyAllocator *a = &m->alloc;
  Hybrid *h = jy_calloc(a, 1, sizeof *h);
  if (!h) return NULL;
  sim->hybrid = h;
  h->parts = jy_calloc(a, (size_t)count, sizeof(int));
  h->guard_at = jy_calloc(a, (size_t)count, sizeof(int));
  h->modes = jy_calloc(a, (size_t)m->nparts + 1, sizeof(int));
  h->acc = jy_calloc(a, (size_t)m->n + 1, sizeof(double));
  h->dv = jy_calloc(a, (size_t)m->n + 1, sizeof(double));
  h->restitution = jy_calloc(a, (size_t)m->m + 1, sizeof(double));
  h->impulse = jy_calloc(a, (size_t)m->m + 1, sizeof(double));
  if (!sim->eval->impulse)
    sim->eval->impulse = jy_calloc(&sim->eval->alloc, (size_t)m->nparts + 1, sizeof(double));
  if (!h->parts || !h->guard_at || !h->modes || !h->acc || !h->dv || !h->restitution ||
      !h->impulse || !sim->eval->impulse)
    return NULL;
  for (int i = 0; i < m->nparts; i++) {
    const jyModelPart *p = &m->parts[i];
    if (!p->shape->hybrid) continue;
    h->parts[h->nparts] = i;
    h->guard_at[h->nparts++] = h->nguards;
    h->nguards += p->shape->nguards;
    if (p->inst.type->version >= 5 && p->shape->hybrid->max_step) h->any_max_step = 1;
  }
  return h;
}

static const char *mode_name(const jyEval *e, const jyModelPart *p, int mode, char *buf,
                             size_t len) {
  const jyPartHybrid *hy = p->shape->hybrid;
  const char *name = hy->mode_name ? hy->mode_name(jy_eval_inst(e, p), mode) : NULL;
  if (name && name[0]) return name;
  snprintf(buf, len, "mode%d", mode);
  return buf;
}

/* Counts "<part>.<what>" at t in the event summary. */
static jyStatus count(jySim *sim, const jyModelPart *p, const char *what, double t) {
  char name[256];
  snprintf(name, sizeof name, "%s.%s", p->inst.name, what);
  jyStatus st = jy_sim_count_event(sim, name, t);
  if (st != JY_OK) jy_set_error(sim->error, "out of memory counting event '%s'", name);
  return st;
}

/* The acceleration and row forces at (t, q, v) in the current modes (h->acc, e->multipliers).
 * With `lenient`, laws that do not settle are taken at their last pass: at a sliding velocity
 * crossing zero where the body should stick, Coulomb friction flips with every pass, and the
 * guards and transitions there need the row forces only roughly (the stick decides). */
static jyStatus solve_state(jySim *sim, double t, const double *q, const double *v, int lenient) {
  jyEval *e = sim->eval;
  Hybrid *h = sim->hybrid;
  jyStatus st = jy_assemble(e, q, v, t,
                            JY_ASM_MASS | JY_ASM_FORCE | JY_ASM_NONIDEAL | JY_ASM_CONSTRAINTS |
                              JY_ASM_SPARSE_ONLY);
  if (st == JY_OK) st = jy_eval_acceleration_and_multipliers(e, q, v, t, h->acc);
  if (st == JY_ERR_CONVERGENCE && lenient) return JY_OK;
  if (st != JY_OK) jy_set_error(sim->error, "%s", e->error);
  return st;
}

/* Part p's local state in its current mode, its local acceleration in e->acc_loc. */
static jyStatus local_state(jySim *sim, const jyModelPart *p, double t, const double *q,
                            const double *v, jyPartState *s) {
  jyEval *e = sim->eval;
  const double *ql, *vl;
  int mapped;
  jyStatus st = jy_localize(e, p, q, v, t, &ql, &vl, &mapped);
  if (st != JY_OK) {
    jy_set_error(sim->error, "%s", e->error);
    return st;
  }
  jy_local_acceleration(e, p, mapped, sim->hybrid ? ((Hybrid *)sim->hybrid)->acc : NULL);
  *s = jy_part_state(e, p, ql, vl, t);
  return JY_OK;
}

static jyStatus part_failed(jySim *sim, const jyModelPart *p, const char *function, double t) {
  jyStatus st = jy_part_failed(sim->eval, p, function, t);
  jy_set_error(sim->error, "%s", sim->eval->error);
  return st;
}

/* Asks every part whether its mode holds with its own forces and switches those that do
 * not, until all hold. *switched set when a mode changed. Each switch during a run is an
 * event (`counted`); the modes a run starts in are not (jy_hybrid_setup). */
static jyStatus settle_modes(jySim *sim, double t, const double *q, const double *v, int counted,
                             int *switched) {
  jyEval *e = sim->eval;
  Hybrid *h = sim->hybrid;
  const jyModel *m = sim->model;
  for (int pass = 0; pass < MAX_SETTLE_PASSES; pass++) {
    jyStatus st = solve_state(sim, t, q, v, 0);
    if (st != JY_OK) return st;
    memcpy(h->modes, e->modes, sizeof(int) * (size_t)m->nparts);
    int changed = 0;
    for (int k = 0; k < h->nparts; k++) {
      const jyModelPart *p = &m->parts[h->parts[k]];
      const jyPartHybrid *hy = p->shape->hybrid;
      if (!hy->admissible) continue;
      jyPartState s;
      if ((st = local_state(sim, p, t, q, v, &s)) != JY_OK) return st;
      int mode = s.mode;
      if (hy->admissible(jy_eval_inst(e, p), &s, e->multipliers + p->row_offset, e->acc_loc,
                         &mode) != 0)
        return part_failed(sim, p, "admissible", t);
      if (mode == s.mode) continue;
      char buf[32];
      if (counted && (st = count(sim, p, mode_name(e, p, mode, buf, sizeof buf), t)) != JY_OK)
        return st;
      h->modes[h->parts[k]] = mode;
      changed = 1;
    }
    if (!changed) return JY_OK;
    *switched = 1;
    if ((st = jy_eval_set_modes(e, h->modes)) != JY_OK) return st;
  }
  jy_set_error(sim->error,
               "the modes of the parts with modes do not settle at t = %.9g: after %d passes "
               "some part still switches (its `admissible` rejects every mode it is offered); "
               "the last modes tried:",
               t, MAX_SETTLE_PASSES);
  for (int k = 0; k < h->nparts; k++) {
    const jyModelPart *p = &m->parts[h->parts[k]];
    char buf[32], item[300];
    snprintf(item, sizeof item, " %s %s", p->inst.name,
             mode_name(e, p, e->modes[h->parts[k]], buf, sizeof buf));
    size_t used = strlen(sim->error);
    if (used + 1 < sizeof sim->error)
      snprintf(sim->error + used, sizeof sim->error - used, "%s", item);
  }
  return JY_ERR_CONVERGENCE;
}

jyStatus jy_hybrid_setup(jySim *sim) {
  const jyModel *m = sim->model;
  hybrid_free(sim); /* called again at a new state (jy_sim_set_state) */
  int count_parts = 0;
  const char *first = NULL;
  for (int i = 0; i < m->nparts; i++)
    if (m->parts[i].shape->hybrid && count_parts++ == 0) first = m->parts[i].inst.name;
  if (count_parts == 0) return JY_OK;
  if (sim->np) {
    jy_set_error(sim->error,
                 "part '%s' has modes (a contact, a rope, friction that sticks): parts with "
                 "modes need the Udwadia-Kalaba formulation; the Natsiavas-Paraskevopoulos "
                 "formulation integrates the multipliers and cannot switch rows on and off",
                 first);
    return JY_ERR_INVALID;
  }
  if (!hybrid_alloc(sim, count_parts)) {
    hybrid_free(sim);
    jy_set_error(sim->error, "out of memory setting up the parts with modes");
    return JY_ERR_NOMEM;
  }
  jyStatus st = jy_eval_initial_modes(sim->eval, sim->q, sim->v, sim->t);
  if (st != JY_OK) {
    jy_set_error(sim->error, "%s", sim->eval->error);
    return st;
  }
  int switched = 0;
  return settle_modes(sim, sim->t, sim->q, sim->v, 0, &switched);
}

int jy_hybrid_guards(jySim *sim, double t, const double *y, double *g) {
  Hybrid *h = sim->hybrid;
  if (!h || h->nguards == 0) return 0;
  jyEval *e = sim->eval;
  const jyModel *m = sim->model;
  const double *q = y, *v = y + sim->nq;
  jyStatus st = solve_state(sim, t, q, v, 1);
  for (int k = 0; k < h->nparts && st == JY_OK; k++) {
    const jyModelPart *p = &m->parts[h->parts[k]];
    jyPartState s;
    st = local_state(sim, p, t, q, v, &s);
    if (st == JY_OK &&
        p->shape->hybrid->guards(jy_eval_inst(e, p), &s, e->multipliers + p->row_offset, e->acc_loc,
                                 g + h->guard_at[k]) != 0)
      st = part_failed(sim, p, "guards", t);
    for (int j = 0; st == JY_OK && j < p->shape->nguards; j++)
      if (!isfinite(g[h->guard_at[k] + j])) {
        jy_set_error(sim->error, "part '%s' (%s), guards: guard %d is not finite at t = %.9g",
                     p->inst.name, p->inst.type->name, j, t);
        st = JY_ERR_PART;
      }
  }
  if (st == JY_OK) return 0;
  sim->failure = st;
  return -1;
}

double jy_hybrid_max_step(jySim *sim, double t, const double *y) {
  Hybrid *h = sim->hybrid;
  double limit = 0;
  if (!h || !h->any_max_step) return limit;
  const jyModel *m = sim->model;
  for (int k = 0; k < h->nparts; k++) {
    const jyModelPart *p = &m->parts[h->parts[k]];
    const jyPartHybrid *hy = p->shape->hybrid;
    if (p->inst.type->version < 5 || !hy->max_step) continue;
    const double *ql, *vl;
    int mapped;
    if (jy_localize(sim->eval, p, y, y + sim->nq, t, &ql, &vl, &mapped) != JY_OK) continue;
    jyPartState s = jy_part_state(sim->eval, p, ql, vl, t);
    double step = hy->max_step(jy_eval_inst(sim->eval, p), &s);
    if (step > 0 && isfinite(step) && (limit == 0 || step < limit)) limit = step;
  }
  return limit;
}

/* Part k's transitions for its guards that crossed: its new mode into h->modes, the
 * restitution of the rows it hits into h->restitution; *impact when it asked for one. */
static jyStatus part_transitions(jySim *sim, int k, double t, const double *q, const double *v,
                                 const int *found, int *impact) {
  jyEval *e = sim->eval;
  Hybrid *h = sim->hybrid;
  const jyModelPart *p = &sim->model->parts[h->parts[k]];
  const jyPartHybrid *hy = p->shape->hybrid;
  for (int j = 0; j < p->shape->nguards; j++) {
    int dir = found[h->guard_at[k] + j];
    if (dir == 0 || !hy->transition) continue;
    jyPartState s;
    jyStatus st = local_state(sim, p, t, q, v, &s);
    if (st != JY_OK) return st;
    s.acc = e->acc_loc; /* local_state left the part's acceleration there */
    double r[JY_PART_MAX_ROWS];
    for (int i = 0; i < p->inst.nrows; i++) r[i] = NAN;
    int mode = s.mode;
    if (hy->transition(jy_eval_inst(e, p), &s, e->multipliers + p->row_offset, j, dir > 0 ? 1 : -1,
                       &mode, r) != 0)
      return part_failed(sim, p, "transition", t);
    for (int i = 0; i < p->inst.nrows; i++) {
      if (isnan(r[i])) continue;
      if (!(r[i] >= 0 && r[i] <= 1)) {
        jy_set_error(sim->error,
                     "part '%s' (%s), transition: restitution %g on row '%s' at t = %.9g is "
                     "outside [0, 1]",
                     p->inst.name, p->inst.type->name, r[i],
                     sim->model->row_names[p->row_offset + i], t);
        return JY_ERR_PART;
      }
      h->restitution[p->row_offset + i] = r[i];
      *impact = 1;
    }
    h->modes[h->parts[k]] = mode;
  }
  return JY_OK;
}

/* The impact: v changes by the impulsive solve; each impacted part's impulse (the sum of its
 * rows' impulses) goes to its impulse.<part> channel. */
static jyStatus impact(jySim *sim, double t, const double *q, double *v) {
  jyEval *e = sim->eval;
  Hybrid *h = sim->hybrid;
  const jyModel *m = sim->model;
  jyStatus st = jy_eval_impulse(e, q, v, t, h->restitution, h->dv, h->impulse);
  if (st != JY_OK) {
    jy_set_error(sim->error, "%s", e->error);
    return st;
  }
  for (int j = 0; j < m->n; j++) v[j] += h->dv[j];
  for (int k = 0; k < h->nparts; k++) {
    const jyModelPart *p = &m->parts[h->parts[k]];
    double sum = 0;
    int hit = 0;
    /* only position rows make an impact: a velocity row's reset (a stick) is not one */
    for (int i = p->row_offset; i < p->row_offset + p->inst.nrows; i++)
      if (!isnan(h->restitution[i]) && m->row_kinds[i] == JY_ROW_POSITION)
        sum += h->impulse[i], hit = 1;
    if (!hit) continue;
    e->impulse[h->parts[k]] = sum;
    if ((st = count(sim, p, "impact", t)) != JY_OK) return st;
  }
  return JY_OK;
}

jyStatus jy_hybrid_settle(jySim *sim, double t, const double *y, int *changed) {
  *changed = 0;
  Hybrid *h = sim->hybrid;
  if (!h || h->nguards == 0) return JY_OK;
  return settle_modes(sim, t, y, y + sim->nq, 1, changed);
}

jyStatus jy_hybrid_fire(jySim *sim, double t, double *y, const int *found, int *changed) {
  *changed = 0;
  Hybrid *h = sim->hybrid;
  if (!h || h->nguards == 0) return JY_OK;
  jyEval *e = sim->eval;
  const jyModel *m = sim->model;
  double *q = y, *v = y + sim->nq;
  jyStatus st = solve_state(sim, t, q, v, 1);
  if (st != JY_OK) return st;
  for (int i = 0; i < m->m; i++) h->restitution[i] = NAN;
  memcpy(h->modes, e->modes, sizeof(int) * (size_t)m->nparts);
  int any_impact = 0;
  for (int k = 0; k < h->nparts && st == JY_OK; k++)
    st = part_transitions(sim, k, t, q, v, found, &any_impact);
  if (st != JY_OK) return st;
  for (int k = 0; k < h->nparts; k++) { /* the switches, counted in part order */
    int part = h->parts[k];
    if (h->modes[part] == e->modes[part]) continue;
    char buf[32];
    const jyModelPart *p = &m->parts[part];
    if ((st = count(sim, p, mode_name(e, p, h->modes[part], buf, sizeof buf), t)) != JY_OK)
      return st;
    *changed = 1;
  }
  if (*changed && (st = jy_eval_set_modes(e, h->modes)) != JY_OK) return st;
  if (any_impact) {
    if ((st = impact(sim, t, q, v)) != JY_OK) return st;
    *changed = 1;
  }
  return settle_modes(sim, t, q, v, 1, changed);
}
