/* The exec provider: each call runs a program of the user's (one per
 * cloud, in the manner of Slurm's ResumeProgram), with a JSON message on
 * its standard input and one read from its standard output; exit 75 says
 * "no capacity". docs/PROVIDERS.md is the contract, version 1; exec_run.c
 * runs the programs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/jsonin.h"
#include "common/log.h"
#include "common/mem.h"
#include "provider/exec_reply.h"
#include "provider/exec_run.h"
#include "provider/kind.h"

#define EX_TEMPFAIL 75

/* [exec] */
struct exec_conf {
	char *command;
	int64_t timeout_ms;
	int64_t concurrency;
	char *tag;
	int64_t list_interval_ms;
};

static int check_tag(const void *ctx, const char *value, char *why, size_t whysize)
{
	(void)ctx;
	if (config_name_ok(value))
		return 0;
	snprintf(why, whysize, "expected a name of letters, digits, '_', '.' or '-', got '%.64s'", value);
	return -1;
}

#define EXEC(field) offsetof(struct exec_conf, field)
static const struct conf_key exec_keys[] = {
	{"command", CONF_STRING, EXEC(command), 0, 4095, "", NULL,
	 "The program ebb runs as `COMMAND launch`, `COMMAND terminate` or `COMMAND list` (docs/PROVIDERS.md). Required."},
	{"timeout", CONF_DURATION, EXEC(timeout_ms), 1000, 3600 * 1000, "2m", NULL,
	 "A call that has not ended is killed (its process group) and counts as failed."},
	{"concurrency", CONF_INT, EXEC(concurrency), 1, 64, "4", NULL,
	 "Calls at once; more wait their turn, in order."},
	{"tag", CONF_STRING, EXEC(tag), 1, CONF_NAME_MAX, "ebb", NULL,
	 "The tag the program puts on the instances it launches, and lists by: two serves on one account need two.",
	 .check = check_tag},
	{"list_interval", CONF_DURATION, EXEC(list_interval_ms), 1000, 3600 * 1000, "1m", NULL,
	 "How often ebb asks for the list: it finds instances gone without a word and leaks; each call is a cloud API call."},
	{0},
};

struct exec {
	struct provider *p;
	const struct exec_conf *conf;
	struct exec_runner *runner;
};

/* One call under way: what its answer goes to. */
struct call {
	struct exec *x;
	struct instance inst;
	const char *program;
	union {
		launch_cb launch;
		terminate_cb terminate;
	} done;
	void *arg;
};

/* The program of an offer's instances: its own, or [exec] command. */
static const char *program_of(const struct exec *x, const char *offer)
{
	const struct config *cfg = x->p->env.cfg;

	for (size_t k = 0; k < cfg->noffers; k++) {
		if (strcmp(cfg->offers[k].name, offer) == 0 && cfg->offers[k].command[0])
			return cfg->offers[k].command;
	}
	return x->conf->command;
}

/* Why a run failed, in one line: the program, the call, and its words. */
static void describe(const struct call *c, const char *call, const struct exec_result *r, char *out, size_t size)
{
	if (r->timed_out)
		snprintf(out, size, "%.200s %s: killed after [exec] timeout", c->program, call);
	else if (r->err_line[0])
		snprintf(out, size, "%.200s %s: exit %d: %.200s", c->program, call, r->status, r->err_line);
	else
		snprintf(out, size, "%.200s %s: exit %d", c->program, call, r->status);
}

/* The message every call starts from. */
static json_t *message(const struct exec *x, const char *call, const struct instance *inst)
{
	json_t *m = json_pack("{s:i, s:s, s:s}", "version", EXEC_CONTRACT_VERSION, "call", call, "tag", x->conf->tag);

	if (inst) {
		json_t *offer = config_offer_json(x->p->env.cfg, inst->offer);
		json_object_set_new(m, "instance", json_integer(inst->id));
		json_object_set_new(m, "offer", offer ? offer : json_pack("{s:s}", "name", inst->offer));
	}
	return m;
}

