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

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "sim.h"

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

/* After a failed run: keeps the rows (or says why not) and says where they went at the end
 * of the simulation's message, and that a complete file at path is an earlier run's. */
static void after_failure(jySim *sim, const char *path, const char *tmp, const csv_sink *sink) {
  char kept[4096 + 64], note[2 * (4096 + 64) + 512];
  int have_name = incomplete_name(path, kept, sizeof kept);
  struct stat st;
  int earlier = stat(path, &st) == 0;
  if (have_name && keep_incomplete(tmp, kept, sim->error) == 0)
    snprintf(note, sizeof note,
             "\n  the %ld output row%s before the failure %s in '%s' "
             "(first line '# incomplete: ...'); '%s' was not written%s",
             sink->rows, sink->rows == 1 ? "" : "s", sink->rows == 1 ? "is" : "are", kept, path,
             earlier ? " (the file of that name is an earlier run's, left as it was)" : "");
  else
    snprintf(note, sizeof note,
             "\n  the output rows before the failure could not be kept in "
             "'%s': %s%s",
             have_name ? kept : path, strerror(errno),
             earlier ? "; the file of that name is an earlier run's, left as it was" : "");
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

/* Looks at the "<path>.<pid>-<hex>.partial" files beside path of other processes: removes
 * those whose process no longer runs (a run killed by SIGKILL, or a power cut, could not
 * remove its own) when `remove_stale`; returns how many belong to processes that run. A
 * process id in use again keeps its file until that process ends: nothing live is removed. */
static int other_partials(const char *path, int remove_stale) {
  const char *slash = strrchr(path, '/');
  const char *base = slash ? slash + 1 : path;
  size_t dir_len = slash ? (size_t)(slash - path) + 1 : 0, base_len = strlen(base);
  char dir[4096], stale[4096 + 256];
  if (dir_len + 1 > sizeof dir || base_len == 0) return 0;
  memcpy(dir, path, dir_len);
  dir[dir_len] = '\0';
  DIR *d = opendir(dir_len ? dir : ".");
  if (!d) return 0;
  int live = 0;
  const struct dirent *entry;
  while ((entry = readdir(d)) != NULL) {
    const char *name = entry->d_name;
    if (strncmp(name, base, base_len) != 0 || name[base_len] != '.') continue;
    char *end;
    long pid = strtol(name + base_len + 1, &end, 10);
    unsigned tag;
    int used = 0;
    if (pid <= 0 || pid == (long)getpid() || end[0] != '-' || strlen(end + 1) != 16 ||
        sscanf(end + 1, "%8x.partial%n", &tag, &used) != 1 || used != 16)
      continue;
    if (kill((pid_t)pid, 0) == 0 || errno != ESRCH) {
      live++; /* running (or another user's) */
      continue;
    }
    if (remove_stale && snprintf(stale, sizeof stale, "%s%s", dir, name) < (int)sizeof stale)
      remove(stale);
  }
  closedir(d);
  return live;
}

/* Creates "<path>.<pid>-<n>.partial" exclusively (mode 0666 less the umask, as a plain
 * fopen would) and opens it; NULL with errno set when it cannot. */
static FILE *open_temp(const jySim *sim, const char *path, char *tmp, size_t len) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  unsigned n = (unsigned)((uintptr_t)sim >> 4) ^ (unsigned)ts.tv_nsec;
  for (int attempt = 0; attempt < 100; attempt++, n = n * 1103515245u + 12345u) {
    if (snprintf(tmp, len, "%s.%ld-%08x.partial", path, (long)getpid(), n) >= (int)len) {
      errno = ENAMETOOLONG;
      return NULL;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) return NULL;
    FILE *f = fdopen(fd, "w");
    if (!f) {
      int e = errno;
      close(fd);
      remove(tmp);
      errno = e;
    }
    return f;
  }
  errno = EEXIST;
  return NULL;
}

/* An output that exists and is not a regular file (a pipe, a terminal, /dev/full): written
 * in place, without a temporary name, and never removed. */
static int is_special_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && !S_ISREG(st.st_mode);
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
  if (is_special_file(path)) {
    sink.file = fopen(path, "w");
    if (!sink.file) {
      jy_set_error(sim->error, "cannot write output file '%s': %s", path, strerror(errno));
      return JY_ERR_IO;
    }
    return run_into(sim, &sink, path);
  }
  char tmp[4096];
  other_partials(path, 1);
  sink.file = open_temp(sim, path, tmp, sizeof tmp);
  if (!sink.file) {
    jy_set_error(sim->error, "cannot write output file '%s': %s", path, strerror(errno));
    return JY_ERR_IO;
  }
  struct stat written;
  sim->out_identified = fstat(fileno(sink.file), &written) == 0;
  sim->out_dev = (unsigned long long)written.st_dev;
  sim->out_ino = (unsigned long long)written.st_ino;
  st = run_into(sim, &sink, path);
  if (st != JY_OK && !sink.failed) after_failure(sim, path, tmp, &sink);
  if (st == JY_OK && rename(tmp, path) != 0) {
    jy_set_error(sim->error, "cannot move '%s' to '%s': %s", tmp, path, strerror(errno));
    st = JY_ERR_IO;
  }
  if (st == JY_OK) { /* an earlier failed run's rows would contradict this run's */
    char stale[4096 + 64];
    if (incomplete_name(path, stale, sizeof stale)) remove(stale);
  }
  if (st != JY_OK) remove(tmp);
  if (st != JY_OK) sim->out_identified = 0;
  return st;
}

int jy_sim_output_replaced(const jySim *sim, const char *path) {
  if (!sim || !path || !sim->out_identified) return -1;
  struct stat now;
  if (stat(path, &now) != 0) return 2;
  if ((unsigned long long)now.st_dev != sim->out_dev ||
      (unsigned long long)now.st_ino != sim->out_ino)
    return 1;
  return other_partials(path, 0) > 0 ? 3 : 0;
}
