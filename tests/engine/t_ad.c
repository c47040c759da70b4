/* t_ad.c — hyper-dual numbers (joinery/ad.h) against closed-form derivatives written here
 * independently, and against central finite differences of the value. */
#include <joinery/ad.h>

#include <math.h>
#include <stdint.h>

#include "tap.h"

#define NPTS 200  /* random points per function */
#define FD_H 1e-5 /* finite-difference step */
/* Closed forms: the hyper-dual parts and our formulas are each a handful of correctly rounded
 * operations, so they agree to a few ulps of the result; 1e-13 leaves room for ~500 ulps. */
#define TOL_EXACT 1e-13
/* Central first difference: truncation h² f'''/6 ~ 1e-11 plus rounding eps |f| / h ~ 1e-11
 * for O(1)..O(100) values; 1e-7 is far above both yet far below any wrong derivative. */
#define TOL_FD1 1e-7
/* Second difference: truncation h² f''''/12 ~ 1e-11, but rounding is eps |f| / h² ~ 2e-6 |f|;
 * 1e-4 covers |f| up to ~50, which the domains below keep. */
#define TOL_FD2 1e-4

static uint64_t rng_state = 0x9E3779B97F4A7C15ull; /* fixed seed: failures reproduce */

/* xorshift64: small and good enough to scatter test points. */
static double urand(double lo, double hi) {
  rng_state ^= rng_state << 13;
  rng_state ^= rng_state >> 7;
  rng_state ^= rng_state << 17;
  return lo + (hi - lo) * (double)(rng_state >> 11) * (1.0 / 9007199254740992.0);
}

/* Relative error, but absolute below magnitude 1: derivatives that pass through 0 (sin'' at
 * 0) have no meaningful relative error there. */
static double rel(double got, double want) {
  double d = fabs(got - want) / fmax(fabs(want), 1.0);
  return d == d ? d : INFINITY; /* NaN counts as the worst error */
}

static double worst(double w, double e) { return e > w ? e : w; }

/* ---- unary functions: the hyper-dual version, the plain one, and f', f'' by hand ---- */

typedef struct {
  const char *name;
  jyHyper (*hd)(jyHyper);
  double (*f)(double);
  double (*d1)(double);
  double (*d2)(double);
  double lo, hi;
} Unary;

static double sq(double x) { return x * x; }

static jyHyper hd_neg(jyHyper a) { return jy_hd_neg(a); }
static double f_neg(double x) { return -x; }
static double d1_neg(double x) {
  (void)x;
  return -1.0;
}
static double zero(double x) {
  (void)x;
  return 0.0;
}
static double one(double x) {
  (void)x;
  return 1.0;
}

static jyHyper hd_scale(jyHyper a) { return jy_hd_scale(a, -2.75); }
static double f_scale(double x) { return -2.75 * x; }
static double d1_scale(double x) {
  (void)x;
  return -2.75;
}

static jyHyper hd_add_scalar(jyHyper a) { return jy_hd_add_scalar(a, 1.25); }
static double f_add_scalar(double x) { return x + 1.25; }

static double d1_sqrt(double x) { return 1.0 / (2.0 * sqrt(x)); }
static double d2_sqrt(double x) { return -1.0 / (4.0 * x * sqrt(x)); }
static double d1_log(double x) { return 1.0 / x; }
static double d2_log(double x) { return -1.0 / (x * x); }
static double d2_sin(double x) { return -sin(x); }
static double d1_cos(double x) { return -sin(x); }
static double d2_cos(double x) { return -cos(x); }
static double d1_tan(double x) { return 1.0 / sq(cos(x)); }
static double d2_tan(double x) { return 2.0 * sin(x) / (cos(x) * sq(cos(x))); }
static double d1_atan(double x) { return 1.0 / (1.0 + x * x); }
static double d2_atan(double x) { return -2.0 * x / sq(1.0 + x * x); }
static double d1_asin(double x) { return 1.0 / sqrt(1.0 - x * x); }
static double d2_asin(double x) { return x / pow(1.0 - x * x, 1.5); }
static double d1_acos(double x) { return -1.0 / sqrt(1.0 - x * x); }
static double d2_acos(double x) { return -x / pow(1.0 - x * x, 1.5); }
static double d1_tanh(double x) { return 1.0 / sq(cosh(x)); }
static double d2_tanh(double x) { return -2.0 * sinh(x) / (cosh(x) * sq(cosh(x))); }

