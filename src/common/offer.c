/* Offers: billing and the catalogue from the config (see offer.h). */
#include "common/offer.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *market_name(enum market m) { return m == MARKET_SPOT ? "spot" : "on-demand"; }

int market_parse(const char *name)
{
	if (strcmp(name, "spot") == 0)
		return MARKET_SPOT;
	if (strcmp(name, "on-demand") == 0 || strcmp(name, "ondemand") == 0)
		return MARKET_ONDEMAND;
	return -1;
}

int offer_index(const struct offer *offers, int n, const char *name)
{
	for (int k = 0; k < n; k++) {
		if (strcmp(offers[k].name, name) == 0)
			return k;
	}
	return -1;
}

int64_t offer_billed_ms(const struct offer *o, int64_t lifetime_ms)
{
	static const int64_t unit_ms[] = {[BILL_PER_SECOND] = 1000, [BILL_PER_MINUTE] = 60000,
					  [BILL_PER_HOUR] = 3600000};
	int64_t unit = unit_ms[o->billing], billed;

	if (lifetime_ms < 0)
		lifetime_ms = 0;
	billed = (lifetime_ms + unit - 1) / unit * unit;
	return billed < o->billing_minimum_ms ? o->billing_minimum_ms : billed;
}

double offer_cost(const struct offer *o, enum market m, int64_t billed_ms)
{
	double price = o->price[m] > 0 ? o->price[m] : 0;
	return price * (double)billed_ms / 3600000.0;
}

int offers_from_config(const struct config *cfg, struct offer *out, int max)
{
	int n = 0;

	if (cfg->noffers == 0 && max > 0) {
		memset(out, 0, sizeof *out);
		snprintf(out->name, sizeof out->name, "default");
		out->gpus = 1;
		out->vram_gb = 4096;
		out->price[MARKET_ONDEMAND] = 0;
		out->price[MARKET_SPOT] = -1;
		out->speed = 1;
		out->billing = BILL_PER_SECOND;
		return 1;
	}
	for (size_t k = 0; k < cfg->noffers && n < max; k++) {
		const struct offer_conf *c = &cfg->offers[k];
		struct offer *o = &out[n++];

		memset(o, 0, sizeof *o);
		snprintf(o->name, sizeof o->name, "%s", c->name);
		o->gpus = (int)c->gpus;
		o->vram_gb = (int)c->vram_gb;
		o->price[MARKET_ONDEMAND] = c->price_ondemand;
		o->price[MARKET_SPOT] = c->price_spot;
		o->boot_ms = c->boot_ms;
		o->speed = c->speed;
		/* reliability is P(no reclaim in an hour) = exp(-rate). */
		o->reclaims_per_hour = c->reliability > 0 ? -log(c->reliability) : 100;
		o->billing = (enum billing)c->billing;
		o->billing_minimum_ms = c->billing_minimum_ms;
		o->max_instances = (int)c->max_instances;
		o->fault_reclaim_rate = c->spot_reclaim_rate;
		o->fault_launch_failure_rate = c->launch_failure_rate;
	}
	return n;
}
