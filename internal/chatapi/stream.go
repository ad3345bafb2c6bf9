package chatapi

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
)

// chunk is one event of a stream.
type chunk struct {
	Model   string `json:"model"`
	Choices []struct {
		Index int `json:"index"`
		Delta struct {
			Content          *string `json:"content"`
			ReasoningContent *string `json:"reasoning_content"`
			ToolCalls        []struct {
				Index    int    `json:"index"`
				ID       string `json:"id"`
				Type     string `json:"type"`
				Function struct {
					Name      string `json:"name"`
					Arguments string `json:"arguments"`
				} `json:"function"`
			} `json:"tool_calls"`
		} `json:"delta"`
		FinishReason *string `json:"finish_reason"`
	} `json:"choices"`
	Usage *Usage `json:"usage"`
	Error *struct {
		Message string `json:"message"`
	} `json:"error"`
}

// Bounds of one streamed answer: its tool calls, and the bytes of its
// text, reasoning and arguments together.
const (
	maxToolCalls   = 128
	maxAnswerBytes = 4 * maxResponseBytes
)

// assembler puts a stream's chunks together.
type assembler struct {
	out       Completion
	text      strings.Builder
	reasoning strings.Builder
	calls     []*ToolCall
	args      []*strings.Builder
	on        func(Delta)
	size      int // bytes of text, reasoning and arguments so far
}

// readStream reads server-sent events ("data: {…}" lines, "data: [DONE]"
// last) and returns the first choice put together: text, reasoning, and
// the tool calls in the order of their index, their argument pieces
// joined.
func readStream(body io.Reader, on func(Delta)) (*Completion, error) {
	a := &assembler{on: on}
	sc := bufio.NewScanner(body)
	sc.Buffer(make([]byte, 0, 64<<10), maxResponseBytes)
	done := false
	for sc.Scan() {
		line := bytes.TrimSpace(sc.Bytes())
		data, ok := bytes.CutPrefix(line, []byte("data:"))
		if !ok {
			continue // comments (": keep-alive"), event names, blank lines
		}
		data = bytes.TrimSpace(data)
		if string(data) == "[DONE]" {
			done = true
			break
		}
		var c chunk
		if err := json.Unmarshal(data, &c); err != nil {
			return nil, fmt.Errorf("the stream holds an event that is not a chat-completion chunk: %w", err)
		}
		if err := a.add(&c); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); errors.Is(err, bufio.ErrTooLong) {
		return nil, fmt.Errorf("the stream holds a line over %d MiB", maxResponseBytes>>20)
	} else if err != nil {
		return nil, fmt.Errorf("reading the stream: %w", err)
	}
	if !done && a.out.FinishReason == "" {
		return nil, errors.New("the stream ended before the answer did")
	}
	return a.finish(), nil
}

func (a *assembler) add(c *chunk) error {
	if a.size > maxAnswerBytes {
		return fmt.Errorf("the answer is over %d MiB", maxAnswerBytes>>20)
	}
	if c.Error != nil {
		return fmt.Errorf("the stream ended with an error: %s", cutMessage(c.Error.Message))
	}
	if c.Model != "" {
		a.out.Model = c.Model
	}
	if c.Usage != nil {
		a.out.Usage = *c.Usage
	}
	for _, ch := range c.Choices {
		if ch.Index != 0 {
			continue
		}
		d := ch.Delta
		if d.ReasoningContent != nil && *d.ReasoningContent != "" {
			a.reasoning.WriteString(*d.ReasoningContent)
			a.size += len(*d.ReasoningContent)
			a.emit(Delta{Reasoning: *d.ReasoningContent})
		}
		if d.Content != nil && *d.Content != "" {
			a.text.WriteString(*d.Content)
			a.size += len(*d.Content)
			a.emit(Delta{Text: *d.Content})
		}
		for _, tc := range d.ToolCalls {
			if err := a.toolCall(tc.Index, tc.ID, tc.Type, tc.Function.Name, tc.Function.Arguments); err != nil {
				return err
			}
		}
		if ch.FinishReason != nil && *ch.FinishReason != "" {
			a.out.FinishReason = *ch.FinishReason
		}
	}
	return nil
}

// toolCall adds a piece of the tool call at index: its first piece
// carries its id and name, the others pieces of its arguments.
func (a *assembler) toolCall(index int, id, typ, name, args string) error {
	if index < 0 || index >= maxToolCalls {
		return fmt.Errorf("the stream holds a tool call of index %d (at most %d are read)", index, maxToolCalls)
	}
	for len(a.calls) <= index {
		a.calls = append(a.calls, nil)
		a.args = append(a.args, nil)
	}
	tc := a.calls[index]
	if tc == nil {
		tc = &ToolCall{Type: "function"}
		a.calls[index] = tc
		a.args[index] = &strings.Builder{}
	}
	started := tc.ID == "" && id != ""
	if id != "" {
		tc.ID = id
	}
	if typ != "" {
		tc.Type = typ
	}
	if len(tc.Function.Name)+len(name) > 256 {
		return fmt.Errorf("the stream holds a tool name over 256 bytes")
	}
	tc.Function.Name += name
	a.args[index].WriteString(args)
	a.size += len(args)
	if started {
		c := *tc
		a.emit(Delta{ToolCall: &c})
	}
	return nil
}

func (a *assembler) emit(d Delta) {
	if a.on != nil {
		a.on(d)
	}
}

func (a *assembler) finish() *Completion {
	m := Message{Role: "assistant", ReasoningContent: a.reasoning.String()}
	if s := a.text.String(); s != "" {
		m.Content = s
	}
	for i, tc := range a.calls {
		if tc == nil {
			continue
		}
		tc.Function.Arguments = a.args[i].String()
		m.ToolCalls = append(m.ToolCalls, *tc)
	}
	a.out.Message = m
	return &a.out
}
