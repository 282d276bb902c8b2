package transport

import (
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"syscall"
	"testing"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		name            string
		status          int
		expect, limited []int
		want            Kind
	}{
		{"200 default", 200, nil, []int{429}, OK},
		{"204 default", 204, nil, nil, OK},
		{"302 default is a redirect failure", 302, nil, nil, Redirect},
		{"302 expected", 302, []int{302}, nil, OK},
		{"404", 404, nil, nil, HTTP4xx},
		{"429 limited", 429, nil, []int{429}, Limited},
		{"429 not listed", 429, nil, nil, HTTP4xx},
		{"429 expected beats limited", 429, []int{429}, []int{429}, OK},
		{"503 limited by plan", 503, nil, []int{429, 503}, Limited},
		{"500", 500, nil, nil, HTTP5xx},
		{"200 when only 201 expected", 200, []int{201}, nil, Check},
		{"101", 101, nil, nil, Check},
		{"301 when only 200 expected", 301, []int{200}, nil, Redirect},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := Classify(tt.status, tt.expect, tt.limited); got != tt.want {
				t.Errorf("Classify(%d, %v, %v) = %v, want %v", tt.status, tt.expect, tt.limited, got, tt.want)
			}
		})
	}
}

type timeoutErr struct{}

func (timeoutErr) Error() string   { return "i/o timeout" }
func (timeoutErr) Timeout() bool   { return true }
func (timeoutErr) Temporary() bool { return true }

func TestClassifyError(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want Kind
	}{
		{"refused", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.ECONNREFUSED)}, Refused},
		{"dial other", &net.OpError{Op: "dial", Err: errors.New("no route")}, Connect},
		{"dial timeout", &net.OpError{Op: "dial", Err: timeoutErr{}}, Connect},
		{"dns", &net.DNSError{Name: "nowhere.invalid"}, Connect},
		{"deadline", os.ErrDeadlineExceeded, Timeout},
		{"net timeout", timeoutErr{}, Timeout},
		{"reset", &net.OpError{Op: "read", Err: os.NewSyscallError("read", syscall.ECONNRESET)}, Reset},
		{"eof", fmt.Errorf("read: %w", io.EOF), Reset},
		{"unexpected eof", io.ErrUnexpectedEOF, Reset},
		{"tls record", tls.RecordHeaderError{Msg: "bad"}, TLS},
		{"garbage", errors.New("cannot parse response status line"), Protocol},
		// ceiling's own limits are the generator's failures, not the target's.
		{"out of descriptors", &net.OpError{Op: "dial", Err: os.NewSyscallError("socket", syscall.EMFILE)}, Generator},
		{"system out of descriptors", &net.OpError{Op: "dial", Err: os.NewSyscallError("socket", syscall.ENFILE)}, Generator},
		{"out of local ports", &net.OpError{Op: "dial", Err: os.NewSyscallError("connect", syscall.EADDRNOTAVAIL)}, Generator},
		{"out of descriptors, wrapped", fmt.Errorf("Get \"http://x/\": %w", &net.OpError{Op: "dial", Err: os.NewSyscallError("socket", syscall.EMFILE)}), Generator},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := ClassifyError(tt.err); got != tt.want {
				t.Errorf("ClassifyError(%v) = %v, want %v", tt.err, got, tt.want)
			}
		})
	}
}

func TestKindNames(t *testing.T) {
	seen := map[string]bool{}
	for k := Kind(0); k < NumKinds; k++ {
		n := k.String()
		if n == "" || n == "unknown" || seen[n] {
			t.Errorf("Kind(%d).String() = %q: empty or duplicate", k, n)
		}
		seen[n] = true
	}
	if OK.Failed() || Limited.Failed() || !Timeout.Failed() || !Redirect.Failed() || !Generator.Failed() {
		t.Errorf("Failed() wrong for ok/limited/timeout/redirect/generator")
	}
	if Generator.Responded() || Generator.String() != "generator" {
		t.Errorf("Generator: responded %v, name %q; want false, generator", Generator.Responded(), Generator.String())
	}
}
