/* The system builder: parts with validated parameters, initial values, glue. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static unsigned name_hash(const char *name) {
  unsigned h = 2166136261u; /* FNV-1a */
  for (const unsigned char *c = (const unsigned char *)name; *c; c++) h = (h ^ *c) * 16777619u;
  return h;
}

/* The names an index holds: the parts' or the glues'. */
typedef struct named {
  const void *base; /* the array of parts or glues; each begins with its name */
  size_t stride;
} named;

static const char *name_at(named items, int i) {
  return *(char *const *)((const char *)items.base + items.stride * (size_t)i);
}

static named part_items(const jySystem *sys) { return (named){sys->parts, sizeof *sys->parts}; }
static named glue_items(const jySystem *sys) { return (named){sys->glues, sizeof *sys->glues}; }

/* The slot of name, holding it or empty where it would go. */
static int index_slot(const jyNameIndex *idx, named items, const char *name) {
  unsigned mask = (unsigned)idx->cap - 1, k = name_hash(name) & mask;
  while (idx->slots[k] && strcmp(name_at(items, idx->slots[k] - 1), name) != 0) k = (k + 1) & mask;
  return (int)k;
}

static int index_find(const jyNameIndex *idx, named items, const char *name) {
  return idx->cap ? idx->slots[index_slot(idx, items, name)] - 1 : -1;
}

/* Room for count + 1 names (the count held and one more), so that index_add cannot fail:
 * 0, or -1 out of memory. */
static int index_reserve(const jyAllocator *a, jyNameIndex *idx, named items, int count) {
  if (2 * (count + 1) <= idx->cap) return 0;
  jyNameIndex grown = {NULL, idx->cap ? 2 * idx->cap : 16};
  grown.slots = jy_calloc(a, (size_t)grown.cap, sizeof(int));
  if (!grown.slots) return -1;
  for (int i = 0; i < count; i++) grown.slots[index_slot(&grown, items, name_at(items, i))] = i + 1;
  jy_free(a, idx->slots);
  *idx = grown;
  return 0;
}

/* Adds item i (its name in items, not yet held). */
static void index_add(jyNameIndex *idx, named items, int i) {
  idx->slots[index_slot(idx, items, name_at(items, i))] = i + 1;
}

static void free_part(const jyAllocator *a, jySysPart *p) {
  jy_free(a, p->name);
  jy_free(a, p->params);
  jy_free(a, p->q0);
  jy_free(a, p->v0);
  jy_free(a, p->q_set);
  jy_free(a, p->v_set);
}

jySystem *jy_system_create(jyEnv *env) {
  if (!env) return NULL;
  jySystem *sys = jy_calloc(&env->alloc, 1, sizeof *sys);
  if (sys) sys->env = env;
  return sys;
}

void jy_system_destroy(jySystem *sys) {
  if (!sys) return;
  const jyAllocator *a = &sys->env->alloc;
  for (int i = 0; i < sys->nparts; i++) free_part(a, &sys->parts[i]);
  for (int i = 0; i < sys->nglues; i++) jy_free(a, sys->glues[i].name);
  for (int i = 0; i < sys->nchannels; i++) jy_free(a, sys->channels[i].name);
  jy_free(a, sys->channels);
  for (int i = 0; i < sys->nevents; i++) jy_free(a, sys->events[i].name);
  jy_free(a, sys->events);
  jy_system_free_inputs(sys);
  jy_free(a, sys->parts);
  jy_free(a, sys->glues);
  jy_free(a, sys->part_names.slots);
  jy_free(a, sys->glue_names.slots);
  jy_shape_pool_free(&sys->shapes, a);
  jy_free(a, sys);
}

const char *jy_system_error(const jySystem *sys) { return sys ? sys->error : ""; }

void jy_system_set_gravity(jySystem *sys, const double gravity[3]) {
  if (sys && gravity)
    for (int i = 0; i < 3; i++) sys->gravity[i] = gravity[i];
}

