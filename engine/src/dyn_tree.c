/* The articulated recursion of a tree model (internal.h, jyModel.tree): no rows, every glue
 * eliminated, each part with links following one source part (or a massless force element
 * between parts). M q'' = Q + C in the model's coordinates is then solved in O(1) a part,
 * the block elimination of M in the order of the tree, without forming M or any G:
 *
 * leaves to root, each part's articulated mass and force (its own M_loc, Q + C, plus what
 * its followers pass up) in its own coordinates, split into the kept ones K and those its
 * links eliminated, E: with the K block factored, M' = M_EE - M_EK M_KK^-1 M_KE and
 * Q' = Q_E - M_EK M_KK^-1 Q_K are the inertia and force the block passes to its source
 * through the terminal it follows (q_E'' = J q_src'' + gamma): M_src += J^T M' J,
 * Q_src += J^T (Q' - M' gamma). A root (no links) solves M a = Q.
 *
 * root to leaves, a_E = J a_src + gamma, then a_K = M_KK^-1 (Q_K - M_KE a_E); the glue's force
 * on the block is (M a - Q)_E.
 *
 * M is positive definite exactly when every K block is (they are the pivots of that block
 * elimination), so a block that is not means the acceleration is not unique: said, with the
 * part and its coordinates. docs/numerics.md, "The tree recursion". */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

jyTreeWork *jy_tree_create(const jyEval *e) {
  const jyModel *md = e->model;
  const jyAllocator *a = &md->alloc;
  size_t np = (size_t)md->nparts, nl = (size_t)md->nlinks, mats = 0, vecs = 0, jacs = 0;
  jyTreeWork *w = jy_calloc(a, 1, sizeof *w);
  if (!w) return NULL;
  w->mat_at = jy_calloc(a, np + 1, sizeof(size_t));
  w->vec_at = jy_calloc(a, np + 1, sizeof(size_t));
  w->link_jac_at = jy_calloc(a, nl + 1, sizeof(size_t));
  if (!w->mat_at || !w->vec_at || !w->link_jac_at) goto fail;
  for (size_t i = 0; i < np; i++) {
    size_t nc = (size_t)md->parts[i].inst.ncoords;
    w->mat_at[i] = mats, w->vec_at[i] = vecs;
    mats += nc * (nc + 1);
    vecs += nc;
  }
  for (size_t l = 0; l < nl; l++) {
    w->link_jac_at[l] = jacs;
    int ns = md->parts[md->links[l].source].inst.ncoords; /* eval_terminal clears one column */
    jacs += (size_t)md->links[l].dim * (size_t)(ns > 0 ? ns : 1); /* when there are none */
  }
  w->mats = mats, w->vecs = vecs;
  /* each part's kept local coordinates, then those its links eliminated; its one source */
  w->coords = jy_calloc(a, vecs + 1, sizeof(int));
  w->nkept = jy_calloc(a, np + 1, sizeof(int));
  w->source = jy_calloc(a, np + 1, sizeof(int));
  size_t widest = (size_t)md->max_part_cols + 1;
  w->scratch = jy_calloc(a, 4 * widest * widest + 4 * widest, sizeof(double));
  if (!w->coords || !w->nkept || !w->source || !w->scratch) goto fail;
  for (size_t i = 0; i < np; i++) {
    const jyModelPart *p = &md->parts[i];
    int *list = w->coords + w->vec_at[i], nc = p->inst.ncoords, at = 0;
    for (int j = 0; j < nc; j++)
      if (p->coord_map[j] >= 0) list[at++] = j;
    w->nkept[i] = at;
    for (int j = 0; j < nc; j++)
      if (p->coord_map[j] < 0) list[at++] = j;
    w->source[i] = p->nlinks > 0 ? md->links[p->first_link].source : -1;
    for (int l = p->first_link; l < p->first_link + p->nlinks; l++)
      if (md->links[l].source != w->source[i]) w->source[i] = -1; /* a force element */
  }
  w->mass = jy_calloc(a, mats + 1, sizeof(double));
  w->factor = jy_calloc(a, mats + 1, sizeof(double));
  w->reduced = jy_calloc(a, mats + 1, sizeof(double));
  w->force = jy_calloc(a, vecs + 1, sizeof(double));
  w->acc = jy_calloc(a, vecs + 1, sizeof(double));
  w->link_jac = jy_calloc(a, jacs + 1, sizeof(double));
  w->link_bias = jy_calloc(a, nl * JY_TERMINAL_MAX_DIM + 1, sizeof(double));
  w->link_force = jy_calloc(a, nl * JY_TERMINAL_MAX_DIM + 1, sizeof(double));
  if (w->mass && w->factor && w->reduced && w->force && w->acc && w->link_jac && w->link_bias &&
      w->link_force)
    return w;
fail:
  jy_tree_destroy(a, w);
  return NULL;
}

