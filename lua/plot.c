/* lua/plot.c — joinery plot FILE --y GLOBS [--x NAME] [-o OUT.png|svg|pdf]: the chosen
 * channels of a run's output drawn by gnuplot (Debian's gnuplot-nox), run as a program on a
 * script and a data file written to a temporary directory. Channel names reach gnuplot as
 * single-quoted strings with enhanced text off, so that '_', '^', '@' and quotes show as
 * written. The plot area has fixed margins (PLOT_LEFT.. below, fractions of the canvas), so
 * a data point's pixel follows from the axis ranges alone (tests/lua/t_plot.lua maps them).
 * The output is the same bytes for the same input: gnuplot's own settings are reset
 * (`reset session`: no ~/.gnuplot), the colours are fixed, and the date cairo writes into a
 * PDF is replaced by a fixed one. */
#ifndef _POSIX_C_SOURCE
#define _POSIX_C_SOURCE 200809L
#endif

#include "plot.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "joinery/joinery.h"
#include "plot_table.h"

extern char **environ;

/* The plot area, in fractions of the canvas from its left and bottom edges. */
#define PLOT_LEFT 0.12
#define PLOT_RIGHT 0.96
#define PLOT_BOTTOM 0.12
#define PLOT_TOP 0.90

enum { MAX_SERIES = 64, ERR_LEN = 1024 };

/* The series' colours, in order (then again, dashed). */
static const char *const colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e",
                                      "#9467bd", "#8c564b", "#e377c2", "#17becf"};
enum { NCOLOURS = sizeof colours / sizeof colours[0] };

void plot_usage(FILE *f) {
  fputs("usage: joinery plot FILE --y GLOBS [--x NAME] [-o OUT] [OPTIONS]\n"
        "       joinery plot SCRIPT.lua --y GLOBS [-o OUT] [run's OPTIONS] [-- ARGS...]\n"
        "draws channels of a run's CSV (or of the run of SCRIPT.lua, written as joinery run\n"
        "writes it) through gnuplot; docs/cli.md, \"joinery plot\"\n"
        "  --y GLOBS      the channels on the y axis: comma-separated globs, the option\n"
        "                 repeatable ('p*.theta,energy'); one line each, with a legend\n"
        "  --x NAME       the channel on the x axis (default t)\n"
        "  -o OUT         the picture: .png, .svg or .pdf (default: FILE's base name .png)\n"
        "  --size WxH     in pixels (a PDF: points; default 800x500)\n"
        "  --xrange LO:HI, --yrange LO:HI\n"
        "                 fixed axis ranges (default: x the data's, y rounded to ticks)\n"
        "  --title TEXT   (default: FILE's name; an incomplete run's file adds why)\n",
        f);
}

