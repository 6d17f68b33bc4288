/* id_set.h: the ids of a task file, as 64-bit hashes: push's duplicate
 * check in 10 bytes per task when their count is known beforehand (8 a
 * slot, at most 4/5 full), up to 20 when the table has to double (the ids
 * themselves took ~170). Two
 * ids that share a hash are only suspects: the caller confirms them
 * exactly (push reads the file again for those ids alone). */
#ifndef SQ_PRODUCER_ID_SET_H
#define SQ_PRODUCER_ID_SET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct sq__id_set sq__id_set;

/* An id's hash (FNV-1a over its bytes, then a 64-bit mixer); never 0. */
uint64_t sq__id_hash(const char *id);

/* An empty set with room for expected ids (0: unknown; it doubles as it
 * fills, as it does past expected); NULL when out of memory. hash:
 * sq__id_hash when NULL (a test passes a weak one to make collisions).
 * Free with sq__id_set_free; NULL is a no-op. */
sq__id_set *sq__id_set_new(uint64_t (*hash)(const char *id), size_t expected);
void sq__id_set_free(sq__id_set *s);

/* Adds id's hash. Returns 0 when it is new, 1 when an id of the same hash
 * was added before (the hash becomes a suspect), or SQ_ENOMEM. */
int sq__id_set_add(sq__id_set *s, const char *id);

/* Whether any two ids added shared a hash, and whether id's hash is one. */
size_t sq__id_set_suspects(const sq__id_set *s);
bool sq__id_set_suspect(const sq__id_set *s, const char *id);

/* The bytes the set holds (its tables), for the docs' bound and tests. */
size_t sq__id_set_bytes(const sq__id_set *s);

#endif
