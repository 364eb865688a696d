/* See rows.h. The members are reached by the offsets of store/schema.c,
 * each through a pointer of the type its kind says (checked there). */
#include "store/rows.h"

#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

int rows_in_set(const struct schema_column *c, enum rows_set set)
{
	switch (set) {
	case ROWS_ALL:
		return 1;
	case ROWS_STRUCT:
		return !(c->flags & SCHEMA_APART);
	case ROWS_INSERT:
		return !(c->flags & (SCHEMA_APART | SCHEMA_ID));
	case ROWS_UPDATE: /* its id apart: see rows_bind */
		return !(c->flags & (SCHEMA_APART | SCHEMA_ID | SCHEMA_FIXED));
	}
	return 0;
}

/* ---- column lists ---- */

void rows_names(FILE *out, const struct schema_table *t, enum rows_set set)
{
	const char *sep = "";

	for (int i = 0; i < t->ncols; i++) {
		if (rows_in_set(&t->cols[i], set)) {
			fprintf(out, "%s%s", sep, t->cols[i].name);
			sep = ", ";
		}
	}
}

void rows_marks(FILE *out, const struct schema_table *t, enum rows_set set, char mark, int first)
{
	int n = first;

	for (int i = 0; i < t->ncols; i++) {
		if (rows_in_set(&t->cols[i], set)) {
			fprintf(out, "%s%c%d", n > first ? ", " : "", mark, n);
			n++;
		}
	}
}

/* ---- values ---- */

/* An enum's value from its name: fallback when unknown. */
static int parse(int (*parse_fn)(const char *), const char *v, int fallback)
{
	int x = v ? parse_fn(v) : -1;

	return x < 0 ? fallback : x;
}

static void read_text(const struct schema_column *c, char *member, const char *v, size_t len)
{
	switch (c->kind) {
	case SCHEMA_TEXT:
		*(char **)member = v ? mem_strndup(v, len) : NULL;
		break;
	case SCHEMA_BORROWED:
		*(const char **)member = v;
		break;
	case SCHEMA_CHARS: /* a copy of known length: every job read has four */
		len = !v ? 0 : len < c->size ? len : c->size - 1;
		if (len)
			memcpy(member, v, len);
		member[len] = '\0';
		break;
	case SCHEMA_JOB_STATE:
		*(enum job_state *)member = (enum job_state)parse(job_state_parse, v, JOB_FAILED);
		break;
	case SCHEMA_INST_STATE:
		*(enum instance_state *)member = (enum instance_state)parse(instance_state_parse, v, INST_TERMINATED);
		break;
	case SCHEMA_MARKET:
		*(enum market *)member = (enum market)parse(market_parse, v, MARKET_ONDEMAND);
		break;
	default:
		break;
	}
}

void rows_read(const struct schema_table *t, void *row, const struct rows_source *from, void *src)
{
	int col = 0;

	memset(row, 0, t->size);
	for (const struct schema_column *c = t->cols; c < t->cols + t->ncols; c++) {
		char *member = (char *)row + c->offset;
		const char *v;
		size_t len;

		if (c->flags & SCHEMA_APART)
			continue;
		if (c->kind == SCHEMA_INT64) {
			*(int64_t *)member = from->int64(src, col);
		} else if (c->kind == SCHEMA_INT) {
			*(int *)member = (int)from->int64(src, col);
		} else if (c->kind == SCHEMA_REAL) {
			*(double *)member = from->real(src, col);
		} else {
			v = from->text(src, col, &len);
			read_text(c, member, v, len);
		}
		col++;
	}
}

static void bind_one(const struct schema_column *c, const void *row, const struct rows_sink *to, void *dst)
{
	const char *member = (const char *)row + c->offset;

	switch (c->kind) {
	case SCHEMA_INT64:
		to->int64(dst, *(const int64_t *)member);
		break;
	case SCHEMA_INT:
		to->int64(dst, *(const int *)member);
		break;
	case SCHEMA_REAL:
		to->real(dst, *(const double *)member);
		break;
	case SCHEMA_TEXT:
	case SCHEMA_BORROWED:
		to->text(dst, *(const char *const *)member);
		break;
	case SCHEMA_CHARS:
		to->text(dst, member);
		break;
	case SCHEMA_JOB_STATE:
		to->text(dst, job_state_name(*(const enum job_state *)member));
		break;
	case SCHEMA_INST_STATE:
		to->text(dst, instance_state_name(*(const enum instance_state *)member));
		break;
	case SCHEMA_MARKET:
		to->text(dst, market_name(*(const enum market *)member));
		break;
	}
}

void rows_bind(const struct schema_table *t, const void *row, enum rows_set set, const struct rows_sink *to,
	       void *dst)
{
	for (int i = 0; set == ROWS_UPDATE && i < t->ncols; i++) {
		if ((t->cols[i].flags & (SCHEMA_ID | SCHEMA_APART)) == SCHEMA_ID)
			bind_one(&t->cols[i], row, to, dst);
	}
	for (int i = 0; i < t->ncols; i++) {
		if (rows_in_set(&t->cols[i], set))
			bind_one(&t->cols[i], row, to, dst);
	}
}

int rows_emit(const struct schema_table *t, union schema_cb cb, void *arg, void *row)
{
	int rc = t->emit(cb, arg, row);

	for (const struct schema_column *c = t->cols; c < t->cols + t->ncols; c++) {
		if (c->kind == SCHEMA_TEXT && !(c->flags & SCHEMA_APART))
			free(*(char **)((char *)row + c->offset));
	}
	return rc;
}
