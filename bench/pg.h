/* A throwaway PostgreSQL 15 for the benchmarks (scripts/pg.sh, which
 * scripts/deps.sh's postgresql makes possible): started once per
 * program, a database of its own for each serve, stopped at the end.
 * Header-only like bench.h. Environment: EBB_SRC (the source tree, for
 * scripts/pg.sh; default: the working directory), PG_BIN (pg.sh's). */
#ifndef EBB_BENCH_PG_H
#define EBB_BENCH_PG_H

#include <libpq-fe.h>

#include "bench.h"

/* The server's directory and its libpq connection string, without a
 * dbname (pg.sh's url: host=DIR/sock port=PORT user=ebb). */
static char pg_dir[512], pg_url[600];

/* The postmaster's pid while the server runs, else 0: what a signal
 * handler may stop it by. */
static volatile pid_t pg_master;

/* The postmaster's pid (the first line of its postmaster.pid), or -1. */
static inline pid_t pg_read_master(void)
{
	char path[600];
	long master = 0;
	FILE *f;

	snprintf(path, sizeof path, "%s/data/postmaster.pid", pg_dir);
	if (!(f = fopen(path, "r")) || fscanf(f, "%ld", &master) != 1 || master <= 0)
		master = -1;
	if (f)
		fclose(f);
	return (pid_t)master;
}

static inline int pg_start(void)
{
	const char *src = getenv("EBB_SRC") ? getenv("EBB_SRC") : ".";
	char cmd[700];
	FILE *f;

	snprintf(cmd, sizeof cmd, "%s/scripts/pg.sh start", src);
	if (!(f = popen(cmd, "r")) || !fgets(pg_dir, sizeof pg_dir, f)) {
		if (f)
			pclose(f);
		pg_dir[0] = '\0';
		return -1;
	}
	pclose(f);
	pg_dir[strcspn(pg_dir, "\n")] = '\0';
	snprintf(cmd, sizeof cmd, "%s/url", pg_dir);
	if (!(f = fopen(cmd, "r")) || !fgets(pg_url, sizeof pg_url, f)) {
		if (f)
			fclose(f);
		return -1;
	}
	fclose(f);
	pg_url[strcspn(pg_url, "\n")] = '\0';
	pg_master = pg_read_master();
	return 0;
}

static inline void pg_stop(void)
{
	const char *src = getenv("EBB_SRC") ? getenv("EBB_SRC") : ".";
	char cmd[1200];

	if (!pg_dir[0])
		return;
	snprintf(cmd, sizeof cmd, "%s/scripts/pg.sh stop %s", src, pg_dir);
	if (system(cmd) != 0)
		fprintf(stderr, "bench: %s failed\n", cmd);
	/* Only now: a signal meanwhile still stops the server itself. */
	pg_master = 0;
	pg_dir[0] = '\0';
}

/* A database of its own for each serve; 0, or -1. */
static inline int pg_create(const char *name)
{
	char conninfo[700], sql[128];
	PGconn *c;
	PGresult *r;
	int ok;

	snprintf(conninfo, sizeof conninfo, "%s dbname=postgres", pg_url);
	c = PQconnectdb(conninfo);
	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "bench: %s", PQerrorMessage(c));
		PQfinish(c);
		return -1;
	}
	snprintf(sql, sizeof sql, "CREATE DATABASE %s", name);
	r = PQexec(c, sql);
	ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	if (!ok)
		fprintf(stderr, "bench: %s: %s", sql, PQerrorMessage(c));
	PQclear(r);
	PQfinish(c);
	return ok ? 0 : -1;
}

/* The server's processes now: the postmaster and its children (the backends, the WAL writer, the
 * checkpointer...), at most max of them, so that their CPU time and
 * fsyncs can be counted with those of the serve they work for. How many,
 * or -1. */
static inline int pg_pids(pid_t *out, int max)
{
	char path[600], buf[512], *p;
	struct dirent *e;
	long master = pg_read_master();
	int n = 0;
	FILE *f;
	DIR *d;

	if (master < 0)
		return -1;
	out[n++] = (pid_t)master;
	if (!(d = opendir("/proc")))
		return n;
	while (n < max && (e = readdir(d))) {
		long pid = strtol(e->d_name, &p, 10), ppid = 0;
		size_t len;
		if (pid <= 0 || *p)
			continue;
		snprintf(path, sizeof path, "/proc/%ld/stat", pid);
		if (!(f = fopen(path, "r")))
			continue;
		len = fread(buf, 1, sizeof buf - 1, f);
		fclose(f);
		buf[len] = '\0';
		/* The parent is the 4th field, after the command in parentheses. */
		if ((p = strrchr(buf, ')')) && sscanf(p + 2, "%*c %ld", &ppid) == 1 && ppid == master)
			out[n++] = (pid_t)pid;
	}
	closedir(d);
	return n;
}

/* A server process's title ("postgres: checkpointer", "postgres: ebb
 * DBNAME [local] idle", "postgres: autovacuum worker DBNAME") into buf;
 * "" when it is gone. */
static inline const char *pg_title(pid_t pid, char *buf, size_t size)
{
	char path[64];
	size_t len = 0;
	FILE *f;

	snprintf(path, sizeof path, "/proc/%d/cmdline", (int)pid);
	if ((f = fopen(path, "r"))) {
		len = fread(buf, 1, size - 1, f);
		fclose(f);
	}
	buf[len] = '\0';
	return buf;
}

/* Whether one of the server's processes is an autovacuum worker now: its
 * passes over a table a burst filled take seconds of a core, the
 * server's maintenance and not what a serve at rest asks of it. */
static inline int pg_autovacuum_running(void)
{
	pid_t pids[256];
	int n = pg_dir[0] ? pg_pids(pids, 256) : 0;
	char title[256];

	for (int i = 0; i < n; i++)
		if (strstr(pg_title(pids[i], title, sizeof title), "autovacuum worker"))
			return 1;
	return 0;
}

/* Whether a server process works for database db: a backend or an
 * autovacuum worker of it, or one that works for all of them (the
 * postmaster, the checkpointer, the WAL writer...); db NULL: every one. */
static inline int pg_works_for(pid_t pid, const char *db)
{
	char title[256], word[80];
	const char *t = pg_title(pid, title, sizeof title);

	if (!db || (strncmp(t, "postgres: ebb ", 14) != 0 && !strstr(t, "autovacuum worker ")))
		return 1;
	snprintf(word, sizeof word, " %s", db);
	return strstr(t, word) != NULL;
}

#endif
