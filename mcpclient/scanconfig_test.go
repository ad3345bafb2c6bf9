package mcpclient_test

import (
	"testing"

	"github.com/mcpbridge/mcpbridge/mcpclient"
)

func TestDecodeConfigScan(t *testing.T) {
	const ok = "serverName: srv\ntransport: stdio\ncommand: echo\n"
	for _, c := range []struct {
		src  string
		want mcpclient.ScanMode
		err  string
	}{
		{src: ok, want: ""},
		{src: ok + "scan: warn", want: mcpclient.ScanWarn},
		{src: ok + "scan: hold", want: mcpclient.ScanHold},
		{src: ok + "scan: off", want: mcpclient.ScanOff},
		{src: ok + "scan: block", err: `4:7: config.scan: must be "warn", "hold" or "off", got "block"`},
		{src: ok + "scan: [hold]", err: `4:7: config.scan: must be a string, got a list`},
	} {
		got, err := decodeYAML(t, c.src)
		if err != c.err || err == "" && got.Scan != c.want {
			t.Errorf("%q: scan %q, error %q; want %q, error %q", c.src, got.Scan, err, c.want, c.err)
		}
	}
	if err := (mcpclient.Config{ServerName: "srv", Transport: mcpclient.TransportStdio, Command: "echo", Scan: "never"}).Validate(); err == nil || err.Error() != `scan: must be "warn", "hold" or "off", got "never"` {
		t.Errorf("Validate: %v", err)
	}
}
