/* tests/engine/t_eval_visuals.c — part protocol 7 through the public API: a part's visuals
 * are placed from its state by jy_eval_visuals; a type of protocol 6 that fills them anyway
 * is read as having none (not drawn); a visual that is not finite is the part's error,
 * named; more visuals than the protocol allows, or visuals without a function, are refused
 * when the part is added; the glue arrows carry the glue's force channels. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "joinery/joinery.h"
#include "tap.h"

static const jyParamSpec params[] = {
  {"mode", 0, JY_PARAM_NONNEGATIVE, "1", "0 fine, 1 NaN visual, 2 too many, 3 no function"},
};

/* One coordinate x with unit mass; a ball at (x, 2, 0) and a rod from the origin to it. */
static int visual(const jyPartInstance *self, const jyPartState *state, const double *row_forces,
                  jyVisual *out) {
  (void)row_forces;
  out[0].kind = JY_VISUAL_POINT;
  out[0].a[0] = self->params[0] == 1 ? NAN : state->q[0];
  out[0].a[1] = 2;
  out[1].kind = JY_VISUAL_ROD;
  out[1].b[0] = state->q[0];
  return 0;
}

static int shape(const jyPartType *type, const double *p, jyPartShape *s, char *error,
                 size_t error_len) {
  (void)type, (void)error, (void)error_len;
  s->ncoords = 1;
  s->coord_names[0] = "x";
  s->nterminals = 1;
  s->terminals[0] = (jyTerminalSpec){"pos", 1, 1, 0};
  s->flags = JY_PART_CONSTANT_MASS;
  s->nvisuals = p[0] == 2 ? JY_PART_MAX_VISUALS + 1 : 2;
  s->visual = p[0] == 3 ? NULL : visual;
  return 0;
}

static int mass(const jyPartInstance *self, const jyPartState *state, double *m) {
  (void)self, (void)state;
  m[0] = 1;
  return 0;
}

static const jyPartType drawn = {
  .version = JY_PART_PROTOCOL_VERSION,
  .name = "drawn",
  .doc = "a unit mass on a line that draws itself",
  .params = params,
  .nparams = 1,
  .shape = shape,
  .mass = mass,
};

