package results

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// writeSame writes res at path through w, checks the file holds the bytes
// Write always wrote (json.MarshalIndent and a newline), and returns its
// size.
func writeSame(t *testing.T, w *Writer, path string, res *Result) int {
	t.Helper()
	if err := w.Write(path, res, Public); err != nil {
		t.Fatal(err)
	}
	got, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	want, err := json.MarshalIndent(res, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, append(want, '\n')) {
		t.Fatalf("%d windows: a Writer's file differs from json.MarshalIndent's bytes and a newline", len(res.Soak.Windows))
	}
	return len(got)
}

// A Writer whose first write cannot make its file says so, and the next
// write, where it can, works: nothing it keeps was half made.
func TestWriterFirstWriteFails(t *testing.T) {
	res := &Result{Schema: Schema, Steps: []Step{}, Soak: &Soak{Windows: []SoakWindow{{StartS: 0, EndS: 1, Seconds: 1}}}}
	var w Writer
	if err := w.Write(filepath.Join(t.TempDir(), "no", "such", "result.json"), res, Public); err == nil {
		t.Fatal("a write into a folder that does not exist succeeded")
	}
	writeSame(t, &w, filepath.Join(t.TempDir(), "result.json"), res)
}

// A Writer writes the bytes Write always wrote (json.MarshalIndent and a
// newline), and writing the same growing result again, as a soak does
// after every window, allocates a fraction of the file each time, where a
// fresh encoding allocates the file's size several times over (the twin
// that shows the measure is live).
func TestWriterKeepsItsBuffers(t *testing.T) {
	res := &Result{Schema: Schema, Steps: []Step{}, Soak: &Soak{}}
	for i := range 300 {
		res.Soak.Windows = append(res.Soak.Windows, SoakWindow{StartS: float64(i), EndS: float64(i + 1), Seconds: 1, Completed: 300, OK: 300, Throughput: 300,
			Histogram: strings.Repeat("HISTFAAA", 100)})
	}
	path := filepath.Join(t.TempDir(), "result.json")
	var w Writer
	size := uint64(writeSame(t, &w, path, res))
	allocated := func(write func() error) uint64 {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		for range 20 {
			if err := write(); err != nil {
				t.Fatal(err)
			}
		}
		runtime.ReadMemStats(&after)
		return (after.TotalAlloc - before.TotalAlloc) / 20
	}
	kept := allocated(func() error { return w.Write(path, res, Public) })
	fresh := allocated(func() error { _, err := json.MarshalIndent(res, "", "  "); return err })
	t.Logf("file %d bytes; a write through a kept Writer allocated %d bytes, encoding it whole %d", size, kept, fresh)
	// Under the race detector encoding/json's pooled buffer is dropped now
	// and then (sync.Pool drops a share on purpose there): a kept Writer
	// then makes it again, and writes under half of what a fresh one does.
	if limit := size / 4; kept > limit && (!raceOn || 2*kept > fresh) {
		t.Errorf("a kept Writer allocated %d bytes a write for a file of %d (a fresh write %d): want a fraction of it", kept, size, fresh)
	}
	if fresh < 2*size {
		t.Errorf("a fresh write allocated %d bytes for a file of %d: the measure cannot tell", fresh, size)
	}
}

// A result larger than keepBytes outside its soak's windows (a long
// per-second series) is written whole, and its buffers are let go rather
// than held for the run; a small one keeps them.
func TestWriterLetsLargeBuffersGo(t *testing.T) {
	res := &Result{Schema: Schema, Steps: []Step{}, Warnings: []string{strings.Repeat("HISTFAAA", 3<<20)}}
	path := filepath.Join(t.TempDir(), "result.json")
	var w Writer
	if err := w.Write(path, res, Public); err != nil {
		t.Fatal(err)
	}
	if fi, err := os.Stat(path); err != nil || fi.Size() <= keepBytes {
		t.Fatalf("file %v (%v), want one larger than %d bytes", fi, err, keepBytes)
	}
	if w.enc != nil || w.buf.Cap() != 0 {
		t.Errorf("a Writer holds a %d-byte buffer after a file larger than %d", w.buf.Cap(), keepBytes)
	}
	res.Warnings = []string{"small"}
	if err := w.Write(path, res, Public); err != nil {
		t.Fatal(err)
	}
	if w.enc == nil || w.buf.Cap() == 0 {
		t.Error("a Writer let go of the buffers of a small file")
	}
}

// A soak's windows go to the file one at a time: the buffers a Writer
// keeps are the size of the result less its windows, whether it holds 10
// windows or 400, and the file is the same bytes.
func TestWriterBuffersDoNotGrowWithWindows(t *testing.T) {
	path := filepath.Join(t.TempDir(), "result.json")
	var w Writer
	kept := func(n int) int {
		res := &Result{Schema: Schema, Steps: []Step{}, Soak: &Soak{Trends: []Trend{{Figure: "p99_ms", Windows: n}}}}
		for i := range n {
			res.Soak.Windows = append(res.Soak.Windows, SoakWindow{StartS: float64(i), EndS: float64(i + 1), Seconds: 1, Completed: 300, OK: 300,
				Histogram: strings.Repeat("HISTFAAA", 200), Ceiling: &WindowCeiling{HeapMB: 4.5}})
		}
		writeSame(t, &w, path, res)
		return w.buf.Cap() + w.wbuf.Cap()
	}
	few, many := kept(10), kept(400)
	t.Logf("buffers kept: %d bytes after 10 windows, %d after 400 (a window is about 2 KB)", few, many)
	if many > 2*few || many > 64<<10 {
		t.Errorf("a Writer keeps %d bytes after 400 windows, %d after 10: its buffers grow with the file", many, few)
	}
}