void jy_tree_destroy(const jyAllocator *a, jyTreeWork *w) {
  if (!w) return;
  jy_free(a, w->mat_at);
  jy_free(a, w->vec_at);
  jy_free(a, w->link_jac_at);
  jy_free(a, w->mass);
  jy_free(a, w->factor);
  jy_free(a, w->reduced);
  jy_free(a, w->force);
  jy_free(a, w->acc);
  jy_free(a, w->link_jac);
  jy_free(a, w->link_bias);
  jy_free(a, w->link_force);
  jy_free(a, w->coords);
  jy_free(a, w->nkept);
  jy_free(a, w->source);
  jy_free(a, w->scratch);
  jy_free(a, w);
}

/* A pivot block is taken as positive definite when its Cholesky pivots (squared) all exceed
 * this much of the largest diagonal entry of the part's articulated mass: rounding leaves
 * ~1e-16 of it where a coordinate carries no mass at all (a massless slider whose
 * follower's inertia cancels in its direction), and a real ratio of 1e12 between the
 * inertias of one part's coordinates is beyond any model's. */
static const double PIVOT_FLOOR = 1e-12;

/* The largest diagonal entry of a part's nc x nc articulated mass. */
static double mass_scale(const double *mass, int nc) {
  double largest = 0;
  for (int j = 0; j < nc; j++) largest = fmax(largest, mass[j + (size_t)j * nc]);
  return largest;
}

/* Factors the nk x nk block (column-major, leading dimension nk) in place, lower Cholesky;
 * a 1 x 1 block is its own factor. 0, or -1 when it is not positive definite against
 * scale (mass_scale of its part). */
int jy_tree_factor_block(double *block, int nk, double scale) {
  double floor = PIVOT_FLOOR * scale;
  if (!(scale > 0)) return -1;
  if (nk == 1) return block[0] > floor ? 0 : -1;
  if (LAPACKE_dpotrf_work(LAPACK_COL_MAJOR, 'L', nk, block, nk) != 0) return -1;
  for (int k = 0; k < nk; k++) {
    double pivot = block[k + (size_t)k * nk];
    if (!(pivot * pivot > floor)) return -1;
  }
  return 0;
}

/* Blocks up to this size are solved by substitution with dpotrf's factor: dpotrs' two
 * dtrsm calls cost ~4,000 instructions on a 3 x 3 block with 7 columns, eight times the
 * arithmetic (a ball joint's block, once per body and right-hand side). */
#define SUBSTITUTE_MAX 6

/* Solves (factored block) X = rhs in place for ncols columns (leading dimension nk). */
void jy_tree_solve_block(const double *factor, int nk, double *rhs, int ncols) {
  if (nk == 1) {
    for (int c = 0; c < ncols; c++) rhs[c] /= factor[0];
    return;
  }
  if (nk > SUBSTITUTE_MAX) {
    LAPACKE_dpotrs_work(LAPACK_COL_MAJOR, 'L', nk, ncols, factor, nk, rhs, nk);
    return;
  }
  for (int c = 0; c < ncols; c++) { /* L y = x, then L^T z = y */
    double *x = rhs + (size_t)c * (size_t)nk;
    for (int i = 0; i < nk; i++) {
      double s = x[i];
      for (int k = 0; k < i; k++) s -= factor[i + k * nk] * x[k];
      x[i] = s / factor[i + i * nk];
    }
    for (int i = nk - 1; i >= 0; i--) {
      double s = x[i];
      for (int k = i + 1; k < nk; k++) s -= factor[k + i * nk] * x[k];
      x[i] = s / factor[i + i * nk];
    }
  }
}

