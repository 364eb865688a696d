/* `ebb serve`: the loop, the batch that every reply waits for, and the
 * timer for the queue's next deadline (see server.h). Idle, the process
 * sleeps in epoll with no timer armed unless a lease or a delayed job has a
 * deadline. */
#include "serve/server.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include "serve/api.h"
#include "common/log.h"
#include "serve/longpoll.h"
#include "provider/provider.h"
#include "serve/reclaim.h"
#include "serve/scaler.h"

int server_begin_request(struct server *s)
{
	if (!s->in_batch) {
		if (s->store->ops->begin(s->store) != 0)
			return -1;
		s->in_batch = 1;
	}
	return s->store->ops->savepoint(s->store);
}

void server_end_request(struct server *s, int ok)
{
	if (ok)
		s->store->ops->release(s->store);
	else
		s->store->ops->rollback_savepoint(s->store);
}

const struct offer *server_offer(const struct server *s, const char *name)
{
	int k = offer_index(s->offers, s->noffers, name);

	return k >= 0 ? &s->offers[k] : NULL;
}

static void arm_deadline(struct server *s)
{
	int64_t at = 0, wait;
	struct timeval tv;

	if (queue_next_deadline(&s->queue, &at) != 0 || at == 0) {
		evtimer_del(s->deadline);
		return;
	}
	wait = at - clock_now(&s->clock);
	if (wait < 0)
		wait = 0;
	tv.tv_sec = wait / 1000;
	tv.tv_usec = (wait % 1000) * 1000;
	evtimer_add(s->deadline, &tv);
}

/* httpd's commit hook: hand queued jobs to waiting workers, then make the
 * whole batch durable in one commit before any of its replies leaves. */
static int commit_batch(void *ctx)
{
	struct server *s = ctx;
	int failed = longpoll_dispatch(s) != 0;

	if (!s->in_batch)
		return failed;
	s->in_batch = 0;
	if (!failed && s->store->ops->commit(s->store) == 0) {
		arm_deadline(s);
		if (s->queue.changes != s->changes_seen) {
			s->changes_seen = s->queue.changes;
			scaler_poke(s->scaler);
		}
		return 0;
	}
	log_error("commit failed, batch rolled back", "error=\"%s\"", s->store->errmsg);
	s->store->ops->rollback(s->store);
	return -1;
}

static void on_request(void *ctx, struct request *req) { api_handle(ctx, req); }

static void on_done(void *ctx, struct request *req, int sent)
{
	struct server *s = ctx;
	struct waiter *w = request_data(req);

	serve_metrics_http(&s->metrics, request_status(req));
	if (w)
		longpoll_done(w, sent);
}

static void on_deadline(evutil_socket_t fd, short what, void *arg)
{
	struct server *s = arg;
	struct ebb_error err;

	(void)fd;
	(void)what;
	if (server_begin_request(s) == 0)
		server_end_request(s, queue_process_due(&s->queue, &err) == 0);
	httpd_flush(s->httpd);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct server *s = arg;

	(void)what;
	log_info("shutting down", "signal=%s", sig == SIGTERM ? "TERM" : "INT");
	longpoll_release_all(s);
	httpd_flush(s->httpd);
	event_base_loopbreak(s->base);
}

/* One serve per data directory: two would hand out the same jobs. */
static int lock_data_dir(const char *dir, char *err, size_t errsize)
{
	char path[4200];
	int fd;

	if (mkdir(dir, 0750) != 0 && errno != EEXIST) {
		snprintf(err, errsize, "data_dir %s: cannot create: %s", dir, strerror(errno));
		return -1;
	}
	snprintf(path, sizeof path, "%s/ebb.lock", dir);
	fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0640);
	if (fd < 0 || flock(fd, LOCK_EX | LOCK_NB) != 0) {
		snprintf(err, errsize, "data_dir %s: %s", dir,
			 fd < 0 ? strerror(errno) : "in use by another ebb serve");
		if (fd >= 0)
			close(fd);
		return -1;
	}
	return fd;
}

/* Long-polling workers each hold a descriptor: take what the system allows. */
static void raise_fd_limit(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
}

static void on_provider_change(void *arg)
{
	struct server *s = arg;
	scaler_poke(s->scaler);
}

/* The provider and the scaler, when [provider] kind is not none. Workers
 * reach serve at server_url, or at the address it listens on. */
