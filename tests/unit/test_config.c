/* The configuration table and its parser: defaults, every kind of error
 * with the file, line and what was expected, the multi sections, and the
 * shipped ebb.conf.example kept equal to what the table generates. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli/cmd.h"
#include "common/config.h"
#include "harness.h"
#include "provider/local_internal.h"

/* Writes text to a new file in a temp dir; its path. */
static const char *conf_file(const char *text)
{
	const char *path = harness_fmt("%s/ebb.conf", harness_tmpdir());

	harness_write_file(path, text);
	return path;
}

/* config_load's error for text, which must not load. */
static const char *load_error(const char *text, const char **path)
{
	static char err[1024];
	struct config cfg;
	int rc;

	*path = conf_file(text);
	err[0] = '\0';
	rc = config_load(&cfg, &cmd_plugins, *path, err, sizeof err);
	config_free(&cfg);
	if (rc == 0)
		fail_msg("config_load accepted:\n%s", text);
	assert_int(rc, -1);
	return err;
}

static void assert_load_error(const char *text, const char *want_fmt)
{
	const char *path, *err = load_error(text, &path);

	assert_string_equal(err, harness_fmt(want_fmt, path));
}

/* Runs fn with stderr going to a file; what it wrote there. */
static char *capture_stderr(void (*fn)(void *), void *arg)
{
	const char *path = harness_fmt("%s/stderr", harness_tmpdir());
	int saved = dup(2), fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);

	fflush(stderr);
	dup2(fd, 2);
	close(fd);
	fn(arg);
	fflush(stderr);
	dup2(saved, 2);
	close(saved);
	return harness_read_file(path, NULL);
}

static void run_defaults(void *arg) { config_defaults(arg, &cmd_plugins); }

static void defaults(void **state)
{
	struct config cfg;
	char *logged;

	(void)state;
	logged = capture_stderr(run_defaults, &cfg);
	/* A default that does not parse is logged, not fatal: nothing may be. */
	assert_string_equal(logged, "");
	free(logged);
	assert_string_equal(cfg.listen, "127.0.0.1:7070");
	assert_string_equal(cfg.data_dir, "./ebb-data");
	assert_int(cfg.max_body, 1 << 20);
	assert_int(cfg.max_connections, 4096);
	assert_int(cfg.connection_timeout_ms, 60000);
	assert_string_equal(cfg.lanes, "express,standard,batch");
	assert_string_equal(cfg.default_lane, "standard");
	assert_int(cfg.max_queued, 1000000);
	assert_int(cfg.lease_timeout_ms, 60000);
	assert_int(cfg.max_lease_wait_ms, 60000);
	assert_int(cfg.default_timeout_ms, 3600000);
	assert_int(cfg.max_attempts, 3);
	assert_int(cfg.retry_base_ms, 10000);
	assert_int(cfg.retry_max_ms, 600000);
	assert_int(cfg.ntypes, 0);
	assert_int(cfg.ntokens, 0);
	assert_int(cfg.nlanes, 3);
	assert_int(config_lane_rank(&cfg, "express"), 0);
	assert_int(config_lane_rank(&cfg, "standard"), 1);
	assert_int(config_lane_rank(&cfg, "batch"), 2);
	assert_int(config_lane_rank(&cfg, "other"), -1);
	config_free(&cfg);
}

static char *written(const struct config *cfg)
{
	const char *path = harness_fmt("%s/written.conf", harness_tmpdir());
	FILE *f = fopen(path, "w");

	config_write(cfg, f);
	fclose(f);
	return harness_read_file(path, NULL);
}

static void load_defaults_from(void *arg)
{
	struct config cfg;
	char err[1024];
	char **out = arg;

	if (config_load(&cfg, &cmd_plugins, out[0], err, sizeof err) != 0)
		out[1] = strdup(err);
	else
		out[1] = written(&cfg);
	config_free(&cfg);
}

