package agent

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/ceiling-dev/ceiling/internal/testkit"
)

// syncBuffer is a bytes.Buffer that one goroutine writes while another
// reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.Write(p)
}

func (b *syncBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.b.String()
}

// deadPid is the pid of a process that ran and ended.
func deadPid(t *testing.T) int {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	testkit.Group(t, cmd)
	if err := cmd.Run(); err != nil {
		t.Fatal(err)
	}
	return cmd.Process.Pid
}

// An agent that starts removes the session folders (plans, users files)
// that agents killed before their sessions closed left behind, and only
// those: not the folders of an agent that runs, nor folders it did not
// name.
func TestServeRemovesDeadAgentsFolders(t *testing.T) {
	tmp := t.TempDir()
	for _, env := range []string{"TMPDIR", "TMP", "TEMP"} { // os.TempDir's, by system
		t.Setenv(env, tmp)
	}
	dead := fmt.Sprintf("ceiling-agent-pid%d-123", deadPid(t))
	live := fmt.Sprintf("ceiling-agent-pid%d-456", os.Getpid())
	for _, name := range []string{dead, live, "ceiling-agent-789", "other"} {
		if err := os.MkdirAll(filepath.Join(tmp, name), 0o700); err != nil {
			t.Fatal(err)
		}
		os.WriteFile(filepath.Join(tmp, name, "users.csv"), []byte("email\na@example.com\n"), 0o600)
	}
	tokenFile := filepath.Join(t.TempDir(), "token")
	os.WriteFile(tokenFile, []byte(token), 0o600)
	ctx, cancel := context.WithCancel(context.Background())
	var log syncBuffer
	served := make(chan error, 1)
	go func() {
		served <- Serve(ctx, ServeFlags{Listen: "127.0.0.1:0", TokenFile: tokenFile, Lease: time.Second}, "test", nil, &log)
	}()
	for start := time.Now(); !strings.Contains(log.String(), "serving API"); time.Sleep(10 * time.Millisecond) {
		if time.Since(start) > 10*time.Second {
			t.Fatalf("the agent did not start: %s", log.String())
		}
	}
	cancel()
	if err := <-served; err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(filepath.Join(tmp, dead)); !os.IsNotExist(err) {
		t.Errorf("the folder of a dead agent, %s: %v, want it removed", dead, err)
	}
	for _, name := range []string{live, "ceiling-agent-789", "other"} {
		if _, err := os.Stat(filepath.Join(tmp, name, "users.csv")); err != nil {
			t.Errorf("%s: %v, want it left alone", name, err)
		}
	}
	if !strings.Contains(log.String(), "removed the session folders of agents that died: "+dead) {
		t.Errorf("the agent's log %q, want it to say what it removed", log.String())
	}
}

// A session's folder is named after its agent's pid, so that the next
// agent can tell a dead agent's from a live one's, and is removed when
// the session closes.
func TestAgentSessionFolder(t *testing.T) {
	tmp := t.TempDir()
	for _, env := range []string{"TMPDIR", "TMP", "TEMP"} {
		t.Setenv(env, tmp)
	}
	addr := agent(t, &Server{})
	c, err := connect(t, quickPlan(t, target(t), ""), token, addr)
	if err != nil {
		t.Fatal(err)
	}
	prefix := fmt.Sprintf("ceiling-agent-pid%d-", os.Getpid())
	entries, _ := os.ReadDir(tmp)
	if len(entries) != 1 || !strings.HasPrefix(entries[0].Name(), prefix) || !folderName.MatchString(entries[0].Name()) {
		t.Errorf("the session's folders %v, want one named %s…", entries, prefix)
	}
	c.Close()
	if entries, _ := os.ReadDir(tmp); len(entries) != 0 {
		t.Errorf("after the session closed: %v, want its folder removed", entries)
	}
}

// An image with no temporary folder (FROM scratch, before Kubernetes mounts
// one) has no session folder to remove: no error, so that the agent does
// not warn about its own image's layout.
func TestRemoveStaleWithoutTempFolder(t *testing.T) {
	missing := filepath.Join(t.TempDir(), "tmp")
	removed, err := RemoveStale(missing)
	if err != nil || len(removed) != 0 {
		t.Errorf("RemoveStale(%s) = %v, %v; want nothing and no error", missing, removed, err)
	}
}
