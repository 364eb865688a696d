/* Config files, read by the INI reader with ebb's key tables
 * (common/config.c), with every store and provider kind's sections. A
 * file is refused with a line and a reason, or loaded into a config that
 * passes its own checks and writes out (`ebb config`) as a file that
 * loads back to the same config; but for secrets, which `ebb config`
 * writes as "(hidden)". */
#include "cli/cmd.h"
#include "common/config.h"

#include "fuzz.h"

/* cfg as `ebb config` writes it, to free. */
static char *written(const struct config *cfg, size_t *len)
{
	char *text = NULL;
	FILE *out = open_memstream(&text, len);

	FUZZ_ASSERT(out);
	config_write(cfg, out);
	fclose(out);
	return text;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct config cfg, again;
	char err[600], *text, *text2;
	size_t len, len2;

	err[0] = '\0';
	if (config_load(&cfg, &cmd_plugins, fuzz_file(data, size), err, sizeof err) != 0) {
		FUZZ_ASSERT(err[0]);
		config_free(&cfg);
		return 0;
	}
	FUZZ_ASSERT(config_check(&cfg, err, sizeof err) == 0);
	text = written(&cfg, &len);
	if (strstr(text, " = (hidden)\n")) {
		free(text);
		config_free(&cfg);
		return 0;
	}
	if (config_load(&again, &cmd_plugins, fuzz_file((const uint8_t *)text, len), err, sizeof err) != 0) {
		fprintf(stderr, "promise broken: the written config does not load: %s\n%s", err, text);
		abort();
	}
	text2 = written(&again, &len2);
	FUZZ_ASSERT(len == len2 && memcmp(text, text2, len) == 0);
	free(text);
	free(text2);
	config_free(&again);
	config_free(&cfg);
	return 0;
}
