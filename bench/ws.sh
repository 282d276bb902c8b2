#!/usr/bin/env bash
# bench/ws.sh — what WebSocket load costs ceiling: CPU per frame+ack, and
# resident memory per idle socket.
#
# What it does (see the "WebSocket" section of bench/README.md for the why):
#   1. builds ceiling once into bench/out/ceiling;
#   2. raises the open-file limit (ulimit -n, default 65536) for itself and
#      everything it starts, and stops if it cannot;
#   3. frames: starts `ceiling demo-target` on 127.0.0.1 pinned to CPU 0 and
#      runs ceiling pinned to CPU 1, open model, 20,000 frames/s over 100
#      held sockets, each frame acked by the target; measures ceiling's
#      user+sys CPU time and divides it by the frames;
#   3a. the same frames with CEILING_LOOP=off: ceiling's goroutine engine
#      (a worker per frame in flight, a reader per socket), for comparison
#      with the event loop that carries them by default (skip: GOROUTINES=0);
#   3b. floor: on a fresh demo target, bench/wsfloor (the least a Go program
#      can do: gorilla/websocket, one pacing goroutine with a Go timer, a
#      reader per socket, no matching or measuring) sends the same frames;
#      its CPU per frame is the machine's price of paced frames, and
#      ceiling's figure is read against it as a ratio within the run;
#   4. idle soak: starts a fresh demo target, and ceiling holds 10,000
#      sockets open sending nothing; samples ceiling's resident memory
#      while it runs;
#   5. prints a Markdown report and writes it to bench/out/ws.md.
#
# Usage:
#   bash bench/ws.sh                                   # 10 s frames, 10 s soak of 10,000 sockets
#   DURATION=2 SOAK=3 SOCKETS=2000 bash bench/ws.sh    # short mode, for smoke runs
#
# Environment:
#   DURATION  seconds of the counted frames step (default 10)
#   WARMUP    seconds of warm-up before it (default 1)
#   RATE      frames per second (default 20000)
#   CONNS     sockets the frames are spread over (default 100)
#   GOROUTINES  1 (default): also run the frames on the goroutine engine
#             (CEILING_LOOP=off); 0: skip that run
#   SOAK      seconds of the idle soak (default 10)
#   SOCKETS   idle sockets held in the soak (default 10000)
#   PORT      first port to try for the demo target (default 18290; the next
#             free one is used if it is taken)
#   NOFILE    open-file limit to ask for (default 65536; when the hard limit
#             cannot be raised, the hard limit is used if it covers
#             SOCKETS + 1024, else the script stops)
set -euo pipefail

DURATION="${DURATION:-10}"
WARMUP="${WARMUP:-1}"
RATE="${RATE:-20000}"
CONNS="${CONNS:-100}"
SOAK="${SOAK:-10}"
GOROUTINES="${GOROUTINES:-1}"
SOCKETS="${SOCKETS:-10000}"
PORT="${PORT:-18290}"
NOFILE="${NOFILE:-65536}"

# The target on CPU 0, the generator on CPU 1: the generator's CPU is then
# never confused with the server's, and the two never take turns on a core.
SERVER_CPU=0
GEN_CPU=1

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'ws.sh: %s\n' "$*" >&2; exit 1; }

whole() { [[ "$2" =~ ^[0-9]+$ && "$2" -ge "$3" ]] || die "$1 must be a whole number >= $3, got '$2'"; }
whole DURATION "$DURATION" 1
whole WARMUP "$WARMUP" 0
whole RATE "$RATE" 1
whole CONNS "$CONNS" 1
whole SOAK "$SOAK" 1
whole SOCKETS "$SOCKETS" 1
whole NOFILE "$NOFILE" 1024
# Each socket is one descriptor in ceiling and one in the target; leave
# room for the runtime, the listener and the logs.
((NOFILE >= SOCKETS + 1024)) || die "NOFILE=$NOFILE is too low for SOCKETS=$SOCKETS (needs at least $((SOCKETS + 1024)))"

# ---------------------------------------------------------------------------
# Locations. Works from the repository root wherever it is called from;
# everything it writes goes to bench/out/, which is git-ignored.
# ---------------------------------------------------------------------------
REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"
OUT="bench/out"
mkdir -p "$OUT"

# shellcheck source=bench/lib.sh
source "$REPO_ROOT/bench/lib.sh"

