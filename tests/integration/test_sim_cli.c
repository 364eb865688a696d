/* `ebb sim` as a user runs it: the real binary on a trace and an offers
 * file written here. Its JSON, its errors (one line on stderr naming the
 * file, line and column, or the policy and knob), --skip-bad, --plot and
 * --seed. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static const char offers[] =
	"[scaler]\nmax_gpus = 64\nmax_instances = 20\nmax_spend_per_hour = 0\n"
	"[offer.small]\ngpus = 1\nprice_ondemand = 1.2\nprice_spot = 0.4\nboot = 60s\nreliability = 0.6\n"
	"[offer.big]\ngpus = 8\nprice_ondemand = 9.0\nprice_spot = 3.0\nboot = 240s\nreliability = 0.7\n"
	"billing = per-minute\n";

/* A small bursty trace of n jobs, 1 to 8 GPUs, long enough for spot
 * reclaims to happen at these reliabilities. */
static char *trace_text(int n)
{
	size_t cap = (size_t)n * 48 + 64, len = 0;
	char *csv = malloc(cap);
	double t = 0;

	len += (size_t)snprintf(csv, cap, "submit_time_s,duration_s,gpus,team,job_class,ran\n");
	for (int k = 0; k < n; k++) {
		t += k % 10 == 0 ? 1800 : 7 + k % 13;
		len += (size_t)snprintf(csv + len, cap - len, "%.1f,%d,%d,t%d,%s,%d\n", t, 60 + (k * 379) % 5400,
					k % 9 == 0 ? 8 : 1, k % 3, k % 4 ? "BE" : "LS", k % 7 ? 1 : 0);
	}
	return csv;
}

struct files {
	char trace[4200], conf[4200], dir[4096];
};

static void files(struct files *f, const char *csv)
{
	snprintf(f->dir, sizeof f->dir, "%s", harness_tmpdir());
	snprintf(f->trace, sizeof f->trace, "%s/trace.csv", f->dir);
	snprintf(f->conf, sizeof f->conf, "%s/offers.conf", f->dir);
	harness_write_file(f->trace, csv);
	harness_write_file(f->conf, offers);
}

/* A failed run: status, nothing on stdout, and one line on stderr that
 * starts "ebb sim: " and says each needle. */
static void assert_one_line_error(struct harness_run *r, int status, const char *const *needles)
{
	const char *nl = strchr(r->err, '\n');

	if (r->status != status)
		print_error("stdout: %s\nstderr: %s\n", r->out, r->err);
	assert_int(r->status, status);
	assert_string_equal(r->out, "");
	assert_true(strncmp(r->err, "ebb sim: ", 9) == 0);
	if (!nl || nl[1] != '\0')
		fail_msg("expected one line on stderr, got: %s", r->err);
	for (; *needles; needles++)
		assert_contains(r->err, *needles);
}

