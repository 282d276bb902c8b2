package search

import (
	"fmt"
	"math"
)

// Config shapes a search.
type Config struct {
	// Start is the first level tried. Must be > 0.
	Start float64
	// Max caps the levels tried; zero means no cap.
	Max float64
	// Precision is the relative width, (fail − pass) ÷ fail, at which the
	// narrowing stops: 0.05 finds the edge to within 5 %. Zero: 0.05.
	Precision float64
	// Factor multiplies the level while every step passes. Zero: 2.
	Factor float64
	// Integer rounds levels to whole numbers (users).
	Integer bool
	// MaxSteps bounds the steps of a search. Zero: 40.
	MaxSteps int
}

func (c Config) withDefaults() Config {
	if c.Precision <= 0 {
		c.Precision = 0.05
	}
	if c.Factor <= 1 {
		c.Factor = 2
	}
	if c.MaxSteps <= 0 {
		c.MaxSteps = 40
	}
	return c
}

// Probe is one step the search ran.
type Probe struct {
	// Level is the rate or number of users.
	Level float64
	// Pass is whether the step met the SLO.
	Pass bool
	// Confirm marks the re-run of a candidate edge.
	Confirm bool
}

// Outcome is how a search ended.
type Outcome int

// The outcomes of a search.
const (
	// Edge: the edge was found and confirmed.
	Edge Outcome = iota
	// StartFails: even the first level failed.
	StartFails
	// NoFailure: every level up to Max passed; the edge is above Max.
	NoFailure
	// Exhausted: MaxSteps ran out before the edge was confirmed.
	Exhausted
	// GeneratorLimited: the generator could not drive a level.
	GeneratorLimited
	// Unfinished: the search was stopped (interrupted) before it ended.
	Unfinished
)

// String names the outcome as result.json does.
func (o Outcome) String() string {
	switch o {
	case Edge:
		return "edge"
	case StartFails:
		return "start_fails"
	case NoFailure:
		return "no_failure"
	case Exhausted:
		return "exhausted"
	case GeneratorLimited:
		return "generator_limited"
	case Unfinished:
		return "unfinished"
	}
	return "unknown"
}

// Strategy proposes levels.
type Strategy struct {
	cfg    Config
	probes []Probe
	pass   float64 // highest level that passed when last run; 0: none
	fail   float64 // lowest level that failed; 0: none yet
	next   float64
	verify bool
	done   bool
	out    Outcome
}

// New returns a strategy whose first level is cfg.Start.
func New(cfg Config) (*Strategy, error) {
	cfg = cfg.withDefaults()
	if !(cfg.Start > 0) || math.IsInf(cfg.Start, 0) || (cfg.Max > 0 && cfg.Max < cfg.Start) {
		return nil, fmt.Errorf("search: want 0 < start ≤ max, got start %g, max %g", cfg.Start, cfg.Max)
	}
	if cfg.Integer {
		cfg.Start = cfg.round(cfg.Start)
	}
	return &Strategy{cfg: cfg, next: cfg.Start}, nil
}

// round makes a computed level readable: whole users, or a rate to three
// significant digits (565.685… becomes 566). The start is used as given.
func (c Config) round(v float64) float64 {
	if c.Integer {
		return math.Max(1, math.Round(v))
	}
	if v <= 0 {
		return v
	}
	scale := math.Pow(10, 2-math.Floor(math.Log10(v)))
	return math.Round(v*scale) / scale
}

// Next returns the level to run next and whether it confirms a candidate
// edge; done is true when the search is over.
func (s *Strategy) Next() (level float64, confirm bool, done bool) {
	if s.done {
		return 0, false, true
	}
	return s.next, s.verify, false
}

// Record notes the verdict of the level Next proposed.
func (s *Strategy) Record(pass bool) {
	lvl := s.next
	s.probes = append(s.probes, Probe{Level: lvl, Pass: pass, Confirm: s.verify})
	switch {
	case pass:
		s.pass = math.Max(s.pass, lvl)
	case s.fail == 0 || lvl < s.fail:
		s.fail = lvl
		if s.pass >= lvl {
			s.pass = s.highestPassBelow(lvl)
		}
	}
	wasConfirm := s.verify
	s.verify = false
	switch {
	case len(s.probes) >= s.cfg.MaxSteps:
		s.finish(Exhausted)
	case s.pass == 0 && s.fail > 0 && s.fail <= s.cfg.Start:
		s.finish(StartFails)
	case s.fail == 0:
		s.raise()
	case s.pass == 0:
		s.next = s.cfg.Start // every pass below the failure was overturned: start again

	case wasConfirm && pass:
		s.finish(Edge)
	case s.narrow():
		s.next, s.verify = s.pass, true
	default:
		mid := s.cfg.round(math.Sqrt(s.pass * s.fail))
		if mid <= s.pass || mid >= s.fail {
			s.next, s.verify = s.pass, true // rounding left nothing between them
			return
		}
		s.next = mid
	}
}

// raise multiplies the level, or ends the search at Max.
func (s *Strategy) raise() {
	if s.cfg.Max > 0 && s.pass >= s.cfg.Max {
		s.finish(NoFailure)
		return
	}
	n := s.cfg.round(s.pass * s.cfg.Factor)
	if s.cfg.Max > 0 {
		n = math.Min(n, s.cfg.Max)
	}
	s.next = n
}

// narrow reports whether pass and fail are within the precision (or, for
// whole numbers, adjacent).
func (s *Strategy) narrow() bool {
	if s.pass == 0 {
		return false
	}
	if s.cfg.Integer && s.fail-s.pass <= 1 {
		return true
	}
	return (s.fail-s.pass)/s.fail <= s.cfg.Precision
}

// highestPassBelow is the highest level below lvl that passed when last
// run, or 0.
func (s *Strategy) highestPassBelow(lvl float64) float64 {
	last := map[float64]bool{}
	for _, p := range s.probes {
		last[p.Level] = p.Pass
	}
	best := 0.0
	for l, ok := range last {
		if ok && l < lvl && l > best {
			best = l
		}
	}
	return best
}

func (s *Strategy) finish(o Outcome) {
	s.done, s.out = true, o
}

// StopGeneratorLimited ends the search: the last level could not be driven.
func (s *Strategy) StopGeneratorLimited() { s.finish(GeneratorLimited) }

// Result is what the search found.
type Result struct {
	// Outcome says how it ended.
	Outcome Outcome
	// Edge is the highest level that passed (when last run); 0 if none.
	Edge float64
	// FirstFail is the lowest level that failed; 0 if none did.
	FirstFail float64
	// Probes lists every step in the order run.
	Probes []Probe
}

// Result returns the search's findings so far.
func (s *Strategy) Result() Result {
	out := s.out
	if !s.done {
		out = Unfinished
	}
	return Result{Outcome: out, Edge: s.pass, FirstFail: s.fail, Probes: s.probes}
}
