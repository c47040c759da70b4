/* Compiling a system into an immutable model: numbering, names, a consistent initial state. */
#include <lapacke.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

jySolverDef jy_default_solver_def(void) {
  return (jySolverDef){
      .rank_rcond = 1e-10,
      .augment_scale = 1.0,
      /* b may be off range(A) by rounding, by the drift of redundant rows and, near a
       * singular configuration, by the drift along the directions A is losing; measured up
       * to 1e-6 relative there (the 40-four-bar chain). 1e-4 is above all of these and far
       * below a genuine conflict, which is of order 1. */
      .consistency_tol = 1e-4,
      .assembly_tol = 1e-12,
      .dependent_tol = 1e-4,
      .dependent_rcond = 1e-3,
      .eliminate_glue = 1,
      .sparse_min_coords = 60,
  };
}

void jy_model_destroy(jyModel *model) {
  if (!model) return;
  jyAllocator a = model->alloc;
  for (int i = 0; i < model->nparts; i++) {
    jyModelPart *p = &model->parts[i];
    jy_free(&a, (char *)p->inst.name);
    jy_free(&a, (double *)p->inst.params);
    jy_free(&a, (void *)p->inst.data);
    for (int k = 0; k < p->shape.nterminals; k++) jy_free(&a, (char *)p->shape.terminals[k].name);
    jy_free(&a, p->coord_map);
  }
  for (int i = 0; i < model->nglues; i++) jy_free(&a, model->glues[i].name);
  if (model->local_names)
    for (int i = 0; i < model->nlocal; i++) jy_free(&a, model->local_names[i]);
  jy_free(&a, model->local_names);
  jy_free(&a, model->links);
  jy_free(&a, model->user_channels);
  if (model->row_names)
    for (int i = 0; i < model->m; i++) jy_free(&a, model->row_names[i]);
  if (model->channel_names)
    for (int i = 0; i < model->nchannels; i++) jy_free(&a, model->channel_names[i]);
  jy_free(&a, model->parts);
  jy_free(&a, model->glues);
  jy_free(&a, model->coord_names);
  jy_free(&a, model->row_names);
  jy_free(&a, model->row_kinds);
  jy_free(&a, model->row_part);
  jy_free(&a, model->channel_names);
  jy_free(&a, model->q0);
  jy_free(&a, model->dependent_rows);
  jy_free(&a, model->v0);
  jy_free(&a, model->report);
  jy_free(&a, model->moved);
  jy_free(&a, model);
}

static char *join_name(const jyAllocator *a, const char *prefix, const char *x, const char *y,
                       const char *suffix) {
  size_t len = strlen(prefix) + strlen(x) + strlen(y) + strlen(suffix) + 1;
  char *s = jy_alloc(a, len);
  if (s) snprintf(s, len, "%s%s%s%s", prefix, x, y, suffix);
  return s;
}

/* Component names of a glue's force: x, y, z up to 3-D, numbered beyond (frames). */
static const char *const axis_suffix[3] = {".x", ".y", ".z"};
static const char *const index_suffix[JY_TERMINAL_MAX_DIM] = {".1", ".2", ".3", ".4", ".5",
                                                               ".6", ".7"};

/* Whether terminal k of a part may be eliminated by substitution: the part has no mass,
 * the terminal is exactly a block of its own coordinates, it is glued only once, its block
 * overlaps no other glued coordinate-block terminal of the part, and nothing is glued to
 * the part's coordinate terminals. The glue's force is then recovered from the massless
 * block's balance (eval.c). */
static int eliminable(const jySystem *sys, int part, int k) {
  const jySysPart *sp = &sys->parts[part];
  const jyPartShape *s = &sp->shape;
  if (sp->type->mass || k < 0 || k >= s->nterminals) return 0;
  const jyTerminalSpec *t = &s->terminals[k];
  if (!t->is_coord_block || t->coord_offset < 0 || t->coord_offset + t->dim > s->ncoords)
    return 0;
  int glued[JY_PART_MAX_TERMINALS] = {0};
  for (int g = 0; g < sys->nglues; g++) {
    const jySysGlue *sg = &sys->glues[g];
    for (int side = 0; side < 2; side++) {
      jyTerminalId id = side ? sg->b : sg->a;
      if (id.part != part) continue;
      if (id.terminal >= s->nterminals) return 0; /* a glue on one of its coordinates */
      glued[id.terminal]++;
    }
  }
  if (glued[k] != 1) return 0;
  for (int j = 0; j < s->nterminals; j++) {
    const jyTerminalSpec *o = &s->terminals[j];
    if (j == k || !glued[j] || !o->is_coord_block) continue;
    if (o->coord_offset < t->coord_offset + t->dim && t->coord_offset < o->coord_offset + o->dim)
      return 0;
  }
  return 1;
}

/* Chooses the glues to eliminate (one level: a source has no eliminated coordinates) and
 * fills md->links sorted by part. */
