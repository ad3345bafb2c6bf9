// A client from the pinned TypeScript SDK that calls a tool as a task:
// `node node_task_stream.mjs TOOL ARGS_JSON ANSWER_JSON COMMAND [ARGS...]`
// launches COMMAND over stdio, lists the tools, calls TOOL with its tasks
// API (experimental.tasks.callToolStream, which makes the call a task when
// the server declares tasks and the tool's execution.taskSupport allows
// it: task-augmented tools/call, then tasks/get and tasks/result; a plain
// call otherwise), answers every elicitation/create with
// ANSWER_JSON, and prints {"asked":[{message,_meta}],"statuses":[…],
// "result":{…},"error":"…"}. NODE_MODULES names the node_modules directory.
import { createRequire } from 'node:module';

const require = createRequire(process.env.NODE_MODULES + '/');
const { Client } = require('@modelcontextprotocol/sdk/client/index.js');
const { StdioClientTransport } = require('@modelcontextprotocol/sdk/client/stdio.js');
const { ElicitRequestSchema, CallToolResultSchema } = require('@modelcontextprotocol/sdk/types.js');

const [tool, argsJSON, answerJSON, command, ...args] = process.argv.slice(2);
const transport = new StdioClientTransport({ command, args, env: process.env, stderr: 'inherit' });
const client = new Client({ name: 'node-task', version: '1.0.0' }, { capabilities: { elicitation: {} } });
const out = { asked: [], statuses: [] };
client.setRequestHandler(ElicitRequestSchema, (req) => {
  out.asked.push({ message: req.params.message, _meta: req.params._meta });
  return JSON.parse(answerJSON);
});
await client.connect(transport);
await client.listTools();
const stream = client.experimental.tasks.callToolStream({ name: tool, arguments: JSON.parse(argsJSON) }, CallToolResultSchema);
for await (const message of stream) {
  switch (message.type) {
    case 'taskCreated':
      out.taskId = message.task.taskId;
      out.statuses.push(message.task.status);
      break;
    case 'taskStatus':
      out.statuses.push(message.task.status);
      break;
    case 'result':
      out.result = message.result;
      break;
    case 'error':
      out.error = String(message.error);
      break;
  }
}
await client.close();
console.log(JSON.stringify(out));
process.exit(0);