/* Every default (and those of a [type.NAME] item), printed by
 * config_write and read back, gives the same configuration; nothing is
 * logged on the way. */
static void defaults_round_trip(void **state)
{
	struct config cfg;
	char err[1024], *first, *second, *logged;
	const char *path, *io[2];

	(void)state;
	config_defaults(&cfg, &cmd_plugins);
	/* An item of a multi section (not a token: its secret prints as
	 * "(hidden)"), whose defaults go through the parser too. */
	assert_int(config_set(&cfg, "type.gpu", "max_running", "0", err, sizeof err), 0);
	first = written(&cfg);
	config_free(&cfg);
	path = conf_file(first);
	io[0] = path;
	logged = capture_stderr(load_defaults_from, (void *)io);
	assert_string_equal(logged, "");
	second = (char *)io[1];
	assert_string_equal(second, first);
	free(logged);
	free(first);
	free(second);
}

static void unknown_key(void **state)
{
	(void)state;
	assert_load_error("# a comment\n"
			  "[server]\n"
			  "listen = 127.0.0.1:7070\n"
			  "\n"
			  "[queue]\n"
			  "max_queued = 10\n"
			  "bogus = 1\n"
			  "max_attempts = 5\n",
			  "%s:7: [queue] bogus: unknown key");
}

static void out_of_bounds(void **state)
{
	(void)state;
	assert_load_error("[queue]\nmax_attempts = 101\n",
			  "%s:2: [queue] max_attempts: expected a value from 1 to 100, got '101'");
	assert_load_error("[queue]\n\n\nlease_timeout = 2h\n",
			  "%s:4: [queue] lease_timeout: expected a value from 1s to 1h, got '2h'");
	assert_load_error("[server]\nmax_body = 512B\n",
			  "%s:2: [server] max_body: expected a value from 1KiB to 64MiB, got '512B'");
	assert_load_error("[server]\nmax_connections = 15\n",
			  "%s:2: [server] max_connections: expected a value from 16 to 1000000, got '15'");
}

static void bad_values(void **state)
{
	(void)state;
	assert_load_error("[queue]\nlease_timeout = 10\n",
			  "%s:2: [queue] lease_timeout: expected a duration with a unit"
			  " (500ms, 3s, 10m, 1h, 2d), got '10'");
	assert_load_error("[server]\nmax_body = lots\n",
			  "%s:2: [server] max_body: expected a size with a unit (512B, 64KiB, 1MiB),"
			  " got 'lots'");
	assert_load_error("[queue]\nmax_queued = 10x\n",
			  "%s:2: [queue] max_queued: expected an integer, got '10x'");
	assert_load_error("[server]\nlog_level = loud\n",
			  "%s:2: [server] log_level: expected one of debug, info, warn, error, got 'loud'");
	/* Empty is not "the default": it is refused where the table wants text. */
	assert_load_error("[server]\nlisten =\n",
			  "%s:2: [server] listen: expected 1 to 255 characters, got 0");
	assert_load_error("[server]\ndata_dir =\n",
			  "%s:2: [server] data_dir: expected 1 to 4095 characters, got 0");
}

/* The first error is the one reported, at its own line. */
static void first_error_wins(void **state)
{
	(void)state;
	assert_load_error("[queue]\nmax_attempts = 0\nbogus = 1\n",
			  "%s:2: [queue] max_attempts: expected a value from 1 to 100, got '0'");
}

static void missing_file(void **state)
{
	struct config cfg;
	char err[1024];
	const char *path = harness_fmt("%s/nope.conf", harness_tmpdir());

	(void)state;
	assert_int(config_load(&cfg, &cmd_plugins, path, err, sizeof err), -1);
	assert_string_equal(err, harness_fmt("%s: cannot open: No such file or directory", path));
	config_free(&cfg);
}

