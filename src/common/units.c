/* Parsing and printing of durations and sizes (see units.h). */
#include "common/units.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct unit {
	const char *suffix;
	int64_t scale;
};

/* Longest suffixes first so that "ms" is not read as "m". */
static const struct unit duration_units[] = {
	{"ms", 1}, {"s", 1000}, {"m", 60000}, {"h", 3600000}, {"d", 86400000}, {NULL, 0},
};

static const struct unit size_units[] = {
	{"KiB", 1024}, {"MiB", 1024 * 1024}, {"GiB", 1024 * 1024 * 1024},
	{"KB", 1000}, {"MB", 1000 * 1000}, {"GB", 1000 * 1000 * 1000}, {"B", 1}, {NULL, 0},
};

static int parse_with_units(const char *s, const struct unit *units, int64_t *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno != 0 || !isfinite(v) || v < 0)
		return -1;
	if (v == 0 && *end == '\0') {
		*out = 0;
		return 0;
	}
	for (const struct unit *u = units; u->suffix; u++) {
		if (strcmp(end, u->suffix) == 0) {
			double scaled = v * (double)u->scale;
			if (scaled > 9.2e18 || scaled != floor(scaled))
				return -1;
			*out = (int64_t)scaled;
			return 0;
		}
	}
	return -1;
}

int parse_duration_ms(const char *s, int64_t *out_ms)
{
	return parse_with_units(s, duration_units, out_ms);
}

int parse_size_bytes(const char *s, int64_t *out_bytes)
{
	return parse_with_units(s, size_units, out_bytes);
}

int parse_int64(const char *s, int64_t *out)
{
	char *end;
	long long v;

	errno = 0;
	v = strtoll(s, &end, 10);
	if (end == s || *end != '\0' || errno != 0)
		return -1;
	*out = v;
	return 0;
}

int parse_double(const char *s, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || *end != '\0' || errno != 0 || !isfinite(v))
		return -1;
	*out = v;
	return 0;
}

int parse_fraction(const char *s, double *out)
{
	const char *slash = strchr(s, '/');
	char num[64];
	double n, d;

	if (!slash)
		return parse_double(s, out);
	if ((size_t)(slash - s) >= sizeof num)
		return -1;
	memcpy(num, s, (size_t)(slash - s));
	num[slash - s] = '\0';
	if (parse_double(num, &n) != 0 || parse_double(slash + 1, &d) != 0 || d == 0)
		return -1;
	*out = n / d;
	return 0;
}

static void format_exact(char *buf, size_t size, int64_t v, const struct unit *units,
			 const char *zero)
{
	const struct unit *best = NULL;

	if (v == 0) {
		snprintf(buf, size, "%s", zero);
		return;
	}
	for (const struct unit *u = units; u->suffix; u++) {
		if (v % u->scale == 0 && (!best || u->scale > best->scale))
			best = u;
	}
	snprintf(buf, size, "%lld%s", (long long)(v / best->scale), best->suffix);
}

void format_duration(char *buf, size_t size, int64_t ms)
{
	format_exact(buf, size, ms, duration_units, "0s");
}

void format_size(char *buf, size_t size, int64_t bytes)
{
	/* Binary units only: "1MiB" reads back exactly, "1048576B" does not help. */
	static const struct unit binary[] = {
		{"B", 1}, {"KiB", 1024}, {"MiB", 1024 * 1024}, {"GiB", 1024 * 1024 * 1024}, {NULL, 0},
	};
	format_exact(buf, size, bytes, binary, "0B");
}

void format_elapsed(char *buf, size_t size, int64_t ms)
{
	static const struct {
		const char *name;
		int64_t ms;
	} u[] = {{"d", 86400000}, {"h", 3600000}, {"m", 60000}, {"s", 1000}};
	int k = 0;

	if (ms < 1000) {
		snprintf(buf, size, "0 s");
		return;
	}
	while (ms < u[k].ms)
		k++;
	if (k < 3 && ms % u[k].ms >= u[k + 1].ms)
		snprintf(buf, size, "%lld %s %lld %s", (long long)(ms / u[k].ms), u[k].name,
			 (long long)(ms % u[k].ms / u[k + 1].ms), u[k + 1].name);
	else
		snprintf(buf, size, "%lld %s", (long long)(ms / u[k].ms), u[k].name);
}
