/* See settings.h. */
#include "policy/settings.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "policy/idle.h"

void plan_settings_from_config(const struct config *cfg, struct plan_settings *out)
{
	/* Zeroed whole, padding too: settings compare by their bytes. */
	memset(out, 0, sizeof *out);
	out->interval_ms = cfg->scaler_interval_ms;
	out->max_instances = cfg->max_instances;
	out->max_gpus = cfg->max_gpus;
	out->max_spend_per_hour = cfg->max_spend_per_hour;
	out->idle_timeout = (struct plan_idle_timeout){
		.ms = cfg->idle_timeout_ms,
		.min_ms = cfg->idle_timeout_min_ms,
		.max_ms = cfg->idle_timeout_max_ms,
	};
	out->idle_surplus_ms = cfg->idle_surplus_ms;
	out->arrival_window_ms = cfg->arrival_window_ms;
	out->idle_decay = (int)cfg->idle_decay;
	out->decay_t1_ms = cfg->decay_t1_ms;
	out->decay_t2_ms = cfg->decay_t2_ms;
	out->boot_timeout_ms = cfg->boot_timeout_ms;
	out->warm = cfg->warm_schedule;
	out->default_est_ms = cfg->default_est_ms;
	out->max_price = cfg->max_price;
	out->min_reliability = cfg->min_reliability;
	out->max_share_per_offer = cfg->max_share_per_offer;
	out->use_spot = (int)cfg->use_spot;
	out->checkpoint_every_ms = cfg->checkpoint_every_ms;
	out->capacity_rest_ms = cfg->capacity_rest_ms;
	for (int k = 0; k < cfg->nlanes; k++) {
		snprintf(out->lanes[k].name, sizeof out->lanes[k].name, "%s", cfg->lane_names[k]);
		out->lanes[k].wait_target_ms = config_wait_target_ms(cfg, cfg->lane_names[k]);
	}
	out->nlanes = cfg->nlanes;
	out->default_wait_target_ms = config_wait_target_ms(cfg, NULL);
	out->nteams = teams_from_config(cfg, out->teams);
	out->types = cfg->types;
	out->ntypes = cfg->ntypes;
	out->preempt_min_runtime_ms = cfg->preempt_min_runtime_ms;
	out->preempt_backoff_ms = cfg->preempt_backoff_ms;
}

/* An instance released may be wanted by any lane's next job: the lane a
 * boot hurts most is the one with the shortest wait target. */
static int64_t strictest_wait_target_ms(const struct plan_settings *s)
{
	int64_t t = s->default_wait_target_ms;

	for (int k = 0; k < s->nlanes; k++) {
		if (s->lanes[k].wait_target_ms < t)
			t = s->lanes[k].wait_target_ms;
	}
	return t;
}

void plan_idle_timeouts(const struct plan_settings *s, const struct offer *offers, int noffers, int64_t setup_ms,
			int64_t *gaps, size_t n, int64_t *out_ms, int64_t *surplus_ms, char (*why)[PLAN_IDLE_WHY])
{
	const struct plan_idle_timeout *t = &s->idle_timeout;
	int auto_surplus = surplus_ms && s->idle_surplus_ms == CONF_AUTO;
	int64_t *pairs = NULL, wait_target_ms = strictest_wait_target_ms(s);
	size_t npairs = 0;
	char scratch[PLAN_IDLE_WHY], surplus_why[PLAN_IDLE_WHY];

	/* Before the gaps are sorted: two in a row. With no memory, none,
	 * and the surplus timeout is the least. */
	if (auto_surplus && n > 1 && (pairs = mem_alloc((n - 1) * sizeof *pairs))) {
		for (size_t i = 0; i + 1 < n; i++)
			pairs[npairs++] = gaps[i] + gaps[i + 1];
	}
	for (int k = 0; k < noffers; k++) {
		char *line = why ? why[k] : scratch;
		size_t used;

		if (t->ms != CONF_AUTO) {
			snprintf(line, PLAN_IDLE_WHY, "fixed: [scaler] idle_timeout");
			out_ms[k] = t->ms;
		} else {
			out_ms[k] = idle_timeout_auto(gaps, n, offers[k].boot_ms, setup_ms, wait_target_ms, t->min_ms, t->max_ms,
						      line, PLAN_IDLE_WHY);
		}
		if (!surplus_ms)
			continue;
		if (!auto_surplus) {
			surplus_ms[k] = s->idle_surplus_ms;
			continue;
		}
		surplus_ms[k] = idle_timeout_auto(pairs, npairs, offers[k].boot_ms, setup_ms, wait_target_ms,
						  t->min_ms < out_ms[k] ? t->min_ms : out_ms[k], out_ms[k], surplus_why,
						  sizeof surplus_why);
		used = strlen(line);
		snprintf(line + used, PLAN_IDLE_WHY - used, "; the other idle ones, wanted from the second next"
			 " submission on (the gaps below are two in a row): %s", surplus_why);
	}
	free(pairs);
}

int plan_lane_rank(const struct plan_settings *s, const char *lane)
{
	for (int k = 0; k < s->nlanes; k++) {
		if (strcmp(s->lanes[k].name, lane) == 0)
			return k;
	}
	return -1;
}
