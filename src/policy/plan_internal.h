/* Inside plan(): what its files share (plan.c: scaling; plan_teams.c:
 * teams' shares and preemption). Only they include it; plan.h is plan()'s
 * API, and its callers have no use for this. */
#ifndef EBB_PLAN_INTERNAL_H
#define EBB_PLAN_INTERNAL_H

#include "policy/placeable.h"
#include "policy/plan.h"
#include "policy/teams.h"

/* An idle instance, by how long it has been idle. */
struct idle_entry {
	int64_t since;
	int k;
};

struct planner {
	const struct plan_view *v;
	const struct plan_settings *s;
	struct plan_result *out;
	char *taken;      /* per instance: already decided on or matched to work */
	int64_t count;    /* instances that cost money (all but terminated) */
	int64_t serving;  /* of those, the ones that take jobs */
	int64_t gpus;
	double spend;     /* USD per hour */
	/* GPUs and spend of the serving ones: a drained instance is on its
	 * way out, so draining one more does not bring the fleet under a
	 * limit any sooner. */
	int64_t serving_gpus;
	double serving_spend;
	/* Found by tally(), so that the later steps need not walk the fleet
	 * again (the simulator calls plan() millions of times): */
	struct idle_entry *idle; /* the idle instances */
	int nidle;
	int *boots;       /* the requested and booting ones */
	int nboots;
	int ndraining;
	int warm_floor;   /* the warm pool's floor now */
	int *per_offer;   /* instances per offer */
	int *spot_per_offer;
	int *kinds; /* tally()'s counts: KINDS per offer */
	char *fits; /* per offer: does it fit the class scale_up() looks at */
	int64_t spot;     /* spot instances in all */
	/* With teams (NULL without): their shares and what each may still
	 * take. The team whose work is launched for (-1: none, the warm
	 * pool) and the GPUs one of its jobs asks for. */
	struct plan_teams *t;
	int team;
	int team_gpus;
};

/* On plan()'s stack only when there are teams: the simulator's plans
 * without them do not zero it a million times. */
struct plan_teams {
	struct team_share shares[CONF_MAX_TEAMS + 1];
	/* teams_share()'s allowed, less what the team holds and what this
	 * plan gave it. */
	int64_t room[CONF_MAX_TEAMS + 1];
};

/* A team index from the view, within the settings' teams. */
static inline int plan_team_of(const struct planner *p, int team)
{
	return team > 0 && team < p->s->nteams ? team : 0;
}

static inline void plan_wake_at(struct planner *p, int64_t at)
{
	if (at > p->v->now_ms && (p->out->next_ms == 0 || at < p->out->next_ms))
		p->out->next_ms = at;
}

/* Does offer o fit a job of class c? */
static inline int plan_fits(const struct offer *o, const struct plan_class *c)
{
	return placeable_holds(o->gpus, o->vram_gb, c->gpus, c->min_vram_gb);
}

/* The action added, or NULL when the result is full (then plan() looks
 * again a moment later). */
struct action *plan_add(struct planner *p, enum action_kind kind, int offer, int count, int64_t instance,
			const char *fmt, ...) __attribute__((format(printf, 6, 7)));

/* plan_teams.c: each team's room now, before any launch... */
void plan_share_teams(struct planner *p);
/* ...and, after the launches, the preemptions a binding limit calls for. */
void plan_preempt(struct planner *p);

#endif
