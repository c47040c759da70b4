/* What an evaluator holds beyond the model: the modes of parts with modes (part.h
 * jyPartHybrid) and the rows inactive in them, and parameters changed during a simulation
 * (jy_eval_set_param). Both are per evaluator: many simulations share one model. */
#include <math.h>
#include <string.h>

#include "internal.h"

/* The modes array and inactive-row flags, made on first need: 0, or -1 out of memory. */
static int modes_ready(jyEval *e) {
  const jyModel *m = e->model;
  if (!e->modes) e->modes = jy_calloc(&e->alloc, (size_t)m->nparts + 1, sizeof(int));
  if (!e->inactive) e->inactive = jy_calloc(&e->alloc, (size_t)m->m + 1, 1);
  return e->modes && e->inactive ? 0 : -1;
}

jyStatus jy_eval_set_modes(jyEval *e, const int *modes) {
  const jyModel *m = e->model;
  if (modes_ready(e) != 0) {
    jy_set_error(e->error, "out of memory setting the parts' modes");
    return JY_ERR_NOMEM;
  }
  e->ninactive = 0;
  e->matrices_valid = 0; /* rows change with the modes */
  e->mass_kept = 0;      /* and a part's mass may */
  for (int i = 0; i < m->nparts; i++) {
    const jyModelPart *p = &m->parts[i];
    const jyPartHybrid *h = p->shape->hybrid;
    e->modes[i] = h && modes ? modes[i] : 0;
    unsigned long long active =
      h && h->active_rows ? h->active_rows(jy_eval_inst(e, p), e->modes[i]) : ~0ULL;
    for (int r = 0; r < p->inst.nrows; r++) {
      int row = p->row_offset + r, off = !((active >> r) & 1ULL);
      /* a row dependent on the others stays so; one left out only while inactive comes back */
      int dependent = e->dependent[row] && !e->inactive[row];
      e->inactive[row] = (unsigned char)off;
      e->dependent[row] = (unsigned char)(dependent || off);
      e->ninactive += off;
    }
  }
  e->ndependent = 0;
  for (int i = 0; i < m->m; i++) e->ndependent += e->dependent[i] != 0;
  return JY_OK;
}

int jy_model_has_modes(const jyModel *m) {
  for (int i = 0; i < m->nparts; i++)
    if (m->parts[i].shape->hybrid) return 1;
  return 0;
}

jyStatus jy_eval_initial_modes(jyEval *e, const double *q, const double *v, double t) {
  const jyModel *m = e->model;
  if (!jy_model_has_modes(m)) return JY_OK;
  if (modes_ready(e) != 0) {
    jy_set_error(e->error, "out of memory setting the parts' modes");
    return JY_ERR_NOMEM;
  }
  for (int i = 0; i < m->nparts; i++) {
    const jyModelPart *p = &m->parts[i];
    const jyPartHybrid *h = p->shape->hybrid;
    e->modes[i] = 0;
    if (!h || !h->initial_mode) continue;
    const double *ql, *vl;
    int mapped, mode = 0;
    jyStatus st = jy_localize(e, p, q, v, t, &ql, &vl, &mapped);
    if (st != JY_OK) return st;
    jyPartState s = jy_part_state(e, p, ql, vl, t);
    if (h->initial_mode(jy_eval_inst(e, p), &s, &mode) != 0)
      return jy_part_failed(e, p, "initial_mode", t);
    e->modes[i] = mode;
  }
  return jy_eval_set_modes(e, e->modes);
}

/* Zero-fills part's scratch (every part's when part < 0). */
static void clear_scratch(jyEval *e, int part) {
  const jyModel *md = e->model;
  if (!e->scratch) return;
  int from = part < 0 ? 0 : part, to = part < 0 ? md->nparts : part + 1;
  for (int i = from; i < to; i++)
    memset(e->scratch + e->scratch_at[i], 0, md->parts[i].shape->scratch_size);
}

/* The evaluator's own instances (copies of the model's), made on the first override. */
static int insts_ready(jyEval *e) {
  const jyModel *m = e->model;
  if (e->insts) return 0;
  e->insts = jy_calloc(&e->alloc, (size_t)m->nparts + 1, sizeof *e->insts);
  e->owned_params = jy_calloc(&e->alloc, (size_t)m->nparts + 1, 1);
  if (!e->insts || !e->owned_params) return -1;
  for (int i = 0; i < m->nparts; i++) e->insts[i] = m->parts[i].inst;
  return 0;
}

