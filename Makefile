# xrcbench. `make run` runs a real benchmark on the sim provider; `make test`
# runs every test. Every provider is built in wherever cgo is: the rdma and
# legacy providers load libibverbs.so.1 at run time, so neither the rdma-core
# headers nor its library are needed to build or to start the binary.

GO      ?= go
CC      ?= cc
# Whether <infiniband/verbs.h> is installed: the compiler's own search path
# decides, through a file that only includes it (see verbs/ctest/have_verbs.c).
# Only what compares with rdma-core needs it: the libibverbs test double
# (make fakeverbs) and the ABI check (verbs/ctest/abi_check.c, make cwarn).
HAVE_VERBS := $(shell $(CC) -E -o /dev/null verbs/ctest/have_verbs.c >/dev/null 2>&1 && echo yes)
# Extra Go build tags (none are needed for any provider).
TAGS    ?=
BIN     := bin/xrcbench
CWARN   := -Wall -Wextra -Werror -std=gnu11

.PHONY: all build run test test-json test-long timing vet cwarn csan lint bench fakeverbs fuzz soak vmtest slurmtest clean tags man completions install dist disttest

all: build

# The revision goes in at link time too: builds with -buildvcs=false (set
# in GOFLAGS on some machines) would otherwise not know what they measure.
VERSION  := $(shell git describe --always --dirty 2>/dev/null)
REVISION := $(shell git rev-parse HEAD 2>/dev/null)
LDFLAGS  := $(if $(VERSION),-X github.com/xrcbench/xrcbench/internal/host.buildVersion=$(VERSION),) \
            $(if $(REVISION),-X main.buildRevision=$(REVISION) -X github.com/xrcbench/xrcbench/internal/host.buildRevision=$(REVISION),)

# -buildmode=pie: a position-independent executable, which the loader
# places at a random address (ASLR), as Debian's hardening asks of every
# binary it ships (lintian: hardening-no-pie); make dist packages this one.
build:
	$(GO) build -tags "$(TAGS)" -buildmode=pie -ldflags "$(LDFLAGS)" -o $(BIN) ./cmd/xrcbench

# man: a page per command (xrcbench.1, xrcbench-run.1, ...) written by the
# binary from its own commands (the hidden `manpages` command), so a page
# says what --help says, and xrcbench-result.5, result.json's format. Dated by the last commit, so the same tree gives
# the same pages.
MANDIR   := build/man
COMPDIR  := build/completions
EPOCH    := $(shell git log -1 --format=%ct 2>/dev/null)
man: build
	rm -rf $(MANDIR)
	$(if $(EPOCH),SOURCE_DATE_EPOCH=$(EPOCH)) ./$(BIN) manpages $(MANDIR)

# completions: the shells' completion scripts, under the names each shell
# looks for (bash's needs the bash-completion package).
completions: build
	mkdir -p $(COMPDIR)
	./$(BIN) completion bash > $(COMPDIR)/xrcbench
	./$(BIN) completion zsh > $(COMPDIR)/_xrcbench
	./$(BIN) completion fish > $(COMPDIR)/xrcbench.fish

