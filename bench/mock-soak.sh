#!/usr/bin/env bash
# bench/mock-soak.sh — does `ceiling mock` stay flat under a long soak?
#
# What it does:
#   1. builds ceiling into bench/out/mock-soak/ceiling (or uses $CEILING);
#   2. starts `ceiling mock --listen 127.0.0.1:PORT --id-json id`;
#   3. posts {"id":"<a new uuid>"} to it at RATE a second for DURATION
#      seconds with `ceiling run` (open model, one step, no warm-up);
#   4. every INTERVAL seconds reads the mock's VmRSS from /proc/PID/status
#      and its distinct ids from /__ceiling/stats;
#   5. stops the mock with SIGINT (it prints its stats) and prints the RSS
#      series, the growth over the load and the growth per thousand ids.
#
# Usage:
#   bash bench/mock-soak.sh                  # 600 s at 2000/s
#   DURATION=30 bash bench/mock-soak.sh      # smoke
#
# Environment:
#   DURATION  seconds of load (default 600)
#   RATE      posts a second (default 2000)
#   PORT      the mock's port on 127.0.0.1 (default 19911)
#   INTERVAL  seconds between samples (default 10)
#   CEILING   a ceiling binary to use instead of building one (e.g. an older
#             build, to compare)
#
# It only ever signals the two processes it started, by their PIDs.
set -euo pipefail

DURATION="${DURATION:-600}"
RATE="${RATE:-2000}"
PORT="${PORT:-19911}"
INTERVAL="${INTERVAL:-10}"

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'mock-soak.sh: %s\n' "$*" >&2; exit 1; }

[[ "$DURATION" =~ ^[0-9]+$ && "$DURATION" -ge 1 ]] || die "DURATION must be whole seconds >= 1, got '$DURATION'"
[[ "$INTERVAL" =~ ^[0-9]+$ && "$INTERVAL" -ge 1 ]] || die "INTERVAL must be whole seconds >= 1, got '$INTERVAL'"
[[ "$PORT" =~ ^[0-9]+$ ]] || die "PORT must be a port number, got '$PORT'"
command -v curl >/dev/null 2>&1 || die "curl is needed to read the mock's stats"

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"
OUT="bench/out/mock-soak"
mkdir -p "$OUT"

if [[ -n "${CEILING:-}" ]]; then
	BIN="$CEILING"
else
	command -v go >/dev/null 2>&1 || die "go is not on PATH; it is needed to build ceiling"
	log "building ceiling"
	go build -o "$OUT/ceiling" ./cmd/ceiling
	BIN="$OUT/ceiling"
fi
[[ -x "$BIN" ]] || die "$BIN is not an executable"

URL="http://127.0.0.1:$PORT"
if curl -s -o /dev/null --max-time 1 "$URL/__ceiling/stats"; then
	die "something already answers on $URL; choose another PORT"
fi

MOCK_PID=""
RUN_PID=""
cleanup() {
	# Only the processes this script started, by PID.
	local pid
	for pid in "$RUN_PID" "$MOCK_PID"; do
		if [[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null; then
			kill "$pid" 2>/dev/null || true
		fi
	done
}
trap cleanup EXIT

"$BIN" mock --listen "127.0.0.1:$PORT" --id-json id >"$OUT/mock.stats.json" 2>"$OUT/mock.log" &
MOCK_PID=$!
for _ in $(seq 100); do
	curl -s -o /dev/null --max-time 1 "$URL/__ceiling/stats" && break
	kill -0 "$MOCK_PID" 2>/dev/null || die "the mock exited: $(cat "$OUT/mock.log")"
	sleep 0.1
done
curl -s -o /dev/null --max-time 1 "$URL/__ceiling/stats" || die "the mock does not answer on $URL"

# rss_kb: the mock's resident set in kB.
rss_kb() { awk '/^VmRSS:/ {print $2}' "/proc/$MOCK_PID/status"; }
# ids: the mock's distinct ids so far.
ids() { curl -s --max-time 2 "$URL/__ceiling/stats" | sed -n 's/.*"ids":\([0-9]*\).*/\1/p'; }

SERIES="$OUT/rss.tsv"
printf 't_s\trss_kb\tids\n' >"$SERIES"
T0=$(date +%s)
sample() { printf '%s\t%s\t%s\n' "$(($(date +%s) - T0))" "$(rss_kb)" "$(ids)" >>"$SERIES"; }
sample # before the load

log "posting at $RATE/s for ${DURATION}s to the mock (pid $MOCK_PID) on $URL"
"$BIN" run --url "$URL/" --method POST --header 'Content-Type: application/json' \
	--body '{"id":"{{uuid}}"}' --rate "$RATE" --step "${DURATION}s" --warmup 0s \
	--quiet --out "$OUT/run.json" >"$OUT/run.log" 2>&1 &
RUN_PID=$!

next=$((T0 + INTERVAL))
while kill -0 "$RUN_PID" 2>/dev/null; do
	now=$(date +%s)
	if ((now >= next)); then
		sample
		next=$((next + INTERVAL))
	fi
	sleep 0.5
done
run_rc=0
wait "$RUN_PID" || run_rc=$?
RUN_PID=""
sample # after the load

kill -INT "$MOCK_PID"
wait "$MOCK_PID" || true
MOCK_PID=""

echo
echo "ceiling mock soak: $RATE posts/s for ${DURATION}s, RSS every ${INTERVAL}s (ceiling run exit $run_rc)"
echo
awk -F'\t' 'NR == 1 {printf "%6s  %8s  %10s\n", "t_s", "rss_mb", "ids"; next}
	{printf "%6d  %8.1f  %10d\n", $1, $2 / 1024, $3}' "$SERIES"
# Growth over the load: from the first sample under load to the last (the
# start-up and the first buffers are not growth), and per thousand ids.
awk -F'\t' 'NR == 1 {next}
	NR == 2 {idle = $2; next}
	NR == 3 {t0 = $1; r0 = $2; i0 = $3}
	{t1 = $1; r1 = $2; i1 = $3}
	END {
		if (t1 <= t0 || i1 <= i0) { print "\nnot enough samples under load for a growth figure"; exit }
		printf "\nidle %.1f MB; under load %.1f MB at %d s -> %.1f MB at %d s: %+.1f MB (%+.2f MB/min), %+.1f bytes per new id\n",
			idle / 1024, r0 / 1024, t0, r1 / 1024, t1, (r1 - r0) / 1024, (r1 - r0) / 1024 / ((t1 - t0) / 60), (r1 - r0) * 1024 / (i1 - i0)
	}' "$SERIES"
echo
echo "the mock's stats at the end:"
cat "$OUT/mock.stats.json"
echo "series in $SERIES; ceiling run's result in $OUT/run.json"
