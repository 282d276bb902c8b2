package inputfile

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestReadRegular(t *testing.T) {
	path := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(path, []byte("0123456789"), 0o644); err != nil {
		t.Fatal(err)
	}
	for limit, want := range map[int64]string{10: "0123456789", 100: "0123456789"} {
		if got, err := Read(context.Background(), path, limit); err != nil || string(got) != want {
			t.Errorf("Read(%d) = %q, %v, want %q", limit, got, err, want)
		}
	}
	_, err := Read(context.Background(), path, 9)
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Limit != 9 || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "9 bytes") {
		t.Errorf("Read(9) = %v, want a TooLargeError naming the file and the limit", err)
	}
	if _, err := Read(context.Background(), filepath.Join(t.TempDir(), "none"), 9); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Read(missing) = %v, want not exist", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := Read(ctx, path, 100); !errors.Is(err, context.Canceled) {
		t.Errorf("Read(cancelled) = %v, want context.Canceled", err)
	}
}

func TestSize(t *testing.T) {
	for n, want := range map[int64]string{256 << 20: "256 MiB", 64 << 10: "64 KiB", 100: "100 bytes", 1<<20 + 1: "1048577 bytes"} {
		if got := Size(n); got != want {
			t.Errorf("Size(%d) = %q, want %q", n, got, want)
		}
	}
}
