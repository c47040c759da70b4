/* HDF5 output and its reader (joinery.h: jy_sim_write_hdf5, jy_result_*), through the serial
 * libhdf5. One 2-D dataset "/table" (rows x columns) rather than a dataset per channel: a
 * row arrives whole, so one buffer of whole rows goes out in one write, and a model of
 * 70,000 channels makes one dataset with one chunk index instead of 70,000 objects with a
 * chunk cache each; the chunks hold a block of rows of a few columns, so a reader of one
 * column still reads only that column's chunks. Written under the same temporary name and
 * renamed as the CSV (io_output.c); a failed run's file is closed properly, marked with the
 * root attribute "incomplete" and renamed to "<stem>.incomplete.h5". HDF5's own error
 * printing is off inside these calls (H5E_BEGIN_TRY: per thread in a thread-safe build); its
 * innermost message goes into ours. Built without HDF5, every call says so. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io_output.h"

#define TABLE_FORMAT "joinery table 1"
/* The row buffer: at most this many doubles (8 MB), at least one row; a chunk about this
 * many (512 KB: in HDF5's default 1 MB chunk cache, and large enough to compress well). */
#define BUFFER_DOUBLES (1 << 20)
#define CHUNK_DOUBLES (1 << 16)
#define DEFLATE_LEVEL 1 /* measured in bench/results/hdf5.md: higher costs time, saves little */

#ifdef JY_HAVE_HDF5

#include <hdf5.h>

/* The innermost message of HDF5's error stack (the most specific), or "unknown". */
static herr_t first_error(unsigned n, const H5E_error2_t *e, void *ud) {
  char *out = ud;
  if (n == 0) snprintf(out, 256, "%s", e->desc ? e->desc : "unknown");
  return 0;
}

static void hdf5_reason(char out[256]) {
  snprintf(out, 256, "unknown HDF5 error");
  H5Ewalk2(H5E_DEFAULT, H5E_WALK_UPWARD, first_error, out);
}

/* HDF5 clears its error stack at the start of every call: a failure's stack is set aside
 * while the objects are closed, and put back for hdf5_reason. */
static hid_t keep_errors(int bad) { return bad ? H5Eget_current_stack() : -1; }

static void put_back_errors(hid_t kept) {
  if (kept >= 0) H5Eset_current_stack(kept);
}

static hid_t string_type(void) {
  hid_t t = H5Tcopy(H5T_C_S1);
  if (t >= 0 && (H5Tset_size(t, H5T_VARIABLE) < 0 || H5Tset_cset(t, H5T_CSET_UTF8) < 0)) {
    H5Tclose(t);
    return -1;
  }
  return t;
}

/* An attribute of n strings (n < 0: a scalar string) on obj; 0 on success. */
static int put_strings(hid_t obj, const char *name, const char *const *v, int n) {
  hid_t t = string_type();
  hsize_t dim = n < 0 ? 1 : (hsize_t)n;
  hid_t space = n < 0 ? H5Screate(H5S_SCALAR) : H5Screate_simple(1, &dim, NULL);
  hid_t a = t < 0 || space < 0 ? -1 : H5Acreate2(obj, name, t, space, H5P_DEFAULT, H5P_DEFAULT);
  int bad = a < 0 || H5Awrite(a, t, v) < 0;
  hid_t kept = keep_errors(bad);
  if (a >= 0) H5Aclose(a);
  if (space >= 0) H5Sclose(space);
  if (t >= 0) H5Tclose(t);
  put_back_errors(kept);
  return bad ? -1 : 0;
}

static int put_string(hid_t obj, const char *name, const char *value) {
  return put_strings(obj, name, &value, -1);
}

static int put_number(hid_t obj, const char *name, hid_t type, const void *value) {
  hid_t space = H5Screate(H5S_SCALAR);
  hid_t a = space < 0 ? -1 : H5Acreate2(obj, name, type, space, H5P_DEFAULT, H5P_DEFAULT);
  int bad = a < 0 || H5Awrite(a, type, value) < 0;
  hid_t kept = keep_errors(bad);
  if (a >= 0) H5Aclose(a);
  if (space >= 0) H5Sclose(space);
  put_back_errors(kept);
  return bad ? -1 : 0;
}

