// The TypeScript SDK's MCP client (@modelcontextprotocol/sdk, what Claude Code, Claude
// Desktop and the MCP Inspector are built on) timing one stdio server, for
// benchmarks/tools.py.
//
//   node benchmarks/mcp_client.mjs NPM_DIR PLAN.json > medians.json
//
// The plan: {"command", "args", "rounds", "ops": {name: {"calls", "arguments": [...]}},
// "before": {name: [arguments of calls made once before the op is timed]}}. Each op's
// calls cycle through its argument list; "tool" names the tool. Like the Python side, each
// op gets three warm-up calls, then `rounds` rounds of `calls` calls, and the answer is
// each round's median round trip in seconds. The client lists the tools first, as real
// clients do, so it checks every structured result against the tool's output schema (ajv).

import { readFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const npm = process.argv[2];
const sdk = (module) =>
  import(pathToFileURL(join(npm, "node_modules/@modelcontextprotocol/sdk/dist/esm", module)).href);
const { Client } = await sdk("client/index.js");
const { StdioClientTransport } = await sdk("client/stdio.js");

const plan = JSON.parse(readFileSync(process.argv[3], "utf8"));
const transport = new StdioClientTransport({ command: plan.command, args: plan.args, stderr: "ignore" });
const client = new Client({ name: "agentfs-bench", version: "1" });
await client.connect(transport);
await client.listTools();

async function call(tool, args) {
  const result = await client.callTool({ name: tool, arguments: args });
  if (result.isError) throw new Error(`${tool} failed: ${JSON.stringify(result.content)}`);
  return result;
}

async function timed(op, calls, offset) {
  const times = [];
  for (let i = 0; i < calls; i++) {
    const args = op.arguments[(offset + i) % op.arguments.length];
    const start = process.hrtime.bigint();
    await call(op.tool, args);
    times.push(Number(process.hrtime.bigint() - start) / 1e9);
  }
  return times;
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

const out = {};
for (const [name, op] of Object.entries(plan.ops)) {
  for (const args of plan.before?.[name] ?? []) await call(args.tool, args.arguments);
  let done = 0;
  await timed(op, 3, done);
  done += 3;
  out[name] = [];
  for (let r = 0; r < plan.rounds; r++) {
    out[name].push(median(await timed(op, op.calls, done)));
    done += op.calls;
  }
}
await client.close();
process.stdout.write(JSON.stringify(out));
