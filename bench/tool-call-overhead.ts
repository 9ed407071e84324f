/**
 * Tool calls: what the harness adds to one MCP tool call, against the official MCP SDK's client
 * calling the same tool directly, in the same run, on the same server.
 *
 *   node --import tsx bench/tool-call-overhead.ts [--calls 2000]
 *
 * The server is the test fixture over Streamable HTTP (test/fixtures/mcp-server.ts) on
 * 127.0.0.1, its `echo` tool. Variants alternate in rounds of 100 calls, so that drift of the
 * machine hits both alike:
 * - direct: `client.callTool({ name: 'echo', ... })` on a client of its own;
 * - harness: the tool as a turn's model calls it: `McpTools` (timeout, cancellation signal,
 *   result to text, output bound) under `TurnToolCalls` (the `running` and `succeeded` reports,
 *   each a status update with its message, handed to a bus that keeps nothing).
 * Storing those two updates is the store's cost of any status update, measured by the
 * command-latency benchmark; it is not counted here. Goal: at most 1 ms added at the median.
 */
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { silentLogger } from '../src/log.js';
import { TurnToolCalls } from '../src/runtime/tool-calls.js';
import { McpTools } from '../src/tools/index.js';
import { startMcpHttpServer } from '../test/fixtures/mcp-server.js';
import { header, latencyLine, printVerdicts, summarize, verdict, versionOf } from './lib/report.js';
import { performance } from 'node:perf_hooks';

const { values: flags } = parseArgs({ options: { calls: { type: 'string', default: '2000' } } });
const CALLS = Number(flags.calls);
const ROUND = 100;

header('Tool-call overhead: the harness against the MCP SDK client, one fixture server', [
  `@modelcontextprotocol/sdk ${versionOf('@modelcontextprotocol/sdk')}; ${CALLS} calls per variant after 200 warm-up calls each`,
]);

const server = await startMcpHttpServer();
const direct = new Client({ name: 'bench', version: '1.0.0' });
await direct.connect(new StreamableHTTPClientTransport(new URL(server.url)));
const tools = new McpTools({
  servers: { fx: { type: 'http', url: server.url, headers: {}, approve: 'never' } },
  env: {},
  toolTimeoutMs: 60_000,
  toolOutputChars: 20_000,
  log: silentLogger,
});
await tools.start();
const entry = (await tools.list()).tools.find((e) => e.name === 'fx_echo');
if (!entry) throw new Error('the fixture server offered no echo tool');
const calls = new TurnToolCalls('bench-task', 'bench-context', () => {});
const [harnessTool] = calls.wrap([entry]);
const signal = new AbortController().signal;

const variants: Record<string, () => Promise<unknown>> = {
  direct: () => direct.callTool({ name: 'echo', arguments: { text: 'hello' } }),
  harness: () => harnessTool!.execute({ text: 'hello' }, signal),
};
const samples: Record<string, number[]> = { direct: [], harness: [] };
for (const run of Object.values(variants)) for (let i = 0; i < 200; i++) await run();
for (let done = 0; done < CALLS; done += ROUND) {
  for (const [name, run] of Object.entries(variants)) {
    for (let i = 0; i < ROUND; i++) {
      const start = performance.now();
      await run();
      samples[name]!.push(performance.now() - start);
    }
  }
}
const directSummary = summarize(samples.direct!);
const harnessSummary = summarize(samples.harness!);
console.log(latencyLine('direct (MCP SDK client)', directSummary));
console.log(latencyLine('harness (McpTools + reports)', harnessSummary));
const added = harnessSummary.median - directSummary.median;
verdict(added <= 1, `the harness adds ${added.toFixed(3)} ms per tool call at the median (goal: at most 1 ms)`);
printVerdicts('tool-call-overhead');

calls.close();
await direct.close();
await tools.close();
await server.close();