# ---------------------------------------------------------------------------
# Dependencies: python3 (CPU measurement, RSS sampling, the report), taskset
# and go. Only taskset can be missing on a Debian machine with python.
# ---------------------------------------------------------------------------
command -v python3 >/dev/null 2>&1 || die "python3 is needed (CPU measurement and the report)"
if ! command -v taskset >/dev/null 2>&1; then
	SUDO=""
	[[ "$(id -u)" -ne 0 ]] && command -v sudo >/dev/null 2>&1 && SUDO="sudo"
	log "installing missing package: util-linux (taskset)"
	$SUDO apt-get update
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y util-linux
fi
command -v go >/dev/null 2>&1 || die "go is not on PATH; it is needed to build ceiling"

NPROC="$(nproc)"
((NPROC >= 2)) || die "needs at least 2 CPUs (target on CPU $SERVER_CPU, generator on CPU $GEN_CPU); this machine has $NPROC"

# ---------------------------------------------------------------------------
# File descriptors. 10,000 sockets are 10,000 descriptors in ceiling and as
# many in the target; both inherit this shell's limit. (Go raises its soft
# limit to the hard one by itself, but the target and ceiling should not
# depend on that, and the hard limit may be too low as well.)
# ---------------------------------------------------------------------------
# NOFILE (65536) is asked for first. Raising a hard limit needs
# CAP_SYS_RESOURCE, which containers often lack even for root; then the
# soft limit goes up to the hard one, which is fine as long as that still
# covers the sockets. Only when it does not does the script stop.
NEED_NOFILE=$((SOCKETS + 1024))
HARD_NOFILE="$(ulimit -Hn)"
if ! ulimit -n "$NOFILE" 2>/dev/null; then
	if [[ "$HARD_NOFILE" == unlimited ]] || ((HARD_NOFILE >= NEED_NOFILE)); then
		ulimit -n "$HARD_NOFILE" || die "cannot raise the open-file limit to the hard limit $HARD_NOFILE"
		log "cannot raise the open-file limit to $NOFILE (hard limit $HARD_NOFILE, not raisable here); using $HARD_NOFILE, enough for $SOCKETS sockets"
	else
		die "cannot raise the open-file limit to $NOFILE (soft $(ulimit -Sn), hard $HARD_NOFILE): $SOCKETS sockets need at least $NEED_NOFILE descriptors in ceiling and as many in the target. Raise the hard limit (root with CAP_SYS_RESOURCE, limits.conf, systemd LimitNOFILE, docker --ulimit nofile=65536) or lower SOCKETS."
	fi
fi
log "open-file limit: $(ulimit -Sn)"

CPURUN="$OUT/cpurun.py"
write_cpurun "$CPURUN"

log "building ceiling and the wsfloor baseline"
go build -o "$OUT/ceiling" ./cmd/ceiling
go build -o "$OUT/wsfloor" ./bench/wsfloor
CEILING="$OUT/ceiling"

PORT="$(free_port "$PORT")" || die "no free port found near $PORT"
WS_URL="ws://127.0.0.1:$PORT/widget"

# ---------------------------------------------------------------------------
# Processes. The demo target runs in the background of this script, pinned
# to CPU 0 (taskset execs it, so $! is the target itself); the generator runs
# under the cpurun wrapper, also in the background so that a signal to this
# script is handled at once rather than after the run. The trap stops exactly
# these, by pid, and nothing else.
# ---------------------------------------------------------------------------
TARGET_PID=""
WRAPPER_PID=""
GEN_NAME=""

stop_pid() { # stop_pid PID: TERM, up to 10 s, then KILL.
	local pid="$1"
	[[ -n "$pid" ]] && kill -0 "$pid" 2>/dev/null || return 0
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 100); do
		kill -0 "$pid" 2>/dev/null || break
		sleep 0.1
	done
	kill -KILL "$pid" 2>/dev/null || true
	wait "$pid" 2>/dev/null || true
}

stop_target() {
	stop_pid "$TARGET_PID"
	TARGET_PID=""
}

cleanup() {
	if [[ -n "$WRAPPER_PID" ]] && kill -0 "$WRAPPER_PID" 2>/dev/null; then
		# The generator is the wrapper's child; its pid is in NAME.pid.
		local gen=""
		[[ -n "$GEN_NAME" && -s "$OUT/$GEN_NAME.pid" ]] && gen="$(cat "$OUT/$GEN_NAME.pid")"
		stop_pid "$gen"
		stop_pid "$WRAPPER_PID"
	fi
	stop_target
}
trap cleanup EXIT
trap 'exit 130' INT TERM

