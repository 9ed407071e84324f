/**
 * A running sub-agent in the terminal chat: the note a parent receives when a delegated sub-task
 * starts (`tiny-harness/subtask-note` naming its agent, `TASK_STATE_WORKING`) is one line with
 * the way to open the sub-task; the sub-task is followed to its end, said once on one more line,
 * whether its end comes from the sub-task itself or from the parent's note. The agent is the SDK
 * alone (`bare-agent.ts`), which sends the notes the harness's `delegate` tool sends; the chat
 * runs in this process on a pretend terminal.
 */
import { after, afterEach, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { ChatScreen } from '../../src/client/chat-screen.js';
import { ChatSubtasks, subagentLine } from '../../src/client/chat-subtasks.js';
import { styleFor } from '../../src/client/render.js';
import type { SubtaskNote } from '../../src/wire.js';
import { connect, userMessage } from '../../src/client/connect.js';
import { TaskState } from '@a2a-js/sdk';
import { startBareAgent, type BareAgent } from './bare-agent.js';
import { fakeChat, FakeTerminal, type FakeChat } from './fake-terminal.js';

let bare: BareAgent;
let release!: () => void;
let chat: FakeChat | undefined;

/** Starts a task on the agent (a held one stays working until released), and returns its id. */
async function startTask(text: string): Promise<{ id: string; done: Promise<void> }> {
  const { client } = await connect(bare.url, []);
  const events = client.sendMessageStream({
    tenant: '',
    message: userMessage(text, {}),
    configuration: undefined,
    metadata: {},
  });
  const first = await events.next();
  const payload = first.value?.payload;
  assert.equal(payload?.$case, 'task');
  const done = (async () => {
    for await (const _ of events);
  })();
  return { id: payload.value.id, done };
}

/** How many times `text` was drawn as a line of its own. */
const count = (drawn: string, text: string) => drawn.split(/[\r\n]+/).filter((line) => line === text).length;

describe('tiny-harness chat: running sub-agents', () => {
  before(async () => {
    bare = await startBareAgent({ hold: new Promise<void>((resolve) => (release = resolve)) });
  });

  afterEach(async () => {
    await chat?.close();
    chat = undefined;
  });

  after(async () => {
    release();
    await bare?.close();
  });

  it('issue 35: a sub-agent started is one line with how to open it, followed to its end; waiting for approval is said too', async () => {
    const held = await startTask('hold');
    chat = await fakeChat(bare.url);
    const { terminal } = chat;
    terminal.press(`delegate ${held.id} TASK_STATE_WORKING TASK_STATE_INPUT_REQUIRED\r`);
    const working = subagentLine('reviewer', held.id, TaskState.TASK_STATE_WORKING, bare.url);
    const waiting = subagentLine('reviewer', held.id, TaskState.TASK_STATE_INPUT_REQUIRED, bare.url);
    await terminal.waitFor('the sub-agent lines', (s) => s.includes(working) && s.includes(waiting));
    assert.match(working, new RegExp(`^↳ sub-agent reviewer · sub-task ${held.id} · working — open it: `));
    assert.ok(working.endsWith(`npx tiny-harness chat ${bare.url} --task ${held.id}`), working);
    assert.ok(waiting.includes('· input required (its tool calls wait for approval) — open it: '), waiting);
    release();
    await held.done;
    const ended = subagentLine('reviewer', held.id, TaskState.TASK_STATE_COMPLETED, bare.url);
    assert.equal(ended, `↳ sub-agent reviewer · sub-task ${held.id} · completed`);
    await terminal.waitFor('the end, from following the sub-task', (s) => s.includes(ended));
    assert.equal(count(terminal.text, working), 1, 'said once');
  });

  it("issue 35: a sub-agent's end, told both by the parent's note and by following the sub-task, is said once, whichever comes first", async () => {
    const { id, done } = await startTask('quick');
    await done;
    const note = (state: string): SubtaskNote => ({ id, state, agent: 'reviewer' });
    const completed = subagentLine('reviewer', id, TaskState.TASK_STATE_COMPLETED, bare.url);
    for (const noteFirst of [true, false]) {
      const terminal = new FakeTerminal();
      const subtasks = new ChatSubtasks(await connect(bare.url, []), new ChatScreen(terminal.output, styleFor({})));
      subtasks.onSubtask(id, note('TASK_STATE_WORKING'));
      if (noteFirst) subtasks.onSubtask(id, note('TASK_STATE_COMPLETED'));
      await subtasks.settled();
      if (!noteFirst) subtasks.onSubtask(id, note('TASK_STATE_COMPLETED'));
      assert.equal(count(terminal.text, completed), 1, terminal.text);
      assert.equal(terminal.text.split('↳').length - 1, 2, 'its start and its end');
    }
  });
});
