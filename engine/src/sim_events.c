/* User events inside a simulation (sim_events.h). Stub: no user events yet. */
#include "sim_events.h"

jyStatus jy_events_setup(jySim *sim) {
  (void)sim;
  return JY_OK;
}
void jy_events_destroy(jySim *sim) { (void)sim; }
int jy_events_count(const jySim *sim) {
  (void)sim;
  return 0;
}
void jy_events_directions(const jySim *sim, int *directions) { (void)sim, (void)directions; }
int jy_events_guards(jySim *sim, double t, const double *y, double *g) {
  (void)sim, (void)t, (void)y, (void)g;
  return 0;
}
jyStatus jy_events_fire(jySim *sim, double t, double *y, const int *found, int *changed,
                        int *stop) {
  (void)sim, (void)t, (void)y, (void)found;
  *changed = 0;
  *stop = 0;
  return JY_OK;
}
