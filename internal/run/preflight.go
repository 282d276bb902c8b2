package run

import (
	"fmt"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/plan"
	"github.com/ceiling-dev/ceiling/internal/scenario"
	"github.com/ceiling-dev/ceiling/internal/secret"
	"github.com/ceiling-dev/ceiling/internal/transport"
)

// preflight sends the run's first request once before the first step: a
// target that cannot be reached at all is ErrUnreachable, not a table of
// errors.
func preflight(ex transport.Exchanger, set *scenario.Set, p *plan.Plan) error {
	sess := ex.Session()
	defer sess.Close()
	out, err := set.Preflight(sess)
	if err != nil {
		return badInput("preflight: %w", err)
	}
	if out.Kind.Responded() {
		return nil
	}
	hint := map[transport.Kind]string{
		transport.Refused: " (nothing is listening there)",
		transport.Timeout: " (no answer within the timeout)",
		transport.TLS:     " (use --insecure for a self-signed certificate)",
	}[out.Kind]
	return fmt.Errorf("%w: %s: %s%s", ErrUnreachable, Describe(p), out.Kind, hint)
}

// Describe names what a plan sends: the request of a one-request plan, or
// its scenarios; URLs with their secrets redacted.
func Describe(p *plan.Plan) string {
	if len(p.Scenarios) == 1 {
		switch sc := &p.Scenarios[0]; {
		case sc.WebSocket != nil:
			return fmt.Sprintf("websocket %s over %d sockets", secret.URL(p.WebSocketURL(sc.WebSocket)), max(sc.WebSocket.Connections, 1))
		case len(sc.Steps) == 0:
			return sc.Request.Method + " " + secret.URL(p.URL(sc))
		}
	}
	names := make([]string, len(p.Scenarios))
	for i := range p.Scenarios {
		names[i] = p.Scenarios[i].Name
	}
	return fmt.Sprintf("%d scenarios (%s) against %s", len(names), strings.Join(names, ", "), secret.URL(p.Target))
}
