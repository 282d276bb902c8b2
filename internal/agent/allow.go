package agent

import (
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"

	"github.com/ceiling-dev/ceiling/internal/plan"
)

// Targets is an allow-list of the hosts an agent sends load to
// (--allow-targets): networks (10.0.0.0/8), addresses (10.1.2.3, ::1),
// host names (shop.example) and name suffixes (*.svc: any name that ends
// in .svc). A host name is matched as the plan writes it, never resolved:
// 10.0.0.0/8 allows http://10.1.2.3/, not a name that resolves there. The
// zero Targets allows every host.
type Targets struct {
	text     string // as given, for messages
	prefixes []netip.Prefix
	names    []string // lower case, without a trailing dot
	suffixes []string // ".svc"
}

// ParseTargets reads a comma-separated allow-list, such as
// "10.0.0.0/8,*.svc,shop.example". Every entry that is not a network, an
// address, a name or *.suffix is an error; "" gives the zero Targets.
func ParseTargets(s string) (Targets, error) {
	t := Targets{text: strings.TrimSpace(s)}
	var errs []error
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if err := t.add(e); err != nil {
			errs = append(errs, fmt.Errorf("%q: %w", e, err))
		}
	}
	if err := errors.Join(errs...); err != nil {
		return Targets{}, fmt.Errorf("--allow-targets: %w", err)
	}
	if t.Any() && t.text != "" {
		return Targets{}, fmt.Errorf("--allow-targets %q: no entry; want networks, addresses or names such as 10.0.0.0/8,*.svc", s)
	}
	return t, nil
}

// add reads one entry of the list.
func (t *Targets) add(e string) error {
	if strings.Contains(e, "/") {
		p, err := netip.ParsePrefix(e)
		if err != nil {
			return errors.New("not a network: want an address and a prefix length, such as 10.0.0.0/8")
		}
		t.prefixes = append(t.prefixes, p.Masked())
		return nil
	}
	if a, err := netip.ParseAddr(strings.Trim(e, "[]")); err == nil {
		a = a.Unmap().WithZone("")
		t.prefixes = append(t.prefixes, netip.PrefixFrom(a, a.BitLen()))
		return nil
	}
	name, wild := strings.CutPrefix(strings.ToLower(strings.TrimSuffix(e, ".")), "*.")
	if msg := nameProblem(name); msg != "" {
		return errors.New(msg)
	}
	if wild {
		t.suffixes = append(t.suffixes, "."+name)
	} else {
		t.names = append(t.names, name)
	}
	return nil
}

// nameProblem says what makes name (lower case) not a host name, or "".
func nameProblem(name string) string {
	if name == "" || strings.HasPrefix(name, ".") || strings.Contains(name, "..") {
		return "want a network, an address, a host name or *.suffix (a port is not part of it)"
	}
	for _, r := range name {
		if !('a' <= r && r <= 'z' || '0' <= r && r <= '9' || r == '-' || r == '.' || r == '_') {
			return fmt.Sprintf("%q in a host name: want a network, an address, a host name or *.suffix (a port is not part of it)", r)
		}
	}
	if numeric(name) {
		return "a name whose last label is a number is an address written otherwise: write the address"
	}
	return ""
}

// numeric reports whether a host name's last label is a number (decimal
// or 0x hex): no top-level domain is, and some resolvers read such a
// name as an IPv4 address (2130706433, 0x7f.1 are 127.0.0.1 to them).
func numeric(name string) bool {
	last := name[strings.LastIndex(name, ".")+1:]
	if h, ok := strings.CutPrefix(last, "0x"); ok {
		return strings.Trim(h, "0123456789abcdef") == ""
	}
	return last != "" && strings.Trim(last, "0123456789") == ""
}

// Any reports whether t allows every host (no list was given).
func (t Targets) Any() bool {
	return len(t.prefixes) == 0 && len(t.names) == 0 && len(t.suffixes) == 0
}

// String returns the list as given.
func (t Targets) String() string { return t.text }

// Allows reports whether the list allows host (a URL's host, without port
// or brackets).
func (t Targets) Allows(host string) bool {
	if t.Any() {
		return true
	}
	host = strings.ToLower(strings.TrimSuffix(host, "."))
	if a, err := netip.ParseAddr(host); err == nil {
		a = a.Unmap().WithZone("")
		for _, p := range t.prefixes {
			if p.Contains(a) {
				return true
			}
		}
		return false
	}
	if nameProblem(host) != "" {
		return false
	}
	for _, n := range t.names {
		if host == n {
			return true
		}
	}
	for _, s := range t.suffixes {
		if strings.HasSuffix(host, s) {
			return true
		}
	}
	return false
}

// refuse returns what of p the list refuses, every problem at once: a
// URL whose host it does not allow, a URL whose host is a template (not
// known until the run), and redirects followed (they may lead anywhere).
func (t Targets) refuse(p *plan.Plan) error {
	if t.Any() {
		return nil
	}
	var errs []error
	for _, d := range p.Destinations() {
		host, ok := fixedHost(d.Resolved)
		switch {
		case !ok:
			errs = append(errs, fmt.Errorf("%s: %q: its host is a template or cannot be read, known only as the run goes: this agent sends load only to its --allow-targets %s, and cannot check it", d.Path, d.URL, t))
		case !t.Allows(host):
			errs = append(errs, fmt.Errorf("%s: %s is outside this agent's --allow-targets %s", d.Path, host, t))
		}
	}
	if p.HTTP.FollowRedirects {
		errs = append(errs, fmt.Errorf("http.follow_redirects: a redirect may lead outside this agent's --allow-targets %s, and the agent cannot check it before following it", t))
	}
	if err := errors.Join(errs...); err != nil {
		return fmt.Errorf("the plan sends where this agent does not: %w", err)
	}
	return nil
}

// fixedHost returns the host an absolute URL sends to; false when it has
// none, or when a template action comes before its host's end (in its
// scheme too: a scheme rendered as "http://elsewhere/?" moves the host).
func fixedHost(raw string) (string, bool) {
	scheme, rest, ok := strings.Cut(raw, "://")
	if !ok {
		return "", false
	}
	end := strings.IndexAny(rest, "/?#")
	if end < 0 {
		end = len(rest)
	}
	if strings.Contains(scheme, "{{") || strings.Contains(rest[:end], "{{") {
		return "", false
	}
	u, err := url.Parse(scheme + "://" + rest[:end])
	if err != nil || u.Hostname() == "" {
		return "", false
	}
	return u.Hostname(), true
}

// exposed says, for an agent that listens on addr without TLS, what its
// log should warn of when addr is beyond loopback; "" when it is not.
func exposed(addr net.Addr, tls bool) string {
	tcp, ok := addr.(*net.TCPAddr)
	if tls || ok && tcp.IP.IsLoopback() {
		return ""
	}
	return fmt.Sprintf("warning: listening on %s, beyond loopback, without TLS: the token and the plans cross the network in clear; serve with --tls-cert and --tls-key, or keep the agent on a private network", addr)
}
