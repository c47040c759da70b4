/* Allocation through the environment's allocator (NULL fields: the C library). */
#ifndef JY_MEM_H
#define JY_MEM_H

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "joinery/joinery.h"

static inline void *jy_alloc(const jyAllocator *a, size_t size) {
  if (size == 0) size = 1;
  void *p = (a && a->alloc) ? a->alloc(a->ud, size) : malloc(size);
  return p;
}

/* Zero-filled array of count elements of size each; NULL on overflow or exhaustion. */
static inline void *jy_calloc(const jyAllocator *a, size_t count, size_t size) {
  if (size != 0 && count > (size_t)-1 / size) return NULL;
  size_t total = count * size;
  void *p = jy_alloc(a, total);
  if (p) memset(p, 0, total);
  return p;
}

static inline void jy_free(const jyAllocator *a, void *p) {
  if (!p) return;
  if (a && a->free)
    a->free(a->ud, p);
  else
    free(p);
}

/* A copy of s (NULL for NULL). */
static inline char *jy_strdup(const jyAllocator *a, const char *s) {
  if (!s) return NULL;
  size_t len = strlen(s);
  char *d = jy_alloc(a, len + 1);
  if (d) memcpy(d, s, len + 1);
  return d;
}

#endif
