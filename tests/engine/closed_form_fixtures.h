/* tests/engine/closed_form_fixtures.h — what the closed-form-against-hyper-dual tests
 * (t_joint_rows, t_marker_rows) share: a deterministic random source and the comparison of
 * two evaluations. Include it once per test program. */
#ifndef JY_TESTS_CLOSED_FORM_FIXTURES_H
#define JY_TESTS_CLOSED_FORM_FIXTURES_H

#include <math.h>

/* xorshift64*: deterministic, state passed explicitly. */
static double uniform(unsigned long long *s, double lo, double hi) {
  *s ^= *s >> 12, *s ^= *s << 25, *s ^= *s >> 27;
  double u = (double)((*s * 2685821657736338717ull) >> 11) / 9007199254740992.0;
  return lo + (hi - lo) * u;
}

static double maxabs(const double *x, int n) {
  double m = 0.0;
  for (int i = 0; i < n; i++) m = fmax(m, fabs(x[i]));
  return m;
}

/* The largest |closed - ad| / tol over n entries (NaN: infinite, so it fails). */
static double worst(const double *a, const double *b, int n, double tol) {
  double w = 0.0;
  for (int i = 0; i < n; i++) {
    double d = fabs(a[i] - b[i]) / tol;
    w = (d == d) ? fmax(w, d) : INFINITY;
  }
  return w;
}

#endif
