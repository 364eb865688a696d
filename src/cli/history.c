/* See history.h. */
#include "cli/history.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/mem.h"
#include "common/units.h"

int history_when(void *at, const char *arg, char *why, size_t size)
{
	int64_t *out = at, v, ms;
	struct tm tm = {0};
	int y, mo, d, len = 0;

	if (arg[0] == '@' && parse_int64(arg + 1, &v) == 0 && v >= 0) {
		*out = v;
		return 0;
	}
	if (parse_duration_ms(arg, &ms) == 0 && ms > 0 && ms / 1000 <= (int64_t)time(NULL)) {
		*out = (int64_t)time(NULL) - ms / 1000;
		return 0;
	}
	if (sscanf(arg, "%4d-%2d-%2d%n", &y, &mo, &d, &len) == 3 && !arg[len] && mo >= 1 && mo <= 12 && d >= 1 &&
	    d <= 31 && y >= 1970) {
		tm.tm_year = y - 1900;
		tm.tm_mon = mo - 1;
		tm.tm_mday = d;
		*out = (int64_t)timegm(&tm);
		return 0;
	}
	return options_why(why, size, "expected a span before now (30d, 12h), @UNIX_SECONDS or YYYY-MM-DD, got '%s'",
			   arg);
}

void history_facts_free(struct history_facts *f)
{
	free(f->waits);
}

static void gather(struct history_facts *f, json_t *row, size_t *cap)
{
	if (f->jobs == *cap) {
		*cap = *cap ? *cap * 2 : 1024;
		f->waits = xrealloc(f->waits, *cap * sizeof *f->waits);
	}
	f->waits[f->jobs++] = json_number_value(json_object_get(row, "wait_s"));
}

/* One row of the trace: the columns the loader knows (src/sim/trace.c),
 * submit_time_s from origin. */
static void write_row(FILE *out, json_t *row, int64_t origin)
{
	json_t *est = json_object_get(row, "est_s");
	double at = json_number_value(json_object_get(row, "submit_time_s")) - (double)origin;

	/* Below 0 only for ids out of creation order (serves on one
	 * database, each with its clock): the loader takes no such time. */
	fprintf(out, "%.3f,%.3f,%lld,%lld,%s,%s,", at > 0 ? at : 0,
		json_number_value(json_object_get(row, "duration_s")),
		(long long)json_integer_value(json_object_get(row, "gpus")),
		(long long)json_integer_value(json_object_get(row, "priority")),
		json_string_value(json_object_get(row, "lane")), json_string_value(json_object_get(row, "job_class")));
	if (json_is_integer(est))
		fprintf(out, "%lld", (long long)json_integer_value(est));
	fprintf(out, ",%s\n", json_string_value(json_object_get(row, "team")));
}

/* The header, after the trace's origin (src/sim/trace.c reads it: the
 * replay's months are then the calendar's, as serve's budgets are); no
 * origin for a trace of no jobs. */
static void header(FILE *out, int64_t origin)
{
	if (origin >= 0)
		fprintf(out, "# origin=%lld\n", (long long)origin);
	fprintf(out, "submit_time_s,duration_s,gpus,priority,lane,job_class,est_s,team\n");
}

int history_export(struct cli *cli, int64_t since, int64_t until, FILE *out, struct history_facts *facts)
{
	json_t *reply, *row, *next;
	size_t cap = 0, i;
	int64_t origin = -1;

	if (facts)
		*facts = (struct history_facts){0};

	if (since)
		json_object_set_new(cli->query, "since", json_integer(since));
	if (until)
		json_object_set_new(cli->query, "until", json_integer(until));
	for (;;) {
		if (cli_call(cli, "GET", "/v1/history", NULL, &reply) < 0)
			return 1;
		json_array_foreach(json_object_get(reply, "jobs"), i, row) {
			/* Pages go by id, so the first row was created first:
			 * no job is submitted before it. */
			if (origin < 0) {
				origin = (int64_t)json_number_value(json_object_get(row, "created_at"));
				fprintf(stderr, "%s: submit_time_s counts from %lld (Unix seconds)\n", cli->name,
					(long long)origin);
				header(out, origin);
			}
			write_row(out, row, origin);
			if (facts)
				gather(facts, row, &cap);
		}
		if (facts && json_is_string(json_object_get(reply, "team")))
			snprintf(facts->team, sizeof facts->team, "%s", json_string_value(json_object_get(reply, "team")));
		next = json_object_get(reply, "next_after");
		if (!json_is_integer(next)) {
			json_decref(reply);
			break;
		}
		json_object_set_new(cli->query, "after", json_integer(json_integer_value(next)));
		json_decref(reply);
	}
	if (origin < 0)
		header(out, -1);
	if (facts)
		facts->origin = origin;
	if (fflush(out) != 0 || ferror(out))
		return cli_error(cli, "cannot write the trace");
	return 0;
}
