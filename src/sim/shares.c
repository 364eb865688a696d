/* GPUs shared by small services in the replay (docs/SIMULATION.md, "GPUs
 * shared"): a one-GPU job of a type with [type.NAME] gpu_share below 1
 * runs on a GPU beside other such jobs, up to shares adding to 1 and,
 * where the type says its vram_gb and the offer its own, memory adding to
 * at most the GPU's. It goes on a GPU already shared that has room, else
 * on a whole free one, as the worker places it (worker/share.c): whole
 * GPUs stay free for whole jobs, and a whole job never goes on a shared
 * one. A GPU is whole again when its last shared job ends. free_gpus
 * counts whole GPUs only, as plan() reads it. */
#include <stdlib.h>

#include "policy/classes.h"
#include "sim/sim_internal.h"

void sim_shares_start(struct sim *s)
{
	const struct plan_settings *st = &s->policy->settings;
	const struct trace *t = s->trace;
	int shared = 0;

	for (int k = 0; k < t->ntypes; k++)
		shared |= classes_gpu_share(st, t->types[k]) < 1;
	if (!shared)
		return;
	s->shares = sim_grown(NULL, (size_t)t->ntypes + 1, sizeof *s->shares);
	for (int k = 0; k < t->ntypes; k++) {
		const struct type_conf *c = classes_type(st, t->types[k]);
		s->shares[k] = (struct sshare){.part = c ? c->gpu_share : 1, .vram_gb = c ? c->vram_gb : 0};
	}
}

/* Whether job, of a shared type, fits beside the jobs on GPU g. */
static int fits_on(const struct sim *s, const struct sinst *i, const struct sgpu *g, int job)
{
	const struct sshare *t = &s->shares[s->trace->jobs[job].type];
	int64_t vram = sim_offer(s, i)->vram_gb;

	return g->used + t->part <= 1 + SIM_SHARE_SLACK && (vram <= 0 || g->vram_gb + t->vram_gb <= vram);
}

/* The shared GPU of instance k job fits on, the first; -1 if none. */
static int shared_gpu(const struct sim *s, int k, int job)
{
	const struct sinst *i = &s->inst[k];

	for (int g = 0; g < sim_offer(s, i)->gpus; g++)
		if (i->parts[g].jobs > 0 && fits_on(s, i, &i->parts[g], job))
			return g;
	return -1;
}

int sim_fits(const struct sim *s, int k, int job, int room)
{
	if (sim_share_of(s, &s->trace->jobs[job]) >= 1)
		return sim_job_gpus(s, job) <= room;
	return room >= 1 || shared_gpu(s, k, job) >= 0;
}

int sim_share_room(const struct sim *s, int k)
{
	const struct sinst *i = &s->inst[k];

	if (!i->parts)
		return 0;
	for (int g = 0; g < sim_offer(s, i)->gpus; g++)
		if (i->parts[g].jobs > 0 && i->parts[g].used < 1 - SIM_SHARE_SLACK)
			return 1;
	return 0;
}

void sim_hold(struct sim *s, int k, int job)
{
	struct sinst *i = &s->inst[k];
	const struct sshare *t;
	int g;

	if (sim_share_of(s, &s->trace->jobs[job]) >= 1) {
		i->free_gpus -= sim_job_gpus(s, job);
		s->gpus_busy += sim_job_gpus(s, job);
		return;
	}
	/* A whole GPU becomes shared: the first slot not in use. */
	if ((g = shared_gpu(s, k, job)) < 0) {
		for (g = 0; i->parts[g].jobs > 0; g++)
			;
		i->free_gpus--;
		s->gpus_busy++;
	}
	t = &s->shares[s->trace->jobs[job].type];
	i->parts[g].used += t->part;
	i->parts[g].vram_gb += t->vram_gb;
	i->parts[g].jobs++;
	s->jobs[job].part = (unsigned)g;
}

void sim_release(struct sim *s, int k, int job)
{
	struct sinst *i = &s->inst[k];
	struct sgpu *g;
	const struct sshare *t;

	if (sim_share_of(s, &s->trace->jobs[job]) >= 1) {
		i->free_gpus += sim_job_gpus(s, job);
		s->gpus_busy -= sim_job_gpus(s, job);
		return;
	}
	g = &i->parts[s->jobs[job].part];
	t = &s->shares[s->trace->jobs[job].type];
	g->used -= t->part;
	g->vram_gb -= t->vram_gb;
	/* Its last job ended: whole again, with no float left over. */
	if (--g->jobs == 0) {
		*g = (struct sgpu){0};
		i->free_gpus++;
		s->gpus_busy--;
	}
}
