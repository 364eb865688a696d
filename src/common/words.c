/* See words.h. */
#include "common/words.h"

#include <stdio.h>
#include <string.h>

static int blank(char c) { return c == ' ' || c == '\t'; }

int words_split(const char *line, char *buf, char **words, int max, char *why, size_t whysize)
{
	const char *p = line;
	char *out = buf;
	int n = 0;

	for (;;) {
		while (blank(*p))
			p++;
		if (!*p)
			break;
		if (n == max) {
			snprintf(why, whysize, "more than %d words", max);
			return -1;
		}
		words[n++] = out;
		while (*p && !blank(*p)) {
			char q = *p;
			if (q == '\'' || q == '"') {
				for (p++; *p && *p != q; p++) {
					if (q == '"' && *p == '\\' && (p[1] == '"' || p[1] == '\\'))
						p++;
					*out++ = *p;
				}
				if (!*p) {
					snprintf(why, whysize, "a %c quote is not closed", q);
					return -1;
				}
				p++;
			} else if (q == '\\') {
				if (!p[1]) {
					snprintf(why, whysize, "a backslash at the end");
					return -1;
				}
				*out++ = p[1];
				p += 2;
			} else {
				*out++ = *p++;
			}
		}
		*out++ = '\0';
	}
	if (n == 0) {
		snprintf(why, whysize, "no program named");
		return -1;
	}
	return n;
}
