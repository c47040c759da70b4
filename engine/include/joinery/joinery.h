/* joinery/joinery.h — the engine's public C API.
 *
 * Life cycle: an environment (allocator + part registry) -> a system (the builder: parts,
 * glue, initial values) -> an immutable compiled model -> any number of simulations.
 *
 * Ownership: the creator frees; every *_destroy accepts NULL. A model must outlive its
 * simulations, an environment must outlive its systems and models. Strings returned by the
 * library stay valid until the next mutating call on the object that returned them.
 * Errors are values: a jyStatus, plus a message on the object (jy_*_error) that names the
 * part, glue, parameter or coordinate involved and, while simulating, the time.
 *
 * Threads: the library keeps no global mutable state, so objects that share nothing never
 * interfere. An environment, a system, a simulation and an evaluator are each used
 * by one thread at a time (the caller serializes, or keeps each in its own thread). A
 * compiled model is read-only after jy_model_compile: any number of threads may create,
 * run and destroy simulations and evaluators of one model at once, each thread its own
 * jySim/jyEval, and each gets bit for bit what it would get alone (tests/engine/t_threads.c,
 * also under ThreadSanitizer) — provided its part types allow it. The built-in parts do,
 * and so must a C plugin's (joinery/part.h: part functions read only their arguments, the
 * instance and the type). A model with parts written in Lua does not: those parts call
 * into the one lua_State that defined them, so its simulations run one at a time, on the
 * thread that defined the types: called from another thread, a Lua part fails (JY_ERR_PART,
 * "runs only in the thread whose Lua state defined it") rather than touch the state. What
 * the caller hands in is shared too: the allocator (jyAllocator) is called from every
 * thread that creates or destroys a simulation, and a user channel (jy_system_add_channel's
 * fn) from every thread that runs one, so both must be safe to call concurrently
 * (malloc/free, the default, is). Destroying a model waits for nothing: its simulations
 * must all be destroyed first, the environment after the model.
 */
#ifndef JOINERY_JOINERY_H
#define JOINERY_JOINERY_H

#include <stddef.h>

#include "joinery/part.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(JY_BUILDING_LIBRARY) && defined(__GNUC__)
#define JY_API __attribute__((visibility("default")))
#else
#define JY_API
#endif

/* The library's version (meson.build's project version must agree: the build checks). The
 * major number is the shared library's soname (libjoinery.so.0): it changes when the ABI
 * does. jy_version() is the version of the library a program runs against, "MAJOR.MINOR.PATCH",
 * which a program built against these macros may compare with them. */
#define JOINERY_VERSION_MAJOR 0
#define JOINERY_VERSION_MINOR 1
#define JOINERY_VERSION_PATCH 0
JY_API const char *jy_version(void);

#define JY_STATUS_LIST(X)                                            \
  X(JY_OK, "ok")                                                     \
  X(JY_ERR_NOMEM, "out of memory")                                   \
  X(JY_ERR_INVALID, "invalid argument")                              \
  X(JY_ERR_UNKNOWN_TYPE, "unknown part type")                        \
  X(JY_ERR_UNKNOWN_NAME, "unknown name")                             \
  X(JY_ERR_PARAM, "bad parameter value")                             \
  X(JY_ERR_PROTOCOL, "part type built for another protocol version") \
  X(JY_ERR_DIMENSION, "terminal dimensions differ")                  \
  X(JY_ERR_PART, "a part function failed")                           \
  X(JY_ERR_NOT_UNIQUE, "acceleration not unique")                    \
  X(JY_ERR_INCONSISTENT, "inconsistent constraints")                 \
  X(JY_ERR_INTEGRATOR, "integrator failure")                         \
  X(JY_ERR_CONVERGENCE, "non-ideal laws did not converge")           \
  X(JY_ERR_IO, "input/output error")                                 \
  X(JY_ERR_BRANCH, "the motion would switch branch at a singular configuration")

typedef enum jyStatus {
#define JY_STATUS_ENUM(code, text) code,
  JY_STATUS_LIST(JY_STATUS_ENUM)
#undef JY_STATUS_ENUM
} jyStatus;

/* A short fixed text for a status ("inconsistent constraints"). */
JY_API const char *jy_status_text(jyStatus status);

/* The candidate nearest to name (case-insensitive edit distance of at most 2, and shorter
 * than the name), for "did you mean" messages; NULL when none is near enough. */
JY_API const char *jy_nearest_name(const char *name, const char *const *candidates, int count);

/* A pattern of jy_pick_names that matched no name: pattern[0..len) and the index of the name
 * nearest it, its wildcards dropped (-1 when there are no names). */
typedef struct jyNameMiss {
  const char *pattern;
  size_t len;
  int nearest;
} jyNameMiss;

/* Picks names by patterns, as joinery run --columns does: `patterns` is a comma-separated
 * list of globs ('*' any run of characters, '?' one; blanks around a pattern ignored). Calls
 * pick(ud, k) for every k whose names[k] a pattern matches, pattern after pattern and each
 * in the names' order (a name two patterns match comes twice: the caller drops repeats).
 * Returns the number of patterns (0: none, patterns blank or NULL), or -1 when pick returns
 * non-zero or a pattern matches no name (then *miss says which, when miss is not NULL). */
JY_API int jy_pick_names(const char *patterns, const char *const *names, int count,
                         int (*pick)(void *ud, int k), void *ud, jyNameMiss *miss);

/* ---- environment ------------------------------------------------------------------- */

/* Memory comes from here; NULL fields mean the C library's malloc/realloc/free. */
typedef struct jyAllocator {
  void *(*alloc)(void *ud, size_t size);
  void *(*realloc)(void *ud, void *ptr, size_t size);
  void (*free)(void *ud, void *ptr);
  void *ud;
} jyAllocator;

typedef struct jyEnv jyEnv;

/* alloc may be NULL. The registry starts empty: see jy_components_register(). */
JY_API jyEnv *jy_env_create(const jyAllocator *alloc);
JY_API void jy_env_destroy(jyEnv *env);
/* Registers a part type (kept by pointer; it must outlive the environment). Fails with
 * JY_ERR_PROTOCOL when type->version is outside JY_PART_PROTOCOL_OLDEST ..
 * JY_PART_PROTOCOL_VERSION (joinery/part.h), JY_ERR_INVALID when a type of that name
 * exists or a parameter could not be set: nameless, listed twice, named init, vel or guess
 * (the initial-value tables) or like a terminal at the default parameters, or more than
 * JY_MAX_PARAMS of them. */
JY_API jyStatus jy_env_register(jyEnv *env, const jyPartType *type);
JY_API const jyPartType *jy_env_find_type(const jyEnv *env, const char *name);
JY_API int jy_env_num_types(const jyEnv *env);
JY_API const jyPartType *jy_env_type(const jyEnv *env, int index);
JY_API const char *jy_env_error(const jyEnv *env);

/* Registers every built-in part of components/ (ground, mass, spring, ...). */
JY_API jyStatus jy_components_register(jyEnv *env);

/* ---- system (builder) -------------------------------------------------------------- */

typedef struct jySystem jySystem;
typedef struct jyModel jyModel;
typedef struct jyPartId {
  int index;
} jyPartId; /* index < 0: invalid */
typedef struct jyTerminalId {
  int part, terminal;
} jyTerminalId;

typedef struct jyParamSetting {
  const char *name;
  double value;
} jyParamSetting;

/* The most parameters a part type may declare. */
#define JY_MAX_PARAMS 256

/* The parameter door: every entry point (jy_system_add_part, the conformance suite, the Lua
 * binding's sys:add, eval_part, check_part and part_type) fills a part's parameters here.
 * Writes type->nparams values into params, in schema order: the schema's defaults, overridden
 * by the settings, each setting's name resolved against the schema and every value checked
 * against its parameter's domain. Returns JY_OK, JY_ERR_UNKNOWN_NAME (a name that is no
 * parameter: the message suggests the nearest, or says when the name is one of the type's
 * terminals or coordinates), JY_ERR_PARAM (a value outside its domain: "parameter m = -1 kg
 * must be > 0") or JY_ERR_INVALID (no type, or more than JY_MAX_PARAMS parameters), with one
 * line in error that begins with "part 'NAME' (TYPE): ", or "part type 'TYPE': " when part
 * is NULL. */
JY_API jyStatus jy_params_fill(const jyPartType *type, const char *part,
                               const jyParamSetting *settings, int nsettings, double *params,
                               char *error, size_t error_len);

/* A part's shape for these (filled) parameters, through the type's shape function as its
 * protocol version defines it, checked against the protocol's limits (joinery/part.h):
 * 0, or -1 with the reason in error (the function's own, or which limit is exceeded). */
