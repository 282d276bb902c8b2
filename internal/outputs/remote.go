package outputs

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"sync"
	"time"

	"github.com/klauspost/compress/snappy"
	"google.golang.org/protobuf/encoding/protowire"

	"github.com/ceiling-dev/ceiling/internal/results"
	"github.com/ceiling-dev/ceiling/internal/run"
	"github.com/ceiling-dev/ceiling/internal/secret"
)

// Remote write tuning: a batch is one second's samples.
const (
	// queueBatches bounds what waits while the backend is slow or down:
	// two minutes of seconds. Past it the oldest batch is dropped.
	queueBatches = 120
	// pushTimeout bounds one POST.
	pushTimeout = 5 * time.Second
	// drainTimeout bounds sending what is queued when the run ends.
	drainTimeout = 5 * time.Second
	// maxBackoff bounds the wait between retries of a batch.
	maxBackoff = 4 * time.Second
)

// remote pushes batches to a Prometheus remote-write receiver (protocol
// 1.0: a snappy-compressed protobuf WriteRequest) from a goroutine of its
// own, so that a slow or dead backend never slows the load: batches wait
// in a bounded queue, a failed one is retried with a growing pause, and
// what does not fit or is refused is counted and reported.
type remote struct {
	url    string
	client *http.Client
	// drain bounds close's wait for the queue: drainTimeout (a test sets
	// it before the run).
	drain time.Duration

	mu       sync.Mutex
	queue    [][]byte
	wake     chan struct{}
	closing  bool
	sent     int
	dropped  int // batches pushed out of a full queue, or left when the run ended
	refused  int // batches the backend answered 4xx (other than 429)
	lastErr  string
	finished chan struct{}
	ctx      context.Context
	cancel   context.CancelFunc
}

func newRemote(url string) *remote {
	ctx, cancel := context.WithCancel(context.Background())
	// A redirect is not followed: Go's client would repeat a 302's POST as a
	// GET without its body, which a server can answer 200 to, and the
	// samples would count as stored. It is the status it is: an error.
	client := &http.Client{Timeout: pushTimeout, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	r := &remote{url: url, client: client, drain: drainTimeout, wake: make(chan struct{}, 1),
		finished: make(chan struct{}), ctx: ctx, cancel: cancel}
	go r.run()
	return r
}

func (r *remote) second(_ *run.Second, samples []sample) { r.push(samples) }

func (r *remote) step(_ string, _ *results.Step, samples []sample) { r.push(samples) }

// push queues one batch; it never blocks.
func (r *remote) push(samples []sample) {
	if len(samples) == 0 {
		return
	}
	body := snappy.Encode(nil, encodeWriteRequest(samples))
	r.mu.Lock()
	if len(r.queue) == queueBatches {
		r.queue = r.queue[1:]
		r.dropped++
	}
	r.queue = append(r.queue, body)
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
}

// run sends the queue in order, one batch at a time.
func (r *remote) run() {
	defer close(r.finished)
	backoff := 250 * time.Millisecond
	for {
		r.mu.Lock()
		if len(r.queue) == 0 {
			closing := r.closing
			r.mu.Unlock()
			if closing {
				return
			}
			select {
			case <-r.wake:
			case <-r.ctx.Done():
				return
			}
			continue
		}
		body := r.queue[0]
		r.mu.Unlock()
		retry, err := r.post(body)
		r.mu.Lock()
		switch {
		case err == nil:
			r.queue, r.sent, backoff = r.queue[1:], r.sent+1, 250*time.Millisecond
		case !retry:
			r.queue, r.refused, r.lastErr = r.queue[1:], r.refused+1, errText(err)
		default:
			r.lastErr = errText(err)
		}
		r.mu.Unlock()
		if err != nil && retry {
			select {
			case <-time.After(backoff):
			case <-r.ctx.Done():
				return
			}
			backoff = min(2*backoff, maxBackoff)
		}
	}
}

// post sends one batch. retry says whether a failure may pass (the
// network, a 5xx, a 429).
func (r *remote) post(body []byte) (retry bool, err error) {
	req, err := http.NewRequestWithContext(r.ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return false, err
	}
	req.Header.Set("Content-Encoding", "snappy")
	req.Header.Set("Content-Type", "application/x-protobuf")
	req.Header.Set("X-Prometheus-Remote-Write-Version", "0.1.0")
	req.Header.Set("User-Agent", "ceiling")
	resp, err := r.client.Do(req)
	if err != nil {
		return true, err
	}
	defer resp.Body.Close()
	msg, _ := io.ReadAll(io.LimitReader(resp.Body, 512))
	switch {
	case resp.StatusCode/100 == 2:
		return false, nil
	case resp.StatusCode/100 == 5 || resp.StatusCode == http.StatusTooManyRequests:
		return true, fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
	}
	return false, fmt.Errorf("status %d: %s", resp.StatusCode, bytes.TrimSpace(msg))
}

// errText is a push's error without its URL, which may carry a token in
// its query (http.Client's errors name it).
func errText(err error) string {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Op + ": " + ue.Err.Error()
	}
	return err.Error()
}