static jyStatus not_positive(jyEval *e, const jyModelPart *p, const int *kept, int nk, double t) {
  const jyModel *m = e->model;
  char names[512] = "";
  for (int k = 0, used = 0; k < nk && used + 1 < (int)sizeof names; k++)
    used += snprintf(names + used, sizeof names - (size_t)used, "%s%s", k ? ", " : "",
                     m->coord_names[p->coord_map[kept[k]]]);
  jy_set_error(e->error,
               "acceleration not unique at t = %.9g: part '%s' (%s): its coordinates %s carry "
               "no mass, with the parts that follow it (their articulated mass is not positive "
               "definite); give them mass or glue them to something",
               t, p->inst.name, p->inst.type->name, names);
  return JY_ERR_NOT_UNIQUE;
}

/* The stacked Jacobian JE (ne x ns, column-major) and bias of a child's eliminated
 * coordinates, all following terminals of its one source, gathered from its links. */
static void gather_links(const jyEval *e, const jyModelPart *p, const int *elim, int ne, int ns,
                         double *je, double *gamma) {
  const jyModel *m = e->model;
  const jyTreeWork *w = e->tree;
  for (int a = 0; a < ne; a++) {
    int l = -1 - p->coord_map[elim[a]], row = elim[a] - m->links[l].offset, dim = m->links[l].dim;
    const double *jac = w->link_jac + w->link_jac_at[l];
    gamma[a] = w->link_bias[(size_t)l * JY_TERMINAL_MAX_DIM + (size_t)row];
    for (int i = 0; i < ns; i++) je[a + (size_t)i * ne] = jac[row + (size_t)i * dim];
  }
}

/* Leaves to root for one part with links: its K block factored, M' and Q' passed to the
 * sources of its links. */
static jyStatus pass_up(jyEval *e, const jyModelPart *p, double t) {
  const jyModel *m = e->model;
  jyTreeWork *w = e->tree;
  size_t index = (size_t)(p - m->parts);
  int nc = p->inst.ncoords, nk = w->nkept[index], ne = nc - nk;
  const int *kept = w->coords + w->vec_at[index], *elim = kept + nk;
  const double *mass = w->mass + w->mat_at[index], *force = w->force + w->vec_at[index];
  double *factor = w->factor + w->mat_at[index], *reduced = w->reduced + w->mat_at[index];
  double *mp = w->scratch, *qp = mp + (size_t)ne * ne; /* M' (ne x ne), Q' (ne) */
  for (int b = 0; b < ne; b++) {
    qp[b] = force[elim[b]];
    for (int a = 0; a < ne; a++) mp[a + (size_t)b * ne] = mass[elim[a] + (size_t)elim[b] * nc];
  }
  if (nk > 0) {
    for (int b = 0; b < nk; b++)
      for (int a = 0; a < nk; a++)
        factor[a + (size_t)b * nk] = mass[kept[a] + (size_t)kept[b] * nc];
    if (jy_tree_factor_block(factor, nk, mass_scale(mass, nc)) != 0)
      return not_positive(e, p, kept, nk, t);
    /* reduced = M_KK^-1 [M_KE, Q_K] (nk x (ne + 1)) */
    for (int b = 0; b < ne; b++)
      for (int a = 0; a < nk; a++)
        reduced[a + (size_t)b * nk] = mass[kept[a] + (size_t)elim[b] * nc];
    for (int a = 0; a < nk; a++) reduced[a + (size_t)ne * nk] = force[kept[a]];
    jy_tree_solve_block(factor, nk, reduced, ne + 1);
    for (int b = 0; b <= ne; b++) {
      double *out = b < ne ? mp + (size_t)b * ne : qp;
      const double *x = reduced + (size_t)b * nk;
      for (int k = 0; k < nk; k++) {
        const double *mek = mass + (size_t)kept[k] * nc; /* column kept[k]: M_EK there */
        for (int a = 0; a < ne; a++) out[a] -= mek[elim[a]] * x[k];
      }
    }
  }
  int source = w->source[index];
  if (source < 0) { /* a force element between parts: no inertia, its force to each source */
    for (int a = 0; a < ne; a++) {
      const jyModelLink *la = &m->links[-1 - p->coord_map[elim[a]]];
      int ca = elim[a] - la->offset, ns = m->parts[la->source].inst.ncoords;
      const double *ja = w->link_jac + w->link_jac_at[la - m->links];
      double *src_force = w->force + w->vec_at[la->source];
      for (int i = 0; i < ns; i++) src_force[i] += ja[ca + (size_t)i * la->dim] * qp[a];
    }
    return JY_OK;
  }
  /* the source: Q_s += JE^T (Q' - M' gamma), M_s += JE^T (M' JE) */
  int ns = m->parts[source].inst.ncoords;
  double *je = qp + ne, *gamma = je + (size_t)ne * ns, *mj = gamma + ne;
  gather_links(e, p, elim, ne, ns, je, gamma);
  for (int b = 0; b < ne; b++)
    for (int a = 0; a < ne; a++) qp[a] -= mp[a + (size_t)b * ne] * gamma[b];
  double *src_force = w->force + w->vec_at[source], *src_mass = w->mass + w->mat_at[source];
  for (int i = 0; i < ns; i++) {
    double sum = 0;
    for (int a = 0; a < ne; a++) sum += je[a + (size_t)i * ne] * qp[a];
    src_force[i] += sum;
  }
  for (int i = 0; i < ns; i++) /* mj = M' JE */
    for (int a = 0; a < ne; a++) {
      double sum = 0;
      for (int b = 0; b < ne; b++) sum += mp[a + (size_t)b * ne] * je[b + (size_t)i * ne];
      mj[a + (size_t)i * ne] = sum;
    }
  for (int i2 = 0; i2 < ns; i2++)
    for (int i = 0; i < ns; i++) {
      double sum = 0;
      for (int a = 0; a < ne; a++) sum += je[a + (size_t)i * ne] * mj[a + (size_t)i2 * ne];
      src_mass[i + (size_t)i2 * ns] += sum;
    }
  return JY_OK;
}