JY_API int jy_part_shape_checked(const jyPartType *type, const double *params, jyPartShape *shape,
                                 char *error, size_t error_len);

/* One value against its parameter's domain (jyParamDomain): 0, or -1 with why ("m = -1 kg
 * must be > 0"; why may be NULL). */
JY_API int jy_param_check(const jyParamSpec *spec, double value, char *why, size_t why_len);

JY_API jySystem *jy_system_create(jyEnv *env);
JY_API void jy_system_destroy(jySystem *sys);
JY_API const char *jy_system_error(const jySystem *sys);

/* Uniform gravity field, m/s^2 (3 components; default 0). */
JY_API void jy_system_set_gravity(jySystem *sys, const double gravity[3]);

/* Adds an instance of a registered type. Its parameters pass jy_params_fill: every setting
 * must name a parameter of the type (an unknown one fails with JY_ERR_UNKNOWN_NAME and
 * suggests the nearest name) and lie in its domain (JY_ERR_PARAM). Part names are unique and contain no '.'. Returns the new id,
 * or an id with index < 0 (see jy_system_error). */
JY_API jyPartId jy_system_add_part(jySystem *sys, const char *type_name, const char *name,
                                   const jyParamSetting *settings, int nsettings);
JY_API jyPartId jy_system_find_part(const jySystem *sys, const char *name);
JY_API int jy_system_num_parts(const jySystem *sys);
JY_API const char *jy_system_part_name(const jySystem *sys, jyPartId part);
/* The shape the part's type gave this instance (valid while the system lives). */
JY_API const jyPartShape *jy_system_part_shape(const jySystem *sys, jyPartId part);

/* The value of parameter `name` of a part as the system holds it (NaN: no such part or
 * parameter), e.g. a joint's axis, so that a motor added to the joint can take it. */
JY_API double jy_system_part_param(const jySystem *sys, jyPartId part, const char *name);
/* The terminal at the other side of the k-th glue (0, 1, ... in glue order) that holds
 * terminal t; part < 0 when t has fewer glues. */
JY_API jyTerminalId jy_system_glued_to(const jySystem *sys, jyTerminalId t, int k);
/* How many glues the system holds, and the name of glue k (0 .. count - 1, in the order
 * they were made; NULL outside): what jy_system_glue named a glue given none ("glue<k>").
 * The name is valid while the system lives. */
JY_API int jy_system_num_glues(const jySystem *sys);
JY_API const char *jy_system_glue_name(const jySystem *sys, int glue);

/* Finds terminal `name` of a part; index < 0 when there is none. */
JY_API jyTerminalId jy_system_terminal(const jySystem *sys, jyPartId part, const char *name);
/* A 1-D terminal that is one coordinate of a part itself (J = e_j), so that glue and
 * constraints can act on coordinates: a prescribed angle, a rolling condition. */
JY_API jyTerminalId jy_system_coord_terminal(const jySystem *sys, jyPartId part, const char *coord);

/* Initial value of one coordinate (and its velocity). A coordinate set here is held fixed
 * while the compiler makes the initial state consistent, unless the constraints make that
 * impossible. */
JY_API jyStatus jy_system_set_coord(jySystem *sys, jyPartId part, const char *coord, double value);
JY_API jyStatus jy_system_set_velocity(jySystem *sys, jyPartId part, const char *coord,
                                       double value);
/* The axes an initial angular velocity is given in: space (world) or the body's own. */
typedef enum jyOmegaAxes { JY_OMEGA_SPACE = 0, JY_OMEGA_BODY = 1 } jyOmegaAxes;
/* Initial angular velocity of a body3d (any part whose terminal "frame" is a 7-D block of
 * its own coordinates x, y, z, q0..q3), rad/s, in space or body axes. The compiler turns it
 * into quaternion rates at the assembled orientation q (after the position constraints are
 * met): q' = 1/2 q (x) (0, w_body) = 1/2 (0, w_space) (x) q, divided by |q|^2, and holds
 * them as velocities set by jy_system_set_velocity (kept exactly when the constraints
 * allow that angular velocity). JY_ERR_PARAM, naming the part: not such a part, a
 * non-finite component, quaternion rates (velocities of q0..q3) already set or set later,
 * or the other axes already given; the same axes again replace the value. */
JY_API jyStatus jy_system_set_angular_velocity(jySystem *sys, jyPartId part, const double omega[3],
                                               jyOmegaAxes axes);
/* A starting value for a coordinate the compiler may move freely (not held like
 * jy_system_set_coord): picks the branch of the assembly, e.g. elbow up or down. */
JY_API jyStatus jy_system_guess_coord(jySystem *sys, jyPartId part, const char *coord,
                                      double value);

/* Glue: p_a(q) - p_b(q) = 0 for two terminals of equal dimension. name may be NULL
 * ("glue<k>"). Its force channel, "force.<name>", is the force the glue applies to
 * terminal a (the force on b is its negative). */
JY_API jyStatus jy_system_glue(jySystem *sys, jyTerminalId a, jyTerminalId b, const char *name);

/* A user-defined output channel: computes one value from the output row so far (every
 * channel before the user channels, in jy_model_channel_name order) at output times. Returns
 * 0, or non-zero with a message in error. ud must outlive every model compiled from the
 * system; fn must not call back into a simulation of that model. */
typedef int (*jyChannelFn)(void *ud, const jyModel *model, const double *row, double *value,
                           char *error, size_t error_len);
JY_API jyStatus jy_system_add_channel(jySystem *sys, const char *name, jyChannelFn fn, void *ud);

/* ---- inputs (docs/control.md) -------------------------------------------------------
 * An input is a named value a model reads (a load, a motor, a Lua or C part through
 * jyPartState.inputs), its channel "input.<name>". It is held (set between steps by
 * jy_sim_set_input or a controller; the change takes effect exactly at the simulation's
 * current time: the integrator restarts there) or a signal of time (a table or a function
 * with breakpoints: the integrator stops and restarts at every breakpoint, so no step
 * straddles a kink). Parts see each input's value and its first and second time
 * derivatives (0 for a held input), so a motor driven by a signal is an exact rheonomic
 * constraint. */
#define JY_MAX_INPUTS 1000
/* Declares a held input with its initial value and unit ("N", "rad"; NULL: "1"). name:
 * unique among the inputs, no '.'. Returns its index (0, 1, ... in declaration order), or
 * -1 (see jy_system_error): a bad or repeated name, a value that is not finite. */
JY_API int jy_system_add_input(jySystem *sys, const char *name, double value, const char *unit);
/* The index of an input of the system, or -1. */
JY_API int jy_system_find_input(const jySystem *sys, const char *name);
typedef enum jyInterp {
  JY_INTERP_CONSTANT, /* piecewise constant: u(t) = u_i on [t_i, t_i+1) */
  JY_INTERP_LINEAR,   /* piecewise linear */
  JY_INTERP_CUBIC     /* the natural cubic spline through the points (C2) */
} jyInterp;
/* Makes input `name` a time table: count >= 1 points (t strictly increasing, all finite),
 * held at the end values outside [t_0, t_count-1]. Every t_i is a breakpoint. */
JY_API jyStatus jy_system_input_table(jySystem *sys, const char *name, jyInterp interp, int count,
                                      const double *t, const double *u);
/* A signal u(t) with out[0] = u, out[1] = du/dt, out[2] = d2u/dt2: 0, or non-zero with a
 * message in error. Called often (every right-hand side); must not call back into a
 * simulation. */
typedef int (*jyInputFn)(void *ud, double t, double out[3], char *error, size_t error_len);
/* Makes input `name` the signal fn, with nbreaks breakpoints (its kinks and jumps; any order,
 * finite) where the integrator stops and restarts. ud must outlive every model compiled
 * from the system. */
JY_API jyStatus jy_system_input_function(jySystem *sys, const char *name, jyInputFn fn, void *ud,
                                         int nbreaks, const double *breaks);

/* ---- events (docs/events.md) ---------------------------------------------------------
 * An event is a function g of the simulation state whose zero crossing the integrator
 * locates (CVODE's root finding, to its own tolerance); its action then runs at that
 * instant: stop the run, change a part's parameter (a mode switch) or set coordinates and
 * velocities (a jump, projected back onto the constraints). A run writes an output row
 * just before and just after every instant at which events fired. Events at one instant
 * run in a fixed order: the parts' own (contacts, friction) in part order, then the user
 * events in the order they were added; a stop takes effect after all of them. */
typedef struct jyEventCall jyEventCall; /* the state during a `when` or `action` call */
typedef enum jyEventDirection {
  JY_EVENT_BOTH = 0, /* any crossing */
  JY_EVENT_UP = 1,   /* g rising through zero */
  JY_EVENT_DOWN = -1 /* g falling through zero */
} jyEventDirection;
/* g at the call's state into *value: 0, or non-zero with a message in error (the run stops
 * with the event's name and the time). Called often (every step): keep it cheap. */
