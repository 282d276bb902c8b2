#!/usr/bin/env bash
# bench/uring.sh — would an io_uring loop beat ceiling's epoll loop? Runs
# bench/uring (see bench/uring/main.go) in each of its loops against a
# private nginx, closed model, CONNS connections, DURATION seconds a run,
# RUNS rounds with the variants alternating inside each round, and prints a
# Markdown table of medians (and min–max) of req/s and CPU µs per request.
# wrk and ceiling's own closed loop run in each round too, as references.
#
# nginx (one worker, keep-alive, `return 200 "ok\n"`) is pinned to CPU 0,
# every generator to CPU 1, as in bench/compare.sh. CPU is the generator
# process's user+sys from wait4 (bench/lib.sh's cpurun), for bench/uring
# checked against the getrusage it prints itself.
#
# On a shared machine run it alone, e.g. `flock /tmp/bench.lock bash
# bench/uring.sh`.
#
# Environment:
#   DURATION  seconds a run (default 10)
#   RUNS      rounds (default 5)
#   CONNS     connections (default 50)
#   PORT      first port to try for nginx (default 18080)
#   VARIANTS  bench/uring variants, each MODE[+defer][+sqpoll] (default
#             "epoll uring uring+defer uring-ms uring-ms+defer"); +sqpoll
#             pins the SQ polling thread to CPU SQPOLL_CPU
#   SQPOLL_CPU  (default: the generator's, 1)
#   REFS      1 (default): wrk and ceiling in each round too; 0: not
set -euo pipefail

DURATION="${DURATION:-10}"
RUNS="${RUNS:-5}"
CONNS="${CONNS:-50}"
PORT="${PORT:-18080}"
VARIANTS="${VARIANTS:-epoll uring uring+defer uring-ms uring-ms+defer}"
REFS="${REFS:-1}"
SQPOLL_CPU="${SQPOLL_CPU:-1}"
SERVER_CPU=0
GEN_CPU=1

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'uring.sh: %s\n' "$*" >&2; exit 1; }

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"
OUT="bench/out/uring"
mkdir -p "$OUT"
OUT_ABS="$REPO_ROOT/$OUT"
NGINX="$(command -v nginx 2>/dev/null || echo /usr/sbin/nginx)"
[[ -x "$NGINX" ]] || die "nginx is not installed"
((REFS == 0)) || command -v wrk >/dev/null 2>&1 || die "wrk is not installed (REFS=0 runs without it)"

# shellcheck source=bench/lib.sh
source "$REPO_ROOT/bench/lib.sh"
CPURUN="$OUT/cpurun.py"
write_cpurun "$CPURUN"

log "building bench/uring and ceiling"
go build -o "$OUT/uring" ./bench/uring
go build -o "$OUT/ceiling" ./cmd/ceiling

# A private nginx, as in bench/compare.sh: own prefix, config, pid file and
# logs under $OUT/nginx; stopped by its own pid at exit, nothing else.
PORT="$(free_port "$PORT")" || die "no free port found near $PORT"
NGX_DIR="$OUT_ABS/nginx"
write_nginx_conf "$NGX_DIR" "$PORT" bench/uring.sh
NGINX_PID=""
cleanup() {
	[[ -n "$NGINX_PID" ]] || return 0
	local pid="$NGINX_PID"
	[[ -s "$NGX_DIR/nginx.pid" ]] && pid="$(cat "$NGX_DIR/nginx.pid")"
	kill -TERM "$pid" 2>/dev/null || true
	for _ in $(seq 50); do
		kill -0 "$NGINX_PID" 2>/dev/null || return 0
		sleep 0.1
	done
	kill -KILL "$NGINX_PID" 2>/dev/null || true
}
trap cleanup EXIT
trap 'exit 130' INT TERM