/* Which of the protocol's limits the shape exceeds, or NULL. */
static const char *shape_beyond_limits(const jyPartShape *s) {
  if (s->ncoords < 0 || s->ncoords > JY_PART_MAX_COORDS) return "coordinates";
  if (s->nterminals < 0 || s->nterminals > JY_PART_MAX_TERMINALS) return "terminals";
  if (s->nrows < 0 || s->nrows > JY_PART_MAX_ROWS) return "constraint rows";
  if (s->noutputs < 0 || s->noutputs > JY_PART_MAX_OUTPUTS) return "outputs";
  if (s->noutputs < 32 && (s->angle_outputs >> s->noutputs) != 0) return "angle outputs";
  if (s->nguards < 0 || s->nguards > JY_PART_MAX_GUARDS || (s->nguards > 0 && !s->hybrid))
    return "guards";
  for (int i = 0; i < s->nterminals; i++)
    if (s->terminals[i].dim < 1 || s->terminals[i].dim > JY_TERMINAL_MAX_DIM)
      return "terminal dimension";
  return NULL;
}

/* What a spatial role's layout (part.h, jySpatialRole) needs that the shape lacks, or NULL. */
static const char *spatial_role_mismatch(const jyPartType *type, const jyPartShape *s) {
  /* per role: parameters, coordinates, rows, then the terminals' dimensions (0: none) */
  static const int layout[][7] = {
    [JY_SPATIAL_BODY] = {7, 7, 1, 7, 3, 0, 0},     [JY_SPATIAL_OFFSET] = {3, 7, 0, 7, 3, 7, 0},
    [JY_SPATIAL_FIXED] = {7, 0, 0, 7, 3, 0, 0},    [JY_SPATIAL_HINGE] = {12, 14, 5, 7, 7, 0, 0},
    [JY_SPATIAL_SLIDER] = {13, 14, 5, 7, 7, 0, 0}, [JY_SPATIAL_WELD] = {10, 14, 6, 7, 7, 0, 0},
    [JY_SPATIAL_POINT] = {3, 0, 0, 3, 0, 0, 0},
  };
  if (s->spatial == JY_SPATIAL_NONE) return NULL;
  if ((unsigned)s->spatial > JY_SPATIAL_POINT) return "an unknown spatial role";
  const int *l = layout[s->spatial];
  if (s->spatial_param < 0 || s->spatial_param + l[0] > type->nparams)
    return "too few parameters after spatial_param for its spatial role";
  if (s->ncoords != l[1]) return "a coordinate count its spatial role does not have";
  if (l[2] >= 0 && s->nrows != l[2]) return "a row count its spatial role does not have";
  for (int k = 0; k < 4 && l[3 + k]; k++)
    if (k >= s->nterminals || s->terminals[k].dim != l[3 + k])
      return "terminals its spatial role does not have";
  return NULL;
}

