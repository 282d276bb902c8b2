package httpx

import (
	"time"

	"github.com/ceiling-dev/ceiling/internal/transport"
)

// Config holds the transport settings of a run.
type Config struct {
	// Timeout bounds one whole exchange, connecting included. Must be > 0.
	Timeout time.Duration
	// HTTP2 selects HTTP/2: h2 for https URLs, h2c (prior knowledge) for http.
	HTTP2 bool
	// Insecure skips TLS certificate verification.
	Insecure bool
	// FollowRedirects follows up to MaxRedirects redirects.
	FollowRedirects bool
	// MaxConns caps HTTP/2 connections per host. Zero: 10000. (HTTP/1.1
	// sessions each hold their own connection; the executor caps sessions.)
	MaxConns int
	// MaxBodyBytes caps a response body; a longer one is a Protocol failure.
	// Zero: 16 MiB.
	MaxBodyBytes int
}

// MaxRedirects is how many redirects are followed when FollowRedirects is set.
const MaxRedirects = 10

func (c Config) withDefaults() Config {
	if c.MaxConns <= 0 {
		c.MaxConns = 10000
	}
	if c.MaxBodyBytes <= 0 {
		c.MaxBodyBytes = 16 << 20
	}
	if c.Timeout <= 0 {
		c.Timeout = 10 * time.Second
	}
	return c
}

// New returns the Exchanger the config asks for.
func New(c Config) transport.Exchanger {
	c = c.withDefaults()
	if c.HTTP2 {
		return newH2(c)
	}
	return newH1(c)
}
