/* The rules that turn queued jobs and live instances into plan()'s view
 * (plan.h), for serve (serve/view.c, from its store) and the simulator
 * (sim/ebb.c, from its replay) alike: each gathers its own rows and hands
 * them here, so that the two views cannot drift apart. */
#ifndef EBB_CLASSES_H
#define EBB_CLASSES_H

#include <stdint.h>

#include "policy/plan.h"

/* The [type.NAME] section of type, NULL: none. */
const struct type_conf *classes_type(const struct plan_settings *s, const char *type);
/* The part of one GPU a job of type takes: its [type.NAME] gpu_share, 1
 * for a type without a section. */
double classes_gpu_share(const struct plan_settings *s, const char *type);

/* How long a resident handler of type takes to be ready: measured[t]
 * where a worker measured the type's (t its index among s->types; -1
 * or NULL: none), else its [type.NAME] setup; 0 for a type without a
 * handler. */
int64_t classes_setup_ms(const struct plan_settings *s, const int64_t *measured, const char *type);
/* The longest of them over the types: what an idle instance's release
 * may cost again (policy/idle.h). */
int64_t classes_longest_setup_ms(const struct plan_settings *s, const int64_t *measured);
/* Queued jobs of a type whose handler takes setup_ms join class c. */
void classes_add_setup(struct plan_class *c, int64_t setup_ms);

/* The class of queued jobs of (GPUs, GPU share, VRAM, lane rank, team) among
 * classes[0..*n), added when new if there is room (*n < cap): then empty,
 * its oldest job submitted at oldest_ms. NULL: none and no room (the
 * caller grows the array and asks again). lane_rank is lease_lane_rank()'s
 * (policy/lease_order.h). Its wait target is its lane's [lane.NAME]
 * wait_target, or the default one (5 min) for the lanes not in the
 * config, which are one class, after the others. */
struct plan_class *classes_find(struct plan_class *classes, int *n, int cap, const struct plan_settings *s, int gpus,
				double gpu_share, int min_vram_gb, int lane_rank, int team, int64_t oldest_ms);

/* Queued jobs of one priority join class c: jobs of them (items in all),
 * work_s of expected reference work, the oldest submitted at oldest_ms.
 * The class keeps its highest priority and how many jobs have it. */
void classes_add_queued(struct plan_class *c, int priority, int64_t jobs, int64_t items, double work_s,
			int64_t oldest_ms);

/* What an instance's job (the one it shows: serve's instance record, the
 * replay's newest) tells plan(): when it started and is expected to end,
 * its team (index into the settings' teams), GPUs, priority and lane
 * rank. */
struct running_job {
	int64_t since_ms, until_ms;
	int team, gpus, priority, lane_rank;
};
void classes_running(struct plan_instance *p, const struct running_job *j);

#endif
