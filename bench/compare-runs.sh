#!/usr/bin/env bash
# bench/compare-runs.sh — bench/compare.sh RUNS times (default 5), one after
# another, and the medians of every row over the runs.
#
# One 10 s run of compare.sh says little: on these shared machines one run's
# figures move a lot from the next one's, and the goals are judged on the
# medians of five runs (bench/README.md). This script does the five runs,
# keeps what each wrote, and writes
# bench/out/compare-medians.md: per row (scenario, generator) the median CPU
# µs/request and the median req/s with their min-max, each run's figure, and
# the ratios of the medians the goals are about.
#
# Usage:
#   bash bench/compare-runs.sh                      # five 10 s runs, about 20 minutes
#   RUNS=2 DURATION=2 bash bench/compare-runs.sh    # smoke test, about 2 minutes
#   bash bench/compare-runs.sh --report DIR         # the medians again from the runs
#                                                   # kept in DIR; nothing is run
#
# Environment:
#   RUNS   how many runs of compare.sh (default 5)
#   everything else (DURATION, VUS, RATE, SLOW_RATE, RATE_CONNS, GOROUTINES,
#   PORT) goes to compare.sh unchanged; see the top of bench/compare.sh.
#
# Each run's files are kept in bench/out/runs/STAMP/N/ (STAMP is when this
# script started, N the run): compare.md, compare.json (every row's figures),
# exit (compare.sh's exit status), ceiling's result files and plans, the
# .cpu and /proc/stat (.stat0, .stat1) files and the logs. The medians go to bench/out/compare-medians.md and
# to bench/out/runs/STAMP/compare-medians.md. A run that exits non-zero but
# wrote compare.json (an unparsed row, exit 1; failed ceiling exchanges,
# exit 4) is counted and said so; a run that left no compare.json (compare.sh
# stopped before its report) stops the series, and the medians are of the
# runs before it. The script exits 1, after writing the medians, when any
# run exited non-zero or did not run.
set -euo pipefail

RUNS="${RUNS:-5}"
[[ "$RUNS" =~ ^[0-9]+$ && "$RUNS" -ge 1 ]] || {
	printf 'compare-runs.sh: RUNS must be a whole number >= 1, got %s\n' "'$RUNS'" >&2
	exit 1
}

log() { printf '==> %s\n' "$*" >&2; }
die() { printf 'compare-runs.sh: %s\n' "$*" >&2; exit 1; }

REPO_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$REPO_ROOT"
OUT="bench/out"
mkdir -p "$OUT"

if [[ "${1:-}" == "--report" ]]; then
	[[ -n "${2:-}" && -d "$2" ]] || die "--report needs the folder of a series, e.g. $OUT/runs/20261202-101500"
	DIR="$2"
