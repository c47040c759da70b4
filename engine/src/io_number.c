/* A double as printf's "%.17g" writes it, seven times faster than glibc's printf (37 against
 * 257 ns a number, measured), whose exact multi-precision conversion was a third of an
 * output-heavy run (the four-bar chain example writes 4.4 million numbers). Seventeen
 * significant digits read back as the same double, so the output stays exact.
 *
 * The digits are round(|x| * 10^k) for the k that makes them a 17-digit integer, computed
 * as the 53-bit significand times 10^k rounded down to 128 bits (gen_pow10.py): the product
 * is below the exact one by less than 2^53 units of its last bit, far under the rounding
 * position (about 2^125 units). Whenever that error could decide the rounding (the bits
 * under the rounding position all zeros or all ones, exact ties included) and for the
 * corner cases (subnormals, NaN, infinity), printf writes the number: the fast path
 * never guesses. t_io_number compares both on millions of doubles. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "pow10_table.h"
#include "internal.h"

/* gcc's and clang's 128-bit integers (x86-64); __extension__ keeps -Wpedantic quiet. */
__extension__ typedef unsigned __int128 u128;

#define DIGITS 17
#define TEN_TO_16 10000000000000000ull
#define TEN_TO_17 100000000000000000ull

/* round(m * 2^e2 * 10^k) into *digits when the 128-bit power decides it: 1 done, 0 the
 * rounding is too close to call, -1 the integer part is outside [10^16, 10^17) (the
 * decimal exponent guess was off by one; *digits says which way: below or above). */
static int scaled_digits(uint64_t m, int e2, int k, uint64_t *digits) {
  const u128 lo_part = (u128)m * jy_pow10[k - JY_POW10_MIN].lo;
  const u128 hi_part = (u128)m * jy_pow10[k - JY_POW10_MIN].hi;
  /* V = m * mantissa, 181 bits: bits 64..191 in `top` (bits 0..63, under the error's
   * reach, are not needed). */
  const u128 top = hi_part + (lo_part >> 64);
  const int shift = -(e2 + jy_pow10[k - JY_POW10_MIN].exp2); /* value = V / 2^shift */
  const int u = shift - 64;
  /* top < 2^117 (53 + 64 bits): its integer part fits 64 bits from u = 53 (u is 59 to 63
   * at the right decimal exponent for every normal double, within 4 of that at a guess off
   * by one; anything else is printf's). */
  if (u < 53 || u > 100) return 0;
  const uint64_t integer = (uint64_t)(top >> u);
  if (integer < TEN_TO_16 || integer >= TEN_TO_17) {
    *digits = integer;
    return -1;
  }
  const u128 under_mask = ((u128)1 << (u - 1)) - 1;
  const u128 under = top & under_mask; /* the bits of top under the half */
  const int half = (int)((top >> (u - 1)) & 1);
  /* The truncated power makes V short of the exact product by less than 2^53 <= 2^64: only
   * `under` all ones (below the half) or all zeros (at or above it) leaves doubt. */
  if (half ? under == 0 : under == under_mask) return 0;
  *digits = integer + (uint64_t)half;
  return 1;
}

/* The 17 digits and decimal exponent of |x| (a normal double): 1, or 0 to leave it to
 * printf. */
static int decimal_digits(double x, char digits[DIGITS], int *exp10) {
  uint64_t bits;
  memcpy(&bits, &x, sizeof bits);
  const int biased = (int)((bits >> 52) & 0x7ff);
  if (biased == 0 || biased == 0x7ff) return 0; /* zero, subnormal, inf, NaN */
  const uint64_t m = (bits & ((1ull << 52) - 1)) | (1ull << 52);
  const int e2 = biased - 1075; /* |x| = m * 2^e2 */
  /* floor(log10(2^(e2 + 52))): |x| lies in [10^d, 10^(d + 2)). */
  int d = (int)floor((e2 + 52) * 0.30102999566398120);
  uint64_t value = 0;
  int found = 0;
  for (int attempt = 0; attempt < 3 && !found; attempt++) {
    const int k = DIGITS - 1 - d;
    if (k < JY_POW10_MIN || k > JY_POW10_MAX) return 0;
    const int r = scaled_digits(m, e2, k, &value);
    if (r == 0) return 0;
    if (r == 1)
      found = 1;
    else
      d += value >= TEN_TO_17 ? 1 : -1;
  }
  if (!found) return 0;
  if (value == TEN_TO_17) { /* 99...9.5 rounded up: one digit more, exactly 10^16 */
    value = TEN_TO_16;
    d++;
  }
  for (int i = DIGITS - 1; i >= 0; i--) {
    digits[i] = (char)('0' + value % 10);
    value /= 10;
  }
  *exp10 = d;
  return 1;
}

int jy_format_double(char *out, double x) {
  char digits[DIGITS];
  int exp10;
  if (x == 0) {
    const char *zero = signbit(x) ? "-0" : "0";
    memcpy(out, zero, strlen(zero) + 1);
    return (int)strlen(zero);
  }
  if (!decimal_digits(x, digits, &exp10)) return snprintf(out, JY_NUMBER_LEN, "%.17g", x);
  char *p = out;
  if (signbit(x)) *p++ = '-';
  int last = DIGITS - 1;               /* %g drops the fraction's trailing zeros */
  if (exp10 < -4 || exp10 >= DIGITS) { /* d.ddde+XX */
    while (last > 0 && digits[last] == '0') last--;
    *p++ = digits[0];
    if (last > 0) {
      *p++ = '.';
      memcpy(p, digits + 1, (size_t)last);
      p += last;
    }
    *p++ = 'e';
    *p++ = exp10 < 0 ? '-' : '+';
    int e = exp10 < 0 ? -exp10 : exp10;
    if (e >= 100) *p++ = (char)('0' + e / 100);
    *p++ = (char)('0' + e / 10 % 10);
    *p++ = (char)('0' + e % 10);
  } else if (exp10 >= 0) { /* ddd.ddd */
    while (last > exp10 && digits[last] == '0') last--;
    memcpy(p, digits, (size_t)exp10 + 1);
    p += exp10 + 1;
    if (last > exp10) {
      *p++ = '.';
      memcpy(p, digits + exp10 + 1, (size_t)(last - exp10));
      p += last - exp10;
    }
  } else { /* 0.000ddd */
    while (digits[last] == '0') last--;
    *p++ = '0';
    *p++ = '.';
    for (int i = 0; i < -exp10 - 1; i++) *p++ = '0';
    memcpy(p, digits, (size_t)last + 1);
    p += last + 1;
  }
  *p = '\0';
  return (int)(p - out);
}
