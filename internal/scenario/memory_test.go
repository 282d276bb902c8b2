package scenario

import (
	"fmt"
	"runtime"
	"strings"
	"testing"
)

// A virtual user costs what its own state needs, not a copy of every
// template of the plan: 1,000 users of a plan of 200 scenarios, each with
// two templated tags (400 templates that text/template renders), every
// user rendering every one, hold at most 16 KB each (they held about 1 MB
// each when every user kept its own bound copy of every template).
func TestUserCostsKilobytes(t *testing.T) {
	var b strings.Builder
	b.WriteString("target: http://127.0.0.1:1\nload: {model: closed, vus: [1000]}\nscenarios:\n")
	for i := range 200 {
		fmt.Fprintf(&b, "  - {name: s%d, tags: {t: \"{{randInt 1 200}}\", u: \"{{randInt 1 50}}\"}, request: {url: /s%d}}\n", i, i)
	}
	set := compile(t, b.String())
	heap := func() uint64 {
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		return ms.HeapAlloc
	}
	before := heap()
	users := make([]*VU, 1000)
	for i := range users {
		v := set.NewVU(i, nil)
		for _, c := range set.scenarios {
			for _, tg := range c.tags {
				if _, err := v.renderString(tg.text); err != nil {
					t.Fatal(err)
				}
			}
		}
		users[i] = v
	}
	per := float64(heap()-before) / float64(len(users))
	runtime.KeepAlive(users)
	t.Logf("%.0f bytes a user", per)
	if per > 16<<10 {
		t.Errorf("a user holds %.0f bytes, want at most 16 KB", per)
	}
}
