/* The rules of serve's alerts (docs/ALERTS.md): what each one looks at,
 * and which of its conditions hold now. A rule finds conditions, each with
 * its labels, a value, a one-line summary with the money at stake where
 * there is some, and, when the rule can tell, the time it began to hold;
 * alerts.c turns them into alerts that are pending, then fire once a
 * condition has held the rule's `for`, and resolve when it is gone.
 *
 * Every rule reads the state of now, never a history that grows: the live
 * instances, the queued jobs by class, the offers' statistics, the jobs
 * dead-lettered within a window (through their index), and the store
 * errors serve has seen. A rule also says the earliest time one of its
 * conditions may begin or end with nothing else happening (an idle
 * instance crossing its threshold, a window passing), so that serve wakes
 * for it rather than looking on a short period.
 *
 * EbbTeamBudget reads each team's spend this month (team_state.h, from
 * the ledger's daily sums) against its [team.NAME] monthly_budget: one
 * alert at team_budget_warn of it and one more at all of it, told apart
 * by their label threshold.
 *
 * EbbJobsUnplaceable reads the queued jobs by class against the offers of
 * the config and the live instances (policy/placeable.h): a job the
 * submit would refuse now, queued before the config changed or with
 * allow_unplaceable.
 */
#ifndef EBB_ALERT_RULES_H
#define EBB_ALERT_RULES_H

#include "common/config.h"
#include "serve/ledger.h"
#include "store/store.h"

enum alert_rule {
	RULE_INSTANCE_IDLE,
	RULE_QUEUE_WAITING,
	RULE_SPOT_SHARE_LOW,
	RULE_LAUNCHES_FAILING,
	RULE_JOBS_DEAD_LETTERED,
	RULE_WORKER_LOST,
	RULE_STORE_ERRORS,
	RULE_TEAM_BUDGET,
	RULE_JOBS_UNPLACEABLE,
	ALERT_NRULES
};

struct alert_rule_info {
	const char *name;     /* the alertname label: EbbInstanceIdle, ... */
	const char *severity; /* warning or critical */
	size_t on, for_ms;    /* offsets of its switch and `for` in struct alerts_conf */
};

extern const struct alert_rule_info alert_rules[ALERT_NRULES];

int alert_rule_on(const struct alerts_conf *c, enum alert_rule r);
int64_t alert_rule_for_ms(const struct alerts_conf *c, enum alert_rule r);

/* Labels besides alertname and severity; "" where one does not apply. */
struct alert_labels {
	char offer[CONF_NAME_MAX + 1];
	char market[16];
	char lane[CONF_NAME_MAX + 1];
	char instance[24];
	char team[CONF_NAME_MAX + 1];
	char threshold[8]; /* EbbTeamBudget: "80%", "100%" */
};

struct alert_cond {
	enum alert_rule rule;
	struct alert_labels labels;
	int64_t since_ms; /* when it began to hold, if the rule knows; 0: it does not */
	double value;
	char summary[300];
};

/* The store errors serve has seen (store_errors()), as a run: the first
 * and last of those less than [alerts] store_errors_window apart. */
struct store_errors_seen {
	int64_t n;
	int64_t first_ms, last_ms;
	char last[200]; /* the last one's reason */
};

/* What the rules read. */
struct alert_env {
	const struct config *cfg;
	struct store *store;
	const struct ledger *ledger; /* the prices */
	const struct store_errors_seen *errors;
};

struct alert_eval {
	struct alert_cond *v;
	int n, cap;
	/* The rules that could look (a store error stops the others: what
	 * they found before stands). */
	int done[ALERT_NRULES];
	/* The earliest time a condition may begin or end by itself; 0: none. */
	int64_t next_ms;
};

/* Every rule switched on, at now_ms, into out (zeroed first): 0, or -1 on
 * a store error or out of memory (the rules that ran are marked done). */
int alert_rules_eval(const struct alert_env *env, int64_t now_ms, struct alert_eval *out);
void alert_eval_free(struct alert_eval *e);

#endif
