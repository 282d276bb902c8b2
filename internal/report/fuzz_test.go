package report

import (
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/results"
)

// FuzzHostileResult feeds result files anyone could hand `ceiling report`
// through results.Read and every renderer: whatever Read accepts renders
// in bounded time and memory, without a panic (a p99 of 1.7e308 once drew
// an HTML page of gigabytes; Read now refuses it).
func FuzzHostileResult(f *testing.F) {
	good, err := json.Marshal(sample())
	if err != nil {
		f.Fatal(err)
	}
	f.Add(good)
	f.Add([]byte(`{"schema":"ceiling.result/v1","steps":[{"model":"open","target_rate":1.7e308,"latency_ms":{"p99":1.7e308}}]}`))
	f.Add([]byte(`{"schema":"ceiling.result/v1","steps":[{"model":"open","target_rate":100,"latency_ms":{"p50":-5,"p99":1e15,"max":1e15},"series":[{"t":0,"rate":1e15}]}]}`))
	f.Add([]byte(`{"schema":"ceiling.result/v1","steps":[{"model":"closed","vus":-3,"duration_s":1e15}]}`))
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, data []byte) {
		path := filepath.Join(dir, "r.json")
		if err := os.WriteFile(path, data, 0o600); err != nil {
			t.Fatal(err)
		}
		r, err := results.Read(path)
		if err != nil {
			return
		}
		for _, render := range []func(io.Writer, *results.Result) error{Text, Markdown, HTML} {
			var n countingWriter
			_ = render(&n, r)
			if n > 50<<20 {
				t.Fatalf("a %d-byte result rendered to %d bytes", len(data), n)
			}
		}
	})
}

// countingWriter counts what is written to it, and keeps nothing.
type countingWriter int64

func (c *countingWriter) Write(p []byte) (int, error) {
	*c += countingWriter(len(p))
	return len(p), nil
}
