/* Inputs and controllers: what a system declares (held values, time tables, signal
 * functions with breakpoints, sampled controllers), the model's copies, and the values an
 * evaluator hands its parts (jyPartState.inputs) at a time. docs/control.md. */
#include <float.h>
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* ---- the builder ------------------------------------------------------------------- */

/* Why name cannot name a new input or controller, or NULL. */
static const char *bad_name(const char *name) {
  if (!name || !*name) return "needs a name";
  if (strlen(name) > 200) return "has a name longer than 200 characters";
  if (strchr(name, '.')) return "has a '.' in its name (its channel is \"input.<name>\")";
  if (strchr(name, ',')) return "has a ',' in its name";
  return NULL;
}

int jy_system_find_input(const jySystem *sys, const char *name) {
  if (!sys || !name) return -1;
  for (int k = 0; k < sys->ninputs; k++)
    if (strcmp(sys->inputs[k].name, name) == 0) return k;
  return -1;
}

int jy_system_add_input(jySystem *sys, const char *name, double value, const char *unit) {
  if (!sys) return -1;
  const char *why = bad_name(name);
  if (!why && jy_system_find_input(sys, name) >= 0) why = "has the name of an input added before";
  if (!why && !isfinite(value)) why = "needs a finite initial value";
  if (!why && sys->ninputs >= JY_MAX_INPUTS) why = "is one input too many (at most 1000 a system)";
  if (why) {
    jy_set_error(sys->error, "input '%s' %s", name ? name : "", why);
    return -1;
  }
  const jyAllocator *a = &sys->env->alloc;
  if (jy_grow(a, (void **)&sys->inputs, &sys->inputs_cap, sys->ninputs, sizeof *sys->inputs)) {
    jy_set_error(sys->error, "out of memory adding input '%s'", name);
    return -1;
  }
  jyInputDef *in = &sys->inputs[sys->ninputs];
  *in = (jyInputDef){.value = value, .kind = JY_INPUT_HELD};
  in->name = jy_strdup(a, name);
  in->unit = jy_strdup(a, unit && *unit ? unit : "1");
  if (!in->name || !in->unit) {
    jy_free(a, in->name);
    jy_free(a, in->unit);
    jy_set_error(sys->error, "out of memory adding input '%s'", name);
    return -1;
  }
  return sys->ninputs++;
}

static void free_input(const jyAllocator *a, jyInputDef *in) {
  jy_free(a, in->name);
  jy_free(a, in->unit);
  jy_free(a, in->t);
  jy_free(a, in->u);
  jy_free(a, in->m2);
  jy_free(a, in->breaks);
}

void jy_system_free_inputs(jySystem *sys) {
  const jyAllocator *a = &sys->env->alloc;
  for (int k = 0; k < sys->ninputs; k++) free_input(a, &sys->inputs[k]);
  jy_free(a, sys->inputs);
  for (int k = 0; k < sys->ncontrollers; k++) jy_free(a, sys->controllers[k].name);
  jy_free(a, sys->controllers);
}

/* The input a signal is being set on, or NULL with the error written. */
static jyInputDef *signal_input(jySystem *sys, const char *name) {
  int k = jy_system_find_input(sys, name);
  if (k >= 0) return &sys->inputs[k];
  char hint[256] = "";
  const char *names[64];
  int count = sys->ninputs < 64 ? sys->ninputs : 64;
  for (int i = 0; i < count; i++) names[i] = sys->inputs[i].name;
  jy_suggest(hint, sizeof hint, name ? name : "", names, count);
  jy_set_error(sys->error, "no input '%s'%s", name ? name : "", hint);
  return NULL;
}

static double *copy_doubles(const jyAllocator *a, const double *x, int count) {
  double *out = jy_calloc(a, (size_t)count + 1, sizeof(double));
  if (out && count > 0) memcpy(out, x, sizeof(double) * (size_t)count);
  return out;
}

/* The natural cubic spline's second derivatives at the points (m2[0] = m2[count-1] = 0), by
 * LAPACK's tridiagonal solve. 0, or -1 when LAPACK refuses. */
