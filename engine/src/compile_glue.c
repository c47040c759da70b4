/* Glue elimination, a stage of compiling a model: a glue whose one side is a block of a
 * massless part's own coordinates is removed by substituting those coordinates (they
 * follow the terminal on the other side), so the model has fewer coordinates and rows.
 * docs/numerics.md describes it; dyn_assemble.c maps the part's blocks through it. */
#include <limits.h>

#include "compile.h"

/* How many glues hold each terminal of each part, counted once so that deciding every glue
 * is O(parts + glues): terminal k of part i at glued[first[i] + k]; on_coord[i] when a glue
 * holds one of part i's coordinate terminals. */
typedef struct glue_counts {
  int *first;              /* nparts + 1: each part's first terminal in glued */
  int *glued;              /* sum of the parts' terminals */
  unsigned char *on_coord; /* nparts: a glue on one of the part's coordinates */
} glue_counts;

static int count_glues(const jyAllocator *a, const jySystem *sys, glue_counts *c) {
  int np = sys->nparts;
  c->first = jy_calloc(a, (size_t)np + 1, sizeof(int));
  c->on_coord = jy_calloc(a, (size_t)np + 1, 1);
  if (!c->first || !c->on_coord) return -1;
  for (int i = 0; i < np; i++) c->first[i + 1] = c->first[i] + sys->parts[i].shape->nterminals;
  c->glued = jy_calloc(a, (size_t)c->first[np] + 1, sizeof(int));
  if (!c->glued) return -1;
  for (int g = 0; g < sys->nglues; g++)
    for (int side = 0; side < 2; side++) {
      jyTerminalId id = side ? sys->glues[g].b : sys->glues[g].a;
      if (id.terminal >= sys->parts[id.part].shape->nterminals)
        c->on_coord[id.part] = 1;
      else
        c->glued[c->first[id.part] + id.terminal]++;
    }
  return 0;
}

static void free_counts(const jyAllocator *a, glue_counts *c) {
  jy_free(a, c->first);
  jy_free(a, c->glued);
  jy_free(a, c->on_coord);
}

/* How far chains may grow: a chained block's G has a column for every coordinate up the
 * chain, and its part's mapped M block grows as the square of that, while each link
 * substituted saves its rows. Past either bound the glue keeps its rows and a new chain
 * starts. A model that wider chains leave with no rows at all is eliminated that way: no
 * projection and no rows to solve for pay for the dense blocks up to ROWLESS_MAX_COLS
 * (docs/numerics.md, "Glue elimination", has the measurements). */
enum { CHAIN_MAX_COLS = 6, ROWLESS_MAX_COLS = 16, CHAIN_MAX_DEPTH = 16 };
/* A model whose glues can all be eliminated, with no rows of its own, whose links form a
 * tree (links_form_tree) takes neither bound: its acceleration comes from the articulated
 * recursion over the links (dyn_tree.c), O(1) a part at any depth, and no part keeps a G. */

/* Whether terminal k of a part may be eliminated by substitution: the part has no mass (or
 * declares JY_PART_FOLLOWS_GLUE), the terminal is exactly a block of its own coordinates,
 * it is glued only once, its block overlaps no other glued coordinate-block terminal of the
 * part, and nothing is glued to the part's coordinate terminals. The glue's force is then
 * recovered from the block's balance (eval_channels.c). */
static int eliminable(const jySystem *sys, const glue_counts *c, int part, int k) {
  const jySysPart *sp = &sys->parts[part];
  const jyPartShape *s = sp->shape;
  if ((sp->type->mass && !(s->flags & JY_PART_FOLLOWS_GLUE)) || k < 0 || k >= s->nterminals)
    return 0;
  const jyTerminalSpec *t = &s->terminals[k];
  if (!t->is_coord_block || t->coord_offset < 0 || t->coord_offset + t->dim > s->ncoords) return 0;
  const int *glued = c->glued + c->first[part];
  if (c->on_coord[part] || glued[k] != 1) return 0;
  for (int j = 0; j < s->nterminals; j++) {
    const jyTerminalSpec *o = &s->terminals[j];
    if (j == k || !glued[j] || !o->is_coord_block) continue;
    if (o->coord_offset < t->coord_offset + t->dim && t->coord_offset < o->coord_offset + o->dim)
      return 0;
  }
  return 1;
}

