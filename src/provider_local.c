/* The local provider: each instance is an `ebb worker` process on this
 * machine with its own GPU indices, so a multi-GPU workstation is served
 * for real and the tests run real processes. `[local] boot` delays a
 * worker's start to stand in for a cloud instance's cold start. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "provider.h"

#define MAX_GPUS 256

struct local_child {
	pid_t pid;
	int adopted; /* started by an earlier serve: not our child, polled */
	int64_t instance;
	int gpu_index[64];
	int ngpus;
};

struct local {
	struct provider base;
	struct provider_env env;
	int gpus[MAX_GPUS]; /* the configured indices */
	int gpu_busy[MAX_GPUS];
	int ngpus;
	struct local_child *children;
	int nchildren;
	struct event *sigchld;
};

static struct local *impl(struct provider *p) { return (struct local *)p; }

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
	char id[32], gpus[16], vram[16], boot[32], orphan[32];
	pid_t pid;

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
	pid = fork();
	if (pid < 0) {
		snprintf(err, errsize, "fork: %s", strerror(errno));
		free_gpus(l, &c);
		return -1;
	}
	if (pid == 0) {
		char *argv[] = {"ebb", "worker", "--server", (char *)l->env.server_url, "--instance", id,
				"--gpus", gpus, "--vram", vram, "--boot-delay", boot, "--orphan-timeout", orphan,
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

static int local_list(struct provider *p, provider_ref_cb cb, void *arg)
{
	struct local *l = impl(p);
	char ref[32];

	/* Adopted workers are not our children: no SIGCHLD, so look. */
	for (int k = 0; k < l->nchildren; k++) {
		if (l->children[k].adopted && kill(l->children[k].pid, 0) != 0 && errno == ESRCH) {
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
	.close = local_close,
};

struct provider *provider_local_open(const struct provider_env *env, char *err, size_t errsize)
{
	struct local *l = calloc(1, sizeof *l);

	l->base.ops = &local_ops;
	l->env = *env;
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
