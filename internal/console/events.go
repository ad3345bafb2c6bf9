package console

import (
	"bytes"
	"net/http"
	"strings"
	"time"

	"github.com/mcpbridge/mcpbridge/gateway"
)

// events streams the servers table as server-sent events: one "servers"
// event with the table's rows at once, and another each time they change,
// checked every Options.Poll. The rows are rendered by the same template
// as the page, so they are escaped the same way. The sign-in is checked
// again at every tick: a stream ends with its viewer's sign-out, or with a
// grant a reload revoked, as their next page would.
func (c *Console) events(w http.ResponseWriter, r *http.Request, si *signin) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	// The screen follows a reloaded policy at each decision.
	sees := c.screenOf(r.Context(), si)
	tick := time.NewTicker(c.opts.Poll)
	defer tick.Stop()
	last := ""
	for {
		if c.current(r) == nil {
			return
		}
		rows, err := c.rows(sees)
		if err != nil {
			c.log.Error("console: rendering the servers' rows", "error", err)
			return
		}
		if rows != last {
			last = rows
			// Each line of the data is a data: line; the browser joins
			// them with newlines.
			w.Write([]byte("event: servers\ndata: " + strings.ReplaceAll(lineEnds.Replace(rows), "\n", "\ndata: ") + "\n\n"))
			fl.Flush()
		}
		select {
		case <-r.Context().Done():
			return
		case <-c.done:
			return
		case <-tick.C:
		}
	}
}

// lineEnds makes every line end of an event's data "\n": a lone "\r"
// (from a server's error text) ends an event-stream line too, and left as
// it is would end the data early and let the rest pass as events of its
// own.
var lineEnds = strings.NewReplacer("\r\n", "\n", "\r", "\n")

// rows renders the servers table's body as sees screens it.
func (c *Console) rows(sees func(gateway.Offer, string) bool) (string, error) {
	var buf bytes.Buffer
	err := c.pages["servers"].ExecuteTemplate(&buf, "rows", c.servers(sees))
	return buf.String(), err
}