else
	[[ -z "${1:-}" ]] || die "unknown argument '$1' (the only one is --report DIR)"
	DIR="$OUT/runs/$(date +%Y%m%d-%H%M%S)"
	mkdir -p "$DIR"
	trap 'exit 130' INT TERM
	for ((i = 1; i <= RUNS; i++)); do
		log "run $i of $RUNS: bash bench/compare.sh (files kept in $DIR/$i)"
		rm -f "$OUT/compare.md" "$OUT/compare.json"
		rc=0
		bash bench/compare.sh || rc=$?
		((rc != 130)) || die "interrupted in run $i"
		mkdir -p "$DIR/$i"
		echo "$rc" >"$DIR/$i/exit"
		for f in "$OUT"/*.md "$OUT"/*.json "$OUT"/*.yaml "$OUT"/*.cpu "$OUT"/*.stat[01] "$OUT"/*.log; do
			if [[ -e "$f" && "$f" != "$OUT/compare-medians.md" ]]; then
				cp "$f" "$DIR/$i/"
			fi
		done
		if [[ ! -s "$DIR/$i/compare.json" ]]; then
			log "run $i left no compare.json (compare.sh exited $rc before its report); stopping here"
			break
		fi
		((rc == 0)) || log "run $i: compare.sh exited $rc (see $DIR/$i/compare.md); its rows are kept and marked"
	done
fi

# ---------------------------------------------------------------------------
# Medians. python3 reads DIR/N/compare.json of every run and writes Markdown:
#   per row      the median CPU µs/request and req/s over the runs that
#                have a figure for it, their min-max, each run's µs/request
#                (* disturbed, ! failed exchanges), the failed exchanges
#                summed, the engines ceiling reported
#   ratios       of the medians: ceiling (closed) ÷ wrk in req/s and in
#                µs/request; ceiling (open) ÷ bombardier at both rates; each
#                plan scenario's µs/request ÷ the fixed GET's, each engine
#                against the same engine's fixed GET; with each run's own
#                ratio beside it
#   notes        the tools that could not be installed (k6), runs that
#                exited non-zero, rows with failures or disturbed runs
# ---------------------------------------------------------------------------
RUNS_ASKED=""
[[ "${1:-}" == "--report" ]] || RUNS_ASKED="$RUNS"
export DIR RUNS_ASKED
medians_rc=0
python3 - >"$DIR/compare-medians.md" <<'PY' || medians_rc=$?
import json, os, statistics, sys

folder = os.environ["DIR"]
runs = []
for entry in sorted(os.listdir(folder), key=lambda n: (not n.isdigit(), int(n) if n.isdigit() else 0, n)):
    path = os.path.join(folder, entry, "compare.json")
    if not entry.isdigit() or not os.path.exists(path):
        continue
    doc = json.load(open(path))
    try:
        rc = int(open(os.path.join(folder, entry, "exit")).read())
    except (OSError, ValueError):
        rc = None
    runs.append((int(entry), rc, doc))
if not runs:
    print(f"compare-runs.sh: no run with a compare.json in {folder}", file=sys.stderr)
    sys.exit(1)

first = runs[0][2]
sc = first["scenarios"]
goal = first.get("plan_goal", 1.3)

# Rows in the order compare.sh reports them, keyed by scenario and generator.
order, rows = [], {}
for n, rc, doc in runs:
    for r in doc["rows"]:
        key = (r["scenario"], r["generator"])
        if key not in rows:
            order.append(key)
            rows[key] = {}
        rows[key][n] = r


def med(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def fmt(v, spec, suffix=""):
    return "n/a" if v is None else format(v, spec) + suffix


def series(key, field):
    return [rows.get(key, {}).get(n, {}).get(field) for n, _, _ in runs]


def median_of(key, field):
    return med(series(key, field))


def ratio_line(label, num, den, field, goal_text=""):
    """the ratio of two rows' medians of field, and each run's own ratio."""
    a, b = median_of(num, field), median_of(den, field)
    if num not in rows or den not in rows:
        return None
    per_run = []
    for x, y in zip(series(num, field), series(den, field)):
        per_run.append(x / y if x is not None and y else None)
    per_run_text = " ".join(fmt(v, ".2f") for v in per_run)
    return (f"- {label}: **{fmt(a / b if a is not None and b else None, '.2f', '×')}** "
            f"({fmt(a, ',.2f')} ÷ {fmt(b, ',.2f')}){goal_text}; each run: {per_run_text} "
            f"(median {fmt(med(per_run), '.2f', '×')})")


dur = {doc["duration_s"] for _, _, doc in runs}
print(f"## Medians of {len(runs)} runs of bench/compare.sh "
      f"({', '.join(f'{d} s' for d in sorted(dur))} per generator run)")
print()
asked = os.environ.get("RUNS_ASKED")
if asked and int(asked) != len(runs):
    print(f"**⚠ {asked} runs were asked for, {len(runs)} left figures** (see the notes).")
    print()
print(f"{first['date'][:10]} to {runs[-1][2]['date'][:10]}, runs kept in `{folder}`. CPU µs per completed "
      "request and req/s: the median over the runs with a figure for the row, and the lowest and "
      "highest; then each run's µs/request in run order (`*` disturbed, `~` a closed run that used "
      "under 80 % of its core undisturbed: it waited on nginx, `!` failed exchanges, `-` no figure).")
print()
print("| scenario | generator | runs | median µs/request | min–max | median req/s | min–max | "
      "µs/request, each run | failed (all runs) | engine |")
print("|---|---|---:|---:|---:|---:|---:|---|---:|---|")
for key in order:
    per = series(key, "us_per_req")
    rps = series(key, "req_s")
    have = [v for v in per if v is not None]
    have_rps = [v for v in rps if v is not None]
    each = []
    for n, _, _ in runs:
        r = rows[key].get(n)
        if r is None or r.get("us_per_req") is None:
            each.append("-")
            continue
        mark = (("*" if r.get("disturbed") else "") + ("~" if r.get("target_bound") else "")
                + ("!" if r.get("failures") else ""))
        each.append(f"{r['us_per_req']:.2f}{mark}")
    fails = [r.get("failures") for r in rows[key].values() if r.get("failures") is not None]
    engines = sorted({r.get("engine") for r in rows[key].values() if r.get("engine")})
    spread = f"{min(have):.2f}–{max(have):.2f}" if have else "n/a"
    spread_rps = f"{min(have_rps):,.0f}–{max(have_rps):,.0f}" if have_rps else "n/a"
    failed = sum(fails) if fails else None
    print(f"| {key[0]} | {key[1]} | {len(have)} | {fmt(med(per), '.2f')} | {spread} | "
          f"{fmt(med(rps), ',.0f')} | {spread_rps} | {' '.join(each)} | "
          f"{'n/a' if failed is None else (f'**{failed} ⚠**' if failed else '0')} | {', '.join(engines) or '–'} |")
print()

print("Ratios of the medians (each run's own ratio beside it):")
print()
closed, rate, slow = sc["closed"], sc["rate"], sc["slow"]
lines = [
    ratio_line(f"{closed}: ceiling (closed) ÷ wrk, req/s", (closed, "ceiling (closed)"), (closed, "wrk"), "req_s"),
    ratio_line(f"{closed}: ceiling (closed) ÷ wrk, µs/request", (closed, "ceiling (closed)"), (closed, "wrk"),
               "us_per_req", " (goal ≤ 1.0×)"),
    ratio_line(f"{rate}: ceiling (open) ÷ bombardier, µs/request", (rate, "ceiling (open)"), (rate, "bombardier"),
               "us_per_req", " (goal ≤ 1.0×)"),
    ratio_line(f"{slow}: ceiling (open) ÷ bombardier, µs/request", (slow, "ceiling (open)"), (slow, "bombardier"),
               "us_per_req", " (goal ≤ 1.0×)"),
]
for plan in (sc["templated"], sc["flow"]):
    lines.append(ratio_line(f"{plan}: ceiling (closed) ÷ the fixed GET's ceiling (closed), µs/request",
                            (plan, "ceiling (closed)"), (closed, "ceiling (closed)"), "us_per_req",
                            f" (goal ≤ {goal}×)"))
    lines.append(ratio_line(f"{plan}: on goroutines ÷ the fixed GET's on goroutines, µs/request",
                            (plan, "ceiling (closed, goroutines)"), (closed, "ceiling (closed, goroutines)"),
                            "us_per_req"))
for line in lines:
    if line:
        print(line)
print()
for plan in (sc["templated"], sc["flow"]):
    engines = [rows.get((plan, "ceiling (closed)"), {}).get(n, {}).get("engine") for n, _, _ in runs]
    if any(e and e != "loop" for e in engines):
        print(f"- ⚠ {plan}: ceiling's default run reported engine "
              f"{', '.join(str(e) for e in engines)} (run by run), not the loop: its ratio is not the loop's.")
print(f"- In '{sc['flow']}' each request of the flow (POST /login, GET /cart, POST /checkout) is one "
      "exchange: µs/request and req/s are per request, not per iteration.")
print()

print("Notes:")
print()
for n, rc, doc in runs:
    if rc:
        what = {1: "a row could not be parsed", 4: "ceiling runs had failed exchanges"}.get(rc, "see its compare.md")
        print(f"- run {n}: compare.sh exited {rc} ({what}).")
    for p in doc.get("problems") or []:
        print(f"- run {n}: unparsed: {p}")
for key in order:
    failed = [(n, r["failures"]) for n, r in sorted(rows[key].items()) if r.get("failures")]
    if failed:
        print(f"- **⚠ FAILED exchanges: {key[1]} in '{key[0]}'**: "
              + ", ".join(f"run {n}: {f}" for n, f in failed)
              + ". Those runs' figures are not those of working runs.")
disturbed = sum(1 for key in order for r in rows[key].values() if r.get("disturbed"))
bound = sum(1 for key in order for r in rows[key].values() if r.get("target_bound"))
total = sum(len(rows[key]) for key in order)
print(f"- {disturbed} of {total} rows marked disturbed (something else used over 15 % of the "
      "generator's core, or the hypervisor stole over 5 % of the run); they are in the medians.")
if bound:
    print(f"- {bound} closed rows marked `~`: the generator used under 80 % of its core without being "
          "disturbed, so it waited on nginx (or on whatever else ran on nginx's core, which the "
          "disturbance check does not watch); they are in the medians too.")
if any(doc["duration_s"] < 10 for _, _, doc in runs):
    print("- ⚠ runs shorter than 10 s: a smoke test of the scripts, not figures.")
gens = {key[1].split(" (")[0] for key in order}
missing = [g for g in ("wrk", "bombardier", "hey", "ceiling") if g not in gens]
no_figures = [f"{key[1]} in '{key[0]}'" for key in order if median_of(key, "us_per_req") is None]
if missing:
    print(f"- no rows at all for: {', '.join(missing)}.")
if no_figures:
    print(f"- no figure in any run for: {', '.join(no_figures)}.")
for tool, why in (first.get("not_installable") or {}).items():
    print(f"- {tool}: {why}.")
m, t = first["machine"], first["tools"]
print(f"- machine (run 1): nproc {m['nproc']}, {m['cpu']}, {m['kernel']}; generators on CPU {m['gen_cpu']}, "
      f"nginx and the mock on CPU {m['server_cpu']}.")
print(f"- tools (run 1): {'; '.join(str(v) for v in t.values())}.")
if len(runs) % 2 == 0:
    print(f"- {len(runs)} runs, an even number: each median is the mean of the middle two.")
PY
((medians_rc == 0)) || die "could not compute the medians from $DIR (above)"
cp "$DIR/compare-medians.md" "$OUT/compare-medians.md"
cat "$OUT/compare-medians.md"
log "medians written to $OUT/compare-medians.md (and $DIR/compare-medians.md); each run's files in $DIR/N/"
if [[ -z "$RUNS_ASKED" ]]; then
	exit 0
fi
# Not clean: a run exited non-zero, or the series stopped before RUNS.
unclean=0
for ((i = 1; i <= RUNS; i++)); do
	if [[ ! -s "$DIR/$i/compare.json" || "$(cat "$DIR/$i/exit" 2>/dev/null)" != 0 ]]; then
		unclean=$((unclean + 1))
	fi
done
((unclean == 0)) || die "$unclean of $RUNS runs exited non-zero or did not run (see the notes above); the medians are of what they left"
