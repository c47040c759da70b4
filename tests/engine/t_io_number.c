/* tests/engine/t_io_number.c — the CSV's number formatting alone (engine/src/io_number.c:
 * jy_format_double) against the C library's own "%.17g", character for character:
 *   - zeros, infinities, NaNs, the smallest and largest normals, subnormals;
 *   - every bit pattern class: a million random 64-bit patterns (all exponents, subnormals
 *     and NaNs among them);
 *   - the values a simulation writes: a million uniform in [-1, 1] scaled by 10^j for j in
 *     [-20, 20];
 *   - the boundaries of the fixed and exponent forms (10^-5, 10^-4, 10^16, 10^17 and their
 *     neighbours one and two units in the last place away), integers, powers of two;
 *   - exact ties, where the 18th digit is a 5 followed by nothing: x = q / 2^(k+1) with q odd
 *     and a multiple of 5^k has x * 10^k = D + 1/2 for a 17-digit D (100,000 of them over
 *     k = 1..22): the fast path must hand each to printf, which rounds them to even;
 *   - the digit carry: values just under 10^j that round up to 10^j.
 * Every comparison is exact: the function promises printf's characters. */
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "tap.h"

static uint64_t splitmix(uint64_t *state) {
  uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

typedef struct tally {
  long checked, wrong;
  char first[200];
} tally;

static void check(tally *t, double x) {
  char mine[JY_NUMBER_LEN], libc[64];
  int n = jy_format_double(mine, x);
  snprintf(libc, sizeof libc, "%.17g", x);
  t->checked++;
  if (strcmp(mine, libc) != 0 || n != (int)strlen(libc)) {
    if (!t->wrong++)
      snprintf(t->first, sizeof t->first, "%a: '%s' (length %d), printf '%s'", x, mine, n, libc);
  }
}

static void report(const tally *t, const char *what) {
  ok(t->wrong == 0 && t->checked > 0, "%s: %ld of %ld differ from printf%s%s", what, t->wrong,
     t->checked, t->wrong ? "; first " : "", t->wrong ? t->first : "");
}

static double from_bits(uint64_t bits) {
  double x;
  memcpy(&x, &bits, sizeof x);
  return x;
}

int main(void) {
  plan(6);
  uint64_t seed = 20261124;
  tally t = {0};

  const double specials[] = {0.0,     -0.0,     INFINITY, -INFINITY, NAN,      -NAN,
                             DBL_MIN, -DBL_MIN, DBL_MAX,  -DBL_MAX,  4.9e-324, 1e-310,
                             1.0,     -1.0,     0.1,      0.5,       1e23,     5e-324};
  for (size_t i = 0; i < sizeof specials / sizeof *specials; i++) check(&t, specials[i]);
  report(&t, "zeros, infinities, NaNs, extreme normals and subnormals");

  memset(&t, 0, sizeof t);
  for (int i = 0; i < 1000000; i++) check(&t, from_bits(splitmix(&seed)));
  report(&t, "random bit patterns");

  memset(&t, 0, sizeof t);
  for (int i = 0; i < 1000000; i++) {
    double unit = (double)(splitmix(&seed) >> 11) * 0x1p-53 * 2 - 1;
    check(&t, unit * pow(10, (int)(splitmix(&seed) % 41) - 20));
  }
  report(&t, "uniform values scaled by 10^-20 .. 10^20");

  memset(&t, 0, sizeof t);
  for (int j = -30; j <= 30; j++) {
    double p = pow(10, j);
    double x = p;
    for (int step = 0; step < 3; step++, x = nextafter(x, 0)) check(&t, x);
    x = nextafter(p, INFINITY);
    for (int step = 0; step < 2; step++, x = nextafter(x, INFINITY)) check(&t, x);
  }
  for (int i = -100000; i <= 100000; i++) check(&t, i);
  for (int e = -1074; e <= 1023; e++) check(&t, ldexp(1, e));
  report(&t, "powers of ten and their neighbours, integers, powers of two");

  memset(&t, 0, sizeof t);
  for (int k = 1; k <= 22; k++) {
    double five_k = pow(5, k), lo = 2e16 / five_k, hi = fmin(0x1p53, 2e17 / five_k);
    for (int i = 0; i < 100000 / 22; i++) {
      /* q odd in [lo, hi): x * 10^k = q * 5^k / 2, a 17-digit integer plus one half. */
      uint64_t q = (uint64_t)(lo + (hi - lo) * ((double)(splitmix(&seed) >> 11) * 0x1p-53));
      q |= 1;
      if ((double)q >= hi) q -= 2;
      check(&t, ldexp((double)q, -(k + 1)));
    }
  }
  report(&t, "exact ties at the 17th digit, rounded to even");

  memset(&t, 0, sizeof t);
  for (int j = -20; j <= 20; j++) {
    double x = pow(10, j) * (1 - 1e-17);
    for (int step = 0; step < 20; step++, x = nextafter(x, 0)) check(&t, x);
  }
  report(&t, "values that round up to the next power of ten");
  return done();
}
