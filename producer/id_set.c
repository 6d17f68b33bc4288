/* id_set.c: id_set.h's sets of 64-bit hashes: linear probing in tables
 * kept at most 4/5 full, sized for the ids expected (no doubling on the
 * way: the peak is the table), 0 marking an empty slot. */
#include "id_set.h"

#include <stdlib.h>

#include "errors.h"

typedef struct {
  uint64_t *slot;
  size_t cap, n; /* cap: 0 before the first add */
} table;

struct sq__id_set {
  uint64_t (*hash)(const char *id);
  table all, suspects; /* every hash; the hashes added more than once */
};

uint64_t sq__id_hash(const char *id) {
  uint64_t h = 14695981039346656037ULL;
  for (const unsigned char *p = (const unsigned char *)id; *p; p++) h = (h ^ *p) * 1099511628211ULL;
  /* the murmur3 finalizer: every input bit moves the low bits the table indexes by */
  h ^= h >> 33, h *= 0xff51afd7ed558ccdULL, h ^= h >> 33, h *= 0xc4ceb9fe1a85ec53ULL, h ^= h >> 33;
  return h ? h : 1;
}

/* The slot of h, or the empty one where it would go. cap > 0. */
static uint64_t *find(const table *t, uint64_t h) {
  for (size_t i = (size_t)(h % t->cap);; i = i + 1 == t->cap ? 0 : i + 1)
    if (!t->slot[i] || t->slot[i] == h) return &t->slot[i];
}

/* To room for at least want hashes (doubling when 0), rehashed. */
static int grow(table *t, size_t want) {
  size_t cap = want ? want + want / 4 + 16 : t->cap ? t->cap * 2 : 1024;
  uint64_t *old = t->slot;
  size_t old_cap = t->cap;
  if (cap < old_cap || !(t->slot = calloc(cap, sizeof *t->slot))) {
    t->slot = old;
    return SQ_ENOMEM;
  }
  t->cap = cap;
  for (size_t i = 0; i < old_cap; i++)
    if (old[i]) *find(t, old[i]) = old[i];
  free(old);
  return 0;
}

/* 0 when h was added, 1 when it was there, or SQ_ENOMEM. */
static int table_add(table *t, uint64_t h) {
  if ((t->n + 1) * 5 > t->cap * 4 && grow(t, 0) != 0) return SQ_ENOMEM;
  uint64_t *s = find(t, h);
  if (*s) return 1;
  *s = h;
  t->n++;
  return 0;
}

sq__id_set *sq__id_set_new(uint64_t (*hash)(const char *id), size_t expected) {
  sq__id_set *s = calloc(1, sizeof *s);
  if (!s) return NULL;
  s->hash = hash ? hash : sq__id_hash;
  if (expected && grow(&s->all, expected) != 0) {
    free(s);
    return NULL;
  }
  return s;
}

void sq__id_set_free(sq__id_set *s) {
  if (!s) return;
  free(s->all.slot);
  free(s->suspects.slot);
  free(s);
}

int sq__id_set_add(sq__id_set *s, const char *id) {
  uint64_t h = s->hash(id);
  h = h ? h : 1;
  int rc = table_add(&s->all, h);
  if (rc != 1) return rc;
  return table_add(&s->suspects, h) < 0 ? SQ_ENOMEM : 1;
}

size_t sq__id_set_suspects(const sq__id_set *s) { return s->suspects.n; }

bool sq__id_set_suspect(const sq__id_set *s, const char *id) {
  if (!s->suspects.cap) return false;
  uint64_t h = s->hash(id);
  return *find(&s->suspects, h ? h : 1) != 0;
}

size_t sq__id_set_bytes(const sq__id_set *s) { return (s->all.cap + s->suspects.cap) * sizeof(uint64_t); }
