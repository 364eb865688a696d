# ebb's build. Plain GNU Make: the project is one binary and a few test
# programs, and make's pattern rules say that in a page (docs/BUILD.md).
#
#   make                      build build/ebb
#   make test                 unit and integration tests
#   make test SANITIZER=address    the same under ASan (build-address/)
#   make test SANITIZER=undefined  the same under UBSan (build-undefined/)
#   make test-pg              the store's tests and serve's against PostgreSQL
#   make bench                benchmarks, figures into docs/BENCHMARKS.md
#   make deb                  the Debian package, build/ebb_VERSION_ARCH.deb
#   make fuzz                 each fuzz target for FUZZ_SECONDS (build-fuzz/)
#   make fuzz-check           each fuzz target over its corpus, briefly

CC      ?= cc
PKGS    := sqlite3 libevent libmicrohttpd gnutls jansson inih
CFLAGS  ?= -O2 -g
CFLAGS  += -std=c11 -D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L -Isrc -MMD -MP \
           -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes -Wno-missing-field-initializers \
           $(shell pkg-config --cflags $(PKGS) libcurl libpq)
# libcurl is loaded when a client first needs it (src/common/curl_lazy.h),
# libpq when a PostgreSQL store is opened (src/store/pq_lazy.h), so that an
# idle serve on the default store maps neither: only their headers are
# used at build time.
LDLIBS  += $(shell pkg-config --libs $(PKGS)) -lm -ldl -pthread
# Tests and benchmarks may call libcurl and libpq directly.
CURLLIB := $(shell pkg-config --libs libcurl libpq)

ifeq ($(SANITIZER),)
BUILD   ?= build
else ifeq ($(SANITIZER),fuzzer)
# The fuzz targets (tests/fuzz/): the library built by clang with
# libFuzzer's coverage hooks, under ASan and UBSan, any finding fatal.
BUILD   ?= build-fuzz
CC      := clang
CFLAGS  += -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all
LDFLAGS += -fsanitize=address,undefined
else
BUILD   ?= build-$(SANITIZER)
# EBB_SANITIZER: the tests that replay whole traces leave them to the plain pass.
CFLAGS  += -fsanitize=$(SANITIZER) -fno-omit-frame-pointer -fno-sanitize-recover=all -DEBB_SANITIZER
LDFLAGS += -fsanitize=$(SANITIZER)
endif

