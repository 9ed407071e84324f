/**
 * Sub-agents end to end: the harness with an agents folder (Claude Code's agent files), the
 * fixture model scripted to call the `delegate` tool. Each sub-agent is a sub-task run with its
 * definition's system prompt, model and tools; its reply is the call's output; the parent is
 * told of its start and end in notes its model is not sent. Across two PostgreSQL instances, a
 * sub-agent's call answered on the other instance still ends the delegation on the first.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TaskState, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import {
  isFinalToolStatus,
  subtaskChildrenOf,
  subtaskNoteOf,
  TOOL_CALL_KEY,
  toolCallsOf,
  type ToolCallData,
} from '../../src/wire.js';
import { lastMessage, type ScriptedToolCall } from '../fixtures/model-server.js';
import { STDIO_FIXTURE } from '../fixtures/mcp-server.js';
import { needs } from '../needs.js';
import { POSTGRES, tempSchema } from '../support/postgres.js';
import { poll } from '../support/wait.js';
import { collect, dataOf, send, sendStream, startTestHarness, textOf, type TestHarness } from './support.js';

const AGENTS: Record<string, string> = {
  'reviewer.md': '---\nname: reviewer\ndescription: Reviews a text\n---\nAGENT-REVIEWER: review what you are given.\n',
  'writer.md':
    '---\nname: writer\ndescription: Writes a text\nmodel: large\ntools: [nothing_here]\n---\nAGENT-WRITER: write it.\n',
  'manager.md':
    '---\nname: manager\ndescription: Plans work and hands it on\ntools: delegate, nothing_here\n---\nAGENT-MANAGER\n',
  'slow.md': '---\nname: slow\ndescription: Takes its time\n---\nAGENT-SLOW\n',
  'poet.md': '---\nname: poet\ndescription: Writes poems\nmodel: sonnet\n---\nAGENT-POET\n',
  'echoer.md': '---\nname: echoer\ndescription: Echoes\ntools: fx_echo\n---\nAGENT-ECHOER\n',
  'bad.md': '---\nname: bad\n---\nNo description.\n',
};

const systemOf = (body: any): string => {
  const first = body?.messages?.[0];
  return first?.role === 'system' ? String(first.content) : '';
};
const offered = (body: any): string[] => (body?.tools ?? []).map((t: any) => t.function?.name);
const delegate = (agent: string, prompt: string): ScriptedToolCall => ({
  name: 'delegate',
  arguments: { agent, prompt },
});

function toolCalls(body: any): ScriptedToolCall[] | undefined {
  const last = lastMessage(body);
  if (last.role !== 'user') return undefined;
  const system = systemOf(body);
  if (system.includes('AGENT-MANAGER'))
    return offered(body).includes('delegate') ? [delegate('manager', 'plan deeper')] : undefined;
  if (system.includes('AGENT-ECHOER')) return [{ name: 'fx_echo', arguments: { text: 'hello' } }];
  if (system.includes('AGENT-')) return undefined;
  if (last.content.includes('delegate twice'))
    return [delegate('reviewer', 'review text A'), delegate('writer', 'write text B')];
  if (last.content.includes('delegate to nobody')) return [delegate('nobody', 'anything')];
  if (last.content.includes('delegate to the poet')) return [delegate('poet', 'a poem')];
  if (last.content.includes('delegate to the manager')) return [delegate('manager', 'plan it')];
  if (last.content.includes('delegate slowly again')) return [delegate('slow', 'wait three')];
  if (last.content.includes('delegate slowly')) return [delegate('slow', 'wait one'), delegate('slow', 'wait two')];
  if (last.content.includes('delegate an echo')) return [delegate('echoer', 'echo it')];
  return undefined;
}

function reply(body: any): string {
  const last = lastMessage(body);
  const system = systemOf(body);
  if (system.includes('AGENT-REVIEWER')) return `reviewed: ${last.content}`;
  if (system.includes('AGENT-WRITER')) return `written: ${last.content}`;
  if (system.includes('AGENT-MANAGER'))
    return last.role === 'tool' ? `manager got (${last.content})` : 'no delegate offered';
  if (system.includes('AGENT-ECHOER')) return `echoer got (${last.content})`;
  if (last.role !== 'tool') return 'plain answer';
  const results = (body.messages as any[]).filter((m) => m.role === 'tool').map((m) => String(m.content));
  return `tool said: ${results.join(' | ')}`;
}

/** The reviewer's and the writer's replies wait until both were asked: they run at once, or never end. */
let bothAsked!: () => void;
const bothAskedPromise = new Promise<void>((resolve) => (bothAsked = resolve));
let asked = 0;
function hold(body: any) {
  const system = systemOf(body);
  if (system.includes('AGENT-SLOW')) return { afterChunks: 0, until: new Promise(() => {}) };
  if (!system.includes('AGENT-REVIEWER') && !system.includes('AGENT-WRITER')) return undefined;
  if (++asked === 2) bothAsked();
  return { afterChunks: 0, until: bothAskedPromise };
}

