/* tests/engine/output_fixtures.h — what the output writers' tests (t_io_csv.c, t_io_hdf5.c)
 * share: a falling 1-D mass (x = 2 + t - g t^2 / 2, plus a held input "push" when asked), a
 * sink that keeps the rows it sees and may stop the run, and the count of temporary files.
 * Include after ROWS and MAX_CHANNELS are defined. */
#ifndef JY_TESTS_OUTPUT_FIXTURES_H
#define JY_TESTS_OUTPUT_FIXTURES_H

#include <dirent.h>
#include <string.h>
#include <unistd.h>

#include "stage_fixtures.h"
#include "tap.h"

static inline jyModel *falling_mass_with(jyEnv *env, int with_input) {
  jySystem *sys = jy_system_create(env);
  jy_system_set_gravity(sys, (double[3]){-9.81, 0, 0});
  jyPartId m = PART(sys, "mass", "m", {"dim", 1}, {"m", 2});
  jy_system_set_coord(sys, m, "x", 2);
  jy_system_set_velocity(sys, m, "x", 1);
  if (with_input) jy_system_add_input(sys, "push", 0.5, "N");
  jyModel *md = stage_compile(sys, 1);
  jy_system_destroy(sys);
  return md;
}

/* Files in dir whose name ends in ".partial" (a run's temporary file). */
static inline int partial_files(const char *dir) {
  DIR *d = opendir(dir);
  int count = 0;
  for (struct dirent *e; d && (e = readdir(d));) {
    size_t n = strlen(e->d_name);
    count += n > 8 && strcmp(e->d_name + n - 8, ".partial") == 0;
  }
  if (d) closedir(d);
  return count;
}

/* Rows a sink saw, and after how many it asks to stop (0: never). */
typedef struct rows_seen {
  double rows[ROWS][MAX_CHANNELS];
  int count, nchannels, stop_after;
} rows_seen;

static inline int keep_row(void *ud, const double *row, int nchannels) {
  rows_seen *seen = ud;
  if (seen->count < ROWS && nchannels <= MAX_CHANNELS)
    memcpy(seen->rows[seen->count], row, sizeof(double) * (size_t)nchannels);
  seen->nchannels = nchannels;
  seen->count++;
  return seen->stop_after > 0 && seen->count >= seen->stop_after;
}

static inline int exists(const char *path) { return access(path, F_OK) == 0; }

#endif
