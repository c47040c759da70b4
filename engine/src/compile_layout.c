/* The layout stage of compiling a model: copies what the model keeps of the system's parts
 * and glues (the system may die first), numbers the coordinates (each part's own ones in
 * order, eliminated ones left out), the constraint rows (parts' rows, then the glue rows
 * kept) and the output channels, and names them all. The channel order here is the one
 * eval_channels.c fills. */
#include <stdio.h>
#include <string.h>

#include "compile.h"

static char *join_name(const jyAllocator *a, const char *prefix, const char *x, const char *y,
                       const char *suffix) {
  /* copied, not printed: tens of thousands of names on a large model, where snprintf was a
   * tenth of the compile */
  const char *piece[4] = {prefix, x, y, suffix};
  size_t size[4], len = 1;
  for (int k = 0; k < 4; k++) len += size[k] = strlen(piece[k]);
  char *s = jy_alloc(a, len), *at = s;
  if (!s) return NULL;
  for (int k = 0; k < 4; k++) {
    memcpy(at, piece[k], size[k]);
    at += size[k];
  }
  *at = '\0';
  return s;
}

/* Component names of a glue's force: x, y, z up to 3-D, numbered beyond (frames). */
static const char *const axis_suffix[3] = {".x", ".y", ".z"};
static const char *const index_suffix[JY_TERMINAL_MAX_DIM] = {".1", ".2", ".3", ".4",
                                                              ".5", ".6", ".7"};

static const char *glue_axis(const jyModelGlue *mg, int k) {
  return mg->dim == 1 ? "" : mg->dim <= 3 ? axis_suffix[k] : index_suffix[k];
}

/* A part reports the power of its constraint forces when it has rows or non-ideal forces. */
static int has_power_channels(const jyModelPart *p) {
  const jyPartType *ty = p->inst.type;
  return p->inst.nrows > 0 || ty->nonideal || ty->nonideal_law;
}

/* One part as the model keeps it. The model's shape must not point into the system: it is
 * the model's own copy, one per distinct shape. */
static jyStatus copy_part(jyModel *md, const jySysPart *sp, jyModelPart *p) {
  const jyAllocator *a = &md->alloc;
  if (!(p->shape = jy_shape_pool_intern(&md->shapes, a, sp->shape))) return JY_ERR_NOMEM;
  p->inst.type = sp->type;
  p->inst.ncoords = sp->shape->ncoords;
  p->inst.nrows = sp->shape->nrows;
  md->nlocal += sp->shape->ncoords;
  if (sp->shape->ncoords > md->max_part_coords) md->max_part_coords = sp->shape->ncoords;
  if (sp->shape->nrows > md->max_part_rows) md->max_part_rows = sp->shape->nrows;
  p->inst.name = jy_strdup(a, sp->name);
  double *params = jy_calloc(a, (size_t)sp->type->nparams + 1, sizeof(double));
  p->inst.params = params;
  p->coord_map = jy_calloc(a, (size_t)sp->shape->ncoords + 1, sizeof(int));
  if (!p->inst.name || !params || !p->coord_map) return JY_ERR_NOMEM;
  memcpy(params, sp->params, sizeof(double) * (size_t)sp->type->nparams);
  return JY_OK;
}

static jyStatus copy_parts_and_glues(jyModel *md, const jySystem *sys) {
  const jyAllocator *a = &md->alloc;
  memcpy(md->gravity, sys->gravity, sizeof md->gravity);
  md->parts = jy_calloc(a, (size_t)sys->nparts + 1, sizeof *md->parts);
  md->glues = jy_calloc(a, (size_t)sys->nglues + 1, sizeof *md->glues);
  if (!md->parts || !md->glues) return JY_ERR_NOMEM;
  md->nparts = sys->nparts;
  md->nglues = sys->nglues;
  for (int i = 0; i < sys->nparts; i++) {
    jyStatus st = copy_part(md, &sys->parts[i], &md->parts[i]);
    if (st != JY_OK) return st;
  }
  for (int g = 0; g < sys->nglues; g++) {
    const jySysGlue *sg = &sys->glues[g];
    jyModelGlue *mg = &md->glues[g];
    if (!(mg->name = jy_strdup(a, sg->name))) return JY_ERR_NOMEM;
    mg->part_a = sg->a.part, mg->terminal_a = sg->a.terminal;
    mg->part_b = sg->b.part, mg->terminal_b = sg->b.terminal;
    mg->dim = sg->dim;
  }
  return JY_OK;
}

/* Coordinates: each part's own ones in order (the eliminated ones map to -1 - link); rows:
 * parts' rows, then the glue rows kept. */