function writeAgents(dir: string, names: readonly string[] = Object.keys(AGENTS)): void {
  mkdirSync(dir, { recursive: true });
  for (const name of names) writeFileSync(join(dir, name), AGENTS[name]!);
}

async function getTask(client: Client, id: string): Promise<Task> {
  return client.getTask({ tenant: '', id, historyLength: undefined });
}

/** The newest report of each call in a task's history. */
function callsOf(task: Task): ToolCallData[] {
  const newest = new Map<string, ToolCallData>();
  for (const message of task.history) for (const call of toolCallsOf(message.parts)) newest.set(call.id, call);
  for (const call of toolCallsOf(task.status?.message?.parts)) newest.set(call.id, call);
  return [...newest.values()];
}

const notesOf = (task: Task) =>
  task.history.flatMap((message) => {
    const note = subtaskNoteOf(message.metadata);
    return note ? [{ ...note, refs: message.referenceTaskIds, text: textOf(message) }] : [];
  });

let root: string;
let h: TestHarness;

before(async () => {
  root = mkdtempSync(join(tmpdir(), 'tiny-harness-agents-'));
  writeAgents(join(root, 'data', 'agents'));
  h = await startTestHarness({ dataDir: join(root, 'data'), script: { toolCalls, reply, hold } });
});

after(async () => {
  await h?.close();
  rmSync(root, { recursive: true, force: true });
});