#define POW_P 2.5
#define POW_Q (-1.75)
static jyHyper hd_pow(jyHyper a) { return jy_hd_pow(a, POW_P); }
static double f_pow(double x) { return pow(x, POW_P); }
static double d1_pow(double x) { return POW_P * pow(x, POW_P - 1.0); }
static double d2_pow(double x) { return POW_P * (POW_P - 1.0) * pow(x, POW_P - 2.0); }
static jyHyper hd_powneg(jyHyper a) { return jy_hd_pow(a, POW_Q); }
static double f_powneg(double x) { return pow(x, POW_Q); }
static double d1_powneg(double x) { return POW_Q * pow(x, POW_Q - 1.0); }
static double d2_powneg(double x) { return POW_Q * (POW_Q - 1.0) * pow(x, POW_Q - 2.0); }

static double d1_abs(double x) { return x < 0.0 ? -1.0 : 1.0; }

static const Unary unary[] = {
  {"neg", hd_neg, f_neg, d1_neg, zero, -5.0, 5.0},
  {"scale", hd_scale, f_scale, d1_scale, zero, -5.0, 5.0},
  {"add_scalar", hd_add_scalar, f_add_scalar, one, zero, -5.0, 5.0},
  {"sqrt", jy_hd_sqrt, sqrt, d1_sqrt, d2_sqrt, 0.05, 20.0},
  {"exp", jy_hd_exp, exp, exp, exp, -3.0, 3.0},
  {"log", jy_hd_log, log, d1_log, d2_log, 0.05, 20.0},
  {"sin", jy_hd_sin, sin, cos, d2_sin, -6.0, 6.0},
  {"cos", jy_hd_cos, cos, d1_cos, d2_cos, -6.0, 6.0},
  {"tan", jy_hd_tan, tan, d1_tan, d2_tan, -1.3, 1.3},
  {"atan", jy_hd_atan, atan, d1_atan, d2_atan, -10.0, 10.0},
  {"asin", jy_hd_asin, asin, d1_asin, d2_asin, -0.95, 0.95},
  {"acos", jy_hd_acos, acos, d1_acos, d2_acos, -0.95, 0.95},
  {"sinh", jy_hd_sinh, sinh, cosh, sinh, -3.0, 3.0},
  {"cosh", jy_hd_cosh, cosh, sinh, cosh, -3.0, 3.0},
  {"tanh", jy_hd_tanh, tanh, d1_tanh, d2_tanh, -6.0, 6.0},
  {"pow(x,2.5)", hd_pow, f_pow, d1_pow, d2_pow, 0.05, 5.0},
  {"pow(x,-1.75)", hd_powneg, f_powneg, d1_powneg, d2_powneg, 0.2, 5.0},
  {"abs", jy_hd_abs, fabs, d1_abs, zero, -5.0, 5.0},
};
#define NUNARY ((int)(sizeof unary / sizeof unary[0]))

static void test_unary(const Unary *u) {
  double e1 = 0, e2 = 0, eg = 0, fd1 = 0, fd2 = 0;
  for (int i = 0; i < NPTS; i++) {
    double x = urand(u->lo, u->hi);
    if (u->f == fabs && fabs(x) < 10 * FD_H) continue; /* FD across the kink is meaningless */
    jyHyper r = u->hd(jy_hd_var(x, 1.0, 1.0));
    double f = u->f(x), d1 = u->d1(x), d2 = u->d2(x);
    e1 = worst(e1, rel(r.v, f));
    e1 = worst(e1, rel(r.e1, d1));
    e1 = worst(e1, rel(r.e2, d1));
    e2 = worst(e2, rel(r.e12, d2));
    /* General seeds with a non-zero ε1ε2 part exercise the f'(a) d term of the rule. */
    jyHyper g = u->hd((jyHyper){x, 0.3, -1.7, 0.9});
    eg = worst(eg, rel(g.e1, 0.3 * d1));
    eg = worst(eg, rel(g.e2, -1.7 * d1));
    eg = worst(eg, rel(g.e12, 0.9 * d1 + 0.3 * -1.7 * d2));
    double fp = u->hd(jy_hd_const(x + FD_H)).v, fm = u->hd(jy_hd_const(x - FD_H)).v;
    fd1 = worst(fd1, rel((fp - fm) / (2 * FD_H), r.e1));
    fd2 = worst(fd2, rel((fp - 2 * r.v + fm) / (FD_H * FD_H), r.e12));
  }
  ok(e1 <= TOL_EXACT, "%s: value and first derivative vs closed form", u->name);
  ok(e2 <= TOL_EXACT, "%s: second derivative vs closed form", u->name);
  ok(eg <= TOL_EXACT, "%s: general seeds (b, c, d) vs closed form", u->name);
  ok(fd1 <= TOL_FD1, "%s: first derivative vs central difference", u->name);
  ok(fd2 <= TOL_FD2, "%s: second derivative vs central difference", u->name);
  diag("%-12s closed d1 %.2e d2 %.2e seeds %.2e | fd d1 %.2e d2 %.2e", u->name, e1, e2, eg, fd1,
       fd2);
}

