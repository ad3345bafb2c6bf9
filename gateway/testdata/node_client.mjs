// A real MCP client from the pinned TypeScript SDK, driven by the gateway
// tests: node node_client.mjs http <url> | stdio <command> [args...]
// NODE_MODULES names the node_modules directory holding the SDK; a bearer
// token in GATEWAY_TOKEN is sent over HTTP. It lists the tools, calls some,
// asks a backend to add a tool, waits for tools/list_changed, lists again,
// and prints one JSON object with what it saw. With SEARCH_QUERY set (a
// gateway with tool search on) it lists, calls search_tools with that
// query, waits for tools/list_changed, lists again and calls the first
// match instead.
import { createRequire } from 'node:module';

const require = createRequire(process.env.NODE_MODULES + '/');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { ToolListChangedNotificationSchema } = require('@modelcontextprotocol/sdk/types.js');

const [mode, target, ...args] = process.argv.slice(2);
let transport;
if (mode === 'http') {
  const headers = process.env.GATEWAY_TOKEN ? { Authorization: `Bearer ${process.env.GATEWAY_TOKEN}` } : {};
  transport = new StreamableHTTPClientTransport(new URL(target), { requestInit: { headers } });
} else {
  transport = new StdioClientTransport({ command: target, args, env: process.env, stderr: 'inherit' });
}

const client = new Client({ name: 'node-gateway-test', version: '1.0.0' });
let changed;
const listChanged = new Promise((resolve) => { changed = resolve; });
client.setNotificationHandler(ToolListChangedNotificationSchema, () => changed());

async function names() {
  const out = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : {});
    out.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor);
  return out;
}

function waitListChanged() {
  const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('no tools/list_changed within 20 s')), 20000));
  return Promise.race([listChanged, timeout]);
}

async function search(query) {
  const out = { tools: await names() };
  const res = await client.callTool({ name: 'search_tools', arguments: { query, limit: 1 } });
  out.found = JSON.parse(res.content[0].text).tools.map((t) => t.name);
  await waitListChanged();
  out.toolsAfter = await names();
  out.called = await client.callTool({ name: out.found[0], arguments: {} });
  return out;
}

await client.connect(transport);
if (process.env.SEARCH_QUERY) {
  console.log(JSON.stringify(await search(process.env.SEARCH_QUERY)));
  await client.close();
  process.exit(0);
}
const out = { server: client.getServerVersion() };
out.tools = await names();
out.greetA = await client.callTool({ name: 'mcp__a__greet', arguments: { name: 'Node' } });
out.greetB = await client.callTool({ name: 'mcp__b__greet', arguments: { name: 'Deno' } });
out.image = await client.callTool({ name: 'mcp__b__image', arguments: {} });
out.structured = await client.callTool({ name: 'mcp__a__structured', arguments: {} });
out.fail = await client.callTool({ name: 'mcp__a__fail', arguments: {} });
await client.callTool({ name: 'mcp__a__add_tool', arguments: { name: 'from_node' } });
await waitListChanged();
out.toolsAfter = await names();
await client.close();
console.log(JSON.stringify(out));
process.exit(0);
