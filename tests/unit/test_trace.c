/* The trace loader (src/sim/trace.c) on small CSV files written to a temp dir:
 * which columns it needs and which it reads, what a bad row's error says
 * (file, line, column number and name), --skip-bad, --filter, the sort of
 * unsorted rows, and files with no rows or no header at all. */
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "harness.h"
#include "sim/trace.h"

static char err[600];

/* text into a new file of a new temp dir; the path. */
static const char *csv(const char *text)
{
	static char path[4200];

	snprintf(path, sizeof path, "%s/t.csv", harness_tmpdir());
	harness_write_file(path, text);
	return path;
}

static int load(const char *text, int skip_bad, struct trace *t)
{
	err[0] = '\0';
	return trace_load(csv(text), NULL, 0, skip_bad, t, err, sizeof err);
}

/* Loading fails, and err says each of the needles. */
static void assert_load_fails(const char *text, const char *const *needles)
{
	struct trace t;
	const char *path;

	err[0] = '\0';
	path = csv(text);
	if (trace_load(path, NULL, 0, 0, &t, err, sizeof err) == 0)
		fail_msg("loaded %zu rows of a trace that should fail:\n%s", t.n, text);
	assert_int(t.n, 0);
	assert_null(t.jobs);
	assert_contains(err, path);
	for (; *needles; needles++)
		assert_contains(err, *needles);
}

static void test_required_columns_only(void **state)
{
	struct trace t;

	(void)state;
	assert_int(load("submit_time_s,duration_s\n0,10\n1.5,2.25\n7.0004,0\n", 0, &t), 0);
	assert_int(t.n, 3);
	assert_int(t.jobs[0].submit_ms, 0);
	assert_int(t.jobs[0].duration_ms, 10000);
	assert_int(t.jobs[1].submit_ms, 1500);
	assert_int(t.jobs[1].duration_ms, 2250);
	assert_int(t.jobs[2].submit_ms, 7000); /* rounded to the millisecond */
	assert_int(t.jobs[2].duration_ms, 0);
	/* Defaults of the optional columns: one GPU, priority 0, lane
	 * "standard", type "default". */
	for (size_t k = 0; k < t.n; k++) {
		assert_int(t.jobs[k].gpus, 1);
		assert_int(t.jobs[k].priority, 0);
		assert_string_equal(t.lanes[t.jobs[k].lane], "standard");
		assert_string_equal(t.types[t.jobs[k].type], "default");
	}
	assert_int(t.nlanes, 1);
	assert_int(t.ntypes, 1);
	assert_int(t.skipped, 0);
	assert_int(t.filtered, 0);
	trace_free(&t);
}

static void test_optional_columns(void **state)
{
	struct trace t;

	(void)state;
	assert_int(load("submit_time_s,duration_s,gpus,team,job_class,priority,lane\n"
			"0,60,4,t1,BE,5,batch\n"
			"1,30,,t2,LS,,\n"      /* empty optional fields: the defaults */
			"2,30,8,,BE,-3,express\n"
			"3,1,2,t1,,0,batch\r\n", /* CRLF */
			0, &t),
		   0);
	assert_int(t.n, 4);
	assert_int(t.jobs[0].gpus, 4);
	assert_int(t.jobs[0].priority, 5);
	assert_string_equal(t.lanes[t.jobs[0].lane], "batch");
	assert_string_equal(t.types[t.jobs[0].type], "BE");
	assert_int(t.jobs[1].gpus, 1);
	assert_int(t.jobs[1].priority, 0);
	assert_string_equal(t.lanes[t.jobs[1].lane], "standard");
	assert_string_equal(t.types[t.jobs[1].type], "LS");
	assert_int(t.jobs[2].gpus, 8);
	assert_int(t.jobs[2].priority, -3);
	assert_string_equal(t.lanes[t.jobs[2].lane], "express");
	assert_int(t.jobs[3].gpus, 2);
	assert_int(t.jobs[3].duration_ms, 1000);
	assert_string_equal(t.types[t.jobs[3].type], "default");
	/* Names are interned in the order first seen. */
	assert_int(t.nlanes, 3);
	assert_string_equal(t.lanes[0], "batch");
	assert_string_equal(t.lanes[1], "standard");
	assert_string_equal(t.lanes[2], "express");
	assert_int(t.ntypes, 3);
	assert_int(t.jobs[0].lane, t.jobs[3].lane);
	trace_free(&t);
}

