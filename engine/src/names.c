/* Messages and the names in them, at the bottom of the library: the error buffers every
 * object keeps, the text of a status, the library's version, and the "did you mean" of an
 * unknown name. */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

void jy_set_error(char *buf, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(buf, JY_ERROR_LEN, fmt, ap);
  va_end(ap);
}

#define JY_STRINGIFY_(x) #x
#define JY_STRINGIFY(x) JY_STRINGIFY_(x)

const char *jy_version(void) {
  return JY_STRINGIFY(JOINERY_VERSION_MAJOR) "." JY_STRINGIFY(
    JOINERY_VERSION_MINOR) "." JY_STRINGIFY(JOINERY_VERSION_PATCH);
}

const char *jy_status_text(jyStatus status) {
  switch (status) {
#define JY_STATUS_CASE(code, text) \
  case code:                       \
    return text;
    JY_STATUS_LIST(JY_STATUS_CASE)
#undef JY_STATUS_CASE
  }
  return "unknown status";
}

/* Case-insensitive edit distance of short names (names are short; long ones never match). */
static int edit_distance(const char *a, const char *b) {
  int la = (int)strlen(a), lb = (int)strlen(b);
  if (la > 63 || lb > 63) return 99;
  int row[64];
  for (int j = 0; j <= lb; j++) row[j] = j;
  for (int i = 1; i <= la; i++) {
    int diag = row[0];
    row[0] = i;
    for (int j = 1; j <= lb; j++) {
      int up = row[j];
      int best = diag + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
      if (up + 1 < best) best = up + 1;
      if (row[j - 1] + 1 < best) best = row[j - 1] + 1;
      row[j] = best;
      diag = up;
    }
  }
  return row[lb];
}

const char *jy_nearest_name(const char *name, const char *const *candidates, int count) {
  const char *best = NULL;
  int best_d = 3;
  if (!name) return NULL;
  for (int i = 0; i < count; i++) {
    int d = edit_distance(name, candidates[i]);
    if (d < best_d && d < (int)strlen(name)) {
      best_d = d;
      best = candidates[i];
    }
  }
  return best;
}

void jy_suggest(char *out, size_t len, const char *name, const char *const *candidates, int count) {
  const char *near = jy_nearest_name(name, candidates, count);
  if (near) {
    snprintf(out, len, " (did you mean '%s'?)", near);
    return;
  }
  size_t used = (size_t)snprintf(out, len, count ? "; valid: " : "; there are none");
  for (int i = 0; i < count && used < len; i++)
    used += (size_t)snprintf(out + used, len - used, "%s%s", i ? ", " : "", candidates[i]);
}
