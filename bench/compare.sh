#!/usr/bin/env bash
# bench/compare.sh — generator CPU cost per completed request: ceiling vs wrk.
#
# What it does (see bench/README.md for the why):
#   1. installs wrk and nginx from apt if they are missing;
#   2. builds ceiling once into bench/out/ceiling;
#   3. starts a private nginx on 127.0.0.1 (own config, pid file and logs under
#      bench/out/nginx/), pinned to CPU 0;
#   4. runs three generators one after another, each pinned to CPU 1:
#        wrk closed (50 connections), ceiling closed (50 VUs),
#        ceiling open (5000 requests/s);
#   5. measures each generator's user+sys CPU time and divides it by the
#      number of requests it completed;
#   6. prints a Markdown table and writes it to bench/out/compare.md.
#
# Usage:
#   bash bench/compare.sh               # 10 s per run
#   DURATION=2 bash bench/compare.sh    # short mode, for smoke runs
#
# Environment:
#   DURATION  seconds each generator runs (default 10)
#   PORT      first port to try for nginx (default 18080; the next free one
#             is used if it is taken)
#   RATE      target rate of the open ceiling run (default 5000)
#   VUS       connections / virtual users of the closed runs (default 50)
set -euo pipefail

DURATION="${DURATION:-10}"
PORT="${PORT:-18080}"
RATE="${RATE:-5000}"
VUS="${VUS:-50}"

# Every CPU figure is meaningless if the load generator and the target share
# a core, so both are pinned: nginx to CPU 0, the generator to CPU 1.
SERVER_CPU=0
GEN_CPU=1

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'compare.sh: %s\n' "$*" >&2; exit 1; }

[[ "$DURATION" =~ ^[0-9]+$ && "$DURATION" -ge 1 ]] || die "DURATION must be a whole number of seconds >= 1, got '$DURATION'"

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
command -v go >/dev/null 2>&1 || die "go is not on PATH; it is needed to build ceiling"

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
# nginx: a private instance with its own prefix, config, pid file and error
# log under bench/out/nginx/. One worker, no access log, keep-alive
# connections reused (practically) forever, and a fixed 3-byte body so the
# server does as little as possible. It runs with `daemon off` in the
# background of this script, pinned to CPU 0; the trap stops exactly this
# instance by its pid and nothing else.
# ---------------------------------------------------------------------------
PORT="$(free_port "$PORT")" || die "no free port found near $PORT"

NGX_DIR="$OUT_ABS/nginx"
mkdir -p "$NGX_DIR/tmp"
cat >"$NGX_DIR/nginx.conf" <<EOF
# Written by bench/compare.sh; rewritten on every run.
worker_processes 1;
daemon off;
pid $NGX_DIR/nginx.pid;
error_log $NGX_DIR/error.log warn;
worker_rlimit_nofile 20000;

events {
    # Generous: an open-model generator opens one connection per request in
    # flight, so a stall can briefly need thousands.
    worker_connections 16384;
}

http {
    access_log off;
    keepalive_requests 1000000;
    keepalive_timeout 120s;
    # Temp paths under our own prefix so nothing needs /var/lib/nginx.
    client_body_temp_path $NGX_DIR/tmp/body;
    proxy_temp_path $NGX_DIR/tmp/proxy;
    fastcgi_temp_path $NGX_DIR/tmp/fastcgi;
    uwsgi_temp_path $NGX_DIR/tmp/uwsgi;
    scgi_temp_path $NGX_DIR/tmp/scgi;

    server {
        listen 127.0.0.1:$PORT;
        location / {
            default_type text/plain;
            return 200 "ok\n";
        }
    }
}
EOF

