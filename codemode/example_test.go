package codemode_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/mcpbridge/mcpbridge/codemode"
	"github.com/mcpbridge/mcpbridge/tool"
)

func Example() {
	reg := tool.NewRegistry()
	_, err := reg.Register(tool.Tool{
		Name:        "mcp__fs__read_file",
		Description: "Read a file.",
		InputSchema: json.RawMessage(`{"type":"object","properties":{"path":{"type":"string"}},"required":["path"]}`),
		Origin:      tool.Origin{Server: "fs", Name: "read_file"},
		Execute: func(_ context.Context, args json.RawMessage) (tool.Output, error) {
			var in struct{ Path string }
			_ = json.Unmarshal(args, &in)
			return tool.Output{Content: []tool.Content{tool.Text(map[string]string{"a.txt": "12", "b.txt": "30"}[in.Path])}}, nil
		},
	})
	if err != nil {
		panic(err)
	}
	// What the model reads: the tools as a typed API.
	decl := codemode.NewAPI(reg.List()).Declaration()
	fmt.Println(decl[strings.Index(decl, "  namespace fs"):])

	// What it writes: one program, two calls at once, one small result.
	res, err := codemode.Run(context.Background(), codemode.RegistryView(reg), `
const [a, b] = await Promise.all(["a.txt", "b.txt"].map(path => tools.fs.read_file({path})));
console.log("read", a.text, "and", b.text);
return {sum: Number(a.text) + Number(b.text)};
`, codemode.Options{})
	if err != nil {
		panic(err)
	}
	fmt.Println(res.Text())
	// Output:
	//   namespace fs {
	//     /** Read a file. */
	//     function read_file(args: {
	//       path: string;
	//     }): Promise<ToolResult>;
	//   }
	// }
	//
	// read 12 and 30
	// {"sum":42}
}

func ExampleTools() {
	reg := tool.NewRegistry()
	_, err := reg.Register(tool.Tool{
		Name: "mcp__time__now", Description: "The time.", Origin: tool.Origin{Server: "time", Name: "now"},
		Execute: func(context.Context, json.RawMessage) (tool.Output, error) {
			return tool.Output{Content: []tool.Content{tool.Text("12:00")}}, nil
		},
	})
	if err != nil {
		panic(err)
	}
	// A registry of the code mode tools alone, as a gateway or an agent
	// would list them; their calls reach the bridged tools through the view.
	code := tool.NewRegistry()
	if _, err := code.Register(codemode.Tools(codemode.RegistryView(reg), codemode.Options{})...); err != nil {
		panic(err)
	}
	ctx := context.Background()
	page, _ := code.Execute(ctx, codemode.DescribeName, json.RawMessage(`{}`))
	fmt.Print(page.Text()[strings.LastIndex(page.Text(), "\n// ")+1:])
	res, _ := code.Execute(ctx, codemode.RunName, json.RawMessage(`{"code": "return 'it is ' + (await tools.time.now()).text"}`))
	fmt.Println(res.Text())
	// Output:
	// // time (1): now
	// "it is 12:00"
}
