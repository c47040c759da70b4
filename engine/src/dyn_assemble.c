/* Assembly of the global M, Q, C, A, b (dense) and the constraint residuals from the
 * parts' local blocks and the glue rows. Never allocates: the eval owns every buffer.
 *
 * A part whose coordinates are all its own scatters its blocks at its coordinate offset.
 * A part with eliminated blocks (glue elimination) sees a local state built from the
 * terminals it follows, q_loc'' = G q'' + g, and its blocks are mapped through G:
 * M += G^T M_loc G, Q += G^T (Q_loc - M_loc g), A += A_loc G, b += b_loc - A_loc g. */
#include <math.h>
#include <string.h>

#include "internal.h"

jyStatus jy_part_failed(jyEval *e, const jyModelPart *p, const char *function, double t) {
  jy_set_error(e->error, "part '%s' (%s), %s: %s at t = %.9g", p->inst.name, p->inst.type->name,
               function, e->part_error[0] ? e->part_error : "failed", t);
  return JY_ERR_PART;
}

/* x * 0 is 0 for every finite x and NaN for an infinity or a NaN: sums without a branch
 * per entry, four at a time so that each add does not wait on the one before. */
int jy_all_finite(const double *x, size_t count) {
  double z0 = 0, z1 = 0, z2 = 0, z3 = 0;
  size_t i = 0;
  for (; i + 4 <= count; i += 4) {
    z0 += x[i] * 0.0;
    z1 += x[i + 1] * 0.0;
    z2 += x[i + 2] * 0.0;
    z3 += x[i + 3] * 0.0;
  }
  for (; i < count; i++) z0 += x[i] * 0.0;
  return (z0 + z1) + (z2 + z3) == 0;
}

/* Whether a part call's outputs pass: unchecked in jy_assemble's first pass (its arrays are
 * checked at the end instead), checked everywhere else. */
static int part_output_finite(const jyEval *e, const double *x, int count) {
  return e->trust_parts || jy_all_finite(x, (size_t)count);
}

static jyStatus not_finite(jyEval *e, const jyModelPart *p, const char *function, double t) {
  jy_set_error(e->error, "part '%s' (%s), %s: returned a value that is not finite at t = %.9g",
               p->inst.name, p->inst.type->name, function, t);
  return JY_ERR_PART;
}

jyPartState jy_part_state(jyEval *e, const jyModelPart *p, const double *q, const double *v,
                          double t) {
  e->part_error[0] = '\0';
  size_t index = (size_t)(p - e->model->parts);
  int mode = e->modes ? e->modes[index] : 0;
  void *scratch = p->shape->scratch_size ? e->scratch + e->scratch_at[index] : NULL;
  int ni = e->model->ninputs;
  if (ni > 0) jy_eval_inputs_at(e, t); /* a failure: reported by the entry points */
  const double *in = ni > 0 ? e->input_now : NULL;
  return (jyPartState){q,
                       v,
                       t,
                       e->model->gravity,
                       e->part_error,
                       sizeof e->part_error,
                       mode,
                       scratch,
                       e->run_rtol,
                       e->run_atol,
                       NULL,
                       ni,
                       in,
                       in ? in + ni : NULL,
                       in ? in + 2 * ni : NULL};
}

/* Terminal k of part p at its local state: value, Jacobian (dim x ncoords, local), biases. */
typedef struct terminal_eval {
  double value[JY_TERMINAL_MAX_DIM], vel_bias[JY_TERMINAL_MAX_DIM], acc_bias[JY_TERMINAL_MAX_DIM];
} terminal_eval;

static jyStatus eval_terminal(jyEval *e, const jyModelPart *p, int k, const double *q_loc,
                              const double *v_loc, double t, double *jac, terminal_eval *out) {
  int nc = p->inst.ncoords;
  int dim = k < p->shape->nterminals ? p->shape->terminals[k].dim : 1;
  memset(out, 0, sizeof *out);
  memset(jac, 0, sizeof(double) * (size_t)dim * (nc > 0 ? nc : 1));
  if (k >= p->shape->nterminals) { /* a coordinate terminal: the coordinate itself */
    int j = k - p->shape->nterminals;
    out->value[0] = q_loc[j];
    jac[j] = 1;
    return JY_OK;
  }
  const jyTerminalSpec *ts = &p->shape->terminals[k];
  if (ts->is_coord_block) { /* declared the coordinates themselves: so it is, everywhere */
    for (int i = 0; i < dim; i++) {
      out->value[i] = q_loc[ts->coord_offset + i];
      jac[i + (size_t)(ts->coord_offset + i) * dim] = 1;
    }
    return JY_OK;
  }
  if (!p->inst.type->terminal) {
    jy_set_error(e->error, "part '%s' (%s) declares terminals but no terminal function",
                 p->inst.name, p->inst.type->name);
    return JY_ERR_PART;
  }
  jyPartState s = jy_part_state(e, p, q_loc, v_loc, t);
  if (p->inst.type->terminal(jy_eval_inst(e, p), &s, k, out->value, jac, out->vel_bias,
                             out->acc_bias) != 0)
    return jy_part_failed(e, p, "terminal", t);
  if (!part_output_finite(e, out->value, dim) || !part_output_finite(e, out->vel_bias, dim) ||
      !part_output_finite(e, out->acc_bias, dim) || !part_output_finite(e, jac, dim * nc))
    return not_finite(e, p, "terminal", t);
  return JY_OK;
}

