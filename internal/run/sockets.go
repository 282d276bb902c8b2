package run

import (
	"context"
	"fmt"
	"runtime/debug"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/scenario"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// sockets turns the run's cumulative socket counts into per-step figures.
type sockets struct {
	last scenario.SocketTotals
}

func (k *sockets) step(set *scenario.Set, wanted int) *results.Sockets {
	t, ok := set.SocketTotals()
	if !ok {
		return nil
	}
	f := &results.Sockets{
		Wanted: int64(wanted), Open: t.Open, Opened: t.Opened - k.last.Opened, Failed: t.Failed - k.last.Failed,
		Dropped: t.Dropped - k.last.Dropped, UnknownAcks: t.UnknownAcks - k.last.UnknownAcks,
		ConnectMS: t.Connect,
	}
	k.last = t
	return f
}

// openSockets opens the plan's held websocket sockets before the first step.
// Opening thousands of sockets leaves handshake garbage; collecting often
// while they open, and returning the memory afterwards, keeps ceiling's own
// footprint (which an idle soak is often about) close to what the sockets
// hold.
func openSockets(ctx context.Context, set *scenario.Set, p *plan.Plan, d transport.SocketDialer) error {
	if !hasWebSocket(p) {
		return nil
	}
	old := debug.SetGCPercent(20)
	err := set.OpenSockets(ctx, d, 50)
	debug.SetGCPercent(old)
	debug.FreeOSMemory()
	return err
}

// heldSockets counts the sockets the open model holds for the whole run.
func heldSockets(p *plan.Plan) int {
	if p.Load.Model == plan.Closed {
		return 0
	}
	n := 0
	for i := range p.Scenarios {
		if ws := p.Scenarios[i].WebSocket; ws != nil {
			n += max(ws.Connections, 1)
		}
	}
	return n
}

func hasWebSocket(p *plan.Plan) bool {
	for i := range p.Scenarios {
		if p.Scenarios[i].WebSocket != nil {
			return true
		}
	}
	return false
}

// socketWarnings says what went wrong with a step's sockets.
func socketWarnings(f *results.Sockets) []string {
	var w []string
	if f == nil {
		return nil
	}
	if f.Dropped > 0 {
		w = append(w, fmt.Sprintf("%d sockets dropped during the step: frames in flight on them are ws_closed failures; they were reopened with backoff", f.Dropped))
	}
	if f.Failed > 0 {
		w = append(w, fmt.Sprintf("%d socket handshakes failed", f.Failed))
	}
	if f.UnknownAcks > 0 {
		w = append(w, fmt.Sprintf("%d received frames matched no frame in flight (late acks after a timeout, acks for ids never sent, or rejections the scenario's reject does not name)", f.UnknownAcks))
	}
	return w
}