static void unknown_section(void **state)
{
	const char *path, *err;

	(void)state;
	err = load_error("[server]\nlisten = 127.0.0.1:1\n[servre]\nlisten = 127.0.0.1:2\n", &path);
	assert_string_equal(err, harness_fmt("%s:4: [servre]: unknown section; did you mean [server]?", path));
	/* A section of many keeps its name in the guess. */
	assert_load_error("[lan.gpu]\nprio = 1\n", "%s:2: [lan.gpu]: unknown section; did you mean [lane.gpu]?");
	/* None close: what there is. */
	err = load_error("[sqeuence]\nx = 1\n", &path);
	assert_contains(err, harness_fmt("%s:2: [sqeuence]: unknown section (expected server, store, queue", path));
}

static void not_ini(void **state)
{
	(void)state;
	assert_load_error("[server]\nlisten = 127.0.0.1:1\nthis line is no key\n",
			  "%s:3: expected [section] or key = value");
	/* A section line without its ']' is the error, not the keys after it. */
	assert_load_error("[server\nlisten = 127.0.0.1:1\n", "%s:1: expected [section] or key = value");
}

/* What inih would read otherwise than written is refused at its line: a
 * long line (inih split it in two, and a rest starting with a space
 * became the key's new value), a NUL byte (it ended the line), a long
 * section name (cut, so that it named another item), a value that starts
 * with ';' or holds " ;" (a comment on a key's line: the fuzz target
 * found that what `ebb config` wrote of "listen =;note" read back as an
 * empty listen, and of an indented line "  * * 1 ; note" as "* * 1"). */
static void mangled_lines(void **state)
{
	char longest[300], over[300], type[100];
	const char *path = harness_fmt("%s/nul.conf", harness_tmpdir());
	struct config cfg;
	char err[1024];
	FILE *f;

	(void)state;
	snprintf(longest, sizeof longest, "[provider]\non_exit = %0189d\n", 0);
	assert_int(config_load(&cfg, &cmd_plugins, conf_file(longest), err, sizeof err), 0);
	assert_int(strlen(cfg.on_exit), 189);
	config_free(&cfg);
	snprintf(over, sizeof over, "[provider]\non_exit = %0189d wall -n bye\n[server]\nfoo = 1\n", 0);
	assert_load_error(over, "%s:2: line longer than 199 characters");

	f = fopen(path, "w");
	fwrite("[server]\nlog_level = info\0 junk\n", 1, 32, f);
	fclose(f);
	assert_int(config_load(&cfg, &cmd_plugins, path, err, sizeof err), -1);
	assert_string_equal(err, harness_fmt("%s:2: a NUL byte: not a text file", path));
	config_free(&cfg);

	snprintf(type, sizeof type, "[type.%044d]\nmax_running = 2\n", 7);
	assert_int(config_load(&cfg, &cmd_plugins, conf_file(type), err, sizeof err), 0);
	assert_int(config_type(&cfg, harness_fmt("%044d", 7))->max_running, 2);
	config_free(&cfg);
	snprintf(type, sizeof type, "[queue]\n[type.%045d]\nmax_running = 2\n", 7);
	assert_load_error(type, "%s:2: section name longer than 49 characters");

	assert_load_error("[server]\nlog_level = info\nlisten =; A realistic\n",
			  "%s:3: [server] listen: a value may not start with ';' (a comment needs a space before it)");
	assert_load_error("[server]\nlisten:;x\n",
			  "%s:2: [server] listen: a value may not start with ';' (a comment needs a space before it)");
	assert_load_error("[scaler]\nwarm = * * 1\n  mon-fri 08-19 2 ; note\n",
			  "%s:3: [scaler] warm: a value may not hold ' ;', which starts a comment (is this an indented"
			  " line? it continues the key before it)");
	/* After a space, ';' starts a comment, as inih has it. */
	assert_int(config_load(&cfg, &cmd_plugins, conf_file("[server]\nlisten = 127.0.0.1:7000 ; or :7001\n"), err,
			       sizeof err), 0);
	assert_string_equal(cfg.listen, "127.0.0.1:7000");
	config_free(&cfg);
}