/* Whether two shapes describe the same layout (sizes, row kinds, flags, hybrid table). */
static int same_shape(const jyPartShape *a, const jyPartShape *b) {
  if (a->ncoords != b->ncoords || a->nterminals != b->nterminals || a->nrows != b->nrows ||
      a->noutputs != b->noutputs || a->instance_size != b->instance_size ||
      a->hybrid != b->hybrid || a->nguards != b->nguards || a->scratch_size != b->scratch_size)
    return 0;
  for (int i = 0; i < a->nrows; i++)
    if (a->row_kinds[i] != b->row_kinds[i]) return 0;
  for (int k = 0; k < a->nterminals; k++)
    if (a->terminals[k].dim != b->terminals[k].dim) return 0;
  return 1;
}

/* The part's own copy of its parameters and instance data: 0, or -1 out of memory. */
static int own_part(jyEval *e, int part) {
  const jyModelPart *p = &e->model->parts[part];
  if (e->owned_params[part]) return 0;
  int np = p->inst.type->nparams;
  double *params = jy_calloc(&e->alloc, (size_t)np + 1, sizeof(double));
  void *data = p->shape->instance_size ? jy_calloc(&e->alloc, 1, p->shape->instance_size) : NULL;
  if (!params || (p->shape->instance_size && !data)) {
    jy_free(&e->alloc, params);
    jy_free(&e->alloc, data);
    return -1;
  }
  if (np) memcpy(params, p->inst.params, sizeof(double) * (size_t)np);
  if (data) memcpy(data, p->inst.data, p->shape->instance_size);
  e->insts[part].params = params;
  e->insts[part].data = data;
  e->owned_params[part] = 1;
  return 0;
}

jyStatus jy_eval_set_param(jyEval *e, int part, int param, double value) {
  const jyModel *m = e->model;
  if (part < 0 || part >= m->nparts) {
    jy_set_error(e->error, "set_param: no part %d (the model has %d)", part, m->nparts);
    return JY_ERR_INVALID;
  }
  const jyModelPart *p = &m->parts[part];
  const jyPartType *type = p->inst.type;
  if (param < 0 || param >= type->nparams) {
    jy_set_error(e->error, "set_param: part '%s' (%s) has no parameter %d", p->inst.name,
                 type->name, param);
    return JY_ERR_INVALID;
  }
  char why[256] = "";
  if (jy_param_check(&type->params[param], value, why, sizeof why) != 0) {
    jy_set_error(e->error, "set_param: part '%s' (%s): %s", p->inst.name, type->name, why);
    return JY_ERR_PARAM;
  }
  if (insts_ready(e) != 0 || own_part(e, part) != 0) {
    jy_set_error(e->error, "set_param: out of memory");
    return JY_ERR_NOMEM;
  }
  jyPartInstance *inst = &e->insts[part];
  e->matrices_valid = 0; /* the part's M and A change with it */
  e->mass_kept = 0;
  clear_scratch(e, part); /* kept values may have been computed from the old one */
  jy_spatial_params_changed(e->spatial);
  double *params = (double *)inst->params, old = params[param];
  params[param] = value;
  jyPartShape shape;
  memset(&shape, 0, sizeof shape);
  int bad = jy_part_shape(type, params, &shape, why, sizeof why) != 0;
  if (bad || !same_shape(&shape, p->shape)) {
    params[param] = old;
    jy_set_error(e->error, "set_param: part '%s' (%s), %s = %g: %s", p->inst.name, type->name,
                 type->params[param].name, value,
                 bad ? why
                     : "the value changes the part's shape (coordinates, rows, outputs), "
                       "which a running simulation cannot follow");
    return JY_ERR_PARAM;
  }
  if (type->init) {
    if (p->shape->instance_size) memset((void *)inst->data, 0, p->shape->instance_size);
    if (type->init(inst, (void *)inst->data, why, sizeof why) != 0) {
      params[param] = old;
      type->init(inst, (void *)inst->data, why, sizeof why); /* back as it was */
      jy_set_error(e->error, "set_param: part '%s' (%s), init: %s", p->inst.name, type->name,
                   why[0] ? why : "failed");
      return JY_ERR_PARAM;
    }
  }
  return JY_OK;
}

void jy_eval_modes_free(jyEval *e) {
  jyAllocator a = e->alloc;
  if (e->insts)
    for (int i = 0; i < e->model->nparts; i++)
      if (e->owned_params[i]) {
        jy_free(&a, (void *)e->insts[i].params);
        jy_free(&a, (void *)e->insts[i].data);
      }
  jy_free(&a, e->insts);
  jy_free(&a, e->owned_params);
  jy_free(&a, e->modes);
  jy_free(&a, e->inactive);
  jy_free(&a, e->impulse);
  e->insts = NULL;
  e->owned_params = NULL;
  e->modes = NULL;
  e->inactive = NULL;
  e->impulse = NULL;
}
