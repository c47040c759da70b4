/* The integrators' vector arithmetic, compiled with the engine.
 *
 * Debian's SUNDIALS 6.4.1 is built without optimization: its serial vector kernels keep
 * every loop index and pointer on the stack, about 20 instructions an element for z = x + y.
 * On the 14-body tree at the defaults (Adams at rtol 1e-11, 196 coordinates) the Nordsieck
 * prediction's sums alone were a quarter of the run's instructions and the integrators'
 * vector work about half (callgrind). These kernels are the serial ones' arithmetic (the
 * same special cases, the same operations in the same order, reductions summed in index
 * order) compiled with the engine's flags, so a run's every number is unchanged; the
 * operations left to SUNDIALS are the rare ones (masks, constraints, buffers).
 *
 * No kernel uses restrict: SUNDIALS passes the same vector as input and output (z = x + z),
 * which an element-by-element loop reading before writing the same index serves. */
#include "vector_ops.h"

#include <math.h>
#include <nvector/nvector_serial.h>

static inline double *data(N_Vector v) { return NV_DATA_S(v); }
static inline sunindextype length(N_Vector v) { return NV_LENGTH_S(v); }

/* y <- a x + y, with SUNDIALS' exact cases a = 1 and a = -1 */
static void axpy(double a, const double *x, double *y, sunindextype n) {
  if (a == 1.0)
    for (sunindextype i = 0; i < n; i++) y[i] += x[i];
  else if (a == -1.0)
    for (sunindextype i = 0; i < n; i++) y[i] -= x[i];
  else
    for (sunindextype i = 0; i < n; i++) y[i] += a * x[i];
}

/* z = a x + b y, split into the serial kernel's cases: each case's formula rounds
 * differently (c (x + y) is not c x + c y), so each is kept as it is there. */
static void linear_sum(double a, const double *x, double b, const double *y, double *z,
                       sunindextype n) {
  if (b == 1.0 && z == y) {
    axpy(a, x, z, n);
  } else if (a == 1.0 && z == x) {
    axpy(b, y, z, n);
  } else if (a == 1.0 && b == 1.0) {
    for (sunindextype i = 0; i < n; i++) z[i] = x[i] + y[i];
  } else if (a == 1.0 && b == -1.0) {
    for (sunindextype i = 0; i < n; i++) z[i] = x[i] - y[i];
  } else if (a == -1.0 && b == 1.0) {
    for (sunindextype i = 0; i < n; i++) z[i] = y[i] - x[i];
  } else if (a == 1.0) {
    for (sunindextype i = 0; i < n; i++) z[i] = b * y[i] + x[i];
  } else if (b == 1.0) {
    for (sunindextype i = 0; i < n; i++) z[i] = a * x[i] + y[i];
  } else if (a == -1.0) {
    for (sunindextype i = 0; i < n; i++) z[i] = b * y[i] - x[i];
  } else if (b == -1.0) {
    for (sunindextype i = 0; i < n; i++) z[i] = a * x[i] - y[i];
  } else if (a == b) {
    for (sunindextype i = 0; i < n; i++) z[i] = a * (x[i] + y[i]);
  } else if (a == -b) {
    for (sunindextype i = 0; i < n; i++) z[i] = a * (x[i] - y[i]);
  } else {
    for (sunindextype i = 0; i < n; i++) z[i] = a * x[i] + b * y[i];
  }
}

/* z = c x, with the serial kernel's cases (in place, copy, negation) */
static void scale(double c, const double *x, double *z, sunindextype n) {
  if (z == x)
    for (sunindextype i = 0; i < n; i++) z[i] *= c;
  else if (c == 1.0)
    for (sunindextype i = 0; i < n; i++) z[i] = x[i];
  else if (c == -1.0)
    for (sunindextype i = 0; i < n; i++) z[i] = -x[i];
  else
    for (sunindextype i = 0; i < n; i++) z[i] = c * x[i];
}

/* sum_i (x_i w_i)^2 in index order */
static double weighted_squares(const double *x, const double *w, sunindextype n) {
  double sum = 0;
  for (sunindextype i = 0; i < n; i++) {
    double p = x[i] * w[i];
    sum += p * p;
  }
  return sum;
}

static void op_linear_sum(double a, N_Vector x, double b, N_Vector y, N_Vector z) {
  linear_sum(a, data(x), b, data(y), data(z), length(x));
}

