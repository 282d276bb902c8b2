package results

import "time"

// Progress is how a step stands while it runs, as the outputs that follow
// a run take it (the live line, the live page): the step so far, or, Done,
// a finished step's final figures (Step.Progress).
type Progress struct {
	// Index is the step's position in the run, from 0.
	Index int
	// Rate is the open model's target rate per second (a ramp's mean);
	// VUs the closed model's number of users.
	Rate float64
	VUs  int
	// Warmup and Length are the step's planned warm-up and counted window.
	Warmup, Length time.Duration
	// Elapsed is the time since the step began, warm-up included; for a
	// step that is Done, the length of the window it counted.
	Elapsed time.Duration
	// Warming is true during the warm-up.
	Warming bool
	// Done marks the step's final figures.
	Done bool
	// Achieved is the achieved rate so far, per second; P50 and P99 the
	// response times so far, in milliseconds; ErrorRate the share of
	// completed exchanges that failed.
	Achieved, P50, P99, ErrorRate float64
	// Completed counts the exchanges completed so far: with none, there is
	// no latency to show (nor a rate, if none was achieved either).
	Completed int64
	// Delivery is how the step's deliveries stand, nil when the plan has
	// no sinks.
	Delivery *DeliveryNow
}

// DeliveryNow is how a step's deliveries stand while it runs.
type DeliveryNow struct {
	// Expected counts the step's accepted ids so far, Delivered those of
	// them that reached a sink (for a finished step: by its end).
	Expected, Delivered int64
	// Backlog counts every accepted id not delivered yet, earlier steps'
	// and warm-ups' included: the queue behind the target.
	Backlog int64
}

// Draining is how the wait for late deliveries after the load stands.
type Draining struct {
	// Elapsed is the time since the load stopped; Timeout the longest the
	// wait lasts.
	Elapsed, Timeout time.Duration
	// Missing counts the accepted ids not delivered yet.
	Missing int64
	// Arrived counts the ids first delivered since the last Draining.
	Arrived int64
	// Done marks the end of the wait; Complete then says it saw every id
	// arrive or deliveries stop (the missing ones are then lost), rather
	// than running out while they were still coming.
	Done, Complete bool
}

// Progress is the finished step s as a Progress: its final figures, Done.
func (s *Step) Progress() Progress {
	p := Progress{
		Index: s.Index, Rate: s.TargetRate, VUs: s.VUs,
		Elapsed: time.Duration(s.DurationS * float64(time.Second)), Done: true,
		Achieved: s.AchievedRate, P50: s.LatencyMS.P50, P99: s.LatencyMS.P99, ErrorRate: s.ErrorRate,
		Completed: s.Completed,
	}
	if d := s.Delivery; d != nil {
		p.Delivery = &DeliveryNow{Expected: d.Expected, Delivered: d.Delivered}
		if d.AtStepEnd != nil {
			p.Delivery.Delivered = *d.AtStepEnd
		}
		if d.BacklogEnd != nil {
			p.Delivery.Backlog = *d.BacklogEnd
		}
	}
	return p
}
