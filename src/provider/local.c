/* The local provider: each instance is an `ebb worker` process on this
 * machine with its own GPU indices, so a multi-GPU workstation is served
 * for real and the tests run real processes. `[local] boot` delays a
 * worker's start to stand in for a cloud instance's cold start, and
 * `[local] launch_latency` delays a launch's answer to stand in for a
 * cloud API's; its simulated spot faults are local_faults.c's.
 *
 * Every call completes from a timer of the loop (at once, or after the
 * launch latency), as a cloud's answer would, never inside the call. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "common/mem.h"
#include "common/rng.h"
#include "common/timer.h"
#include "provider/local_internal.h"

/* ---- [local] ---- */

/* [local] gpus: indices from 0 to 1023, each at most once (an index
 * listed twice would go to two workers at once). */
static int parse_gpus(const char *list, int *out, int max, char *why, size_t whysize)
{
	char *copy = mem_strdup(list), *save = NULL;
	int n = 0, rc = 0;

	if (!copy) {
		snprintf(why, whysize, "out of memory");
		return -1;
	}
	for (char *tok = strtok_r(copy, ", ", &save); tok && rc == 0; tok = strtok_r(NULL, ", ", &save)) {
		char *end;
		long v = strtol(tok, &end, 10);
		if (*end || end == tok || v < 0 || v > 1023 || n == max) {
			snprintf(why, whysize, "expected GPU indices from 0 to 1023 separated by commas (%d at most), got '%s'",
				 max, list);
			rc = -1;
			break;
		}
		for (int i = 0; i < n; i++) {
			if (out[i] == (int)v) {
				snprintf(why, whysize, "GPU %ld is listed twice in '%s': each index goes to one worker at a time",
					 v, list);
				rc = -1;
			}
		}
		out[n++] = (int)v;
	}
	free(copy);
	return rc == 0 ? n : -1;
}

static int check_gpus(const void *ctx, const char *value, char *why, size_t whysize)
{
	int gpus[LOCAL_MAX_GPUS];

	(void)ctx;
	return parse_gpus(value, gpus, LOCAL_MAX_GPUS, why, whysize) < 0 ? -1 : 0;
}

#define LOCAL(field) offsetof(struct local_conf, field)
static const struct conf_key local_keys[] = {
	{"gpus", CONF_STRING, LOCAL(gpus), 0, 1023, "0", NULL,
	 "GPU indices handed to local workers (CUDA_VISIBLE_DEVICES), each index to one worker at a time.",
	 .check = check_gpus},
	{"boot", CONF_DURATION, LOCAL(boot_ms), 0, 3600 * 1000, "0s", NULL,
	 "Delay before a local worker starts, standing in for a cloud instance's cold start; an offer's boot adds to it."},
	{"reclaim_notice", CONF_DURATION, LOCAL(reclaim_notice_ms), 0, 3600 * 1000, "10s", NULL,
	 "A local spot reclaim: the notice is served, and the worker is killed this long after."},
	{"seed", CONF_INT, LOCAL(seed), 0, 1LL << 62, "1", NULL,
	 "Seed of the local provider's simulated faults (spot_reclaim_rate, launch_failure_rate)."},
	{"launch_latency", CONF_DURATION, LOCAL(launch_latency_ms), 0, 3600 * 1000, "0s", NULL,
	 "Time a local launch takes to answer, standing in for a cloud API's; serve goes on meanwhile."},
	{0},
};

/* ---- calls under way ---- */

enum call_kind { CALL_LAUNCH, CALL_TERMINATE, CALL_LIST };

struct call {
	struct local *l;
	enum call_kind kind;
	struct instance inst; /* launch, terminate */
	char token[128];      /* launch: its worker's; "" when the API is open */
	union {
		launch_cb launch;
		terminate_cb terminate;
		list_cb list;
	} done;
	void *arg;
	struct event *ev;
	struct call *next;
};

static void on_call(evutil_socket_t fd, short what, void *arg);

static void start_call(struct local *l, struct call *c, int64_t after_ms)
{
	c->l = l;
	c->ev = evtimer_new(l->p->env.base, on_call, c);
	c->next = l->calls;
	l->calls = c;
	timer_add_ms(c->ev, after_ms);
}

/* Drops the first call under way without an answer: at close. */
static void drop_call(struct local *l)
{
	struct call *c = l->calls;

	l->calls = c->next;
	event_free(c->ev);
	free(c);
}

/* ---- workers and their GPUs ---- */