/* A setting as an attribute: a choice by its name, a whole number as an integer. */
static int put_setting(hid_t obj, const jySettingInfo *s, double value) {
  if (s->domain == JY_DOMAIN_CHOICE) {
    for (int k = 0; k < s->nchoices; k++)
      if (s->choices[k].value == (int)value) return put_string(obj, s->name, s->choices[k].name);
    return -1;
  }
  if (s->domain == JY_DOMAIN_COUNT || s->domain == JY_DOMAIN_COUNT_POSITIVE ||
      s->domain == JY_DOMAIN_FLAG) {
    long long whole = (long long)value;
    return put_number(obj, s->name, H5T_NATIVE_LLONG, &whole);
  }
  return put_number(obj, s->name, H5T_NATIVE_DOUBLE, &value);
}

/* The file's attributes: format, settings, report. */
static int put_file_attributes(hid_t file, const jySim *sim) {
  int bad = put_string(file, "format", TABLE_FORMAT);
  const jySettingInfo *s;
  for (int i = 0; !bad && (s = jy_sim_setting(i)) != NULL; i++)
    bad = put_setting(file, s, jy_sim_def_get(&sim->def, i));
  for (int i = 0; !bad && (s = jy_solver_setting(i)) != NULL; i++)
    bad = put_setting(file, s, jy_solver_def_get(&sim->model->solver, i));
  if (!bad) bad = put_string(file, "report", jy_model_report(sim->model));
  return bad;
}

typedef struct h5_sink {
  hid_t file, table;
  int ncols;
  hsize_t buffer_rows, held; /* the buffer's capacity and rows in it */
  double *buffer;            /* buffer_rows x ncols, row after row */
  long rows;                 /* rows handed over so far (written or held) */
  int failed;
  char why[256]; /* HDF5's reason for the first failure */
  jyRowSink also;
  void *ud;
} h5_sink;

/* Writes the held rows at the end of the table, extending it. */
static void flush_rows(h5_sink *s) {
  if (s->failed || s->held == 0) return;
  hsize_t start[2] = {(hsize_t)s->rows - s->held, 0}, count[2] = {s->held, (hsize_t)s->ncols};
  hsize_t dims[2] = {(hsize_t)s->rows, (hsize_t)s->ncols};
  hid_t file_space = -1, mem_space = -1;
  int bad = H5Dset_extent(s->table, dims) < 0 || (file_space = H5Dget_space(s->table)) < 0 ||
    H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, NULL, count, NULL) < 0 ||
    (mem_space = H5Screate_simple(2, count, NULL)) < 0 ||
    H5Dwrite(s->table, H5T_NATIVE_DOUBLE, mem_space, file_space, H5P_DEFAULT, s->buffer) < 0;
  hid_t kept = keep_errors(bad);
  if (mem_space >= 0) H5Sclose(mem_space);
  if (file_space >= 0) H5Sclose(file_space);
  put_back_errors(kept);
  if (bad) {
    s->failed = 1;
    hdf5_reason(s->why);
  }
  s->held = 0;
}

static int write_row(void *ud, const double *row, int nchannels) {
  h5_sink *s = ud;
  if (!s->failed && nchannels != s->ncols) {
    s->failed = 1;
    snprintf(s->why, sizeof s->why, "a row of %d values for %d columns", nchannels, s->ncols);
  }
  if (s->failed) return 1;
  memcpy(s->buffer + s->held * (hsize_t)s->ncols, row, sizeof(double) * (size_t)nchannels);
  s->held++;
  s->rows++;
  if (s->held == s->buffer_rows) flush_rows(s);
  if (s->failed) return 1;
  if (s->also && s->also(s->ud, row, nchannels) != 0) return 1;
  return 0;
}