/* est_s, what a submitter told serve: whole seconds as serve's API takes
 * them, 1 s to 30 days; an empty field, or no column, is no estimate. */
static void test_estimate_column(void **state)
{
	struct trace t;

	(void)state;
	assert_int(load("submit_time_s,duration_s,est_s\n0,60,90\n1,30,\n2,5,2592000\n", 0, &t), 0);
	assert_int(t.jobs[0].est_ms, 90000);
	assert_int(t.jobs[1].est_ms, 0);
	assert_int(t.jobs[2].est_ms, 2592000000LL);
	trace_free(&t);
	assert_int(load("submit_time_s,duration_s\n0,60\n", 0, &t), 0);
	assert_int(t.jobs[0].est_ms, 0);
	trace_free(&t);
	assert_load_fails("submit_time_s,duration_s,est_s\n0,60,1.5\n",
			  (const char *const[]){":2: column 3 (est_s)", "whole seconds, as serve's est_s", "'1.5'", NULL});
	assert_load_fails("submit_time_s,duration_s,est_s\n0,60,0\n",
			  (const char *const[]){":2: column 3 (est_s)", "from 1 to 2.592e+06", "'0'", NULL});
	assert_load_fails("submit_time_s,duration_s,est_s\n0,60,2592001\n",
			  (const char *const[]){":2: column 3 (est_s)", "'2592001'", NULL});
}

/* team: a name as serve takes a job's team, interned in the order first
 * seen; empty, or no column, is `default`; a bad name stops the load. */
static void test_team_column(void **state)
{
	struct trace t;

	(void)state;
	assert_int(load("submit_time_s,duration_s,team\n0,60,ml\n1,30,\n2,5,vision\n3,5,ml\n", 0, &t), 0);
	assert_int(t.nteams, 3);
	assert_string_equal(t.teams[t.jobs[0].team], "ml");
	assert_string_equal(t.teams[t.jobs[1].team], "default");
	assert_string_equal(t.teams[t.jobs[2].team], "vision");
	assert_int(t.jobs[3].team, t.jobs[0].team);
	trace_free(&t);
	assert_int(load("submit_time_s,duration_s\n0,60\n", 0, &t), 0);
	assert_int(t.nteams, 1);
	assert_string_equal(t.teams[t.jobs[0].team], "default");
	trace_free(&t);
	assert_load_fails("submit_time_s,duration_s,team\n0,60,ml team\n",
			  (const char *const[]){":2: column 3 (team)", "expected a team name", "'ml team'", NULL});
}

/* Columns it does not know are skipped, in any position; the known ones
 * are found by name, not by place. */
static void test_extra_columns_ignored(void **state)
{
	struct trace t;

	(void)state;
	assert_int(load("pod,duration_s,gpu_milli,submit_time_s,ran,gpus,comment\n"
			"p1,12.5,1000,3,1,2,anything at all\n"
			"p2,1,500,4,0,1,a \"quote\" inside a field\n",
			0, &t),
		   0);
	/* Only a field that starts with a quote is refused (see the
	 * quoted-field test), in any column. */
	assert_int(t.n, 2);
	assert_int(t.jobs[0].submit_ms, 3000);
	assert_int(t.jobs[0].duration_ms, 12500);
	assert_int(t.jobs[0].gpus, 2);
	assert_int(t.jobs[1].submit_ms, 4000);
	trace_free(&t);
}

