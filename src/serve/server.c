/* `ebb serve`: the wiring (see server.h). Idle, the process sleeps in
 * epoll with no timer armed unless a lease or a delayed job has a
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

#include "common/log.h"
#include "common/mem.h"
#include "policy/settings.h"
#include "provider/provider.h"
#include "serve/alerts.h"
#include "serve/api.h"
#include "serve/batch.h"
#include "serve/deadline.h"
#include "serve/fleet.h"
#include "serve/history.h"
#include "serve/httpd.h"
#include "serve/ledger.h"
#include "common/timer.h"
#include "serve/joblog.h"
#include "serve/longpoll.h"
#include "serve/watch.h"
#include "serve/metrics.h"
#include "serve/preflight.h"
#include "serve/queue.h"
#include "serve/reclaim.h"
#include "serve/replica.h"
#include "serve/scaler.h"
#include "serve/tls.h"
#include "serve/webhook.h"
#include "serve/workers.h"
#include "store/store.h"

struct server {
	const struct config *cfg;
	struct clock clock;
	struct store *store;
	struct batch *batch;
	struct queue queue;
	struct ledger ledger;
	struct fleet fleet;
	struct event_base *base;
	struct httpd *httpd;
	struct tls *tls; /* NULL: plain HTTP */
	struct deadline *deadline;
	struct longpoll *longpoll;
	struct watch *watch; /* running jobs' wake-ups */
	struct jobwait *logwait, *endwait;
	struct slices *slices;
	struct event *log_sweep; /* the jobs' logs past their retention or the total */
	struct provider *provider; /* NULL: [provider] kind = none */
	struct scaler *scaler;
	struct webhooks *webhooks;
	struct alerts *alerts;
	struct history *history;
	struct workers *workers;
	struct replica *replica; /* one of several serves on the store, or alone */
	int ticks;
	struct api api;
	/* Where workers and the alerts' links reach serve: server_url, or the
	 * address it listens on. */
	char url[1100];
	struct event *signals[3];
	/* The catalogue as configured; the scaler applies what it measured. */
	struct offer offers[64];
	int noffers;
	struct plan_settings settings; /* plan()'s, for GET /v1/scale */
	/* Lease latency and replies by status, for GET /metrics: in memory
	 * only, from zero at every start. */
	struct serve_metrics metrics;
};

static void on_request(void *ctx, struct request *req)
{
	struct server *s = ctx;
	api_handle(&s->api, req);
}

static int on_commit(void *ctx, struct ebb_error *err)
{
	struct server *s = ctx;
	return batch_commit(s->batch, err);
}

static void on_done(void *ctx, struct request *req, int sent)
{
	struct server *s = ctx;

	struct request_keeper *k = request_keeper(req);

	serve_metrics_http(&s->metrics, request_status(req));
	if (k)
		k->gone(k, sent);
}

static void on_signal(evutil_socket_t sig, short what, void *arg)
{
	struct server *s = arg;

	(void)what;
	log_info("shutting down", "signal=%s", sig == SIGTERM ? "TERM" : "INT");
	longpoll_release_all(s->longpoll);
	watch_release_all(s->watch);
	jobwait_release_all(s->logwait);
	jobwait_release_all(s->endwait);
	slices_release_all(s->slices);
	batch_flush(s->batch);
	event_base_loopbreak(s->base);
}

/* SIGHUP: the certificate and key are read again, for the connections
 * that start from now on. A file that cannot be used changes nothing. */
