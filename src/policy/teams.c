/* See teams.h. */
#include "policy/teams.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

static int64_t whole_or(double v, int64_t absent)
{
	return v == CONF_ABSENT ? absent : (int64_t)v;
}

int teams_from_config(const struct config *cfg, struct plan_team *out)
{
	const struct team_conf *def = config_team(cfg, CONF_DEFAULT_TEAM);
	int n = 1;

	if (cfg->nteams == 0)
		return 0;
	memset(out, 0, (CONF_MAX_TEAMS + 1) * sizeof *out);
	snprintf(out[0].name, sizeof out[0].name, "%s", CONF_DEFAULT_TEAM);
	out[0].borrowing_limit_gpus = -1;
	out[0].lending_limit_gpus = -1;
	out[0].weight = 1;
	out[0].monthly_budget = -1;
	for (size_t i = 0; i < cfg->nteams && n <= CONF_MAX_TEAMS; i++) {
		const struct team_conf *t = &cfg->teams[i];
		struct plan_team *p = t == def ? &out[0] : &out[n++];
		snprintf(p->name, sizeof p->name, "%s", t->name);
		p->quota_gpus = t->quota_gpus;
		p->borrowing_limit_gpus = whole_or(t->borrowing_limit_gpus, -1);
		p->lending_limit_gpus = whole_or(t->lending_limit_gpus, -1);
		p->weight = t->weight;
		p->monthly_budget = t->monthly_budget == CONF_ABSENT ? -1 : t->monthly_budget;
		p->preempt_within = t->preempt_within;
	}
	return n;
}

int teams_index(const struct plan_team *teams, int n, const char *name)
{
	for (int k = 1; k < n; k++) {
		if (strcmp(teams[k].name, name) == 0)
			return k;
	}
	return 0;
}

static int64_t min64(int64_t a, int64_t b) { return a < b ? a : b; }

void teams_share(const struct plan_team *teams, int n, int64_t max_gpus, struct team_share *s)
{
	int64_t pool = max_gpus, cap[CONF_MAX_TEAMS + 1];
	int active = 0;

	for (int k = 0; k < n; k++)
		pool -= teams[k].quota_gpus;
	if (pool < 0)
		pool = 0; /* config_check refuses it; a view built by hand may not */
	for (int k = 0; k < n; k++) {
		const struct plan_team *t = &teams[k];
		int64_t want = s[k].used_gpus + s[k].queued_gpus, owed = min64(want, t->quota_gpus);
		int64_t unowed = t->quota_gpus - owed;
		pool += t->lending_limit_gpus < 0 ? unowed : min64(unowed, t->lending_limit_gpus);
		cap[k] = want - owed;
		if (t->borrowing_limit_gpus >= 0)
			cap[k] = min64(cap[k], t->borrowing_limit_gpus);
		s[k].allowed_gpus = owed;
		s[k].borrowed_gpus = 0;
		active += cap[k] > 0;
	}
	/* Rounds of water-filling: each team still below its cap gets its
	 * weight's part of the pool, whole GPUs down; a round either fills a
	 * team to its cap or leaves fewer GPUs than can be split whole. */
	while (pool > 0 && active > 0) {
		double weights = 0;
		int64_t given = 0;
		for (int k = 0; k < n; k++)
			weights += s[k].borrowed_gpus < cap[k] ? teams[k].weight : 0;
		for (int k = 0; k < n; k++) {
			int64_t g;
			if (s[k].borrowed_gpus >= cap[k])
				continue;
			g = min64((int64_t)floor((double)pool * teams[k].weight / weights), cap[k] - s[k].borrowed_gpus);
			s[k].borrowed_gpus += g;
			given += g;
			active -= s[k].borrowed_gpus == cap[k];
		}
		pool -= given;
		if (given > 0)
			continue;
		/* Fewer GPUs than shares: one to the team furthest below its
		 * weighted share, and round again. */
		int best = -1;
		for (int k = 0; k < n; k++) {
			if (s[k].borrowed_gpus < cap[k] &&
			    (best < 0 || (double)s[k].borrowed_gpus / teams[k].weight <
						 (double)s[best].borrowed_gpus / teams[best].weight))
				best = k;
		}
		s[best].borrowed_gpus++;
		active -= s[best].borrowed_gpus == cap[best];
		pool--;
	}
	for (int k = 0; k < n; k++)
		s[k].allowed_gpus += s[k].borrowed_gpus;
}

uint64_t teams_over_budget(const struct plan_team *teams, int n, const double *spend)
{
	uint64_t over = 0;

	for (int t = 0; t < n; t++) {
		if (teams[t].monthly_budget >= 0 && spend[t] >= teams[t].monthly_budget)
			over |= (uint64_t)1 << t;
	}
	return over;
}

int64_t teams_month_start_ms(int64_t now_ms, int ahead)
{
	time_t now = (time_t)(now_ms / 1000);
	struct tm tm;

	gmtime_r(&now, &tm);
	tm.tm_mon += ahead; /* timegm() carries it into the year */
	tm.tm_mday = 1;
	tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
	return (int64_t)timegm(&tm) * 1000;
}
