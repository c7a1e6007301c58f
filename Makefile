# walscale: PGXS build of the extension, and the entry points that first
# build the patched server it needs (make demo, make test, make bench).
# make help lists the targets.

MODULE_big = walscale
OBJS = walscale.o walscale_worker.o walscale_advice.o walscale_auto.o walscale_auto_rules.o \
	walscale_cpus.o walscale_waits.o walscale_fastpath.o walscale_counters.o walscale_settings.o \
	walscale_common.o
EXTENSION = walscale
# The extension's version, written here alone: the module is built with it
# (PG_MODULE_MAGIC_EXT), and walscale.control's default_version and the last
# upgrade script must match it, which every build checks (check-version).
# The control file is checked rather than generated: PGXS installs it from
# the source directory, so one generated in pg_buildext's build directory
# would not be installed.
EXTVERSION = 1.5
PG_CPPFLAGS = -DWALSCALE_VERSION=\"$(EXTVERSION)\"
# as pg_stat_statements: the first version's script and the upgrades, which
# CREATE EXTENSION runs in turn to reach default_version
DATA = walscale--1.0.sql walscale--1.0--1.1.sql walscale--1.1--1.2.sql walscale--1.2--1.3.sql walscale--1.3--1.4.sql walscale--1.4--1.5.sql
PGFILEDESC = "walscale - WAL insertion-lock and fast-path lock scaling"

REGRESS = walscale
REGRESS_OPTS = --temp-instance=./tmp_check_regress --temp-config=$(srcdir)/walscale.conf
TAP_TESTS = 1

# As every PGXS extension: the first pg_config in PATH, or PG_CONFIG=.
# The repository's scripts pass the pg_config of the server they build
# (make postgres links the patched one at .pg/walscale/bin/pg_config).
PG_CONFIG ?= pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)
ifneq ($(PGXS),)
include $(PGXS)

all: check-version
# before anything is compiled: a server walscale does not build against
$(OBJS): | check-major
.PHONY: check-version check-major
check-major:
	@case '$(MAJORVERSION)' in 17|18) ;; *) \
		echo "walscale: $(PG_CONFIG) is PostgreSQL $(MAJORVERSION); walscale builds against 17 and 18." >&2; \
		echo "Set PG_CONFIG to such a server's pg_config, or run make postgres and use PG_CONFIG=.pg/walscale/bin/pg_config." >&2; \
		exit 1;; esac
check-version:
	@v=$$(sed -n "s/^default_version *= *'\([^']*\)'.*/\1/p" '$(srcdir)/$(EXTENSION).control'); \
	[ "$$v" = '$(EXTVERSION)' ] || { \
		echo "walscale: $(EXTENSION).control's default_version is '$$v', the Makefile's EXTVERSION $(EXTVERSION)" >&2; \
		exit 1; }
	@case ' $(DATA) ' in *--$(EXTVERSION).sql' '*) ;; *) \
		echo "walscale: no script in DATA reaches version $(EXTVERSION)" >&2; \
		exit 1;; esac
else
all install installcheck:
	@echo "walscale: no pg_config: PG_CONFIG is '$(PG_CONFIG)', which does not run." >&2
	@echo "Put the server's pg_config first in PATH, or set PG_CONFIG (make install PG_CONFIG=/usr/lib/postgresql/18/bin/pg_config)." >&2
	@echo "To build the patched server: make postgres, then PG_CONFIG=.pg/walscale/bin/pg_config." >&2
	@exit 1
endif