# start_target NAME: a fresh demo target on $PORT, log in $OUT/NAME.log.
start_target() {
	local name="$1"
	log "starting the demo target on 127.0.0.1:$PORT (CPU $SERVER_CPU)"
	taskset -c "$SERVER_CPU" "$CEILING" demo-target --addr "127.0.0.1:$PORT" >"$OUT/$name.log" 2>&1 &
	TARGET_PID=$!
	for _ in $(seq 50); do
		port_in_use "$PORT" && break
		kill -0 "$TARGET_PID" 2>/dev/null || die "the demo target exited at start-up; see $OUT/$name.log"
		sleep 0.1
	done
	port_in_use "$PORT" || die "the demo target does not answer on port $PORT; see $OUT/$name.log"
}

# run_generator NAME CMD...: measure NAME CMD... in the background, waited
# for, so the trap can stop it.
run_generator() {
	GEN_NAME="$1"
	measure "$@" &
	WRAPPER_PID=$!
	wait "$WRAPPER_PID" || true
	WRAPPER_PID=""
}

# proc_kb PID FIELD: a /proc/PID/status figure in kB, or 0.
proc_kb() { awk -v f="$2:" '$1 == f { print $2; found = 1 } END { if (!found) print 0 }' "/proc/$1/status" 2>/dev/null || echo 0; }

# ---------------------------------------------------------------------------
# 1. Frames: CPU per frame+ack.
# ---------------------------------------------------------------------------
FRAMES_PLAN="$OUT/ws-frames.yaml"
cat >"$FRAMES_PLAN" <<EOF
# Written by bench/ws.sh; rewritten on every run.
name: ws-frames
load:
  model: open
  rates: [$RATE]
  step: ${DURATION}s
  warmup: ${WARMUP}s
scenarios:
  - name: widget
    websocket:
      url: $WS_URL
      connections: $CONNS
      send: '{"type":"message","clientId":"{{seq}}","text":"hi"}'
      ack: {json: clientId}
      ack_timeout: 5s
EOF

start_target ws_target_frames
log "frames: $RATE frames/s over $CONNS sockets, ${WARMUP}s warm-up + ${DURATION}s (ceiling on CPU $GEN_CPU)"
rm -f "$OUT/ws.json"
run_generator ws_frames "$CEILING" run "$FRAMES_PLAN" --out "$OUT/ws.json" --quiet
stop_target
sleep 1

if [[ "$GOROUTINES" == 1 ]]; then
	start_target ws_target_goroutines
	log "frames on goroutines (CEILING_LOOP=off), ${WARMUP}s warm-up + ${DURATION}s (CPU $GEN_CPU)"
	rm -f "$OUT/ws-goroutines.json"
	CEILING_LOOP=off run_generator ws_goroutines "$CEILING" run "$FRAMES_PLAN" --out "$OUT/ws-goroutines.json" --quiet
	stop_target
	sleep 1
fi

# ---------------------------------------------------------------------------
# 1b. Floor: the same frames from the least a Go program can do.
# ---------------------------------------------------------------------------
start_target ws_target_floor
log "floor: wsfloor, $RATE frames/s over $CONNS sockets, ${WARMUP}s + ${DURATION}s (CPU $GEN_CPU)"
run_generator ws_floor "$OUT/wsfloor" -url "$WS_URL" -conns "$CONNS" -rate "$RATE" -warmup "${WARMUP}s" -duration "${DURATION}s"
stop_target
sleep 1

# ---------------------------------------------------------------------------
# 2. Idle soak: resident memory of SOCKETS held sockets. The open model at
# 1/s with no `send` holds its sockets for the step and sends nothing (the
# closed model would open one socket per user, a different shape). The
# wrapper samples ceiling's VmRSS/VmHWM every 0.5 s.
# ---------------------------------------------------------------------------
SOAK_PLAN="$OUT/ws-soak.yaml"
cat >"$SOAK_PLAN" <<EOF
# Written by bench/ws.sh; rewritten on every run.
name: ws-soak
load:
  model: open
  rates: [1]
  step: ${SOAK}s
  warmup: 0s
scenarios:
  - name: idle
    websocket:
      url: $WS_URL
      connections: $SOCKETS