static jyStatus choose_links(jyModel *md, const jySystem *sys) {
  const jyAllocator *a = &md->alloc;
  int np = sys->nparts, ng = sys->nglues;
  int *target = jy_calloc(a, (size_t)np + 1, sizeof(int));
  int *source = jy_calloc(a, (size_t)np + 1, sizeof(int));
  jyModelLink *found = jy_calloc(a, (size_t)ng + 1, sizeof *found);
  md->links = jy_calloc(a, (size_t)ng + 1, sizeof *md->links);
  jyStatus st = JY_ERR_NOMEM;
  if (!target || !source || !found || !md->links) goto out;
  int count = 0;
  for (int g = 0; g < ng; g++) {
    const jySysGlue *sg = &sys->glues[g];
    md->glues[g].link = -1;
    for (int side = 0; side < 2; side++) {
      jyTerminalId x = side ? sg->b : sg->a, y = side ? sg->a : sg->b;
      if (!md->solver.eliminate_glue || x.part == y.part || source[x.part] || target[y.part] ||
          !eliminable(sys, x.part, x.terminal))
        continue;
      const jyTerminalSpec *t = &sys->parts[x.part].shape.terminals[x.terminal];
      found[count++] = (jyModelLink){g, x.part, t->coord_offset, t->dim, y.part, y.terminal,
                                     side == 0};
      target[x.part] = 1;
      source[y.part] = 1;
      md->glues[g].link = 0; /* numbered below */
      break;
    }
  }
  /* Sorted by target part, so each part's links are contiguous. */
  md->nlinks = 0;
  for (int i = 0; i < np; i++) {
    md->parts[i].first_link = md->nlinks;
    for (int k = 0; k < count; k++)
      if (found[k].part == i) {
        md->glues[found[k].glue].link = md->nlinks;
        md->links[md->nlinks++] = found[k];
      }
    md->parts[i].nlinks = md->nlinks - md->parts[i].first_link;
  }
  md->max_source_coords = 1;
  for (int l = 0; l < md->nlinks; l++) {
    int ns = sys->parts[md->links[l].source].shape.ncoords;
    if (ns > md->max_source_coords) md->max_source_coords = ns;
  }
  st = JY_OK;
out:
  jy_free(a, target);
  jy_free(a, source);
  jy_free(a, found);
  return st;
}

