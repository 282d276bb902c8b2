#!/usr/bin/env bash
# bench/compare.sh — generator CPU cost per completed request: ceiling vs wrk,
# bombardier and hey, in one run.
#
# What it does (see bench/README.md for the why):
#   1. installs wrk and nginx from apt if they are missing;
#   2. builds ceiling once into bench/out/ceiling, and bombardier and hey
#      with `go install` at pinned versions into bench/out/bin (GOBIN);
#   3. starts a private nginx on 127.0.0.1 (own config, pid file and logs under
#      bench/out/nginx/) and ceiling's own mock answering after 20 ms, both
#      pinned to CPU 0;
#   4. runs the generators one after another, each pinned to CPU 1, in five
#      scenarios (ceiling twice in each: on its event loop and, unless
#      GOROUTINES=0, on goroutines with CEILING_LOOP=off):
#        closed, 50 connections vs nginx: wrk, bombardier, hey, ceiling;
#        fixed 5000 requests/s vs nginx:  bombardier, hey, ceiling (open);
#        fixed 500 requests/s vs the mock: bombardier, hey, ceiling (open);
#        templated POST, 50 users vs nginx: ceiling only (a plan: JSON body
#          with {{uuid}} and {{seq}}, a status check, a JSON extraction);
#        3-step flow + cookie, 50 users vs nginx: ceiling only (a plan:
#          POST /login sets a cookie, GET /cart and POST /checkout need it);
#      the two plans are written to bench/out/templated.yaml and flow.yaml;
#   5. measures each generator's user+sys CPU time and divides it by the
#      number of requests it completed;
#   6. prints a Markdown table and writes it to bench/out/compare.md, and
#      every row as JSON to bench/out/compare.json (bench/compare-runs.sh
#      reads it); exits 1 if a generator's output could not be parsed, 4 if
#      a ceiling run had failed exchanges (the table is written either way).
#
# Usage:
#   bash bench/compare.sh               # 10 s per run
#   DURATION=2 bash bench/compare.sh    # short mode, for smoke runs
#
# Environment:
#   DURATION    seconds each generator runs (default 10)
#   PORT        first port to try for nginx (default 18080; the next free one
#               is used if it is taken; the mock takes the next free one after)
#   RATE        the fixed rate against nginx (default 5000)
#   SLOW_RATE   the fixed rate against the 20 ms mock (default 500)
#   VUS         connections / virtual users of the closed runs (default 50)
#   RATE_CONNS  connections of bombardier and hey at fixed rates (default 50;
#               hey's -q is per connection, so it gets RATE/RATE_CONNS)
#   GOROUTINES  1 (default): also run ceiling with CEILING_LOOP=off; 0: not
set -euo pipefail

DURATION="${DURATION:-10}"
PORT="${PORT:-18080}"
RATE="${RATE:-5000}"
VUS="${VUS:-50}"
SLOW_RATE="${SLOW_RATE:-500}"
RATE_CONNS="${RATE_CONNS:-50}"
GOROUTINES="${GOROUTINES:-1}"
# The 20 ms endpoint: ceiling's own mock (a Go server), fixed latency.
MOCK_LATENCY=20ms

# The other generators, built from source at pinned versions.
# v1.2.6 is bombardier's latest tag on the module proxy; hey v0.1.4 is the
# release its README documents (v0.1.5 exists too). Both build with Go 1.26.
BOMBARDIER_MOD=github.com/codesenberg/bombardier
BOMBARDIER_VERSION=v1.2.6
HEY_MOD=github.com/rakyll/hey
HEY_VERSION=v0.1.4

# Every CPU figure is meaningless if the load generator and the target share
# a core, so both are pinned: nginx and the mock to CPU 0, the generator to
# CPU 1.
SERVER_CPU=0
GEN_CPU=1

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'compare.sh: %s\n' "$*" >&2; exit 1; }

for knob in DURATION RATE SLOW_RATE VUS RATE_CONNS; do
	[[ "${!knob}" =~ ^[0-9]+$ && "${!knob}" -ge 1 ]] || die "$knob must be a whole number >= 1, got '${!knob}'"
done
[[ "$GOROUTINES" =~ ^[01]$ ]] || die "GOROUTINES must be 0 or 1, got '$GOROUTINES'"
# hey paces each of its -c workers with its own ticker at -q requests/s, so
# the total rate is c × q. Pick q so that it is RATE (or SLOW_RATE).
HEY_Q="$(awk -v r="$RATE" -v c="$RATE_CONNS" 'BEGIN { printf "%g", r / c }')"
HEY_SLOW_Q="$(awk -v r="$SLOW_RATE" -v c="$RATE_CONNS" 'BEGIN { printf "%g", r / c }')"

# ---------------------------------------------------------------------------
# Locations. The script works from the repository root wherever it is called
# from; everything it writes goes to bench/out/, which is git-ignored.
# ---------------------------------------------------------------------------
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"
OUT="bench/out"
mkdir -p "$OUT"
OUT_ABS="$REPO_ROOT/$OUT"

# ---------------------------------------------------------------------------
# Dependencies. wrk and nginx come from Debian packages; apt-get is only
# called when something is missing. python3 does the arithmetic, reads the
# JSON results and measures CPU time (see cpurun.py below).
# ---------------------------------------------------------------------------
SUDO=""
if [[ "$(id -u)" -ne 0 ]]; then
	command -v sudo >/dev/null 2>&1 && SUDO="sudo"
fi

