#!/usr/bin/env bash
# Runs nats.go's own test suites against bus: see README.md in this folder.
#
#   tests/upstream/run.sh [suite ...]     (default: ws-unit ws js jetstream)
#
# Suites: ws-unit (nats.go's root ws_test.go, which needs no server), ws
# (test/ws_test.go), js (test/js_test.go, kv_test.go, object_test.go),
# jetstream (jetstream/test), core (the rest of test/). RUN=regexp narrows a
# suite to matching tests; KEEP=1 keeps the work dir (nats.go's copy, the
# logs, each server's directory and bus.log). REFERENCE=1 runs the same
# tests unmodified, against nats-server (orbit.go's own tester, as nats.go
# runs them), to tell a bus difference from a test that fails here anyway.
set -euo pipefail

repo=$(cd "$(dirname "$0")/../.." && pwd)
natsgo_version=v1.55.0
src=$(go env GOMODCACHE)/github.com/nats-io/nats.go@$natsgo_version
[ -d "$src" ] || go mod download github.com/nats-io/nats.go@$natsgo_version
suites=("$@")
[ ${#suites[@]} -gt 0 ] || suites=(ws-unit ws js jetstream)

work=$(mktemp -d "${TMPDIR:-/tmp}/bus-upstream.XXXXXX")
if [ -z "${KEEP:-}" ]; then trap 'chmod -R u+w "$work"; rm -rf "$work"' EXIT; else echo "work dir: $work"; fi

# nats.go's tests are copied, never committed; its test module (go_test.mod)
# gets the shims in place of orbit.go's tester and client.
cp -r "$src" "$work/nats.go"
chmod -R u+w "$work/nats.go"
cd "$work/nats.go"
cp go_test.mod go.mod
cp go_test.sum go.sum
[ -n "${REFERENCE:-}" ] || go mod edit \
	-replace "github.com/synadia-io/orbit.go/ntf=$repo/tests/upstream/shim/ntf" \
	-replace "github.com/synadia-io/orbit.go/ntf-client=$repo/tests/upstream/shim/ntfclient" \
	-replace "github.com/bus-dev/bus=$repo"
GOFLAGS=-mod=mod go mod tidy >/dev/null 2>&1 || GOFLAGS=-mod=mod go mod tidy
(cd "$repo" && go build -o "$work/bus" ./cmd/bus)
export UPSTREAM_BUS_BIN="$work/bus" UPSTREAM_BUS_DIR="$work/servers"
mkdir -p "$UPSTREAM_BUS_DIR"
[ -z "${KEEP:-}" ] || export UPSTREAM_BUS_KEEP=1
unset TESTER_NATS_URL GITHUB_ACTIONS

# tests_in prints a -run pattern of the top-level tests in the given files.
tests_in() {
	local names
	names=$(grep -ho '^func Test[A-Za-z0-9_]*' "$@" | sed 's/^func //' | sort -u | paste -sd'|')
	echo "^($names)\$"
}

total_pass=0 total_fail=0 total_skip=0
run_suite() {
	local name=$1 pkg=$2 pattern=$3
	[ -z "${RUN:-}" ] || pattern="$RUN"
	local log="$work/$name.log"
	echo "== $name: go test $pkg"
	set +e
	go test -tags internal_testing -vet=off -count=1 -p 1 -parallel 2 -timeout "${TIMEOUT:-15m}" \
		-v -run "$pattern" "$pkg" >"$log" 2>&1
	local rc=$?
	set -e
	local pass fail skip
	pass=$(grep -c '^--- PASS' "$log" || true)
	fail=$(grep -c '^--- FAIL' "$log" || true)
	skip=$(grep -c '^--- SKIP' "$log" || true)
	grep '^--- FAIL' "$log" | sed 's/^/   /' || true
	if grep -q '^panic: \|^FAIL.*\[build failed\]\|test timed out' "$log"; then
		echo "   the test binary died (panic, timeout or build failure); see $log"
		grep -m3 '^panic: \|test timed out\|build failed' "$log" | sed 's/^/   /'
		fail=$((fail + 1))
	fi
	# Subtests' skips count here too: go test -v does not tell their log
	# lines from their parents'.
	local noclusters
	noclusters=$(grep -c '_test.go:[0-9]*: bus has no clustering' "$log" || true)
	echo "   $name: $pass passed, $fail failed, $skip skipped (exit $rc); tests and subtests skipped for want of a cluster: $noclusters"
	total_pass=$((total_pass + pass)) total_fail=$((total_fail + fail)) total_skip=$((total_skip + skip))
	[ -z "${KEEP:-}" ] || echo "   log: $log"
}

core_files=()
for f in test/*_test.go; do
	case $f in
	test/js_test.go | test/kv_test.go | test/object_test.go | test/ws_test.go | test/js_internal_test.go) ;;
	*) core_files+=("$f") ;;
	esac
done

for suite in "${suites[@]}"; do
	case $suite in
	ws-unit) run_suite ws-unit . "$(tests_in ws_test.go)" ;;
	ws) run_suite ws ./test/ "$(tests_in test/ws_test.go)" ;;
	js) run_suite js ./test/ "$(tests_in test/js_test.go test/kv_test.go test/object_test.go test/js_internal_test.go)" ;;
	jetstream) run_suite jetstream ./jetstream/test/ '.' ;;
	core) run_suite core ./test/ "$(tests_in "${core_files[@]}")" ;;
	*) echo "unknown suite $suite (ws-unit ws js jetstream core)" >&2; exit 2 ;;
	esac
done
echo "== total: $total_pass passed, $total_fail failed, $total_skip skipped"
[ "$total_fail" -eq 0 ]
