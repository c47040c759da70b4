/* Events inside a simulation: the guard functions the integrator's root finding watches and
 * what happens when one crosses zero. Internal.
 *
 * Two groups of guards share one root function (sim_step.c, jy_sim_guards): first the parts' own
 * (sim_hybrid.c: contacts that close and open, friction that sticks and slips, with the
 * modes each part is in), then the user events (sim_events.c: jy_system_add_event). At a
 * located crossing sim.c writes the row before, calls jy_hybrid_fire then jy_events_fire,
 * restarts the integrator from the state they leave, and writes the row after. */
#ifndef JY_SIM_EVENTS_H
#define JY_SIM_EVENTS_H

#include "sim.h"

/* ---- parts with modes (sim_hybrid.c) ---- */

/* Sets up the modes of the model's hybrid parts at the simulation's initial state (initial
 * modes, then each checked as admissible) and the evaluator's active rows: JY_OK, or an
 * error with the reason in sim->error. Nothing to do (JY_OK) for a model without them.
 * Called again by jy_sim_set_state (the modes at the new state): it must then replace what
 * the first call set up, without leaking it. sim->t, sim->q, sim->v hold the state. */
jyStatus jy_hybrid_setup(jySim *sim);
void jy_hybrid_destroy(jySim *sim);
/* How many guard functions the parts have (constant for the simulation's life). */
int jy_hybrid_count(const jySim *sim);
/* The parts' guard values at (t, y) into g (jy_hybrid_count of them): 0, or -1 with the
 * reason in sim->error and sim->failure set. */
int jy_hybrid_guards(jySim *sim, double t, const double *y, double *g);
/* The longest step the parts with modes allow from (t, y) (jyPartHybrid.max_step): 0 for no
 * limit. The steppers cut their next step there after every step and restart. */
double jy_hybrid_max_step(jySim *sim, double t, const double *y);
/* The part guards found[k] != 0 (+1 rising, -1 falling; jy_hybrid_count entries) crossed at
 * t: transitions, impacts (y's velocities change), then the new modes settled. *changed set
 * when y or a mode changed. Each firing is counted in the event summary as
 * "<part>.<mode or impact>". JY_OK or an error in sim->error. */
jyStatus jy_hybrid_fire(jySim *sim, double t, double *y, const int *found, int *changed);
/* The modes decided again at (t, y) after a user event's action changed a parameter or the
 * state (a floor lowered under a resting block opens its contact): the settling loop of
 * jy_hybrid_fire, each switch counted. *changed set when a mode switched. */
jyStatus jy_hybrid_settle(jySim *sim, double t, const double *y, int *changed);

/* ---- user events (sim_events.c) ---- */

jyStatus jy_events_setup(jySim *sim);
void jy_events_destroy(jySim *sim);
int jy_events_count(const jySim *sim);

/* Controller k at (t, y) (the reported state): its function with an action's view, which
 * may set held inputs; *changed set when one changed. JY_OK, or the failure (named, in
 * sim->error). */
jyStatus jy_controller_run(jySim *sim, int k, double t, double *y, int *changed);

/* The state y = [q, v] at t put back onto the constraints (positions, then velocities, the
 * least kinetic-energy change, weighted as a reported state's: weights is n scratch), and
 * N–P's multipliers made consistent with it: after an event's jump, and where an input
 * changed or a signal kinked (a motor's prescribed motion). JY_OK, or the failure with why. */
jyStatus jy_sim_settle_state(jySim *sim, double t, double *y, double *weights, char *why,
                             size_t why_len);

/* Held input k set in every evaluator of the simulation; *changed when it had another
 * value. JY_OK, or the refusal (a bad index, a signal, a value not finite) in the
 * simulation's evaluator's error. */
jyStatus jy_sim_hold_input(jySim *sim, int k, double value, int *changed);
/* Per user event: -1, 0 or +1 (jyEventDirection). */
void jy_events_directions(const jySim *sim, int *directions);
/* The user events' g at (t, y): 0, or -1 with the reason (event name, script line through
 * the callback's message, time) in sim->error and sim->failure set. */
int jy_events_guards(jySim *sim, double t, const double *y, double *g);
/* The user events found[k] != 0 crossed at t: their actions in order, y changed in place
 * (then projected onto the constraints). *changed when y or a parameter changed, *stop when
 * an action stops the run. JY_OK or an error in sim->error. */
jyStatus jy_events_fire(jySim *sim, double t, double *y, const int *found, int *changed, int *stop);

/* The event summary (sim_events.c, below sim_hybrid.c and sim.c): counts one firing of
 * `name` at t (the name is copied). */
jyStatus jy_sim_count_event(jySim *sim, const char *name, double t);

/* The root function SUNDIALS calls (CVodeRootInit, ARKStepRootInit): both groups in order
 * (sim_step.c). */
int jy_sim_guards(double t, N_Vector y, double *g, void *sim);

#endif