static void op_const(double c, N_Vector z) {
  double *zd = data(z);
  for (sunindextype i = 0, n = length(z); i < n; i++) zd[i] = c;
}

static void op_prod(N_Vector x, N_Vector y, N_Vector z) {
  const double *xd = data(x), *yd = data(y);
  double *zd = data(z);
  for (sunindextype i = 0, n = length(x); i < n; i++) zd[i] = xd[i] * yd[i];
}

static void op_div(N_Vector x, N_Vector y, N_Vector z) {
  const double *xd = data(x), *yd = data(y);
  double *zd = data(z);
  for (sunindextype i = 0, n = length(x); i < n; i++) zd[i] = xd[i] / yd[i];
}

static void op_scale(double c, N_Vector x, N_Vector z) { scale(c, data(x), data(z), length(x)); }

static void op_abs(N_Vector x, N_Vector z) {
  const double *xd = data(x);
  double *zd = data(z);
  for (sunindextype i = 0, n = length(x); i < n; i++) zd[i] = fabs(xd[i]);
}

static void op_inv(N_Vector x, N_Vector z) {
  const double *xd = data(x);
  double *zd = data(z);
  for (sunindextype i = 0, n = length(x); i < n; i++) zd[i] = 1.0 / xd[i];
}

static void op_add_const(N_Vector x, double b, N_Vector z) {
  const double *xd = data(x);
  double *zd = data(z);
  for (sunindextype i = 0, n = length(x); i < n; i++) zd[i] = xd[i] + b;
}

static double op_dot(N_Vector x, N_Vector y) {
  const double *xd = data(x), *yd = data(y);
  double sum = 0;
  for (sunindextype i = 0, n = length(x); i < n; i++) sum += xd[i] * yd[i];
  return sum;
}

static double op_max_norm(N_Vector x) {
  const double *xd = data(x);
  double max = 0;
  for (sunindextype i = 0, n = length(x); i < n; i++)
    if (fabs(xd[i]) > max) max = fabs(xd[i]);
  return max;
}

static double op_wsqrsum(N_Vector x, N_Vector w) {
  return weighted_squares(data(x), data(w), length(x));
}

static double op_wrms_norm(N_Vector x, N_Vector w) {
  return sqrt(weighted_squares(data(x), data(w), length(x)) / (double)length(x));
}

static double op_wl2_norm(N_Vector x, N_Vector w) {
  return sqrt(weighted_squares(data(x), data(w), length(x)));
}

static double op_min(N_Vector x) {
  const double *xd = data(x);
  double min = xd[0];
  for (sunindextype i = 1, n = length(x); i < n; i++)
    if (xd[i] < min) min = xd[i];
  return min;
}

static double op_l1_norm(N_Vector x) {
  const double *xd = data(x);
  double sum = 0;
  for (sunindextype i = 0, n = length(x); i < n; i++) sum += fabs(xd[i]);
  return sum;
}

static void op_compare(double c, N_Vector x, N_Vector z) {
  const double *xd = data(x);
  double *zd = data(z);
  for (sunindextype i = 0, n = length(x); i < n; i++) zd[i] = fabs(xd[i]) >= c ? 1.0 : 0.0;
}

static sunbooleantype op_inv_test(N_Vector x, N_Vector z) {
  const double *xd = data(x);
  double *zd = data(z);
  sunbooleantype no_zero = SUNTRUE;
  for (sunindextype i = 0, n = length(x); i < n; i++) {
    if (xd[i] == 0.0)
      no_zero = SUNFALSE;
    else
      zd[i] = 1.0 / xd[i];
  }
  return no_zero;
}

/* z = sum c_i X_i, accumulated vector by vector as the serial kernel does */
static int op_linear_combination(int nvec, double *c, N_Vector *X, N_Vector z) {
  if (nvec == 1) {
    op_scale(c[0], X[0], z);
    return 0;
  }
  if (nvec == 2) {
    op_linear_sum(c[0], X[0], c[1], X[1], z);
    return 0;
  }
  sunindextype n = length(z);
  double *zd = data(z);
  if (X[0] == z) {
    if (c[0] != 1.0)
      for (sunindextype j = 0; j < n; j++) zd[j] *= c[0];
  } else {
    const double *xd = data(X[0]);
    for (sunindextype j = 0; j < n; j++) zd[j] = c[0] * xd[j];
  }
  for (int i = 1; i < nvec; i++) {
    const double *xd = data(X[i]);
    double ci = c[i];
    for (sunindextype j = 0; j < n; j++) zd[j] += ci * xd[j];
  }
  return 0;
}

