/* See joblog.h. */
#include "serve/joblog.h"

#include <string.h>

#include "common/jsonout.h"

/* Lines read or deleted per step: no step holds serve's loop for long. */
#define SLICE_LINES 2000
/* Attempts the retention looks at per step. */
#define SLICE_METAS 8

struct sum {
	int64_t last_seq, bytes;
	int n;
};

static int add_line(void *arg, const struct log_line *l)
{
	struct sum *s = arg;

	s->last_seq = l->seq;
	s->bytes += (int64_t)strlen(l->text);
	s->n++;
	return 0;
}

struct cover {
	int64_t need, last_seq, bytes;
};

/* Lines until they cover need bytes: 1 stops the walk there. */
static int cover_line(void *arg, const struct log_line *l)
{
	struct cover *c = arg;

	c->last_seq = l->seq;
	c->bytes += (int64_t)strlen(l->text);
	return c->bytes >= c->need;
}

/* Past log_max, the oldest lines after the head go until it fits, a
 * slice at a time. */
static int trim(struct store *st, const struct config *cfg, struct log_meta *m)
{
	while (m->bytes > cfg->log_max && m->head_end >= 0) {
		struct cover c = {.need = m->bytes - cfg->log_max, .last_seq = m->head_end};

		if (store_log_lines(st, m->job, m->attempt, m->head_end, SLICE_LINES, 0, cover_line, &c) < 0)
			return -1;
		if (c.bytes == 0)
			break;
		if (store_log_delete(st, m->job, m->attempt, m->head_end, c.last_seq) != 0)
			return -1;
		m->bytes -= c.bytes;
		m->trimmed += c.bytes;
	}
	return 0;
}

int joblog_append(struct store *st, const struct config *cfg, int64_t now_ms, int64_t job, int attempt,
		  int64_t seq, json_t *lines, int64_t dropped, int64_t *next)
{
	struct log_meta m;
	size_t i;
	json_t *line;
	int rc = store_log_meta(st, job, attempt, &m);

	if (rc == STORE_NOT_FOUND)
		m = (struct log_meta){.job = job, .attempt = attempt, .head_end = -1};
	else if (rc != 0)
		return -1;
	json_array_foreach(lines, i, line) {
		struct log_line l = {
			.job = job,
			.attempt = attempt,
			.seq = seq + (int64_t)i,
			.at_ms = (int64_t)(json_number_value(json_object_get(line, "at")) * 1000),
			.stream = json_string_value(json_object_get(line, "stream")),
			.text = json_string_value(json_object_get(line, "text")),
		};
		if (l.seq < m.next)
			continue; /* stored by an earlier send of this batch */
		if (store_log_insert(st, &l) != 0)
			return -1;
		m.bytes += (int64_t)strlen(l.text);
		m.next = l.seq + 1;
		if (m.head_end < 0 && m.bytes >= cfg->log_max / 2)
			m.head_end = l.seq;
	}
	/* The worker's count only grows: an older batch sent again says less. */
	if (dropped > m.dropped)
		m.dropped = dropped;
	m.updated_ms = now_ms;
	if (trim(st, cfg, &m) != 0 || store_log_meta_put(st, &m) != 0)
		return -1;
	*next = m.next;
	return 0;
}

struct reader {
	struct jsonout *o;
	int64_t last_seq;
	int n;
};

static int write_line(void *arg, const struct log_line *l)
{
	struct reader *r = arg;

	jsonout_open(r->o, NULL, '{');
	jsonout_int(r->o, "seq", l->seq);
	jsonout_seconds(r->o, "at", l->at_ms);
	jsonout_string(r->o, "stream", l->stream);
	jsonout_string(r->o, "text", l->text);
	jsonout_close(r->o, '}');
	r->last_seq = l->seq;
	r->n++;
	return 0;
}

static int first_seq(void *arg, const struct log_line *l)
{
	*(int64_t *)arg = l->seq;
	return 0;
}

int joblog_read(struct store *st, struct jsonout *o, int64_t job, int attempt, int64_t after, int tail)
{
	struct reader r = {.o = o, .last_seq = after};
	struct log_meta m = {0};
	int64_t from = after;
	int rc = store_log_meta(st, job, attempt, &m);

	if (rc != 0 && rc != STORE_NOT_FOUND)
		return -1;
	/* The last tail lines: the first of them read newest first, then
	 * all of them in order. */
	if (tail > 0) {
		int64_t first = -1;
		if (store_log_lines(st, job, attempt, after, tail, 1, first_seq, &first) != 0)
			return -1;
		if (first > from)
			from = first - 1;
	}
	jsonout_open(o, "lines", '[');
	rc = store_log_lines(st, job, attempt, from, tail > 0 ? tail : JOBLOG_READ_MAX, 0, write_line, &r);
	jsonout_close(o, ']');
	if (rc != 0)
		return -1;
	jsonout_int(o, "next", r.last_seq);
	jsonout_int(o, "dropped", m.dropped + m.trimmed);
	return r.n;
}

struct metas {
	struct log_meta m[SLICE_METAS];
	int n;
};

static int add_meta(void *arg, const struct log_meta *m)
{
	struct metas *ms = arg;

	if (ms->n < SLICE_METAS)
		ms->m[ms->n++] = *m;
	return 0;
}

/* Deletes a slice of the attempt's oldest lines, and its meta with the
 * last of them. */
static int drop_slice(struct store *st, struct log_meta *m)
{
	struct sum s = {.last_seq = -1};

	if (store_log_lines(st, m->job, m->attempt, -1, SLICE_LINES, 0, add_line, &s) != 0)
		return -1;
	if (s.n < SLICE_LINES)
		return store_log_delete(st, m->job, m->attempt, -1, s.last_seq) != 0 ||
				       store_log_meta_delete(st, m->job, m->attempt) != 0
			       ? -1
			       : 0;
	m->bytes -= s.bytes;
	m->trimmed += s.bytes;
	return store_log_delete(st, m->job, m->attempt, -1, s.last_seq) != 0 || store_log_meta_put(st, m) != 0
		       ? -1
		       : 1;
}

int joblog_sweep(struct store *st, const struct config *cfg, int64_t now_ms)
{
	struct metas old = {0};
	int64_t total;
	int more = 0, rc;

	if (store_log_metas_oldest(st, now_ms - cfg->log_retention_ms, SLICE_METAS, add_meta, &old) != 0)
		return -1;
	for (int i = 0; i < old.n; i++) {
		if ((rc = drop_slice(st, &old.m[i])) < 0)
			return -1;
		more |= rc;
	}
	if (old.n == SLICE_METAS)
		more = 1;
	if (store_log_total(st, &total) != 0)
		return -1;
	if (total > cfg->logs_max_total) {
		old.n = 0;
		if (store_log_metas_oldest(st, INT64_MAX, 1, add_meta, &old) != 0)
			return -1;
		if (old.n && drop_slice(st, &old.m[0]) < 0)
			return -1;
		more |= old.n;
	}
	return more;
}