typedef int (*jyEventWhenFn)(void *ud, jyEventCall *call, double *value, char *error,
                             size_t error_len);
/* What happens at the crossing: 0, or non-zero with a message in error (the run stops). */
typedef int (*jyEventActionFn)(void *ud, jyEventCall *call, char *error, size_t error_len);
/* Adds an event to the system; every simulation of a model compiled from it watches it.
 * name: unique among the events, no '.'. action NULL: stop the run. ud must outlive every
 * model compiled from the system. JY_ERR_INVALID on a bad name or direction, and on the
 * event after the JY_MAX_EVENTS-th: the root finding runs every `when` at every step, so
 * each event costs every step (docs/events.md). */
#define JY_MAX_EVENTS 1000
JY_API jyStatus jy_system_add_event(jySystem *sys, const char *name, jyEventWhenFn when,
                                    jyEventDirection direction, jyEventActionFn action, void *ud);

/* The state of a call: time, coordinates and velocities (the model's n each), the model. */
JY_API double jy_event_time(const jyEventCall *call);
JY_API const double *jy_event_q(const jyEventCall *call);
JY_API const double *jy_event_v(const jyEventCall *call);
JY_API const jyModel *jy_event_model(const jyEventCall *call);
JY_API const char *jy_event_name(const jyEventCall *call);
/* The whole output row (jy_model_channel_name order) at the call's state, computed on first
 * use within the call; *row valid until the call returns. */
JY_API jyStatus jy_event_channels(jyEventCall *call, const double **row);
/* Actions only (JY_ERR_INVALID from a `when`): set coordinate or velocity j (the state is
 * projected onto the constraints after the action, moving the other coordinates as little
 * as the kinetic metric allows); set a part's parameter for the rest of this simulation
 * (the value is checked against the parameter's domain, and the part's shape must not
 * change); stop the run after this instant. */
JY_API jyStatus jy_event_set_q(jyEventCall *call, int j, double value);
JY_API jyStatus jy_event_set_v(jyEventCall *call, int j, double value);
JY_API jyStatus jy_event_set_param(jyEventCall *call, const char *part, const char *param,
                                   double value);
JY_API void jy_event_stop(jyEventCall *call);
/* Why the last jy_event_set_* or jy_event_channels of this call failed ("" when none did). */
JY_API const char *jy_event_error(const jyEventCall *call);

/* Inputs in a call: the value of input k now (a signal's value at the call's time), and, in
 * an action or a controller only, setting held input k (JY_ERR_INVALID for a signal, an
 * index out of range or a value that is not finite). */
JY_API double jy_event_input(const jyEventCall *call, int k);
JY_API jyStatus jy_event_set_input(jyEventCall *call, int k, double value);

/* ---- controllers (docs/control.md) ---------------------------------------------------
 * A sampled controller runs at t_start + k period (k = 0, 1, ...) with the state view of an
 * event action (jy_event_q, jy_event_channels, jy_event_input) and sets held inputs
 * (jy_event_set_input), which keep their values until it sets them again (a zero-order
 * hold). Its run is exactly what a host calling jy_sim_advance(t_k) then jy_sim_set_input
 * would give, bit for bit. period 0: a continuous controller, run inside every evaluation
 * before the parts; it reads the time, q, v and the inputs (jy_event_channels refuses) and
 * the inputs it sets hold for that evaluation only. name: unique among the controllers, no
 * '.'. ud must outlive every model compiled from the system. */
typedef int (*jyControllerFn)(void *ud, jyEventCall *call, char *error, size_t error_len);
JY_API jyStatus jy_system_add_controller(jySystem *sys, const char *name, double period,
                                         jyControllerFn fn, void *ud);

/* ---- model (compiled, immutable) ---------------------------------------------------- */

/* ---- settings: one list per kind --------------------------------------------------------
 * Every run setting (jySimDef) and solver setting (jySolverDef) is one line of a list below,
 * X(name, C type, domain, default, "must be ...", "ARG", "doc"); the list generates the
 * struct's field, its default (jy_default_sim_def, jy_default_solver_def), the range check
 * and its message ("<name> = <value> must be <must be>"), and the schema (jySettingInfo)
 * through which the Lua binding reads the keys of sys:settings{...}, `joinery run` reads its
 * flags (--name VALUE, '-' for '_'; ARG is the value's name in --help) and `joinery settings`
 * prints the table of docs/cli.md. A choice setting's values are a list of their own,
 * X(JY_ID, "name", stepper or _, "help note" or NULL), which generates the enum, the names and
 * the check. Adding a setting is one line here plus its use. */

/* What values a setting admits. Integer domains admit whole numbers up to the field's type's
 * largest value; a flag any int (0: off). */
typedef enum jyDomain {
  JY_DOMAIN_FINITE,         /* any finite number */
  JY_DOMAIN_POSITIVE,       /* finite, > 0 */
  JY_DOMAIN_NONNEGATIVE,    /* finite, >= 0 */
  JY_DOMAIN_AT_LEAST_0,     /* >= 0, infinity too */
  JY_DOMAIN_RELATIVE,       /* in (0, 1): a relative cut */
  JY_DOMAIN_COUNT,          /* a whole number >= 0 */
  JY_DOMAIN_COUNT_POSITIVE, /* a whole number >= 1 */
  JY_DOMAIN_FLAG,           /* true (1) or false (0) */
  JY_DOMAIN_CHOICE          /* one of the values of the setting's choice list */
} jyDomain;

/* One value of a choice setting (jyMethod, jyFormulation, jyDrift, jyNewtonSolver). */
typedef struct jyChoiceInfo {
  const char *name;  /* "bdf" */
  int value;         /* the enum's value */
  const char *usage; /* a note `joinery --help` adds in parentheses, or NULL */
} jyChoiceInfo;

/* One setting, as its list writes it. */
typedef struct jySettingInfo {
  const char *name; /* "t_end": the field, the Lua key; the flag is --t-end */
  jyDomain domain;
  double default_value;        /* a choice's enum value, a flag's 0 or 1 */
  double max;                  /* the largest value the field's C type holds */
  const char *must_be;         /* the range in words, as messages say it: "> 0" */
  const char *arg;             /* the value's name in `joinery --help`: "T" */
  const char *doc;             /* one line: "end time, s" */
  const char *what;            /* a choice setting's noun ("drift control"), else NULL */
  const jyChoiceInfo *choices; /* a choice setting's values in enum order, else NULL */
  int nchoices;
} jySettingInfo;

/* Solver settings that belong to the model: how the acceleration is computed.
 * Redundant constraints: the rows that depend on the others at the initial state (by
 * rank_rcond) are left out of every solve. After each solve the rows left out must still
 * hold, max |A_i q'' - b_i| relative to row i's scale at most dependent_tol; when one does
 * not, the dependent rows are decided again at that state (except on a model solved sparse
 * with over 2000 coordinates, which keeps them as compiled), where a pivot up to
 * dependent_rcond still counts as dependent (off the manifold by d, a dependent row looks
 * independent by about d). dependent_rcond >= rank_rcond.
 * Glue elimination: a glue whose one side is a massless block of its part's own coordinates
 * (the ends of a spring, damper or rod; a guide's point) is removed, and that block follows
 * the other terminal. Fewer coordinates and rows, same motion.
 * The sparse solves (sparse_min_coords; 0: never, every solve dense). Any other value lets
 * the acceleration be solved sparse at every size: by CHOLMOD on A M^-1 A^T when M is
 * diagonal and positive (below this many coordinates only when the parts say M can be
 * diagonal), else by the sparse KKT solve for any M, the dense solve remaining the fallback
 * where they cannot answer (rank lost, a singular configuration). From this many coordinates
 * on, the compile also finds the initial state and the dependent rows through sparse
 * factorizations, and the evaluator forms its dense M and A only when a fallback needs them;
 * above 2000 coordinates it forms no dense M and has no dense fallback. docs/numerics.md,
 * "The sparse solves".
 * The tree recursion: a model that glue elimination leaves without rows, its links a tree (a
 * chain of pendulums, masses joined by springs), is solved by the articulated recursion over
 * the links, O(1) a part, instead of forming M. 0: M is formed (a check).
 * consistency_tol: b may be off range(A) by rounding, by the drift of redundant rows and,
 * near a singular configuration, by the drift along the directions A is losing; measured up
 * to 1e-6 relative there (the 40-four-bar chain). 1e-4 is above all of these and far below a
 * genuine conflict, which is of order 1. */
