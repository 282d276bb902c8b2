#!/usr/bin/env bash
# ceiling's CI gate: run a plan with repeats, compare the result with a
# baseline, put the comparison on the job's summary page and fail the job
# on a regression. The composite action (action.yml at the repository's
# root) runs it with its inputs as the variables below; any CI can run it
# as it is (docs/ci.md).
#
# Inputs (environment variables; empty means the default):
#   CEILING_BIN                the ceiling binary (default: ceiling on the PATH)
#   CEILING_PLAN               the plan file (may be empty when CEILING_RUN_ARGS says what to load)
#   CEILING_REPEAT             repeats of the run (default 5: compare's rank test needs 5 a side)
#   CEILING_RUN_ARGS           more flags for `ceiling run`, split at whitespace
#   CEILING_RESULT             where the run's result goes (default ceiling-result.json)
#   CEILING_BASELINE           the baseline's result file; empty: none yet (nothing compared),
#                              a path that does not exist: bad input
#   CEILING_BASELINE_ARTIFACT  or the name of a GitHub artifact holding it, fetched with gh
#                              from the newest successful run of CEILING_BASELINE_WORKFLOW
#                              (default: this workflow) on CEILING_BASELINE_BRANCH (default main)
#   CEILING_FAIL_ON            regression (default): a significant change for the worse or a
#                              crossed threshold fails; threshold: only a crossed threshold
#   CEILING_ON_UNKNOWN         fail (default) or warn: what "could not tell" (compare's exit 4,
#                              the control scenario moved) does to the job
#   CEILING_THRESHOLD, CEILING_MIN_EFFECT, CEILING_MIN_ABS
#                              compare's --threshold, --min-effect and --min-abs
#   GH_TOKEN                   gh's token, to fetch the artifact; given to gh alone
#
# It appends to $GITHUB_STEP_SUMMARY when that is set: the gate's outcome,
# the comparison (`ceiling compare --format md`) and the run's report. It
# writes verdict, exit-code, result and comparison to $GITHUB_OUTPUT when
# that is set.
#
# Exit status: 0 passed (also: no baseline to compare with; a single run,
# which cannot tell a regression from noise; could not tell with
# CEILING_ON_UNKNOWN=warn); 1 a regression or a crossed threshold, or the
# run itself failed its SLO or had an INVALID step; 4 compare could not
# tell (with CEILING_ON_UNKNOWN=fail); 2 bad input; otherwise the run's own
# exit status (3 could not run, 130 interrupted).
set -uo pipefail

# GH_TOKEN is gh's alone: it is taken out of the environment here and
# given to each gh call, so that the run, the target its plan starts
# (monitor.command) and every other command never see it.
gh_token=${GH_TOKEN:-}
unset GH_TOKEN
gh() { GH_TOKEN=$gh_token command gh "$@"; }

ceiling=${CEILING_BIN:-ceiling}
plan=${CEILING_PLAN:-}
repeat=${CEILING_REPEAT:-5}
result=${CEILING_RESULT:-ceiling-result.json}
baseline=${CEILING_BASELINE:-}
artifact=${CEILING_BASELINE_ARTIFACT:-}
fail_on=${CEILING_FAIL_ON:-regression}
on_unknown=${CEILING_ON_UNKNOWN:-fail}

# What the step outputs under GitHub Actions; finish writes them.
verdict=none result_abs="" comparison=""

# finish STATUS CODE LINE [FILE...] says LINE in the log and, followed by
# the files (Markdown), on the job's summary; writes the outputs, with
# exit-code CODE (the code that decided: the run's or compare's); and
# exits STATUS.
finish() {
  local status=$1 code=$2 line=$3 f
  shift 3
  echo "ceiling gate: $line"
  if [ -n "${GITHUB_STEP_SUMMARY:-}" ]; then
    {
      printf '**ceiling gate: %s**\n\n' "$line"
      for f in "$@"; do cat "$f" && printf '\n'; done
    } >>"$GITHUB_STEP_SUMMARY"
  fi
  if [ -n "${GITHUB_OUTPUT:-}" ]; then
    printf 'verdict=%s\nexit-code=%s\nresult=%s\ncomparison=%s\n' "$verdict" "$code" "$result_abs" "$comparison" >>"$GITHUB_OUTPUT"
  fi
  exit "$status"
}

bad() {
  echo "::error::ceiling gate: $*" >&2
  finish 2 2 "bad input: $*"
}

case $fail_on in regression | threshold) ;; *) bad "fail-on \"$fail_on\": want regression or threshold" ;; esac
case $on_unknown in fail | warn) ;; *) bad "on-unknown \"$on_unknown\": want fail or warn" ;; esac
if [ -n "$baseline" ] && [ -n "$artifact" ]; then
  bad "baseline and baseline-artifact are both set: give one"
fi
# A baseline that is named must be there: a typo must not switch the gate
# off for good. Only an empty one means "no baseline yet".
if [ -n "$baseline" ] && [ ! -f "$baseline" ]; then
  bad "baseline $baseline does not exist (or is not a file): fix the path, or leave baseline empty while there is none yet"
fi

# The run. Its own Markdown report goes on the summary below the
# comparison, not before it: GITHUB_STEP_SUMMARY is emptied for it.
args=(run)
if [ -n "$plan" ]; then args+=("$plan"); fi
args+=(--repeat "$repeat" --out "$result")
read -r -d '' -a extra <<<"${CEILING_RUN_ARGS:-}"
args+=("${extra[@]}")
mkdir -p "$(dirname "$result")"
echo "== $ceiling ${args[*]}"
GITHUB_STEP_SUMMARY='' "$ceiling" "${args[@]}"
run_rc=$?
work=$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/ceiling-gate.XXXXXX")
trap 'rm -rf "$work"' EXIT
report="$work/report.md"
if [ -s "$result" ]; then
  result_abs="$(cd "$(dirname "$result")" && pwd)/$(basename "$result")"
  "$ceiling" report "$result" --format md >"$report" || : >"$report"
