/* The output channels of one state, in the order compile_layout.c numbers them: t, every
 * part's q and der(q), the derived channels (JY_DERIVED_CHANNELS), glue forces, constraint-row forces
 * and powers, part outputs, user channels. Each kind has its own filler below; the
 * offsets they write at are the model's (ch_derived, force_channel, row_force_channel,
 * power_channel, output_channel, user_channel). */
#include <math.h>
#include <string.h>

#include "internal.h"

/* The balance of a part that eliminated glues moved, over its whole local state:
 * M_loc q_loc'' - (Q + C + A^T mu + the part's glues with rows, J^T mu) + the forces of the
 * links the part leads (J^T F_d: its followers pull on its terminals), into
 * e->local_balance. The force on the block one of its links moved is that block of it (a
 * massless block has no M_loc term). The forces of the links the part leads must be in the
 * channel row already (glue_channels goes from the deepest links up). Once per part, not
 * per link: a sys:constrain on four terminals is one part with four links, and its Lua
 * constraint was called once for each. */
static jyStatus eliminated_balance(jyEval *e, const jyModelPart *p, const double *q,
                                   const double *v, double t, const double *acc,
                                   const double *row) {
  const jyModel *m = e->model;
  const jyPartType *type = p->inst.type;
  int nc = p->inst.ncoords, nr = p->inst.nrows, index = (int)(p - m->parts);
  const double *ql, *vl;
  int mapped;
  jyStatus st = jy_localize_same_state(e, p, q, v, t, &ql, &vl, &mapped);
  if (st != JY_OK) return st;
  double *balance = e->local_balance;
  memset(balance, 0, sizeof(double) * (size_t)nc);
  jyPartState s = jy_part_state(e, p, ql, vl, t);
  if (type->mass) {
    jy_local_acceleration(e, p, mapped, acc);
    memset(e->local_mass, 0, sizeof(double) * (size_t)nc * nc);
    if (type->mass(jy_eval_inst(e, p), &s, e->local_mass) != 0)
      return jy_part_failed(e, p, "mass", t);
    for (int j = 0; j < nc; j++)
      for (int b = 0; b < nc; b++) balance[j] += e->local_mass[j + (size_t)b * nc] * e->acc_loc[b];
  }
  if (type->force) {
    memset(e->local_vec, 0, sizeof(double) * (size_t)nc);
    if (type->force(jy_eval_inst(e, p), &s, e->local_vec) != 0)
      return jy_part_failed(e, p, "force", t);
    for (int j = 0; j < nc; j++) balance[j] -= e->local_vec[j];
  }
  /* the whole non-ideal force, laws included (at this evaluation's row forces); it
   * localizes the same part again, so ql and vl stay valid */
  st = jy_part_nonideal(e, p, q, v, t, e->multipliers, acc, &vl);
  if (st != JY_OK) return st;
  for (int j = 0; j < nc; j++) balance[j] -= e->local_vec[j];
  if (nr > 0 && type->constraints) {
    memset(e->local_jac, 0, sizeof(double) * (size_t)nr * nc);
    if (type->constraints(jy_eval_inst(e, p), &s, e->local_jac, e->local_rhs, NULL, NULL) != 0)
      return jy_part_failed(e, p, "constraints", t);
    for (int j = 0; j < nc; j++)
      for (int i = 0; i < nr; i++)
        balance[j] -= e->local_jac[i + (size_t)j * nr] * e->multipliers[p->row_offset + i];
  }
  /* the glues with rows on this part (e->part_glues: not a walk over every glue) */
  for (int at = e->part_glue_ptr[index]; at < e->part_glue_ptr[index + 1]; at++) {
    const jyModelGlue *other = &m->glues[e->part_glues[at] / 2];
    int side = e->part_glues[at] % 2;
    int k = side ? other->terminal_b : other->terminal_a;
    double sign = side ? -1.0 : 1.0;
    jyStatus jst = jy_terminal_jacobian(e, p, k, ql, vl, t, e->term_jac_a);
    if (jst != JY_OK) return jst;
    for (int j = 0; j < nc; j++)
      for (int i = 0; i < other->dim; i++)
        balance[j] -=
          sign * e->term_jac_a[i + (size_t)j * other->dim] * e->multipliers[other->row_offset + i];
  }
  /* the links the part leads: their blocks pull its terminals with -F_d */
  for (int at = m->source_link_ptr[index]; at < m->source_link_ptr[index + 1]; at++) {
    const jyModelLink *d = &m->links[m->source_links[at]];
    const double *fd = row + m->glues[d->glue].force_channel;
    jyStatus jst = jy_terminal_jacobian(e, p, d->terminal, ql, vl, t, e->term_jac_a);
    if (jst != JY_OK) return jst;
    for (int j = 0; j < nc; j++)
      for (int i = 0; i < d->dim; i++)
        balance[j] += e->term_jac_a[i + (size_t)j * d->dim] * (d->part_is_a ? fd[i] : -fd[i]);
  }
  return JY_OK;
}

