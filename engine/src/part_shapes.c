/* A pool of distinct part shapes: the system and the model each hold every distinct shape
 * once, its names owned, and their parts point into it. Parts of one type with the same
 * parameters almost always have the same shape, so a chain of 10,000 links keeps two shapes
 * (about 2.5 KB each), not 20,000. And a type's shape as its protocol version defines it
 * (jy_part_shape), which the parameter door and the builder both read. */
#include <stdint.h>
#include <string.h>

#include "internal.h"

/* A shape as the pool keeps it: only what its counts cover (the rest zero), so that equal
 * content means equal fields; names left NULL by the type get the names the builder has
 * always given them. Names still point where the type put them. */
static void canonical_shape(jyPartShape *out, const jyPartShape *s) {
  memset(out, 0, sizeof *out);
  out->ncoords = s->ncoords;
  for (int i = 0; i < s->ncoords; i++) {
    out->coord_names[i] = s->coord_names[i] ? s->coord_names[i] : "?";
    out->coord_defaults[i] = s->coord_defaults[i];
  }
  out->nterminals = s->nterminals;
  for (int i = 0; i < s->nterminals; i++) {
    out->terminals[i] = s->terminals[i];
    if (!out->terminals[i].name) out->terminals[i].name = "?";
  }
  out->nrows = s->nrows;
  for (int i = 0; i < s->nrows; i++) {
    out->row_names[i] = s->row_names[i] ? s->row_names[i] : "row";
    out->row_kinds[i] = s->row_kinds[i];
  }
  out->noutputs = s->noutputs;
  for (int i = 0; i < s->noutputs; i++)
    out->output_names[i] = s->output_names[i] ? s->output_names[i] : "?";
  out->flags = s->flags;
  out->instance_size = s->instance_size;
  out->angle_outputs = s->angle_outputs;
  out->hybrid = s->hybrid;
  out->nguards = s->nguards;
  out->scratch_size = s->scratch_size;
  out->nvisuals = s->nvisuals;
  out->visual = s->visual;
  out->spatial = s->spatial;
  out->spatial_param = s->spatial_param;
}

/* FNV-1a, continued from h. */
static unsigned hash_bytes(unsigned h, const void *bytes, size_t len) {
  for (const unsigned char *c = bytes; len--; c++) h = (h ^ *c) * 16777619u;
  return h;
}

static unsigned hash_int(unsigned h, long long value) {
  return hash_bytes(h, &value, sizeof value);
}

static unsigned hash_name(unsigned h, const char *name) {
  return hash_bytes(h, name, strlen(name) + 1); /* the NUL separates consecutive names */
}

/* Of a canonical shape. */
static unsigned shape_hash(const jyPartShape *s) {
  unsigned h = 2166136261u;
  h = hash_int(h, s->ncoords);
  for (int i = 0; i < s->ncoords; i++) h = hash_name(h, s->coord_names[i]);
  h = hash_bytes(h, s->coord_defaults, sizeof(double) * (size_t)s->ncoords); /* bits */
  h = hash_int(h, s->nterminals);
  for (int i = 0; i < s->nterminals; i++) {
    const jyTerminalSpec *t = &s->terminals[i];
    h = hash_name(h, t->name);
    h = hash_int(h, t->dim), h = hash_int(h, t->is_coord_block), h = hash_int(h, t->coord_offset);
  }
  h = hash_int(h, s->nrows);
  for (int i = 0; i < s->nrows; i++) h = hash_name(h, s->row_names[i]);
  for (int i = 0; i < s->nrows; i++) h = hash_int(h, s->row_kinds[i]);
  h = hash_int(h, s->noutputs);
  for (int i = 0; i < s->noutputs; i++) h = hash_name(h, s->output_names[i]);
  h = hash_int(h, s->flags), h = hash_int(h, (long long)s->instance_size);
  h = hash_int(h, s->angle_outputs), h = hash_int(h, s->nguards);
  h = hash_int(h, (long long)s->scratch_size);
  h = hash_int(h, s->nvisuals);
  h = hash_int(h, s->spatial), h = hash_int(h, s->spatial_param);
  uintptr_t hybrid = (uintptr_t)s->hybrid;
  return hash_bytes(h, &hybrid, sizeof hybrid);
}