log "starting nginx on 127.0.0.1:$PORT (CPU $SERVER_CPU)"
start_nginx "$NGINX" "$NGX_DIR" "$PORT" "$SERVER_CPU" || die "nginx did not start"
URL="http://127.0.0.1:$PORT/"
log "warming up (1 s, not measured)"
taskset -c "$GEN_CPU" "$OUT/uring" -url "$URL" -conns "$CONNS" -duration 1s >"$OUT/warmup.log" 2>&1 ||
	die "warm-up run failed: $(cat "$OUT/warmup.log")"
sleep 1

# run_variant NAME VARIANT: one bench/uring run, its JSON line in NAME.log.
run_variant() {
	local name="$1" v="$2" args=()
	args=(-url "$URL" -conns "$CONNS" -duration "${DURATION}s" -mode "${v%%+*}")
	[[ "$v" == *+defer* ]] && args+=(-defer)
	[[ "$v" == *+sqpoll* ]] && args+=(-sqpoll "$SQPOLL_CPU")
	measure "$name" "$OUT/uring" "${args[@]}"
}

rm -f "$OUT"/run_*
for ((round = 1; round <= RUNS; round++)); do
	for v in $VARIANTS; do
		log "round $round/$RUNS: $v"
		run_variant "run_${v}_$round" "$v"
		sleep 1
	done
	if ((REFS)); then
		log "round $round/$RUNS: wrk"
		measure "run_wrk_$round" wrk -t1 -c"$CONNS" -d"${DURATION}s" "$URL"
		sleep 1
		log "round $round/$RUNS: ceiling"
		measure "run_ceiling_$round" "$OUT/ceiling" run --url "$URL" --vus "$CONNS" --step "${DURATION}s" \
			--warmup 0s --out "$OUT/run_ceiling_$round.json" --quiet
		sleep 1
	fi
done

VARIANTS="$VARIANTS" REFS="$REFS" RUNS="$RUNS" OUT="$OUT" GEN_CPU="$GEN_CPU" CONNS="$CONNS" \
	DURATION="$DURATION" KERNEL="$(uname -sr)" NGINX_VERSION="$("$NGINX" -v 2>&1)" \
	python3 - <<'PY' | tee "$OUT/uring.md"
import json, os, re, statistics

env = os.environ
out, runs, gen_cpu = env["OUT"], int(env["RUNS"]), f"cpu{env['GEN_CPU']}"
hz = os.sysconf("SC_CLK_TCK")


def busy(path, cpu=gen_cpu):
    for line in open(path):
        f = line.split()
        if f[0] == cpu:
            v = [int(x) for x in f[1:]]
            return (v[0] + v[1] + v[2] + v[5] + v[6]) / hz
    return 0.0


def one(label, name):
    """requests, seconds, user, sys (wait4), errors, own rusage; None if it failed."""
    try:
        u, s, wall, rc = open(f"{out}/{name}.cpu").read().split()
        u, s, wall, rc = float(u), float(s), float(wall), int(rc)
        log = open(f"{out}/{name}.log").read()
        errors, own, turns = 0, None, None
        if label == "wrk":
            req = int(re.search(r"(\d+) requests in ([\d.]+)(m?s)", log).group(1))
            m = re.search(r"requests in ([\d.]+)(m?s)", log)
            secs = float(m.group(1)) / (1000 if m.group(2) == "ms" else 1)
            if e := re.search(r"Non-2xx or 3xx responses: (\d+)", log):
                errors += int(e.group(1))
            if e := re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", log):
                errors += sum(int(x) for x in e.groups())
        elif label == "ceiling":
            st = json.load(open(f"{out}/{name}.json"))["steps"][0]
            req, secs, errors = int(st["completed"]), float(st["duration_s"]), int(st.get("failed") or 0)
        else:
            j = json.loads(log.strip().splitlines()[-1])
            req, secs, errors = j["requests"], j["seconds"], j["errors"]
            own, turns = j["user_s"] + j["sys_s"], j["loop_turns"]
        other = busy(f"{out}/{name}.stat1") - busy(f"{out}/{name}.stat0") - (u + s)
        srv = busy(f"{out}/{name}.stat1", "cpu0") - busy(f"{out}/{name}.stat0", "cpu0")
    except (OSError, ValueError, AttributeError, KeyError, IndexError) as e:
        print(f"- ⚠ {name}: no result ({e!r})")
        return None
    return dict(req=req, secs=secs, user=u, sys=s, cpu=u + s, errors=errors, rc=rc, own=own, turns=turns,
                wall=wall, other=other, srv=srv, per=(u + s) * 1e6 / req if req else None, rps=req / secs)