/* Runs call's program with the message (stolen): 0, or -1 with why. */
static int run(struct call *c, const char *call, json_t *m, exec_done done, char *why, size_t size)
{
	char *text = json_dumps(m, JSON_COMPACT);
	int rc = text ? exec_run(c->x->runner, c->program, call, text, done, c) : -1;

	json_decref(m);
	free(text);
	if (rc != 0)
		snprintf(why, size, "%.200s %s: out of memory", c->program, call);
	return rc;
}

/* ---- terminate ---- */

static void on_terminated(void *arg, const struct exec_result *r)
{
	struct call *c = arg;
	char why[600] = "";

	if (r->cancelled) {
		free(c);
		return;
	}
	if (r->status != 0 || r->timed_out)
		describe(c, "terminate", r, why, sizeof why);
	if (c->done.terminate)
		c->done.terminate(c->arg, c->inst.id, why[0] == '\0', why);
	free(c);
}

static void start_terminate(struct exec *x, const struct instance *inst, const char *data, terminate_cb done,
			    void *arg)
{
	struct call *c = mem_calloc(1, sizeof *c);
	json_t *m = message(x, "terminate", inst), *d = NULL;
	char why[300];

	if (!c) {
		json_decref(m);
		log_error("exec: out of memory: the instance is not terminated", "instance=%lld", (long long)inst->id);
		return;
	}
	*c = (struct call){.x = x, .inst = *inst, .program = program_of(x, inst->offer), .arg = arg};
	c->done.terminate = done;
	json_object_set_new(m, "ref", inst->provider_ref[0] ? json_string(inst->provider_ref) : json_null());
	if (data && json_parse_object(data, strlen(data), &d, &(struct ebb_error){0}) != 0)
		d = NULL;
	json_object_set_new(m, "data", d ? d : json_null());
	if (run(c, "terminate", m, on_terminated, why, sizeof why) != 0) {
		if (done)
			done(arg, inst->id, 0, why);
		free(c);
	}
}

static void exec_terminate(struct provider *p, const struct instance *inst, const char *data, terminate_cb done,
			   void *arg)
{
	start_terminate(p->impl, inst, data, done, arg);
}

/* ---- launch ---- */

/* A launch that failed, or whose answer does not say what it launched:
 * the program may have started something (a create that timed out, an
 * API that failed after making the machine), which it finds by its tag.
 * Exit 75 promises that nothing was launched. */
static void end_unnamed(struct call *c)
{
	log_warn("exec: a launch failed or gave no valid answer: terminating by its tag", "instance=%lld",
		 (long long)c->inst.id);
	c->inst.provider_ref[0] = '\0';
	start_terminate(c->x, &c->inst, NULL, NULL, NULL);
}

static void on_launched(void *arg, const struct exec_result *r)
{
	struct call *c = arg;
	struct launch_result res = {0};
	json_t *reply;

	if (r->cancelled) {
		free(c);
		return;
	}
	if (r->status == EX_TEMPFAIL && !r->timed_out) {
		res.no_capacity = 1;
		snprintf(res.error, sizeof res.error, "%.200s", r->err_line[0] ? r->err_line : "no capacity (exit 75)");
	} else if (r->status != 0 || r->timed_out) {
		describe(c, "launch", r, res.error, sizeof res.error);
		end_unnamed(c);
	} else if ((reply = exec_reply(c->program, "launch", r, res.error, sizeof res.error))) {
		exec_launch_reply(c->program, reply, &res);
		json_decref(reply);
		if (!res.ok)
			end_unnamed(c);
	} else {
		end_unnamed(c);
	}
	c->done.launch(c->arg, c->inst.id, &res);
	free(c);
}