static void test_missing_required_column(void **state)
{
	(void)state;
	assert_load_fails("submit_time_s,gpus\n0,1\n",
			  (const char *const[]){":1:", "no duration_s column", NULL});
	assert_load_fails("duration_s,gpus\n0,1\n",
			  (const char *const[]){":1:", "no submit_time_s column", NULL});
	/* Case matters: Submit_Time_s is an unknown column. */
	assert_load_fails("Submit_Time_s,duration_s\n0,1\n",
			  (const char *const[]){":1:", "no submit_time_s column", NULL});
}

/* A bad value: FILE:LINE: column N (NAME), with N counted from 1 and LINE
 * the file's own line, the header being line 1. */
static void test_malformed_row_names_file_line_column(void **state)
{
	(void)state;
	assert_load_fails("submit_time_s,duration_s,gpus\n0,10,1\n1,ten,1\n",
			  (const char *const[]){":3: column 2 (duration_s)", "expected a number", "'ten'", NULL});
	assert_load_fails("team,submit_time_s,duration_s\nx,0,10\nx,1,10\n\nx,-2,10\n",
			  (const char *const[]){":5: column 2 (submit_time_s)", "'-2'", NULL});
	assert_load_fails("submit_time_s,duration_s,gpus\n0,10,1.5\n",
			  (const char *const[]){":2: column 3 (gpus)", "whole number", NULL});
	assert_load_fails("submit_time_s,duration_s,gpus\n0,10,65\n",
			  (const char *const[]){":2: column 3 (gpus)", "from 0 to 64", NULL});
	assert_load_fails("submit_time_s,duration_s\n0,inf\n",
			  (const char *const[]){":2: column 2 (duration_s)", NULL});
	assert_load_fails("submit_time_s,duration_s\n0,nan\n",
			  (const char *const[]){":2: column 2 (duration_s)", NULL});
	assert_load_fails("submit_time_s,duration_s\n0,5s\n",
			  (const char *const[]){":2: column 2 (duration_s)", "'5s'", NULL});
	/* An empty required field. */
	assert_load_fails("submit_time_s,duration_s\n,5\n",
			  (const char *const[]){":2: column 1 (submit_time_s)", NULL});
	assert_load_fails("submit_time_s,duration_s,priority\n0,5,9999\n",
			  (const char *const[]){":2: column 3 (priority)", NULL});
}

/* Numbers are decimal: hex, spaces, nan and inf are refused; a number too
 * small for a double is 0, not an error. */
static void test_numbers_are_decimal(void **state)
{
	static const char *const refused[] = {"0x10", "0x1p4", " 5", "5 ", "nan", "inf", "1e400", "1e9x"};
	struct trace t;

	(void)state;
	for (size_t k = 0; k < sizeof refused / sizeof *refused; k++) {
		assert_load_fails(harness_fmt("submit_time_s,duration_s\n0,%s\n", refused[k]),
				  (const char *const[]){":2: column 2 (duration_s): expected a number from 0 to 1e+09",
							harness_fmt("got '%s'", refused[k]), NULL});
	}
	assert_int(load("submit_time_s,duration_s\n1e-400,+2.5E1\n", 0, &t), 0);
	assert_int(t.jobs[0].submit_ms, 0);
	assert_int(t.jobs[0].duration_ms, 25000);
	trace_free(&t);
}

/* Every decimal reads as strtod reads it, to the millisecond: the plain
 * ones the loader reads itself (digits and a point, 15 digits at most) and
 * the others strtod reads, among them the rounding cases of half a
 * millisecond. */
