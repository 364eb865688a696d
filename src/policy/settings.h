/* plan()'s settings from the config: the one place the [scaler] keys and
 * the lanes' wait targets are read, for serve and the simulator alike (a
 * key read by one and forgotten by the other would make the simulator
 * differ from serve unseen), and what both work out from the settings. */
#ifndef EBB_SETTINGS_H
#define EBB_SETTINGS_H

#include <stddef.h>
#include <stdint.h>

#include "common/config.h"
#include "policy/plan.h"

/* Every [scaler] key, and the wait target of each of [queue] lanes. */
void plan_settings_from_config(const struct config *cfg, struct plan_settings *out);

/* The idle timeout in force for each of the offers, into out_ms: the
 * fixed one, or auto's choice from the gaps between the latest
 * submissions, the offer's boot and the strictest wait target
 * (idle_timeout_auto(), policy/idle.h; with no gap, idle_timeout_min).
 * And the surplus timeout, into surplus_ms unless NULL: the fixed one
 * (0: off), or auto's choice the same way over the time to the second
 * next submission (the sum of two gaps in a row), between
 * idle_timeout_min and the offer's idle timeout: while one idle instance
 * waits for the next job, another is wanted only by the one after it.
 * gaps, in the order they came, is reordered. why, unless NULL, gets one
 * line per offer for `ebb fleet`. */
#define PLAN_IDLE_WHY 800
/* How many of the latest gaps auto looks at: serve reads that many from
 * its store, a replay keeps that many as jobs arrive. */
#define PLAN_IDLE_GAPS 1000
/* setup_ms: the longest resident handler setup (classes_longest_setup_ms()),
 * added to each offer's boot. */
void plan_idle_timeouts(const struct plan_settings *s, const struct offer *offers, int noffers, int64_t setup_ms,
			int64_t *gaps, size_t n, int64_t *out_ms, int64_t *surplus_ms, char (*why)[PLAN_IDLE_WHY]);

/* The lane's rank (0 is served first), or -1 for a lane not in [queue]
 * lanes. */
int plan_lane_rank(const struct plan_settings *s, const char *lane);

#endif
