/* SQLite's write-ahead log, copied back into the database file off
 * serve's thread. SQLite's automatic checkpoint runs inside the commit
 * that takes the log past 1,000 pages: it writes those pages into ebb.db
 * and syncs it, 10 to 35 ms on serve's one thread. Here a thread of its
 * own, with its own connection, does that copy; serve's commits only wake
 * it. See docs/ARCHITECTURE.md, "SQLite's log". */
#ifndef EBB_STORE_SQLITE_WAL_H
#define EBB_STORE_SQLITE_WAL_H

#include <sqlite3.h>
#include <stddef.h>

/* The log's length, in pages, at which the thread copies it back: SQLite's
 * own default for its automatic checkpoint. */
#define SQLITE_WAL_PAGES 1000

struct sqlite_wal;

/* How the copies went: by the thread, and by serve's thread itself (only
 * when the log reached three times SQLITE_WAL_PAGES without the thread
 * getting it restarted: see sqlite_wal.c), with the most pages one of
 * serve's copies had left to copy. */
struct sqlite_wal_stats {
	long thread_copies;
	long serve_copies;
	int serve_pages_most;
};

/* Takes over db's checkpoints (its automatic one is turned off) with a
 * thread that opens path, the same database, on a connection of its own.
 * NULL, with the reason in err, if the thread or its connection cannot
 * start. */
struct sqlite_wal *sqlite_wal_start(sqlite3 *db, const char *path, char *err, size_t errsize);

/* Ends the thread and closes its connection; db checkpoints as SQLite's
 * default again (its close copies the rest). */
void sqlite_wal_stop(struct sqlite_wal *w);

void sqlite_wal_stats(struct sqlite_wal *w, struct sqlite_wal_stats *out);

#endif