/* The table with its names and units; 0 on success. */
static int create_table(h5_sink *s, const jySim *sim) {
  const jyModel *m = sim->model;
  hsize_t ncols = (hsize_t)s->ncols, rows = s->buffer_rows;
  hsize_t chunk_cols = CHUNK_DOUBLES / rows ? CHUNK_DOUBLES / rows : 1;
  hsize_t dims[2] = {0, ncols}, max[2] = {H5S_UNLIMITED, ncols};
  hsize_t chunk[2] = {rows, chunk_cols < ncols ? chunk_cols : ncols};
  hid_t space = H5Screate_simple(2, dims, max), plist = H5Pcreate(H5P_DATASET_CREATE);
  int bad = space < 0 || plist < 0 || H5Pset_chunk(plist, 2, chunk) < 0 ||
    H5Pset_shuffle(plist) < 0 || H5Pset_deflate(plist, DEFLATE_LEVEL) < 0;
  if (!bad) {
    s->table = H5Dcreate2(s->file, "table", H5T_IEEE_F64LE, space, H5P_DEFAULT, plist, H5P_DEFAULT);
    bad = s->table < 0;
  }
  hid_t kept = keep_errors(bad);
  if (plist >= 0) H5Pclose(plist);
  if (space >= 0) H5Sclose(space);
  put_back_errors(kept);
  const char **names = bad ? NULL : malloc(2 * sizeof *names * (size_t)s->ncols);
  if (!bad && !names) {
    snprintf(s->why, sizeof s->why, "%s", strerror(ENOMEM));
    return -1;
  }
  for (int k = 0; !bad && k < s->ncols; k++) {
    names[k] = m->channel_names[sim->cols[k]];
    names[s->ncols + k] = jy_model_channel_unit(m, sim->cols[k]);
  }
  if (!bad)
    bad = put_strings(s->table, "columns", names, s->ncols) ||
      put_strings(s->table, "units", names + s->ncols, s->ncols);
  free(names);
  return bad ? -1 : 0;
}

/* Creates the file at `at` (truncating the empty temporary file), its attributes, the table
 * and the buffer; 0 on success, else -1 with the reason in s->why. */
static int open_file(h5_sink *s, const jySim *sim, const char *at) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  /* Every object closed with the file: nothing of ours outlives jy_sim_write_hdf5. The 1.8
   * file format at least: its dense attribute storage holds the names of a wide model (the
   * original format refuses an attribute over 64 KB: about 4,000 names). */
  if (fapl >= 0 && H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) >= 0 &&
      H5Pset_libver_bounds(fapl, H5F_LIBVER_V18, H5F_LIBVER_LATEST) >= 0)
    s->file = H5Fcreate(at, H5F_ACC_TRUNC, H5P_DEFAULT, fapl);
  hid_t kept = keep_errors(s->file < 0);
  if (fapl >= 0) H5Pclose(fapl);
  put_back_errors(kept);
  hsize_t rows = BUFFER_DOUBLES / (hsize_t)s->ncols;
  s->buffer_rows = rows > CHUNK_DOUBLES ? CHUNK_DOUBLES : rows ? rows : 1;
  /* A short run needs no taller chunk than its rows (a few more come with events): a
   * chunk is stored whole, its unwritten part as zeros. */
  const jySimDef *d = &sim->def;
  double expected = ceil((d->t_end - d->t_start) / d->dt_out - 1e-9) / (double)d->every + 2;
  if (expected < (double)s->buffer_rows) s->buffer_rows = (hsize_t)expected;
  s->buffer = malloc(sizeof(double) * s->buffer_rows * (hsize_t)s->ncols);
  if (!s->buffer) {
    snprintf(s->why, sizeof s->why, "%s", strerror(ENOMEM));
    return -1;
  }
  if (s->file < 0 || put_file_attributes(s->file, sim) || create_table(s, sim)) {
    if (!*s->why) hdf5_reason(s->why);
    return -1;
  }
  return 0;
}

