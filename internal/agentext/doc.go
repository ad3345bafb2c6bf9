// Package agentext extends an agent's options (agent.Options) with what
// the mcpbridge agent adds to the loop: the servers' skills (Skills: their
// list in the system prompt and load_skill), and code mode (CodeMode: the
// registry as a TypeScript API the model programs against with run_code,
// each call a program makes approved as a direct one). Each is applied to
// complete options just before agent.New.
package agentext
