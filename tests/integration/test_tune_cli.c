/* `ebb tune` as a user runs it: the real binary on a trace and an offers
 * file written here. The table, the fragment it writes and that fragment
 * replayed by `ebb sim`, the JSON, the chart, the threads, the progress
 * line on a terminal (and nothing on a pipe) and the usage errors. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pty.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"

static const char offers[] = "[scaler]\nmax_instances = 12\nmax_gpus = 12\nmax_spend_per_hour = 0\n"
			     "[offer.a]\ngpus = 1\nprice_ondemand = 1.0\nboot = 120s\n"
			     "billing = per-second\nbilling_minimum = 60s\n";

struct files {
	char dir[4096], trace[4200], conf[4200], out[4200];
};

/* Bursts of 5 jobs every 30 minutes or so, over half a day. */
static void files(struct files *f)
{
	char csv[16384];
	size_t len = 0;
	double t = 0;

	len += (size_t)snprintf(csv, sizeof csv, "submit_time_s,duration_s\n");
	for (int k = 0; k < 24 * 5; k++) {
		t += k % 5 == 0 ? 1500 + (k * 7919) % 900 : 4;
		len += (size_t)snprintf(csv + len, sizeof csv - len, "%.0f,%d\n", t, 90 + (k * 379) % 400);
	}
	snprintf(f->dir, sizeof f->dir, "%s", harness_tmpdir());
	snprintf(f->trace, sizeof f->trace, "%s/trace.csv", f->dir);
	snprintf(f->conf, sizeof f->conf, "%s/offers.conf", f->dir);
	snprintf(f->out, sizeof f->out, "%s/tuned.conf", f->dir);
	harness_write_file(f->trace, csv);
	harness_write_file(f->conf, offers);
}

static void run_ok(struct harness_run *r)
{
	if (r->status != 0)
		fail_msg("status %d\nstdout: %s\nstderr: %s", r->status, r->out, r->err);
}

/* The table ends with the fragment that --write writes, and `ebb sim`
 * with that fragment costs what the recommendation says. */
static void writes_a_fragment_that_replays(void **state)
{
	struct harness_run r;
	struct files f;
	json_t *v, *rec;
	char *written, *conf, both[4300];
	double cost;

	(void)state;
	files(&f);
	harness_ebb(&r, NULL, "tune", f.trace, "--offers", f.conf, "--wait-p95", "600", "--write", f.out, NULL);
	run_ok(&r);
	assert_contains(r.out, "POLICY");
	assert_contains(r.out, "<- recommended");
	assert_contains(r.out, "at keda-default's p95 (");
	assert_contains(r.out, "the best baseline there");
	assert_contains(r.out, "baseline points below ebb's frontier: ");
	assert_contains(r.out, "clairvoyant:wait=600\n");
	assert_contains(r.out, "ebb's recommendation closes ");
	assert_contains(r.out, "% of the gap between the best tuned baseline within the target (");
	written = harness_read_file(f.out, NULL);
	assert_non_null(written);
	assert_contains(written, "# ebb tune: the cheapest of ebb's settings with a p95 wait of at most 600 s");
	assert_contains(written, "[lane.standard]\nwait_target = ");
	assert_contains(r.out, written);
	harness_run_free(&r);

	harness_ebb(&r, NULL, "tune", f.trace, "--offers", f.conf, "--wait-p95", "600", "--json", NULL);
	run_ok(&r);
	v = harness_json(r.out);
	rec = json_object_get(v, "recommendation");
	assert_string_equal(json_string_value(json_object_get(rec, "config")), written);
	cost = json_real_value(json_object_get(rec, "cost_usd"));
	assert_true(json_real_value(json_object_get(rec, "wait_p95_s")) <= 600);
	json_decref(v);
	harness_run_free(&r);

	conf = harness_read_file(f.conf, NULL);
	snprintf(both, sizeof both, "%s/both.conf", f.dir);
	harness_write_file(both, harness_fmt("%s%s", conf, written));
	harness_ebb(&r, NULL, "sim", f.trace, "--offers", both, "--policy", "ebb", "--json", NULL);
	run_ok(&r);
	v = harness_json(r.out);
	if (fabs(json_real_value(json_object_get(json_array_get(v, 0), "cost_usd")) - cost) > 1e-6)
		fail_msg("replayed: %s\nrecommended cost %.6f", r.out, cost);
	json_decref(v);
	harness_run_free(&r);
	free(conf);
	free(written);
}

/* --json: each family's frontier from the shortest wait, cheaper as the
 * wait grows; the ratios; every point of the sweep. */
