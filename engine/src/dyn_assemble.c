/* Assembly of the global M, Q, C, A, b (dense) and the constraint residuals from the
 * parts' local blocks and the glue rows. Never allocates: the eval owns every buffer. */
#include <math.h>
#include <string.h>

#include "internal.h"

static jyStatus part_failed(jyEval *e, const jyModelPart *p, const char *function, double t) {
  jy_set_error(e->error, "part '%s' (%s), %s: %s at t = %.9g", p->inst.name, p->inst.type->name,
               function, e->part_error[0] ? e->part_error : "failed", t);
  return JY_ERR_PART;
}

static int all_finite(const double *x, int count) {
  for (int i = 0; i < count; i++)
    if (!isfinite(x[i])) return 0;
  return 1;
}

static jyStatus not_finite(jyEval *e, const jyModelPart *p, const char *function, double t) {
  jy_set_error(e->error, "part '%s' (%s), %s: returned a value that is not finite at t = %.9g",
               p->inst.name, p->inst.type->name, function, t);
  return JY_ERR_PART;
}

static jyPartState part_state(jyEval *e, const jyModelPart *p, const double *q, const double *v,
                              double t) {
  e->part_error[0] = '\0';
  return (jyPartState){q + p->coord_offset, v + p->coord_offset, t, e->model->gravity,
                       e->part_error, sizeof e->part_error};
}

/* Local block (rows x cols, ld rows) added into a global matrix at (r0, c0), ld ldg. */
static void scatter(double *global, int ldg, int r0, int c0, const double *local, int rows,
                    int cols, double sign) {
  for (int j = 0; j < cols; j++)
    for (int i = 0; i < rows; i++)
      global[(r0 + i) + (size_t)(c0 + j) * ldg] += sign * local[i + (size_t)j * rows];
}

static jyStatus assemble_part(jyEval *e, const jyModelPart *p, const double *q, const double *v,
                              double t, unsigned what) {
  const jyModel *m = e->model;
  int nc = p->inst.ncoords, nr = p->inst.nrows, off = p->coord_offset;
  const jyPartType *type = p->inst.type;
  jyPartState s = part_state(e, p, q, v, t);
  if ((what & JY_ASM_MASS) && type->mass && nc > 0) {
    memset(e->local_mass, 0, sizeof(double) * (size_t)nc * nc);
    if (type->mass(&p->inst, &s, e->local_mass) != 0) return part_failed(e, p, "mass", t);
    if (!all_finite(e->local_mass, nc * nc)) return not_finite(e, p, "mass", t);
    scatter(e->mass, m->n, off, off, e->local_mass, nc, nc, 1.0);
  }
  if ((what & JY_ASM_FORCE) && type->force && nc > 0) {
    memset(e->local_vec, 0, sizeof(double) * (size_t)nc);
    if (type->force(&p->inst, &s, e->local_vec) != 0) return part_failed(e, p, "force", t);
    if (!all_finite(e->local_vec, nc)) return not_finite(e, p, "force", t);
    for (int j = 0; j < nc; j++) e->force[off + j] += e->local_vec[j];
  }
  if ((what & JY_ASM_NONIDEAL) && type->nonideal && nc > 0) {
    memset(e->local_vec, 0, sizeof(double) * (size_t)nc);
    if (type->nonideal(&p->inst, &s, e->local_vec) != 0) return part_failed(e, p, "nonideal", t);
    if (!all_finite(e->local_vec, nc)) return not_finite(e, p, "nonideal", t);
    for (int j = 0; j < nc; j++) e->nonideal[off + j] += e->local_vec[j];
  }
  if ((what & (JY_ASM_CONSTRAINTS | JY_ASM_RESIDUALS)) && nr > 0) {
    if (!type->constraints) {
      jy_set_error(e->error, "part '%s' (%s) declares %d constraint rows but no constraints "
                   "function", p->inst.name, type->name, nr);
      return JY_ERR_PART;
    }
    memset(e->local_jac, 0, sizeof(double) * (size_t)nr * (nc > 0 ? nc : 1));
    memset(e->local_rhs, 0, sizeof(double) * (size_t)nr);
    memset(e->local_res, 0, sizeof(double) * (size_t)nr);
    memset(e->local_rate, 0, sizeof(double) * (size_t)nr);
    if (type->constraints(&p->inst, &s, e->local_jac, e->local_rhs, e->local_res,
                          e->local_rate) != 0)
      return part_failed(e, p, "constraints", t);
    if (!all_finite(e->local_jac, nr * nc) || !all_finite(e->local_rhs, nr) ||
        !all_finite(e->local_res, nr) || !all_finite(e->local_rate, nr))
      return not_finite(e, p, "constraints", t);
    if (what & JY_ASM_CONSTRAINTS) {
      scatter(e->jac, m->m, p->row_offset, off, e->local_jac, nr, nc, 1.0);
      for (int i = 0; i < nr; i++) e->rhs[p->row_offset + i] = e->local_rhs[i];
    }
    if (what & JY_ASM_RESIDUALS)
      for (int i = 0; i < nr; i++) {
        e->residual[p->row_offset + i] = e->local_res[i];
        e->rate[p->row_offset + i] = e->local_rate[i];
      }
  }
  return JY_OK;
}