static void fail(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static void fail(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  fputs("joinery: plot: ", stderr);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
}

/* A usage error: the message and the usage on stderr, status 2. */
#define usage(...) (fail(__VA_ARGS__), plot_usage(stderr), 2)

static int has_suffix(const char *s, const char *suffix) {
  size_t n = strlen(s), m = strlen(suffix);
  return n > m && strcasecmp(s + n - m, suffix) == 0;
}

int plot_is_script(const char *path) { return has_suffix(path, ".lua"); }

/* The gnuplot terminal of an output name, or NULL for an unknown extension. */
static const char *terminal_of(const char *out) {
  if (has_suffix(out, ".png")) return "pngcairo";
  if (has_suffix(out, ".svg")) return "svg";
  if (has_suffix(out, ".pdf")) return "pdfcairo";
  return NULL;
}

static int parse_range(const char *s, double r[2]) {
  char *end;
  r[0] = strtod(s, &end);
  if (end == s || *end != ':') return -1;
  const char *hi = end + 1;
  r[1] = strtod(hi, &end);
  return end == hi || *end || !isfinite(r[0]) || !isfinite(r[1]) || !(r[0] < r[1]) ? -1 : 0;
}

/* Appends the pattern list p to a->y, comma-separated. */
static int add_y(PlotArgs *a, const char *p) {
  size_t had = a->y ? strlen(a->y) : 0;
  char *y = realloc(a->y, had + strlen(p) + 2);
  if (!y) return -1;
  if (had) y[had++] = ',';
  strcpy(y + had, p);
  a->y = y;
  return 0;
}

/* The value of option argv[*i] (spelt "--opt VALUE" or "--opt=VALUE"), or NULL. */
static const char *value_of(int argc, char **argv, int *i, size_t name_len) {
  const char *a = argv[*i];
  if (a[name_len] == '=') return a + name_len + 1;
  return *i + 1 < argc ? argv[++*i] : NULL;
}

static int is_option(const char *a, const char *name) {
  size_t n = strlen(name);
  return strncmp(a, name, n) == 0 && (a[n] == '\0' || a[n] == '=');
}

/* The default picture: the input's base name with .png, in the current directory. */
static int default_out(PlotArgs *a) {
  const char *base = strrchr(a->input, '/');
  base = base ? base + 1 : a->input;
  size_t n = strlen(base);
  const char *dot = strrchr(base, '.');
  if (dot && dot != base) n = (size_t)(dot - base);
  if (!(a->out_owned = malloc(n + 5))) return -1;
  snprintf(a->out_owned, n + 5, "%.*s.png", (int)n, base);
  a->out = a->out_owned;
  return 0;
}

/* run's options without a value; its others take one. */
static int takes_no_value(const char *option) {
  return strcmp(option, "--quiet") == 0 || strcmp(option, "--trust") == 0 ||
    strcmp(option, "--traceback") == 0;
}

int plot_parse(int argc, char **argv, int at, PlotArgs *a) {
  a->x = "t";
  a->width = 800;
  a->height = 500;
  if (!(a->rest = calloc((size_t)(argc > at ? argc - at : 1), sizeof *a->rest)))
    return usage("out of memory");
  static const char *const ours[] = {"--y",      "--x",      "-o",     "--size",
                                     "--xrange", "--yrange", "--title"};
  for (int i = at; i < argc; i++) {
    const char *a_i = argv[i];
    if (strcmp(a_i, "--help") == 0 || strcmp(a_i, "-h") == 0) {
      plot_usage(stdout);
      return 0;
    }
    if (strcmp(a_i, "--") == 0) { /* the script's arguments: run's */
      while (i < argc) a->rest[a->nrest++] = argv[i++];
      break;
    }
    int k = 0, nours = (int)(sizeof ours / sizeof ours[0]);
    while (k < nours && !is_option(a_i, ours[k])) k++;
    if (k == nours) {
      if (a_i[0] == '-' && a_i[1]) { /* run's option (checked by run) and its value */
        a->rest[a->nrest++] = argv[i];
        if (!strchr(a_i, '=') && i + 1 < argc && !takes_no_value(a_i))
          a->rest[a->nrest++] = argv[++i];
      } else if (!a->input)
        a->input = a_i;
      else
        a->rest[a->nrest++] = argv[i];
      continue;
    }
    const char *v = value_of(argc, argv, &i, strlen(ours[k]));
    if (!v || !*v) return usage("option %s needs a value", ours[k]);
    switch (k) {
    case 0:
      if (add_y(a, v) != 0) return usage("out of memory");
      break;
    case 1:
      a->x = v;
      break;
    case 2:
      a->out = v;
      break;
    case 3:
      if (sscanf(v, "%dx%d", &a->width, &a->height) != 2 || a->width < 64 || a->height < 64 ||
          a->width > 10000 || a->height > 10000)
        return usage("--size expects WxH, each from 64 to 10000 (800x500), got '%s'", v);
      break;
    case 4:
    case 5:
      if (parse_range(v, k == 4 ? a->xrange : a->yrange) != 0)
        return usage("%s expects LO:HI with LO < HI (0:10), got '%s'", ours[k], v);
      *(k == 4 ? &a->has_xrange : &a->has_yrange) = 1;
      break;
    default:
      a->title = v;
      break;
    }
  }
  if (!a->input) return usage("needs a FILE (a run's .csv) or a model SCRIPT.lua");
  if (!a->y) return usage("needs --y GLOBS: the channels to draw ('p*.theta')");
  if (a->nrest > 0 && !plot_is_script(a->input))
    return usage("unknown argument '%s' (run's options go with a SCRIPT.lua)", a->rest[0]);
  if (strchr(a->x, ',')) return usage("--x takes one channel, got '%s'", a->x);
  if (!a->out && default_out(a) != 0) return usage("out of memory");
  if (!terminal_of(a->out)) {
    const char *dot = strrchr(a->out, '.');
    return usage("-o %s: unknown picture type%s%s%s (.png, .svg or .pdf)", a->out, dot ? " '" : "",
                 dot ? dot : "", dot ? "'" : "");
  }
  return -1;
}

void plot_args_free(PlotArgs *a) {
  free(a->y);
  free(a->out_owned);
  free(a->rest);
  *a = (PlotArgs){0};
}

/* ---- choosing the columns ---------------------------------------------------------------- */

typedef struct Choice {
  const PlotArgs *args;
  const char *path;
  int x; /* the x column */
  int ny, ys[MAX_SERIES];
  char *picked;  /* ncols: already a series */
  int x_matches; /* columns the --x pattern matched */
} Choice;

static int pick_y(void *ud, int k) {
  Choice *c = ud;
  if (c->picked[k]) return 0;
  c->picked[k] = 1;
  if (c->ny < MAX_SERIES) c->ys[c->ny] = k;
  c->ny++; /* counted past the cap, for the message */
  return 0;
}

static int pick_x(void *ud, int k) {
  Choice *c = ud;
  if (c->x_matches++ == 0) c->x = k;
  return 0;
}

/* "'pat' matches no column of 'file' (did you mean 'name'?)" */
static void miss_text(char *err, size_t len, const char *option, const jyNameMiss *m,
                      const PlotTable *t, const char *path) {
  snprintf(err, len, "%s '%.*s' matches no column of '%s' (did you mean '%s'?)", option,
           (int)(m->len > 200 ? 200 : m->len), m->pattern, path,
           m->nearest >= 0 ? t->names[m->nearest] : "");
}

static int choose(void *ud, const PlotTable *t, char *want, char *err, size_t len) {
  Choice *c = ud;
  const char *const *names = (const char *const *)t->names;
  jyNameMiss miss = {NULL, 0, -1};
  if (jy_pick_names(c->args->x, names, t->ncols, pick_x, c, &miss) < 0) {
    miss_text(err, len, "--x", &miss, t, c->path);
    return -1;
  }
  if (c->x_matches != 1) {
    snprintf(err, len, "--x '%s' matches %d columns of '%s'; it takes one", c->args->x,
             c->x_matches, c->path);
    return -1;
  }
  if (!(c->picked = calloc((size_t)t->ncols, 1))) {
    snprintf(err, len, "out of memory");
    return -1;
  }
  if (jy_pick_names(c->args->y, names, t->ncols, pick_y, c, &miss) < 0) {
    miss_text(err, len, "--y", &miss, t, c->path);
    return -1;
  }
  if (c->ny > MAX_SERIES) {
    snprintf(err, len, "--y '%s' picks %d columns of '%s'; a plot takes at most %d", c->args->y,
             c->ny, c->path, MAX_SERIES);
    return -1;
  }
  want[c->x] = 1;
  for (int i = 0; i < c->ny; i++) want[c->ys[i]] = 1;
  return 0;
}

/* ---- the gnuplot script ------------------------------------------------------------------ */

/* s as a gnuplot single-quoted string: nothing is special in it but the quote, doubled.
 * Control characters become spaces (a line break would end the command). */
static void put_quoted(FILE *f, const char *s) {
  fputc('\'', f);
  for (; *s; s++) {
    if (*s == '\'')
      fputs("''", f);
    else
      fputc((unsigned char)*s < 0x20 ? ' ' : *s, f);
  }
  fputc('\'', f);
}

/* "name" or "name [unit]". */
static void put_label(FILE *f, const PlotTable *t, int k) {
  const char *u = t->units[k];
  size_t n = strlen(t->names[k]) + (u ? strlen(u) + 4 : 0) + 1;
  char *s = malloc(n);
  if (!s) {
    put_quoted(f, t->names[k]);
    return;
  }
  snprintf(s, n, u ? "%s [%s]" : "%s", t->names[k], u ? u : "");
  put_quoted(f, s);
  free(s);
}

static void put_title(FILE *f, const PlotArgs *a, const PlotTable *t, const char *shown) {
  enum { WHY = 100 };
  char text[512];
  const char *base = strrchr(shown, '/');
  const char *title = a->title ? a->title : base ? base + 1 : shown;
  if (t->incomplete)
    snprintf(text, sizeof text, "%s (incomplete run: %.*s%s)", title, WHY, t->incomplete,
             strlen(t->incomplete) > WHY ? "..." : "");
  else
    snprintf(text, sizeof text, "%s", title);
  fputs("set title ", f);
  put_quoted(f, text);
  fputc('\n', f);
}

/* The y axis' label: the one series' name, or the first names and how many more. */
static void put_ylabel(FILE *f, const PlotTable *t, const Choice *c) {
  if (c->ny == 1) {
    fputs("set ylabel ", f);
    put_label(f, t, c->ys[0]);
    fputc('\n', f);
    return;
  }
  char text[256];
  size_t used = 0;
  int shown = 0;
  for (; shown < c->ny && shown < 3; shown++) {
    int n =
      snprintf(text + used, sizeof text - used, "%s%s", shown ? ", " : "", t->names[c->ys[shown]]);
    if (n < 0 || (size_t)n >= sizeof text - used) break;
    used += (size_t)n;
  }
  if (shown < c->ny) snprintf(text + used, sizeof text - used, " and %d more", c->ny - shown);
  fputs("set ylabel ", f);
  put_quoted(f, text);
  fputc('\n', f);
}

static int write_script(const char *path, const char *data, const char *image, const PlotArgs *a,
                        const PlotTable *t, const Choice *c, const char *shown) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  const char *term = terminal_of(a->out);
  fputs("reset session\nset encoding utf8\n", f);
  if (strcmp(term, "pdfcairo") == 0)
    /* a quarter point more: cairo truncates the page size to whole points */
    fprintf(f, "set terminal pdfcairo size %.10fin,%.10fin font 'sans,10'\n",
            (a->width + 0.25) / 72.0, (a->height + 0.25) / 72.0);
  else if (strcmp(term, "svg") == 0)
    fprintf(f, "set terminal svg size %d,%d fixed font 'sans,10' background rgb 'white'\n",
            a->width, a->height);
  else
    fprintf(f, "set terminal pngcairo size %d,%d font 'sans,10' background rgb 'white'\n", a->width,
            a->height);
  fputs("set termoption noenhanced\nset output ", f);
  put_quoted(f, image);
  fprintf(f,
          "\nset lmargin at screen %g\nset rmargin at screen %g\n"
          "set bmargin at screen %g\nset tmargin at screen %g\n",
          PLOT_LEFT, PLOT_RIGHT, PLOT_BOTTOM, PLOT_TOP);
  fputs("set grid\nset key noenhanced top right opaque\nset xlabel ", f);
  put_label(f, t, c->x);
  fputc('\n', f);
  put_ylabel(f, t, c);
  put_title(f, a, t, shown);
  if (a->has_xrange)
    fprintf(f, "set xrange [%.17g:%.17g]\n", a->xrange[0], a->xrange[1]);
  else
    fputs("set autoscale xfix\n", f); /* the data's range, not rounded out to ticks */
  if (a->has_yrange) fprintf(f, "set yrange [%.17g:%.17g]\n", a->yrange[0], a->yrange[1]);
  fputs("plot ", f);
  for (int i = 0; i < c->ny; i++) {
    fputs(i ? ", \\\n     " : "", f);
    put_quoted(f, data);
    /* one row is a point: a line through it would draw nothing */
    fprintf(f, " using 1:%d with %s linecolor rgb '%s' dashtype %d title ", i + 2,
            t->nrows > 1 ? "lines linewidth 2" : "points pointtype 7 pointsize 1.5",
            colours[i % NCOLOURS], 1 + i / NCOLOURS % 5);
    put_label(f, t, c->ys[i]);
  }
  fputc('\n', f);
  int bad = ferror(f);
  return fclose(f) != 0 || bad ? -1 : 0;
}

