package termio_test

import (
	"context"
	"fmt"
	"strings"

	"github.com/mcpbridge/mcpbridge/internal/termio"
)

// A person's answers, one line each, whatever their line ending.
func ExampleLineReader() {
	l := termio.NewLineReader(strings.NewReader("alice\r\n42\n"))
	for {
		line, err := l.Next(context.Background())
		if err != nil {
			fmt.Println(err)
			return
		}
		fmt.Printf("%q\n", line)
	}
	// Output:
	// "alice"
	// "42"
	// EOF
}
