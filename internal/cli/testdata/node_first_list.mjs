// A one-shot client from the pinned TypeScript SDK, as the MCP Inspector
// CLI and other clients that ignore list_changed behave: it launches
// `node node_first_list.mjs TOOL ARGS_JSON COMMAND [ARGS...]`, lists the
// tools once right after connecting, calls TOOL at once, and prints
// {"tools":[…],"call":{…}}. NODE_MODULES names the node_modules directory.
import { createRequire } from 'node:module';

const require = createRequire(process.env.NODE_MODULES + '/');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');

const [tool, argsJSON, command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: 'inherit' });
const client = new Client({ name: 'node-one-shot', version: '1.0.0' });
await client.connect(transport);
const out = { tools: (await client.listTools()).tools.map((t) => t.name) };
out.call = await client.callTool({ name: tool, arguments: JSON.parse(argsJSON) });
await client.close();
console.log(JSON.stringify(out));
process.exit(0);
