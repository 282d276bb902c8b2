package demo

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// Webhook delivery: the timings of one post and its retries.
const (
	postTimeout   = 10 * time.Second // one post, answer included
	maxRetryAfter = 5 * time.Second  // the longest a 429's Retry-After is obeyed
	// noRetryAfter is the wait after a 429 without a readable Retry-After.
	noRetryAfter = time.Second
)

// backoff is the wait before each retry after a 5xx or a transport error;
// after the last one the post counts as failed.
var backoff = [...]time.Duration{100 * time.Millisecond, 200 * time.Millisecond, 400 * time.Millisecond}

// delivery is one saved message to post to the webhook.
type delivery struct {
	site, id, text string
}

// jobs posts saved messages to the webhook: a FIFO queue of at most
// cfg.JobQueue deliveries and cfg.JobLanes lanes, each holding one
// delivery until the webhook has answered. Capacity is lanes ÷ webhook
// latency, whatever the CPU: 8 lanes and a 50 ms webhook make 160 posts a
// second.
type jobs struct {
	url    string
	queue  chan delivery
	client *http.Client
	count  *counters
	cancel context.CancelFunc
	lanes  sync.WaitGroup
}

func startJobs(cfg Config, count *counters) *jobs {
	ctx, cancel := context.WithCancel(context.Background())
	tr := &http.Transport{
		DialContext:         (&net.Dialer{Timeout: 5 * time.Second, KeepAlive: 30 * time.Second}).DialContext,
		MaxIdleConns:        cfg.JobLanes,
		MaxIdleConnsPerHost: cfg.JobLanes,
		IdleConnTimeout:     90 * time.Second,
	}
	j := &jobs{
		url:   cfg.Webhook,
		queue: make(chan delivery, cfg.JobQueue),
		client: &http.Client{Transport: tr, Timeout: postTimeout,
			CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }},
		count:  count,
		cancel: cancel,
	}
	j.lanes.Add(cfg.JobLanes)
	for range cfg.JobLanes {
		go j.lane(ctx)
	}
	return j
}

// add queues d without waiting; with the queue full, d is dropped and
// counted: a message that will never reach the webhook.
func (j *jobs) add(d delivery) {
	select {
	case j.queue <- d:
	default:
		j.count.dropped.Add(1)
	}
}

// depth returns how many deliveries wait for a lane.
func (j *jobs) depth() int { return len(j.queue) }

// close stops the lanes at once (a post in flight is cancelled; the
// backlog is abandoned) and closes the idle connections.
func (j *jobs) close() {
	j.cancel()
	j.lanes.Wait()
	j.client.CloseIdleConnections()
}

func (j *jobs) lane(ctx context.Context) {
	defer j.lanes.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case d := <-j.queue:
			j.count.inFlight.Add(1)
			j.deliver(ctx, d)
			j.count.inFlight.Add(-1)
		}
	}
}

// deliver posts d until the webhook takes it: a 429 waits for Retry-After
// (at most 5 s) and tries again, as often as it takes; a 5xx or a
// transport error is retried after each backoff and then counts as failed;
// any other answer but a 2xx fails at once. Every answered post is counted
// by result: ok, retried (another try follows) or failed.
func (j *jobs) deliver(ctx context.Context, d delivery) {
	body := payload(d)
	tries := 0
	for {
		status, retryAfter, err := j.post(ctx, body)
		if ctx.Err() != nil {
			return // closing: neither delivered nor failed
		}
		var wait time.Duration
		switch {
		case err == nil && status >= 200 && status < 300:
			j.count.postOK.Add(1)
			return
		case err == nil && status == http.StatusTooManyRequests:
			wait = retryAfter
		case (err != nil || status >= 500) && tries < len(backoff):
			wait = backoff[tries]
			tries++
		default:
			j.count.postFailed.Add(1)
			return
		}
		j.count.postRetried.Add(1)
		if !sleep(ctx, wait) {
			return
		}
	}
}

// payload is the body posted for d, in the shape of a Slack webhook.
func payload(d delivery) []byte {
	b, _ := json.Marshal(struct {
		Channel  string          `json:"channel"`
		ClientID json.RawMessage `json:"clientId"`
		Text     string          `json:"text"`
	}{"#" + d.site, json.RawMessage(d.id), d.text})
	return b
}

// post sends one POST and returns the status and, for a 429, how long it
// asks to wait (capped).
func (j *jobs) post(ctx context.Context, body []byte) (status int, retryAfter time.Duration, err error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, j.url, bytes.NewReader(body))
	if err != nil {
		return 0, 0, err
	}
	req.Header.Set("Content-Type", "application/json")
	resp, err := j.client.Do(req)
	if err != nil {
		return 0, 0, err
	}
	io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10)) // so the connection is reused
	resp.Body.Close()
	if resp.StatusCode == http.StatusTooManyRequests {
		retryAfter = parseRetryAfter(resp.Header.Get("Retry-After"), time.Now())
	}
	return resp.StatusCode, retryAfter, nil
}

// parseRetryAfter reads a Retry-After header, in seconds or as an HTTP
// date, capped at maxRetryAfter; unreadable or missing: noRetryAfter.
func parseRetryAfter(v string, now time.Time) time.Duration {
	var d time.Duration
	if n, err := strconv.ParseInt(v, 10, 64); err == nil {
		d = time.Duration(min(max(n, 0), int64(maxRetryAfter/time.Second))) * time.Second
	} else if t, err := http.ParseTime(v); err == nil {
		d = t.Sub(now)
	} else {
		return noRetryAfter
	}
	return min(max(d, 0), maxRetryAfter)
}

// sleep waits for d or until ctx is done; it reports whether it waited the
// whole time.
func sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
