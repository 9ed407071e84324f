/** McpTools against the fixture MCP server over Streamable HTTP, in this process. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { silentLogger } from '../../src/log.js';
import { McpTools, type ToolEntry } from '../../src/tools/index.js';
import { startMcpHttpServer, type RunningMcpHttpServer } from '../fixtures/mcp-server.js';
import { eventually } from '../e2e/support.js';

let server: RunningMcpHttpServer;
let tools: McpTools;

before(async () => {
  server = await startMcpHttpServer();
  tools = new McpTools({ servers: { fx: { type: 'http', url: server.url, headers: {}, approve: 'never' } }, env: {}, toolTimeoutMs: 60_000, toolOutputChars: 1000, log: silentLogger });
  await tools.start();
});

after(async () => {
  await tools?.close();
  await server?.close();
});

const find = async (name: string): Promise<ToolEntry | undefined> => (await tools.list()).find((e) => e.name === name);

describe('McpTools', () => {
  it('follows tools/list_changed: a tool the server adds is offered without reconnecting', async () => {
    assert.equal(await find('fx_extra'), undefined);
    const grow = (await find('fx_grow'))!;
    assert.deepEqual(await grow.call({}, new AbortController().signal), { status: 'succeeded', output: 'grown' });
    const extra = await eventually(() => find('fx_extra'));
    assert.deepEqual(await extra.call({}, new AbortController().signal), { status: 'succeeded', output: 'extra' });
  });

  it('leaves no listener on the turn\'s signal, however many calls it carries', async () => {
    const echo = (await find('fx_echo'))!;
    const turn = new AbortController();
    for (let i = 0; i < 20; i++) assert.equal((await echo.call({ text: String(i) }, turn.signal)).status, 'succeeded');
    assert.equal(getEventListeners(turn.signal, 'abort').length, 0);
  });

  it('a call whose turn is already aborted is canceled', async () => {
    const echo = (await find('fx_echo'))!;
    const turn = new AbortController();
    turn.abort(new Error('canceled'));
    assert.equal((await echo.call({ text: 'x' }, turn.signal)).status, 'canceled');
  });
});
