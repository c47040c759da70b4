/* The run settings (jySimDef) and solver settings (jySolverDef) from their lists in
 * joinery.h (JY_RUN_SETTINGS, JY_SOLVER_SETTINGS, the choice lists): the defaults, the
 * schema the Lua binding and the command read, field access by index, and the range checks
 * jy_sim_create and jy_model_compile make, each with its message. */
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>

#include "settings.h"

/* ---- defaults -------------------------------------------------------------------------- */

#define DEFAULT_(name, type, domain, value, ...) .name = value,
jySimDef jy_default_sim_def(void) { return (jySimDef){JY_RUN_SETTINGS(DEFAULT_, DEFAULT_)}; }
jySolverDef jy_default_solver_def(void) { return (jySolverDef){JY_SOLVER_SETTINGS(DEFAULT_)}; }

/* ---- the schema ------------------------------------------------------------------------ */

/* A choice list's values, a static array (a compound literal at file scope). */
#define CHOICE_(id, name, stepper, usage) {name, (int)(id), usage},
#define CHOICES_OF_(list) ((const jyChoiceInfo[]){list(CHOICE_)})
#define COUNT_OF_(a) ((int)(sizeof a / sizeof a[0]))

/* The largest value a field of this C type holds. */
#define MAX_OF_(type) \
  _Generic((type)0, int : (double)INT_MAX, long : (double)LONG_MAX, default : DBL_MAX)

#define NUMBER_INFO_(name, type, domain, value, must_be, arg, doc) \
  {#name, domain, (double)(value), MAX_OF_(type), must_be, arg, doc, NULL, NULL, 0},
#define CHOICE_INFO_(name, type, list, value, what, arg, doc) \
  {#name,                                                     \
   JY_DOMAIN_CHOICE,                                          \
   (double)(value),                                           \
   (double)INT_MAX,                                           \
   NULL,                                                      \
   arg,                                                       \
   doc,                                                       \
   what,                                                      \
   CHOICES_OF_(list),                                         \
   (int)(sizeof CHOICES_OF_(list) / sizeof(jyChoiceInfo))},
static const jySettingInfo run_info[] = {JY_RUN_SETTINGS(NUMBER_INFO_, CHOICE_INFO_)};
static const jySettingInfo solver_info[] = {JY_SOLVER_SETTINGS(NUMBER_INFO_)};

const jySettingInfo *jy_sim_setting(int i) {
  return i >= 0 && i < COUNT_OF_(run_info) ? &run_info[i] : NULL;
}

const jySettingInfo *jy_solver_setting(int i) {
  return i >= 0 && i < COUNT_OF_(solver_info) ? &solver_info[i] : NULL;
}

/* ---- field access by index ------------------------------------------------------------- */

/* The settings' indices in their lists: ID_rtol, ID_rank_rcond, ... One name space for both
 * kinds: a script names either kind in one table, so a name used twice does not compile. */
#define ID_(name, ...) ID_##name,
enum { JY_RUN_SETTINGS(ID_, ID_) NUM_RUN };
enum { JY_SOLVER_SETTINGS(ID_) NUM_SOLVER };

#define GET_(name, ...) \
  case ID_##name:       \
    return (double)d->name;
#define SET_(name, type, ...) \
  case ID_##name:             \
    d->name = (type)value;    \
    break;

double jy_sim_def_get(const jySimDef *d, int i) {
  switch (i) { JY_RUN_SETTINGS(GET_, GET_) }
  return NAN;
}

void jy_sim_def_set(jySimDef *d, int i, double value) {
  switch (i) { JY_RUN_SETTINGS(SET_, SET_) }
}

double jy_solver_def_get(const jySolverDef *d, int i) {
  switch (i) { JY_SOLVER_SETTINGS(GET_) }
  return NAN;
}

void jy_solver_def_set(jySolverDef *d, int i, double value) {
  switch (i) { JY_SOLVER_SETTINGS(SET_) }
}

/* ---- range checks ---------------------------------------------------------------------- */

int jy_setting_admits(const jySettingInfo *s, double x) {
  int whole = x == floor(x) && x <= s->max;
  switch (s->domain) {
  case JY_DOMAIN_FINITE:
    return isfinite(x);
  case JY_DOMAIN_POSITIVE:
    return x > 0 && isfinite(x);
  case JY_DOMAIN_NONNEGATIVE:
    return x >= 0 && isfinite(x);
  case JY_DOMAIN_AT_LEAST_0:
    return x >= 0;
  case JY_DOMAIN_RELATIVE:
    return x > 0 && x < 1;
  case JY_DOMAIN_COUNT:
    return x >= 0 && whole;
  case JY_DOMAIN_COUNT_POSITIVE:
    return x > 0 && whole;
  case JY_DOMAIN_FLAG:
    return whole && x >= -s->max - 1;
  case JY_DOMAIN_CHOICE:
    for (int k = 0; k < s->nchoices; k++)
      if (x == s->choices[k].value) return 1;
    return 0;
  }
  return 0;
}

/* Names the first setting of the list out of its range ("<prefix><name> = <value> must be
 * <range>", "<what> <value> is none of <choices>"); returns 0 when there is none. */
static int bad_setting(const jySettingInfo *s, double x, const char *prefix, char *error) {
  if (jy_setting_admits(s, x)) return 0;
  if (s->domain != JY_DOMAIN_CHOICE) {
    jy_set_error(error, "%s%s = %g must be %s", prefix, s->name, x, s->must_be);
    return 1;
  }
  char names[256] = "";
  size_t used = 0;
  for (int k = 0; k < s->nchoices && used < sizeof names; k++) {
    int n =
      snprintf(names + used, sizeof names - used, "%s%s", k > 0 ? ", " : "", s->choices[k].name);
    if (n < 0) break;
    used += (size_t)n;
  }
  jy_set_error(error, "%s %g is none of %s", s->what, x, names);
  return 1;
}

int jy_sim_def_bad(const jySimDef *d, char *error) {
  for (int i = 0; i < NUM_RUN; i++)
    if (bad_setting(&run_info[i], jy_sim_def_get(d, i), "", error)) return 1;
  if (!(d->t_end > d->t_start)) {
    jy_set_error(error, "t_end = %g must be %s", d->t_end, run_info[ID_t_end].must_be);
    return 1;
  }
  return 0;
}

int jy_solver_def_bad(const jySolverDef *d, char *error) {
  for (int i = 0; i < NUM_SOLVER; i++)
    if (bad_setting(&solver_info[i], jy_solver_def_get(d, i), "solver setting ", error)) return 1;
  if (d->dependent_rcond < d->rank_rcond) {
    jy_set_error(error,
                 "solver setting dependent_rcond = %g must be at least rank_rcond = %g "
                 "(a dependent row must not count as independent where the rank cut says it "
                 "is dependent)",
                 d->dependent_rcond, d->rank_rcond);
    return 1;
  }
  return 0;
}
