package report

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/search"
)

// Demo is what `ceiling demo`'s chat backend is built as and held to.
type Demo struct {
	// Lanes is how many webhook posts the target keeps in flight at once.
	Lanes int
	// SinkLatency is how long the Slack-like sink takes to answer a post.
	SinkLatency time.Duration
	// AckP99MS is the SLO's bound on the acks' p99, in milliseconds.
	AckP99MS float64
	// DeliveredPct is the share of a step's messages that must reach the
	// sink by the step's end, in percent.
	DeliveredPct float64
}

// DemoStory says what the demo's search found broke first, in the terms of
// the target's design, from the figures of the lowest level that failed
// (as BrokeFirst chooses it): the story of the delivery lanes only when
// deliveries are what failed.
func DemoStory(r *results.Result, d Demo) string {
	if r.Search == nil || r.Search.Outcome != search.Edge.String() {
		return "No edge to explain: see the answer above."
	}
	steps, passed := judged(r)
	i := slices.Index(passed, false)
	if i < 0 {
		return "No step failed."
	}
	fail := &steps[i]
	worstAck := 0.0
	for _, s := range r.Steps {
		worstAck = max(worstAck, s.LatencyMS.P99)
	}
	del := fail.Delivery
	short := del != nil && del.AtStepEnd != nil && del.Expected > 0 && 100*float64(*del.AtStepEnd)/float64(del.Expected) < d.DeliveredPct
	behind := fail.FellBehind()
	deliveryFailed := del != nil && del.AtStepEnd != nil && (short || behind != "")
	ackFailed := fail.LatencyMS.P99 >= d.AckP99MS || fail.ErrorRate >= 0.01
	if !deliveryFailed || ackFailed {
		return fmt.Sprintf("What broke first, at %.0f/s: acks p99 %.1f ms, errors %.1f%%, not the delivery lanes; on a machine this busy the search measures the machine (see the warnings above).",
			fail.TargetRate, fail.LatencyMS.P99, 100*fail.ErrorRate)
	}
	capacity := float64(d.Lanes) / d.SinkLatency.Seconds()
	var b strings.Builder
	fmt.Fprintf(&b, "What broke first: the target posts each saved message to the Slack-like sink from %d lanes, and the sink answers after %v, so at most %d ÷ %v = %.0f messages a second can be delivered. At %.0f/s",
		d.Lanes, d.SinkLatency, d.Lanes, d.SinkLatency, capacity, fail.TargetRate)
	if del.BacklogStart != nil && del.BacklogEnd != nil && behind != "" {
		fmt.Fprintf(&b, " the backlog of undelivered messages grew from %d to %d during the step (%d of %d messages had arrived by its end)",
			*del.BacklogStart, *del.BacklogEnd, *del.AtStepEnd, del.Expected)
	} else {
		fmt.Fprintf(&b, " only %d of %d messages had arrived by the step's end", *del.AtStepEnd, del.Expected)
	}
	if fail.Target != nil {
		if m, ok := fail.Target.Metrics["demo_queue_depth"]; ok {
			fmt.Fprintf(&b, " and the job queue held up to %.0f", m.Max)
		}
	}
	b.WriteString(".")
	if worstAck < d.AckP99MS {
		fmt.Fprintf(&b, " The acks never were the limit (worst p99 %.1f ms): saving a message is cheap, posting it is not.", worstAck)
	}
	return b.String()
}
