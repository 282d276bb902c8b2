#!/usr/bin/env bash
# bench/memory.sh — what a virtual user costs ceiling, and what holds the
# open model's memory when the generator cannot keep up.
#
# What it does:
#   1. installs nginx from apt if it is missing, builds ceiling into
#      bench/out/ceiling, and writes two plans against a private nginx:
#      "tagged" (200 scenarios, each with two templated tags,
#      tags: {t: "{{randInt 1 200}}", u: "{{randInt 1 50}}"}) and
#      "untagged" (the same 200 scenarios without tags);
#   2. nginx on CPU 0, ceiling on CPU 1; RUNS rounds (default 5) of:
#      - the closed model, 1000 users, a 4 s step, each plan on each engine
#        (the event loop, and goroutines: CEILING_LOOP=off);
#      - the open model at 1000/s for OPEN_STEP seconds (default 60) on the
#        tagged plan, the engine ceiling picks;
#      measuring ceiling's peak resident memory from outside (ru_maxrss,
#      and /proc/PID/status sampled every 0.2 s: lib.sh's wrapper) and
#      reading result.json's generator.peak_rss_mb, bytes_per_user and the
#      step's users (workers) and verdict;
#   3. prints a Markdown table of the medians of the rounds (and writes it,
#      with every round's figures, to bench/out/memory.md).
#
# Goals (docs/measurements.md "Memory"): at most 16 KB a user on the tagged
# plan; the open model at 1000/s on it under 1 GB for a 60 s step.
#
# Usage:
#   bash bench/memory.sh                      # 5 rounds, 60 s open steps
#   RUNS=1 OPEN_STEP=10 bash bench/memory.sh  # a smoke run
set -euo pipefail
cd "$(dirname "$0")/.."

OUT=bench/out
mkdir -p "$OUT"
# shellcheck source=bench/lib.sh
. bench/lib.sh

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'memory.sh: %s\n' "$*" >&2; exit 1; }

RUNS="${RUNS:-5}"
OPEN_STEP="${OPEN_STEP:-60}"
for knob in RUNS OPEN_STEP; do
	[[ "${!knob}" =~ ^[0-9]+$ && "${!knob}" -ge 1 ]] || die "$knob must be a whole number >= 1, got '${!knob}'"
done
(($(nproc) >= 2)) || die "needs at least 2 cores (nginx on one, ceiling on another)"

command -v nginx >/dev/null 2>&1 || {
	log "installing nginx"
	(apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq nginx >/dev/null) || die "nginx is missing and could not be installed"
}
log "building ceiling"
CGO_ENABLED=0 go build -o "$OUT/ceiling" ./cmd/ceiling

CPURUN="$OUT/cpurun.py"
write_cpurun "$CPURUN"
PORT="$(free_port "${PORT:-18180}")" || die "no free port for nginx"
NGINX_DIR="$PWD/$OUT/nginx-memory"
write_nginx_conf "$NGINX_DIR" "$PORT" bench/memory.sh
start_nginx "$(command -v nginx)" "$NGINX_DIR" "$PORT" 0 || die "nginx did not start"
trap 'kill "$NGINX_PID" 2>/dev/null; wait "$NGINX_PID" 2>/dev/null || true' EXIT

# plan FILE TAGS: 200 one-request scenarios against nginx, each with TAGS.
plan() {
	{
		echo "# Written by bench/memory.sh; rewritten on every run."
		echo "target: http://127.0.0.1:$PORT"
		echo "load: {rates: [1]}"
		echo "scenarios:"
		for i in $(seq 0 199); do
			echo "  - {name: s$i, $2request: {url: /s$i}}"
		done
	} >"$1"
}
plan "$OUT/memory-tagged.yaml" 'tags: {t: "{{randInt 1 200}}", u: "{{randInt 1 50}}"}, '
plan "$OUT/memory-untagged.yaml" ''

export CPURUN_SAMPLE=0.2
# shellcheck disable=SC2034 # read by measure (lib.sh)
GEN_CPU=1

# closed NAME PLAN ENGINE: 1000 users for 4 s (ENGINE: loop or goroutines).
closed() {
	local env=()
	[[ "$3" == goroutines ]] && env=(env CEILING_LOOP=off)
	measure "$1" "${env[@]}" "$OUT/ceiling" run "$2" --vus 1000 --step 4s --warmup 1s \
		--out "$OUT/$1.json" --quiet --strict=false
}