/* One side of a glue: the terminal's value, Jacobian, and biases. */
typedef struct terminal_eval {
  double value[JY_TERMINAL_MAX_DIM], vel_bias[JY_TERMINAL_MAX_DIM], acc_bias[JY_TERMINAL_MAX_DIM];
} terminal_eval;

static jyStatus eval_terminal(jyEval *e, const jyModelPart *p, int k, const double *q,
                              const double *v, double t, double *jac, terminal_eval *out) {
  int dim = p->shape.terminals[k].dim, nc = p->inst.ncoords;
  memset(out, 0, sizeof *out);
  memset(jac, 0, sizeof(double) * (size_t)dim * (nc > 0 ? nc : 1));
  if (!p->inst.type->terminal) {
    jy_set_error(e->error, "part '%s' (%s) declares terminals but no terminal function",
                 p->inst.name, p->inst.type->name);
    return JY_ERR_PART;
  }
  jyPartState s = part_state(e, p, q, v, t);
  if (p->inst.type->terminal(&p->inst, &s, k, out->value, jac, out->vel_bias, out->acc_bias) != 0)
    return part_failed(e, p, "terminal", t);
  if (!all_finite(out->value, dim) || !all_finite(out->vel_bias, dim) ||
      !all_finite(out->acc_bias, dim) || !all_finite(jac, dim * nc))
    return not_finite(e, p, "terminal", t);
  return JY_OK;
}

static jyStatus assemble_glue(jyEval *e, const jyModelGlue *g, const double *q, const double *v,
                              double t, unsigned what) {
  const jyModel *m = e->model;
  const jyModelPart *pa = &m->parts[g->part_a], *pb = &m->parts[g->part_b];
  terminal_eval ta, tb;
  jyStatus st = eval_terminal(e, pa, g->terminal_a, q, v, t, e->term_jac_a, &ta);
  if (st == JY_OK) st = eval_terminal(e, pb, g->terminal_b, q, v, t, e->term_jac_b, &tb);
  if (st != JY_OK) return st;
  int dim = g->dim, r0 = g->row_offset;
  if (what & JY_ASM_CONSTRAINTS) {
    scatter(e->jac, m->m, r0, pa->coord_offset, e->term_jac_a, dim, pa->inst.ncoords, 1.0);
    scatter(e->jac, m->m, r0, pb->coord_offset, e->term_jac_b, dim, pb->inst.ncoords, -1.0);
    for (int i = 0; i < dim; i++) e->rhs[r0 + i] = -(ta.acc_bias[i] - tb.acc_bias[i]);
  }
  if (what & JY_ASM_RESIDUALS) {
    for (int i = 0; i < dim; i++) {
      double rate = ta.vel_bias[i] - tb.vel_bias[i];
      for (int j = 0; j < pa->inst.ncoords; j++)
        rate += e->term_jac_a[i + (size_t)j * dim] * v[pa->coord_offset + j];
      for (int j = 0; j < pb->inst.ncoords; j++)
        rate -= e->term_jac_b[i + (size_t)j * dim] * v[pb->coord_offset + j];
      e->residual[r0 + i] = ta.value[i] - tb.value[i];
      e->rate[r0 + i] = rate;
    }
  }
  return JY_OK;
}

jyStatus jy_assemble(jyEval *e, const double *q, const double *v, double t, unsigned what) {
  const jyModel *m = e->model;
  size_t n = (size_t)m->n, rows = (size_t)m->m;
  if (what & JY_ASM_MASS) memset(e->mass, 0, sizeof(double) * n * n);
  if (what & JY_ASM_FORCE) memset(e->force, 0, sizeof(double) * n);
  if (what & JY_ASM_NONIDEAL) memset(e->nonideal, 0, sizeof(double) * n);
  if (what & JY_ASM_CONSTRAINTS) {
    memset(e->jac, 0, sizeof(double) * rows * n);
    memset(e->rhs, 0, sizeof(double) * rows);
  }
  if (what & JY_ASM_RESIDUALS) {
    memset(e->residual, 0, sizeof(double) * rows);
    memset(e->rate, 0, sizeof(double) * rows);
  }
  for (int i = 0; i < m->nparts; i++) {
    jyStatus st = assemble_part(e, &m->parts[i], q, v, t, what);
    if (st != JY_OK) return st;
  }
  if (what & (JY_ASM_CONSTRAINTS | JY_ASM_RESIDUALS))
    for (int g = 0; g < m->nglues; g++) {
      jyStatus st = assemble_glue(e, &m->glues[g], q, v, t, what);
      if (st != JY_OK) return st;
    }
  return JY_OK;
}

void jy_residual_norms(const jyEval *e, double *pos, double *vel) {
  const jyModel *m = e->model;
  double sp = 0, sv = 0;
  for (int i = 0; i < m->m; i++) {
    if (m->row_kinds[i] == JY_ROW_POSITION) {
      sp += e->residual[i] * e->residual[i];
      sv += e->rate[i] * e->rate[i];
    } else {
      sv += e->residual[i] * e->residual[i];
    }
  }
  *pos = sqrt(sp);
  *vel = sqrt(sv);
}