# install: the binary, man pages and completions under PREFIX (DESTDIR
# for staging), where man, bash-completion, zsh and fish look.
PREFIX  ?= /usr/local
install: build man completions
	install -D -m 755 $(BIN) $(DESTDIR)$(PREFIX)/bin/xrcbench
	install -d $(DESTDIR)$(PREFIX)/share/man/man1
	install -m 644 $(MANDIR)/*.1 $(DESTDIR)$(PREFIX)/share/man/man1/
	install -d $(DESTDIR)$(PREFIX)/share/man/man5
	install -m 644 $(MANDIR)/*.5 $(DESTDIR)$(PREFIX)/share/man/man5/
	install -D -m 644 $(COMPDIR)/xrcbench $(DESTDIR)$(PREFIX)/share/bash-completion/completions/xrcbench
	install -D -m 644 $(COMPDIR)/_xrcbench $(DESTDIR)$(PREFIX)/share/zsh/vendor-completions/_xrcbench
	install -D -m 644 $(COMPDIR)/xrcbench.fish $(DESTDIR)$(PREFIX)/share/fish/vendor_completions.d/xrcbench.fish
	install -D -m 644 README.md $(DESTDIR)$(PREFIX)/share/doc/xrcbench/README.md
	install -D -m 644 LICENSE $(DESTDIR)$(PREFIX)/share/doc/xrcbench/LICENSE

# dist: build/dist/ gets xrcbench-<version>-linux-<arch>.tar.gz (binary,
# man pages, completions, README, LICENSE), a .deb and an .rpm of the same
# files under /usr, and SHA256SUMS (packaging/dist.sh; nfpm is a tool
# dependency in go.mod, run by go tool: offline after go mod download;
# the packaged binary is stripped). disttest installs the .deb into a clean Debian root and
# uses it there, and reads the .rpm's file list and metadata
# (test/dist/run.sh; needs root, mmdebstrap and rpm, or skips saying why).
dist: build man completions
	GO=$(GO) BIN=$(BIN) packaging/dist.sh

disttest: dist
	test/dist/run.sh build/dist

# run: a real benchmark on the sim device, with a cost model that makes the
# destruction on the last unreg visible (unreg vs unreg_last), into a fixed
# folder overwritten each time. RUN_ARGS go last, so they override
# (make run RUN_ARGS='--duration 1s --warmup 0s' for a quick look).
# Its defaults fit the machine, so it warns of nothing of its own making:
# no more threads than CPUs (2 processes x 1 thread below 4 CPUs, x 2
# from 4), and 6 repetitions, what compare's test and the headline's
# interval of the destruction cost need.
RUN_DIR ?= runs/make-run
RUN_ARGS ?=
NPROC   := $(shell nproc 2>/dev/null || echo 1)
RUN_THREADS := $(if $(filter 1 2 3,$(NPROC)),1,2)
run: build
	./$(BIN) run --provider sim --workload lifecycle --procs 2 --threads $(RUN_THREADS) \
		--duration 1s --warmup 500ms --repetitions 6 --sim-cost reg=2us,unreg=2us,destroy=200us \
		--out $(RUN_DIR) $(RUN_ARGS)
	./$(BIN) report $(RUN_DIR)
	@echo "make run: results in $(RUN_DIR)/: result.json, *.hlog, report.html, summary.md, bench.txt, plots/"

# The C side must be warning-free; compile it once more with -Werror, as cgo
# would, so a warning fails the build here and not only scrolls past. With
# the rdma-core headers, the ABI xrcbench declares itself (verbs/ibv_abi.h)
# is compared with theirs too: verbs/ctest/abi_check.c is static asserts.
cwarn:
	@for f in verbs/*.c; do \
		$(CC) $(CWARN) -O2 -c -o /dev/null -Iverbs $$f || exit 1; \
	done
	@echo "cwarn: C sources compile warning-free with $(CWARN)"
ifeq ($(HAVE_VERBS),yes)
	$(CC) $(CWARN) -c -o /dev/null -Iverbs verbs/ctest/abi_check.c
	@echo "cwarn: verbs/ibv_abi.h agrees with the installed <infiniband/verbs.h> (verbs/ctest/abi_check.c)"
else
	@echo "cwarn: ABI check skipped: <infiniband/verbs.h> not installed (apt-get install libibverbs-dev)"
endif

# The sim core under the sanitizers: threads racing on one device under
# TSan, and the same under ASan+UBSan; with the headers, the rdma and legacy
# providers through the double too (verbs/fakeverbs sancheck).
CSAN_OUT := build/csan
csan:
	@mkdir -p $(CSAN_OUT)
	@for san in thread address,undefined; do \
		rm -rf $(CSAN_OUT)/dev && mkdir -m 700 -p $(CSAN_OUT)/dev && \
		$(CC) $(CWARN) -O1 -g -fsanitize=$$san -fno-sanitize-recover=all -Iverbs \
			-o $(CSAN_OUT)/sim_stress verbs/ctest/sim_stress.c verbs/sim.c verbs/sim_guard.c verbs/batch.c verbs/storm.c -lpthread && \
		echo "csan: -fsanitize=$$san" && \
		$(CSAN_OUT)/sim_stress $(CSAN_OUT)/dev $(CSAN_OUT)/dev/domain || exit 1; \
	done
ifeq ($(HAVE_VERBS),yes)
	$(MAKE) -C verbs/fakeverbs sancheck
endif

# The soak test (make soak) is built only with its tag: vet compiles it
# too, so a change elsewhere cannot leave make soak unbuildable.
vet:
	$(GO) vet -tags "$(TAGS)" ./...
	$(GO) vet -tags "soak $(TAGS)" ./cmd/xrcbench

fakeverbs:
ifeq ($(HAVE_VERBS),yes)
	$(MAKE) -C verbs/fakeverbs
else
	@echo "fakeverbs: skipped: <infiniband/verbs.h> not installed (apt-get install libibverbs-dev)"
endif

# -timeout: a package's tests under -race on a busy shared machine (the
# report package draws every plot of its fixtures) outlast go test's
# default 10 minutes, which then kills a run that was only slow.
#
# gotestsum runs go test and ends with what skipped and why: go test alone
# prints skip reasons only with -v, so a machine without the rdma-core
# headers, Chromium or Node would not see what did not run. The whole
# record (go test -json) is kept in build/test.json. CHILD_TESTS are the
# child sides of multi-process tests: they run only inside the processes
# their parents start (with their own -test.run), so here they are left
# out rather than listed as skipped.
#
# TIMING_TESTS hold known answers in time (an M/D/1 queue's response, a
# storm's makespan, the longest untimed gap, calibrate under a load of its
# own, an oversubscribed create against the same create alone, the sim's
# command queue kept full): beside the other packages' tests they can only skip, naming the
# load, so make test leaves them to make timing, which runs them alone,
# one package at a time and without the race detector, on a machine that
# should be otherwise idle (a busy one still skips them, naming the load).
GOTESTSUM    ?= $(GO) run gotest.tools/gotestsum@v1.13.0
CHILD_TESTS  := TestInDouble|TestDevicesChild|TestConformInDouble|TestConformSilentInDouble
TIMING_TESTS := TestOpenLoopKnownAnswers|TestNoGapAtIntervals|TestOpenLoopEndStall|TestStormKnownAnswer|TestStormPlacedKnownAnswer|TestCalibrateUnderLoad|TestCreateNotInflatedOversubscribed|TestSimCommandQueue
#
# The race detector runs where a race can be: RACE_PKGS are the packages
# whose code starts a goroutine or imports sync or unsafe (internal/layout's
# TestRacePackages holds the list to that). It only sees two goroutines
# touching the same memory, so the other packages' own tests gain nothing
# from it, while it slows the plotting in report's twenty-fold; their code
# still runs under it wherever a package of RACE_PKGS calls it.
RACE_PKGS    := bench cmd/xrcbench internal/facts internal/fleet internal/host internal/qualify internal/runfolder internal/stats/changepoint verbs
MODULE       := github.com/xrcbench/xrcbench
TEST_SKIP    := -skip '^($(CHILD_TESTS)|$(TIMING_TESTS))$$'
test: cwarn vet csan fakeverbs
	@mkdir -p build
	$(GOTESTSUM) --format standard-quiet --jsonfile build/test.json \
		--raw-command -- $(MAKE) -s --no-print-directory test-json
	$(MAKE) fuzz FUZZTIME=quick

# test-json is make test's go test -json, for gotestsum: the packages of
# RACE_PKGS under the race detector, then the others without. The race
# runtime sleeps a second in every process's exit (atexit_sleep_ms, for
# goroutines still running then to race); the tests start their own
# binary as a child hundreds of times, and that sleep was a third of
# make test. GORACE's own options, where set, come after and win.
RACE_ENV = GORACE="atexit_sleep_ms=0 $$GORACE"
NORACE_PKGS = $(filter-out $(addprefix $(MODULE)/,$(RACE_PKGS)),$(shell $(GO) list ./...))
test-json:
	$(RACE_ENV) $(GO) test -json -race -tags "$(TAGS)" -count=1 -timeout 30m $(TEST_SKIP) $(addprefix ./,$(RACE_PKGS)); r=$$?; \
	$(GO) test -json -tags "$(TAGS)" -count=1 -timeout 30m $(TEST_SKIP) $(NORACE_PKGS) || r=1; exit $$r

# test-long: the tests of minutes that make test leaves out (they skip
# there, saying so): a build from a fresh clone with rdma-core hidden, a
# go install through a module proxy, the build without cgo, a history of
# 10,000 runs, a qualification's soak. .ci/run runs it after make test.
LONG_TESTS := TestFreshCloneWithoutRDMACore|TestGoInstallVersion|TestWithoutCgo|TestHistoryTenThousandRuns|TestQualifySoak|TestMemoryIndependentOfRunLength|TestLongSeriesInWindows
test-long: fakeverbs
	@mkdir -p build
	XRCBENCH_TEST_LONG=1 $(RACE_ENV) $(GOTESTSUM) --format standard-quiet --jsonfile build/test-long.json -- \
		-race -tags "$(TAGS)" -count=1 -timeout 45m -run '^($(LONG_TESTS))$$' ./cmd/xrcbench ./internal/stats/changepoint

timing: fakeverbs
	@mkdir -p build
	$(GOTESTSUM) --format standard-quiet --jsonfile build/test-timing.json -- \
		-tags "$(TAGS)" -count=1 -p 1 -timeout 20m -run '^($(TIMING_TESTS))$$' ./bench ./cmd/xrcbench ./verbs

# Native Go fuzz targets, each run for FUZZTIME (make fuzz: 1m each).
# go test -fuzz takes one target of one package at a time. Seeds are in
# each package's testdata/fuzz/; a crasher the fuzzer finds is written
# there too, and stays as a seed once fixed.
# make test runs each for a number of executions instead (FUZZTIME=quick:
# the count after the target's name, 1-4 s each on an idle machine):
# a duration races Go 1.26's fuzzing coordinator at its deadline, which
# then fails with "context deadline exceeded" and no crasher (Go issue
# 75804, fixed in Go 1.27); a count has no deadline to race.
FUZZTIME    ?= 1m
FUZZTARGETS := ./workloads:FuzzParse:3000 ./results:FuzzLoad:2000 ./results:FuzzDecodeHistogram:20000 \
               ./results:FuzzReadTimeline:800 ./report:FuzzExportCSV:1500 ./bench:FuzzFrameReader:15000 ./verbs:FuzzParseCost:15000 \
               ./verbs:FuzzSimDevice:1500 ./internal/device:FuzzDecodeRDMANetlink:20000 \
               ./internal/qualify:FuzzParsePlan:3000 ./internal/fleet:FuzzFleetIdentity:15000 ./internal/fleet:FuzzReadArrivals:800 \
               ./internal/hdrv2:FuzzDecoder:15000
fuzz:
	@for t in $(FUZZTARGETS); do \
		pkg=$${t%%:*}; fn=$${t#*:}; n=$${fn#*:}; fn=$${fn%%:*}; \
		ft=$(FUZZTIME); [ "$$ft" = quick ] && ft=$${n}x; \
		echo "fuzz: $$pkg $$fn for $$ft"; \
		$(GO) test -tags "$(TAGS)" -list "^$$fn\$$" $$pkg | grep -qx "$$fn" || \
			{ echo "fuzz: $$pkg has no $$fn (go test -fuzz would pass, fuzzing nothing)" >&2; exit 1; }; \
		$(GO) test -tags "$(TAGS)" -run '^$$' -fuzz "^$$fn\$$" -fuzztime $$ft $$pkg || exit 1; \
	done

# soak: lifecycle 8x2 on sim with a cost model for SOAK_DURATION (10m),
# sampling every worker's RSS/PSS and the device's live QPs; see
# cmd/xrcbench/soak_test.go for the bounds. Not part of make test.
SOAK_DURATION ?= 10m
soak:
	SOAK_DURATION=$(SOAK_DURATION) $(GO) test -tags "soak $(TAGS)" -run '^TestSoak$$' -count=1 -v -timeout 6h ./cmd/xrcbench

# vmtest: the rdma provider against a real kernel and rdma-core. Boots a
# Debian guest (kernel, rdma-core, soft-RoCE) under QEMU with the rdma
# build of xrcbench made here, and checks devices, conform, run and the
# legacy provider against it (test/vm/run.sh). The guest image is built
# once with mmdebstrap (root) and cached under
# $${XDG_CACHE_HOME:-~/.cache}/xrcbench/vm. Where QEMU, the headers or the
# image cannot be had it prints "vmtest: SKIP: <why>". Not part of make
# test (minutes under TCG); .ci/run runs it after.
vmtest:
	GO=$(GO) test/vm/run.sh

# slurmtest: a fleet run through a real Slurm on this machine: three slurmd
# in network+UTS namespaces, srun -N 3 xrcbench run --fleet on sim with one
# node slower, report --fleet must flag exactly it (test/slurm/run.sh).
# Needs root and slurmctld, slurmd, slurm-client, munge; skips saying why
# without them. Not part of make test (.ci/run runs it after).
slurmtest: build
	test/slurm/run.sh $(BIN)

lint: vet cwarn
	@out=$$(gofmt -l $$(git ls-files '*.go')); [ -z "$$out" ] || { echo "gofmt needed: $$out"; exit 1; }

bench:
	$(GO) test -tags "$(TAGS)" -run '^$$' -bench . -benchmem ./...

# The extra build tags make passes to go (TAGS=...; none by default).
tags:
	@echo "$(TAGS)"

clean:
	rm -rf bin build