# open NAME PLAN: 1000/s for OPEN_STEP seconds.
open() {
	measure "$1" "$OUT/ceiling" run "$2" --rate 1000 --step "${OPEN_STEP}s" --warmup 1s \
		--out "$OUT/$1.json" --quiet --strict=false
}

NAMES=()
for ((r = 1; r <= RUNS; r++)); do
	for p in tagged untagged; do
		for e in loop goroutines; do
			log "round $r: closed, 1000 users, $p plan, $e"
			closed "mem-closed-$p-$e-$r" "$OUT/memory-$p.yaml" "$e"
			NAMES+=("mem-closed-$p-$e-$r")
		done
	done
	log "round $r: open, 1000/s for ${OPEN_STEP} s, tagged plan"
	open "mem-open-tagged-$r" "$OUT/memory-tagged.yaml"
	NAMES+=("mem-open-tagged-$r")
done

machine_info
python3 - "$OUT" "$RUNS" "$OPEN_STEP" "$CPU_MODEL" "$(nproc)" "$KERNEL" "$("$OUT/ceiling" version | head -n1)" "${NAMES[@]}" <<'PY' | tee "$OUT/memory.md"
import json, re, statistics, sys
out, runs, open_step, cpu, cores, kernel, version, *names = sys.argv[1:]

def figures(name):
    rss_kb = [int(x) for x in open(f"{out}/{name}.rss").read().split()]
    rc = open(f"{out}/{name}.cpu").read().split()[3]
    try:
        step = json.load(open(f"{out}/{name}.json"))["steps"][0]
    except (OSError, ValueError, IndexError, KeyError):
        step = {}
    gen = step.get("generator") or {}
    return {
        "rss_mb": max(rss_kb[0], rss_kb[2]) / 1024,
        "peak_rss_mb": gen.get("peak_rss_mb"),
        "bytes_per_user": gen.get("bytes_per_user"),
        "users": step.get("workers"),
        "engine": gen.get("engine"),
        "verdict": step.get("verdict", "-"),
        "exit": rc,
    }

rows = {}
for n in names:
    key = re.sub(r"-\d+$", "", n)
    rows.setdefault(key, []).append(figures(n))

def med(vals):
    vals = [v for v in vals if v is not None]
    return statistics.median(vals) if vals else None

def fmt(v, spec):
    return "-" if v is None else format(v, spec)

print(f"## What a user costs, and what bounds the open model")
print()
print(f"{cpu}, {cores} cores, {kernel}; {version}. nginx on CPU 0, ceiling on CPU 1. Medians of {runs} rounds.")
print("RSS is the process's peak resident memory seen from outside (ru_maxrss, /proc sampled every 0.2 s);")
print("bytes/user is result.json's generator.bytes_per_user (the heap's growth over the step per user made).")
print()
print("| run | engine | users | peak RSS (MB) | bytes/user | verdict | exits |")
print("|---|---|---:|---:|---:|---|---|")
labels = {
    "mem-closed-tagged-loop": "closed, 1000 users, 4 s, tagged plan",
    "mem-closed-tagged-goroutines": "closed, 1000 users, 4 s, tagged plan",
    "mem-closed-untagged-loop": "closed, 1000 users, 4 s, untagged plan",
    "mem-closed-untagged-goroutines": "closed, 1000 users, 4 s, untagged plan",
    "mem-open-tagged": f"open, 1000/s, {open_step} s, tagged plan",
}
for key, rs in rows.items():
    engines = sorted({r["engine"] or "-" for r in rs})
    verdicts = sorted({r["verdict"] for r in rs})
    print(f"| {labels.get(key, key)} | {', '.join(engines)} | {fmt(med([r['users'] for r in rs]), ',.0f')} | "
          f"{fmt(med([r['rss_mb'] for r in rs]), ',.0f')} | {fmt(med([r['bytes_per_user'] for r in rs]), ',.0f')} | "
          f"{', '.join(verdicts)} | {' '.join(r['exit'] for r in rs)} |")
print()
print("Every round:")
print()
for key, rs in rows.items():
    print(f"- {key}: " + "; ".join(
        f"{fmt(r['rss_mb'], '.0f')} MB, {fmt(r['bytes_per_user'], '.0f')} B/user, {fmt(r['users'], '')} users" for r in rs))
PY
