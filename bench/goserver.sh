#!/usr/bin/env bash
# bench/goserver.sh — what a Go net/http server spends per request when
# ceiling loads it, and when wrk does: the target's CPU per request, the
# generator's, and the throughput, closed model, 50 connections.
#
# What it does:
#   1. installs wrk from apt if it is missing, builds ceiling and
#      bench/helloserver (net/http answering "ok") into bench/out/;
#   2. starts helloserver on CPU 0; on CPU 1, RUNS rounds (default 5) of
#      wrk -t1 -c50, wrk -t1 -c50 sending ceiling's User-Agent header,
#      wrk -t1 -c50 while another process holds a socket with
#      SO_TIMESTAMPNS set (as ceiling's event loop does: the kernel then
#      stamps every packet it receives, the server's too), and
#      ceiling --vus 50 (its event loop) for DURATION
#      seconds each (default 10), alternating; reads the server's user+sys
#      CPU from /proc/PID/stat before and after each run, and the
#      generator's from its wait4 (lib.sh's wrapper);
#   3. prints a Markdown table of the medians (and every round) and writes
#      it to bench/out/goserver.md.
#
# The goal (bench/README.md): ceiling's throughput at least wrk's, and the
# server's CPU per ceiling request no more than per wrk request (or the
# difference explained with figures).
#
# Usage:
#   bash bench/goserver.sh                    # 5 rounds of 10 s
#   RUNS=1 DURATION=3 bash bench/goserver.sh  # a smoke run
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=bench/out
mkdir -p "$OUT"
# shellcheck source=bench/lib.sh
. bench/lib.sh

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'goserver.sh: %s\n' "$*" >&2; exit 1; }

RUNS="${RUNS:-5}"
DURATION="${DURATION:-10}"
CONNS="${CONNS:-50}"
for knob in RUNS DURATION CONNS; do
	[[ "${!knob}" =~ ^[0-9]+$ && "${!knob}" -ge 1 ]] || die "$knob must be a whole number >= 1, got '${!knob}'"
done
(($(nproc) >= 2)) || die "needs at least 2 cores (the server on one, the generator on another)"
command -v wrk >/dev/null 2>&1 || {
	log "installing wrk"
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq wrk >/dev/null) || die "wrk is missing and could not be installed"
}
log "building ceiling and helloserver"
CGO_ENABLED=0 go build -o "$OUT/ceiling" ./cmd/ceiling
CGO_ENABLED=0 go build -o "$OUT/helloserver" ./bench/helloserver

CPURUN="$OUT/cpurun.py"
write_cpurun "$CPURUN"
PORT="$(free_port "${PORT:-18190}")" || die "no free port for the server"
taskset -c 0 "$OUT/helloserver" -listen "127.0.0.1:$PORT" >"$OUT/helloserver.log" 2>&1 &
SERVER_PID=$!
trap 'kill "$SERVER_PID" 2>/dev/null; wait "$SERVER_PID" 2>/dev/null || true' EXIT
for _ in $(seq 50); do
	port_in_use "$PORT" && break
	sleep 0.1
done
port_in_use "$PORT" || die "helloserver does not listen on $PORT; see $OUT/helloserver.log"
URL="http://127.0.0.1:$PORT/"

# server_cpu: the server's user+sys CPU so far, in clock ticks.
server_cpu() { awk '{print $14 + $15}' "/proc/$SERVER_PID/stat"; }

# shellcheck disable=SC2034 # read by measure (lib.sh)
GEN_CPU=1
# one NAME CMD...: a run of CMD, with the server's CPU ticks around it in NAME.srv.
one() {
	local name="$1" before
	shift
	before="$(server_cpu)"
	measure "$name" "$@"
	echo "$before $(server_cpu) $(getconf CLK_TCK)" >"$OUT/$name.srv"
}

