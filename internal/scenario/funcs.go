package scenario

import (
	"math/rand/v2"
	"reflect"
	"sync/atomic"
	"text/template"
	"time"

	"github.com/ceiling-dev/ceiling/internal/plan"
)

// funcs returns the template functions bound to one VU: its own random
// sources (rng, seeded by the plan, for draws that repeat with the seed; ids
// for uuids, which never repeat across runs), and the run's shared sequence.
func funcs(bd *binding, seq *atomic.Int64) template.FuncMap {
	return template.FuncMap{
		"uuid": func() string { return uuid(bd.ids) },
		"seq":  func() int64 { return seq.Add(1) },
		"randInt": func(a, b int) int {
			if b <= a {
				return a
			}
			return a + bd.rng.IntN(b-a+1)
		},
		"randString": func(n int) string {
			const letters = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"
			b := make([]byte, max(n, 0))
			for i := range b {
				b[i] = letters[bd.rng.IntN(len(letters))]
			}
			return string(b)
		},
		"pick": func(items ...any) any { return pick(bd.rng, items) },
		"now":  func() plan.Now { return plan.Now{Time: time.Now()} },
	}
}

// pick returns one of items at random; a single list argument is picked
// from.
func pick(rng *rand.Rand, items []any) any {
	if len(items) == 1 {
		if v := reflect.ValueOf(items[0]); v.Kind() == reflect.Slice {
			if v.Len() == 0 {
				return ""
			}
			return v.Index(rng.IntN(v.Len())).Interface()
		}
	}
	if len(items) == 0 {
		return ""
	}
	return items[rng.IntN(len(items))]
}

// uuid returns a random (version 4) UUID drawn from rng. Each VU's source
// is a stream of its own, seeded by a number drawn anew for every run, so
// ids are unique within a run and across runs (a second run of a plan does
// not resend the first one's idempotency keys) unless 122 random bits
// collide.
func uuid(rng *rand.Rand) string {
	var b [16]byte
	hi, lo := rng.Uint64(), rng.Uint64()
	for i := range 8 {
		b[i], b[8+i] = byte(hi>>(56-8*i)), byte(lo>>(56-8*i))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	const hex = "0123456789abcdef"
	out := make([]byte, 36)
	j := 0
	for i, c := range b {
		if i == 4 || i == 6 || i == 8 || i == 10 {
			out[j] = '-'
			j++
		}
		out[j], out[j+1] = hex[c>>4], hex[c&0xf]
		j += 2
	}
	return string(out)
}