jyStatus jy_terminal_jacobian(jyEval *e, const jyModelPart *p, int k, const double *q_loc,
                              const double *v_loc, double t, double *jac) {
  terminal_eval te;
  return eval_terminal(e, p, k, q_loc, v_loc, t, jac, &te);
}

/* A part's view in the pool (internal.h): q, v, g, then G (ncoords rows of ncols). */
typedef struct part_view {
  double *q, *v, *g, *G;
} part_view;

static part_view view_buffers(const jyEval *e, const jyModelPart *p) {
  size_t nc = (size_t)p->inst.ncoords;
  double *at = e->views + e->view_at[p - e->model->parts];
  return (part_view){at, at + nc, at + 2 * nc, at + 3 * nc};
}

/* A tree model's view (no G): q, v and in place of g the velocity bias vb (v_loc = G v +
 * vb), each link's source terminal Jacobian and acceleration bias kept in e->tree for the
 * recursion, so that no terminal is evaluated twice in an epoch. */
static jyStatus tree_view_of(jyEval *e, const jyModelPart *p, const double *q, const double *v,
                             double t, part_view *view) {
  const jyModel *m = e->model;
  size_t index = (size_t)(p - m->parts);
  *view = view_buffers(e, p);
  if (e->view_stamp[index] == e->view_epoch) return JY_OK;
  jyTreeWork *w = e->tree;
  for (int j = 0; j < p->inst.ncoords; j++) {
    int k = p->coord_map[j];
    if (k >= 0) view->q[j] = q[k], view->v[j] = v[k], view->g[j] = 0;
  }
  for (int l = p->first_link; l < p->first_link + p->nlinks; l++) {
    const jyModelLink *link = &m->links[l];
    const jyModelPart *src = &m->parts[link->source];
    int ns = src->inst.ncoords, dim = link->dim;
    const double *sq = q + src->coord_offset, *sv = v + src->coord_offset, *svb = NULL;
    if (src->nlinks > 0) {
      part_view up;
      jyStatus st = tree_view_of(e, src, q, v, t, &up);
      if (st != JY_OK) return st;
      sq = up.q, sv = up.v, svb = up.g;
    }
    terminal_eval te;
    double *jac = w->link_jac + w->link_jac_at[l];
    jyStatus st = eval_terminal(e, src, link->terminal, sq, sv, t, jac, &te);
    if (st != JY_OK) return st;
    for (int c = 0; c < dim; c++) {
      int j = link->offset + c;
      double rate = te.vel_bias[c], bias = te.vel_bias[c];
      for (int i = 0; i < ns; i++) {
        rate += jac[c + (size_t)i * dim] * sv[i];
        if (svb) bias += jac[c + (size_t)i * dim] * svb[i];
      }
      view->q[j] = te.value[c], view->v[j] = rate, view->g[j] = bias;
      w->link_bias[(size_t)l * JY_TERMINAL_MAX_DIM + c] = te.acc_bias[c];
    }
  }
  e->view_stamp[index] = e->view_epoch;
  return JY_OK;
}

/* A gathered part's view (jyModelPart.gather): q and v picked from the state; G and g = 0
 * are constant (jy_views_init). */
static inline void gather_view(jyEval *e, const jyModelPart *p, const double *q, const double *v,
                               const part_view *view) {
  for (int j = 0; j < p->inst.ncoords; j++) {
    int k = p->cols[p->gather[j]];
    view->q[j] = q[k], view->v[j] = v[k];
  }
  e->view_stamp[p - e->model->parts] = e->view_epoch;
}

/* The view of a part with links at (q, v, t), computed once per epoch: its own kept
 * coordinates are its first columns; through each link, the source's terminal at the
 * source's own view (computed first, up the chain: chain_depth levels at most) gives the
 * block q_loc = p(q_src), rate J v_src + p_t, bias J g_src + gamma and rows J G_src. */
