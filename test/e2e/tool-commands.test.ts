/**
 * Commands that know about tools, end to end: MCP prompts as commands (listed on the card,
 * run as sub-tasks, following `prompts/list_changed`, CMD-14/CMD-16/CMD-30) and a command
 * file's `allowed-tools` (TOOL-3), with the fixture MCP server over stdio.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState, type Task } from '@a2a-js/sdk';
import { COMMANDS_EXTENSION_URI, toolCallsOf } from '../../src/wire.js';
import { lastMessage, type ScriptedToolCall } from '../fixtures/model-server.js';
import { STDIO_FIXTURE } from '../fixtures/mcp-server.js';
import { send, startTestHarness, textOf, type TestHarness } from './support.js';
import { poll } from '../support/wait.js';

/** The model calls the tool the words name; a tool result is answered quoting it. */
function toolCalls(body: any): ScriptedToolCall[] | undefined {
  const last = lastMessage(body);
  if (last.role !== 'user') return undefined;
  if (last.content.includes('please add prompt')) return [{ name: 'fx_add_prompt', arguments: {} }];
  if (last.content.includes('please fail')) return [{ name: 'fx_fail', arguments: {} }];
  if (last.content.includes('please echo')) return [{ name: 'fx_echo', arguments: { text: 'allowed' } }];
  return undefined;
}
const reply = (body: any) => {
  const last = lastMessage(body);
  return last.role === 'tool' ? `tool said: ${last.content.slice(0, 300)}` : `answer to ${last.content.slice(0, 80)}`;
};

let dir: string;
let h: TestHarness;

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tiny-harness-tool-commands-'));
  writeFileSync(
    join(dir, 'only-echo.md'),
    '---\ndescription: May call fx_echo only\nallowed-tools: fx_echo\ncontext: fork\n---\n$ARGUMENTS\n',
  );
  writeFileSync(
    join(dir, 'fx-all.md'),
    '---\ndescription: May call every fx tool\nallowed-tools:\n  - "fx:*"\ncontext: fork\n---\n$ARGUMENTS\n',
  );
  writeFileSync(
    join(dir, 'no-tools.md'),
    '---\ndescription: May call nothing\nallowed-tools: []\ncontext: fork\n---\n$ARGUMENTS\n',
  );
  h = await startTestHarness({
    script: { toolCalls, reply },
    config: { mcpServers: { fx: { ...STDIO_FIXTURE, cwd: process.cwd() } } },
    harness: { commandsDir: dir },
  });
});

after(async () => {
  await h?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function cardCommands(): Promise<Array<{ name: string; description: string; argument_hint: string }>> {
  const card = await (await h.client('JSONRPC')).getAgentCard();
  return card.capabilities!.extensions.find((e) => e.uri === COMMANDS_EXTENSION_URI)!.params!.commands as any;
}

/** The sub-task a command started, once it has ended. */
async function finished(client: Awaited<ReturnType<TestHarness['client']>>, answer: Task): Promise<Task> {
  const id = answer.status?.message?.metadata?.task_ref as string;
  assert.ok(id, `the command started a sub-task: ${textOf(answer.status?.message)}`);
  return poll(`the end of sub-task ${id}`, async () => {
    const task = await client.getTask({ tenant: '', id, historyLength: undefined });
    return task.status?.state === TaskState.TASK_STATE_COMPLETED || task.status?.state === TaskState.TASK_STATE_FAILED
      ? task
      : undefined;
  });
}

describe('MCP prompts as commands', () => {
  it('CMD-14: each prompt is a command on the card, its name by the extension rule, its description and arguments from the server; a taken name is skipped', async () => {
    const commands = await cardCommands();
    const byName = new Map(commands.map((c) => [c.name, c]));
    assert.deepEqual(byName.get('review'), {
      name: 'review',
      description: 'Review a file. (fx)',
      argument_hint: '<file> [focus]',
    });
    assert.equal(byName.get('summarize-notes')?.description, 'Summarize the notes. (fx)');
    assert.equal(byName.get('help')?.description, 'List the commands, or describe one', 'the built-in keeps its name');
    assert.equal(commands.filter((c) => c.name === 'help').length, 1);
    const names = commands.map((c) => c.name);
    assert.ok(names.indexOf('review') > names.indexOf('only-echo'), 'prompts come after the command files');
  });

  it('CMD-30: a prompt command starts a sub-task on the prompt with $ARGUMENTS given to its arguments', async () => {
    const client = await h.client('HTTP+JSON');
    const task = await send(client, 'hello');
    const answer = await send(client, '/review src/a.ts naming and tests', { taskId: task.id });
    assert.equal(answer.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'state unchanged');
    const child = await finished(client, answer);
    assert.equal(textOf(child.status?.message), 'answer to Review src/a.ts with a focus on naming and tests.');
  });

  it('CMD-12: a prompt command without its required argument says which, and starts nothing', async () => {
    const client = await h.client('JSONRPC');
    const answer = await send(client, '/review');
    assert.equal(textOf(answer.status?.message), 'Missing argument: file. Usage: <file> [focus]');
    assert.equal(answer.status?.message?.metadata?.task_ref, undefined);
  });

  it("CMD-16: the card follows the server's prompts/list_changed", async () => {
    const client = await h.client('JSONRPC');
    assert.ok(!(await cardCommands()).some((c) => c.name === 'later'));
    await send(client, 'please add prompt');
    await poll('/later on the card', async () => (await cardCommands()).some((c) => c.name === 'later'));
  });
});

describe('allowed-tools in command files (TOOL-3)', () => {
  it('TOOL-3: the sub-task is offered only the tools the file allows, and may call them', async () => {
    const client = await h.client('JSONRPC');
    const child = await finished(client, await send(client, '/only-echo please echo'));
    const offered = h
      .chatRequests()
      .find((r: any) => JSON.stringify(r.messages).includes('please echo') && r.tools)
      ?.tools.map((t: any) => t.function.name);
    assert.deepEqual(offered, ['fx_echo']);
    assert.deepEqual(
      toolCallsOf(child.history.at(-2)?.parts).map((c) => [c.tool, c.status]),
      [['fx_echo', 'succeeded']],
    );
    assert.equal(textOf(child.status?.message), 'tool said: echo: allowed');
  });

  it('TOOL-3: a call to a tool the file does not allow is refused: the model gets an error result and the tool is never called', async () => {
    const client = await h.client('JSONRPC');
    const child = await finished(client, await send(client, '/only-echo please fail'));
    assert.equal(child.history.flatMap((m) => toolCallsOf(m.parts)).length, 0, 'no call was made');
    const result = h
      .chatRequests()
      .at(-1)
      .messages.find((m: any) => m.role === 'tool');
    assert.match(String(result?.content), /fx_fail/, 'the model is told the tool is not available');
    assert.doesNotMatch(String(result?.content), /failed on purpose/, 'the fixture tool never ran');
  });

  it('TOOL-3: "server:*" allows every tool of that server; an empty list allows none', async () => {
    const client = await h.client('JSONRPC');
    await finished(client, await send(client, '/fx-all please echo'));
    const all = h
      .chatRequests()
      .find(
        (r: any) =>
          JSON.stringify(r.messages).includes('/fx-all') === false &&
          JSON.stringify(r.messages).includes('please echo') &&
          r.tools?.length > 1,
      );
    assert.ok(
      all?.tools.some((t: any) => t.function.name === 'fx_fail'),
      'every fx tool is offered',
    );
    const none = await finished(client, await send(client, '/no-tools please echo'));
    assert.equal(none.history.flatMap((m) => toolCallsOf(m.parts)).length, 0);
  });
});
