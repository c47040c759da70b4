/* The evaluator: its life cycle and buffers, and the store (the sparse M and A the solves
 * read, and the dense arrays made from it on demand). The acceleration of one state is in
 * eval_solve.c, the output channels in eval_channels.c, the modes of parts in eval_modes.c. */
#include <math.h>
#include <string.h>

#include "internal.h"

/* The columns a part's blocks can touch: its own coordinates, or with links those of the
 * terminals it follows, up the chain. Returns how many (cols NULL: count). */
static int part_columns(const jyModel *model, int part, int *cols) {
  const jyModelPart *p = &model->parts[part];
  for (int k = 0; cols && k < p->ncols; k++) cols[k] = jy_part_column(p, k);
  return p->ncols;
}

/* Pairs (rows[k], cols[k]) for the block rows r0 .. r0 + nrows - 1 over the columns of
 * parts a and b (b < 0: a alone); rows NULL: count only. Returns the count added. */
static size_t block_pairs(const jyModel *model, int r0, int nrows, int a, int b, int *scratch,
                          int *rows, int *cols) {
  int count = part_columns(model, a, rows ? scratch : NULL);
  if (b >= 0) count += part_columns(model, b, rows ? scratch + count : NULL);
  if (rows)
    for (int c = 0; c < count; c++)
      for (int r = 0; r < nrows; r++) {
        rows[(size_t)c * nrows + r] = r0 + r;
        cols[(size_t)c * nrows + r] = scratch[c];
      }
  return (size_t)count * (size_t)nrows;
}

/* The global coordinates a glue side's terminal is exactly (a coordinate terminal, or one
 * declared a block of the part's coordinates, all of them kept): its rows' coefficients
 * there are +-1 whatever the state. The first into first; 0 when it is not such a block. */
static int kept_block(const jyModel *model, int part, int terminal, int dim, int *first) {
  const jyModelPart *p = &model->parts[part];
  int nt = p->shape->nterminals, offset;
  if (terminal >= nt)
    offset = terminal - nt;
  else if (p->shape->terminals[terminal].is_coord_block)
    offset = p->shape->terminals[terminal].coord_offset;
  else
    return 0;
  if (offset < 0 || offset + dim > p->inst.ncoords) return 0;
  for (int c = 0; c < dim; c++)
    if (p->coord_map[offset + c] != p->coord_map[offset] + c || p->coord_map[offset] < 0) return 0;
  *first = p->coord_map[offset];
  return 1;
}

/* The pairs where A can be non-zero: a part's rows over its columns, a glue's rows over both
 * parts' columns. rows NULL: count only. */
static size_t jac_pairs(const jyModel *model, int *scratch, int *rows, int *cols) {
  size_t t = 0;
  for (int i = 0; i < model->nparts; i++) {
    const jyModelPart *p = &model->parts[i];
    if (p->inst.nrows > 0)
      t += block_pairs(model, p->row_offset, p->inst.nrows, i, -1, scratch, rows ? rows + t : NULL,
                       rows ? cols + t : NULL);
  }
  for (int g = 0; g < model->nglues; g++) {
    const jyModelGlue *glue = &model->glues[g];
    if (glue->row_offset < 0) continue;
    for (int side = 0; side < 2; side++) {
      int part = side ? glue->part_b : glue->part_a, first;
      if (kept_block(model, part, side ? glue->terminal_b : glue->terminal_a, glue->dim, &first)) {
        for (int c = 0; c < glue->dim; c++, t++) /* J G = [0 I 0]: the block alone */
          if (rows) rows[t] = glue->row_offset + c, cols[t] = first + c;
        continue;
      }
      t += block_pairs(model, glue->row_offset, glue->dim, part, -1, scratch,
                       rows ? rows + t : NULL, rows ? cols + t : NULL);
    }
  }
  return t;
}

/* The pairs where M can be non-zero: every diagonal, and each part's columns by themselves
 * (G^T M_loc G for a part with eliminated blocks). rows NULL: count only. */
