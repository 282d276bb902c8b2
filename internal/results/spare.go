package results

import (
	"os"
	"sync"

	"github.com/ceiling-dev/ceiling/internal/transport"
)

// SpareDescriptors is how many file descriptors Reserve holds for writing
// results: WriteFile needs one, a few make room for whatever else takes
// one in the same instant.
const SpareDescriptors = 4

// spare holds descriptors (of the null device) kept for WriteFile. They
// are the process's, so they live in one place for the whole process.
var spare struct {
	mu    sync.Mutex
	files []*os.File
}

// Reserve sets SpareDescriptors descriptors aside for writing results. A
// run at a rate that takes every descriptor its process may open (a
// connection each: the open-file limit reached, EMFILE) must still write
// the steps it finished: WriteFile gives these back to the system when it
// finds none free, writes, and takes them again. Call it before the load
// starts; calling it again tops the reserve up. It returns how many it
// holds.
func Reserve() int {
	spare.mu.Lock()
	defer spare.mu.Unlock()
	for len(spare.files) < SpareDescriptors {
		f, err := os.Open(os.DevNull)
		if err != nil {
			break
		}
		spare.files = append(spare.files, f)
	}
	return len(spare.files)
}

// release closes the reserve's descriptors, so that the next files opened
// can have them; it reports whether it held any.
func release() bool {
	spare.mu.Lock()
	defer spare.mu.Unlock()
	for _, f := range spare.files {
		f.Close()
	}
	n := len(spare.files)
	spare.files = spare.files[:0]
	return n > 0
}

// createTemp is os.CreateTemp that, when the process has no descriptor
// left, uses the reserve's (and takes them again once the file is
// written: see WriteFile).
func createTemp(dir, pattern string) (f *os.File, refill bool, err error) {
	f, err = os.CreateTemp(dir, pattern)
	if err != nil && transport.OutOfResources(err) && release() {
		f, err = os.CreateTemp(dir, pattern)
		refill = true
	}
	return f, refill, err
}
