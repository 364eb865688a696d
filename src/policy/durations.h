/* What ebb knows of a job's run time before it runs, for serve's view
 * (serve/view.c) and the simulator's replay of ebb (sim/known.c) alike:
 * the est_s it was submitted with; else the median run time of the newest
 * DURATIONS_PER_TYPE finished jobs of its type among the newest
 * DURATIONS_HISTORY finished jobs; else [scaler] default_est. serve fills
 * one from the store before each plan, the simulator keeps one through
 * the replay and adds each job as it ends: one function answers both, so
 * the replay's ebb knows what serve's would. */
#ifndef EBB_DURATIONS_H
#define EBB_DURATIONS_H

#include <stdint.h>

#define DURATIONS_HISTORY 1000
#define DURATIONS_PER_TYPE 64

struct durations;

/* NULL when out of memory. */
struct durations *durations_new(void);
void durations_free(struct durations *d);

/* A job of `type` (a number >= 0 that the caller gives each type)
 * succeeded after running run_ms: the newest of the history, which is fed
 * oldest first. Returns the other type whose estimate this may have
 * changed, the one whose job left the history (-1: none, or `type`
 * itself); -2 when out of memory, d unchanged. */
int durations_add(struct durations *d, int type, int64_t run_ms);

/* The run time to expect of a job of `type` (-1: a type no job in the
 * history had) submitted with est_ms (0: none): est_ms; else the median
 * of its type, the upper of the two middle runs for an even count; else
 * default_ms. */
int64_t durations_estimate_ms(const struct durations *d, int type, int64_t est_ms, int64_t default_ms);

#endif
