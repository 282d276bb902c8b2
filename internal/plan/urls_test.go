package plan

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestDestinations(t *testing.T) {
	p, err := Parse("plan.yaml", []byte(`target: http://shop.svc:8080
load: {rates: [10], step: 1s}
login:
  - request: {method: POST, url: /login}
scenarios:
  - request: {url: /items}
  - name: flow
    steps:
      - request: {url: 'http://auth.svc/token'}
      - request: {url: '/orders/{{uuid}}'}
  - name: widget
    websocket: {url: /ws, send: x, ack: {json: id}}
monitor:
  pid: 1
  prometheus: {url: 'http://metrics.svc/metrics', metrics: [up]}
`))
	if err != nil {
		t.Fatal(err)
	}
	want := []Destination{
		{"target", "http://shop.svc:8080", "http://shop.svc:8080"},
		{"scenarios[0].request.url", "/items", "http://shop.svc:8080/items"},
		{"scenarios[1].steps[0].request.url", "http://auth.svc/token", "http://auth.svc/token"},
		{"scenarios[1].steps[1].request.url", "/orders/{{uuid}}", "http://shop.svc:8080/orders/{{uuid}}"},
		{"scenarios[2].websocket.url", "/ws", "ws://shop.svc:8080/ws"},
		{"login[0].request.url", "/login", "http://shop.svc:8080/login"},
		{"monitor.prometheus.url", "http://metrics.svc/metrics", "http://metrics.svc/metrics"},
	}
	if diff := cmp.Diff(want, p.Destinations()); diff != "" {
		t.Errorf("Destinations() (-want +got):\n%s", diff)
	}
}
