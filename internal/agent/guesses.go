package agent

import (
	"fmt"
	"net"
	"sync"
	"time"
)

// guessBurst wrong bearer tokens from one address are compared at once;
// past them, guessRate a second. A coordinator with the right token never
// meets the bound, unless it shares its address with a guesser.
const (
	guessBurst = 5
	guessRate  = 1.0
)

// maxGuessers bounds the addresses whose wrong tokens are remembered:
// past it, those whose budget has refilled are forgotten first.
const maxGuessers = 4096

// guessLogEvery bounds how often the log speaks of one address's refused
// guesses.
const guessLogEvery = time.Minute

// guesses throttles wrong bearer tokens by address (an IPv4 address, or
// an IPv6 /64, which one host may hold whole): each address has a budget
// of guessBurst wrong tokens, refilled at guessRate a second; a request
// from an address whose budget is spent is refused before its token is
// compared. It has a line for the log (never the token) when an address
// first presents a wrong token, when its budget is spent, then once a
// minute at most while it is refused.
//
// Concurrency: safe for concurrent use.
type guesses struct {
	mu sync.Mutex
	by map[string]*budget
}

// budget is one address's wrong tokens.
type budget struct {
	left    float64   // wrong tokens it may still present
	at      time.Time // when left was computed
	refused int64     // requests refused since the log last said so
	said    time.Time // when the log last spoke of it
}

// guesserOf is the key of an address: an IPv6 address by its /64.
func guesserOf(ip string) string {
	a := net.ParseIP(ip)
	if a == nil || a.To4() != nil {
		return ip
	}
	return a.Mask(net.CIDRMask(64, 128)).String() + "/64"
}

// refill brings b's budget to now.
func (b *budget) refill(now time.Time) {
	b.left = min(guessBurst, b.left+now.Sub(b.at).Seconds()*guessRate)
	b.at = now
}

// allow reports whether a request from ip may have its token compared,
// and a line for the log, "" when there is nothing to say.
func (g *guesses) allow(ip string, now time.Time) (ok bool, note string) {
	key := guesserOf(ip)
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.by[key]
	if b == nil {
		return true, ""
	}
	b.refill(now)
	if b.left >= 1 {
		return true, ""
	}
	b.refused++
	if now.Sub(b.said) >= guessLogEvery {
		note = fmt.Sprintf("refused %d requests from %s without looking at their tokens: too many wrong bearer tokens from it (%d at once, then %g a second)", b.refused, key, guessBurst, guessRate)
		b.refused, b.said = 0, now
	}
	return false, note
}

// wrong takes a wrong token from ip off its budget, and returns a line
// for the log, "" when there is nothing to say.
func (g *guesses) wrong(ip string, now time.Time) (note string) {
	key := guesserOf(ip)
	g.mu.Lock()
	defer g.mu.Unlock()
	b := g.by[key]
	if b == nil {
		if g.by == nil {
			g.by = map[string]*budget{}
		}
		if len(g.by) >= maxGuessers {
			g.forget(now)
		}
		if len(g.by) >= maxGuessers {
			return "" // every address remembered is still throttled: this one is not
		}
		b = &budget{left: guessBurst, at: now, said: now}
		g.by[key] = b
		note = fmt.Sprintf("a request from %s with a wrong bearer token: refused", key)
	}
	b.refill(now)
	b.left--
	if b.left < 1 && b.left >= 0 {
		note = fmt.Sprintf("%s presented %d wrong bearer tokens: its requests are refused until its budget refills (%g a second)", key, guessBurst, guessRate)
		b.said = now
	}
	return note
}

// forget drops the addresses whose budgets have refilled; the caller
// holds mu.
func (g *guesses) forget(now time.Time) {
	for k, b := range g.by {
		if b.refill(now); b.left >= guessBurst {
			delete(g.by, k)
		}
	}
}
