/* libpq, loaded when a PostgreSQL store is first opened (common/lazy_lib.h):
 * with the embedded SQLite store, the default, no ebb process maps libpq
 * and its dependencies (GSSAPI, LDAP, TLS). Include this instead of
 * <libpq-fe.h>: the PQ* calls below then go through the loaded table, and
 * the call sites read as plain libpq. Call pq_lib_ready() before the first
 * connection; a PGconn only exists once it said yes. */
#ifndef EBB_PQ_LAZY_H
#define EBB_PQ_LAZY_H

#include <stddef.h>

#include <libpq-fe.h>

/* Each pointer has the type of the libpq function it stands for, taken
 * from libpq-fe.h itself, so a signature cannot be copied wrong. */
#define PQ_FN(name) __typeof__(PQ##name) *name
struct pq_lib {
	PQ_FN(connectdb);
	PQ_FN(connectdbParams);
	PQ_FN(finish);
	PQ_FN(reset);
	PQ_FN(status);
	PQ_FN(db);
	PQ_FN(host);
	PQ_FN(errorMessage);
	PQ_FN(setNoticeProcessor);
	PQ_FN(exec);
	PQ_FN(execParams);
	PQ_FN(prepare);
	PQ_FN(execPrepared);
	PQ_FN(resultStatus);
	PQ_FN(resultErrorField);
	PQ_FN(cmdStatus);
	PQ_FN(cmdTuples);
	PQ_FN(ntuples);
	PQ_FN(nfields);
	PQ_FN(fname);
	PQ_FN(getvalue);
	PQ_FN(getlength);
	PQ_FN(getisnull);
	PQ_FN(clear);
	PQ_FN(enterPipelineMode);
	PQ_FN(exitPipelineMode);
	PQ_FN(pipelineSync);
	PQ_FN(sendQueryParams);
	PQ_FN(sendQueryPrepared);
	PQ_FN(getResult);
	PQ_FN(flush);
	PQ_FN(socket);
	PQ_FN(consumeInput);
	PQ_FN(isBusy);
	PQ_FN(notifies);
	PQ_FN(freemem);
};
#undef PQ_FN

/* 0 when libpq is loaded (the first call loads it); -1 with the reason in
 * err ("postgres: cannot load libpq.so.5: ..."). */
int pq_lib_ready(char *err, size_t errsize);
const struct pq_lib *pq_lib(void);

#define PQconnectdb (pq_lib()->connectdb)
#define PQconnectdbParams (pq_lib()->connectdbParams)
#define PQfinish (pq_lib()->finish)
#define PQreset (pq_lib()->reset)
#define PQstatus (pq_lib()->status)
#define PQdb (pq_lib()->db)
#define PQhost (pq_lib()->host)
#define PQerrorMessage (pq_lib()->errorMessage)
#define PQsetNoticeProcessor (pq_lib()->setNoticeProcessor)
#define PQexec (pq_lib()->exec)
#define PQexecParams (pq_lib()->execParams)
#define PQprepare (pq_lib()->prepare)
#define PQexecPrepared (pq_lib()->execPrepared)
#define PQresultStatus (pq_lib()->resultStatus)
#define PQresultErrorField (pq_lib()->resultErrorField)
#define PQcmdStatus (pq_lib()->cmdStatus)
#define PQcmdTuples (pq_lib()->cmdTuples)
#define PQntuples (pq_lib()->ntuples)
#define PQnfields (pq_lib()->nfields)
#define PQfname (pq_lib()->fname)
#define PQgetvalue (pq_lib()->getvalue)
#define PQgetlength (pq_lib()->getlength)
#define PQgetisnull (pq_lib()->getisnull)
#define PQclear (pq_lib()->clear)
#define PQenterPipelineMode (pq_lib()->enterPipelineMode)
#define PQexitPipelineMode (pq_lib()->exitPipelineMode)
#define PQpipelineSync (pq_lib()->pipelineSync)
#define PQsendQueryParams (pq_lib()->sendQueryParams)
#define PQsendQueryPrepared (pq_lib()->sendQueryPrepared)
#define PQgetResult (pq_lib()->getResult)
#define PQflush (pq_lib()->flush)
#define PQsocket (pq_lib()->socket)
#define PQconsumeInput (pq_lib()->consumeInput)
#define PQisBusy (pq_lib()->isBusy)
#define PQnotifies (pq_lib()->notifies)
#define PQfreemem (pq_lib()->freemem)

#endif
