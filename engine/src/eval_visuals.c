/* The visuals of one state (part protocol 7): each part's shapes from its own local state,
 * and with the forces one arrow per glue between points, at its first terminal. What
 * joinery animate draws (docs/animation.md). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Whether side (part, terminal k) of a glue is a massless part's whole state (a marker's
 * copy of its body's frame, a floor's point): the glue then only attaches that part to the
 * other, and its force is what the part passes on, drawn where it acts on the part. */
static int whole_massless(const jyModel *m, int part, int k, int dim) {
  const jyModelPart *p = &m->parts[part];
  return jy_terminal_coord_block(p, k) >= 0 && dim == p->inst.ncoords && !p->inst.type->mass;
}

/* A glue gets an arrow when its terminals are points (2-D or 3-D), planar frames (x, y,
 * angle: the force is the first two) or spatial frames (position and quaternion: the first
 * three), and it does not merely attach a massless part (whole_massless). A 1-D glue has no
 * place to draw one. */
static int glue_has_arrow(const jyModel *m, const jyModelGlue *g) {
  return g->dim >= 2 && !whole_massless(m, g->part_a, g->terminal_a, g->dim) &&
    !whole_massless(m, g->part_b, g->terminal_b, g->dim);
}

static int part_visuals(const jyModel *m) {
  int count = 0;
  for (int i = 0; i < m->nparts; i++) count += m->parts[i].shape->nvisuals;
  return count;
}

int jy_model_num_visuals(const jyModel *model) {
  if (!model) return 0;
  int count = part_visuals(model);
  for (int g = 0; g < model->nglues; g++) count += glue_has_arrow(model, &model->glues[g]);
  return count;
}

/* The part (>= 0) or glue (-1 - glue) visual i belongs to; -1 - nglues beyond the end. */
static int visual_owner(const jyModel *m, int i) {
  for (int p = 0; p < m->nparts; p++) {
    if (i < m->parts[p].shape->nvisuals) return p;
    i -= m->parts[p].shape->nvisuals;
  }
  for (int g = 0; g < m->nglues; g++)
    if (glue_has_arrow(m, &m->glues[g]) && i-- == 0) return -1 - g;
  return -1 - m->nglues;
}

const char *jy_model_visual_name(const jyModel *model, int i) {
  if (!model || i < 0) return NULL;
  int owner = visual_owner(model, i);
  if (owner >= 0) return model->parts[owner].inst.name;
  int g = -1 - owner;
  return g < model->nglues ? model->glues[g].name : NULL;
}

/* The value of terminal k of part p at its local state (dim values into value). */
static jyStatus terminal_value(jyEval *e, const jyModelPart *p, int k, const double *ql,
                               const double *vl, double t, double *value) {
  int block = jy_terminal_coord_block(p, k);
  int dim = k >= p->shape->nterminals ? 1 : p->shape->terminals[k].dim;
  if (block >= 0) {
    memcpy(value, ql + block, sizeof(double) * (size_t)dim);
    return JY_OK;
  }
  jyPartState s = jy_part_state(e, p, ql, vl, t);
  if (!p->inst.type->terminal ||
      p->inst.type->terminal(jy_eval_inst(e, p), &s, k, value, NULL, NULL, NULL) != 0)
    return jy_part_failed(e, p, "terminal", t);
  return JY_OK;
}

/* Glue g's arrow: the force its channels hold, at its first terminal. planar: the model
 * draws in z = 0, so a 3-D terminal is a planar frame (x, y, angle), not a point. */
static jyStatus glue_arrow(jyEval *e, const jyModelGlue *g, const double *q, const double *v,
                           double t, const double *channels, int planar, jyVisual *out) {
  const jyModelPart *p = &e->model->parts[g->part_a];
  const double *ql, *vl;
  int mapped;
  jyStatus st = jy_localize(e, p, q, v, t, &ql, &vl, &mapped);
  if (st != JY_OK) return st;
  double value[JY_TERMINAL_MAX_DIM] = {0};
  st = terminal_value(e, p, g->terminal_a, ql, vl, t, value);
  if (st != JY_OK) return st;
  int d = g->dim == 2 || (g->dim == 3 && planar) ? 2 : 3;
  out->kind = JY_VISUAL_ARROW;
  for (int i = 0; i < d; i++) {
    out->a[i] = value[i];
    out->b[i] = channels ? channels[g->force_channel + i] : 0.0;
  }
  return JY_OK;
}

jyStatus jy_eval_visuals(jyEval *e, const double *q, const double *v, double t,
                         const double *channels, jyVisual *out) {
  if (!e || !q || !v || !out) return JY_ERR_INVALID;
  const jyModel *m = e->model;
  int at = 0;
  for (int i = 0; i < m->nparts; i++) {
    const jyModelPart *p = &m->parts[i];
    int nv = p->shape->nvisuals;
    if (nv == 0) continue;
    memset(out + at, 0, sizeof(jyVisual) * (size_t)nv);
    const double *ql, *vl;
    int mapped;
    jyStatus st = jy_localize(e, p, q, v, t, &ql, &vl, &mapped);
    if (st != JY_OK) return st;
    jyPartState s = jy_part_state(e, p, ql, vl, t);
    const double *rows =
      channels && p->row_force_channel >= 0 ? channels + p->row_force_channel : NULL;
    if (p->shape->visual(jy_eval_inst(e, p), &s, rows, out + at) != 0)
      return jy_part_failed(e, p, "visual", t);
    for (int k = 0; k < nv; k++) {
      const jyVisual *x = &out[at + k];
      if (!jy_all_finite(x->a, 3) || !jy_all_finite(x->b, 3) || !jy_all_finite(x->quat, 4) ||
          !isfinite(x->size) || x->kind < JY_VISUAL_NONE || x->kind > JY_VISUAL_ROPE) {
        snprintf(e->part_error, sizeof e->part_error,
                 "visual %d has kind %d or a value that is not finite", k, x->kind);
        return jy_part_failed(e, p, "visual", t);
      }
    }
    at += nv;
  }
  int planar = 1; /* every shape so far lies in z = 0 */
  for (int k = 0; k < at && planar; k++)
    planar = out[k].a[2] == 0.0 && out[k].b[2] == 0.0 &&
      (out[k].kind != JY_VISUAL_FRAME || (out[k].quat[1] == 0.0 && out[k].quat[2] == 0.0));
  for (int g = 0; g < m->nglues; g++) {
    if (!glue_has_arrow(m, &m->glues[g])) continue;
    memset(out + at, 0, sizeof *out);
    jyStatus st = glue_arrow(e, &m->glues[g], q, v, t, channels, planar, out + at);
    if (st != JY_OK) return st;
    at++;
  }
  return JY_OK;
}
