/* What the output's files share (simout.c, and simout_teams.c for the
 * replays with teams): only they include it; simout.h is the output's
 * API. */
#ifndef EBB_SIMOUT_INTERNAL_H
#define EBB_SIMOUT_INTERNAL_H

#include <jansson.h>
#include <stdio.h>

#include "sim/simout.h"

/* Per team, when a replay has teams: a section after the table, and
 * "teams" and "fleet_cost_usd" into a result's object (-1 when out of
 * memory). */
void simout_teams_table(const struct sim_result *r, int n, FILE *out);
int simout_teams_json(const struct sim_result *x, json_t *o);

#endif
