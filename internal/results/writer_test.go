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
		t.Fatal("a Writer's file differs from json.MarshalIndent's bytes and a newline")
	}
	size := uint64(len(got))
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
	fresh := allocated(func() error { return Write(path, res, Public) })
	t.Logf("file %d bytes; a write through a kept Writer allocated %d bytes, a fresh one %d", size, kept, fresh)
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

// A result larger than keepBytes is written whole, and its buffers are let
// go rather than held for the run; a soak-sized one keeps them.
func TestWriterLetsLargeBuffersGo(t *testing.T) {
	res := &Result{Schema: Schema, Steps: []Step{}, Soak: &Soak{}}
	for i := range 300 {
		res.Soak.Windows = append(res.Soak.Windows, SoakWindow{StartS: float64(i), Histogram: strings.Repeat("HISTFAAA", 8<<10)})
	}
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
	res.Soak.Windows = res.Soak.Windows[:1]
	if err := w.Write(path, res, Public); err != nil {
		t.Fatal(err)
	}
	if w.enc == nil || w.buf.Cap() == 0 {
		t.Error("a Writer let go of the buffers of a small file")
	}
}