static size_t mass_pairs(const jyModel *model, int *scratch, int *rows, int *cols) {
  size_t t = 0;
  for (int j = 0; j < model->n; j++, t++)
    if (rows) rows[t] = cols[t] = j;
  for (int i = 0; i < model->nparts && !model->tree; i++) { /* a tree's M is never formed */
    if (!model->parts[i].inst.type->mass) continue;
    int count = part_columns(model, i, rows ? scratch : NULL);
    for (int a = 0; a < count; a++)
      for (int b = 0; b < count; b++, t++)
        if (rows) {
          rows[t] = scratch[a];
          cols[t] = scratch[b];
        }
  }
  return t;
}

/* Builds the store's patterns (M, A) from the model; 0, or -1 (no memory). */
static int build_store(jyEval *e) {
  const jyModel *md = e->model;
  const jyAllocator *a = &md->alloc;
  int widest = 1;
  for (int i = 0; i < md->nparts; i++) {
    int c = part_columns(md, i, NULL);
    widest = c > widest ? c : widest;
  }
  int *scratch = jy_calloc(a, 2 * (size_t)widest, sizeof(int)), status = -1;
  size_t nm = mass_pairs(md, scratch, NULL, NULL), na = jac_pairs(md, scratch, NULL, NULL);
  size_t most = nm > na ? nm : na;
  int *rows = jy_calloc(a, most + 1, sizeof(int)), *cols = jy_calloc(a, most + 1, sizeof(int));
  if (!scratch || !rows || !cols) goto done;
  mass_pairs(md, scratch, rows, cols);
  if (jy_csc_build(a, md->n, md->n, nm, rows, cols, &e->store_mass) != 0) goto done;
  jac_pairs(md, scratch, rows, cols);
  if (jy_csc_build(a, md->m, md->n, na, rows, cols, &e->store_jac) != 0) goto done;
  for (int j = 0; j < md->n; j++) e->store_mass_diag[j] = jy_csc_find(&e->store_mass, j, j);
  status = 0;
done:
  jy_free(a, scratch);
  jy_free(a, rows);
  jy_free(a, cols);
  return status;
}

/* Positions in a store of the block rows x cols (column-major) into slot; -1 where the
 * pattern has no entry. */
static void find_slots(const jyCsc *c, const int *rows, int nrows, const int *cols, int ncols,
                       int *slot) {
  for (int k = 0; k < ncols; k++)
    for (int i = 0; i < nrows; i++) slot[i + (size_t)k * nrows] = jy_csc_find(c, rows[i], cols[k]);
}

/* The store positions of every block an assembly adds (e->slots; internal.h), found once
 * here. 0, or -1 (no memory). */
static int build_slots(jyEval *e) {
  const jyModel *md = e->model;
  const jyAllocator *a = &md->alloc;
  size_t np = (size_t)md->nparts, total = 0;
  e->mass_slot_at = jy_calloc(a, np + 1, sizeof(size_t));
  e->row_slot_at = jy_calloc(a, np + 1, sizeof(size_t));
  e->glue_slot_at = jy_calloc(a, (size_t)md->nglues + 1, sizeof(size_t));
  int widest = md->max_part_cols > md->max_part_rows ? md->max_part_cols : md->max_part_rows;
  int *cols = jy_calloc(a, 2 * (size_t)widest + 1, sizeof(int));
  int *rows = jy_calloc(a, (size_t)widest + JY_TERMINAL_MAX_DIM + 1, sizeof(int));
  int status = -1;
  if (!e->mass_slot_at || !e->row_slot_at || !e->glue_slot_at || !cols || !rows) goto done;
  for (int i = 0; i < md->nparts && !md->tree; i++) { /* a tree model assembles no M, A */
    const jyModelPart *p = &md->parts[i];
    size_t w = (size_t)p->ncols;
    e->mass_slot_at[i] = total;
    total += p->inst.type->mass ? w * w : 0;
    e->row_slot_at[i] = total;
    total += (size_t)p->inst.nrows * w;
  }
  for (int g = 0; g < md->nglues; g++) {
    const jyModelGlue *glue = &md->glues[g];
    e->glue_slot_at[g] = total;
    if (glue->row_offset >= 0)
      total +=
        (size_t)glue->dim * (size_t)(md->parts[glue->part_a].ncols + md->parts[glue->part_b].ncols);
  }
  if (!(e->slots = jy_calloc(a, total + 1, sizeof(int)))) goto done;
  for (int i = 0; i < md->nparts && !md->tree; i++) {
    const jyModelPart *p = &md->parts[i];
    int w = part_columns(md, i, cols), nr = p->inst.nrows;
    if (p->inst.type->mass)
      find_slots(&e->store_mass, cols, w, cols, w, e->slots + e->mass_slot_at[i]);
    for (int r = 0; r < nr; r++) rows[r] = p->row_offset + r;
    if (nr > 0) find_slots(&e->store_jac, rows, nr, cols, w, e->slots + e->row_slot_at[i]);
  }
  for (int g = 0; g < md->nglues; g++) {
    const jyModelGlue *glue = &md->glues[g];
    if (glue->row_offset < 0) continue;
    int wa = part_columns(md, glue->part_a, cols);
    int wb = part_columns(md, glue->part_b, cols + wa);
    for (int r = 0; r < glue->dim; r++) rows[r] = glue->row_offset + r;
    find_slots(&e->store_jac, rows, glue->dim, cols, wa + wb, e->slots + e->glue_slot_at[g]);
  }
  status = 0;
done:
  jy_free(a, cols);
  jy_free(a, rows);
  return status;
}