/* Angle outputs continue from their previous report: shifted by whole turns to lie within
 * pi of it. */
static void unwrap_angles(jyEval *e, const jyModelPart *part, double *dst) {
  unsigned bits = e->continue_angles ? part->shape->angle_outputs : 0;
  for (int k = 0; bits && k < part->shape->noutputs; k++, bits >>= 1) {
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

/* One part's kinetic and potential energy (kinetic 1/2 v^T M v without an energy
 * function) and its output channels. */
static jyStatus part_energy_and_outputs(jyEval *e, const jyModelPart *part, const double *q,
                                        const double *v, double t, double energy[2], double *out,
                                        int want_energy, int want_outputs) {
  const jyPartType *type = part->inst.type;
  if (!want_energy && !want_outputs) return JY_OK;
  int nc = part->inst.ncoords, mapped;
  const double *ql, *vl;
  jyStatus st = jy_localize_same_state(e, part, q, v, t, &ql, &vl, &mapped);
  if (st != JY_OK) return st;
  jyPartState s = jy_part_state(e, part, ql, vl, t);
  if (!want_energy) {
  } else if (type->energy) {
    double tk = 0, vp = 0;
    if (type->energy(jy_eval_inst(e, part), &s, &tk, &vp) != 0)
      return jy_part_failed(e, part, "energy", t);
    energy[0] += tk;
    energy[1] += vp;
  } else if (type->mass && nc > 0) {
    memset(e->local_mass, 0, sizeof(double) * (size_t)nc * nc);
    if (type->mass(jy_eval_inst(e, part), &s, e->local_mass) != 0)
      return jy_part_failed(e, part, "mass", t);
    for (int a = 0; a < nc; a++)
      for (int b = 0; b < nc; b++)
        energy[0] += 0.5 * vl[a] * e->local_mass[a + (size_t)b * nc] * vl[b];
  }
  if (want_outputs && part->shape->noutputs > 0 && type->outputs) {
    double *dst = out + part->output_channel;
    memset(dst, 0, sizeof(double) * (size_t)part->shape->noutputs);
    if (type->outputs(jy_eval_inst(e, part), &s, e->multipliers + part->row_offset, dst) != 0)
      return jy_part_failed(e, part, "outputs", t);
    unwrap_angles(e, part, dst);
  }
  return JY_OK;
}

/* The derived channels: energies (kinetic, potential from the parts), residual norms, and
 * the power of the ideal constraint forces (A^T mu) . v and of the non-ideal ones C . v:
 * the first vanishes for ideal scleronomic constraints, the second is what friction takes. */
static void derived_channels(jyEval *e, const double *v, const double energy[2], double *derived) {
  const jyModel *m = e->model;
  derived[JY_CH_ENERGY] = energy[0] + energy[1];
  derived[JY_CH_KINETIC] = energy[0];
  derived[JY_CH_POTENTIAL] = energy[1];
  jy_residual_norms(e, &derived[JY_CH_RESIDUAL_POS], &derived[JY_CH_RESIDUAL_VEL]);
  double ideal = 0, nonideal = 0; /* (A^T mu) . v = mu . (A v) */
  for (int i = 0; i < m->m; i++) ideal += e->multipliers[i] * e->jac_times_v[i];
  if (e->tree) /* C is not mapped to the coordinates there: the recursion summed C . v */
    nonideal = e->tree->nonideal_power;
  else
    for (int j = 0; j < m->n; j++) nonideal += e->nonideal[j] * v[j];
  derived[JY_CH_POWER_IDEAL] = ideal;
  derived[JY_CH_POWER_NONIDEAL] = nonideal;
}

/* A part's row forces (its multipliers) and the power of the ideal and non-ideal
 * constraint forces on it. */
static jyStatus part_constraint_channels(jyEval *e, const jyModelPart *part, const double *q,
                                         const double *v, double t, const double *acc, double *out,
                                         const unsigned char *want) {
  for (int r = 0; r < part->inst.nrows; r++)
    out[part->row_force_channel + r] = e->multipliers[part->row_offset + r];
  if (part->power_channel < 0) return JY_OK;
  if (want && !want[part->power_channel] && !want[part->power_channel + 1]) return JY_OK;
  double ideal_power = 0; /* mu . (A v) over the part's rows, in global terms */
  for (int r = 0; r < part->inst.nrows; r++)
    ideal_power += e->multipliers[part->row_offset + r] * e->jac_times_v[part->row_offset + r];
  const double *vl;
  jyStatus st = jy_part_nonideal(e, part, q, v, t, e->multipliers, acc, &vl);
  if (st != JY_OK) return st;
  double nonideal_power = 0;
  for (int j = 0; j < part->inst.ncoords; j++) nonideal_power += e->local_vec[j] * vl[j];
  out[part->power_channel] = ideal_power;
  out[part->power_channel + 1] = nonideal_power;
  return JY_OK;
}

/* Each glue's force on its first terminal: its multipliers, or (when eliminated is set)
 * the balance of the block an eliminated glue moved. */
static jyStatus glue_channels(jyEval *e, const double *q, const double *v, double t,
                              const double *acc, double *out, int eliminated) {
  const jyModel *m = e->model;
  for (int g = 0; g < m->nglues; g++) {
    const jyModelGlue *glue = &m->glues[g];
    if (glue->link < 0)
      for (int k = 0; k < glue->dim; k++)
        out[glue->force_channel + k] = e->multipliers[glue->row_offset + k];
  }
  if (!eliminated) return JY_OK;
  if (e->tree) { /* the recursion's (M a - Q) on each block */
    for (int l = 0; l < m->nlinks; l++) {
      const jyModelLink *link = &m->links[l];
      double *force = out + m->glues[link->glue].force_channel;
      for (int c = 0; c < link->dim; c++) {
        double f = e->tree->link_force[(size_t)l * JY_TERMINAL_MAX_DIM + (size_t)c];
        force[c] = link->part_is_a ? f : -f;
      }
    }
    return JY_OK;
  }
  /* the eliminated ones from the deepest up: a link's followers are deeper than it is;
   * each glue written as the force on its first terminal */
  for (int depth = m->chain_depth; depth >= 1; depth--)
    for (int i = 0; i < m->nparts; i++) {
      const jyModelPart *p = &m->parts[i];
      if (p->nlinks == 0 || p->depth != depth) continue;
      jyStatus st = eliminated_balance(e, p, q, v, t, acc, out);
      if (st != JY_OK) return st;
      for (int l = p->first_link; l < p->first_link + p->nlinks; l++) {
        const jyModelLink *link = &m->links[l];
        double *force = out + m->glues[link->glue].force_channel;
        for (int c = 0; c < link->dim; c++) {
          double f = e->local_balance[link->offset + c];
          force[c] = link->part_is_a ? f : -f;
        }
      }
    }
  return JY_OK;
}

/* The user's channels, computed from the row filled so far. */
static jyStatus user_channels(jyEval *e, double t, double *out, int nuser) {
  const jyModel *m = e->model;
  for (int u = 0; u < nuser; u++) {
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

/* impulse.<part>: the impulse of the part's last impact in the first row reported after it
 * (a simulation's row just after the event), 0 in every other row. */
static void impulse_channels(jyEval *e, double *out) {
  const jyModel *m = e->model;
  for (int i = 0; i < m->nparts; i++) {
    int ch = m->parts[i].impulse_channel;
    if (ch < 0) continue;
    out[ch] = e->impulse ? e->impulse[i] : 0.0;
    if (e->impulse && !e->keep_impulses) e->impulse[i] = 0.0;
  }
}

/* Every part's coordinates and velocities in part order (nlocal each): the kept ones from
 * the state, those glue elimination substituted away from the part's view (the terminal
 * they follow). */
static jyStatus coordinate_channels(jyEval *e, const double *q, const double *v, double t,
                                    double *q_out, double *v_out, const unsigned char *want) {
  const jyModel *m = e->model;
  int at = 0;
  for (int i = 0; i < m->nparts; i++) {
    const jyModelPart *p = &m->parts[i];
    int nc = p->inst.ncoords, mapped = 0;
    const double *ql = NULL, *vl = NULL;
    int needed = !want; /* the copies of eliminated coordinates someone reads */
    for (int j = 0; j < nc && !needed; j++)
      needed = p->coord_map[j] < 0 && (want[1 + at + j] || want[1 + m->nlocal + at + j]);
    if (p->nlinks > 0 && needed) {
      jyStatus st = jy_localize_same_state(e, p, q, v, t, &ql, &vl, &mapped);
      if (st != JY_OK) return st;
    }
    for (int j = 0; j < nc; j++, at++) {
      int k = p->coord_map[j];
      if (k < 0 && !ql) continue; /* not selected: not computed */
      q_out[at] = k >= 0 ? q[k] : ql[j];
      v_out[at] = k >= 0 ? v[k] : vl[j];
    }
  }
  return JY_OK;
}

/* Every localization below is at the state just solved (jy_localize_same_state): the views
 * of that solve stand, so each part costs O(1) however deep it follows. */
jyStatus jy_eval_channels(jyEval *e, const double *q, const double *v, double t, double *out) {
  return jy_eval_channels_masked(e, q, v, t, out, NULL);
}

/* Whether any of channels [first, first + count) is wanted. */
static int any_wanted(const unsigned char *want, int first, int count) {
  for (int i = 0; i < count; i++)
    if (want[first + i]) return 1;
  return 0;
}

/* With a mask, what no wanted channel needs is skipped: a part's energy (when none of
 * energy, kinetic, potential is wanted) and outputs, a part's powers, the forces of the
 * eliminated glues (all or none: an eliminated glue's balance reads its followers'), the copies of eliminated
 * coordinates, and the user channels after the last one wanted. A user channel reads any
 * channel before it: when one is computed, the whole row before it is too. The
 * acceleration solve, the coordinates, row forces, residuals, impulses and inputs are
 * always computed (cheap beside the solve, or needed by it). */
jyStatus jy_eval_channels_masked(jyEval *e, const double *q, const double *v, double t, double *out,
                                 const unsigned char *want) {
  if (!e || !q || !v || !out) return JY_ERR_INVALID;
  const jyModel *m = e->model;
  int nuser = m->nuser;
  if (want) {
    while (nuser > 0 && !want[m->user_channel + nuser - 1]) nuser--;
    if (nuser > 0) want = NULL;
  }
  int want_energy = !want || any_wanted(want, m->ch_derived + JY_CH_ENERGY, 1) ||
    any_wanted(want, m->ch_derived + JY_CH_KINETIC, 1) ||
    any_wanted(want, m->ch_derived + JY_CH_POTENTIAL, 1);
  /* the eliminated glues' forces (all or none); the others are multipliers, always copied */
  int want_glue = !want;
  for (int g = 0; g < m->nglues && !want_glue; g++)
    want_glue =
      m->glues[g].link >= 0 && any_wanted(want, m->glues[g].force_channel, m->glues[g].dim);
  double *acc = e->channel_scratch;
  /* Solved, with the multipliers, where the evaluator solves (the store on a large model);
   * a tree model has no rows: the recursion, with the eliminated glues' forces. */
  jyStatus st = e->tree ? jy_tree_acceleration(e, q, v, t, acc, want_glue)
                        : jy_assemble(e, q, v, t,
                                      JY_ASM_MASS | JY_ASM_FORCE | JY_ASM_NONIDEAL |
                                        JY_ASM_CONSTRAINTS | JY_ASM_RESIDUALS | JY_ASM_SPARSE_ONLY);
  if (st == JY_OK && !e->tree) st = jy_eval_acceleration_and_multipliers(e, q, v, t, acc);
  if (st != JY_OK) return st;
  jy_eval_constraint_times(e, v, e->jac_times_v);

  out[0] = t;
  st = coordinate_channels(e, q, v, t, out + 1, out + 1 + m->nlocal, want);
  if (st != JY_OK) return st;
  double energy[2] = {0, 0}; /* kinetic, potential */
  for (int i = 0; i < m->nparts && st == JY_OK; i++) {
    const jyModelPart *p = &m->parts[i];
    int want_outputs = !want || any_wanted(want, p->output_channel, p->shape->noutputs);
    st = part_energy_and_outputs(e, p, q, v, t, energy, out, want_energy, want_outputs);
  }
  if (st != JY_OK) return st;
  e->angles_reported = 1;
  derived_channels(e, v, energy, out + m->ch_derived);
  for (int i = 0; i < m->nparts && st == JY_OK; i++)
    st = part_constraint_channels(e, &m->parts[i], q, v, t, acc, out, want);
  if (st == JY_OK) st = glue_channels(e, q, v, t, acc, out, want_glue);
  impulse_channels(e, out);
  if (st == JY_OK && m->ninputs > 0) { /* the values the parts read at this time */
    st = jy_eval_inputs_at(e, t);
    if (st == JY_OK)
      memcpy(out + m->input_channel, e->input_now, sizeof(double) * (size_t)m->ninputs);
  }
  if (st == JY_OK) st = user_channels(e, t, out, nuser);
  return st;
}