/* Closes the file (after `incomplete` as its attribute, when not NULL); 0 on success. */
static int close_file(h5_sink *s, const char *incomplete) {
  int bad = 0;
  if (s->file >= 0 && incomplete) bad = put_string(s->file, "incomplete", incomplete);
  if (bad && !s->failed) hdf5_reason(s->why);
  if (s->table >= 0 && H5Dclose(s->table) < 0 && !bad && !s->failed) bad = 1, hdf5_reason(s->why);
  if (s->file >= 0 && H5Fclose(s->file) < 0 && !bad && !s->failed) bad = 1, hdf5_reason(s->why);
  s->table = s->file = -1;
  if (bad) s->failed = 1;
  free(s->buffer);
  s->buffer = NULL;
  return bad ? -1 : 0;
}

/* The failed run's file: closed with its mark and moved to "<stem>.incomplete.h5"; the
 * simulation's message says where. */
static void keep_incomplete(jySim *sim, h5_sink *s, const char *path, const char *tmp) {
  char kept[4096 + 64], why[JY_ERROR_LEN];
  int have_name = jy_out_incomplete_name(path, ".h5", kept, sizeof kept);
  snprintf(why, sizeof why, "%s", sim->error);
  int ok = close_file(s, why) == 0 && have_name && rename(tmp, kept) == 0;
  if (!ok && s->failed) errno = EIO;
  jy_out_failure_note(sim, path, have_name ? kept : path, ok, s->rows,
                      "marked by the file attribute 'incomplete'");
}

static jyStatus write_file(jySim *sim, const char *path, const char *tmp, h5_sink *s) {
  if (open_file(s, sim, tmp) != 0) {
    close_file(s, NULL);
    jy_set_error(sim->error, "cannot write output file '%s': %s", path, s->why);
    return JY_ERR_IO;
  }
  jyStatus st = jy_sim_run(sim, write_row, s);
  flush_rows(s);
  if (s->failed) {
    close_file(s, NULL);
    jy_set_error(sim->error, "cannot write output file '%s' (at t = %.9g, after %ld rows): %s",
                 path, sim->t, s->rows, s->why);
    return JY_ERR_IO;
  }
  if (st != JY_OK) {
    keep_incomplete(sim, s, path, tmp);
    return st;
  }
  if (close_file(s, NULL) != 0) {
    jy_set_error(sim->error, "cannot write output file '%s': %s", path, s->why);
    return JY_ERR_IO;
  }
  return JY_OK;
}

jyStatus jy_sim_write_hdf5(jySim *sim, const char *path, jyRowSink also, void *ud) {
  if (!sim || !path || !*path) return JY_ERR_INVALID;
  jyStatus st = jy_sim_check_output_rows(sim);
  if (st != JY_OK) return st;
  struct stat at;
  if (stat(path, &at) == 0 && S_ISDIR(at.st_mode)) {
    jy_set_error(sim->error, "cannot write output file '%s': %s", path, strerror(EISDIR));
    return JY_ERR_IO;
  }
  if (jy_out_is_special_file(path)) {
    jy_set_error(sim->error,
                 "cannot write output file '%s': HDF5 output needs a regular file "
                 "(write a .csv to a pipe or device)",
                 path);
    return JY_ERR_IO;
  }
  char tmp[4096];
  jy_out_other_partials(path, 1);
  int fd = jy_out_create_temp(sim, path, tmp, sizeof tmp);
  if (fd < 0) {
    sim->out_identified = 0;
    jy_set_error(sim->error, "cannot write output file '%s': %s", path, strerror(errno));
    return JY_ERR_IO;
  }
  close(fd); /* HDF5 opens it by name: created here, exclusively, as the CSV's is */
  h5_sink s = {-1, -1, sim->ncols, 0, 0, NULL, 0, 0, "", also, ud};
  H5E_BEGIN_TRY { st = write_file(sim, path, tmp, &s); }
  H5E_END_TRY;
  /* H5Fcreate replaced the file: the identity is the renamed file's from now on. */
  return jy_out_finish(sim, path, tmp, ".h5", st);
}

int jy_hdf5_available(void) { return 1; }

