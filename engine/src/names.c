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

/* Edit distance of a[0..la) and b, case-insensitive when fold; names longer than CAP are
 * cut to it (names are short, and the callers only rank or bound the distance). */
enum { CAP = 127 };
static int edit_distance(const char *a, size_t la, const char *b, int fold) {
  size_t lb = strlen(b);
  if (la > CAP) la = CAP;
  if (lb > CAP) lb = CAP;
  int row[CAP + 1];
  for (size_t j = 0; j <= lb; j++) row[j] = (int)j;
  for (size_t i = 1; i <= la; i++) {
    int diag = row[0];
    row[0] = (int)i;
    for (size_t j = 1; j <= lb; j++) {
      int up = row[j];
      unsigned char ca = (unsigned char)a[i - 1], cb = (unsigned char)b[j - 1];
      int best = diag + (fold ? tolower(ca) != tolower(cb) : ca != cb);
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
  if (!name || strlen(name) > 63) return NULL; /* long names never match */
  for (int i = 0; i < count; i++) {
    if (strlen(candidates[i]) > 63) continue;
    int d = edit_distance(name, strlen(name), candidates[i], 1);
    if (d < best_d && d < (int)strlen(name)) {
      best_d = d;
      best = candidates[i];
    }
  }
  return best;
}

/* Whether name matches the glob pattern p[0..len) ('*' any run, '?' one character). */
static int glob_match(const char *p, size_t len, const char *name) {
  const char *end = p + len, *star = NULL, *resume = NULL;
  while (*name) {
    if (p < end && (*p == '?' || *p == *name)) {
      p++;
      name++;
    } else if (p < end && *p == '*') {
      star = ++p;
      resume = name;
    } else if (star) {
      p = star;
      name = ++resume;
    } else {
      return 0;
    }
  }
  while (p < end && *p == '*') p++;
  return p == end;
}

/* The index of the name nearest the pattern p[0..len), its wildcards dropped. */
static int nearest_to_pattern(const char *p, size_t len, const char *const *names, int count) {
  char plain[CAP + 1];
  size_t n = 0;
  for (size_t i = 0; i < len && n < CAP; i++)
    if (p[i] != '*' && p[i] != '?') plain[n++] = p[i];
  int best = count > 0 ? 0 : -1, best_d = 1 << 30;
  for (int i = 0; i < count; i++) {
    int d = edit_distance(plain, n, names[i], 0);
    if (d < best_d) best_d = d, best = i;
  }
  return best;
}

static int is_blank(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r'; }

int jy_pick_names(const char *patterns, const char *const *names, int count,
                  int (*pick)(void *ud, int k), void *ud, jyNameMiss *miss) {
  int npatterns = 0;
  const char *s = patterns;
  while (s && *s) {
    size_t len = strcspn(s, ",");
    const char *p = s;
    s = s[len] ? s + len + 1 : s + len;
    while (len > 0 && is_blank(*p)) p++, len--;
    while (len > 0 && is_blank(p[len - 1])) len--;
    if (len == 0) continue;
    npatterns++;
    int matched = 0;
    for (int i = 0; i < count; i++)
      if (glob_match(p, len, names[i])) {
        matched = 1;
        if (pick(ud, i) != 0) return -1;
      }
    if (!matched) {
      if (miss) *miss = (jyNameMiss){p, len, nearest_to_pattern(p, len, names, count)};
      return -1;
    }
  }
  return npatterns;
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
