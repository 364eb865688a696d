/* The jobs' logs in the store: the lines a worker ships, kept once each
 * (a batch sent again stores only what was not stored yet), within
 * [queue] log_max per attempt (its head whole, then a rolling tail, the
 * bytes between counted as trimmed), and swept in slices past
 * [queue] log_retention and [queue] logs_max_total (docs/API.md, Logs). */
#ifndef EBB_JOBLOG_H
#define EBB_JOBLOG_H

#include <jansson.h>
#include <stdint.h>

#include "common/config.h"
#include "store/store.h"

/* The most lines one GET replies with. */
#define JOBLOG_READ_MAX 1000

/* Stores the lines (an array of {"at", "stream", "text"}, checked) of
 * the attempt numbered from seq on, those past what it holds; dropped is
 * the worker's count of bytes it dropped so far. *next: the seq it wants
 * next. 0, or -1 on a store error. */
int joblog_append(struct store *st, const struct config *cfg, int64_t now_ms, int64_t job, int attempt,
		  int64_t seq, json_t *lines, int64_t dropped, int64_t *next);

/* The attempt's lines past after (the last tail of them, if tail > 0),
 * written as the members "lines", "next" and "dropped" of o: how many,
 * or -1 on a store error. */
int joblog_read(struct store *st, struct jsonout *o, int64_t job, int attempt, int64_t after, int tail);

/* One slice of the sweep: 1 when there is more to do at once, 0 when
 * none, -1 on a store error. */
int joblog_sweep(struct store *st, const struct config *cfg, int64_t now_ms);

#endif