EOF

start_target ws_target_soak
log "idle soak: $SOCKETS sockets for ${SOAK}s (ceiling on CPU $GEN_CPU)"
rm -f "$OUT/ws-soak.json"
# The target's figures are read just after ceiling exits, before the
# target is stopped: its peak RSS (VmHWM) covers the soak.
CPURUN_SAMPLE=0.5 run_generator ws_soak "$CEILING" run "$SOAK_PLAN" --out "$OUT/ws-soak.json" --quiet
TARGET_HWM_KB=0
TARGET_ALIVE=0
if kill -0 "$TARGET_PID" 2>/dev/null; then
	TARGET_ALIVE=1
	TARGET_HWM_KB="$(proc_kb "$TARGET_PID" VmHWM)"
fi
stop_target

# ---------------------------------------------------------------------------
# Report.
# ---------------------------------------------------------------------------
machine_info
CEILING_VERSION="$("$CEILING" version 2>&1 | head -n1 || true)"
GO_VERSION="$(go version 2>/dev/null | sed 's/^go version //' || true)"
FD_LIMIT="$(ulimit -Sn)"
export GOROUTINES OUT DURATION WARMUP RATE CONNS SOAK SOCKETS NPROC CPU_MODEL KERNEL CEILING_VERSION GO_VERSION \
	GEN_CPU SERVER_CPU FD_LIMIT TARGET_HWM_KB TARGET_ALIVE
python3 - >"$OUT/ws.md" <<'PY'
import json, os

env = os.environ
out = env["OUT"]
hz = os.sysconf("SC_CLK_TCK")
gen_cpu, srv_cpu = "cpu" + env["GEN_CPU"], "cpu" + env["SERVER_CPU"]
rate, warmup, duration = int(env["RATE"]), int(env["WARMUP"]), int(env["DURATION"])
sockets, soak = int(env["SOCKETS"]), int(env["SOAK"])

CPU_GOAL_US = 8.0          # µs of ceiling CPU per frame+ack at 20k frames/s
RSS_GOAL_MB = 100.0        # MB of ceiling RSS for 10,000 idle sockets
RSS_GOAL_SOCKETS = 10_000


def cpu_file(name):
    """user_s sys_s wall_s exit_code, as written by cpurun.py."""
    u, s, wall, rc = open(f"{out}/{name}.cpu").read().split()
    return float(u), float(s), float(wall), int(rc)


def rss_file(name):
    """max VmRSS, last VmHWM, ru_maxrss (kB) and samples, from cpurun.py."""
    try:
        return [int(x) for x in open(f"{out}/{name}.rss").read().split()]
    except (OSError, ValueError):
        return [0, 0, 0, 0]


def step_of(file):
    try:
        return json.load(open(f"{out}/{file}"))["steps"][0]
    except (OSError, ValueError, KeyError, IndexError, TypeError):
        return None


def proc_stat(path):
    cpus = {}
    for line in open(path):
        f = line.split()
        v = [int(x) for x in f[1:]] + [0] * 8
        # user nice system idle iowait irq softirq steal ...
        cpus[f[0]] = dict(busy=v[0] + v[1] + v[2] + v[5] + v[6], steal=v[7])
    return cpus


def disturbance(name, cpu, wall):
    """other busy s on the generator's core, steal s, target core busy s,
    and whether the run counts as disturbed (compare.sh's rule)."""
    try:
        a, b = proc_stat(f"{out}/{name}.stat0"), proc_stat(f"{out}/{name}.stat1")
    except (OSError, KeyError):
        return None
    d = lambda c, k: (b[c][k] - a[c][k]) / hz
    other = max(d(gen_cpu, "busy") - cpu, 0.0)
    steal = d(gen_cpu, "steal") + d(srv_cpu, "steal")
    disturbed = bool(wall) and (other > max(0.15 * wall, 0.05) or steal > max(0.05 * wall, 0.05))
    return dict(other=other, steal=steal, srv_busy=d(srv_cpu, "busy"), disturbed=disturbed)


def fmt(v, spec, suffix=""):
    return "n/a" if v is None else format(v, spec) + suffix


def engine_of(st):
    return ((st or {}).get("generator") or {}).get("engine") or "?"


def ok_of(st):
    return (st or {}).get("ok") if st else None


