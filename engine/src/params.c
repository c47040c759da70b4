/* The parameter door: the one place a part's parameter values are looked up in its type's
 * schema, defaulted and checked against their domains. sys:add and jy_system_add_part,
 * joinery.eval_part, joinery.check_part (the conformance suite) and joinery.part_type (the
 * defaults of a Lua type) all come through here, so they accept and refuse the same values
 * with the same words. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

enum { MAX_SUGGESTED = 256 }; /* candidates a "did you mean" looks at */

int jy_param_in_domain(jyParamDomain domain, double value) {
  if (domain == JY_PARAM_BOUND) return value == value;
  if (!isfinite(value)) return 0;
  switch (domain) {
  case JY_PARAM_POSITIVE:
    return value > 0;
  case JY_PARAM_NONNEGATIVE:
    return value >= 0;
  case JY_PARAM_DIMENSION:
    return value == 1 || value == 2 || value == 3;
  case JY_PARAM_REAL:
  case JY_PARAM_BOUND:
    return 1;
  }
  return 0; /* a domain this joinery does not know accepts nothing */
}

static const char *domain_text(jyParamDomain domain) {
  switch (domain) {
  case JY_PARAM_POSITIVE:
    return "must be > 0";
  case JY_PARAM_NONNEGATIVE:
    return "must be >= 0";
  case JY_PARAM_DIMENSION:
    return "must be 1, 2 or 3";
  case JY_PARAM_REAL:
    return "must be a finite number";
  case JY_PARAM_BOUND:
    return "must be a number or +-infinity (math.huge: no bound)";
  }
  return "has a domain this joinery does not know";
}

int jy_param_check(const jyParamSpec *spec, double value, char *why, size_t why_len) {
  if (!spec) return -1;
  if (jy_param_in_domain(spec->domain, value)) return 0;
  if (why && why_len)
    snprintf(why, why_len, "%s = %g%s%s %s", spec->name ? spec->name : "?", value,
             spec->unit && strcmp(spec->unit, "1") != 0 ? " " : "",
             spec->unit && strcmp(spec->unit, "1") != 0 ? spec->unit : "",
             domain_text(spec->domain));
  return -1;
}

int jy_param_index(const jyPartType *type, const char *name) {
  for (int i = 0; name && i < type->nparams; i++)
    if (type->params[i].name && strcmp(type->params[i].name, name) == 0) return i;
  return -1;
}

/* Writes "part 'b' (mass): " or, without a part name, "part type 'mass': ". */
static size_t who(char *error, size_t len, const jyPartType *type, const char *part) {
  int w = part ? snprintf(error, len, "part '%s' (%s): ", part, type->name)
               : snprintf(error, len, "part type '%s': ", type->name);
  return w < 0 ? 0 : (size_t)w < len ? (size_t)w : len - 1;
}

/* What name is when it is a terminal or a coordinate of the type at its default parameters
 * (the names a script may mistake for parameters), else NULL. */
static const char *other_kind_of_name(const jyPartType *type, const char *name) {
  double defaults[JY_MAX_PARAMS];
  jyPartShape shape;
  char why[256];
  memset(&shape, 0, sizeof shape);
  for (int i = 0; i < type->nparams; i++) defaults[i] = type->params[i].default_value;
  if (!type->shape || jy_part_shape(type, defaults, &shape, why, sizeof why) != 0) return NULL;
  for (int k = 0; k < shape.nterminals && k < JY_PART_MAX_TERMINALS; k++)
    if (shape.terminals[k].name && strcmp(shape.terminals[k].name, name) == 0) return "terminal";
  for (int j = 0; j < shape.ncoords && j < JY_PART_MAX_COORDS; j++)
    if (shape.coord_names[j] && strcmp(shape.coord_names[j], name) == 0) return "coordinate";
  return NULL;
}