/* e->part_glue_ptr / part_glues from the model's glues with rows; 0, or -1. */
static int index_part_glues(jyEval *e) {
  const jyModel *md = e->model;
  e->part_glue_ptr = jy_calloc(&md->alloc, (size_t)md->nparts + 2, sizeof(int));
  e->part_glues = jy_calloc(&md->alloc, 2 * (size_t)md->nglues + 1, sizeof(int));
  if (!e->part_glue_ptr || !e->part_glues) return -1;
  int *start = e->part_glue_ptr; /* counts at part + 1, then where each part's list starts */
  for (int g = 0; g < md->nglues; g++)
    if (md->glues[g].link < 0) {
      start[md->glues[g].part_a + 1]++;
      start[md->glues[g].part_b + 1]++;
    }
  for (int p = 0; p < md->nparts; p++) start[p + 1] += start[p];
  int *cursor = jy_calloc(&md->alloc, (size_t)md->nparts + 1, sizeof(int));
  if (!cursor) return -1;
  memcpy(cursor, start, sizeof(int) * (size_t)md->nparts);
  for (int g = 0; g < md->nglues; g++)
    if (md->glues[g].link < 0) {
      e->part_glues[cursor[md->glues[g].part_a]++] = 2 * g;
      e->part_glues[cursor[md->glues[g].part_b]++] = 2 * g + 1;
    }
  jy_free(&md->alloc, cursor);
  return 0;
}

/* Whether M can be diagonal: no part with mass sees its coordinates through eliminated
 * glues (G^T M_loc G couples the sources). Whether it is, the assembly tells. */
static int diagonal_mass_possible(const jyModel *model) {
  for (int i = 0; i < model->nparts; i++)
    if (model->parts[i].inst.type->mass && model->parts[i].nlinks > 0) return 0;
  return 1;
}

/* Row r's pivot for the KKT ordering (dyn_kkt.c): for a glue row, a coordinate of one side's
 * kept block that the other side's part does not see, so that the row's coefficient there
 * is +-1 at every state; -1 otherwise. */
static void glue_row_pivots(const jyModel *model, int *pivot, int *block) {
  for (int r = 0; r < model->m; r++) pivot[r] = -1, block[r] = r;
  for (int g = 0; g < model->nglues; g++) {
    const jyModelGlue *glue = &model->glues[g];
    if (glue->row_offset < 0 || glue->part_a == glue->part_b) continue;
    for (int side = 0; side < 2; side++) {
      int part = side ? glue->part_b : glue->part_a, other = side ? glue->part_a : glue->part_b;
      int first;
      if (!kept_block(model, part, side ? glue->terminal_b : glue->terminal_a, glue->dim, &first))
        continue;
      const jyModelPart *o = &model->parts[other];
      int seen = 0;
      for (int k = 0; k < o->ncols && !seen; k++) {
        int col = jy_part_column(o, k);
        seen = col >= first && col < first + glue->dim;
      }
      if (seen) continue;
      for (int c = 0; c < glue->dim; c++) {
        pivot[glue->row_offset + c] = first + c;
        block[glue->row_offset + c] = glue->row_offset;
      }
      break;
    }
  }
}