/* x, then the series, a row a line, to 17 digits (nan and inf as gnuplot reads them). */
static int write_data(const char *path, const PlotTable *t, const Choice *c) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  for (long r = 0; r < t->nrows; r++) {
    fprintf(f, "%.17g", t->values[c->x][r]);
    for (int i = 0; i < c->ny; i++) fprintf(f, " %.17g", t->values[c->ys[i]][r]);
    fputc('\n', f);
  }
  int bad = ferror(f);
  return fclose(f) != 0 || bad ? -1 : 0;
}

/* ---- running gnuplot ---------------------------------------------------------------------- */

/* The temporary directory's files. */
typedef struct Temp {
  char dir[4096], script[4200], data[4200], image[4200], log[4200];
} Temp;

static int make_temp(Temp *tmp, const char *ext) {
  const char *base = getenv("TMPDIR");
  if (!base || !*base) base = "/tmp";
  snprintf(tmp->dir, sizeof tmp->dir, "%s/joinery-plot-XXXXXX", base);
  if (!mkdtemp(tmp->dir)) return -1;
  snprintf(tmp->script, sizeof tmp->script, "%s/plot.gp", tmp->dir);
  snprintf(tmp->data, sizeof tmp->data, "%s/data.txt", tmp->dir);
  snprintf(tmp->image, sizeof tmp->image, "%s/image%s", tmp->dir, ext);
  snprintf(tmp->log, sizeof tmp->log, "%s/gnuplot.log", tmp->dir);
  return 0;
}

