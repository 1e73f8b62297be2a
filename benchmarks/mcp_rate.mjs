// The TypeScript SDK's MCP client (@modelcontextprotocol/sdk, what Claude Code and the MCP
// Inspector are built on) making read_file calls as fast as it can, for benchmarks/serve.py.
//
//   node benchmarks/mcp_rate.mjs NPM_DIR stdio AGENTFS WS CALLS WARMUP
//   node benchmarks/mcp_rate.mjs NPM_DIR http URL TOKEN CALLS WARMUP
//
// It connects, lists the tools, makes WARMUP calls, prints "ready", waits for a line on
// stdin (so that several clients start together), then times CALLS calls and prints the
// seconds they took.

import { createInterface } from "node:readline";
import { join } from "node:path";
import { pathToFileURL } from "node:url";

const [npm, kind, target, secret, calls, warmup] = process.argv.slice(2);
const sdk = (module) =>
  import(pathToFileURL(join(npm, "node_modules/@modelcontextprotocol/sdk/dist/esm", module)).href);
const { Client } = await sdk("client/index.js");

let transport;
if (kind === "stdio") {
  const { StdioClientTransport } = await sdk("client/stdio.js");
  transport = new StdioClientTransport({ command: target, args: ["serve", "mcp", secret], stderr: "ignore" });
} else {
  const { StreamableHTTPClientTransport } = await sdk("client/streamableHttp.js");
  transport = new StreamableHTTPClientTransport(new URL(target), {
    requestInit: { headers: { Authorization: `Bearer ${secret}` } },
  });
}
const client = new Client({ name: "agentfs-bench", version: "1" });
await client.connect(transport);
await client.listTools();

async function call() {
  const result = await client.callTool({ name: "read_file", arguments: { path: "/page.md" } });
  if (result.isError) throw new Error(`read_file failed: ${JSON.stringify(result.content)}`);
}

for (let i = 0; i < Number(warmup); i++) await call();
process.stdout.write("ready\n");
const lines = createInterface({ input: process.stdin });
await new Promise((resolve) => lines.once("line", resolve));
const start = process.hrtime.bigint();
for (let i = 0; i < Number(calls); i++) await call();
process.stdout.write(`${Number(process.hrtime.bigint() - start) / 1e9}\n`);
lines.close();
await client.close();