static jyStatus part_view_of(jyEval *e, const jyModelPart *p, const double *q, const double *v,
                             double t, part_view *view) {
  const jyModel *m = e->model;
  size_t index = (size_t)(p - m->parts);
  if (e->tree) return tree_view_of(e, p, q, v, t, view);
  *view = view_buffers(e, p);
  if (e->view_stamp[index] == e->view_epoch) return JY_OK;
  int nc = p->inst.ncoords, w = p->ncols, own = 0;
  if (p->gather) {
    gather_view(e, p, q, v, view);
    return JY_OK;
  }
  memset(view->G, 0, sizeof(double) * (size_t)nc * (size_t)w);
  for (int j = 0; j < nc; j++) {
    int k = p->coord_map[j];
    if (k < 0) continue;
    view->q[j] = q[k], view->v[j] = v[k], view->g[j] = 0;
    view->G[(size_t)j * w + own++] = 1;
  }
  for (int l = p->first_link; l < p->first_link + p->nlinks; l++) {
    const jyModelLink *link = &m->links[l];
    const jyModelPart *src = &m->parts[link->source];
    int ns = src->inst.ncoords, dim = link->dim;
    int block = src->nlinks == 0 ? jy_terminal_coord_block(src, link->terminal) : -1;
    if (block >= 0) { /* the terminal is the source's coordinates themselves: G = I there */
      for (int c = 0; c < dim; c++) {
        int j = link->offset + c, k = src->coord_offset + block + c;
        view->q[j] = q[k], view->v[j] = v[k], view->g[j] = 0;
        view->G[(size_t)j * w + link->pos[block + c]] = 1;
      }
      continue;
    }
    struct { /* the source's own state, or its view (g, G NULL: it has no links) */
      const double *q, *v, *g, *G;
    } sv = {q + src->coord_offset, v + src->coord_offset, NULL, NULL};
    if (src->nlinks > 0) {
      part_view up;
      jyStatus st = part_view_of(e, src, q, v, t, &up);
      if (st != JY_OK) return st;
      sv.q = up.q, sv.v = up.v, sv.g = up.g, sv.G = up.G;
    }
    terminal_eval te;
    jyStatus st = eval_terminal(e, src, link->terminal, sv.q, sv.v, t, e->term_jac_b, &te);
    if (st != JY_OK) return st;
    const double *jac = e->term_jac_b;
    for (int c = 0; c < dim; c++) {
      int j = link->offset + c;
      double *row = view->G + (size_t)j * w, rate = te.vel_bias[c], acc = te.acc_bias[c];
      for (int i = 0; i < ns; i++) {
        double jci = jac[c + (size_t)i * dim];
        rate += jci * sv.v[i];
        if (!sv.G)
          row[link->pos[i]] += jci;
        else
          acc += jci * sv.g[i];
      }
      /* row = J G_src, each entry summed in a register (the link's rows start at zero) */
      for (int k = 0; sv.G && k < src->ncols; k++) {
        double sum = 0;
        for (int i = 0; i < ns; i++)
          sum += jac[c + (size_t)i * dim] * sv.G[(size_t)i * src->ncols + k];
        row[link->pos[k]] += sum;
      }
      view->q[j] = te.value[c], view->v[j] = rate, view->g[j] = acc;
    }
  }
  e->view_stamp[index] = e->view_epoch;
  return JY_OK;
}

void jy_views_init(jyEval *e) {
  const jyModel *m = e->model;
  for (int i = 0; i < m->nparts; i++) {
    const jyModelPart *p = &m->parts[i];
    if (!p->gather) continue;
    part_view view = view_buffers(e, p);
    for (int j = 0; j < p->inst.ncoords; j++) view.G[(size_t)j * p->ncols + p->gather[j]] = 1;
  }
}

/* jy_localize within the current epoch (an assembly's parts and glues share it). */
static jyStatus localize(jyEval *e, const jyModelPart *p, const double *q, const double *v,
                         double t, const double **q_loc, const double **v_loc, int *mapped) {
  if (p->nlinks == 0) {
    *q_loc = q + p->coord_offset;
    *v_loc = v + p->coord_offset;
    *mapped = 0;
    return JY_OK;
  }
  part_view view;
  jyStatus st = JY_OK;
  if (p->gather) { /* inline: most parts of a mass + rod or spring chain */
    view = view_buffers(e, p);
    if (e->view_stamp[p - e->model->parts] != e->view_epoch) gather_view(e, p, q, v, &view);
  } else {
    st = part_view_of(e, p, q, v, t, &view);
  }
  *q_loc = view.q;
  *v_loc = view.v;
  *mapped = 1;
  return st;
}

jyStatus jy_localize(jyEval *e, const jyModelPart *p, const double *q, const double *v, double t,
                     const double **q_loc, const double **v_loc, int *mapped) {
  e->view_epoch++;
  return localize(e, p, q, v, t, q_loc, v_loc, mapped);
}

jyStatus jy_localize_same_state(jyEval *e, const jyModelPart *p, const double *q, const double *v,
                                double t, const double **q_loc, const double **v_loc, int *mapped) {
  return localize(e, p, q, v, t, q_loc, v_loc, mapped);
}

/* Where an assembly adds a global matrix's entries: the dense array (NULL: not this time),
 * the store (NULL: not this time), or both. */
typedef struct {
  double *dense;
  int ld;
  jyCsc *store;
} Sink;

static Sink sink_of(const jyEval *e, int mass, unsigned what) {
  int store = e->store_solves, dense = !(store && (what & JY_ASM_SPARSE_ONLY));
  jyCsc *c = (jyCsc *)(mass ? &e->store_mass : &e->store_jac);
  return (Sink){dense ? (mass ? e->mass : e->jac) : NULL, mass ? e->model->n : e->model->m,
                store ? c : NULL}; /* a large model keeps no dense M (nor, mostly, A) */
}

/* Adds sign * block (nrows x ncols, column-major) at global rows rows[i] (NULL: row0 + i) and
 * columns cols[k] (NULL: col0 + k); into the store at its slots (found at creation). */
static void add_block(const Sink *s, const int *slot, const int *rows, int row0, int nrows,
                      const int *cols, int col0, int ncols, const double *block, double sign) {
  if (s->store) {
    double *x = s->store->x;
    for (int at = 0; at < nrows * ncols; at++)
      if (slot[at] >= 0) x[slot[at]] += sign * block[at];
  }
  if (!s->dense) return;
  for (int k = 0; k < ncols; k++) {
    double *col = s->dense + (size_t)(cols ? cols[k] : col0 + k) * s->ld;
    for (int i = 0; i < nrows; i++)
      col[rows ? rows[i] : row0 + i] += sign * block[i + (size_t)k * nrows];
  }
}

