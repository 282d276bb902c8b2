package monitor

import (
	"errors"
	"os"
	"runtime"
	"testing"
)

// Off Linux, Process and Cgroup say they need Linux, with an error a caller
// can recognise, and CPULimit counts the cores.
func TestLinuxOnly(t *testing.T) {
	err := linuxOnlyError("watching a cgroup")
	if got, want := err.Error(), "watching a cgroup is supported on Linux only"; got != want {
		t.Errorf("linuxOnlyError.Error() = %q, want %q", got, want)
	}
	if !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("errors.Is(%v, errors.ErrUnsupported) = false, want true", err)
	}
	if runtime.GOOS == "linux" {
		if err := linuxOnly("x"); err != nil {
			t.Errorf("linuxOnly on Linux = %v, want nil", err)
		}
		return
	}
	if _, err := Process(os.Getpid()); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Process(self) = %v, want an error matching errors.ErrUnsupported", err)
	}
	if _, err := Cgroup("/docker/abc"); !errors.Is(err, errors.ErrUnsupported) {
		t.Errorf("Cgroup = %v, want an error matching errors.ErrUnsupported", err)
	}
	if pct, why := CPULimit(os.Getpid(), ""); pct != 100*float64(runtime.NumCPU()) || why != "cores" {
		t.Errorf("CPULimit(self) = %v (%s), want %v (cores)", pct, why, 100*float64(runtime.NumCPU()))
	}
}
