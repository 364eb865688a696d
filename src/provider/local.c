/* The local provider: each instance is an `ebb worker` process on this
 * machine with its own GPU indices, so a multi-GPU workstation is served
 * for real and the tests run real processes. `[local] boot` delays a
 * worker's start to stand in for a cloud instance's cold start.
 *
 * It also plays the spot market's faults, from a generator seeded by
 * [local] seed: a share of spot launches fails for capacity
 * ([offer.NAME] launch_failure_rate), and a spot instance is reclaimed at
 * a time drawn from an exponential distribution ([offer.NAME]
 * spot_reclaim_rate per hour): serve serves its notice, and [local]
 * reclaim_notice later the worker and its jobs are killed, as a cloud
 * kills the machine. `ebb reclaim` starts the same reclaim by hand. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "common/rng.h"
#include "provider/provider.h"

#define MAX_GPUS 256

struct local_child {
	pid_t pid;
	int adopted; /* started by an earlier serve: not our child, polled */
	int64_t instance;
	int gpu_index[64];
	int ngpus;
};

/* A reclaim under way: first its notice is due, then its kill. */
struct reclaim_timer {
	struct local *l;
	int64_t instance;
	int kill; /* 0: the notice is due next; 1: the kill */
	struct event *ev;
	struct reclaim_timer *next;
};

struct local {
	struct provider base;
	struct provider_env env;
	char server_url[1100]; /* env's own is the caller's buffer, gone once open returns */
	uint64_t rng; /* the faults' generator, from [local] seed */
	struct reclaim_timer *timers;
	int gpus[MAX_GPUS]; /* the configured indices */
	int gpu_busy[MAX_GPUS];
	int ngpus;
	struct local_child *children;
	int nchildren;
	struct event *sigchld;
};

static struct local *impl(struct provider *p) { return (struct local *)p; }

static const struct offer_conf *offer_conf(const struct config *cfg, const char *name)
{
	for (size_t k = 0; k < cfg->noffers; k++) {
		if (strcmp(cfg->offers[k].name, name) == 0)
			return &cfg->offers[k];
	}
	return NULL;
}

static struct local_child *child_of(struct local *l, int64_t instance)
{
	for (int k = 0; k < l->nchildren; k++) {
		if (l->children[k].instance == instance)
			return &l->children[k];
	}
	return NULL;
}

static void drop_timer(struct local *l, struct reclaim_timer *t)
{
	for (struct reclaim_timer **p = &l->timers; *p; p = &(*p)->next) {
		if (*p == t) {
			*p = t->next;
			break;
		}
	}
	event_free(t->ev);
	free(t);
}

static void drop_timers_of(struct local *l, int64_t instance)
{
	struct reclaim_timer *t = l->timers, *next;

	for (; t; t = next) {
		next = t->next;
		if (t->instance == instance)
			drop_timer(l, t);
	}
}

/* The state letter and parent of pid from /proc/PID/stat: 0, or -1 when
 * the process is not there to read. */
static int proc_stat(pid_t pid, char *state, pid_t *ppid)
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

static pid_t parent_of(pid_t pid)
{
	char state;
	pid_t ppid;

	return proc_stat(pid, &state, &ppid) == 0 ? ppid : 0;
}

/* A reclaimed machine goes with everything on it: the worker and the jobs
 * it started, each of which leads its own process group. The worker is
 * stopped first so that it starts nothing while its children are found. */
static void kill_instance(pid_t worker)
{
	pid_t kids[256];
	int n = 0;
	DIR *d;
	struct dirent *e;

	kill(worker, SIGSTOP);
	if ((d = opendir("/proc"))) {
		while ((e = readdir(d)) && n < 256) {
			pid_t pid = (pid_t)atoi(e->d_name);
			if (pid > 0 && parent_of(pid) == worker)
				kids[n++] = pid;
		}
		closedir(d);
	}
	for (int k = 0; k < n; k++) {
		kill(-kids[k], SIGKILL);
		kill(kids[k], SIGKILL);
	}
	kill(worker, SIGKILL);
}

static void arm(struct reclaim_timer *t, int64_t ms)
{
	struct timeval tv = {.tv_sec = (time_t)(ms / 1000), .tv_usec = (suseconds_t)(ms % 1000) * 1000};
	evtimer_add(t->ev, &tv);
}

static void on_reclaim_timer(evutil_socket_t fd, short what, void *arg)
{
	struct reclaim_timer *t = arg;
	struct local *l = t->l;
	struct local_child *c = child_of(l, t->instance);

	(void)fd;
	(void)what;
	if (!t->kill) {
		log_info("spot reclaim", "instance=%lld kill_in_ms=%lld", (long long)t->instance,
			 (long long)l->env.cfg->local_reclaim_notice_ms);
		t->kill = 1;
		arm(t, l->env.cfg->local_reclaim_notice_ms);
		if (l->env.notice)
			l->env.notice(l->env.changed_arg, t->instance);
		return;
	}
	if (c) {
		log_info("spot reclaim: instance killed", "instance=%lld pid=%d", (long long)t->instance, (int)c->pid);
		kill_instance(c->pid);
	}
	drop_timer(l, t);
}

