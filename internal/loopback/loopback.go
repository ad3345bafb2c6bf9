// Package loopback tells a host name that names this machine only.
package loopback

import (
	"net/netip"
	"strings"
)

// Host reports whether host names this machine only: "localhost" or a
// loopback address (an IPv6 one without its brackets). Other names are
// not resolved: one could resolve anywhere.
func Host(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip, err := netip.ParseAddr(host)
	return err == nil && ip.Unmap().IsLoopback()
}
