/* TEMPORARY (branch operating): stand-ins for the inputs that main declares and is
 * implementing, so that operating.c links and is tested with models without inputs. Remove
 * this file (and its line in engine/meson.build) when merging main's implementation. */
#include <math.h>

#include "internal.h"

int jy_model_num_inputs(const jyModel *model) { return model ? 0 : 0; }
const char *jy_model_input_name(const jyModel *model, int k) { return model && k < 0 ? "" : NULL; }
double jy_model_input_initial(const jyModel *model, int k) { return model && k < 0 ? 0 : NAN; }
int jy_model_find_input(const jyModel *model, const char *name) { return model && name ? -1 : -1; }
jyStatus jy_eval_set_input(jyEval *eval, int k, double value) {
  if (eval && k < 0 && isfinite(value)) return JY_ERR_INVALID;
  return JY_ERR_INVALID;
}
