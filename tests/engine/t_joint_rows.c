/* tests/engine/t_joint_rows.c — the spatial joints' and motors' rows in closed form
 * (components/spatial.c, jyPairVec) against their hyper-dual reference.
 *
 * hinge3d, prismatic3d and weld3d give their row values, Jacobians, rates phi_q v and
 * curvatures v^T phi_qq v (b = -curvature) in closed form; hinge_motor3d and
 * prismatic_motor3d their driven coordinate likewise. The hyper-dual versions they
 * replaced stay in the library as the reference (jy_joint3d_rows, jy_motor3d_coord with
 * ad = 1). The joints' values and rates alone (jac and curv NULL: the residual check a type
 * with JY_PART_RESIDUALS_ALONE answers at each Adams step end) are checked the same way. Both are exact polynomials (or an atan2 of two), so they must agree to rounding:
 * at random parameters (offsets, axes along random and along each of +-x, +-y, +-z, held
 * relative orientations) and random states, with quaternions neither normalized nor of one
 * sign (q and -q, |q| from 0.3 to 1.7), and random velocities.
 *
 * Tolerance: every entry is a sum of a few dozen products of at most four coordinates, two
 * velocities and one offset, and both sides round each product and sum to a few ulps of the
 * largest term. With S = (1 + |q|max)^4 (1 + |v|max)^2 (1 + |r|max) bounding those terms,
 * the two may differ by 16 eps S (the worst seen is under 3 eps S); a wrong or missing term is of the size of the terms
 * themselves (S / 100 or more at these random values), 1e10 times larger. The motor angle is
 * divided by r^2 = x^2 + y^2 (up to the fourth power for its curvature): its tolerance scales
 * by S / r^2 raised to the same power. */
#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../../components/parts.h"
#include "../../components/spatial.h"
#include "tap.h"
#include "closed_form_fixtures.h"

enum { NC = JY_PAIR_NC, MAXP = 32, MAXOUT = JY_SPATIAL_MAX_OUT, SAMPLES = 400 };

typedef struct Inst {
  const jyPartType *type;
  double params[MAXP];
  jyPartShape shape;
  jyPartInstance inst;
  void *data;
  char error[256];
} Inst;

/* Random geometry for a type: offsets (r..) in [-2, 2], an axis (n..) random or one of the
 * six signed coordinate axes (by `pick`), a held orientation (q0..q3) random and not
 * normalized (init normalizes it); every other parameter at its default. */
static int make(Inst *p, const jyPartType *type, unsigned long long *rng, int pick) {
  memset(p, 0, sizeof *p);
  p->type = type;
  double axis[3];
  for (int i = 0; i < 3; i++) axis[i] = uniform(rng, -1.0, 1.0);
  if (pick < 6)
    for (int i = 0; i < 3; i++) axis[i] = i == pick / 2 ? (pick % 2 ? -1.0 : 1.0) : 0.0;
  for (int k = 0; k < type->nparams; k++) {
    const char *n = type->params[k].name;
    double v = type->params[k].default_value;
    if (n[0] == 'r' && strlen(n) == 3) v = uniform(rng, -2.0, 2.0);
    if (n[0] == 'n' && strlen(n) == 3) v = axis[n[2] - 'x'] * (n[1] == 'a' ? 1.0 : 0.7);
    if (n[0] == 'q' && strlen(n) == 2) v = uniform(rng, -1.0, 1.0);
    p->params[k] = v;
  }
  if (type->shape(type, p->params, &p->shape, p->error, sizeof p->error)) return 1;
  p->inst = (jyPartInstance){type, "j", p->params, NULL, p->shape.ncoords, p->shape.nrows};
  p->data = calloc(1, p->shape.instance_size);
  if (!p->data || type->init(&p->inst, p->data, p->error, sizeof p->error)) return 1;
  p->inst.data = p->data;
  return 0;
}

/* A state of two frames: positions in [-1, 1], quaternions of random sign and norm. */
static void state(double *q, double *v, unsigned long long *rng) {
  for (int f = 0; f < 2; f++) {
    double *x = q + f * JY_FRAME_DIM, n = 0.0;
    for (int i = 0; i < JY_FRAME_DIM; i++) x[i] = uniform(rng, -1.0, 1.0);
    for (int i = 0; i < 4; i++) n += x[JY_FRAME_Q + i] * x[JY_FRAME_Q + i];
    double scale = uniform(rng, 0.3, 1.7) / sqrt(n) * (uniform(rng, -1.0, 1.0) < 0 ? -1.0 : 1.0);
    for (int i = 0; i < 4; i++) x[JY_FRAME_Q + i] *= scale;
  }
  for (int i = 0; i < NC; i++) v[i] = uniform(rng, -2.0, 2.0);
}

static int param(const jyPartType *type, const char *name) {
  for (int k = 0; k < type->nparams; k++)
    if (strcmp(type->params[k].name, name) == 0) return k;
  abort(); /* the test names only parameters the types have */
}