static int spline_second_derivatives(const jyAllocator *a, int count, const double *t,
                                     const double *u, double *m2) {
  int n = count - 2; /* interior points */
  if (n <= 0) return 0;
  double *sub = jy_calloc(a, 3 * (size_t)n + 1, sizeof(double)), *diag = sub + n, *super = diag + n;
  if (!sub) return -1;
  for (int i = 0; i < n; i++) {
    double h0 = t[i + 1] - t[i], h1 = t[i + 2] - t[i + 1];
    diag[i] = (h0 + h1) / 3;
    sub[i] = super[i] = h1 / 6;
    m2[i + 1] = (u[i + 2] - u[i + 1]) / h1 - (u[i + 1] - u[i]) / h0;
  }
  int info = LAPACKE_dgtsv(LAPACK_COL_MAJOR, n, 1, sub, diag, super, m2 + 1, n);
  jy_free(a, sub);
  return info == 0 ? 0 : -1;
}

jyStatus jy_system_input_table(jySystem *sys, const char *name, jyInterp interp, int count,
                               const double *t, const double *u) {
  if (!sys) return JY_ERR_INVALID;
  jyInputDef *in = signal_input(sys, name);
  if (!in) return JY_ERR_INVALID;
  if (interp != JY_INTERP_CONSTANT && interp != JY_INTERP_LINEAR && interp != JY_INTERP_CUBIC) {
    jy_set_error(sys->error, "input '%s': interpolation %d is none of constant, linear, cubic",
                 name, (int)interp);
    return JY_ERR_INVALID;
  }
  if (count < 1 || !t || !u || count > 10000000) {
    jy_set_error(sys->error, "input '%s': a time table needs at least one point", name);
    return JY_ERR_INVALID;
  }
  for (int i = 0; i < count; i++) {
    if (!isfinite(t[i]) || !isfinite(u[i])) {
      jy_set_error(sys->error,
                   "input '%s': point %d of the time table is not finite (t = %g, "
                   "u = %g)",
                   name, i + 1, t[i], u[i]);
      return JY_ERR_INVALID;
    }
    if (i > 0 && !(t[i] > t[i - 1])) {
      jy_set_error(sys->error,
                   "input '%s': the time table's t must increase: point %d has t = "
                   "%.9g after %.9g",
                   name, i + 1, t[i], t[i - 1]);
      return JY_ERR_INVALID;
    }
  }
  const jyAllocator *a = &sys->env->alloc;
  double *tc = copy_doubles(a, t, count), *uc = copy_doubles(a, u, count);
  double *m2 = jy_calloc(a, (size_t)count + 1, sizeof(double));
  double *breaks = copy_doubles(a, t, count);
  int ok = tc && uc && m2 && breaks;
  if (ok && interp == JY_INTERP_CUBIC && spline_second_derivatives(a, count, tc, uc, m2) != 0) {
    jy_set_error(sys->error, "input '%s': the cubic spline's system is singular", name);
    ok = -1;
  }
  if (ok != 1) {
    jy_free(a, tc), jy_free(a, uc), jy_free(a, m2), jy_free(a, breaks);
    if (!ok) jy_set_error(sys->error, "out of memory for input '%s''s table", name);
    return ok ? JY_ERR_INVALID : JY_ERR_NOMEM;
  }
  jy_free(a, in->t), jy_free(a, in->u), jy_free(a, in->m2), jy_free(a, in->breaks);
  in->kind = JY_INPUT_TABLE;
  in->interp = interp;
  in->count = count;
  in->t = tc, in->u = uc, in->m2 = m2;
  in->breaks = breaks;
  in->nbreaks = count;
  in->value = uc[0];
  return JY_OK;
}

jyStatus jy_system_input_function(jySystem *sys, const char *name, jyInputFn fn, void *ud,
                                  int nbreaks, const double *breaks) {
  if (!sys) return JY_ERR_INVALID;
  jyInputDef *in = signal_input(sys, name);
  if (!in) return JY_ERR_INVALID;
  if (!fn || nbreaks < 0 || (nbreaks > 0 && !breaks)) {
    jy_set_error(sys->error, "input '%s': a signal needs a function (and its breakpoints)", name);
    return JY_ERR_INVALID;
  }
  for (int i = 0; i < nbreaks; i++)
    if (!isfinite(breaks[i])) {
      jy_set_error(sys->error, "input '%s': breakpoint %d is not finite", name, i + 1);
      return JY_ERR_INVALID;
    }
  const jyAllocator *a = &sys->env->alloc;
  double *copy = copy_doubles(a, breaks, nbreaks);
  if (!copy) return JY_ERR_NOMEM;
  jy_free(a, in->t), jy_free(a, in->u), jy_free(a, in->m2), jy_free(a, in->breaks);
  in->t = in->u = in->m2 = NULL;
  in->count = 0;
  in->kind = JY_INPUT_FUNCTION;
  in->fn = fn;
  in->ud = ud;
  in->breaks = copy;
  in->nbreaks = nbreaks;
  return JY_OK;
}

