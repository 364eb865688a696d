#!/bin/sh
# Runs the given test programs against PostgreSQL: starts a throwaway
# PostgreSQL 15 (scripts/pg.sh), runs them through tests/run.sh with
# EBB_TEST_STORE=postgres, and stops it, whatever happened. `make test-pg`
# passes the programs that open a store or start serve; the tests of what
# only SQLite has skip themselves, saying why. Ends with tests/run.sh's
# "N passed, M failed" line, and the time the pass took.
#
#   EBB_BIN=$PWD/build/ebb EBB_SRC=$PWD scripts/test-pg.sh build/tests/test_store_jobs ...
set -u
cd "$(dirname "$0")/.." || exit 1

dir=$(./scripts/pg.sh start) || exit 1
trap './scripts/pg.sh stop "$dir"' EXIT INT TERM
start=$(date +%s)
EBB_TEST_STORE=postgres EBB_TEST_PG=$(./scripts/pg.sh url "$dir") ./tests/run.sh "$@"
status=$?
echo "postgres pass: $(($(date +%s) - start)) s"
exit $status