static void json_has_every_key_for_each_policy(void **state)
{
	static const char *const policies[] = {"ebb",  "always-on", "min1", "util", "keda", "keda:placement=cheapest",
					       "clairvoyant", "bound"};
	static const char *const ints[] = {"jobs", "cold_starts", "reclaims", "requeues", "max_instances"};
	static const char *const reals[] = {"cost_usd",   "cost_per_job_usd", "gpu_hours_billed",
					    "gpu_hours_busy", "idle_gpu_hours", "wait_p50_s",
					    "wait_p95_s", "wait_p99_s", "requeue_wait_p95_s"};
	struct harness_run r;
	struct files f;
	char *csv = trace_text(60);
	json_t *v;

	(void)state;
	files(&f, csv);
	free(csv);
	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--json", NULL);
	if (r.status != 0)
		fail_msg("status %d: %s", r.status, r.err);
	assert_string_equal(r.err, "");
	v = harness_json(r.out);
	assert_true(json_is_array(v));
	/* With no --policy, every policy, in this order, keda with Karpenter
	 * too (the offers are two). */
	assert_int(json_array_size(v), 8);
	for (size_t k = 0; k < 8; k++) {
		json_t *p = json_array_get(v, k);
		assert_string_equal(JSTR(p, "policy"), policies[k]);
		for (size_t i = 0; i < sizeof ints / sizeof *ints; i++) {
			if (!json_is_integer(json_object_get(p, ints[i])))
				fail_msg("%s: %s is missing or not an integer", policies[k], ints[i]);
			assert_true(json_integer_value(json_object_get(p, ints[i])) >= 0);
		}
		for (size_t i = 0; i < sizeof reals / sizeof *reals; i++) {
			if (!json_is_number(json_object_get(p, reals[i])))
				fail_msg("%s: %s is missing or not a number", policies[k], reals[i]);
			assert_true(json_number_value(json_object_get(p, reals[i])) >= 0);
		}
		/* ebb, keda with Karpenter, the clairvoyant and bound use both
		 * offers; a baseline uses one, the first (small) unless told,
		 * and leaves out the 7 jobs of 8 GPUs. */
		if (k == 0 || k >= 5) {
			assert_int(JINT(p, "jobs"), 60);
			assert_int(JINT(p, "jobs_left_out"), 0);
		} else {
			assert_int(JINT(p, "jobs"), 53);
			assert_int(JINT(p, "jobs_left_out"), 7);
		}
		assert_true(json_number_value(json_object_get(p, "cost_usd")) > 0);
		assert_true(json_number_value(json_object_get(p, "wait_p50_s")) <=
			    json_number_value(json_object_get(p, "wait_p99_s")));
	}
	/* bound is the least of those that ran every job. */
	for (size_t k = 0; k < 8; k++) {
		if (k == 0 || k >= 5)
			assert_true(json_number_value(json_object_get(json_array_get(v, 7), "cost_usd")) <=
				    json_number_value(json_object_get(json_array_get(v, k), "cost_usd")));
	}
	json_decref(v);
	harness_run_free(&r);

	/* --policy picks, in the order given; --filter keeps rows. */
	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--json", "--policy", "keda:poll=10",
		    "--policy", "bound", "--filter", "ran=1", NULL);
	assert_int(r.status, 0);
	v = harness_json(r.out);
	assert_int(json_array_size(v), 2);
	assert_string_equal(JSTR(json_array_get(v, 0), "policy"), "keda:poll=10");
	assert_string_equal(JSTR(json_array_get(v, 1), "policy"), "bound");
	assert_int(JINT(json_array_get(v, 0), "jobs"), 45); /* 51 with ran=1, 6 of them of 8 GPUs */
	assert_int(JINT(json_array_get(v, 1), "jobs"), 60 - 9);
	json_decref(v);
	harness_run_free(&r);
}

/* The table for people: a header, one row per policy. */
static void table_by_default(void **state)
{
	struct harness_run r;
	struct files f;

	(void)state;
	files(&f, "submit_time_s,duration_s\n0,60\n30,60\n");
	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--policy", "min1", "--policy", "bound", NULL);
	assert_int(r.status, 0);
	assert_contains(r.out, "POLICY");
	assert_contains(r.out, "COST $");
	assert_contains(r.out, "\nmin1 ");
	assert_contains(r.out, "\nbound ");
	harness_run_free(&r);
}

/* A trace with a team column, replayed with the config's [team.NAME]: a
 * section per team after the table (each team's jobs, run and idle cost,
 * preemptions and waits, then the shared line), and in --json each
 * policy's "teams" and "shared_cost_usd", adding up to its cost; the
 * `default` team ebb launched for intern's job has a line of its own. A
 * trace of one team has neither. */
