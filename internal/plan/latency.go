package plan

import (
	"cmp"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
)

// latencyKeys are the percentile keys a sink's latency distribution takes,
// with their quantiles, in increasing order.
var latencyKeys = []struct {
	key string
	q   float64
}{{"p50", 0.5}, {"p90", 0.9}, {"p95", 0.95}, {"p99", 0.99}, {"p999", 0.999}}

// errNotLatency is the message for any value that is neither a duration nor
// a mapping of percentiles.
var errNotLatency = errors.New(`want a duration such as "50ms", or percentiles such as {p50: 40ms, p99: 200ms}`)

// latencyQuantile returns the quantile of a percentile key ("p99" → 0.99).
func latencyQuantile(key string) (float64, bool) {
	for _, k := range latencyKeys {
		if k.key == key {
			return k.q, true
		}
	}
	return 0, false
}

// latencyKey returns the percentile key of a quantile (0.99 → "p99").
func latencyKey(q float64) (string, bool) {
	for _, k := range latencyKeys {
		if k.q == q {
			return k.key, true
		}
	}
	return "", false
}

// latencyKeyList is "p50, p90, p95, p99 or p999", for messages.
func latencyKeyList() string {
	keys := make([]string, len(latencyKeys))
	for i, k := range latencyKeys {
		keys[i] = k.key
	}
	return strings.Join(keys[:len(keys)-1], ", ") + " or " + keys[len(keys)-1]
}

// UnmarshalYAML reads a duration string ("50ms": Fixed) or a mapping of
// percentile keys p50, p90, p95, p99 and p999 to durations ({p50: 40ms,
// p99: 200ms}: Percentiles). Negative or decreasing latencies are accepted
// here and refused by Validate, as for Duration.
func (l *SinkLatency) UnmarshalYAML(node ast.Node) error {
	if tag, ok := node.(*ast.TagNode); ok {
		node = tag.Value
	}
	var mvs []*ast.MappingValueNode
	switch m := node.(type) {
	case *ast.StringNode:
		var d Duration
		if err := d.UnmarshalYAML(m); err != nil {
			return errNotLatency
		}
		*l = SinkLatency{Fixed: d}
		return nil
	case *ast.MappingNode:
		mvs = m.Values
	case *ast.MappingValueNode:
		mvs = []*ast.MappingValueNode{m}
	default:
		return errNotLatency
	}
	if len(mvs) == 0 {
		return errNotLatency
	}
	pct := make(map[float64]Duration, len(mvs))
	for _, mv := range mvs {
		key, _ := keyString(mv.Key)
		q, ok := latencyQuantile(key)
		if !ok {
			return fmt.Errorf("want a percentile key %s, not %q", latencyKeyList(), key)
		}
		var d Duration
		if err := d.UnmarshalYAML(mv.Value); err != nil {
			return fmt.Errorf("%s: %w", key, err)
		}
		pct[q] = d
	}
	*l = SinkLatency{Percentiles: pct}
	return nil
}

// MarshalYAML writes the latency back in the form it is read in: a duration
// string, or a mapping of percentile keys to duration strings.
func (l SinkLatency) MarshalYAML() (any, error) {
	if len(l.Percentiles) == 0 {
		return l.Fixed.String(), nil
	}
	out := make(map[string]string, len(l.Percentiles))
	for q, d := range l.Percentiles {
		key, ok := latencyKey(q)
		if !ok {
			return nil, fmt.Errorf("sink latency: quantile %v has no percentile key (%s)", q, latencyKeyList())
		}
		out[key] = d.String()
	}
	return out, nil
}

// String formats the latency for messages: "50ms", or "p50 40ms, p99 200ms".
func (l SinkLatency) String() string {
	if len(l.Percentiles) == 0 {
		return l.Fixed.String()
	}
	parts := make([]string, 0, len(l.Percentiles))
	for _, q := range slices.Sorted(maps.Keys(l.Percentiles)) {
		key, ok := latencyKey(q)
		if !ok {
			key = fmt.Sprintf("q%v", q)
		}
		parts = append(parts, key+" "+l.Percentiles[q].String())
	}
	return strings.Join(parts, ", ")
}

// latency decodes a sink's latency at path: a duration, or a mapping of
// percentile keys to durations, each recorded at its own position so that a
// problem with one is placed on it.
func (d *decoder) latency(path string, n ast.Node, v reflect.Value) {
	l := v.Addr().Interface().(*SinkLatency)
	entries, isMap := d.mapping(path, n)
	if !isMap {
		var dur Duration
		if !isScalar(n) || dur.UnmarshalYAML(n) != nil {
			d.add(path, n, "%s, not %s", errNotLatency, describe(n))
			return
		}
		*l = SinkLatency{Fixed: dur}
		return
	}
	if len(entries) == 0 {
		d.add(path, n, "%s, not an empty mapping", errNotLatency)
		return
	}
	pct := make(map[float64]Duration, len(entries))
	for _, e := range entries {
		p := join(path, e.key)
		q, ok := latencyQuantile(e.key)
		if !ok {
			d.add(p, e.keyNode, "want a percentile key %s, not %q", latencyKeyList(), e.key)
			continue
		}
		d.record(p, e)
		value := d.resolve(p, e.value)
		if value == nil {
			continue
		}
		if _, null := value.(*ast.NullNode); null {
			d.add(p, e.keyNode, "want a duration such as \"40ms\" for %s, not null", e.key)
			continue
		}
		var dur Duration
		before := len(d.problems)
		d.value(p, value, reflect.ValueOf(&dur).Elem())
		if len(d.problems) == before {
			pct[q] = dur
		}
	}
	*l = SinkLatency{Percentiles: pct}
}

// latency checks a sink's latency at path: not negative, fixed or
// percentiles (not both), known quantiles, and latencies that do not
// decrease as the quantile grows.
func (c *checker) latency(path string, l *SinkLatency) {
	if l.Fixed.Duration < 0 {
		c.add(path, "want a non-negative duration such as \"50ms\", not %s", l.Fixed)
	}
	if len(l.Percentiles) == 0 {
		return
	}
	if l.Fixed.Duration != 0 {
		c.add(path, "give a fixed latency or percentiles, not both")
	}
	type point struct {
		key string
		q   float64
		d   time.Duration
	}
	var points []point
	for q, d := range l.Percentiles {
		key, ok := latencyKey(q)
		if !ok {
			c.add(path, "quantile %v has no percentile key: want %s", q, latencyKeyList())
			continue
		}
		if d.Duration < 0 {
			c.add(path+"."+key, "want a non-negative duration such as \"40ms\", not %s", d)
			continue
		}
		points = append(points, point{key, q, d.Duration})
	}
	slices.SortFunc(points, func(a, b point) int { return cmp.Compare(a.q, b.q) })
	for i := 1; i < len(points); i++ {
		lo, hi := points[i-1], points[i]
		if hi.d < lo.d {
			c.add(path+"."+hi.key, "%s (%s) is below %s (%s): latencies must not decrease as the percentile grows",
				hi.key, hi.d, lo.key, lo.d)
		}
	}
}
