/* strmap.c: the string-to-index hash table of strmap.h: linear probing in
 * a power-of-two table kept at most 3/4 full. */
#include "strmap.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "errors.h"

typedef struct {
  char *key; /* NULL: an empty slot */
  uint64_t hash;
  size_t value;
} slot;

struct sq_strmap {
  slot *slots;
  size_t cap, n; /* cap: a power of two, or 0 before the first add */
};

static uint64_t fnv1a(const char *s) {
  uint64_t h = 14695981039346656037ULL;
  for (; *s; s++) h = (h ^ (unsigned char)*s) * 1099511628211ULL;
  return h;
}

/* The slot of key, or the empty slot where it would go. cap > 0. */
static slot *find(const sq_strmap *m, const char *key, uint64_t h) {
  size_t mask = m->cap - 1;
  for (size_t i = (size_t)h & mask;; i = (i + 1) & mask) {
    slot *s = &m->slots[i];
    if (!s->key || (s->hash == h && strcmp(s->key, key) == 0)) return s;
  }
}

static int grow(sq_strmap *m) {
  size_t cap = m->cap ? m->cap * 2 : 64;
  slot *old = m->slots;
  size_t old_cap = m->cap;
  if (cap < old_cap || !(m->slots = calloc(cap, sizeof *m->slots))) {
    m->slots = old;
    return SQ_ENOMEM;
  }
  m->cap = cap;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i].key) *find(m, old[i].key, old[i].hash) = old[i];
  free(old);
  return 0;
}

sq_strmap *sq_strmap_new(void) { return calloc(1, sizeof(sq_strmap)); }

void sq_strmap_free(sq_strmap *m) {
  if (!m) return;
  for (size_t i = 0; i < m->cap; i++) free(m->slots[i].key);
  free(m->slots);
  free(m);
}

int sq_strmap_add(sq_strmap *m, const char *key, size_t value, size_t *existing) {
  uint64_t h = fnv1a(key);
  if (m->cap) {
    slot *s = find(m, key, h);
    if (s->key) {
      if (existing) *existing = s->value;
      return 1;
    }
  }
  if ((m->n + 1) * 4 > m->cap * 3 && grow(m) != 0) return SQ_ENOMEM;
  char *copy = strdup(key);
  if (!copy) return SQ_ENOMEM;
  *find(m, key, h) = (slot){.key = copy, .hash = h, .value = value};
  m->n++;
  return 0;
}

bool sq_strmap_get(const sq_strmap *m, const char *key, size_t *value) {
  if (!m->cap) return false;
  const slot *s = find(m, key, fnv1a(key));
  if (s->key && value) *value = s->value;
  return s->key != NULL;
}

size_t sq_strmap_count(const sq_strmap *m) { return m->n; }
