# walscale: PGXS build of the extension, and the entry points that first
# build the patched server it needs (make demo, make test, make bench).

MODULE_big = walscale
OBJS = walscale.o walscale_worker.o walscale_advice.o walscale_auto.o walscale_auto_rules.o \
	walscale_cpus.o walscale_waits.o walscale_fastpath.o walscale_counters.o walscale_common.o
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

# The patched server that scripts/build-postgres.sh links into .pg/.
PG_CONFIG ?= $(CURDIR)/.pg/walscale/bin/pg_config
PGXS := $(shell $(PG_CONFIG) --pgxs 2>/dev/null)
ifneq ($(PGXS),)
include $(PGXS)

all: check-version
.PHONY: check-version
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
	@echo "walscale: no patched PostgreSQL at $(PG_CONFIG)." >&2
	@echo "Run scripts/build-postgres.sh (or make demo / make test), or set PG_CONFIG." >&2
	@exit 1
endif

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
# (see README, Install from packages).  test-deb installs and tries them in
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

# Do more WAL insertion locks help on this machine?  The seed workloads at
# 8, 16, 32 ... locks and in auto mode on a scratch cluster (bench/sweep.sh)
sweep:
	bench/sweep.sh

indent:
	scripts/pgindent.sh

# The simulator (sim/README.md): validates its model against published
# measurements and runs auto mode's decision code in it; needs no server
simulate:
	PG_CONFIG=$(PG_CONFIG) sim/run.sh

# Mutation testing (not run in CI): MUTATIONS="mutations/01-x.mutation ..."
# runs some, default all; see mutations/README.md
mutate:
	scripts/mutate.sh $(MUTATIONS)
