// A real MCP client from the pinned TypeScript SDK against a gateway with
// tool search on, driven by TestNodeClientSearch:
// node node_search.mjs http <url> | stdio <command> [args...]
// NODE_MODULES names the node_modules directory holding the SDK. It lists
// the tools, searches in a user's words, waits for tools/list_changed,
// lists again, calls the first match, and prints one JSON object.
import { createRequire } from 'node:module';

const require = createRequire(process.env.NODE_MODULES + '/');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { ToolListChangedNotificationSchema } = require('@modelcontextprotocol/sdk/types.js');

const [mode, target, ...args] = process.argv.slice(2);
const transport = mode === 'http'
  ? new StreamableHTTPClientTransport(new URL(target))
  : new StdioClientTransport({ command: target, args, env: process.env, stderr: 'inherit' });

const client = new Client({ name: 'node-search-test', version: '1.0.0' });
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

await client.connect(transport);
const out = { tools: await names() };
const res = await client.callTool({ name: 'search_tools', arguments: { query: 'save a picture of what the browser shows', limit: 1 } });
out.found = JSON.parse(res.content[0].text).tools.map((t) => t.name);
const timeout = new Promise((_, reject) => setTimeout(() => reject(new Error('no tools/list_changed within 20 s')), 20000));
await Promise.race([listChanged, timeout]);
out.toolsAfter = await names();
out.called = await client.callTool({ name: out.found[0], arguments: {} });
await client.close();
console.log(JSON.stringify(out));
process.exit(0);