/* add_block of a gathered part's rows (nrows x nc, on its local coordinates) through its
 * selection G, without forming the block over its columns: local column a is view column
 * gather[a] (two local columns on one view column add up there, as through G). */
static void add_gathered(const Sink *s, const int *slot, const jyModelPart *p, const double *local,
                         int nrows) {
  for (int a = 0; a < p->inst.ncoords; a++) {
    int k = p->gather[a];
    const double *l_col = local + (size_t)a * nrows;
    if (s->store)
      for (int i = 0; i < nrows; i++) {
        int at = slot[i + (size_t)k * nrows];
        if (at >= 0) s->store->x[at] += l_col[i];
      }
    if (s->dense) {
      double *col = s->dense + (size_t)p->cols[k] * s->ld + p->row_offset;
      for (int i = 0; i < nrows; i++) col[i] += l_col[i];
    }
  }
}

/* out (nrows x ncols) = local (nrows x nc, column-major) G: a block through the view. */
static void times_view(const jyModelPart *p, const part_view *view, const double *local, int nrows,
                       double *out) {
  int nc = p->inst.ncoords, w = p->ncols;
  memset(out, 0, sizeof(double) * (size_t)nrows * w);
  if (p->gather) { /* G selects: local column a lands in column gather[a] */
    for (int a = 0; a < nc; a++) {
      double *o_col = out + (size_t)p->gather[a] * nrows;
      for (int i = 0; i < nrows; i++) o_col[i] += local[i + (size_t)a * nrows];
    }
    return;
  }
  for (int a = 0; a < nc; a++) {
    const double *g_row = view->G + (size_t)a * w, *l_col = local + (size_t)a * nrows;
    for (int k = 0; k < w; k++) {
      if (g_row[k] == 0) continue;
      for (int i = 0; i < nrows; i++) out[i + (size_t)k * nrows] += l_col[i] * g_row[k];
    }
  }
}

/* vec[cols] += G^T local (a generalized force through the view), or vec[own] += local. */
static void add_force(const jyEval *e, const jyModelPart *p, int mapped, double *vec,
                      const double *local) {
  int nc = p->inst.ncoords;
  if (!mapped) {
    for (int j = 0; j < nc; j++) vec[p->coord_offset + j] += local[j];
    return;
  }
  if (p->gather) {
    for (int a = 0; a < nc; a++) vec[p->cols[p->gather[a]]] += local[a];
    return;
  }
  part_view view = view_buffers(e, p);
  for (int a = 0; a < nc; a++) {
    const double *g_row = view.G + (size_t)a * p->ncols;
    for (int k = 0; k < p->ncols; k++) vec[p->cols[k]] += g_row[k] * local[a];
  }
}

static jyStatus assemble_mass(jyEval *e, const jyModelPart *p, const jyPartState *s, int mapped,
                              unsigned what) {
  int nc = p->inst.ncoords, w = p->ncols;
  memset(e->local_mass, 0, sizeof(double) * (size_t)nc * nc);
  if (p->inst.type->mass(jy_eval_inst(e, p), s, e->local_mass) != 0)
    return jy_part_failed(e, p, "mass", s->t);
  if (!part_output_finite(e, e->local_mass, nc * nc)) return not_finite(e, p, "mass", s->t);
  for (int a = 0; a < nc && e->mass_diagonal; a++)
    for (int b = 0; b < nc; b++)
      if (a != b && e->local_mass[a + (size_t)b * nc] != 0) {
        e->mass_diagonal = 0;
        break;
      }
  Sink sink = sink_of(e, 1, what);
  const int *slot = e->slots + e->mass_slot_at[p - e->model->parts];
  if (!mapped) {
    add_block(&sink, slot, NULL, p->coord_offset, nc, NULL, p->coord_offset, nc, e->local_mass,
              1.0);
    return JY_OK;
  }
  e->mass_diagonal = 0; /* G^T M G: not diagonal in general */
  part_view view = view_buffers(e, p);
  double *mg = e->block, *gmg = e->block + (size_t)w * nc; /* M_loc G, then G^T (M_loc G) */
  times_view(p, &view, e->local_mass, nc, mg);
  for (int l = 0; l < w; l++) /* the upper triangle, mirrored: G^T M G is symmetric */
    for (int k = 0; k <= l; k++) {
      double sum = 0;
      for (int a = 0; a < nc; a++) sum += view.G[(size_t)a * w + k] * mg[a + (size_t)l * nc];
      gmg[k + (size_t)l * w] = gmg[l + (size_t)k * w] = sum;
    }
  add_block(&sink, slot, p->cols, 0, w, p->cols, 0, w, gmg, 1.0);
  if (what & JY_ASM_FORCE) /* Q -= G^T M_loc g: with Q_loc, mapped once (assemble_part) */
    for (int a = 0; a < nc; a++) {
      double h = 0;
      for (int b = 0; b < nc; b++) h += e->local_mass[a + (size_t)b * nc] * view.g[b];
      e->local_bias[a] = -h;
    }
  return JY_OK;
}

/* The part's rows inactive in its current mode become zero rows with zero right-hand side,
 * residual and rate (the solves leave them out as well: e->dependent holds them). */
static void leave_out_inactive_rows(jyEval *e, const jyModelPart *p) {
  int nc = p->inst.ncoords, nr = p->inst.nrows;
  for (int i = 0; i < nr; i++) {
    if (!e->inactive[p->row_offset + i]) continue;
    for (int a = 0; a < nc; a++) e->local_jac[i + (size_t)a * nr] = 0.0;
    e->local_rhs[i] = e->local_res[i] = e->local_rate[i] = 0.0;
  }
}

