/* Parked lease requests (see longpoll.h). */
#include "serve/longpoll.h"

#include <stdlib.h>

#include "serve/fleet.h"
#include "common/log.h"
#include "serve/scaler.h"

static void reply_job(struct waiter *w, const struct job *job)
{
	struct jsonout o = {0};

	jsonout_open(&o, NULL, '{');
	if (job)
		job_write_json(&o, "job", job);
	else
		jsonout_null(&o, "job");
	/* Instances follow the idle timeout in force, which moves with auto
	 * and with the warm floor. */
	if (w->srv->scaler && instance_id_of_worker(w->worker))
		jsonout_real(&o, "idle_timeout_s", (double)scaler_worker_idle_timeout(w->srv->scaler) / 1000.0);
	jsonout_close(&o, '}');
	if (job) {
		w->granted_id = job->id;
		w->granted_token = job->lease_token;
		fleet_worker_job(w->srv, w->worker, job->id);
	}
	request_reply_json(w->req, 200, jsonout_finish(&o));
}

static void unpark(struct waiter *w)
{
	struct server *s = w->srv;

	if (!w->parked)
		return;
	if (w->prev)
		w->prev->next = w->next;
	else
		s->waiters_head = w->next;
	if (w->next)
		w->next->prev = w->prev;
	else
		s->waiters_tail = w->prev;
	evtimer_del(w->timer);
	w->parked = 0;
}

static void on_timeout(evutil_socket_t fd, short what, void *arg)
{
	struct waiter *w = arg;

	(void)fd;
	(void)what;
	unpark(w);
	reply_job(w, NULL);
	httpd_flush(w->srv->httpd);
}

void longpoll_lease(struct server *s, struct waiter *w, int64_t wait_ms)
{
	struct ebb_error err;
	struct job job;
	struct timeval tv = {.tv_sec = wait_ms / 1000, .tv_usec = (wait_ms % 1000) * 1000};
	int rc = 0;

	/* A worker that asks for work runs none: its instance is idle. */
	fleet_worker_job(s, w->worker, 0);
	w->draining = !fleet_worker_may_lease(s, w->worker);
	if (!w->draining)
		rc = queue_lease(&s->queue, &w->offer, w->worker, w->lease_ms, &job, &err);

	if (rc < 0) {
		request_reply(w->req, err.status, error_to_json(&err));
		return;
	}
	if (rc == 1 || wait_ms <= 0) {
		reply_job(w, rc == 1 ? &job : NULL);
		if (rc == 1)
			job_free(&job);
		return;
	}
	w->prev = s->waiters_tail;
	w->next = NULL;
	if (s->waiters_tail)
		s->waiters_tail->next = w;
	else
		s->waiters_head = w;
	s->waiters_tail = w;
	w->parked = 1;
	w->timer = evtimer_new(s->base, on_timeout, w);
	evtimer_add(w->timer, &tv);
}

int longpoll_dispatch(struct server *s)
{
	struct ebb_error err;
	struct waiter *w, *next;
	int64_t queued;

	while (s->queue.ready_changed && s->waiters_head) {
		s->queue.ready_changed = 0;
		for (w = s->waiters_head; w; w = next) {
			struct job job;
			int rc;

			next = w->next;
			if (w->draining)
				continue;
			if (request_peer_gone(w->req)) {
				/* A job leased to it would wait out its lease for nothing. */
				unpark(w);
				reply_job(w, NULL);
				continue;
			}
			if (s->store->ops->count_in_state(s->store, JOB_QUEUED, &queued) != 0)
				return -1;
			if (queued == 0)
				break;
			if (server_begin_request(s) != 0)
				return -1;
			rc = queue_lease(&s->queue, &w->offer, w->worker, w->lease_ms, &job, &err);
			server_end_request(s, rc >= 0);
			if (rc < 0)
				return -1;
			if (rc == 1) {
				unpark(w);
				reply_job(w, &job);
				job_free(&job);
			}
		}
	}
	s->queue.ready_changed = 0;
	return 0;
}

void longpoll_done(struct waiter *w, int sent)
{
	struct server *s = w->srv;

	unpark(w);
	if (!sent && w->granted_id && server_begin_request(s) == 0)
		server_end_request(s, queue_unlease(&s->queue, w->granted_id, w->granted_token) == 0);
	if (w->timer)
		event_free(w->timer);
	json_decref(w->offer.labels);
	free(w);
}

void longpoll_release_all(struct server *s)
{
	while (s->waiters_head) {
		struct waiter *w = s->waiters_head;
		unpark(w);
		reply_job(w, NULL);
	}
}
