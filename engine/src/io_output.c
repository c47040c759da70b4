/* The output files' common ground (io_output.h): a run writes under a temporary name of its
 * own ("<path>.<pid>-<n>.partial", created exclusively beside the output, so two runs with
 * the same output never share it and the final rename stays atomic); temporary files of
 * processes that no longer run (killed before they could remove theirs) are removed by the
 * next run with the same output; a failed run's rows go to "<stem>.incomplete<ext>" and its
 * error says so. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "io_output.h"

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

int jy_out_incomplete_name(const char *path, const char *ext, char *out, size_t len) {
  size_t n = strlen(path), e = strlen(ext);
  if (n > e && strcmp(path + n - e, ext) == 0) n -= e;
  return snprintf(out, len, "%.*s.incomplete%s", (int)n, path, ext) < (int)len;
}

void jy_out_failure_note(jySim *sim, const char *path, const char *kept, int kept_ok, long rows,
                         const char *marked) {
  char note[2 * (4096 + 64) + 512];
  struct stat st;
  int earlier = stat(path, &st) == 0;
  if (kept_ok)
    snprintf(note, sizeof note,
             "\n  the %ld output row%s before the failure %s in '%s' "
             "(%s); '%s' was not written%s",
             rows, rows == 1 ? "" : "s", rows == 1 ? "is" : "are", kept, marked, path,
             earlier ? " (the file of that name is an earlier run's, left as it was)" : "");
  else
    snprintf(note, sizeof note,
             "\n  the output rows before the failure could not be kept in "
             "'%s': %s%s",
             kept, strerror(errno),
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

/* A process id in use again keeps its file until that process ends: nothing live is
 * removed. */
int jy_out_other_partials(const char *path, int remove_stale) {
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

int jy_out_create_temp(jySim *sim, const char *path, char *tmp, size_t len) {
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  unsigned n = (unsigned)((uintptr_t)sim >> 4) ^ (unsigned)ts.tv_nsec;
  for (int attempt = 0; attempt < 100; attempt++, n = n * 1103515245u + 12345u) {
    if (snprintf(tmp, len, "%s.%ld-%08x.partial", path, (long)getpid(), n) >= (int)len) {
      errno = ENAMETOOLONG;
      return -1;
    }
    int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) return -1;
    struct stat written;
    sim->out_identified = fstat(fd, &written) == 0;
    sim->out_dev = (unsigned long long)written.st_dev;
    sim->out_ino = (unsigned long long)written.st_ino;
    return fd;
  }
  errno = EEXIST;
  return -1;
}

int jy_out_is_special_file(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && !S_ISREG(st.st_mode);
}

jyStatus jy_out_finish(jySim *sim, const char *path, const char *tmp, const char *ext,
                       jyStatus st) {
  if (st == JY_OK && rename(tmp, path) != 0) {
    jy_set_error(sim->error, "cannot move '%s' to '%s': %s", tmp, path, strerror(errno));
    st = JY_ERR_IO;
  }
  if (st == JY_OK) { /* an earlier failed run's rows would contradict this run's */
    char stale[4096 + 64];
    if (jy_out_incomplete_name(path, ext, stale, sizeof stale)) remove(stale);
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
  return jy_out_other_partials(path, 0) > 0 ? 3 : 0;
}