/* Numbers coordinates, rows and channels, and copies everything the model keeps. */
static jyStatus lay_out(jyModel *md, const jySystem *sys) {
  const jyAllocator *a = &md->alloc;
  memcpy(md->gravity, sys->gravity, sizeof md->gravity);
  md->parts = jy_calloc(a, (size_t)sys->nparts + 1, sizeof *md->parts);
  md->glues = jy_calloc(a, (size_t)sys->nglues + 1, sizeof *md->glues);
  if (!md->parts || !md->glues) return JY_ERR_NOMEM;
  md->nparts = sys->nparts;
  md->nglues = sys->nglues;
  int nlocal = 0, nforce = 0, nout = 0;
  for (int i = 0; i < sys->nparts; i++) {
    const jySysPart *sp = &sys->parts[i];
    jyModelPart *p = &md->parts[i];
    /* The model's shape must not point into the system, which may die first: terminal
     * names are copied, the other names point into the model's own tables (set below). */
    p->shape = sp->shape;
    for (int k = 0; k < p->shape.nterminals; k++) p->shape.terminals[k].name = NULL;
    for (int k = 0; k < p->shape.nterminals; k++)
      if (!(p->shape.terminals[k].name = jy_strdup(a, sp->shape.terminals[k].name)))
        return JY_ERR_NOMEM;
    p->inst.type = sp->type;
    p->inst.ncoords = sp->shape.ncoords;
    p->inst.nrows = sp->shape.nrows;
    nlocal += sp->shape.ncoords;
    nout += sp->shape.noutputs;
    if (sp->shape.ncoords > md->max_part_coords) md->max_part_coords = sp->shape.ncoords;
    if (sp->shape.nrows > md->max_part_rows) md->max_part_rows = sp->shape.nrows;
    p->inst.name = jy_strdup(a, sp->name);
    double *params = jy_calloc(a, (size_t)sp->type->nparams + 1, sizeof(double));
    p->inst.params = params;
    p->coord_map = jy_calloc(a, (size_t)sp->shape.ncoords + 1, sizeof(int));
    if (!p->inst.name || !params || !p->coord_map) return JY_ERR_NOMEM;
    memcpy(params, sp->params, sizeof(double) * (size_t)sp->type->nparams);
  }
  for (int g = 0; g < sys->nglues; g++) {
    const jySysGlue *sg = &sys->glues[g];
    jyModelGlue *mg = &md->glues[g];
    mg->name = jy_strdup(a, sg->name);
    if (!mg->name) return JY_ERR_NOMEM;
    mg->part_a = sg->a.part, mg->terminal_a = sg->a.terminal;
    mg->part_b = sg->b.part, mg->terminal_b = sg->b.terminal;
    mg->dim = sg->dim;
    nforce += sg->dim;
  }
  jyStatus st = choose_links(md, sys);
  if (st != JY_OK) return st;

  /* Coordinates: each part's own ones in order; rows: parts' rows, then kept glue rows. */
  int n = 0, m = 0;
  for (int i = 0; i < md->nparts; i++) {
    jyModelPart *p = &md->parts[i];
    p->coord_offset = n;
    for (int j = 0; j < p->inst.ncoords; j++) p->coord_map[j] = n++;
    for (int l = p->first_link; l < p->first_link + p->nlinks; l++)
      for (int c = 0; c < md->links[l].dim; c++) p->coord_map[md->links[l].offset + c] = -1 - l;
    n = p->coord_offset;
    for (int j = 0; j < p->inst.ncoords; j++)
      if (p->coord_map[j] >= 0) p->coord_map[j] = n++;
    p->row_offset = m;
    m += p->inst.nrows;
  }
  for (int g = 0; g < md->nglues; g++) {
    md->glues[g].row_offset = md->glues[g].link >= 0 ? -1 : m;
    if (md->glues[g].link < 0) m += md->glues[g].dim;
  }
  md->n = n;
  md->m = m;
  md->nlocal = nlocal;
  md->local_names = jy_calloc(a, (size_t)nlocal + 1, sizeof(char *));
  md->coord_names = jy_calloc(a, (size_t)n + 1, sizeof(char *));
  md->row_names = jy_calloc(a, (size_t)m + 1, sizeof(char *));
  md->row_kinds = jy_calloc(a, (size_t)m + 1, sizeof(jyRowKind));
  md->row_part = jy_calloc(a, (size_t)m + 1, sizeof(int));
  int nrow_force = 0, npower = 0;
  for (int i = 0; i < md->nparts; i++) {
    const jyPartType *ty = md->parts[i].inst.type;
    nrow_force += md->parts[i].inst.nrows;
    npower += 2 * (md->parts[i].inst.nrows > 0 || ty->nonideal || ty->nonideal_law);
  }
  md->nuser = sys->nchannels;
  md->nchannels = 1 + 2 * n + JY_NUM_DERIVED + nforce + nrow_force + npower + nout + md->nuser;
  md->user_channels = jy_calloc(a, (size_t)md->nuser + 1, sizeof *md->user_channels);
  if (!md->user_channels) return JY_ERR_NOMEM;
  md->channel_names = jy_calloc(a, (size_t)md->nchannels, sizeof(char *));
  md->q0 = jy_calloc(a, (size_t)n + 1, sizeof(double));
  md->v0 = jy_calloc(a, (size_t)n + 1, sizeof(double));
  if (!md->local_names || !md->coord_names || !md->row_names || !md->row_kinds ||
      !md->row_part || !md->channel_names || !md->q0 || !md->v0)
    return JY_ERR_NOMEM;

  int ch = 0, local = 0;
  char **chn = md->channel_names;
  int bad = !(chn[ch++] = jy_strdup(a, "t"));
  for (int i = 0; i < sys->nparts; i++) {
    const jySysPart *sp = &sys->parts[i];
    jyModelPart *p = &md->parts[i];
    for (int j = 0; j < sp->shape.ncoords; j++, local++) {
      char *name = join_name(a, sp->name, ".", sp->shape.coord_names[j], "");
      md->local_names[local] = name;
      bad |= !name;
      p->shape.coord_names[j] = name ? name + strlen(sp->name) + 1 : "?";
      int k = p->coord_map[j];
      if (k < 0) continue;
      md->coord_names[k] = name;
      md->q0[k] = sp->q0[j];
      md->v0[k] = sp->v0[j];
    }
    for (int r = 0; r < sp->shape.nrows; r++) {
      int k = p->row_offset + r;
      bad |= !(md->row_names[k] = join_name(a, sp->name, ".", sp->shape.row_names[r], ""));
      md->row_kinds[k] = sp->shape.row_kinds[r];
      md->row_part[k] = i;
    }
  }
  if (bad) return JY_ERR_NOMEM;
  for (int k = 0; k < n && !bad; k++) bad |= !(chn[ch++] = jy_strdup(a, md->coord_names[k]));
  for (int k = 0; k < n && !bad; k++)
    bad |= !(chn[ch++] = join_name(a, "der(", md->coord_names[k], ")", ""));
  static const char *const derived[JY_NUM_DERIVED] = {
#define JY_DERIVED_NAME(id, name) name,
      JY_DERIVED_CHANNELS(JY_DERIVED_NAME)
#undef JY_DERIVED_NAME
  };
  md->ch_derived = ch;
  for (int k = 0; k < JY_NUM_DERIVED && !bad; k++) bad |= !(chn[ch++] = jy_strdup(a, derived[k]));
  for (int g = 0; g < md->nglues && !bad; g++) {
    jyModelGlue *mg = &md->glues[g];
    mg->force_channel = ch;
    for (int k = 0; k < mg->dim; k++) {
      const char *axis = mg->dim == 1 ? "" : mg->dim <= 3 ? axis_suffix[k] : index_suffix[k];
      if (mg->row_offset >= 0) {
        int row = mg->row_offset + k;
        bad |= !(md->row_names[row] = join_name(a, mg->name, axis, "", ""));
        md->row_kinds[row] = JY_ROW_POSITION;
        md->row_part[row] = -1;
      }
      bad |= !(chn[ch++] = join_name(a, "force.", mg->name, axis, ""));
    }
  }
  /* Each part's constraint rows: their ideal force (the row's multiplier) and the power of
   * the ideal and non-ideal constraint forces on the part. */
  for (int i = 0; i < md->nparts && !bad; i++) {
    jyModelPart *p = &md->parts[i];
    const jyPartType *ty = p->inst.type;
    p->row_force_channel = p->inst.nrows > 0 ? ch : -1;
    for (int r = 0; r < p->inst.nrows && !bad; r++)
      bad |= !(chn[ch++] = join_name(a, "force.", md->row_names[p->row_offset + r], "", ""));
    p->power_channel = -1;
    if (p->inst.nrows > 0 || ty->nonideal || ty->nonideal_law) {
      p->power_channel = ch;
      bad |= !(chn[ch++] = join_name(a, "power.", p->inst.name, ".ideal", ""));
      bad |= !(chn[ch++] = join_name(a, "power.", p->inst.name, ".nonideal", ""));
    }
  }
  for (int i = 0; i < md->nparts && !bad; i++) {
    jyModelPart *p = &md->parts[i];
    p->output_channel = ch;
    for (int o = 0; o < p->shape.noutputs; o++)
      bad |= !(chn[ch++] = join_name(a, p->inst.name, ".", p->shape.output_names[o], ""));
  }
  md->user_channel = ch;
  for (int u = 0; u < md->nuser && !bad; u++) {
    md->user_channels[u] = sys->channels[u];
    md->user_channels[u].name = NULL; /* the channel name table owns the text */
    bad |= !(chn[ch++] = jy_strdup(a, sys->channels[u].name));
    if (!bad) md->user_channels[u].name = chn[ch - 1];
  }
  if (bad) return JY_ERR_NOMEM;
  for (int i = 0; i < md->nparts; i++) {
    jyModelPart *p = &md->parts[i];
    size_t skip = strlen(p->inst.name) + 1; /* "part." */
    for (int r = 0; r < p->shape.nrows; r++)
      p->shape.row_names[r] = md->row_names[p->row_offset + r] + skip;
    for (int o = 0; o < p->shape.noutputs; o++)
      p->shape.output_names[o] = md->channel_names[p->output_channel + o] + skip;
  }
  return JY_OK;
}