/* Chooses the glues to eliminate, chains within max_cols and max_depth, into found
 * (and md->glues[g].link 0 for each, -1 otherwise); returns how many. A part that is
 * followed does not follow later, so a source's columns are final when it is chosen. */
static int choose_links(jyModel *md, const jySystem *sys, const glue_counts *counts, int max_cols,
                        int max_depth, int *target, int *source, int *width, int *depth,
                        jyModelLink *found) {
  int np = sys->nparts, count = 0;
  for (int i = 0; i < np; i++) {
    target[i] = source[i] = depth[i] = 0;
    width[i] = sys->parts[i].shape->ncoords; /* columns, an upper bound */
  }
  for (int g = 0; g < sys->nglues; g++) {
    const jySysGlue *sg = &sys->glues[g];
    md->glues[g].link = -1;
    /* a massless block follows in preference to one of a part with mass */
    for (int pass = 0; pass < 4 && md->glues[g].link < 0; pass++) {
      int side = pass % 2, massless = pass < 2;
      jyTerminalId x = side ? sg->b : sg->a, y = side ? sg->a : sg->b;
      if (!md->solver.eliminate_glue || x.part == y.part || source[x.part] ||
          (sys->parts[x.part].type->mass == NULL) != massless ||
          !eliminable(sys, counts, x.part, x.terminal))
        continue;
      const jyTerminalSpec *t = &sys->parts[x.part].shape->terminals[x.terminal];
      int w = width[x.part] - t->dim + width[y.part];
      if (target[y.part] && (w > max_cols || depth[y.part] + 1 > max_depth)) continue;
      found[count++] =
        (jyModelLink){g, x.part, t->coord_offset, t->dim, y.part, y.terminal, side == 0, NULL};
      target[x.part] = 1;
      source[y.part] = 1;
      width[x.part] = w;
      if (depth[y.part] + 1 > depth[x.part]) depth[x.part] = depth[y.part] + 1;
      md->glues[g].link = 0; /* numbered below */
    }
  }
  return count;
}

/* Whether the chosen links (all the glues) make a tree for the articulated recursion: each
 * part with links follows a single source part, or is a force element between parts (no
 * mass, every coordinate eliminated, followed by nothing: its force reaches each source and
 * no inertia couples them); and no part has a non-ideal law (forces that depend on the
 * acceleration) or modes (impacts solve with M). `lead` (nparts) is scratch. */
static int links_form_tree(const jySystem *sys, const jyModelLink *found, int count, int *lead,
                           int *first_source) {
  int np = sys->nparts;
  for (int i = 0; i < np; i++) {
    const jySysPart *sp = &sys->parts[i];
    if ((sp->type->nonideal_law && !(sp->shape->flags & JY_PART_NO_LAW)) || sp->shape->hybrid)
      return 0;
    lead[i] = 0;
    first_source[i] = -1;
  }
  for (int k = 0; k < count; k++) lead[found[k].source] = 1;
  int *eliminated = lead + np; /* coordinates eliminated per part (lead has 2 np) */
  for (int i = 0; i < np; i++) eliminated[i] = 0;
  for (int k = 0; k < count; k++) {
    int part = found[k].part;
    eliminated[part] += found[k].dim;
    if (first_source[part] == -1)
      first_source[part] = found[k].source;
    else if (first_source[part] != found[k].source)
      first_source[part] = -2; /* several sources, and stays so */
  }
  for (int k = 0; k < count; k++) {
    int part = found[k].part;
    if (first_source[part] >= 0) continue; /* one source: a child in the tree */
    const jySysPart *sp = &sys->parts[part];
    int bridge = !sp->type->mass && !lead[part] && eliminated[part] == sp->shape->ncoords;
    if (!bridge) return 0;
  }
  return 1;
}

/* Chooses the glues to eliminate and fills md->links sorted by part: every glue, without
 * bound, when the model has no rows and the links form a tree (md->tree); else chains
 * within ROWLESS_MAX_COLS when that leaves the model no rows, else within CHAIN_MAX_COLS. */
