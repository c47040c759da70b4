/* lua/plot_table.c — reads a run's output file for joinery plot (plot_table.h). The CSV
 * loader reads what io_csv.c writes: comment lines first (an incomplete run's
 * "# incomplete: <why>"), the header of channel names, then rows of numbers ("%.17g",
 * nan and inf as printf writes them). joinery's CSV carries no units: the model knows the
 * units of its inputs only, so a CSV's columns have none. The HDF5 loader reads the table
 * jy_sim_write_hdf5 writes, with the units it knows (t, energies, powers, inputs). */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "plot_table.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/types.h>

#include <joinery/joinery.h>

void plot_table_free(PlotTable *t) {
  if (!t) return;
  for (int k = 0; k < t->ncols; k++) {
    if (t->names) free(t->names[k]);
    if (t->units) free(t->units[k]);
    if (t->values) free(t->values[k]);
  }
  free(t->names);
  free(t->units);
  free(t->values);
  free(t->incomplete);
  *t = (PlotTable){0};
}

static char *copy_text(const char *s, size_t n) {
  char *c = malloc(n + 1);
  if (c) {
    memcpy(c, s, n);
    c[n] = '\0';
  }
  return c;
}

/* Drops the line's end ("\n" or "\r\n"). */
static void chop(char *line, ssize_t *n) {
  while (*n > 0 && (line[*n - 1] == '\n' || line[*n - 1] == '\r')) line[--*n] = '\0';
}

/* The header's names into t (the columns' count, names, no units). */
static int read_header(const char *path, const char *line, PlotTable *t, char *err, size_t len) {
  int n = 1;
  for (const char *c = line; *c; c++) n += *c == ',';
  t->names = calloc((size_t)n, sizeof *t->names);
  t->units = calloc((size_t)n, sizeof *t->units);
  t->values = calloc((size_t)n, sizeof *t->values);
  if (!t->names || !t->units || !t->values) {
    snprintf(err, len, "out of memory reading '%s'", path);
    return -1;
  }
  t->ncols = n;
  const char *s = line;
  for (int k = 0; k < n; k++) {
    size_t w = strcspn(s, ",");
    if (w == 0) {
      snprintf(err, len, "'%s': column %d of the header has no name (is it joinery's CSV?)", path,
               k + 1);
      return -1;
    }
    if (!(t->names[k] = copy_text(s, w))) {
      snprintf(err, len, "out of memory reading '%s'", path);
      return -1;
    }
    s += w + (s[w] == ',');
  }
  return 0;
}

/* Appends one data row (line `lineno`) to the wanted columns, growing them to *cap. */
static int read_row(const char *path, long lineno, const char *line, PlotTable *t, const char *want,
                    long *cap, char *err, size_t len) {
  if (t->nrows == *cap) {
    long grown = *cap ? 2 * *cap : 1024;
    for (int k = 0; k < t->ncols; k++) {
      if (!want[k]) continue;
      double *v = realloc(t->values[k], (size_t)grown * sizeof *v);
      if (!v) {
        snprintf(err, len, "out of memory reading '%s' (%ld rows)", path, t->nrows);
        return -1;
      }
      t->values[k] = v;
    }
    *cap = grown;
  }
  const char *s = line;
  for (int k = 0; k < t->ncols; k++) {
    if (k > 0 && *s++ != ',') {
      snprintf(err, len, "'%s' line %ld: %d fields where the header names %d", path, lineno, k,
               t->ncols);
      return -1;
    }
    size_t w = strcspn(s, ",");
    if (want[k]) {
      char *end = NULL;
      double x = strtod(s, &end);
      if (w == 0 || end != s + w) {
        snprintf(err, len, "'%s' line %ld: '%.*s' in column '%s' is not a number", path, lineno,
                 (int)(w > 40 ? 40 : w), s, t->names[k]);
        return -1;
      }
      t->values[k][t->nrows] = x;
    }
    s += w;
  }
  if (*s) {
    snprintf(err, len, "'%s' line %ld: more fields than the header's %d", path, lineno, t->ncols);
    return -1;
  }
  t->nrows++;
  return 0;
}

