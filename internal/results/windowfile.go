package results

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"runtime"
)

// WindowFile holds a soak's windows on disk while it runs, each encoded
// once as result.json holds it (its JSON, compact), so that ceiling keeps
// no window in memory however long the soak: a window kept in memory
// (2–4 KB of small objects) grew ceiling's own memory by a few megabytes
// an hour, the drift a soak of ceiling itself must not show. The file is
// a temporary one, removed as soon as it is made where the system allows
// (Linux, macOS: it then lives as long as its descriptor, and a killed
// run leaves nothing behind), else at Close.
//
// A WindowFile is used by one goroutine at a time; a Soak that reads its
// windows from one (Soak.InFile) reads them during the call it was given
// in, before the next window is added.
type WindowFile struct {
	f    *os.File
	name string  // removed at Close, when it could not be before
	ends []int64 // each window's end in the file; the first begins at 0
	buf  bytes.Buffer
	enc  *json.Encoder
	read []byte // the last window read
}

// CreateWindowFile makes an empty WindowFile in the system's temporary
// folder, with room in memory for the offsets of n windows.
func CreateWindowFile(n int) (*WindowFile, error) {
	f, refill, err := createTemp("", "ceiling-soak-windows-*")
	if refill {
		defer Reserve()
	}
	if err != nil {
		return nil, fmt.Errorf("soak windows: %w", err)
	}
	w := &WindowFile{f: f, name: f.Name(), ends: make([]int64, 0, n)}
	if runtime.GOOS != "windows" && os.Remove(w.name) == nil {
		w.name = "" // gone from the folder: the descriptor keeps it
	}
	w.enc = json.NewEncoder(&w.buf)
	return w, nil
}

// Len counts the windows in the file.
func (w *WindowFile) Len() int { return len(w.ends) }

// Append adds win after the last window.
func (w *WindowFile) Append(win *SoakWindow) error {
	w.buf.Reset()
	if err := w.enc.Encode(win); err != nil {
		return fmt.Errorf("soak windows: encode: %w", err)
	}
	data := bytes.TrimSuffix(w.buf.Bytes(), []byte("\n"))
	at := w.end(len(w.ends))
	if _, err := w.f.WriteAt(data, at); err != nil {
		return fmt.Errorf("soak windows: %w", err)
	}
	w.ends = append(w.ends, at+int64(len(data)))
	return nil
}

// end is where window i begins: the end of the one before it.
func (w *WindowFile) end(i int) int64 {
	if i == 0 {
		return 0
	}
	return w.ends[i-1]
}

// Raw returns window i's JSON, compact, as result.json holds it: valid
// until the next call.
func (w *WindowFile) Raw(i int) ([]byte, error) {
	from, to := w.end(i), w.ends[i]
	if n := int(to - from); cap(w.read) < n {
		w.read = make([]byte, n)
	}
	w.read = w.read[:to-from]
	if _, err := w.f.ReadAt(w.read, from); err != nil {
		return nil, fmt.Errorf("soak windows: read window %d: %w", i, err)
	}
	return w.read, nil
}

// Window reads window i.
func (w *WindowFile) Window(i int) (SoakWindow, error) {
	var win SoakWindow
	data, err := w.Raw(i)
	if err == nil {
		err = json.Unmarshal(data, &win)
	}
	if err != nil {
		return win, fmt.Errorf("soak windows: window %d: %w", i, err)
	}
	return win, nil
}

// Close closes the file and removes it.
func (w *WindowFile) Close() error {
	err := w.f.Close()
	if w.name != "" {
		if rerr := os.Remove(w.name); err == nil {
			err = rerr
		}
	}
	return err
}