static void remove_temp(const Temp *tmp) {
  remove(tmp->script);
  remove(tmp->data);
  remove(tmp->image);
  remove(tmp->log);
  rmdir(tmp->dir);
}

/* The whole of a file (NUL-terminated, *n bytes without the NUL), or NULL. */
static char *slurp(const char *path, size_t *n) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  size_t cap = 1 << 16, used = 0, got;
  char *buf = malloc(cap + 1);
  while (buf && (got = fread(buf + used, 1, cap - used, f)) > 0) {
    used += got;
    if (used == cap) {
      char *grown = realloc(buf, 2 * cap + 1);
      if (!grown) {
        free(buf);
        buf = NULL;
        break;
      }
      buf = grown;
      cap *= 2;
    }
  }
  if (buf && ferror(f)) {
    free(buf);
    buf = NULL;
  }
  fclose(f);
  if (buf) buf[used] = '\0';
  if (n) *n = used;
  return buf;
}

/* gnuplot's messages, each line "joinery: plot: gnuplot: ..." on stderr. */
static void relay_log(const char *log) {
  char *text = slurp(log, NULL);
  for (char *line = text; line && *line;) {
    size_t n = strcspn(line, "\n");
    if (n > 0) fprintf(stderr, "joinery: plot: gnuplot: %.*s\n", (int)n, line);
    line += n + (line[n] == '\n');
  }
  free(text);
}

