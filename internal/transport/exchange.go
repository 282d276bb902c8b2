package transport

// Request is one HTTP request as the plan describes it. It is immutable once
// built: sessions may cache a wire form keyed by its pointer.
type Request struct {
	// Method is the HTTP method, e.g. "GET".
	Method string
	// URL is the absolute URL.
	URL string
	// Header holds the request headers in order, as name/value pairs.
	Header [][2]string
	// Body is the request body; nil sends none.
	Body []byte
	// Expect lists the statuses that count as OK; empty means any 2xx.
	Expect []int
	// Limited lists the statuses counted as limited rather than failed.
	Limited []int
}

// Outcome is what one exchange produced. Sessions fill it in place so that
// recording an exchange allocates nothing.
type Outcome struct {
	// Kind classifies the outcome.
	Kind Kind
	// Status is the HTTP status, or 0 when no response arrived.
	Status int
	// BytesIn counts the response body bytes read.
	BytesIn int64
	// BytesOut counts the request body bytes sent.
	BytesOut int64
}

// Session performs exchanges for one worker or virtual user. It keeps that
// user's scratch buffers (and, later, its cookies); it is not safe for
// concurrent use.
type Session interface {
	// Do performs req and fills out. It never returns a Go error: failures
	// are classified into out.Kind.
	Do(req *Request, out *Outcome)
	// Close releases the session's connections.
	Close()
}

// Exchanger creates sessions that share one connection pool. It is safe for
// concurrent use.
type Exchanger interface {
	// Session returns a new session.
	Session() Session
	// Close releases every connection, including those of open sessions.
	Close()
}
