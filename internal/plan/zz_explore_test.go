package plan

import (
	"fmt"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"
)

func mergeBombX(levels, width int) string {
	var b strings.Builder
	b.WriteString("target: http://h\nload: {rates: [1]}\nscenarios: [{request: {url: /}}]\nx:\n  a0: &a0 {k: v}\n")
	for i := 1; i <= levels; i++ {
		fmt.Fprintf(&b, "  a%d: &a%d {<<: [", i, i)
		for j := range width {
			if j > 0 {
				b.WriteString(", ")
			}
			fmt.Fprintf(&b, "*a%d", i-1)
		}
		b.WriteString("]}\n")
	}
	fmt.Fprintf(&b, "http: {headers: *a%d}\n", levels)
	return b.String()
}

func TestXMergeBomb(t *testing.T) {
	lv, _ := strconv.Atoi(os.Getenv("LV"))
	w, _ := strconv.Atoi(os.Getenv("W"))
	s := mergeBombX(lv, w)
	t0 := time.Now()
	_, err := Parse("p.yaml", []byte(s))
	t.Logf("levels %d width %d bytes %d: %v err=%.300v", lv, w, len(s), time.Since(t0), err)
}

func headersPlanX(n int) string {
	var b strings.Builder
	b.WriteString("target: http://h\nload: {rates: [1]}\nscenarios: [{request: {url: /}}]\nhttp:\n  headers:\n")
	for i := range n {
		fmt.Fprintf(&b, "    X-Header-%07d: value-%07d\n", i, i)
	}
	return b.String()
}

func TestXHeaders(t *testing.T) {
	n, _ := strconv.Atoi(os.Getenv("N"))
	s := headersPlanX(n)
	t0 := time.Now()
	_, err := Parse("p.yaml", []byte(s))
	t.Logf("headers %d bytes %d: %v err=%.300v", n, len(s), time.Since(t0), err)
}

func TestXUnknownBomb(t *testing.T) {
	k, _ := strconv.Atoi(os.Getenv("K"))
	n, _ := strconv.Atoi(os.Getenv("N"))
	var b strings.Builder
	b.WriteString("target: http://h\nload: {rates: [1]}\ns: &s {request: {url: /}")
	for i := range k {
		fmt.Fprintf(&b, ", u%d: 1", i)
	}
	b.WriteString("}\nscenarios: [")
	for range n {
		b.WriteString("*s, ")
	}
	b.WriteString("]\n")
	s := b.String()
	t0 := time.Now()
	_, err := Parse("p.yaml", []byte(s))
	t.Logf("k %d n %d bytes %d: %v problems=%d", k, n, len(s), time.Since(t0), strings.Count(fmt.Sprint(err), "\n"))
}
