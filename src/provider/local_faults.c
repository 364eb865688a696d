/* The local provider plays the spot market's faults, from a generator
 * seeded by [local] seed: a share of spot launches fails for capacity
 * ([offer.NAME] launch_failure_rate), and a spot instance is reclaimed at
 * a time drawn from an exponential distribution ([offer.NAME]
 * spot_reclaim_rate per hour): serve serves its notice, and [local]
 * reclaim_notice later the worker and its jobs are killed, as a cloud
 * kills the machine. `ebb reclaim` starts the same reclaim by hand. */
#include <dirent.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"
#include "common/rng.h"
#include "common/timer.h"
#include "provider/local_internal.h"

/* A reclaim under way: first its notice is due, then its kill. */
struct reclaim_timer {
	struct local *l;
	int64_t instance;
	int kill; /* 0: the notice is due next; 1: the kill */
	struct event *ev;
	struct reclaim_timer *next;
};

int local_fault_launch(struct local *l, const struct offer *o, char *why, size_t whysize)
{
	if (o->fault_launch_failure_rate <= 0 || rng_uniform(&l->rng) >= o->fault_launch_failure_rate)
		return 0;
	snprintf(why, whysize, "no spot capacity for offer %s (simulated: [offer.%s] launch_failure_rate = %g)",
		 o->name, o->name, o->fault_launch_failure_rate);
	return 1;
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

void local_fault_forget(struct local *l, int64_t instance)
{
	struct reclaim_timer *t = l->timers, *next;

	for (; t; t = next) {
		next = t->next;
		if (t->instance == instance)
			drop_timer(l, t);
	}
}

void local_fault_close(struct local *l)
{
	while (l->timers)
		drop_timer(l, l->timers);
}

static pid_t parent_of(pid_t pid)
{
	char state;
	pid_t ppid;

	return local_proc_stat(pid, &state, &ppid) == 0 ? ppid : 0;
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

static void on_reclaim_timer(evutil_socket_t fd, short what, void *arg)
{
	struct reclaim_timer *t = arg;
	struct local *l = t->l;
	const struct provider_env *env = &l->p->env;
	struct local_child *c = local_child_of(l, t->instance);

	(void)fd;
	(void)what;
	if (!t->kill) {
		log_info("spot reclaim", "instance=%lld kill_in_ms=%lld", (long long)t->instance,
			 (long long)l->conf->reclaim_notice_ms);
		t->kill = 1;
		timer_add_ms(t->ev, l->conf->reclaim_notice_ms);
		if (env->notice)
			env->notice(env->arg, t->instance);
		return;
	}
	if (c) {
		log_info("spot reclaim: instance killed", "instance=%lld pid=%d", (long long)t->instance, (int)c->pid);
		kill_instance(c->pid);
	}
	drop_timer(l, t);
}

static void new_timer(struct local *l, int64_t instance, int kill_next, int64_t ms)
{
	struct reclaim_timer *t = mem_calloc(1, sizeof *t);

	if (!t) {
		log_error("spot reclaim not simulated: out of memory", "instance=%lld", (long long)instance);
		return;
	}
	t->l = l;
	t->instance = instance;
	t->kill = kill_next;
	t->ev = evtimer_new(l->p->env.base, on_reclaim_timer, t);
	t->next = l->timers;
	l->timers = t;
	timer_add_ms(t->ev, ms);
}

int64_t local_fault_reclaim_in(struct local *l, const struct offer *o)
{
	double hours;

	if (o->fault_reclaim_rate <= 0)
		return 0;
	/* Reclaims as a Poisson process: the time to the first is
	 * exponential, with mean 1 / rate hours. */
	hours = -log(1.0 - rng_uniform(&l->rng)) / o->fault_reclaim_rate;
	return hours > 24 * 365 ? 24LL * 365 * 3600000 : (int64_t)(hours * 3600000.0) + 1;
}

void local_fault_schedule(struct local *l, int64_t instance, int64_t in_ms)
{
	log_info("spot reclaim scheduled", "instance=%lld in_ms=%lld", (long long)instance, (long long)in_ms);
	new_timer(l, instance, 0, in_ms);
}

/* The notice is served now (serve did that), the kill comes [local]
 * reclaim_notice later; a reclaim already under way keeps its kill time. */
int local_fault_reclaim(struct provider *p, const struct instance *inst)
{
	struct local *l = p->impl;

	for (struct reclaim_timer *t = l->timers; t; t = t->next) {
		if (t->instance != inst->id)
			continue;
		if (!t->kill) {
			evtimer_del(t->ev);
			t->kill = 1;
			timer_add_ms(t->ev, l->conf->reclaim_notice_ms);
		}
		return 0;
	}
	if (!local_child_of(l, inst->id))
		return -1; /* its worker is gone already */
	log_info("spot reclaim", "instance=%lld kill_in_ms=%lld", (long long)inst->id,
		 (long long)l->conf->reclaim_notice_ms);
	new_timer(l, inst->id, 1, l->conf->reclaim_notice_ms);
	return 0;
}
