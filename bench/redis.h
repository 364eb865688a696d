/* Redis beside ebb in the cycle benchmark (bench/cycle.c): a throw-away
 * `redis-server` (Debian's, scripts/deps.sh installs it) on a free
 * loopback port in a temporary directory, durable as ebb is (append-only
 * file, fsync before every reply: `appendfsync always`), and the job
 * cycle of a Redis list queue, driven through hiredis by the same client
 * threads: LPUSH the job, BLMOVE it to a processing list (the lease, a
 * blocking pop that survives the worker's crash), LREM it from there (the
 * complete). Header-only like bench.h; built only where hiredis is
 * (the Makefile defines BENCH_HIREDIS). */
#ifndef EBB_BENCH_REDIS_H
#define EBB_BENCH_REDIS_H

#include <hiredis/hiredis.h>

#include "bench.h"

struct redis {
	pid_t pid;
	int port;
	char dir[64];
};

/* Whether a PING on a new connection is answered. */
static inline int redis_ping(int port)
{
	redisContext *c = redisConnect("127.0.0.1", port);
	redisReply *r = c && !c->err ? redisCommand(c, "PING") : NULL;
	int ok = r && r->type == REDIS_REPLY_STATUS;

	if (r)
		freeReplyObject(r);
	if (c)
		redisFree(c);
	return ok;
}

/* Starts redis-server; 0 once it answers, -1 (its log on stderr) if it
 * does not within 10 s. */
static inline int redis_start(struct redis *rs)
{
	const char *tmp = getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp";
	char conf[128], log[128], line[512];
	double deadline;
	FILE *f;

	memset(rs, 0, sizeof *rs);
	snprintf(rs->dir, sizeof rs->dir, "%s/ebb-bench-redis.XXXXXX", tmp);
	if (!mkdtemp(rs->dir) || (rs->port = free_port()) < 0) {
		perror("bench: temporary directory or port for redis");
		return -1;
	}
	snprintf(conf, sizeof conf, "%s/redis.conf", rs->dir);
	snprintf(log, sizeof log, "%s/redis.log", rs->dir);
	if (!(f = fopen(conf, "w")))
		return -1;
	/* No snapshots: the append-only file is the durability, fsynced
	 * before each write is acknowledged. */
	fprintf(f, "bind 127.0.0.1\nport %d\ndir %s\nlogfile %s\ndaemonize no\nsave \"\"\n"
		   "appendonly yes\nappendfsync always\nmaxclients 4096\n",
		rs->port, rs->dir, log);
	fclose(f);
	rs->pid = fork();
	if (rs->pid == 0) {
		int fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600);
		dup2(fd, 1);
		dup2(fd, 2);
		execlp("redis-server", "redis-server", conf, (char *)NULL);
		fprintf(stderr, "exec redis-server: %s (scripts/deps.sh installs redis-server)\n", strerror(errno));
		_exit(127);
	}
	for (deadline = now_s() + 10; now_s() < deadline; sleep_s(0.01)) {
		int status;
		if (waitpid(rs->pid, &status, WNOHANG) == rs->pid) {
			rs->pid = 0;
			break;
		}
		if (redis_ping(rs->port))
			return 0;
	}
	fprintf(stderr, "bench: redis-server did not start on port %d; its log:\n", rs->port);
	if ((f = fopen(log, "r"))) {
		while (fgets(line, sizeof line, f))
			fputs(line, stderr);
		fclose(f);
	}
	return -1;
}

static inline void redis_stop(struct redis *rs)
{
	if (rs->pid > 0) {
		kill(rs->pid, SIGTERM);
		waitpid(rs->pid, NULL, 0);
		rs->pid = 0;
	}
	if (rs->dir[0])
		remove_tree(rs->dir);
	rs->dir[0] = '\0';
}

/* One client's connection. */
struct redis_client {
	redisContext *c;
	long next_id; /* for unique job bodies */
	int n;        /* the client's number */
	char error[256];
};

static inline int redis_client_open(struct redis_client *rc, int port, int n)
{
	rc->c = redisConnect("127.0.0.1", port);
	rc->n = n;
	rc->next_id = 0;
	if (!rc->c || rc->c->err) {
		snprintf(rc->error, sizeof rc->error, "connect: %s", rc->c ? rc->c->errstr : "out of memory");
		return -1;
	}
	return 0;
}

static inline void redis_client_close(struct redis_client *rc)
{
	if (rc->c)
		redisFree(rc->c);
	rc->c = NULL;
}

/* One LPUSH, BLMOVE, LREM: 1 when a job was completed, 0 when the move
 * found none within its wait, -1 on an error (in rc->error). */
static inline int redis_cycle(struct redis_client *rc)
{
	char job[96];
	redisReply *r;
	int done;

	/* A job as small as ebb's: an id and a command. */
	snprintf(job, sizeof job, "{\"id\":\"%d-%ld\",\"command\":[\"true\"]}", rc->n, rc->next_id++);
	if (!(r = redisCommand(rc->c, "LPUSH ebb:queue %s", job)) || r->type != REDIS_REPLY_INTEGER)
		goto failed;
	freeReplyObject(r);
	if (!(r = redisCommand(rc->c, "BLMOVE ebb:queue ebb:processing RIGHT LEFT 5")))
		goto failed;
	if (r->type == REDIS_REPLY_NIL) {
		freeReplyObject(r);
		return 0;
	}
	if (r->type != REDIS_REPLY_STRING)
		goto failed;
	snprintf(job, sizeof job, "%s", r->str);
	freeReplyObject(r);
	if (!(r = redisCommand(rc->c, "LREM ebb:processing 1 %s", job)) || r->type != REDIS_REPLY_INTEGER)
		goto failed;
	done = r->integer == 1;
	freeReplyObject(r);
	if (!done)
		snprintf(rc->error, sizeof rc->error, "LREM found no %s", job);
	return done ? 1 : -1;
failed:
	snprintf(rc->error, sizeof rc->error, "%s", r && r->type == REDIS_REPLY_ERROR ? r->str : rc->c->errstr);
	if (r)
		freeReplyObject(r);
	return -1;
}

#endif
