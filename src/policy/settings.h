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

/* The idle timeout in force: the fixed one, or auto's choice from the gaps
 * between the latest submissions (idle_timeout_auto(), policy/idle.h;
 * gaps is reordered; with none, idle_timeout_min). why gets one line for
 * `ebb fleet`. */
int64_t plan_idle_timeout_ms(const struct plan_settings *s, int64_t *gaps, size_t n, char *why,
			     size_t why_size);

/* The lane's rank (0 is served first), or -1 for a lane not in [queue]
 * lanes. */
int plan_lane_rank(const struct plan_settings *s, const char *lane);
/* The lane's wait target: its [lane.NAME] wait_target, or the default. */
int64_t plan_wait_target_ms(const struct plan_settings *s, const char *lane);

#endif
