/* components/spatial.h — helpers of the spatial parts (body3d, marker3d, ground3d, the
 * 3-D joints): unit quaternions, scalar first, q = (q0, q1, q2, q3), and exact derivatives
 * of polynomial terminals and rows through hyper-dual numbers (joinery/ad.h).
 * Internal to the library. */
#ifndef JY_COMPONENTS_SPATIAL_H
#define JY_COMPONENTS_SPATIAL_H

#include "joinery/ad.h"

/* Coordinates of a frame: position x, y, z, then the quaternion q0..q3. */
enum { JY_FRAME_DIM = 7, JY_FRAME_Q = 3 };

extern const char *const jy_names_frame[JY_FRAME_DIM];   /* x y z q0 q1 q2 q3 */
extern const char *const jy_names_frame_a[JY_FRAME_DIM]; /* ax .. aq3 */
extern const char *const jy_names_frame_b[JY_FRAME_DIM]; /* bx .. bq3 */

/* Largest input and output counts the hyper-dual drivers take. */
enum { JY_SPATIAL_MAX_IN = 14, JY_SPATIAL_MAX_OUT = 8 };

/* A vector function f(q) of up to JY_SPATIAL_MAX_IN inputs, written in hyper-dual
 * arithmetic; writes JY_SPATIAL_MAX_OUT or fewer outputs. */
typedef void (*jySpatialFn)(const void *ctx, const jyHyper *q, jyHyper *out);

/* Evaluates f at q (nin inputs, nout outputs): value (nout), jac = df/dq (nout x nin,
 * column-major, leading dimension nout), rate = f_q v and curv = v^T f_qq v (the second
 * derivative along v: p'' = J q'' + curv). Any output may be NULL. Exact: one pass per
 * column of jac and one for rate and curv. */
void jy_spatial_eval(jySpatialFn f, const void *ctx, int nin, int nout, const double *q,
                     const double *v, double *value, double *jac, double *rate, double *curv);

/* Hyper-dual quaternion algebra. */
void jy_hq_mul(jyHyper out[4], const jyHyper a[4], const jyHyper b[4]); /* Hamilton a b */
void jy_hq_conj(jyHyper out[4], const jyHyper q[4]);
/* R(q) r = (q0^2 - e.e) r + 2 (e.r) e + 2 q0 e x r, e = (q1, q2, q3): the rotation of q for a
 * unit q (and |q|^2 times it otherwise: a quadratic form, so derivatives stay simple). */
void jy_hq_rotate(jyHyper out[3], const jyHyper q[4], const jyHyper r[3]);
jyHyper jy_hd_dot3(const jyHyper a[3], const jyHyper b[3]);
void jy_hd_cross3(jyHyper out[3], const jyHyper a[3], const jyHyper b[3]);

/* The same in plain doubles. */
void jy_q_rotate(double out[3], const double q[4], const double r[3]);
/* G(q) (3 x 4, row-major): body angular velocity w = 2 G(q) q' for a unit q. */
void jy_q_G(double G[12], const double q[4]);
/* E(q) (3 x 4, row-major): space angular velocity w = 2 E(q) q' for a unit q. */
void jy_q_E(double E[12], const double q[4]);

/* Hamilton product a b in plain doubles (out may not alias a or b). */
void jy_q_mul(double out[4], const double a[4], const double b[4]);

/* ---- closed-form rows of two frames ------------------------------------------------------
 * The joints' rows are polynomials in the 14 coordinates of frames a and b (x_a, q_a, x_b,
 * q_b): R(q) x is a quadratic form in q, so its Jacobian is linear in q and its second
 * derivative along v is R(v) x times 2. These give each row's value, Jacobian, rate and
 * curvature directly, at a fraction of the hyper-dual passes' cost (one pass per column);
 * the hyper-dual versions stay as the reference tests/engine/t_joint_rows.c checks them
 * against. */
enum { JY_PAIR_NC = 2 * JY_FRAME_DIM };

