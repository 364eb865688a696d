/* See sql.h. */
#include "store/sql.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "store/rows.h"

static const char *const common[S_COUNT] = {
	[S_UPDATE] = "UPDATE jobs SET {jobs:sets} WHERE id = ?1",
	[S_GET] = "SELECT {jobs} FROM jobs WHERE id = ?1",
	[S_GET_BY_KEY] = "SELECT {jobs} FROM jobs WHERE team = ?1 AND idem_key = ?2",
	[S_DUE] = "SELECT id FROM jobs WHERE state = 'delayed' AND run_at <= ?1"
		  " UNION ALL SELECT id FROM jobs WHERE state = 'leased' AND lease_expires <= ?1"
		  " LIMIT ?2",
	/* The jobs' tallies counted (counts.h): SQLite's at open, and what
	 * store_check() compares with those kept. */
	[S_COUNT_ROWS] = "SELECT state, lane, type, team, gpus, min_vram_gb, priority, COUNT(*), SUM(items),"
			 " SUM(CASE WHEN est_s = 0 THEN 1 ELSE 0 END), SUM(est_s), " RUN_MS_SUM ", MIN(created_at) FROM jobs"
			 " GROUP BY 1, 2, 3, 4, 5, 6, 7",
	/* An index seek (jobs_queued_class) that stops at the first row. Not
	 * MIN(): PostgreSQL, whose statistics after a burst expected one row,
	 * read the whole class to aggregate it (20 ms with 100,000 queued). */
	[S_QUEUED_OLDEST] = "SELECT created_at FROM jobs WHERE state = 'queued' AND lane = ?1 AND type = ?2"
			    " AND team = ?3 AND gpus = ?4 AND min_vram_gb = ?5 AND priority = ?6"
			    " ORDER BY created_at LIMIT 1",
	[S_RECENT_SUBMITS] = "SELECT created_at FROM jobs ORDER BY id DESC LIMIT ?1",
	/* Newest first by id, the submission order: a walk back from the end
	 * of the table that stops at the window's start. */
	[S_ARRIVALS] = "SELECT gpus, min_vram_gb, lane, type, est_s, created_at, team FROM jobs"
		       " ORDER BY id DESC LIMIT ?1",
	[S_JOB_COST] = "UPDATE jobs SET cost = cost + ?2 WHERE id = ?1",
	[S_INST_UPDATE] = "UPDATE instances SET {instances:sets} WHERE id = ?1",
	[S_INST_GET] = "SELECT {instances} FROM instances WHERE id = ?1",
	[S_INST_BY_TOKEN] = "SELECT {instances} FROM instances WHERE token = ?1 AND token <> ''",
	[S_DATA_SET] = "UPDATE instances SET provider_data = ?2 WHERE id = ?1",
	[S_DATA_GET] = "SELECT provider_data FROM instances WHERE id = ?1",
	/* Two statements, not one with "?1 OR": the live ones' partial index
	 * serves only a WHERE that is its own. */
	[S_INST_LIVE] = "SELECT {instances} FROM instances WHERE state <> 'terminated' ORDER BY id",
	[S_INST_PAGE] = "SELECT {instances} FROM instances WHERE id > ?1 ORDER BY id LIMIT ?2",
	[S_DEC_INSERT] = "INSERT INTO decisions ({decisions:fields}) VALUES ({decisions:marks})",
	[S_DEC_LIST] = "SELECT {decisions} FROM decisions WHERE id < ?1 ORDER BY id DESC LIMIT ?2",
	[S_SEG_OPEN] = "INSERT INTO segments ({segments:fields}) VALUES ({segments:marks})",
	[S_SEG_FIND] = "SELECT id, kind, job_id, start_at, gpus, gpu_part FROM segments WHERE instance_id = ?1 AND end_at = 0"
		       " LIMIT 1",
	[S_SEG_CLOSE] = "UPDATE segments SET end_at = ?2, cost = ?3 WHERE id = ?1",
	[S_SEG_LAST] = "SELECT COALESCE(MAX(id), 0) FROM segments",
	[S_SUM_ADD] = "INSERT INTO ledger_sums AS l VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
		      " ON CONFLICT (day, offer, market, kind, team) DO UPDATE SET ms = l.ms + ?6,"
		      " gpu_ms = l.gpu_ms + ?7, cost = l.cost + ?8, items = l.items + ?9",
	[S_ALERT_PUT] = "INSERT INTO alerts VALUES ({alerts:marks}) ON CONFLICT (key) DO UPDATE"
			" SET name = ?2, labels = ?3, firing = ?4, since = ?5, fired_at = ?6, value = ?7,"
			" summary = ?8",
	[S_ALERT_DELETE] = "DELETE FROM alerts WHERE key = ?1",
	[S_BUDGET_SET] = "INSERT INTO team_budgets VALUES ({team_budgets:marks}) ON CONFLICT (team) DO UPDATE"
			 " SET budget = ?2, set_at = ?3",
	[S_LOG_META] = "SELECT {job_log_meta} FROM job_log_meta WHERE job_id = ?1 AND attempt = ?2",
	[S_LOG_META_PUT] = "INSERT INTO job_log_meta VALUES ({job_log_meta:marks}) ON CONFLICT (job_id, attempt)"
			   " DO UPDATE SET next_seq = ?3, dropped = ?4, trimmed = ?5, bytes = ?6, head_end = ?7,"
			   " updated_at = ?8",
	[S_LOG_METAS_OLDEST] = "SELECT {job_log_meta} FROM job_log_meta WHERE updated_at < ?1"
			       " ORDER BY updated_at, job_id, attempt LIMIT ?2",
	[S_LOG_META_DELETE] = "DELETE FROM job_log_meta WHERE job_id = ?1 AND attempt = ?2",
	[S_LOG_TOTAL] = "SELECT COALESCE(SUM(bytes), 0) FROM job_log_meta",
	[S_LOG_INSERT] = "INSERT INTO job_logs VALUES ({job_logs:marks})",
	[S_LOG_LINES] = "SELECT {job_logs} FROM job_logs WHERE job_id = ?1 AND attempt = ?2 AND seq > ?3"
			" ORDER BY seq LIMIT ?4",
	[S_LOG_LAST] = "SELECT {job_logs} FROM job_logs WHERE job_id = ?1 AND attempt = ?2 AND seq > ?3"
		       " ORDER BY seq DESC LIMIT ?4",
	[S_LOG_DELETE] = "DELETE FROM job_logs WHERE job_id = ?1 AND attempt = ?2 AND seq > ?3 AND seq <= ?4",
	/* An attempt's end writes its end's columns alone. */
	[S_ATTEMPT_PUT] = "INSERT INTO job_attempts VALUES ({job_attempts:marks}) ON CONFLICT (job_id, attempt)"
			  " DO UPDATE SET ended_at = ?8, outcome = ?9, exit = ?10, items_done = ?11, checkpoint = ?12,"
			  " reason = ?13",
	[S_ATTEMPTS] = "SELECT {job_attempts} FROM job_attempts WHERE job_id = ?1 ORDER BY attempt",
	[S_TUNING_SET] = "INSERT INTO tunings VALUES ({tunings:marks}) ON CONFLICT (name) DO UPDATE"
			 " SET body = ?2, published_at = ?3",
};

