#!/usr/bin/env bash
# bench/timer.sh — the open model's two timers compared: Go's (about 1 ms
# granularity while the generator idles) and the precise one (a Linux
# timerfd) that ceiling uses at up to 2000 arrivals a second.
#
# Starts `ceiling demo-target` pinned to CPU 0, and for each rate runs
# `ceiling run --url .../health --rate R` pinned to CPU 1 twice: with
# CEILING_TIMER=go (Go's timer at every rate) and without (ceiling's
# choice). Prints, per run, ceiling's user+sys CPU, the p50 and p99 latency,
# the p50 service time, the mean start lag and the late arrivals, as a
# Markdown table, also written to bench/out/timer.md.
#
# Usage:
#   bash bench/timer.sh                      # rates 200 1000 2000 5000, 5 s steps
#   RATES="200 1000" STEP=3 bash bench/timer.sh
set -euo pipefail

RATES="${RATES:-200 1000 2000 5000}"
STEP="${STEP:-5}"
PORT="${PORT:-18390}"
SERVER_CPU=0
GEN_CPU=1

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'timer.sh: %s\n' "$*" >&2; exit 1; }

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"
OUT="bench/out"
mkdir -p "$OUT"
# shellcheck source=bench/lib.sh
source "$REPO_ROOT/bench/lib.sh"

command -v python3 >/dev/null 2>&1 || die "python3 is needed"
command -v taskset >/dev/null 2>&1 || die "taskset (util-linux) is needed"
(($(nproc) >= 2)) || die "needs 2 CPUs"
[[ "$STEP" =~ ^[0-9]+$ && "$STEP" -ge 1 ]] || die "STEP must be whole seconds >= 1"
for r in $RATES; do [[ "$r" =~ ^[0-9]+$ && "$r" -ge 1 ]] || die "RATES must be whole numbers, got '$r'"; done

CPURUN="$OUT/cpurun.py"
write_cpurun "$CPURUN"
log "building ceiling"
go build -o "$OUT/ceiling" ./cmd/ceiling
PORT="$(free_port "$PORT")" || die "no free port near $PORT"

# The target is this script's child, stopped by its pid in the trap.
TARGET_PID=""
cleanup() {
	if [[ -n "$TARGET_PID" ]] && kill -0 "$TARGET_PID" 2>/dev/null; then
		kill -TERM "$TARGET_PID" 2>/dev/null || true
		wait "$TARGET_PID" 2>/dev/null || true
	fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

taskset -c "$SERVER_CPU" "$OUT/ceiling" demo-target --addr "127.0.0.1:$PORT" >"$OUT/timer_target.log" 2>&1 &
TARGET_PID=$!
for _ in $(seq 50); do
	port_in_use "$PORT" && break
	sleep 0.1
done
port_in_use "$PORT" || die "the demo target does not answer on port $PORT"

ROWS="$OUT/timer.rows"
: >"$ROWS"
for r in $RATES; do
	for timer in go chosen; do
		name="timer_${r}_$timer"
		log "$r/s, timer: $timer"
		rm -f "$OUT/$name.json"
		setting=""
		[[ "$timer" == go ]] && setting=go
		CEILING_TIMER="$setting" measure "$name" "$OUT/ceiling" run --url "http://127.0.0.1:$PORT/health" \
			--rate "$r" --step "${STEP}s" --warmup 500ms --out "$OUT/$name.json" --quiet
		echo "$r $timer $name" >>"$ROWS"
	done
done

export OUT ROWS
python3 - <<'PY' | tee "$OUT/timer.md"
import json, os
out, rows = os.environ["OUT"], os.environ["ROWS"]
print("| rate | timer | ceiling CPU s | p50 ms | p99 ms | service p50 ms | mean lag ms | late |")
print("|---:|---|---:|---:|---:|---:|---:|---:|")
for line in open(rows):
    rate, timer, name = line.split()
    u, s, wall, rc = open(f"{out}/{name}.cpu").read().split()
    label = "Go's (CEILING_TIMER=go)" if timer == "go" else ("precise (ceiling's choice)" if int(rate) <= 2000 else "Go's (ceiling's choice)")
    try:
        st = json.load(open(f"{out}/{name}.json"))["steps"][0]
    except (OSError, ValueError, KeyError, IndexError):
        print(f"| {rate}/s | {label} | {float(u) + float(s):.3f} | n/a | n/a | n/a | n/a | n/a |")
        continue
    print(f"| {rate}/s | {label} | {float(u) + float(s):.3f} | {st['latency_ms']['p50']:.3f} | {st['latency_ms']['p99']:.3f} | "
          f"{st['service_ms']['p50']:.3f} | {st.get('mean_lag_ms', 0):.3f} | {st['late']} |")
PY
log "report written to $OUT/timer.md"
