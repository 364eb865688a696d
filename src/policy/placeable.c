/* See placeable.h. */
#include "policy/placeable.h"

#include <stdio.h>

int placeable_holds(int gpus, int vram_gb, int need_gpus, int need_vram_gb)
{
	return gpus >= need_gpus && vram_gb >= need_vram_gb;
}

/* The offer with the most of what the job asks beyond every offer. */
static int most(const struct offer *offers, int noffers, int vram)
{
	int best = 0;

	for (int k = 1; k < noffers; k++) {
		if (vram ? offers[k].vram_gb > offers[best].vram_gb : offers[k].gpus > offers[best].gpus)
			best = k;
	}
	return best;
}

int placeable(const struct offer *offers, int noffers, const struct instance *workers, int nworkers, int gpus,
	      int min_vram_gb, char *why, size_t why_size)
{
	int enough_gpus = 0, enough_vram = 0, k;

	for (k = 0; k < noffers; k++) {
		if (placeable_holds(offers[k].gpus, offers[k].vram_gb, gpus, min_vram_gb))
			return 1;
		enough_gpus |= offers[k].gpus >= gpus;
		enough_vram |= offers[k].vram_gb >= min_vram_gb;
	}
	for (k = 0; k < nworkers; k++) {
		if (workers[k].state != INST_TERMINATED &&
		    placeable_holds(workers[k].gpus, workers[k].vram_gb, gpus, min_vram_gb))
			return 1;
	}
	if (noffers == 0) {
		snprintf(why, why_size, "no offer is configured, and no worker registered has %d GPUs of %d GB", gpus,
			 min_vram_gb);
	} else if (!enough_gpus) {
		k = most(offers, noffers, 0);
		snprintf(why, why_size, "no offer has %d GPUs: the most is %s with %d", gpus, offers[k].name,
			 offers[k].gpus);
	} else if (!enough_vram) {
		k = most(offers, noffers, 1);
		snprintf(why, why_size, "no offer has %d GB of GPU memory per GPU: the largest is %s with %d",
			 min_vram_gb, offers[k].name, offers[k].vram_gb);
	} else {
		snprintf(why, why_size, "no offer has %d GPUs of %d GB of GPU memory each: those with enough GPUs have "
			 "less memory, and those with enough memory fewer GPUs", gpus, min_vram_gb);
	}
	return 0;
}