jyStatus jy_compile_glue_links(jyModel *md, const jySystem *sys) {
  const jyAllocator *a = &md->alloc;
  int np = sys->nparts, ng = sys->nglues;
  int *target = jy_calloc(a, (size_t)np + 1, sizeof(int));
  int *source = jy_calloc(a, (size_t)np + 1, sizeof(int));
  int *width = jy_calloc(a, 2 * (size_t)np + 1, sizeof(int)); /* 2 np: links_form_tree */
  int *depth = jy_calloc(a, (size_t)np + 1, sizeof(int));
  jyModelLink *found = jy_calloc(a, (size_t)ng + 1, sizeof *found);
  md->links = jy_calloc(a, (size_t)ng + 1, sizeof *md->links);
  glue_counts counts = {0};
  jyStatus st = JY_ERR_NOMEM;
  if (!target || !source || !width || !depth || !found || !md->links ||
      count_glues(a, sys, &counts) != 0)
    goto out;
  int part_rows = 0;
  for (int i = 0; i < np; i++) part_rows += sys->parts[i].shape->nrows;
  int count = -1;
  md->tree = 0;
  if (part_rows == 0 && ng > 0) {
    count = !md->solver.tree_recursion
      ? -1
      : choose_links(md, sys, &counts, INT_MAX, INT_MAX, target, source, width, depth, found);
    /* source and width are free again: scratch for the tree test */
    md->tree = count == ng && links_form_tree(sys, found, count, width, source);
    if (!md->tree)
      count = choose_links(md, sys, &counts, ROWLESS_MAX_COLS, CHAIN_MAX_DEPTH, target, source,
                           width, depth, found);
  }
  if (count != ng)
    count = choose_links(md, sys, &counts, CHAIN_MAX_COLS, CHAIN_MAX_DEPTH, target, source, width,
                         depth, found);
  /* Sorted by target part (counting sort, stable), so each part's links are contiguous. */
  for (int i = 0; i < np; i++) {
    md->parts[i].nlinks = 0;
    md->parts[i].depth = depth[i];
  }
  for (int k = 0; k < count; k++) md->parts[found[k].part].nlinks++;
  for (int i = 0, at = 0; i < np; i++) {
    md->parts[i].first_link = at;
    at += md->parts[i].nlinks;
    target[i] = md->parts[i].first_link; /* from here: the part's next link */
  }
  for (int k = 0; k < count; k++) {
    int l = target[found[k].part]++;
    md->glues[found[k].glue].link = l;
    md->links[l] = found[k];
  }
  md->nlinks = count;
  md->chain_depth = 0;
  for (int i = 0; i < np; i++)
    if (depth[i] > md->chain_depth) md->chain_depth = depth[i];
  if (md->nlinks > 0) {
    int coords = 0;
    for (int l = 0; l < md->nlinks; l++) coords += md->links[l].dim;
    if (jy_compile_report(md,
                          "glue elimination: %d glues and %d terminal coordinates substituted "
                          "away%s",
                          md->nlinks, coords,
                          md->chain_depth > 1 ? " (chained: parts follow parts that follow)"
                                              : "") != JY_OK)
      goto out; /* st is still JY_ERR_NOMEM */
    if (md->tree &&
        jy_compile_report(md,
                          "no constraint rows left and the links form a tree: the "
                          "acceleration by the articulated recursion over them "
                          "(%d levels)",
                          md->chain_depth) != JY_OK)
      goto out;
  }
  st = JY_OK;
out:
  free_counts(a, &counts);
  jy_free(a, target);
  jy_free(a, source);
  jy_free(a, width);
  jy_free(a, depth);
  jy_free(a, found);
  return st;
}

/* p->gather when every link of p is a coordinate block of a part without links: local
 * coordinate j is then column gather[j] of p's columns (its own kept ones come first). */
static jyStatus gather_columns(jyModel *md, jyModelPart *p) {
  for (int l = p->first_link; l < p->first_link + p->nlinks; l++) {
    const jyModelPart *src = &md->parts[md->links[l].source];
    if (src->nlinks > 0 || jy_terminal_coord_block(src, md->links[l].terminal) < 0) return JY_OK;
  }
  if (!(p->gather = jy_calloc(&md->alloc, (size_t)p->inst.ncoords + 1, sizeof(int))))
    return JY_ERR_NOMEM;
  int own = 0;
  for (int j = 0; j < p->inst.ncoords; j++)
    if (p->coord_map[j] >= 0) p->gather[j] = own++;
  for (int l = p->first_link; l < p->first_link + p->nlinks; l++) {
    const jyModelLink *link = &md->links[l];
    int block = jy_terminal_coord_block(&md->parts[link->source], link->terminal);
    for (int c = 0; c < link->dim; c++) p->gather[link->offset + c] = link->pos[block + c];
  }
  return JY_OK;
}

