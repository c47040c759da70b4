/* joinery/ad.h — hyper-dual numbers for exact first and second derivatives in parts.
 *
 * A jyHyper is x = v + e1 ε1 + e2 ε2 + e12 ε1ε2 with ε1² = ε2² = 0 and ε1ε2 ≠ 0
 * (Fike & Alonso, AIAA 2011-886). Seed an input with jy_hd_var(x, d1, d2); after evaluating
 * f, the e1 part is the directional derivative along the d1 seeds, e2 along the d2 seeds, and
 * e12 the second derivative d1ᵀ f'' d2 — exact, with no step size.
 *
 * The one rule every elementary function follows: for a = v + b ε1 + c ε2 + d ε1ε2,
 *
 *     f(a) = f(v) + f'(v) (b ε1 + c ε2 + d ε1ε2) + f''(v) b c ε1ε2
 *
 * and for two arguments f(x, y) the same with the gradient and the Hessian:
 *     e12 = fx dx + fy dy + fxx bx cx + fxy (bx cy + by cx) + fyy by cy.
 *
 * Header-only, static inline; nothing allocates and there is no state. Domains are those of
 * the real functions: outside them (or at points where f is not differentiable, e.g. sqrt at
 * 0) the result holds inf or NaN, as <math.h> would.
 */
#ifndef JOINERY_AD_H
#define JOINERY_AD_H

#include <math.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct jyHyper {
  double v;   /* value */
  double e1;  /* ε1 part: derivative along the first seed */
  double e2;  /* ε2 part: derivative along the second seed */
  double e12; /* ε1ε2 part: mixed second derivative along both seeds */
} jyHyper;

/* A constant: all derivative parts zero. */
static inline jyHyper jy_hd_const(double x) {
  jyHyper r = {x, 0.0, 0.0, 0.0};
  return r;
}

/* An input variable x with seed d1 on ε1 and d2 on ε2 (usually 0 or 1). */
static inline jyHyper jy_hd_var(double x, double d1, double d2) {
  jyHyper r = {x, d1, d2, 0.0};
  return r;
}

/* The chain rule above, given f(a.v), f'(a.v), f''(a.v); part authors may use it for
 * functions this header lacks. */
static inline jyHyper jy_hd_chain(jyHyper a, double f0, double f1, double f2) {
  jyHyper r = {f0, f1 * a.e1, f1 * a.e2, f1 * a.e12 + f2 * a.e1 * a.e2};
  return r;
}

/* Two-argument chain rule from the value, gradient (fx, fy) and Hessian (fxx, fxy, fyy). */
static inline jyHyper jy_hd_chain2(jyHyper x, jyHyper y, double f0, double fx, double fy,
                                   double fxx, double fxy, double fyy) {
  jyHyper r = {f0, fx * x.e1 + fy * y.e1, fx * x.e2 + fy * y.e2,
               fx * x.e12 + fy * y.e12 + fxx * x.e1 * x.e2 + fxy * (x.e1 * y.e2 + y.e1 * x.e2) +
                 fyy * y.e1 * y.e2};
  return r;
}

static inline jyHyper jy_hd_add(jyHyper a, jyHyper b) {
  jyHyper r = {a.v + b.v, a.e1 + b.e1, a.e2 + b.e2, a.e12 + b.e12};
  return r;
}

static inline jyHyper jy_hd_sub(jyHyper a, jyHyper b) {
  jyHyper r = {a.v - b.v, a.e1 - b.e1, a.e2 - b.e2, a.e12 - b.e12};
  return r;
}

static inline jyHyper jy_hd_neg(jyHyper a) {
  jyHyper r = {-a.v, -a.e1, -a.e2, -a.e12};
  return r;
}

/* s * a for a real s. */
static inline jyHyper jy_hd_scale(jyHyper a, double s) {
  jyHyper r = {s * a.v, s * a.e1, s * a.e2, s * a.e12};
  return r;
}

/* a + s for a real s: only the value moves. */
static inline jyHyper jy_hd_add_scalar(jyHyper a, double s) {
  jyHyper r = {a.v + s, a.e1, a.e2, a.e12};
  return r;
}

static inline jyHyper jy_hd_mul(jyHyper a, jyHyper b) {
  jyHyper r = {a.v * b.v, a.v * b.e1 + a.e1 * b.v, a.v * b.e2 + a.e2 * b.v,
               a.v * b.e12 + a.e1 * b.e2 + a.e2 * b.e1 + a.e12 * b.v};
  return r;
}

/* a / b = a * (1/b), with 1/x' = -1/x², 1/x'' = 2/x³. */
static inline jyHyper jy_hd_div(jyHyper a, jyHyper b) {
  double inv = 1.0 / b.v;
  return jy_hd_mul(a, jy_hd_chain(b, inv, -inv * inv, 2.0 * inv * inv * inv));
}

static inline jyHyper jy_hd_sqrt(jyHyper a) {
  double s = sqrt(a.v);
  return jy_hd_chain(a, s, 0.5 / s, -0.25 / (s * a.v));
}

