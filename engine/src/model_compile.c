/* Compiling a system into an immutable model, stage by stage: layout and glue elimination
 * (compile_layout.c, compile_glue.c), the parts' private data, the consistent initial state
 * and its dependent rows (compile_initial.c), and a first acceleration that proves the
 * model solvable. Also the model's accessors and its destruction. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "compile.h"
#include "settings.h"

void jy_model_destroy(jyModel *model) {
  if (!model) return;
  jyAllocator a = model->alloc;
  for (int i = 0; i < model->nparts; i++) {
    jyModelPart *p = &model->parts[i];
    jy_free(&a, (char *)p->inst.name);
    jy_free(&a, (double *)p->inst.params);
    jy_free(&a, (void *)p->inst.data);
    jy_free(&a, p->coord_map);
    jy_free(&a, p->cols);
    jy_free(&a, p->gather);
  }
  jy_shape_pool_free(&model->shapes, &a);
  for (int l = 0; l < model->nlinks; l++) jy_free(&a, model->links[l].pos);
  jy_free(&a, model->source_link_ptr);
  jy_free(&a, model->source_links);
  jy_free(&a, model->tree_order);
  for (int i = 0; i < model->nglues; i++) jy_free(&a, model->glues[i].name);
  if (model->local_names)
    for (int i = 0; i < model->nlocal; i++) jy_free(&a, model->local_names[i]);
  jy_free(&a, model->local_names);
  jy_free(&a, model->local_coord);
  jy_free(&a, model->links);
  jy_free(&a, model->user_channels);
  for (int i = 0; i < model->nevents; i++) jy_free(&a, model->events[i].name);
  jy_free(&a, model->events);
  jy_model_free_inputs(model);
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

/* Lets each part fill its private data. */
static jyStatus init_parts(jyModel *md, jySystem *sys) {
  for (int i = 0; i < md->nparts; i++) {
    jyModelPart *p = &md->parts[i];
    if (p->shape->instance_size > 0) {
      p->inst.data = jy_calloc(&md->alloc, 1, p->shape->instance_size);
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

/* The system's events, names copied (the model outlives the system). */
static jyStatus copy_events(jyModel *md, const jySystem *sys) {
  if (sys->nevents == 0) return JY_OK;
  md->events = jy_calloc(&md->alloc, (size_t)sys->nevents, sizeof *md->events);
  if (!md->events) return JY_ERR_NOMEM;
  for (int i = 0; i < sys->nevents; i++) {
    md->events[i] = sys->events[i];
    md->events[i].name = jy_strdup(&md->alloc, sys->events[i].name);
    if (!md->events[i].name) return JY_ERR_NOMEM;
    md->nevents = i + 1;
  }
  return JY_OK;
}

/* A user channel must not take a name the model's own channels have. */
static jyStatus check_user_channel_names(const jyModel *md, jySystem *sys) {
  for (int u = 0; u < md->nuser; u++)
    for (int c = 0; c < md->user_channel; c++)
      if (strcmp(md->channel_names[c], md->channel_names[md->user_channel + u]) == 0) {
        jy_set_error(sys->error,
                     "channel '%s' has the name of a channel the model has "
                     "already: choose another",
                     md->channel_names[c]);
        return JY_ERR_INVALID;
      }
  return JY_OK;
}

/* A model with no coordinates has nothing to integrate (a ground alone, or nothing at all):
 * said in the model's terms, before the acceleration's solver sees an empty matrix. */
static jyStatus check_has_coordinates(const jyModel *md, jySystem *sys) {
  if (md->n > 0) return JY_OK;
  if (md->nparts == 0) {
    jy_set_error(sys->error,
                 "the system is empty: add parts (a mass, a pendulum, a body) "
                 "before compiling or running it");
    return JY_ERR_INVALID;
  }
  char names[256] = "";
  for (int i = 0, used = 0; i < md->nparts && used + 1 < (int)sizeof names; i++)
    used += snprintf(names + used, sizeof names - (size_t)used, "%s'%s' (%s)", i ? ", " : "",
                     md->parts[i].inst.name, md->parts[i].inst.type->name);
  jy_set_error(sys->error,
               "the system has no coordinates to integrate: its parts %s have none that move "
               "(a ground is fixed); add a part that moves, such as a mass or a pendulum",
               names);
  return JY_ERR_INVALID;
}

/* The acceleration at the initial state: a model that compiles can take its first step. */
static jyStatus first_acceleration(jyModel *md, jySystem *sys, jyEval *e) {
  double *acc = jy_calloc(&md->alloc, (size_t)md->n + 1, sizeof(double));
  if (!acc) return JY_ERR_NOMEM;
  jyStatus st = jy_eval_acceleration(e, md->q0, md->v0, 0, acc);
  if (st != JY_OK) jy_set_error(sys->error, "%s", e->error);
  jy_free(&md->alloc, acc);
  return st;
}

/* The stages after the layout, on an evaluator of the model; *stage names the one running. */
static jyStatus settle_initial_state(jyModel *md, jySystem *sys, const char **stage) {
  *stage = "the evaluator";
  jyEval *e = jy_eval_create(md);
  if (!e) return JY_ERR_NOMEM;
  *stage = "the consistent initial state";
  /* Parts with modes first all open (mode 0: the rows of an open contact are not met), then
   * in the modes they start in at that state, whose closed rows are met in a second pass. */
  jyStatus st = jy_compile_initial_state(md, sys, e);
  if (st == JY_OK && jy_model_has_modes(md)) {
    st = jy_eval_initial_modes(e, md->q0, md->v0, 0);
    if (st != JY_OK) jy_set_error(sys->error, "%s", e->error);
    if (st == JY_OK) st = jy_compile_initial_state(md, sys, e);
  }
  /* After the initial state, whose Newton never reaches LAPACK without coordinates: rows
   * between fixed parts that cannot hold (two grounds welded apart) are named first. */
  if (st == JY_OK) st = check_has_coordinates(md, sys);
  if (st == JY_OK) {
    *stage = "the dependent rows";
    st = jy_compile_dependent_rows(md, e);
    if (st == JY_ERR_PART) jy_set_error(sys->error, "%s", e->error);
  }
  if (st == JY_OK) {
    *stage = "the first acceleration";
    st = first_acceleration(md, sys, e);
  }
  jy_eval_destroy(e);
  return st;
}

jyStatus jy_model_compile(jySystem *sys, const jySolverDef *def, jyModel **out) {
  if (!sys || !out) return JY_ERR_INVALID;
  *out = NULL;
  if (def && jy_solver_def_bad(def, sys->error)) return JY_ERR_INVALID;
  jyModel *md = jy_calloc(&sys->env->alloc, 1, sizeof *md);
  if (!md) return JY_ERR_NOMEM;
  md->alloc = sys->env->alloc;
  md->solver = def ? *def : jy_default_solver_def();
  const char *stage = "the layout (numbering and names)";
  jyStatus st = jy_model_copy_inputs(md, sys); /* the layout names their channels */
  if (st == JY_OK) st = jy_compile_layout(md, sys);
  if (st == JY_OK) st = copy_events(md, sys);
  if (st == JY_OK) st = check_user_channel_names(md, sys);
  for (int i = 0; i < md->nparts && st == JY_OK; i++)
    if (md->parts[i].inst.type->nonideal_law && !(md->parts[i].shape->flags & JY_PART_NO_LAW))
      md->has_laws = 1;
  if (st == JY_OK) {
    stage = "the parts' private data";
    st = init_parts(md, sys);
  }
  if (st == JY_OK) st = settle_initial_state(md, sys, &stage);
  if (st != JY_OK) {
    if (st == JY_ERR_NOMEM)
      jy_set_error(sys->error, "out of memory compiling the model, in %s", stage);
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

int jy_model_channel_coord(const jyModel *model, int i, int *velocity) {
  if (velocity) *velocity = 0;
  if (!model || i < 1 || i > 2 * model->nlocal) return -1;
  int local = (i - 1) % model->nlocal, k = model->local_coord[local];
  if (velocity) *velocity = i > model->nlocal;
  return k >= 0 ? k : -2;
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
void jy_model_gravity(const jyModel *model, double gravity[3]) {
  for (int i = 0; i < 3; i++) gravity[i] = model ? model->gravity[i] : 0.0;
}
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

const char *jy_model_channel_unit(const jyModel *model, int i) {
  if (!model || i < 0 || i >= model->nchannels) return NULL;
  if (i == 0) return "s";
  if (i >= model->input_channel && i < model->input_channel + model->ninputs)
    return model->inputs[i - model->input_channel].unit;
  int d = i - model->ch_derived;
  if (d == JY_CH_ENERGY || d == JY_CH_KINETIC || d == JY_CH_POTENTIAL) return "J";
  /* "power.ideal|nonideal" and "power.<part>.ideal|nonideal"; a user channel's name is the
   * user's own. */
  const char *name = model->channel_names[i];
  size_t n = strlen(name);
  int ideal = (n > 6 && strcmp(name + n - 6, ".ideal") == 0) ||
    (n > 9 && strcmp(name + n - 9, ".nonideal") == 0);
  if ((model->nuser == 0 || i < model->user_channel) && strncmp(name, "power.", 6) == 0 && ideal)
    return "W";
  return "";
}

int jy_model_find_channel(const jyModel *model, const char *name) {
  if (model && name)
    for (int i = 0; i < model->nchannels; i++)
      if (strcmp(model->channel_names[i], name) == 0) return i;
  return -1;
}