static void directory(void **state)
{
	struct config cfg;
	char err[1024];
	const char *dir = harness_tmpdir();

	(void)state;
	assert_int(config_load(&cfg, &cmd_plugins, dir, err, sizeof err), -1);
	assert_string_equal(err, harness_fmt("%s: cannot read: Is a directory", dir));
	config_free(&cfg);
}

static void types(void **state)
{
	struct config cfg;
	char err[1024];
	const char *path = conf_file("[type.transcode]\nmax_running = 2\n\n[type.train]\nmax_running = 0\n"
				     "[type.embed]\nhandler = /opt/embed --model 'big one'\n");

	(void)state;
	assert_int(config_load(&cfg, &cmd_plugins, path, err, sizeof err), 0);
	assert_int(cfg.ntypes, 3);
	assert_string_equal(config_handler(&cfg, "embed"), "/opt/embed --model 'big one'");
	assert_null(config_handler(&cfg, "train"));
	assert_null(config_handler(&cfg, "other"));
	assert_non_null(config_type(&cfg, "transcode"));
	assert_int(config_type(&cfg, "transcode")->max_running, 2);
	assert_int(config_type(&cfg, "train")->max_running, 0);
	assert_null(config_type(&cfg, "other"));
	config_free(&cfg);

	assert_load_error("[type.gpu]\nmax_running = -1\n",
			  "%s:2: [type.gpu] max_running: expected a value from 0 to 1000000, got '-1'");
	assert_load_error("[type.gpu]\nlimit = 1\n", "%s:2: [type.gpu] limit: unknown key");
	assert_load_error("[type.gpu]\nhandler = run 'open\n", "%s:2: [type.gpu] handler: a ' quote is not closed");
	assert_load_error("[type.a b]\nmax_running = 1\n",
			  "%s:2: [type.a b]: expected a name of letters, digits, '_', '.' or '-'");
	assert_load_error("[type.]\nmax_running = 1\n",
			  "%s:2: [type.]: expected a name of letters, digits, '_', '.' or '-'");
}

/* A result goes in a complete's body: result_max is cut to half of
 * max_body, and stays within its own bounds. */
static void result_max_within_max_body(void **state)
{
	struct config cfg;
	char err[1024];

	(void)state;
	assert_int(config_load(&cfg, &cmd_plugins, conf_file("[queue]\nresult_max = 1MiB\n"), err, sizeof err), 0);
	assert_int(cfg.result_max, 512 * 1024); /* max_body's default is 1 MiB */
	config_free(&cfg);
	assert_int(config_load(&cfg, &cmd_plugins, conf_file("[server]\nmax_body = 4MiB\n[queue]\nresult_max = 1MiB\n"),
			       err, sizeof err),
		   0);
	assert_int(cfg.result_max, 1024 * 1024);
	config_free(&cfg);
	assert_int(config_load(&cfg, &cmd_plugins, conf_file("[server]\nmax_body = 4KiB\n"), err, sizeof err), 0);
	assert_int(cfg.result_max, 2048);
	config_free(&cfg);
	assert_load_error("[queue]\nresult_max = 2MiB\n",
			  "%s:2: [queue] result_max: expected a value from 1KiB to 1MiB, got '2MiB'");
}

