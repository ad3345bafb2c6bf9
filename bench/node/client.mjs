// The peer-client row of `go run ./bench`: the Node TS SDK client
// (@modelcontextprotocol/sdk, pinned in testdata/thirdparty) connected to one
// stdio MCP server, making the same echo call as the Go variants when the
// driver asks, so its rounds interleave with theirs.
//
// Usage: node client.mjs <node_modules dir> <server command> [args...]
// The server's extra environment comes as JSON in BENCH_NODE_CHILD_ENV.
//
// Protocol on stdin/stdout, one JSON object per line:
//   start-up  → {"ok":true,"protocolVersion":"…"}
//   {"op":"seq","n":N}               → {"ok":true,"lat":[ns,…]}
//   {"op":"conc","n":N,"workers":W}  → {"ok":true,"elapsed":ns}
// Any failure → {"ok":false,"error":"…"}. End of stdin closes the client.
import { createInterface } from 'node:readline';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ECHO_TEXT = 'Echo: hi';

function reply(obj) {
  process.stdout.write(JSON.stringify(obj) + '\n');
}

async function main() {
  const [nodeModules, command, ...args] = process.argv.slice(2);
  if (!nodeModules || !command) {
    throw new Error('usage: node client.mjs <node_modules dir> <server command> [args...]');
  }
  // Imported by path: this script lives outside the node_modules tree.
  const sdk = join(nodeModules, '@modelcontextprotocol', 'sdk', 'dist', 'esm', 'client');
  const { Client } = await import(pathToFileURL(join(sdk, 'index.js')).href);
  const { StdioClientTransport } = await import(pathToFileURL(join(sdk, 'stdio.js')).href);

  const env = JSON.parse(process.env.BENCH_NODE_CHILD_ENV || '{}');
  const transport = new StdioClientTransport({ command, args, env, stderr: 'ignore' });
  let negotiated = 'unknown';
  // The client reports the negotiated version to transports that want it
  // (HTTP); stdio has no such hook, so add one to learn the version.
  transport.setProtocolVersion = (v) => { negotiated = v; };
  const client = new Client({ name: 'bench-node', version: '1.0.0' }, { capabilities: {} });
  await client.connect(transport);

  const call = async () => {
    const res = await client.callTool({ name: 'echo', arguments: { message: 'hi' } });
    const c = res.content;
    if (res.isError || !Array.isArray(c) || c.length !== 1 || c[0].type !== 'text' || c[0].text !== ECHO_TEXT) {
      throw new Error('echo returned ' + JSON.stringify(res));
    }
  };

  reply({ ok: true, protocolVersion: negotiated });
  const rl = createInterface({ input: process.stdin, crlfDelay: Infinity });
  for await (const line of rl) {
    try {
      const cmd = JSON.parse(line);
      if (cmd.op === 'seq') {
        const lat = new Array(cmd.n);
        for (let i = 0; i < cmd.n; i++) {
          const t = process.hrtime.bigint();
          await call();
          lat[i] = Number(process.hrtime.bigint() - t);
        }
        reply({ ok: true, lat });
      } else if (cmd.op === 'conc') {
        let next = 0;
        const worker = async () => {
          while (next++ < cmd.n) await call();
        };
        const t = process.hrtime.bigint();
        await Promise.all(Array.from({ length: cmd.workers }, worker));
        reply({ ok: true, elapsed: Number(process.hrtime.bigint() - t) });
      } else {
        reply({ ok: false, error: 'unknown op ' + JSON.stringify(cmd.op) });
      }
    } catch (err) {
      reply({ ok: false, error: String(err && err.stack || err) });
    }
  }
  await client.close();
}

main().catch((err) => {
  reply({ ok: false, error: String(err && err.stack || err) });
  process.exit(1);
});