// close gives the queue its drain time (drainTimeout) to go out, then
// counts what is left as dropped and says what was lost.
func (r *remote) close() []string {
	r.mu.Lock()
	r.closing = true
	r.mu.Unlock()
	select {
	case r.wake <- struct{}{}:
	default:
	}
	select {
	case <-r.finished:
	case <-time.After(r.drain):
		r.cancel()
		<-r.finished
	}
	r.cancel()
	r.mu.Lock()
	defer r.mu.Unlock()
	r.dropped += len(r.queue)
	r.queue = nil
	if r.dropped == 0 && r.refused == 0 {
		return nil
	}
	return []string{fmt.Sprintf("prometheus remote write to %s: %d of %d one-second batches were not stored (%d dropped while the backend was unreachable or slow, %d refused); last error: %s; the load and result.json are not affected",
		secret.URL(r.url), r.dropped+r.refused, r.dropped+r.refused+r.sent, r.dropped, r.refused, r.lastErr)}
}

// encodeWriteRequest encodes samples as a remote-write 1.0 WriteRequest:
// one TimeSeries (labels sorted by name, then one sample) per sample.
func encodeWriteRequest(samples []sample) []byte {
	var out, ts []byte
	for i := range samples {
		s := &samples[i]
		ts = ts[:0]
		named := false // labels go sorted by name, __name__ among them
		for _, l := range s.labels {
			if !named && l.name > "__name__" {
				ts, named = appendLabel(ts, "__name__", s.name), true
			}
			ts = appendLabel(ts, l.name, l.value)
		}
		if !named {
			ts = appendLabel(ts, "__name__", s.name)
		}
		var smp []byte
		smp = protowire.AppendTag(smp, 1, protowire.Fixed64Type)
		smp = protowire.AppendFixed64(smp, math.Float64bits(s.value))
		smp = protowire.AppendTag(smp, 2, protowire.VarintType)
		smp = protowire.AppendVarint(smp, uint64(s.at.UnixMilli()))
		ts = protowire.AppendTag(ts, 2, protowire.BytesType)
		ts = protowire.AppendBytes(ts, smp)
		out = protowire.AppendTag(out, 1, protowire.BytesType)
		out = protowire.AppendBytes(out, ts)
	}
	return out
}

// appendLabel appends a TimeSeries' Label field (1) to b.
func appendLabel(b []byte, name, value string) []byte {
	var l []byte
	l = protowire.AppendTag(l, 1, protowire.BytesType)
	l = protowire.AppendString(l, name)
	l = protowire.AppendTag(l, 2, protowire.BytesType)
	l = protowire.AppendString(l, value)
	b = protowire.AppendTag(b, 1, protowire.BytesType)
	return protowire.AppendBytes(b, l)
}
