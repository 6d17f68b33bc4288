/* name.h: the one check for names that become part of Redis keys: queue
 * names, worker ids and batch names.
 *
 * Such a name is 1..max characters of A-Z a-z 0-9 . _ : - so it can never
 * hold a brace (which would move the key out of the queue's {hash tag}), a
 * space, a control byte or a byte outside ASCII. The callers' maxima are
 * below; each states why it is what it is. */
#ifndef SQ_NAME_H
#define SQ_NAME_H

#include <stdbool.h>
#include <stddef.h>

#define SQ_NAME_CHARS "A-Z a-z 0-9 . _ : -" /* for messages naming the alphabet */

#define SQ_NAME_QUEUE_MAX 63   /* a queue name fills char[64] in config and in the queue handle */
#define SQ_NAME_WORKER_MAX 127 /* a worker id fills char[128] in config */
#define SQ_NAME_BATCH_MAX 128  /* a batch name: as long as a task id (SQ_TASK_ID_MAX) */

/* Whether c is in the name alphabet. */
bool sq_name_char_ok(int c);

/* Whether s is a valid name of at most max characters; NULL is not. */
bool sq_name_ok(const char *s, size_t max);

#endif
