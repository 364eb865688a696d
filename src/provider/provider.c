/* The provider front end and the registry of kinds (see provider.h). */
#include "provider/provider.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "common/textfile.h"
#include "provider/kind.h"

/* The registry: [provider] kind = NAME opens the kind of that name. Each
 * entry is a kind's share of the configuration, the first member of its
 * struct provider_kind, so the configuration reads the same list. */
extern const struct provider_kind provider_local, provider_exec;
const struct conf_plugin *const provider_plugins[] = {&provider_local.conf, &provider_exec.conf, NULL};

/* [provider] worker_cacert, checked now rather than by every worker that
 * would fail on it: its absolute path (a local worker need not share
 * serve's directory) into abspath, and its text into *pem (NULL when not
 * set). 0, or -1 with the reason. */
static int read_worker_cacert(const char *path, char abspath[PATH_MAX], char **pem, char *err, size_t errsize)
{
	char why[300];

	*pem = NULL;
	if (!path[0])
		return 0;
	if (!realpath(path, abspath)) {
		snprintf(err, errsize, "[provider] worker_cacert %s: %s", path, strerror(errno));
		return -1;
	}
	if (!(*pem = textfile_read(path, 1 << 20, NULL, why, sizeof why))) {
		snprintf(err, errsize, "[provider] worker_cacert %s: %s", path, why);
		return -1;
	}
	if (!strstr(*pem, "-----BEGIN CERTIFICATE-----")) {
		snprintf(err, errsize, "[provider] worker_cacert %s: no PEM certificate in it", path);
		free(*pem);
		*pem = NULL;
		return -1;
	}
	return 0;
}

/* What provider_check and provider_open share: the kind named, the
 * worker_cacert read (its path and text into abspath and *pem), and the
 * kind's own checks. NULL, with the reason, if any fails. */
static const struct provider_kind *prepare(const struct config *cfg, char abspath[PATH_MAX], char **pem, char *err,
					   size_t errsize)
{
	const struct conf_plugin *k = config_plugin_named(provider_plugins, cfg->provider_kind);
	const struct provider_kind *kind = (const struct provider_kind *)k;

	if (!k) {
		snprintf(err, errsize, "[provider] kind: no provider kind named '%s'", cfg->provider_kind);
		return NULL;
	}
	if (read_worker_cacert(cfg->worker_cacert, abspath, pem, err, errsize) != 0)
		return NULL;
	if (kind->check && kind->check(cfg, config_plugin(cfg, k->name), err, errsize) != 0) {
		free(*pem);
		*pem = NULL;
		return NULL;
	}
	return kind;
}

int provider_check(const struct config *cfg, char *err, size_t errsize)
{
	char abspath[PATH_MAX], *pem;

	if (strcmp(cfg->provider_kind, "none") == 0)
		return 0;
	if (!prepare(cfg, abspath, &pem, err, errsize))
		return -1;
	free(pem);
	return 0;
}

/* provider_check's checks are made again: a serve that comes to lead
 * opens its provider long after its start, and files change. */
struct provider *provider_open(const struct provider_env *env, char *err, size_t errsize)
{
	struct provider *p;

	if (strcmp(env->cfg->provider_kind, "none") == 0)
		return NULL;
	if (!(p = mem_calloc(1, sizeof *p))) {
		snprintf(err, errsize, "provider: out of memory");
		return NULL;
	}
	p->env = *env;
	snprintf(p->server_url, sizeof p->server_url, "%s", env->server_url);
	p->env.server_url = p->server_url;
	if (!(p->kind = prepare(env->cfg, p->worker_cacert, &p->worker_cacert_pem, err, errsize))) {
		free(p);
		return NULL;
	}
	p->conf = config_plugin(env->cfg, p->kind->conf.name);
	if (p->kind->open(p, err, errsize) != 0) {
		free(p->worker_cacert_pem);
		free(p);
		return NULL;
	}
	return p;
}

void provider_close(struct provider *p)
{
	if (!p)
		return;
	p->kind->close(p);
	free(p->worker_cacert_pem);
	free(p);
}

const char *provider_name(const struct provider *p) { return p->kind->conf.name; }

void provider_launch(struct provider *p, const struct instance *inst, const char *token, launch_cb done,
		     void *arg)
{
	p->kind->launch(p, inst, token, done, arg);
}

void provider_terminate(struct provider *p, const struct instance *inst, const char *data, terminate_cb done,
			void *arg)
{
	p->kind->terminate(p, inst, data, done, arg);
}

void provider_worker_cmd(const struct provider *p, const struct instance *inst, const char *token,
			 struct worker_cmd *w)
{
	const char *url = p->env.server_url, *on_exit = p->env.cfg->on_exit;
	size_t n = strcspn(url, ",");

	memset(w, 0, sizeof *w);
	/* The worker reads its reclaim notice from serve, as it would from a
	 * cloud's metadata service: of several serves (docs/HA.md), the
	 * first. */
	while (n > 0 && url[n - 1] == '/')
		n--;
	snprintf(w->notice, sizeof w->notice, "%.*s/v1/fleet/%lld/notice", (int)n, url, (long long)inst->id);
	snprintf(w->id, sizeof w->id, "%lld", (long long)inst->id);
	snprintf(w->gpus, sizeof w->gpus, "%d", inst->gpus);
	snprintf(w->vram, sizeof w->vram, "%d", inst->vram_gb);
	snprintf(w->orphan, sizeof w->orphan, "%lldms", (long long)p->env.cfg->orphan_timeout_ms);
	w->token = token;
	w->cacert = p->worker_cacert[0] ? p->worker_cacert : NULL;
	{
		const char *args[] = {"ebb", "worker", "--server", url, "--instance", w->id, "--gpus", w->gpus,
				      "--vram", w->vram, "--orphan-timeout", w->orphan, "--notice-url", w->notice};
		for (size_t k = 0; k < sizeof args / sizeof *args; k++)
			w->argv[w->argc++] = args[k];
	}
	if (on_exit[0]) {
		w->argv[w->argc++] = "--on-exit";
		w->argv[w->argc++] = on_exit;
	}
}

void provider_list(struct provider *p, list_cb done, void *arg)
{
	p->kind->list(p, done, arg);
}

int provider_adopt(struct provider *p, const struct instance *inst) { return p->kind->adopt(p, inst); }
int provider_can_reclaim(const struct provider *p) { return p && p->kind->reclaim != NULL; }

int provider_reclaim(struct provider *p, const struct instance *inst)
{
	return p->kind->reclaim ? p->kind->reclaim(p, inst) : -1;
}

int64_t provider_notice_ms(const struct provider *p)
{
	return p && p->kind->notice_ms ? p->kind->notice_ms(p) : 0;
}

int64_t provider_list_interval_ms(const struct provider *p)
{
	return p->kind->list_interval_ms ? p->kind->list_interval_ms(p) : 0;
}