def errors_of(st):
    if not st:
        return "n/a"
    if not st.get("failed"):
        return "0"
    classes = ", ".join(f"{k} {v}" for k, v in sorted((st.get("errors") or {}).items(), key=lambda kv: -kv[1]))
    return f"{st['failed']} ({classes})" if classes else str(st["failed"])


notes = []

# --- 1. frames -------------------------------------------------------------
fu, fs, fwall, frc = cpu_file("ws_frames")
fcpu = fu + fs
fst = step_of("ws.json")
fdist = disturbance("ws_frames", fcpu, fwall)
completed = fst.get("completed") if fst else None
warm_frames = rate * warmup
per_counted = fcpu * 1e6 / completed if completed else None
per_fair = fcpu * 1e6 / (completed + warm_frames) if completed else None
lat = (fst or {}).get("latency_ms") or {}
verdict = "n/a" if per_fair is None else ("✓ met" if per_fair <= CPU_GOAL_US else "✗ missed")
flags = []
if frc != 0:
    flags.append(f"exit {frc}")
if fdist and fdist["disturbed"]:
    flags.append("⚠ disturbed")

print(f"## WebSocket frames: ceiling CPU per frame+ack ({rate:,}/s over {env['CONNS']} sockets, "
      f"{warmup} s warm-up + {duration} s)")
print()
print("| frames counted | + warm-up frames | ceiling CPU s | µs/frame, counted only | "
      "µs/frame, incl. warm-up (fair) | goal ≤ 8 µs | achieved/s | late | p50 ms | p99 ms | errors |")
print("|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|---|")
print(f"| {fmt(completed, ',d')} | {warm_frames:,} | {fcpu:.3f} | {fmt(per_counted, '.2f')} | "
      f"**{fmt(per_fair, '.2f')}** | {verdict}{' — ' + ', '.join(flags) if flags else ''} | "
      f"{fmt((fst or {}).get('achieved_rate'), ',.1f')} | {fmt((fst or {}).get('late'), ',d')} | "
      f"{fmt(lat.get('p50'), '.3f')} | {fmt(lat.get('p99'), '.3f')} | {errors_of(fst)} |")
print()
# The floor: wsfloor's CPU over every frame it sent (warm-up included, as
# for ceiling's fair figure). Its log says "sent N acked M in S s".
ou, os_, owall, orc = cpu_file("ws_floor")
ocpu = ou + os_
try:
    words = open(f"{out}/ws_floor.log").read().split()
    o_sent, o_acked = int(words[words.index("sent") + 1]), int(words[words.index("acked") + 1])
except (OSError, ValueError, IndexError):
    o_sent = o_acked = None
o_per = ocpu * 1e6 / o_sent if o_sent else None
ratio = per_fair / o_per if per_fair and o_per else None
odist = disturbance("ws_floor", ocpu, owall)
oflags = [f"exit {orc}"] if orc != 0 else []
if odist and odist["disturbed"]:
    oflags.append("⚠ disturbed")
if o_sent and o_acked is not None and o_acked < o_sent:
    oflags.append(f"⚠ {o_sent - o_acked:,} not acked")
print()
print("The floor: the same frames sent by bench/wsfloor, the least a Go program can do (gorilla/websocket, "
      "one pacing goroutine with a Go timer, a reader per socket, no ack matching, no latency, no histograms):")
print()
print("| program | frames sent | acked | CPU s | µs/frame | ÷ floor |")
print("|---|---:|---:|---:|---:|---:|")
fflags = (["⚠ disturbed"] if fdist and fdist["disturbed"] else []) + ([f"exit {frc}"] if frc != 0 else [])
print(f"| ceiling ({engine_of(fst)}){' — ' + ', '.join(fflags) if fflags else ''} | "
      f"{fmt(completed + warm_frames if completed else None, ',d')} | {fmt(ok_of(fst), ',d')} (+ warm-up) | "
      f"{fcpu:.3f} | {fmt(per_fair, '.2f')} | **{fmt(ratio, '.2f')}×** |")
