/**
 * The built-in workspace tools end to end (TOOL-6): the harness with `workspace` configured on a
 * temporary folder, the fixture model scripted to call each tool; `write` waits for `/approve`,
 * `shell` runs a command a `Bash(echo:*)` rule grants and asks for any other; `fetch` reads the
 * fixture model server (private networks allowed for the test) at once.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { lastMessage, type ScriptedToolCall } from '../fixtures/model-server.js';
import { callsIn, finalOf, pause, statusMessages, turnEnded } from './approval-support.js';
import { collect, send, sendStream, startTestHarness, textOf, type TestHarness } from './support.js';

const CALLS: Record<string, ScriptedToolCall> = {
  'please read': { name: 'workspace_read', arguments: { path: 'notes.txt' } },
  'please list': { name: 'workspace_list', arguments: {} },
  'please search': { name: 'workspace_search', arguments: { pattern: 'launch' } },
  'please escape': { name: 'workspace_read', arguments: { path: 'out/secret.txt' } },
  'please write': { name: 'workspace_write', arguments: { path: 'made/new.txt', content: 'written' } },
  'please edit': { name: 'workspace_edit', arguments: { path: 'notes.txt', old: '4711', new: '4712' } },
  'please echo': { name: 'workspace_shell', arguments: { command: 'echo granted' } },
  'please pwd': { name: 'workspace_shell', arguments: { command: 'pwd' } },
};

/** The fixture model server's base URL: what `fetch` reads. */
let modelBase = '';

function toolCalls(body: any): ScriptedToolCall[] | undefined {
  const last = lastMessage(body);
  if (last.role !== 'user') return undefined;
  if (last.content.includes('please fetch'))
    return [{ name: 'workspace_fetch', arguments: { url: `${modelBase}/models` } }];
  const found = Object.entries(CALLS).find(([words]) => last.content.includes(words));
  return found ? [found[1]] : undefined;
}
const reply = (body: any) => {
  const last = lastMessage(body);
  return last.role === 'tool' ? `tool said: ${last.content.slice(0, 300)}` : 'plain answer';
};

let h: TestHarness;
let base: string;
let root: string;

before(async () => {
  base = mkdtempSync(join(tmpdir(), 'th-ws-e2e-'));
  root = join(base, 'root');
  mkdirSync(join(base, 'outside'), { recursive: true });
  mkdirSync(root);
  writeFileSync(join(root, 'notes.txt'), 'The launch code is 4711.\n');
  writeFileSync(join(base, 'outside', 'secret.txt'), 'outside secret\n');
  symlinkSync(join(base, 'outside'), join(root, 'out'));
  const skill = join(base, 'data', 'skills', 'notes');
  mkdirSync(skill, { recursive: true });
  writeFileSync(join(skill, 'SKILL.md'), '---\nname: notes\ndescription: Keep notes\n---\nWrite them down.\n');
  h = await startTestHarness({
    dataDir: join(base, 'data'),
    script: { toolCalls, reply },
    config: (modelBaseURL) => {
      modelBase = modelBaseURL;
      return {
        workspace: {
          root,
          tools: ['read', 'list', 'search', 'write', 'edit', 'shell', 'fetch'],
          shell: { allow: ['Bash(echo:*)'] },
          fetch: { allowPrivateNetworks: true },
        },
      };
    },
  });
});

after(async () => {
  await h?.close();
  rmSync(base, { recursive: true, force: true });
});

/** Sends `text` and returns the turn's final text and the calls it reported. */
async function turn(text: string) {
  const client = await h.client('JSONRPC');
  const events = await collect(sendStream(client, text));
  return { final: finalOf(events), calls: callsIn(statusMessages(events)) };
}