static jyStatus assemble_part(jyEval *e, const jyModelPart *p, const double *q, const double *v,
                              double t, unsigned what) {
  int nc = p->inst.ncoords, nr = p->inst.nrows, off = p->coord_offset;
  const jyPartType *type = p->inst.type;
  /* A part with nothing to give here (a marker in a force assembly) is not localized: its
   * view would call its terminals for nothing (a view is made on demand when asked). */
  int gives = (nc > 0 &&
               (((what & JY_ASM_MASS) && type->mass) ||
                ((what & JY_ASM_FORCE) && (type->force || type->mass)) ||
                ((what & JY_ASM_NONIDEAL) && type->nonideal))) ||
    ((what & (JY_ASM_CONSTRAINTS | JY_ASM_RESIDUALS)) && nr > 0);
  if (!gives) return JY_OK;
  const double *ql, *vl;
  int mapped;
  jyStatus st = localize(e, p, q, v, t, &ql, &vl, &mapped);
  if (st != JY_OK) return st;
  jyPartState s = jy_part_state(e, p, ql, vl, t);
  int biased = mapped && (what & JY_ASM_FORCE) && (what & JY_ASM_MASS) && type->mass && nc > 0;
  if ((what & JY_ASM_MASS) && type->mass && nc > 0) {
    st = assemble_mass(e, p, &s, mapped, what);
    if (st != JY_OK) return st;
  }
  if ((what & JY_ASM_FORCE) && (type->force || biased) && nc > 0) {
    memset(e->local_vec, 0, sizeof(double) * (size_t)nc);
    if (type->force && type->force(jy_eval_inst(e, p), &s, e->local_vec) != 0)
      return jy_part_failed(e, p, "force", t);
    if (!part_output_finite(e, e->local_vec, nc)) return not_finite(e, p, "force", t);
    for (int a = 0; biased && a < nc; a++) e->local_vec[a] += e->local_bias[a];
    add_force(e, p, mapped, e->force, e->local_vec);
  }
  if ((what & JY_ASM_NONIDEAL) && type->nonideal && nc > 0) {
    memset(e->local_vec, 0, sizeof(double) * (size_t)nc);
    if (type->nonideal(jy_eval_inst(e, p), &s, e->local_vec) != 0)
      return jy_part_failed(e, p, "nonideal", t);
    if (!part_output_finite(e, e->local_vec, nc)) return not_finite(e, p, "nonideal", t);
    add_force(e, p, mapped, e->nonideal, e->local_vec);
  }
  if ((what & (JY_ASM_CONSTRAINTS | JY_ASM_RESIDUALS)) && nr > 0) {
    if (!type->constraints) {
      jy_set_error(e->error,
                   "part '%s' (%s) declares %d constraint rows but no constraints "
                   "function",
                   p->inst.name, type->name, nr);
      return JY_ERR_PART;
    }
    memset(e->local_jac, 0, sizeof(double) * (size_t)nr * (nc > 0 ? nc : 1));
    memset(e->local_rhs, 0, sizeof(double) * (size_t)nr);
    memset(e->local_res, 0, sizeof(double) * (size_t)nr);
    memset(e->local_rate, 0, sizeof(double) * (size_t)nr);
    /* the residuals alone: the part may skip its Jacobian (JY_PART_RESIDUALS_ALONE) */
    int alone = !(what & JY_ASM_CONSTRAINTS) && (p->shape->flags & JY_PART_RESIDUALS_ALONE);
    if (type->constraints(jy_eval_inst(e, p), &s, alone ? NULL : e->local_jac,
                          alone ? NULL : e->local_rhs, e->local_res, e->local_rate) != 0)
      return jy_part_failed(e, p, "constraints", t);
    if (!part_output_finite(e, e->local_jac, nr * nc) || !part_output_finite(e, e->local_rhs, nr) ||
        !part_output_finite(e, e->local_res, nr) || !part_output_finite(e, e->local_rate, nr))
      return not_finite(e, p, "constraints", t);
    if (e->inactive) leave_out_inactive_rows(e, p);
    if (what & JY_ASM_CONSTRAINTS) {
      part_view view = mapped ? view_buffers(e, p) : (part_view){0};
      for (int i = 0; i < nr; i++) {
        double rhs = e->local_rhs[i];
        if (mapped && !p->gather) /* a gathered view's g is 0 */
          for (int a = 0; a < nc; a++) rhs -= e->local_jac[i + (size_t)a * nr] * view.g[a];
        e->rhs[p->row_offset + i] = rhs;
      }
      Sink sink = sink_of(e, 0, what);
      const int *slot = e->slots + e->row_slot_at[p - e->model->parts];
      if (p->gather) {
        add_gathered(&sink, slot, p, e->local_jac, nr);
      } else if (mapped) {
        times_view(p, &view, e->local_jac, nr, e->block);
        add_block(&sink, slot, NULL, p->row_offset, nr, p->cols, 0, p->ncols, e->block, 1.0);
      } else {
        add_block(&sink, slot, NULL, p->row_offset, nr, NULL, off, nc, e->local_jac, 1.0);
      }
    }
    if (what & JY_ASM_RESIDUALS)
      for (int i = 0; i < nr; i++) {
        e->residual[p->row_offset + i] = e->local_res[i];
        e->rate[p->row_offset + i] = e->local_rate[i];
      }
  }
  return JY_OK;
}