static inline jyHyper jy_hd_exp(jyHyper a) {
  double e = exp(a.v);
  return jy_hd_chain(a, e, e, e);
}

static inline jyHyper jy_hd_log(jyHyper a) {
  double inv = 1.0 / a.v;
  return jy_hd_chain(a, log(a.v), inv, -inv * inv);
}

static inline jyHyper jy_hd_sin(jyHyper a) {
  double s = sin(a.v);
  return jy_hd_chain(a, s, cos(a.v), -s);
}

static inline jyHyper jy_hd_cos(jyHyper a) {
  double c = cos(a.v);
  return jy_hd_chain(a, c, -sin(a.v), -c);
}

/* tan' = 1 + tan², tan'' = 2 tan (1 + tan²); no cancellation in 1 + t². */
static inline jyHyper jy_hd_tan(jyHyper a) {
  double t = tan(a.v), d = 1.0 + t * t;
  return jy_hd_chain(a, t, d, 2.0 * t * d);
}

static inline jyHyper jy_hd_atan(jyHyper a) {
  double d = 1.0 / (1.0 + a.v * a.v);
  return jy_hd_chain(a, atan(a.v), d, -2.0 * a.v * d * d);
}

/* atan2(y, x), the angle of the point (x, y): ∂/∂y = x/r², ∂/∂x = -y/r². Undefined at the
 * origin, and the value jumps by 2π across the negative x axis (derivatives do not). */
static inline jyHyper jy_hd_atan2(jyHyper y, jyHyper x) {
  double r2 = x.v * x.v + y.v * y.v, i2 = 1.0 / r2, i4 = i2 * i2;
  double fxy = (y.v - x.v) * (y.v + x.v) * i4; /* not y² - x²: stays accurate at |x| ≈ |y| */
  return jy_hd_chain2(x, y, atan2(y.v, x.v), -y.v * i2, x.v * i2, 2.0 * x.v * y.v * i4, fxy,
                      -2.0 * x.v * y.v * i4);
}

/* asin' = 1/√(1-x²), asin'' = x/(1-x²)^{3/2}; (1-x)(1+x) keeps accuracy near |x| = 1. */
static inline jyHyper jy_hd_asin(jyHyper a) {
  double w = (1.0 - a.v) * (1.0 + a.v), d = 1.0 / sqrt(w);
  return jy_hd_chain(a, asin(a.v), d, a.v * d / w);
}

static inline jyHyper jy_hd_acos(jyHyper a) {
  double w = (1.0 - a.v) * (1.0 + a.v), d = 1.0 / sqrt(w);
  return jy_hd_chain(a, acos(a.v), -d, -a.v * d / w);
}

static inline jyHyper jy_hd_sinh(jyHyper a) {
  double s = sinh(a.v);
  return jy_hd_chain(a, s, cosh(a.v), s);
}

static inline jyHyper jy_hd_cosh(jyHyper a) {
  double c = cosh(a.v);
  return jy_hd_chain(a, c, sinh(a.v), c);
}

/* tanh' = 1/cosh² rather than 1 - tanh², which cancels to nothing for large |x|. */
static inline jyHyper jy_hd_tanh(jyHyper a) {
  double t = tanh(a.v), c = cosh(a.v), d = 1.0 / (c * c);
  return jy_hd_chain(a, t, d, -2.0 * t * d);
}

/* a^p for a real exponent p. The p = 0 and p = 1 cases avoid 0 * inf = NaN at a = 0. */
static inline jyHyper jy_hd_pow(jyHyper a, double p) {
  double f1 = p == 0.0 ? 0.0 : p * pow(a.v, p - 1.0);
  double f2 = (p == 0.0 || p == 1.0) ? 0.0 : p * (p - 1.0) * pow(a.v, p - 2.0);
  return jy_hd_chain(a, pow(a.v, p), f1, f2);
}

/* a^b with both hyper-dual, as exp(b log a); needs a > 0. */
static inline jyHyper jy_hd_pow_hd(jyHyper a, jyHyper b) {
  return jy_hd_exp(jy_hd_mul(b, jy_hd_log(a)));
}

/* |a|. Not differentiable at 0 (a kink): there we return the right-hand derivative, +1 (and
 * f'' = 0), so the caller must not rely on derivatives of |a| at a = 0. */
static inline jyHyper jy_hd_abs(jyHyper a) { return a.v < 0.0 ? jy_hd_neg(a) : a; }

/* √(x² + y²) without overflow in the value; ∂/∂x = x/h, ∂²/∂x² = y²/h³, ∂²/∂x∂y = -xy/h³.
 * Not differentiable at the origin (inf/NaN there). */
static inline jyHyper jy_hd_hypot(jyHyper x, jyHyper y) {
  double h = hypot(x.v, y.v), ih = 1.0 / h, ih3 = ih * ih * ih;
  return jy_hd_chain2(x, y, h, x.v * ih, y.v * ih, y.v * y.v * ih3, -x.v * y.v * ih3,
                      x.v * x.v * ih3);
}

#ifdef __cplusplus
}
#endif

#endif
