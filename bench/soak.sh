#!/usr/bin/env bash
# bench/soak.sh — a real soak of the built-in demo target: does ceiling's
# own memory stay flat for its length, and what does the target do?
#
# What it does:
#   1. builds ceiling into bench/out/soak/ceiling as it ships, one static
#      binary (CGO_ENABLED=0, as the other bench scripts build it), or uses
#      $CEILING: with cgo, Go's threads are the C library's, with stacks
#      the Go runtime does not count, in a binary no user runs;
#   2. writes docs/examples/soak.yaml with the target on 127.0.0.1:PORT
#      into bench/out/soak/plan.yaml;
#   3. runs `ceiling soak` on it for DURATION in windows of WINDOW, the
#      demo target started and watched by ceiling itself (--monitor-cmd),
#      its result in bench/out/soak/result.json and its report in
#      bench/out/soak/report.html;
#   4. prints every figure's trend, and whether ceiling's own memory is
#      flat: the slope's 95% interval holds 0, for its RSS and for its
#      private memory (RSS less the pages of its binary the kernel maps in
#      and drops as it likes); exit 1 when the private memory is not flat,
#      for that is what a leak grows.
#
# Usage:
#   bash bench/soak.sh                        # 30 minutes, 1-minute windows
#   DURATION=2m WINDOW=10s bash bench/soak.sh # smoke
#
# Environment:
#   DURATION  the soak's length, a Go duration (default 30m)
#   WINDOW    its windows (default 1m)
#   RATE      requests a second (default 300, the plan's)
#   PORT      the demo target's port on 127.0.0.1 (default 19912)
#   CEILING   a ceiling binary to use instead of building one
#
# It starts nothing but ceiling, which starts and stops the target.
set -euo pipefail

DURATION="${DURATION:-30m}"
WINDOW="${WINDOW:-1m}"
RATE="${RATE:-300}"
PORT="${PORT:-19912}"

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'soak.sh: %s\n' "$*" >&2; exit 1; }

[[ "$PORT" =~ ^[0-9]+$ ]] || die "PORT must be a port number, got '$PORT'"
[[ "$RATE" =~ ^[0-9]+$ && "$RATE" -ge 1 ]] || die "RATE must be a whole rate a second >= 1, got '$RATE'"
command -v python3 >/dev/null 2>&1 || die "python3 is needed to read the result"

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"
OUT="bench/out/soak"
mkdir -p "$OUT"

if [[ -n "${CEILING:-}" ]]; then
	BIN="$CEILING"
else
	command -v go >/dev/null 2>&1 || die "go is not on PATH; it is needed to build ceiling"
	log "building ceiling"
	CGO_ENABLED=0 go build -o "$OUT/ceiling" ./cmd/ceiling
	BIN="$OUT/ceiling"
fi
[[ -x "$BIN" ]] || die "$BIN is not an executable"
BIN="$(cd "$(dirname "$BIN")" && pwd)/$(basename "$BIN")"

if (exec 3<>"/dev/tcp/127.0.0.1/$PORT") 2>/dev/null; then
	die "something already listens on 127.0.0.1:$PORT; choose another PORT"
fi
sed "s/127\.0\.0\.1:8080/127.0.0.1:$PORT/g" docs/examples/soak.yaml >"$OUT/plan.yaml"

log "soaking the demo target at ${RATE}/s for $DURATION in windows of $WINDOW (load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
set +e
"$BIN" soak "$OUT/plan.yaml" --rate "$RATE" --for "$DURATION" --window "$WINDOW" \
	--monitor-cmd "exec '$BIN' demo-target --addr 127.0.0.1:$PORT" \
	--out "$OUT/result.json" --html "$OUT/report.html" >"$OUT/table.txt"
code=$?
set -e
log "ceiling soak exited $code (load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
cat "$OUT/table.txt"

python3 - "$OUT/result.json" <<'PY'
import json, sys
r = json.load(open(sys.argv[1]))
k = r["soak"]
print(f"\nsoak: held {k['held_s']:.0f} s of {k['for_s']:.0f} s, {len(k['windows'])} windows of {k['window_s']:.0f} s; outcome {r['outcome']['status']}")
flat = {}
for t in k["trends"]:
    lo, hi = t.get("low_per_h"), t.get("high_per_h")
    ci = f"[{lo:+.3g}, {hi:+.3g}]" if lo is not None else "[unbounded]"
    print(f"  {t['name']:<24} {t['verdict']:<9} {t['slope_per_h']:+9.3g} {t['unit']}/h  95% {ci:<22} R² {t['r2']:.2f}  median {t['median']:.4g} {t['unit']}")
    if t["figure"] in ("ceiling.rss_mb", "ceiling.anon_mb"):
        flat[t["figure"]] = lo is not None and lo <= 0 <= hi
if "ceiling.anon_mb" not in flat:
    print("\nceiling's private memory was not measured (not Linux?)")
    sys.exit(1)
yes = lambda b: "yes" if b else "NO"
w = k["windows"]
if w and w[0].get("ceiling") and w[-1].get("ceiling"):
    a, b = w[0]["ceiling"], w[-2 if len(w) > 1 else -1]["ceiling"]  # the last window may end after the load
    print(f"\nceiling, first window → last full one: private {a.get('anon_mb', 0):.2f} → {b.get('anon_mb', 0):.2f} MB, "
          f"heap {a['heap_mb']:.2f} → {b['heap_mb']:.2f} MB, runtime {a.get('runtime_mb', 0):.2f} → {b.get('runtime_mb', 0):.2f} MB, "
          f"threads {a.get('threads', 0)} → {b.get('threads', 0)}")
print(f"\nceiling's own RSS flat (its slope's 95% interval holds 0): {yes(flat.get('ceiling.rss_mb'))}")
print(f"ceiling's private memory flat (the same, RSS less its binary's pages): {yes(flat['ceiling.anon_mb'])}")
sys.exit(0 if flat["ceiling.anon_mb"] else 1)
PY
