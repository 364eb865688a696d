/* An offer: one kind of instance a provider can launch, with its price. */
#ifndef EBB_OFFER_H
#define EBB_OFFER_H

#include <stdint.h>

#include "config.h"

enum market { MARKET_ONDEMAND, MARKET_SPOT };

struct offer {
	char name[CONF_NAME_MAX + 1];
	int gpus;
	int vram_gb;
	double price_ondemand; /* USD per hour */
	int64_t boot_ms;       /* launch request to ready, as expected */
	int max_instances;     /* 0: no limit of its own */
};

const char *market_name(enum market m);

#endif
