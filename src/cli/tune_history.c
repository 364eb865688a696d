/* See tune_history.h. */
#include "cli/tune_history.h"

#include <math.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#include "sim/spec.h"

static int by_value(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

/* The p95 by nearest rank, as the simulator takes its quantiles. */
static double p95(double *v, size_t n)
{
	size_t rank;

	if (n == 0)
		return 0;
	qsort(v, n, sizeof *v, by_value);
	rank = (size_t)ceil(0.95 * (double)n);
	return v[(rank < 1 ? 1 : rank) - 1];
}

/* The ledger's total since h->since: what the fleet cost (busy, boot,
 * idle and billing); of the rows' team alone (its chargeback line) when
 * the history was one team's. */
static void actual_cost(struct tune_history *h, struct cli *cli)
{
	json_t *reply;

	h->actual_cost_usd = -1;
	json_object_clear(cli->query);
	json_object_set_new(cli->query, "since", json_integer(h->since));
	if (h->facts.team[0])
		json_object_set_new(cli->query, "team", json_string(h->facts.team));
	if (cli_call(cli, "GET", "/v1/report", NULL, &reply) < 0)
		return;
	if (json_is_number(json_object_get(json_object_get(reply, "total"), "cost_usd")))
		h->actual_cost_usd = json_number_value(json_object_get(json_object_get(reply, "total"), "cost_usd"));
	json_decref(reply);
}

int tune_history_fetch(struct tune_history *h, const char *name, const struct client_args *conn, int64_t since)
{
	struct cli cli = {.name = name, .conn = *conn, .query = json_object()};
	FILE *f;
	int fd = -1, rc;
	/* Where the user keeps temporary files, as mktemp(1) does. */
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";

	*h = (struct tune_history){.since = since, .actual_cost_usd = -1};
	rc = snprintf(h->path, sizeof h->path, "%s/ebb-history-XXXXXX", tmp);
	if (rc < 0 || (size_t)rc >= sizeof h->path || (fd = mkstemp(h->path)) < 0 || !(f = fdopen(fd, "w"))) {
		fprintf(stderr, "%s: %s: cannot make a temporary file\n", name, h->path);
		if (fd >= 0)
			close(fd);
		h->path[0] = '\0';
		cli_close(&cli);
		return 1;
	}
	rc = history_export(&cli, since, 0, f, &h->facts);
	if (fclose(f) != 0 && rc == 0)
		rc = cli_error(&cli, "%s: cannot write", h->path);
	if (rc == 0)
		actual_cost(h, &cli);
	h->actual_p95_s = p95(h->facts.waits, h->facts.jobs);
	cli_close(&cli);
	return rc;
}

int tune_history_replay(struct tune_history *h, const struct trace *tr, const struct simcli *c, char *err,
			size_t errsize)
{
	struct sim_result r;
	struct policy p;

	if (policy_parse("ebb", c->offers, c->o.plugins, &p, err, errsize) != 0)
		return -1;
	sim_run(tr, &p, &c->o, &r);
	policy_free(&p);
	sim_result_free(&r);
	h->running_cost_usd = r.cost_usd;
	h->running_p95_s = r.wait_p95_s;
	return 0;
}

static void since_text(const struct tune_history *h, char *buf, size_t size)
{
	time_t t = (time_t)h->since;
	struct tm tm;

	strftime(buf, size, "%Y-%m-%d %H:%M UTC", gmtime_r(&t, &tm));
}

void tune_history_print(const struct tune_history *h, const struct tune *t, FILE *out)
{
	char since[40];

	since_text(h, since, sizeof since);
	fprintf(out, "\nover serve's history (%zu jobs finished since %s):\n", h->facts.jobs, since);
	fprintf(out, "  %-34s %10s %10s\n", "", "COST $", "P95 WAIT");
	if (t->recommended >= 0)
		fprintf(out, "  %-34s %10.2f %9.1fs\n", "the recommendation, replayed", t->points[t->recommended].cost_usd,
			t->points[t->recommended].wait_p95_s);
	fprintf(out, "  %-34s %10.2f %9.1fs\n", "the running settings, replayed", h->running_cost_usd, h->running_p95_s);
	if (h->actual_cost_usd >= 0)
		fprintf(out, "  %-34s %10.2f %9.1fs\n", "the running settings, in fact", h->actual_cost_usd, h->actual_p95_s);
	else
		fprintf(out, "  %-34s %10s %9.1fs\n", "the running settings, in fact", "-", h->actual_p95_s);
}

json_t *tune_history_json(const struct tune_history *h, const struct tune *t)
{
	json_t *rec = json_null();

	if (t->recommended >= 0)
		rec = json_pack("{s:s, s:f, s:f}", "policy", t->points[t->recommended].spec, "cost_usd",
				t->points[t->recommended].cost_usd, "wait_p95_s", t->points[t->recommended].wait_p95_s);
	return json_pack("{s:I, s:o, s:I, s:I, s:o, s:{s:f, s:f}, s:{s:o, s:f}}", "since", (json_int_t)h->since, "team",
			 h->facts.team[0] ? json_string(h->facts.team) : json_null(), "origin",
			 (json_int_t)h->facts.origin, "jobs", (json_int_t)h->facts.jobs, "recommended", rec,
			 "running_replayed", "cost_usd", h->running_cost_usd, "wait_p95_s", h->running_p95_s,
			 "running_actual", "cost_usd",
			 h->actual_cost_usd >= 0 ? json_real(h->actual_cost_usd) : json_null(), "wait_p95_s",
			 h->actual_p95_s);
}

int tune_history_publish(const struct tune_history *h, const struct tune *t, const char *name,
			 const struct client_args *conn)
{
	struct cli cli = {.name = name, .conn = *conn, .query = json_object()};
	json_t *body = json_pack("{s:o}", "comparison", tune_history_json(h, t)), *reply;
	int rc = cli_call(&cli, "POST", "/v1/admin/tuning", body, &reply) < 0;

	json_decref(body);
	json_decref(reply);
	cli_close(&cli);
	if (rc == 0)
		fprintf(stderr, "%s: published: the dashboard shows this comparison\n", name);
	return rc;
}

void tune_history_done(struct tune_history *h)
{
	if (h->path[0])
		unlink(h->path);
	h->path[0] = '\0';
	history_facts_free(&h->facts);
}