/* Lets each part fill its private data. */
static jyStatus init_parts(jyModel *md, jySystem *sys) {
  for (int i = 0; i < md->nparts; i++) {
    jyModelPart *p = &md->parts[i];
    if (p->shape.instance_size > 0) {
      p->inst.data = jy_calloc(&md->alloc, 1, p->shape.instance_size);
      if (!p->inst.data) return JY_ERR_NOMEM;
    }
    if (p->inst.type->init) {
      char why[512] = "";
      if (p->inst.type->init(&p->inst, (void *)p->inst.data, why, sizeof why) != 0) {
        jy_set_error(sys->error, "part '%s' (%s), init: %s", p->inst.name, p->inst.type->name,
                     why[0] ? why : "failed");
        return JY_ERR_PART;
      }
    }
  }
  return JY_OK;
}

/* Grows a report string by one formatted line (bounded; allocation is fine at compile). */
static void report_line(jyModel *md, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void report_line(jyModel *md, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  size_t old = md->report ? strlen(md->report) : 0, add = strlen(line);
  char *grown = jy_alloc(&md->alloc, old + add + 2);
  if (!grown) return;
  if (old) memcpy(grown, md->report, old);
  memcpy(grown + old, line, add);
  grown[old + add] = '\n';
  grown[old + add + 1] = '\0';
  jy_free(&md->alloc, md->report);
  md->report = grown;
}

/* How strongly an initial value is held when the state is made consistent: the script's
 * values most, then the defaults of the others; the coordinates of a glued terminal block
 * (a pendulum's pivot, a mass glued to a point) follow what they are glued to. */
enum { HOLD_SET = 0, HOLD_DEFAULT = 1, FOLLOW_GLUE = 2, NUM_LEVELS = 3 };

/* Marks the coordinates of glued terminal blocks that follow their glue. Of a glue between
 * two blocks the massless part's block follows (as glue elimination would make it), else
 * both do. Eliminated glues have no coordinates left to mark. */
static void mark_followers(const jyModel *md, unsigned char *follows) {
  for (int g = 0; g < md->nglues; g++) {
    const jyModelGlue *gl = &md->glues[g];
    if (gl->link >= 0) continue;
    const int part[2] = {gl->part_a, gl->part_b}, term[2] = {gl->terminal_a, gl->terminal_b};
    int offset[2] = {-1, -1}, massless[2] = {0, 0};
    for (int side = 0; side < 2; side++) {
      const jyModelPart *p = &md->parts[part[side]];
      if (term[side] >= p->shape.nterminals) /* a coordinate terminal: a block of one */
        offset[side] = term[side] - p->shape.nterminals;
      else if (p->shape.terminals[term[side]].is_coord_block)
        offset[side] = p->shape.terminals[term[side]].coord_offset;
      massless[side] = offset[side] >= 0 && !p->inst.type->mass;
    }
    for (int side = 0; side < 2; side++) {
      if (offset[side] < 0 || (massless[1 - side] && !massless[side])) continue;
      for (int k = 0; k < gl->dim; k++) {
        int j = md->parts[part[side]].coord_map[offset[side] + k];
        if (j >= 0) follows[j] = 1;
      }
    }
  }
}

/* Gauss-Newton on selected rows, moving only the columns in `cols`: each step solves
 * J[rows, cols] dx = -r lexicographically by the columns' levels. x is q (position stage)
 * or v (velocity stage). */
typedef struct newton {
  jyEval *e;
  int position; /* 1: residual phi over position rows, move q; 0: rates, move v */
  double t;
  int *rows, nrows;
  int *cols, ncols;
  unsigned char *level; /* per column */
  double *mat;          /* nrows x ncols: J[rows, cols] */
  double *rest, *proj;  /* scratch: columns of higher levels (QR), projected columns + rhs */
  double *res, *dx, *rhs, *sv, *tau;
  int *picked;
  lapack_int *jpvt;
} newton;

static double stage_residual(const jyModel *md, jyEval *e, int position, int row) {
  if (position) return e->residual[row];
  return md->row_kinds[row] == JY_ROW_POSITION ? e->rate[row] : e->residual[row];
}

static double column_norm(const double *col, int n) {
  double sum = 0;
  for (int i = 0; i < n; i++) sum += col[i] * col[i];
  return sqrt(sum);
}

/* Moves the columns of one level as little as lets the columns of the higher levels meet
 * what remains of res: the part of res (and of the level's columns) outside the range of
 * the higher levels' columns is solved for minimum norm; res is updated. 0 on success. */
static int level_step(newton *nw, int level) {
  int rows = nw->nrows, nl = 0, nr = 0;
  double jnorm = 0;
  for (int c = 0; c < nw->ncols; c++) {
    const double *col = nw->mat + (size_t)c * rows;
    if (nw->level[c] == level) {
      memcpy(nw->proj + (size_t)nl * rows, col, sizeof(double) * (size_t)rows);
      jnorm = hypot(jnorm, column_norm(col, rows));
      nw->picked[nl++] = c;
    } else if (nw->level[c] > level) {
      memcpy(nw->rest + (size_t)nr++ * rows, col, sizeof(double) * (size_t)rows);
    }
  }
  if (nl == 0) return 0;
  memcpy(nw->proj + (size_t)nl * rows, nw->res, sizeof(double) * (size_t)rows);
  int rank = 0;
  if (nr > 0) { /* Q^T of the higher levels' columns: their range is the first `rank` rows */
    memset(nw->jpvt, 0, sizeof(lapack_int) * (size_t)nr);
    if (LAPACKE_dgeqp3(LAPACK_COL_MAJOR, rows, nr, nw->rest, rows, nw->jpvt, nw->tau) != 0)
      return -1;
    for (int k = 0; k < rows && k < nr; k++)
      if (fabs(nw->rest[k + (size_t)k * rows]) > 1e-12 * fabs(nw->rest[0])) rank = k + 1;
    if (rank > 0 && LAPACKE_dormqr(LAPACK_COL_MAJOR, 'L', 'T', rows, nl + 1, rank, nw->rest,
                                   rows, nw->tau, nw->proj, rows) != 0)
      return -1;
  }
  int left = rows - rank, ld = left > nl ? left : nl;
  double pnorm = 0;
  for (int k = 0; k < nl; k++)
    pnorm = hypot(pnorm, column_norm(nw->proj + rank + (size_t)k * rows, left));
  /* Nothing of these columns is outside the higher levels' range (up to rounding): hold. */
  if (left == 0 || !(pnorm > 1e-12 * jnorm)) return 0;
  memset(nw->rhs, 0, sizeof(double) * (size_t)ld);
  memcpy(nw->rhs, nw->proj + rank + (size_t)nl * rows, sizeof(double) * (size_t)left);
  lapack_int got = 0; /* singular values below 1e-12 of the unprojected columns' are zero */
  double rcond = fmin(0.5, fmax(1e-12, 1e-12 * jnorm / pnorm));
  if (LAPACKE_dgelsd(LAPACK_COL_MAJOR, left, nl, 1, nw->proj + rank, rows, nw->rhs, ld, nw->sv,
                     rcond, &got) != 0)
    return -1;
  for (int k = 0; k < nl; k++) {
    int c = nw->picked[k];
    nw->dx[c] = nw->rhs[k];
    for (int i = 0; i < rows; i++) nw->res[i] -= nw->mat[i + (size_t)c * rows] * nw->rhs[k];
  }
  return 0;
}

static jyStatus newton_solve(newton *nw, double *q, double *v, double tol, int max_iter,
                             double *final_residual) {
  jyEval *e = nw->e;
  const jyModel *md = e->model;
  double *x = nw->position ? q : v;
  double worst = INFINITY;
  for (int it = 0; it <= max_iter; it++) {
    jyStatus st = jy_assemble(e, q, v, nw->t, JY_ASM_CONSTRAINTS | JY_ASM_RESIDUALS);
    if (st != JY_OK) return st;
    worst = 0;
    for (int k = 0; k < nw->nrows; k++)
      worst = fmax(worst, fabs(stage_residual(md, e, nw->position, nw->rows[k])));
    if (worst <= tol || it == max_iter || nw->ncols == 0) break;
    int rows = nw->nrows;
    for (int c = 0; c < nw->ncols; c++)
      for (int k = 0; k < rows; k++)
        nw->mat[k + (size_t)c * rows] = e->jac[nw->rows[k] + (size_t)nw->cols[c] * md->m];
    for (int k = 0; k < rows; k++) nw->res[k] = -stage_residual(md, e, nw->position, nw->rows[k]);
    memset(nw->dx, 0, sizeof(double) * (size_t)nw->ncols);
    int failed = 0;
    for (int level = 0; level < NUM_LEVELS && !failed; level++) failed = level_step(nw, level);
    if (failed) break;
    for (int c = 0; c < nw->ncols; c++) x[nw->cols[c]] += nw->dx[c];
  }
  *final_residual = worst;
  return JY_OK;
}

static void newton_free(const jyAllocator *a, newton *nw) {
  jy_free(a, nw->rows);
  jy_free(a, nw->cols);
  jy_free(a, nw->level);
  jy_free(a, nw->mat);
  jy_free(a, nw->rest);
  jy_free(a, nw->proj);
  jy_free(a, nw->res);
  jy_free(a, nw->dx);
  jy_free(a, nw->rhs);
  jy_free(a, nw->sv);
  jy_free(a, nw->tau);
  jy_free(a, nw->picked);
  jy_free(a, nw->jpvt);
}

static int newton_alloc(const jyAllocator *a, newton *nw, int n, int m) {
  size_t big = (size_t)(m > n ? m : n) + 1;
  nw->rows = jy_calloc(a, (size_t)m + 1, sizeof(int));
  nw->cols = jy_calloc(a, (size_t)n + 1, sizeof(int));
  nw->level = jy_calloc(a, (size_t)n + 1, 1);
  nw->mat = jy_calloc(a, (size_t)m * n + 1, sizeof(double));
  nw->rest = jy_calloc(a, (size_t)m * n + 1, sizeof(double));
  nw->proj = jy_calloc(a, (size_t)m * (n + 1) + 1, sizeof(double));
  nw->res = jy_calloc(a, (size_t)m + 1, sizeof(double));
  nw->dx = jy_calloc(a, (size_t)n + 1, sizeof(double));
  nw->rhs = jy_calloc(a, big, sizeof(double));
  nw->sv = jy_calloc(a, big, sizeof(double));
  nw->tau = jy_calloc(a, big, sizeof(double));
  nw->picked = jy_calloc(a, (size_t)n + 1, sizeof(int));
  nw->jpvt = jy_calloc(a, (size_t)n + 1, sizeof(lapack_int));
  return nw->rows && nw->cols && nw->level && nw->mat && nw->rest && nw->proj && nw->res &&
         nw->dx && nw->rhs && nw->sv && nw->tau && nw->picked && nw->jpvt;
}

/* Levels of the model's coordinates from the script's flags (set_q, set_v per coordinate);
 * reports the initial values given to eliminated coordinates, which follow their glue. */
static void mark_set(jyModel *md, const jySystem *sys, unsigned char *q_set,
                     unsigned char *v_set) {
  for (int i = 0; i < md->nparts; i++) {
    const jySysPart *sp = &sys->parts[i];
    for (int j = 0; j < sp->shape.ncoords; j++) {
      int k = md->parts[i].coord_map[j];
      if (k >= 0) {
        q_set[k] = sp->q_set[j];
        v_set[k] = sp->v_set[j];
      } else if (sp->q_set[j] || sp->v_set[j]) {
        const jyModelLink *link = &md->links[-1 - k];
        const jyModelPart *src = &md->parts[link->source];
        report_line(md, "initial value of %s.%s ignored: it follows %s.%s through glue '%s'",
                    sp->name, sp->shape.coord_names[j], src->inst.name,
                    link->terminal < src->shape.nterminals
                        ? src->shape.terminals[link->terminal].name
                        : src->shape.coord_names[link->terminal - src->shape.nterminals],
                    md->glues[link->glue].name);
      }
    }
  }
}

/* Meets one stage's rows (positions, or velocities), moving first only the followers, then
 * the unset values too, then everything; *tol gets the stage's tolerance. */
static jyStatus meet_stage(jyModel *md, jySystem *sys, newton *nw, const unsigned char *set,
                           const unsigned char *follows, double *tol) {
  int n = md->n, m = md->m, stage = nw->position;
  double scale = 1;
  for (int j = 0; j < n; j++) scale = fmax(scale, fabs(stage ? md->q0[j] : md->v0[j]));
  *tol = md->solver.assembly_tol * scale;
  nw->nrows = 0;
  for (int i = 0; i < m; i++)
    if (stage ? md->row_kinds[i] == JY_ROW_POSITION : md->row_kinds[i] != JY_ROW_ACCELERATION)
      nw->rows[nw->nrows++] = i;
  if (nw->nrows == 0) return JY_OK;
  double residual = INFINITY;
  for (int lowest = FOLLOW_GLUE; lowest >= HOLD_SET && !(residual <= *tol); lowest--) {
    nw->ncols = 0;
    for (int j = 0; j < n; j++) {
      int level = set[j] ? HOLD_SET : follows[j] ? FOLLOW_GLUE : HOLD_DEFAULT;
      if (level < lowest) continue;
      nw->level[nw->ncols] = (unsigned char)level;
      nw->cols[nw->ncols++] = j;
    }
    jyStatus st = newton_solve(nw, md->q0, md->v0, *tol, 50, &residual);
    if (st != JY_OK) {
      jy_set_error(sys->error, "initial state: %s", nw->e->error);
      return st;
    }
  }
  if (residual <= *tol) return JY_OK;
  jy_set_error(sys->error, "inconsistent constraints: no %s satisfies these rows at t = 0: ",
               stage ? "configuration" : "velocity");
  int listed = 0;
  for (int k = 0; k < nw->nrows; k++) {
    int row = nw->rows[k];
    double r = stage_residual(md, nw->e, stage, row);
    if (fabs(r) <= *tol) continue;
    char item[300];
    snprintf(item, sizeof item, "%s%s (residual %.3g)", listed++ ? ", " : "", md->row_names[row],
             r);
    size_t used = strlen(sys->error);
    if (used + 1 < JY_ERROR_LEN) snprintf(sys->error + used, JY_ERROR_LEN - used, "%s", item);
  }
  return JY_ERR_INCONSISTENT;
}

/* Keeps and reports the values that moved beyond the stage's tolerance. */
static jyStatus record_moved(jyModel *md, const double *before, const double *after,
                             const unsigned char *set, const unsigned char *follows,
                             int velocity, double tol) {
  for (int j = 0; j < md->n; j++) {
    if (!(fabs(after[j] - before[j]) > tol)) continue;
    jyMovedValue *grown = jy_alloc(&md->alloc, sizeof *grown * (size_t)(md->nmoved + 1));
    if (!grown) return JY_ERR_NOMEM;
    if (md->nmoved) memcpy(grown, md->moved, sizeof *grown * (size_t)md->nmoved);
    jy_free(&md->alloc, md->moved);
    md->moved = grown;
    md->moved[md->nmoved++] = (jyMovedValue){j, velocity, set[j], !set[j] && follows[j],
                                             before[j], after[j]};
    if (md->nmoved > 20) continue;
    report_line(md, "initial %s %s: %.9g -> %.9g (by %.3g)%s", velocity ? "velocity" : "value",
                md->coord_names[j], before[j], after[j], after[j] - before[j],
                set[j] ? " [set by the script]" : follows[j] ? " [follows its glue]" : "");
  }
  return JY_OK;
}

/* Makes (q0, v0) consistent: positions, then velocities. Each stage first moves only the
 * coordinates of glued terminal blocks, then the values the script did not set, then all;
 * within a step the most-held values move least (set, then unset, then followers). */
static jyStatus assemble_initial(jyModel *md, jySystem *sys, jyEval *e) {
  int n = md->n, m = md->m;
  const jyAllocator *a = &md->alloc;
  if (m == 0) return JY_OK;
  unsigned char *q_set = jy_calloc(a, (size_t)n + 1, 1), *v_set = jy_calloc(a, (size_t)n + 1, 1);
  unsigned char *follows = jy_calloc(a, (size_t)n + 1, 1);
  double *q_before = jy_calloc(a, (size_t)n + 1, sizeof(double));
  double *v_before = jy_calloc(a, (size_t)n + 1, sizeof(double));
  newton nw = {.e = e, .t = 0};
  jyStatus st = JY_ERR_NOMEM;
  if (!newton_alloc(a, &nw, n, m) || !q_set || !v_set || !follows || !q_before || !v_before)
    goto out;
  mark_set(md, sys, q_set, v_set);
  mark_followers(md, follows);
  memcpy(q_before, md->q0, sizeof(double) * (size_t)n);
  memcpy(v_before, md->v0, sizeof(double) * (size_t)n);
  double q_tol = 0, v_tol = 0;
  nw.position = 1;
  st = meet_stage(md, sys, &nw, q_set, follows, &q_tol);
  if (st != JY_OK) goto out;
  nw.position = 0;
  st = meet_stage(md, sys, &nw, v_set, follows, &v_tol);
  if (st != JY_OK) goto out;
  st = record_moved(md, q_before, md->q0, q_set, follows, 0, q_tol);
  if (st == JY_OK) st = record_moved(md, v_before, md->v0, v_set, follows, 1, v_tol);
  if (md->nmoved > 20) report_line(md, "... and %d more initial values moved", md->nmoved - 20);
out:
  newton_free(a, &nw);
  jy_free(a, q_set);
  jy_free(a, v_set);
  jy_free(a, follows);
  jy_free(a, q_before);
  jy_free(a, v_before);
  return st;
}

/* Decides the rows that depend on the others at the consistent initial state (QR with
 * column pivoting of the row-scaled A^T), keeps them in the model, so that every evaluator
 * leaves them out of its solves, and names them in the report. */
static jyStatus decide_dependent_rows(jyModel *md, jyEval *e) {
  int m = md->m;
  if (m == 0 || md->n == 0) return JY_OK;
  jyStatus st = jy_assemble(e, md->q0, md->v0, 0, JY_ASM_CONSTRAINTS);
  if (st != JY_OK) return st;
  int count = jy_eval_decide_dependent(e);
  if (count <= 0) return JY_OK;
  md->dependent_rows = jy_calloc(&md->alloc, (size_t)m, 1);
  if (!md->dependent_rows) return JY_ERR_NOMEM;
  memcpy(md->dependent_rows, e->dependent, (size_t)m);
  md->ndependent = count;
  char list[2048] = "";
  for (int i = 0, listed = 0; i < m; i++) {
    size_t used = strlen(list);
    if (md->dependent_rows[i] && used + 1 < sizeof list)
      snprintf(list + used, sizeof list - used, "%s%s", listed++ ? ", " : "", md->row_names[i]);
  }
  report_line(md, "redundant constraints: rank %d of %d rows; dependent rows: %s", m - count, m,
              list);
  return JY_OK;
}

/* Names the first solver setting out of its range, or returns 0. */
static int bad_solver_def(const jySolverDef *d, char *error) {
  const struct { const char *name; double value; int relative; } f[] = {
      {"rank_rcond", d->rank_rcond, 1},         {"augment_scale", d->augment_scale, 0},
      {"consistency_tol", d->consistency_tol, 0}, {"assembly_tol", d->assembly_tol, 0},
      {"dependent_tol", d->dependent_tol, 0},   {"dependent_rcond", d->dependent_rcond, 1}};
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++)
    if (!(f[i].value > 0 && isfinite(f[i].value)) || (f[i].relative && !(f[i].value < 1))) {
      jy_set_error(error, "solver setting %s = %g must be %s", f[i].name, f[i].value,
                   f[i].relative ? "between 0 and 1 (a relative cut)" : "a positive number");
      return 1;
    }
  if (d->dependent_rcond < d->rank_rcond) {
    jy_set_error(error, "solver setting dependent_rcond = %g must be at least rank_rcond = %g "
                 "(a dependent row must not count as independent where the rank cut says it "
                 "is dependent)", d->dependent_rcond, d->rank_rcond);
    return 1;
  }
  if (d->sparse_min_coords < 0) {
    jy_set_error(error, "solver setting sparse_min_coords = %d must be >= 0 (0: never)",
                 d->sparse_min_coords);
    return 1;
  }
  return 0;
}