/* ---- two-argument functions: gradient and Hessian by hand ---- */

typedef struct {
  const char *name;
  jyHyper (*hd)(jyHyper, jyHyper);
  double (*f)(double, double);
  /* out: fx, fy, fxx, fxy, fyy */
  void (*d)(double, double, double *);
  double xlo, xhi, ylo, yhi;
} Binary;

static double f_add(double x, double y) { return x + y; }
static void d_add(double x, double y, double *o) {
  (void)x, (void)y;
  o[0] = 1, o[1] = 1, o[2] = 0, o[3] = 0, o[4] = 0;
}
static double f_sub(double x, double y) { return x - y; }
static void d_sub(double x, double y, double *o) {
  (void)x, (void)y;
  o[0] = 1, o[1] = -1, o[2] = 0, o[3] = 0, o[4] = 0;
}
static double f_mul(double x, double y) { return x * y; }
static void d_mul(double x, double y, double *o) {
  o[0] = y, o[1] = x, o[2] = 0, o[3] = 1, o[4] = 0;
}
static double f_div(double x, double y) { return x / y; }
static void d_div(double x, double y, double *o) {
  o[0] = 1 / y, o[1] = -x / (y * y), o[2] = 0, o[3] = -1 / (y * y), o[4] = 2 * x / (y * y * y);
}
/* atan2(y, x) with our x as its first argument, i.e. f(x, y) = atan2(x, y): the angle of the
 * point (y, x). Then f_x = y / r², f_y = -x / r². */
static double f_atan2(double x, double y) { return atan2(x, y); }
static void d_atan2(double x, double y, double *o) {
  double r2 = x * x + y * y;
  o[0] = y / r2, o[1] = -x / r2;
  o[2] = -2 * x * y / sq(r2), o[3] = (x * x - y * y) / sq(r2), o[4] = 2 * x * y / sq(r2);
}
static double f_pow_hd(double x, double y) { return pow(x, y); }
static void d_pow_hd(double x, double y, double *o) {
  double p = pow(x, y), l = log(x);
  o[0] = y * pow(x, y - 1), o[1] = p * l;
  o[2] = y * (y - 1) * pow(x, y - 2), o[3] = pow(x, y - 1) * (1 + y * l), o[4] = p * l * l;
}
static double f_hypot(double x, double y) { return hypot(x, y); }
static void d_hypot(double x, double y, double *o) {
  double h = sqrt(x * x + y * y), h3 = h * h * h;
  o[0] = x / h, o[1] = y / h, o[2] = y * y / h3, o[3] = -x * y / h3, o[4] = x * x / h3;
}

static const Binary binary[] = {
  {"add", jy_hd_add, f_add, d_add, -5, 5, -5, 5},
  {"sub", jy_hd_sub, f_sub, d_sub, -5, 5, -5, 5},
  {"mul", jy_hd_mul, f_mul, d_mul, -5, 5, -5, 5},
  {"div", jy_hd_div, f_div, d_div, -5, 5, 0.5, 5},
  {"atan2", jy_hd_atan2, f_atan2, d_atan2, -3, 3, -3, 3},
  {"pow_hd", jy_hd_pow_hd, f_pow_hd, d_pow_hd, 0.2, 3, -2, 2.5},
  {"hypot", jy_hd_hypot, f_hypot, d_hypot, -3, 3, -3, 3},
};
#define NBINARY ((int)(sizeof binary / sizeof binary[0]))

static double at(const Binary *b, double x, double y) {
  return b->hd(jy_hd_const(x), jy_hd_const(y)).v;
}

