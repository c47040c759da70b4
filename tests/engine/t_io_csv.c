/* tests/engine/t_io_csv.c — the CSV output stage alone (engine/src/io_csv.c:
 * jy_sim_write_csv), on a falling 1-D mass (x = 2 + t - g t^2 / 2) reported every 0.25 s:
 *   - the header is the model's channel names; one row per output time, each with every
 *     channel; each number reads back bit for bit as the value a plain jy_sim_run reports
 *     (%.17g round-trips a double), and x follows the closed form;
 *   - `also` sees each row as it is written;
 *   - a run stopped by `also` writes no file at the path (an earlier one stays as it was) and
 *     keeps its rows in "<stem>.incomplete.csv" after a "# incomplete: <why>" line (the
 *     sink's own reason when it gave one: jy_sim_set_stop_reason), and says where; the next
 *     successful run removes that file; no temporary "*.partial" is ever left, and a dead
 *     process's is removed by the next run (a live one's is not);
 *   - jy_sim_output_replaced tells a file still the run's from one replaced, removed or
 *     about to be replaced by a concurrent run;
 *   - a dt_out that would give more than JY_MAX_OUTPUT_ROWS rows: JY_ERR_INVALID with the
 *     estimate before anything is written (1e-300 once overflowed the row count: "0 rows");
 *   - an unwritable path: JY_ERR_IO naming the path and the system's reason; an empty one:
 *     JY_ERR_INVALID.
 * Tolerance: x against the closed form within 1e-9: BDF at its default rtol 1e-11 over 1 s on
 * values of order 2 accumulates a global error measured at 6e-11 (no BLAS kernel enters a
 * one-coordinate solve), so 1e-9 is a margin of 16; a wrong column or time is off by 0.1 or
 * more. Every other comparison is exact. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sim.h"

#define ROWS 5               /* t = 0, 0.25, ..., 1 */
#define MAX_CHANNELS 32      /* the falling mass has 1 + 2 + 7 + 1 */
#define CLOSED_FORM_TOL 1e-9 /* see the head comment */

#include "output_fixtures.h"

static jyModel *falling_mass(jyEnv *env) { return falling_mass_with(env, 0); }

static jySim *new_sim_every(const jyModel *md, double dt_out) {
  jySimDef def = jy_default_sim_def();
  def.t_end = 1;
  def.dt_out = dt_out;
  jyStatus st;
  jySim *sim = jy_sim_create(md, &def, &st);
  if (sim && st != JY_OK) diag("sim: %s", jy_sim_error(sim));
  return sim && st == JY_OK ? sim : (jy_sim_destroy(sim), NULL);
}

static jySim *new_sim(const jyModel *md) { return new_sim_every(md, 0.25); }

/* Copies text into out (len bytes), cut to fit. */
static void copy_text(char *out, size_t len, const char *text) {
  size_t n = strlen(text);
  if (n >= len) n = len - 1;
  memcpy(out, text, n);
  out[n] = '\0';
}

/* Reads a CSV: its first line into `first` (without the newline), then rows of numbers.
 * Returns the rows read, or -1 when a line has another number of fields than `fields`. */
static int read_csv(const char *path, char *first, size_t len, double rows[][MAX_CHANNELS],
                    int max_rows, int fields, char *header, size_t header_len) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  static char line[1 << 14];
  int count = 0, bad = 0;
  for (int lineno = 0; fgets(line, sizeof line, f); lineno++) {
    line[strcspn(line, "\n")] = '\0';
    if (lineno == 0) copy_text(first, len, line);
    if (line[0] == '#' || (lineno == 0 && header == NULL)) continue;
    if (header && !header[0]) { /* the header line */
      copy_text(header, header_len, line);
      continue;
    }
    char *at = line, *end;
    for (int k = 0; k < fields; k++) {
      double x = strtod(at, &end);
      bad |= end == at || (k + 1 < fields ? *end != ',' : *end != '\0');
      if (count < max_rows) rows[count][k] = x;
      at = end + 1;
    }
    count++;
  }
  fclose(f);
  return bad ? -1 : count;
}

/* The header the model must have: its channel names joined by commas. */
static void expected_header(const jyModel *md, char *out, size_t len) {
  out[0] = '\0';
  for (int i = 0; i < jy_model_num_channels(md); i++) {
    size_t used = strlen(out);
    snprintf(out + used, len - used, "%s%s", i ? "," : "", jy_model_channel_name(md, i));
  }
}

