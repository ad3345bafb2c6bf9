package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"sync"
	"text/tabwriter"

	"github.com/mcpbridge/mcpbridge/agent"
	"github.com/mcpbridge/mcpbridge/internal/agentterm"
	"github.com/mcpbridge/mcpbridge/internal/chatapi"
	"github.com/mcpbridge/mcpbridge/internal/termio"
	"github.com/mcpbridge/mcpbridge/internal/termsafe"
	"github.com/mcpbridge/mcpbridge/tool"
	"github.com/mcpbridge/mcpbridge/toolview"
)

// interactive is the agent at a terminal: one prompt after the other,
// the answer streamed, slash commands, approvals asked. Ctrl-C cancels
// the turn in progress (its calls cancelled); a second one exits.
func (r *agentRun) interactive(ctx context.Context) error {
	defer func() { r.sayHowToGoOn(r.ended) }() // of the session at the end (/clear opens another), the terminal given back
	r.con = termio.NewConsole(r.e.Stdin, r.e.Stderr, r.keyAtPrompt)
	defer r.con.Close()
	// The first interrupt also ends ctx (main's): the session outlives it.
	base, quit := context.WithCancel(context.WithoutCancel(ctx))
	defer quit()
	ctrlC := agentterm.NewCtrlC(func() {
		fmt.Fprintln(r.e.Stderr, "\n^C cancelling the turn (Ctrl-C again to exit)")
	}, func() {
		quit()
		r.con.Interrupt() // the prompt may be waiting already
	})
	r.ctrlC = ctrlC
	defer routeInterrupts(ctrlC)()
	r.banner()
	for base.Err() == nil {
		line, err := r.con.ReadLine("› ")
		if errors.Is(err, io.EOF) || errors.Is(err, termio.ErrInterrupted) {
			fmt.Fprintln(r.e.Stderr)
			return nil
		}
		if err != nil {
			return fmt.Errorf("agent: reading the terminal: %w", err)
		}
		ctrlC.LineRead()
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "/"):
			if r.slash(line) {
				return nil
			}
		default:
			r.turn(base, ctrlC, line)
		}
	}
	// A second Ctrl-C during a turn: the person's way out, as Ctrl-C at
	// the prompt (which the line editor reads as end of input) is.
	return nil
}

// routeInterrupts hands each SIGINT to c until the returned function is
// called.
func routeInterrupts(c *agentterm.CtrlC) (stop func()) {
	intr := make(chan os.Signal, 2)
	signal.Notify(intr, os.Interrupt)
	done := make(chan struct{})
	var wg sync.WaitGroup
	wg.Go(func() {
		for {
			select {
			case <-intr:
				c.Interrupt()
			case <-done:
				return
			}
		}
	})
	return func() {
		signal.Stop(intr)
		close(done)
		wg.Wait()
	}
}

// turn runs one prompt; an interrupt cancels it, a second quits.
func (r *agentRun) turn(base context.Context, ctrlC *agentterm.CtrlC, line string) {
	r.noteNamed(line)
	ctx, cancel := context.WithCancel(base)
	defer cancel()
	ctrlC.StartTurn(cancel)
	res, err := r.ag.Run(ctx, line)
	ctrlC.EndTurn()
	r.ended = err
	r.out.Event(agent.Event{Type: agent.EventResult, Usage: &res.Usage, Total: &res.Total, Steps: res.Steps})
	switch {
	case errors.Is(err, agent.ErrMaxSteps):
		fmt.Fprintf(r.e.Stderr, "mcpbridge: stopped after %d steps (--max-steps); say \"go on\" to continue\n", res.Steps)
	case ctx.Err() != nil:
		fmt.Fprintln(r.e.Stderr, "mcpbridge: turn cancelled")
	case err != nil:
		fmt.Fprintf(r.e.Stderr, "mcpbridge: %s\n", termsafe.Text(err.Error()))
		if chatapi.ContextTooLong(err) {
			fmt.Fprintf(r.e.Stderr, "mcpbridge: /clear starts a new conversation, in a new session; %s\n", askLess)
		}
	}
}

// ctrlO expands the last tool result at the prompt (Claude Code's key
// for the full transcript).
const ctrlO = 0x0f

// keyAtPrompt is the line editor's hook for keys it does not know:
// Ctrl-O writes the last tool result whole above the line being typed,
// which stays as it was.
func (r *agentRun) keyAtPrompt(line string, pos int, key rune) (string, int, bool) {
	if key != ctrlO {
		return "", 0, false
	}
	r.con.Write([]byte(r.out.ExpandLast()))
	return line, pos, true
}

