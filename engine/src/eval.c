/* Evaluating one state: assembly, the acceleration solve, output channels. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* Marks the columns a part's blocks can touch: its own coordinates and those of the
 * terminals its eliminated blocks follow. */
static void mark_part_columns(const jyModel *model, int part, unsigned char *cols) {
  const jyModelPart *p = &model->parts[part];
  for (int j = 0; j < p->inst.ncoords; j++)
    if (p->coord_map[j] >= 0) cols[p->coord_map[j]] = 1;
  for (int l = p->first_link; l < p->first_link + p->nlinks; l++) {
    const jyModelPart *src = &model->parts[model->links[l].source];
    for (int j = 0; j < src->inst.ncoords; j++) cols[src->coord_offset + j] = 1;
  }
}

/* Which entries of A can be non-zero: a part's rows over its columns, a glue's rows over
 * both parts' columns. cols is scratch of n flags. */
static void sparse_pattern(const jyModel *model, unsigned char *pattern, unsigned char *cols) {
  int n = model->n, m = model->m;
  for (int i = 0; i < model->nparts; i++) {
    const jyModelPart *p = &model->parts[i];
    if (p->inst.nrows == 0) continue;
    memset(cols, 0, (size_t)n);
    mark_part_columns(model, i, cols);
    for (int j = 0; j < n; j++)
      if (cols[j])
        for (int r = 0; r < p->inst.nrows; r++) pattern[p->row_offset + r + (size_t)j * m] = 1;
  }
  for (int g = 0; g < model->nglues; g++) {
    const jyModelGlue *glue = &model->glues[g];
    if (glue->row_offset < 0) continue;
    memset(cols, 0, (size_t)n);
    mark_part_columns(model, glue->part_a, cols);
    mark_part_columns(model, glue->part_b, cols);
    for (int j = 0; j < n; j++)
      if (cols[j])
        for (int k = 0; k < glue->dim; k++) pattern[glue->row_offset + k + (size_t)j * m] = 1;
  }
}

jyEval *jy_eval_create(const jyModel *model) {
  if (!model) return NULL;
  const jyAllocator *a = &model->alloc;
  jyEval *e = jy_calloc(a, 1, sizeof *e);
  if (!e) return NULL;
  e->model = model;
  e->alloc = model->alloc;
  size_t n = (size_t)model->n, m = (size_t)model->m;
  size_t pc = (size_t)model->max_part_coords + 1, pr = (size_t)model->max_part_rows + 1;
  e->mass = jy_calloc(a, n * n + 1, sizeof(double));
  e->force = jy_calloc(a, n + 1, sizeof(double));
  e->nonideal = jy_calloc(a, n + 1, sizeof(double));
  e->jac = jy_calloc(a, m * n + 1, sizeof(double));
  e->rhs = jy_calloc(a, m + 1, sizeof(double));
  e->residual = jy_calloc(a, m + 1, sizeof(double));
  e->rate = jy_calloc(a, m + 1, sizeof(double));
  e->multipliers = jy_calloc(a, m + 1, sizeof(double));
  e->local_mass = jy_calloc(a, pc * pc, sizeof(double));
  e->local_vec = jy_calloc(a, pc, sizeof(double));
  e->local_jac = jy_calloc(a, pr * pc, sizeof(double));
  e->local_rhs = jy_calloc(a, pr, sizeof(double));
  e->local_res = jy_calloc(a, pr, sizeof(double));
  e->local_rate = jy_calloc(a, pr, sizeof(double));
  e->term_jac_a = jy_calloc(a, JY_TERMINAL_MAX_DIM * pc, sizeof(double));
  e->term_jac_b = jy_calloc(a, JY_TERMINAL_MAX_DIM * pc, sizeof(double));
  size_t width = (size_t)(model->max_source_coords > 0 ? model->max_source_coords : 1);
  e->q_loc = jy_calloc(a, pc, sizeof(double));
  e->v_loc = jy_calloc(a, pc, sizeof(double));
  e->g_loc = jy_calloc(a, pc, sizeof(double));
  e->acc_loc = jy_calloc(a, pc, sizeof(double));
  e->law_mu = jy_calloc(a, m + 1, sizeof(double));
  e->law_acc = jy_calloc(a, n + 1, sizeof(double));
  e->static_nonideal = jy_calloc(a, n + 1, sizeof(double));
  e->proj_jac = jy_calloc(a, m * n + 1, sizeof(double));
  e->proj_rhs = jy_calloc(a, m + 1, sizeof(double));
  e->proj_target = jy_calloc(a, m + 1, sizeof(double));
  e->proj_zero = jy_calloc(a, n + 1, sizeof(double));
  e->proj_dx = jy_calloc(a, n + 1, sizeof(double));
  e->proj_use = jy_calloc(a, m + 1, 1);
  e->map_count = jy_calloc(a, pc, sizeof(int));
  e->map_col = jy_calloc(a, pc * width, sizeof(int));
  e->map_val = jy_calloc(a, pc * width, sizeof(double));
  e->flags = jy_calloc(a, n + 1, sizeof(int));
  e->channel_scratch = jy_calloc(a, n + 1, sizeof(double));
  e->angle_prev = jy_calloc(a, (size_t)model->nchannels + 1, sizeof(double));
  e->dependent = jy_calloc(a, m + 1, 1);
  if (e->dependent && model->dependent_rows) {
    memcpy(e->dependent, model->dependent_rows, m);
    e->ndependent = model->ndependent;
  }
  e->uk = jy_uk_create(a, model->n, model->m);
  if (model->solver.sparse_min_coords > 0 && model->n >= model->solver.sparse_min_coords &&
      model->m > 0) {
    unsigned char *pattern = jy_calloc(a, m * n, 1), *cols = jy_calloc(a, n, 1);
    if (pattern && cols) {
      sparse_pattern(model, pattern, cols);
      e->sparse = jy_sparse_create(a, model->n, model->m, pattern); /* NULL: dense only */
    }
    jy_free(a, pattern);
    jy_free(a, cols);
  }
  if (!e->mass || !e->force || !e->nonideal || !e->jac || !e->rhs || !e->residual || !e->rate ||
      !e->multipliers || !e->local_mass || !e->local_vec || !e->local_jac || !e->local_rhs ||
      !e->local_res || !e->local_rate || !e->term_jac_a || !e->term_jac_b || !e->flags ||
      !e->channel_scratch || !e->angle_prev || !e->uk || !e->q_loc || !e->v_loc || !e->g_loc ||
      !e->map_count || !e->map_col || !e->map_val || !e->acc_loc || !e->law_mu || !e->law_acc || !e->static_nonideal ||
      !e->proj_jac || !e->proj_rhs || !e->proj_target || !e->proj_zero || !e->proj_dx ||
      !e->proj_use || !e->dependent) {
    jy_eval_destroy(e);
    return NULL;
  }
  return e;
}