static void teams_table_and_json(void **state)
{
	static const char csv[] = "submit_time_s,duration_s,est_s,team\n0,1000,1000,research\n0,1000,1000,research\n"
				  "0,1000,1000,research\n10,100,100,product\n20,100,100,intern\n";
	struct harness_run r;
	struct files f;
	json_t *v, *teams;
	double sum;

	(void)state;
	files(&f, csv);
	harness_write_file(f.conf, "[scaler]\nmax_gpus = 2\n[offer.a]\ngpus = 1\nprice_ondemand = 3.6\nboot = 100s\n"
				   "[team.research]\nquota_gpus = 1\n[team.product]\nquota_gpus = 1\n");
	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--policy", "ebb", NULL);
	assert_int(r.status, 0);
	assert_contains(r.out, "\nper team");
	assert_contains(r.out, "TEAM");
	assert_contains(r.out, "RUN $");
	assert_contains(r.out, " research ");
	assert_contains(r.out, " product ");
	assert_contains(r.out, " intern "); /* no [team.intern]: replayed as default's, reported by its name */
	assert_contains(r.out, "IDLE $");
	assert_contains(r.out, "PREEMPTED");
	assert_contains(r.out, "(shared)");
	harness_run_free(&r);

	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--policy", "ebb", "--json", NULL);
	assert_int(r.status, 0);
	v = harness_json(r.out);
	teams = json_object_get(json_array_get(v, 0), "teams");
	assert_int(json_array_size(teams), 4);
	assert_string_equal(JSTR(json_array_get(teams, 0), "team"), "research");
	assert_int(JINT(json_array_get(teams, 0), "jobs"), 3);
	assert_string_equal(JSTR(json_array_get(teams, 1), "team"), "product");
	assert_int(JINT(json_array_get(teams, 1), "jobs"), 1);
	/* 3000 GPU-seconds at $0.001 */
	assert_true(fabs(json_number_value(json_object_get(json_array_get(teams, 0), "run_cost_usd")) - 3.0) < 1e-9);
	assert_string_equal(JSTR(json_array_get(teams, 3), "team"), "default");
	assert_int(JINT(json_array_get(teams, 3), "jobs"), 0);
	/* research's work launched both instances (product's quota lent):
	 * their boots, 100 s each at $0.001, are research's at least */
	assert_true(json_number_value(json_object_get(json_array_get(teams, 0), "idle_cost_usd")) >= 0.2 - 1e-9);
	sum = json_number_value(json_object_get(json_array_get(v, 0), "shared_cost_usd"));
	for (size_t k = 0; k < json_array_size(teams); k++) {
		json_t *team = json_array_get(teams, k);
		double run = json_number_value(json_object_get(team, "run_cost_usd"));
		double idle = json_number_value(json_object_get(team, "idle_cost_usd"));
		assert_true(fabs(run + idle - json_number_value(json_object_get(team, "cost_usd"))) < 1e-9);
		sum += run + idle;
	}
	assert_true(fabs(sum - json_number_value(json_object_get(json_array_get(v, 0), "cost_usd"))) < 1e-6);
	json_decref(v);
	harness_run_free(&r);

	/* Twelve teams, t00 running 1 s up to t11 running 12 s, none with a
	 * section: their launches are the default team's, which costs most
	 * (the boots and idle time). The table shows the ten lines that cost
	 * most and the other three on one line; --json lists all 13. */
	{
		char many[1024] = "submit_time_s,duration_s,team\n";
		for (int t = 0; t < 12; t++)
			snprintf(many + strlen(many), sizeof many - strlen(many), "%d,%d,t%02d\n", t * 100, t + 1, t);
		harness_write_file(f.trace, many);
	}
	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--policy", "ebb", NULL);
	assert_int(r.status, 0);
	assert_contains(r.out, " default ");
	assert_contains(r.out, " t11 ");
	assert_contains(r.out, " t03 ");
	assert_true(strstr(r.out, " t02 ") == NULL && strstr(r.out, " t00 ") == NULL);
	assert_contains(r.out, "(3 other teams)");
	harness_run_free(&r);
	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--policy", "ebb", "--json", NULL);
	assert_int(r.status, 0);
	v = harness_json(r.out);
	assert_int(json_array_size(json_object_get(json_array_get(v, 0), "teams")), 13);
	json_decref(v);
	harness_run_free(&r);

	harness_write_file(f.trace, "submit_time_s,duration_s\n0,60\n30,60\n");
	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--policy", "ebb", NULL);
	assert_int(r.status, 0);
	assert_true(strstr(r.out, "per team") == NULL);
	harness_run_free(&r);
	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--policy", "ebb", "--json", NULL);
	assert_int(r.status, 0);
	v = harness_json(r.out);
	assert_null(json_object_get(json_array_get(v, 0), "teams"));
	json_decref(v);
	harness_run_free(&r);
}

/* serve's own config, with its provider's section, replays as it is: the
 * simulator reads the plug-ins' sections it does not use, and still
 * refuses a bad one. */
static void serve_config_with_plugin_sections(void **state)
{
	struct harness_run r;
	struct files f;

	(void)state;
	files(&f, "submit_time_s,duration_s\n0,60\n30,60\n");
	harness_write_file(f.conf, harness_fmt("%s[provider]\nkind = local\n[local]\ngpus = 0,1\n", offers));
	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--policy", "ebb", NULL);
	assert_int(r.status, 0);
	assert_contains(r.out, "\nebb ");
	harness_run_free(&r);
	harness_write_file(f.conf, harness_fmt("%s[local]\ngpus = 0,0\n", offers));
	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--policy", "ebb", NULL);
	assert_int(r.status, 1);
	assert_contains(r.err, "[local] gpus: GPU 0 is listed twice");
	harness_run_free(&r);
}

