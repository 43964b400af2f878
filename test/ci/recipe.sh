#!/bin/sh
# The perf-CI recipe of docs/ci.md, run on the sim provider with the same
# xrcbench command lines (cmd/xrcbench/recipe_test.go checks that they are
# the same, and runs this script):
#   a job on main measures the baseline and starts the history;
#   a pull request that changes nothing passes (exit 0, PASS);
#   a pull request whose registration is 25% slower (the sim cost model's
#   reg cost from 2us to 2.5us) is another configuration, which compare
#   refuses (exit 2, one line naming sim_cost); compared anyway
#   (--allow-config-diff) it fails: compare exits 1, the summary's first
#   line says FAIL, names reg p50 as a regression and the setting.
# Usage: XRCBENCH=path/to/xrcbench test/ci/recipe.sh WORKDIR
set -eu
: "${XRCBENCH:?set XRCBENCH to the xrcbench binary}"
work=${1:?usage: XRCBENCH=bin/xrcbench recipe.sh WORKDIR}
mkdir -p "$work"
cd "$work"
xrcbench() { "$XRCBENCH" "$@"; }
fail() {
	echo "recipe: $*" >&2
	exit 1
}
GITHUB_STEP_SUMMARY=$PWD/step-summary.md
: >"$GITHUB_STEP_SUMMARY"

# A pull request's job: measure, compare and publish, export. $1 is the
# exit status compare must give, $2 what the summary's first line must say,
# $4 "other-settings" for a candidate measured with other settings, which
# compare must refuse before it is compared at --allow-config-diff.
pull_request() {
	rm -rf runs/candidate
	COMMIT=$3
	xrcbench run --workload steady --repetitions 5 $BENCH_ARGS --label commit=$COMMIT --out runs/candidate
	set +e
	xrcbench compare runs/baseline runs/candidate --threshold 10% --format md > compare.md 2> refused.txt
	status=$?
	set -e
	if [ "${4:-}" = other-settings ]; then
		[ "$status" = 2 ] && grep -q "not comparable: .*sim_cost" refused.txt ||
			fail "compare of other settings exited $status, want 2 and a line naming sim_cost: $(cat refused.txt)"
		set +e
		xrcbench compare runs/baseline runs/candidate --threshold 10% --format md --allow-config-diff > compare.md
		status=$?
		set -e
	fi
	cat compare.md >> "$GITHUB_STEP_SUMMARY"
	[ "$status" = "$1" ] || fail "compare exited $status, want $1: $(head -n 1 compare.md)"
	head -n 1 compare.md | grep -q -- "$2" || fail "summary's first line lacks '$2': $(head -n 1 compare.md)"
	if [ "${4:-}" = other-settings ]; then
		xrcbench export runs/baseline runs/candidate --format junit --threshold 10% --allow-config-diff --out compare-junit.xml
	else
		xrcbench export runs/baseline runs/candidate --format junit --threshold 10% --out compare-junit.xml
	fi
	grep -q "failures=\"$1\"" compare-junit.xml || fail "compare-junit.xml does not have $1 failure(s)"
	xrcbench export runs/candidate --format github-action-benchmark --out bench.json
	[ -s bench.json ] && [ -s bench-throughput.json ] || fail "export wrote no bench.json and bench-throughput.json"
	grep -q '"name": "steady/reg \[sim 1x1 1 QP rtr\] p50"' bench.json || fail "bench.json has no steady/reg [sim 1x1 1 QP rtr] p50"
	mkdir -p history && cp -r runs/candidate "history/$(date -u +%Y%m%dT%H%M%S)-$3"
}

# The job on main: its candidate becomes the baseline and starts the history.
BENCH_ARGS="--provider sim --procs 1 --threads 1 --qps 1 --duration 300ms --warmup 100ms --sim-cost reg=2us,unreg=2us --seed 1"
COMMIT=main
xrcbench run --workload steady --repetitions 5 $BENCH_ARGS --label commit=$COMMIT --out runs/candidate
rm -rf runs/baseline && cp -r runs/candidate runs/baseline
mkdir -p history && cp -r runs/candidate "history/$(date -u +%Y%m%dT%H%M%S)-main"

# An unchanged candidate passes.
pull_request 0 "PASS" same

# Registration 25% slower, played by a dearer sim cost model (a setting:
# refused first), fails, with the regression and the setting named.
BENCH_ARGS="--provider sim --procs 1 --threads 1 --qps 1 --duration 300ms --warmup 100ms --sim-cost reg=2500ns,unreg=2us --seed 1"
pull_request 1 "FAIL.*reg p50.*different configurations (sim_cost: " slower other-settings

# The history of the three runs: too few for a change point, so exit 0,
# with the page and its data written, a warning saying so, and the runs
# named by their commits.
exec 3>&2 2>history-warnings.txt
xrcbench history history --out history-report
exec 2>&3 3>&-
[ -s history-report/history.html ] && [ -s history-report/history.json ] || fail "history wrote no history.html and history.json"
grep -q "no change point looked for" history-warnings.txt || fail "history said nothing of too few runs: $(cat history-warnings.txt)"
grep -q '"x_label": "commit"' history-report/history.json || fail "history.json does not name the runs by their commit"
echo "recipe: baseline, unchanged candidate passed, 25% slower candidate refused as other settings, then failed with exit 1; summary in $GITHUB_STEP_SUMMARY"