#define JY_SOLVER_SETTINGS(X)                                                                   \
  X(rank_rcond, double, JY_DOMAIN_RELATIVE, 1e-10, "between 0 and 1 (a relative cut)", "R",     \
    "relative singular-value cut for rank decisions")                                           \
  X(augment_scale, double, JY_DOMAIN_POSITIVE, 1, "a positive number", "S",                     \
    "s in M + s*alpha A^T A, alpha from M's diagonal: the auxiliary mass of a singular M")      \
  X(consistency_tol, double, JY_DOMAIN_POSITIVE, 1e-4, "a positive number", "TOL",              \
    "relative residual of A q'' = b above which the constraints contradict each other")         \
  X(assembly_tol, double, JY_DOMAIN_POSITIVE, 1e-12, "a positive number", "TOL",                \
    "position residual the initial assembly must reach, m")                                     \
  X(dependent_tol, double, JY_DOMAIN_POSITIVE, 1e-4, "a positive number", "TOL",                \
    "how far a redundant row left out of the solve may stop holding before the dependent "      \
    "rows are decided again")                                                                   \
  X(dependent_rcond, double, JY_DOMAIN_RELATIVE, 1e-3, "between 0 and 1 (a relative cut)", "R", \
    "the pivot cut under which a row still counts as dependent then (at least rank_rcond)")     \
  X(eliminate_glue, int, JY_DOMAIN_FLAG, 1, "true or false", "B",                               \
    "substitute massless glued blocks by what they are glued to")                               \
  X(sparse_min_coords, int, JY_DOMAIN_COUNT, 60, ">= 0 (0: never)", "N",                        \
    "0: every solve dense; otherwise the acceleration is solved sparse at any size, and from "  \
    "this many coordinates the compile is sparse too")                                          \
  X(tree_recursion, int, JY_DOMAIN_FLAG, 1, "true or false", "B",                               \
    "solve a rowless tree of links by the articulated recursion, O(1) a part")

#define JY_SETTING_FIELD_(name, type, ...) type name;
typedef struct jySolverDef {
  JY_SOLVER_SETTINGS(JY_SETTING_FIELD_)
} jySolverDef;

JY_API jySolverDef jy_default_solver_def(void);

/* Compiles the system: numbers coordinates and constraint rows, names output channels,
 * and makes the initial state consistent (positions by a Gauss-Newton, then velocities,
 * each moving glued terminal blocks first, then unset values, then set ones, each group
 * by as little as the constraints allow: jyMovedValue). Fails with
 * JY_ERR_INCONSISTENT naming the rows that cannot be met, or JY_ERR_NOT_UNIQUE naming the
 * massless coordinates no constraint determines; the message is on the system. */
JY_API jyStatus jy_model_compile(jySystem *sys, const jySolverDef *def, jyModel **out);
JY_API void jy_model_destroy(jyModel *model);

JY_API int jy_model_num_coords(const jyModel *model);
JY_API int jy_model_num_rows(const jyModel *model);
/* "part.coord" */
JY_API const char *jy_model_coord_name(const jyModel *model, int i);
/* Index of "part.coord", or -1. */
JY_API int jy_model_find_coord(const jyModel *model, const char *name);
/* "glue-or-part.row" name of constraint row i. */
JY_API const char *jy_model_row_name(const jyModel *model, int i);
/* Consistent initial state (n each). */
JY_API const double *jy_model_initial_q(const jyModel *model);
JY_API const double *jy_model_initial_v(const jyModel *model);
/* The uniform gravity field the system set, m/s^2 (3; 0 when none was set). */
JY_API void jy_model_gravity(const jyModel *model, double gravity[3]);
/* One line per coordinate the initial assembly moved ("p2.px: 0 -> 0.909 (moved 0.909)"),
 * and the dependent (redundant) rows found at the initial state; "" when there is nothing
 * to say. */
JY_API const char *jy_model_report(const jyModel *model);

/* An initial value that making the state consistent moved by more than the assembly
 * tolerance. Set values are held first, unset ones stay at their defaults where the
 * constraints allow; the coordinates of a glued terminal block (a pendulum's pivot, a
 * mass glued to a point) follow what they are glued to and move first. */
typedef struct jyMovedValue {
  int coord;        /* model coordinate */
  int velocity;     /* 1: its velocity der(part.coord); 0: its value */
  int set;          /* the script gave it (init / vel) */
  int follows_glue; /* an unset coordinate of a glued terminal block: moving is its job */
  double from, to;
} jyMovedValue;
/* How many values moved, and each (NULL out of range). A caller warns about those that
 * are set or do not follow a glue. Valid as long as the model. */
JY_API int jy_model_num_moved(const jyModel *model);
JY_API const jyMovedValue *jy_model_moved(const jyModel *model, int i);

/* ---- the model doctor (jy_model_check; `joinery check`, docs/cli.md) ---------------
 * An analysis of a compiled model at its initial state: its size, the rank of the
 * constraint Jacobian A and the degrees of freedom, and the findings that make a model
 * suspect. One entry of a list: the row, coordinate or part it names (names point into the
 * model, valid as long as it). */
typedef struct jyCheckItem {
  int index;            /* model row, model coordinate or part index */
  const char *name;     /* the row's, coordinate's or part's name */
  const char *part;     /* the part owning the row or coordinate (NULL for a glue row) */
  const char *glue;     /* a glue row: its glue, between part and part_b; else NULL */
  const char *part_b;   /* a glue row: the glue's second part; else NULL */
  const char *terminal; /* an unglued terminal: its name; else NULL */
  double value;         /* singular_coords: the singular vector's entry; else 0 */
} jyCheckItem;

/* Singular values under this (of A with its rows scaled to unit length, the redundant rows
 * left out) make the initial state "near a singular configuration": a finding. */
#define JY_CHECK_SINGULAR_TOL 1e-3
#define JY_CHECK_SINGULAR_COORDS 4 /* the coordinates named along the singular direction */

typedef struct jyModelCheck {
  int coords;        /* n */
  int rows;          /* m, every row */
  int position_rows; /* holonomic rows, phi(q, t) = 0 */
  int velocity_rows; /* nonholonomic rows (velocity and acceleration rows), counted apart */
  /* The rank of the position rows' Jacobian at the initial state and the degrees of freedom
   * n - rank; the rank of all rows and the velocity freedoms n - rank_all. By a singular
   * value decomposition (cut: the solver's rank_rcond) when m^2 n is at most 1e8; beyond,
   * from the compile's dependent rows (rank_from_svd 0). */
  int rank, dof, rank_all, motion_dof, rank_from_svd;
  /* The findings. redundant: the rows the compile found dependent on the others
   * (jy_model_report names them too). massless: coordinates with no mass and no row (their
   * acceleration is undetermined); mass_known 0 when the model is solved by the tree
   * recursion and forms no M (then only parts without mass count). unglued: a terminal made
   * of massless coordinates that no glue holds (a rod's or spring's free end). isolated: a
   * part no glue connects to another (a model of one part has none). */
  int nredundant, nmassless, nunglued, nisolated, mass_known;
  jyCheckItem *redundant, *massless, *unglued, *isolated;
  /* The distance to the nearest singular configuration: the smallest singular value of A
   * (kept rows scaled to unit length; NAN when there are no rows or it is too large to
   * decompose), and the coordinates with the largest entries of its right singular vector
   * (those along which A loses rank), largest first. near_singular: sigma < sigma_tol. */
  double sigma, sigma_tol;
  int near_singular, nsingular_coords;
  jyCheckItem singular_coords[JY_CHECK_SINGULAR_COORDS];
  /* The initial-state solve's moves by kind (jy_model_moved): set by the script, unset or
   * guessed, following their glue. Not findings. */
  int moved_set, moved_unset, moved_follow;
  int findings; /* nredundant + nmassless + nunglued + nisolated + near_singular */
} jyModelCheck;

/* The findings that need no compile, on the system (the compile refuses a model whose
 * massless coordinates nothing determines, so these are what is left to say then): unglued,
 * the terminals of parts without mass (no mass function: rods, springs, joints) that are
 * blocks of their own coordinates and that no glue holds; isolated, the parts no glue holds
 * (none in a system of one part); findings, their number. The other fields are zero. Names
 * are valid as long as the system; freed by jy_system_check_free. JY_ERR_NOMEM. */
JY_API jyStatus jy_system_check(const jySystem *sys, jyModelCheck *out);
JY_API void jy_system_check_free(const jySystem *sys, jyModelCheck *check);

/* Fills *out (freed by jy_model_check_free). JY_ERR_NOMEM, or an evaluation's error at the
 * initial state (*out then holds what was found before it, freed the same way). */