int jy_part_shape_checked(const jyPartType *type, const double *params, jyPartShape *shape,
                          char *error, size_t error_len) {
  char why[512] = "";
  memset(shape, 0, sizeof *shape);
  if (jy_part_shape(type, params, shape, why, sizeof why) != 0) {
    snprintf(error, error_len, "%s", why[0] ? why : "the type's shape function failed");
    return -1;
  }
  const jyPartHybrid *h = shape->hybrid;
  if (h && (!h->active_rows || (shape->nguards > 0 && !h->guards))) {
    snprintf(error, error_len,
             "its shape has modes (a jyPartHybrid table) without %s: a part with modes needs "
             "active_rows, and guards when it has guards (joinery/part.h)",
             !h->active_rows ? "active_rows" : "guards");
    return -1;
  }
  if (shape->scratch_size > JY_PART_MAX_SCRATCH) {
    snprintf(error, error_len,
             "its shape asks for %zu bytes of scratch: the part protocol's limit is %d "
             "(JY_PART_MAX_SCRATCH; it is kept per part in every evaluator)",
             shape->scratch_size, JY_PART_MAX_SCRATCH);
    return -1;
  }
  if (shape->nvisuals < 0 || shape->nvisuals > JY_PART_MAX_VISUALS ||
      (shape->nvisuals > 0 && !shape->visual)) {
    snprintf(error, error_len,
             "its shape has %d visuals%s: the part protocol allows 0 to %d, with a visual "
             "function when there are any",
             shape->nvisuals, shape->visual ? "" : " and no visual function", JY_PART_MAX_VISUALS);
    return -1;
  }
  const char *role = spatial_role_mismatch(type, shape);
  if (role) {
    snprintf(error, error_len, "its shape has %s (joinery/part.h, jySpatialRole)", role);
    return -1;
  }
  const char *beyond = shape_beyond_limits(shape);
  if (beyond) {
    snprintf(error, error_len,
             "its shape has %d coordinates, %d terminals, %d rows and %d outputs: the %s exceed "
             "the part protocol's limits (%d coordinates, %d terminals, %d rows, %d outputs, "
             "terminals of 1 to %d)",
             shape->ncoords, shape->nterminals, shape->nrows, shape->noutputs, beyond,
             JY_PART_MAX_COORDS, JY_PART_MAX_TERMINALS, JY_PART_MAX_ROWS, JY_PART_MAX_OUTPUTS,
             JY_TERMINAL_MAX_DIM);
    return -1;
  }
  for (int i = 0; i < shape->nterminals; i++) {
    const jyTerminalSpec *t = &shape->terminals[i];
    if (t->is_coord_block && (t->coord_offset < 0 || t->coord_offset + t->dim > shape->ncoords)) {
      snprintf(error, error_len,
               "its terminal %d ('%s') is declared the coordinates %d .. %d (is_coord_block), "
               "but the part's coordinates are 0 .. %d",
               i, t->name ? t->name : "?", t->coord_offset, t->coord_offset + t->dim - 1,
               shape->ncoords - 1);
      return -1;
    }
  }
  return 0;
}

/* The registered type of that name, or NULL with a message suggesting the nearest. */
static const jyPartType *find_type(jySystem *sys, const char *type_name) {
  const jyPartType *type = jy_env_find_type(sys->env, type_name ? type_name : "");
  if (type) return type;
  char hint[512];
  const char *names[256];
  int count = sys->env->ntypes < 256 ? sys->env->ntypes : 256;
  for (int i = 0; i < count; i++) names[i] = sys->env->types[i]->name;
  jy_suggest(hint, sizeof hint, type_name ? type_name : "", names, count);
  jy_set_error(sys->error, "unknown part type '%s'%s", type_name ? type_name : "(null)", hint);
  return NULL;
}

/* 0 when name may name a new part of this type, else -1 with the reason. */
static int check_part_name(jySystem *sys, const jyPartType *type, const char *name) {
  if (!name || !*name || strchr(name, '.') || strchr(name, ',') || strlen(name) > 200) {
    jy_set_error(sys->error,
                 "part of type '%s': name '%s' must be non-empty, at most 200 "
                 "characters, without '.' or ','",
                 type->name, name ? name : "(null)");
    return -1;
  }
  if (jy_system_find_part(sys, name).index >= 0) {
    jy_set_error(sys->error, "a part named '%s' exists already", name);
    return -1;
  }
  return 0;
}

/* The builder's copy of a part whose shape is made: its name, parameters, initial values
 * at the shape's defaults, and the pool's shape equal to its own. 0, or -1 (out of memory;
 * the part is freed). */
static int own_part(jySystem *sys, jySysPart *part, const jyPartType *type, const char *name,
                    const double *params, const jyPartShape *shape) {
  const jyAllocator *a = &sys->env->alloc;
  int nc = shape->ncoords;
  part->name = jy_strdup(a, name);
  part->type = type;
  part->params = jy_calloc(a, (size_t)type->nparams + 1, sizeof(double));
  part->q0 = jy_calloc(a, (size_t)nc + 1, sizeof(double));
  part->v0 = jy_calloc(a, (size_t)nc + 1, sizeof(double));
  part->q_set = jy_calloc(a, (size_t)nc + 1, 1);
  part->v_set = jy_calloc(a, (size_t)nc + 1, 1);
  /* last, so that a shape enters the pool only with a part that holds it */
  if (!part->name || !part->params || !part->q0 || !part->v0 || !part->q_set || !part->v_set ||
      !(part->shape = jy_shape_pool_intern(&sys->shapes, a, shape))) {
    free_part(a, part);
    return -1;
  }
  memcpy(part->params, params, sizeof(double) * (size_t)type->nparams);
  for (int i = 0; i < nc; i++) part->q0[i] = shape->coord_defaults[i];
  return 0;
}