describe('sub-agents (the delegate tool)', () => {
  it('TOOL-3 / CMD-30: two delegations in one step run at once as sub-tasks with their own prompt, model and tools; both results reach the next model request; the parent has a start and an end note of each, with task refs, which its model is not sent', async () => {
    const client = await h.client('JSONRPC');
    const parent = await send(client, 'please delegate twice');
    assert.equal(parent.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(
      textOf(parent.status?.message),
      'tool said: reviewed: review text A | written: write text B',
      "both sub-agents' replies are the calls' outputs",
    );
    const asked = h.chatRequests();
    const parentAsk = asked.find((body) => JSON.stringify(body.messages).includes('please delegate twice'))!;
    const tool = parentAsk.tools.find((t: any) => t.function?.name === 'delegate');
    assert.match(tool.function.description, /- reviewer: Reviews a text/);
    assert.match(tool.function.description, /- writer: Writes a text/);
    assert.ok(!tool.function.description.includes('bad'), 'a skipped file is not offered');

    const reviewer = asked.find((body) => systemOf(body).includes('AGENT-REVIEWER'))!;
    assert.equal(
      systemOf(reviewer),
      'AGENT-REVIEWER: review what you are given.',
      "the agent's body is its system prompt",
    );
    assert.equal(reviewer.model, 'small', 'no model: the parent’s');
    assert.ok(!JSON.stringify(reviewer.messages).includes('please delegate twice'), 'it reads only its prompt');
    assert.ok(!offered(reviewer).includes('delegate'), 'a sub-agent whose tools do not list delegate may not delegate');
    const writer = asked.find((body) => systemOf(body).includes('AGENT-WRITER'))!;
    assert.equal(writer.model, 'large', "the definition's model");
    assert.deepEqual(offered(writer), [], 'TOOL-3: only the tools its definition lists (none of them exists)');

    // As stored: the blocking answer's history holds the turn's own messages only.
    const stored = await getTask(client, parent.id);
    const children = subtaskChildrenOf(stored.metadata);
    assert.equal(children.length, 2);
    const notes = notesOf(stored);
    for (const id of children) {
      const started = notes.find((n) => n.id === id && n.state === 'TASK_STATE_WORKING');
      assert.ok(started?.agent, 'a start note names the agent');
      assert.deepEqual(started.refs, [id]);
      assert.equal(started.text, `Sub-agent ${started.agent} started as sub-task ${id}.`);
      const ended = notes.find((n) => n.id === id && n.state === 'TASK_STATE_COMPLETED');
      assert.equal(ended?.agent, started.agent, 'the end note names the agent too');
      assert.deepEqual(ended.refs, [id]);
      const child = await getTask(client, id);
      assert.equal(child.status?.state, TaskState.TASK_STATE_COMPLETED);
    }
    const calls = callsOf(stored).filter((c) => c.tool === 'delegate');
    assert.deepEqual(
      calls.map((c) => [c.server, c.status]),
      [
        ['agents', 'succeeded'],
        ['agents', 'succeeded'],
      ],
    );

    await send(client, 'and now?', { taskId: parent.id });
    const next = h.chatRequests().find((body) => JSON.stringify(body.messages).includes('and now?'))!;
    const sent = JSON.stringify(next.messages);
    assert.ok(sent.includes('reviewed: review text A'), 'the call and its result are sent');
    assert.ok(
      !sent.includes('Sub-agent reviewer started') && !sent.includes('completed. Its result'),
      'the notes are not',
    );
  });

  it('an unknown agent, and an agent whose model is not offered, are failed calls the model reads', async () => {
    const client = await h.client('JSONRPC');
    const nobody = await send(client, 'please delegate to nobody');
    assert.match(
      textOf(nobody.status?.message),
      /There is no agent named "nobody"\. Agents: echoer, manager, poet, reviewer, slow, writer\./,
    );
    const poet = await send(client, 'please delegate to the poet');
    assert.match(
      textOf(poet.status?.message),
      /The sub-agent poet was not started: The model sonnet is not offered here/,
    );
    assert.deepEqual(
      callsOf(await getTask(client, poet.id)).map((c) => c.status),
      ['failed'],
    );
  });

  it('a sub-agent whose tools list delegate may delegate, but never beyond agents.maxDepth (2)', async () => {
    const client = await h.client('JSONRPC');
    const task = await send(client, 'please delegate to the manager');
    assert.equal(textOf(task.status?.message), 'tool said: manager got (no delegate offered)');
    const managers = h
      .chatRequests()
      .filter((body) => systemOf(body).includes('AGENT-MANAGER') && lastMessage(body).role === 'user');
    assert.deepEqual(
      managers.map((body) => offered(body).includes('delegate')),
      [true, false],
      'at depth 1 it is offered delegate; at depth 2 it is not',
    );
  });

  it('CMD-31 / TOOL-4: the parent canceled while two sub-agents run cancels both, and leaves no call running', async () => {
    const client = await h.client('JSONRPC');
    const stream = sendStream(client, 'please delegate slowly');
    const first = await stream.next();
    assert.equal(first.value?.payload?.$case, 'task');
    const parentId = (first.value!.payload!.value as Task).id;
    const rest = collect(stream);
    for (const words of ['wait one', 'wait two'])
      await h.model.waitForRequest(
        (r) => systemOf(r.body).includes('AGENT-SLOW') && lastMessage(r.body).content.includes(words),
      );
    await client.cancelTask({ tenant: '', id: parentId, metadata: {} });
    await rest;
    const parent = await getTask(client, parentId);
    assert.equal(parent.status?.state, TaskState.TASK_STATE_CANCELED);
    const children = subtaskChildrenOf(parent.metadata);
    assert.equal(children.length, 2);
    for (const id of children)
      await poll(`sub-task ${id} canceled`, async () => {
        const child = await getTask(client, id);
        return child.status?.state === TaskState.TASK_STATE_CANCELED;
      });
    const calls = callsOf(parent);
    assert.equal(calls.length, 2);
    assert.ok(
      calls.every((c) => isFinalToolStatus(c.status) && c.status !== 'succeeded'),
      'no call shows running',
    );
    assert.ok(parent.history.some((m) => m.metadata?.[TOOL_CALL_KEY] !== undefined));
  });

  it('CMD-32 / TOOL-4: /stop on the parent while its sub-agent runs cancels the sub-task; the turn ends as a stopped one', async () => {
    const client = await h.client('JSONRPC');
    const stream = sendStream(client, 'please delegate slowly again');
    const parentId = ((await stream.next()).value!.payload!.value as Task).id;
    const rest = collect(stream);
    await h.model.waitForRequest(
      (r) => systemOf(r.body).includes('AGENT-SLOW') && lastMessage(r.body).content.includes('wait three'),
    );
    await send(client, '/stop', { taskId: parentId });
    await rest;
    const parent = await getTask(client, parentId);
    assert.equal(parent.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    const [childId] = subtaskChildrenOf(parent.metadata);
    await poll('the sub-task canceled', async () => {
      const child = await getTask(client, childId!);
      return child.status?.state === TaskState.TASK_STATE_CANCELED;
    });
    assert.ok(
      callsOf(parent).every((c) => isFinalToolStatus(c.status)),
      'no call shows running',
    );
  });

  it('/agents lists the agents with their model and tools, and the files skipped with why', async () => {
    const client = await h.client('JSONRPC');
    const listed = await send(client, '/agents');
    const text = textOf(listed.status?.message);
    assert.match(text, /^reviewer: Reviews a text\n {2}model: inherit; tools: all$/m);
    assert.match(text, /^writer: Writes a text\n {2}model: fixture:large; tools: nothing_here$/m);
    assert.match(text, /^ {2}model: sonnet \(not offered here: delegating to it fails\); tools: all$/m);
    assert.match(text, /Skipped:\n {2}bad\.md: "description" must be set/);
    const data = dataOf(listed.status?.message);
    assert.deepEqual(
      data.agents.find((a: any) => a.name === 'manager'),
      {
        name: 'manager',
        description: 'Plans work and hands it on',
        model: 'inherit',
        modelOffered: true,
        tools: ['delegate', 'nothing_here'],
      },
    );
    assert.equal(data.skipped.length, 1);
  });
});

describe('sub-agents and maxTurnsInFlight', () => {
  it('a delegation past the limit of turns in flight is a failed call that says so', async (t) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tiny-harness-agents-limit-'));
    writeAgents(join(dataDir, 'agents'), ['reviewer.md']);
    const limited = await startTestHarness({ dataDir, script: { toolCalls, reply }, config: { maxTurnsInFlight: 1 } });
    t.after(async () => {
      await limited.close();
      rmSync(dataDir, { recursive: true, force: true });
    });
    const client = await limited.client('JSONRPC');
    const task = await send(client, 'please delegate twice');
    const said = textOf(task.status?.message);
    assert.match(
      said,
      /The sub-agent reviewer was not started: The sub-task was not started: this server is at its limit of 1 running turn\. Delegate again once one has finished/,
    );
    assert.ok(!limited.chatRequests().some((body) => systemOf(body).includes('AGENT-')), 'no sub-agent ran');
  });
});

describe('sub-agents across instances on PostgreSQL', needs(POSTGRES), () => {
  it("TOOL-5: a sub-agent's call waiting for approval is approved on another instance; the delegation on the first returns its reply", async (t) => {
    const schema = await tempSchema();
    const dirs: string[] = [];
    const instances: TestHarness[] = [];
    t.after(async () => {
      await Promise.all(instances.map((instance) => instance.close()));
      await schema.drop();
      for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
    });
    const config = { mcpServers: { fx: { ...STDIO_FIXTURE, cwd: process.cwd(), approve: ['echo'] } } };
    for (let i = 0; i < 2; i += 1) {
      const dataDir = mkdtempSync(join(tmpdir(), 'tiny-harness-agents-pg-'));
      dirs.push(dataDir);
      // Only the first instance has the agent's file: the second runs its turn from what the sub-task stored.
      if (i === 0) writeAgents(join(dataDir, 'agents'), ['echoer.md']);
      instances.push(
        await startTestHarness({ dataDir, script: { toolCalls, reply }, config, harness: { databaseUrl: schema.url } }),
      );
    }
    const [a, b] = [await instances[0]!.client('JSONRPC'), await instances[1]!.client('JSONRPC')];
    const stream = sendStream(a, 'please delegate an echo');
    const parentId = ((await stream.next()).value!.payload!.value as Task).id;
    const rest = collect(stream);
    const request = await instances[0]!.model.waitForRequest((r) => systemOf(r.body).includes('AGENT-ECHOER'));
    assert.deepEqual(offered(request.body), ['fx_echo']);
    const childId = await poll('the sub-task waiting for approval, seen on the second instance', async () => {
      const [id] = subtaskChildrenOf((await getTask(b, parentId)).metadata);
      return id && (await getTask(b, id)).status?.state === TaskState.TASK_STATE_INPUT_REQUIRED ? id : undefined;
    });
    await collect(sendStream(b, '/approve', { taskId: childId }));
    const events = await rest;
    const final = events.at(-1)!.payload!.value as any;
    assert.equal(final.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.equal(textOf(final.status?.message), 'tool said: echoer got (echo: hello)');
    const child = await getTask(b, childId);
    assert.equal(child.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.ok(
      instances[1]!.chatRequests().some((body) => systemOf(body) === 'AGENT-ECHOER'),
      "the second instance ran the resumed turn with the agent's prompt from the sub-task",
    );
  });
});
