/* An offer: one kind of instance a provider can launch, with its prices,
 * and the estimates in force (declared in the config until ebb has
 * measured them). */
#ifndef EBB_OFFER_H
#define EBB_OFFER_H

#include <stdint.h>

#include "common/config.h"

enum market { MARKET_ONDEMAND, MARKET_SPOT, MARKET_COUNT };

struct offer {
	char name[CONF_NAME_MAX + 1];
	int gpus;
	int vram_gb;
	double price[MARKET_COUNT]; /* USD per hour; < 0: not sold on that market */
	int64_t boot_ms;            /* launch request to ready */
	double speed;               /* throughput relative to the reference GPU */
	double reclaims_per_hour;   /* on spot */
	enum billing billing;
	int64_t billing_minimum_ms;
	int max_instances;          /* 0: no limit of its own */
	/* Not launched on for now: its last launch on the market found no
	 * capacity, or the offer's launches fail and back off. */
	int resting[MARKET_COUNT];
	int64_t rest_until_ms; /* when the first of those rests ends; 0: none */
	/* The local provider's simulated faults on spot: reclaims per hour,
	 * and the share of launches refused for capacity. */
	double fault_reclaim_rate, fault_launch_failure_rate;
};

const char *market_name(enum market m);
int market_parse(const char *name); /* -1: unknown */

/* The index of the offer named name among offers[0..n), or -1: the one
 * lookup of an offer by name. */
int offer_index(const struct offer *offers, int n, const char *name);

/* Time billed for an instance that lived lifetime_ms, under the offer's
 * billing rule: rounded up to the second, minute or hour, and at least
 * the billing minimum. */
int64_t offer_billed_ms(const struct offer *o, int64_t lifetime_ms);
/* Cost in USD of billed_ms on market m. */
double offer_cost(const struct offer *o, enum market m, int64_t billed_ms);

/* The offers of the config, or the one default offer (1 GPU, price 0,
 * boot 0) when none is configured; returns how many (at most max). */
int offers_from_config(const struct config *cfg, struct offer *out, int max);

#endif