static void malformed_trace_names_file_line_and_column(void **state)
{
	struct harness_run r;
	struct files f;

	(void)state;
	files(&f, "submit_time_s,duration_s,gpus\n0,60,1\n5,sixty,1\n9,60,1\n");
	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--json", NULL);
	assert_one_line_error(&r, 1,
			      (const char *const[]){harness_fmt("%s:3:", f.trace), "column 2 (duration_s)",
						    "'sixty'", NULL});
	harness_run_free(&r);

	files(&f, "submit_time_s,duration_s,gpus\n0,60,1\n5,60\n");
	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, NULL);
	assert_one_line_error(&r, 1, (const char *const[]){harness_fmt("%s:3:", f.trace), "columns", NULL});
	harness_run_free(&r);

	/* serve takes whole priorities, which the lease order compares. */
	files(&f, "submit_time_s,duration_s,priority\n0,60,1\n5,60,2.5\n");
	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, NULL);
	assert_one_line_error(&r, 1, (const char *const[]){harness_fmt("%s:3:", f.trace), "column 3 (priority)",
							    "expected a whole priority", "'2.5'", NULL});
	harness_run_free(&r);

	files(&f, "submit_time_s,gpus\n0,1\n");
	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, NULL);
	assert_one_line_error(&r, 1, (const char *const[]){harness_fmt("%s:1:", f.trace), "duration_s", NULL});
	harness_run_free(&r);

	files(&f, "submit_time_s,duration_s\n0,60\n");
	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--filter", "ran=1", NULL);
	assert_one_line_error(&r, 1, (const char *const[]){":1:", "no column ran", NULL});
	harness_run_free(&r);

	harness_ebb(&r, NULL, "sim", harness_fmt("%s/missing.csv", f.dir), "--offers", f.conf, NULL);
	assert_one_line_error(&r, 1, (const char *const[]){"missing.csv", "cannot open", NULL});
	harness_run_free(&r);
}

/* --reclaims: reclaims at chosen times, on the trace's clock (--from
 * moves both, and drops the reclaims before it); no random one besides
 * (the offers' reliabilities of 0.6 and 0.7 would draw some). The job of
 * 600 s, at 100 s in the file, is at 0 s after --from 100, on
 * always-on's one spot instance (small, up from the start); the reclaim
 * at 300 s in the file, 200 s after --from, puts it back until the
 * replacement's boot of 60 s is over: it starts again at 260 s. The one
 * at 50 s is before --from; the one of job 1 finds no such job; the one
 * at 5,000 s comes after the end. A bad line stops the replay, naming
 * it. */
static void reclaims_from_a_file(void **state)
{
	char reclaims[4300], jobs[4300], *csv;
	struct harness_run r;
	struct files f;
	json_t *v;

	(void)state;
	files(&f, "submit_time_s,duration_s\n100,600\n");
	snprintf(reclaims, sizeof reclaims, "%s/reclaims.csv", f.dir);
	snprintf(jobs, sizeof jobs, "%s/jobs.csv", f.dir);
	harness_write_file(reclaims, "time_s,job\n300,0\n50,0\n400,1\n5000,0\n");
	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--from", "100", "--policy",
		    "always-on:market=spot,n=1", "--reclaims", reclaims, "--jobs", jobs, "--json", NULL);
	if (r.status != 0)
		fail_msg("status %d: %s", r.status, r.err);
	v = harness_json(r.out);
	assert_int(JINT(json_array_get(v, 0), "reclaims"), 1);
	assert_int(JINT(json_array_get(v, 0), "reclaims_missed"), 2);
	assert_int(JINT(json_array_get(v, 0), "requeues"), 1);
	json_decref(v);
	harness_run_free(&r);
	csv = harness_read_file(jobs, NULL);
	assert_string_equal(csv, "policy,job,submit_s,start_s,wait_s,last_start_s\n"
				 "\"always-on:market=spot,n=1\",0,0.000,0.000,0.000,260.000\n");
	free(csv);

	/* The table says what found no instance. */
	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--from", "100", "--policy",
		    "always-on:market=spot,n=1", "--reclaims", reclaims, NULL);
	assert_int(r.status, 0);
	assert_contains(r.out, "note: always-on:market=spot,n=1: 2 of the --reclaims found no spot instance");
	harness_run_free(&r);

	harness_write_file(reclaims, "time_s,instance\n300,1\n3oo,1\n");
	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--reclaims", reclaims, NULL);
	assert_one_line_error(&r, 1,
			      (const char *const[]){harness_fmt("--reclaims %s:3: time_s", reclaims), "'3oo'", NULL});
	harness_run_free(&r);

	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--reclaims", harness_fmt("%s/none.csv", f.dir),
		    NULL);
	assert_one_line_error(&r, 1, (const char *const[]){"none.csv", "cannot open", NULL});
	harness_run_free(&r);
}