static void json_frontiers_in_order_of_wait(void **state)
{
	static const char *const families[] = {"ebb",         "always-on", "min1",
					       "util",        "keda",      "clairvoyant",
					       "bound",       "clairvoyant:wait"};
	struct harness_run r;
	struct files f;
	json_t *v, *fronts;

	(void)state;
	files(&f);
	harness_ebb(&r, NULL, "tune", f.trace, "--offers", f.conf, "--wait-p95", "300", "--json", NULL);
	run_ok(&r);
	v = harness_json(r.out);
	fronts = json_object_get(v, "frontiers");
	for (size_t k = 0; k < sizeof families / sizeof *families; k++) {
		json_t *list = json_object_get(fronts, families[k]), *p;
		double last_wait = -1, last_cost = 0;
		size_t i;
		if (!json_is_array(list) || !json_array_size(list))
			fail_msg("no frontier for %s: %.300s", families[k], r.out);
		json_array_foreach(list, i, p) {
			double w = json_real_value(json_object_get(p, "wait_p95_s"));
			double c = json_real_value(json_object_get(p, "cost_usd"));
			assert_true(json_is_true(json_object_get(p, "on_frontier")));
			assert_true(w >= last_wait);
			if (i && w > last_wait)
				assert_true(c < last_cost);
			last_wait = w;
			last_cost = c;
		}
	}
	assert_true(json_array_size(json_object_get(v, "points")) > 100);
	assert_true(json_real_value(json_object_get(v, "wait_p95_target_s")) == 300);
	assert_int(json_integer_value(json_object_get(v, "settings_left_out")), 0);
	assert_true(json_is_integer(json_object_get(v, "settings_left_out")));
	assert_true(json_is_integer(harness_jget(v, "ratios.baseline_points_below_ebb")));
	assert_true(json_real_value(harness_jget(v, "ratios.bound.cost_usd")) > 0);
	assert_string_equal(JSTR(v, "ratios.keda_defaults.policy"), "keda");
	assert_string_equal(JSTR(v, "ratios.clairvoyant.policy"), "clairvoyant");
	/* Each comparison at a wait: ebb and the best baseline both within it. */
	for (int k = 0; k < 4; k++) {
		static const char *const at[] = {"at_keda_wait", "at_two_boots", "at_target", "at_clairvoyant_wait"};
		json_t *a = json_object_get(json_object_get(v, "ratios"), at[k]), *best = json_object_get(a, "best_baseline");
		double wait = json_real_value(json_object_get(a, "wait_p95_s"));
		assert_non_null(a);
		if (json_is_object(best)) {
			assert_true(json_real_value(json_object_get(best, "wait_p95_s")) <= wait);
			assert_string_not_equal(JSTR(best, "family"), "ebb");
			assert_string_not_equal(JSTR(best, "family"), "clairvoyant");
			assert_string_not_equal(JSTR(best, "family"), "bound");
		}
	}
	assert_true(json_real_value(harness_jget(v, "ratios.at_target.wait_p95_s")) == 300);
	/* clairvoyant:wait at the target, within it, and the share of the gap
	 * from the best baseline there to it that ebb's recommendation
	 * closes (this trace has one: tune_gap_closed() says when not). */
	assert_string_equal(JSTR(v, "ratios.clairvoyant_wait.policy"), "clairvoyant:wait=300");
	assert_true(json_real_value(harness_jget(v, "ratios.clairvoyant_wait.wait_p95_s")) <= 300);
	{
		double base = json_real_value(harness_jget(v, "ratios.at_target.best_baseline.cost_usd"));
		double ebb = json_real_value(harness_jget(v, "recommendation.cost_usd"));
		double ref = json_real_value(harness_jget(v, "ratios.clairvoyant_wait.cost_usd"));
		assert_true(ref < base);
		assert_true(fabs(json_real_value(harness_jget(v, "ratios.gap_closed_at_target")) -
				 (base - ebb) / (base - ref)) < 1e-9);
	}
	assert_true(json_real_value(harness_jget(v, "ratios.at_two_boots.wait_p95_s")) == 240);
	json_decref(v);
	harness_run_free(&r);
}

static void plot_draws_the_frontiers(void **state)
{
	struct harness_run r;
	struct files f;
	char svg_path[4300], *svg;

	(void)state;
	files(&f);
	snprintf(svg_path, sizeof svg_path, "%s/frontier.svg", f.dir);
	harness_ebb(&r, NULL, "tune", f.trace, "--offers", f.conf, "--wait-p95", "300", "--plot", svg_path, NULL);
	run_ok(&r);
	svg = harness_read_file(svg_path, NULL);
	assert_non_null(svg);
	assert_true(strncmp(svg, "<svg", 4) == 0);
	assert_contains(svg, "Cost against p95 wait");
	assert_contains(svg, "p95 wait (seconds)");
	assert_contains(svg, "<polyline");
	assert_contains(svg, ">keda</text>");
	assert_contains(svg, "</svg>\n");
	free(svg);
	harness_run_free(&r);
}

/* The output is the same on one thread as on three, and nothing goes to
 * stderr when it is no terminal; --exhaustive replays the whole grid,
 * more points than the search. */
