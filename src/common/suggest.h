/* "Did you mean": the name nearest to a word that matched none, for the
 * messages about an unknown command, option or config key. The distance
 * is Damerau–Levenshtein's in its restricted form (optimal string
 * alignment): an insertion, a deletion, a substitution or a swap of two
 * neighbours counts one edit, the mistakes a typing hand makes. Only a
 * close name is offered; a guess far off misleads more than none (git's
 * help.c is the model). */
#ifndef EBB_SUGGEST_H
#define EBB_SUGGEST_H

#include <stddef.h>

/* Names longer than this are never offered (none is near it). */
#define SUGGEST_MAX 64

struct suggest {
	const char *word; /* what was typed */
	size_t len;       /* of word, up to a '=' (an option's "--name=value") */
	const char *best; /* the nearest name so far; NULL: none close */
	int distance;     /* its distance */
};

/* Starts a search for the name nearest to word's first len bytes. */
void suggest_init(struct suggest *s, const char *word, size_t len);
/* Weighs one more name; the first of equally near names stays. */
void suggest_consider(struct suggest *s, const char *name);

/* The edits from a's first alen bytes to b; -1 when either is longer
 * than SUGGEST_MAX. */
int suggest_distance(const char *a, size_t alen, const char *b);

#endif
