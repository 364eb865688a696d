/* libevent timers armed in milliseconds, the unit every deadline of ebb
 * is kept in. */
#ifndef EBB_TIMER_H
#define EBB_TIMER_H

#include <event2/event.h>
#include <stdint.h>

/* Arms (or re-arms) the timer ev to fire in ms; a negative ms is now. */
void timer_add_ms(struct event *ev, int64_t ms);

#endif