NGINX_PID=""
cleanup() {
	if [[ -n "$NGINX_PID" ]] && kill -0 "$NGINX_PID" 2>/dev/null; then
		# TERM to the master makes it stop its worker and exit.
		kill -TERM "$NGINX_PID" 2>/dev/null || true
		for _ in $(seq 50); do
			kill -0 "$NGINX_PID" 2>/dev/null || break
			sleep 0.1
		done
		kill -KILL "$NGINX_PID" 2>/dev/null || true
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "starting nginx on 127.0.0.1:$PORT (CPU $SERVER_CPU)"
# -e: the error log used before the config is read (so nothing goes to
# /var/log/nginx); -p: prefix for any relative path.
taskset -c "$SERVER_CPU" "$NGINX" -p "$NGX_DIR/" -e "$NGX_DIR/error.log" -c "$NGX_DIR/nginx.conf" &
NGINX_PID=$!
for _ in $(seq 50); do
	port_in_use "$PORT" && break
	kill -0 "$NGINX_PID" 2>/dev/null || die "nginx exited at start-up; see $NGX_DIR/error.log"
	sleep 0.1
done
port_in_use "$PORT" || die "nginx does not answer on port $PORT; see $NGX_DIR/error.log"
URL="http://127.0.0.1:$PORT/"

# A TCP connect only proves the master listens; make sure a worker really
# answers HTTP, then warm nginx (and the page cache for wrk) with one short,
# unmeasured wrk run. Without this the first measured run was once seen at
# 2% of the usual throughput on this shared machine.
http_ok() (
	# A subshell, so a failed connect cannot touch this shell's descriptors.
	reply=""
	exec 3<>"/dev/tcp/127.0.0.1/$PORT" || return 1
	printf 'GET / HTTP/1.0\r\nHost: 127.0.0.1\r\n\r\n' >&3
	IFS= read -r -t 2 reply <&3 || true
	exec 3<&- 3>&-
	[[ "$reply" == "HTTP/1."?" 200"* ]]
)
http_ok || die "nginx on port $PORT does not answer 200; see $NGX_DIR/error.log"
log "warming up nginx (1s, not measured)"
taskset -c "$GEN_CPU" wrk -t1 -c"$VUS" -d1s "$URL" >"$OUT/warmup.log" 2>&1 || log "warm-up run failed (see $OUT/warmup.log); carrying on"
sleep 1

# ---------------------------------------------------------------------------
# The runs. One after another with a short pause so the previous run's
# connections are closed and nothing overlaps.
# ---------------------------------------------------------------------------
log "wrk closed: $VUS connections, ${DURATION}s"
measure wrk_closed wrk -t1 -c"$VUS" -d"${DURATION}s" "$URL"
sleep 1

log "ceiling closed: $VUS VUs, ${DURATION}s"
rm -f "$OUT/closed.json"
measure ceiling_closed "$CEILING" run --url "$URL" --vus "$VUS" --step "${DURATION}s" --warmup 0s --out "$OUT/closed.json" --quiet
sleep 1

log "ceiling open: $RATE requests/s, ${DURATION}s"
rm -f "$OUT/open.json"
measure ceiling_open "$CEILING" run --url "$URL" --rate "$RATE" --step "${DURATION}s" --warmup 0s --out "$OUT/open.json" --quiet

# ---------------------------------------------------------------------------
# Versions and machine info, for the report.
# ---------------------------------------------------------------------------
WRK_VERSION="$(wrk --version 2>&1 | head -n1 | sed 's/ Copyright.*//' || true)"
NGINX_VERSION="$("$NGINX" -v 2>&1 | sed 's/^nginx version: //' || true)"
CEILING_VERSION="$("$CEILING" version 2>&1 | head -n1 || true)"
machine_info

# ---------------------------------------------------------------------------
# Report. python3 parses wrk's "N requests in Xs" line and ceiling's JSON,
# does the arithmetic and prints Markdown.
#   req/s          = completed / the run's measured duration
#                    (wrk: its "in X.XXs"; ceiling: steps[0].duration_s)
#   CPU s          = user + sys of the generator process (all threads)
#   CPU µs/request = CPU s × 1e6 / completed
#   ratio to wrk   = CPU µs/request / wrk's CPU µs/request
# ---------------------------------------------------------------------------
export OUT DURATION RATE VUS PORT NPROC CPU_MODEL KERNEL WRK_VERSION NGINX_VERSION CEILING_VERSION GEN_CPU SERVER_CPU
python3 - >"$OUT/compare.md" <<'PY'
import json, os, re

env = os.environ
out = env["OUT"]
hz = os.sysconf("SC_CLK_TCK")
gen_cpu, srv_cpu = "cpu" + env["GEN_CPU"], "cpu" + env["SERVER_CPU"]


def cpu_file(name):
    """user_s sys_s wall_s exit_code, as written by cpurun.py."""
    u, s, wall, rc = open(f"{out}/{name}.cpu").read().split()
    return float(u), float(s), float(wall), int(rc)


def wrk_result(name):
    """completed requests and measured seconds from wrk's summary."""
    text = open(f"{out}/{name}.log", errors="replace").read()
    m = re.search(r"(\d+) requests in ([\d.]+)(us|ms|s|m)\b", text)
    if not m:
        return None, None, []
    secs = float(m.group(2)) * {"us": 1e-6, "ms": 1e-3, "s": 1, "m": 60}[m.group(3)]
    notes = [f"wrk: {l.strip()}" for l in text.splitlines()
             if l.strip().startswith(("Non-2xx", "Socket errors"))]
    return int(m.group(1)), secs, notes


def ceiling_result(file):
    """completed, counted seconds and the whole first step from result JSON."""
    try:
        step = json.load(open(f"{out}/{file}"))["steps"][0]
    except (OSError, ValueError, KeyError, IndexError):
        return None, None, {}
    return step.get("completed"), step.get("duration_s"), step


def proc_stat(path):
    """per-CPU busy and steal ticks from a /proc/stat snapshot."""
    cpus = {}
    for line in open(path):
        f = line.split()
        v = [int(x) for x in f[1:]] + [0] * 8
        # user nice system idle iowait irq softirq steal ...
        cpus[f[0]] = dict(busy=v[0] + v[1] + v[2] + v[5] + v[6], steal=v[7])
    return cpus


rows = []


def add(gen, mode, name, completed, dur):
    u, s, wall, rc = cpu_file(name)
    r = dict(gen=gen, mode=mode, name=name, completed=completed, dur=dur,
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
    rows.append(r)


vus, rate = env["VUS"], env["RATE"]
wc, wd, notes = wrk_result("wrk_closed")
add("wrk", f"closed, {vus} conns", "wrk_closed", wc, wd)
cc, cd, cstep = ceiling_result("closed.json")
add("ceiling", f"closed, {vus} VUs", "ceiling_closed", cc, cd)
oc, od, ostep = ceiling_result("open.json")
add("ceiling", f"open, {rate}/s", "ceiling_open", oc, od)


def per_request(r):
    return r["cpu"] * 1e6 / r["completed"] if r["completed"] else None


def fmt(v, spec, suffix=""):
    return "n/a" if v is None else format(v, spec) + suffix


base = per_request(rows[0])
print(f"## Generator CPU per request: ceiling vs wrk ({env['DURATION']} s per run)")
print()
print("| generator | mode | completed | req/s | CPU s | CPU µs/request | ratio to wrk |")
print("|---|---|---:|---:|---:|---:|---:|")
for r in rows:
    per = per_request(r)
    rps = r["completed"] / r["dur"] if r["completed"] and r["dur"] else None
    ratio = per / base if per is not None and base else None
    mode = r["mode"]
    if r["rc"] != 0:
        mode += f" (exit {r['rc']})"
    if r["disturbed"]:
        mode += " ⚠ disturbed"
    print(f"| {r['gen']} | {mode} | {fmt(r['completed'], 'd')} | {fmt(rps, ',.0f')} | "
          f"{r['cpu']:.3f} | {fmt(per, '.2f')} | {fmt(ratio, '.2f', '×')} |")
print()
if ostep:
    lat = ostep.get("latency_ms") or {}
    print(f"Open run: target {rate}/s, achieved_rate {ostep.get('achieved_rate', 0):,.1f}/s, "
          f"completed {ostep.get('completed')}, late {ostep.get('late')}, "
          f"p99 {fmt(lat.get('p99'), '.3f')} ms, failed {ostep.get('failed')}.")
else:
    print("Open run: no result (see bench/out/ceiling_open.log).")
print()
print("The open run's ratio is not comparable with the closed ones: below saturation each "
      "request wakes an otherwise idle generator, a cost a saturated closed loop amortises "
      "over many requests per wake-up.")
print()
print("Details:")
print()
for r in rows:
    util = r["cpu"] / r["wall"] * 100 if r["wall"] else 0
    line = (f"- {r['gen']} {r['mode']}: user {r['user']:.3f} s, sys {r['sys']:.3f} s, "
            f"wall {r['wall']:.2f} s, {util:.0f}% of CPU {env['GEN_CPU']}, exit {r['rc']}")
    if r["other"] is not None:
        line += (f"; other busy time on CPU {env['GEN_CPU']} {r['other']:.2f} s, steal {r['steal']:.2f} s, "
                 f"CPU {env['SERVER_CPU']} (nginx) busy {r['srv_busy']:.2f} s")
    print(line)
for n in notes:
    print(f"- {n}")
for label, st in (("closed", cstep), ("open", ostep)):
    if st and st.get("failed"):
        print(f"- ceiling {label}: {st['failed']} failed, errors {st.get('errors')}")
if any(r["disturbed"] for r in rows):
    print("- ⚠ disturbed: something else used over 15% of the generator's core, or the "
          "hypervisor stole over 5% of the run; those figures are not clean — rerun.")
for r in rows[:2]:
    # A clean closed-loop run keeps the generator's core busy; if it was not
    # and nothing disturbed it, the generator was waiting on nginx.
    if not r["disturbed"] and r["wall"] and r["cpu"] / r["wall"] < 0.8:
        print(f"- note: {r['gen']} {r['mode']} used under 80% of its core: nginx, not the "
              "generator, was the bottleneck, so the per-request cost is less comparable.")
print()
print("Machine:")
print()
print(f"- nproc: {env['NPROC']}; nginx pinned to CPU {env['SERVER_CPU']}, generators to CPU {env['GEN_CPU']}")
print(f"- CPU: {env['CPU_MODEL']}")
print(f"- kernel: {env['KERNEL']}")
print(f"- wrk: {env['WRK_VERSION']}")
print(f"- nginx: {env['NGINX_VERSION']}")
print(f"- ceiling: {env['CEILING_VERSION']}")
PY

cat "$OUT/compare.md"
log "table written to $OUT/compare.md; logs and JSON in $OUT/"
