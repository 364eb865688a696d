/* Key tables (see conftab.h). The defaults are strings run through the
 * same parser as the file, so the example file, the docs and the values
 * in force cannot drift apart. */
#include "common/conftab.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"
#include "common/units.h"

void conftab_errf(char *err, size_t errsize, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errsize, fmt, ap);
	va_end(ap);
}

const struct conf_key *conftab_key(const struct conf_key *keys, const char *name)
{
	for (const struct conf_key *k = keys; k->name; k++) {
		if (strcmp(k->name, name) == 0)
			return k;
	}
	return NULL;
}

/* The value of k in base as the file would spell it. */
static void conftab_format(char *buf, size_t size, const struct conf_key *k, const void *base)
{
	const char *p = (const char *)base + k->offset;
	int64_t v = *(const int64_t *)p;

	switch (k->type) {
	case CONF_STRING:
		snprintf(buf, size, "%s", *(char *const *)p ? *(char *const *)p : "");
		break;
	case CONF_INT:
		snprintf(buf, size, "%lld", (long long)v);
		break;
	case CONF_DOUBLE:
		if (k->optional && *(const double *)p == CONF_ABSENT)
			buf[0] = '\0';
		else
			snprintf(buf, size, "%g", *(const double *)p);
		break;
	case CONF_BOOL:
		snprintf(buf, size, "%s", v ? "on" : "off");
		break;
	case CONF_DURATION:
		if (k->auto_ok && v == CONF_AUTO)
			snprintf(buf, size, "auto");
		else
			format_duration(buf, size, v);
		break;
	case CONF_SIZE:
		format_size(buf, size, v);
		break;
	case CONF_ENUM:
		snprintf(buf, size, "%s", k->choices[v]);
		break;
	}
}

static void format_bound(char *buf, size_t size, const struct conf_key *k, int64_t v)
{
	if (k->type == CONF_DURATION)
		format_duration(buf, size, v);
	else if (k->type == CONF_SIZE)
		format_size(buf, size, v);
	else
		snprintf(buf, size, "%lld", (long long)v);
}

const char *conftab_type_name(enum conf_type t)
{
	static const char *const names[] = {
		[CONF_STRING] = "string", [CONF_INT] = "integer", [CONF_DOUBLE] = "number", [CONF_BOOL] = "on/off",
		[CONF_DURATION] = "duration", [CONF_SIZE] = "size", [CONF_ENUM] = "choice",
	};
	return names[t];
}

void conftab_bounds(const struct conf_key *k, char *min, char *max, size_t size)
{
	min[0] = max[0] = '\0';
	switch (k->type) {
	case CONF_STRING:
		break;
	case CONF_BOOL:
		snprintf(min, size, "off");
		snprintf(max, size, "on");
		break;
	case CONF_ENUM: {
		int last = 0;
		while (k->choices[last + 1])
			last++;
		snprintf(min, size, "%s", k->choices[0]);
		snprintf(max, size, "%s", k->choices[last]);
		break;
	}
	case CONF_DOUBLE:
		snprintf(min, size, "%g", k->fmin);
		snprintf(max, size, "%g", k->fmax);
		break;
	default:
		format_bound(min, size, k, k->min);
		format_bound(max, size, k, k->max);
	}
}

/* Parses value for key k into base + k->offset; on error writes what was
 * expected into err. */
int conftab_set(const struct conf_key *k, void *base, const char *value, const void *ctx, char *err,
		size_t errsize)
{
	char *p = (char *)base + k->offset;
	char lo[32], hi[32];
	int64_t v = 0;
	int rc = 0;

	if (k->check && k->check(ctx, value, err, errsize) != 0)
		return -1;
	switch (k->type) {
	case CONF_STRING: {
		size_t n = strlen(value);
		char *copy;
		/* Empty means "not set" only where the default is empty too (a
		 * token's secret, checked later); "listen =" is an error here. */
		if ((int64_t)n > k->max || ((int64_t)n < k->min && (n > 0 || k->def[0] != '\0'))) {
			conftab_errf(err, errsize, "expected %lld to %lld characters, got %zu",
				(long long)k->min, (long long)k->max, n);
			return -1;
		}
		if (!(copy = mem_strdup(value))) {
			conftab_errf(err, errsize, "out of memory");
			return -1;
		}
		free(*(char **)p);
		*(char **)p = copy;
		return 0;
	}
	case CONF_ENUM:
		for (int i = 0; k->choices[i]; i++) {
			if (strcmp(value, k->choices[i]) == 0) {
				*(int64_t *)p = i;
				return 0;
			}
		}
		{
			char list[256] = "";
			for (int i = 0; k->choices[i]; i++) {
				strncat(list, i ? ", " : "", sizeof list - strlen(list) - 1);
				strncat(list, k->choices[i], sizeof list - strlen(list) - 1);
			}
			conftab_errf(err, errsize, "expected one of %s, got '%s'", list, value);
		}
		return -1;
	case CONF_INT:
		rc = parse_int64(value, &v);
		if (rc)
			conftab_errf(err, errsize, "expected an integer, got '%s'", value);
		break;
	case CONF_DOUBLE: {
		double d;
		if (k->optional && value[0] == '\0') {
			*(double *)p = CONF_ABSENT;
			return 0;
		}
		if (k->fraction) {
			if (parse_fraction(value, &d) != 0 || d <= k->fmin || d > k->fmax) {
				conftab_errf(err, errsize, "expected a fraction above %g and at most %g (1/4 or 0.25), got '%s'",
					     k->fmin, k->fmax, value);
				return -1;
			}
		} else if (parse_double(value, &d) != 0 || d < k->fmin || d > k->fmax) {
			conftab_errf(err, errsize, "expected a number from %g to %g, got '%s'", k->fmin, k->fmax, value);
			return -1;
		}
		*(double *)p = d;
		return 0;
	}
	case CONF_BOOL:
		if (strcmp(value, "on") == 0 || strcmp(value, "true") == 0 || strcmp(value, "yes") == 0) {
			*(int64_t *)p = 1;
		} else if (strcmp(value, "off") == 0 || strcmp(value, "false") == 0 || strcmp(value, "no") == 0) {
			*(int64_t *)p = 0;
		} else {
			conftab_errf(err, errsize, "expected on or off, got '%s'", value);
			return -1;
		}
		return 0;
	case CONF_DURATION:
		if (k->auto_ok && strcmp(value, "auto") == 0) {
			*(int64_t *)p = CONF_AUTO;
			return 0;
		}
		rc = parse_duration_ms(value, &v);
		if (rc)
			conftab_errf(err, errsize,
				"expected a duration with a unit (500ms, 3s, 10m, 1h, 2d), got '%s'", value);
		break;
	case CONF_SIZE:
		rc = parse_size_bytes(value, &v);
		if (rc)
			conftab_errf(err, errsize, "expected a size with a unit (512B, 64KiB, 1MiB), got '%s'",
				value);
		break;
	}
	if (rc)
		return -1;
	if (v < k->min || v > k->max) {
		format_bound(lo, sizeof lo, k, k->min);
		format_bound(hi, sizeof hi, k, k->max);
		conftab_errf(err, errsize, "expected a value from %s to %s, got '%s'", lo, hi, value);
		return -1;
	}
	*(int64_t *)p = v;
	return 0;
}

