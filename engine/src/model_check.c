/* The model doctor (jy_model_check): the size, rank and degrees of freedom of a compiled
 * model at its initial state, and what makes it suspect: redundant rows, massless
 * coordinates no row holds, free massless terminals, unconnected parts, and how near the
 * initial state is to a singular configuration. */
#include <lapacke.h>
#include <math.h>
#include <string.h>

#include "eval.h"
#include "internal.h"
#include "sim.h"

/* Row i as an item: its part, or its glue and the glue's parts. */
static jyCheckItem row_item(const jyModel *md, int i) {
  jyCheckItem it = {.index = i, .name = md->row_names[i]};
  if (md->row_part && md->row_part[i] >= 0) {
    it.part = md->parts[md->row_part[i]].inst.name;
    return it;
  }
  for (int g = 0; g < md->nglues; g++) {
    const jyModelGlue *mg = &md->glues[g];
    if (mg->row_offset >= 0 && i >= mg->row_offset && i < mg->row_offset + mg->dim) {
      it.glue = mg->name;
      it.part = md->parts[mg->part_a].inst.name;
      it.part_b = md->parts[mg->part_b].inst.name;
    }
  }
  return it;
}

/* Coordinate j as an item, with its part (owner: each coordinate's part, or -1). */
static jyCheckItem coord_item(const jyModel *md, const int *owner, int j) {
  return (jyCheckItem){.index = j,
                       .name = md->coord_names[j],
                       .part = owner[j] >= 0 ? md->parts[owner[j]].inst.name : NULL};
}

/* Singular values of the selected rows of A (each scaled to unit length) into sv (min(rows,
 * n)), with the right singular vector of the smallest into vec (n) when vec is given.
 * Returns the number of rows taken, or -1 when it cannot (no memory, too large, LAPACK). */
static int scaled_svd(const jyModel *md, const jyCsc *a, const double *norm,
                      const unsigned char *take, double *sv, double *vec) {
  const jyAllocator *alloc = &md->alloc;
  int n = md->n, rows = 0;
  int *slot = jy_calloc(alloc, (size_t)md->m + 1, sizeof(int));
  if (!slot) return -1;
  for (int i = 0; i < md->m; i++) slot[i] = take[i] && norm[i] > 0 ? rows++ : -1;
  if (rows == 0) {
    jy_free(alloc, slot);
    return 0;
  }
  int k = rows < n ? rows : n;
  if ((double)rows * rows * n > JY_SIGMA_MAX_WORK) {
    jy_free(alloc, slot);
    return -1;
  }
  double *dense = jy_calloc(alloc, (size_t)rows * (size_t)n, sizeof(double));
  double *vt = vec ? jy_calloc(alloc, (size_t)k * (size_t)n, sizeof(double)) : NULL;
  int ok = dense && (!vec || vt);
  if (ok) {
    for (int j = 0; j < n; j++)
      for (int p = a->p[j]; p < a->p[j + 1]; p++)
        if (slot[a->i[p]] >= 0)
          dense[slot[a->i[p]] + (size_t)j * (size_t)rows] = a->x[p] / sqrt(norm[a->i[p]]);
    char job = vec ? 'S' : 'N';
    double query = 0;
    ok = LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, 'N', job, rows, n, dense, rows, sv, NULL, 1, vt,
                             vec ? k : 1, &query, -1) == 0;
    if (ok) {
      lapack_int lwork = (lapack_int)query > 1 ? (lapack_int)query : 1;
      double *work = jy_calloc(alloc, (size_t)lwork, sizeof(double));
      ok = work &&
        LAPACKE_dgesvd_work(LAPACK_COL_MAJOR, 'N', job, rows, n, dense, rows, sv, NULL, 1, vt,
                            vec ? k : 1, work, lwork) == 0;
      jy_free(alloc, work);
    }
    if (ok && vec)
      for (int j = 0; j < n; j++) vec[j] = vt[(k - 1) + (size_t)j * (size_t)k];
  }
  jy_free(alloc, vt);
  jy_free(alloc, dense);
  jy_free(alloc, slot);
  return ok ? rows : -1;
}

