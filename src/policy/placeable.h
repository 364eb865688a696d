/* Refuse what can never run: can an offer of the config, or a worker
 * registered now, hold a job of so many GPUs and so much GPU memory per
 * GPU? The rule the plan uses to match an offer to a job (plan_fits),
 * asked of everything that could run it. Pure, for serve's submit and
 * anyone else who decides. */
#ifndef EBB_PLACEABLE_H
#define EBB_PLACEABLE_H

#include <stddef.h>

#include "common/instance.h"
#include "common/offer.h"

/* Does a machine of gpus GPUs of vram_gb each hold a job of need_gpus of
 * need_vram_gb each? The one rule, the plan's too (plan_fits). */
int placeable_holds(int gpus, int vram_gb, int need_gpus, int need_vram_gb);

/* 1 when one of offers[0..noffers) or of the live workers[0..nworkers)
 * (terminated ones do not count) has gpus GPUs of min_vram_gb each; else
 * 0 with why, e.g. "no offer has 80 GB of GPU memory per GPU: the
 * largest is g5 with 24". */
int placeable(const struct offer *offers, int noffers, const struct instance *workers, int nworkers, int gpus,
	      int min_vram_gb, char *why, size_t why_size);

#endif