/* The evaluator's sparse solvers, at any size unless sparse_min_coords = 0: the diagonal-M
 * one when there are rows (and, below sparse_min_coords, the parts say M can be diagonal),
 * and the KKT one for any M. Both were measured faster than the dense solve on small models
 * too: the W1 chain from 4 coordinates up, and every example but one at its own settings
 * (docs/numerics.md). The dense solve stays the fallback where they cannot answer (rank
 * lost, a singular configuration). Without them (or, from sparse_min_coords on, when they
 * cannot be set up) the evaluator solves dense. */
static int sparse_solvers(jyEval *e) {
  const jyModel *model = e->model;
  int min_coords = model->solver.sparse_min_coords;
  if (min_coords <= 0 || model->n == 0) return 0;
  int small = model->n < min_coords;
  int schur = model->m > 0 && (!small || diagonal_mass_possible(model));
  if (schur) e->sparse = jy_sparse_create(&model->alloc, &e->store_jac);
  int *pivot = jy_calloc(&model->alloc, 2 * (size_t)model->m + 1, sizeof(int));
  if (pivot) {
    glue_row_pivots(model, pivot, pivot + model->m);
    e->kkt = jy_kkt_create(&model->alloc, &e->store_mass, &e->store_jac, pivot, pivot + model->m);
    jy_free(&model->alloc, pivot);
  }
  e->store_solves = e->kkt != NULL;
  /* Out of memory on a small model: an error, not a silently different (dense) solve. */
  int missing = !e->kkt || (schur && !e->sparse);
  return small && missing ? -1 : 0;
}

enum { MAX_EVAL_BUFFERS = 40 };

/* Every buffer of doubles the evaluator owns, with its length: one list for create and
 * destroy. Returns how many. */
typedef struct {
  double **slot;
  size_t count;
} EvalBuffer;

/* Whether the evaluator keeps no dense M (nor the projection's dense A copy, nor the dense
 * solver's workspace, made on demand): a large model, solved sparse, where those would be
 * gigabytes (n^2 doubles: 3.2 GB at 20,000 coordinates). The dense A stays for the compile's
 * consistent initial state. */
static int large_model(const jyModel *md, int allow_sparse) {
  return allow_sparse && md->solver.sparse_min_coords > 0 &&
    md->n >= md->solver.sparse_min_coords && md->n > JY_DENSE_FALLBACK_MAX_COORDS;
}

/* Whether the evaluator solves in its store (sparse_solvers' condition): its dense M, A,
 * projection copy and solver workspace are then made only when a fallback needs them
 * (jy_eval_dense_ready): n^2 + 2 m n doubles and more, 200 MB at 2000 coordinates. */
static int lazy_dense(const jyModel *md, int allow_sparse) {
  return md->tree ||
    (allow_sparse && md->solver.sparse_min_coords > 0 && md->n >= md->solver.sparse_min_coords);
}

/* Where each part with links keeps its view (q, v, g, then G: ncoords x ncols; a tree
 * model's q, v and velocity bias, no G) in the pool (view_at NULL: only the size). Returns
 * the pool's size. */
static size_t view_layout(const jyModel *md, size_t *view_at) {
  size_t at = 0;
  for (int i = 0; i < md->nparts; i++) {
    const jyModelPart *p = &md->parts[i];
    if (view_at) view_at[i] = at;
    if (p->nlinks > 0) at += (size_t)p->inst.ncoords * (3 + (md->tree ? 0 : (size_t)p->ncols));
  }
  return at + 1;
}