static int rank_of(const double *sv, int count, double rcond) {
  int r = 0;
  for (int i = 0; i < count; i++) r += sv[i] > rcond * sv[0];
  return r;
}

static jyCheckItem *grow(const jyAllocator *a, jyCheckItem *list, int count) {
  jyCheckItem *bigger = jy_alloc(a, sizeof *bigger * (size_t)(count + 1));
  if (!bigger) return NULL;
  if (count) memcpy(bigger, list, sizeof *bigger * (size_t)count);
  jy_free(a, list);
  return bigger;
}

#define PUSH(list, count, item) PUSH_TO(&md->alloc, list, count, item)
#define PUSH_TO(alloc_, list, count, item)                 \
  do {                                                     \
    jyCheckItem *grown_ = grow((alloc_), (list), (count)); \
    if (!grown_) {                                         \
      st = JY_ERR_NOMEM;                                   \
      goto done;                                           \
    }                                                      \
    (list) = grown_;                                       \
    (list)[(count)++] = (item);                            \
  } while (0)

static void free_lists(const jyAllocator *a, jyModelCheck *c);

void jy_model_check_free(const jyModel *md, jyModelCheck *c) {
  if (md && c) free_lists(&md->alloc, c);
}

jyStatus jy_model_check(const jyModel *md, jyModelCheck *c) {
  if (!md || !c) return JY_ERR_INVALID;
  memset(c, 0, sizeof *c);
  const jyAllocator *alloc = &md->alloc;
  int n = md->n, m = md->m;
  c->coords = n;
  c->rows = m;
  c->sigma = NAN;
  c->sigma_tol = JY_CHECK_SINGULAR_TOL;
  for (int i = 0; i < m; i++) {
    if (md->row_kinds[i] == JY_ROW_POSITION)
      c->position_rows++;
    else
      c->velocity_rows++;
  }
  for (int i = 0; i < md->nmoved; i++) {
    const jyMovedValue *mv = &md->moved[i];
    if (mv->set)
      c->moved_set++;
    else if (mv->follows_glue)
      c->moved_follow++;
    else
      c->moved_unset++;
  }

  jyStatus st = JY_OK;
  jyEval *e = jy_eval_create(md);
  double *norm = jy_calloc(alloc, (size_t)m + 1, sizeof(double));
  double *sv = jy_calloc(alloc, (size_t)(m < n ? m : n) + 1, sizeof(double));
  double *vec = jy_calloc(alloc, (size_t)n + 1, sizeof(double));
  unsigned char *take = jy_calloc(alloc, (size_t)m + 1, 1);
  unsigned char *massive = jy_calloc(alloc, (size_t)n + 1, 1);
  unsigned char *in_row = jy_calloc(alloc, (size_t)n + 1, 1);
  int *owner = jy_calloc(alloc, (size_t)n + 1, sizeof(int));
  if (owner) {
    for (int j = 0; j < n; j++) owner[j] = -1;
    for (int i = 0; i < md->nparts; i++)
      for (int k = 0; k < md->parts[i].inst.ncoords; k++)
        if (md->parts[i].coord_map[k] >= 0) owner[md->parts[i].coord_map[k]] = i;
  }
  /* per part, a flag for each of its terminals (declared, then its coordinates) a glue holds,
   * at term_at[part]; and whether any glue holds the part */
  size_t *term_at = jy_calloc(alloc, (size_t)md->nparts + 1, sizeof(size_t));
  unsigned char *held = NULL, *connected = jy_calloc(alloc, (size_t)md->nparts + 1, 1);
  if (term_at) {
    for (int i = 0; i < md->nparts; i++)
      term_at[i + 1] =
        term_at[i] + (size_t)md->parts[i].shape->nterminals + (size_t)md->parts[i].inst.ncoords;
    held = jy_calloc(alloc, term_at[md->nparts] + 1, 1);
  }
  if (!e || !norm || !sv || !vec || !take || !massive || !in_row || !owner || !term_at || !held ||
      !connected) {
    st = JY_ERR_NOMEM;
    goto done;
  }
  st = jy_assemble(e, md->q0, md->v0, 0, JY_ASM_MASS | JY_ASM_CONSTRAINTS);
  if (st != JY_OK) goto done;

  /* mass: a column of M with an entry not zero */
  c->mass_known = !e->tree;
  if (e->tree) {
    for (int i = 0; i < md->nparts; i++) {
      const jyModelPart *p = &md->parts[i];
      for (int k = 0; k < p->inst.ncoords; k++)
        if (p->coord_map[k] >= 0 && p->inst.type->mass) massive[p->coord_map[k]] = 1;
    }
  } else if (e->store_valid & JY_ASM_MASS) {
    const jyCsc *ms = &e->store_mass;
    for (int j = 0; j < n; j++)
      for (int k = ms->p[j]; k < ms->p[j + 1]; k++)
        if (ms->x[k] != 0) massive[j] = 1;
  } else if (e->mass) {
    for (int j = 0; j < n; j++)
      for (int i = 0; i < n; i++)
        if (e->mass[i + (size_t)j * (size_t)n] != 0) massive[j] = 1;
  } else {
    c->mass_known = 0;
    memset(massive, 1, (size_t)n);
  }

  /* A: its rows' norms, the coordinates some row holds */
  if (m > 0) {
    const jyCsc *a = jy_eval_constraint_matrix(e);
    for (int j = 0; j < n; j++)
      for (int k = a->p[j]; k < a->p[j + 1]; k++) {
        norm[a->i[k]] += a->x[k] * a->x[k];
        if (a->x[k] != 0) in_row[j] = 1;
      }
    double rcond = md->solver.rank_rcond;
    int ok = 1, got;
    for (int i = 0; i < m; i++) take[i] = md->row_kinds[i] == JY_ROW_POSITION;
    got = scaled_svd(md, a, norm, take, sv, NULL);
    ok &= got >= 0;
    if (got >= 0) c->rank = got ? rank_of(sv, got < n ? got : n, rcond) : 0;
    for (int i = 0; i < m; i++) take[i] = 1;
    got = ok ? scaled_svd(md, a, norm, take, sv, NULL) : -1;
    ok &= got >= 0;
    if (got >= 0) c->rank_all = got ? rank_of(sv, got < n ? got : n, rcond) : 0;
    c->rank_from_svd = ok;
    if (!ok) { /* from the compile's dependent rows */
      c->rank = c->position_rows;
      c->rank_all = m - md->ndependent;
      for (int i = 0; i < m; i++)
        if (md->dependent_rows && md->dependent_rows[i] && md->row_kinds[i] == JY_ROW_POSITION)
          c->rank--;
    }
    /* the distance to a singular configuration: the rows the solve keeps */
    for (int i = 0; i < m; i++) take[i] = !(md->dependent_rows && md->dependent_rows[i]);
    got = scaled_svd(md, a, norm, take, sv, vec);
    if (got > 0) {
      int k = got < n ? got : n;
      c->sigma = sv[k - 1];
      c->near_singular = c->sigma < c->sigma_tol;
      for (int s = 0; s < JY_CHECK_SINGULAR_COORDS && s < n; s++) { /* the largest entries */
        int best = -1;
        for (int j = 0; j < n; j++) {
          int seen = 0;
          for (int r = 0; r < c->nsingular_coords; r++) seen |= c->singular_coords[r].index == j;
          if (!seen && (best < 0 || fabs(vec[j]) > fabs(vec[best]))) best = j;
        }
        if (best < 0 || fabs(vec[best]) < 0.1) break;
        jyCheckItem it = coord_item(md, owner, best);
        it.value = vec[best];
        c->singular_coords[c->nsingular_coords++] = it;
      }
    }
  }
  c->dof = n - c->rank;
  c->motion_dof = n - c->rank_all;

  for (int i = 0; i < m; i++)
    if (md->dependent_rows && md->dependent_rows[i])
      PUSH(c->redundant, c->nredundant, row_item(md, i));
  for (int j = 0; j < n; j++)
    if (!massive[j] && !in_row[j]) PUSH(c->massless, c->nmassless, coord_item(md, owner, j));
  for (int g = 0; g < md->nglues; g++) {
    const jyModelGlue *mg = &md->glues[g];
    held[term_at[mg->part_a] + (size_t)mg->terminal_a] = 1;
    held[term_at[mg->part_b] + (size_t)mg->terminal_b] = 1;
    connected[mg->part_a] = connected[mg->part_b] = 1;
  }
  for (int i = 0; i < md->nparts; i++) {
    const jyModelPart *p = &md->parts[i];
    if (!connected[i] && md->nparts > 1)
      PUSH(c->isolated, c->nisolated, ((jyCheckItem){.index = i, .name = p->inst.name}));
    for (int k = 0; k < p->shape->nterminals; k++) {
      const jyTerminalSpec *ts = &p->shape->terminals[k];
      if (!ts->is_coord_block || held[term_at[i] + (size_t)k]) continue;
      int free_block = 1;
      for (int d = 0; d < ts->dim; d++) {
        int j = p->coord_map[ts->coord_offset + d];
        if (j < 0 || massive[j]) free_block = 0;
      }
      if (free_block)
        PUSH(c->unglued, c->nunglued,
             ((jyCheckItem){
               .index = i, .name = p->inst.name, .part = p->inst.name, .terminal = ts->name}));
    }
  }
done:
  c->findings = c->nredundant + c->nmassless + c->nunglued + c->nisolated + c->near_singular;
  jy_free(alloc, norm);
  jy_free(alloc, sv);
  jy_free(alloc, vec);
  jy_free(alloc, take);
  jy_free(alloc, massive);
  jy_free(alloc, in_row);
  jy_free(alloc, owner);
  jy_free(alloc, term_at);
  jy_free(alloc, held);
  jy_free(alloc, connected);
  jy_eval_destroy(e);
  return st;
}

