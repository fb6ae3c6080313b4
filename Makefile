# numaplace — build, test, bench.
#
#   make            library, daemon, CLI (gcc by default; CC=clang works too)
#   make deps       install build/test dependencies with apt-get (idempotent)
#   make install    the programs, unit, hooks.d files, containerd's NRI
#                   plugin (/opt/nri/bin, /etc/nri/conf.json), man pages, completion
#                   (PREFIX=/usr/local, DESTDIR=; see "make install" below);
#                   make uninstall removes them
#   make deb        the Debian package, BUILD/deb/numaplace_VERSION_ARCH.deb
#   make check      build with gcc and clang, unit + vector tests, sanitizers,
#                   the BPF programs on this kernel, each fuzz harness for
#                   FUZZ_SECONDS (10), then the VM end-to-end tests
#   make fuzz       the libFuzzer harnesses (FUZZ_SECONDS=3600 for a long run,
#                   FUZZ_JOBS=N at a time, FUZZ_NICE=N)
#   make bench      benchmarks (figures printed, nothing asserted)
#   make bench-outcome  what numaplace buys a latency-critical service on a
#                   node full of noise, in the systemd VM (bench/outcome;
#                   the uncontended layout, 5 rounds: 16 minutes from a
#                   fresh clone on 2 cores; OUTCOME_ARGS='--layouts
#                   "uncontended oversubscribed"' adds the comparative
#                   layout, about an hour more; see docs/outcome.md;
#                   results in build/outcome/)
#   make demo       the narrated VM scenario (see README)
#   make chaos      everything at once in the systemd VM, invariants checked
#                   each second (CHAOS_MINUTES=30, CHAOS_TOPOLOGY="2node
#                   4node", CHAOS_SEED= to replay; results in build/chaos/)

CC ?= gcc
BUILD ?= build
V ?= 0
Q := $(if $(filter 1,$(V)),,@)

PKGS := jansson hwloc libsystemd libbpf libmicrohttpd yaml-0.1
PKG_CFLAGS := $(shell pkg-config --cflags $(PKGS) 2>/dev/null)
PKG_LIBS := $(shell pkg-config --libs $(PKGS) 2>/dev/null)

WARN := -Wall -Wextra -Werror -Wshadow -Wstrict-prototypes \
	-Wmissing-prototypes -Wno-missing-field-initializers
CFLAGS ?= -O2 -g
# Required flags live apart from CFLAGS so that `make CFLAGS=...` (as
# check-asan does) adds to them instead of replacing them.
NP_CFLAGS := -std=gnu11 $(WARN) -D_GNU_SOURCE -Iinclude -Iuserspace $(PKG_CFLAGS)
# Tests and benchmarks also see their support code.
TEST_CFLAGS := -Itests/support
NP_LDLIBS := $(PKG_LIBS) -lm

# BPF: clang -> bpftool gen object -> bpftool gen skeleton (the
# libbpf-bootstrap pipeline). vmlinux.h comes from the build machine's BTF;
# CO-RE relocates it on the target kernel (6.18-generated works on 6.1).
CLANG ?= clang
BPFTOOL ?= bpftool
VMLINUX_BTF ?= /sys/kernel/btf/vmlinux
ARCH := $(shell uname -m | sed 's/x86_64/x86/;s/aarch64/arm64/')
BPF_BUILD := $(BUILD)/bpf
# Let -target bpf find asm/types.h and friends.
CLANG_BPF_SYS_INCLUDES := $(shell $(CLANG) -v -E - </dev/null 2>&1 | \
	sed -n '/<...> search starts here:/,/End of search list./{ s| \(/.*\)|-idirafter \1|p }')
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	-Iinclude -Ibpf -I$(BPF_BUILD) $(CLANG_BPF_SYS_INCLUDES)
SKEL := $(BPF_BUILD)/numaplace.skel.h
NP_CFLAGS += -I$(BPF_BUILD)

# `make` alone builds `all` (the version header's rule below comes first)
.DEFAULT_GOAL := all

# The version (tools/version.sh: from git, or the VERSION file of a
# tarball) in a generated header, BUILD/gen/np_version.h. Made at every
# make, but rewritten only when the version changed, so that the few
# objects that include it (numaplace/version.h) are rebuilt only then.
VERSION_H := $(BUILD)/gen/np_version.h
NP_CFLAGS += -I$(BUILD)/gen
$(VERSION_H): FORCE
	@mkdir -p $(dir $@)
	$(Q)tools/version.sh --header >$@.tmp
	$(Q)if cmp -s $@.tmp $@; then rm -f $@.tmp; else mv $@.tmp $@; fi