NAMES=()
for ((r = 1; r <= RUNS; r++)); do
	log "round $r: wrk -t1 -c$CONNS, ${DURATION} s"
	one "gosrv-wrk-$r" wrk -t1 "-c$CONNS" "-d${DURATION}s" "$URL"
	log "round $r: wrk -t1 -c$CONNS with ceiling's User-Agent header, ${DURATION} s"
	one "gosrv-wrkua-$r" wrk -t1 "-c$CONNS" "-d${DURATION}s" -H "User-Agent: ceiling" "$URL"
	log "round $r: wrk -t1 -c$CONNS while a socket asks for receive times, ${DURATION} s"
	python3 -c 'import socket, time; s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM); s.setsockopt(socket.SOL_SOCKET, getattr(socket, "SO_TIMESTAMPNS", 35), 1); time.sleep(3600)' &
	STAMP_PID=$!
	sleep 0.2
	kill -0 "$STAMP_PID" 2>/dev/null || die "the socket holding SO_TIMESTAMPNS did not start (python3 could not set it)"
	one "gosrv-wrkts-$r" wrk -t1 "-c$CONNS" "-d${DURATION}s" "$URL"
	kill "$STAMP_PID"
	wait "$STAMP_PID" 2>/dev/null || true
	log "round $r: ceiling --vus $CONNS, ${DURATION} s"
	one "gosrv-ceiling-$r" "$OUT/ceiling" run --url "$URL" --vus "$CONNS" --step "${DURATION}s" --warmup 0s \
		--out "$OUT/gosrv-ceiling-$r.json" --quiet --strict=false
	NAMES+=("gosrv-wrk-$r" "gosrv-wrkua-$r" "gosrv-wrkts-$r" "gosrv-ceiling-$r")
done

machine_info
python3 - "$OUT" "$RUNS" "$DURATION" "$CONNS" "$CPU_MODEL" "$KERNEL" "$(go version)" "${NAMES[@]}" <<'PY' | tee "$OUT/goserver.md"
import json, re, statistics, sys
out, runs, duration, conns, cpu, kernel, gover, *names = sys.argv[1:]

def figures(name):
    user, sys_, wall, rc = open(f"{out}/{name}.cpu").read().split()
    before, after, tck = (float(x) for x in open(f"{out}/{name}.srv").read().split())
    if "wrk" in name:
        text = open(f"{out}/{name}.log").read()
        m = re.search(r"(\d+) requests in ([\d.]+)(m?s)", text)
        done = int(m.group(1)) if m else 0
        secs = float(m.group(2)) / (1000 if m and m.group(3) == "ms" else 1) if m else 0
    else:
        try:
            step = json.load(open(f"{out}/{name}.json"))["steps"][0]
            done, secs = int(step["completed"]), float(step["duration_s"])
        except (OSError, ValueError, IndexError, KeyError):
            done, secs = 0, 0
    gen = (float(user) + float(sys_)) * 1e6 / max(done, 1)
    srv = (after - before) / tck * 1e6 / max(done, 1)
    return {"req_s": done / secs if secs else 0, "gen_us": gen, "srv_us": srv,
            "srv_busy": (after - before) / tck / float(wall) * 100 if float(wall) else 0, "exit": rc}

rows = {}
for n in names:
    rows.setdefault(re.sub(r"-\d+$", "", n), []).append(figures(n))
med = lambda rs, k: statistics.median(r[k] for r in rs)
print(f"## A Go net/http server under ceiling and under wrk ({runs} rounds of {duration} s, medians)")
print()
print(f"{cpu}, {kernel}; {gover}. bench/helloserver on CPU 0, the generator on CPU 1; closed, {conns} connections.")
print("Server µs/request is the server's user+sys CPU (/proc/PID/stat) over the generator's completed requests.")
print()
print("| generator | req/s | server CPU µs/request | server's core busy | generator CPU µs/request | exits |")
print("|---|---:|---:|---:|---:|---|")
labels = {"gosrv-wrk": f"wrk -t1 -c{conns}", "gosrv-wrkua": f"wrk -t1 -c{conns} -H 'User-Agent: ceiling'",
          "gosrv-wrkts": f"wrk -t1 -c{conns}, a socket asking for receive times meanwhile",
          "gosrv-ceiling": f"ceiling --vus {conns}"}
for key, rs in rows.items():
    print(f"| {labels[key]} | {med(rs, 'req_s'):,.0f} | {med(rs, 'srv_us'):.2f} | {med(rs, 'srv_busy'):.0f}% | "
          f"{med(rs, 'gen_us'):.2f} | {' '.join(r['exit'] for r in rs)} |")
print()
for key, rs in rows.items():
    print(f"- {labels[key]}: " + "; ".join(f"{r['req_s']:,.0f}/s, server {r['srv_us']:.2f} µs, generator {r['gen_us']:.2f} µs" for r in rs))
PY