if env.get("GOROUTINES") == "1":
    gu, gs, gwall, grc = cpu_file("ws_goroutines")
    gcpu, gst = gu + gs, step_of("ws-goroutines.json")
    gdone = gst.get("completed") if gst else None
    g_per = gcpu * 1e6 / (gdone + warm_frames) if gdone else None
    gdist = disturbance("ws_goroutines", gcpu, gwall)
    gflags = (["⚠ disturbed"] if gdist and gdist["disturbed"] else []) + ([f"exit {grc}"] if grc != 0 else [])
    glat = (gst or {}).get("latency_ms") or {}
    print(f"| ceiling ({engine_of(gst)}, CEILING_LOOP=off){' — ' + ', '.join(gflags) if gflags else ''} | "
          f"{fmt(gdone + warm_frames if gdone else None, ',d')} | {fmt(ok_of(gst), ',d')} (+ warm-up) | "
          f"{gcpu:.3f} | {fmt(g_per, '.2f')} | {fmt(g_per / o_per if g_per and o_per else None, '.2f')}× |")
print(f"| wsfloor{' — ' + ', '.join(oflags) if oflags else ''} | {fmt(o_sent, ',d')} | {fmt(o_acked, ',d')} | "
      f"{ocpu:.3f} | {fmt(o_per, '.2f')} | 1× |")
print()
if env.get("GOROUTINES") == "1":
    print(f"On goroutines: late {fmt((gst or {}).get('late'), ',d')}, p50 {fmt(glat.get('p50'), '.3f')} ms, "
          f"p99 {fmt(glat.get('p99'), '.3f')} ms, errors {errors_of(gst)}.")
    print()
print("Paced frames cost mostly the kernel's and the runtime's price of waking an idle process (the timer, "
      "then the acks) on this machine; the floor pays it too. ceiling ÷ floor is what ceiling's own work "
      "adds; the 8 µs goal was set from a saturated loop, where no process sleeps.")
print()
print(f"CPU is the whole ceiling process, start to exit: start-up, opening the {env['CONNS']} sockets, "
      f"the {warmup} s warm-up ({warm_frames:,} frames at the target rate, assumed sent; ceiling does "
      "not count them) and writing the result. The fair figure divides it by the counted frames plus "
      "the warm-up's, because the process did that work; the counted-only figure is "
      f"(1 + {warmup}/{duration}) = {1 + warmup / duration:.2f}× the fair one and is shown for comparison only.")
print()

# --- 2. idle soak ----------------------------------------------------------
su, ss, swall, src = cpu_file("ws_soak")
sst = step_of("ws-soak.json")
max_rss, last_hwm, ru_maxrss, samples = rss_file("ws_soak")
peak_kb = max(max_rss, last_hwm)
peak_mb = peak_kb * 1024 / 1e6 if peak_kb else None
ws = (sst or {}).get("websocket") or {}
open_n = ws.get("open")
per_k = peak_mb * 1000 / sockets if peak_mb else None
if peak_mb is None:
    sverdict = "n/a"
elif sockets == RSS_GOAL_SOCKETS:
    sverdict = "✓ met" if peak_mb <= RSS_GOAL_MB else "✗ missed"
else:
    sverdict = f"n/a at {sockets:,} (the goal is for 10,000)"
sflags = [f"exit {src}"] if src != 0 else []
if open_n is not None and open_n < sockets:
    sflags.append(f"⚠ only {open_n:,} of {sockets:,} open")

print(f"## WebSocket idle soak: ceiling RSS ({sockets:,} sockets, {soak} s, no frames)")
print()
print("| sockets asked | open at end | failed to open | dropped | peak RSS MB | MB per 1000 sockets | "
      "goal ≤ 100 MB for 10,000 | connect p99 ms |")
print("|---:|---:|---:|---:|---:|---:|---|---:|")
cms = ws.get("connect_ms") or {}
print(f"| {sockets:,} | {fmt(open_n, ',d')} | {fmt(ws.get('failed'), ',d')} | {fmt(ws.get('dropped'), ',d')} | "
      f"**{fmt(peak_mb, '.1f')}** | {fmt(per_k, '.2f')} | {sverdict}{' — ' + ', '.join(sflags) if sflags else ''} | "
      f"{fmt(cms.get('p99'), '.2f')} |")
print()
print("Peak RSS is the larger of the highest VmRSS sampled every 0.5 s from /proc/PID/status and the "
      "last VmHWM read before ceiling exited; MB are 10^6 bytes. RSS includes the Go runtime's fixed "
      "base (a few MB), so fewer sockets overstate the cost per 1000.")
print()

# --- details ---------------------------------------------------------------
print("Details:")
print()
util = fcpu / fwall * 100 if fwall else 0
line = (f"- frames: user {fu:.3f} s, sys {fs:.3f} s, wall {fwall:.2f} s, {util:.0f}% of CPU {env['GEN_CPU']}, "
        f"exit {frc}")