/* A 3-vector function f of the two frames' coordinates q, with its derivatives along the
 * velocity v: jac = df/dq (3 x 14, column-major, leading dimension 3), rate = jac v, curv =
 * v^T f_qq v. */
typedef struct jyPairVec {
  double val[3], jac[3 * JY_PAIR_NC], rate[3], curv[3];
} jyPairVec;

/* R(q_f) x for a constant x, with f = 0 (frame a) or 1 (frame b). */
void jy_pair_rotated(jyPairVec *out, const double *q, const double *v, int f, const double x[3]);
/* The point x_f + R(q_f) r. */
void jy_pair_point(jyPairVec *out, const double *q, const double *v, int f, const double r[3]);
/* a - b (out may alias either). */
void jy_pair_sub(jyPairVec *out, const jyPairVec *a, const jyPairVec *b);
/* The vector part of c q_a* q_b for a constant quaternion c: bilinear in (q_a, q_b). */
void jy_pair_relative(jyPairVec *out, const double *q, const double *v, const double c[4]);
/* The same three without the Jacobian and curvature: value and rate along v (v NULL: at
 * rest) alone, for a step end's residual check (part.h, JY_PART_RESIDUALS_ALONE). */
void jy_vr_rotated(double val[3], double rate[3], const double *q, const double *v, int f,
                   const double x[3]);
void jy_vr_point(double val[3], double rate[3], const double *q, const double *v, int f,
                 const double r[3]);
void jy_vr_relative(double val[3], double rate[3], const double *q, const double *v,
                    const double c[4]);
/* The scalar a . b: value, its Jacobian row (14 entries, jac[k * stride]), rate and
 * curvature (product rule: a'' . b + 2 a' . b' + a . b''). */
void jy_pair_dot(const jyPairVec *a, const jyPairVec *b, double *val, double *jac, int stride,
                 double *rate, double *curv);
/* Copies the three components of a into rows row .. row + 2 of a row set of nout rows
 * (value, jac nout x 14, rate, curv; any may be NULL). */
void jy_pair_put(const jyPairVec *a, int row, int nout, double *value, double *jac, double *rate,
                 double *curv);

/* For tests: a hinge3d, prismatic3d or weld3d instance's rows (and prismatic's displacement
 * after them) as the part computes them (ad = 0: closed form) or by hyper-dual passes (ad =
 * 1: the reference), in jy_spatial_eval's layout; returns their count. */
struct jyPartInstance;
int jy_joint3d_rows(const struct jyPartInstance *self, const double *q, const double *v, int ad,
                    double *value, double *jac, double *rate, double *curv);

/* For tests: a hinge_motor3d or prismatic_motor3d instance's driven coordinate s (angle or
 * displacement) with g = ds/dq (14), rate and curvature, in closed form (ad = 0) or by
 * hyper-duals (ad = 1). Returns 1 for another kind of motor (nothing written). */
int jy_motor3d_coord(const struct jyPartInstance *self, const double *q, const double *v, int ad,
                     double *s, double *g, double *rate, double *curv);

/* For tests: a marker3d instance's terminal k (1: pos, 3-D; 2: frame, 7-D) at its seven
 * coordinates q and velocities v (or NULL) as the part computes it (ad = 0: closed form) or
 * by hyper-dual passes (ad = 1): value, Jacobian (dim x 7, leading dimension dim; the caller
 * zero-fills it, as the engine does) and acceleration bias. k = 0 (body) is the coordinates;
 * returns nonzero for another k. */
int jy_marker3d_terminal(const struct jyPartInstance *self, const double *q, const double *v, int k,
                         int ad, double *value, double *jac, double *acc_bias);

/* Unit vector along (x, y, z) and two unit vectors s1, s2 completing a right-handed basis
 * (s1 x s2 = u). Returns 1 if (x, y, z) is zero (nothing written). */
int jy_spatial_basis(const double dir[3], double u[3], double s1[3], double s2[3]);

/* Eigenvalues of the symmetric 3 x 3 matrix a (row-major), ascending (Jacobi rotations). */
void jy_sym3_eig(const double a[9], double lambda[3]);

#endif