/* Z_i = a_i x + Y_i */
static int op_scale_add_multi(int nvec, double *a, N_Vector x, N_Vector *Y, N_Vector *Z) {
  if (nvec == 1) {
    op_linear_sum(a[0], x, 1.0, Y[0], Z[0]);
    return 0;
  }
  sunindextype n = length(x);
  const double *xd = data(x);
  for (int i = 0; i < nvec; i++) {
    double *zd = data(Z[i]), ai = a[i];
    if (Y == Z) {
      for (sunindextype j = 0; j < n; j++) zd[j] += ai * xd[j];
    } else {
      const double *yd = data(Y[i]);
      for (sunindextype j = 0; j < n; j++) zd[j] = ai * xd[j] + yd[j];
    }
  }
  return 0;
}

static int op_dot_multi(int nvec, N_Vector x, N_Vector *Y, double *dots) {
  for (int i = 0; i < nvec; i++) dots[i] = op_dot(x, Y[i]);
  return 0;
}

static int op_linear_sum_array(int nvec, double a, N_Vector *X, double b, N_Vector *Y,
                               N_Vector *Z) {
  for (int i = 0; i < nvec; i++) op_linear_sum(a, X[i], b, Y[i], Z[i]);
  return 0;
}

/* Z_i = c_i X_i; in place the serial kernel multiplies even by 1 */
static int op_scale_array(int nvec, double *c, N_Vector *X, N_Vector *Z) {
  if (nvec == 1) {
    op_scale(c[0], X[0], Z[0]);
    return 0;
  }
  sunindextype n = length(Z[0]);
  for (int i = 0; i < nvec; i++) {
    const double *xd = data(X[i]);
    double *zd = data(Z[i]), ci = c[i];
    for (sunindextype j = 0; j < n; j++) zd[j] = ci * xd[j];
  }
  return 0;
}

static int op_const_array(int nvec, double c, N_Vector *Z) {
  for (int i = 0; i < nvec; i++) op_const(c, Z[i]);
  return 0;
}

static int op_wrms_norm_array(int nvec, N_Vector *X, N_Vector *W, double *norms) {
  for (int i = 0; i < nvec; i++) norms[i] = op_wrms_norm(X[i], W[i]);
  return 0;
}

void jy_vector_use_engine_ops(N_Vector v) {
  N_VEnableFusedOps_Serial(v, SUNTRUE); /* the rarer array operations: SUNDIALS' */
  struct _generic_N_Vector_Ops *ops = v->ops;
  ops->nvlinearsum = op_linear_sum;
  ops->nvconst = op_const;
  ops->nvprod = op_prod;
  ops->nvdiv = op_div;
  ops->nvscale = op_scale;
  ops->nvabs = op_abs;
  ops->nvinv = op_inv;
  ops->nvaddconst = op_add_const;
  ops->nvdotprod = op_dot;
  ops->nvmaxnorm = op_max_norm;
  ops->nvwrmsnorm = op_wrms_norm;
  ops->nvmin = op_min;
  ops->nvwl2norm = op_wl2_norm;
  ops->nvl1norm = op_l1_norm;
  ops->nvcompare = op_compare;
  ops->nvinvtest = op_inv_test;
  ops->nvlinearcombination = op_linear_combination;
  ops->nvscaleaddmulti = op_scale_add_multi;
  ops->nvdotprodmulti = op_dot_multi;
  ops->nvlinearsumvectorarray = op_linear_sum_array;
  ops->nvscalevectorarray = op_scale_array;
  ops->nvconstvectorarray = op_const_array;
  ops->nvwrmsnormvectorarray = op_wrms_norm_array;
  ops->nvdotprodlocal = op_dot;
  ops->nvmaxnormlocal = op_max_norm;
  ops->nvminlocal = op_min;
  ops->nvl1normlocal = op_l1_norm;
  ops->nvinvtestlocal = op_inv_test;
  ops->nvwsqrsumlocal = op_wsqrsum;
  ops->nvdotprodmultilocal = op_dot_multi;
}
