/* lua/animate.h — joinery animate's work (lua/animate.c): a run's or a CSV's rows drawn by
 * the parts' visuals into one self-contained HTML page (docs/animation.md). */
#ifndef JOINERY_LUA_ANIMATE_H
#define JOINERY_LUA_ANIMATE_H

#include <lua.h>

#include "joinery/joinery.h"

typedef struct jylAnimOpts {
  const char *csv;   /* rows from this CSV (a joinery run's, of this model); NULL: run it */
  const char *out;   /* the page to write */
  const char *title; /* shown as the page's title */
  int forces;        /* 1: the constraint forces as arrows (solved at each row) */
} jylAnimOpts;

/* The most frames a page holds: beyond, every k-th row is kept (and the last). */
#define JYL_ANIM_MAX_FRAMES 5000

typedef struct jylAnimResult {
  long frames, every; /* frames in the page; every: 1, or k when only every k-th row is */
  int visuals, planar;
} jylAnimResult;

/* Runs the model at model_idx with def (or reads opts->csv) and writes the page; raises a
 * Lua error saying why it could not. res (may be NULL): what the page holds. */
int jyl_animate(lua_State *L, int model_idx, const jySimDef *def, const jylAnimOpts *opts,
                jylAnimResult *res);

#endif