missing=()
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
# nginx lives in /usr/sbin, which is not always on a normal user's PATH.
NGINX="$(command -v nginx 2>/dev/null || true)"
[[ -z "$NGINX" && -x /usr/sbin/nginx ]] && NGINX=/usr/sbin/nginx
[[ -n "$NGINX" ]] || missing+=(nginx)
command -v python3 >/dev/null 2>&1 || missing+=(python3)
command -v taskset >/dev/null 2>&1 || missing+=(util-linux)
if ((${#missing[@]} > 0)); then
	log "installing missing packages: ${missing[*]}"
	$SUDO apt-get update
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y "${missing[@]}"
	NGINX="$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)"
fi
command -v go >/dev/null 2>&1 || die "go is not on PATH; it is needed to build ceiling, bombardier and hey"

NPROC="$(nproc)"
((NPROC >= 2)) || die "needs at least 2 CPUs (nginx on CPU $SERVER_CPU, generator on CPU $GEN_CPU); this machine has $NPROC"

# ---------------------------------------------------------------------------
# CPU measurement: a python3 wrapper around wait4(2), written to
# bench/out/cpurun.py, and `measure NAME CMD...`, which runs CMD pinned to
# CPU $GEN_CPU through it. Both live in bench/lib.sh, shared with
# bench/ws.sh; the comment there says why wait4 and not /proc or GNU time.
# ---------------------------------------------------------------------------
# shellcheck source=bench/lib.sh
source "$REPO_ROOT/bench/lib.sh"
CPURUN="$OUT/cpurun.py"
write_cpurun "$CPURUN"

# ---------------------------------------------------------------------------
# Build ceiling once.
# ---------------------------------------------------------------------------
log "building ceiling"
go build -o "$OUT/ceiling" ./cmd/ceiling
CEILING="$OUT/ceiling"

# ---------------------------------------------------------------------------
# bombardier and hey: `go install MODULE@VERSION` with GOBIN=bench/out/bin,
# so nothing is installed into the system and the version is the one pinned
# above. A binary already there is reused when `go version -m` says it was
# built from that module version.
# ---------------------------------------------------------------------------
BIN="$OUT/bin"
mkdir -p "$BIN"

# module_version BINARY: the main module's version recorded in BINARY.
module_version() { go version -m "$1" 2>/dev/null | awk '$1 == "mod" { print $3; exit }'; }

# install_tool NAME MODULE VERSION
install_tool() {
	local name="$1" mod="$2" version="$3"
	if [[ -x "$BIN/$name" && "$(module_version "$BIN/$name")" == "$version" ]]; then
		return 0
	fi
	log "installing $name: go install $mod@$version (GOBIN=$BIN)"
	GOBIN="$OUT_ABS/bin" go install "$mod@$version" ||
		die "go install $mod@$version failed with $(go version); pick the closest version that builds and change ${name^^}_VERSION"
}
install_tool bombardier "$BOMBARDIER_MOD" "$BOMBARDIER_VERSION"
install_tool hey "$HEY_MOD" "$HEY_VERSION"
BOMBARDIER="$BIN/bombardier"
HEY="$BIN/hey"

# ---------------------------------------------------------------------------
# nginx: a private instance with its own prefix, config, pid file and error
# log under bench/out/nginx/. One worker, no access log, keep-alive
# connections reused (practically) forever, and a fixed 3-byte body so the
# server does as little as possible. It runs with `daemon off` in the
# background of this script, pinned to CPU 0; the trap stops exactly this
# instance by its pid and nothing else.
#
# Four more locations serve the two plan scenarios, each a fixed answer
# from `return`, so nginx's cost stays that of the fixed GET:
#   /items     the templated POST: a JSON answer the plan extracts data.id from;
#   /login     sets the cookie sid=abc;
#   /cart, /checkout  refuse (403) a request without that cookie, so a run
#              whose cookies did not work shows as failures, not as speed.
# ---------------------------------------------------------------------------
PORT="$(free_port "$PORT")" || die "no free port found near $PORT"

NGX_DIR="$OUT_ABS/nginx"
# shellcheck disable=SC2016 # $cookie_sid is nginx's, not this shell's
write_nginx_conf "$NGX_DIR" "$PORT" bench/compare.sh '        location = /items {
            default_type application/json;
            return 200 '"'"'{"data":{"id":"it-1"}}'"'"';
        }
        location = /login {
            default_type application/json;
            add_header Set-Cookie "sid=abc; Path=/";
            return 200 '"'"'{"token":"t"}'"'"';
        }
        location = /cart {
            default_type text/plain;
            if ($cookie_sid != "abc") { return 403; }
            return 200 "ok\n";
        }
        location = /checkout {
            default_type text/plain;
            if ($cookie_sid != "abc") { return 403; }
            return 200 "ok\n";
        }'

NGINX_PID=""
MOCK_PID=""
# stop_pid PID: TERM, up to 5 s to exit, then KILL. Only ever called with
# the pid of a process this script started.
stop_pid() {
	local pid="$1"
	if [[ -z "$pid" ]] || ! kill -0 "$pid" 2>/dev/null; then
		return 0
	fi
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 50); do
		kill -0 "$pid" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
}
cleanup() {
	# TERM to nginx's master makes it stop its worker and exit; TERM to the
	# mock cancels its context, it closes and prints its stats to mock.log.
	stop_pid "$MOCK_PID"
	stop_pid "$NGINX_PID"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "starting nginx on 127.0.0.1:$PORT (CPU $SERVER_CPU)"
start_nginx "$NGINX" "$NGX_DIR" "$PORT" "$SERVER_CPU" || die "nginx did not start"
URL="http://127.0.0.1:$PORT/"

# A TCP connect only proves the master listens; make sure a worker really
# answers HTTP, then warm nginx (and the page cache for wrk) with one short,
# unmeasured wrk run. Without this the first measured run was once seen at
# 2% of the usual throughput on this shared machine.
http_ok() (
	# http_ok PORT; a subshell, so a failed connect cannot touch this
	# shell's descriptors.
	reply=""
	exec 3<>"/dev/tcp/127.0.0.1/$1" || return 1
	printf 'GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
	IFS= read -r -t 2 reply <&3 || true
	exec 3<&- 3>&-
	[[ "$reply" == "HTTP/1."?" 200"* ]]
)
http_ok "$PORT" || die "nginx on port $PORT does not answer 200; see $NGX_DIR/error.log"
log "warming up nginx (1s, not measured)"
taskset -c "$GEN_CPU" wrk -t1 -c"$VUS" -d1s "$URL" >"$OUT/warmup.log" 2>&1 || log "warm-up run failed (see $OUT/warmup.log); carrying on"
sleep 1

# ---------------------------------------------------------------------------
# The 20 ms endpoint: `ceiling mock` (internal/sink, a net/http server) on
# the next free port, pinned to CPU 0 like nginx, any path answered 200
# after MOCK_LATENCY. Its output (the stats it prints when stopped) goes to
# bench/out/mock.log; the trap stops it by its pid.
# ---------------------------------------------------------------------------
MOCK_PORT="$(free_port "$((PORT + 1))")" || die "no free port found after $PORT for the mock"
log "starting ceiling mock on 127.0.0.1:$MOCK_PORT, latency $MOCK_LATENCY (CPU $SERVER_CPU)"
taskset -c "$SERVER_CPU" "$CEILING" mock --listen "127.0.0.1:$MOCK_PORT" --latency "$MOCK_LATENCY" >"$OUT/mock.log" 2>&1 &
MOCK_PID=$!
for _ in $(seq 50); do
	port_in_use "$MOCK_PORT" && break
	kill -0 "$MOCK_PID" 2>/dev/null || die "ceiling mock exited at start-up; see $OUT/mock.log"
	sleep 0.1
done
http_ok "$MOCK_PORT" || die "ceiling mock on port $MOCK_PORT does not answer 200; see $OUT/mock.log"
MOCK_URL="http://127.0.0.1:$MOCK_PORT/"
sleep 1

# ---------------------------------------------------------------------------
# The two plan scenarios, ceiling only (wrk, bombardier and hey cannot run
# templates, checks, extraction or flows). Both are closed, VUS users as in
# scenario 1, against the same nginx; the flags on the command line set the
# same load again (--vus, --step, --warmup), as for the --url runs. Written
# to bench/out on every run, with this run's nginx as the target, and
# checked with `ceiling validate` before anything is measured.
# ---------------------------------------------------------------------------
TARGET_URL="http://127.0.0.1:$PORT"
TEMPLATED_PLAN="$OUT/templated.yaml"
FLOW_PLAN="$OUT/flow.yaml"
cat >"$TEMPLATED_PLAN" <<EOF
# Written by bench/compare.sh; rewritten on every run.
# Each iteration: one POST with a body rendered from templates, a status
# check and one JSON extraction. nginx answers {"data":{"id":"it-1"}}.
name: bench-templated-post
target: $TARGET_URL
load: {model: closed, vus: [$VUS], step: ${DURATION}s, warmup: 0s}
scenarios:
  - name: templated POST
    request:
      method: POST
      url: /items
      json: {id: "{{uuid}}", n: "{{seq}}"}
    expect: {status: [200]}
    extract: {id: {json: data.id}}
EOF
cat >"$FLOW_PLAN" <<EOF
# Written by bench/compare.sh; rewritten on every run.
# Each iteration: three requests, each one exchange in .steps[0].completed.
# POST /login sets the cookie sid=abc; nginx answers /cart and /checkout
# with 403 unless the virtual user's cookie jar sends it back.
name: bench-flow-cookie
target: $TARGET_URL
load: {model: closed, vus: [$VUS], step: ${DURATION}s, warmup: 0s}
scenarios:
  - name: checkout flow
    steps:
      - request: {method: POST, url: /login}
        expect: {status: [200]}
      - request: {method: GET, url: /cart}
        expect: {status: [200]}
      - request:
          method: POST
          url: /checkout
          json: {id: "{{uuid}}"}
        expect: {status: [200]}
EOF
for plan in "$TEMPLATED_PLAN" "$FLOW_PLAN"; do
	"$CEILING" validate "$plan" >"$plan.validate.log" 2>&1 ||
		die "ceiling validate $plan failed: $(cat "$plan.validate.log")"
done

# ---------------------------------------------------------------------------
# The runs. One after another with a short pause so the previous run's
# connections are closed and nothing overlaps.
# ---------------------------------------------------------------------------
# Scenario 1: closed loop, VUS connections, against nginx. Every tool as
# fast as it can; CPU 1 should be close to 100% busy.
log "closed, $VUS connections, nginx: wrk"
measure wrk_closed wrk -t1 -c"$VUS" -d"${DURATION}s" "$URL"
sleep 1
log "closed, $VUS connections, nginx: bombardier"
measure bombardier_closed "$BOMBARDIER" -c "$VUS" -d "${DURATION}s" -o json -p r "$URL"
sleep 1
log "closed, $VUS connections, nginx: hey"
measure hey_closed "$HEY" -c "$VUS" -z "${DURATION}s" "$URL"
sleep 1
log "closed, $VUS connections, nginx: ceiling"
rm -f "$OUT/closed.json"
measure ceiling_closed "$CEILING" run --url "$URL" --vus "$VUS" --step "${DURATION}s" --warmup 0s --out "$OUT/closed.json" --quiet
sleep 1
if ((GOROUTINES)); then
	log "closed, $VUS connections, nginx: ceiling on goroutines (CEILING_LOOP=off)"
	rm -f "$OUT/closed_go.json"
	measure ceiling_closed_go env CEILING_LOOP=off "$CEILING" run --url "$URL" --vus "$VUS" --step "${DURATION}s" --warmup 0s --out "$OUT/closed_go.json" --quiet
	sleep 1
fi

# Scenario 2: a fixed RATE against nginx. bombardier: a token bucket shared
# by RATE_CONNS connections (-r); hey: RATE_CONNS workers at HEY_Q each.
log "fixed $RATE/s, nginx: bombardier (-c $RATE_CONNS -r $RATE)"
measure bombardier_rate "$BOMBARDIER" -c "$RATE_CONNS" -r "$RATE" -d "${DURATION}s" -o json -p r "$URL"
sleep 1
log "fixed $RATE/s, nginx: hey (-c $RATE_CONNS -q $HEY_Q)"
measure hey_rate "$HEY" -c "$RATE_CONNS" -q "$HEY_Q" -z "${DURATION}s" "$URL"
sleep 1
log "fixed $RATE/s, nginx: ceiling open"
rm -f "$OUT/open.json"
measure ceiling_open "$CEILING" run --url "$URL" --rate "$RATE" --step "${DURATION}s" --warmup 0s --out "$OUT/open.json" --quiet
sleep 1
if ((GOROUTINES)); then
	log "fixed $RATE/s, nginx: ceiling open on goroutines (CEILING_LOOP=off)"
	rm -f "$OUT/open_go.json"
	measure ceiling_open_go env CEILING_LOOP=off "$CEILING" run --url "$URL" --rate "$RATE" --step "${DURATION}s" --warmup 0s --out "$OUT/open_go.json" --quiet
	sleep 1
fi

# Scenario 3: a fixed SLOW_RATE against the mock's 20 ms endpoint: about
# SLOW_RATE × 0.02 requests in flight, mostly waiting.
log "fixed $SLOW_RATE/s, 20 ms mock: bombardier (-c $RATE_CONNS -r $SLOW_RATE)"
measure bombardier_slow "$BOMBARDIER" -c "$RATE_CONNS" -r "$SLOW_RATE" -d "${DURATION}s" -o json -p r "$MOCK_URL"
sleep 1
log "fixed $SLOW_RATE/s, 20 ms mock: hey (-c $RATE_CONNS -q $HEY_SLOW_Q)"
measure hey_slow "$HEY" -c "$RATE_CONNS" -q "$HEY_SLOW_Q" -z "${DURATION}s" "$MOCK_URL"
sleep 1
log "fixed $SLOW_RATE/s, 20 ms mock: ceiling open"
rm -f "$OUT/slow.json"
measure ceiling_slow "$CEILING" run --url "$MOCK_URL" --rate "$SLOW_RATE" --step "${DURATION}s" --warmup 0s --out "$OUT/slow.json" --quiet
if ((GOROUTINES)); then
	sleep 1
	log "fixed $SLOW_RATE/s, 20 ms mock: ceiling open on goroutines (CEILING_LOOP=off)"
	rm -f "$OUT/slow_go.json"
	measure ceiling_slow_go env CEILING_LOOP=off "$CEILING" run --url "$MOCK_URL" --rate "$SLOW_RATE" --step "${DURATION}s" --warmup 0s --out "$OUT/slow_go.json" --quiet
fi

# Scenarios 4 and 5: ceiling alone, the plans written above, closed, VUS
# users against nginx. On the loop (ceiling's default; the run falls back to
# goroutines by itself where the loop does not take the plan, and
# result.json says which engine ran) and on goroutines.
# run_plan NAME PLAN LABEL: NAME.json (loop) and NAME_go.json (goroutines).
run_plan() {
	local name="$1" plan="$2" label="$3"
	sleep 1
	log "$label, $VUS users, nginx: ceiling ($plan)"
	rm -f "$OUT/$name.json"
	measure "ceiling_$name" "$CEILING" run "$plan" --vus "$VUS" --step "${DURATION}s" --warmup 0s --out "$OUT/$name.json" --quiet
	if ((GOROUTINES)); then
		sleep 1
		log "$label, $VUS users, nginx: ceiling on goroutines (CEILING_LOOP=off)"
		rm -f "$OUT/${name}_go.json"
		measure "ceiling_${name}_go" env CEILING_LOOP=off "$CEILING" run "$plan" --vus "$VUS" --step "${DURATION}s" --warmup 0s --out "$OUT/${name}_go.json" --quiet
	fi
}
run_plan templated "$TEMPLATED_PLAN" "templated POST"
run_plan flow "$FLOW_PLAN" "3-step flow + cookie"

# ---------------------------------------------------------------------------
# Versions and machine info, for the report.
# ---------------------------------------------------------------------------
WRK_VERSION="$(wrk --version 2>&1 | head -n1 | sed 's/ Copyright.*//' || true)"
NGINX_VERSION="$("$NGINX" -v 2>&1 | sed 's/^nginx version: //' || true)"
CEILING_VERSION="$("$CEILING" version 2>&1 | head -n1 || true)"
BOMBARDIER_BUILT="$(module_version "$BOMBARDIER")"
HEY_BUILT="$(module_version "$HEY")"
GO_VERSION="$(go version)"
machine_info
# k6 would be the fourth tool; it cannot be installed on these machines.
K6_NOTE="not measured: not installable here (the workplace's Go module proxy refuses go.k6.io/k6, Debian has no k6 package, and npm's k6 package is a 0.0.0 placeholder)"

# ---------------------------------------------------------------------------
# Report. python3 parses each tool's output, does the arithmetic and prints
# Markdown:
#   completed      = responses received, any status (wrk: "N requests in";
#                    bombardier: req1xx..req5xx of its JSON result; hey: the
#                    sum of its "[code] N responses" lines; ceiling:
#                    steps[0].completed)
#   req/s          = completed / the run's measured duration (wrk: its
#                    "in X.XXs"; bombardier: timeTakenSeconds; hey: "Total:";
#                    ceiling: steps[0].duration_s)
#   CPU s          = user + sys of the generator process (all threads)
#   CPU µs/request = CPU s × 1e6 / completed
#   ratio          = CPU µs/request / the lowest CPU µs/request in the same
#                    scenario
#   failed         = non-2xx responses plus requests that got no response
#                    (wrk: "Non-2xx or 3xx" + socket errors; bombardier:
#                    completed - req2xx + others; hey: non-2xx + its error
#                    distribution; ceiling: steps[0].failed), marked in the
#                    table; every ceiling run's count is listed under it
#   plan lines     = for each plan scenario, ceiling's default run's CPU
#                    µs/request ÷ ceiling (closed)'s in the fixed GET
#                    scenario (goal ≤ 1.3×), the engine each run reports
#                    (steps[0].generator.engine) and req/s
# Every row also goes to bench/out/compare.json. If a tool's output cannot
# be parsed the table still gets written, with "unparsed" in that row, and
# the script then fails naming the log; if a ceiling run had failed
# exchanges it exits 4 after writing everything.
# ---------------------------------------------------------------------------
export OUT DURATION RATE SLOW_RATE VUS RATE_CONNS GOROUTINES HEY_Q HEY_SLOW_Q MOCK_LATENCY PORT MOCK_PORT NPROC \
	CPU_MODEL KERNEL WRK_VERSION NGINX_VERSION CEILING_VERSION BOMBARDIER_MOD BOMBARDIER_BUILT \
	HEY_MOD HEY_BUILT GO_VERSION GEN_CPU SERVER_CPU K6_NOTE
report_rc=0
python3 - >"$OUT/compare.md" <<'PY' || report_rc=$?
import datetime, json, os, re, sys

env = os.environ
out = env["OUT"]
hz = os.sysconf("SC_CLK_TCK")
gen_cpu, srv_cpu = "cpu" + env["GEN_CPU"], "cpu" + env["SERVER_CPU"]
vus, rate, slow = env["VUS"], env["RATE"], env["SLOW_RATE"]
conns = env["RATE_CONNS"]


class ParseError(Exception):
    """a generator's output without the figures the table needs."""


def read_log(name):
    path = f"{out}/{name}.log"
    try:
        return path, open(path, errors="replace").read()
    except OSError as e:
        raise ParseError(f"{path}: {e.strerror}")


def cpu_file(name):
    """user_s sys_s wall_s exit_code, as written by cpurun.py."""
    u, s, wall, rc = open(f"{out}/{name}.cpu").read().split()
    return float(u), float(s), float(wall), int(rc)


# Each parser returns (completed, measured seconds, notes, ceiling's step or
# {}, failures): failures are the responses that were not 2xx (counted in
# completed) plus the requests that failed without a response (not counted).
def wrk_result(name):
    """completed requests, measured seconds and notes from wrk's summary."""
    path, text = read_log(name)
    m = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m)\b", text)
    if not m:
        raise ParseError(f"{path}: no 'N requests in Xs' line in wrk's output")
    secs = float(m.group(2)) * {"us": 1e-6, "ms": 1e-3, "s": 1, "m": 60}[m.group(3)]
    notes = [l.strip() for l in text.splitlines()
             if l.strip().startswith(("Non-2xx", "Socket errors"))]
    failures = 0
    n = re.search(r"Non-2xx or 3xx responses:\s*(\d+)", text)
    if n:
        failures += int(n.group(1))
    e = re.search(r"Socket errors:\s*connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if e:
        failures += sum(int(x) for x in e.groups())
    return int(m.group(1)), secs, notes, {}, failures


def bombardier_result(name):
    """the same from `bombardier -o json -p r`: one JSON object, {"spec", "result"}."""
    path, text = read_log(name)
    i = text.find('{"spec"')
    if i < 0:
        raise ParseError(f"{path}: no JSON result (expected a line starting with {{\"spec\"}}")
    try:
        res = json.JSONDecoder().raw_decode(text[i:])[0]["result"]
        by_class = {k: int(res[k]) for k in ("req1xx", "req2xx", "req3xx", "req4xx", "req5xx", "others")}
        secs = float(res["timeTakenSeconds"])
    except (ValueError, KeyError, TypeError, IndexError) as e:
        raise ParseError(f"{path}: bombardier's JSON result does not parse: {e!r}")
    completed = sum(v for k, v in by_class.items() if k != "others")
    notes = []
    if completed != by_class["req2xx"]:
        notes.append(f"non-2xx responses: {completed - by_class['req2xx']}")
    if by_class["others"]:
        errs = ", ".join(f"{e.get('description')} × {e.get('count')}" for e in res.get("errors") or [])
        notes.append(f"failed without a response (others): {by_class['others']}" + (f" ({errs})" if errs else ""))
    return completed, secs, notes, {}, completed - by_class["req2xx"] + by_class["others"]


def hey_result(name):
    """the same from hey's text summary: "Total: X secs" and "[code] N responses"."""
    path, text = read_log(name)
    total = re.search(r"^\s*Total:\s+([\d.]+) secs", text, re.M)
    head = text.find("Status code distribution:")
    if not total or head < 0:
        raise ParseError(f"{path}: no 'Total: X secs' line or no 'Status code distribution:' in hey's output")
    dist = {}
    for line in text[head:].splitlines()[1:]:
        m = re.match(r"\s*\[(\d+)\]\s+(\d+) responses\s*$", line)
        if not m:
            break
        dist[int(m.group(1))] = int(m.group(2))
    completed = sum(dist.values())
    notes = []
    failures = sum(n for c, n in dist.items() if c // 100 != 2)
    if failures:
        notes.append("status codes: " + ", ".join(f"[{c}] {n}" for c, n in sorted(dist.items())))
    err = text.find("Error distribution:")
    if err >= 0:
        errs = [re.match(r"\s*\[(\d+)\]\s+(.*)", l) for l in text[err:].splitlines()[1:]]
        errs = [m for m in errs if m]
        if errs:
            failures += sum(int(m.group(1)) for m in errs)
            notes.append(f"errors: {sum(int(m.group(1)) for m in errs)} (first: {errs[0].group(2)[:120]})")
    return completed, float(total.group(1)), notes, {}, failures


def ceiling_result(file):
    """completed, counted seconds and the whole first step from result JSON."""
    path = f"{out}/{file}"
    try:
        step = json.load(open(path))["steps"][0]
        completed, secs = int(step["completed"]), float(step["duration_s"])
    except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
        raise ParseError(f"{path}: no readable result ({e!r})")
    notes = []
    if step.get("failed"):
        notes.append(f"{step['failed']} failed, errors {step.get('errors')}"
                     + (f", every 4xx was {step['status_4xx']}" if step.get("status_4xx", -1) > 0 else ""))
    return completed, secs, notes, step, int(step.get("failed") or 0)


def proc_stat(path):
    """per-CPU busy and steal ticks from a /proc/stat snapshot."""
    cpus = {}
    for line in open(path):
        f = line.split()
        v = [int(x) for x in f[1:]] + [0] * 8
        # user nice system idle iowait irq softirq steal ...
        cpus[f[0]] = dict(busy=v[0] + v[1] + v[2] + v[5] + v[6], steal=v[7])
    return cpus


S_CLOSED = f"closed, {vus} connections, nginx"
S_RATE = f"fixed {rate}/s, nginx"
# "20ms" (a Go duration) reads "20 ms" in the table.
mock_latency = re.sub(r"(\d)([a-zµ]+)$", r"\1 \2", env["MOCK_LATENCY"])
S_SLOW = f"fixed {slow}/s, {mock_latency} mock"
# The two plan scenarios, ceiling only.
S_TPL = f"templated POST, {vus} users, nginx"
S_FLOW = f"3-step flow + cookie, {vus} users, nginx"
TARGET = {S_CLOSED: "nginx", S_RATE: "nginx", S_SLOW: "mock", S_TPL: "nginx", S_FLOW: "nginx"}
RATE_OF = {S_RATE: float(rate), S_SLOW: float(slow)}
CLOSED = (S_CLOSED, S_TPL, S_FLOW)
# A plan scenario's CPU per request on the loop, as a multiple of the
# fixed GET's (ceiling (closed) in S_CLOSED), in the same run: the goal.
PLAN_GOAL = 1.3

# scenario, generator label, run name (bench/out/NAME.*), parser, its argument
RUNS = [
    (S_CLOSED, "wrk", "wrk_closed", wrk_result, "wrk_closed"),
    (S_CLOSED, "bombardier", "bombardier_closed", bombardier_result, "bombardier_closed"),
    (S_CLOSED, "hey", "hey_closed", hey_result, "hey_closed"),
    (S_CLOSED, "ceiling (closed)", "ceiling_closed", ceiling_result, "closed.json"),
    (S_CLOSED, "ceiling (closed, goroutines)", "ceiling_closed_go", ceiling_result, "closed_go.json"),
    (S_RATE, "bombardier", "bombardier_rate", bombardier_result, "bombardier_rate"),
    (S_RATE, "hey", "hey_rate", hey_result, "hey_rate"),
    (S_RATE, "ceiling (open)", "ceiling_open", ceiling_result, "open.json"),
    (S_RATE, "ceiling (open, goroutines)", "ceiling_open_go", ceiling_result, "open_go.json"),
    (S_SLOW, "bombardier", "bombardier_slow", bombardier_result, "bombardier_slow"),
    (S_SLOW, "hey", "hey_slow", hey_result, "hey_slow"),
    (S_SLOW, "ceiling (open)", "ceiling_slow", ceiling_result, "slow.json"),
    (S_SLOW, "ceiling (open, goroutines)", "ceiling_slow_go", ceiling_result, "slow_go.json"),
    (S_TPL, "ceiling (closed)", "ceiling_templated", ceiling_result, "templated.json"),
    (S_TPL, "ceiling (closed, goroutines)", "ceiling_templated_go", ceiling_result, "templated_go.json"),
    (S_FLOW, "ceiling (closed)", "ceiling_flow", ceiling_result, "flow.json"),
    (S_FLOW, "ceiling (closed, goroutines)", "ceiling_flow_go", ceiling_result, "flow_go.json"),
]
if env["GOROUTINES"] == "0":
    RUNS = [r for r in RUNS if "goroutines" not in r[1]]

rows, problems = [], []
for scen, gen, name, parse, arg in RUNS:
    try:
        completed, dur, notes, step, failures = parse(arg)
    except ParseError as e:
        completed, dur, notes, step, failures = None, None, [], {}, None
        problems.append(f"{gen} in '{scen}': {e}")
    u, s, wall, rc = cpu_file(name)
    engine = (step.get("generator") or {}).get("engine") if step else None
    r = dict(scen=scen, gen=gen, name=name, completed=completed, dur=dur, notes=notes, step=step,
             failures=failures, engine=engine,
             user=u, sys=s, cpu=u + s, wall=wall, rc=rc, other=None, steal=None, srv_busy=None)
    # Disturbance: busy time on the generator's core that was not the
    # generator's own rusage, and time the hypervisor stole from either
    # core. A clean run shows close to zero "other" here, but ksoftirqd
    # finishing the generator's network work, interrupts and 10 ms tick
    # rounding can add some, so only more than 15% of the run, or over 5%
    # stolen, marks the run as disturbed by someone else's work.
    try:
        a, b = proc_stat(f"{out}/{name}.stat0"), proc_stat(f"{out}/{name}.stat1")
        d = lambda c, k: (b[c][k] - a[c][k]) / hz
        r["other"] = max(d(gen_cpu, "busy") - r["cpu"], 0.0)
        r["steal"] = d(gen_cpu, "steal") + d(srv_cpu, "steal")
        r["srv_busy"] = d(srv_cpu, "busy")
    except (OSError, KeyError):
        pass
    r["disturbed"] = bool(wall) and r["other"] is not None and \
        (r["other"] > max(0.15 * wall, 0.05) or r["steal"] > max(0.05 * wall, 0.05))
    r["per"] = r["cpu"] * 1e6 / completed if completed else None
    # A clean closed-loop run keeps the generator's core busy; if it was not
    # and nothing disturbed it, the generator was waiting on nginx.
    r["target_bound"] = bool(r["scen"] in CLOSED and not r["disturbed"] and r["wall"]
                             and r["cpu"] / r["wall"] < 0.8)
    r["rps"] = completed / dur if completed and dur else None
    rows.append(r)

best = {}
for r in rows:
    if r["per"] is not None:
        best[r["scen"]] = min(best.get(r["scen"], r["per"]), r["per"])


def fmt(v, spec, suffix=""):
    return "n/a" if v is None else format(v, spec) + suffix


print(f"## Generator CPU per request: ceiling vs wrk, bombardier, hey ({env['DURATION']} s per run)")
print()
print("| scenario | generator | completed | req/s | CPU s | CPU µs/request | ratio to the best in the scenario |")
print("|---|---|---:|---:|---:|---:|---:|")
for r in rows:
    b = best.get(r["scen"])
    ratio = r["per"] / b if r["per"] is not None and b else None
    gen = r["gen"]
    if r["rc"] != 0:
        gen += f" (exit {r['rc']})"
    if r["disturbed"]:
        gen += " ⚠ disturbed"
    if r["failures"]:
        gen += f" ⚠ {r['failures']} failed"
    completed = "unparsed" if r["completed"] is None else f"{r['completed']:d}"
    print(f"| {r['scen']} | {gen} | {completed} | {fmt(r['rps'], ',.0f')} | "
          f"{r['cpu']:.3f} | {fmt(r['per'], '.2f')} | {fmt(ratio, '.2f', '×')} |")
print()

# Every ceiling run's failures, and a loud line for each that had any: a
# failed exchange is usually cheap (a 403 is quick), so a run with failures
# reads cheaper than it is. In the flow a 403 from /cart or /checkout means
# the cookie from /login was not sent back.
ceiling_rows = [r for r in rows if r["gen"].startswith("ceiling")]
failing = [r for r in ceiling_rows if r["failures"] or r["completed"] is None]
for r in failing:
    st = r["step"]
    if r["completed"] is None:
        print(f"**⚠ FAILED: {r['gen']} in '{r['scen']}' left no result** (exit {r['rc']}; "
              f"see {out}/{r['name']}.log).")
    else:
        s4 = st.get("status_4xx")
        why = (" A 403 in the flow means the session cookie was not sent back."
               if r["scen"] == S_FLOW and s4 == 403 else "")
        print(f"**⚠ FAILED: {r['gen']} in '{r['scen']}': {r['failures']} of {r['completed']} exchanges "
              f"failed** (errors {st.get('errors')}" + (f", every 4xx a {s4}" if s4 and s4 > 0 else "")
              + f"; engine {r['engine']}). Its CPU per request is not that of a working run.{why}")
    print()
print("ceiling's failed exchanges (non-2xx or not as expected, and errors without an answer), "
      "of its completed, and the engine each run reports (`.steps[0].generator.engine`):")
print()
for r in ceiling_rows:
    if r["completed"] is None:
        print(f"- {r['scen']}, {r['gen']}: no result")
    else:
        print(f"- {r['scen']}, {r['gen']}: {r['failures']} of {r['completed']}"
              + (" ⚠" if r["failures"] else "") + f", engine {r['engine'] or 'n/a'}")
print()

# The plan scenarios against the fixed GET of the same run.
by = {(r["scen"], r["gen"]): r for r in rows}
fixed = by.get((S_CLOSED, "ceiling (closed)"))
for scen in (S_TPL, S_FLOW):
    loop, gor = by.get((scen, "ceiling (closed)")), by.get((scen, "ceiling (closed, goroutines)"))
    if loop is None:
        continue
    ratio = loop["per"] / fixed["per"] if loop["per"] and fixed and fixed["per"] else None
    verdict = "n/a" if ratio is None else ("met" if ratio <= PLAN_GOAL else "**not met**")
    if loop["failures"]:
        verdict += ", but the run had failures"
    line = (f"{scen}: ceiling's default run (the loop, where it takes the plan; result.json says "
            f"engine \"{loop['engine'] or 'n/a'}\") {fmt(loop['per'], '.2f')} µs/request, "
            f"{fmt(ratio, '.2f', '×')} ceiling's closed fixed GET "
            f"({fmt(fixed['per'] if fixed else None, '.2f')} µs, engine \"{(fixed or {}).get('engine') or 'n/a'}\"; "
            f"goal ≤ {PLAN_GOAL}×: {verdict}), {fmt(loop['rps'], ',.0f')} req/s")
    if gor is not None:
        gratio = gor["per"] / fixed["per"] if gor["per"] and fixed and fixed["per"] else None
        line += (f"; on goroutines (CEILING_LOOP=off, engine \"{gor['engine'] or 'n/a'}\") "
                 f"{fmt(gor['per'], '.2f')} µs/request, {fmt(gratio, '.2f', '×')}, {fmt(gor['rps'], ',.0f')} req/s")
    if loop["engine"] and loop["engine"] != "loop":
        line += (". ⚠ The default run did not run on the loop (this ceiling does not take the plan "
                 "there), so its ratio is the goroutine engine's")
    print(line + ".")
    print()
print(f"In '{S_FLOW}' every request of an iteration (POST /login, GET /cart, POST /checkout) is one "
      "exchange of `completed`, so its req/s and µs/request are per request, not per iteration.")
print()
for r in rows:
    if not r["gen"].startswith("ceiling (open"):
        continue
    st = r["step"]
    if st:
        lat = st.get("latency_ms") or {}
        engine = (st.get("generator") or {}).get("engine", "?")
        print(f"{r['gen']}, {r['scen']} (engine {engine}): target {st.get('target_rate', 0):,.0f}/s, "
              f"achieved_rate {st.get('achieved_rate', 0):,.1f}/s, completed {st.get('completed')}, "
              f"late {st.get('late')}, mean_lag_ms {fmt(st.get('mean_lag_ms'), '.3f')}, "
              f"p50 {fmt(lat.get('p50'), '.3f')} ms, p99 {fmt(lat.get('p99'), '.3f')} ms "
              f"(from the intended send time), failed {st.get('failed')}.")
    else:
        print(f"{r['gen']}, {r['scen']}: no result (see {out}/{r['name']}.log).")
    print()
print("Ratios compare generators within one scenario only. Below saturation each request "
      "wakes an otherwise idle generator, a cost a saturated closed loop amortises over many "
      f"requests per wake-up. At fixed rates bombardier (-c {conns} -r RATE, a shared token "
      f"bucket) and hey (-c {conns} -q RATE/{conns}, a ticker per worker) time each request "
      "from when it was actually sent, so a stall hides in their latencies; ceiling times it "
      "from the intended send time.")
print()
print("Details:")
print()
for r in rows:
    util = r["cpu"] / r["wall"] * 100 if r["wall"] else 0
    line = (f"- {r['scen']}, {r['gen']}: user {r['user']:.3f} s, sys {r['sys']:.3f} s, "
            f"wall {r['wall']:.2f} s, {util:.0f}% of CPU {env['GEN_CPU']}, exit {r['rc']}")
    if r["other"] is not None:
        line += (f"; other busy time on CPU {env['GEN_CPU']} {r['other']:.2f} s, steal {r['steal']:.2f} s, "
                 f"CPU {env['SERVER_CPU']} ({TARGET[r['scen']]}) busy {r['srv_busy']:.2f} s")
    print(line)
    for n in r["notes"]:
        print(f"  - {n}")
if any(r["disturbed"] for r in rows):
    print("- ⚠ disturbed: something else used over 15% of the generator's core, or the "
          "hypervisor stole over 5% of the run; those figures are not clean — rerun.")
for r in rows:
    if r["target_bound"]:
        print(f"- note: {r['gen']} used under 80% of its core in '{r['scen']}': nginx, not the "
              "generator, was the bottleneck, so its per-request cost is less comparable.")
    # A fixed-rate row is only comparable if the tool sent at that rate.
    want = RATE_OF.get(r["scen"])
    if want and r["rps"] is not None and r["rps"] < 0.95 * want:
        print(f"- note: {r['gen']} did not hold {want:,.0f}/s in '{r['scen']}' "
              f"({r['rps']:,.0f}/s completed).")
for p in problems:
    print(f"- ⚠ unparsed: {p}")
print()
print("Machine:")
print()
print(f"- nproc: {env['NPROC']}; nginx and the mock pinned to CPU {env['SERVER_CPU']}, "
      f"generators to CPU {env['GEN_CPU']}")
print(f"- CPU: {env['CPU_MODEL']}")
print(f"- kernel: {env['KERNEL']}")
print(f"- wrk: {env['WRK_VERSION']}")
print(f"- bombardier: {env['BOMBARDIER_MOD']} {env['BOMBARDIER_BUILT']}, hey: {env['HEY_MOD']} "
      f"{env['HEY_BUILT']} (go install, {env['GO_VERSION']})")
print(f"- nginx: {env['NGINX_VERSION']}; mock: ceiling mock --latency {env['MOCK_LATENCY']}")
print(f"- ceiling: {env['CEILING_VERSION']}")
print(f"- k6: {env['K6_NOTE']}")

# Every row, machine-readable, for bench/compare-runs.sh (medians over runs).
doc = dict(
    date=datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
    duration_s=int(env["DURATION"]), vus=int(vus), rate=int(rate), slow_rate=int(slow),
    rate_conns=int(conns), goroutines=env["GOROUTINES"] == "1", plan_goal=PLAN_GOAL,
    scenarios=dict(closed=S_CLOSED, rate=S_RATE, slow=S_SLOW, templated=S_TPL, flow=S_FLOW),
    machine=dict(nproc=int(env["NPROC"]), cpu=env["CPU_MODEL"], kernel=env["KERNEL"],
                 gen_cpu=int(env["GEN_CPU"]), server_cpu=int(env["SERVER_CPU"])),
    tools=dict(wrk=env["WRK_VERSION"], bombardier=f"{env['BOMBARDIER_MOD']} {env['BOMBARDIER_BUILT']}",
               hey=f"{env['HEY_MOD']} {env['HEY_BUILT']}", nginx=env["NGINX_VERSION"],
               ceiling=env["CEILING_VERSION"], go=env["GO_VERSION"]),
    not_installable=dict(k6=env["K6_NOTE"]),
    rows=[dict(scenario=r["scen"], generator=r["gen"], run=r["name"], completed=r["completed"],
               duration_s=r["dur"], req_s=r["rps"], cpu_s=round(r["cpu"], 6), user_s=r["user"],
               sys_s=r["sys"], wall_s=r["wall"], us_per_req=r["per"], failures=r["failures"],
               engine=r["engine"], exit=r["rc"], disturbed=r["disturbed"], other_s=r["other"],
               steal_s=r["steal"], core_share=r["cpu"] / r["wall"] if r["wall"] else None,
               target_bound=r["target_bound"], unparsed=r["completed"] is None)
          for r in rows],
    problems=problems,
)
with open(f"{out}/compare.json", "w") as f:
    json.dump(doc, f, indent=1)
    f.write("\n")

for p in problems:
    print(f"compare.sh: could not parse completed requests: {p}", file=sys.stderr)
for r in failing:
    if r["completed"] is not None:
        print(f"compare.sh: ⚠ {r['gen']} in '{r['scen']}': {r['failures']} of {r['completed']} exchanges failed",
              file=sys.stderr)
sys.exit(3 if problems else 4 if failing else 0)
PY

cat "$OUT/compare.md"
((report_rc == 0 || report_rc == 4)) || die "the report could not read every generator's output (above); the table in $OUT/compare.md has 'unparsed' in those rows"
log "table written to $OUT/compare.md, every row as JSON to $OUT/compare.json; logs and results in $OUT/"
if ((report_rc == 4)); then
	printf 'compare.sh: ceiling runs had failed exchanges (marked ⚠ FAILED above); their figures are not those of working runs\n' >&2
	exit 4
fi