if fdist:
    line += (f"; other busy time on CPU {env['GEN_CPU']} {fdist['other']:.2f} s, steal {fdist['steal']:.2f} s, "
             f"CPU {env['SERVER_CPU']} (demo target) busy {fdist['srv_busy']:.2f} s "
             f"({fdist['srv_busy'] / fwall * 100:.0f}% of the wall time)")
print(line)
if fst:
    fws = fst.get("websocket") or {}
    print(f"- frames: sent {fst.get('sent')}, completed {fst.get('completed')}, ok {fst.get('ok')}, "
          f"failed {fst.get('failed')}, max lag {fmt(fst.get('max_lag_ms'), '.1f')} ms, "
          f"p999 {fmt(lat.get('p999'), '.3f')} ms, max {fmt(lat.get('max'), '.3f')} ms; sockets open {fws.get('open')}, "
          f"opened {fws.get('opened')}, failed {fws.get('failed')}, dropped {fws.get('dropped')}, "
          f"unknown acks {fws.get('unknown_acks')}")
else:
    print("- frames: no result (see bench/out/ws_frames.log)")
if fdist and fdist["disturbed"]:
    print("- ⚠ disturbed: something else used over 15% of the generator's core, or the hypervisor "
          "stole over 5% of the run; the CPU figure is not clean — rerun.")
if fst and fdist and fwall and fdist["srv_busy"] / fwall > 0.9:
    print("- note: the demo target kept its core over 90% busy; latency and lateness are the target's, "
          "not ceiling's.")
series = []
try:
    series = [(float(t), int(kb)) for t, kb in (l.split() for l in open(f"{out}/ws_soak.rsslog"))]
except (OSError, ValueError):
    pass
if series:
    top = max(kb for _, kb in series)
    t_peak = next(t for t, kb in series if kb >= 0.99 * top)
    print(f"- soak: RSS over time (wall s → MB): "
          + ", ".join(f"{t:.1f} → {kb * 1024 / 1e6:.1f}" for t, kb in series[:: -(-len(series) // 12)])
          + f"; within 1 % of the peak from {t_peak:.1f} s, last sample {series[-1][1] * 1024 / 1e6:.1f} MB at {series[-1][0]:.1f} s "
          "(what the held sockets cost once opening them is over)")
print(f"- soak: VmRSS max {max_rss / 1024:.1f} MiB over {samples} samples, last VmHWM {last_hwm / 1024:.1f} MiB, "
      f"wait4 ru_maxrss {ru_maxrss / 1024:.1f} MiB (includes the forked wrapper's ~10 MB before exec); "
      f"ceiling CPU user {su:.3f} s, sys {ss:.3f} s, wall {swall:.2f} s, exit {src}")
if sst:
    print(f"- soak: sockets opened {ws.get('opened')}, failed {ws.get('failed')}, dropped {ws.get('dropped')}; "
          f"connect p50 {fmt(cms.get('p50'), '.2f')} ms, max {fmt(cms.get('max'), '.2f')} ms; "
          f"step completed {sst.get('completed')}, failed {sst.get('failed')}, errors {sst.get('errors') or {}}")
else:
    print("- soak: no result (see bench/out/ws_soak.log)")
for label, st in (("frames", fst), ("soak", sst)):
    for w in (st or {}).get("warnings") or []:
        print(f"- {label}: ceiling warned: {w}")
if env["TARGET_ALIVE"] == "1":
    print(f"- soak: demo target peak RSS (VmHWM) {int(env['TARGET_HWM_KB']) * 1024 / 1e6:.1f} MB")
else:
    print("- soak: ⚠ the demo target was no longer running when ceiling finished (see bench/out/ws_target_soak.log)")
print()
print("Machine:")
print()
print(f"- nproc: {env['NPROC']}; demo target pinned to CPU {env['SERVER_CPU']}, ceiling to CPU {env['GEN_CPU']}; "
      f"open-file limit {env['FD_LIMIT']}")
print(f"- CPU: {env['CPU_MODEL']}")
print(f"- kernel: {env['KERNEL']}")
print(f"- ceiling: {env['CEILING_VERSION']} ({env['GO_VERSION']})")
PY

cat "$OUT/ws.md"
log "report written to $OUT/ws.md; logs, plans and JSON in $OUT/"
