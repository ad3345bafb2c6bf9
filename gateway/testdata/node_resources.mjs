// A real MCP client from the pinned TypeScript SDK that browses resources
// and prompts through the gateway: node node_resources.mjs <url>.
// NODE_MODULES names the node_modules directory holding the SDK. It prints
// one JSON object with what it saw.
import { createRequire } from 'node:module';

const require = createRequire(process.env.NODE_MODULES + '/');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StreamableHTTPClientTransport } = require('@modelcontextprotocol/sdk/client/streamableHttp.js');

const client = new Client({ name: 'node-resources-test', version: '1.0.0' });
await client.connect(new StreamableHTTPClientTransport(new URL(process.argv[2])));

const resources = (await client.listResources()).resources;
const templates = (await client.listResourceTemplates()).resourceTemplates;
const prompts = (await client.listPrompts()).prompts;
const templated = await client.readResource({ uri: 'demo://resource/dynamic/text/4' });
const prompt = await client.getPrompt({ name: 'mcp__everything__args-prompt', arguments: { city: 'Lyon', state: 'Rhone' } });
console.log(JSON.stringify({
  capabilities: client.getServerCapabilities(),
  resources: resources.map((r) => r.uri),
  templates: templates.map((t) => t.uriTemplate),
  prompts: prompts.map((p) => p.name),
  templated: templated.contents.map((c) => c.text),
  prompt: prompt.messages.map((m) => `${m.role}: ${m.content.text}`),
}));
await client.close();