JY_API jyStatus jy_model_check(const jyModel *model, jyModelCheck *out);
JY_API void jy_model_check_free(const jyModel *model, jyModelCheck *check);

/* Output channels, in CSV column order: "t", every coordinate of every part "part.coord"
 * in the order the parts were added (those glue elimination substituted away too, as
 * the terminal they follow moves them: the columns do not depend on how the model was
 * compiled), every velocity "der(part.coord)", then "energy", "kinetic", "potential",
 * "residual.pos", "residual.vel", "power.ideal" and "power.nonideal" (power of the ideal and
 * non-ideal constraint forces, W); the glue forces in glue order, "force.<glue>" for a 1-D
 * glue, "force.<glue>.x|.y|.z" up to 3-D, ".1" ... ".7" beyond; for each part in order its
 * row forces "force.<part>.<row>" and, when it has rows or non-ideal forces, its powers
 * "power.<part>.ideal|nonideal"; then every part's own outputs "<part>.<output>"; then
 * "impulse.<part>" for each part with modes (the sum of its rows' impulses at its last
 * impact, in the first row after it, else 0); and last the user channels
 * (jy_system_add_channel). A marker's outputs are its point's world pose and velocity
 * ("<marker>.x", ...), its copy of the body's frame the coordinates "<marker>.body_x", ...
 * (docs/bodies2d.md). The default output selection leaves some out (jySimDef.columns). */
JY_API int jy_model_num_channels(const jyModel *model);
JY_API const char *jy_model_channel_name(const jyModel *model, int i);
/* Channel i's unit where the model knows it: "s" for t, "J" for the energies, "W" for the
 * powers, an input's own unit for "input.<name>"; "" otherwise (a coordinate's part does
 * not say whether it is a length or an angle). NULL when i is out of range. */
JY_API const char *jy_model_channel_unit(const jyModel *model, int i);
JY_API int jy_model_find_channel(const jyModel *model, const char *name);
/* The model coordinate (0 .. n - 1) channel i reports, its velocity when *velocity is set to
 * 1 (velocity may be NULL); -2 when the coordinate was substituted away by glue
 * elimination (it follows the terminal it is glued to: no state of its own to set); -1
 * when channel i is not a coordinate or velocity. */
JY_API int jy_model_channel_coord(const jyModel *model, int i, int *velocity);

/* The model's inputs (jy_system_add_input order): how many, name, unit, initial value, and
 * the index of a name (-1 when none). */
JY_API int jy_model_num_inputs(const jyModel *model);
JY_API const char *jy_model_input_name(const jyModel *model, int k);
JY_API const char *jy_model_input_unit(const jyModel *model, int k);
JY_API double jy_model_input_initial(const jyModel *model, int k);
JY_API int jy_model_find_input(const jyModel *model, const char *name);

/* ---- evaluation of one state (no integrator) --------------------------------------- */

/* Acceleration q'' (n) at (q, v, t), through the same path the integrator uses. Allocates
 * nothing after jy_eval_create. Errors as jy_sim_error reports them. */
typedef struct jyEval jyEval;
JY_API jyEval *jy_eval_create(const jyModel *model);
JY_API void jy_eval_destroy(jyEval *eval);
JY_API jyStatus jy_eval_acceleration(jyEval *eval, const double *q, const double *v, double t,
                                     double *acc);
/* All output channels at (q, v, t) into out (jy_model_num_channels values). */
JY_API jyStatus jy_eval_channels(jyEval *eval, const double *q, const double *v, double t,
                                 double *out);
JY_API const char *jy_eval_error(const jyEval *eval);
/* Sets held input k of this evaluator (its initial value until then): for operating points
 * and linearization. JY_ERR_INVALID for a signal, a bad index or a value not finite. */
JY_API jyStatus jy_eval_set_input(jyEval *eval, int k, double value);

/* ---- visuals (part protocol 7; docs/animation.md) -----------------------------------
 * What joinery animate draws: every part's visuals (jyPartShape.nvisuals, in part order),
 * then one JY_VISUAL_ARROW per glue of dimension 2 or more, at the glue's first terminal
 * with the glue's force channels ("force.<glue>": on a planar frame the force's x and y,
 * on a spatial frame its first three components). A part of a type older than protocol 7
 * has no visuals: it is not drawn. How many visuals, and the part or glue visual i
 * belongs to (NULL out of range). */
JY_API int jy_model_num_visuals(const jyModel *model);
JY_API const char *jy_model_visual_name(const jyModel *model, int i);
/* The visuals at (q, v, t) into out (jy_model_num_visuals). channels: the output channels
 * jy_eval_channels gave at this very state, for the forces (the glues' arrows and the parts'
 * own arrows), or NULL: the arrows are zero and no solve is needed. A visual with a value
 * that is not finite is the part's error (JY_ERR_PART). Allocates nothing. A planar model
 * (every part's visual in z = 0) reads a 3-D glue as a planar frame. */
JY_API jyStatus jy_eval_visuals(jyEval *eval, const double *q, const double *v, double t,
                                const double *channels, jyVisual *out);

/* ---- operating points and linearization (docs/control.md) ---------------------------
 * Both work on an evaluator, at the input values set on it (jy_eval_set_input), and leave
 * their message in jy_eval_error. Both choose independent coordinates from the model's own by
 * a pivoted QR of the constraint Jacobian (rows scaled to unit length; columns taken from
 * the last coordinate back, so that ties keep the earlier coordinates independent): the
 * position rows leave the position coordinates, all rows (velocity rows too) the velocity
 * ones. Redundant rows count once. */

/* A static equilibrium: q with v = 0 where the accelerations of the free coordinates vanish,
 * the position rows hold and the held coordinates keep their values in q. */
typedef struct jyEquilibriumDef {
  const double *q; /* n: the initial guess and the held values; NULL: jy_model_initial_q */
  const int *hold; /* nhold model coordinates held at their values in q (NULL: none) */
  int nhold;
  double t;     /* time, s (where rows or forces depend on it) */
  double tol;   /* largest acceleration left in a free coordinate (m/s^2, rad/s^2) */
  int max_iter; /* Newton iterations */
} jyEquilibriumDef;
/* t = 0, tol = 1e-9, max_iter = 50, no guess, nothing held. */
JY_API jyEquilibriumDef jy_default_equilibrium_def(void);

typedef struct jyEquilibriumReport {
  int iterations;  /* Newton steps taken */
  double residual; /* the largest acceleration of a free coordinate at q (held ones held) */
  int nfree;       /* the free (independent, not held) coordinates solved for */
  double rcond;    /* smallest over largest singular value of the reduced Jacobian at q */
} jyEquilibriumReport;

/* Solves for q (n, out; may be def->q) by Gauss–Newton on the free coordinates' accelerations
 * (with holds: the generalized forces along the free directions, the held coordinates'
 * reactions left free), the dependent coordinates meeting the position rows at each step;
 * the reduced Jacobian by central differences, each step a minimum-norm least-squares solve
 * (LAPACK dgelsd). report may be NULL. JY_ERR_CONVERGENCE: no equilibrium found (the message
 * gives the acceleration left and where); JY_ERR_NOT_UNIQUE: not isolated (the reduced
 * Jacobian is singular: the message names the free directions); JY_ERR_INVALID: a bad
 * argument (a held index out of range or held twice, tol or q not finite); else what the
 * evaluation returns. */
JY_API jyStatus jy_model_equilibrium(jyEval *eval, const jyEquilibriumDef *def, double *q,
                                     jyEquilibriumReport *report);

typedef struct jyLinearizeDef {
  const double *q, *v; /* n each: the operating point; NULL: the model's initial state */
  double t;            /* time, s */
  const int *inputs;   /* ninputs input indices for B and D; NULL: every input */
  const double *u;     /* ninputs: their values at the operating point (set on the evaluator);
                        * NULL: their initial values */
  int ninputs;
  const int *outputs; /* noutputs channel indices for C and D (NULL: none) */
  int noutputs;
  double tol;  /* largest position (m) / velocity (m/s) residual allowed at (q, v) */
  double step; /* relative finite-difference step: h_j = step * max(1, |x_j|) */
} jyLinearizeDef;
/* The initial state, t = 0, every input at its initial value, no outputs, tol = 1e-8,
 * step = 1e-4. */
JY_API jyLinearizeDef jy_default_linearize_def(void);

/* x' = A x + B u, y = C x + D u about the operating point, x = (independent positions,
 * independent velocities) as offsets from it. Matrices column-major (A[i + j * nx]). */