/* Of two canonical shapes: every name as a string, the defaults bit for bit. */
static int shapes_equal(const jyPartShape *x, const jyPartShape *y) {
  if (x->ncoords != y->ncoords || x->nterminals != y->nterminals || x->nrows != y->nrows ||
      x->noutputs != y->noutputs || x->flags != y->flags || x->instance_size != y->instance_size ||
      x->angle_outputs != y->angle_outputs || x->hybrid != y->hybrid || x->nguards != y->nguards ||
      x->scratch_size != y->scratch_size || x->nvisuals != y->nvisuals || x->visual != y->visual ||
      x->spatial != y->spatial || x->spatial_param != y->spatial_param)
    return 0;
  if (memcmp(x->coord_defaults, y->coord_defaults, sizeof(double) * (size_t)x->ncoords) != 0 ||
      memcmp(x->row_kinds, y->row_kinds, sizeof(jyRowKind) * (size_t)x->nrows) != 0)
    return 0;
  for (int i = 0; i < x->ncoords; i++)
    if (strcmp(x->coord_names[i], y->coord_names[i]) != 0) return 0;
  for (int i = 0; i < x->nterminals; i++) {
    const jyTerminalSpec *a = &x->terminals[i], *b = &y->terminals[i];
    if (strcmp(a->name, b->name) != 0 || a->dim != b->dim ||
        a->is_coord_block != b->is_coord_block || a->coord_offset != b->coord_offset)
      return 0;
  }
  for (int i = 0; i < x->nrows; i++)
    if (strcmp(x->row_names[i], y->row_names[i]) != 0) return 0;
  for (int i = 0; i < x->noutputs; i++)
    if (strcmp(x->output_names[i], y->output_names[i]) != 0) return 0;
  return 1;
}

/* The slot holding a shape equal to key (of that hash), or the empty one where it goes. */
static int pool_slot(const jyShapePool *pool, const jyPartShape *key, unsigned hash) {
  unsigned mask = (unsigned)pool->nslots - 1, k = hash & mask;
  for (int held; (held = pool->slots[k]) != 0; k = (k + 1) & mask)
    if (pool->hashes[held - 1] == hash && shapes_equal(pool->shapes[held - 1], key)) break;
  return (int)k;
}

/* Room for one more shape in the arrays and the slots, so that adding one cannot fail
 * there: 0, or -1 out of memory (what is held stays as it was). */
static int pool_reserve(jyShapePool *pool, const jyAllocator *a) {
  if (pool->count == pool->cap) {
    int cap = pool->cap ? 2 * pool->cap : 8;
    jyPartShape **shapes = jy_calloc(a, (size_t)cap, sizeof *shapes);
    unsigned *hashes = jy_calloc(a, (size_t)cap, sizeof *hashes);
    if (!shapes || !hashes) {
      jy_free(a, shapes);
      jy_free(a, hashes);
      return -1;
    }
    if (pool->count) {
      memcpy(shapes, pool->shapes, sizeof *shapes * (size_t)pool->count);
      memcpy(hashes, pool->hashes, sizeof *hashes * (size_t)pool->count);
    }
    jy_free(a, pool->shapes);
    jy_free(a, pool->hashes);
    pool->shapes = shapes, pool->hashes = hashes, pool->cap = cap;
  }
  if (2 * (pool->count + 1) <= pool->nslots) return 0;
  int nslots = pool->nslots ? 2 * pool->nslots : 16;
  int *slots = jy_calloc(a, (size_t)nslots, sizeof *slots);
  if (!slots) return -1;
  for (int i = 0; i < pool->count; i++) { /* equal shapes are never held twice: no compares */
    unsigned k = pool->hashes[i] & (unsigned)(nslots - 1);
    while (slots[k]) k = (k + 1) & (unsigned)(nslots - 1);
    slots[k] = i + 1;
  }
  jy_free(a, pool->slots);
  pool->slots = slots, pool->nslots = nslots;
  return 0;
}