void jy_eval_destroy(jyEval *e) {
  if (!e) return;
  jyAllocator a = e->alloc;
  double *buffers[] = {e->mass, e->force, e->nonideal, e->jac, e->rhs, e->residual, e->rate,
                       e->multipliers, e->local_mass, e->local_vec, e->local_jac, e->local_rhs,
                       e->local_res, e->local_rate, e->term_jac_a, e->term_jac_b,
                       e->channel_scratch, e->angle_prev, e->q_loc, e->v_loc, e->g_loc,
                       e->map_val, e->acc_loc, e->law_mu, e->law_acc, e->static_nonideal,
                       e->proj_jac,
                       e->proj_rhs, e->proj_target, e->proj_zero, e->proj_dx};
  for (size_t i = 0; i < sizeof buffers / sizeof buffers[0]; i++) jy_free(&a, buffers[i]);
  jy_free(&a, e->flags);
  jy_free(&a, e->map_count);
  jy_free(&a, e->map_col);
  jy_free(&a, e->proj_use);
  jy_free(&a, e->dependent);
  jy_uk_destroy(e->uk);
  jy_sparse_destroy(e->sparse);
  jy_free(&a, e);
}

const char *jy_eval_error(const jyEval *e) { return e ? e->error : ""; }

static jyUkProblem problem(const jyEval *e) {
  const jyModel *m = e->model;
  return (jyUkProblem){m->n, m->m, e->mass, e->force, e->nonideal, e->jac, e->rhs,
                       e->ndependent > 0 ? e->dependent : NULL};
}

/* Appends s to buf (bounded). */
static void append(char *buf, size_t len, const char *s) {
  size_t used = strlen(buf);
  if (used + 1 < len) snprintf(buf + used, len - used, "%s", s);
}

