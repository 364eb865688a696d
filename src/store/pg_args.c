/* See pg_args.h. */
#include "store/pg_args.h"

#include <stdio.h>

/* The next slot, or -1 past the last (counted). */
static int next(struct pg_args *a)
{
	if (a->n < PG_ARGS_MAX)
		return a->n++;
	a->over++;
	return -1;
}

void pg_args_int(struct pg_args *a, int64_t v)
{
	int i = next(a);

	if (i >= 0) {
		snprintf(a->buf[i], sizeof a->buf[i], "%lld", (long long)v);
		a->v[i] = a->buf[i];
	}
}

void pg_args_num(struct pg_args *a, double v)
{
	int i = next(a);

	if (i >= 0) {
		snprintf(a->buf[i], sizeof a->buf[i], "%.17g", v);
		a->v[i] = a->buf[i];
	}
}

void pg_args_text(struct pg_args *a, const char *v)
{
	int i = next(a);

	if (i >= 0)
		a->v[i] = v;
}

void pg_args_limit(struct pg_args *a, int64_t v)
{
	if (v < 0)
		pg_args_text(a, NULL);
	else
		pg_args_int(a, v);
}

int pg_args_check(const struct pg_args *a, char *err, size_t errsize)
{
	if (!a->over)
		return 0;
	snprintf(err, errsize, "%d parameters, more than the %d a statement may have here", a->n + a->over,
		 PG_ARGS_MAX);
	return -1;
}
