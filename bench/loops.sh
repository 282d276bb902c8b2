#!/usr/bin/env bash
# bench/loops.sh — ceiling's throughput and CPU per request on 1, 2, 4 …
# event loops (--loops), against a private nginx, in the closed model.
#
# What it does:
#   1. installs nginx from apt if it is missing, builds ceiling into
#      bench/out/ceiling;
#   2. starts a private nginx (bench/lib.sh) on the first half of the
#      machine's cores (its workers: one per core there), and the generator on
#      the other half: on a 2-core machine nginx on CPU 0, ceiling on CPU 1;
#   3. runs `ceiling run --vus VUS` for DURATION seconds at each number of
#      loops from 1, doubling, up to twice the generator's cores, with every
#      loop's users on its own core as far as there are cores, and measures
#      ceiling's user+sys CPU (lib.sh's wait4 wrapper) and its completed
#      requests; then the same on one generator core with 1 and 2 loops: two
#      loops sharing a core must cost no more per request than one;
#   4. prints a Markdown table (and writes it to bench/out/loops.md) with the
#      machine's cores, so that figures from a bigger machine can be read
#      beside these.
#
# Usage:
#   bash bench/loops.sh                 # 10 s per run
#   DURATION=2 bash bench/loops.sh      # short mode, for smoke runs
#
# Environment: DURATION (seconds, default 10), VUS (users, default 50 per
# generator core), PORT (nginx's first port to try, default 18180), MAX_LOOPS
# (default twice the generator's cores).
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=bench/out
mkdir -p "$OUT"
# shellcheck source=bench/lib.sh
. bench/lib.sh

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'loops.sh: %s\n' "$*" >&2; exit 1; }

CORES="$(nproc)"
((CORES >= 2)) || die "needs at least 2 cores (the target on one half, the generator on the other)"
HALF=$((CORES / 2))
SERVER_CPUS="0-$((HALF - 1))"
GEN_CPUS="$HALF-$((CORES - 1))"
GEN_CORES=$((CORES - HALF))
DURATION="${DURATION:-10}"
VUS="${VUS:-$((50 * GEN_CORES))}"
MAX_LOOPS="${MAX_LOOPS:-$((2 * GEN_CORES))}"
for knob in DURATION VUS MAX_LOOPS; do
	[[ "${!knob}" =~ ^[0-9]+$ && "${!knob}" -ge 1 ]] || die "$knob must be a whole number >= 1, got '${!knob}'"
done

command -v nginx >/dev/null 2>&1 || {
	log "installing nginx"
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null) || die "nginx is missing and could not be installed"
}
log "building ceiling"
CGO_ENABLED=0 go build -o "$OUT/ceiling" ./cmd/ceiling

CPURUN="$OUT/cpurun.py"
write_cpurun "$CPURUN"
PORT="$(free_port "${PORT:-18180}")" || die "no free port for nginx"
NGINX_DIR="$PWD/$OUT/nginx-loops"
write_nginx_conf "$NGINX_DIR" "$PORT" bench/loops.sh
sed -i "s/^worker_processes 1;/worker_processes $HALF;/" "$NGINX_DIR/nginx.conf"
start_nginx "$(command -v nginx)" "$NGINX_DIR" "$PORT" "$SERVER_CPUS" || die "nginx did not start"
trap 'kill "$NGINX_PID" 2>/dev/null; wait "$NGINX_PID" 2>/dev/null || true' EXIT

# run NAME CPUS LOOPS: one closed run of DURATION s, pinned to CPUS.
run() {
	local name="$1" cpus="$2" loops="$3"
	GEN_CPU="$cpus" measure "$name" "$OUT/ceiling" run --url "http://127.0.0.1:$PORT/" --vus "$VUS" \
		--step "${DURATION}s" --warmup 1s --loops "$loops" --out "$OUT/$name.json" --quiet --strict=false
}

# row NAME CPUS LOOPS: the table's row of a run, from its .cpu and result.
row() {
	python3 - "$OUT/$1" "$2" "$3" <<'PY'
import json, sys
prefix, cpus, loops = sys.argv[1:]
user, sys_, wall, rc = open(prefix + ".cpu").read().split()
step = json.load(open(prefix + ".json"))["steps"][0]
done, secs = int(step["completed"]), float(step["duration_s"])
gen = step.get("generator") or {}
per = ", ".join(f"{p:.0f}%" for p in gen.get("loop_cpu_pct") or []) or "-"
ex = gen.get("loop_exchanges") or []
even = "-" if len(ex) < 2 else f"{min(ex) / max(ex):.2f}"
cpu_us = (float(user) + float(sys_)) * 1e6 / max(done, 1)
print(f"| {loops} | {cpus} | {done / secs:,.0f} | {cpu_us:.2f} | {per} | {even} | {rc} |")
PY
}

machine_info
{
	echo "## ceiling on 1, 2, 4 … event loops ($(date -u +%F))"
	echo
	echo "$CPU_MODEL, $CORES cores, $KERNEL; nginx ($HALF workers) on CPUs $SERVER_CPUS, ceiling on CPUs $GEN_CPUS;"
	echo "closed model, $VUS users, ${DURATION} s after 1 s of warm-up. CPU µs/request is ceiling's user+sys over its completed requests, warm-up included."
	echo
	echo "| loops | ceiling's CPUs | req/s | CPU µs/request | each loop's CPU | lanes' evenness (min/max) | exit |"
	echo "|---:|---|---:|---:|---|---:|---:|"
	for ((loops = 1; loops <= MAX_LOOPS; loops *= 2)); do
		log "$loops loops on CPUs $GEN_CPUS"
		run "loops-$loops" "$GEN_CPUS" "$loops"
		row "loops-$loops" "$GEN_CPUS" "$loops"
	done
	for loops in 1 2; do
		log "$loops loops on CPU $HALF alone"
		run "onecore-$loops" "$HALF" "$loops"
		row "onecore-$loops" "$HALF" "$loops"
	done
} | tee "$OUT/loops.md"
