/* strmap.h: strings mapped to indexes in a hash table (open addressing,
 * FNV-1a over the whole key), for grouping and duplicate checks in linear
 * time. glibc's hsearch_r hashes only about a key's first eight bytes, so
 * keys that share a prefix ("HumanEval/...", "6:failed...") all collide and
 * a lookup turns into a scan. */
#ifndef SQ_STRMAP_H
#define SQ_STRMAP_H

#include <stdbool.h>
#include <stddef.h>

typedef struct sq_strmap sq_strmap;

/* An empty map, or NULL when out of memory. Free with sq_strmap_free. */
sq_strmap *sq_strmap_new(void);
/* Frees the map and its copies of the keys; NULL is a no-op. */
void sq_strmap_free(sq_strmap *m);

/* Maps key (copied) to value unless key is there already. Returns 0 when
 * added, 1 when key was there (*existing, when not NULL, gets its value;
 * the map is unchanged), or SQ_ENOMEM. */
int sq_strmap_add(sq_strmap *m, const char *key, size_t value, size_t *existing);

/* Whether key is in the map; *value (when not NULL) gets its value. */
bool sq_strmap_get(const sq_strmap *m, const char *key, size_t *value);

/* How many keys the map holds. */
size_t sq_strmap_count(const sq_strmap *m);

#endif
