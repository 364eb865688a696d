/* See suggest.h. */
#include <stddef.h>
#include <string.h>

#include "common/suggest.h"

int suggest_distance(const char *a, size_t alen, const char *b)
{
	/* Three rows of the table: the one before the last, the last, this. */
	int rows[3][SUGGEST_MAX + 1];
	size_t blen = strlen(b);

	if (alen > SUGGEST_MAX || blen > SUGGEST_MAX)
		return -1;
	for (size_t j = 0; j <= blen; j++)
		rows[0][j] = (int)j;
	/* Row i is rows[i % 3]: row i - 1 is (i + 2) % 3, row i - 2 (i + 1) % 3. */
	for (size_t i = 1; i <= alen; i++) {
		int *before = rows[(i + 1) % 3], *last = rows[(i + 2) % 3], *row = rows[i % 3];
		row[0] = (int)i;
		for (size_t j = 1; j <= blen; j++) {
			int cost = a[i - 1] != b[j - 1], d = last[j - 1] + cost;
			if (last[j] + 1 < d)
				d = last[j] + 1;
			if (row[j - 1] + 1 < d)
				d = row[j - 1] + 1;
			if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] && before[j - 2] + 1 < d)
				d = before[j - 2] + 1;
			row[j] = d;
		}
	}
	return rows[alen % 3][blen];
}

/* The most edits a name may be from a word of len bytes to be offered:
 * one in a short word, a few in a long one, never the whole word. */
static int close_enough(int distance, size_t len)
{
	int most = 1 + (int)(len / 4);

	return distance >= 0 && distance <= (most < 3 ? most : 3) && (size_t)distance < len;
}

void suggest_init(struct suggest *s, const char *word, size_t len)
{
	*s = (struct suggest){.word = word, .len = len};
}

void suggest_consider(struct suggest *s, const char *name)
{
	int d = suggest_distance(s->word, s->len, name);

	if (close_enough(d, s->len) && (!s->best || d < s->distance)) {
		s->best = name;
		s->distance = d;
	}
}