jyStatus jy_system_add_controller(jySystem *sys, const char *name, double period, jyControllerFn fn,
                                  void *ud) {
  if (!sys) return JY_ERR_INVALID;
  const char *why = bad_name(name);
  for (int k = 0; !why && k < sys->ncontrollers; k++)
    if (strcmp(sys->controllers[k].name, name) == 0)
      why = "has the name of a controller added before";
  if (!why && !fn) why = "needs a function";
  if (!why && !(period >= 0 && isfinite(period)))
    why = "needs a period > 0 (s: it runs at t_start + k period) or 0 (continuous)";
  if (why) {
    jy_set_error(sys->error, "controller '%s' %s", name ? name : "", why);
    if (name && !(period >= 0 && isfinite(period)) && fn && !bad_name(name))
      jy_set_error(sys->error,
                   "controller '%s': period %g is neither > 0 (s: it runs at t_start + k "
                   "period) nor 0 (continuous: at every evaluation)",
                   name, period);
    return JY_ERR_INVALID;
  }
  const jyAllocator *a = &sys->env->alloc;
  if (jy_grow(a, (void **)&sys->controllers, &sys->controllers_cap, sys->ncontrollers,
              sizeof *sys->controllers))
    return JY_ERR_NOMEM;
  char *owned = jy_strdup(a, name);
  if (!owned) return JY_ERR_NOMEM;
  sys->controllers[sys->ncontrollers++] = (jyController){owned, period, fn, ud};
  return JY_OK;
}

/* ---- the model ---------------------------------------------------------------------- */

