/* FNV-1a, 64 bits: the hash of short texts that ebb keys things by (an
 * idempotency key's body, a count's key, a lease's offer, a trace's names,
 * an alert's labels as Prometheus fingerprints them). The one copy: a
 * second would be free to differ. Not for anything an attacker may aim
 * at: it is not keyed. */
#ifndef EBB_FNV_H
#define EBB_FNV_H

#include <stdint.h>

#define FNV1A_START 0xcbf29ce484222325ULL

static inline uint64_t fnv1a_byte(uint64_t h, unsigned char byte) { return (h ^ byte) * 0x100000001b3ULL; }

/* h with the bytes of text added. */
static inline uint64_t fnv1a(uint64_t h, const char *text)
{
	for (; *text; text++)
		h = fnv1a_byte(h, (unsigned char)*text);
	return h;
}

#endif
