/* CSV output: a header of channel names, then one row per output time. Written under a
 * temporary name and renamed into place only after a successful run. A run that fails
 * keeps its rows in "<stem>.incomplete.csv" instead, whose first line is a comment
 * "# incomplete: <why>"; the complete name is then never left behind (an earlier file of
 * that name is removed, so it cannot pass for this run's), and a success removes an
 * incomplete file an earlier run left. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sim.h"

typedef struct csv_sink {
  FILE *file;
  int failed;
  long rows;
  jyRowSink also;
  void *ud;
} csv_sink;

static int write_row(void *ud, const double *row, int nchannels) {
  csv_sink *s = ud;
  for (int i = 0; i < nchannels; i++)
    if (fprintf(s->file, i ? ",%.17g" : "%.17g", row[i]) < 0) s->failed = 1;
  if (fputc('\n', s->file) == EOF) s->failed = 1;
  if (!s->failed) s->rows++;
  if (!s->failed && s->also && s->also(s->ud, row, nchannels) != 0) return 1;
  return s->failed;
}

/* "<stem>.incomplete.csv" for "<stem>.csv", else "<path>.incomplete.csv". */
static int incomplete_name(const char *path, char *out, size_t len) {
  size_t n = strlen(path);
  if (n > 4 && strcmp(path + n - 4, ".csv") == 0) n -= 4;
  return snprintf(out, len, "%.*s.incomplete.csv", (int)n, path) < (int)len;
}

/* Copies the rows written to `tmp` into `dest` after the line "# incomplete: <why>" (the
 * message on one line). Returns 0 on success. */
static int keep_incomplete(const char *tmp, const char *dest, const char *why) {
  FILE *in = fopen(tmp, "r");
  if (!in) return -1;
  FILE *out = fopen(dest, "w");
  if (!out) {
    fclose(in);
    return -1;
  }
  int bad = fputs("# incomplete: ", out) == EOF;
  for (const char *c = why; *c && !bad; c++)
    if (*c == '\n') { /* the message's continuation lines "\n  ..." become "; ..." */
      while (c[1] == ' ') c++;
      bad = fputs("; ", out) == EOF;
    } else {
      bad = fputc(*c, out) == EOF;
    }
  if (!bad) bad = fputc('\n', out) == EOF;
  char buf[1 << 14];
  size_t got;
  while (!bad && (got = fread(buf, 1, sizeof buf, in)) > 0) bad = fwrite(buf, 1, got, out) != got;
  bad |= ferror(in);
  fclose(in);
  bad |= fclose(out) != 0;
  if (bad) remove(dest);
  return bad ? -1 : 0;
}

/* After a failed run: keeps the rows (or says why not) and removes any complete file of
 * an earlier run; says both at the end of the simulation's message. */
static void after_failure(jySim *sim, const char *path, const char *tmp, const csv_sink *sink) {
  char kept[4096 + 64], note[2 * (4096 + 64) + 512];
  int have_name = incomplete_name(path, kept, sizeof kept);
  int earlier = remove(path) == 0;
  if (have_name && keep_incomplete(tmp, kept, sim->error) == 0)
    snprintf(note, sizeof note,
             "\n  the %ld output row%s before the failure %s in '%s' "
             "(first line '# incomplete: ...'); '%s' was not written%s",
             sink->rows, sink->rows == 1 ? "" : "s", sink->rows == 1 ? "is" : "are", kept, path,
             earlier ? " (an earlier file of that name was removed)" : "");
  else
    snprintf(note, sizeof note,
             "\n  the output rows before the failure could not be kept in "
             "'%s': %s%s",
             have_name ? kept : path, strerror(errno),
             earlier ? "; an earlier file of that name was removed" : "");
  /* The note matters more than the message's tail: cut the tail to make room. */
  size_t size = sizeof sim->error, used = strlen(sim->error), need = strlen(note);
  if (need >= size) need = size - 1;
  if (used + need >= size) {
    used = size - 1 - need;
    if (used >= 3) memcpy(sim->error + used - 3, "...", 3);
  }
  memcpy(sim->error + used, note, need);
  sim->error[used + need] = '\0';
}

jyStatus jy_sim_write_csv(jySim *sim, const char *path, jyRowSink also, void *ud) {
  if (!sim || !path || !*path) return JY_ERR_INVALID;
  const jyModel *m = sim->model;
  char tmp[4096];
  if (snprintf(tmp, sizeof tmp, "%s.partial", path) >= (int)sizeof tmp) {
    jy_set_error(sim->error, "output path too long: %s", path);
    return JY_ERR_IO;
  }
  csv_sink sink = {fopen(tmp, "w"), 0, 0, also, ud};
  if (!sink.file) {
    jy_set_error(sim->error, "cannot write output file '%s': %s", path, strerror(errno));
    return JY_ERR_IO;
  }
  for (int i = 0; i < m->nchannels; i++)
    if (fprintf(sink.file, i ? ",%s" : "%s", m->channel_names[i]) < 0) sink.failed = 1;
  fputc('\n', sink.file);
  jyStatus st = sink.failed ? JY_ERR_IO : jy_sim_run(sim, write_row, &sink);
  int close_failed = fclose(sink.file) != 0;
  if ((st == JY_OK || sink.failed) && (sink.failed || close_failed)) {
    jy_set_error(sim->error, "error writing output file '%s': %s", path, strerror(errno));
    st = JY_ERR_IO;
  } else if (st != JY_OK) {
    after_failure(sim, path, tmp, &sink);
  }
  if (st == JY_OK && rename(tmp, path) != 0) {
    jy_set_error(sim->error, "cannot move '%s' to '%s': %s", tmp, path, strerror(errno));
    st = JY_ERR_IO;
  }
  if (st == JY_OK) { /* an earlier failed run's rows would contradict this run's */
    char stale[4096 + 64];
    if (incomplete_name(path, stale, sizeof stale)) remove(stale);
  }
  if (st != JY_OK) remove(tmp);
  return st;
}