struct local_child *local_child_of(struct local *l, int64_t instance)
{
	for (int k = 0; k < l->nchildren; k++) {
		if (l->children[k].instance == instance)
			return &l->children[k];
	}
	return NULL;
}

int local_proc_stat(pid_t pid, char *state, pid_t *ppid)
{
	char path[64], buf[512], *p;
	int parent = 0;
	size_t n;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	if (!(f = fopen(path, "r")))
		return -1;
	n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	/* "pid (comm) S ppid ...": comm may hold anything, so after the last ')'. */
	if (!(p = strrchr(buf, ')')) || sscanf(p + 1, " %c %d", state, &parent) != 2)
		return -1;
	*ppid = (pid_t)parent;
	return 0;
}

static void free_gpus(struct local *l, const struct local_child *c)
{
	for (int g = 0; g < c->ngpus; g++)
		l->gpu_busy[c->gpu_index[g]] = 0;
}

static void drop_child(struct local *l, int k)
{
	free_gpus(l, &l->children[k]);
	local_fault_forget(l, l->children[k].instance);
	l->children[k] = l->children[--l->nchildren];
}

/* Reaps exited workers, gives their GPUs back and tells the scaler. */
static void on_sigchld(evutil_socket_t sig, short what, void *arg)
{
	struct local *l = arg;
	const struct provider_env *env = &l->p->env;
	int status, reaped = 0;
	pid_t pid;

	(void)sig;
	(void)what;
	while ((pid = waitpid(-1, &status, WNOHANG)) > 0) {
		for (int k = 0; k < l->nchildren; k++) {
			if (l->children[k].pid != pid)
				continue;
			log_info("worker exited", "instance=%lld pid=%d status=%d",
				 (long long)l->children[k].instance, (int)pid,
				 WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
			drop_child(l, k);
			reaped = 1;
			break;
		}
	}
	if (reaped && env->changed)
		env->changed(env->arg);
}

static int take_gpus(struct local *l, int want, struct local_child *c, char *ids, size_t size)
{
	size_t n = 0;

	c->ngpus = 0;
	ids[0] = '\0';
	for (int g = 0; g < l->ngpus && c->ngpus < want; g++) {
		if (!l->gpu_busy[g])
			c->gpu_index[c->ngpus++] = g;
	}
	if (c->ngpus < want)
		return -1;
	for (int g = 0; g < c->ngpus; g++) {
		l->gpu_busy[c->gpu_index[g]] = 1;
		n += (size_t)snprintf(ids + n, n < size ? size - n : 0, "%s%d", g ? "," : "",
				      l->gpus[c->gpu_index[g]]);
	}
	return 0;
}

/* Forks `ebb worker` for inst with its GPUs: 0 and its pid, or -1. */
static int spawn(struct local *l, const struct instance *inst, const char *token, const char *gpu_ids,
		 pid_t *pid, char *err, size_t errsize)
{
	struct worker_cmd w;
	char boot[32], every[32];
	int64_t every_ms;

	provider_worker_cmd(l->p, inst, token, &w);
	/* A cold start stood in for, and a notice read often enough to act
	 * well within a simulated reclaim's. */
	snprintf(boot, sizeof boot, "%lldms", (long long)l->conf->boot_ms);
	every_ms = l->conf->reclaim_notice_ms / 5;
	every_ms = every_ms < 200 ? 200 : every_ms > 5000 ? 5000 : every_ms;
	snprintf(every, sizeof every, "%lldms", (long long)every_ms);
	w.argv[w.argc++] = "--boot-delay";
	w.argv[w.argc++] = boot;
	w.argv[w.argc++] = "--notice-interval";
	w.argv[w.argc++] = every;
	*pid = fork();
	if (*pid < 0) {
		snprintf(err, errsize, "fork: %s", strerror(errno));
		return -1;
	}
	if (*pid == 0) {
		setenv("CUDA_VISIBLE_DEVICES", gpu_ids, 1);
		if (w.token)
			setenv("EBB_TOKEN", w.token, 1);
		if (w.cacert)
			setenv("EBB_CACERT", w.cacert, 1);
		/* The worker outlives a serve that dies: its own timeouts end it. */
		signal(SIGPIPE, SIG_DFL);
		execv("/proc/self/exe", (char *const *)w.argv);
		_exit(127);
	}
	return 0;
}

static void do_launch(struct local *l, const struct instance *inst, const char *token, struct launch_result *r)
{
	const struct provider_env *env = &l->p->env;
	struct local_child c = {.instance = inst->id};
	int k = offer_index(env->offers, env->noffers, inst->offer);
	const struct offer *o = k >= 0 ? &env->offers[k] : NULL;
	int64_t reclaim_in_ms = 0;

	if (inst->market == MARKET_SPOT && o) {
		if ((r->no_capacity = local_fault_launch(l, o, r->error, sizeof r->error)))
			return;
		reclaim_in_ms = local_fault_reclaim_in(l, o);
	}
	if (take_gpus(l, inst->gpus, &c, r->gpu_ids, sizeof r->gpu_ids) != 0) {
		/* Workers that are leaving give theirs back in a moment. */
		snprintf(r->error, sizeof r->error, "capacity: only %d GPU indices of [local] gpus = %.200s are free, %d wanted",
			 c.ngpus, l->conf->gpus, inst->gpus);
		r->passing = 1;
		free_gpus(l, &c);
		return;
	}
	if (spawn(l, inst, token, r->gpu_ids, &c.pid, r->error, sizeof r->error) != 0) {
		free_gpus(l, &c);
		return;
	}
	l->children = mem_realloc(l->children, (size_t)(l->nchildren + 1) * sizeof *l->children);
	l->children[l->nchildren++] = c;
	snprintf(r->ref, sizeof r->ref, "pid:%d", (int)c.pid);
	r->ok = 1;
	if (reclaim_in_ms)
		local_fault_schedule(l, inst->id, reclaim_in_ms);
}

static void do_terminate(struct local *l, const struct instance *inst, char *err, size_t errsize)
{
	struct local_child *c = local_child_of(l, inst->id);

	/* Gone already is terminated. */
	if (c && kill(c->pid, SIGTERM) != 0 && errno != ESRCH)
		snprintf(err, errsize, "kill %d: %s", (int)c->pid, strerror(errno));
}

/* Does pid run? An exited process that nobody reaps (its parent, serve,
 * is gone, and PID 1 of a container may not reap) stays a zombie, which
 * kill(pid, 0) still finds. */
static int running(pid_t pid)
{
	char state;
	pid_t ppid;

	if (kill(pid, 0) != 0 && errno == ESRCH)
		return 0;
	/* Unreadable but signalable: count it as running. */
	return local_proc_stat(pid, &state, &ppid) != 0 || (state != 'Z' && state != 'X');
}

static void do_list(struct local *l, list_cb done, void *arg)
{
	struct provider_item *items;
	char (*refs)[32];
	int n = 0;

	/* Adopted workers are not our children: no SIGCHLD, so look. */
	for (int k = 0; k < l->nchildren; k++) {
		if (l->children[k].adopted && !running(l->children[k].pid))
			drop_child(l, k--);
	}
	refs = mem_calloc((size_t)l->nchildren + 1, sizeof *refs);
	items = mem_calloc((size_t)l->nchildren + 1, sizeof *items);
	if (!refs || !items) {
		done(arg, NULL, 0, "out of memory");
	} else {
		for (; n < l->nchildren; n++) {
			snprintf(refs[n], sizeof refs[n], "pid:%d", (int)l->children[n].pid);
			items[n] = (struct provider_item){refs[n], l->children[n].instance, "", 0};
		}
		done(arg, items, n, NULL);
	}
	free(refs);
	free(items);
}

static void on_call(evutil_socket_t fd, short what, void *arg)
{
	struct call *c = arg;
	struct local *l = c->l;
	struct launch_result r = {0};
	char err[300] = "";

	(void)fd;
	(void)what;
	/* Out of the list first: the callback may start new calls. */
	for (struct call **p = &l->calls; *p; p = &(*p)->next) {
		if (*p == c) {
			*p = c->next;
			break;
		}
	}
	switch (c->kind) {
	case CALL_LAUNCH:
		do_launch(l, &c->inst, c->token[0] ? c->token : NULL, &r);
		c->done.launch(c->arg, c->inst.id, &r);
		break;
	case CALL_TERMINATE:
		do_terminate(l, &c->inst, err, sizeof err);
		c->done.terminate(c->arg, c->inst.id, err[0] == '\0', err);
		break;
	case CALL_LIST:
		do_list(l, c->done.list, c->arg);
		break;
	}
	event_free(c->ev);
	free(c);
}

static struct call *new_call(enum call_kind kind, const struct instance *inst, void *arg)
{
	struct call *c = mem_calloc(1, sizeof *c);

	if (!c) {
		log_error("local provider: out of memory", "call=%d", (int)kind);
		return NULL;
	}
	c->kind = kind;
	if (inst)
		c->inst = *inst;
	c->arg = arg;
	return c;
}

static void local_launch(struct provider *p, const struct instance *inst, const char *token, launch_cb done,
			 void *arg)
{
	struct local *l = p->impl;
	struct call *c = new_call(CALL_LAUNCH, inst, arg);

	if (c) {
		snprintf(c->token, sizeof c->token, "%s", token ? token : "");
		c->done.launch = done;
		start_call(l, c, l->conf->launch_latency_ms);
	}
}

static void local_terminate(struct provider *p, const struct instance *inst, const char *data, terminate_cb done,
			    void *arg)
{
	struct call *c = new_call(CALL_TERMINATE, inst, arg);

	(void)data; /* a local worker is found by its instance */
	if (c) {
		c->done.terminate = done;
		start_call(p->impl, c, 0);
	}
}

static void local_list(struct provider *p, list_cb done, void *arg)
{
	struct call *c = new_call(CALL_LIST, NULL, arg);

	if (c) {
		c->done.list = done;
		start_call(p->impl, c, 0);
	}
}

/* Is pid an `ebb worker --instance ID` process? */
static int is_worker_of(pid_t pid, int64_t id)
{
	char path[64], args[4096], want[40];
	size_t n, wn;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	if (!(f = fopen(path, "r")))
		return 0;
	n = fread(args, 1, sizeof args, f);
	fclose(f);
	wn = (size_t)snprintf(want, sizeof want, "--instance%c%lld", '\0', (long long)id) + 1;
	for (size_t i = 0; i + wn <= n; i++) {
		if (memcmp(args + i, want, wn) == 0)
			return 1;
	}
	return 0;
}

static int local_adopt(struct provider *p, const struct instance *inst)
{
	struct local *l = p->impl;
	struct local_child c = {.adopted = 1, .instance = inst->id};
	char *ids = mem_strdup(inst->gpu_ids), *save = NULL;
	int pid;

	if (!ids || sscanf(inst->provider_ref, "pid:%d", &pid) != 1 || !is_worker_of(pid, inst->id)) {
		free(ids);
		return -1;
	}
	c.pid = pid;
	for (char *t = strtok_r(ids, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
		for (int g = 0; g < l->ngpus; g++) {
			if (l->gpus[g] == atoi(t) && !l->gpu_busy[g] && c.ngpus < 64) {
				l->gpu_busy[g] = 1;
				c.gpu_index[c.ngpus++] = g;
				break;
			}
		}
	}
	free(ids);
	l->children = mem_realloc(l->children, (size_t)(l->nchildren + 1) * sizeof *l->children);
	l->children[l->nchildren++] = c;
	log_info("worker adopted", "instance=%lld pid=%d", (long long)inst->id, pid);
	return 0;
}

static int64_t local_notice_ms(const struct provider *p)
{
	const struct local *l = p->impl;
	return l->conf->reclaim_notice_ms;
}

static int local_open(struct provider *p, char *err, size_t errsize)
{
	struct local *l = mem_calloc(1, sizeof *l);

	if (!l) {
		snprintf(err, errsize, "local provider: out of memory");
		return -1;
	}
	l->p = p;
	l->conf = p->conf;
	l->rng = (uint64_t)l->conf->seed * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL;
	/* The key's check has passed: the list parses. */
	if ((l->ngpus = parse_gpus(l->conf->gpus, l->gpus, LOCAL_MAX_GPUS, err, errsize)) < 0) {
		free(l);
		return -1;
	}
	l->sigchld = evsignal_new(p->env.base, SIGCHLD, on_sigchld, l);
	event_add(l->sigchld, NULL);
	p->impl = l;
	return 0;
}

static void local_close(struct provider *p)
{
	struct local *l = p->impl;

	while (l->calls)
		drop_call(l);
	local_fault_close(l);
	event_free(l->sigchld);
	free(l->children);
	free(l);
}

const struct provider_kind provider_local = {
	.conf = {.name = "local", .help = "The local provider.", .keys = local_keys,
		 .size = sizeof(struct local_conf)},
	.open = local_open,
	.close = local_close,
	.launch = local_launch,
	.terminate = local_terminate,
	.list = local_list,
	.adopt = local_adopt,
	.reclaim = local_fault_reclaim,
	.notice_ms = local_notice_ms,
};