jyPartId jy_system_add_part(jySystem *sys, const char *type_name, const char *name,
                            const jyParamSetting *settings, int nsettings) {
  jyPartId bad = {-1};
  if (!sys) return bad;
  const jyAllocator *a = &sys->env->alloc;
  const jyPartType *type = find_type(sys, type_name);
  if (!type || check_part_name(sys, type, name) != 0) return bad;
  double params[JY_MAX_PARAMS];
  if (jy_params_fill(type, name, settings, nsettings, params, sys->error, JY_ERROR_LEN) != JY_OK)
    return bad;
  jyPartShape shape;
  char why[768] = "";
  if (jy_part_shape_checked(type, params, &shape, why, sizeof why) != 0) {
    jy_set_error(sys->error, "part '%s' (%s): %s", name, type->name, why);
    return bad;
  }
  jySysPart part = {.omega_axes = -1};
  if (jy_grow(a, (void **)&sys->parts, &sys->parts_cap, sys->nparts, sizeof *sys->parts) != 0 ||
      index_reserve(a, &sys->part_names, part_items(sys), sys->nparts) != 0 ||
      own_part(sys, &part, type, name, params, &shape) != 0) {
    jy_set_error(sys->error, "out of memory adding part '%s'", name);
    return bad;
  }
  sys->parts[sys->nparts] = part;
  index_add(&sys->part_names, part_items(sys), sys->nparts);
  return (jyPartId){sys->nparts++};
}

jyPartId jy_system_find_part(const jySystem *sys, const char *name) {
  if (sys && name) return (jyPartId){index_find(&sys->part_names, part_items(sys), name)};
  return (jyPartId){-1};
}

int jy_system_num_parts(const jySystem *sys) { return sys ? sys->nparts : 0; }

static const jySysPart *get_part(const jySystem *sys, jyPartId id) {
  return sys && id.index >= 0 && id.index < sys->nparts ? &sys->parts[id.index] : NULL;
}

const char *jy_system_part_name(const jySystem *sys, jyPartId part) {
  const jySysPart *p = get_part(sys, part);
  return p ? p->name : NULL;
}

const jyPartShape *jy_system_part_shape(const jySystem *sys, jyPartId part) {
  const jySysPart *p = get_part(sys, part);
  return p ? p->shape : NULL;
}

double jy_system_part_param(const jySystem *sys, jyPartId part, const char *name) {
  const jySysPart *p = get_part(sys, part);
  if (p && name)
    for (int i = 0; i < p->type->nparams; i++)
      if (strcmp(p->type->params[i].name, name) == 0) return p->params[i];
  return NAN;
}

jyTerminalId jy_system_glued_to(const jySystem *sys, jyTerminalId t, int k) {
  if (sys && k >= 0)
    for (int g = 0; g < sys->nglues; g++) {
      const jySysGlue *gl = &sys->glues[g];
      int on_a = gl->a.part == t.part && gl->a.terminal == t.terminal;
      int on_b = gl->b.part == t.part && gl->b.terminal == t.terminal;
      if ((on_a || on_b) && k-- == 0) return on_a ? gl->b : gl->a;
    }
  return (jyTerminalId){-1, -1};
}

int jy_system_num_glues(const jySystem *sys) { return sys ? sys->nglues : 0; }

const char *jy_system_glue_name(const jySystem *sys, int glue) {
  return sys && glue >= 0 && glue < sys->nglues ? sys->glues[glue].name : NULL;
}

jyTerminalId jy_system_terminal(const jySystem *sys, jyPartId part, const char *name) {
  const jySysPart *p = get_part(sys, part);
  if (p && name)
    for (int i = 0; i < p->shape->nterminals; i++)
      if (strcmp(p->shape->terminals[i].name, name) == 0) return (jyTerminalId){part.index, i};
  return (jyTerminalId){-1, -1};
}

