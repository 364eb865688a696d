/* See classes.h. */
#include "policy/classes.h"

#include <string.h>

/* The name plan()'s reasons give the lanes the config does not name. */
static const char other_lanes[] = "(not in [queue] lanes)";

const struct type_conf *classes_type(const struct plan_settings *s, const char *type)
{
	for (size_t k = 0; k < s->ntypes; k++)
		if (strcmp(s->types[k].name, type) == 0)
			return &s->types[k];
	return NULL;
}

double classes_gpu_share(const struct plan_settings *s, const char *type)
{
	const struct type_conf *t = classes_type(s, type);

	return t ? t->gpu_share : 1;
}

static int64_t setup_of(const struct plan_settings *s, const int64_t *measured, size_t k)
{
	if (!s->types[k].handler[0])
		return 0;
	return measured && measured[k] >= 0 ? measured[k] : s->types[k].setup_ms;
}

int64_t classes_setup_ms(const struct plan_settings *s, const int64_t *measured, const char *type)
{
	const struct type_conf *t = classes_type(s, type);

	return t ? setup_of(s, measured, (size_t)(t - s->types)) : 0;
}

int64_t classes_longest_setup_ms(const struct plan_settings *s, const int64_t *measured)
{
	int64_t longest = 0;

	for (size_t k = 0; k < s->ntypes; k++)
		if (setup_of(s, measured, k) > longest)
			longest = setup_of(s, measured, k);
	return longest;
}

void classes_add_setup(struct plan_class *c, int64_t setup_ms)
{
	if ((double)setup_ms / 1000.0 > c->setup_s)
		c->setup_s = (double)setup_ms / 1000.0;
}

struct plan_class *classes_find(struct plan_class *classes, int *n, int cap, const struct plan_settings *s, int gpus,
				double gpu_share, int min_vram_gb, int lane_rank, int team, int64_t oldest_ms)
{
	struct plan_class *c;

	for (int k = 0; k < *n; k++) {
		c = &classes[k];
		if (c->gpus == gpus && c->gpu_share == gpu_share && c->min_vram_gb == min_vram_gb &&
		    c->lane_rank == lane_rank && c->team == team)
			return c;
	}
	if (*n >= cap)
		return NULL;
	c = &classes[(*n)++];
	memset(c, 0, sizeof *c);
	c->lane = lane_rank < s->nlanes ? s->lanes[lane_rank].name : other_lanes;
	c->gpus = gpus;
	c->gpu_share = gpu_share;
	c->min_vram_gb = min_vram_gb;
	c->lane_rank = lane_rank;
	c->team = team;
	c->oldest_ms = oldest_ms;
	c->wait_target_ms = lane_rank < s->nlanes ? s->lanes[lane_rank].wait_target_ms : s->default_wait_target_ms;
	return c;
}

void classes_add_queued(struct plan_class *c, int priority, int64_t jobs, int64_t items, double work_s,
			int64_t oldest_ms)
{
	if (jobs <= 0)
		return;
	if (c->top_jobs == 0 || priority > c->top_priority) {
		c->top_priority = priority;
		c->top_jobs = 0;
	}
	if (priority == c->top_priority)
		c->top_jobs += jobs;
	c->jobs += jobs;
	c->items += items;
	c->work_s += work_s;
	if (oldest_ms < c->oldest_ms)
		c->oldest_ms = oldest_ms;
}

void classes_running(struct plan_instance *p, const struct running_job *j)
{
	p->busy_since_ms = j->since_ms;
	p->busy_until_ms = j->until_ms;
	p->team = j->team;
	p->team_gpus = j->gpus > 1 ? j->gpus : 1;
	p->priority = j->priority;
	p->lane_rank = j->lane_rank;
}
