// A client from the pinned TypeScript SDK that answers elicitation:
// `node node_task_elicit.mjs TOOL ARGS_JSON ANSWER_JSON COMMAND [ARGS...]`
// launches COMMAND over stdio, calls TOOL, answers every elicitation/create
// with ANSWER_JSON, and prints {"asked":[messages],"call":{result}}.
// NODE_MODULES names the node_modules directory.
import { createRequire } from 'node:module';

const require = createRequire(process.env.NODE_MODULES + '/');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { ElicitRequestSchema } = require('@modelcontextprotocol/sdk/types.js');

const [tool, argsJSON, answerJSON, command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: 'inherit' });
const client = new Client({ name: 'node-elicit', version: '1.0.0' }, { capabilities: { elicitation: {} } });
const asked = [];
client.setRequestHandler(ElicitRequestSchema, (req) => {
  asked.push(req.params.message);
  return JSON.parse(answerJSON);
});
await client.connect(transport);
const call = await client.callTool({ name: tool, arguments: JSON.parse(argsJSON) });
await client.close();
console.log(JSON.stringify({ asked, call }));
process.exit(0);
