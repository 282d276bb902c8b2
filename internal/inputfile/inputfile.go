package inputfile

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"slices"
)

// TooLargeError is the error of a file that holds more than its limit.
type TooLargeError struct {
	// Path is the file, as it was named.
	Path string
	// Limit is the most that is read of it, in bytes.
	Limit int64
}

func (e *TooLargeError) Error() string {
	return fmt.Sprintf("%s holds more than %s, the limit for such a file", e.Path, Size(e.Limit))
}

// chunk is how much one read asks for: the context is looked at between
// two.
const chunk = 64 << 10

// Read returns the contents of the file at path, which may be a regular
// file, a pipe, a FIFO or a device: at most limit bytes, else a
// *TooLargeError, having read no more than limit and one chunk. It
// stops when ctx ends (an error that wraps context.Cause(ctx)), even in
// the middle of a read from a pipe, or while a FIFO waits for a writer.
// Its errors name the file.
func Read(ctx context.Context, path string, limit int64) ([]byte, error) {
	if err := context.Cause(ctx); ctx.Err() != nil {
		return nil, fmt.Errorf("read %s: %w", path, err)
	}
	st, err := os.Stat(path)
	if err != nil {
		return nil, err
	}
	f, err := open(ctx, path, st.Mode())
	if err != nil {
		return nil, err
	}
	defer f.Close()
	// A read blocked on a pipe or a terminal returns when the file is
	// closed under it.
	stop := context.AfterFunc(ctx, func() { f.Close() })
	defer stop()
	var buf []byte
	if st.Mode().IsRegular() && st.Size() <= limit {
		buf = make([]byte, 0, st.Size()+1)
	}
	for {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("read %s: %w", path, context.Cause(ctx))
		}
		if int64(len(buf)) > limit {
			return nil, &TooLargeError{Path: path, Limit: limit}
		}
		if cap(buf)-len(buf) < chunk {
			buf = slices.Grow(buf, chunk)
		}
		n, err := f.Read(buf[len(buf):min(cap(buf), len(buf)+chunk)])
		buf = buf[:len(buf)+n]
		switch {
		case errors.Is(err, io.EOF):
			if int64(len(buf)) > limit {
				return nil, &TooLargeError{Path: path, Limit: limit}
			}
			return buf, nil
		case err != nil && ctx.Err() != nil:
			return nil, fmt.Errorf("read %s: %w", path, context.Cause(ctx))
		case err != nil:
			return nil, err
		}
	}
}

// open opens the file at path for reading. A FIFO's opening waits for a
// writer, in a goroutine of its own, as long as ctx lasts.
func open(ctx context.Context, path string, mode fs.FileMode) (*os.File, error) {
	if mode&fs.ModeNamedPipe == 0 {
		return os.Open(path)
	}
	type opened struct {
		f   *os.File
		err error
	}
	done := make(chan opened, 1)
	go func() {
		f, err := os.Open(path)
		done <- opened{f, err}
	}()
	select {
	case o := <-done:
		return o.f, o.err
	case <-ctx.Done():
		go func() {
			// The writer that comes at last finds the file closed.
			if o := <-done; o.f != nil {
				o.f.Close()
			}
		}()
		return nil, fmt.Errorf("read %s: %w (it waited for a writer)", path, context.Cause(ctx))
	}
}

// Size writes a limit in bytes as a person reads it: 256 MiB, 64 KiB,
// 100 bytes.
func Size(n int64) string {
	switch {
	case n >= 1<<20 && n%(1<<20) == 0:
		return fmt.Sprintf("%d MiB", n>>20)
	case n >= 1<<10 && n%(1<<10) == 0:
		return fmt.Sprintf("%d KiB", n>>10)
	}
	return fmt.Sprintf("%d bytes", n)
}
