/* CSV output: a header of channel names, then one row per output time. Written under a
 * temporary name of its own ("<path>.<pid>-<n>.partial", created exclusively beside the
 * output, so two runs with the same output never share it and the final rename stays
 * atomic) and renamed into place only after a successful run. A run that fails keeps its
 * rows in "<stem>.incomplete.csv" instead, whose first line is a comment
 * "# incomplete: <why>", and leaves a complete file of an earlier run where it is (an
 * interrupted rerun must not cost the last good result; the message says the file is the
 * earlier run's); a success removes an incomplete file an earlier run left. Temporary files
 * of processes that no longer run (killed before they could remove theirs) are removed by
 * the next run with the same output. An output that exists and is not a regular file (a
 * pipe, /dev/stdout, /dev/full) is written directly: it cannot be renamed onto. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "io_output.h"

typedef struct csv_sink {
  FILE *file;
  int failed;
  int write_errno; /* errno of the first failed write (later calls may change errno) */
  long rows;
  jyRowSink also;
  void *ud;
} csv_sink;

static void note_write(csv_sink *s, int bad) {
  if (bad && !s->failed) {
    s->failed = 1;
    s->write_errno = errno;
  }
}

/* A row's text is gathered in a chunk and handed to stdio a chunk at a time: an fwrite per
 * number (22 ns, measured) would add more than half of what formatting it costs (37 ns). */
static int write_row(void *ud, const double *row, int nchannels) {
  csv_sink *s = ud;
  char chunk[4096];
  size_t used = 0;
  for (int i = 0; i < nchannels && !s->failed; i++) {
    if (used + JY_NUMBER_LEN + 2 > sizeof chunk) {
      note_write(s, fwrite(chunk, 1, used, s->file) != used);
      used = 0;
    }
    if (i) chunk[used++] = ',';
    used += (size_t)jy_format_double(chunk + used, row[i]);
  }
  chunk[used++] = '\n';
  if (!s->failed) note_write(s, fwrite(chunk, 1, used, s->file) != used);
  if (!s->failed) s->rows++;
  if (!s->failed && s->also && s->also(s->ud, row, nchannels) != 0) return 1;
  return s->failed;
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

/* After a failed run: keeps the rows (or says why not) and says where they went at the end
 * of the simulation's message, and that a complete file at path is an earlier run's. */
static void after_failure(jySim *sim, const char *path, const char *tmp, const csv_sink *sink) {
  char kept[4096 + 64];
  int have_name = jy_out_incomplete_name(path, ".csv", kept, sizeof kept);
  int ok = have_name && keep_incomplete(tmp, kept, sim->error) == 0;
  jy_out_failure_note(sim, path, have_name ? kept : path, ok, sink->rows,
                      "first line '# incomplete: ...'");
}

/* The header line; the sink's write error is noted. */
static void write_header(csv_sink *sink, const jySim *sim) {
  const jyModel *m = sim->model;
  for (int k = 0; k < sim->ncols && !sink->failed; k++)
    note_write(sink, fprintf(sink->file, k ? ",%s" : "%s", m->channel_names[sim->cols[k]]) < 0);
  if (!sink->failed) note_write(sink, fputc('\n', sink->file) == EOF);
}

/* Runs into the open sink and closes it; a write or close error is JY_ERR_IO naming the
 * file, the time reached and the system's reason. */
static jyStatus run_into(jySim *sim, csv_sink *sink, const char *path) {
  write_header(sink, sim);
  jyStatus st = sink->failed ? JY_ERR_IO : jy_sim_run(sim, write_row, sink);
  if (fflush(sink->file) != 0) note_write(sink, 1);
  if (fclose(sink->file) != 0) note_write(sink, 1);
  if (sink->failed) {
    jy_set_error(sim->error, "cannot write output file '%s' (at t = %.9g, after %ld rows): %s",
                 path, sim->t, sink->rows, strerror(sink->write_errno));
    st = JY_ERR_IO;
  }
  return st;
}

jyStatus jy_sim_write_csv(jySim *sim, const char *path, jyRowSink also, void *ud) {
  if (!sim || !path || !*path) return JY_ERR_INVALID;
  jyStatus st = jy_sim_check_output_rows(sim);
  if (st != JY_OK) return st;
  csv_sink sink = {NULL, 0, 0, 0, also, ud};
  if (jy_out_is_special_file(path)) {
    sink.file = fopen(path, "w");
    if (!sink.file) {
      jy_set_error(sim->error, "cannot write output file '%s': %s", path, strerror(errno));
      return JY_ERR_IO;
    }
    return run_into(sim, &sink, path);
  }
  char tmp[4096];
  jy_out_other_partials(path, 1);
  int fd = jy_out_create_temp(sim, path, tmp, sizeof tmp);
  sink.file = fd < 0 ? NULL : fdopen(fd, "w");
  if (!sink.file) {
    int e = errno;
    if (fd >= 0) close(fd), remove(tmp);
    sim->out_identified = 0;
    jy_set_error(sim->error, "cannot write output file '%s': %s", path, strerror(e));
    return JY_ERR_IO;
  }
  st = run_into(sim, &sink, path);
  if (st != JY_OK && !sink.failed) after_failure(sim, path, tmp, &sink);
  return jy_out_finish(sim, path, tmp, ".csv", st);
}