static int double_buffers(jyEval *e, EvalBuffer *b) {
  const jyModel *md = e->model;
  size_t n = (size_t)md->n, m = (size_t)md->m;
  size_t square = e->lazy_dense ? 0 : n * n + 1, projection = e->lazy_dense ? 0 : m * n + 1;
  size_t pc = (size_t)md->max_part_coords + 1, pr = (size_t)md->max_part_rows + 1;
  size_t widest = (size_t)md->max_part_cols + 1;
  const EvalBuffer list[] = {
    {&e->mass, square},
    {&e->force, n + 1},
    {&e->nonideal, n + 1},
    {&e->jac, e->lazy_dense ? 0 : m * n + 1}, /* lazy: made on demand */
    {&e->rhs, m + 1},
    {&e->residual, m + 1},
    {&e->rate, m + 1},
    {&e->multipliers, m + 1},
    {&e->local_mass, pc * pc},
    {&e->local_vec, pc},
    {&e->local_bias, pc},
    {&e->local_balance, pc},
    {&e->local_jac, pr * pc},
    {&e->local_rhs, pr},
    {&e->local_res, pr},
    {&e->local_rate, pr},
    {&e->term_jac_a, JY_TERMINAL_MAX_DIM * pc},
    {&e->term_jac_b, JY_TERMINAL_MAX_DIM * pc},
    {&e->views, view_layout(md, NULL)},
    {&e->acc_loc, pc},
    {&e->block, widest * (widest + pr + JY_TERMINAL_MAX_DIM) + pc},
    {&e->law_mu, m + 1},
    {&e->law_acc, n + 1},
    {&e->static_nonideal, n + 1},
    {&e->proj_jac, projection},
    {&e->proj_rhs, m + 1},
    {&e->proj_target, m + 1},
    {&e->proj_zero, n + 1},
    {&e->proj_dx, n + 1},
    {&e->channel_scratch, n + 1},
    {&e->jac_times_v, m + 1},
    {&e->angle_prev, (size_t)md->nchannels + 1},
    {&e->matrices_state, 2 * n + 1},
  };
  _Static_assert(sizeof list / sizeof list[0] <= MAX_EVAL_BUFFERS, "room for every buffer");
  memcpy(b, list, sizeof list);
  return (int)(sizeof list / sizeof list[0]);
}

/* Bytes a part's scratch takes in the pool: its size rounded up to 16 (each aligned). */
static size_t scratch_span(const jyModelPart *p) {
  return (p->shape->scratch_size + 15) & ~(size_t)15;
}

/* The parts' scratch: e->scratch_at and the pool (none when no part keeps any). 0, or -1. */
static int scratch_layout(jyEval *e) {
  const jyModel *md = e->model;
  size_t total = 0;
  for (int i = 0; i < md->nparts; i++) total += scratch_span(&md->parts[i]);
  if (total == 0) return 0;
  e->scratch_at = jy_calloc(&e->alloc, (size_t)md->nparts + 1, sizeof(size_t));
  e->scratch = jy_calloc(&e->alloc, total, 1);
  if (!e->scratch_at || !e->scratch) return -1;
  for (size_t i = 0, at = 0; i < (size_t)md->nparts; at += scratch_span(&md->parts[i]), i++)
    e->scratch_at[i] = at;
  return 0;
}

