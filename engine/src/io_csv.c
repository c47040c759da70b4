/* CSV output: a header of channel names, then one row per output time. Written under a
 * temporary name and renamed into place only after a successful run. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "sim.h"

typedef struct csv_sink {
  FILE *file;
  int failed;
  jyRowSink also;
  void *ud;
} csv_sink;

static int write_row(void *ud, const double *row, int nchannels) {
  csv_sink *s = ud;
  for (int i = 0; i < nchannels; i++)
    if (fprintf(s->file, i ? ",%.17g" : "%.17g", row[i]) < 0) s->failed = 1;
  if (fputc('\n', s->file) == EOF) s->failed = 1;
  if (!s->failed && s->also && s->also(s->ud, row, nchannels) != 0) return 1;
  return s->failed;
}

jyStatus jy_sim_write_csv(jySim *sim, const char *path, jyRowSink also, void *ud) {
  if (!sim || !path || !*path) return JY_ERR_INVALID;
  const jyModel *m = sim->model;
  char tmp[4096];
  if (snprintf(tmp, sizeof tmp, "%s.partial", path) >= (int)sizeof tmp) {
    jy_set_error(sim->error, "output path too long: %s", path);
    return JY_ERR_IO;
  }
  csv_sink sink = {fopen(tmp, "w"), 0, also, ud};
  if (!sink.file) {
    jy_set_error(sim->error, "cannot write output file '%s': %s", path,
             strerror(errno));
    return JY_ERR_IO;
  }
  for (int i = 0; i < m->nchannels; i++)
    if (fprintf(sink.file, i ? ",%s" : "%s", m->channel_names[i]) < 0) sink.failed = 1;
  fputc('\n', sink.file);
  jyStatus st = sink.failed ? JY_ERR_IO : jy_sim_run(sim, write_row, &sink);
  int close_failed = fclose(sink.file) != 0;
  if (st == JY_OK && (sink.failed || close_failed)) {
    jy_set_error(sim->error, "error writing output file '%s': %s", path,
             strerror(errno));
    st = JY_ERR_IO;
  }
  if (st == JY_OK && rename(tmp, path) != 0) {
    jy_set_error(sim->error, "cannot move '%s' to '%s': %s", tmp, path,
             strerror(errno));
    st = JY_ERR_IO;
  }
  if (st != JY_OK) remove(tmp);
  return st;
}
