/* tests/engine/t_io_hdf5.c — the HDF5 output stage and its reader alone (engine/src/io_hdf5.c:
 * jy_sim_write_hdf5, jy_result_*), on a falling 1-D mass with a held input "push" (unit "N")
 * reported every 0.25 s:
 *   - the reader gives back the table's names (the run's columns), units ("s" for t, "J" for
 *     the energies, the input's "N", "" for a coordinate) and every number bit for bit as a
 *     plain jy_sim_run reports it, by column and by rows; `also` sees each row;
 *   - the file's attributes hold the run's settings (method "bdf", t_end 1, every 1) and the
 *     model's report; a complete file has no "incomplete";
 *   - a run stopped by `also` leaves no file at the path (an earlier one stays as it was), a
 *     valid "<stem>.incomplete.h5" with the rows so far and the attribute "incomplete" (the
 *     sink's reason), and says where; the next good run removes it; no ".partial" is left;
 *   - a path in a missing directory: JY_ERR_IO naming it and the system's reason; a pipe or
 *     device (/dev/null): JY_ERR_IO saying HDF5 needs a regular file;
 *   - the reader refuses a missing file, a CSV and column or rows outside the table, naming
 *     the file;
 *   - built without HDF5 (jy_hdf5_available() == 0), both sides say so instead.
 * Every comparison is exact. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "sim.h"

#define ROWS 5          /* t = 0, 0.25, ..., 1 */
#define MAX_CHANNELS 32 /* the falling mass has 1 + 2 + 7 + 1 + 1 */

#include "output_fixtures.h"

static jyModel *falling_mass(jyEnv *env) { return falling_mass_with(env, 1); }

static jySim *new_sim(const jyModel *md) {
  jySimDef def = jy_default_sim_def();
  def.t_end = 1;
  def.dt_out = 0.25;
  def.method = JY_METHOD_BDF;
  def.columns = "*";
  jyStatus st;
  jySim *sim = jy_sim_create(md, &def, &st);
  if (sim && st != JY_OK) diag("sim: %s", jy_sim_error(sim));
  return sim && st == JY_OK ? sim : (jy_sim_destroy(sim), NULL);
}

/* Whether the file at path holds exactly `want`'s rows, read by column and by rows. */
static int same_table(const char *path, const jyModel *md, const rows_seen *want) {
  char error[512];
  jyResultFile *f = jy_result_open(path, error, sizeof error);
  if (!f) diag("%s", error);
  int nch = jy_model_num_channels(md);
  int same = f && jy_result_num_columns(f) == nch && jy_result_num_rows(f) == want->count;
  double column[ROWS], rows[ROWS * MAX_CHANNELS];
  for (int k = 0; same && k < nch; k++) {
    same = strcmp(jy_result_column_name(f, k), jy_model_channel_name(md, k)) == 0 &&
      jy_result_read_column(f, k, column) == JY_OK;
    for (int r = 0; same && r < want->count; r++)
      same = memcmp(&column[r], &want->rows[r][k], sizeof(double)) == 0;
  }
  same = same && jy_result_read_rows(f, 0, want->count, rows) == JY_OK;
  for (int r = 0; same && r < want->count; r++)
    same = memcmp(rows + r * nch, want->rows[r], sizeof(double) * (size_t)nch) == 0;
  jy_result_close(f);
  return same;
}

static void check_complete(const jyModel *md, const char *path) {
  rows_seen ref = {.count = 0}, also = {.count = 0};
  jySim *sim = new_sim(md);
  jyStatus st = sim ? jy_sim_run(sim, keep_row, &ref) : JY_ERR_NOMEM;
  jy_sim_destroy(sim);
  sim = new_sim(md);
  st = st == JY_OK && sim ? jy_sim_write_hdf5(sim, path, keep_row, &also) : JY_ERR_NOMEM;
  if (!ok(st == JY_OK && ref.count == ROWS, "written to %s", path))
    diag("%s", sim ? jy_sim_error(sim) : "no sim");
  jy_sim_destroy(sim);
  ok(also.count == ROWS && memcmp(also.rows, ref.rows, sizeof ref.rows) == 0,
     "`also` saw every row as a plain run reports it");
  ok(same_table(path, md, &ref),
     "the reader gives back the names and every number bit for bit, by column and by rows");

  char error[512];
  jyResultFile *f = jy_result_open(path, error, sizeof error);
  int t = jy_result_find_column(f, "t"), energy = jy_result_find_column(f, "energy");
  int push = jy_result_find_column(f, "input.push"), x = jy_result_find_column(f, "m.x");
  ok(t == 0 && energy > 0 && push > 0 && x > 0 && strcmp(jy_result_column_unit(f, t), "s") == 0 &&
       strcmp(jy_result_column_unit(f, energy), "J") == 0 &&
       strcmp(jy_result_column_unit(f, push), "N") == 0 &&
       strcmp(jy_result_column_unit(f, x), "") == 0 && jy_result_column_unit(f, 99) == NULL,
     "units: t s, energy J, input.push N, m.x unknown (\"\")");
  const char *method = jy_result_attribute(f, "method");
  ok(method && strcmp(method, "bdf") == 0, "attribute method = bdf (got %s)", method);
  const char *t_end = jy_result_attribute(f, "t_end");
  ok(t_end && strcmp(t_end, "1") == 0, "attribute t_end = 1 (got %s)", t_end);
  const char *every = jy_result_attribute(f, "every");
  ok(every && strcmp(every, "1") == 0, "attribute every = 1 (got %s)", every);
  const char *report = jy_result_attribute(f, "report");
  ok(report && strcmp(report, jy_model_report(md)) == 0, "attribute report = the model's report");
  ok(f && jy_result_incomplete(f) == NULL && jy_result_attribute(f, "nothing") == NULL,
     "a complete file: no 'incomplete'; a missing attribute is NULL");
  ok(jy_result_read_column(f, -1, (double[ROWS]){0}) == JY_ERR_INVALID &&
       jy_result_read_column(f, MAX_CHANNELS + 1, (double[ROWS]){0}) == JY_ERR_INVALID &&
       jy_result_read_rows(f, 3, 3, (double[3 * MAX_CHANNELS]){0}) == JY_ERR_INVALID &&
       jy_result_read_rows(f, -1, 1, (double[MAX_CHANNELS]){0}) == JY_ERR_INVALID,
     "a column or rows outside the table: JY_ERR_INVALID");
  jy_result_close(f);
}