/* Runs `gnuplot script` (JOINERY_GNUPLOT names another program), its output into the log.
 * Returns 0 when it exits with status 0, else -1 after saying why. */
static int run_gnuplot(const Temp *tmp) {
  const char *prog = getenv("JOINERY_GNUPLOT");
  if (!prog || !*prog) prog = "gnuplot";
  posix_spawn_file_actions_t fa;
  if (posix_spawn_file_actions_init(&fa) != 0) {
    fail("cannot start gnuplot: out of memory");
    return -1;
  }
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&fa, 1, tmp->log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_adddup2(&fa, 1, 2);
  char *argv[] = {(char *)prog, (char *)tmp->script, NULL};
  pid_t pid;
  int e = posix_spawnp(&pid, prog, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  if (e == ENOENT) {
    fail("cannot run %s: no such program; install Debian's gnuplot-nox (apt-get install "
         "gnuplot-nox)%s",
         prog, strcmp(prog, "gnuplot") ? " or set JOINERY_GNUPLOT to a gnuplot program" : "");
    return -1;
  }
  if (e != 0) {
    fail("cannot run %s: %s", prog, strerror(e));
    return -1;
  }
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) {
      fail("waiting for %s: %s", prog, strerror(errno));
      return -1;
    }
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) {
    relay_log(tmp->log); /* its warnings */
    return 0;
  }
  relay_log(tmp->log);
  if (WIFEXITED(status))
    fail("%s failed (exit status %d)%s", prog, WEXITSTATUS(status),
         WEXITSTATUS(status) == 127 ? ": is gnuplot installed (Debian's gnuplot-nox)?" : "");
  else
    fail("%s was killed by signal %d", prog, WIFSIGNALED(status) ? WTERMSIG(status) : 0);
  return -1;
}

/* cairo stamps a PDF with the time it was made: a fixed date of the same length instead
 * (the cross-reference offsets stay right), so that the same plot is the same bytes. */