/* One side of a glue row block: adds sign * J G into A, and returns the terminal's value,
 * velocity and acceleration bias in global terms (p'' = J G q'' + acc). */
static jyStatus glue_side(jyEval *e, const jyModelGlue *g, int part, int terminal, double sign,
                          const double *q, const double *v, double t, unsigned what, double *value,
                          double *rate, double *acc) {
  const jyModel *m = e->model;
  const jyModelPart *p = &m->parts[part];
  const double *ql, *vl;
  int mapped, dim = g->dim, nc = p->inst.ncoords;
  jyStatus st = localize(e, p, q, v, t, &ql, &vl, &mapped);
  if (st != JY_OK) return st;
  terminal_eval te;
  st = eval_terminal(e, p, terminal, ql, vl, t, e->term_jac_a, &te);
  if (st != JY_OK) return st;
  part_view view = mapped ? view_buffers(e, p) : (part_view){0};
  for (int c = 0; c < dim; c++) {
    value[c] = te.value[c];
    rate[c] = te.vel_bias[c];
    acc[c] = te.acc_bias[c];
    for (int a = 0; a < nc; a++) {
      double jca = e->term_jac_a[c + (size_t)a * dim];
      rate[c] += jca * vl[a];
      if (mapped) acc[c] += jca * view.g[a];
    }
  }
  if (what & JY_ASM_CONSTRAINTS) {
    Sink sink = sink_of(e, 0, what);
    /* the glue's slots: part a's columns, then part b's */
    const int *slot = e->slots + e->glue_slot_at[g - m->glues];
    if (sign < 0) slot += (size_t)dim * m->parts[g->part_a].ncols;
    if (mapped) {
      times_view(p, &view, e->term_jac_a, dim, e->block);
      add_block(&sink, slot, NULL, g->row_offset, dim, p->cols, 0, p->ncols, e->block, sign);
    } else {
      add_block(&sink, slot, NULL, g->row_offset, dim, NULL, p->coord_offset, nc, e->term_jac_a,
                sign);
    }
  }
  return JY_OK;
}

static jyStatus assemble_glue(jyEval *e, const jyModelGlue *g, const double *q, const double *v,
                              double t, unsigned what) {
  double va[JY_TERMINAL_MAX_DIM], ra[JY_TERMINAL_MAX_DIM], aa[JY_TERMINAL_MAX_DIM];
  double vb[JY_TERMINAL_MAX_DIM], rb[JY_TERMINAL_MAX_DIM], ab[JY_TERMINAL_MAX_DIM];
  jyStatus st = glue_side(e, g, g->part_a, g->terminal_a, 1.0, q, v, t, what, va, ra, aa);
  if (st == JY_OK) st = glue_side(e, g, g->part_b, g->terminal_b, -1.0, q, v, t, what, vb, rb, ab);
  if (st != JY_OK) return st;
  int r0 = g->row_offset;
  for (int c = 0; c < g->dim; c++) {
    if (what & JY_ASM_CONSTRAINTS) e->rhs[r0 + c] = -(aa[c] - ab[c]);
    if (what & JY_ASM_RESIDUALS) {
      e->residual[r0 + c] = va[c] - vb[c];
      e->rate[r0 + c] = ra[c] - rb[c];
    }
  }
  return JY_OK;
}

