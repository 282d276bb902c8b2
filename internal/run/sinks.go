package run

import (
	"context"
	"fmt"
	"time"

	"github.com/ceiling-dev/ceiling/internal/delivery"
	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/sink"
)

// sinks are the plan's mock outside services and the ledger that matches
// what the run expected with what arrived.
type sinks struct {
	list   []*sink.Sink
	ledger *delivery.Ledger
	drain  time.Duration // the longest drain of the sinks
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

// stepFigures returns a step's delivery so far.
func (s *sinks) stepFigures(step int) *results.Delivery {
	s.ledger.Poll()
	return figures(s.ledger.Step(step))
}

func figures(f delivery.Figures) *results.Delivery {
	d := &results.Delivery{
		Expected: f.Expected, Delivered: f.Delivered, Lost: f.Lost, Undelivered: f.Undelivered, Duplicates: f.Duplicates,
		Rejected: f.Rejected, LostIDs: f.LostIDs, LatencyMS: f.Latency, Missed: f.Missed,
	}
	if d.LostIDs == nil {
		d.LostIDs = []string{}
	}
	return d
}

// settle waits for late deliveries after the load (up to the sinks' drain)
// and fills the final delivery figures of every step and of the run.
func (s *sinks) settle(ctx context.Context, res *results.Result, stop, base time.Time) {
	drained, complete := s.ledger.Drain(ctx, stop, s.drain, delivery.QuietFor(s.drain))
	for i := range res.Steps {
		f := figures(s.ledger.Step(res.Steps[i].Index))
		if old := res.Steps[i].Delivery; old != nil {
			f.AtStepEnd = old.AtStepEnd
		}
		res.Steps[i].Delivery = f
	}
	res.Delivery = figures(s.ledger.Step(-1))
	res.Delivery.DrainS = drained.Seconds()
	res.Delivery.DrainComplete = &complete
	if m := res.Delivery.Missed; m > 0 {
		res.Warnings = append(res.Warnings, fmt.Sprintf("the sinks recorded %d arrivals they could not keep for matching (their bounds, docs/mock.md): every delivery figure is incomplete", m))
	}
	for _, p := range s.ledger.Series(base, time.Now()) {
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
