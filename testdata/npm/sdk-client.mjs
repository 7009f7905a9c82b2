// sdk-client drives one MCP server over stdio with the official TypeScript
// SDK client, the one Claude Desktop and Cline are built on, for mcpgram's
// interoperability tests. It reads a plan as JSON on stdin:
//
//   {"command": "...", "args": [], "env": {}, "cwd": "...",
//    "calls": [{"name": "tool", "arguments": {}}]}
//
// and writes what happened as JSON on stdout: the server's info, its tools,
// and for each call either the result (isError and text) or the JSON-RPC
// error (code and message).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";

const chunks = [];
for await (const chunk of process.stdin) chunks.push(chunk);
const plan = JSON.parse(Buffer.concat(chunks).toString("utf8"));

const transport = new StdioClientTransport({
  command: plan.command,
  args: plan.args ?? [],
  env: plan.env ?? {},
  cwd: plan.cwd,
  stderr: "inherit",
});
const client = new Client({ name: plan.clientName ?? "sdk-interop", version: "1.0.0" });
await client.connect(transport);

const out = { serverInfo: client.getServerVersion(), tools: [], calls: [] };
const listed = await client.listTools();
out.tools = listed.tools.map((t) => ({ name: t.name, required: t.inputSchema?.required ?? [], meta: t._meta ?? null }));

for (const call of plan.calls ?? []) {
  try {
    const res = await client.callTool({ name: call.name, arguments: call.arguments ?? {} });
    const text = (res.content ?? []).filter((c) => c.type === "text").map((c) => c.text).join("\n");
    out.calls.push({ isError: res.isError === true, text });
  } catch (err) {
    out.calls.push({ error: { code: err.code ?? null, message: String(err.message ?? err) } });
  }
}
await client.close();
process.stdout.write(JSON.stringify(out));