static int start_scaler(struct server *s, char *err, size_t errsize)
{
	const struct config *cfg = s->cfg;
	struct provider_env env = {
		.cfg = cfg, .base = s->base, .changed = on_provider_change, .changed_arg = s,
		.notice = reclaim_from_provider,
	};
	char url[1100];
	const char *colon = strrchr(cfg->listen, ':');

	if (cfg->provider_kind == PROVIDER_NONE)
		return 0;
	if (cfg->server_url[0])
		snprintf(url, sizeof url, "%s", cfg->server_url);
	else
		snprintf(url, sizeof url, "http://%.*s:%d", (int)(colon - cfg->listen), cfg->listen,
			 httpd_port(s->httpd));
	env.server_url = url;
	for (size_t i = 0; i < cfg->ntokens && !env.worker_token; i++) {
		if (cfg->tokens[i].role == ROLE_WORKER)
			env.worker_token = cfg->tokens[i].secret;
	}
	if (cfg->ntokens > 0 && !env.worker_token) {
		snprintf(err, errsize, "the provider's workers need a [token.NAME] with role = worker");
		return -1;
	}
	if (!(s->provider = provider_open(&env, err, errsize)))
		return -1;
	s->scaler = scaler_new(s, s->provider);
	log_info("scaler started", "provider=%s workers_reach=%s", s->provider->ops->name, url);
	scaler_poke(s->scaler);
	return 0;
}

int server_run(const struct config *cfg, const struct server_options *o)
{
	struct server s = {.cfg = cfg, .test_clock = o->test_clock};
	struct httpd_options ho = {
		.listen = cfg->listen,
		.max_body = cfg->max_body,
		.max_connections = cfg->max_connections,
		.connection_timeout_ms = cfg->connection_timeout_ms,
	};
	struct httpd_hooks hooks = {.ctx = &s, .handle = on_request, .commit = commit_batch, .done = on_done};
	char err[1024];
	int lock_fd, loopback = httpd_is_loopback(cfg->listen), rc = 1;

	log_set_level((enum log_level)cfg->log_level);
	if (loopback < 0) {
		log_error("cannot start", "reason=\"listen '%s': expected host:port, a port from 0 to 65535\"",
			  cfg->listen);
		return 1;
	}
	if (cfg->ntokens == 0 && !loopback) {
		log_error("cannot start", "reason=\"no [token.*] configured: the API would be open on %s;"
			  " listen on a loopback address or configure tokens\"", cfg->listen);
		return 1;
	}
	if ((lock_fd = lock_data_dir(cfg->data_dir, err, sizeof err)) < 0) {
		log_error("cannot start", "reason=\"%s\"", err);
		return 1;
	}
	raise_fd_limit();
	signal(SIGPIPE, SIG_IGN);
	clock_init_real(&s.clock);
	s.noffers = offers_from_config(cfg, s.offers, 64);
	s.started_ms = clock_now(&s.clock);
	s.store = store_sqlite_open(cfg->data_dir, err, sizeof err);
	if (!s.store) {
		log_error("cannot start", "reason=\"%s\"", err);
		close(lock_fd);
		return 1;
	}
	queue_init(&s.queue, s.store, cfg, &s.clock, (uint64_t)s.started_ms ^ ((uint64_t)getpid() << 32));
	serve_metrics_init(&s.metrics);
	s.queue.lease_latency = &s.metrics.lease_latency;
	{
		/* Timers are set from the time now, not from when the loop woke:
		 * a long pass must not make a long-poll end early. */
		struct event_config *ec = event_config_new();
		event_config_set_flag(ec, EVENT_BASE_FLAG_NO_CACHE_TIME);
		s.base = event_base_new_with_config(ec);
		event_config_free(ec);
	}
	s.deadline = evtimer_new(s.base, on_deadline, &s);
	s.httpd = httpd_start(s.base, &ho, &hooks, err, sizeof err);
	if (!s.httpd) {
		log_error("cannot start", "reason=\"%s\"", err);
		goto out;
	}
	if (start_scaler(&s, err, sizeof err) != 0) {
		log_error("cannot start", "reason=\"%s\"", err);
		goto out;
	}
	s.signals[0] = evsignal_new(s.base, SIGTERM, on_signal, &s);
	s.signals[1] = evsignal_new(s.base, SIGINT, on_signal, &s);
	event_add(s.signals[0], NULL);
	event_add(s.signals[1], NULL);
	log_info("listening", "addr=%s port=%d store=sqlite data_dir=%s test_clock=%d", cfg->listen,
		 httpd_port(s.httpd), cfg->data_dir, s.test_clock);
	if (cfg->ntokens == 0)
		log_warn("no tokens configured: the API is open, so it listens on loopback only", "addr=%s",
			 cfg->listen);
	/* Leases that ran out and delays that ended while serve was down. */
	on_deadline(-1, 0, &s);
	event_base_dispatch(s.base);
	rc = 0;
out:
	scaler_free(s.scaler);
	if (s.provider)
		s.provider->ops->close(s.provider);
	httpd_stop(s.httpd);
	for (int i = 0; i < 2; i++) {
		if (s.signals[i])
			event_free(s.signals[i]);
	}
	event_free(s.deadline);
	event_base_free(s.base);
	s.store->ops->close(s.store);
	close(lock_fd);
	return rc;
}