/* A complete run: header, rows, values bit for bit, the closed form. */
static void check_complete(const jyModel *md, const char *path) {
  rows_seen ref = {.count = 0}, also = {.count = 0};
  jySim *sim = new_sim(md);
  jyStatus st = sim ? jy_sim_run(sim, keep_row, &ref) : JY_ERR_NOMEM;
  jy_sim_destroy(sim);
  ok(st == JY_OK && ref.count == ROWS, "a plain run reports %d rows", ROWS);
  sim = new_sim(md);
  st = sim ? jy_sim_write_csv(sim, path, keep_row, &also) : JY_ERR_NOMEM;
  if (!ok(st == JY_OK, "written to %s", path)) diag("%s", sim ? jy_sim_error(sim) : "no sim");
  jy_sim_destroy(sim);
  int nch = jy_model_num_channels(md);
  static double rows[ROWS + 1][MAX_CHANNELS];
  char first[4096], header[4096] = "", want[4096];
  int count = read_csv(path, first, sizeof first, rows, ROWS + 1, nch, header, sizeof header);
  expected_header(md, want, sizeof want);
  ok(strcmp(header, want) == 0, "the header is the channel names: %s", want);
  ok(count == ROWS, "%d rows of %d numbers each (read %d)", ROWS, nch, count);
  int same = count == ROWS && also.count == ROWS, x = jy_model_find_channel(md, "m.x");
  for (int r = 0; r < ROWS && same; r++)
    same = memcmp(rows[r], ref.rows[r], sizeof(double) * (size_t)nch) == 0 &&
      memcmp(also.rows[r], ref.rows[r], sizeof(double) * (size_t)nch) == 0;
  ok(same, "every number reads back bit for bit as reported; `also` saw the same rows");
  double worst = 0;
  for (int r = 0; r < count && r < ROWS && x > 0; r++) {
    double t = rows[r][0];
    worst = fmax(worst, fabs(t - 0.25 * r) + fabs(rows[r][x] - (2 + t - 9.81 / 2 * t * t)));
  }
  is_near(x > 0 ? worst : NAN, 0, CLOSED_FORM_TOL, "t = 0.25 k and x = 2 + t - g t^2 / 2");
}

/* A run `also` stops after two rows: nothing at the path, the rows kept aside. */
static void check_stopped(const jyModel *md, const char *path, const char *kept) {
  rows_seen also = {.stop_after = 2};
  jySim *sim = new_sim(md);
  jyStatus st = sim ? jy_sim_write_csv(sim, path, keep_row, &also) : JY_ERR_NOMEM;
  ok(st == JY_ERR_IO, "a run stopped by `also` after 2 rows: JY_ERR_IO");
  SAYS(sim ? jy_sim_error(sim) : NULL, "... saying why, where the rows went and whose the file is",
       "stopped by the output sink", "the 2 output rows before the failure are in", kept,
       "(the file of that name is an earlier run's, left as it was)");
  jy_sim_destroy(sim);
  ok(exists(path), "the earlier complete file at %s is left as it was", path);
  static double rows[ROWS][MAX_CHANNELS];
  char first[4096], header[4096] = "";
  int count = read_csv(kept, first, sizeof first, rows, ROWS, jy_model_num_channels(md), header,
                       sizeof header);
  ok(strncmp(first, "# incomplete: stopped by the output sink", 40) == 0 && header[0] == 't' &&
       count == 2,
     "%s: '# incomplete: ...', the header, 2 rows", kept);
}

/* A sink that stops at its first row and says why. */
static int stop_with_reason(void *ud, const double *row, int nchannels) {
  (void)row;
  (void)nchannels;
  jy_sim_set_stop_reason(ud, "interrupted by SIGINT");
  return 1;
}

/* The sink's reason heads the incomplete file; the earlier complete file stays. */
static void check_stop_reason(const jyModel *md, const char *path, const char *kept) {
  jySim *sim = new_sim(md);
  jyStatus st = sim ? jy_sim_write_csv(sim, path, stop_with_reason, sim) : JY_ERR_NOMEM;
  char first[4096] = "", header[4096];
  static double rows[ROWS][MAX_CHANNELS];
  read_csv(kept, first, sizeof first, rows, ROWS, jy_model_num_channels(md), header, sizeof header);
  ok(st == JY_ERR_IO && strstr(jy_sim_error(sim), "interrupted by SIGINT at t = 0") &&
       strncmp(first, "# incomplete: interrupted by SIGINT at t = 0", 44) == 0 && exists(path),
     "a sink's reason (jy_sim_set_stop_reason) heads the message and the incomplete file: %s",
     first);
  jy_sim_destroy(sim);
  remove(kept);
}

/* The process id of a process that has ended (a child reaped), or -1. */
static long dead_pid(void) {
  pid_t child = fork();
  if (child == 0) _exit(0);
  if (child < 0 || waitpid(child, NULL, 0) != child) return -1;
  return (long)child;
}

static void touch(const char *path) {
  FILE *f = fopen(path, "w");
  if (f) fclose(f);
}

/* A run removes a dead process's temporary file beside its output, never a live one's;
 * jy_sim_output_replaced says what became of the file a run wrote. */
