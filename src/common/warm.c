/* The warm-pool schedule (see warm.h). */
#include "common/warm.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

static const char *const day_names[7] = {"mon", "tue", "wed", "thu", "fri", "sat", "sun"};

static int day_index(const char *s, size_t n)
{
	for (int i = 0; i < 7; i++) {
		if (n == 3 && strncmp(s, day_names[i], 3) == 0)
			return i;
	}
	return -1;
}

static int parse_days(const char *s, unsigned *days)
{
	*days = 0;
	if (strcmp(s, "*") == 0) {
		*days = 0x7f;
		return 0;
	}
	while (*s) {
		size_t n = strcspn(s, ",");
		const char *dash = memchr(s, '-', n);
		int a, b;
		if (dash) {
			a = day_index(s, (size_t)(dash - s));
			b = day_index(dash + 1, n - (size_t)(dash - s) - 1);
		} else {
			a = b = day_index(s, n);
		}
		if (a < 0 || b < 0)
			return -1;
		/* A range may wrap the week: sat-mon is Saturday to Monday. */
		for (int d = a;; d = (d + 1) % 7) {
			*days |= 1u << d;
			if (d == b)
				break;
		}
		s += n;
		if (*s == ',')
			s++;
	}
	return 0;
}

static int parse_hours(const char *s, int *from, int *to)
{
	char tail;

	if (strcmp(s, "*") == 0) {
		*from = 0;
		*to = 24;
		return 0;
	}
	if (sscanf(s, "%d-%d%c", from, to, &tail) != 2 || *from < 0 || *to > 24 || *from >= *to)
		return -1;
	return 0;
}

int warm_parse(const char *text, struct warm_schedule *out, char *err, size_t errsize)
{
	char *copy = mem_strdup(text), *save = NULL;
	int rc = 0;

	memset(out, 0, sizeof *out);
	for (char *entry = strtok_r(copy, ";", &save); entry; entry = strtok_r(NULL, ";", &save)) {
		char days[64], hours[32], tail;
		int count;
		struct warm_entry *e;

		if (strspn(entry, " \t") == strlen(entry))
			continue;
		if (out->n == WARM_MAX_ENTRIES) {
			snprintf(err, errsize, "more than %d entries", WARM_MAX_ENTRIES);
			rc = -1;
			break;
		}
		e = &out->entries[out->n];
		if (sscanf(entry, " %63s %31s %d %c", days, hours, &count, &tail) != 3 ||
		    parse_days(days, &e->days) != 0 || parse_hours(hours, &e->from_hour, &e->to_hour) != 0 ||
		    count < 0 || count > 10000) {
			snprintf(err, errsize,
				 "entry '%s': expected DAYS HOURS COUNT, such as 'mon-fri 08-18 2' or '* * 1'", entry);
			rc = -1;
			break;
		}
		e->count = count;
		out->n++;
	}
	free(copy);
	return rc;
}

/* Monday-based weekday and hour of a Unix time in UTC. */
static void day_hour(int64_t now_ms, int *day, int *hour)
{
	int64_t s = now_ms / 1000, days = s / 86400;

	*hour = (int)((s % 86400) / 3600);
	/* 1970-01-01 was a Thursday (index 3). */
	*day = (int)((days + 3) % 7);
}

int warm_floor(const struct warm_schedule *w, int64_t now_ms)
{
	int day, hour;

	day_hour(now_ms, &day, &hour);
	for (int i = 0; i < w->n; i++) {
		const struct warm_entry *e = &w->entries[i];
		if ((e->days & (1u << day)) && hour >= e->from_hour && hour < e->to_hour)
			return e->count;
	}
	return 0;
}

int64_t warm_next_change(const struct warm_schedule *w, int64_t now_ms)
{
	int64_t hour_ms = 3600 * 1000, next = (now_ms / hour_ms + 1) * hour_ms;
	int now_floor = warm_floor(w, now_ms);

	if (w->n == 0)
		return 0;
	/* The floor only changes on the hour; a week of hours is 168 looks. */
	for (int i = 0; i < 168; i++, next += hour_ms) {
		if (warm_floor(w, next) != now_floor)
			return next;
	}
	return 0;
}
