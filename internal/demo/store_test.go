package demo

import (
	"bufio"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// lines reads messages.jsonl and returns its lines' clientIds, failing on
// a line that is not a JSON object with site, clientId, text and at.
func lines(t *testing.T, dir string) []string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, "messages.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var ids []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var l struct {
			At, Site, Text string
			ClientID       json.RawMessage `json:"clientId"`
		}
		if err := json.Unmarshal(sc.Bytes(), &l); err != nil || l.Site == "" || l.At == "" || l.ClientID == nil {
			t.Fatalf("line %q: %v, want {at, site, clientId, text}", sc.Text(), err)
		}
		ids = append(ids, string(l.ClientID))
	}
	return ids
}

// A file store with sync "full" writes one line per saved message (none for
// a duplicate), and Close removes the temporary folder it created.
func TestFileStoreSyncFull(t *testing.T) {
	s, err := Start(Config{Store: "file", Sync: "full"})
	if err != nil {
		t.Fatal(err)
	}
	dir := s.Config().DataDir
	if dir == "" {
		t.Fatal("Config().DataDir is empty, want the temporary folder")
	}
	c := &http.Client{}
	defer c.CloseIdleConnections()
	for i := range 10 {
		call(t, c, http.MethodPost, s.URL()+"/api/sites/s-1/messages", fmt.Sprintf(`{"clientId":"f%d","text":"line\n%d \u00e9"}`, i, i))
	}
	call(t, c, http.MethodPost, s.URL()+"/api/sites/s-1/messages", `{"clientId":"f3","text":"dup"}`)
	conn := dial(t, s, "/widget")
	exchange(t, conn, `{"clientId":"w1","site":"s-\"2\"","text":"from the widget"}`)
	if got := lines(t, dir); len(got) != 11 || got[3] != `"f3"` || got[10] != `"w1"` {
		t.Errorf("messages.jsonl ids = %v, want f0…f9 and w1, once each", got)
	}
	conn.Close()
	if err := s.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	if _, err := os.Stat(dir); !os.IsNotExist(err) {
		t.Errorf("after Close, stat %s = %v, want not exist", dir, err)
	}
}

// A data folder the caller named is kept, and sync "normal" has written
// every line by Close.
func TestFileStoreKeepsNamedDir(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "data")
	s, err := Start(Config{Store: "file", DataDir: dir})
	if err != nil {
		t.Fatal(err)
	}
	c := &http.Client{}
	defer c.CloseIdleConnections()
	for i := range 3 {
		call(t, c, http.MethodPost, s.URL()+"/api/sites/s/messages", fmt.Sprintf(`{"clientId":%d}`, i))
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close() = %v", err)
	}
	if got := lines(t, dir); len(got) != 3 {
		t.Errorf("messages.jsonl has %d lines, want 3", len(got))
	}
}

func TestStartRejectsBadConfig(t *testing.T) {
	for _, cfg := range []Config{{Store: "disk"}, {Sync: "sometimes"}, {Webhook: "ftp://x"}, {Webhook: "http://"}} {
		if s, err := Start(cfg); err == nil {
			s.Close()
			t.Errorf("Start(%+v) = nil error, want one", cfg)
		}
	}
}

// The store's memory is bounded: a site keeps its newest messages, the
// duplicate index its newest ids, and past the site limit the oldest site
// goes.
func TestStoreBounds(t *testing.T) {
	s, err := openStore(Config{Store: storeMemory})
	if err != nil {
		t.Fatal(err)
	}
	s.keep, s.seenMax, s.siteMax = 3, 5, 2
	now := time.Now()
	for i := range 7 {
		if _, dup, err := s.save("a", fmt.Sprint(i), "t", now); dup || err != nil {
			t.Fatalf("save %d = dup %v, %v; want saved", i, dup, err)
		}
	}
	if got := s.list("a", 10); len(got) != 3 || got[0].id != "4" || got[2].id != "6" {
		t.Errorf("site a keeps %v, want ids 4, 5, 6", got)
	}
	if len(s.seen) != 5 || len(s.seenLog) != 5 {
		t.Errorf("duplicate index holds %d (%d in the ring), want 5", len(s.seen), len(s.seenLog))
	}
	if _, dup, _ := s.save("a", "0", "t", now); dup {
		t.Error("id 0 is still a duplicate after 7 newer ids, want it forgotten")
	}
	if _, dup, _ := s.save("a", "6", "t", now); !dup {
		t.Error("id 6 is not a duplicate, want it remembered")
	}
	s.save("b", "x", "t", now)
	s.save("c", "x", "t", now)
	if len(s.sites) != 2 || s.sites["a"] != nil {
		t.Errorf("sites after a, b, c with a limit of 2: %d, a kept %v; want b and c", len(s.sites), s.sites["a"] != nil)
	}
}
