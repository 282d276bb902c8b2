package sink

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/pflag"
)

// Flags are the settings of a sink run on its own (ceiling mock), as
// typed on its command line; each field is the flag of the same name.
type Flags struct {
	Listen, Name, Body string
	Latency, P50, P99  string
	ErrorRate          string
	Status             int
	LimitPer           string
	LimitRPS           float64
	IDJSON, IDRegex    string
	Seed               uint64
}

// Register adds the flags to fs, with their defaults.
func (f *Flags) Register(fs *pflag.FlagSet) {
	fs.StringVar(&f.Listen, "listen", "127.0.0.1:9911", "listen address")
	fs.StringVar(&f.Name, "name", "mock", "name in the stats")
	fs.StringVar(&f.Latency, "latency", "0s", "fixed latency before answering")
	fs.StringVar(&f.P50, "latency-p50", "", "median latency (with --latency-p99: a distribution)")
	fs.StringVar(&f.P99, "latency-p99", "", "99th percentile latency")
	fs.StringVar(&f.ErrorRate, "error-rate", "0%", "share of requests answered 500")
	fs.IntVar(&f.Status, "status", 200, "status of a normal answer")
	fs.StringVar(&f.Body, "body", "", `body of a normal answer (default {"ok":true})`)
	fs.StringVar(&f.LimitPer, "rate-limit-per", "", `the key of the rate limit: a JSON path into the body ("channel") or "header:X-Name"`)
	fs.Float64Var(&f.LimitRPS, "rate-limit-rps", 0, "requests per second allowed per key; past it 429 with Retry-After")
	fs.StringVar(&f.IDJSON, "id-json", "", "JSON path of the message id in each body")
	fs.StringVar(&f.IDRegex, "id-regex", "", "regular expression whose first group is the message id")
	fs.Uint64Var(&f.Seed, "seed", 0, "seed of the latency and error draws")
}

// Options turns the flags into sink options. Errors name the flag.
func (f *Flags) Options() (Options, error) {
	o := Options{
		Name: f.Name, Listen: f.Listen, Status: f.Status, Body: f.Body, Seed: f.Seed,
		ID: IDRule{JSON: f.IDJSON, Regex: f.IDRegex},
	}
	dur := func(flag, v string) (time.Duration, error) {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return 0, fmt.Errorf("--%s %q: want a duration such as \"50ms\"", flag, v)
		}
		return d, nil
	}
	var err error
	if o.Latency.Fixed, err = dur("latency", f.Latency); err != nil {
		return o, err
	}
	if f.P50 != "" || f.P99 != "" {
		if f.P50 == "" || f.P99 == "" {
			return o, errors.New("--latency-p50 and --latency-p99 go together")
		}
		p50, err := dur("latency-p50", f.P50)
		if err != nil {
			return o, err
		}
		p99, err := dur("latency-p99", f.P99)
		if err != nil {
			return o, err
		}
		o.Latency.Percentiles = map[float64]time.Duration{0.5: p50, 0.99: p99}
	}
	num, found := strings.CutSuffix(strings.TrimSpace(f.ErrorRate), "%")
	v, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	if !found || err != nil || !(v >= 0 && v <= 100) {
		return o, fmt.Errorf("--error-rate %q: want a percentage such as \"1%%\"", f.ErrorRate)
	}
	o.ErrorRate = v / 100
	if f.LimitRPS > 0 {
		o.RateLimit = &RateLimit{Per: f.LimitPer, RPS: f.LimitRPS}
	}
	return o, nil
}