DUR = env["DURATION"]
labels = env["VARIANTS"].split() + (["wrk", "ceiling"] if env["REFS"] == "1" else [])
rows = {}
for label in labels:
    rows[label] = [r for i in range(1, runs + 1) if (r := one(label, f"run_{label}_{i}")) is not None]
    for i, r in enumerate(rows[label]):
        r["round"] = i  # (only used when no run of the label failed)

med = statistics.median
print(f"## Closed model, {env['CONNS']} connections, nginx `return 200`, {DUR} s a run, "
      f"medians of {runs} (min–max)")
print()
print("| generator | runs | req/s | CPU µs/request | user s | sys s | CPU share of core | nginx's core busy | requests per wake | errors | µs/request ÷ epoll's in the same round |")
print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
base = None
for label in labels:
    rs = [r for r in rows[label] if r["per"] is not None]
    if not rs:
        print(f"| {label} | 0 | failed | | | | | | | | |")
        continue
    per = [r["per"] for r in rs]
    rps = [r["rps"] for r in rs]
    name = {"wrk": "wrk (reference)", "ceiling": "ceiling closed loop (reference)"}.get(label, f"bench/uring {label}")
    if label == "epoll":
        base = med(per)
    # answers per epoll_pwait2 / io_uring_enter: how much each wake batched
    wake = f"{med(r['req'] / r['turns'] for r in rs):.1f}" if all(r["turns"] for r in rs) else "n/a"
    rel = f" ({med(per) / base - 1:+.0%} vs epoll)" if base and label != "epoll" else ""
    # The machine's speed drifts (a shared host); a round's variants ran
    # within a minute of each other, so their ratio to epoll drifts less.
    paired = "n/a"
    ep = rows.get("epoll", [])
    if label != "epoll" and len(ep) == runs and len(rs) == runs:
        q = [r["per"] / e["per"] for r, e in zip(rs, ep)]
        paired = f"{med(q):.2f} ({min(q):.2f}–{max(q):.2f})"
    print(f"| {name} | {len(rs)} | {med(rps):,.0f} ({min(rps):,.0f}–{max(rps):,.0f}) | "
          f"{med(per):.2f} ({min(per):.2f}–{max(per):.2f}){rel} | {med(r['user'] for r in rs):.2f} | "
          f"{med(r['sys'] for r in rs):.2f} | {med(r['cpu'] / r['wall'] for r in rs):.0%} | "
          f"{med(r['srv'] / r['wall'] for r in rs):.0%} | {wake} | "
          f"{sum(r['errors'] for r in rs)} | {paired} |")
print()
print("Per run (req/s, µs/request, own getrusage vs wait4 CPU s, other busy time on the generator's core s: "
      "/proc/stat's busy time less the generator's own; below 0 when the tick accounting lost time, as it "
      "does for io_uring, whose waits count as iowait, and for a vCPU the host took away):")
print()
for label in labels:
    cells = []
    for r in rows[label]:
        own = f", own {r['own']:.2f}/{r['cpu']:.2f}" if r["own"] is not None else ""
        cells.append(f"{r['rps']:,.0f} {r['per']:.2f}{own}, other {r['other']:.2f}")
    print(f"- {label}: " + "; ".join(cells))
print()
print(f"- kernel {env['KERNEL']}; {env['NGINX_VERSION']}; nginx on CPU 0, generators on CPU {env['GEN_CPU']}")
PY