jyUkOutcome jy_eval_uk(jyEval *e, const jyUkProblem *problem_in, const jyUkOptions *opt,
                       double *acc, jyUkResult *result) {
  jyUkProblem p = *problem_in; /* every solve leaves out the evaluator's dependent rows */
  p.dropped = e->ndependent > 0 ? e->dependent : NULL;
  if (e->sparse && jy_sparse_applies(&p, p.mass == e->mass && e->mass_diagonal)) {
    jyUkOutcome out = jy_sparse_solve(e->sparse, &p, opt, acc, result);
    if (out != JY_UK_NOT_UNIQUE) return out;
  }
  return jy_uk_solve(e->uk, &p, opt, acc, result);
}

int jy_eval_decide_dependent(jyEval *e) {
  const jyModel *m = e->model;
  jyUkProblem p = problem(e);
  int count = jy_uk_dependent_rows(e->uk, &p, m->solver.rank_rcond, 0, -1, e->dependent);
  e->ndependent = count > 0 ? count : 0;
  return count;
}

/* A dependent row that the solve left out no longer follows from the others (the rows kept
 * are losing rank where the whole set does not, or the state has left a configuration that
 * was singular): decide the dependent rows again at this state and solve again. Among rows
 * whose pivot is below dependent_rcond (drift makes a dependent row look independent by
 * about the distance from the manifold) at most as many as before are left out. */
static jyUkOutcome redecide_and_solve(jyEval *e, const jyUkOptions *opt, double *acc,
                                      jyUkResult *res) {
  const jyModel *m = e->model;
  jyUkProblem p = problem(e);
  int count = jy_uk_dependent_rows(e->uk, &p, m->solver.rank_rcond, m->solver.dependent_rcond,
                                   e->ndependent, e->dependent);
  if (count < 0) return res->outcome;
  e->ndependent = count;
  e->rank_changes++;
  p = problem(e);
  return jy_eval_uk(e, &p, opt, acc, res);
}

jyStatus jy_eval_solve(jyEval *e, double t, double *acc) {
  const jyModel *m = e->model;
  jyUkProblem p = problem(e);
  jyUkOptions opt = {m->solver.rank_rcond, m->solver.augment_scale, m->solver.consistency_tol};
  jyUkResult res;
  jyUkOutcome outcome = jy_eval_uk(e, &p, &opt, acc, &res);
  if (outcome != JY_UK_NOT_UNIQUE && e->ndependent > 0 &&
      !(res.dropped_residual <= m->solver.dependent_tol))
    outcome = redecide_and_solve(e, &opt, acc, &res);
  if (outcome == JY_UK_OK) {
    for (int j = 0; j < m->n; j++)
      if (!isfinite(acc[j])) {
        jy_set_error(e->error, "acceleration of %s is not finite at t = %.9g",
                     m->coord_names[j], t);
        return JY_ERR_NOT_UNIQUE;
      }
    return JY_OK;
  }
  if (outcome == JY_UK_NOT_UNIQUE) {
    /* Not the hot path: naming the coordinates may allocate. */
    jy_uk_free_directions(e->uk, &p, 1e-6, e->flags);
    jy_set_error(e->error, "acceleration not unique at t = %.9g: massless coordinates that no "
                 "constraint determines: ", t);
    int listed = 0;
    for (int j = 0; j < m->n; j++)
      if (e->flags[j]) {
        if (listed++) append(e->error, JY_ERROR_LEN, ", ");
        append(e->error, JY_ERROR_LEN, m->coord_names[j]);
      }
    if (!listed) append(e->error, JY_ERROR_LEN, "(a combination of coordinates)");
    append(e->error, JY_ERROR_LEN, "; give them mass or glue them to something");
    return JY_ERR_NOT_UNIQUE;
  }
  jy_set_error(e->error, "inconsistent constraints at t = %.9g (relative residual %.3g, %d "
               "rows): these rows cannot all hold: ", t, res.residual, m->m);
  int listed = 0;
  for (int i = 0; i < m->m; i++)
    if (fabs(res.row_residual[i]) > m->solver.consistency_tol) {
      if (listed++) append(e->error, JY_ERROR_LEN, ", ");
      append(e->error, JY_ERROR_LEN, m->row_names[i]);
    }
  return JY_ERR_INCONSISTENT;
}