static jyEval *create(const jyModel *model, int allow_sparse) {
  if (!model) return NULL;
  const jyAllocator *a = &model->alloc;
  jyEval *e = jy_calloc(a, 1, sizeof *e);
  if (!e) return NULL;
  e->model = model;
  e->alloc = model->alloc;
  e->large = large_model(model, allow_sparse);
  e->lazy_dense = lazy_dense(model, allow_sparse);
  size_t n = (size_t)model->n, m = (size_t)model->m, np = (size_t)model->nparts + 1;
  EvalBuffer buffers[MAX_EVAL_BUFFERS];
  int nbuffers = double_buffers(e, buffers), ok = 1;
  for (int i = 0; i < nbuffers; i++)
    if (buffers[i].count > 0) /* 0: not kept (a large model) */
      ok &= (*buffers[i].slot = jy_calloc(a, buffers[i].count, sizeof(double))) != NULL;
  e->proj_use = jy_calloc(a, m + 1, 1);
  e->view_at = jy_calloc(a, np, sizeof(size_t));
  e->view_stamp = jy_calloc(a, np, sizeof(uint64_t));
  if (e->view_at) view_layout(model, e->view_at);
  if (e->view_at && e->views) jy_views_init(e);
  e->mass_constant = !model->tree;
  for (int i = 0; i < model->nparts; i++) { /* a constant M through a constant G, or none */
    const jyModelPart *p = &model->parts[i];
    if (p->inst.type->mass && p->inst.ncoords > 0 &&
        (!(p->shape->flags & JY_PART_CONSTANT_MASS) || (p->nlinks > 0 && !p->gather)))
      e->mass_constant = 0;
  }
  e->view_epoch = 1; /* the stamps start at 0: no view is current before it is computed */
  e->flags = jy_calloc(a, n + 1, sizeof(int));
  e->dependent = jy_calloc(a, m + 1, 1);
  if (e->dependent && model->dependent_rows) {
    memcpy(e->dependent, model->dependent_rows, m);
    e->ndependent = model->ndependent;
  }
  e->uk = e->lazy_dense ? NULL : jy_uk_create(a, model->n, model->m);
  if (model->tree) ok &= (e->tree = jy_tree_create(e)) != NULL;
  if (ok && model->solver.tree_recursion) ok = jy_spatial_create(e, &e->spatial) == JY_OK;
  e->store_mass_diag = jy_calloc(a, n + 1, sizeof(int));
  e->mass_diag = jy_calloc(a, n + 1, sizeof(double));
  e->solve_dropped = jy_calloc(a, m + 1, 1);
  ok &= scratch_layout(e) == 0;
  ok &= e->store_mass_diag && e->mass_diag && e->solve_dropped && build_store(e) == 0 &&
    build_slots(e) == 0 && index_part_glues(e) == 0;
  if (ok && allow_sparse && !model->tree) ok = sparse_solvers(e) == 0;
  ok = ok && e->proj_use && e->view_at && e->view_stamp && e->flags && e->dependent &&
    (e->uk || e->lazy_dense) && !(e->lazy_dense && !e->store_solves && !model->tree);
  /* parts with modes start in mode 0 (a simulation or the compile sets theirs); setting
   * them reads what the lines above allocated */
  if (ok && jy_model_has_modes(model)) ok = jy_eval_set_modes(e, NULL) == JY_OK;
  if (ok) ok = jy_eval_inputs_init(e) == JY_OK;
  if (!ok) {
    jy_eval_destroy(e);
    return NULL;
  }
  return e;
}

jyEval *jy_eval_create(const jyModel *model) { return create(model, 1); }

jyEval *jy_eval_create_dense(const jyModel *model) { return create(model, 0); }

/* The dense solver's workspace, made on first use for a large model (a compile's dependent
 * rows: not the right-hand side). NULL when out of memory. */
int jy_eval_dense_ready(jyEval *e) {
  const jyModel *md = e->model;
  size_t n = (size_t)md->n, m = (size_t)md->m;
  if (md->tree) return -1; /* no M is ever formed: the recursion is its solve */
  if (!e->jac) {
    if (!(e->jac = jy_calloc(&e->alloc, m * n + 1, sizeof(double)))) return -1;
    e->dense_valid &= ~(unsigned)JY_ASM_CONSTRAINTS;
  }
  if (!e->mass && !e->large) { /* a large model's M stays sparse (3.2 GB at 20,000) */
    if (!(e->mass = jy_calloc(&e->alloc, n * n + 1, sizeof(double)))) return -1;
    e->dense_valid &= ~(unsigned)JY_ASM_MASS;
  }
  if (!e->uk && !(e->uk = jy_uk_create(&e->alloc, md->n, md->m))) return -1;
  jy_eval_make_dense(e);
  return 0;
}

void jy_eval_destroy(jyEval *e) {
  if (!e) return;
  jyAllocator a = e->alloc;
  EvalBuffer buffers[MAX_EVAL_BUFFERS];
  int nbuffers = double_buffers(e, buffers);
  for (int i = 0; i < nbuffers; i++) jy_free(&a, *buffers[i].slot);
  jy_free(&a, e->flags);
  jy_free(&a, e->input_held);
  jy_free(&a, e->view_at);
  jy_free(&a, e->view_stamp);
  jy_free(&a, e->scratch);
  jy_free(&a, e->scratch_at);
  jy_free(&a, e->slots);
  jy_free(&a, e->mass_slot_at);
  jy_free(&a, e->row_slot_at);
  jy_free(&a, e->glue_slot_at);
  jy_free(&a, e->proj_use);
  jy_free(&a, e->dependent);
  jy_uk_destroy(e->uk);
  jy_sparse_destroy(e->sparse);
  jy_kkt_destroy(e->kkt);
  jy_tree_destroy(&a, e->tree);
  jy_spatial_destroy(&a, e->spatial);
  jy_csc_free(&a, &e->store_mass);
  jy_csc_free(&a, &e->store_jac);
  jy_free(&a, e->store_mass_diag);
  jy_free(&a, e->mass_diag);
  jy_free(&a, e->solve_dropped);
  jy_free(&a, e->part_glue_ptr);
  jy_free(&a, e->part_glues);
  jy_eval_modes_free(e);
  jy_free(&a, e);
}