static int compare_doubles(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int jy_sort_unique(double *x, int count) {
  qsort(x, (size_t)count, sizeof(double), compare_doubles);
  int unique = 0;
  for (int i = 0; i < count; i++)
    if (unique == 0 || x[i] != x[unique - 1]) x[unique++] = x[i];
  return unique;
}

jyStatus jy_model_copy_inputs(jyModel *md, const jySystem *sys) {
  const jyAllocator *a = &md->alloc;
  if (sys->ninputs > 0) {
    md->inputs = jy_calloc(a, (size_t)sys->ninputs, sizeof *md->inputs);
    if (!md->inputs) return JY_ERR_NOMEM;
    int total = 0;
    for (int k = 0; k < sys->ninputs; k++) {
      const jyInputDef *from = &sys->inputs[k];
      jyInputDef *to = &md->inputs[k];
      *to = *from;
      to->name = jy_strdup(a, from->name);
      to->unit = jy_strdup(a, from->unit);
      to->t = from->t ? copy_doubles(a, from->t, from->count) : NULL;
      to->u = from->u ? copy_doubles(a, from->u, from->count) : NULL;
      to->m2 = from->m2 ? copy_doubles(a, from->m2, from->count) : NULL;
      to->breaks = from->breaks ? copy_doubles(a, from->breaks, from->nbreaks) : NULL;
      md->ninputs = k + 1;
      if (!to->name || !to->unit || (from->t && !(to->t && to->u && to->m2)) ||
          (from->breaks && !to->breaks))
        return JY_ERR_NOMEM;
      total += from->nbreaks;
    }
    md->breaks = jy_calloc(a, (size_t)total + 1, sizeof(double));
    if (!md->breaks) return JY_ERR_NOMEM;
    for (int k = 0; k < md->ninputs; k++)
      for (int i = 0; i < md->inputs[k].nbreaks; i++)
        md->breaks[md->nbreaks++] = md->inputs[k].breaks[i];
    md->nbreaks = jy_sort_unique(md->breaks, md->nbreaks);
  }
  if (sys->ncontrollers > 0) {
    md->controllers = jy_calloc(a, (size_t)sys->ncontrollers, sizeof *md->controllers);
    if (!md->controllers) return JY_ERR_NOMEM;
    for (int k = 0; k < sys->ncontrollers; k++) {
      md->controllers[k] = sys->controllers[k];
      md->controllers[k].name = jy_strdup(a, sys->controllers[k].name);
      md->ncontrollers = k + 1;
      md->ncontinuous += sys->controllers[k].period == 0;
      if (!md->controllers[k].name) return JY_ERR_NOMEM;
    }
  }
  return JY_OK;
}

void jy_model_free_inputs(jyModel *md) {
  const jyAllocator *a = &md->alloc;
  for (int k = 0; k < md->ninputs; k++) free_input(a, &md->inputs[k]);
  jy_free(a, md->inputs);
  jy_free(a, md->breaks);
  for (int k = 0; k < md->ncontrollers; k++) jy_free(a, md->controllers[k].name);
  jy_free(a, md->controllers);
}

int jy_model_num_inputs(const jyModel *model) { return model ? model->ninputs : 0; }
const char *jy_model_input_name(const jyModel *model, int k) {
  return model && k >= 0 && k < model->ninputs ? model->inputs[k].name : NULL;
}
const char *jy_model_input_unit(const jyModel *model, int k) {
  return model && k >= 0 && k < model->ninputs ? model->inputs[k].unit : NULL;
}
double jy_model_input_initial(const jyModel *model, int k) {
  return model && k >= 0 && k < model->ninputs ? model->inputs[k].value : NAN;
}
int jy_model_find_input(const jyModel *model, const char *name) {
  if (!model || !name) return -1;
  for (int k = 0; k < model->ninputs; k++)
    if (strcmp(model->inputs[k].name, name) == 0) return k;
  return -1;
}

void jy_model_input_hint(const jyModel *model, const char *name, char *out, size_t len) {
  const char *names[64];
  int count = model->ninputs < 64 ? model->ninputs : 64;
  for (int i = 0; i < count; i++) names[i] = model->inputs[i].name;
  if (count == 0) {
    snprintf(out, len, " (the model has no inputs: sys:input declares one)");
    return;
  }
  jy_suggest(out, len, name, names, count);
}

/* ---- values at a time --------------------------------------------------------------- */

/* The table's value and derivatives at t on the piece the segment (lo, hi) lies in (the
 * piece holding t when the segment is unbounded): a step that ends on a breakpoint sees
 * the piece it integrates over, not the next one. */
static void table_at(const jyInputDef *in, double t, double lo, double hi, double out[3]) {
  int count = in->count;
  const double *tt = in->t, *u = in->u;
  double probe = t;
  if (isfinite(lo) && isfinite(hi))
    probe = 0.5 * (lo + hi);
  else if (isfinite(lo) && t <= lo)
    probe = lo;
  else if (isfinite(hi) && t >= hi)
    probe = hi - fabs(hi) * DBL_EPSILON - DBL_MIN;
  out[0] = out[1] = out[2] = 0;
  if (count == 1 || probe < tt[0]) {
    out[0] = u[0];
    return;
  }
  if (probe >= tt[count - 1]) {
    out[0] = u[count - 1];
    return;
  }
  int left = 0, right = count - 1; /* tt[left] <= probe < tt[right] */
  while (right - left > 1) {
    int mid = left + (right - left) / 2;
    if (tt[mid] <= probe)
      left = mid;
    else
      right = mid;
  }
  double h = tt[right] - tt[left];
  switch (in->interp) {
  case JY_INTERP_CONSTANT:
    out[0] = u[left];
    break;
  case JY_INTERP_LINEAR:
    out[1] = (u[right] - u[left]) / h;
    out[0] = u[left] + out[1] * (t - tt[left]);
    break;
  case JY_INTERP_CUBIC: {
    double a = (tt[right] - t) / h, b = (t - tt[left]) / h;
    double ml = in->m2[left], mr = in->m2[right];
    out[0] = a * u[left] + b * u[right] + ((a * a * a - a) * ml + (b * b * b - b) * mr) * h * h / 6;
    out[1] = (u[right] - u[left]) / h - (3 * a * a - 1) * h * ml / 6 + (3 * b * b - 1) * h * mr / 6;
    out[2] = a * ml + b * mr;
    break;
  }
  }
}

jyStatus jy_eval_inputs_at(jyEval *e, double t) {
  const jyModel *m = e->model;
  if (m->ninputs == 0) return JY_OK;
  if (e->input_valid && t == e->input_t) return e->input_status;
  e->input_t = t;
  e->input_valid = 1;
  e->input_status = JY_OK;
  e->input_error[0] = '\0';
  int ni = m->ninputs;
  double *value = e->input_now, *rate = value + ni, *accel = rate + ni;
  for (int k = 0; k < ni; k++) {
    const jyInputDef *in = &m->inputs[k];
    double out[3] = {e->input_held[k], 0, 0};
    if (in->kind == JY_INPUT_TABLE) table_at(in, t, e->input_lo, e->input_hi, out);
    if (in->kind == JY_INPUT_FUNCTION) {
      /* within the segment: a step ending on a breakpoint reads the piece before it */
      double at = t;
      if (t >= e->input_hi) at = nextafter(e->input_hi, -INFINITY);
      if (t < e->input_lo) at = e->input_lo;
      char why[200] = "";
      if (in->fn(in->ud, at, out, why, sizeof why) != 0) {
        jy_set_error(e->input_error, "input '%s' at t = %.9g: %s", in->name, t,
                     why[0] ? why : "its function failed");
        e->input_status = JY_ERR_PART;
      } else if (!isfinite(out[0]) || !isfinite(out[1]) || !isfinite(out[2])) {
        jy_set_error(e->input_error,
                     "input '%s' at t = %.9g: its function gave a value or "
                     "derivative that is not finite (%g, %g, %g)",
                     in->name, t, out[0], out[1], out[2]);
        e->input_status = JY_ERR_PART;
      }
    }
    value[k] = out[0], rate[k] = out[1], accel[k] = out[2];
  }
  if (e->input_status != JY_OK) jy_set_error(e->error, "%s", e->input_error);
  return e->input_status;
}

jyStatus jy_eval_inputs_state(jyEval *e, const double *q, const double *v, double t) {
  const jyModel *m = e->model;
  if (m->ncontinuous == 0) return jy_eval_inputs_at(e, t);
  e->input_valid = 0; /* the controllers' values belong to this state only */
  jyStatus st = jy_eval_inputs_at(e, t);
  for (int k = 0; k < m->ncontrollers && st == JY_OK; k++) {
    const jyController *ctl = &m->controllers[k];
    if (ctl->period > 0) continue;
    jyEventCall call = {
      .eval = e, .controller = ctl, .t = t, .q = (double *)q, .v = (double *)v, .in_action = 1};
    char why[256] = "";
    if (ctl->fn(ctl->ud, &call, why, sizeof why) != 0) {
      jy_set_error(e->error, "controller '%s': %s at t = %.9g", ctl->name,
                   why[0] ? why : "its function failed", t);
      st = e->input_status = JY_ERR_PART;
    }
  }
  return st;
}

jyStatus jy_eval_drive_input(jyEval *e, int k, double value, char *error, size_t len) {
  const jyModel *m = e->model;
  if (k < 0 || k >= m->ninputs) {
    snprintf(error, len, "no input %d (the model has %d)", k, m->ninputs);
    return JY_ERR_INVALID;
  }
  if (m->inputs[k].kind != JY_INPUT_HELD) {
    snprintf(error, len, "input '%s' is a signal of time: a controller sets held inputs",
             m->inputs[k].name);
    return JY_ERR_INVALID;
  }
  if (!isfinite(value)) {
    snprintf(error, len, "input '%s': %g is not a finite value", m->inputs[k].name, value);
    return JY_ERR_INVALID;
  }
  e->input_now[k] = value; /* for this evaluation; rate and acceleration stay 0 */
  return JY_OK;
}

jyStatus jy_eval_set_input(jyEval *e, int k, double value) {
  if (!e) return JY_ERR_INVALID;
  const jyModel *m = e->model;
  if (k < 0 || k >= m->ninputs) {
    jy_set_error(e->error, "no input %d (the model has %d)", k, m->ninputs);
    return JY_ERR_INVALID;
  }
  if (m->inputs[k].kind != JY_INPUT_HELD) {
    jy_set_error(e->error, "input '%s' is a signal of time, not a held value: it cannot be set",
                 m->inputs[k].name);
    return JY_ERR_INVALID;
  }
  if (!isfinite(value)) {
    jy_set_error(e->error, "input '%s': %g is not a finite value", m->inputs[k].name, value);
    return JY_ERR_INVALID;
  }
  if (e->input_held[k] != value) {
    e->input_held[k] = value;
    e->input_valid = 0;
  }
  return JY_OK;
}

void jy_eval_input_segment(jyEval *e, double lo, double hi) {
  if (e->input_lo == lo && e->input_hi == hi) return;
  e->input_lo = lo, e->input_hi = hi;
  e->input_valid = 0;
}

jyStatus jy_eval_inputs_init(jyEval *e) {
  const jyModel *m = e->model;
  e->input_lo = -INFINITY, e->input_hi = INFINITY;
  if (m->ninputs == 0) return JY_OK;
  e->input_held = jy_calloc(&e->alloc, 4 * (size_t)m->ninputs, sizeof(double));
  if (!e->input_held) return JY_ERR_NOMEM;
  e->input_now = e->input_held + m->ninputs;
  for (int k = 0; k < m->ninputs; k++) e->input_held[k] = m->inputs[k].value;
  return JY_OK;
}