static void number_coords_and_rows(jyModel *md) {
  int n = 0, m = 0;
  for (int i = 0; i < md->nparts; i++) {
    jyModelPart *p = &md->parts[i];
    for (int j = 0; j < p->inst.ncoords; j++) p->coord_map[j] = 0;
    for (int l = p->first_link; l < p->first_link + p->nlinks; l++)
      for (int c = 0; c < md->links[l].dim; c++) p->coord_map[md->links[l].offset + c] = -1 - l;
    p->coord_offset = n;
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
}

/* t, every part's q, der(q), the derived channels, glue forces, row forces and powers,
 * part outputs, impulses of parts with modes, user channels. */
static int count_channels(const jyModel *md) {
  int count = 1 + 2 * md->nlocal + JY_NUM_DERIVED + md->nuser + md->ninputs;
  for (int g = 0; g < md->nglues; g++) count += md->glues[g].dim;
  for (int i = 0; i < md->nparts; i++) {
    const jyModelPart *p = &md->parts[i];
    count += p->inst.nrows + 2 * has_power_channels(p) + p->shape->noutputs;
    count += p->shape->hybrid != NULL; /* impulse.<part> */
  }
  return count;
}

static jyStatus allocate_tables(jyModel *md, const jySystem *sys) {
  const jyAllocator *a = &md->alloc;
  size_t n = (size_t)md->n, m = (size_t)md->m;
  md->local_names = jy_calloc(a, (size_t)md->nlocal + 1, sizeof(char *));
  md->local_coord = jy_calloc(a, (size_t)md->nlocal + 1, sizeof(int));
  md->coord_names = jy_calloc(a, n + 1, sizeof(char *));
  md->row_names = jy_calloc(a, m + 1, sizeof(char *));
  md->row_kinds = jy_calloc(a, m + 1, sizeof(jyRowKind));
  md->row_part = jy_calloc(a, m + 1, sizeof(int));
  md->nuser = sys->nchannels;
  md->nchannels = count_channels(md);
  md->user_channels = jy_calloc(a, (size_t)md->nuser + 1, sizeof *md->user_channels);
  md->channel_names = jy_calloc(a, (size_t)md->nchannels, sizeof(char *));
  md->q0 = jy_calloc(a, n + 1, sizeof(double));
  md->v0 = jy_calloc(a, n + 1, sizeof(double));
  return md->local_names && md->local_coord && md->coord_names && md->row_names && md->row_kinds &&
      md->row_part && md->user_channels && md->channel_names && md->q0 && md->v0
    ? JY_OK
    : JY_ERR_NOMEM;
}

/* "part.coord" for every coordinate (eliminated ones too, in local_names), the initial
 * values of the kept ones, and "part.row" with the kind of every part row. */
static jyStatus name_coords_and_rows(jyModel *md, const jySystem *sys) {
  const jyAllocator *a = &md->alloc;
  int local = 0, bad = 0;
  for (int i = 0; i < sys->nparts; i++) {
    const jySysPart *sp = &sys->parts[i];
    jyModelPart *p = &md->parts[i];
    for (int j = 0; j < sp->shape->ncoords; j++, local++) {
      char *name = join_name(a, sp->name, ".", sp->shape->coord_names[j], "");
      md->local_names[local] = name;
      bad |= !name;
      int k = p->coord_map[j];
      md->local_coord[local] = k >= 0 ? k : -1;
      if (k < 0) continue;
      md->coord_names[k] = name;
      md->q0[k] = sp->q0[j];
      md->v0[k] = sp->v0[j];
    }
    for (int r = 0; r < sp->shape->nrows; r++) {
      int k = p->row_offset + r;
      bad |= !(md->row_names[k] = join_name(a, sp->name, ".", sp->shape->row_names[r], ""));
      md->row_kinds[k] = sp->shape->row_kinds[r];
      md->row_part[k] = i;
    }
  }
  return bad ? JY_ERR_NOMEM : JY_OK;
}

/* Appends channel names; after a failed copy it only counts the failure. */
typedef struct Namer {
  jyModel *md;
  int ch, bad;
} Namer;

static void add_channel(Namer *nm, char *name) {
  nm->bad |= !name;
  nm->md->channel_names[nm->ch++] = name;
}

static void name_state_and_derived(Namer *nm) {
  jyModel *md = nm->md;
  const jyAllocator *a = &md->alloc;
  static const char *const derived[JY_NUM_DERIVED] = {
#define JY_DERIVED_NAME(id, name) name,
    JY_DERIVED_CHANNELS(JY_DERIVED_NAME)
#undef JY_DERIVED_NAME
  };
  add_channel(nm, jy_strdup(a, "t"));
  /* every part's coordinates, those glue elimination substituted away too (they follow
   * what they are glued to): the columns do not depend on how the model was compiled */
  for (int k = 0; k < md->nlocal && !nm->bad; k++)
    add_channel(nm, jy_strdup(a, md->local_names[k]));
  for (int k = 0; k < md->nlocal && !nm->bad; k++)
    add_channel(nm, join_name(a, "der(", md->local_names[k], ")", ""));
  md->ch_derived = nm->ch;
  for (int k = 0; k < JY_NUM_DERIVED && !nm->bad; k++) add_channel(nm, jy_strdup(a, derived[k]));
}

/* A glue's force components (and the names of its rows, when it keeps them). */
static void name_glues(Namer *nm) {
  jyModel *md = nm->md;
  const jyAllocator *a = &md->alloc;
  for (int g = 0; g < md->nglues && !nm->bad; g++) {
    jyModelGlue *mg = &md->glues[g];
    mg->force_channel = nm->ch;
    for (int k = 0; k < mg->dim; k++) {
      if (mg->row_offset >= 0) {
        int row = mg->row_offset + k;
        nm->bad |= !(md->row_names[row] = join_name(a, mg->name, glue_axis(mg, k), "", ""));
        md->row_kinds[row] = JY_ROW_POSITION;
        md->row_part[row] = -1;
      }
      add_channel(nm, join_name(a, "force.", mg->name, glue_axis(mg, k), ""));
    }
  }
}

/* Each part's constraint rows: their ideal force (the row's multiplier) and the power of
 * the ideal and non-ideal constraint forces on the part; then every part's outputs. */
static void name_part_channels(Namer *nm) {
  jyModel *md = nm->md;
  const jyAllocator *a = &md->alloc;
  for (int i = 0; i < md->nparts && !nm->bad; i++) {
    jyModelPart *p = &md->parts[i];
    p->row_force_channel = p->inst.nrows > 0 ? nm->ch : -1;
    for (int r = 0; r < p->inst.nrows && !nm->bad; r++)
      add_channel(nm, join_name(a, "force.", md->row_names[p->row_offset + r], "", ""));
    p->power_channel = -1;
    if (has_power_channels(p)) {
      p->power_channel = nm->ch;
      add_channel(nm, join_name(a, "power.", p->inst.name, ".ideal", ""));
      add_channel(nm, join_name(a, "power.", p->inst.name, ".nonideal", ""));
    }
  }
  for (int i = 0; i < md->nparts && !nm->bad; i++) {
    jyModelPart *p = &md->parts[i];
    p->output_channel = nm->ch;
    for (int o = 0; o < p->shape->noutputs; o++)
      add_channel(nm, join_name(a, p->inst.name, ".", p->shape->output_names[o], ""));
  }
  for (int i = 0; i < md->nparts && !nm->bad; i++) { /* parts with modes: their impacts */
    jyModelPart *p = &md->parts[i];
    p->impulse_channel = p->shape->hybrid ? nm->ch : -1;
    if (p->shape->hybrid) add_channel(nm, join_name(a, "impulse.", p->inst.name, "", ""));
  }
}

static void name_user_channels(Namer *nm, const jySystem *sys) {
  jyModel *md = nm->md;
  md->input_channel = nm->ch; /* the inputs first: a user channel may read them */
  for (int k = 0; k < sys->ninputs && !nm->bad; k++)
    add_channel(nm, join_name(&md->alloc, "input.", sys->inputs[k].name, "", ""));
  md->user_channel = nm->ch;
  for (int u = 0; u < md->nuser && !nm->bad; u++) {
    md->user_channels[u] = sys->channels[u];
    md->user_channels[u].name = NULL; /* the channel name table owns the text */
    add_channel(nm, jy_strdup(&md->alloc, sys->channels[u].name));
    if (!nm->bad) md->user_channels[u].name = md->channel_names[nm->ch - 1];
  }
}

jyStatus jy_compile_layout(jyModel *md, const jySystem *sys) {
  jyStatus st = copy_parts_and_glues(md, sys);
  if (st == JY_OK) st = jy_compile_glue_links(md, sys);
  if (st != JY_OK) return st;
  number_coords_and_rows(md);
  st = jy_compile_chain_columns(md);
  if (st == JY_OK) st = allocate_tables(md, sys);
  if (st == JY_OK) st = name_coords_and_rows(md, sys);
  if (st != JY_OK) return st;
  Namer nm = {md, 0, 0};
  name_state_and_derived(&nm);
  name_glues(&nm);
  name_part_channels(&nm);
  name_user_channels(&nm, sys);
  return nm.bad ? JY_ERR_NOMEM : JY_OK;
}