# Every src/FOLDER/*.c but the command table goes into one archive that
# the binary, the tests and the benchmarks link.
LIB_SRC   := $(filter-out src/cli/main.c,$(wildcard src/*/*.c))
# The dashboard's page, script and style, as C (scripts/embed.sh).
ASSETS    := $(wildcard src/serve/dashboard/*)
LIB_OBJ   := $(LIB_SRC:src/%.c=$(BUILD)/src/%.o) $(BUILD)/gen/dashboard.o
UNIT      := $(patsubst tests/unit/%.c,$(BUILD)/tests/%,$(wildcard tests/unit/test_*.c))
INTEG     := $(patsubst tests/integration/%.c,$(BUILD)/tests/%,$(wildcard tests/integration/test_*.c))
HARNESS   := $(BUILD)/tests/harness.o $(BUILD)/tests/receiver.o $(BUILD)/tests/cdp.o
BENCH     := $(patsubst bench/%.c,$(BUILD)/bench/%,$(wildcard bench/*.c))
FUZZ      := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/*.c))
FUZZ_SECONDS ?= 60
# The Python client's suites (clients/python, docs/PYTHON.md): each file
# runs its tests against the ebb built here and prints cmocka's lines.
PYTHON_TESTS := $(wildcard tests/python/test_*.py)

all: $(BUILD)/ebb

# -MMD -MP: each object's .d file lists the headers it read, so a header
# change rebuilds what includes it and nothing else.
$(BUILD)/src/%.o: src/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/gen/dashboard.c: $(ASSETS) scripts/embed.sh
	@mkdir -p $(@D)
	sh scripts/embed.sh $(ASSETS) > $@

$(BUILD)/gen/dashboard.o: $(BUILD)/gen/dashboard.c
	$(CC) $(CFLAGS) -c -o $@ $<

# Made anew each time: `ar r` keeps the members it is not given, and the
# object of a renamed or removed source would stay in it and be linked.
$(BUILD)/libebb.a: $(LIB_OBJ)
	rm -f $@
	$(AR) rcs $@ $^

$(BUILD)/ebb: $(BUILD)/src/cli/main.o $(BUILD)/libebb.a
	$(CC) $(LDFLAGS) -o $@ $^ $(LDLIBS)

$(HARNESS): $(BUILD)/tests/%.o: tests/%.c | $(BUILD)/tests
	$(CC) $(CFLAGS) -c -o $@ $<

$(BUILD)/tests/%: tests/unit/%.c $(BUILD)/libebb.a $(HARNESS) | $(BUILD)/tests
	$(CC) $(CFLAGS) -Itests $(LDFLAGS) -o $@ $< $(HARNESS) $(BUILD)/libebb.a $(LDLIBS) $(CURLLIB) -lcmocka

$(BUILD)/tests/%: tests/integration/%.c $(BUILD)/libebb.a $(HARNESS) | $(BUILD)/tests
	$(CC) $(CFLAGS) -Itests $(LDFLAGS) -o $@ $< $(HARNESS) $(BUILD)/libebb.a $(LDLIBS) $(CURLLIB) -lcmocka

$(BUILD)/bench/%: bench/%.c $(BUILD)/libebb.a | $(BUILD)/bench
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(BUILD)/libebb.a $(LDLIBS) $(CURLLIB) -lpthread $(BENCH_LIBS)

# The cycle benchmark drives Redis beside ebb through hiredis, where it is
# installed (scripts/deps.sh); without it, it measures ebb alone. beanstalkd
# and PostgreSQL it looks for when it runs, and leaves out, saying so, where
# they are not installed.
HIREDIS := $(shell pkg-config --exists hiredis 2>/dev/null && echo yes)
$(BUILD)/bench/cycle: CFLAGS += $(if $(HIREDIS),-DBENCH_HIREDIS)
$(BUILD)/bench/cycle: BENCH_LIBS := $(if $(HIREDIS),$(shell pkg-config --libs hiredis))
$(BUILD)/bench/cycle: bench/redis.h

# The boot test's stand-in for EC2's metadata service (tests/boot/run.sh).
$(BUILD)/tests/imds: tests/boot/imds.c | $(BUILD)/tests
	$(CC) $(CFLAGS) $(LDFLAGS) -o $@ $< $(LDLIBS)

$(BUILD)/fuzz/%: tests/fuzz/%.c $(BUILD)/libebb.a | $(BUILD)/fuzz
	$(CC) $(CFLAGS) $(LDFLAGS) -fsanitize=fuzzer -o $@ $< $(BUILD)/libebb.a $(LDLIBS)

$(BUILD)/tests $(BUILD)/bench $(BUILD)/fuzz:
	mkdir -p $@

# The benchmarks are built with the tests, so that a change cannot break
# them unseen; make bench runs them.
test: $(BUILD)/ebb $(UNIT) $(INTEG) $(BENCH) $(BUILD)/tests/imds
	EBB_BIN=$(abspath $(BUILD)/ebb) EBB_SRC=$(CURDIR) ./tests/run.sh $(UNIT) $(INTEG) $(PYTHON_TESTS)

# The tests that open a store or start serve, again against a throwaway
# PostgreSQL (scripts/test-pg.sh). Left out: the SQLite schema's own test,
# and those of commands that open no store (sim, tune, the CLI docs) or
# whose store is no part of what they check (the dashboard in Chromium).
PG_TESTS := $(filter-out %/test_sqlite_migrate %/test_sim_cli %/test_tune_cli %/test_cli_doc %/test_dashboard, \
	$(patsubst %.c,$(BUILD)/tests/%,$(notdir $(shell grep -lE 'harness_(serve|store)' tests/unit/*.c tests/integration/*.c))))
test-pg: $(BUILD)/ebb $(PG_TESTS)
	EBB_BIN=$(abspath $(BUILD)/ebb) EBB_SRC=$(CURDIR) ./scripts/test-pg.sh $(PG_TESTS)

bench: $(BUILD)/ebb $(BENCH)
	EBB_BIN=$(abspath $(BUILD)/ebb) ./bench/run.sh $(BUILD)/bench

# The package's ebb is built apart, in $(BUILD)/deb, with Debian's
# hardening flags (dpkg-buildflags, all features on): fortified libc
# calls, stack protector, relocations read-only and bound at load time.
# They go through the environment: on make's command line CFLAGS would
# replace the flags the Makefile adds to it. It is linked against an
# unversioned stub of jansson (packaging/link-stub.sh), so that it also
# runs with Ubuntu 22.04's jansson, which has no symbol versions; linked
# afresh each time, a second, so that it is never one linked otherwise.
deb:
	./packaging/link-stub.sh "$$(pkg-config --variable=libdir jansson)/libjansson.so" $(BUILD)/deb/stub
	rm -f $(BUILD)/deb/ebb
	export DEB_BUILD_MAINT_OPTIONS=hardening=+all; \
	CFLAGS="$$(dpkg-buildflags --get CFLAGS) $$(dpkg-buildflags --get CPPFLAGS)" \
	LDFLAGS="-L$(abspath $(BUILD)/deb/stub) $$(dpkg-buildflags --get LDFLAGS)" \
	$(MAKE) SANITIZER= BUILD=$(BUILD)/deb $(BUILD)/deb/ebb
	./packaging/build-deb.sh $(BUILD)/deb/ebb $(BUILD)

# The fuzz targets are built in their own make, with SANITIZER=fuzzer
# (clang, libFuzzer, ASan and UBSan), whatever SANITIZER this one has.
# fuzz: each target for FUZZ_SECONDS, new inputs kept in build-fuzz/;
# fuzz-check: each over its committed corpus, then a few seconds more.
fuzz-targets: $(FUZZ)

fuzz:
	$(MAKE) SANITIZER=fuzzer fuzz-targets
	./tests/fuzz/run.sh build-fuzz/fuzz $(FUZZ_SECONDS)

fuzz-check:
	$(MAKE) SANITIZER=fuzzer fuzz-targets
	./tests/fuzz/run.sh build-fuzz/fuzz 3

clean:
	rm -rf build build-address build-undefined build-fuzz

.PHONY: all test test-pg bench deb clean fuzz fuzz-check fuzz-targets
.SECONDARY:

-include $(LIB_OBJ:.o=.d) $(BUILD)/src/cli/main.d $(HARNESS:.o=.d) $(UNIT:=.d) $(INTEG:=.d) $(BENCH:=.d) $(FUZZ:=.d)