/* A root (no links): M a = Q over all its coordinates, diagonal M by division. */
static jyStatus solve_root(jyEval *e, const jyModelPart *p, double t, double *acc) {
  const jyModel *m = e->model;
  jyTreeWork *w = e->tree;
  size_t index = (size_t)(p - m->parts);
  int nc = p->inst.ncoords;
  const int *kept = w->coords + w->vec_at[index]; /* all its coordinates: a root keeps them */
  if (nc == 0) return JY_OK;
  const double *mass = w->mass + w->mat_at[index];
  double *a_loc = w->acc + w->vec_at[index], *factor = w->factor + w->mat_at[index];
  memcpy(a_loc, w->force + w->vec_at[index], sizeof(double) * (size_t)nc);
  double scale = mass_scale(mass, nc);
  int diagonal = 1;
  for (int b = 0; b < nc && diagonal; b++)
    for (int a = 0; a < nc; a++)
      if (a != b && mass[a + (size_t)b * nc] != 0) {
        diagonal = 0;
        break;
      }
  if (diagonal) {
    for (int a = 0; a < nc; a++) {
      if (!(mass[a + (size_t)a * nc] > PIVOT_FLOOR * scale)) return not_positive(e, p, kept, nc, t);
      a_loc[a] /= mass[a + (size_t)a * nc];
    }
  } else {
    memcpy(factor, mass, sizeof(double) * (size_t)nc * nc);
    if (jy_tree_factor_block(factor, nc, scale) != 0) return not_positive(e, p, kept, nc, t);
    jy_tree_solve_block(factor, nc, a_loc, 1);
  }
  for (int a = 0; a < nc; a++) acc[p->coord_map[a]] = a_loc[a];
  return JY_OK;
}

/* Root to leaves for one part with links: a_E from its sources, a_K from its K block; with
 * glue_forces, (M a - Q)_E into its links' forces. */