typedef struct jyLinearization {
  int nx, nu, ny;
  int npos;              /* the first npos states are positions, the rest velocities */
  int *state_coord;      /* nx: the model coordinate of each state (a velocity state: its der()) */
  int *input;            /* nu: model input indices */
  int *output;           /* ny: channel indices */
  double *A, *B, *C, *D; /* nx x nx, nx x nu, ny x nx, ny x nu */
  /* The estimated error of an entry (the truncation error of the central difference at the
   * smaller step, |D(h) - D(h/2)| / 3, plus rounding; the entries are the Richardson values
   * (4 D(h/2) - D(h)) / 3, usually far better): the largest over A, B, C, D relative to
   * max(1, |entry|), and the largest absolute estimate in each matrix. */
  double error;
  double error_abs[4];
  jyAllocator alloc; /* the model's allocator, which jy_linearization_destroy frees it with */
} jyLinearization;

/* Linearizes by central differences at steps h and h/2 with Richardson extrapolation, each
 * perturbed state carried back onto the constraints (the dependent positions by Gauss–Newton,
 * the dependent velocities from the rows' rates) before jy_eval_acceleration and
 * jy_eval_channels; B and D perturb inputs through jy_eval_set_input (restored after). *out
 * is freed by jy_linearization_destroy. JY_ERR_INCONSISTENT: (q, v) violates a row beyond
 * tol (the message names the worst); JY_ERR_INVALID: bad indices or settings; else what the
 * evaluation returns. */
JY_API jyStatus jy_model_linearize(jyEval *eval, const jyLinearizeDef *def, jyLinearization **out);
JY_API void jy_linearization_destroy(jyLinearization *lin);

/* ---- simulation -------------------------------------------------------------------- */

/* The choice lists: X(JY_ID, "name", stepper, "help note" or NULL), in enum order. A method's
 * stepper is its jyStepperOps in the engine (jy_stepper_<stepper>, engine/src/int_*.c). */
#define JY_CHOICE_ENUM_(id, ...) id,

/* Every method steps freely and reports from its interpolant: the output interval never
 * changes the integration. Only BDF keeps to its branch through singular configurations;
 * Adams and ERK stop there with JY_ERR_BRANCH rather than switch (docs/numerics.md).
 * ADAMS: CVODE Adams-Moulton with fixed-point iteration: non-stiff.
 * BDF: CVODE BDF with Newton (linear solver: jyNewtonSolver).
 * ERK: ARKODE explicit Runge–Kutta (Verner 8(7)): non-stiff.
 * AUTO: Adams, and BDF for the stretches where Adams' steps are held by stability or
 * where it meets a singular configuration (docs/numerics.md, "The automatic method"). */
#define JY_METHODS(X)                                                  \
  X(JY_METHOD_ADAMS, "adams", cvode_adams, NULL)                       \
  X(JY_METHOD_BDF, "bdf", cvode_bdf, "stiff, singular configurations") \
  X(JY_METHOD_ERK, "erk", arkode_erk, NULL)                            \
  X(JY_METHOD_AUTO, "auto", cvode_auto, NULL)
typedef enum jyMethod { JY_METHODS(JY_CHOICE_ENUM_) } jyMethod;
#define JY_CHOICE_COUNT_(...) +1
enum { JY_METHOD_COUNT = 0 JY_METHODS(JY_CHOICE_COUNT_) };

/* UK: Udwadia–Kalaba: state [q, v], q'' from the explicit equation.
 * NP: Natsiavas–Paraskevopoulos: state [q, lambda, v, lambda'] (docs/formulations.md). */
#define JY_FORMULATIONS(X)                        \
  X(JY_FORMULATION_UK, "udwadia-kalaba", _, NULL) \
  X(JY_FORMULATION_NP, "natsiavas-paraskevopoulos", _, NULL)
typedef enum jyFormulation { JY_FORMULATIONS(JY_CHOICE_ENUM_) } jyFormulation;

/* How the simulation keeps the constraints from drifting (docs/numerics.md compares them).
 * BAUMGARTE: phi'' + 2 w phi' + w^2 phi = 0 at w = baumgarte_rate.
 * PROJECTION: least kinetic-energy projection onto the position and velocity manifolds:
 * inside every step with BDF (CVODE's projection), after every step with ERK, a checked
 * restart with Adams; the reported state is always projected. */
#define JY_DRIFTS(X)                            \
  X(JY_DRIFT_BAUMGARTE, "baumgarte", _, NULL)   \
  X(JY_DRIFT_PROJECTION, "projection", _, NULL) \
  X(JY_DRIFT_NONE, "none", _, NULL)
typedef enum jyDrift { JY_DRIFTS(JY_CHOICE_ENUM_) } jyDrift;

/* BDF's Newton linear solver. Dense: a difference-quotient Jacobian of the whole state
 * (2n right-hand sides and an O(n^3) LU per Jacobian, (2n)^2 doubles of memory). Krylov:
 * GMRES with difference-quotient Jacobian-vector products (a few right-hand sides per
 * Newton iteration, O(n) memory). Auto: dense up to JY_NEWTON_DENSE_MAX_STATES states,
 * Krylov above (docs/numerics.md has the measurement behind the threshold). */
#define JY_NEWTON_DENSE_MAX_STATES 80
#define JY_STRINGIFY_(x) #x
#define JY_STRINGIFY(x) JY_STRINGIFY_(x)
#define JY_NEWTON_SOLVERS(X)                                                         \
  X(JY_NEWTON_AUTO, "auto", _,                                                       \
    "dense up to " JY_STRINGIFY(JY_NEWTON_DENSE_MAX_STATES) " states, krylov above") \
  X(JY_NEWTON_DENSE, "dense", _, NULL)                                               \
  X(JY_NEWTON_KRYLOV, "krylov", _, NULL)
typedef enum jyNewtonSolver { JY_NEWTON_SOLVERS(JY_CHOICE_ENUM_) } jyNewtonSolver;

/* The run settings: X(name, C type, domain, default, "must be ...", "ARG", "doc") for a
 * number, C(name, C type, choice list, default, "what", "ARG", "doc") for a choice.
 * atol: on the coordinates (and N–P's multipliers); the velocities get atol_velocity. Parts
 * with modes size their bands by it too. 0 (the default) is rtol / 100, 1e-13 at the default
 * rtol: a user who sets only rtol gets the ratio every tolerance measurement was made at, not
 * 1e-13 beside a loose rtol, which asks quaternion components near zero for an absolute
 * accuracy the rest of the state is not held to (examples/flyball.lua at rtol 1e-6 stopped
 * after 100,000 steps in its first 0.02 s, BDF took 2.9 million steps for 2 s).
 * max_step: 0 (the default) is a tenth of the run's span t_end - t_start, as MATLAB's ode
 * suite, so that a short signal of t (a road bump as a load or a rheonomic row) is not
 * stepped over; infinity lifts the limit (docs/numerics.md, "Integration").
 * max_steps: internal steps between two outputs (fewer when far too short).
 * baumgarte_rate: Baumgarte stabilization (drift = baumgarte, and Adams with projection
 * between its checked restarts): the acceleration-level constraints become
 * phi'' + 2 w phi' + w^2 phi = 0 (position rows) and psi' + w psi = 0 (velocity rows),
 * critically damped at rate w = baumgarte_rate, 1/s (0: off). On the constraint manifold
 * nothing changes.
 * drift: projection is the only control that keeps position and velocity residuals at the
 * tolerance level (docs/numerics.md has the measurement behind this default).
 * atol_velocity (0: 10 atol): at a singular configuration a velocity the constraints no
 * longer determine (a coupler's rotation as a four-bar chain lies flat) is known only to
 * the rounding the solve amplifies there; at 1e-13 BDF stalls on it under some BLAS kernels,
 * at 1e-12 it goes through (docs/numerics.md).
 * t_end must also come after t_start. */