static void skip_bad_reports_the_count(void **state)
{
	struct harness_run r;
	struct files f;
	json_t *v;

	(void)state;
	files(&f, "submit_time_s,duration_s,gpus\n0,60,1\n5,sixty,1\n6,60\n9,60,1\n12,\"60\",1\n");
	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--skip-bad", "--json", "--policy", "min1",
		    NULL);
	assert_int(r.status, 0);
	assert_string_equal(r.err, "ebb sim: skipped 3 malformed rows\n");
	v = harness_json(r.out);
	assert_int(JINT(json_array_get(v, 0), "jobs"), 2);
	json_decref(v);
	harness_run_free(&r);
}

static void policy_errors_are_clear(void **state)
{
	struct harness_run r;
	struct files f;

	(void)state;
	files(&f, "submit_time_s,duration_s\n0,60\n");
	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--policy", "nope", NULL);
	assert_one_line_error(&r, 1,
			      (const char *const[]){"policy 'nope'",
						    "expected ebb, always-on, min1, util, keda, clairvoyant or bound", NULL});
	harness_run_free(&r);

	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--policy", "min1", "--policy", "keda:colour=red",
		    NULL);
	assert_one_line_error(&r, 1, (const char *const[]){"policy keda:colour=red", "unknown knob 'colour'", NULL});
	harness_run_free(&r);

	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--policy", "keda:target=lots", NULL);
	assert_one_line_error(&r, 1, (const char *const[]){"target=lots", "expected a number", NULL});
	harness_run_free(&r);

	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--policy", "util:window=5m", NULL);
	assert_one_line_error(&r, 1, (const char *const[]){"window=5m", "expected seconds", NULL});
	harness_run_free(&r);

	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--policy", "keda:poll=0", NULL);
	assert_one_line_error(&r, 1, (const char *const[]){"poll=0", NULL});
	harness_run_free(&r);

	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--policy", "min1:offer=huge", NULL);
	assert_one_line_error(&r, 1, (const char *const[]){"offer=huge", "no [offer.huge]", NULL});
	harness_run_free(&r);

	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--policy", "ebb:scaler.idle_timeout=soon", NULL);
	assert_one_line_error(&r, 1, (const char *const[]){"idle_timeout", NULL});
	harness_run_free(&r);

	/* Usage errors: status 2, the message, then where to look. */
	/* strtoull reads " -1" as 2^64 - 1 and caps 2^64: refused too. */
	for (int k = 0; k < 3; k++) {
		const char *seed = k == 0 ? "-1" : k == 1 ? " -1" : "18446744073709551616";
		harness_ebb(&r, NULL, "sim", f.trace, "--seed", seed, NULL);
		assert_int(r.status, 2);
		assert_contains(r.err, harness_fmt("--seed: expected a whole number from 0 to 18446744073709551615, got"
						   " '%s'", seed));
		assert_contains(r.err, "\nsee 'ebb sim --help'\n");
		harness_run_free(&r);
	}
	harness_ebb(&r, NULL, "sim", NULL);
	assert_int(r.status, 2);
	assert_contains(r.err, "expected one trace file");
	harness_run_free(&r);
	/* A checkpoint every 0 ms would be never: refused, with a message. */
	for (int k = 0; k < 2; k++) {
		const char *arg = k ? "0.0004" : "0";
		harness_ebb(&r, NULL, "sim", f.trace, "--checkpoint-every", arg, NULL);
		assert_int(r.status, 2);
		assert_string_equal(r.err, harness_fmt("ebb sim: --checkpoint-every: expected seconds from 0.001 to 1e10, got"
						       " '%s'\nsee 'ebb sim --help'\n",
						       arg));
		harness_run_free(&r);
	}
}