static struct reclaim_timer *new_timer(struct local *l, int64_t instance, int kill_next, int64_t ms)
{
	struct reclaim_timer *t = calloc(1, sizeof *t);

	t->l = l;
	t->instance = instance;
	t->kill = kill_next;
	t->ev = evtimer_new(l->env.base, on_reclaim_timer, t);
	t->next = l->timers;
	l->timers = t;
	arm(t, ms);
	return t;
}

static void free_gpus(struct local *l, const struct local_child *c)
{
	for (int g = 0; g < c->ngpus; g++)
		l->gpu_busy[c->gpu_index[g]] = 0;
}

/* Reaps exited workers, gives their GPUs back and tells the scaler. */
static void on_sigchld(evutil_socket_t sig, short what, void *arg)
{
	struct local *l = arg;
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
			free_gpus(l, &l->children[k]);
			drop_timers_of(l, l->children[k].instance);
			l->children[k] = l->children[--l->nchildren];
			reaped = 1;
			break;
		}
	}
	if (reaped && l->env.changed)
		l->env.changed(l->env.changed_arg);
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

static int local_launch(struct provider *p, struct instance *inst, char *err, size_t errsize)
{
	struct local *l = impl(p);
	const struct config *cfg = l->env.cfg;
	struct local_child c = {.instance = inst->id};
	const struct offer_conf *oc = offer_conf(cfg, inst->offer);
	char id[32], gpus[16], vram[16], boot[32], orphan[32], notice[1200], every[32];
	int64_t reclaim_in_ms = 0, every_ms;
	size_t n;
	pid_t pid;

	if (inst->market == MARKET_SPOT && oc && oc->launch_failure_rate > 0 &&
	    rng_uniform(&l->rng) < oc->launch_failure_rate) {
		snprintf(err, errsize, "capacity: no spot capacity for offer %s (simulated: [offer.%s] "
			 "launch_failure_rate = %g)", inst->offer, inst->offer, oc->launch_failure_rate);
		return -1;
	}
	if (inst->market == MARKET_SPOT && oc && oc->spot_reclaim_rate > 0) {
		/* Reclaims as a Poisson process: the time to the first is
		 * exponential, with mean 1 / rate hours. */
		double hours = -log(1.0 - rng_uniform(&l->rng)) / oc->spot_reclaim_rate;
		reclaim_in_ms = hours > 24 * 365 ? 24LL * 365 * 3600000 : (int64_t)(hours * 3600000.0) + 1;
	}
	if (take_gpus(l, inst->gpus, &c, inst->gpu_ids, sizeof inst->gpu_ids) != 0) {
		snprintf(err, errsize, "capacity: only %d GPU indices of [local] gpus = %s are free, %d wanted",
			 c.ngpus, cfg->local_gpus, inst->gpus);
		free_gpus(l, &c);
		return -1;
	}
	snprintf(id, sizeof id, "%lld", (long long)inst->id);
	snprintf(gpus, sizeof gpus, "%d", inst->gpus);
	snprintf(vram, sizeof vram, "%d", inst->vram_gb);
	snprintf(boot, sizeof boot, "%lldms", (long long)cfg->local_boot_ms);
	snprintf(orphan, sizeof orphan, "%lldms", (long long)cfg->orphan_timeout_ms);
	/* The worker reads its reclaim notice from serve, as it would from a
	 * cloud's metadata service, often enough to act well within it. */
	n = strlen(l->env.server_url);
	while (n > 0 && l->env.server_url[n - 1] == '/')
		n--;
	snprintf(notice, sizeof notice, "%.*s/v1/fleet/%lld/notice", (int)n, l->env.server_url, (long long)inst->id);
	every_ms = cfg->local_reclaim_notice_ms / 5;
	every_ms = every_ms < 200 ? 200 : every_ms > 5000 ? 5000 : every_ms;
	snprintf(every, sizeof every, "%lldms", (long long)every_ms);
	pid = fork();
	if (pid < 0) {
		snprintf(err, errsize, "fork: %s", strerror(errno));
		free_gpus(l, &c);
		return -1;
	}
	if (pid == 0) {
		char *argv[] = {"ebb", "worker", "--server", (char *)l->env.server_url, "--instance", id,
				"--gpus", gpus, "--vram", vram, "--boot-delay", boot, "--orphan-timeout", orphan,
				"--notice-url", notice, "--notice-interval", every,
				cfg->on_exit[0] ? "--on-exit" : NULL, cfg->on_exit, NULL};
		setenv("CUDA_VISIBLE_DEVICES", inst->gpu_ids, 1);
		if (l->env.worker_token)
			setenv("EBB_TOKEN", l->env.worker_token, 1);
		/* The worker outlives a serve that dies: its own timeouts end it. */
		signal(SIGPIPE, SIG_DFL);
		execv("/proc/self/exe", argv);
		_exit(127);
	}
	c.pid = pid;
	l->children = realloc(l->children, (size_t)(l->nchildren + 1) * sizeof *l->children);
	l->children[l->nchildren++] = c;
	snprintf(inst->provider_ref, sizeof inst->provider_ref, "pid:%d", (int)pid);
	if (reclaim_in_ms) {
		log_info("spot reclaim scheduled", "instance=%lld in_ms=%lld", (long long)inst->id,
			 (long long)reclaim_in_ms);
		new_timer(l, inst->id, 0, reclaim_in_ms);
	}
	return 0;
}

