/**
 * The terminal chat opened on a task (`--task`) follows the task's sub-tasks that still run, as
 * it follows those a turn starts: a command's sub-task (`/spawn`) is said to be running and its
 * result shown when it ends, though the task itself is idle; a sub-agent started before the chat
 * opened has its line, with how to open it, and its end. Those ended already are not followed.
 * Against the harness and the fixture model (an agents folder for the `delegate` tool), on a
 * pretend terminal.
 */
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { subagentLine } from '../../src/client/chat-subtasks.js';
import { userMessage } from '../../src/client/connect.js';
import { isTerminal, subtaskChildrenOf } from '../../src/wire.js';
import { send, startTestHarness, type TestHarness } from '../e2e/support.js';
import { lastMessage, type ScriptedToolCall } from '../fixtures/model-server.js';
import { poll } from '../support/wait.js';
import { fakeChat, type FakeChat } from './fake-terminal.js';

const systemOf = (body: any): string =>
  body?.messages?.[0]?.role === 'system' ? String(body.messages[0].content) : '';

/** Each held reply goes on when the test lets it; replaced once let go. */
let letGo = () => {};
let held = new Promise<void>((resolve) => (letGo = resolve));

let root: string;
let h: TestHarness;
let client: Client;
let chat: FakeChat | undefined;

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'tiny-harness-chat-subtasks-'));
  mkdirSync(join(root, 'data', 'agents'), { recursive: true });
  writeFileSync(
    join(root, 'data', 'agents', 'slow.md'),
    '---\nname: slow\ndescription: Takes its time\n---\nAGENT-SLOW\n',
  );
  h = await startTestHarness({
    dataDir: join(root, 'data'),
    script: {
      toolCalls: (body): ScriptedToolCall[] | undefined =>
        !systemOf(body).includes('AGENT-') && lastMessage(body).content.includes('ask the slow agent')
          ? [{ name: 'delegate', arguments: { agent: 'slow', prompt: 'take your time' } }]
          : undefined,
      reply: (body) => {
        const last = lastMessage(body);
        return last.role === 'tool' ? `the agent said: ${last.content}` : `re: ${last.content}`;
      },
      hold: (body) =>
        systemOf(body).includes('AGENT-SLOW') || lastMessage(body).content.includes('slow work')
          ? { afterChunks: 0, until: held }
          : undefined,
    },
  });
  client = await h.client('JSONRPC');
});

afterEach(async () => {
  letGo();
  await chat?.close();
  chat = undefined;
  held = new Promise<void>((resolve) => (letGo = resolve));
});

after(async () => {
  letGo();
  await h?.close();
  rmSync(root, { recursive: true, force: true });
});

const read = (id: string): Promise<Task> => client.getTask({ tenant: '', id, historyLength: 0 });

/** `/spawn` on the task: the sub-task's id. */
async function spawn(taskId: string, instruction: string): Promise<string> {
  const replied = await send(client, `/spawn ${instruction}`, { taskId });
  const ref = replied.status?.message?.metadata?.task_ref;
  assert.equal(typeof ref, 'string');
  return ref as string;
}

/** How many lines, after the conversation shown, are exactly `line`. */
const linesAfterHistory = (text: string, taskId: string, line: string) =>
  text
    .slice(text.indexOf(`(resumed task ${taskId})`))
    .split(/[\r\n]+/)
    .filter((l) => l === line).length;

describe('tiny-harness chat --task: the sub-tasks still running', () => {
  it("on an idle task, a command's sub-task still running is said, followed, and its result shown when it ends; one ended is not", async () => {
    const parent = await send(client, 'Hello');
    assert.equal(parent.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'idle: no turn runs');
    const quick = await spawn(parent.id, 'a quick note');
    await poll('the quick sub-task ended', async () => isTerminal((await read(quick)).status?.state));
    const slow = await spawn(parent.id, 'slow work please');
    assert.equal((await read(slow)).status?.state, TaskState.TASK_STATE_WORKING);

    chat = await fakeChat(h.harness.url, { taskId: parent.id });
    const { terminal } = chat;
    await terminal.waitFor('the running sub-task said', (s) => s.includes(`sub-task ${slow} working`));
    letGo();
    await terminal.waitFor('its end and result', (s) => s.includes(`sub-task ${slow} completed:`));
    await terminal.waitFor('its result', (s) => s.includes('re: slow work please'));
    const text = terminal.text;
    assert.equal(linesAfterHistory(text, parent.id, `sub-task ${slow} working`), 1, text);
    assert.equal(linesAfterHistory(text, parent.id, `sub-task ${slow} completed:`), 1, 'said once');
    assert.ok(!text.includes(`sub-task ${quick} working`), 'an ended sub-task is not followed');
    assert.ok(!text.includes(`sub-task ${quick} completed:`), 'nor said again');
  });

  it('on a task whose turn waits for a sub-agent, the sub-agent has its line, once, and its end', async () => {
    const events = client.sendMessageStream({
      tenant: '',
      message: userMessage('please ask the slow agent', {}),
      configuration: undefined,
      metadata: {},
    });
    const first = await events.next();
    const parentId = first.value?.payload?.$case === 'task' ? first.value.payload.value.id : '';
    const rest = (async () => {
      for await (const _ of events);
    })();
    const agent = await poll('the sub-agent started', async () => {
      const [id] = subtaskChildrenOf((await read(parentId)).metadata);
      return id;
    });

    chat = await fakeChat(h.harness.url, { taskId: parentId });
    const { terminal } = chat;
    const working = subagentLine('slow', agent, TaskState.TASK_STATE_WORKING, h.harness.url);
    await terminal.waitFor('the sub-agent line', (s) => s.includes(working));
    letGo();
    const ended = subagentLine('slow', agent, TaskState.TASK_STATE_COMPLETED, h.harness.url);
    await terminal.waitFor('its end', (s) => s.includes(ended));
    await terminal.waitFor("the turn's reply", (s) => s.includes('the agent said: '));
    await rest;
    assert.equal(linesAfterHistory(terminal.text, parentId, working), 1, terminal.text);
    assert.equal(linesAfterHistory(terminal.text, parentId, ended), 1, terminal.text);
  });
});