static void test_numbers_read_as_strtod_reads_them(void **state)
{
	enum { ROWS = 20000 };
	static const char *const fixed[] = {".5", "5.", "007.250", "0.0005", "1.0005", "2.0045", "999999999.9995",
					    "123456789.123456", "1234567.89012345678", "0.00000000000000001"};
	static char fields[ROWS][32];
	uint64_t rng = 0x9e3779b97f4a7c15ULL;
	size_t cap = ROWS * 40 + 64, len;
	char *text = malloc(cap);
	struct trace t;

	(void)state;
	assert_non_null(text);
	len = (size_t)snprintf(text, cap, "submit_time_s,duration_s\n");
	for (int k = 0; k < ROWS; k++) {
		/* Up to 9 digits before the point and 10 after it. */
		int decimals;
		rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17;
		decimals = (int)(rng >> 40) % 11;
		if (k < (int)(sizeof fixed / sizeof *fixed))
			snprintf(fields[k], sizeof fields[k], "%s", fixed[k]);
		else
			snprintf(fields[k], sizeof fields[k], "%llu%s%.*llu", (unsigned long long)(rng % 1000000000),
				 decimals ? "." : "", decimals, (unsigned long long)((rng >> 20) % 10000000000ULL) %
				 (unsigned long long)pow(10, decimals));
		len += (size_t)snprintf(text + len, cap - len, "%d,%s\n", k, fields[k]);
	}
	if (load(text, 0, &t) != 0)
		fail_msg("%s", err);
	assert_int(t.n, ROWS);
	for (int k = 0; k < ROWS; k++) {
		if (t.jobs[k].duration_ms != llround(strtod(fields[k], NULL) * 1000))
			fail_msg("row %d: '%s' read as %lld ms, strtod reads %lld", k + 2, fields[k],
				 (long long)t.jobs[k].duration_ms, llround(strtod(fields[k], NULL) * 1000));
	}
	trace_free(&t);
	free(text);
}

static void test_wrong_column_count(void **state)
{
	(void)state;
	assert_load_fails("submit_time_s,duration_s,gpus\n0,10,1\n1,10\n",
			  (const char *const[]){":3: 2 columns, the header has 3", NULL});
	assert_load_fails("submit_time_s,duration_s\n0,10,1\n",
			  (const char *const[]){":2: 3 columns, the header has 2", NULL});
}

static void test_quoted_field_refused(void **state)
{
	(void)state;
	assert_load_fails("submit_time_s,duration_s,team\n0,10,\"a,b\"\n",
			  (const char *const[]){":2: column 3 (team)", "quoted fields are not supported", NULL});
	assert_load_fails("submit_time_s,duration_s\n\"0\",10\n",
			  (const char *const[]){":2: column 1 (submit_time_s)", "quoted", NULL});
}

/* --skip-bad: every kind of bad row is counted and passed over; the good
 * rows around them are kept. */
static void test_skip_bad_counts(void **state)
{
	struct trace t;

	(void)state;
	assert_int(load("submit_time_s,duration_s,gpus\n"
			"0,10,1\n"
			"1,ten,1\n"     /* not a number */
			"2,10\n"        /* a column short */
			"3,10,\"2\"\n"  /* quoted */
			"4,10,1.5\n"    /* half a GPU */
			"5,20,2\n",
			1, &t),
		   0);
	assert_int(t.skipped, 4);
	assert_int(t.n, 2);
	assert_int(t.jobs[0].submit_ms, 0);
	assert_int(t.jobs[1].submit_ms, 5000);
	assert_int(t.jobs[1].gpus, 2);
	trace_free(&t);
	/* Without it, the first bad row stops the load. */
	assert_load_fails("submit_time_s,duration_s,gpus\n0,10,1\n1,ten,1\n2,10\n",
			  (const char *const[]){":3: column 2", NULL});
}

