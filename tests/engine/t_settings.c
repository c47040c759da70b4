/* engine/src/settings.c: the settings' lists as the engine reads them. The schema gives every
 * field its default, get and set reach the field the name says, the domains admit what they
 * say, and the checks jy_sim_create and jy_model_compile make name the setting in the words
 * of its list. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "settings.h"
#include "tap.h"

/* A bad definition's message, "" for a good one. */
static const char *sim_error(const jySimDef *d) {
  static char error[JY_ERROR_LEN];
  error[0] = '\0';
  jy_sim_def_bad(d, error);
  return error;
}

static const char *solver_error(const jySolverDef *d) {
  static char error[JY_ERROR_LEN];
  error[0] = '\0';
  jy_solver_def_bad(d, error);
  return error;
}

int main(void) {
  plan(17);
  jySimDef sim = jy_default_sim_def();
  jySolverDef solver = jy_default_solver_def();

  /* Defaults: the schema's, the struct's and the documented ones agree. */
  int nrun = 0, nsolver = 0, defaults_agree = 1, names_unique = 1;
  for (const jySettingInfo *s; (s = jy_sim_setting(nrun)); nrun++)
    defaults_agree &= jy_sim_def_get(&sim, nrun) == s->default_value;
  for (const jySettingInfo *s; (s = jy_solver_setting(nsolver)); nsolver++)
    defaults_agree &= jy_solver_def_get(&solver, nsolver) == s->default_value;
  for (int i = 0; i < nrun; i++)
    for (int j = 0; j < nsolver; j++)
      names_unique &= strcmp(jy_sim_setting(i)->name, jy_solver_setting(j)->name) != 0;
  ok(nrun == 14 && nsolver == 9, "14 run settings and 9 solver settings (got %d, %d)", nrun,
     nsolver);
  ok(defaults_agree, "each setting's default in the schema is the default def's field");
  ok(names_unique, "no name is both a run and a solver setting");
  ok(sim.method == JY_METHOD_AUTO && sim.rtol == 1e-11 && sim.t_end == 10 &&
       sim.max_steps == 100000 && sim.drift == JY_DRIFT_PROJECTION &&
       solver.sparse_min_coords == 60 && solver.eliminate_glue == 1 &&
       solver.consistency_tol == 1e-4,
     "the defaults are those joinery.h documents");
  ok(jy_sim_setting(-1) == NULL && jy_sim_setting(nrun) == NULL &&
       jy_solver_setting(nsolver) == NULL,
     "past the lists: NULL");

  /* Get and set reach the named field. */
  int reach = 1;
  for (int i = 0; i < nrun; i++) {
    jySimDef d = jy_default_sim_def();
    const jySettingInfo *s = jy_sim_setting(i);
    double x = s->domain == JY_DOMAIN_CHOICE ? s->choices[s->nchoices - 1].value : 7;
    jy_sim_def_set(&d, i, x);
    reach &= jy_sim_def_get(&d, i) == x;
    if (strcmp(s->name, "t_end") == 0) reach &= d.t_end == 7;
    if (strcmp(s->name, "newton") == 0) reach &= d.newton == JY_NEWTON_KRYLOV;
    if (strcmp(s->name, "max_steps") == 0) reach &= d.max_steps == 7;
  }
  for (int i = 0; i < nsolver; i++) {
    jySolverDef d = jy_default_solver_def();
    jy_solver_def_set(&d, i, 0);
    reach &= jy_solver_def_get(&d, i) == 0;
    if (strcmp(jy_solver_setting(i)->name, "tree_recursion") == 0) reach &= d.tree_recursion == 0;
  }
  ok(reach, "jy_*_def_set writes the field jy_*_def_get reads, the one the name says");

  /* Domains. */
  const jySettingInfo *rank = jy_solver_setting(0), *steps = NULL, *method = jy_sim_setting(0);
  for (int i = 0; i < nrun; i++)
    if (strcmp(jy_sim_setting(i)->name, "max_steps") == 0) steps = jy_sim_setting(i);
  ok(strcmp(rank->name, "rank_rcond") == 0 && jy_setting_admits(rank, 0.5) &&
       !jy_setting_admits(rank, 1) && !jy_setting_admits(rank, 0) && !jy_setting_admits(rank, NAN),
     "a relative cut admits (0, 1) only");
  ok(steps && jy_setting_admits(steps, 1) && !jy_setting_admits(steps, 0) &&
       !jy_setting_admits(steps, 1.5) && !jy_setting_admits(steps, 1e300),
     "a count admits whole numbers its C type holds");
  ok(strcmp(method->name, "method") == 0 && method->nchoices == 4 &&
       jy_setting_admits(method, JY_METHOD_AUTO) && !jy_setting_admits(method, 4) &&
       strcmp(method->choices[JY_METHOD_BDF].name, "bdf") == 0,
     "a choice admits its list's values, named in enum order");

  /* The checks, in the lists' words. */
  ok(strcmp(sim_error(&sim), "") == 0 && strcmp(solver_error(&solver), "") == 0,
     "the defaults pass the checks");
  jySimDef d = sim;
  d.rtol = -1;
  ok(strcmp(sim_error(&d), "rtol = -1 must be > 0") == 0, "rtol = -1: %s", sim_error(&d));
  d = sim;
  d.t_end = -1;
  ok(strcmp(sim_error(&d), "t_end = -1 must be finite and after t_start") == 0,
     "t_end before t_start: %s", sim_error(&d));
  d = sim;
  d.drift = (jyDrift)7;
  ok(strcmp(sim_error(&d), "drift control 7 is none of baumgarte, projection, none") == 0,
     "a drift control out of the enum: %s", sim_error(&d));
  d = sim;
  d.max_step = INFINITY;
  ok(strcmp(sim_error(&d), "") == 0, "max_step = inf: no limit, as 0");
  jySolverDef s = solver;
  s.sparse_min_coords = -1;
  ok(strcmp(solver_error(&s), "solver setting sparse_min_coords = -1 must be >= 0 (0: never)") == 0,
     "sparse_min_coords = -1: %s", solver_error(&s));
  s = solver;
  s.dependent_rcond = 1e-12;
  ok(strstr(solver_error(&s), "dependent_rcond = 1e-12 must be at least rank_rcond") != NULL,
     "dependent_rcond below rank_rcond: %s", solver_error(&s));
  s = solver;
  s.augment_scale = 0;
  ok(strcmp(solver_error(&s), "solver setting augment_scale = 0 must be a positive number") == 0,
     "augment_scale = 0: %s", solver_error(&s));
  return done();
}
