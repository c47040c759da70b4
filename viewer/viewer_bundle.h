/* viewer/viewer_bundle.h — the page scripts joinery animate inlines: the planar view (a
 * canvas) and the spatial one (three.js), bundled by esbuild at build time and embedded by
 * viewer/embed.py. Length 0: the build had no esbuild (run `npm ci` in viewer/). */
#ifndef JOINERY_VIEWER_BUNDLE_H
#define JOINERY_VIEWER_BUNDLE_H

#include <stddef.h>

extern const char *const jyl_viewer_2d;
extern const size_t jyl_viewer_2d_len;
extern const char *const jyl_viewer_3d;
extern const size_t jyl_viewer_3d_len;

#endif