jyStatus jy_eval_solve_laws(jyEval *e, const double *q, const double *v, double t,
                            double *acc) {
  const jyModel *m = e->model;
  e->law_iterations = 0;
  if (!m->has_laws) return jy_eval_solve(e, t, acc);
  int n = m->n;
  memcpy(e->static_nonideal, e->nonideal, sizeof(double) * (size_t)n);
  memset(acc, 0, sizeof(double) * (size_t)n);
  jyUkProblem p = problem(e);
  /* Row forces and the acceleration settle when a further pass changes them by less than
   * 1e-12 of their size: far below any physical use, a few hundred ulps above rounding.
   * The acceleration too, for laws that depend on it: Coulomb friction at rest takes its
   * direction from the acceleration, and where the applied force cannot overcome it (the
   * body should stick) the passes flip that direction for ever while the row forces stay
   * put; taking such a state as settled made the motion creep. */
  for (int it = 1; it <= 100; it++) {
    memcpy(e->law_acc, acc, sizeof(double) * (size_t)n);
    memcpy(e->nonideal, e->static_nonideal, sizeof(double) * (size_t)n);
    jyStatus st = jy_assemble_laws(e, q, v, t, e->law_mu, acc);
    if (st == JY_OK) st = jy_eval_solve(e, t, acc);
    if (st != JY_OK) return st;
    jy_uk_multipliers(e->uk, &p, acc, e->multipliers, NULL);
    double change = 0, size = 0, acc_change = 0, acc_size = 0;
    for (int i = 0; i < m->m; i++) {
      change = fmax(change, fabs(e->multipliers[i] - e->law_mu[i]));
      size = fmax(size, fabs(e->multipliers[i]));
    }
    for (int j = 0; j < n; j++) {
      acc_change = fmax(acc_change, fabs(acc[j] - e->law_acc[j]));
      acc_size = fmax(acc_size, fabs(acc[j]));
    }
    memcpy(e->law_mu, e->multipliers, sizeof(double) * (size_t)m->m);
    e->law_iterations = it;
    int rows_settled = change <= 1e-12 * fmax(size, 1e-300) || change == 0;
    int acc_settled = acc_change <= 1e-12 * fmax(acc_size, 1e-300) || acc_change == 0;
    if (it > 1 && rows_settled && acc_settled) return JY_OK;
  }
  jy_set_error(e->error, "non-ideal laws did not converge at t = %.9g: the row forces or the "
               "acceleration still change after 100 passes (a body at rest against friction "
               "it cannot overcome, or a friction coefficient too large for this geometry?)", t);
  return JY_ERR_CONVERGENCE;
}

jyStatus jy_eval_acceleration(jyEval *e, const double *q, const double *v, double t,
                              double *acc) {
  if (!e || !q || !v || !acc) return JY_ERR_INVALID;
  int stabilize = e->baumgarte_rate > 0;
  jyStatus st = jy_assemble(e, q, v, t,
                            JY_ASM_MASS | JY_ASM_FORCE | JY_ASM_NONIDEAL | JY_ASM_CONSTRAINTS |
                                (stabilize ? JY_ASM_RESIDUALS : 0u));
  if (st != JY_OK) return st;
  if (stabilize) {
    /* Baumgarte: phi'' + 2 w phi' + w^2 phi = 0 (critically damped), psi' + w psi = 0. */
    const jyModel *m = e->model;
    double w = e->baumgarte_rate;
    for (int i = 0; i < m->m; i++) {
      if (m->row_kinds[i] == JY_ROW_POSITION)
        e->rhs[i] -= 2 * w * e->rate[i] + w * w * e->residual[i];
      else if (m->row_kinds[i] == JY_ROW_VELOCITY)
        e->rhs[i] -= w * e->residual[i];
    }
  }
  return jy_eval_solve_laws(e, q, v, t, acc);
}

static jyStatus part_call_failed(jyEval *e, const jyModelPart *p, const char *function,
                                 double t) {
  jy_set_error(e->error, "part '%s' (%s), %s: %s at t = %.9g", p->inst.name, p->inst.type->name,
               function, e->part_error[0] ? e->part_error : "failed", t);
  return JY_ERR_PART;
}

/* The force an eliminated glue carries: the block it moved is massless, so the glue balances
 * everything else acting on the block, F = -(Q + C + A^T mu + sum of J^T mu over the part's
 * other glues) restricted to the block. Reported, as for every glue, as the force on the
 * first terminal. */
