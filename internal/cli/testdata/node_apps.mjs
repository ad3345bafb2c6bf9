// A client from the pinned TypeScript SDK that looks at an MCP Apps
// server: `node node_apps.mjs COMMAND [ARGS...]` launches COMMAND over
// stdio, lists its tools and resources, reads every ui:// resource a
// tool names in _meta.ui.resourceUri, and prints
// {"tools":[{name,_meta}],"resources":[...],"reads":{uri:result}}.
// NODE_MODULES names the node_modules directory.
import { createRequire } from 'node:module';

const require = createRequire(process.env.NODE_MODULES + '/');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');

const [command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: 'inherit' });
const client = new Client({ name: 'node-apps', version: '1.0.0' }, { capabilities: {} });
await client.connect(transport);
const { tools } = await client.listTools();
const { resources } = await client.listResources();
const reads = {};
for (const t of tools) {
  const uri = t._meta?.ui?.resourceUri;
  if (uri) {
    reads[uri] = await client.readResource({ uri });
  }
}
await client.close();
// Exit only once the output (larger than a pipe's buffer) is written.
const out = JSON.stringify({ tools: tools.map((t) => ({ name: t.name, _meta: t._meta })), resources, reads });
process.stdout.write(out + '\n', () => process.exit(0));