/* Nothing to replay is an error that says why, not a table of zeros. */
static void no_jobs_to_replay(void **state)
{
	static const char *const why[][4] = {
		{"--from", "100", "--to", "50"},
		{"--from", "1e9", "--policy", "bound"},
		{"--filter", "gpus=3", "--policy", "bound"},
		{"--skip-bad", "--from", "0", "--policy"},
	};
	static const char *const says[] = {
		"ebb sim: --from 100 is not before --to 50\n",
		"trace.csv: no jobs to replay (3 rows, 3 outside --from 1e+09)\n",
		"trace.csv: no jobs to replay (3 rows, 3 left out by --filter)\n",
		"trace.csv: no jobs to replay (2 rows, 2 malformed)\n",
	};
	struct harness_run r;
	struct files f;

	(void)state;
	for (int k = 0; k < 4; k++) {
		files(&f, k < 3 ? "submit_time_s,duration_s,gpus\n0,60,1\n30,60,1\n40,1,2\n"
				: "submit_time_s,duration_s\nx,1\n1,y\n");
		harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, why[k][0], why[k][1], why[k][2], why[k][3],
			    k == 3 ? "bound" : NULL, NULL);
		assert_one_line_error(&r, 1, (const char *const[]){says[k], NULL});
		harness_run_free(&r);
	}
	files(&f, "submit_time_s,duration_s\n");
	harness_ebb(&r, NULL, "tune", f.trace, "--offers", f.conf, "--wait-p95", "60", NULL);
	assert_int(r.status, 1);
	assert_string_equal(r.err, harness_fmt("ebb tune: %s: no jobs to replay (0 rows)\n", f.trace));
	harness_run_free(&r);
}

/* --wait-p95 takes seconds: inf passed and printed no JSON at all. */
static void tune_wait_p95_is_checked(void **state)
{
	static const char *const bad[] = {"inf", "1e400", "-1", "nan", "soon"};
	struct harness_run r;
	struct files f;

	(void)state;
	files(&f, "submit_time_s,duration_s\n0,60\n");
	for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
		harness_ebb(&r, NULL, "tune", f.trace, "--offers", f.conf, "--json", "--wait-p95", bad[k], NULL);
		assert_int(r.status, 2);
		assert_string_equal(r.out, "");
		assert_string_equal(r.err, harness_fmt("ebb tune: --wait-p95: expected seconds from 0 to 1e10, got '%s'\n"
						       "see 'ebb tune --help'\n",
						       bad[k]));
		harness_run_free(&r);
	}
}

static void plot_writes_svg_with_three_panels(void **state)
{
	struct harness_run r;
	struct files f;
	char *csv = trace_text(40), *svg, svg_path[4300];
	size_t len;

	(void)state;
	files(&f, csv);
	free(csv);
	snprintf(svg_path, sizeof svg_path, "%s/out.svg", f.dir);
	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--plot", svg_path, NULL);
	if (r.status != 0)
		fail_msg("status %d: %s", r.status, r.err);
	assert_contains(r.out, "POLICY");
	svg = harness_read_file(svg_path, &len);
	assert_non_null(svg);
	assert_true(strncmp(svg, "<svg", 4) == 0);
	assert_contains(svg, "Queue depth");
	assert_contains(svg, "Instances by offer");
	assert_contains(svg, "Cumulative cost");
	assert_contains(svg, "<polyline");
	assert_contains(svg, "</svg>\n");
	free(svg);
	harness_run_free(&r);

	/* A path that cannot be written: an error, after the table. */
	harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--plot", harness_fmt("%s/no/such/dir.svg", f.dir),
		    "--policy", "bound", NULL);
	assert_int(r.status, 1);
	assert_contains(r.err, "--plot");
	harness_run_free(&r);
}

