package demo

import (
	"errors"
	"fmt"
	"github.com/spf13/pflag"
	"math"
	"net/url"
	"strings"
)

// Flags are ceiling demo-target's command-line settings, as typed; each
// field is the flag of the same name.
type Flags struct {
	Addr, Webhook, Store, Sync, DataDir string
	Lanes, FloodBurst                   int
	FloodRate                           float64
	ReusePort                           bool
}

// Register adds the flags to fs.
func (f *Flags) Register(fl *pflag.FlagSet) {
	fl.StringVar(&f.Addr, "addr", "127.0.0.1:8080", "listen address")
	fl.StringVar(&f.Webhook, "webhook", "", "post every saved chat message to this URL (like a Slack webhook); empty: no jobs")
	fl.IntVar(&f.Lanes, "job-lanes", 8, "webhook posts in flight at once: delivery capacity is lanes ÷ webhook latency")
	fl.StringVar(&f.Store, "store", "memory", "where chat messages are saved: memory or file (one writer at a time either way)")
	fl.StringVar(&f.Sync, "sync", "normal", "file store: fsync at most once a second (normal) or after every commit (full)")
	fl.StringVar(&f.DataDir, "data-dir", "", "file store folder (default: a temporary folder removed on exit)")
	fl.Float64Var(&f.FloodRate, "flood-rate", 10, "flood brake: messages per second per site after the burst; below 0: no brake")
	fl.IntVar(&f.FloodBurst, "flood-burst", 600, "flood brake: messages a site may send at once")
	fl.BoolVar(&f.ReusePort, "reuse-port", false, "listen with SO_REUSEPORT, so that a second copy can start on the same port (a rolling deploy's overlap)")
}

// Config checks the flags and maps them to a Config; changed reports
// whether the user set a flag. Every problem is reported, each naming its
// flag.
func (f *Flags) Config(changed func(string) bool) (Config, error) {
	var bad []string
	if f.Store != storeMemory && f.Store != storeFile {
		bad = append(bad, fmt.Sprintf("--store %q: want memory or file", f.Store))
	}
	if f.Sync != syncNormal && f.Sync != syncFull {
		bad = append(bad, fmt.Sprintf("--sync %q: want normal (fsync once a second) or full (after every commit)", f.Sync))
	}
	if f.Store == storeMemory && (changed("sync") || changed("data-dir")) {
		bad = append(bad, "--sync and --data-dir: only with --store file (the memory store has no file)")
	}
	if f.Lanes < 1 {
		bad = append(bad, fmt.Sprintf("--job-lanes %d: want at least 1", f.Lanes))
	}
	if f.FloodBurst < 1 {
		bad = append(bad, fmt.Sprintf("--flood-burst %d: want at least 1", f.FloodBurst))
	}
	if math.IsNaN(f.FloodRate) || math.IsInf(f.FloodRate, 0) || f.FloodRate == 0 {
		bad = append(bad, fmt.Sprintf("--flood-rate %v: want messages per second above 0, or below 0 for no brake", f.FloodRate))
	}
	if f.Webhook != "" {
		if u, err := url.Parse(f.Webhook); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			bad = append(bad, fmt.Sprintf("--webhook %q: want an http:// or https:// URL", f.Webhook))
		}
	}
	if len(bad) > 0 {
		return Config{}, errors.New(strings.Join(bad, "; "))
	}
	return Config{
		Addr: f.Addr, Webhook: f.Webhook, JobLanes: f.Lanes, Store: f.Store, Sync: f.Sync, DataDir: f.DataDir, ReusePort: f.ReusePort,
		FloodRate: f.FloodRate, FloodBurst: f.FloodBurst,
	}, nil
}