jyTerminalId jy_system_coord_terminal(const jySystem *sys, jyPartId part, const char *coord) {
  const jySysPart *p = get_part(sys, part);
  if (p && coord)
    for (int j = 0; j < p->shape->ncoords; j++)
      if (strcmp(p->shape->coord_names[j], coord) == 0)
        return (jyTerminalId){part.index, p->shape->nterminals + j};
  return (jyTerminalId){-1, -1};
}

/* The spec of terminal k of a part, real or a coordinate terminal (k >= nterminals). */
static int terminal_spec(const jySysPart *p, int k, jyTerminalSpec *out) {
  if (k < 0 || k >= p->shape->nterminals + p->shape->ncoords) return -1;
  if (k < p->shape->nterminals) {
    *out = p->shape->terminals[k];
    return 0;
  }
  int j = k - p->shape->nterminals;
  *out = (jyTerminalSpec){p->shape->coord_names[j], 1, 1, j};
  return 0;
}

int jy_part_frame_quaternion(const jyPartShape *shape) {
  for (int k = 0; k < shape->nterminals; k++) {
    const jyTerminalSpec *t = &shape->terminals[k];
    if (strcmp(t->name, "frame") == 0)
      return t->dim == 7 && t->is_coord_block && t->coord_offset + 7 <= shape->ncoords
        ? t->coord_offset + 3
        : -1;
  }
  return -1;
}

/* How the messages name an angular velocity given in these axes. */
static const char *omega_label(int axes) {
  return axes == JY_OMEGA_BODY ? "omega_body (body axes)" : "omega (space axes)";
}

/* velocity: 0 a held coordinate, 1 a velocity, 2 a coordinate's starting guess */
static jyStatus set_initial(jySystem *sys, jyPartId part, const char *coord, double value,
                            int velocity) {
  if (!sys) return JY_ERR_INVALID;
  jySysPart *p = (jySysPart *)get_part(sys, part);
  if (!p) {
    jy_set_error(sys->error, "no part with index %d", part.index);
    return JY_ERR_INVALID;
  }
  for (int i = 0; i < p->shape->ncoords; i++) {
    if (strcmp(p->shape->coord_names[i], coord ? coord : "") != 0) continue;
    if (!isfinite(value)) {
      jy_set_error(sys->error, "part '%s': initial %s of '%s' must be finite", p->name,
                   velocity ? "velocity" : "value", coord);
      return JY_ERR_PARAM;
    }
    int qoff = jy_part_frame_quaternion(p->shape);
    if (velocity == 1 && p->omega_axes >= 0 && qoff >= 0 && i >= qoff && i < qoff + 4) {
      jy_set_error(sys->error,
                   "part '%s' (%s): the velocity of '%s' (a quaternion rate) and the angular "
                   "velocity %s both give the rotation's velocity: give one of them",
                   p->name, p->type->name, coord, omega_label(p->omega_axes));
      return JY_ERR_PARAM;
    }
    if (velocity == 1)
      p->v0[i] = value, p->v_set[i] = 1;
    else
      p->q0[i] = value, p->q_set[i] = velocity == 0;
    return JY_OK;
  }
  char hint[512];
  jy_suggest(hint, sizeof hint, coord ? coord : "", p->shape->coord_names, p->shape->ncoords);
  jy_set_error(sys->error, "part '%s' (%s) has no coordinate '%s'%s", p->name, p->type->name,
               coord ? coord : "(null)", hint);
  return JY_ERR_UNKNOWN_NAME;
}