static void fix_pdf_date(char *buf, size_t n) {
  static const char key[] = "/CreationDate (D:";
  size_t k = sizeof key - 1;
  for (size_t i = 0; i + k + 14 <= n; i++)
    if (memcmp(buf + i, key, k) == 0) {
      for (size_t j = 0; j < 14 && buf[i + k + j] >= '0' && buf[i + k + j] <= '9'; j++)
        buf[i + k + j] = "19700101000000"[j];
      return;
    }
}

/* Copies the image into out: written beside it under a temporary name, then renamed. */
static int install(const char *image, const char *out, int pdf) {
  size_t n;
  char *buf = slurp(image, &n);
  if (!buf || n == 0) {
    fail("gnuplot wrote no picture (%s)", buf ? "an empty file" : strerror(errno));
    free(buf);
    return -1;
  }
  if (pdf) fix_pdf_date(buf, n);
  size_t tlen = strlen(out) + 32;
  char *partial = malloc(tlen);
  if (!partial) {
    free(buf);
    fail("out of memory");
    return -1;
  }
  snprintf(partial, tlen, "%s.%ld.partial", out, (long)getpid());
  FILE *f = fopen(partial, "wb");
  int rc = -1;
  if (!f) {
    fail("cannot write '%s': %s", out, strerror(errno));
  } else {
    int bad = fwrite(buf, 1, n, f) != n;
    int e = errno;
    if (fclose(f) != 0 && !bad) bad = 1, e = errno;
    if (bad)
      fail("cannot write '%s': %s", out, strerror(e));
    else if (rename(partial, out) != 0)
      fail("cannot write '%s': %s", out, strerror(errno));
    else
      rc = 0;
    if (rc != 0) remove(partial);
  }
  free(partial);
  free(buf);
  return rc;
}

int plot_check_out(const PlotArgs *a) {
  size_t tlen = strlen(a->out) + 32;
  char *probe = malloc(tlen);
  if (!probe) {
    fail("out of memory");
    return -1;
  }
  snprintf(probe, tlen, "%s.%ld.partial", a->out, (long)getpid());
  FILE *f = fopen(probe, "wb");
  int ok = f != NULL;
  if (ok) {
    fclose(f);
    remove(probe);
  } else {
    fail("cannot write '%s': %s", a->out, strerror(errno));
  }
  free(probe);
  return ok ? 0 : -1;
}

int plot_draw(const PlotArgs *a, const char *table) {
  PlotTable t = {0};
  Choice c = {.args = a, .path = table};
  char err[ERR_LEN];
  Temp tmp;
  int rc = 1, have_temp = 0;
  if (plot_check_out(a) != 0) return 1; /* before the work, whose result would be lost */
  if (plot_table_load(table, &t, choose, &c, err, sizeof err) != 0) {
    fail("%s", err);
    goto done;
  }
  if (t.nrows == 0) {
    fail("'%s' has no rows to draw%s%s%s", table, t.incomplete ? " (incomplete: " : "",
         t.incomplete ? t.incomplete : "", t.incomplete ? ")" : "");
    goto done;
  }
  for (int i = 0; i < c.ny; i++) { /* gnuplot's own message would name no channel */
    long r = 0;
    while (r < t.nrows && !isfinite(t.values[c.ys[i]][r])) r++;
    if (r == t.nrows) {
      fail("'%s' of '%s' has no finite value to draw", t.names[c.ys[i]], table);
      goto done;
    }
  }
  const char *ext = strrchr(a->out, '.');
  if (make_temp(&tmp, ext) != 0) {
    fail("cannot make a temporary directory under %s: %s",
         getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", strerror(errno));
    goto done;
  }
  have_temp = 1;
  if (write_data(tmp.data, &t, &c) != 0 ||
      write_script(tmp.script, tmp.data, tmp.image, a, &t, &c, table) != 0) {
    fail("cannot write gnuplot's files in %s: %s", tmp.dir, strerror(errno));
    goto done;
  }
  if (run_gnuplot(&tmp) != 0 || install(tmp.image, a->out, has_suffix(a->out, ".pdf")) != 0)
    goto done;
  printf("wrote %s: %d series of %ld rows from %s%s\n", a->out, c.ny, t.nrows, table,
         t.incomplete ? " (an incomplete run's)" : "");
  rc = 0;
done:
  if (have_temp) remove_temp(&tmp);
  free(c.picked);
  plot_table_free(&t);
  return rc;
}
