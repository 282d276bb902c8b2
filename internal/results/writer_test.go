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

// A soak under way whose windows are in their file (Soak.InFile) is
// written with the bytes of the same soak holding its windows in memory:
// by a Writer, which copies them from the file, and by json.Marshal; its
// last window and count read from the file.
func TestWindowsFromFile(t *testing.T) {
	cpu := 12.5
	windows := []SoakWindow{
		{StartS: 0, EndS: 10, Seconds: 10, Completed: 7, OK: 5, Failed: 2, Errors: map[string]int64{"<reset> & more": 2}, Throughput: 0.1, ErrorRate: 2.0 / 7,
			Target: &WindowTarget{CPUPct: &cpu, Metrics: map[string]float64{"queue{a=\"b\"}": 1e-9}}},
		{StartS: 10, EndS: 20, Seconds: 10, Histogram: "HISTFAAAAB", Ceiling: &WindowCeiling{HeapMB: 3.25, Threads: 12}},
		{StartS: 20, EndS: 25.5, Seconds: 5, SLOBroken: []string{"p99<200ms"}},
	}
	f, err := CreateWindowFile(2)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	for i := range windows {
		if err := f.Append(&windows[i]); err != nil {
			t.Fatal(err)
		}
	}
	held := &Result{Schema: Schema, Steps: []Step{}, Soak: &Soak{Schema: SoakSchema, HeldS: 25.5, Windows: windows, Trends: []Trend{}}}
	filed := &Result{Schema: Schema, Steps: []Step{}, Soak: &Soak{Schema: SoakSchema, HeldS: 25.5, Trends: []Trend{}}}
	filed.Soak.InFile(f)
	want, err := json.MarshalIndent(held, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(t.TempDir(), "result.json")
	writeSame(t, &Writer{}, path, filed)
	if got, _ := os.ReadFile(path); !bytes.Equal(got, append(want, '\n')) {
		t.Fatalf("the soak from its file was written\n%s\nwant, as from memory\n%s", got, want)
	}
	last, err := filed.Soak.LastWindow()
	if err != nil || last == nil || last.EndS != 25.5 || filed.Soak.WindowCount() != 3 {
		t.Fatalf("last window %+v (%v) of %d, want the one ending at 25.5 of 3", last, err, filed.Soak.WindowCount())
	}
	if err := filed.Soak.Load(); err != nil || len(filed.Soak.Windows) != 3 || filed.Soak.Windows[0].Errors["<reset> & more"] != 2 {
		t.Fatalf("loaded %+v (%v), want the 3 windows", filed.Soak.Windows, err)
	}
}

// The file of a soak's windows leaves nothing in the temporary folder
// where the system lets an open file be removed, and nothing anywhere
// once closed.
func TestWindowFileLeavesNothing(t *testing.T) {
	dir := t.TempDir()
	t.Setenv("TMPDIR", dir) // os.TempDir on Unix
	t.Setenv("TMP", dir)    // on Windows
	f, err := CreateWindowFile(1)
	if err != nil {
		t.Fatal(err)
	}
	if err := f.Append(&SoakWindow{EndS: 1}); err != nil {
		t.Fatal(err)
	}
	left, _ := os.ReadDir(os.TempDir())
	if runtime.GOOS != "windows" && len(left) != 0 {
		t.Errorf("with the file open, the temporary folder holds %v; want nothing", left)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	if left, _ := os.ReadDir(os.TempDir()); len(left) != 0 {
		t.Errorf("with the file closed, the temporary folder holds %v; want nothing", left)
	}
}