else
  : >"$report"
fi
case $run_rc in
0 | 1) ;;
2) finish 2 2 "failed: ceiling run exited 2 (bad input: a flag or the plan; the log says what and where)" ;;
3) finish 3 3 "failed: ceiling run exited 3 (the run could not be carried out: the target unreachable, say)" "$report" ;;
*) finish "$run_rc" "$run_rc" "failed: ceiling run exited $run_rc" "$report" ;;
esac
run_failed=""
if [ "$run_rc" -eq 1 ]; then
  run_failed="the run failed its SLO or thresholds, or a step was INVALID (ceiling run exited 1)"
  echo "::error::ceiling gate: $run_failed"
fi

# The baseline: a GitHub artifact of the newest successful run on the
# baseline branch, if one is named.
if [ -n "$artifact" ]; then
  workflow=${CEILING_BASELINE_WORKFLOW:-}
  if [ -z "$workflow" ]; then
    workflow=${GITHUB_WORKFLOW_REF:-} # owner/repo/.github/workflows/gate.yml@refs/...
    workflow=${workflow%@*}
    workflow=${workflow##*/}
  fi
  if [ -z "$workflow" ]; then
    bad "baseline-artifact needs baseline-workflow outside GitHub Actions"
  fi
  branch=${CEILING_BASELINE_BRANCH:-main}
  echo "== baseline: artifact $artifact of $workflow on $branch"
  id=$(gh run list --workflow "$workflow" --branch "$branch" --status success --limit 1 --json databaseId --jq '.[0].databaseId') &&
    [ -n "$id" ] && [ "$id" != null ] && gh run download "$id" --name "$artifact" --dir "$work/baseline"
  shopt -s nullglob
  found=("$work"/baseline/*.json)
  shopt -u nullglob
  if [ ${#found[@]} -eq 1 ]; then
    baseline=${found[0]}
  elif [ ${#found[@]} -gt 1 ]; then
    bad "artifact $artifact holds ${#found[@]} .json files: want one, the baseline's result"
  else
    echo "::warning::ceiling gate: no artifact $artifact from a successful run of $workflow on $branch: nothing to compare with"
    baseline=""
  fi
fi
if [ -z "$baseline" ]; then
  note="$work/none.md"
  printf 'No baseline to compare with: this run is the first, or its baseline could not be found.\n\n' >"$note"
  if [ -n "$run_failed" ]; then finish 1 1 "failed: $run_failed" "$note" "$report"; fi
  finish 0 0 "passed: nothing compared (no baseline)" "$note" "$report"
fi

# The comparison.
cmp=(compare "$baseline" "$result")
if [ "$fail_on" = regression ]; then cmp+=(--fail-on-regression); fi
if [ -n "${CEILING_THRESHOLD:-}" ]; then cmp+=(--threshold "$CEILING_THRESHOLD"); fi
if [ -n "${CEILING_MIN_EFFECT:-}" ]; then cmp+=(--min-effect "$CEILING_MIN_EFFECT"); fi
if [ -n "${CEILING_MIN_ABS:-}" ]; then cmp+=(--min-abs "$CEILING_MIN_ABS"); fi
md="${result_abs%.json}-compare.md"
echo "== $ceiling ${cmp[*]} --format md"
"$ceiling" "${cmp[@]}" --format md >"$md"
cmp_rc=$?
cat "$md"
case $cmp_rc in 0 | 1 | 4) comparison=$md ;; esac
json=$("$ceiling" "${cmp[@]}" --format json)
verdict=$(sed -n 's/^  "verdict": "\([a-z]*\)",$/\1/p' <<<"$json")
verdict=${verdict:-none}
# Why compare could not tell, when it could not: the control moved, the
# host was measured busier in one batch than in the other, or only the
# tail moved with no control to tell the runner from the service.
cannot=$(sed -n 's/^  "why": "\(.*\)",$/\1/p' <<<"$json")

if [ -n "$run_failed" ]; then
  finish 1 1 "failed: $run_failed" "$comparison" "$report"
fi
case $cmp_rc in
0)
  case $verdict in
  same) said="no significant change" ;;
  better) said="better: significant changes, all for the better" ;;
  worse) said="worse, but this gate fails only on a crossed threshold (fail-on: threshold)" ;;
  *) said="compare could not tell (below), and that does not fail this gate" ;;
  esac
  finish 0 0 "passed: $said" "$comparison" "$report"
  ;;
1)
  said="a threshold was crossed"
  if [ "$fail_on" = regression ] && [ "$verdict" = worse ]; then said="a significant change for the worse"; fi
  echo "::error::ceiling gate: $said (ceiling compare exited 1)"
  finish 1 1 "failed: $said" "$comparison" "$report"
  ;;
4)
  why="could not tell the runner from the service: ${cannot:-the control scenario moved}; no change was judged: run the job again"
  if [ "$on_unknown" = warn ]; then
    echo "::warning::ceiling gate: $why"
    finish 0 4 "passed with a warning: $why" "$comparison" "$report"
  fi
  echo "::error::ceiling gate: $why"
  finish 4 4 "failed: $why" "$comparison" "$report"
  ;;
*) finish "$cmp_rc" "$cmp_rc" "failed: ceiling compare exited $cmp_rc (the log says why)" ;;
esac
