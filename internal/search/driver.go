package search

import "context"

// Step is what a Runner reports of one level.
type Step struct {
	// Pass is whether the step met the SLO.
	Pass bool
	// GeneratorLimited is true when the generator could not drive the
	// level; the search stops there.
	GeneratorLimited bool
}

// Runner runs one step at a level.
type Runner interface {
	// Run runs a step at level; confirm marks a re-run of a candidate edge.
	// An error (an interrupt, an unwritable result) stops the search.
	Run(ctx context.Context, level float64, confirm bool) (Step, error)
}

// Run drives s through r until the search ends or r fails.
func Run(ctx context.Context, s *Strategy, r Runner) (Result, error) {
	for {
		level, confirm, done := s.Next()
		if done {
			return s.Result(), nil
		}
		st, err := r.Run(ctx, level, confirm)
		if err != nil {
			return s.Result(), err
		}
		if st.GeneratorLimited {
			s.probes = append(s.probes, Probe{Level: level, Pass: st.Pass, Confirm: confirm})
			s.StopGeneratorLimited()
			continue
		}
		s.Record(st.Pass)
	}
}