static jyStatus eliminated_glue_force(jyEval *e, const jyModelLink *link, const double *q,
                                      const double *v, double t, const double *acc,
                                      double *out) {
  const jyModelPart *p = &e->model->parts[link->part];
  const jyPartType *type = p->inst.type;
  int nc = p->inst.ncoords, nr = p->inst.nrows;
  const double *ql, *vl;
  int mapped;
  jyStatus st = jy_localize(e, p, q, v, t, &ql, &vl, &mapped);
  if (st != JY_OK) return st;
  double force[JY_TERMINAL_MAX_DIM] = {0};
  e->part_error[0] = '\0';
  jyPartState s = {ql, vl, t, e->model->gravity, e->part_error, sizeof e->part_error};
  if (type->force) {
    memset(e->local_vec, 0, sizeof(double) * (size_t)nc);
    if (type->force(&p->inst, &s, e->local_vec) != 0) return part_call_failed(e, p, "force", t);
    for (int c = 0; c < link->dim; c++) force[c] -= e->local_vec[link->offset + c];
  }
  /* the whole non-ideal force, laws included (at this evaluation's row forces); it
   * localizes the same part again, so ql and vl stay valid */
  st = jy_part_nonideal(e, p, q, v, t, e->multipliers, acc, &vl);
  if (st != JY_OK) return st;
  for (int c = 0; c < link->dim; c++) force[c] -= e->local_vec[link->offset + c];
  if (nr > 0 && type->constraints) {
    memset(e->local_jac, 0, sizeof(double) * (size_t)nr * nc);
    if (type->constraints(&p->inst, &s, e->local_jac, e->local_rhs, NULL, NULL) != 0)
      return part_call_failed(e, p, "constraints", t);
    for (int c = 0; c < link->dim; c++)
      for (int i = 0; i < nr; i++)
        force[c] -= e->local_jac[i + (size_t)(link->offset + c) * nr] *
                    e->multipliers[p->row_offset + i];
  }
  const jyModel *m = e->model;
  for (int g = 0; g < m->nglues; g++) {
    const jyModelGlue *other = &m->glues[g];
    if (other->link >= 0) continue;
    for (int side = 0; side < 2; side++) {
      int part = side ? other->part_b : other->part_a;
      if (part != link->part) continue;
      int k = side ? other->terminal_b : other->terminal_a;
      double sign = side ? -1.0 : 1.0;
      jyStatus jst = jy_terminal_jacobian(e, p, k, ql, vl, t, e->term_jac_a);
      if (jst != JY_OK) return jst;
      for (int c = 0; c < link->dim; c++)
        for (int i = 0; i < other->dim; i++)
          force[c] -= sign * e->term_jac_a[i + (size_t)(link->offset + c) * other->dim] *
                      e->multipliers[other->row_offset + i];
    }
  }
  for (int c = 0; c < link->dim; c++) out[c] = link->part_is_a ? force[c] : -force[c];
  return JY_OK;
}

/* Angle outputs continue from their previous report: shifted by whole turns to lie within
 * pi of it. */
static void unwrap_angles(jyEval *e, const jyModelPart *part, double *dst) {
  unsigned bits = e->continue_angles ? part->shape.angle_outputs : 0;
  for (int k = 0; bits && k < part->shape.noutputs; k++, bits >>= 1) {
    if (!(bits & 1u)) continue;
    double *prev = &e->angle_prev[part->output_channel + k];
    const double turn = 6.283185307179586476925286766559;
    if (e->angles_reported) dst[k] += turn * nearbyint((*prev - dst[k]) / turn);
    *prev = dst[k];
  }
}

void jy_eval_continue_angles(jyEval *e) {
  e->continue_angles = 1;
  e->angles_reported = 0;
}