static double offsets_max(const Inst *p) {
  double m = 0.0;
  for (int k = 0; k < p->type->nparams; k++)
    if (p->type->params[k].name[0] == 'r' && strlen(p->type->params[k].name) == 3)
      m = fmax(m, fabs(p->params[k]));
  return m;
}

/* The hinge motor's angle atan2(y, x), x = s1a . tb, y = s2a . tb, divides by x^2 + y^2 =
 * |q_a|^4 |q_b|^4 - (na . tb)^2 with na = R(q_a) u: S over it is how much that amplifies
 * rounding. */
static double angle_conditioning(const Inst *p, const double *q, double S) {
  double u[3], s1[3], s2[3], t[3], na[3], tb[3], d = 0.0, a2 = 0.0, b2 = 0.0;
  jy_spatial_basis(p->params + param(p->type, "nax"), u, s1, s2);
  jy_spatial_basis(p->params + param(p->type, "nbx"), s2, t, s1); /* t: b's normal, as init */
  jy_q_rotate(na, q + JY_FRAME_Q, u);
  jy_q_rotate(tb, q + JY_FRAME_DIM + JY_FRAME_Q, t);
  for (int i = 0; i < 3; i++) d += na[i] * tb[i];
  for (int i = 0; i < 4; i++) {
    a2 += q[JY_FRAME_Q + i] * q[JY_FRAME_Q + i];
    b2 += q[JY_FRAME_DIM + JY_FRAME_Q + i] * q[JY_FRAME_DIM + JY_FRAME_Q + i];
  }
  return S / (a2 * a2 * b2 * b2 - d * d);
}

/* SAMPLES random instances and states of a joint (its rows) or a motor (its coordinate):
 * the closed form against the reference, value, Jacobian, rate and curvature. */
static void check(const jyPartType *type, unsigned long long seed, int motor) {
  unsigned long long rng = seed;
  double ratio[5] = {0}; /* worst error / tolerance of each; [4]: values and rates alone */
  int bad = 0;
  for (int n = 0; n < SAMPLES && !bad; n++) {
    Inst p;
    bad = make(&p, type, &rng, n % 12);
    if (bad) diag("%s: %s", type->name, p.error);
    double q[NC], v[NC], val[3][MAXOUT], jac[2][MAXOUT * NC], rate[3][MAXOUT], curv[2][MAXOUT];
    int nout = 1;
    state(q, v, &rng);
    const double *vel = n % 50 == 49 ? NULL : v; /* at rest, now and then */
    for (int ad = 0; ad < 2 && !bad; ad++) {
      if (motor)
        bad = jy_motor3d_coord(&p.inst, q, vel, ad, val[ad], jac[ad], rate[ad], curv[ad]);
      else
        nout = jy_joint3d_rows(&p.inst, q, vel, ad, val[ad], jac[ad], rate[ad], curv[ad]);
    }
    if (!motor) /* the values and rates alone (a step end's residual check) */
      jy_joint3d_rows(&p.inst, q, vel, 0, val[2], NULL, rate[2], NULL);
    double qm = maxabs(q, NC), vm = maxabs(v, NC), rm = offsets_max(&p);
    double S = pow(1.0 + qm, 4) * pow(1.0 + vm, 2) * (1.0 + rm), tol = 16.0 * DBL_EPSILON * S;
    double k = strcmp(type->name, "hinge_motor3d") == 0 ? angle_conditioning(&p, q, S) : 1.0;
    if (!bad) {
      ratio[0] = fmax(ratio[0], worst(val[0], val[1], nout, tol * k));
      ratio[1] = fmax(ratio[1], worst(jac[0], jac[1], nout * NC, tol * k));
      ratio[2] = fmax(ratio[2], worst(rate[0], rate[1], nout, tol * k));
      ratio[3] = fmax(ratio[3], worst(curv[0], curv[1], nout, tol * k * k));
      if (!motor)
        ratio[4] = fmax(ratio[4],
                        fmax(worst(val[2], val[1], nout, tol), worst(rate[2], rate[1], nout, tol)));
    }
    free(p.data);
  }
  static const char *const what[4] = {"values", "Jacobians", "rates", "curvatures"};
  for (int k = 0; k < 4; k++)
    ok(!bad && ratio[k] <= 1.0,
       "%s: closed-form %s match the hyper-dual reference (worst %.3g of the tolerance, %d "
       "samples)",
       type->name, what[k], ratio[k], SAMPLES);
  if (!motor)
    ok(!bad && ratio[4] <= 1.0,
       "%s: values and rates alone (no Jacobian: a step end's residual check) match the "
       "hyper-dual reference (worst %.3g of the tolerance)",
       type->name, ratio[4]);
}

int main(void) {
  plan(23);
  check(jy_part_hinge3d(), 0x9e3779b97f4a7c15ull, 0);
  check(jy_part_prismatic3d(), 0xd1b54a32d192ed03ull, 0);
  check(jy_part_weld3d(), 0x8cb92ba72f3d8dd7ull, 0);
  check(jy_part_hinge_motor3d(), 0x94d049bb133111ebull, 1);
  check(jy_part_prismatic_motor3d(), 0xbf58476d1ce4e5b9ull, 1);
  return done();
}