.PHONY: FORCE
FORCE:

# The library, one folder per part (docs/architecture.md). Each folder
# is built into its own archive; programs link them in layer order, highest
# first, so a call against the arrows (engine -> daemon, say) does not link.
LAYERS := daemon enforce observe state cgroup topology basic engine
MAINS := userspace/daemon/numaplaced.c
$(foreach l,$(LAYERS),$(eval $(l)_SRCS := $(filter-out $(MAINS),$(wildcard userspace/$(l)/*.c userspace/$(l)/*/*.c))))
$(foreach l,$(LAYERS),$(eval $(l)_LIB := $(BUILD)/libnp-$(l).a))
LAYER_LIBS := $(foreach l,$(LAYERS),$($(l)_LIB))
LIB_SRCS := $(foreach l,$(LAYERS),$($(l)_SRCS))
LIB_OBJS := $(LIB_SRCS:%.c=$(BUILD)/%.o)
# Everything in one archive, for tests and benchmarks.
LIB := $(BUILD)/libnumaplace.a

CLI_SRCS := $(filter-out tools/oci_hook_main.c,$(wildcard tools/*.c))
CLI_OBJS := $(CLI_SRCS:%.c=$(BUILD)/%.o)
# The OCI hook as a program of its own: `numaplace oci-hook` linked with
# jansson and libc only (the archives give it only the objects it calls;
# one that needs hwloc, libbpf or libsystemd makes its link fail).
HOOK_OBJS := $(patsubst %.c,$(BUILD)/%.o,tools/oci_hook_main.c \
	tools/cmd_oci_hook.c tools/oci_hook.c tools/oci_hook_nri.c tools/cli_args.c)
HOOK_LDLIBS := $(shell pkg-config --libs jansson 2>/dev/null) -lm

SUPPORT_SRCS := $(wildcard tests/support/*.c)
SUPPORT_OBJS := $(SUPPORT_SRCS:%.c=$(BUILD)/%.o)
TEST_SRCS := $(wildcard tests/unit/test_*.c)
TESTS := $(TEST_SRCS:tests/unit/%.c=$(BUILD)/tests/%)
BENCH_SRCS := $(wildcard bench/bench_*.c)
BENCHES := $(BENCH_SRCS:bench/%.c=$(BUILD)/bench/%)

# Small stand-alone test tools (tools/memtouch: allocate and touch memory on
# a chosen node from a chosen CPU, like numatop's mgen).
MEMTOUCH := $(if $(wildcard tools/memtouch/*.c),$(BUILD)/np-memtouch)

# Man pages (man/*.scd, scdoc) into BUILD/man. Without scdoc, make says so
# and goes on; make install then needs MAN=no, make check-install fails.
SCDOC ?= scdoc
MAN_PAGES := $(patsubst man/%.scd,$(BUILD)/man/%,$(wildcard man/*.scd))
HAVE_SCDOC := $(shell command -v $(SCDOC) 2>/dev/null)
# the pages' date: the last commit's, so that a build is reproducible
MAN_DATE := $(shell git log -1 --format=%ct 2>/dev/null)

all: $(BUILD)/numaplace $(BUILD)/numaplace-oci-hook $(BUILD)/numaplaced $(MEMTOUCH) \
	$(if $(HAVE_SCDOC),$(MAN_PAGES),no-scdoc)
.PHONY: no-scdoc
no-scdoc:
	@echo "make: $(SCDOC) not found: the man pages are not built (apt-get install scdoc, or make deps)"
$(BUILD)/man/%: man/%.scd
	@mkdir -p $(dir $@)
	$(Q)SOURCE_DATE_EPOCH=$${SOURCE_DATE_EPOCH:-$(MAN_DATE)} $(SCDOC) <$< >$@.tmp || \
		{ rm -f $@.tmp; echo "$<: scdoc refused it (above)"; exit 1; }
	$(Q)mv $@.tmp $@
.PHONY: fuzz fuzz-bins check-fuzz-replay
.PHONY: all deps check check-layout check-unit check-asan check-clang check-vectors check-daemon check-bpf \
	check-vm soak chaos bench bench-systemd bench-outcome demo clean format

$(BUILD)/%.o: %.c | $(VERSION_H)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(NP_CFLAGS) $(CFLAGS) -MMD -MP -c $< -o $@

# Test programs, benchmarks and their support code.
$(BUILD)/tests/%.o $(BUILD)/bench/%.o: NP_CFLAGS += $(TEST_CFLAGS)

$(BPF_BUILD)/vmlinux.h:
	@mkdir -p $(dir $@)
	$(Q)test -r $(VMLINUX_BTF) || { echo "no kernel BTF at $(VMLINUX_BTF) (set VMLINUX_BTF=)"; exit 1; }
	$(Q)$(BPFTOOL) btf dump file $(VMLINUX_BTF) format c > $@.tmp && mv $@.tmp $@

$(BPF_BUILD)/numaplace.bpf.o: bpf/numaplace.bpf.c bpf/compat.bpf.h include/numaplace/bpf_abi.h $(BPF_BUILD)/vmlinux.h
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $(@:.o=.tmp.o)
	$(Q)$(BPFTOOL) gen object $@ $(@:.o=.tmp.o)

# bench_bpf's floor: an empty sched_switch program (bench/floor.bpf.c).
$(BPF_BUILD)/floor.bpf.o: bench/floor.bpf.c $(BPF_BUILD)/vmlinux.h
	$(Q)$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bench/bench_bpf: $(BPF_BUILD)/floor.bpf.o
$(BUILD)/bench/bench_bpf.o: NP_CFLAGS += -DNP_BENCH_FLOOR_OBJ='"$(abspath $(BPF_BUILD))/floor.bpf.o"'

$(SKEL): $(BPF_BUILD)/numaplace.bpf.o
	$(Q)$(BPFTOOL) gen skeleton $< name numaplace_bpf > $@.tmp && mv $@.tmp $@

# Objects that include the skeleton.
$(BUILD)/userspace/observe/bpf_load.o: $(SKEL)

$(LIB): $(LIB_OBJS)
	$(Q)rm -f $@ && ar rcs $@ $^

define layer_rule
$$($(1)_LIB): $$($(1)_SRCS:%.c=$$(BUILD)/%.o)
	$$(Q)rm -f $$@ && ar rcs $$@ $$^
.PHONY: $(1)
$(1): $$($(1)_LIB)
endef
$(foreach l,$(LAYERS),$(eval $(call layer_rule,$(l))))

$(BUILD)/numaplace: $(CLI_OBJS) $(LAYER_LIBS)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(CLI_OBJS) $(LAYER_LIBS) $(NP_LDLIBS) $(LDLIBS)

$(BUILD)/numaplace-oci-hook: $(HOOK_OBJS) $(LAYER_LIBS)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(HOOK_OBJS) $(LAYER_LIBS) $(HOOK_LDLIBS) $(LDLIBS)

$(BUILD)/numaplaced: $(BUILD)/userspace/daemon/numaplaced.o $(LAYER_LIBS)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(LAYER_LIBS) $(NP_LDLIBS) $(LDLIBS)

$(BUILD)/np-memtouch: $(patsubst %.c,$(BUILD)/%.o,$(wildcard tools/memtouch/*.c)) $(LIB)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LIB) $(NP_LDLIBS) $(LDLIBS)

# numaplaced with its failpoints armed (basic/failpoint.h): the daemon's
# folder built again with -DNP_FAILPOINTS, for tests/host/daemon-host.sh only.
FP_OBJS := $(patsubst %.c,$(BUILD)/fp/%.o,$(daemon_SRCS) $(MAINS))
$(BUILD)/fp/%.o: %.c | $(VERSION_H)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(CPPFLAGS) $(NP_CFLAGS) -DNP_FAILPOINTS $(CFLAGS) -MMD -MP -c $< -o $@
$(BUILD)/numaplaced-failpoints: $(FP_OBJS) $(filter-out $(daemon_LIB),$(LAYER_LIBS))
	$(Q)$(CC) $(LDFLAGS) -o $@ $(FP_OBJS) $(filter-out $(daemon_LIB),$(LAYER_LIBS)) $(NP_LDLIBS) $(LDLIBS)

# The BPF test driver of tests/host/bpf-host.sh.
$(BUILD)/np-bpf-driver: $(BUILD)/tests/host/bpf/np_bpf_driver.o $(LIB)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(LIB) $(NP_LDLIBS) $(LDLIBS)
$(BUILD)/np-verify-settle: $(BUILD)/tests/host/bpf/np_verify_settle.o $(LIB)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(LIB) $(NP_LDLIBS) $(LDLIBS)

# Fuzz harnesses (tests/fuzz): each with replay.c as main in every build
# (the seeds and kept crash inputs run once, under ASan in check-asan);
# with libFuzzer in build/fuzz by `make fuzz` (FUZZ_SECONDS per harness).
FUZZ_NAMES := $(patsubst tests/fuzz/fuzz_%.c,%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_REPLAYS := $(FUZZ_NAMES:%=$(BUILD)/fuzz-replay-%)
FUZZ_SECONDS ?= 10
FUZZ_JOBS ?= 1
FUZZ_NICE ?= 0
FUZZ_SEED ?= 0
$(BUILD)/tests/fuzz/%.o: NP_CFLAGS += -Itests/fuzz
$(BUILD)/fuzz-replay-%: $(BUILD)/tests/fuzz/fuzz_%.o $(BUILD)/tests/fuzz/replay.o $(LIB)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LIB) $(NP_LDLIBS) $(LDLIBS)
$(BUILD)/fuzz-%: $(BUILD)/tests/fuzz/fuzz_%.o $(LIB)
	$(Q)$(CC) $(LDFLAGS) -fsanitize=fuzzer -o $@ $(filter %.o,$^) $(LIB) $(NP_LDLIBS) $(LDLIBS)
# The control socket harness drives a daemon on the unit tests' fake
# enforcer (no cmocka in it).
$(BUILD)/fuzz-ctl $(BUILD)/fuzz-replay-ctl: $(BUILD)/tests/support/fake_enforcer.o
fuzz-bins: $(FUZZ_NAMES:%=$(BUILD)/fuzz-%)
fuzz:
	$(Q)$(MAKE) --no-print-directory BUILD=build/fuzz CC=clang \
		CFLAGS="-O1 -g -fsanitize=fuzzer-no-link,address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		LDFLAGS="-fsanitize=address,undefined" fuzz-bins
	$(Q)FUZZ_JOBS=$(FUZZ_JOBS) FUZZ_NICE=$(FUZZ_NICE) FUZZ_SEED=$(FUZZ_SEED) tools/fuzz-run.sh build/fuzz $(FUZZ_SECONDS) $(FUZZ_NAMES)
check-fuzz-replay: $(FUZZ_REPLAYS)
	$(Q)tools/fuzz-replay.sh $(BUILD) $(FUZZ_NAMES)

# Admission latency through a running numaplaced (bench/daemon/).
$(BUILD)/np-ctl-latency: $(BUILD)/bench/daemon/np_ctl_latency.o $(LIB)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(LIB) $(NP_LDLIBS) $(LDLIBS)

# The keys the configuration and spec parsers accept, probed by running
# them (tests/host/man-host.sh).
$(BUILD)/np-probe-keys: $(BUILD)/tests/host/docs/np_probe_keys.o $(LIB)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(LIB) $(NP_LDLIBS) $(LDLIBS)

# The control socket stress client of tests/host/socket-host.sh.
$(BUILD)/np-ctl-stress: $(BUILD)/tests/host/socket/np_ctl_stress.o $(LIB)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(LIB) $(NP_LDLIBS) $(LDLIBS) -pthread

$(BUILD)/tests/%: $(BUILD)/tests/unit/%.o $(SUPPORT_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(SUPPORT_OBJS) $(LIB) $(NP_LDLIBS) $(LDLIBS) -lcmocka

# The CLI's renderers are in tools/, not in the library: their test links
# tools/status_render.o too.
$(BUILD)/tests/unit/test_status_render.o: NP_CFLAGS += -Itools
$(BUILD)/tests/test_status_render: $(BUILD)/tests/unit/test_status_render.o \
		$(BUILD)/tools/status_render.o $(SUPPORT_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $(filter %.o,$^) $(LIB) $(NP_LDLIBS) $(LDLIBS) -lcmocka

$(BUILD)/bench/%: $(BUILD)/bench/%.o $(SUPPORT_OBJS) $(LIB)
	@mkdir -p $(dir $@)
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(SUPPORT_OBJS) $(LIB) $(NP_LDLIBS) $(LDLIBS) -lcmocka

deps:
	$(Q)tools/install-deps.sh

# make install / make uninstall (tools/install.sh: what goes where). The
# systemd unit goes where systemd looks (pkg-config's systemdsystemunitdir),
# the configuration to /etc whatever the PREFIX (the programs' built-in
# path is /etc/numaplace/numaplace.json). MAN=no installs without the man
# pages; INSTALL_CONFIG=no without the example configuration.
PREFIX ?= /usr/local
BINDIR ?= $(PREFIX)/bin
SBINDIR ?= $(PREFIX)/sbin
DATADIR ?= $(PREFIX)/share
MANDIR ?= $(DATADIR)/man
DOCDIR ?= $(DATADIR)/doc/numaplace
SYSCONFDIR ?= /etc
UNITDIR ?= $(or $(shell pkg-config --variable=systemdsystemunitdir systemd 2>/dev/null),$(PREFIX)/lib/systemd/system)
HOOKSDIR ?= $(DATADIR)/containers/oci/hooks.d
# containerd's NRI v0.1 plugin: where containerd looks, whatever the PREFIX
# (INSTALL_NRI=no: neither the link nor the conf.json entry)
NRIDIR ?= /opt/nri/bin
NRICONF ?= /etc/nri/conf.json
INSTALL_NRI ?= yes
BASHCOMPDIR ?= $(DATADIR)/bash-completion/completions
INSTALL_CONFIG ?= yes
MAN ?= yes
INSTALL_ENV = DESTDIR='$(DESTDIR)' BINDIR='$(BINDIR)' SBINDIR='$(SBINDIR)' \
	MANDIR='$(MANDIR)' DOCDIR='$(DOCDIR)' SYSCONFDIR='$(SYSCONFDIR)' \
	UNITDIR='$(UNITDIR)' HOOKSDIR='$(HOOKSDIR)' BASHCOMPDIR='$(BASHCOMPDIR)' \
	INSTALL_CONFIG='$(INSTALL_CONFIG)' MAN='$(MAN)' \
	NRIDIR='$(NRIDIR)' NRICONF='$(NRICONF)' INSTALL_NRI='$(INSTALL_NRI)'
# The Debian package (debian/, tools/make-deb.sh): BUILD/deb/numaplace_VERSION_ARCH.deb,
# checked by lintian.
.PHONY: install uninstall deb
deb:
	$(Q)tools/make-deb.sh $(BUILD)
install: all
	$(Q)$(INSTALL_ENV) tools/install.sh install $(BUILD)
uninstall:
	$(Q)$(INSTALL_ENV) tools/install.sh uninstall $(BUILD)

# Unit tests (cmocka) and the vector runner; tests find data relative to
# the repository root.
check-unit: $(TESTS) $(BUILD)/numaplace $(FUZZ_REPLAYS)
	$(Q)tools/run-tests.sh $(TESTS)
	$(Q)tools/fuzz-replay.sh $(BUILD) $(FUZZ_NAMES)

check-vectors: $(BUILD)/numaplace
	$(Q)tools/check-plan-vectors.sh $(BUILD)/numaplace

# numaplaced on a fake cgroup tree, driven by spec files and the CLI, under
# valgrind; then its control socket under many clients at once; then
# faults (state directory full and read-only, failing cpuset writes, BPF
# not loading, a request flood, SIGTERM mid-cycle).
check-daemon: all $(BUILD)/numaplaced-failpoints $(BUILD)/np-ctl-stress
	$(Q)tests/host/daemon-host.sh $(BUILD)
	$(Q)tests/host/socket-host.sh $(BUILD)
	$(Q)tests/host/faults-host.sh $(BUILD)
	$(Q)tests/host/metrics-host.sh $(BUILD)
	$(Q)tests/host/suppress-host.sh $(BUILD)
	$(Q)tests/host/export-host.sh $(BUILD)
	$(Q)tests/host/containers-host.sh $(BUILD)

# Trust boundaries (tests/host/trust-host.sh): hostile container requests on the
# socket and through the OCI hook, the files numaplaced trusts, the socket's
# read group, the shipped unit's exposure (systemd-analyze security).
.PHONY: check-trust
check-trust: all
	$(Q)tests/host/trust-host.sh $(BUILD)

# containerd's NRI v0.1 plugin (tests/host/nri-host.sh): `numaplace-oci-hook
# invoke` driven with containerd 1.6's Requests against numaplaced on a fake
# tree mirroring real cgroups (root and cgroup2 needed, else skipped).
.PHONY: check-nri
check-nri: all
	$(Q)tests/host/nri-host.sh $(BUILD)

# How numaplace is shipped (issue 34): the version everywhere it is
# reported (tests/host/version-host.sh); make install and uninstall into a
# DESTDIR, the bash completion (tests/host/install-host.sh); the man pages
# render and name every configuration and spec key the parsers accept,
# every command, option, socket op and signal (tests/host/man-host.sh).
.PHONY: check-install
check-install: all $(BUILD)/np-probe-keys
	$(Q)tests/host/version-host.sh $(BUILD)
	$(Q)tests/host/install-host.sh $(BUILD)
	$(Q)tests/host/man-host.sh $(BUILD)

# README and docs/: every relative link resolves, the old README's sections
# have their homes, README's examples run as written (tests/host/docs-host.sh).
.PHONY: check-docs
check-docs: all
	$(Q)tests/host/docs-host.sh $(BUILD)

# The Debian package built by make deb and inspected: its files, lintian,
# its maintainer scripts (tests/host/deb-host.sh; 30-60 s on 2 CPUs; skipped,
# and said, without dpkg-buildpackage and debhelper).
.PHONY: check-deb
check-deb:
	$(Q)tests/host/deb-host.sh $(BUILD)

# The bad-input corpus (tests/badinput/): every surface, with the message
# and exit code each case must give; the daemon's tree and state unchanged.
.PHONY: check-badinput
check-badinput: all
	$(Q)tests/host/badinput.sh $(BUILD)

# The BPF programs on this machine's kernel (root; skips otherwise).
check-bpf: all $(BUILD)/np-bpf-driver $(BUILD)/np-verify-settle
	$(Q)tests/host/bpf-host.sh $(BUILD)

check-asan:
	$(Q)$(MAKE) --no-print-directory BUILD=build/asan \
		CFLAGS="-O1 -g -fsanitize=address,undefined -fno-omit-frame-pointer -fno-sanitize-recover=all" \
		LDFLAGS="-fsanitize=address,undefined" check-unit check-vectors

check-clang:
	$(Q)$(MAKE) --no-print-directory BUILD=build/clang CC=clang all $(TESTS:$(BUILD)/%=build/clang/%)

# The busybox VM (cgroup v2 without an init system) and the VM whose PID 1
# is systemd (tests/vm/systemd), both topologies, in two lanes at once
# (tests/vm/check-vm.sh; NP_VM_LANES=1 for one after the other). The
# systemd 4node boot installs the Debian package (scenario 95-deb):
# tests/vm/systemd/deb.sh makes it with make deb (72 s) when check-deb has
# not made this version's.
check-vm: all
	$(Q)tests/vm/check-vm.sh $(BUILD)

# The shape of the code: sizes, arrows between folders, one cgroup writer.
check-layout: all
	$(Q)tools/check-layout.sh $(BUILD)

# The closing line adds up unit tests, vectors (gcc and sanitizer runs) and
# VM scenarios.
check: export NP_SUMMARY_FILE := $(abspath $(BUILD))/check-summary.txt
# CI's fuzzing is reproducible: the same inputs from the same seed (a
# long `make fuzz` draws its own).
check: export FUZZ_SEED := 1
check:
	@mkdir -p $(BUILD) && rm -f $(NP_SUMMARY_FILE)
	$(Q)$(MAKE) --no-print-directory check-layout check-unit check-vectors check-daemon check-badinput check-trust check-nri check-install check-deb check-docs check-bpf check-clang check-asan fuzz check-vm check-outcome
	$(Q)tools/check-summary.sh $(NP_SUMMARY_FILE) build/vm/last-2node.log build/vm/last-4node.log \
		build/vm/last-sd-2node.log build/vm/last-sd-4node.log build/vm/sd-containerd.log

# Test objects are intermediate files of pattern rules: keep them.
.SECONDARY:

# Admission latency through numaplaced under systemd, in the systemd VM;
# the OCI hook's latency (tests/vm/systemd/bench/91-hook-latency.sh).
bench-systemd: all $(BUILD)/np-ctl-latency
	$(Q)tests/vm/systemd/run.sh --topology 2node --scenarios tests/vm/systemd/bench \
		--bin $(BUILD)/numaplaced --bin $(BUILD)/numaplace --bin $(BUILD)/numaplace-oci-hook \
		--bin $(BUILD)/np-ctl-latency --timeout 2400 --quiet
	$(Q)grep -h '^\[90-admit-latency\] #' build/vm/last-sd-2node.log
	$(Q)grep -h '^\[91-hook-latency\] #' build/vm/last-sd-2node.log || true

# containerd 1.6 for real (tests/vm/systemd/containerd, issue 31): the NRI
# plugin run by Debian's containerd and runc (both cgroup drivers) in the
# systemd VM, driven through the CRI; also in make check (check-vm, lane
# 2). A base of its own with containerd, runc and python3-grpcio (101 MB
# against 41 MB; made once, 50 s).
.PHONY: check-containerd
check-containerd: all
	$(Q)tests/vm/systemd/run-containerd.sh $(BUILD)

# Chaos (issue 33, tests/vm/systemd/scenarios/90-chaos.sh): a seeded mix
# of admissions, restarts, kills, reloads, hotplug and a full state disk
# with the invariants checked each second; CI runs its 3-minute form, on a
# fixed seed, in the 4node systemd VM of check-vm (tests/vm/systemd/
# run-all.sh). CHAOS_LSR=0 sends LSR draws as LSE. CHAOS_KILLS=0 never
# kills numaplaced (a status instead: one process, its leak slopes over
# the whole run). CHAOS_CONTAINERS=1 adds containers (crun, both cgroup
# drivers), 2 podman's too (0: none).
CHAOS_MINUTES ?= 30
CHAOS_TOPOLOGY ?= 2node 4node
CHAOS_SEED ?=
CHAOS_SLACK ?=
CHAOS_LSR ?= 1
CHAOS_KILLS ?= 1
CHAOS_CONTAINERS ?= 0
chaos: all
	$(Q)tests/vm/systemd/chaos.sh --build $(BUILD) --minutes $(CHAOS_MINUTES) \
		$(foreach t,$(CHAOS_TOPOLOGY),--topology $(t)) \
		$(if $(CHAOS_SEED),--seed $(CHAOS_SEED)) $(if $(CHAOS_SLACK),--slack $(CHAOS_SLACK)) \
		$(if $(filter 0,$(CHAOS_LSR)),--no-lsr) $(if $(filter 0,$(CHAOS_KILLS)),--no-kills) \
		--containers $(CHAOS_CONTAINERS)

# The soak: 20-crash with 600 kills (about 1,050 admit/resize/release
# operations) in the 2node busybox VM; CI runs its 50-kill form in check-vm.
SOAK_KILLS ?= 600
soak: all
	$(Q)tests/vm/run.sh --topology 2node --only 20-crash \
		--append "np.crash_kills=$(SOAK_KILLS)" --scenario-timeout 14400 \
		--timeout 15000 --bin $(BUILD)/numaplaced --bin $(BUILD)/numaplace \
		--keep-log build/vm/soak.log

# Every benchmark, then the targets' figures in one table (bench/run.sh,
# bench/summary.sh; the log in build/bench.log).
# The OCI hook's floor (bench/hook_latency.sh): fdatasync of a small
# record on the state's disk.
$(BUILD)/np-fdatasync-floor: $(BUILD)/bench/fdatasync_floor.o
	$(Q)$(CC) $(LDFLAGS) -o $@ $< $(LDLIBS)
bench: $(BENCHES) all $(BUILD)/np-fdatasync-floor
	$(Q)bench/run.sh $(BUILD) $(BENCHES)

# The outcome benchmark (bench/outcome/run.sh --help): redis and cyclictest
# under the configurations, interleaved, in the uncontended VM layout (the
# oversubscribed and 4node ones on request); --host runs it on this machine
# instead.
OUTCOME_ARGS ?=
bench-outcome: deps all
	$(Q)bench/outcome/run.sh --build $(BUILD) $(OUTCOME_ARGS)

# Its smoke in make check: one short round in the uncontended layout, held
# to what the kernel's files show (no latency is checked).
.PHONY: check-outcome
check-outcome: all
	$(Q)bench/outcome/run.sh --smoke --check --layouts uncontended --build $(BUILD) \
		--out $(BUILD)/outcome-smoke

demo: deps all
	$(Q)tools/demo.sh $(BUILD)

format:
	clang-format -i $$(git ls-files '*.c' '*.h')

clean:
	rm -rf build

# (not below BUILD/deb: make deb's copy of the tree builds there)
-include $(shell find $(BUILD) -path '$(BUILD)/deb' -prune -o -name '*.d' -type f -print 2>/dev/null)