const char *jy_eval_error(const jyEval *e) { return e ? e->error : ""; }

jyUkProblem jy_eval_problem(const jyEval *e) {
  const jyModel *m = e->model;
  return (jyUkProblem){m->n,        m->m,   e->mass, e->force,
                       e->nonideal, e->jac, e->rhs,  e->ndependent > 0 ? e->dependent : NULL};
}

const jyCsc *jy_eval_constraint_matrix(jyEval *e) {
  const jyModel *md = e->model;
  jyCsc *c = &e->store_jac;
  if (!(e->store_valid & JY_ASM_CONSTRAINTS) && e->jac)
    for (int j = 0; j < md->n; j++)
      for (int k = c->p[j]; k < c->p[j + 1]; k++) c->x[k] = e->jac[c->i[k] + (size_t)j * md->m];
  return c;
}

void jy_eval_constraint_times(const jyEval *e, const double *x, double *out) {
  const jyModel *m = e->model;
  memset(out, 0, sizeof(double) * (size_t)m->m);
  if ((e->store_valid & JY_ASM_CONSTRAINTS) || !e->jac) {
    const jyCsc *c = &e->store_jac;
    for (int j = 0; j < m->n; j++)
      for (int k = c->p[j]; k < c->p[j + 1]; k++) out[c->i[k]] += c->x[k] * x[j];
    return;
  }
  for (int j = 0; j < m->n; j++)
    for (int i = 0; i < m->m; i++) out[i] += e->jac[i + (size_t)j * m->m] * x[j];
}

double jy_eval_kinetic(const jyEval *e, const double *x) {
  int n = e->model->n;
  double sum = 0;
  if (e->tree) return NAN; /* no M formed; only projections ask, and a tree has no rows */
  if (e->store_valid & JY_ASM_MASS) {
    const jyCsc *c = &e->store_mass;
    for (int j = 0; j < n; j++)
      for (int k = c->p[j]; k < c->p[j + 1]; k++) sum += x[c->i[k]] * c->x[k] * x[j];
    return 0.5 * sum;
  }
  for (int j = 0; j < n; j++) {
    if (e->mass_diagonal)
      sum += x[j] * e->mass[j + (size_t)j * n] * x[j];
    else
      for (int i = 0; i < n; i++) sum += x[i] * e->mass[i + (size_t)j * n] * x[j];
  }
  return 0.5 * sum;
}

void jy_eval_make_dense(jyEval *e) {
  const jyModel *md = e->model;
  size_t n = (size_t)md->n, m = (size_t)md->m;
  unsigned missing = e->store_valid & ~e->dense_valid;
  if (!e->mass) missing &= ~(unsigned)JY_ASM_MASS; /* not kept (a large model) */
  if (!e->jac) missing &= ~(unsigned)JY_ASM_CONSTRAINTS;
  if (missing & JY_ASM_MASS) {
    const jyCsc *c = &e->store_mass;
    memset(e->mass, 0, sizeof(double) * n * n);
    for (size_t j = 0; j < n; j++)
      for (int k = c->p[j]; k < c->p[j + 1]; k++) e->mass[c->i[k] + j * n] = c->x[k];
  }
  if (missing & JY_ASM_CONSTRAINTS) {
    const jyCsc *c = &e->store_jac;
    memset(e->jac, 0, sizeof(double) * n * m);
    for (size_t j = 0; j < n; j++)
      for (int k = c->p[j]; k < c->p[j + 1]; k++) e->jac[c->i[k] + j * m] = c->x[k];
  }
  e->dense_valid |= missing;
}