static jyStatus assemble_pass(jyEval *e, const double *q, const double *v, double t,
                              unsigned what) {
  const jyModel *m = e->model;
  size_t n = (size_t)m->n, rows = (size_t)m->m;
  /* The store is filled whenever the evaluator solves there, the dense arrays unless the
   * caller wants the store alone: only the entries a sink receives are cleared. */
  int store = e->store_solves, dense = !(store && (what & JY_ASM_SPARSE_ONLY));
  unsigned matrices = what & (JY_ASM_MASS | JY_ASM_CONSTRAINTS);
  if (matrices) e->matrices_valid = 0; /* until this assembly is whole */
  if ((what & JY_ASM_MASS) && !dense && e->mass_kept)
    what &= ~(unsigned)JY_ASM_MASS;         /* the store's M stands (mass_constant) */
  if (what & JY_ASM_MASS) e->mass_kept = 0; /* until this assembly is whole and finite */
  e->store_valid = store ? (e->store_valid | matrices) : 0;
  e->dense_valid = dense ? (e->dense_valid | matrices) : (e->dense_valid & ~matrices);
  if (!e->mass) e->dense_valid &= ~(unsigned)JY_ASM_MASS;
  if (!e->jac) e->dense_valid &= ~(unsigned)JY_ASM_CONSTRAINTS;
  if (what & JY_ASM_MASS) {
    if (dense && e->mass) memset(e->mass, 0, sizeof(double) * n * n);
    if (store) memset(e->store_mass.x, 0, sizeof(double) * (size_t)e->store_mass.p[n]);
    e->mass_diagonal = 1;
  }
  if (what & JY_ASM_FORCE) memset(e->force, 0, sizeof(double) * n);
  if (what & JY_ASM_NONIDEAL) memset(e->nonideal, 0, sizeof(double) * n);
  if (what & JY_ASM_CONSTRAINTS) {
    if (dense && e->jac) memset(e->jac, 0, sizeof(double) * rows * n);
    if (store) memset(e->store_jac.x, 0, sizeof(double) * (size_t)e->store_jac.p[n]);
    memset(e->rhs, 0, sizeof(double) * rows);
  }
  if (what & JY_ASM_RESIDUALS) {
    memset(e->residual, 0, sizeof(double) * rows);
    memset(e->rate, 0, sizeof(double) * rows);
  }
  e->view_epoch++; /* a new state: every view is computed again, once */
  int rows_only = !(what & (JY_ASM_MASS | JY_ASM_FORCE | JY_ASM_NONIDEAL));
  const unsigned row_work = JY_ASM_CONSTRAINTS | JY_ASM_RESIDUALS;
  const unsigned char *only = (what & row_work) ? e->row_filter : NULL;
  for (int i = 0; i < m->nparts; i++) {
    unsigned part_what = only && !only[i] ? what & ~row_work : what;
    if (rows_only && (m->parts[i].inst.nrows == 0 || !(part_what & row_work)))
      continue; /* (a view is made on demand) */
    jyStatus st = assemble_part(e, &m->parts[i], q, v, t, part_what);
    if (st != JY_OK) return st;
  }
  if (what & row_work)
    for (int g = 0; g < m->nglues; g++) {
      if (m->glues[g].link >= 0 || (only && !only[m->nparts + g])) continue; /* no rows */
      jyStatus st = assemble_glue(e, &m->glues[g], q, v, t, what);
      if (st != JY_OK) return st;
    }
  if (only) { /* some rows left out: not an A to solve with */
    e->store_valid &= ~(unsigned)JY_ASM_CONSTRAINTS;
    e->dense_valid &= ~(unsigned)JY_ASM_CONSTRAINTS;
    return JY_OK;
  }
  if (store && matrices == (JY_ASM_MASS | JY_ASM_CONSTRAINTS)) {
    memcpy(e->matrices_state, q, sizeof(double) * n);
    memcpy(e->matrices_state + n, v, sizeof(double) * n);
    e->matrices_t = t;
    e->matrices_valid = 1;
  }
  return JY_OK;
}

/* Whether every array the assembly of `what` filled is finite. */
static int assembled_finite(const jyEval *e, unsigned what) {
  const jyModel *m = e->model;
  size_t n = (size_t)m->n, rows = (size_t)m->m;
  int store = e->store_solves, dense = !(store && (what & JY_ASM_SPARSE_ONLY));
  int ok = 1;
  if (what & JY_ASM_MASS) {
    if (store) ok &= jy_all_finite(e->store_mass.x, (size_t)e->store_mass.p[n]);
    if (dense && e->mass) ok &= jy_all_finite(e->mass, n * n);
  }
  if (what & JY_ASM_FORCE) ok &= jy_all_finite(e->force, n);
  if (what & JY_ASM_NONIDEAL) ok &= jy_all_finite(e->nonideal, n);
  if (what & JY_ASM_CONSTRAINTS) {
    if (store) ok &= jy_all_finite(e->store_jac.x, (size_t)e->store_jac.p[n]);
    if (dense && e->jac) ok &= jy_all_finite(e->jac, rows * n);
    ok &= jy_all_finite(e->rhs, rows);
  }
  if (what & JY_ASM_RESIDUALS)
    ok &= jy_all_finite(e->residual, rows) && jy_all_finite(e->rate, rows);
  return ok;
}

/* The parts' outputs are checked once, in the arrays they were assembled into, rather than
 * call by call (on a chain of pendulum parts the checks were 5 % of the run): an output
 * that is not finite reaches them wherever it counts, since every output used is added or
 * multiplied in (one multiplied only by zeros, or of a row left out, counts for nothing).
 * Only when the arrays are not finite does a second pass check every call, to name the
 * part; when every call passes there (the sums overflowed), the assembly stands. */
jyStatus jy_assemble(jyEval *e, const double *q, const double *v, double t, unsigned what) {
  if (e->tree && (what & (JY_ASM_MASS | JY_ASM_FORCE | JY_ASM_NONIDEAL))) {
    /* a tree model keeps no G to map M, Q and C with: its solves are dyn_tree.c's */
    jy_set_error(e->error, "internal: M, Q or C assembled for a tree model (dyn_tree.c)");
    return JY_ERR_INVALID;
  }
  if (e->tree) return JY_OK; /* no rows: nothing else to assemble, no view needed */
  if (jy_eval_inputs_state(e, q, v, t) != JY_OK) return e->input_status;
  e->trust_parts = 1;
  jyStatus st = assemble_pass(e, q, v, t, what);
  e->trust_parts = 0;
  if (st != JY_OK) return st;
  if (assembled_finite(e, what)) {
    if ((what & JY_ASM_MASS) && e->store_solves && e->mass_constant) e->mass_kept = 1;
    return JY_OK;
  }
  return assemble_pass(e, q, v, t, what);
}

void jy_local_acceleration(jyEval *e, const jyModelPart *p, int mapped, const double *acc) {
  if (e->tree) { /* the last recursion's, at this state (a tree model has no G) */
    memcpy(e->acc_loc, e->tree->acc + e->tree->vec_at[p - e->model->parts],
           sizeof(double) * (size_t)p->inst.ncoords);
    return;
  }
  part_view view = mapped ? view_buffers(e, p) : (part_view){0};
  for (int a = 0; a < p->inst.ncoords; a++) {
    if (!mapped) {
      e->acc_loc[a] = acc[p->coord_offset + a];
      continue;
    }
    double x = view.g[a];
    const double *g_row = view.G + (size_t)a * p->ncols;
    for (int k = 0; k < p->ncols; k++) x += g_row[k] * acc[p->cols[k]];
    e->acc_loc[a] = x;
  }
}