static void threads_and_the_whole_grid(void **state)
{
	struct harness_run one, three, all;
	struct files f;
	json_t *searched, *whole;

	(void)state;
	files(&f);
	harness_ebb(&one, NULL, "tune", f.trace, "--offers", f.conf, "--wait-p95", "300", "--json", "--jobs", "1", NULL);
	run_ok(&one);
	harness_ebb(&three, NULL, "tune", f.trace, "--offers", f.conf, "--wait-p95", "300", "--json", "--jobs", "3",
		    NULL);
	run_ok(&three);
	assert_string_equal(one.out, three.out);
	assert_string_equal(one.err, "");
	assert_string_equal(three.err, "");
	harness_ebb(&all, NULL, "tune", f.trace, "--offers", f.conf, "--wait-p95", "300", "--json", "--exhaustive", NULL);
	run_ok(&all);
	assert_string_equal(all.err, "");
	searched = harness_json(one.out);
	whole = harness_json(all.out);
	assert_true(json_array_size(json_object_get(searched, "points")) <
		    json_array_size(json_object_get(whole, "points")));
	json_decref(searched);
	json_decref(whole);
	harness_run_free(&one);
	harness_run_free(&three);
	harness_run_free(&all);
}

/* `ebb tune` with its stderr on a terminal (a pseudo-terminal here) and
 * its stdout in a file: what it wrote to the terminal, into buf. */
static void tune_on_a_terminal(const struct files *f, const char *out_path, char *buf, size_t size)
{
	int master, status;
	size_t len = 0;
	pid_t pid = forkpty(&master, NULL, NULL, NULL);

	if (pid < 0)
		fail_msg("forkpty: %s", strerror(errno));
	if (pid == 0) {
		int fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		dup2(fd, STDOUT_FILENO);
		execl(harness_ebb_bin(), "ebb", "tune", f->trace, "--offers", f->conf, "--wait-p95", "300", "--json",
		      (char *)NULL);
		_exit(127);
	}
	for (;;) { /* until the child closes the terminal: EIO on Linux */
		ssize_t got = read(master, buf + len, size - 1 - len);
		if (got > 0 && (len += (size_t)got) < size - 1)
			continue;
		if (got < 0 && errno == EINTR)
			continue;
		break;
	}
	buf[len] = '\0';
	close(master);
	assert_int(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* On a terminal, a progress line redrawn in place and cleared at the end;
 * the output itself is what a pipe gets. */
static void progress_line_on_a_terminal(void **state)
{
	struct harness_run r;
	struct files f;
	char tty[65536], out_path[4300], *out;

	(void)state;
	files(&f);
	snprintf(out_path, sizeof out_path, "%s/out.json", f.dir);
	tune_on_a_terminal(&f, out_path, tty, sizeof tty);
	assert_contains(tty, "\r\033[Kebb tune: ");
	assert_contains(tty, " replays (the grid: ");
	assert_contains(tty, "best ebb within the wait $");
	assert_contains(tty, "s left");
	/* The last thing on the terminal clears the line. */
	assert_true(strlen(tty) >= 4 && strcmp(tty + strlen(tty) - 4, "\r\033[K") == 0);
	harness_ebb(&r, NULL, "tune", f.trace, "--offers", f.conf, "--wait-p95", "300", "--json", NULL);
	run_ok(&r);
	out = harness_read_file(out_path, NULL);
	assert_string_equal(out, r.out);
	free(out);
	harness_run_free(&r);
}

static void usage_errors(void **state)
{
	struct harness_run r;
	struct files f;

	(void)state;
	files(&f);
	harness_ebb(&r, NULL, "tune", f.trace, "--offers", f.conf, NULL);
	assert_int(r.status, 2);
	assert_contains(r.err, "--wait-p95");
	harness_run_free(&r);

	harness_ebb(&r, NULL, "tune", f.trace, "--offers", f.conf, "--wait-p95", "soon", NULL);
	assert_int(r.status, 2);
	assert_contains(r.err, "--wait-p95: expected seconds from 0 to 1e10, got 'soon'");
	harness_run_free(&r);

	harness_ebb(&r, NULL, "tune", f.trace, "--offers", f.conf, "--wait-p95", "600", "--write",
		    harness_fmt("%s/no/such/dir.conf", f.dir), NULL);
	assert_int(r.status, 1);
	assert_contains(r.err, "--write");
	harness_run_free(&r);

	harness_ebb(&r, NULL, "tune", f.trace, "--offers", f.conf, "--wait-p95", "600", "--jobs", "0", NULL);
	assert_int(r.status, 2);
	assert_contains(r.err, "--jobs");
	harness_run_free(&r);

	harness_ebb(&r, NULL, "tune", harness_fmt("%s/absent.csv", f.dir), "--wait-p95", "600", NULL);
	assert_int(r.status, 1);
	assert_contains(r.err, "absent.csv");
	harness_run_free(&r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(writes_a_fragment_that_replays),
		cmocka_unit_test(json_frontiers_in_order_of_wait),
		cmocka_unit_test(plot_draws_the_frontiers),
		cmocka_unit_test(threads_and_the_whole_grid),
		cmocka_unit_test(progress_line_on_a_terminal),
		cmocka_unit_test(usage_errors),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