.PHONY: help
help:
	@echo 'walscale: make TARGET'
	@echo '  (default)           build the module against PG_CONFIG (default: the pg_config in PATH)'
	@echo '  install             install it into that server'
	@echo '  installcheck        the pg_regress and TAP suites on temporary instances of that server'
	@echo '  postgres            build the patched and the stock PostgreSQL into .pg/ (cached)'
	@echo '  demo                a throwaway cluster with walscale: pgbench at 2 and 64 locks, then auto mode'
	@echo '  test                build what is missing, run every suite (docs/testing.md)'
	@echo '  test-postgres       PostgreSQL'"'"'s own suites with walscale at extreme settings (SUITES_MODE=)'
	@echo '  test-series         each patch of the core series on its own: build, regress, isolation'
	@echo '  deb                 Debian packages of the patched and stock server and the extension (root)'
	@echo '  test-deb            install and try those packages in a clean chroot (root)'
	@echo '  test-deb-tools      autopkgtest and piuparts on those packages (root)'
	@echo '  bench               benchmarks on this machine (BENCH_MODE=quick|full, bench/README.md)'
	@echo '  bench-instructions  the instruction counts of make bench alone'
	@echo '  bench-cachelines    shared cache lines per operation and flush latency alone'
	@echo '  bench-handover      a spinlock'"'"'s hand-over between cores alone (seconds; the simulator'"'"'s xfer and beta)'
	@echo '  bench-flush         the flush of one traced committer among 1 to 64 (bench/flush-contended.sh)'
	@echo '  sweep               do more insertion locks help on this server? (a scratch cluster)'
	@echo '  simulate            auto mode in a model of a many-core server (sim/README.md)'
	@echo '  mutate              mutation testing (MUTATIONS=, mutations/README.md)'
	@echo '  indent              format the C code with pgindent'
	@echo '  clean               remove the module'"'"'s build files'

.PHONY: postgres demo test test-postgres test-series bench bench-instructions sweep indent mutate simulate deb test-deb test-deb-tools
postgres:
	scripts/build-postgres.sh
	scripts/build-postgres.sh --stock

demo:
	scripts/demo.sh

test:
	scripts/test.sh

# Debian packages: the patched and the stock postgresql-18 and
# postgresql-18-walscale for bookworm, or DEB_SUITE=trixie for trixie;
# DEB_SUITE=trixie PG_MAJOR=17 builds the postgresql-17 set for trixie
# (docs/packages.md).  test-deb installs and tries them in
# a clean chroot of that suite.  Both need root.
deb:
	scripts/build-deb.sh

test-deb:
	scripts/test-deb.sh

# Debian's autopkgtest (debian/tests) and piuparts on the same packages
test-deb-tools:
	scripts/test-deb-tools.sh

# PostgreSQL's own suites against the patched server with walscale at extreme
# settings; make test runs the part that fits CI (see scripts/test-postgres.sh)
test-postgres:
	scripts/test-postgres.sh $(SUITES_MODE)

# each patch of the core series on its own: builds, regress and isolation
test-series:
	scripts/test-series.sh

bench:
	bench/run.sh $(BENCH_MODE)

# the instruction counts of make bench alone, in a minute or two
bench-instructions:
	bench/instructions-only.sh

# shared cache lines per operation and cross-core flush latency (part of
# make bench), alone
.PHONY: bench-cachelines
bench-cachelines:
	bench/cachelines.sh

# a spinlock's hand-over between cores (part of make bench), alone: the
# simulator's xfer, and its beta on 3 CPUs or more
.PHONY: bench-handover
bench-handover:
	bench/handover.sh
# the flush (WaitXLogInsertionsToFinish) of one committer traced by callgrind
# among 1, 16 and 64 committers spread over the lock groups, steady and
# after a checkpoint, beside stock (not part of make bench)
.PHONY: bench-flush
bench-flush:
	bench/flush-contended.sh

# Do more WAL insertion locks help on this machine?  The seed workloads at
# 8, 16, 32 ... locks and in auto mode on a scratch cluster (bench/sweep.sh)
sweep:
	bench/sweep.sh

indent:
	scripts/pgindent.sh

# The simulator (sim/README.md): validates its model against published
# measurements and runs auto mode's decision code in it; needs no server
# sim/build.sh takes the PG_CONFIG given to make, or the patched server's
simulate:
	sim/run.sh

# Mutation testing (not run in CI): MUTATIONS="mutations/01-x.mutation ..."
# runs some, default all; see mutations/README.md
mutate:
	scripts/mutate.sh $(MUTATIONS)