int main(void) {
  plan(14);
  /* the same functions, declared for protocol 6: its visuals must not be read */
  jyPartType old = drawn;
  old.version = 6;
  old.name = "old";
  old.doc = "the same, of protocol 6";
  jyEnv *env = jy_env_create(NULL);
  if (!env || jy_components_register(env) != JY_OK || jy_env_register(env, &drawn) != JY_OK ||
      jy_env_register(env, &old) != JY_OK) {
    ok(0, "an environment with the test types");
    return done();
  }
  jySystem *sys = jy_system_create(env);
  jyParamSetting too_many = {"mode", 2}, no_fn = {"mode", 3};
  jyPartId bad = jy_system_add_part(sys, "drawn", "big", &too_many, 1);
  ok(bad.index < 0 && strstr(jy_system_error(sys), "17 visuals") &&
       strstr(jy_system_error(sys), "0 to 16"),
     "17 visuals are refused with the protocol's limit: %s", jy_system_error(sys));
  bad = jy_system_add_part(sys, "drawn", "blind", &no_fn, 1);
  ok(bad.index < 0 && strstr(jy_system_error(sys), "no visual function"),
     "visuals without a function are refused: %s", jy_system_error(sys));
  jy_system_add_part(sys, "drawn", "new", NULL, 0);
  jy_system_add_part(sys, "old", "old", NULL, 0);
  jyModel *model = NULL;
  jySolverDef def = jy_default_solver_def();
  ok(jy_model_compile(sys, &def, &model) == JY_OK, "the model compiles");
  ok(jy_model_num_visuals(model) == 2,
     "2 visuals: the protocol 7 part's; the protocol 6 one has "
     "none (%d)",
     jy_model_num_visuals(model));
  ok(jy_model_visual_name(model, 0) && strcmp(jy_model_visual_name(model, 0), "new") == 0 &&
       jy_model_visual_name(model, 2) == NULL,
     "visuals are named by their part; none beyond the count");
  jyEval *e = jy_eval_create(model);
  double q[2] = {0.25, -1}, v[2] = {0, 0};
  jyVisual vis[2];
  ok(jy_eval_visuals(e, q, v, 0, NULL, vis) == JY_OK, "jy_eval_visuals");
  ok(vis[0].kind == JY_VISUAL_POINT && vis[0].a[0] == 0.25 && vis[0].a[1] == 2 && vis[0].a[2] == 0,
     "the point where the part put it from its coordinate");
  ok(vis[1].kind == JY_VISUAL_ROD && vis[1].a[0] == 0 && vis[1].b[0] == 0.25,
     "the rod from the origin to it");
  jy_eval_destroy(e);
  jy_model_destroy(model);
  jy_system_destroy(sys);

  /* a visual that is not finite: the part's error */
  sys = jy_system_create(env);
  jyParamSetting nan_mode = {"mode", 1};
  jy_system_add_part(sys, "drawn", "wild", &nan_mode, 1);
  ok(jy_model_compile(sys, &def, &model) == JY_OK, "a model whose visual is NaN compiles");
  e = jy_eval_create(model);
  ok(jy_eval_visuals(e, q, v, 0.5, NULL, vis) == JY_ERR_PART &&
       strstr(jy_eval_error(e), "part 'wild' (drawn), visual") &&
       strstr(jy_eval_error(e), "not finite"),
     "a NaN visual is the part's error: %s", jy_eval_error(e));
  jy_eval_destroy(e);
  jy_model_destroy(model);
  jy_system_destroy(sys);

  /* a pendulum of a mass and a rod from a ground: the arrows carry the glues' forces */
  sys = jy_system_create(env);
  jySystem *s = sys;
  double g[3] = {0, -9.81, 0};
  jy_system_set_gravity(s, g);
  jyParamSetting dim2 = {"dim", 2};
  jyParamSetting bob_p[] = {{"dim", 2}, {"m", 2}};
  jyParamSetting rod_p[] = {{"dim", 2}, {"L", 1}};
  jyPartId ground = jy_system_add_part(s, "ground", "pivot", &dim2, 1);
  jyPartId bob = jy_system_add_part(s, "mass", "bob", bob_p, 2);
  jyPartId rod = jy_system_add_part(s, "rod", "rod", rod_p, 2);
  jy_system_set_coord(s, bob, "x", 1);
  jy_system_set_coord(s, rod, "bx", 1);
  jy_system_glue(s, jy_system_terminal(s, rod, "a"), jy_system_terminal(s, ground, "pos"), "top");
  jy_system_glue(s, jy_system_terminal(s, rod, "b"), jy_system_terminal(s, bob, "pos"), "end");
  jySolverDef keep = def;
  keep.eliminate_glue = 0; /* the glues as rows: their forces are the multipliers */
  ok(jy_model_compile(s, &keep, &model) == JY_OK, "the pendulum compiles");
  int nv = jy_model_num_visuals(model);
  jyVisual *pv = calloc((size_t)nv, sizeof *pv);
  double *ch = calloc((size_t)jy_model_num_channels(model), sizeof *ch);
  e = jy_eval_create(model);
  const double *q0 = jy_model_initial_q(model), *v0 = jy_model_initial_v(model);
  jy_eval_channels(e, q0, v0, 0, ch);
  ok(jy_eval_visuals(e, q0, v0, 0, ch, pv) == JY_OK && nv == 5,
     "5 visuals: ground, ball, rod and the arrows of the two glues (%d)", nv);
  int agree = 1, arrows = 0;
  for (int i = 0; i < nv; i++) {
    if (pv[i].kind != JY_VISUAL_ARROW) continue;
    char name[64];
    snprintf(name, sizeof name, "force.%s.y", jy_model_visual_name(model, i));
    int c = jy_model_find_channel(model, name);
    agree = agree && c >= 0 && pv[i].b[1] == ch[c];
    arrows++;
  }
  ok(arrows == 2 && agree, "each arrow is its glue's force channel");
  jyVisual again[5];
  jy_eval_visuals(e, q0, v0, 0, NULL, again);
  ok(again[3].kind == JY_VISUAL_ARROW && again[3].b[1] == 0 && again[4].b[1] == 0,
     "without the channels the arrows are there, at zero force");
  free(pv);
  free(ch);
  jy_eval_destroy(e);
  jy_model_destroy(model);
  jy_system_destroy(sys);
  jy_env_destroy(env);
  return done();
}