static void exec_launch(struct provider *p, const struct instance *inst, const char *token, launch_cb done,
			void *arg)
{
	struct exec *x = p->impl;
	const struct config *cfg = p->env.cfg;
	struct call *c = mem_calloc(1, sizeof *c);
	struct worker_cmd w;
	struct launch_result res = {0};
	json_t *m = message(x, "launch", inst), *argv = json_array(), *env = json_object();

	provider_worker_cmd(p, inst, token, &w);
	for (int k = 0; k < w.argc; k++)
		json_array_append_new(argv, json_string(w.argv[k]));
	json_object_set_new(env, "EBB_SERVER", json_string(p->env.server_url));
	if (token)
		json_object_set_new(env, "EBB_TOKEN", json_string(token));
	json_object_set_new(m, "market", json_string(market_name(inst->market)));
	json_object_set_new(m, "worker",
			    json_pack("{s:o, s:o, s:s, s:f, s:f, s:s}", "argv", argv, "env", env, "server_url",
				      p->env.server_url, "idle_timeout_s",
				      (double)(cfg->idle_timeout_ms == CONF_AUTO ? cfg->idle_timeout_max_ms
										: cfg->idle_timeout_ms) / 1000.0,
				      "orphan_timeout_s", (double)cfg->orphan_timeout_ms / 1000.0, "notice_url", w.notice));
	/* The program writes it to a file on the instance, for EBB_CACERT. */
	if (p->worker_cacert_pem)
		json_object_set_new(json_object_get(m, "worker"), "cacert_pem", json_string(p->worker_cacert_pem));
	if (!c) {
		json_decref(m);
		snprintf(res.error, sizeof res.error, "exec: out of memory");
		done(arg, inst->id, &res);
		return;
	}
	*c = (struct call){.x = x, .inst = *inst, .program = program_of(x, inst->offer), .arg = arg};
	c->done.launch = done;
	if (run(c, "launch", m, on_launched, res.error, sizeof res.error) != 0) {
		done(arg, inst->id, &res);
		free(c);
	}
}

/* ---- list: each distinct program once ---- */

struct listing {
	struct exec *x;
	list_cb done;
	void *arg;
	int pending;
	int cancelled; /* the provider closes: nobody to answer */
	char error[600];
	struct provider_item *items;
	char **refs;
	int n;
	/* The programs, and for each an offer it launches ("": the default). */
	const char *programs[64];
	const char *offers[64];
	int nprograms;
};

static int add_item(struct listing *l, json_t *item, const char *offer, const char *program)
{
	size_t room = (size_t)l->n + 1;
	struct provider_item it, *items;
	char **refs;

	if (exec_list_item(program, item, &it, l->error, sizeof l->error) != 0)
		return -1;
	if ((items = mem_realloc(l->items, room * sizeof *items)))
		l->items = items;
	if ((refs = items ? mem_realloc(l->refs, room * sizeof *refs) : NULL))
		l->refs = refs;
	if (!items || !refs || !(l->refs[l->n] = mem_strdup(it.ref))) {
		snprintf(l->error, sizeof l->error, "exec list: out of memory");
		return -1;
	}
	it.ref = l->refs[l->n];
	it.offer = offer;
	l->items[l->n++] = it;
	return 0;
}

static void finish_listing(struct listing *l)
{
	if (!l->cancelled)
		l->done(l->arg, l->error[0] ? NULL : l->items, l->error[0] ? 0 : l->n, l->error[0] ? l->error : NULL);
	for (int k = 0; k < l->n; k++)
		free(l->refs[k]);
	free(l->refs);
	free(l->items);
	free(l);
}

struct list_call {
	struct call c;
	struct listing *l;
	const char *offer;
};

static void on_listed(void *arg, const struct exec_result *r)
{
	struct list_call *lc = arg;
	struct listing *l = lc->l;
	json_t *reply, *instances, *item;
	size_t k;

	l->cancelled |= r->cancelled;
	if (l->error[0] || r->cancelled) {
		/* One failed: the list fails, whatever the others say. */
	} else if (r->status != 0 || r->timed_out) {
		describe(&lc->c, "list", r, l->error, sizeof l->error);
	} else if ((reply = exec_reply(lc->c.program, "list", r, l->error, sizeof l->error))) {
		instances = json_object_get(reply, "instances");
		if (!json_is_array(instances))
			snprintf(l->error, sizeof l->error, "%.200s list: expected \"instances\": an array", lc->c.program);
		json_array_foreach(instances, k, item) {
			if (add_item(l, item, lc->offer, lc->c.program) != 0)
				break;
		}
		json_decref(reply);
	}
	free(lc);
	if (--l->pending == 0)
		finish_listing(l);
}