static void tokens(void **state)
{
	struct config cfg;
	char err[1024];
	const char *path = conf_file("[token.ci]\nsecret = 0123456789abcdef\nrole = submit\nteam = ml\n"
				     "[token.w]\nsecret = fedcba9876543210\nrole = worker\n");

	(void)state;
	assert_int(config_load(&cfg, &cmd_plugins, path, err, sizeof err), 0);
	assert_int(cfg.ntokens, 2);
	assert_string_equal(cfg.tokens[0].name, "ci");
	assert_int(cfg.tokens[0].role, ROLE_SUBMIT);
	assert_string_equal(cfg.tokens[0].team, "ml");
	assert_int(cfg.tokens[1].role, ROLE_WORKER);
	config_free(&cfg);

	assert_load_error("[token.ci]\nsecret = short\nrole = admin\n",
			  "%s:2: [token.ci] secret: expected 16 to 255 characters, got 5");
	assert_load_error("[token.ci]\nrole = admin\n",
			  "%s: [token.ci] secret: required, 16 characters at least");
	assert_load_error("[token.ci]\nsecret = 0123456789abcdef\nrole = submit\n",
			  "%s: [token.ci] team: required for role = submit");
	assert_load_error("[token.ci]\nsecret = 0123456789abcdef\n",
			  "%s: [token.ci] team: required for role = submit");
	assert_load_error("[token.ci]\nsecret = 0123456789abcdef\nrole = root\n",
			  "%s:3: [token.ci] role: expected one of admin, submit, worker, got 'root'");
	assert_load_error("[token.a]\nsecret = 0123456789abcdef\nrole = admin\n"
			  "[token.b]\nsecret = 0123456789abcdef\nrole = worker\n",
			  "%s: [token.b] secret: the same as [token.a]");
}

/* A secret is never printed back by `ebb config`. */
static void secrets_hidden(void **state)
{
	struct config cfg;
	char err[1024], *text;

	(void)state;
	config_defaults(&cfg, &cmd_plugins);
	assert_int(config_set(&cfg, "token.ci", "secret", "0123456789abcdef", err, sizeof err), 0);
	text = written(&cfg);
	assert_contains(text, "[token.ci]\nsecret = (hidden)\n");
	assert_null(strstr(text, "0123456789abcdef"));
	free(text);
	config_free(&cfg);
}

static void lanes(void **state)
{
	struct config cfg;
	char err[1024];
	const char *path = conf_file("[queue]\nlanes = high, mid,low\ndefault_lane = low\n");

	(void)state;
	assert_int(config_load(&cfg, &cmd_plugins, path, err, sizeof err), 0);
	assert_int(cfg.nlanes, 3);
	assert_int(config_lane_rank(&cfg, "high"), 0);
	assert_int(config_lane_rank(&cfg, "mid"), 1);
	assert_int(config_lane_rank(&cfg, "low"), 2);
	assert_int(config_lane_rank(&cfg, "standard"), -1);
	config_free(&cfg);

	assert_load_error("[queue]\nlanes = high,low\n",
			  "%s: [queue] default_lane: 'standard' is not one of the lanes 'high,low'");
	assert_load_error("[queue]\nlanes = a,b,a\ndefault_lane = a\n",
			  "%s: [queue] lanes: 'a' is listed twice");
	assert_load_error("[queue]\nlanes = a,b/c\ndefault_lane = a\n",
			  "%s: [queue] lanes: 'b/c' is not a lane name, or more than 16 lanes");
	assert_load_error("[queue]\nlanes = a,b,c,d,e,f,g,h,i,j,k,l,m,n,o,p,q\ndefault_lane = a\n",
			  "%s: [queue] lanes: 'q' is not a lane name, or more than 16 lanes");
}

static void set_one_key(void **state)
{
	struct config cfg;
	char err[1024];

	(void)state;
	config_defaults(&cfg, &cmd_plugins);
	assert_int(config_set(&cfg, "queue", "retry_base", "250ms", err, sizeof err), 0);
	assert_int(cfg.retry_base_ms, 250);
	assert_int(config_set(&cfg, "queue", "retry_base", "2w", err, sizeof err), -1);
	assert_string_equal(err, "[queue] retry_base: expected a duration with a unit"
				 " (500ms, 3s, 10m, 1h, 2d), got '2w'");
	assert_int(cfg.retry_base_ms, 250);
	assert_int(config_set(&cfg, "queue", "nope", "1", err, sizeof err), -1);
	assert_string_equal(err, "[queue] nope: unknown key");
	/* A near miss is named, in core and plug-in sections alike. */
	assert_int(config_set(&cfg, "scaler", "interva", "5s", err, sizeof err), -1);
	assert_string_equal(err, "[scaler] interva: unknown key; did you mean 'interval'?");
	assert_int(config_set(&cfg, "queue", "max_attepmts", "5", err, sizeof err), -1);
	assert_string_equal(err, "[queue] max_attepmts: unknown key; did you mean 'max_attempts'?");
	assert_int(config_set(&cfg, "local", "gpu", "0", err, sizeof err), -1);
	assert_string_equal(err, "[local] gpu: unknown key; did you mean 'gpus'?");
	config_free(&cfg);
}

