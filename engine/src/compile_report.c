/* The compile report (jy_model_report): what the compile stages moved, left out or
 * decided, one line each. Below the stages that write it. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "compile.h"

jyStatus jy_compile_report(jyModel *md, const char *fmt, ...) {
  char line[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof line, fmt, ap);
  va_end(ap);
  size_t old = md->report_len, add = strlen(line);
  if (old + add + 2 > md->report_cap) {
    size_t cap = 2 * (old + add + 2) + 256;
    char *grown = jy_alloc(&md->alloc, cap);
    if (!grown) return JY_ERR_NOMEM;
    if (old) memcpy(grown, md->report, old);
    jy_free(&md->alloc, md->report);
    md->report = grown;
    md->report_cap = cap;
  }
  memcpy(md->report + old, line, add);
  md->report[old + add] = '\n';
  md->report[old + add + 1] = '\0';
  md->report_len = old + add + 1;
  return JY_OK;
}