/* The message for a setting whose name is no parameter of the type. */
static void unknown_name(const jyPartType *type, const char *name, char *error, size_t len) {
  const char *kind = other_kind_of_name(type, name);
  if (kind && strcmp(kind, "terminal") == 0) {
    snprintf(error, len,
             "'%s' is a terminal of %s, not a parameter: give it a terminal to glue to "
             "(%s = other.terminal), not a number",
             name, type->name, name);
    return;
  }
  if (kind) {
    snprintf(error, len,
             "'%s' is a coordinate of %s, not a parameter: set its initial value with "
             "init = {%s = ...}",
             name, type->name, name);
    return;
  }
  const char *names[MAX_SUGGESTED];
  int count = type->nparams < MAX_SUGGESTED ? type->nparams : MAX_SUGGESTED;
  for (int i = 0; i < count; i++) names[i] = type->params[i].name ? type->params[i].name : "?";
  char hint[512];
  jy_suggest(hint, sizeof hint, name, names, count);
  snprintf(error, len, "unknown parameter '%s'%s", name, hint);
}

int jy_param_names_check(const jyPartType *type, char *error, size_t len) {
  /* sys:add (and any host reading one table per part) takes these keys, and the terminals'
   * names, from the same table as the parameters. */
  static const char *const reserved[] = {"init", "vel", "guess"};
  if (type->nparams < 0 || type->nparams > JY_MAX_PARAMS || (type->nparams > 0 && !type->params)) {
    snprintf(error, len, "part type '%s' declares %d parameters; 0 to %d are supported", type->name,
             type->nparams, JY_MAX_PARAMS);
    return -1;
  }
  for (int i = 0; i < type->nparams; i++) {
    const char *name = type->params[i].name;
    if (!name || !name[0]) {
      snprintf(error, len, "part type '%s': parameter %d has no name", type->name, i + 1);
      return -1;
    }
    for (size_t r = 0; r < sizeof reserved / sizeof reserved[0]; r++)
      if (strcmp(name, reserved[r]) == 0) {
        snprintf(error, len,
                 "part type '%s': '%s' cannot be a parameter name: it is reserved (a part's "
                 "init, vel and guess tables set its initial values)",
                 type->name, name);
        return -1;
      }
    if (jy_param_index(type, name) != i) {
      snprintf(error, len, "part type '%s': parameter '%s' is listed twice", type->name, name);
      return -1;
    }
    const char *kind = other_kind_of_name(type, name);
    if (kind && strcmp(kind, "terminal") == 0) {
      snprintf(error, len,
               "part type '%s': '%s' names both a parameter and a terminal; rename one (a "
               "script gives both in one table: a number sets the parameter, a terminal glues)",
               type->name, name);
      return -1;
    }
  }
  return 0;
}

jyStatus jy_params_fill(const jyPartType *type, const char *part, const jyParamSetting *settings,
                        int nsettings, double *params, char *error, size_t error_len) {
  char scratch[8];
  if (!error || error_len == 0) error = scratch, error_len = sizeof scratch;
  error[0] = '\0';
  if (!type || !type->name || type->nparams < 0 ||
      (type->nparams > 0 && (!type->params || !params)) || nsettings < 0 ||
      (nsettings > 0 && !settings)) {
    snprintf(error, error_len, "jy_params_fill: no part type, parameter table or settings");
    return JY_ERR_INVALID;
  }
  size_t at = who(error, error_len, type, part);
  if (type->nparams > JY_MAX_PARAMS) {
    snprintf(error + at, error_len - at, "the type has %d parameters; at most %d are supported",
             type->nparams, JY_MAX_PARAMS);
    return JY_ERR_INVALID;
  }
  for (int i = 0; i < type->nparams; i++) params[i] = type->params[i].default_value;
  for (int s = 0; s < nsettings; s++) {
    int i = jy_param_index(type, settings[s].name);
    if (i < 0) {
      if (settings[s].name)
        unknown_name(type, settings[s].name, error + at, error_len - at);
      else
        snprintf(error + at, error_len - at, "a parameter setting has no name");
      return JY_ERR_UNKNOWN_NAME;
    }
    params[i] = settings[s].value;
  }
  /* Every value, defaults included: a type's default outside its domain is refused too. */
  for (int i = 0; i < type->nparams; i++) {
    char why[256];
    if (jy_param_check(&type->params[i], params[i], why, sizeof why) != 0) {
      snprintf(error + at, error_len - at, "parameter %s", why);
      return JY_ERR_PARAM;
    }
  }
  error[0] = '\0';
  return JY_OK;
}
