/* Secrets: bearer tokens minted from the kernel's random source, and
 * compared without an early exit, so that timing does not reveal a
 * prefix. (common/rng.h is for repeatable jitter, never for these.) */
#ifndef EBB_SECRET_H
#define EBB_SECRET_H

#include <stddef.h>

#define SECRET_TOKEN_LEN 64 /* hex characters: 256 bits */

/* A new token into out (at least SECRET_TOKEN_LEN + 1 bytes): 0, or -1
 * when the kernel gives no randomness. */
int secret_token(char *out, size_t size);
/* Are a and b the same string? In time that depends on their lengths only. */
int secret_equal(const char *a, const char *b);

#endif
