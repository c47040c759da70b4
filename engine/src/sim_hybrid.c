/* Parts with modes inside a simulation (sim_events.h). Stub: no part has modes yet. */
#include "sim_events.h"

jyStatus jy_hybrid_setup(jySim *sim) {
  (void)sim;
  return JY_OK;
}
void jy_hybrid_destroy(jySim *sim) { (void)sim; }
int jy_hybrid_count(const jySim *sim) {
  (void)sim;
  return 0;
}
int jy_hybrid_guards(jySim *sim, double t, const double *y, double *g) {
  (void)sim, (void)t, (void)y, (void)g;
  return 0;
}
jyStatus jy_hybrid_fire(jySim *sim, double t, double *y, const int *found, int *changed) {
  (void)sim, (void)t, (void)y, (void)found;
  *changed = 0;
  return JY_OK;
}