jyStatus jy_part_nonideal(jyEval *e, const jyModelPart *p, const double *q, const double *v,
                          double t, const double *mu, const double *acc, const double **v_loc) {
  int nc = p->inst.ncoords; /* the caller's state: the views of its epoch stand */
  const jyPartType *type = p->inst.type;
  const double *ql;
  int mapped;
  jyStatus st = localize(e, p, q, v, t, &ql, v_loc, &mapped);
  if (st != JY_OK) return st;
  jyPartState s = jy_part_state(e, p, ql, *v_loc, t);
  memset(e->local_vec, 0, sizeof(double) * (size_t)nc);
  if (type->nonideal && type->nonideal(jy_eval_inst(e, p), &s, e->local_vec) != 0)
    return jy_part_failed(e, p, "nonideal", t);
  if (type->nonideal_law && !(p->shape->flags & JY_PART_NO_LAW)) {
    jy_local_acceleration(e, p, mapped, acc);
    double extra[JY_PART_MAX_COORDS] = {0};
    if (type->nonideal_law(jy_eval_inst(e, p), &s, mu + p->row_offset, e->acc_loc, extra) != 0)
      return jy_part_failed(e, p, "nonideal_law", t);
    for (int j = 0; j < nc; j++) e->local_vec[j] += extra[j];
  }
  if (!jy_all_finite(e->local_vec, nc)) return not_finite(e, p, "nonideal", t);
  return JY_OK;
}

jyStatus jy_assemble_laws(jyEval *e, const double *q, const double *v, double t, const double *mu,
                          const double *acc) {
  const jyModel *m = e->model;
  e->view_epoch++;
  for (int i = 0; i < m->nparts; i++) {
    const jyModelPart *p = &m->parts[i];
    int nc = p->inst.ncoords;
    if (!p->inst.type->nonideal_law || (p->shape->flags & JY_PART_NO_LAW) || nc == 0) continue;
    const double *ql, *vl;
    int mapped;
    jyStatus st = localize(e, p, q, v, t, &ql, &vl, &mapped);
    if (st != JY_OK) return st;
    jy_local_acceleration(e, p, mapped, acc);
    jyPartState s = jy_part_state(e, p, ql, vl, t);
    memset(e->local_vec, 0, sizeof(double) * (size_t)nc);
    if (p->inst.type->nonideal_law(jy_eval_inst(e, p), &s, mu + p->row_offset, e->acc_loc,
                                   e->local_vec))
      return jy_part_failed(e, p, "nonideal_law", t);
    if (!jy_all_finite(e->local_vec, nc)) return not_finite(e, p, "nonideal_law", t);
    add_force(e, p, mapped, e->nonideal, e->local_vec);
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
    } else if (m->row_kinds[i] == JY_ROW_VELOCITY) {
      sv += e->residual[i] * e->residual[i];
    }
  }
  *pos = sqrt(sp);
  *vel = sqrt(sv);
}

jyStatus jy_tree_load_part(jyEval *e, const jyModelPart *p, const double *q, const double *v,
                           double t, double *mass, double *force, double *power) {
  int nc = p->inst.ncoords;
  const jyPartType *type = p->inst.type;
  const double *ql, *vl;
  int mapped;
  jyStatus st = localize(e, p, q, v, t, &ql, &vl, &mapped);
  if (st != JY_OK || nc == 0) return st;
  jyPartState s = jy_part_state(e, p, ql, vl, t);
  if (type->mass) {
    memset(e->local_mass, 0, sizeof(double) * (size_t)nc * nc);
    if (type->mass(jy_eval_inst(e, p), &s, e->local_mass) != 0)
      return jy_part_failed(e, p, "mass", t);
    if (!part_output_finite(e, e->local_mass, nc * nc)) return not_finite(e, p, "mass", t);
    for (int a = 0; a < nc * nc; a++) mass[a] += e->local_mass[a];
  }
  if (type->force) {
    memset(e->local_vec, 0, sizeof(double) * (size_t)nc);
    if (type->force(jy_eval_inst(e, p), &s, e->local_vec) != 0)
      return jy_part_failed(e, p, "force", t);
    if (!part_output_finite(e, e->local_vec, nc)) return not_finite(e, p, "force", t);
    for (int a = 0; a < nc; a++) force[a] += e->local_vec[a];
  }
  if (type->nonideal) {
    memset(e->local_vec, 0, sizeof(double) * (size_t)nc);
    if (type->nonideal(jy_eval_inst(e, p), &s, e->local_vec) != 0)
      return jy_part_failed(e, p, "nonideal", t);
    if (!part_output_finite(e, e->local_vec, nc)) return not_finite(e, p, "nonideal", t);
    const double *bias = mapped ? view_buffers(e, p).g : NULL; /* the view's velocity bias */
    for (int a = 0; a < nc; a++) {
      force[a] += e->local_vec[a];
      *power += e->local_vec[a] * (vl[a] - (bias ? bias[a] : 0.0));
    }
  }
  return JY_OK;
}