jyStatus jy_system_set_angular_velocity(jySystem *sys, jyPartId part, const double omega[3],
                                        jyOmegaAxes axes) {
  if (!sys) return JY_ERR_INVALID;
  jySysPart *p = (jySysPart *)get_part(sys, part);
  if (!p) {
    jy_set_error(sys->error, "no part with index %d", part.index);
    return JY_ERR_INVALID;
  }
  if (!omega || (axes != JY_OMEGA_SPACE && axes != JY_OMEGA_BODY)) {
    jy_set_error(sys->error,
                 "part '%s': an angular velocity needs omega[3] and the axes "
                 "JY_OMEGA_SPACE or JY_OMEGA_BODY",
                 p->name);
    return JY_ERR_INVALID;
  }
  int qoff = jy_part_frame_quaternion(p->shape);
  if (qoff < 0) {
    jy_set_error(sys->error,
                 "part '%s' (%s) has no orientation to give %s: an angular velocity is for a "
                 "body3d (a part whose 'frame' terminal is its own coordinates x, y, z, "
                 "q0..q3); give this part's coordinate velocities instead",
                 p->name, p->type->name, omega_label(axes));
    return JY_ERR_PARAM;
  }
  if (p->omega_axes >= 0 && p->omega_axes != (int)axes) {
    jy_set_error(sys->error,
                 "part '%s' (%s): both omega (space axes) and omega_body (body axes) are "
                 "given: give the angular velocity once",
                 p->name, p->type->name);
    return JY_ERR_PARAM;
  }
  for (int i = 0; i < 4; i++)
    if (p->v_set[qoff + i]) {
      jy_set_error(sys->error,
                   "part '%s' (%s): the angular velocity %s and the velocity of '%s' (a "
                   "quaternion rate) both give the rotation's velocity: give one of them",
                   p->name, p->type->name, omega_label(axes), p->shape->coord_names[qoff + i]);
      return JY_ERR_PARAM;
    }
  for (int i = 0; i < 3; i++)
    if (!isfinite(omega[i])) {
      jy_set_error(sys->error,
                   "part '%s' (%s): the angular velocity %s must be finite (component %d is %s)",
                   p->name, p->type->name, omega_label(axes), i + 1,
                   isnan(omega[i])  ? "nan"
                     : omega[i] > 0 ? "inf"
                                    : "-inf");
      return JY_ERR_PARAM;
    }
  p->omega_axes = (int)axes;
  for (int i = 0; i < 3; i++) p->omega[i] = omega[i];
  return JY_OK;
}

jyStatus jy_system_set_coord(jySystem *sys, jyPartId part, const char *coord, double value) {
  return set_initial(sys, part, coord, value, 0);
}

jyStatus jy_system_set_velocity(jySystem *sys, jyPartId part, const char *coord, double value) {
  return set_initial(sys, part, coord, value, 1);
}

jyStatus jy_system_guess_coord(jySystem *sys, jyPartId part, const char *coord, double value) {
  return set_initial(sys, part, coord, value, 2);
}

jyStatus jy_system_glue(jySystem *sys, jyTerminalId a, jyTerminalId b, const char *name) {
  if (!sys) return JY_ERR_INVALID;
  const jySysPart *pa = get_part(sys, (jyPartId){a.part});
  const jySysPart *pb = get_part(sys, (jyPartId){b.part});
  jyTerminalSpec spec_a, spec_b;
  if (!pa || !pb || terminal_spec(pa, a.terminal, &spec_a) ||
      terminal_spec(pb, b.terminal, &spec_b)) {
    jy_set_error(sys->error, "glue: no such terminal");
    return JY_ERR_INVALID;
  }
  const jyTerminalSpec *ta = &spec_a, *tb = &spec_b;
  if (a.part == b.part && a.terminal == b.terminal) {
    jy_set_error(sys->error, "glue: terminal %s.%s is glued to itself", pa->name, ta->name);
    return JY_ERR_INVALID;
  }
  if (ta->dim != tb->dim) {
    jy_set_error(sys->error,
                 "glue: terminals %s.%s (%d-D) and %s.%s (%d-D) have different dimensions",
                 pa->name, ta->name, ta->dim, pb->name, tb->name, tb->dim);
    return JY_ERR_DIMENSION;
  }
  char auto_name[32];
  if (!name) {
    snprintf(auto_name, sizeof auto_name, "glue%d", sys->nglues + 1);
    name = auto_name;
  }
  if (!*name || strchr(name, ',') || strlen(name) > 200) {
    jy_set_error(sys->error,
                 "glue name '%s' must be non-empty, at most 200 characters, "
                 "without ','",
                 name);
    return JY_ERR_INVALID;
  }
  if (index_find(&sys->glue_names, glue_items(sys), name) >= 0) {
    jy_set_error(sys->error, "a glue named '%s' exists already", name);
    return JY_ERR_INVALID;
  }
  const jyAllocator *al = &sys->env->alloc;
  if (jy_grow(al, (void **)&sys->glues, &sys->glues_cap, sys->nglues, sizeof *sys->glues) != 0 ||
      index_reserve(al, &sys->glue_names, glue_items(sys), sys->nglues) != 0)
    return JY_ERR_NOMEM;
  char *owned = jy_strdup(al, name);
  if (!owned) return JY_ERR_NOMEM;
  sys->glues[sys->nglues] = (jySysGlue){owned, a, b, ta->dim};
  index_add(&sys->glue_names, glue_items(sys), sys->nglues++);
  return JY_OK;
}

