/* SQLite's log copied back into the database file by a thread of its own.
 *
 * A copy (SQLite's PASSIVE checkpoint) writes the log's pages into the
 * database file and syncs it while serve goes on committing into the log;
 * it never waits for serve, nor serve for it. What it cannot do alone is
 * start the log again from its beginning: SQLite does that in the first
 * write that begins after a copy has caught up with the whole log, and
 * under a steady stream of commits each one begins while the copy of the
 * last is still running. Left so, the log would grow without end (reads
 * do not slow: they skip what was copied). So when it reaches three times
 * SQLITE_WAL_PAGES, serve's thread copies the rest itself: only what was
 * committed since the thread's last copy, a few dozen pages and a sync,
 * and its next commit starts the log again. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>

#include "store/sqlite_wal.h"

struct sqlite_wal {
	sqlite3 *db;  /* serve's connection */
	sqlite3 *own; /* the thread's */
	pthread_t thread;
	pthread_mutex_t mu; /* guards what follows */
	pthread_cond_t wake;
	int wanted, copying, stop;
	long restarts;	 /* how often serve's commits found the log begun again */
	int frames;	 /* the log's length in pages after serve's last commit */
	int copied_to;	 /* how far the thread's last copy went in this log; 0: none yet */
	struct sqlite_wal_stats stats;
};

/* SQLite calls this on serve's thread after each commit, with the log's
 * length in pages. It replaces the automatic checkpoint. */
static int on_commit(void *arg, sqlite3 *db, const char *name, int frames)
{
	struct sqlite_wal *w = arg;
	int idle, copy_here, left;

	pthread_mutex_lock(&w->mu);
	if (frames < w->frames) {
		w->restarts++;
		w->copied_to = 0;
	}
	w->frames = frames;
	idle = !w->wanted && !w->copying;
	copy_here = idle && frames >= 3 * SQLITE_WAL_PAGES;
	/* Copies a quarter of the threshold apart at least, each syncing the
	 * database file beside serve's syncs of the log; past twice the
	 * threshold, closer, so that serve's own copy at three times finds
	 * only a few dozen pages left. */
	if (idle && !copy_here && frames >= SQLITE_WAL_PAGES &&
	    frames >= w->copied_to + (frames >= 2 * SQLITE_WAL_PAGES ? SQLITE_WAL_PAGES / 32 : SQLITE_WAL_PAGES / 4)) {
		w->wanted = 1;
		pthread_cond_signal(&w->wake);
	}
	left = frames - w->copied_to;
	pthread_mutex_unlock(&w->mu);
	/* The thread is idle and will stay so: only this hook wakes it. */
	if (copy_here && sqlite3_wal_checkpoint_v2(db, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL) == SQLITE_OK) {
		pthread_mutex_lock(&w->mu);
		w->stats.serve_copies++;
		if (left > w->stats.serve_pages_most)
			w->stats.serve_pages_most = left;
		pthread_mutex_unlock(&w->mu);
	}
	return SQLITE_OK;
}

static void *copier(void *arg)
{
	struct sqlite_wal *w = arg;

	pthread_mutex_lock(&w->mu);
	for (;;) {
		int log = 0, rc;
		long restarts;

		while (!w->wanted && !w->stop)
			pthread_cond_wait(&w->wake, &w->mu);
		if (w->stop)
			break;
		w->wanted = 0;
		w->copying = 1;
		restarts = w->restarts;
		pthread_mutex_unlock(&w->mu);
		/* A failure (an I/O error, a full disk) is tried again at the
		 * next wake; serve's own copy at three times the threshold
		 * does not depend on this one. */
		rc = sqlite3_wal_checkpoint_v2(w->own, NULL, SQLITE_CHECKPOINT_PASSIVE, &log, NULL);
		pthread_mutex_lock(&w->mu);
		w->copying = 0;
		if (rc == SQLITE_OK) {
			w->stats.thread_copies++;
			if (restarts == w->restarts)
				w->copied_to = log;
		}
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

struct sqlite_wal *sqlite_wal_start(sqlite3 *db, const char *path, char *err, size_t errsize)
{
	struct sqlite_wal *w = calloc(1, sizeof *w);
	sigset_t all, old;
	int rc;

	if (!w) {
		snprintf(err, errsize, "out of memory");
		return NULL;
	}
	w->db = db;
	/* Its journal_mode statement reads the database, which puts the
	 * connection in WAL mode: a checkpoint before that finds no log. */
	if (sqlite3_open_v2(path, &w->own, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL) != SQLITE_OK ||
	    sqlite3_exec(w->own, "PRAGMA busy_timeout = 5000; PRAGMA journal_mode = WAL;", NULL, NULL, NULL) !=
		    SQLITE_OK) {
		snprintf(err, errsize, "the log's connection: %s", sqlite3_errmsg(w->own));
		sqlite3_close(w->own);
		free(w);
		return NULL;
	}
	pthread_mutex_init(&w->mu, NULL);
	pthread_cond_init(&w->wake, NULL);
	/* Signals stay with serve's thread. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	rc = pthread_create(&w->thread, NULL, copier, w);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (rc != 0) {
		snprintf(err, errsize, "the log's thread: cannot start");
		pthread_cond_destroy(&w->wake);
		pthread_mutex_destroy(&w->mu);
		sqlite3_close(w->own);
		free(w);
		return NULL;
	}
	sqlite3_wal_hook(db, on_commit, w);
	return w;
}

void sqlite_wal_stop(struct sqlite_wal *w)
{
	if (!w)
		return;
	sqlite3_wal_autocheckpoint(w->db, SQLITE_WAL_PAGES);
	pthread_mutex_lock(&w->mu);
	w->stop = 1;
	pthread_cond_signal(&w->wake);
	pthread_mutex_unlock(&w->mu);
	pthread_join(w->thread, NULL);
	sqlite3_close(w->own);
	pthread_cond_destroy(&w->wake);
	pthread_mutex_destroy(&w->mu);
	free(w);
}

void sqlite_wal_stats(struct sqlite_wal *w, struct sqlite_wal_stats *out)
{
	pthread_mutex_lock(&w->mu);
	*out = w->stats;
	pthread_mutex_unlock(&w->mu);
}