static void test_filters(void **state)
{
	const char *text = "submit_time_s,duration_s,gpus,job_class,ran\n"
			   "0,10,1,BE,1\n"
			   "1,99,1,BE,0\n"
			   "2,20,2,LS,1\n"
			   "3,99,1,LS,0\n"
			   "4,30,4,BE,1\n";
	struct trace_filter ran = {"ran", "1"}, two[] = {{"ran", "1"}, {"job_class", "BE"}};
	struct trace t;

	(void)state;
	assert_int(trace_load(csv(text), &ran, 1, 0, &t, err, sizeof err), 0);
	assert_int(t.n, 3);
	assert_int(t.filtered, 2);
	for (size_t k = 0; k < t.n; k++)
		assert_true(t.jobs[k].duration_ms != 99000);
	trace_free(&t);

	/* Filters are ANDed. */
	assert_int(trace_load(csv(text), two, 2, 0, &t, err, sizeof err), 0);
	assert_int(t.n, 2);
	assert_int(t.filtered, 3);
	assert_int(t.jobs[0].duration_ms, 10000);
	assert_int(t.jobs[1].duration_ms, 30000);
	trace_free(&t);

	/* The value is compared as text: "1.0" is not "1". */
	ran.value = "1.0";
	assert_int(trace_load(csv(text), &ran, 1, 0, &t, err, sizeof err), 0);
	assert_int(t.n, 0);
	assert_int(t.filtered, 5);
	trace_free(&t);

	/* A filtered-out row is not parsed: its bad duration does not count. */
	ran.value = "1";
	assert_int(trace_load(csv("submit_time_s,duration_s,ran\n0,10,1\n1,oops,0\n"), &ran, 1, 0, &t, err,
			      sizeof err),
		   0);
	assert_int(t.n, 1);
	assert_int(t.filtered, 1);
	trace_free(&t);
}

static void test_unknown_filter_column(void **state)
{
	struct trace_filter f = {"status", "ok"};
	struct trace t;
	const char *path = csv("submit_time_s,duration_s,ran\n0,10,1\n");

	(void)state;
	assert_int(trace_load(path, &f, 1, 0, &t, err, sizeof err), -1);
	assert_contains(err, path);
	assert_contains(err, ":1:");
	assert_contains(err, "--filter status=ok");
	assert_contains(err, "no column status");
	assert_int(t.n, 0);
}

static int open_files(void)
{
	DIR *d = opendir("/proc/self/fd");
	int n = 0;

	assert_non_null(d);
	while (readdir(d))
		n++;
	closedir(d);
	return n;
}

/* Nine filters are refused, and the file is not left open. */
static void test_nine_filters(void **state)
{
	struct trace_filter f[9];
	struct trace t;
	const char *path = csv("submit_time_s,duration_s,ran\n0,10,1\n");
	int before = open_files();

	(void)state;
	for (int k = 0; k < 9; k++)
		f[k] = (struct trace_filter){"ran", "1"};
	assert_int(trace_load(path, f, 9, 0, &t, err, sizeof err), -1);
	assert_contains(err, "at most 8 filters");
	assert_int(open_files(), before);
}

/* A column the loader reads that the header names twice is refused
 * (which one is meant?); a twice-named column it ignores is no matter. */
static void test_duplicate_columns(void **state)
{
	struct trace_filter f = {"ran", "1"};
	struct trace t;
	const char *path = csv("submit_time_s,duration_s,ran,x,ran\n0,10,1,,0\n");

	(void)state;
	assert_int(trace_load(path, &f, 1, 0, &t, err, sizeof err), -1);
	assert_contains(err, harness_fmt("%s:1: columns 3 and 5 are both named ran", path));
	assert_load_fails("submit_time_s,duration_s,gpus,duration_s\n0,60,1,5\n",
			  (const char *const[]){":1: columns 2 and 4 are both named duration_s", NULL});
	assert_int(load("x,submit_time_s,x,duration_s\n,0,,10\n", 0, &t), 0);
	assert_int(t.n, 1);
	assert_int(t.jobs[0].duration_ms, 10000);
	trace_free(&t);
}

