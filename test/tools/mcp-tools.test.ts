/** McpTools against the fixture MCP server over Streamable HTTP, in this process. */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { EventEmitter, getEventListeners } from 'node:events';
import { silentLogger } from '../../src/log.js';
import { mayAllowServer, McpTools, missingToolsText, type ToolEntry } from '../../src/tools/index.js';
import { OUTPUT_ARTIFACT_MAX_CHARS } from '../../src/tools/output.js';
import { startMcpHttpServer, STDIO_FIXTURE, type RunningMcpHttpServer } from '../fixtures/mcp-server.js';
import { unusedBaseURL } from '../fixtures/model-server.js';
import { poll, waitFor } from '../support/wait.js';

let server: RunningMcpHttpServer;
let tools: McpTools;

before(async () => {
  server = await startMcpHttpServer();
  tools = new McpTools({
    servers: { fx: { type: 'http', url: server.url, headers: {}, approve: 'never' } },
    env: {},
    toolTimeoutMs: 60_000,
    toolOutputChars: 1000,
    log: silentLogger,
  });
  await tools.start();
});

after(async () => {
  await tools?.close();
  await server?.close();
});

const find = async (name: string): Promise<ToolEntry | undefined> =>
  (await tools.list()).tools.find((e) => e.name === name);

