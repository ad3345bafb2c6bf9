// A client of the pinned TypeScript SDK over Streamable HTTP with a bearer
// token: `node node_bearer.mjs URL TOKEN TOOL ARGS_JSON` lists the tools,
// calls TOOL, and prints {"tools":[…],"call":{…}} (or {"callError":…} when
// the call is refused with a JSON-RPC error). NODE_MODULES names the
// node_modules directory.
import { createRequire } from 'node:module';

const require = createRequire(process.env.NODE_MODULES + '/');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

const [url, token, tool, argsJSON] = process.argv.slice(2);
const transport = new StreamableHTTPClientTransport(new URL(url), {
  requestInit: { headers: { Authorization: `Bearer ${token}` } },
});
const client = new Client({ name: 'node-bearer', version: '1.0.0' });
await client.connect(transport);
const out = { tools: (await client.listTools()).tools.map((t) => t.name).sort() };
try {
  out.call = await client.callTool({ name: tool, arguments: JSON.parse(argsJSON) });
} catch (e) {
  out.callError = { code: e.code, message: e.message };
}
await client.close();
console.log(JSON.stringify(out));
process.exit(0);