static void test_binary(const Binary *b) {
  double e1 = 0, e2 = 0, em = 0, fd1 = 0, fd2 = 0, fdm = 0;
  for (int i = 0; i < NPTS; i++) {
    double x, y, d[5];
    do { /* away from the origin (atan2, hypot) and atan2's cut at the negative axis */
      x = urand(b->xlo, b->xhi), y = urand(b->ylo, b->yhi);
    } while (hypot(x, y) < 0.3 || (b->f == f_atan2 && y < 0 && fabs(x) < 0.05));
    b->d(x, y, d);
    jyHyper cx = jy_hd_const(x), cy = jy_hd_const(y);
    jyHyper rx = b->hd(jy_hd_var(x, 1, 1), cy);                 /* both seeds on x: fx, fxx */
    jyHyper ry = b->hd(cx, jy_hd_var(y, 1, 1));                 /* both on y: fy, fyy */
    jyHyper rm = b->hd(jy_hd_var(x, 1, 0), jy_hd_var(y, 0, 1)); /* ε1 on x, ε2 on y: fxy */
    e1 = worst(e1, rel(rx.v, b->f(x, y)));
    e1 = worst(e1, worst(rel(rx.e1, d[0]), rel(rx.e2, d[0])));
    e1 = worst(e1, worst(rel(ry.e1, d[1]), rel(ry.e2, d[1])));
    e1 = worst(e1, worst(rel(rm.e1, d[0]), rel(rm.e2, d[1])));
    e2 = worst(e2, worst(rel(rx.e12, d[2]), rel(ry.e12, d[4])));
    em = worst(em, rel(rm.e12, d[3]));
    double h = FD_H, f0 = rx.v;
    double fxp = at(b, x + h, y), fxm = at(b, x - h, y), fyp = at(b, x, y + h),
           fym = at(b, x, y - h);
    fd1 = worst(fd1, rel((fxp - fxm) / (2 * h), rx.e1));
    fd1 = worst(fd1, rel((fyp - fym) / (2 * h), ry.e1));
    fd2 = worst(fd2, rel((fxp - 2 * f0 + fxm) / (h * h), rx.e12));
    fd2 = worst(fd2, rel((fyp - 2 * f0 + fym) / (h * h), ry.e12));
    double mix =
      (at(b, x + h, y + h) - at(b, x + h, y - h) - at(b, x - h, y + h) + at(b, x - h, y - h)) /
      (4 * h * h);
    fdm = worst(fdm, rel(mix, rm.e12));
  }
  ok(e1 <= TOL_EXACT, "%s: value and gradient vs closed form", b->name);
  ok(e2 <= TOL_EXACT, "%s: fxx, fyy vs closed form", b->name);
  ok(em <= TOL_EXACT, "%s: mixed fxy (ε1 on x, ε2 on y) vs closed form", b->name);
  ok(fd1 <= TOL_FD1, "%s: gradient vs central difference", b->name);
  ok(fd2 <= TOL_FD2, "%s: fxx, fyy vs central difference", b->name);
  ok(fdm <= TOL_FD2, "%s: fxy vs central difference", b->name);
  diag("%-12s closed grad %.2e hess %.2e mixed %.2e | fd grad %.2e hess %.2e mixed %.2e", b->name,
       e1, e2, em, fd1, fd2, fdm);
}

/* ---- a holonomic constraint: point on the ellipse x²/a² + y²/b² = 1 ---- */

static void test_ellipse(void) {
  const double a = 1.7, b = 0.6;
  double e1 = 0, e12 = 0;
  for (int i = 0; i < NPTS; i++) {
    double qx = urand(-2, 2), qy = urand(-2, 2), vx = urand(-3, 3), vy = urand(-3, 3);
    /* q + v ε1 + v ε2: e1 = A v, e12 = vᵀ φ_qq v (the −b of the notes, without t). */
    jyHyper x = jy_hd_var(qx, vx, vx), y = jy_hd_var(qy, vy, vy);
    jyHyper phi = jy_hd_add_scalar(jy_hd_add(jy_hd_div(jy_hd_mul(x, x), jy_hd_const(a * a)),
                                             jy_hd_div(jy_hd_mul(y, y), jy_hd_const(b * b))),
                                   -1.0);
    double av = 2 * qx / (a * a) * vx + 2 * qy / (b * b) * vy;
    double vhv = 2 * vx * vx / (a * a) + 2 * vy * vy / (b * b);
    e1 = worst(e1, worst(rel(phi.e1, av), rel(phi.e2, av)));
    e12 = worst(e12, rel(phi.e12, vhv));
  }
  /* "Exact" means rounding only: a few operations each, so a few ulps; 1e-14 allows ~50. */
  ok(e1 <= 1e-14, "ellipse: e1 = A v");
  ok(e12 <= 1e-14, "ellipse: e12 = v^T phi_qq v");
  diag("%-12s A v %.2e  v^T phi_qq v %.2e", "ellipse", e1, e12);
}

int main(void) {
  plan(NUNARY * 5 + NBINARY * 6 + 2);
  for (int i = 0; i < NUNARY; i++) test_unary(&unary[i]);
  for (int i = 0; i < NBINARY; i++) test_binary(&binary[i]);
  test_ellipse();
  return done();
}