static void test_unsorted_rows_get_sorted(void **state)
{
	struct trace t;

	(void)state;
	assert_int(load("submit_time_s,duration_s,gpus\n50,5,1\n10,1,2\n30,3,3\n10,2,4\n0,0,5\n", 0, &t), 0);
	assert_int(t.n, 5);
	for (size_t k = 1; k < t.n; k++)
		assert_true(t.jobs[k - 1].submit_ms <= t.jobs[k].submit_ms);
	assert_int(t.jobs[0].submit_ms, 0);
	assert_int(t.jobs[0].gpus, 5);
	assert_int(t.jobs[3].submit_ms, 30000);
	assert_int(t.jobs[3].gpus, 3); /* each row's fields move together */
	assert_int(t.jobs[4].submit_ms, 50000);
	assert_int(t.jobs[4].duration_ms, 5000);
	trace_free(&t);
}

static void test_empty_file_and_header_only(void **state)
{
	struct trace t;

	(void)state;
	assert_load_fails("", (const char *const[]){":1:", "empty file", NULL});
	/* A header and no rows is a trace with no jobs, not an error. */
	assert_int(load("submit_time_s,duration_s\n", 0, &t), 0);
	assert_int(t.n, 0);
	trace_free(&t);
	/* Blank lines are passed over, and still counted in line numbers. */
	assert_int(load("submit_time_s,duration_s\n\n0,1\n\n", 0, &t), 0);
	assert_int(t.n, 1);
	trace_free(&t);
	assert_load_fails("submit_time_s,duration_s\n\n\n0,x\n",
			  (const char *const[]){":4: column 2 (duration_s)", NULL});
}

/* Comment lines before the header: "# origin=SECONDS" is the trace's 0
 * in Unix seconds (moved with a window), any other comment is passed
 * over, and the header's errors name its own line. */
static void test_origin_line(void **state)
{
	struct trace t;

	(void)state;
	assert_int(load("submit_time_s,duration_s\n0,1\n", 0, &t), 0);
	assert_int(t.origin_ms, 0);
	trace_free(&t);
	assert_int(load("# written by hand\n#origin=1796079600\nsubmit_time_s,duration_s\n0,1\n10,1\n", 0, &t), 0);
	assert_int(t.origin_ms, 1796079600000LL);
	assert_int(t.n, 2);
	trace_window(&t, 5000, 20000);
	assert_int(t.origin_ms, 1796079605000LL);
	assert_int(t.jobs[0].submit_ms, 5000);
	trace_free(&t);
	assert_load_fails("# origin=yesterday\nsubmit_time_s,duration_s\n",
			  (const char *const[]){":1: origin=yesterday: expected Unix seconds", NULL});
	assert_load_fails("# origin=-5\nsubmit_time_s,duration_s\n", (const char *const[]){":1: origin=-5", NULL});
	assert_load_fails("# origin=1\nsubmit_time_s\n", (const char *const[]){":2: the header has no duration_s", NULL});
	assert_load_fails("# origin=1\n", (const char *const[]){":2: empty file", NULL});
}

static void test_missing_file(void **state)
{
	struct trace t;
	const char *path = harness_fmt("%s/nope.csv", harness_tmpdir());

	(void)state;
	assert_int(trace_load(path, NULL, 0, 0, &t, err, sizeof err), -1);
	assert_contains(err, path);
	assert_contains(err, "cannot open");
}

/* Files from Windows tools: a byte order mark, CRLF line ends, blank
 * lines among them; no newline at the end. A lone CR is refused: with old
 * Mac line ends the whole file would be one line. */
static void test_line_ends_and_bom(void **state)
{
	struct trace t;

	(void)state;
	assert_int(load("\xEF\xBB\xBFsubmit_time_s,duration_s\r\n0,60\r\n\r\n5,30\r\n7,1", 0, &t), 0);
	assert_int(t.n, 3);
	assert_int(t.jobs[1].duration_ms, 30000);
	assert_int(t.jobs[2].duration_ms, 1000);
	trace_free(&t);
	assert_load_fails("submit_time_s,duration_s\r0,60\r5,30\r",
			  (const char *const[]){":1: a carriage return at character 25", NULL});
}

