//go:build unix

package results

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// inChild names the environment variable that makes this test binary the
// child of TestWriteFileOutOfDescriptors: the folder to write in.
const inChild = "CEILING_TEST_SPARE_DIR"

// A process that has used every descriptor its limit allows (a run's
// connections) still writes its result, with a descriptor of the reserve.
// The limit is lowered in a child process, never in the test's own.
func TestWriteFileOutOfDescriptors(t *testing.T) {
	if dir := os.Getenv(inChild); dir != "" {
		if err := outOfDescriptors(dir); err != nil {
			fmt.Println("FAIL:", err)
			os.Exit(1)
		}
		fmt.Println("PASS")
		os.Exit(0)
	}
	dir := t.TempDir()
	cmd := exec.Command(os.Args[0], "-test.run=^TestWriteFileOutOfDescriptors$")
	cmd.Env = append(os.Environ(), inChild+"="+dir)
	testkit.Group(t, cmd)
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("child: %v\n%s", err, out)
	}
	data, err := os.ReadFile(filepath.Join(dir, "result.json"))
	if err != nil || string(data) != "{}\n" {
		t.Errorf("result.json = %q, %v; want the data written", data, err)
	}
}

// outOfDescriptors lowers this process's open-file limit, takes the
// reserve, opens files until none is left and writes a result.
func outOfDescriptors(dir string) error {
	lim := syscall.Rlimit{Cur: 64, Max: 64}
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		return fmt.Errorf("lower the limit: %w", err)
	}
	if n := Reserve(); n != SpareDescriptors {
		return fmt.Errorf("Reserve() = %d, want %d", n, SpareDescriptors)
	}
	var held []*os.File
	for {
		f, err := os.Open(os.DevNull)
		if errors.Is(err, syscall.EMFILE) {
			break
		}
		if err != nil {
			return err
		}
		held = append(held, f)
	}
	if f, err := os.CreateTemp(dir, "probe"); !errors.Is(err, syscall.EMFILE) {
		return fmt.Errorf("with every descriptor taken, a file opened: %v, %v", f, err)
	}
	if err := WriteFile(filepath.Join(dir, "result.json"), []byte("{}\n"), Public); err != nil {
		return fmt.Errorf("WriteFile with every descriptor taken: %w", err)
	}
	for _, f := range held {
		f.Close()
	}
	return nil
}