static void name_check(void **state)
{
	char long_name[80];

	(void)state;
	memset(long_name, 'a', sizeof long_name - 1);
	long_name[sizeof long_name - 1] = '\0';
	assert_true(config_name_ok("gpu-a100_x.2"));
	assert_false(config_name_ok(""));
	assert_false(config_name_ok("a b"));
	assert_false(config_name_ok("a/b"));
	assert_false(config_name_ok(long_name));
	long_name[CONF_NAME_MAX] = '\0';
	assert_true(config_name_ok(long_name));
}

/* The example loads, and gives exactly the defaults. */
static void example_loads(void **state)
{
	const char *path = harness_fmt("%s/example.conf", harness_tmpdir());
	struct config cfg, def;
	char err[1024], *a, *b;
	FILE *f = fopen(path, "w");

	(void)state;
	config_write_example(f, &cmd_plugins);
	fclose(f);
	if (config_load(&cfg, &cmd_plugins, path, err, sizeof err) != 0)
		fail_msg("the example config does not load: %s", err);
	config_defaults(&def, &cmd_plugins);
	a = written(&cfg);
	b = written(&def);
	assert_string_equal(a, b);
	free(a);
	free(b);
	config_free(&cfg);
	config_free(&def);
}

/* The file shipped in the repository is what the table generates: a key
 * added to config.c needs `ebb config --example > ebb.conf.example`. */
static void example_shipped(void **state)
{
	const char *src = getenv("EBB_SRC");
	const char *path = harness_fmt("%s/ebb.conf.example", src && *src ? src : ".");
	const char *gen = harness_fmt("%s/generated", harness_tmpdir());
	char *shipped, *want;
	FILE *f = fopen(gen, "w");

	(void)state;
	config_write_example(f, &cmd_plugins);
	fclose(f);
	want = harness_read_file(gen, NULL);
	shipped = harness_read_file(path, NULL);
	if (!shipped)
		fail_msg("%s is missing (EBB_SRC is the source tree; make test sets it)", path);
	if (strcmp(shipped, want) != 0)
		print_error("%s differs from `ebb config --example`: regenerate it\n", path);
	assert_string_equal(shipped, want);
	free(shipped);
	free(want);
}

/* The rows of section's table in docs/CONFIG.md: the text from its "## [SECTION]"
 * heading to the next heading; NULL when there is none. */
static char *doc_section(const char *doc, const char *section)
{
	const char *start = strstr(doc, harness_fmt("\n## [%s]\n", section)), *end;

	if (!start)
		return NULL;
	end = strstr(start + 1, "\n## ");
	return strndup(start, end ? (size_t)(end - start) : strlen(start));
}

/* Every key of every section, plug-ins' included, has its row in
 * docs/CONFIG.md under its section: a key added later is documented, or
 * this fails naming it. */
