/* See team_state.h. */
#include "serve/team_state.h"

#include <limits.h>
#include <stdlib.h>
#include <string.h>

static int64_t job_gpus(int gpus) { return gpus > 1 ? gpus : 1; }

static int add_leased(void *arg, const struct job *job)
{
	struct team_state *ts = arg;

	ts->shares[teams_index(ts->teams, ts->n, job->team)].used_gpus += job_gpus(job->gpus);
	return 0;
}

static int add_queued(void *arg, const struct demand_row *r)
{
	struct team_state *ts = arg;
	char **names;
	int64_t *rooms;

	ts->shares[teams_index(ts->teams, ts->n, r->team)].queued_gpus += r->jobs * job_gpus(r->gpus);
	for (int k = 0; k < ts->nnames; k++) {
		if (strcmp(ts->names[k], r->team) == 0)
			return 0;
	}
	if (!(names = realloc(ts->names, (size_t)(ts->nnames + 1) * sizeof *names)))
		return TEAM_STATE_NOMEM;
	ts->names = names;
	if (!(rooms = realloc(ts->rooms, (size_t)(ts->nnames + 1) * sizeof *rooms)))
		return TEAM_STATE_NOMEM;
	ts->rooms = rooms;
	if (!(ts->names[ts->nnames] = strdup(r->team)))
		return TEAM_STATE_NOMEM;
	ts->nnames++;
	return 0;
}

int team_state_read(struct team_state *ts, struct store *st, const struct config *cfg)
{
	struct job_filter leased = {.state = JOB_LEASED, .limit = INT_MAX};
	int rc;

	memset(ts, 0, sizeof *ts);
	if ((ts->n = teams_from_config(cfg, ts->teams)) == 0)
		return 0;
	if ((rc = store_job_list(st, &leased, add_leased, ts)) != 0 || (rc = store_demand(st, add_queued, ts)) != 0)
		return rc == TEAM_STATE_NOMEM ? rc : -1;
	teams_share(ts->teams, ts->n, cfg->max_gpus, ts->shares);
	for (int k = 0; k < ts->nnames; k++) {
		const struct team_share *s = &ts->shares[teams_index(ts->teams, ts->n, ts->names[k])];
		ts->rooms[k] = s->allowed_gpus - s->used_gpus;
	}
	return 0;
}

void team_state_free(struct team_state *ts)
{
	for (int k = 0; k < ts->nnames; k++)
		free(ts->names[k]);
	free(ts->names);
	free(ts->rooms);
	memset(ts, 0, sizeof *ts);
}
