/* The warm-pool schedule: how many ready instances to keep, by weekday and
 * hour (UTC). Written as entries separated by ';', each "DAYS HOURS COUNT":
 *   mon-fri 08-18 2; sat,sun 10-14 1
 * DAYS: '*', a day (mon..sun), a range (mon-fri) or a list of those.
 * HOURS: '*' or a range HH-HH (end excluded, 0..24). The first matching
 * entry wins; outside every entry the floor is 0. */
#ifndef EBB_WARM_H
#define EBB_WARM_H

#include <stddef.h>
#include <stdint.h>

#define WARM_MAX_ENTRIES 16

struct warm_entry {
	unsigned days;  /* bit 0 = Monday .. bit 6 = Sunday */
	int from_hour;  /* inclusive */
	int to_hour;    /* exclusive */
	int count;
};

struct warm_schedule {
	struct warm_entry entries[WARM_MAX_ENTRIES];
	int n;
};

/* 0, or -1 with what was expected in err. */
int warm_parse(const char *text, struct warm_schedule *out, char *err, size_t errsize);
/* The floor in force at now_ms (Unix ms, UTC). */
int warm_floor(const struct warm_schedule *w, int64_t now_ms);
/* The next time after now_ms at which the floor may change; 0 if never. */
int64_t warm_next_change(const struct warm_schedule *w, int64_t now_ms);

#endif