/* After the coordinates are numbered: each part's columns (in order of depth, so a source's
 * are known before its followers'), where each link's source columns sit among its part's,
 * the links each part leads, and the widths the evaluator's buffers need. A tree model keeps
 * the order by depth instead (md->tree_order) and no columns beyond each part's own. */
jyStatus jy_compile_chain_columns(jyModel *md) {
  const jyAllocator *a = &md->alloc;
  int np = md->nparts;
  int *order = jy_calloc(a, (size_t)np + 1, sizeof(int));
  int *by_depth = jy_calloc(a, (size_t)md->chain_depth + 2, sizeof(int));
  int *slot = jy_calloc(a, (size_t)md->n + 1, sizeof(int)); /* column -> position, or -1 */
  md->source_link_ptr = jy_calloc(a, (size_t)np + 1, sizeof(int));
  md->source_links = jy_calloc(a, (size_t)md->nlinks + 1, sizeof(int));
  if (md->tree) md->tree_order = jy_calloc(a, (size_t)np + 1, sizeof(int));
  jyStatus st = JY_ERR_NOMEM;
  if (!order || !by_depth || !slot || !md->source_link_ptr || !md->source_links ||
      (md->tree && !md->tree_order))
    goto out;
  for (int j = 0; j < md->n; j++) slot[j] = -1;
  for (int i = 0; i < np; i++) by_depth[md->parts[i].depth + 1]++;
  for (int d = 0; d < md->chain_depth; d++) by_depth[d + 1] += by_depth[d];
  for (int i = 0; i < np; i++) order[by_depth[md->parts[i].depth]++] = i;
  md->max_part_cols = 1;
  for (int at = 0; at < np; at++) {
    jyModelPart *p = &md->parts[order[at]];
    if (md->tree) { /* no G: the recursion works in each part's own coordinates */
      md->tree_order[at] = order[at];
      p->ncols = p->inst.ncoords;
      if (p->ncols > md->max_part_cols) md->max_part_cols = p->ncols;
      continue;
    }
    if (p->nlinks == 0) {
      p->ncols = p->inst.ncoords;
      if (p->ncols > md->max_part_cols) md->max_part_cols = p->ncols;
      continue;
    }
    int bound = p->inst.ncoords; /* own kept ones and every source's columns */
    for (int l = p->first_link; l < p->first_link + p->nlinks; l++)
      bound += md->parts[md->links[l].source].ncols;
    if (!(p->cols = jy_calloc(a, (size_t)bound + 1, sizeof(int)))) goto out;
    int count = 0;
    for (int j = 0; j < p->inst.ncoords; j++)
      if (p->coord_map[j] >= 0) slot[p->cols[count] = p->coord_map[j]] = count, count++;
    for (int l = p->first_link; l < p->first_link + p->nlinks; l++) {
      jyModelLink *link = &md->links[l];
      const jyModelPart *src = &md->parts[link->source];
      if (!(link->pos = jy_calloc(a, (size_t)src->ncols + 1, sizeof(int)))) goto out;
      for (int k = 0; k < src->ncols; k++) {
        int c = jy_part_column(src, k);
        if (slot[c] < 0) slot[p->cols[count] = c] = count, count++;
        link->pos[k] = slot[c];
      }
    }
    p->ncols = count;
    if (count > md->max_part_cols) md->max_part_cols = count;
    for (int k = 0; k < count; k++) slot[p->cols[k]] = -1;
    if (gather_columns(md, p) != JY_OK) goto out;
  }
  for (int l = 0; l < md->nlinks; l++) md->source_link_ptr[md->links[l].source + 1]++;
  for (int i = 0; i < np; i++) md->source_link_ptr[i + 1] += md->source_link_ptr[i];
  for (int i = 0; i < np; i++) order[i] = md->source_link_ptr[i];
  for (int l = 0; l < md->nlinks; l++) md->source_links[order[md->links[l].source]++] = l;
  st = JY_OK;
out:
  jy_free(a, order);
  jy_free(a, by_depth);
  jy_free(a, slot);
  return st;
}