jyStatus jy_system_add_channel(jySystem *sys, const char *name, jyChannelFn fn, void *ud) {
  if (!sys) return JY_ERR_INVALID;
  if (!fn || !name || !*name || strchr(name, ',') || strlen(name) > 200) {
    jy_set_error(sys->error, "channel '%s': needs a function and a name without ','",
                 name ? name : "(null)");
    return JY_ERR_INVALID;
  }
  for (int i = 0; i < sys->nchannels; i++)
    if (strcmp(sys->channels[i].name, name) == 0) {
      jy_set_error(sys->error, "a channel named '%s' exists already", name);
      return JY_ERR_INVALID;
    }
  const jyAllocator *a = &sys->env->alloc;
  if (jy_grow(a, (void **)&sys->channels, &sys->channels_cap, sys->nchannels,
              sizeof *sys->channels))
    return JY_ERR_NOMEM;
  char *owned = jy_strdup(a, name);
  if (!owned) return JY_ERR_NOMEM;
  sys->channels[sys->nchannels++] = (jyUserChannel){owned, fn, ud};
  return JY_OK;
}

/* An event's name: not empty, no '.' (the parts' own events are "<part>.<what>"), no ','
 * (the run summary lists them), unique among the events. NULL when it is fine. */
static const char *bad_event_name(const jySystem *sys, const char *name) {
  if (!name || !*name) return "needs a name";
  if (strlen(name) > 200) return "has a name longer than 200 characters";
  if (strchr(name, '.')) return "has a '.' in its name (reserved for the parts' own events)";
  if (strchr(name, ',')) return "has a ',' in its name";
  for (int i = 0; i < sys->nevents; i++)
    if (strcmp(sys->events[i].name, name) == 0) return "has the name of an event added before";
  return NULL;
}

jyStatus jy_system_add_event(jySystem *sys, const char *name, jyEventWhenFn when,
                             jyEventDirection direction, jyEventActionFn action, void *ud) {
  if (!sys) return JY_ERR_INVALID;
  const char *why = bad_event_name(sys, name);
  if (why) {
    jy_set_error(sys->error, "event '%s' %s", name ? name : "", why);
    return JY_ERR_INVALID;
  }
  if (!when) {
    jy_set_error(sys->error, "event '%s' needs a function whose zero crossing it is", name);
    return JY_ERR_INVALID;
  }
  if (direction != JY_EVENT_BOTH && direction != JY_EVENT_UP && direction != JY_EVENT_DOWN) {
    jy_set_error(sys->error,
                 "event '%s': direction %d is none of JY_EVENT_UP (1), JY_EVENT_DOWN (-1), "
                 "JY_EVENT_BOTH (0)",
                 name, (int)direction);
    return JY_ERR_INVALID;
  }
  if (sys->nevents >= JY_MAX_EVENTS) {
    jy_set_error(sys->error,
                 "event '%s': a system may have at most %d events (every step evaluates every "
                 "event's `when`); watch one function that combines several (their minimum, "
                 "say), or let a part with modes do the contacts",
                 name, JY_MAX_EVENTS);
    return JY_ERR_INVALID;
  }
  const jyAllocator *a = &sys->env->alloc;
  if (jy_grow(a, (void **)&sys->events, &sys->events_cap, sys->nevents, sizeof *sys->events))
    return JY_ERR_NOMEM;
  char *owned = jy_strdup(a, name);
  if (!owned) return JY_ERR_NOMEM;
  sys->events[sys->nevents++] = (jyUserEvent){owned, when, direction, action, ud};
  return JY_OK;
}