jyStatus jy_model_compile(jySystem *sys, const jySolverDef *def, jyModel **out) {
  if (!sys || !out) return JY_ERR_INVALID;
  *out = NULL;
  if (def && bad_solver_def(def, sys->error)) return JY_ERR_INVALID;
  jyModel *md = jy_calloc(&sys->env->alloc, 1, sizeof *md);
  if (!md) return JY_ERR_NOMEM;
  md->alloc = sys->env->alloc;
  md->solver = def ? *def : jy_default_solver_def();
  jyStatus st = lay_out(md, sys);
  for (int u = 0; u < md->nuser && st == JY_OK; u++)
    for (int c = 0; c < md->user_channel; c++)
      if (strcmp(md->channel_names[c], md->channel_names[md->user_channel + u]) == 0) {
        jy_set_error(sys->error, "channel '%s' has the name of a channel the model has "
                     "already: choose another", md->channel_names[c]);
        st = JY_ERR_INVALID;
        break;
      }
  if (st == JY_OK && md->nlinks > 0) {
    int coords = 0;
    for (int l = 0; l < md->nlinks; l++) coords += md->links[l].dim;
    report_line(md, "glue elimination: %d glues and %d terminal coordinates substituted away",
                md->nlinks, coords);
  }
  for (int i = 0; i < md->nparts && st == JY_OK; i++)
    if (md->parts[i].inst.type->nonideal_law && !(md->parts[i].shape.flags & JY_PART_NO_LAW))
      md->has_laws = 1;
  if (st == JY_OK) st = init_parts(md, sys);
  jyEval *e = st == JY_OK ? jy_eval_create(md) : NULL;
  if (st == JY_OK && !e) st = JY_ERR_NOMEM;
  if (st == JY_OK) st = assemble_initial(md, sys, e);
  if (st == JY_OK) {
    st = decide_dependent_rows(md, e);
    if (st == JY_ERR_PART) jy_set_error(sys->error, "%s", e->error);
  }
  if (st == JY_OK) {
    double *acc = jy_calloc(&md->alloc, (size_t)md->n + 1, sizeof(double));
    if (!acc) {
      st = JY_ERR_NOMEM;
    } else {
      st = jy_eval_acceleration(e, md->q0, md->v0, 0, acc);
      if (st != JY_OK) jy_set_error(sys->error, "%s", e->error);
      jy_free(&md->alloc, acc);
    }
  }
  jy_eval_destroy(e);
  if (st != JY_OK) {
    if (st == JY_ERR_NOMEM) jy_set_error(sys->error, "out of memory compiling the model");
    jy_model_destroy(md);
    return st;
  }
  *out = md;
  return JY_OK;
}

