package agent

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
)

// A session's folder (its plan and users file) is a temporary folder named
// ceiling-agent-pid<N>-<random>, N the pid of the agent that made it: an
// agent removes it when the session closes, and one killed first (kill -9,
// a crash, the machine's memory) leaves it, with the users file in it.
// The next agent started on the machine removes those whose agent is gone
// (RemoveStale).

// folderPrefix is the pattern of this agent's session folders, for
// os.MkdirTemp.
func folderPrefix() string {
	return fmt.Sprintf("ceiling-agent-pid%d-*", os.Getpid())
}

// folderName matches a session folder's name and gives its agent's pid.
var folderName = regexp.MustCompile(`^ceiling-agent-pid([0-9]+)-[0-9]+$`)

// RemoveStale removes, from dir (os.TempDir() when empty), the session
// folders of agents that no longer run, and returns their names. A folder
// of an agent that runs (another agent on the machine, this one) is left
// alone, and so is any folder not named as this version names them. A dir
// that does not exist holds none: an image with nothing at /tmp (FROM
// scratch) is no error.
func RemoveStale(dir string) ([]string, error) {
	if dir == "" {
		dir = os.TempDir()
	}
	entries, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("remove folders of dead agents: %w", err)
	}
	var removed []string
	var errs []error
	for _, e := range entries {
		m := folderName.FindStringSubmatch(e.Name())
		if m == nil || !e.IsDir() {
			continue
		}
		pid, err := strconv.Atoi(m[1])
		if err != nil || pid == os.Getpid() || alive(pid) {
			continue
		}
		if err := os.RemoveAll(filepath.Join(dir, e.Name())); err != nil {
			errs = append(errs, err)
			continue
		}
		removed = append(removed, e.Name())
	}
	if err := errors.Join(errs...); err != nil {
		return removed, fmt.Errorf("remove folders of dead agents: %w", err)
	}
	return removed, nil
}