static void check_partials_and_replacement(const jyModel *md, const char *dir, const char *path) {
  char dead[512], live[512], other[512];
  snprintf(dead, sizeof dead, "%s.%ld-0badcafe.partial", path, dead_pid());
  snprintf(live, sizeof live, "%s.%ld-0badcafe.partial", path, (long)getppid());
  snprintf(other, sizeof other, "%s/other.csv", dir);
  touch(dead);
  touch(live);
  jySim *sim = new_sim(md);
  jyStatus st = sim ? jy_sim_write_csv(sim, path, NULL, NULL) : JY_ERR_NOMEM;
  ok(st == JY_OK && !exists(dead) && exists(live),
     "a run removes the .partial of a process that has ended, not that of one running");
  int live_writer = jy_sim_output_replaced(sim, path);
  remove(live);
  int current = jy_sim_output_replaced(sim, path);
  touch(other);
  int replaced = rename(other, path) == 0 ? jy_sim_output_replaced(sim, path) : -9;
  remove(path);
  int removed = jy_sim_output_replaced(sim, path);
  ok(live_writer == 3 && current == 0 && replaced == 1 && removed == 2,
     "jy_sim_output_replaced: 3 while another process writes the same path, 0 once not, "
     "1 replaced, 2 removed (got %d %d %d %d)",
     live_writer, current, replaced, removed);
  jy_sim_destroy(sim);
}

/* More rows than a run writes: refused before anything is written. */
static void check_too_many_rows(const jyModel *md, const char *dir, const char *path) {
  jySim *sim = new_sim_every(md, 1e-300);
  jyStatus st = sim ? jy_sim_write_csv(sim, path, NULL, NULL) : JY_ERR_NOMEM;
  ok(st == JY_ERR_INVALID && !exists(path) && partial_files(dir) == 0,
     "dt_out = 1e-300: JY_ERR_INVALID, nothing written");
  SAYS(sim ? jy_sim_error(sim) : NULL, "... with the estimate and the limit",
       "would give 1e+300 output rows", "more than the limit of 1e+08", "dt_out larger than");
  jy_sim_destroy(sim);
}

static void check_bad_paths(const jyModel *md, const char *dir) {
  char path[4096];
  snprintf(path, sizeof path, "%s/no/such/dir/out.csv", dir);
  jySim *sim = new_sim(md);
  jyStatus st = sim ? jy_sim_write_csv(sim, path, NULL, NULL) : JY_ERR_NOMEM;
  ok(st == JY_ERR_IO, "a path in a missing directory: JY_ERR_IO");
  SAYS(sim ? jy_sim_error(sim) : NULL, "... naming the path and the reason",
       "cannot write output file", path, strerror(ENOENT));
  ok(sim && jy_sim_write_csv(sim, "", NULL, NULL) == JY_ERR_INVALID &&
       jy_sim_write_csv(NULL, path, NULL, NULL) == JY_ERR_INVALID,
     "an empty path or no simulation: JY_ERR_INVALID");
  jy_sim_destroy(sim);
}

int main(void) {
  plan(26);
  jyEnv *env = stage_env();
  jyModel *md = env ? falling_mass(env) : NULL;
  char dir[] = "/tmp/joinery-t_io_csv-XXXXXX";
  if (!md || !mkdtemp(dir) || jy_model_num_channels(md) > MAX_CHANNELS) {
    ok(0, "a model and a temporary directory");
    return done();
  }
  char path[256], kept[256], other[256], other_kept[256];
  snprintf(path, sizeof path, "%s/out.csv", dir);
  snprintf(kept, sizeof kept, "%s/out.incomplete.csv", dir);
  check_complete(md, path);
  check_stopped(md, path, kept);
  check_stop_reason(md, path, kept);
  check_complete(md, path);
  ok(exists(path) && !exists(kept) && partial_files(dir) == 0,
     "a successful run removes the stale incomplete file; no .partial is left");
  /* A name without .csv keeps its rows in "<path>.incomplete.csv". */
  snprintf(other, sizeof other, "%s/out.dat", dir);
  snprintf(other_kept, sizeof other_kept, "%s/out.dat.incomplete.csv", dir);
  rows_seen also = {.stop_after = 1};
  jySim *sim = new_sim(md);
  ok(sim && jy_sim_write_csv(sim, other, keep_row, &also) == JY_ERR_IO && exists(other_kept) &&
       !exists(other),
     "out.dat stopped: rows kept in out.dat.incomplete.csv");
  jy_sim_destroy(sim);
  check_bad_paths(md, dir);
  check_partials_and_replacement(md, dir, path);
  remove(path);
  check_too_many_rows(md, dir, path);
  remove(other_kept);
  rmdir(dir);
  jy_model_destroy(md);
  jy_env_destroy(env);
  return done();
}