static void same_seed_same_output(void **state)
{
	struct harness_run a, b, c;
	struct files f;
	char *csv = trace_text(200);
	json_t *v;
	json_int_t reclaims = 0;

	(void)state;
	files(&f, csv);
	free(csv);
	harness_ebb(&a, NULL, "sim", f.trace, "--offers", f.conf, "--json", "--seed", "7", "--checkpoint-every",
		    "300", NULL);
	harness_ebb(&b, NULL, "sim", f.trace, "--offers", f.conf, "--json", "--seed", "7", "--checkpoint-every",
		    "300", NULL);
	assert_int(a.status, 0);
	assert_int(b.status, 0);
	assert_string_equal(a.out, b.out);
	v = harness_json(a.out);
	for (size_t k = 0; k < json_array_size(v); k++)
		reclaims += json_integer_value(json_object_get(json_array_get(v, k), "reclaims"));
	json_decref(v);
	assert_true(reclaims > 0); /* the seed mattered */

	harness_ebb(&c, NULL, "sim", f.trace, "--offers", f.conf, "--json", "--seed", "8", "--checkpoint-every",
		    "300", NULL);
	assert_int(c.status, 0);
	if (strcmp(a.out, c.out) == 0)
		fail_msg("seeds 7 and 8 gave the same output");
	harness_run_free(&a);
	harness_run_free(&b);
	harness_run_free(&c);
}

/* Serve's lease order, worked by hand (issue 25): jobs of 300 s, 1,000 s
 * and 10 s arrive at 0, 1 and 2 s; one instance of one GPU, up at 120 s.
 * In serve's order the 10 s job goes first (its lane ranks first, or it
 * has the higher priority): waits 118, 130 (ends at 430) and 429 s. In
 * arrival order it would wait 1,418 s. */
static const char lease_conf[] = "[queue]\nlanes = express,standard,batch\n[scaler]\nmax_instances = 1\n"
				 "[offer.gpu]\ngpus = 1\nprice_ondemand = 1.0\nboot = 120s\n";

static void replays_in_serves_lease_order(void **state)
{
	static const char *const traces[] = {
		/* by lane: [queue] lanes, not the order lanes appear in the trace */
		"submit_time_s,duration_s,gpus,lane,priority\n0,300,1,standard,0\n1,1000,1,batch,0\n"
		"2,10,1,express,0\n",
		/* one lane: the higher priority first */
		"submit_time_s,duration_s,gpus,lane,priority\n0,300,1,standard,0\n1,1000,1,standard,0\n"
		"2,10,1,standard,100\n",
	};
	struct harness_run r;
	char trace[4200], conf[4200];

	(void)state;
	snprintf(conf, sizeof conf, "%s/lease.conf", harness_tmpdir());
	harness_write_file(conf, lease_conf);
	for (size_t k = 0; k < sizeof traces / sizeof *traces; k++) {
		json_t *v, *p;
		snprintf(trace, sizeof trace, "%s/lease%zu.csv", harness_tmpdir(), k);
		harness_write_file(trace, traces[k]);
		harness_ebb(&r, NULL, "sim", trace, "--offers", conf, "--policy", "ebb", "--json", NULL);
		if (r.status != 0)
			fail_msg("status %d: %s", r.status, r.err);
		v = harness_json(r.out);
		p = json_array_get(v, 0);
		assert_int(JINT(p, "jobs"), 3);
		assert_int(JINT(p, "max_instances"), 1);
		if (k == 0) {
			/* Job by job: express (2), then standard (0), then batch (1). */
			char *csv, jobs[4200];
			snprintf(jobs, sizeof jobs, "%s/jobs.csv", harness_tmpdir());
			harness_run_free(&r);
			harness_ebb(&r, NULL, "sim", trace, "--offers", conf, "--policy", "ebb", "--policy", "bound",
				    "--jobs", jobs, NULL);
			assert_int(r.status, 0);
			csv = harness_read_file(jobs, NULL);
			assert_string_equal(csv, "policy,job,submit_s,start_s,wait_s,last_start_s\n"
						 "\"ebb\",0,0.000,130.000,130.000,130.000\n"
						 "\"ebb\",1,1.000,430.000,429.000,430.000\n"
						 "\"ebb\",2,2.000,120.000,118.000,120.000\n");
			free(csv);
		}
		if (json_number_value(json_object_get(p, "wait_p95_s")) != 429 ||
		    json_number_value(json_object_get(p, "wait_p50_s")) != 130)
			fail_msg("trace %zu: waits p50 %g s and p95 %g s, expected 130 and 429", k,
				 json_number_value(json_object_get(p, "wait_p50_s")),
				 json_number_value(json_object_get(p, "wait_p95_s")));
		json_decref(v);
		harness_run_free(&r);
	}
}

