#!/usr/bin/env bash
# .ci/skips.sh JSON MAX: counts the tests that skipped in a `go test -json`
# stream (gotestsum's --jsonfile), prints each with the reason it gave,
# and fails when more than MAX skipped. A skipped test cannot fail: a
# skip that became common (a tool CI no longer installs, a machine always
# "busy") hides whatever it tested, so the number is held down here.
set -euo pipefail
json="$1" max="$2"
command -v jq >/dev/null 2>&1 || { echo "skips.sh: jq is missing"; exit 1; }

# Each skipped test (a subtest too) and the last line it logged before it
# skipped, which is its t.Skip message: "file_test.go:NN: reason".
jq -rs '
  [ .[] | select(.Test != null) ]
  | group_by(.Package + " " + .Test)
  | map(select(any(.[]; .Action == "skip")))
  | .[]
  | (.[0].Package | sub("^github.com/ceiling-dev/ceiling/"; "")) as $pkg
  | ([ .[] | select(.Action == "output") | .Output
       | select(test("^\\s+\\S+\\.go:\\d+: ")) ] | last // "(no reason given)"
     | sub("^\\s+"; "") | rtrimstr("\n")) as $why
  | "\($pkg) \(.[0].Test): \($why)"
' "$json" >"$json.skips"

n=$(wc -l <"$json.skips")
echo "$n tests skipped (at most $max allowed):"
sed 's/^/  /' "$json.skips"
if [ "$n" -gt "$max" ]; then
  echo "too many skipped tests: $n > $max. Install what they need in .ci/run, or make them run here."
  exit 1
fi