#define JY_RUN_SETTINGS(X, C)                                                                  \
  C(method, jyMethod, JY_METHODS, JY_METHOD_AUTO, "method", "M", "integration method")         \
  X(rtol, double, JY_DOMAIN_POSITIVE, 1e-11, "> 0", "R", "relative tolerance")                 \
  X(atol, double, JY_DOMAIN_NONNEGATIVE, 0, "> 0 (or 0: rtol / 100)", "A",                     \
    "absolute tolerance on the coordinates; 0: rtol / 100")                                    \
  X(t_start, double, JY_DOMAIN_FINITE, 0, "finite", "T0", "start time, s")                     \
  X(t_end, double, JY_DOMAIN_FINITE, 10, "finite and after t_start", "T", "end time, s")       \
  X(dt_out, double, JY_DOMAIN_POSITIVE, 0.01, "> 0", "DT",                                     \
    "output interval, s; the rows are interpolated and never change the integration")          \
  X(max_step, double, JY_DOMAIN_AT_LEAST_0, 0, ">= 0 (inf: no limit)", "H",                    \
    "largest step, s; 0: a tenth of t_end - t_start, inf: no limit")                           \
  X(max_steps, long, JY_DOMAIN_COUNT_POSITIVE, 100000, "> 0", "N",                             \
    "internal steps allowed between two outputs")                                              \
  X(baumgarte_rate, double, JY_DOMAIN_NONNEGATIVE, 5, ">= 0 (0 turns stabilization off)", "W", \
    "rate w of Baumgarte stabilization, 1/s")                                                  \
  C(formulation, jyFormulation, JY_FORMULATIONS, JY_FORMULATION_UK, "formulation", "F",        \
    "equations of motion")                                                                     \
  C(drift, jyDrift, JY_DRIFTS, JY_DRIFT_PROJECTION, "drift control", "D", "drift control")     \
  X(atol_velocity, double, JY_DOMAIN_NONNEGATIVE, 0, "> 0 (or 0: 10 atol)", "A",               \
    "absolute tolerance on the velocities; 0: 10 atol")                                        \
  C(newton, jyNewtonSolver, JY_NEWTON_SOLVERS, JY_NEWTON_AUTO, "newton solver", "S",           \
    "Newton's linear solver (BDF only)")                                                       \
  X(every, long, JY_DOMAIN_COUNT_POSITIVE, 1, "> 0", "K",                                      \
    "write every K-th output row (the 1st, K+1-th, ...); the others are not computed")

/* columns: the output selection, comma-separated glob patterns over the channel names
 * ('*' any run of characters, '?' one; spaces around a pattern are ignored): "p*.theta,
 * energy,force.motor". The columns are "t" first, then each pattern's matches in channel
 * order, a channel matched by an earlier pattern not repeated. A pattern that matches no
 * channel is JY_ERR_INVALID from jy_sim_create, naming it and the nearest channel. NULL or
 * "" (the default): every channel except what grows with the connections rather than with
 * the parts' own coordinates: the copies of eliminated coordinates (those for which
 * jy_model_channel_coord is -2), the forces of the glues elimination substituted away, and
 * the outputs of parts whose type sets JY_PART_OUTPUTS_ON_REQUEST (spring, damper: a cloth
 * holds thousands); they stay selectable by name or glob. Read by
 * jy_sim_create only (the string need not outlive it). A string rather than a list: it is
 * what the command line and a file of patterns give, and it keeps jySimDef a flat value
 * that is copied as it is (a model keeps its system's settings by copy). Channels not
 * selected are not computed where that is cheap to decide: the parts' outputs, energies,
 * powers, eliminated glues' forces and eliminated copies nobody selected, and the user channels after
 * the last one selected (a user channel may read every channel before it: when one is
 * computed, so is the whole row before it). */
typedef struct jySimDef {
  JY_RUN_SETTINGS(JY_SETTING_FIELD_, JY_SETTING_FIELD_)
  const char *columns;
} jySimDef;

JY_API jySimDef jy_default_sim_def(void);

/* The schema of the run settings (in JY_RUN_SETTINGS' order) and of the solver settings
 * (JY_SOLVER_SETTINGS'): setting i, or NULL when i is past the last. */
JY_API const jySettingInfo *jy_sim_setting(int i);
JY_API const jySettingInfo *jy_solver_setting(int i);
/* Setting i's value in *d as a double (a choice's enum value, a flag's 0 or 1), and setting
 * it (no check: jy_setting_admits first; jy_sim_create and jy_model_compile check again). */
JY_API double jy_sim_def_get(const jySimDef *d, int i);
JY_API void jy_sim_def_set(jySimDef *d, int i, double value);
JY_API double jy_solver_def_get(const jySolverDef *d, int i);
JY_API void jy_solver_def_set(jySolverDef *d, int i, double value);
/* Whether setting s admits value (its domain, its choices, its C type's range). */
JY_API int jy_setting_admits(const jySettingInfo *s, double value);

typedef struct jySim jySim;

/* A simulation of a model from its initial state (or from jy_sim_set_state). Validates the
 * settings (JY_ERR_INVALID on *status). Returns NULL only when model is NULL or memory ran
 * out; otherwise a simulation, which, when *status != JY_OK, is unusable except for
 * jy_sim_error (naming the bad setting) and jy_sim_destroy. */
/* Out of memory is JY_ERR_NOMEM here and in jy_sim_advance, except inside a few of
 * SUNDIALS 6.4's own setup allocations, which it uses unchecked (a crash joinery cannot
 * prevent; docs/numerics.md, "Out of memory", lists them). */
JY_API jySim *jy_sim_create(const jyModel *model, const jySimDef *def, jyStatus *status);
JY_API void jy_sim_destroy(jySim *sim);
JY_API const char *jy_sim_error(const jySim *sim);
JY_API jyStatus jy_sim_set_state(jySim *sim, double t, const double *q, const double *v);
JY_API double jy_sim_time(const jySim *sim);
JY_API const double *jy_sim_q(const jySim *sim);
JY_API const double *jy_sim_v(const jySim *sim);
/* Sets held input k (or the input named name) from now on: the change takes effect exactly
 * at jy_sim_time (the integrator restarts there; setting the value it has costs nothing).
 * JY_ERR_INVALID with a message (an unknown name, with the nearest one; a signal; a value
 * that is not finite). jy_sim_input: the value of input k at jy_sim_time. */
JY_API jyStatus jy_sim_set_input(jySim *sim, const char *name, double value);
JY_API jyStatus jy_sim_set_input_index(jySim *sim, int k, double value);
JY_API double jy_sim_input(const jySim *sim, int k);

/* Integrates to time t_out (>= the current time, <= t_end: JY_ERR_INVALID otherwise). The
 * integrator may step past t_out; the state there comes from its interpolant, projected
 * onto the constraints. A branch switch at a singular configuration is JY_ERR_BRANCH.
 * An integrator failure names the time, the
 * last step, CVODE's reason, the state components with the largest weighted local error
 * ("part.coord", "der(part.coord)") with their parts, and the likely cause the state
 * supports with what to try (docs/numerics.md, "Errors while integrating"); a part failure
 * names the part and the time. */
JY_API jyStatus jy_sim_advance(jySim *sim, double t_out);
/* The output channels at the current state (jy_model_num_channels values: all of them,
 * whatever the selection). */
JY_API jyStatus jy_sim_channels(jySim *sim, double *out);
/* The run's output columns (jySimDef.columns): how many, and the channel column k reports
 * (column 0 is "t", channel 0). jy_sim_run's rows and jy_sim_write_csv's file hold these. */
JY_API int jy_sim_num_columns(const jySim *sim);
JY_API int jy_sim_column(const jySim *sim, int k);

/* The most output rows a run (jy_sim_run, jy_sim_write_csv) produces: a t_end and dt_out
 * that would give more are refused before the run starts, with the estimate and the
 * smallest dt_out that fits (JY_ERR_INVALID). 1e8 rows of even a one-coordinate model are
 * a CSV of several GB and hours of interpolation: beyond it a setting is a mistake (a
 * dt_out of 1e-300, or a t_end of 1e9 s at the default dt_out) that would otherwise run
 * until the disk is full. Stepping with jy_sim_advance has no such limit. */
#define JY_MAX_OUTPUT_ROWS 1e8

/* Called with each output row (t_start, t_start + dt_out, ..., t_end, every `every`-th of
 * them, and the rows before and after events, counted with them) holding the selected
 * columns (nchannels = jy_sim_num_columns). Return non-zero to stop early (jy_sim_run then returns JY_ERR_IO with the callback's reason "stopped"). */
typedef int (*jyRowSink)(void *ud, const double *row, int nchannels);
JY_API jyStatus jy_sim_run(jySim *sim, jyRowSink sink, void *ud);
/* A sink about to stop the run may say why first ("interrupted by SIGINT"): the run's error
 * (and an incomplete CSV's first line) then reads "<why> at t = ..." in place of "stopped by
 * the output sink at t = ...". */
JY_API void jy_sim_set_stop_reason(jySim *sim, const char *why);

/* Runs and writes every output row as CSV with a header, handing each row to `also` too
 * (may be NULL; a non-zero return stops the run). The file is written under a temporary
 * name of this run's own ("<path>.<pid>-<n>.partial", created exclusively beside it) and
 * renamed into place only when the run succeeded, so a failed run never leaves a file that
 * looks complete and two runs with one path never mix their rows. A path that exists and
 * is not a regular file (a pipe, /dev/stdout) is written in place. A write error is
 * JY_ERR_IO naming the file and the system's reason. A run that fails keeps the rows it computed in
 * "<stem>.incomplete.csv" ("<path>.incomplete.csv" when path does not end in .csv), whose
 * first line is the comment "# incomplete: <the error message on one line>", then the
 * header and rows; a file at path an earlier run left stays as it was, and the error
 * message ends with where the rows went and says so. A successful run removes a stale
 * "<stem>.incomplete.csv". Temporary files of processes no longer running (a run killed by
 * SIGKILL) are removed by the next run with the same path. */