static void add_program(struct listing *l, const char *program, const char *offer)
{
	for (int k = 0; k < l->nprograms; k++) {
		if (strcmp(l->programs[k], program) == 0)
			return;
	}
	if (l->nprograms < 64) {
		l->programs[l->nprograms] = program;
		l->offers[l->nprograms++] = offer;
	}
}

static void exec_list(struct provider *p, list_cb done, void *arg)
{
	struct exec *x = p->impl;
	const struct config *cfg = p->env.cfg;
	struct listing *l = mem_calloc(1, sizeof *l);

	if (!l) {
		done(arg, NULL, 0, "exec list: out of memory");
		return;
	}
	*l = (struct listing){.x = x, .done = done, .arg = arg};
	add_program(l, x->conf->command, "");
	for (size_t k = 0; k < cfg->noffers; k++)
		add_program(l, program_of(x, cfg->offers[k].name), cfg->offers[k].name);
	/* Counted first: a run that cannot start answers from the loop,
	 * never before the last one is asked. */
	l->pending = l->nprograms;
	for (int k = 0; k < l->nprograms; k++) {
		struct list_call *lc = mem_calloc(1, sizeof *lc);
		char why[300];
		if (lc) {
			lc->c = (struct call){.x = x, .program = l->programs[k]};
			lc->l = l;
			lc->offer = l->offers[k];
		}
		if (!lc || run(&lc->c, "list", message(x, "list", NULL), on_listed, why, sizeof why) != 0) {
			snprintf(l->error, sizeof l->error, "exec list: out of memory");
			free(lc);
			if (--l->pending == 0)
				finish_listing(l);
		}
	}
}

/* ---- the kind ---- */

/* Every program named must be one ebb can run: said at start, not at
 * the first launch. */
static int check_program(const char *program, const char *where, char *err, size_t errsize)
{
	if (!program[0]) {
		snprintf(err, errsize, "%s: required with [provider] kind = exec", where);
		return -1;
	}
	if (program[0] != '/' || access(program, X_OK) != 0) {
		snprintf(err, errsize, "%s: '%.200s' is not an executable file given by its absolute path", where,
			 program);
		return -1;
	}
	return 0;
}

static int exec_check(const struct config *cfg, const void *conf, char *err, size_t errsize)
{
	const struct exec_conf *c = conf;
	char where[128];

	if (check_program(c->command, "[exec] command", err, errsize) != 0)
		return -1;
	for (size_t k = 0; k < cfg->noffers; k++) {
		snprintf(where, sizeof where, "[offer.%s] command", cfg->offers[k].name);
		if (cfg->offers[k].command[0] && check_program(cfg->offers[k].command, where, err, errsize) != 0)
			return -1;
	}
	return 0;
}

static int exec_open(struct provider *p, char *err, size_t errsize)
{
	struct exec *x = mem_calloc(1, sizeof *x);

	if (!x) {
		snprintf(err, errsize, "exec provider: out of memory");
		return -1;
	}
	x->p = p;
	x->conf = p->conf;
	if (!(x->runner = exec_runner_new(p->env.base, x->conf->timeout_ms, (int)x->conf->concurrency))) {
		snprintf(err, errsize, "exec provider: out of memory");
		free(x);
		return -1;
	}
	p->impl = x;
	return 0;
}

static void exec_close(struct provider *p)
{
	struct exec *x = p->impl;

	exec_runner_free(x->runner);
	free(x);
}

static int64_t exec_list_interval_ms(const struct provider *p)
{
	const struct exec *x = p->impl;
	return x->conf->list_interval_ms;
}

/* A cloud's instance is found by its ref at the next list. */
static int exec_adopt(struct provider *p, const struct instance *inst)
{
	(void)p;
	(void)inst;
	return 0;
}

const struct provider_kind provider_exec = {
	.conf = {.name = "exec", .help = "The exec provider: a program per cloud (docs/PROVIDERS.md).",
		 .keys = exec_keys, .size = sizeof(struct exec_conf)},
	.check = exec_check,
	.open = exec_open,
	.close = exec_close,
	.launch = exec_launch,
	.terminate = exec_terminate,
	.list = exec_list,
	.adopt = exec_adopt,
	.list_interval_ms = exec_list_interval_ms,
};