static void keys_documented(void **state)
{
	const char *src = getenv("EBB_SRC");
	const char *gen = harness_fmt("%s/generated", harness_tmpdir());
	char *doc = harness_read_file(harness_fmt("%s/docs/CONFIG.md", src && *src ? src : "."), NULL);
	char *example, *line, *save = NULL, *rows = NULL, section[80] = "", missing[4096] = "";
	FILE *f = fopen(gen, "w");

	(void)state;
	assert_non_null(doc);
	config_write_example(f, &cmd_plugins);
	fclose(f);
	example = harness_read_file(gen, NULL);
	for (line = strtok_r(example, "\n", &save); line; line = strtok_r(NULL, "\n", &save)) {
		char key[80];
		/* "[server]", "#[offer.NAME]"; then "key = value", "#key = value". */
		if (sscanf(line, "%*[#][%79[^]]", section) == 1 || sscanf(line, "[%79[^]]", section) == 1) {
			free(rows);
			rows = doc_section(doc, section);
			if (!rows)
				snprintf(missing + strlen(missing), sizeof missing - strlen(missing), " [%s]", section);
		} else if (rows && (sscanf(line, "#%79[a-z0-9_] =", key) == 1 || sscanf(line, "%79[a-z0-9_] =", key) == 1) &&
			   !strstr(rows, harness_fmt("\n| `%s` |", key))) {
			snprintf(missing + strlen(missing), sizeof missing - strlen(missing), " [%s] %s", section, key);
		}
	}
	free(rows);
	free(example);
	free(doc);
	if (missing[0])
		fail_msg("docs/CONFIG.md has no row for:%s", missing);
}

/* A provider kind's keys are its own section, checked by the same table
 * machinery: a GPU index listed twice would go to two workers at once,
 * and is refused at its line like any bad value. */
static void local_gpus_each_once(void **state)
{
	struct config cfg;
	char err[1024];
	const struct local_conf *local;

	(void)state;
	assert_load_error("[provider]\nkind = local\n[local]\ngpus = 0,1, 0\n",
			  "%s:4: [local] gpus: GPU 0 is listed twice in '0,1, 0': each index goes to one worker at a time");
	assert_load_error("[local]\ngpus = 0,x\n",
			  "%s:2: [local] gpus: expected GPU indices from 0 to 1023 separated by commas (256 at most), got '0,x'");
	assert_load_error("[local]\ngpus = 1024\n",
			  "%s:2: [local] gpus: expected GPU indices from 0 to 1023 separated by commas (256 at most), got '1024'");
	assert_int(config_load(&cfg, &cmd_plugins, conf_file("[local]\ngpus = 3, 1,2\n"), err, sizeof err), 0);
	/* The section's values are the kind's own struct. */
	local = config_plugin(&cfg, "local");
	assert_non_null(local);
	assert_string_equal(local->gpus, "3, 1,2");
	config_free(&cfg);
}

/* [store] kind and [provider] kind name a registered plug-in, or fail at
 * their line with the names there are. */
static void kinds_are_the_registries(void **state)
{
	(void)state;
	assert_load_error("[store]\nkind = mysql\n", "%s:2: [store] kind: expected one of sqlite, postgres, got 'mysql'");
	assert_load_error("\n[provider]\nkind = aws\n",
			  "%s:3: [provider] kind: expected one of none, local, exec, got 'aws'");
	assert_load_error("[aws]\ncommand = x\n",
			  "%s:2: [aws]: unknown section (expected server, store, queue, scaler, provider, alerts, postgres, local,"
			  " exec, lane.NAME, offer.NAME, type.NAME, token.NAME, webhook.NAME or team.NAME)");
}

/* A webhook needs a URL of HTTP; its token is a secret, never printed. */
static void webhooks_checked(void **state)
{
	struct config cfg;
	char err[1024];
	char *text;
	size_t len;
	FILE *f;

	(void)state;
	assert_load_error("[webhook.oncall]\ntoken = x\n",
			  "%s: [webhook.oncall] url: required, an http:// or https:// URL, got ''");
	assert_load_error("[webhook.oncall]\nurl = ftp://example.com/x\n",
			  "%s: [webhook.oncall] url: required, an http:// or https:// URL, got 'ftp://example.com/x'");
	assert_int(config_load(&cfg, &cmd_plugins,
			       conf_file("[webhook.oncall]\nurl = https://example.com/hook\ntoken = hook-secret-42\n"), err,
			       sizeof err),
		   0);
	assert_int(cfg.nwebhooks, 1);
	assert_string_equal(cfg.webhooks[0].url, "https://example.com/hook");
	f = open_memstream(&text, &len);
	config_write(&cfg, f);
	fclose(f);
	assert_null(strstr(text, "hook-secret-42"));
	free(text);
	config_free(&cfg);
}