static int load_csv(const char *path, PlotTable *t, PlotChoose choose, void *ud, char *err,
                    size_t len) {
  FILE *f = fopen(path, "r");
  if (!f) {
    snprintf(err, len, "cannot read '%s': %s", path, strerror(errno));
    return -1;
  }
  char *line = NULL, *want = NULL;
  size_t line_cap = 0;
  long lineno = 0, cap = 0;
  ssize_t n;
  int rc = -1;
  while ((n = getline(&line, &line_cap, f)) >= 0) { /* comments, then the header */
    lineno++;
    chop(line, &n);
    if (line[0] != '#') break;
    if (!t->incomplete && strncmp(line, "# incomplete: ", 14) == 0 &&
        !(t->incomplete = copy_text(line + 14, strlen(line + 14)))) {
      snprintf(err, len, "out of memory reading '%s'", path);
      goto done;
    }
  }
  if (n < 0) {
    snprintf(err, len, "'%s' has no header line of channel names%s", path,
             ferror(f) ? " (read error)" : "");
    goto done;
  }
  if (read_header(path, line, t, err, len) != 0) goto done;
  if (!(want = calloc((size_t)t->ncols, 1))) {
    snprintf(err, len, "out of memory reading '%s'", path);
    goto done;
  }
  if (choose(ud, t, want, err, len) != 0) goto done;
  while ((n = getline(&line, &line_cap, f)) >= 0) {
    lineno++;
    chop(line, &n);
    if (n == 0 || line[0] == '#') continue;
    if (read_row(path, lineno, line, t, want, &cap, err, len) != 0) goto done;
  }
  if (ferror(f)) {
    snprintf(err, len, "cannot read '%s' (line %ld): %s", path, lineno + 1, strerror(errno));
    goto done;
  }
  rc = 0;
done:
  free(line);
  free(want);
  fclose(f);
  return rc;
}

/* An HDF5 table (engine: jy_result_*): names, units ("" is none) and the incomplete mark
 * first, then only the chosen columns, each read alone (its own chunks). */
static int load_h5(const char *path, PlotTable *t, PlotChoose choose, void *ud, char *err,
                   size_t len) {
  jyResultFile *f = jy_result_open(path, err, len);
  if (!f) return -1;
  int n = jy_result_num_columns(f), rc = -1;
  char *want = calloc((size_t)n, 1);
  t->names = calloc((size_t)n, sizeof *t->names);
  t->units = calloc((size_t)n, sizeof *t->units);
  t->values = calloc((size_t)n, sizeof *t->values);
  if (!want || !t->names || !t->units || !t->values) goto nomem;
  t->ncols = n;
  t->nrows = jy_result_num_rows(f);
  for (int k = 0; k < n; k++) {
    const char *name = jy_result_column_name(f, k), *unit = jy_result_column_unit(f, k);
    if (!(t->names[k] = copy_text(name, strlen(name)))) goto nomem;
    if (*unit && !(t->units[k] = copy_text(unit, strlen(unit)))) goto nomem;
  }
  const char *why = jy_result_incomplete(f);
  if (why && !(t->incomplete = copy_text(why, strlen(why)))) goto nomem;
  if (choose(ud, t, want, err, len) != 0) goto done;
  for (int k = 0; k < n; k++) {
    if (!want[k]) continue;
    if (!(t->values[k] = malloc((size_t)(t->nrows ? t->nrows : 1) * sizeof(double)))) goto nomem;
    if (jy_result_read_column(f, k, t->values[k]) != JY_OK) {
      snprintf(err, len, "'%s': %s", path, jy_result_error(f));
      goto done;
    }
  }
  rc = 0;
  goto done;
nomem:
  snprintf(err, len, "out of memory reading '%s'", path);
done:
  free(want);
  jy_result_close(f);
  return rc;
}

int plot_table_load(const char *path, PlotTable *t, PlotChoose choose, void *ud, char *err,
                    size_t len) {
  const char *dot = strrchr(path, '.');
  if (dot && (strcasecmp(dot, ".h5") == 0 || strcasecmp(dot, ".hdf5") == 0))
    return load_h5(path, t, choose, ud, err, len);
  return load_csv(path, t, choose, ud, err, len); /* any other name: read as CSV */
}
