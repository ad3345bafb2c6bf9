package gatewayrun

import (
	"net"
	"testing"
)

// The console tries tools through the address serve listens on; on a
// listener for every address that is 127.0.0.1, since the gateway's Host
// check refuses "0.0.0.0" and "[::]" as names of no loopback.
func TestDialableAddress(t *testing.T) {
	for _, c := range []struct {
		addr net.Addr
		want string
	}{
		{&net.TCPAddr{IP: net.IPv6unspecified, Port: 7410}, "127.0.0.1:7410"},
		{&net.TCPAddr{IP: net.IPv4zero, Port: 7410}, "127.0.0.1:7410"},
		{&net.TCPAddr{IP: net.IPv4(127, 0, 0, 1), Port: 7410}, "127.0.0.1:7410"},
		{&net.TCPAddr{IP: net.IPv6loopback, Port: 7410}, "[::1]:7410"},
		{&net.TCPAddr{IP: net.IPv4(10, 1, 2, 3), Port: 80}, "10.1.2.3:80"},
	} {
		if got := dialable(c.addr); got != c.want {
			t.Errorf("dialable(%v) = %q, want %q", c.addr, got, c.want)
		}
	}
}