JY_API jyStatus jy_sim_write_csv(jySim *sim, const char *path, jyRowSink also, void *ud);
/* Whether path still names the file the last successful jy_sim_write_csv of this simulation
 * wrote: 0 it does, 1 another file is there now (a concurrent run with the same output
 * replaced it), 2 nothing is there, 3 it does but another running process is writing the
 * same path (and will replace it when it succeeds), -1 no file was written (or the output
 * was a pipe or device). */
JY_API int jy_sim_output_replaced(const jySim *sim, const char *path);

/* HDF5 output (docs/cli.md, "The HDF5 file"): runs and writes the same columns and rows as
 * jy_sim_write_csv into an HDF5 file, handing each row to `also` too. Layout: one 2-D
 * dataset "/table" of doubles, rows x columns, chunked (a chunk holds a block of rows of a
 * few columns, so reading one column reads only its own chunks), shuffled and deflated,
 * extended as the run goes (the rows are held in a buffer of at most about 8 MB, flat in
 * the number of rows); its attributes "columns" (the names) and "units" ("s", "J", "W",
 * an input's unit; "" when the model does not know one); the file's attributes: every run
 * setting and solver setting by name (numbers, and a choice as its name), "report" (the
 * model's compile report), "format" ("joinery table 1"). The same temporary name, rename and
 * removals as jy_sim_write_csv; a run that fails keeps its rows in a valid file
 * "<stem>.incomplete.h5" ("<path>.incomplete.h5" when path does not end in .h5) whose root
 * has the attribute "incomplete" (the error message; a complete file has none), and the
 * error message says so. A path that is not a regular file (a pipe) cannot be written
 * (JY_ERR_IO); a write error is JY_ERR_IO naming the file and HDF5's reason. A library built
 * without HDF5 (jy_hdf5_available() == 0) returns JY_ERR_INVALID saying so. The file is in
 * the HDF5 1.8 format (readable by HDF5 1.8 and later). Simulations in several threads may
 * write separate files when libhdf5 is a thread-safe build (Debian's is; it serializes its
 * calls under one lock). */
JY_API jyStatus jy_sim_write_hdf5(jySim *sim, const char *path, jyRowSink also, void *ud);
JY_API int jy_hdf5_available(void);

/* Reading a table back from a file jy_sim_write_hdf5 wrote (complete or incomplete). Opens
 * path; NULL on failure with the reason (naming the file) in error[error_len] (error may be
 * NULL). Names and units are valid until jy_result_close; jy_result_incomplete is NULL for a
 * complete file, else the failed run's message; jy_result_attribute: a file attribute
 * (a setting, "report") as text, NULL when there is none (valid until the next call on f).
 * jy_result_read_column fills out[
 * num_rows] with column k; jy_result_read_rows fills out[count * num_columns] with rows
 * first .. first + count - 1, row after row. Both return JY_ERR_INVALID for a column or rows
 * outside the table, JY_ERR_IO when HDF5 cannot read (jy_result_error says why). One file
 * object per thread; jy_result_close(NULL) is a no-op. */
typedef struct jyResultFile jyResultFile;
JY_API jyResultFile *jy_result_open(const char *path, char *error, size_t error_len);
JY_API void jy_result_close(jyResultFile *f);
JY_API int jy_result_num_columns(const jyResultFile *f);
JY_API long jy_result_num_rows(const jyResultFile *f);
JY_API const char *jy_result_column_name(const jyResultFile *f, int k);
JY_API const char *jy_result_column_unit(const jyResultFile *f, int k);
JY_API int jy_result_find_column(const jyResultFile *f, const char *name);
JY_API const char *jy_result_incomplete(const jyResultFile *f);
JY_API const char *jy_result_attribute(jyResultFile *f, const char *name);
JY_API jyStatus jy_result_read_column(jyResultFile *f, int k, double *out);
JY_API jyStatus jy_result_read_rows(jyResultFile *f, long first, long count, double *out);
JY_API const char *jy_result_error(const jyResultFile *f);

/* Integrator counters since creation. */
typedef struct jySimStats {
  long steps, rhs_evals, error_test_fails, nonlinear_fails;
  long jac_evals; /* BDF: difference-quotient Jacobians of the whole right-hand side */
  /* BDF: right-hand sides spent on Jacobians (dense: 2n each) or Jacobian-vector products
   * (Krylov), not in rhs_evals; and the Krylov iterations (0 when dense). */
  long jac_rhs_evals, krylov_iters;
  long restarts; /* integrator restarts (Adams: a step end projected back to the manifold;
                     jy_sim_set_state) */
  long projections_skipped; /* reported states whose projection did not settle (kept as is) */
  long events;              /* event firings handled: user events and parts' mode changes */
  long guard_evals;         /* evaluations of the event functions by the root finding */
  /* The simulated time and the steps under each method (index jyMethod): one entry for a
   * fixed method; auto's Adams, ERK and BDF stretches (ERK once it has won the race with
   * Adams). And auto's changes of method: to BDF for stiffness, at a singular configuration
   * (the branch guard), where the step collapsed (one ahead), and back to the smooth method
   * (to_adams: Adams, or ERK where it won the race). */
  double method_time[JY_METHOD_COUNT];
  long method_steps[JY_METHOD_COUNT];
  long to_stiff, to_singular, to_collapse, to_adams;
  /* The relative tolerance ERK's steps ran at (0 where ERK did not run): the run's, or
   * under auto 1e-6 on a motion the constraints prescribe, whose projections keep the run's
   * (docs/numerics.md, "The automatic method"). */
  double erk_rtol;
  /* Accelerations the spatial recursion solved (a spatial tree: docs/numerics.md, "The
   * spatial tree"), right-hand sides and BDF's Jacobian columns alike; 0 on the row path. */
  long spatial_evals;
} jySimStats;
JY_API jySimStats jy_sim_stats(const jySim *sim);

/* The events that fired in this simulation: how many distinct names, and for each its name
 * ("<event>" for a user event, "<part>.<what>" for a part's mode change, e.g.
 * "floor.impact"), how often, first and last time. k = 0 .. jy_sim_num_event_kinds - 1. */
typedef struct jyEventSummary {
  const char *name;
  long count;
  double first_t, last_t;
} jyEventSummary;
JY_API int jy_sim_num_event_kinds(const jySim *sim);
JY_API jyEventSummary jy_sim_event_summary(const jySim *sim, int k);
/* The event that stopped the run ("" when none did): jy_sim_advance and jy_sim_run then
 * return JY_OK with jy_sim_time at the stop, and further advancing is JY_ERR_INVALID. */
JY_API const char *jy_sim_stopped_by(const jySim *sim);

/* ---- control (docs/control-examples.md) ----------------------------------------------- */

/* The continuous-time linear-quadratic regulator of x' = A x + B u: the gain K (m x n) of
 * u = -K x that minimizes the integral of x'Q x + u'R u, and the stabilizing solution P
 * (n x n, symmetric) of the algebraic Riccati equation A'P + PA - P B R^-1 B' P + Q = 0, with
 * K = R^-1 B' P. A is n x n, B n x m, Q n x n (symmetric, usually positive semidefinite),
 * R m x m (symmetric positive definite); all column-major (A[i + j * n]). Solved by LAPACK
 * alone, as SLICOT's SB02MD: the real Schur form of the Hamiltonian [A, -B R^-1 B'; -Q, -A']
 * with its stable eigenvalues ordered first (dgees), whose Schur vectors [U11; U21] span the
 * stable invariant subspace, P = U21 U11^-1 (dgesv); R^-1 B' by Cholesky (dposv). Keeps no
 * state; allocates with malloc and frees before it returns. JY_OK; JY_ERR_INVALID: n or m
 * < 1, an entry not finite, Q or R not symmetric (to 1e-12 of the largest entry), R not
 * positive definite; JY_ERR_CONVERGENCE: no stabilizing solution (an eigenvalue of the
 * Hamiltonian within sqrt(eps) |H| of the imaginary axis, or U11 singular: (A, B) not
 * stabilizable); JY_ERR_NOMEM. On an error the message (at most len bytes with its NUL) is
 * in error (which may be NULL), and K and P are untouched. */
JY_API jyStatus jy_lqr(int n, int m, const double *A, const double *B, const double *Q,
                       const double *R, double *K, double *P, char *error, size_t len);

#ifdef __cplusplus
}
#endif
#endif