int jy_model_num_coords(const jyModel *model) { return model ? model->n : 0; }
int jy_model_num_rows(const jyModel *model) { return model ? model->m : 0; }

const char *jy_model_coord_name(const jyModel *model, int i) {
  return model && i >= 0 && i < model->n ? model->coord_names[i] : NULL;
}

int jy_model_find_coord(const jyModel *model, const char *name) {
  if (model && name)
    for (int i = 0; i < model->n; i++)
      if (strcmp(model->coord_names[i], name) == 0) return i;
  return -1;
}

const char *jy_model_row_name(const jyModel *model, int i) {
  return model && i >= 0 && i < model->m ? model->row_names[i] : NULL;
}

const double *jy_model_initial_q(const jyModel *model) { return model ? model->q0 : NULL; }
const double *jy_model_initial_v(const jyModel *model) { return model ? model->v0 : NULL; }
int jy_model_num_moved(const jyModel *model) { return model ? model->nmoved : 0; }
const jyMovedValue *jy_model_moved(const jyModel *model, int i) {
  return model && i >= 0 && i < model->nmoved ? &model->moved[i] : NULL;
}
const char *jy_model_report(const jyModel *model) {
  return model && model->report ? model->report : "";
}

int jy_model_num_channels(const jyModel *model) { return model ? model->nchannels : 0; }

const char *jy_model_channel_name(const jyModel *model, int i) {
  return model && i >= 0 && i < model->nchannels ? model->channel_names[i] : NULL;
}

int jy_model_find_channel(const jyModel *model, const char *name) {
  if (model && name)
    for (int i = 0; i < model->nchannels; i++)
      if (strcmp(model->channel_names[i], name) == 0) return i;
  return -1;
}