/* The keys config_keys() saw, by name. */
struct seen {
	struct config_key_info keys[64];
	int n;
};

static void see_key(const struct config_key_info *k, void *arg)
{
	struct seen *seen = arg;

	if (seen->n < 64)
		seen->keys[seen->n++] = *k;
}

static const struct config_key_info *seen_key(const struct seen *seen, const char *name)
{
	for (int k = 0; k < seen->n; k++) {
		if (strcmp(seen->keys[k].name, name) == 0)
			return &seen->keys[k];
	}
	fail_msg("config_keys() did not show %s", name);
	return NULL;
}

static void assert_key(const struct seen *seen, const char *name, const char *type, const char *def,
		       const char *min, const char *max, int auto_ok)
{
	const struct config_key_info *k = seen_key(seen, name);

	assert_string_equal(k->type, type);
	assert_string_equal(k->def, def);
	assert_string_equal(k->min, min);
	assert_string_equal(k->max, max);
	assert_int(k->auto_ok, auto_ok);
}

/* config_keys() walks a section's keys in the table's order, each with its
 * type, default and bounds written as in the file. */
static void keys_as_text(void **state)
{
	struct seen seen = {0};

	(void)state;
	assert_int(config_keys("scaler", see_key, &seen), 0);
	assert_string_equal(seen.keys[0].name, "interval");
	assert_key(&seen, "idle_timeout", "duration", "10m", "0s", "1d", 1);
	assert_key(&seen, "max_instances", "integer", "4", "0", "100000", 0);
	assert_key(&seen, "max_share_per_offer", "number", "0.5", "0.01", "1", 0);
	assert_key(&seen, "spot", "on/off", "on", "off", "on", 0);
	assert_key(&seen, "warm", "string", "", "", "", 0);
	memset(&seen, 0, sizeof seen);
	assert_int(config_keys("lane", see_key, &seen), 0);
	assert_int(seen.n, 1);
	assert_key(&seen, "wait_target", "duration", "5m", "1s", "7d", 0);
	memset(&seen, 0, sizeof seen);
	assert_int(config_keys("server", see_key, &seen), 0);
	assert_key(&seen, "max_body", "size", "1MiB", "1KiB", "64MiB", 0);
	assert_key(&seen, "log_level", "choice", "info", "debug", "error", 0);
	assert_int(config_keys("nosuch", see_key, &seen), -1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(local_gpus_each_once),
		cmocka_unit_test(kinds_are_the_registries),
		cmocka_unit_test(defaults),
		cmocka_unit_test(defaults_round_trip),
		cmocka_unit_test(unknown_key),
		cmocka_unit_test(out_of_bounds),
		cmocka_unit_test(bad_values),
		cmocka_unit_test(first_error_wins),
		cmocka_unit_test(missing_file),
		cmocka_unit_test(unknown_section),
		cmocka_unit_test(not_ini),
		cmocka_unit_test(mangled_lines),
		cmocka_unit_test(directory),
		cmocka_unit_test(types),
		cmocka_unit_test(tokens),
		cmocka_unit_test(secrets_hidden),
		cmocka_unit_test(lanes),
		cmocka_unit_test(set_one_key),
		cmocka_unit_test(name_check),
		cmocka_unit_test(example_loads),
		cmocka_unit_test(example_shipped),
		cmocka_unit_test(result_max_within_max_body),
		cmocka_unit_test(keys_documented),
		cmocka_unit_test(webhooks_checked),
		cmocka_unit_test(keys_as_text),
	};
	return cmocka_run_group_tests(tests, NULL, harness_cleanup);
}