static void free_shape(const jyAllocator *a, jyPartShape *s) {
  if (!s) return;
  for (int i = 0; i < s->ncoords; i++) jy_free(a, (char *)s->coord_names[i]);
  for (int i = 0; i < s->nterminals; i++) jy_free(a, (char *)s->terminals[i].name);
  for (int i = 0; i < s->nrows; i++) jy_free(a, (char *)s->row_names[i]);
  for (int i = 0; i < s->noutputs; i++) jy_free(a, (char *)s->output_names[i]);
  jy_free(a, s);
}

/* A heap copy of a canonical shape with its own names, or NULL (nothing left allocated). */
static jyPartShape *owned_copy(const jyAllocator *a, const jyPartShape *key) {
  jyPartShape *s = jy_alloc(a, sizeof *s);
  if (!s) return NULL;
  *s = *key;
  int bad = 0; /* a copy that fails leaves NULL, which free_shape skips */
  for (int i = 0; i < s->ncoords; i++)
    bad |= !(s->coord_names[i] = jy_strdup(a, key->coord_names[i]));
  for (int i = 0; i < s->nterminals; i++)
    bad |= !(s->terminals[i].name = jy_strdup(a, key->terminals[i].name));
  for (int i = 0; i < s->nrows; i++) bad |= !(s->row_names[i] = jy_strdup(a, key->row_names[i]));
  for (int i = 0; i < s->noutputs; i++)
    bad |= !(s->output_names[i] = jy_strdup(a, key->output_names[i]));
  if (bad) {
    free_shape(a, s);
    return NULL;
  }
  return s;
}

const jyPartShape *jy_shape_pool_intern(jyShapePool *pool, const jyAllocator *a,
                                        const jyPartShape *shape) {
  jyPartShape key;
  canonical_shape(&key, shape);
  unsigned hash = shape_hash(&key);
  if (pool->nslots) {
    int held = pool->slots[pool_slot(pool, &key, hash)];
    if (held) return pool->shapes[held - 1];
  }
  if (pool_reserve(pool, a) != 0) return NULL;
  jyPartShape *owned = owned_copy(a, &key);
  if (!owned) return NULL;
  pool->slots[pool_slot(pool, &key, hash)] = pool->count + 1;
  pool->shapes[pool->count] = owned;
  pool->hashes[pool->count++] = hash;
  return owned;
}

void jy_shape_pool_free(jyShapePool *pool, const jyAllocator *a) {
  for (int i = 0; i < pool->count; i++) free_shape(a, pool->shapes[i]);
  jy_free(a, pool->shapes);
  jy_free(a, pool->hashes);
  jy_free(a, pool->slots);
  *pool = (jyShapePool){0};
}

int jy_part_shape(const jyPartType *type, const double *params, jyPartShape *shape, char *error,
                  size_t error_len) {
  int rc = type->shape(type, params, shape, error, error_len);
  if (type->version < 2) shape->angle_outputs = 0; /* protocol 1 has no angle outputs */
  if (type->version < 3) {                         /* nor modes before protocol 3 */
    shape->hybrid = NULL;
    shape->nguards = 0;
  }
  if (type->version < 4) shape->scratch_size = 0; /* nor scratch before protocol 4 */
  if (type->version < 7) {                        /* nor visuals before protocol 7 */
    shape->nvisuals = 0;
    shape->visual = NULL;
  }
  if (type->version < 8) { /* nor a spatial role before protocol 8 */
    shape->spatial = JY_SPATIAL_NONE;
    shape->spatial_param = 0;
  }
  return rc;
}
