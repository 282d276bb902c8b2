package run

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/ceiling-dev/ceiling/internal/delivery"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/sink"
	"github.com/ceiling-dev/ceiling/internal/slo"
)

// sinks are the plan's mock outside services and the ledger that matches
// what the run expected with what arrived.
type sinks struct {
	list   []*sink.Sink
	ledger *delivery.Ledger
	drain  time.Duration // the longest drain of the sinks

	mu   sync.Mutex
	base delivery.Count // the step's ids counted before it began (its earlier repeats'), for the live line
}

// startSinks starts the plan's sinks; nil when it has none.
func startSinks(p *plan.Plan) (*sinks, error) {
	if len(p.Sinks) == 0 {
		return nil, nil
	}
	s := &sinks{}
	var names []string
	var srcs []delivery.Source
	for i := range p.Sinks {
		k := &p.Sinks[i]
		o := sink.Options{
			Name: k.Name, Listen: k.Listen, Status: k.Status, Body: k.Body,
			ID:      sink.IDRule{JSON: k.ID.JSON, Regex: k.ID.Regex},
			Latency: sink.Latency{Fixed: k.Latency.Fixed.Duration},
		}
		if len(k.Latency.Percentiles) > 0 {
			o.Latency.Percentiles = map[float64]time.Duration{}
			for q, d := range k.Latency.Percentiles {
				o.Latency.Percentiles[q] = d.Duration
			}
		}
		if k.ErrorRate != nil {
			o.ErrorRate = k.ErrorRate.Value / 100
		}
		if r := k.RateLimit; r != nil {
			o.RateLimit = &sink.RateLimit{Per: r.Key(), RPS: r.RPS}
		}
		started, err := sink.Start(o)
		if err != nil {
			s.close()
			return nil, fmt.Errorf("start sink %s: %w", k.Name, err)
		}
		s.list = append(s.list, started)
		names = append(names, k.Name)
		srcs = append(srcs, started)
		s.drain = max(s.drain, k.Drain.Duration)
	}
	s.ledger = delivery.New(names, srcs)
	return s, nil
}

// stepFigures returns a step's delivery so far, with the backlog at its
// window's start and end when they are given (not zero).
func (s *sinks) stepFigures(step int, start, end time.Time) *results.Delivery {
	s.ledger.Poll()
	d := figures(s.ledger.Step(step, time.Now()))
	if !start.IsZero() {
		n := results.BacklogSampleCount
		at := make([]time.Time, n)
		for i := range at {
			at[i] = start.Add(end.Sub(start) * time.Duration(i) / time.Duration(n-1))
		}
		b, wait := s.ledger.Backlog(at...)
		d.BacklogStart, d.BacklogEnd, d.BacklogSamples, d.BacklogWaitS = &b[0], &b[n-1], b, wait
	}
	return d
}

// begin notes that step is about to run: the live line counts its ids
// from here (a repeat's own, not its earlier repeats').
func (s *sinks) begin(step int) {
	c := s.ledger.Now(step)
	s.mu.Lock()
	s.base = c
	s.mu.Unlock()
}

// now is how step's delivery stands, for the live line.
func (s *sinks) now(step int) delivery.Count {
	c := s.ledger.Now(step)
	s.mu.Lock()
	defer s.mu.Unlock()
	c.Expected -= s.base.Expected
	c.Delivered -= s.base.Delivered
	return c
}

// deliveryWait is the longest bound of the terms' "<" delivery latency
// terms (delivery_p99<2s: 2s), zero without one.
func deliveryWait(terms []slo.Term) time.Duration {
	var d time.Duration
	for _, t := range terms {
		if (t.Metric == "delivery_p50" || t.Metric == "delivery_p99") && strings.HasPrefix(t.Op, "<") {
			d = max(d, time.Duration(t.Value*float64(time.Millisecond)))
		}
	}
	return d
}

func figures(f delivery.Figures) *results.Delivery {
	d := &results.Delivery{
		Expected: f.Expected, Delivered: f.Delivered, Lost: f.Lost, Undelivered: f.Undelivered, Duplicates: f.Duplicates,
		Rejected: f.Rejected, LostIDs: f.LostIDs, LatencyMS: f.Latency, LatencyUpperMS: f.Upper, Missed: f.Missed,
	}
	if d.LostIDs == nil {
		d.LostIDs = []string{}
	}
	return d
}

// settle waits for late deliveries after the load (up to the sinks' drain,
// telling each how it stands about once a second) and fills the final
// delivery figures of every step and of the run: the ids still missing
// counted at their wait until the drain's end.
func (s *sinks) settle(ctx context.Context, res *results.Result, stop, base time.Time, each func(delivery.Draining)) {
	drained, complete := s.ledger.Drain(ctx, stop, s.drain, delivery.QuietFor(s.drain), each)
	end := time.Now()
	for i := range res.Steps {
		f := figures(s.ledger.Step(res.Steps[i].Index, end))
		if old := res.Steps[i].Delivery; old != nil {
			f.AtStepEnd, f.BacklogStart, f.BacklogEnd, f.BacklogSamples, f.BacklogWaitS = old.AtStepEnd, old.BacklogStart, old.BacklogEnd, old.BacklogSamples, old.BacklogWaitS
		}
		res.Steps[i].Delivery = f
	}
	res.Delivery = figures(s.ledger.Step(-1, end))
	res.Delivery.DrainS = drained.Seconds()
	res.Delivery.DrainComplete = &complete
	if m := res.Delivery.Missed; m > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the sinks recorded %d arrivals they could not keep for matching (their bounds, docs/mock.md): every delivery figure is incomplete", m))
	}
	for _, p := range s.ledger.Series(base, end) {
		res.DeliverySeries = append(res.DeliverySeries, results.DeliveryPoint{T: p.T, Arrived: p.Arrived, Backlog: p.Backlog})
	}
}

func (s *sinks) close() {
	if s == nil {
		return
	}
	for _, k := range s.list {
		k.Close()
	}
}