static void free_lists(const jyAllocator *a, jyModelCheck *c) {
  jy_free(a, c->redundant);
  jy_free(a, c->massless);
  jy_free(a, c->unglued);
  jy_free(a, c->isolated);
  memset(c, 0, sizeof *c);
}

void jy_system_check_free(const jySystem *sys, jyModelCheck *c) {
  if (sys && c) free_lists(&sys->env->alloc, c);
}

jyStatus jy_system_check(const jySystem *sys, jyModelCheck *c) {
  if (!sys || !c) return JY_ERR_INVALID;
  memset(c, 0, sizeof *c);
  const jyAllocator *alloc = &sys->env->alloc;
  jyStatus st = JY_OK;
  /* per part, a flag for each terminal a glue holds (declared ones, then coordinates) */
  size_t *at = jy_calloc(alloc, (size_t)sys->nparts + 1, sizeof(size_t));
  unsigned char *held = NULL, *connected = jy_calloc(alloc, (size_t)sys->nparts + 1, 1);
  if (at) {
    for (int i = 0; i < sys->nparts; i++)
      at[i + 1] =
        at[i] + (size_t)sys->parts[i].shape->nterminals + (size_t)sys->parts[i].shape->ncoords;
    held = jy_calloc(alloc, at[sys->nparts] + 1, 1);
  }
  if (!at || !held || !connected) {
    st = JY_ERR_NOMEM;
    goto done;
  }
  for (int g = 0; g < sys->nglues; g++) {
    const jySysGlue *gl = &sys->glues[g];
    held[at[gl->a.part] + (size_t)gl->a.terminal] = 1;
    held[at[gl->b.part] + (size_t)gl->b.terminal] = 1;
    connected[gl->a.part] = connected[gl->b.part] = 1;
  }
  for (int i = 0; i < sys->nparts; i++) {
    const jySysPart *p = &sys->parts[i];
    if (!connected[i] && sys->nparts > 1)
      PUSH_TO(alloc, c->isolated, c->nisolated, ((jyCheckItem){.index = i, .name = p->name}));
    if (p->type->mass) continue;
    for (int k = 0; k < p->shape->nterminals; k++) {
      if (!p->shape->terminals[k].is_coord_block || held[at[i] + (size_t)k]) continue;
      PUSH_TO(
        alloc, c->unglued, c->nunglued,
        ((jyCheckItem){
          .index = i, .name = p->name, .part = p->name, .terminal = p->shape->terminals[k].name}));
    }
  }
done:
  c->findings = c->nunglued + c->nisolated;
  jy_free(alloc, held);
  jy_free(alloc, connected);
  jy_free(alloc, at);
  return st;
}