/* ---- the reader ------------------------------------------------------------------------ */

struct jyResultFile {
  hid_t file, table;
  int ncols;
  long nrows;
  char **names, **units; /* HDF5's variable-length strings (ncols each) */
  char *incomplete;      /* malloc'd, or NULL */
  char *attribute;       /* the last jy_result_attribute's text, malloc'd */
  char error[512];
};

/* A string attribute (scalar or an array of n), read into *out (n pointers HDF5 allocated:
 * H5free_memory each); 0 on success. */
static int get_strings(hid_t obj, const char *name, char **out, hsize_t n) {
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT), space = a < 0 ? -1 : H5Aget_space(a);
  hid_t t = string_type();
  hssize_t have = space < 0 ? -1 : H5Sget_simple_extent_npoints(space);
  int bad = a < 0 || t < 0 || have != (hssize_t)n || H5Aread(a, t, out) < 0;
  hid_t kept = keep_errors(bad);
  if (t >= 0) H5Tclose(t);
  if (space >= 0) H5Sclose(space);
  if (a >= 0) H5Aclose(a);
  put_back_errors(kept);
  return bad ? -1 : 0;
}

static void free_strings(char **v, int n) {
  for (int k = 0; v && k < n; k++) H5free_memory(v[k]);
  free(v);
}

void jy_result_close(jyResultFile *f) {
  if (!f) return;
  H5E_BEGIN_TRY {
    free_strings(f->names, f->ncols);
    free_strings(f->units, f->ncols);
    if (f->table >= 0) H5Dclose(f->table);
    if (f->file >= 0) H5Fclose(f->file);
  }
  H5E_END_TRY;
  free(f->incomplete);
  free(f->attribute);
  free(f);
}

static jyResultFile *open_result(jyResultFile *f, const char *path) {
  hid_t fapl = H5Pcreate(H5P_FILE_ACCESS);
  if (fapl >= 0 && H5Pset_fclose_degree(fapl, H5F_CLOSE_STRONG) >= 0)
    f->file = H5Fopen(path, H5F_ACC_RDONLY, fapl);
  hid_t kept = keep_errors(f->file < 0);
  if (fapl >= 0) H5Pclose(fapl);
  put_back_errors(kept);
  if (f->file < 0) {
    char why[256];
    hdf5_reason(why);
    snprintf(f->error, sizeof f->error, "cannot read '%s' as HDF5: %s", path, why);
    return NULL;
  }
  char *format = NULL;
  if (get_strings(f->file, "format", &format, 1) != 0 || strcmp(format, TABLE_FORMAT) != 0) {
    snprintf(f->error, sizeof f->error,
             "'%s' is an HDF5 file but not a joinery table (no attribute format = '%s')", path,
             TABLE_FORMAT);
    H5free_memory(format);
    return NULL;
  }
  H5free_memory(format);
  f->table = H5Dopen2(f->file, "table", H5P_DEFAULT);
  hid_t space = f->table < 0 ? -1 : H5Dget_space(f->table);
  hsize_t dims[2] = {0, 0};
  int ok = space >= 0 && H5Sget_simple_extent_ndims(space) == 2 &&
    H5Sget_simple_extent_dims(space, dims, NULL) == 2 && dims[1] > 0;
  if (space >= 0) H5Sclose(space);
  if (!ok) {
    snprintf(f->error, sizeof f->error, "'%s' has no 2-D dataset 'table'", path);
    return NULL;
  }
  f->nrows = (long)dims[0];
  f->names = calloc(dims[1], sizeof *f->names);
  f->units = calloc(dims[1], sizeof *f->units);
  if (!f->names || !f->units) {
    snprintf(f->error, sizeof f->error, "out of memory reading '%s'", path);
    return NULL;
  }
  f->ncols = (int)dims[1];
  /* A failed read leaves the strings unset: nothing to free. */
  int bad = get_strings(f->table, "columns", f->names, dims[1]) != 0;
  if (bad) memset(f->names, 0, dims[1] * sizeof *f->names);
  if (!bad && get_strings(f->table, "units", f->units, dims[1]) != 0) {
    memset(f->units, 0, dims[1] * sizeof *f->units);
    bad = 1;
  }
  if (bad) {
    snprintf(f->error, sizeof f->error,
             "'%s': the table's attributes 'columns' and 'units' must be %d strings each", path,
             f->ncols);
    return NULL;
  }
  if (H5Aexists(f->file, "incomplete") > 0) {
    char *why = NULL;
    if (get_strings(f->file, "incomplete", &why, 1) == 0) {
      f->incomplete = malloc(strlen(why) + 1);
      if (f->incomplete) strcpy(f->incomplete, why);
    }
    H5free_memory(why);
    if (!f->incomplete) {
      snprintf(f->error, sizeof f->error, "'%s': cannot read its attribute 'incomplete'", path);
      return NULL;
    }
  }
  return f;
}