jyStatus jy_eval_channels(jyEval *e, const double *q, const double *v, double t, double *out) {
  if (!e || !q || !v || !out) return JY_ERR_INVALID;
  const jyModel *m = e->model;
  int n = m->n;
  double *acc = e->channel_scratch;
  jyStatus st = jy_assemble(e, q, v, t, JY_ASM_MASS | JY_ASM_FORCE | JY_ASM_NONIDEAL |
                                            JY_ASM_CONSTRAINTS | JY_ASM_RESIDUALS);
  if (st == JY_OK) st = jy_eval_solve_laws(e, q, v, t, acc);
  if (st != JY_OK) return st;
  jyUkProblem p = problem(e);
  jy_uk_multipliers(e->uk, &p, acc, e->multipliers, NULL);

  out[0] = t;
  memcpy(out + 1, q, sizeof(double) * (size_t)n);
  memcpy(out + 1 + n, v, sizeof(double) * (size_t)n);
  double kinetic = 0, potential = 0;
  for (int i = 0; i < m->nparts; i++) {
    const jyModelPart *part = &m->parts[i];
    const jyPartType *type = part->inst.type;
    int nc = part->inst.ncoords;
    const double *ql, *vl;
    int mapped;
    st = jy_localize(e, part, q, v, t, &ql, &vl, &mapped);
    if (st != JY_OK) return st;
    e->part_error[0] = '\0';
    jyPartState s = {ql, vl, t, m->gravity, e->part_error, sizeof e->part_error};
    if (type->energy) {
      double tk = 0, vp = 0;
      if (type->energy(&part->inst, &s, &tk, &vp) != 0) return part_call_failed(e, part, "energy", t);
      kinetic += tk;
      potential += vp;
    } else if (type->mass && nc > 0) {
      memset(e->local_mass, 0, sizeof(double) * (size_t)nc * nc);
      if (type->mass(&part->inst, &s, e->local_mass) != 0) return part_call_failed(e, part, "mass", t);
      for (int a = 0; a < nc; a++)
        for (int b = 0; b < nc; b++) kinetic += 0.5 * vl[a] * e->local_mass[a + (size_t)b * nc] * vl[b];
    }
    if (part->shape.noutputs > 0 && type->outputs) {
      double *dst = out + part->output_channel;
      memset(dst, 0, sizeof(double) * (size_t)part->shape.noutputs);
      if (type->outputs(&part->inst, &s, e->multipliers + part->row_offset, dst) != 0)
        return part_call_failed(e, part, "outputs", t);
      unwrap_angles(e, part, dst);
    }
  }
  double *derived = out + m->ch_energy;
  derived[0] = kinetic + potential;
  derived[1] = kinetic;
  derived[2] = potential;
  e->angles_reported = 1;
  jy_residual_norms(e, &derived[3], &derived[4]);
  /* Power of the ideal constraint forces (A^T mu) . v and of the non-ideal ones C . v: the
   * first vanishes for ideal scleronomic constraints, the second is what friction takes. */
  double ideal = 0, nonideal = 0;
  for (int j = 0; j < n; j++) {
    double force = 0;
    for (int i = 0; i < m->m; i++) force += e->jac[i + (size_t)j * m->m] * e->multipliers[i];
    ideal += force * v[j];
    nonideal += e->nonideal[j] * v[j];
  }
  derived[5] = ideal;
  derived[6] = nonideal;
  for (int i = 0; i < m->nparts; i++) {
    const jyModelPart *part = &m->parts[i];
    for (int r = 0; r < part->inst.nrows; r++)
      out[part->row_force_channel + r] = e->multipliers[part->row_offset + r];
    if (part->power_channel < 0) continue;
    double ideal_power = 0; /* mu . (A v) over the part's rows, in global terms */
    for (int r = 0; r < part->inst.nrows; r++) {
      int row = part->row_offset + r;
      double av = 0;
      for (int j = 0; j < n; j++) av += e->jac[row + (size_t)j * m->m] * v[j];
      ideal_power += e->multipliers[row] * av;
    }
    const double *vl;
    st = jy_part_nonideal(e, part, q, v, t, e->multipliers, acc, &vl);
    if (st != JY_OK) return st;
    double nonideal_power = 0;
    for (int j = 0; j < part->inst.ncoords; j++) nonideal_power += e->local_vec[j] * vl[j];
    out[part->power_channel] = ideal_power;
    out[part->power_channel + 1] = nonideal_power;
  }
  for (int g = 0; g < m->nglues; g++) {
    const jyModelGlue *glue = &m->glues[g];
    if (glue->link >= 0) {
      st = eliminated_glue_force(e, &m->links[glue->link], q, v, t, acc,
                                 out + glue->force_channel);
      if (st != JY_OK) return st;
      continue;
    }
    for (int k = 0; k < glue->dim; k++)
      out[glue->force_channel + k] = e->multipliers[glue->row_offset + k];
  }
  for (int u = 0; u < m->nuser; u++) {
    const jyUserChannel *c = &m->user_channels[u];
    e->part_error[0] = '\0';
    double value = 0;
    if (c->fn(c->ud, m, out, &value, e->part_error, sizeof e->part_error) != 0) {
      jy_set_error(e->error, "channel '%s': %s at t = %.9g", c->name,
                   e->part_error[0] ? e->part_error : "failed", t);
      return JY_ERR_PART;
    }
    if (!isfinite(value)) {
      jy_set_error(e->error, "channel '%s': value is not finite at t = %.9g", c->name, t);
      return JY_ERR_PART;
    }
    out[m->user_channel + u] = value;
  }
  return JY_OK;
}
