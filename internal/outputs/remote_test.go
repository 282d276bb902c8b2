package outputs

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// labelNames decodes a WriteRequest and returns each series' label names.
func labelNames(t *testing.T, b []byte) [][]string {
	t.Helper()
	var out [][]string
	for len(b) > 0 {
		_, _, n := protowire.ConsumeTag(b)
		ts, m := protowire.ConsumeBytes(b[n:])
		if m < 0 {
			t.Fatal("bad WriteRequest")
		}
		b = b[n+m:]
		var names []string
		for len(ts) > 0 {
			num, typ, n := protowire.ConsumeTag(ts)
			m := protowire.ConsumeFieldValue(num, typ, ts[n:])
			if num == 1 {
				l, _ := protowire.ConsumeBytes(ts[n:])
				_, _, k := protowire.ConsumeTag(l)
				name, _ := protowire.ConsumeString(l[k:])
				names = append(names, name)
			}
			ts = ts[n+m:]
		}
		out = append(out, names)
	}
	return out
}

// Labels go sorted by name with __name__ among them, as remote write
// requires, an upper-case tag key included.
func TestWriteRequestLabelsSorted(t *testing.T) {
	s := []sample{{name: TagIterationsTotal, labels: []label{{"Region", "eu"}, {"outcome", "ok"}, {"run_id", "r"}}, value: 1, at: time.Now()}}
	got := labelNames(t, encodeWriteRequest(s))
	if len(got) != 1 || !slices.IsSorted(got[0]) || !slices.Equal(got[0], []string{"Region", "__name__", "outcome", "run_id"}) {
		t.Errorf("labels %v, want sorted with __name__ among them", got)
	}
}

// A push's error names no URL: a token in its query stays out of the
// warning.
func TestErrTextDropsURL(t *testing.T) {
	err := &url.Error{Op: "Post", URL: "http://h/api/v1/write?token=s3cret", Err: errors.New("connection refused")}
	if got := errText(err); strings.Contains(got, "s3cret") || !strings.Contains(got, "connection refused") {
		t.Errorf("errText = %q", got)
	}
}

// A remote write answered by a redirect stores nothing: Go's client would
// follow a 302 with a bodyless GET that a server may answer 200, and the
// batch would count as stored. The push is refused and said, and nothing
// reaches the host the redirect names.
func TestRemoteWriteRedirectIsAnError(t *testing.T) {
	other := testkit.NewTarget(t, testkit.TargetConfig{})
	target := httptest.NewServer(http.RedirectHandler(other.URL+"/api/v1/write", http.StatusFound))
	defer target.Close()
	r := newRemote(target.URL + "/api/v1/write")
	r.push([]sample{{name: TagIterationsTotal, labels: []label{{"run_id", "r"}}, value: 1, at: time.Now()}})
	warnings := r.close()
	if len(warnings) != 1 || !strings.Contains(warnings[0], "1 of 1 one-second batches were not stored") || !strings.Contains(warnings[0], "302") {
		t.Errorf("close = %q, want the batch said not stored, with the 302", warnings)
	}
	if n := other.Hits(); n != 0 {
		t.Errorf("the redirect's host was asked %d times, want never", n)
	}
}