jyResultFile *jy_result_open(const char *path, char *error, size_t error_len) {
  jyResultFile *f = calloc(1, sizeof *f);
  if (!f) {
    if (error && error_len) snprintf(error, error_len, "out of memory opening '%s'", path);
    return NULL;
  }
  f->file = f->table = -1;
  jyResultFile *done = NULL;
  if (!path)
    snprintf(f->error, sizeof f->error, "no path given");
  else if (access(path, R_OK) != 0)
    snprintf(f->error, sizeof f->error, "cannot read '%s': %s", path, strerror(errno));
  else {
    H5E_BEGIN_TRY { done = open_result(f, path); }
    H5E_END_TRY;
  }
  if (!done) {
    if (error && error_len) snprintf(error, error_len, "%s", f->error);
    jy_result_close(f);
  }
  return done;
}

const char *jy_result_attribute(jyResultFile *f, const char *name) {
  if (!f || !name) return NULL;
  free(f->attribute);
  f->attribute = NULL;
  H5E_BEGIN_TRY {
    hid_t a = H5Aexists(f->file, name) > 0 ? H5Aopen(f->file, name, H5P_DEFAULT) : -1;
    hid_t t = a < 0 ? -1 : H5Aget_type(a);
    H5T_class_t cls = t < 0 ? H5T_NO_CLASS : H5Tget_class(t);
    char number[64] = "", *text = NULL;
    if (cls == H5T_STRING && get_strings(f->file, name, &text, 1) == 0) {
      f->attribute = malloc(strlen(text) + 1);
      if (f->attribute) strcpy(f->attribute, text);
    } else if (cls == H5T_INTEGER) {
      long long x;
      if (H5Aread(a, H5T_NATIVE_LLONG, &x) >= 0) snprintf(number, sizeof number, "%lld", x);
    } else if (cls == H5T_FLOAT) {
      double x;
      char buf[JY_NUMBER_LEN];
      if (H5Aread(a, H5T_NATIVE_DOUBLE, &x) >= 0) {
        buf[jy_format_double(buf, x)] = '\0';
        snprintf(number, sizeof number, "%s", buf);
      }
    }
    H5free_memory(text);
    if (*number) {
      f->attribute = malloc(strlen(number) + 1);
      if (f->attribute) strcpy(f->attribute, number);
    }
    if (t >= 0) H5Tclose(t);
    if (a >= 0) H5Aclose(a);
  }
  H5E_END_TRY;
  return f->attribute;
}

/* Reads the block of rows [first, first + count) x columns [col, col + ncols) into out. */
static jyStatus read_block(jyResultFile *f, hsize_t first, hsize_t count, hsize_t col,
                           hsize_t ncols, double *out) {
  hsize_t start[2] = {first, col}, size[2] = {count, ncols};
  if (count == 0) return JY_OK;
  jyStatus st = JY_OK;
  H5E_BEGIN_TRY {
    hid_t file_space = H5Dget_space(f->table), mem_space = H5Screate_simple(2, size, NULL);
    if (file_space < 0 || mem_space < 0 ||
        H5Sselect_hyperslab(file_space, H5S_SELECT_SET, start, NULL, size, NULL) < 0 ||
        H5Dread(f->table, H5T_NATIVE_DOUBLE, mem_space, file_space, H5P_DEFAULT, out) < 0) {
      char why[256];
      hdf5_reason(why);
      snprintf(f->error, sizeof f->error, "cannot read the table: %s", why);
      st = JY_ERR_IO;
    }
    if (mem_space >= 0) H5Sclose(mem_space);
    if (file_space >= 0) H5Sclose(file_space);
  }
  H5E_END_TRY;
  return st;
}

