/* Small reductions over arrays of doubles, shared by the engine's stages. Internal. */
#ifndef JY_VEC_H
#define JY_VEC_H

#include <math.h>

/* The larger of a running maximum a and a new value b: fmax without the library call (gcc
 * keeps fmax a call for its NaN rules; a NaN b is passed over here too, and a running
 * maximum never is NaN). Hot loops of the solves use it. */
static inline double jy_larger(double a, double b) { return b > a ? b : a; }

/* max_i |x_i| (0 for n = 0; a NaN entry is passed over, as fmax does). */
static inline double jy_max_abs(const double *x, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s = jy_larger(s, fabs(x[i]));
  return s;
}

/* max_i |a_i - b_i| (0 for n = 0; a NaN difference is passed over, as fmax does). */
static inline double jy_max_diff(const double *a, const double *b, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s = jy_larger(s, fabs(a[i] - b[i]));
  return s;
}

#endif