/* --oracle-durations tells ebb the trace's durations, a what-if that
 * every output says: the table and the chart of sim, the table of tune,
 * and their JSON, policy by policy. Without it, ebb is told what serve
 * would know. */
static void oracle_durations_are_labelled(void **state)
{
	static const char *const told[] = {"estimated", "unused", "unused", "unused",
					   "unused",    "unused", "foresight", "foresight"};
	struct harness_run r;
	struct files f;
	char *csv = trace_text(40), svg_path[4300], *svg;
	json_t *v;

	(void)state;
	files(&f, csv);
	free(csv);
	snprintf(svg_path, sizeof svg_path, "%s/out.svg", f.dir);
	for (int oracle = 0; oracle < 2; oracle++) {
		const char *flag = oracle ? "--oracle-durations" : NULL;
		harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--plot", svg_path, flag, NULL);
		assert_int(r.status, 0);
		svg = harness_read_file(svg_path, NULL);
		if (oracle) {
			assert_true(strncmp(r.out, "# --oracle-durations: ebb's plan() was told each job's exact duration"
						   " from the trace, which serve never knows: a what-if\nPOLICY", 118) == 0);
			assert_contains(svg, "--oracle-durations: ebb's plan() was told");
		} else {
			assert_true(strncmp(r.out, "POLICY", 6) == 0);
			assert_null(strstr(svg, "oracle"));
		}
		free(svg);
		harness_run_free(&r);

		harness_ebb(&r, NULL, "sim", f.trace, "--offers", f.conf, "--json", flag, NULL);
		assert_int(r.status, 0);
		v = harness_json(r.out);
		for (size_t k = 0; k < 8; k++)
			assert_string_equal(JSTR(json_array_get(v, k), "durations"),
					    k == 0 && oracle ? "oracle" : told[k]);
		json_decref(v);
		harness_run_free(&r);

		harness_ebb(&r, NULL, "tune", f.trace, "--offers", f.conf, "--wait-p95", "600", flag, NULL);
		assert_int(r.status, 0);
		assert_true((strncmp(r.out, "# --oracle-durations:", 21) == 0) == oracle);
		harness_run_free(&r);
		harness_ebb(&r, NULL, "tune", f.trace, "--offers", f.conf, "--wait-p95", "600", "--json", flag, NULL);
		assert_int(r.status, 0);
		v = harness_json(r.out);
		assert_string_equal(JSTR(v, "durations"), oracle ? "oracle" : "estimated");
		json_decref(v);
		harness_run_free(&r);
	}
}

/* scripts/simulate.sh writes docs/SIMULATION.md as SIMULATION.intro.md
 * and the results: what is written into the page by hand must be in the
 * intro, or the next regeneration drops it. */
static void simulation_md_starts_with_its_intro(void **state)
{
	const char *src = getenv("EBB_SRC");
	char path[4200];
	char *intro, *page;
	size_t n;

	(void)state;
	snprintf(path, sizeof path, "%s/docs/SIMULATION.intro.md", src ? src : ".");
	intro = harness_read_file(path, &n);
	snprintf(path, sizeof path, "%s/docs/SIMULATION.md", src ? src : ".");
	page = harness_read_file(path, NULL);
	if (!intro || !page)
		fail_msg("docs/SIMULATION.md or its intro not found (EBB_SRC is the source tree; make test sets it)");
	if (strncmp(page, intro, n) != 0)
		fail_msg("docs/SIMULATION.md does not start with docs/SIMULATION.intro.md: write the change into the"
			 " intro too");
	free(intro);
	free(page);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(simulation_md_starts_with_its_intro),
		cmocka_unit_test(json_has_every_key_for_each_policy),
		cmocka_unit_test(table_by_default),
		cmocka_unit_test(serve_config_with_plugin_sections),
		cmocka_unit_test(malformed_trace_names_file_line_and_column),
		cmocka_unit_test(skip_bad_reports_the_count),
		cmocka_unit_test(reclaims_from_a_file),
		cmocka_unit_test(policy_errors_are_clear),
		cmocka_unit_test(no_jobs_to_replay),
		cmocka_unit_test(tune_wait_p95_is_checked),
		cmocka_unit_test(plot_writes_svg_with_three_panels),
		cmocka_unit_test(same_seed_same_output),
		cmocka_unit_test(replays_in_serves_lease_order),
		cmocka_unit_test(oracle_durations_are_labelled),
		cmocka_unit_test(teams_table_and_json),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