static void pass_down(jyEval *e, const jyModelPart *p, double *acc, int glue_forces) {
  const jyModel *m = e->model;
  jyTreeWork *w = e->tree;
  size_t index = (size_t)(p - m->parts);
  int nc = p->inst.ncoords, nk = w->nkept[index], ne = nc - nk;
  const int *kept = w->coords + w->vec_at[index], *elim = kept + nk;
  double *a_loc = w->acc + w->vec_at[index];
  const double *reduced = w->reduced + w->mat_at[index];
  for (int a = 0; a < ne; a++) {
    const jyModelLink *la = &m->links[-1 - p->coord_map[elim[a]]];
    size_t l = (size_t)(la - m->links);
    int ca = elim[a] - la->offset, ns = m->parts[la->source].inst.ncoords;
    const double *ja = w->link_jac + w->link_jac_at[l];
    const double *a_src = w->acc + w->vec_at[la->source];
    double x = w->link_bias[l * JY_TERMINAL_MAX_DIM + (size_t)ca];
    for (int i = 0; i < ns; i++) x += ja[ca + (size_t)i * la->dim] * a_src[i];
    a_loc[elim[a]] = x;
  }
  for (int k = 0; k < nk; k++) {
    double x = reduced[k + (size_t)ne * nk];
    for (int b = 0; b < ne; b++) x -= reduced[k + (size_t)b * nk] * a_loc[elim[b]];
    a_loc[kept[k]] = x;
    acc[p->coord_map[kept[k]]] = x;
  }
  if (!glue_forces) return;
  const double *mass = w->mass + w->mat_at[index], *force = w->force + w->vec_at[index];
  for (int a = 0; a < ne; a++) {
    const jyModelLink *la = &m->links[-1 - p->coord_map[elim[a]]];
    double f = -force[elim[a]];
    for (int j = 0; j < nc; j++) f += mass[elim[a] + (size_t)j * nc] * a_loc[j];
    w->link_force[(size_t)(la - m->links) * JY_TERMINAL_MAX_DIM + (size_t)(elim[a] - la->offset)] =
      f;
  }
}

static jyStatus recursion(jyEval *e, const double *q, const double *v, double t, double *acc,
                          int glue_forces) {
  const jyModel *m = e->model;
  jyTreeWork *w = e->tree;
  int np = m->nparts;
  memset(w->mass, 0, sizeof(double) * w->mats);
  memset(w->force, 0, sizeof(double) * w->vecs);
  w->nonideal_power = 0;
  e->view_epoch++; /* a new state: each view (and its links' Jacobians) once */
  /* sources first, so that no view recurses up the chain (10,000 frames deep otherwise:
   * a thread's stack) */
  for (int at = 0; at < np; at++) {
    const jyModelPart *p = &m->parts[m->tree_order[at]];
    const double *ql, *vl;
    int mapped;
    jyStatus st = p->nlinks > 0 ? jy_localize_same_state(e, p, q, v, t, &ql, &vl, &mapped) : JY_OK;
    if (st != JY_OK) return st;
  }
  for (int at = np - 1; at >= 0; at--) {
    const jyModelPart *p = &m->parts[m->tree_order[at]];
    size_t index = (size_t)(p - m->parts);
    jyStatus st = jy_tree_load_part(e, p, q, v, t, w->mass + w->mat_at[index],
                                    w->force + w->vec_at[index], &w->nonideal_power);
    if (st == JY_OK) st = p->nlinks > 0 ? pass_up(e, p, t) : solve_root(e, p, t, acc);
    if (st != JY_OK) return st;
  }
  for (int at = 0; at < np; at++) {
    const jyModelPart *p = &m->parts[m->tree_order[at]];
    if (p->nlinks > 0) pass_down(e, p, acc, glue_forces);
  }
  return JY_OK;
}

/* As jy_assemble: the parts' outputs are trusted in a first pass, the acceleration checked;
 * only when it is not finite, or a pivot failed (a NaN fails it too, and is no "massless
 * coordinate"), does a second pass check every call, to name the part. */
jyStatus jy_tree_acceleration(jyEval *e, const double *q, const double *v, double t, double *acc,
                              int glue_forces) {
  const jyModel *m = e->model;
  if (jy_eval_inputs_state(e, q, v, t) != JY_OK) return e->input_status;
  e->trust_parts = 1;
  jyStatus st = recursion(e, q, v, t, acc, glue_forces);
  e->trust_parts = 0;
  if (st == JY_OK ? jy_all_finite(acc, (size_t)m->n) : st != JY_ERR_NOT_UNIQUE) return st;
  st = recursion(e, q, v, t, acc, glue_forces);
  if (st != JY_OK) return st;
  for (int j = 0; j < m->n; j++)
    if (!isfinite(acc[j])) {
      jy_set_error(e->error, "acceleration of %s is not finite at t = %.9g", m->coord_names[j], t);
      return JY_ERR_NOT_UNIQUE;
    }
  return JY_OK;
}
