package oauth

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"
)

// A remote server's metadata names the URLs mcpgram then sends codes,
// verifiers, client secrets and tokens to. A hostile server could name
// this machine's loopback, or its private network, or the cloud's
// metadata address, and have mcpgram post there. So a sign-in reaches
// only what its server's own URL puts in reach: the internet always, and
// loopback, private or link-local addresses only when the server's own
// URL is at one of that kind; plain http only when the server is on this
// machine's loopback (for development), and then only to loopback. Each
// URL is checked when the metadata is read, and each address again as it
// is connected to (a dialer's Control hook), so that a name that answers
// otherwise the second time (DNS rebinding) is refused too. Token,
// registration and revocation requests follow no redirects.

// A kind is a kind of IP address, as a sign-in's reach tells them apart.
type kind uint8

const (
	public kind = 0
	// loopback: this machine (0.0.0.0 and :: reach it too).
	loopback kind = 1 << iota
	// private: RFC 1918, unique local IPv6, and carrier-grade NAT.
	private
	// linkLocal: 169.254.0.0/16 (cloud metadata) and fe80::/10.
	linkLocal
	// unroutable: multicast, broadcast, 0.0.0.0/8: never reached.
	unroutable
)

func (k kind) String() string {
	switch k {
	case loopback:
		return "a loopback address (this machine)"
	case private:
		return "a private network address"
	case linkLocal:
		return "a link-local address (such as a cloud's metadata service)"
	case unroutable:
		return "not an address to connect to"
	}
	return "a public address"
}

var (
	sharedNAT = netip.MustParsePrefix("100.64.0.0/10")
	thisNet   = netip.MustParsePrefix("0.0.0.0/8")
)

// kindOf is the kind of a; inet, when valid, stands for the internet in
// tests: its addresses count as public.
func kindOf(a netip.Addr, inet netip.Prefix) kind {
	a = a.Unmap()
	switch {
	case inet.IsValid() && inet.Contains(a):
		return public
	case a.IsLoopback() || a.IsUnspecified():
		return loopback
	case a.IsPrivate() || sharedNAT.Contains(a):
		return private
	case a.IsLinkLocalUnicast():
		return linkLocal
	case a.IsMulticast() || thisNet.Contains(a) || a == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return unroutable
	}
	return public
}

// A reach is where the requests of one server's sign-in may go: public
// addresses, and those of the kinds in allow, the kinds of the server's
// own addresses; plain http (to loopback) when insecure.
type reach struct {
	allow    kind
	insecure bool
}

// allows reports whether the sign-in may connect to an address of kind k.
func (r reach) allows(k kind) bool {
	return k == public || (k != unroutable && r.allow&k == k)
}

// refuse is the error for an address a of kind k out of a sign-in's reach.
func refuse(a netip.Addr, k kind) error {
	return fmt.Errorf("%s is %s, which a sign-in may reach only when the MCP server's own address is one too", a, k)
}

// reachOf is the reach of the sign-in to the server at serverURL, from
// the addresses its host has now.
func (m *Manager) reachOf(ctx context.Context, serverURL string) (reach, error) {
	u, err := checkURL(serverURL)
	if err != nil {
		return reach{}, fmt.Errorf("server URL: %w", err)
	}
	addrs, err := m.lookup(ctx, u.Hostname())
	if err != nil {
		return reach{}, fmt.Errorf("server URL: %w", err)
	}
	var r reach
	for _, a := range addrs {
		r.allow |= kindOf(a, m.inet)
	}
	r.insecure = r.allow == loopback && !m.public(addrs)
	return r, nil
}

// public reports whether any of addrs is public.
func (m *Manager) public(addrs []netip.Addr) bool {
	for _, a := range addrs {
		if kindOf(a, m.inet) == public {
			return true
		}
	}
	return false
}

// lookup returns the addresses of host: itself if it is one.
func (m *Manager) lookup(ctx context.Context, host string) ([]netip.Addr, error) {
	if a, err := netip.ParseAddr(host); err == nil {
		return []netip.Addr{a}, nil
	}
	addrs, err := m.resolver.LookupNetIP(ctx, "ip", host)
	if err != nil {
		return nil, fmt.Errorf("look up %s: %w", host, err)
	}
	return addrs, nil
}

// checkField checks the URL raw, which the metadata's field names, against
// r: its scheme, and its host's addresses, literal or looked up now. With
// browser, the URL is one the person's browser opens, not mcpgram: only a
// literal address is checked, for no request of mcpgram's goes there.
func (m *Manager) checkField(ctx context.Context, r reach, field, raw string, browser bool) (*url.URL, error) {
	u, err := m.checkScheme(r, raw)
	if err == nil {
		var addrs []netip.Addr
		if a, perr := netip.ParseAddr(u.Hostname()); perr == nil {
			addrs = []netip.Addr{a}
		} else if !browser {
			addrs, err = m.lookup(ctx, u.Hostname())
		}
		for _, a := range addrs {
			if k := kindOf(a, m.inet); !r.allows(k) {
				err = refuse(a, k)
				break
			}
		}
	}
	if err != nil {
		return nil, fmt.Errorf("%s %q: %w", field, raw, err)
	}
	return u, nil
}

// checkScheme parses the absolute URL raw and checks its scheme against r:
// https, or plain http to loopback when the server is on loopback.
func (m *Manager) checkScheme(r reach, raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	switch {
	case err != nil:
		return nil, err
	case u.Host == "":
		return nil, errors.New("not an absolute URL")
	case u.Scheme == "https":
		return u, nil
	case u.Scheme != "http":
		return nil, errors.New("not an https URL")
	case !r.insecure:
		return nil, errors.New("plain http, which a sign-in takes only when the MCP server's own URL is on this machine's loopback")
	case !isLoopback(u.Hostname()):
		return nil, errInsecure
	}
	return u, nil
}

// httpFor returns the HTTP client of sign-ins of reach r: it connects
// only to addresses in r, checked as each connection is made, goes
// through no proxy (the address checked must be the one connected to),
// and follows redirects only of GET requests, each checked as the URL it
// leads to.
func (m *Manager) httpFor(r reach) *http.Client {
	m.mu.Lock()
	defer m.mu.Unlock()
	if c, ok := m.clients[r]; ok {
		return c
	}
	t := &http.Transport{TLSClientConfig: m.tls.Clone(), ForceAttemptHTTP2: true, MaxIdleConns: 10,
		IdleConnTimeout: 90 * time.Second, TLSHandshakeTimeout: 10 * time.Second}
	d := &net.Dialer{Timeout: 30 * time.Second, KeepAlive: 30 * time.Second, Resolver: m.resolver,
		ControlContext: func(_ context.Context, _, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("connect to %s: %w", address, err)
			}
			if k := kindOf(ap.Addr(), m.inet); !r.allows(k) {
				return refuse(ap.Addr(), k)
			}
			return nil
		}}
	t.DialContext = d.DialContext
	c := &http.Client{Transport: t, Timeout: m.hc.Timeout, CheckRedirect: func(req *http.Request, via []*http.Request) error {
		if via[0].Method != http.MethodGet {
			return fmt.Errorf("%s answered with a redirect, which mcpgram does not follow for a token, registration or revocation request", via[0].URL.Redacted())
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		if _, err := m.checkScheme(r, req.URL.String()); err != nil {
			return fmt.Errorf("redirect to %s: %w", req.URL.Redacted(), err)
		}
		return nil
	}}
	m.clients[r] = c
	return c
}

// isLoopback reports whether host names this machine's loopback.
func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	a, err := netip.ParseAddr(host)
	return err == nil && a.Unmap().IsLoopback()
}
