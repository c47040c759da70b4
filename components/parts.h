/* components/parts.h — the built-in part types and the helpers they share.
 * Internal to the library: registry.c lists the types, the parts use the helpers. */
#ifndef JY_COMPONENTS_PARTS_H
#define JY_COMPONENTS_PARTS_H

#include <stddef.h>

#include "joinery/part.h"

/* One accessor per built-in type; each type is a static table in its own file. */
const jyPartType *jy_part_ground(void);
const jyPartType *jy_part_mass(void);
const jyPartType *jy_part_spring(void);
const jyPartType *jy_part_damper(void);
const jyPartType *jy_part_rod(void);
const jyPartType *jy_part_spring_mass(void);
const jyPartType *jy_part_pendulum(void);
const jyPartType *jy_part_guide(void);
/* one-sided constraints, parts with modes (unilateral.c; docs/events.md) */
const jyPartType *jy_part_floor(void);
const jyPartType *jy_part_surface(void);
const jyPartType *jy_part_rope(void);
const jyPartType *jy_part_contact(void);
/* spatial bodies and joints (docs/bodies3d.md) */
const jyPartType *jy_part_body3d(void);
const jyPartType *jy_part_marker3d(void);
const jyPartType *jy_part_ground3d(void);
const jyPartType *jy_part_hinge3d(void);
const jyPartType *jy_part_prismatic3d(void);
const jyPartType *jy_part_weld3d(void);
const jyPartType *jy_part_rotational_spring3d(void);
const jyPartType *jy_part_torque3d(void);
/* planar bodies, joints and loads (docs/bodies2d.md) */
const jyPartType *jy_part_body2d(void);
const jyPartType *jy_part_marker2d(void);
const jyPartType *jy_part_slider2d(void);
const jyPartType *jy_part_rotational_spring2d(void);
const jyPartType *jy_part_torque2d(void);
const jyPartType *jy_part_ground2d(void);
const jyPartType *jy_part_pin_angle2d(void);
/* motors and actuators: driven joints (motor.c; docs/parts.md, "Motors and actuators") */
const jyPartType *jy_part_pin_motor2d(void);
const jyPartType *jy_part_slider_motor2d(void);
const jyPartType *jy_part_hinge_motor3d(void);
const jyPartType *jy_part_prismatic_motor3d(void);
const jyPartType *jy_part_actuator(void);

/* Writes the formatted message into error (when there is room) and returns 1, so a part
 * function can say `return jy_part_fail(...)`. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
int jy_part_fail(char *error, size_t error_len, const char *fmt, ...);

/* The dimension a part's `dim` parameter (always params[0] in our schemas) asks for. */
int jy_part_dim(const double *params);

/* Coordinate names of a point and of the two ends of a two-terminal part, by component. */
extern const char *const jy_names_xyz[3];
extern const char *const jy_names_a[3];
extern const char *const jy_names_b[3];

/* A terminal that is a block of the part's own coordinates, q[offset .. offset + dim - 1]:
 * value, J = [0 I 0] (dim x ncoords); both biases stay 0. jac may be NULL. */
void jy_point_terminal(int dim, int offset, int ncoords, const double *q, double *value,
                       double *jac);

/* Shape of a part with two point ends a, b of dimension dim: coordinates ax.. then bx..,
 * terminals "a" and "b", b's first coordinate defaulting to b_x so the ends start apart. */
void jy_ends_shape(jyPartShape *shape, int dim, double b_x);

/* Terminal k (0: a, 1: b) of a two-ended part; fails for any other k. */
int jy_ends_terminal(const jyPartInstance *self, const jyPartState *state, int k, double *value,
                     double *jac, double *vel_bias, double *acc_bias);

/* The geometry of two ends, q = (a, b), v = (a', b'). */
typedef struct jyEnds {
  double d[3];     /* b - a (dim) */
  double rate[3];  /* b' - a' (dim) */
  double len;      /* |d|; in 1-D the signed b - a */
  double u[3];     /* d / len; 1 in 1-D; 0 when len == 0 */
  double len_rate; /* len' = u . rate */
} jyEnds;

void jy_ends_eval(jyEnds *ends, int dim, const double *q, const double *v);

/* Visuals (part protocol 7): a shape from `dim` coordinates at x (the rest of a, b zero). */
void jy_visual_point(jyVisual *out, int kind, int dim, const double *x);
/* A two-ended shape (rod, spring, damper, rope) from ends q = (a, b) of dimension dim. */
void jy_visual_ends(jyVisual *out, int kind, int dim, const double *q);
/* A fixed support at the point of n . p = d nearest the origin, normal n (dim entries). */
void jy_visual_ground(jyVisual *out, int dim, const double *n, double d);

/* Stick-slip on a straight 2-D line (guide.c, unilateral.c's floor): the modes a part with a
 * stick row shares. While sliding, the Coulomb force keeps the direction of its mode, so the
 * sliding velocity crosses zero smoothly and the integrator locates it; then it sticks (a
 * velocity row holds it) while mu_s |N| - |F_t| >= 0, and slips against F_t. Mode 0 of a guide
 * (and mode 1 of a floor) slides with the direction of the velocity, for evaluators outside a
 * simulation. */
enum { JY_SS_STICK = 2, JY_SS_FORWARD = 3, JY_SS_BACKWARD = 4 };

/* The sliding mode a velocity along t starts in (JY_SS_STICK at rest). */
int jy_ss_mode_of_velocity(double vt);
/* Checks a static coefficient against the kinetic one: mu_s >= mu, or -1 (equal to mu).
 * 0, or non-zero with the reason in error. */
int jy_ss_check_coefficients(double mu, double mu_s, char *error, size_t error_len);
/* The Coulomb direction along t in `mode` (+1: the force is -mu |N| t), from the velocity vt
 * or, at rest, the tangential acceleration at; 0: none (sticking, or nothing to go by). */
double jy_ss_direction(int mode, double vt, double at);
/* The guard: mu_s |N| - |F_t| while sticking, the sliding velocity vt otherwise. */
double jy_ss_guard(int mode, double vt, double margin);
/* A crossing of the guard in `mode`: sliding -> stick when the slide's velocity falls to zero
 * (*reset set: the stick row's plastic reset of the residual velocity); sticking and the
 * margin falling -> slip against F_t. */
void jy_ss_transition(int mode, int direction, double f_t, int *new_mode, double *reset);
/* Sticking that needs more than mu_s |N| slips against F_t. */
void jy_ss_admissible(int mode, double margin, double f_t, int *new_mode);

#endif
