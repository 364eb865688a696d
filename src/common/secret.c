/* See secret.h. */
#include "common/secret.h"

#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>

int secret_token(char *out, size_t size)
{
	unsigned char bytes[SECRET_TOKEN_LEN / 2];
	size_t got = 0;

	if (size < SECRET_TOKEN_LEN + 1)
		return -1;
	while (got < sizeof bytes) {
		ssize_t n = getrandom(bytes + got, sizeof bytes - got, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
	}
	for (size_t k = 0; k < sizeof bytes; k++)
		snprintf(out + 2 * k, 3, "%02x", bytes[k]);
	return 0;
}

int secret_equal(const char *a, const char *b)
{
	size_t na = strlen(a), nb = strlen(b);
	unsigned char diff = na != nb;

	for (size_t i = 0; i < na && i < nb; i++)
		diff |= (unsigned char)(a[i] ^ b[i]);
	return diff == 0;
}