describe('the built-in workspace tools (TOOL-6)', () => {
  it('TOOL-6: read, list and search run at once, shown as calls of the server "workspace"', async () => {
    const read = await turn('please read');
    assert.equal(textOf(read.final.message), 'tool said: The launch code is 4711.\n');
    assert.deepEqual(
      read.calls.map((c) => [c.tool, c.server, c.status]),
      [
        ['workspace_read', 'workspace', 'running'],
        ['workspace_read', 'workspace', 'succeeded'],
      ],
    );
    assert.equal(textOf((await turn('please list')).final.message), 'tool said: notes.txt\nout@');
    assert.equal(
      textOf((await turn('please search')).final.message),
      'tool said: notes.txt:1: The launch code is 4711.',
    );
  });

  it('TOOL-6: a path through a symlink out of the root is refused; the model is told, the turn goes on', async () => {
    const escaped = await turn('please escape');
    assert.equal(escaped.calls.at(-1)?.status, 'failed');
    assert.match(textOf(escaped.final.message), /outside the workspace/);
    assert.doesNotMatch(textOf(escaped.final.message), /outside secret/);
  });

  it('TOOL-6: write waits for /approve, then writes inside the root', async () => {
    const client = await h.client('JSONRPC');
    const paused = await pause(client, 'please write');
    assert.deepEqual(
      paused.waiting.map((c) => [c.tool, c.status]),
      [['workspace_write', 'awaiting-approval']],
    );
    assert.equal(existsSync(join(root, 'made', 'new.txt')), false, 'nothing is written before the approval');
    const answer = await send(client, '/approve', { taskId: paused.taskId });
    const ended = await turnEnded(client, paused.taskId, answer);
    assert.match(textOf(ended.status?.message), /Wrote 7 characters to made\/new\.txt/);
    assert.equal(readFileSync(join(root, 'made', 'new.txt'), 'utf8'), 'written');
  });

  it('TOOL-6: edit waits for approval; /deny leaves the file as it was', async () => {
    const client = await h.client('JSONRPC');
    const paused = await pause(client, 'please edit');
    assert.deepEqual(
      paused.waiting.map((c) => c.tool),
      ['workspace_edit'],
    );
    const answer = await send(client, '/deny', { taskId: paused.taskId });
    await turnEnded(client, paused.taskId, answer);
    assert.equal(readFileSync(join(root, 'notes.txt'), 'utf8'), 'The launch code is 4711.\n');
  });

  it('TOOL-6: shell runs a command a Bash(echo:*) rule grants, in the root', async () => {
    const echoed = await turn('please echo');
    assert.equal(echoed.final.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(textOf(echoed.final.message), 'tool said: granted\n[exit code 0]');
  });

  it('TOOL-6: shell asks for any other command, and runs it only once approved', async () => {
    const client = await h.client('JSONRPC');
    const paused = await pause(client, 'please pwd');
    assert.deepEqual(
      paused.waiting.map((c) => [c.tool, c.input]),
      [['workspace_shell', { command: 'pwd' }]],
    );
    const answer = await send(client, '/approve', { taskId: paused.taskId });
    const ended = await turnEnded(client, paused.taskId, answer);
    assert.match(textOf(ended.status?.message), /^tool said: .*\/root\n\[exit code 0\]$/);
  });

  it('TOOL-6: fetch runs at once, reported as a call of the server "workspace", its body given to the model', async () => {
    const fetched = await turn('please fetch');
    assert.deepEqual(
      fetched.calls.map((c) => [c.tool, c.server, c.status]),
      [
        ['workspace_fetch', 'workspace', 'running'],
        ['workspace_fetch', 'workspace', 'succeeded'],
      ],
    );
    assert.match(textOf(fetched.final.message), /^tool said: GET http:\/\/127\.0\.0\.1:\d+\/v1\/models: HTTP 200/);
  });

  it('TOOL-6: /tools lists the workspace tools, and the skill tool under "skills"', async () => {
    const client = await h.client('JSONRPC');
    const answered = await send(client, '/tools');
    const text = textOf(answered.status?.message);
    for (const tool of [
      'workspace_read',
      'workspace_list',
      'workspace_search',
      'workspace_write',
      'workspace_edit',
      'workspace_shell',
      'workspace_fetch',
    ])
      assert.match(text, new RegExp(tool));
    assert.match(text, /\nskills: connected, 1 tool\n {2}skill - Reads a skill/);
  });
});
