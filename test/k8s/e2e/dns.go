package main

import (
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/dns/dnsmessage"
)

// dns answers what a cluster's DNS answers of the names ceiling uses, as
// CoreDNS does, from the API server's EndpointSlices: SERVICE.NS.svc.DOMAIN
// is every address of a headless Service's endpoints, and
// HOSTNAME.SERVICE.NS.svc.DOMAIN the one of its endpoint of that hostname
// (a pod whose subdomain is the Service). Every other name does not exist:
// nothing is forwarded anywhere.
func dns(args []string) error {
	fs := flag.NewFlagSet("dns", flag.ContinueOnError)
	listen := fs.String("listen", "", "UDP address to answer on")
	api := fs.String("api", "https://127.0.0.1:6443", "the API server")
	caFile := fs.String("ca", "", "the API server's CA (PEM)")
	tokenFile := fs.String("token-file", "", "a token that may list EndpointSlices")
	domain := fs.String("domain", "cluster.local", "the cluster's domain")
	if err := fs.Parse(args); err != nil {
		return err
	}
	ca, err := os.ReadFile(*caFile)
	if err != nil {
		return err
	}
	token, err := os.ReadFile(*tokenFile)
	if err != nil {
		return err
	}
	roots := x509.NewCertPool()
	if !roots.AppendCertsFromPEM(ca) {
		return errors.New("no certificate in " + *caFile)
	}
	z := &zone{
		api: *api, token: strings.TrimSpace(string(token)), suffix: ".svc." + strings.Trim(*domain, ".") + ".",
		client: &http.Client{Timeout: 5 * time.Second, Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: roots, MinVersion: tls.VersionTLS12}}},
	}
	conn, err := net.ListenPacket("udp", *listen)
	if err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "e2e dns: answering on %s for *%s\n", conn.LocalAddr(), z.suffix)
	buf := make([]byte, 1500)
	for {
		n, from, err := conn.ReadFrom(buf)
		if err != nil {
			return err
		}
		if out := z.answer(buf[:n]); out != nil {
			conn.WriteTo(out, from)
		}
	}
}

// zone is the names of the cluster's Services, from its EndpointSlices,
// listed again at most once a second.
type zone struct {
	api, token, suffix string
	client             *http.Client

	mu    sync.Mutex
	at    time.Time
	names map[string][]netip.Addr
}

// lookup returns the addresses of name (lower case, with its final dot),
// and whether it exists.
func (z *zone) lookup(name string) ([]netip.Addr, bool) {
	z.mu.Lock()
	defer z.mu.Unlock()
	if time.Since(z.at) > time.Second {
		names, err := z.list()
		if err != nil {
			fmt.Fprintf(os.Stderr, "e2e dns: %v\n", err)
		} else {
			z.names, z.at = names, time.Now()
		}
	}
	addrs, ok := z.names[name]
	return addrs, ok
}

// list reads every EndpointSlice of the cluster into names.
func (z *zone) list() (map[string][]netip.Addr, error) {
	req, _ := http.NewRequest(http.MethodGet, z.api+"/apis/discovery.k8s.io/v1/endpointslices", nil)
	req.Header.Set("Authorization", "Bearer "+z.token)
	resp, err := z.client.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("list endpointslices: %s", resp.Status)
	}
	var slices struct {
		Items []struct {
			Metadata struct {
				Namespace string            `json:"namespace"`
				Labels    map[string]string `json:"labels"`
			} `json:"metadata"`
			Endpoints []struct {
				Addresses  []string `json:"addresses"`
				Hostname   string   `json:"hostname"`
				Conditions struct {
					Ready *bool `json:"ready"`
				} `json:"conditions"`
			} `json:"endpoints"`
		} `json:"items"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&slices); err != nil {
		return nil, err
	}
	names := map[string][]netip.Addr{}
	for _, s := range slices.Items {
		svc := s.Metadata.Labels["kubernetes.io/service-name"]
		if svc == "" {
			continue
		}
		base := strings.ToLower(svc + "." + s.Metadata.Namespace + z.suffix)
		if _, ok := names[base]; !ok {
			names[base] = nil
		}
		for _, e := range s.Endpoints {
			if e.Conditions.Ready != nil && !*e.Conditions.Ready {
				continue
			}
			for _, a := range e.Addresses {
				ip, err := netip.ParseAddr(a)
				if err != nil {
					continue
				}
				names[base] = append(names[base], ip)
				if e.Hostname != "" {
					host := strings.ToLower(e.Hostname) + "." + base
					names[host] = append(names[host], ip)
				}
			}
		}
	}
	return names, nil
}

// answer answers one query: A records of the names it knows, no records
// of another type for them, NXDOMAIN for any other name.
func (z *zone) answer(query []byte) []byte {
	var p dnsmessage.Parser
	h, err := p.Start(query)
	if err != nil {
		return nil
	}
	q, err := p.Question()
	if err != nil {
		return nil
	}
	name := strings.ToLower(q.Name.String())
	addrs, ok := z.lookup(name)
	b := dnsmessage.NewBuilder(nil, dnsmessage.Header{ID: h.ID, Response: true, Authoritative: true, RecursionDesired: h.RecursionDesired,
		RCode: map[bool]dnsmessage.RCode{true: dnsmessage.RCodeSuccess, false: dnsmessage.RCodeNameError}[ok]})
	b.StartQuestions()
	b.Question(q)
	b.StartAnswers()
	if q.Type == dnsmessage.TypeA {
		for _, a := range addrs {
			if a.Is4() {
				b.AResource(dnsmessage.ResourceHeader{Name: q.Name, Class: dnsmessage.ClassINET, TTL: 1}, dnsmessage.AResource{A: a.As4()})
			}
		}
	}
	out, err := b.Finish()
	if err != nil {
		return nil
	}
	return out
}
