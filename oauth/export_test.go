package oauth

import "net/netip"

// NewOnTestNet is New for a test whose stand-in for the internet is the
// loopback prefix inet (such as 127.0.0.2/32): addresses there count as
// public, so that servers a test runs there are remote, while the rest
// of loopback stays this machine's.
func NewOnTestNet(opts Options, inet netip.Prefix) (*Manager, error) {
	m, err := New(opts)
	if err != nil {
		return nil, err
	}
	m.inet = inet
	return m, nil
}