describe('McpTools', () => {
  it('follows tools/list_changed: a tool the server adds is offered without reconnecting', async () => {
    assert.equal(await find('fx_extra'), undefined);
    const grow = (await find('fx_grow'))!;
    assert.deepEqual(await grow.call({}, new AbortController().signal), { status: 'succeeded', output: 'grown' });
    const extra = await poll('the added tool fx_extra', () => find('fx_extra'));
    assert.deepEqual(await extra.call({}, new AbortController().signal), { status: 'succeeded', output: 'extra' });
  });

  it("leaves no listener on the turn's signal, however many calls it carries", async () => {
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

  it('lists the prompts of a server and reads one with its arguments; follows prompts/list_changed', async () => {
    const names = () => tools.prompts().map((p) => p.name);
    assert.deepEqual(names().slice(0, 3), ['review', 'Summarize_Notes', 'help']);
    const review = tools.prompts().find((p) => p.name === 'review')!;
    assert.deepEqual(
      review.arguments.map((a) => [a.name, a.required]),
      [
        ['file', true],
        ['focus', false],
      ],
    );
    assert.equal(
      await tools.getPrompt('fx', 'review', { file: 'a.ts', focus: 'names' }),
      'Review a.ts with a focus on names.',
    );
    assert.equal(await tools.getPrompt('fx', 'Summarize_Notes', {}), 'Summarize the notes.\n\nKeep it short.');
    let told = 0;
    const changes = new EventEmitter();
    tools.onPromptsChanged(() => ((told += 1), changes.emit('change')));
    await (await find('fx_add_prompt'))!.call({}, new AbortController().signal);
    await waitFor('the added prompt "later"', changes, 'change', () => names().includes('later'));
    assert.ok(told > 0, 'listeners hear of the change');
  });
});

describe('what a tool call logs', () => {
  for (const logContent of [false, true]) {
    it(`logs each call's server, tool, status and time; its input and output ${logContent ? 'too, with --log-content' : 'never, without --log-content'}`, async () => {
      const lines: Record<string, unknown>[] = [];
      const log = {
        debug: () => {},
        info: (msg: string, fields?: Record<string, unknown>) => lines.push({ msg, ...fields }),
        warn: () => {},
        error: () => {},
      };
      const own = new McpTools({
        servers: { fx: { type: 'http', url: server.url, headers: {}, approve: 'never' } },
        env: {},
        toolTimeoutMs: 60_000,
        toolOutputChars: 1000,
        log,
        logContent,
      });
      try {
        await own.start();
        const echo = (await own.list()).tools.find((e) => e.name === 'fx_echo')!;
        await echo.call({ text: 'secret-words' }, new AbortController().signal);
        const line = lines.find((l) => l.msg === 'tool call')!;
        assert.equal(line.server, 'fx');
        assert.equal(line.tool, 'echo');
        assert.equal(line.status, 'succeeded');
        assert.equal(typeof line.ms, 'number');
        const text = JSON.stringify(lines);
        if (logContent) {
          assert.equal(line.input, '{"text":"secret-words"}');
          assert.equal(line.output, 'echo: secret-words');
        } else {
          assert.ok(!text.includes('secret-words'), 'neither input nor output in any line');
        }
      } finally {
        await own.close();
      }
    });
  }
});

describe('a stdio tool whose output is over the MCP SDK limit (issue 22)', () => {
  it('issue 22: output over 10 MiB is reported as too large, not as a crash, and the server is started again', async () => {
    const warnings: Record<string, unknown>[] = [];
    const log = {
      info: () => {},
      warn: (msg: string, fields?: Record<string, unknown>) => warnings.push({ msg, ...fields }),
      error: () => {},
      debug: () => {},
    };
    const own = new McpTools({
      servers: { fx: { type: 'stdio', ...STDIO_FIXTURE, env: {}, cwd: process.cwd(), approve: 'never' } },
      env: {},
      toolTimeoutMs: 60_000,
      toolOutputChars: 1000,
      log,
    });
    try {
      await own.start();
      const huge = (await own.list()).tools.find((e) => e.name === 'fx_huge')!;
      const within = await huge.call({ size: 2 * 1024 * 1024 }, new AbortController().signal);
      assert.equal(within.status, 'succeeded', 'output within the limit is read, and cut as the bounds say');
      assert.match(within.output, /\[output cut: the first 1000 of 2097152 characters are shown\]$/);
      assert.equal(
        within.full?.length,
        OUTPUT_ARTIFACT_MAX_CHARS + '\n[output cut: the first 1000000 of 2097152 characters are shown]'.length,
      );

      const over = await huge.call({ size: 10.5 * 1024 * 1024 }, new AbortController().signal);
      assert.equal(over.status, 'failed');
      assert.equal(
        over.output,
        'The tool\'s output was larger than 10 MiB, the most the harness reads from an MCP server over stdio; the call failed. The server "fx" is started again on its next use (its connection cannot go on after such a message).',
      );
      assert.deepEqual(
        warnings.map((w) => w.msg),
        ['MCP server sent a message larger than 10 MiB; its connection is closed, and it is started again on next use'],
      );
      const echo = (await own.list()).tools.find((e) => e.name === 'fx_echo')!;
      assert.deepEqual(await echo.call({ text: 'again' }, new AbortController().signal), {
        status: 'succeeded',
        output: 'echo: again',
      });
    } finally {
      await own.close();
    }
  });
});

describe('the servers a turn goes without', () => {
  it('a server that cannot be reached is listed as missing, with why; the others are offered', async () => {
    const own = new McpTools({
      servers: {
        fx: { type: 'http', url: server.url, headers: {}, approve: 'never' },
        gone: { type: 'http', url: `${await unusedBaseURL()}/mcp`, headers: {}, approve: 'never' },
      },
      env: {},
      toolTimeoutMs: 60_000,
      connectWaitMs: 60_000,
      toolOutputChars: 1000,
      log: silentLogger,
    });
    try {
      await own.start();
      const { tools: offered, missing } = await own.list();
      assert.ok(offered.some((e) => e.name === 'fx_echo'));
      assert.equal(missing.length, 1);
      assert.equal(missing[0]!.server, 'gone');
      assert.equal(missing[0]!.why, 'unreachable');
      assert.match(
        missingToolsText(missing),
        /^The MCP server "gone" cannot be reached now \(.+\): this turn runs without its tools; it is tried again at the next turn\.$/,
      );
    } finally {
      await own.close();
    }
  });

  it("allowed-tools (TOOL-3): a missing server matters to a turn only when its rules may allow the server's tools", () => {
    assert.equal(mayAllowServer(undefined, 'slow'), true, 'no rules: every tool');
    assert.equal(mayAllowServer(['slow:*'], 'slow'), true);
    assert.equal(mayAllowServer(['slow_echo'], 'slow'), true);
    assert.equal(mayAllowServer(['fs_read_text_file', 'fs:*'], 'slow'), false);
    assert.equal(mayAllowServer([], 'slow'), false);
  });
});