static void on_reload(evutil_socket_t sig, short what, void *arg)
{
	struct server *s = arg;
	char err[1024], quoted[1100];

	(void)sig;
	(void)what;
	if (!s->tls)
		log_info("SIGHUP: nothing to reload", "reason=\"no [server] tls_cert\"");
	else if (tls_reload(s->tls, err, sizeof err) == 0)
		log_info("tls certificate reloaded", "%s", tls_describe(s->tls));
	else
		log_error("tls certificate not reloaded: the one in use stays", "reason=%s",
			  log_quote(quoted, sizeof quoted, err));
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

/* A worker process exited: the scaler looks for what went with it. */
static void on_provider_changed(void *arg)
{
	struct server *s = arg;
	scaler_wake(s->scaler);
}

/* The provider starts a simulated reclaim: its notice, in a batch. */
static void on_provider_notice(void *arg, int64_t id)
{
	struct server *s = arg;
	struct instance inst;
	struct ebb_error err;

	if (batch_begin(s->batch) != 0)
		log_error("reclaim notice lost: the store failed", "instance=%lld error=\"%s\"", (long long)id,
			  store_error(s->store));
	else
		batch_end(s->batch, reclaim_notice(&s->fleet, id, &inst, &err) == 0);
	batch_flush(s->batch);
}

/* The provider and the scaler, when [provider] kind is not none: the
 * leader's alone, with several serves on one store. */
static int start_scaler(struct server *s, char *err, size_t errsize)
{
	const struct config *cfg = s->cfg;
	struct provider_env env = {
		.cfg = cfg, .base = s->base, .offers = s->offers, .noffers = s->noffers,
		.changed = on_provider_changed, .notice = on_provider_notice, .arg = s,
	};
	struct scaler_env senv = {
		.cfg = cfg, .clock = &s->clock, .base = s->base, .store = s->store, .batch = s->batch,
		.queue = &s->queue, .fleet = &s->fleet, .offers = s->offers, .noffers = s->noffers,
		.run_seconds = &s->metrics.scaler_run, .workers = s->workers,
	};

	if (strcmp(cfg->provider_kind, "none") == 0)
		return 0;
	env.server_url = s->url;
	if (!(s->provider = provider_open(&env, err, errsize)))
		return -1;
	senv.provider = s->provider;
	if (!(s->scaler = scaler_new(&senv))) {
		snprintf(err, errsize, "scaler: out of memory");
		return -1;
	}
	log_info("scaler started", "provider=%s workers_reach=%s", provider_name(s->provider), s->url);
	return 0;
}

/* This serve took the lock of a store several share: it runs the
 * scaler, the provider and the alerts from now on. A provider that
 * cannot start leaves the serve answering as before, without a scaler. */
static void on_lead(void *arg)
{
	struct server *s = arg;
	char err[1024];

	if (start_scaler(s, err, sizeof err) != 0) {
		log_error("leading, but the scaler cannot start", "reason=\"%s\"", err);
		provider_close(s->provider);
		s->provider = NULL;
	}
	s->api.scaler = s->scaler;
	s->api.provider = s->provider;
	s->api.snap.with_provider = s->provider != NULL;
	s->api.leads = 1;
	longpoll_set_scaler(s->longpoll, s->scaler);
	alerts_lead(s->alerts);
}

/* A job's end here answers the reads that wait for it. */
static int on_job_end(void *arg, const struct job_change *c)
{
	struct server *s = arg;

	if (job_state_terminal(c->job->state))
		jobwait_wake(s->endwait, c->job->id);
	return 0;
}

/* Another serve's word: a job became ready there, for the workers
 * waiting here, or one of its deadlines is nearer than ours; a job may
 * have ended there too (a complete, a fail and a cancel send the word),
 * for the reads that wait for it here. */
static void on_woken(void *arg)
{
	struct server *s = arg;

	jobwait_wake_all(s->endwait);
	if (longpoll_waiting(s->longpoll) > 0) {
		s->queue.ready_changed = 1; /* not queue_ready_changed(): it is theirs, not news */
		/* The waiting workers are matched by the tallies' classes:
		 * read with the batch below, they hold the job the word is of. */
		store_counts_stale(s->store);
		deadline_run(s->deadline);
	} else {
		deadline_rearm(s->deadline);
	}
	if (s->scaler) {
		/* The plan reads the queue from the tallies: the word's job
		 * must be in them. */
		store_counts_stale(s->store);
		scaler_wake(s->scaler);
	}
}

/* The leader's scaler hears of the work the other serves take in, and
 * of the runs that end there, by their word (on_woken); it looks again
 * this often regardless, for a word lost with its connection. Once a
 * second, it was most of what three serves at rest asked of
 * PostgreSQL: a plan's reads of the fleet and the queue, each second
 * (docs/BENCHMARKS.md, section 8). */
#define SCALER_LOOK_MS 10000

/* Once a second: the deadlines the other serves set (each serve arms
 * its timer for the nearest of all at its commits, so a deadline is
 * met by the serve that set it; this is for one that died since), the
 * leader's scaler every SCALER_LOOK_MS, and a follower reads the
 * preemptions the leader asked for (its workers hear them here). A read
 * of the deadlines at every tick was most of what three idle serves
 * asked of PostgreSQL (docs/BENCHMARKS.md, section 8). */
static void on_tick(void *arg)
{
	struct server *s = arg;

	if (++s->ticks % (1000 / REPLICA_TICK_MS) != 0)
		return;
	deadline_rearm(s->deadline);
	if (s->scaler) {
		if (s->ticks % (SCALER_LOOK_MS / REPLICA_TICK_MS) == 0)
			scaler_wake(s->scaler);
	} else if (s->cfg->nteams > 0) {
		s->queue.preempts.n = 0;
		if (preempt_restore(&s->queue.preempts, s->store) != 0)
			log_error("cannot read the leader's preemptions", "error=\"%s\"", store_error(s->store));
	}
}

/* A slice of the logs' sweep (serve/joblog.h) every LOG_SWEEP_MS, or at
 * once while there is more to do: slices, so that no step holds the loop. */
#define LOG_SWEEP_MS 5000

static void on_log_sweep(evutil_socket_t fd, short what, void *arg)
{
	struct server *s = arg;
	int more = 0;

	(void)fd;
	(void)what;
	if (batch_begin(s->batch) == 0) {
		more = joblog_sweep(s->store, s->cfg, clock_now(&s->clock));
		if (more < 0)
			log_error("cannot sweep the jobs' logs", "error=\"%s\"", store_error(s->store));
		batch_end(s->batch, more >= 0);
		batch_flush(s->batch);
	}
	timer_add_ms(s->log_sweep, more > 0 ? 0 : LOG_SWEEP_MS);
}

/* The parts below the API, in the order they depend on each other. */
static int start(struct server *s, const struct server_options *o, char *err, size_t errsize)
{
	const struct config *cfg = s->cfg;
	struct httpd_options ho = {
		.listen = cfg->listen,
		.max_body = cfg->max_body,
		.max_connections = cfg->max_connections,
		.connection_timeout_ms = cfg->connection_timeout_ms,
	};
	struct httpd_hooks hooks = {.ctx = s, .handle = on_request, .commit = on_commit, .done = on_done};
	struct event_config *ec;
	int leads;

	clock_init_real(&s->clock);
	s->noffers = offers_from_config(cfg, s->offers, 64);
	plan_settings_from_config(cfg, &s->settings);
	if (!(s->store = store_open(cfg, err, errsize)))
		return -1;

	queue_init(&s->queue, s->store, cfg, &s->clock,
		   (uint64_t)clock_now(&s->clock) ^ ((uint64_t)getpid() << 32));
	serve_metrics_init(&s->metrics);
	s->queue.lease_latency = &s->metrics.lease_latency;
	s->ledger = (struct ledger){s->store, &s->clock, s->offers, s->noffers, cfg};
	fleet_init(&s->fleet, s->store, &s->clock, &s->ledger);
	queue_subscribe(&s->queue, fleet_on_job, &s->fleet);
	queue_subscribe(&s->queue, on_job_end, s);
	/* Timers are set from the time now, not from when the loop woke: a
	 * long pass must not make a long-poll end early. */
	if (!(ec = event_config_new()))
		goto nomem;
	event_config_set_flag(ec, EVENT_BASE_FLAG_NO_CACHE_TIME);
	s->base = event_base_new_with_config(ec);
	event_config_free(ec);
	if (!s->base || !(s->batch = batch_new(s->store)) ||
	    !(s->deadline = deadline_new(s->base, s->batch, &s->queue)) ||
	    !(s->replica = replica_new(s->base, s->store, &s->clock,
				       &(struct replica_hooks){.arg = s, .lead = on_lead, .woken = on_woken,
							       .tick = on_tick},
				       &leads)))
		goto nomem;
	if (cfg->tls_cert[0]) {
		if (!(s->tls = tls_open(cfg->tls_cert, cfg->tls_key, err, errsize)))
			return -1;
		ho.tls = s->tls;
		log_info("tls certificate loaded", "%s", tls_describe(s->tls));
	}
	if (!(s->httpd = httpd_start(s->base, &ho, &hooks, err, errsize)))
		return -1;
	batch_set_httpd(s->batch, s->httpd);
	if (cfg->server_url[0])
		snprintf(s->url, sizeof s->url, "%s", cfg->server_url);
	else
		snprintf(s->url, sizeof s->url, "%s://%.*s:%d", s->tls ? "https" : "http",
			 (int)(strrchr(cfg->listen, ':') - cfg->listen), cfg->listen, httpd_port(s->httpd));
	/* Before the scaler, which counts their handlers' setups. */
	if (!(s->workers = mem_calloc(1, sizeof *s->workers)))
		goto nomem;
	if (leads && start_scaler(s, err, errsize) != 0)
		return -1;
	if (!(s->webhooks = webhooks_new(s->base, cfg)) ||
	    !(s->alerts = alerts_new(&(struct alerts_env){.cfg = cfg, .clock = &s->clock, .base = s->base,
							  .store = s->store, .batch = s->batch, .ledger = &s->ledger,
							  .webhooks = s->webhooks, .external_url = s->url},
					 !leads)) ||
	    !(s->history = history_new(s->base, &s->clock, s->store, s->batch)))
		goto nomem;
	if (!(s->longpoll = longpoll_new(s->base, s->batch, &s->queue, s->scaler, &s->fleet, s->workers)) ||
	    !(s->watch = watch_new(s->base, s->batch, &s->queue)) ||
	    !(s->logwait = jobwait_new(s->base, s->batch, api_logs_try, &s->api)) ||
	    !(s->endwait = jobwait_new(s->base, s->batch, api_job_end_try, &s->api)) ||
	    !(s->slices = slices_new(s->base, s->batch)) ||
	    !(s->log_sweep = evtimer_new(s->base, on_log_sweep, s)))
		goto nomem;
	timer_add_ms(s->log_sweep, LOG_SWEEP_MS);
	s->api = (struct api){
		.cfg = cfg, .clock = &s->clock, .test_clock = o->test_clock, .started_ms = clock_now(&s->clock),
		.store = s->store, .batch = s->batch, .queue = &s->queue, .fleet = &s->fleet,
		.longpoll = s->longpoll, .watch = s->watch, .logwait = s->logwait, .endwait = s->endwait,
		.slices = s->slices,
		.scaler = s->scaler,
		.provider = s->provider, .offers = s->offers,
		.noffers = s->noffers, .settings = &s->settings, .metrics = &s->metrics, .alerts = s->alerts,
		.history = s->history, .workers = s->workers, .leads = leads,
		.snap = {.cfg = cfg, .store = s->store, .clock = &s->clock, .ledger = &s->ledger, .offers = s->offers,
			 .noffers = s->noffers, .with_provider = s->provider != NULL},
	};
	config_serve_id(cfg, s->api.serve_id, sizeof s->api.serve_id);
	s->signals[0] = evsignal_new(s->base, SIGTERM, on_signal, s);
	s->signals[1] = evsignal_new(s->base, SIGINT, on_signal, s);
	s->signals[2] = evsignal_new(s->base, SIGHUP, on_reload, s);
	for (int i = 0; i < 3; i++)
		event_add(s->signals[i], NULL);
	return 0;
nomem:
	snprintf(err, errsize, "out of memory");
	return -1;
}

/* In the reverse order of start(): the HTTP server first, whose last
 * connections end through their keepers (longpoll, watch), the batch and the store. */
static void stop(struct server *s)
{
	httpd_stop(s->httpd);
	tls_free(s->tls);
	replica_free(s->replica);
	longpoll_free(s->longpoll);
	watch_free(s->watch);
	jobwait_free(s->logwait);
	jobwait_free(s->endwait);
	slices_free(s->slices);
	if (s->log_sweep)
		event_free(s->log_sweep);
	free(s->workers);
	provider_close(s->provider);
	scaler_free(s->scaler);
	alerts_free(s->alerts);
	webhooks_free(s->webhooks);
	history_free(s->history);
	for (int i = 0; i < 3; i++) {
		if (s->signals[i])
			event_free(s->signals[i]);
	}
	deadline_free(s->deadline);
	batch_free(s->batch);
	if (s->base)
		event_base_free(s->base);
	store_close(s->store);
}

int server_run(const struct config *cfg, const struct server_options *o)
{
	struct server *s;
	char err[1024];
	int lock_fd, rc = 1;

	log_set_level((enum log_level)cfg->log_level);
	/* jansson's allocations are the request path's too: through the one
	 * count (common/mem.h), which a test may fail. */
	json_set_alloc_funcs(mem_alloc, free);
	if (preflight_check(cfg, err, sizeof err) != 0) {
		log_error("cannot start", "reason=\"%s\"", err);
		return 1;
	}
	if (!(s = mem_calloc(1, sizeof *s))) {
		log_error("cannot start", "reason=\"out of memory\"");
		return 1;
	}
	s->cfg = cfg;
	if ((lock_fd = lock_data_dir(cfg->data_dir, err, sizeof err)) < 0) {
		log_error("cannot start", "reason=\"%s\"", err);
		free(s);
		return 1;
	}
	raise_fd_limit();
	signal(SIGPIPE, SIG_IGN);
	if (start(s, o, err, sizeof err) != 0) {
		log_error("cannot start", "reason=\"%s\"", err);
	} else {
		log_info("listening", "addr=%s port=%d tls=%s store=%s data_dir=%s test_clock=%d", cfg->listen,
			 httpd_port(s->httpd), s->tls ? "on" : "off", store_kind(s->store), cfg->data_dir,
			 o->test_clock);
		if (!s->tls && httpd_is_loopback(cfg->listen) != 1)
			log_warn("plain HTTP off loopback: tokens and jobs cross the network unencrypted",
				 "addr=%s reason=\"[server] private_network = on\"", cfg->listen);
		if (cfg->ntokens == 0)
			log_warn("no tokens configured: the API is open, so it listens on loopback only", "addr=%s",
				 cfg->listen);
		/* Leases that ran out and delays that ended while serve was down. */
		deadline_run(s->deadline);
		event_base_dispatch(s->base);
		rc = 0;
	}
	stop(s);
	free(s);
	close(lock_fd);
	return rc;
}
