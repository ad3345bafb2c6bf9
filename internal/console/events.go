package console

import (
	"bytes"
	"net/http"
	"strings"
	"time"
)

// events streams the servers table as server-sent events: one "servers"
// event with the table's rows at once, and another each time they change,
// checked every Options.Poll. The rows are rendered by the same template
// as the page, so they are escaped the same way.
func (c *Console) events(w http.ResponseWriter, r *http.Request, _ *signin) {
	fl, ok := w.(http.Flusher)
	if !ok {
		http.Error(w, "streaming unsupported", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/event-stream")
	tick := time.NewTicker(c.opts.Poll)
	defer tick.Stop()
	last := ""
	for {
		rows, err := c.rows()
		if err != nil {
			c.log.Error("console: rendering the servers' rows", "error", err)
			return
		}
		if rows != last {
			last = rows
			// Each line of the data is a data: line; the browser joins
			// them with newlines.
			w.Write([]byte("event: servers\ndata: " + strings.ReplaceAll(rows, "\n", "\ndata: ") + "\n\n"))
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

// rows renders the servers table's body.
func (c *Console) rows() (string, error) {
	var buf bytes.Buffer
	err := c.pages["servers"].ExecuteTemplate(&buf, "rows", c.servers())
	return buf.String(), err
}