static int load_quietly(void *path)
{
	struct trace t;
	int rc = trace_load(path, NULL, 0, 0, &t, err, sizeof err);

	trace_free(&t);
	return rc == 0 ? 0 : 1;
}

/* Names are looked up in a hash table: 200,000 job classes load in a
 * blink, where a search of the list took a minute. */
static void test_many_job_classes(void **state)
{
	size_t rows = 200000;
	char *text = malloc(64 + rows * 24), *p = text;
	const char *path = harness_fmt("%s/classes.csv", harness_tmpdir());
	struct trace t;

	(void)state;
	p += sprintf(p, "submit_time_s,duration_s,job_class\n");
	for (size_t k = 0; k < rows; k++)
		p += sprintf(p, "%zu,1,class-%zu\n", k, k % 2 ? k : rows - k);
	harness_write_file(path, text);
	free(text);
	assert_int(harness_child(load_quietly, (void *)path, 10), 0);
	/* First seen, first listed. */
	assert_int(trace_load(path, NULL, 0, 0, &t, err, sizeof err), 0);
	assert_int(t.ntypes, rows);
	assert_string_equal(t.types[0], "class-200000");
	assert_string_equal(t.types[1], "class-1");
	assert_int(t.jobs[3].type, 3);
	trace_free(&t);
}

/* 16 lanes at most, as [queue] lanes: the replay looks at each for every
 * job, and serve takes no more. */
static void test_lanes_at_most_16(void **state)
{
	char text[2000], *p = text;
	struct trace t;

	(void)state;
	p += sprintf(p, "submit_time_s,duration_s,lane\n");
	for (int k = 0; k < 16; k++)
		p += sprintf(p, "%d,1,lane%d\n", k, k % 2 ? k : 14 - k);
	assert_int(load(text, 0, &t), 0);
	assert_int(t.nlanes, 16);
	trace_free(&t);
	sprintf(p, "16,1,lane0\n17,1,lane16\n");
	assert_load_fails(text, (const char *const[]){":19: column 3 (lane): a lane beyond the 16 that [queue] lanes"
						       " may list, got 'lane16'", NULL});
	/* Passed over, the row leaves no 17th lane behind (the fuzz target
	 * found one: the lane was kept before it was refused). */
	assert_int(load(text, 1, &t), 0);
	assert_int(t.skipped, 1);
	assert_int(t.n, 17);
	assert_int(t.nlanes, 16);
	trace_free(&t);
}

/* A read error is not the end of a shorter file: a directory, here. */
static void test_read_error(void **state)
{
	struct trace t;
	const char *dir = harness_tmpdir();

	(void)state;
	assert_int(trace_load(dir, NULL, 0, 1, &t, err, sizeof err), -1);
	assert_contains(err, harness_fmt("%s:1: cannot read: ", dir));
	assert_contains(err, "Is a directory");
	assert_int(t.n, 0);
}

/* A NUL byte would cut its row short (",6\\0" + "0" read as 6): refused,
 * with --skip-bad too, since the file is not text. */
static void test_nul_byte(void **state)
{
	static const char text[] = "submit_time_s,duration_s\n0,6\0" "0\n";
	const char *path = csv("");
	FILE *f = fopen(path, "w");
	struct trace t;

	(void)state;
	assert_non_null(f);
	assert_int(fwrite(text, 1, sizeof text - 1, f), sizeof text - 1);
	assert_int(fclose(f), 0);
	assert_int(trace_load(path, NULL, 0, 1, &t, err, sizeof err), -1);
	assert_contains(err, harness_fmt("%s:2: a NUL byte at character 4", path));
	assert_int(t.n, 0);
}

/* In a child: the load of the trace, the nth allocation from its start
 * failing; standard error to a file. 0 when the load needed fewer. */
struct failing_load {
	const char *path, *log;
	long n;
};