jyStatus jy_result_read_column(jyResultFile *f, int k, double *out) {
  if (!f || !out || k < 0 || k >= f->ncols) return JY_ERR_INVALID;
  return read_block(f, 0, (hsize_t)f->nrows, (hsize_t)k, 1, out);
}

jyStatus jy_result_read_rows(jyResultFile *f, long first, long count, double *out) {
  if (!f || !out || first < 0 || count < 0 || count > f->nrows - first) return JY_ERR_INVALID;
  return read_block(f, (hsize_t)first, (hsize_t)count, 0, (hsize_t)f->ncols, out);
}

#else /* built without HDF5 */

#define NO_HDF5                                                                     \
  "this joinery was built without HDF5 (install the serial HDF5 library, Debian's " \
  "libhdf5-dev, and build again), so it cannot write or read .h5 files; write a .csv instead"

struct jyResultFile {
  int unused;
};

jyStatus jy_sim_write_hdf5(jySim *sim, const char *path, jyRowSink also, void *ud) {
  (void)also, (void)ud;
  if (!sim || !path || !*path) return JY_ERR_INVALID;
  jy_set_error(sim->error, "cannot write output file '%s': %s", path, NO_HDF5);
  return JY_ERR_INVALID;
}

int jy_hdf5_available(void) { return 0; }

jyResultFile *jy_result_open(const char *path, char *error, size_t error_len) {
  if (error && error_len) snprintf(error, error_len, "cannot read '%s': %s", path, NO_HDF5);
  return NULL;
}

void jy_result_close(jyResultFile *f) { (void)f; }

const char *jy_result_attribute(jyResultFile *f, const char *name) {
  (void)f, (void)name;
  return NULL;
}

jyStatus jy_result_read_column(jyResultFile *f, int k, double *out) {
  (void)f, (void)k, (void)out;
  return JY_ERR_INVALID;
}

jyStatus jy_result_read_rows(jyResultFile *f, long first, long count, double *out) {
  (void)f, (void)first, (void)count, (void)out;
  return JY_ERR_INVALID;
}

#endif

/* The accessors need nothing of HDF5: with it missing no file is ever open. */
#ifdef JY_HAVE_HDF5
#define RESULT_FIELD(f, field, none) ((f) ? (f)->field : (none))
#else
#define RESULT_FIELD(f, field, none) ((void)(f), (none))
#endif

int jy_result_num_columns(const jyResultFile *f) { return RESULT_FIELD(f, ncols, 0); }

long jy_result_num_rows(const jyResultFile *f) { return RESULT_FIELD(f, nrows, 0L); }

const char *jy_result_incomplete(const jyResultFile *f) {
  return RESULT_FIELD(f, incomplete, (char *)NULL);
}

const char *jy_result_error(const jyResultFile *f) { return f ? RESULT_FIELD(f, error, "") : ""; }

const char *jy_result_column_name(const jyResultFile *f, int k) {
  return k >= 0 && k < jy_result_num_columns(f) ? RESULT_FIELD(f, names[k], (char *)NULL) : NULL;
}

const char *jy_result_column_unit(const jyResultFile *f, int k) {
  return k >= 0 && k < jy_result_num_columns(f) ? RESULT_FIELD(f, units[k], (char *)NULL) : NULL;
}

int jy_result_find_column(const jyResultFile *f, const char *name) {
  for (int k = 0; name && k < jy_result_num_columns(f); k++)
    if (strcmp(jy_result_column_name(f, k), name) == 0) return k;
  return -1;
}
