/* tests/engine/t_marker_rows.c — marker3d's point x + R(q) r in closed form
 * (components/marker3d.c through jy_pair_point) against its hyper-dual reference.
 *
 * The terminals pos (the point) and frame (the point and the body's quaternion) give their
 * value, Jacobian and acceleration bias v^T p_qq v in closed form, and the outputs the point
 * and its velocity J v by the same arithmetic; the hyper-dual version they replaced stays
 * in the library as the reference (jy_marker3d_terminal with ad = 1). Both are exact
 * polynomials, so they must agree to rounding: at random offsets (both signs, along one axis
 * and zero), random states with quaternions neither normalized nor of one sign (q and -q,
 * |q| from 0.3 to 1.7), random velocities and at rest. The seven coordinates sit in front of
 * seven NaNs: a closed form reading past the marker's own frame (jy_pair_point's frame b)
 * would turn an entry into NaN, which fails.
 *
 * Tolerance: every entry is a sum of at most a dozen products of at most two quaternion
 * components, two velocities and one offset, plus a position or a velocity, and both sides
 * round each product and sum to a few ulps of the largest term. With S = (1 + |q|max)^2
 * (1 + |v|max)^2 (1 + |r|max) bounding those terms, the two may differ by 16 eps S (about
 * 4e-15 S); a wrong or missing term is of the size of the terms themselves (S / 100 or more
 * at these random values), 1e10 times larger. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "../../components/parts.h"
#include "../../components/spatial.h"
#include "tap.h"
#include "closed_form_fixtures.h"

enum { NC = JY_FRAME_DIM, T_POS = 1, T_FRAME = 2, SAMPLES = 400 };

int main(void) {
  plan(8);
  const jyPartType *type = jy_part_marker3d();
  unsigned long long rng = 0x2545f4914f6cdd1dull;
  double ratio[8] = {0}; /* worst error / tolerance: pos value, jac, bias; frame x3; outputs */
  int bad = 0;
  for (int n = 0; n < SAMPLES && !bad; n++) {
    double r[3];
    for (int i = 0; i < 3; i++) r[i] = uniform(&rng, -2.0, 2.0);
    if (n % 10 == 0) r[0] = r[1] = r[2] = 0.0;                 /* on the centre */
    if (n % 10 == 1) r[0] = r[1] = 0.0;                        /* along z, either sign */
    if (n % 10 == 2) r[0] = -r[0], r[1] = -r[1], r[2] = -r[2]; /* the mirror of the last */
    jyPartInstance inst = {type, "m", r, NULL, NC, 0};
    /* The marker's coordinates, then seven NaNs it must not read. */
    double q[2 * NC], v[2 * NC], nq = 0.0;
    for (int i = 0; i < 2 * NC; i++) q[i] = v[i] = NAN;
    for (int i = 0; i < NC; i++) q[i] = uniform(&rng, -1.0, 1.0), v[i] = uniform(&rng, -2.0, 2.0);
    for (int i = 0; i < 4; i++) nq += q[JY_FRAME_Q + i] * q[JY_FRAME_Q + i];
    double scale = uniform(&rng, 0.3, 1.7) / sqrt(nq) * (uniform(&rng, -1.0, 1.0) < 0 ? -1 : 1);
    for (int i = 0; i < 4; i++) q[JY_FRAME_Q + i] *= scale;
    const double *vel = n % 25 == 24 ? NULL : v; /* at rest, now and then */
    double S = pow(1.0 + maxabs(q, NC), 2) * pow(1.0 + (vel ? maxabs(v, NC) : 0.0), 2) *
      (1.0 + maxabs(r, 3));
    double tol = 16.0 * DBL_EPSILON * S;
    for (int t = 0; t < 2 && !bad; t++) {
      int k = t ? T_FRAME : T_POS, dim = t ? NC : 3;
      double val[2][NC], jac[2][NC * NC], bias[2][NC];
      for (int ad = 0; ad < 2 && !bad; ad++) {
        memset(jac[ad], 0, sizeof jac[ad]);
        memset(bias[ad], 0, sizeof bias[ad]);
        bad = jy_marker3d_terminal(&inst, q, vel, k, ad, val[ad], jac[ad], bias[ad]);
      }
      if (bad) break;
      ratio[3 * t] = fmax(ratio[3 * t], worst(val[0], val[1], dim, tol));
      ratio[3 * t + 1] = fmax(ratio[3 * t + 1], worst(jac[0], jac[1], dim * NC, tol));
      ratio[3 * t + 2] = fmax(ratio[3 * t + 2], worst(bias[0], bias[1], dim, tol));
      if (t == 1 || !vel) continue;
      /* The outputs' point and velocity against the reference's value and J v. */
      double out[13], ref[6];
      jyPartState s = {.q = q, .v = v};
      bad = type->outputs(&inst, &s, NULL, out);
      for (int i = 0; i < 3; i++) {
        ref[i] = val[1][i];
        ref[3 + i] = 0.0;
        for (int j = 0; j < NC; j++) ref[3 + i] += jac[1][i + 3 * j] * v[j];
      }
      ratio[6] = fmax(ratio[6], worst(out, ref, 3, tol));
      ratio[7] = fmax(ratio[7], worst(out + 7, ref + 3, 3, tol));
    }
  }
  static const char *const what[8] = {
    "pos values",    "pos Jacobians",    "pos acceleration biases",
    "frame values",  "frame Jacobians",  "frame acceleration biases",
    "output points", "output velocities"};
  for (int k = 0; k < 8; k++)
    ok(!bad && ratio[k] <= 1.0,
       "marker3d: closed-form %s match the hyper-dual reference (worst %.3g of the tolerance, "
       "%d samples)",
       what[k], ratio[k], SAMPLES);
  return done();
}
