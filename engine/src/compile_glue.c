/* Glue elimination, a stage of compiling a model: a glue whose one side is a block of a
 * massless part's own coordinates is removed by substituting those coordinates (they
 * follow the terminal on the other side), so the model has fewer coordinates and rows.
 * docs/numerics.md describes it; dyn_assemble.c maps the part's blocks through it. */
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
  for (int i = 0; i < np; i++) c->first[i + 1] = c->first[i] + sys->parts[i].shape.nterminals;
  c->glued = jy_calloc(a, (size_t)c->first[np] + 1, sizeof(int));
  if (!c->glued) return -1;
  for (int g = 0; g < sys->nglues; g++)
    for (int side = 0; side < 2; side++) {
      jyTerminalId id = side ? sys->glues[g].b : sys->glues[g].a;
      if (id.terminal >= sys->parts[id.part].shape.nterminals)
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

/* Whether terminal k of a part may be eliminated by substitution: the part has no mass,
 * the terminal is exactly a block of its own coordinates, it is glued only once, its block
 * overlaps no other glued coordinate-block terminal of the part, and nothing is glued to
 * the part's coordinate terminals. The glue's force is then recovered from the massless
 * block's balance (eval_channels.c). */
static int eliminable(const jySystem *sys, const glue_counts *c, int part, int k) {
  const jySysPart *sp = &sys->parts[part];
  const jyPartShape *s = &sp->shape;
  if (sp->type->mass || k < 0 || k >= s->nterminals) return 0;
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

/* Chooses the glues to eliminate (one level: a source has no eliminated coordinates) and
 * fills md->links sorted by part. */
jyStatus jy_compile_glue_links(jyModel *md, const jySystem *sys) {
  const jyAllocator *a = &md->alloc;
  int np = sys->nparts, ng = sys->nglues;
  int *target = jy_calloc(a, (size_t)np + 1, sizeof(int));
  int *source = jy_calloc(a, (size_t)np + 1, sizeof(int));
  jyModelLink *found = jy_calloc(a, (size_t)ng + 1, sizeof *found);
  md->links = jy_calloc(a, (size_t)ng + 1, sizeof *md->links);
  glue_counts counts = {0};
  jyStatus st = JY_ERR_NOMEM;
  if (!target || !source || !found || !md->links || count_glues(a, sys, &counts) != 0) goto out;
  int count = 0;
  for (int g = 0; g < ng; g++) {
    const jySysGlue *sg = &sys->glues[g];
    md->glues[g].link = -1;
    for (int side = 0; side < 2; side++) {
      jyTerminalId x = side ? sg->b : sg->a, y = side ? sg->a : sg->b;
      if (!md->solver.eliminate_glue || x.part == y.part || source[x.part] || target[y.part] ||
          !eliminable(sys, &counts, x.part, x.terminal))
        continue;
      const jyTerminalSpec *t = &sys->parts[x.part].shape.terminals[x.terminal];
      found[count++] =
        (jyModelLink){g, x.part, t->coord_offset, t->dim, y.part, y.terminal, side == 0};
      target[x.part] = 1;
      source[y.part] = 1;
      md->glues[g].link = 0; /* numbered below */
      break;
    }
  }
  /* Sorted by target part (counting sort, stable), so each part's links are contiguous. */
  for (int i = 0; i < np; i++) md->parts[i].nlinks = 0;
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
  if (md->nlinks > 0) {
    int coords = 0;
    for (int l = 0; l < md->nlinks; l++) coords += md->links[l].dim;
    if (jy_compile_report(md,
                          "glue elimination: %d glues and %d terminal coordinates substituted "
                          "away",
                          md->nlinks, coords) != JY_OK)
      goto out; /* st is still JY_ERR_NOMEM */
  }
  md->max_source_coords = 1;
  for (int l = 0; l < md->nlinks; l++) {
    int ns = sys->parts[md->links[l].source].shape.ncoords;
    if (ns > md->max_source_coords) md->max_source_coords = ns;
  }
  st = JY_OK;
out:
  free_counts(a, &counts);
  jy_free(a, target);
  jy_free(a, source);
  jy_free(a, found);
  return st;
}