/* `ebb reclaim`: the notice is served now (serve did that), the kill comes
 * [local] reclaim_notice later; a reclaim already under way keeps its
 * kill time. */
static int local_reclaim(struct provider *p, const struct instance *inst)
{
	struct local *l = impl(p);
	struct reclaim_timer *t;

	for (t = l->timers; t; t = t->next) {
		if (t->instance != inst->id)
			continue;
		if (!t->kill) {
			evtimer_del(t->ev);
			t->kill = 1;
			arm(t, l->env.cfg->local_reclaim_notice_ms);
		}
		return 0;
	}
	if (!child_of(l, inst->id))
		return -1; /* its worker is gone already */
	log_info("spot reclaim", "instance=%lld kill_in_ms=%lld", (long long)inst->id,
		 (long long)l->env.cfg->local_reclaim_notice_ms);
	new_timer(l, inst->id, 1, l->env.cfg->local_reclaim_notice_ms);
	return 0;
}

static int local_terminate(struct provider *p, const struct instance *inst)
{
	struct local *l = impl(p);

	for (int k = 0; k < l->nchildren; k++) {
		if (l->children[k].instance == inst->id)
			return kill(l->children[k].pid, SIGTERM);
	}
	return 0; /* already gone */
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
	return proc_stat(pid, &state, &ppid) != 0 || (state != 'Z' && state != 'X');
}

static int local_list(struct provider *p, provider_ref_cb cb, void *arg)
{
	struct local *l = impl(p);
	char ref[32];

	/* Adopted workers are not our children: no SIGCHLD, so look. */
	for (int k = 0; k < l->nchildren; k++) {
		if (l->children[k].adopted && !running(l->children[k].pid)) {
			free_gpus(l, &l->children[k]);
			l->children[k--] = l->children[--l->nchildren];
		}
	}
	for (int k = 0; k < l->nchildren; k++) {
		snprintf(ref, sizeof ref, "pid:%d", (int)l->children[k].pid);
		cb(arg, ref);
	}
	return 0;
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
	struct local *l = impl(p);
	struct local_child c = {.adopted = 1, .instance = inst->id};
	char *ids = strdup(inst->gpu_ids), *save = NULL;
	int pid;

	if (sscanf(inst->provider_ref, "pid:%d", &pid) != 1 || !is_worker_of(pid, inst->id)) {
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
	l->children = realloc(l->children, (size_t)(l->nchildren + 1) * sizeof *l->children);
	l->children[l->nchildren++] = c;
	log_info("worker adopted", "instance=%lld pid=%d", (long long)inst->id, pid);
	return 0;
}

static void local_close(struct provider *p)
{
	struct local *l = impl(p);

	while (l->timers)
		drop_timer(l, l->timers);
	event_free(l->sigchld);
	free(l->children);
	free(l);
}

static const struct provider_ops local_ops = {
	.name = "local",
	.launch = local_launch,
	.terminate = local_terminate,
	.list = local_list,
	.adopt = local_adopt,
	.reclaim = local_reclaim,
	.close = local_close,
};

struct provider *provider_local_open(const struct provider_env *env, char *err, size_t errsize)
{
	struct local *l = calloc(1, sizeof *l);

	l->base.ops = &local_ops;
	l->env = *env;
	snprintf(l->server_url, sizeof l->server_url, "%s", env->server_url);
	l->env.server_url = l->server_url;
	l->rng = (uint64_t)env->cfg->local_seed * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL;
	l->ngpus = config_gpu_list(env->cfg->local_gpus, l->gpus, MAX_GPUS);
	if (l->ngpus < 0) {
		snprintf(err, errsize, "[local] gpus: '%s' is not a list of GPU indices", env->cfg->local_gpus);
		free(l);
		return NULL;
	}
	l->sigchld = evsignal_new(env->base, SIGCHLD, on_sigchld, l);
	event_add(l->sigchld, NULL);
	return &l->base;
}

struct provider *provider_open(const struct provider_env *env, char *err, size_t errsize)
{
	switch ((enum provider_kind)env->cfg->provider_kind) {
	case PROVIDER_LOCAL:
		return provider_local_open(env, err, errsize);
	case PROVIDER_NONE:
		break;
	}
	return NULL;
}