static int load_failing(void *arg)
{
	const struct failing_load *f = arg;
	struct trace t;

	if (!freopen(f->log, "w", stderr))
		return 2;
	mem_fail_after(f->n);
	trace_load(f->path, NULL, 0, 1, &t, err, sizeof err);
	return 0;
}

/* Out of memory, a load aborts, saying so (common/mem.h: the simulator's
 * rule), wherever its allocation fails: the column names, the lanes and
 * types as they come, the jobs as they grow past 1024 and 2048. */
static void test_out_of_memory(void **state)
{
	static const char *const rows[] = {"7,1,1,lane-a,type-a\n", "8,1,1,lane-b,type-b\n", "9,2,1,lane-a,type-c\n"};
	size_t n = 3000;
	char *text = malloc(64 + n * 32), *p = text;
	struct failing_load f = {.path = harness_fmt("%s/jobs.csv", harness_tmpdir())};
	char log[4300];
	int aborted = 0, rc = 1;

	(void)state;
	snprintf(log, sizeof log, "%s/stderr", harness_tmpdir());
	f.log = log;
	p += sprintf(p, "submit_time_s,duration_s,gpus,lane,job_class\n");
	for (size_t k = 0; k < n; k++)
		p += sprintf(p, "%s", rows[k % 3]);
	harness_write_file(f.path, text);
	free(text);
	for (f.n = 1; f.n < 200 && (rc = harness_child(load_failing, &f, 60)) != 0; f.n++) {
		char *said = harness_read_file(log, NULL);
		if (rc != 128 + SIGABRT)
			fail_msg("allocation %ld failing: exit %d, not an abort: %s", f.n, rc, said ? said : "");
		assert_contains(said, "ebb: out of memory (");
		free(said);
		aborted++;
	}
	assert_int(rc, 0); /* the load takes fewer than 200 allocations */
	assert_true(aborted >= 8);
}

/* A window keeps [from, to) and moves time so that `from` is 0. */
static void test_window(void **state)
{
	struct trace t;

	(void)state;
	assert_int(load("submit_time_s,duration_s\n0,1\n10,2\n20,3\n30,4\n", 0, &t), 0);
	trace_window(&t, 10000, 30000);
	assert_int(t.n, 2);
	assert_int(t.jobs[0].submit_ms, 0);
	assert_int(t.jobs[0].duration_ms, 2000);
	assert_int(t.jobs[1].submit_ms, 10000);
	trace_free(&t);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_required_columns_only),
		cmocka_unit_test(test_optional_columns),
		cmocka_unit_test(test_estimate_column),
		cmocka_unit_test(test_team_column),
		cmocka_unit_test(test_extra_columns_ignored),
		cmocka_unit_test(test_missing_required_column),
		cmocka_unit_test(test_malformed_row_names_file_line_column),
		cmocka_unit_test(test_numbers_are_decimal),
		cmocka_unit_test(test_numbers_read_as_strtod_reads_them),
		cmocka_unit_test(test_wrong_column_count),
		cmocka_unit_test(test_quoted_field_refused),
		cmocka_unit_test(test_skip_bad_counts),
		cmocka_unit_test(test_filters),
		cmocka_unit_test(test_unknown_filter_column),
		cmocka_unit_test(test_nine_filters),
		cmocka_unit_test(test_duplicate_columns),
		cmocka_unit_test(test_unsorted_rows_get_sorted),
		cmocka_unit_test(test_empty_file_and_header_only),
		cmocka_unit_test(test_origin_line),
		cmocka_unit_test(test_missing_file),
		cmocka_unit_test(test_window),
		cmocka_unit_test(test_line_ends_and_bom),
		cmocka_unit_test(test_many_job_classes),
		cmocka_unit_test(test_lanes_at_most_16),
		cmocka_unit_test(test_read_error),
		cmocka_unit_test(test_nul_byte),
		cmocka_unit_test(test_out_of_memory),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