void conftab_defaults(const struct conf_key *keys, void *base)
{
	char ignored[256];

	for (const struct conf_key *k = keys; k->name; k++) {
		/* The table's own defaults always parse; a test checks that. */
		if (conftab_set(k, base, k->def, NULL, ignored, sizeof ignored) != 0)
			log_error("config default does not parse", "key=%s", k->name);
	}
}

void conftab_free(const struct conf_key *keys, void *base)
{
	for (const struct conf_key *k = keys; k->name; k++) {
		if (k->type == CONF_STRING)
			free(*(char **)((char *)base + k->offset));
	}
}

static void write_key_doc(FILE *out, const struct conf_key *k, const char *indent)
{
	char lo[32], hi[32];

	fprintf(out, "%s# %s\n", indent, k->help);
	switch (k->type) {
	case CONF_ENUM:
		fprintf(out, "%s# One of:", indent);
		for (int i = 0; k->choices[i]; i++)
			fprintf(out, " %s", k->choices[i]);
		fputc('\n', out);
		break;
	case CONF_STRING:
	case CONF_BOOL:
		break;
	case CONF_DOUBLE:
		if (k->fraction)
			fprintf(out, "%s# Above %g, at most %g: 1/4 or 0.25.\n", indent, k->fmin, k->fmax);
		else
			fprintf(out, "%s# From %g to %g%s.\n", indent, k->fmin, k->fmax, k->optional ? ", or empty" : "");
		break;
	default:
		format_bound(lo, sizeof lo, k, k->min);
		format_bound(hi, sizeof hi, k, k->max);
		fprintf(out, "%s# From %s to %s.\n", indent, lo, hi);
	}
}

void conftab_write_example(FILE *out, const struct conf_key *keys, int commented)
{
	for (const struct conf_key *k = keys; k->name; k++) {
		write_key_doc(out, k, "");
		fprintf(out, "%s%s = %s\n", commented ? "#" : "", k->name, k->def);
	}
}

json_t *conftab_json(const struct conf_key *keys, const void *base)
{
	json_t *o = json_object();
	char name[128];

	for (const struct conf_key *k = keys; k->name; k++) {
		const char *p = (const char *)base + k->offset;
		int64_t v = *(const int64_t *)p;
		json_t *value;

		if (k->secret)
			continue;
		snprintf(name, sizeof name, "%s%s", k->name, k->type == CONF_DURATION ? "_s" : "");
		switch (k->type) {
		case CONF_STRING:
			value = json_string(*(char *const *)p ? *(char *const *)p : "");
			break;
		case CONF_DOUBLE:
			value = k->optional && *(const double *)p == CONF_ABSENT ? json_null() : json_real(*(const double *)p);
			break;
		case CONF_BOOL:
			value = json_boolean(v);
			break;
		case CONF_DURATION:
			value = k->auto_ok && v == CONF_AUTO ? json_string("auto") : json_real((double)v / 1000.0);
			break;
		case CONF_ENUM:
			value = json_string(k->choices[v]);
			break;
		default:
			value = json_integer(v);
		}
		json_object_set_new(o, name, value);
	}
	return o;
}

void conftab_write_values(FILE *out, const struct conf_key *keys, const void *base)
{
	char value[1024];

	for (const struct conf_key *k = keys; k->name; k++) {
		if (k->secret)
			snprintf(value, sizeof value, "(hidden)");
		else
			conftab_format(value, sizeof value, k, base);
		fprintf(out, "%s = %s\n", k->name, value);
	}
}
