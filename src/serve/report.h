/* The cost report: the ledger's segments added up per team, offer or job
 * type (docs/COST.md defines every figure), and the offers' measured
 * samples added up over both markets. Pure aggregation: the caller feeds
 * it rows from the store and prices for the segments still open. */
#ifndef EBB_REPORT_H
#define EBB_REPORT_H

#include <jansson.h>
#include <stdint.h>

#include "store/store.h"

/* MARKET: by offer and market (an offer's on-demand and spot time apart). */
enum report_by { REPORT_BY_OFFER, REPORT_BY_TEAM, REPORT_BY_TYPE, REPORT_BY_MARKET, REPORT_BY_COUNT };

/* The row of instance time no job used, in a report by type. */
#define REPORT_NOT_A_JOB "(idle)"
/* In a report by team, the row of the time no job used of instances
 * launched for no team's work (the warm pool, workers started by hand):
 * the chargeback's shared line. */
#define REPORT_SHARED "(shared)"

/* Where instance time went. BUSY is a job's run; the others are "not
 * busy": boot (launch to registration), idle, and the billing remainder
 * (time billed past termination: rounding up and the billing minimum). */
enum report_kind { RK_BUSY, RK_BOOT, RK_IDLE, RK_BILLING, RK_COUNT };

struct report_group {
	char *name;
	enum market market; /* by market: the group's */
	double cost[RK_COUNT]; /* USD */
	double ms[RK_COUNT];   /* instance-milliseconds, a segment's by its share */
	double gpu_ms[RK_COUNT];
	double spot_gpu_ms; /* of all kinds, on the spot market */
	int64_t items, items_lost, jobs, instances, reclaims;
};

struct report_map; /* job and instance bookkeeping, in report.c */

struct report {
	enum report_by by;
	int64_t since_ms, now_ms;
	int64_t until_ms; /* segments count up to here; 0: now (report_init) */
	/* Only this team's rows (NULL: all): its jobs' runs, and the time no
	 * job used of the instances launched for its work (chargeback.h). */
	const char *team;
	struct report_group *groups;
	int ngroups;
	struct report_group total;
	struct report_map *map;
};

int report_by_parse(const char *name); /* -1: unknown */

void report_init(struct report *r, enum report_by by, int64_t since_ms, int64_t now_ms);
/* "2026-11": the month's first and next month's first millisecond (UTC),
 * for since_ms and until_ms; -1 when month is not YYYY-MM. */
int report_month(const char *month, int64_t *since_ms, int64_t *until_ms);
/* One ledger row. A segment that started before since counts from since
 * (its cost pro rata); an open one (end 0) counts up to now at
 * usd_per_ms. 0, or -1 when out of memory. */
int report_add(struct report *r, const struct ledger_row *row, double usd_per_ms);
/* Items and work lost of the jobs seen, once each, into their groups;
 * groups sorted, dearest first. Call once, after the last report_add. */
void report_finish(struct report *r);
/* The report; by team, with its chargeback (chargeback.h): each team's
 * busy cost, the not-busy cost of the instances launched for it and
 * total, and the shared line, in cents, adding up to the fleet's total. */
json_t *report_to_json(const struct report *r);
void report_free(struct report *r);

/* An offer's samples over both markets, and the spot market's own. */
struct offer_samples {
	double speed_sum;
	int64_t speed_n, runs, items, run_ms, boots, boot_ms;
	int64_t alive_ms[MARKET_COUNT], reclaims[MARKET_COUNT];
	int64_t launches[MARKET_COUNT], launch_failures[MARKET_COUNT];
};

/* Adds one store row (one offer, one market) to s. */
void offer_samples_add(struct offer_samples *s, const struct offer_stat *st);

#endif