func (r *agentRun) banner() {
	all := r.catalog()
	servers := map[string]bool{}
	for _, t := range all {
		if t.Origin.Server != "" {
			servers[t.Origin.Server] = true
		}
	}
	fmt.Fprintf(r.e.Stderr, "mcpbridge agent: %s at %s, %d tools from %d servers, session %s\n",
		r.cfg.Model, r.endpoint(), len(all), len(servers), r.session.ID)
	fmt.Fprintln(r.e.Stderr, "/tools, /servers, /expand, /clear, /exit; Ctrl-O shows the last tool result whole, Ctrl-C cancels a turn, Ctrl-D exits")
}

// slash runs a slash command; true means exit.
func (r *agentRun) slash(line string) bool {
	switch strings.Fields(line)[0] {
	case "/exit", "/quit":
		return true
	case "/tools":
		r.showTools()
	case "/expand":
		fmt.Fprint(r.e.Stderr, r.out.ExpandLast())
	case "/servers":
		tw := tabwriter.NewWriter(r.e.Stderr, 0, 4, 2, ' ', 0)
		for _, st := range r.b.h.Status() {
			fmt.Fprintf(tw, "%s\t%s\t%s\n", termsafe.Line(st.Name), stateText(st.State), termsafe.Line(st.Err))
		}
		tw.Flush()
	case "/clear":
		// The conversation is cleared only once its new session is open:
		// else the next messages would be saved after the old ones.
		if s, err := agentNewSession(r); err == nil {
			r.ag.Clear()
			r.session.Close()
			r.session = s
			fmt.Fprintf(r.e.Stderr, "new conversation, session %s\n", s.ID)
		} else {
			fmt.Fprintf(r.e.Stderr, "mcpbridge: %v\n", err)
		}
	default:
		fmt.Fprintf(r.e.Stderr, "unknown command %s: /tools, /servers, /expand, /clear, /exit\n", termsafe.Line(line))
	}
	return false
}

func (r *agentRun) showTools() {
	shown, err := r.ag.Tools()
	if err != nil {
		fmt.Fprintf(r.e.Stderr, "mcpbridge: %v\n", err)
		return
	}
	tw := tabwriter.NewWriter(r.e.Stderr, 0, 4, 2, ' ', 0)
	for _, t := range shown {
		fmt.Fprintf(tw, "%s\t%s\n", t.Name, termsafe.Summary(t.Description))
	}
	tw.Flush()
	fmt.Fprintf(r.e.Stderr, "the model sees %d of %d tools\n", len(shown), len(r.catalog()))
}

// catalog is every tool but search_tools, which only stands for them.
func (r *agentRun) catalog() []tool.Tool {
	return slices.DeleteFunc(r.b.reg.List(), func(t tool.Tool) bool { return t.Name == toolview.SearchName })
}

// askApproval asks the person whether c runs, one key answering. Ctrl-C
// or Ctrl-D cancels the turn, as Ctrl-C pressed during it does: a call
// asked for by a code-mode program would otherwise only fail in the
// program, and the turn go on.
func (r *agentRun) askApproval(ctx context.Context, c agent.Call) (agent.Answer, error) {
	if err := ctx.Err(); err != nil {
		return agent.Deny, err // the turn was cancelled while this call waited to be asked about
	}
	server := c.Tool.Origin.Server
	done, err := r.e.term.asking(ctx)
	if err != nil {
		return agent.Deny, err
	}
	defer done()
	fmt.Fprintf(r.e.Stderr, "Run %s %s?\n", termsafe.Line(c.Name), agentterm.Args(c.Args))
	if path := r.e.userConfigPath(); path != "" && !r.toldWhereKept {
		r.toldWhereKept = true // once a run: the person knows it then
		fmt.Fprintf(r.e.Stderr, "(\"always\" is kept for later runs in %s, permissions.allow)\n", path)
	}
	choices := agentterm.Choices(server)
	for {
		if err := ctx.Err(); err != nil {
			return agent.Deny, err
		}
		key, err := r.con.ReadKey(ctx, choices)
		if err != nil || key == "\x03" || key == "\x04" {
			fmt.Fprintln(r.e.Stderr)
			if r.ctrlC != nil && err == nil {
				r.ctrlC.Interrupt()
			}
			return agent.Deny, context.Canceled
		}
		ans, ok := agentterm.Answer(key, server != "")
		if !ok {
			fmt.Fprintf(r.e.Stderr, "%s: not an answer\n", termsafe.Line(key))
			continue
		}
		fmt.Fprintln(r.e.Stderr, agentterm.Echo(ans))
		return ans, nil
	}
}