/* An update's "name = ?2, ...": the id is ?1. */
static void sets(FILE *out, const struct schema_table *t, char mark)
{
	int n = 2;

	for (int i = 0; i < t->ncols; i++) {
		if (rows_in_set(&t->cols[i], ROWS_UPDATE)) {
			fprintf(out, "%s%s = %c%d", n > 2 ? ", " : "", t->cols[i].name, mark, n);
			n++;
		}
	}
}

/* One {TABLE[:PART]}, whose text between the braces is name (len bytes),
 * into out. */
static int columns(FILE *out, const char *name, size_t len, char mark, char *err, size_t errsize)
{
	const char *colon = memchr(name, ':', len);
	size_t n = colon ? (size_t)(colon - name) : len;
	const char *part = colon ? colon + 1 : "";
	size_t plen = colon ? len - n - 1 : 0;
	const struct schema_table *t;
	char table[64];

	snprintf(table, sizeof table, "%.*s", (int)(n < sizeof table ? n : sizeof table - 1), name);
	if (!(t = schema_table(table))) {
		snprintf(err, errsize, "{%.*s}: no table %s in store/schema.c", (int)len, name, table);
		return -1;
	}
	if (plen == 0)
		rows_names(out, t, ROWS_STRUCT);
	else if (plen == 6 && memcmp(part, "fields", 6) == 0)
		rows_names(out, t, ROWS_INSERT);
	else if (plen == 5 && memcmp(part, "marks", 5) == 0)
		rows_marks(out, t, ROWS_INSERT, mark, 1);
	else if (plen == 4 && memcmp(part, "sets", 4) == 0)
		sets(out, t, mark);
	else {
		snprintf(err, errsize, "{%.*s}: a table's part is fields, marks or sets", (int)len, name);
		return -1;
	}
	return 0;
}

/* sql with its columns in and its parameters marked, into out. */
static int expand(FILE *out, const char *sql, char mark, char *err, size_t errsize)
{
	const char *p = sql, *close;

	while (*p) {
		size_t n = strcspn(p, "{?");

		fwrite(p, 1, n, out);
		p += n;
		if (*p == '?') { /* ?N; a ? alone is PostgreSQL's jsonb operator */
			fputc(isdigit((unsigned char)p[1]) ? mark : '?', out);
			p++;
		} else if (*p == '{') {
			if (!(close = strchr(p, '}'))) {
				snprintf(err, errsize, "%s: a { without its }", sql);
				return -1;
			}
			if (columns(out, p + 1, (size_t)(close - p - 1), mark, err, errsize) != 0)
				return -1;
			p = close + 1;
		}
	}
	return 0;
}

int sql_texts(const char *const own[S_COUNT], char mark, char *out[S_COUNT], char *err, size_t errsize)
{
	for (int i = 0; i < S_COUNT; i++) {
		const char *sql = own[i] ? own[i] : common[i];
		size_t size;
		FILE *f;
		int rc;

		if (!sql)
			continue;
		if (!(f = open_memstream(&out[i], &size))) {
			snprintf(err, errsize, "out of memory");
			return -1;
		}
		rc = expand(f, sql, mark, err, errsize);
		if (fclose(f) != 0 && rc == 0) {
			snprintf(err, errsize, "out of memory");
			rc = -1;
		}
		if (rc != 0)
			return -1;
	}
	return 0;
}