static void check_stopped(const jyModel *md, const char *path, const char *kept) {
  rows_seen also = {.stop_after = 2};
  jySim *sim = new_sim(md);
  jyStatus st = sim ? jy_sim_write_hdf5(sim, path, keep_row, &also) : JY_ERR_NOMEM;
  ok(st == JY_ERR_IO, "a run stopped by `also` after 2 rows: JY_ERR_IO");
  SAYS(sim ? jy_sim_error(sim) : NULL, "... saying why, where the rows went and whose the file is",
       "stopped by the output sink", "the 2 output rows before the failure are in", kept,
       "marked by the file attribute 'incomplete'",
       "(the file of that name is an earlier run's, left as it was)");
  jy_sim_destroy(sim);
  ok(exists(path), "the earlier complete file at %s is left as it was", path);
  also.count = 2;
  ok(same_table(kept, md, &also), "%s: a valid file with the 2 rows so far", kept);
  jyResultFile *f = jy_result_open(kept, NULL, 0);
  const char *why = jy_result_incomplete(f);
  ok(why && strncmp(why, "stopped by the output sink at t = ", 34) == 0,
     "... marked incomplete: '%s'", why ? why : "(none)");
  jy_result_close(f);
}

static void check_bad_paths(const jyModel *md, const char *dir) {
  char path[512];
  snprintf(path, sizeof path, "%s/missing/out.h5", dir);
  jySim *sim = new_sim(md);
  jyStatus st = sim ? jy_sim_write_hdf5(sim, path, NULL, NULL) : JY_ERR_NOMEM;
  ok(st == JY_ERR_IO, "a path in a missing directory: JY_ERR_IO");
  SAYS(sim ? jy_sim_error(sim) : NULL, "... naming it and the reason", "cannot write output file",
       path, "No such file or directory");
  jy_sim_destroy(sim);
  sim = new_sim(md);
  st = sim ? jy_sim_write_hdf5(sim, "/dev/null", NULL, NULL) : JY_ERR_NOMEM;
  ok(st == JY_ERR_IO, "/dev/null: JY_ERR_IO");
  SAYS(sim ? jy_sim_error(sim) : NULL, "... saying HDF5 needs a regular file", "'/dev/null'",
       "HDF5 output needs a regular file");
  jy_sim_destroy(sim);

  char error[512];
  ok(jy_result_open(path, error, sizeof error) == NULL && strstr(error, path) &&
       strstr(error, "No such file or directory"),
     "reading a missing file: NULL, naming it: %s", error);
  snprintf(path, sizeof path, "%s/table.csv", dir);
  FILE *csv = fopen(path, "w");
  if (csv) fputs("t,x\n0,1\n", csv), fclose(csv);
  ok(jy_result_open(path, error, sizeof error) == NULL && strstr(error, path) &&
       strstr(error, "as HDF5"),
     "reading a CSV: NULL, naming it: %s", error);
  remove(path);
}

int main(void) {
  jyEnv *env = stage_env();
  jyModel *md = env ? falling_mass(env) : NULL;
  char dir[] = "/tmp/joinery-t_io_hdf5-XXXXXX";
  if (!md || !mkdtemp(dir) || jy_model_num_channels(md) > MAX_CHANNELS) {
    plan(1);
    ok(0, "a model and a temporary directory");
    return done();
  }
  char path[256], kept[256];
  snprintf(path, sizeof path, "%s/out.h5", dir);
  snprintf(kept, sizeof kept, "%s/out.incomplete.h5", dir);
  if (!jy_hdf5_available()) { /* the build without HDF5: a clear error both ways */
    plan(2);
    jySim *sim = new_sim(md);
    ok(sim && jy_sim_write_hdf5(sim, path, NULL, NULL) == JY_ERR_INVALID &&
         strstr(jy_sim_error(sim), "built without HDF5") && !exists(path),
       "without HDF5: JY_ERR_INVALID saying so, no file");
    jy_sim_destroy(sim);
    char error[512];
    ok(jy_result_open(path, error, sizeof error) == NULL && strstr(error, "built without HDF5"),
       "the reader says so too");
  } else {
    plan(32);
    check_complete(md, path);
    check_stopped(md, path, kept);
    check_complete(md, path);
    ok(exists(path) && !exists(kept) && partial_files(dir) == 0,
       "a good run removes the stale incomplete file; no .partial is left");
    check_bad_paths(md, dir);
  }
  remove(path);
  remove(kept);
  rmdir(dir);
  jy_model_destroy(md);
  jy_env_destroy(env);
  return done();
}
