/**
 * Issue 37: any `AgentExecutor` of `@a2a-js/sdk` runs on the harness's engine (`startHarness({ agent })`,
 * `serve --agent`), its events checked against A2A 1.0 and stored by the engine's one writer.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Role, TaskState, type Message, type Task, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import {
  AgentEvent,
  type AgentExecutionEvent,
  type AgentExecutor,
  type ExecutionEventBus,
  type RequestContext,
} from '@a2a-js/sdk/server';
import { parseConfig } from '../../src/config/load.js';
import { startHarness } from '../../src/harness.js';
import { needs } from '../needs.js';
import { POSTGRES, tempSchema } from '../support/postgres.js';
import { cliProgram, spawnGroup } from '../support/processes.js';
import { startServerProcess } from './process.js';
import { startReceiver } from './push-receiver.js';
import { poll } from '../support/wait.js';
import { loadAgent } from '../../src/serve.js';
import { cardIdentity, HOSTED_IDENTITY, type CardIdentity } from '../../src/server/card.js';
import {
  collect,
  commandsEntry,
  createClient,
  send,
  sendStream,
  startTestHarness,
  textOf,
  TRANSPORTS,
  textPart,
  type TestHarness,
  userMessage,
} from './support.js';

/** The minimal custom agent of examples/ (plain JavaScript, as `serve --agent` loads it). */
const EXAMPLE = '../../examples/durable-agent.mjs';
const durableAgent = ((await import(EXAMPLE)) as { default: AgentExecutor }).default;

const cleanups: (() => Promise<unknown> | unknown)[] = [];
after(async () => {
  for (const cleanup of cleanups.reverse()) await cleanup();
});

/**
 * Echoes each message as an artifact and a status message, the way a2a-js samples do (a task
 * only for a new task); some texts make it misbehave: `wait` waits for `cancelTask`, `stuck`
 * never ends, and the `forbidden:` ones publish an event A2A 1.0 forbids.
 */
class EchoAgent implements AgentExecutor {
  readonly canceled: string[] = [];
  private readonly waiting = new Map<string, () => void>();

  async execute(request: RequestContext, bus: ExecutionEventBus): Promise<void> {
    const { taskId, contextId, userMessage, task } = request;
    const text = textOf(userMessage);
    const status = (state: TaskState, message?: Message): TaskStatusUpdateEvent => ({
      taskId,
      contextId,
      status: { state, message, timestamp: new Date().toISOString() },
      metadata: {},
    });
    if (!task)
      bus.publish(
        AgentEvent.task({
          id: taskId,
          contextId,
          status: status(1).status,
          history: [userMessage],
          artifacts: [],
          metadata: {},
        }),
      );
    bus.publish(AgentEvent.statusUpdate(status(TaskState.TASK_STATE_WORKING)));
    const forbidden = FORBIDDEN[text];
    if (forbidden) return bus.publish(forbidden(taskId, contextId));
    if (text === 'wait') {
      await new Promise<void>((resolve) => this.waiting.set(taskId, resolve));
      return bus.publish(AgentEvent.statusUpdate(status(TaskState.TASK_STATE_CANCELED)));
    }
    if (text === 'stuck') return new Promise(() => undefined);
    if (text === 'no end') return;
    if (text === 'a message')
      return bus.publish(AgentEvent.message({ ...agentReply('a message back'), taskId: '', contextId: '' }));
    const turns = (task?.history ?? [userMessage]).filter((message) => message.role === Role.ROLE_USER).length;
    const reply = `echo: ${text} (${turns})`;
    const artifact = {
      artifactId: randomUUID(),
      name: 'echo',
      description: '',
      parts: [textPart(reply)],
      metadata: {},
      extensions: [],
    };
    bus.publish(
      AgentEvent.artifactUpdate({ taskId, contextId, artifact, append: false, lastChunk: true, metadata: {} }),
    );
    const message: Message = {
      messageId: randomUUID(),
      role: Role.ROLE_AGENT,
      parts: [textPart(reply)],
      taskId,
      contextId,
      metadata: {},
      extensions: [],
      referenceTaskIds: [],
    };
    bus.publish(AgentEvent.statusUpdate(status(TaskState.TASK_STATE_INPUT_REQUIRED, message)));
    bus.finished();
  }

  async cancelTask(taskId: string): Promise<void> {
    this.canceled.push(taskId);
    this.waiting.get(taskId)?.();
  }
}

function agentReply(text: string): Message {
  return {
    messageId: randomUUID(),
    role: Role.ROLE_AGENT,
    parts: [textPart(text)],
    taskId: '',
    contextId: '',
    metadata: {},
    extensions: [],
    referenceTaskIds: [],
  };
}

/** Events A2A 1.0 forbids, by the message that makes the agent publish one, and the words of the rule. */
const FORBIDDEN: Record<string, (taskId: string, contextId: string) => AgentExecutionEvent> = {
  'forbidden: empty artifact': (taskId, contextId) =>
    AgentEvent.artifactUpdate({
      taskId,
      contextId,
      artifact: { artifactId: 'a', name: '', description: '', parts: [], metadata: {}, extensions: [] },
      append: false,
      lastChunk: true,
      metadata: {},
    }),
  'forbidden: unknown state': (taskId, contextId) =>
    AgentEvent.statusUpdate({
      taskId,
      contextId,
      status: { state: 42 as TaskState, message: undefined, timestamp: '' },
      metadata: {},
    }),
  "forbidden: another task's id": (_taskId, contextId) =>
    AgentEvent.statusUpdate({
      taskId: randomUUID(),
      contextId,
      status: { state: TaskState.TASK_STATE_COMPLETED, message: undefined, timestamp: '' },
      metadata: {},
    }),
  'forbidden: a second task': (taskId, contextId) =>
    AgentEvent.task({
      id: taskId,
      contextId,
      status: { state: TaskState.TASK_STATE_SUBMITTED, message: undefined, timestamp: '' },
      history: [],
      artifacts: [],
      metadata: {},
    }),
};
const RULES: Record<string, RegExp> = {
  'forbidden: empty artifact': /at least one part/,
  'forbidden: unknown state': /unknown state/,
  "forbidden: another task's id": /another task's id/,
  'forbidden: a second task': /second task/,
};

async function hosted(
  agent: AgentExecutor,
  config: Record<string, unknown> = {},
  agentCard?: CardIdentity,
): Promise<TestHarness> {
  const h = await startTestHarness({ harness: { agent, agentCard }, config });
  cleanups.push(() => h.close());
  return h;
}

describe('issue 37: a hosted AgentExecutor', () => {
  it('issue 37: answers a message on JSON-RPC, HTTP+JSON and gRPC, blocking and streaming', async () => {
    const h = await hosted(new EchoAgent());
    for (const transport of TRANSPORTS) {
      const client = await h.client(transport);
      const task = await send(client, `hello over ${transport}`);
      assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, transport);
      assert.equal(textOf(task.status?.message), `echo: hello over ${transport} (1)`);
      assert.equal(textOf(task.artifacts[0] as any), `echo: hello over ${transport} (1)`);
      const events = await collect(sendStream(client, 'again', { taskId: task.id }));
      const last = events.at(-1)!.payload;
      assert.equal(last?.$case, 'statusUpdate', transport);
      assert.equal(textOf((last as any).value.status.message), 'echo: again (2)', 'the agent saw the stored task');
    }
    assert.equal(h.chatRequests().length, 0, 'no model was asked');
  });

  it('issue 37: its task survives a restart on SQLite: a new harness on the same data folder reads and continues it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tiny-harness-hosted-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const first = await startTestHarness({ dataDir, harness: { agent: durableAgent } });
    const task = await send(await first.client('JSONRPC'), 'one');
    await first.close();
    const second = await startTestHarness({ dataDir, harness: { agent: durableAgent } });
    cleanups.push(() => second.close());
    const client = await second.client('HTTP+JSON');
    const stored = await client.getTask({ tenant: '', id: task.id, historyLength: undefined });
    assert.equal(textOf(stored.status?.message), 'echo: one (message 1 of this task)');
    const next = await send(client, 'two', { taskId: task.id });
    assert.equal(textOf(next.status?.message), 'echo: two (message 2 of this task)');
  });

  it('issue 37: refuses each event A2A 1.0 forbids: the turn ends FAILED naming the rule, and the next request is served', async () => {
    const h = await hosted(new EchoAgent());
    const client = await h.client('JSONRPC');
    for (const [text, rule] of Object.entries(RULES)) {
      const task = await send(client, text);
      assert.equal(task.status?.state, TaskState.TASK_STATE_FAILED, text);
      assert.match(textOf(task.status?.message), /A2A 1\.0 forbids/);
      assert.match(textOf(task.status?.message), rule);
      const next = await send(client, 'still here');
      assert.equal(textOf(next.status?.message), 'echo: still here (1)');
    }
    const unended = await send(client, 'no end');
    assert.equal(unended.status?.state, TaskState.TASK_STATE_FAILED);
    assert.match(textOf(unended.status?.message), /ended without a final status/);
  });

  it("issue 37: CancelTask reaches the agent's cancelTask, and the task ends CANCELED", async () => {
    const agent = new EchoAgent();
    const h = await hosted(agent);
    const client = await h.client('GRPC');
    const stream = sendStream(client, 'wait');
    let taskId = '';
    for await (const event of stream) {
      if (event.payload?.$case === 'task') taskId = event.payload.value.id;
      if (event.payload?.$case === 'statusUpdate' && event.payload.value.status?.state === TaskState.TASK_STATE_WORKING)
        break;
    }
    const canceled = await client.cancelTask({ tenant: '', id: taskId, metadata: {} });
    assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
    assert.deepEqual(agent.canceled, [taskId]);
  });

  it("issue 37: /stop reaches the agent's cancelTask, and the turn ends as a stopped turn does", async () => {
    const agent = new EchoAgent();
    const h = await hosted(agent);
    const client = await h.client('JSONRPC');
    let taskId = '';
    let last: TaskStatusUpdateEvent | undefined;
    // The turn's own stream, read to its end: `/stop` is sent once the agent is working.
    for await (const event of sendStream(client, 'wait')) {
      if (event.payload?.$case === 'task') taskId = event.payload.value.id;
      if (event.payload?.$case !== 'statusUpdate') continue;
      last = event.payload.value;
      if (last.status?.state === TaskState.TASK_STATE_WORKING && !last.status.message)
        await send(client, '/stop', { taskId });
    }
    assert.equal(last?.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.match(textOf(last?.status?.message), /stopped by the user/);
    assert.deepEqual(agent.canceled, [taskId]);
  });

  it('issue 37: an agent that never ends its turn is ended at modelTimeoutMs, saying so, and asked to stop', async () => {
    const agent = new EchoAgent();
    const h = await hosted(agent, { modelTimeoutMs: 1000 });
    const task = await send(await h.client('HTTP+JSON'), 'stuck');
    assert.equal(task.status?.state, TaskState.TASK_STATE_FAILED);
    assert.match(textOf(task.status?.message), /did not end its turn within modelTimeoutMs \(1000 ms\)/);
    assert.deepEqual(agent.canceled, [task.id]);
  });

  it("issue 37: a message the agent answers with is a blocking send's answer on every transport; the task keeps it as its final status, in turnEndState", async () => {
    const h = await hosted(new EchoAgent());
    for (const transport of TRANSPORTS) {
      const client = await h.client(transport);
      const result = await client.sendMessage({
        tenant: '',
        message: userMessage('a message'),
        configuration: undefined,
        metadata: {},
      });
      assert.ok(!('status' in result), `a Message, as the SDK's own handler answers, on ${transport}`);
      const reply = result as Message;
      assert.equal(textOf(reply), 'a message back');
      const task = await client.getTask({ tenant: '', id: reply.taskId, historyLength: undefined });
      assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
      assert.equal(task.status?.message?.messageId, reply.messageId, 'the reply names its task, which holds it');
      // A stream is the task's, as A2A has a stream after a Task: its end holds the message.
      const events = await collect(sendStream(client, 'a message', { taskId: task.id }));
      const end = events.at(-1)!.payload;
      assert.equal(end?.$case, 'statusUpdate');
      assert.equal(textOf((end!.value as TaskStatusUpdateEvent).status?.message), 'a message back');
    }
  });

  it('issue 37: a drain ends a running turn as interrupted and reaches cancelTask; a restart finds the task so', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tiny-harness-hosted-drain-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const agent = new EchoAgent();
    const first = await startTestHarness({ dataDir, harness: { agent } });
    const client = await first.client('JSONRPC');
    let taskId = '';
    for await (const event of sendStream(client, 'wait')) {
      if (event.payload?.$case === 'task') taskId = event.payload.value.id;
      if (event.payload?.$case === 'statusUpdate' && event.payload.value.status?.state === TaskState.TASK_STATE_WORKING)
        break;
    }
    await first.close();
    assert.deepEqual(agent.canceled, [taskId]);
    const second = await startTestHarness({ dataDir, harness: { agent: new EchoAgent() } });
    cleanups.push(() => second.close());
    const task = await (await second.client('JSONRPC')).getTask({ tenant: '', id: taskId, historyLength: undefined });
    assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED);
    assert.match(textOf(task.status?.message), /interrupted/);
  });

  it("issue 37: with auth, each user sees only their own tasks of the agent's", async () => {
    const tokens = new Map([
      ['alice-token', 'alice'],
      ['bob-token', 'bob'],
    ]);
    const h = await startTestHarness({ harness: { agent: new EchoAgent(), auth: { tokens } } });
    cleanups.push(() => h.close());
    const alice = await h.client('HTTP+JSON', { Authorization: 'Bearer alice-token' });
    const bob = await h.client('HTTP+JSON', { Authorization: 'Bearer bob-token' });
    const task = await send(alice, 'mine');
    assert.equal(textOf(task.status?.message), 'echo: mine (1)');
    await assert.rejects(bob.getTask({ tenant: '', id: task.id, historyLength: undefined }));
    await assert.rejects(send(bob, 'theirs?', { taskId: task.id }));
  });

  it("issue 37: push notifications deliver the agent's events", async () => {
    const receiver = await startReceiver();
    cleanups.push(() => receiver.close());
    const h = await hosted(new EchoAgent(), { push: { allowPrivateNetworks: true } });
    const client = await h.client('JSONRPC');
    const pushConfig = { tenant: '', id: 'hook', taskId: '', url: receiver.url, token: 't', authentication: undefined };
    const task = await client.sendMessage({
      tenant: '',
      message: userMessage('pushed'),
      configuration: { acceptedOutputModes: [], taskPushNotificationConfig: pushConfig, returnImmediately: false },
      metadata: {},
    });
    await poll('the final status delivered', () =>
      receiver.received.some(
        (x) => x.kind === 'statusUpdate' && /INPUT_REQUIRED/.test(String(x.body.statusUpdate.status?.state)),
      ),
    );
    assert.ok(
      receiver.received.some((x) => x.kind === 'artifactUpdate'),
      'the artifact was delivered',
    );
    assert.ok('id' in task);
  });

  it('issue 37: a command file answers on a hosted agent; one with context: fork starts a sub-task the agent runs', async () => {
    const commandsDir = mkdtempSync(join(tmpdir(), 'tiny-harness-hosted-commands-'));
    cleanups.push(() => rmSync(commandsDir, { recursive: true, force: true }));
    writeFileSync(join(commandsDir, 'shout.md'), '---\ndescription: Shout it\n---\nSHOUT $ARGUMENTS\n');
    writeFileSync(
      join(commandsDir, 'aside.md'),
      '---\ndescription: On the side\ncontext: fork\n---\nAside: $ARGUMENTS\n',
    );
    const h = await startTestHarness({ harness: { agent: new EchoAgent(), commandsDir } });
    cleanups.push(() => h.close());
    const client = await h.client('JSONRPC');
    const shouted = await send(client, '/shout hi');
    // An inline command file's prompt runs as a turn of the task (CMD-38): the agent's.
    const answered = await poll('the prompt answered', async () => {
      const task = await client.getTask({ tenant: '', id: shouted.id, historyLength: undefined });
      return /^echo:/.test(textOf(task.status?.message)) ? task : undefined;
    });
    assert.match(textOf(answered.status?.message), /^echo: SHOUT hi/);
    const replied = await send(client, '/aside note', { taskId: shouted.id });
    const ref = replied.status!.message!.metadata!.task_ref as string;
    const child = await poll('the sub-task answered', async () => {
      const task = await client.getTask({ tenant: '', id: ref, historyLength: undefined });
      return task.status?.state === TaskState.TASK_STATE_INPUT_REQUIRED ? task : undefined;
    });
    assert.equal(textOf(child.status?.message), 'echo: Aside: note (1)');
  });

  it('issue 37: /help and /status answer on a hosted agent, and /model is not offered', async () => {
    const h = await hosted(new EchoAgent());
    const client = await h.client('JSONRPC');
    const task = await send(client, 'hello');
    const help = textOf((await send(client, '/help', { taskId: task.id })).status?.message);
    assert.match(help, /\/status/);
    assert.match(help, /\/stop/);
    assert.doesNotMatch(help, /\/model|\/compact|\/spawn/);
    const status = textOf((await send(client, '/status', { taskId: task.id })).status?.message);
    assert.match(status, /INPUT_REQUIRED|input.required/i);
    assert.match(status, /Model: none \(an AgentExecutor runs the turns\)/);
    // Not a command here: an ordinary message, which is the agent's (as any unregistered `/word` is).
    const model = await send(client, '/model', { taskId: task.id });
    assert.match(textOf(model.status?.message), /^echo: \/model/);
  });
});

describe('issue 37: a hosted AgentExecutor on PostgreSQL', needs(POSTGRES), () => {
  it('issue 37: a task begun on one instance is continued on another', async () => {
    const schema = await tempSchema();
    cleanups.push(() => schema.drop());
    const instances = [];
    for (let i = 0; i < 2; i++) {
      const harness = await startHarness({
        config: parseConfig(JSON.stringify({ detectOllama: false, drainTimeoutMs: 0, instructions: [] })),
        dataDir: mkdtempSync(join(tmpdir(), 'tiny-harness-hosted-pg-')),
        databaseUrl: schema.url,
        host: '127.0.0.1',
        port: 0,
        env: {},
        agent: new EchoAgent(),
      });
      cleanups.push(() => harness.close());
      instances.push(harness);
    }
    const task = await send(await createClient(instances[0]!.url, 'JSONRPC'), 'one');
    const next = await send(await createClient(instances[1]!.url, 'HTTP+JSON'), 'two', { taskId: task.id });
    assert.equal(textOf(next.status?.message), 'echo: two (2)');
  });
});

describe('issue 37: the AgentExecutor written as the SDK samples write theirs (examples/sdk-sample-agent.mjs)', () => {
  it('issue 37: answers with a COMPLETED task and its artifact, and a cancel reaches it', async () => {
    const { agent, card } = await loadAgent('examples/sdk-sample-agent.mjs');
    const h = await hosted(agent, {}, card);
    const client = await h.client('HTTP+JSON');
    const task = await send(client, 'hi there');
    assert.equal(task.status?.state, TaskState.TASK_STATE_COMPLETED);
    assert.equal(textOf(task.artifacts[0] as any), "Hello! You said: 'hi there'.");
    const stream = sendStream(client, 'slow');
    for await (const event of stream) {
      if (
        event.payload?.$case === 'statusUpdate' &&
        event.payload.value.status?.state === TaskState.TASK_STATE_WORKING
      ) {
        const canceled = await client.cancelTask({ tenant: '', id: event.payload.value.taskId, metadata: {} });
        assert.equal(canceled.status?.state, TaskState.TASK_STATE_CANCELED);
        break;
      }
    }
  });
});

describe("issue 37: a hosted agent's card", () => {
  it("issue 37: names the module's agent, its description and skills; the commands and the engine's extensions stay", async () => {
    const { agent, card } = await loadAgent('examples/sdk-sample-agent.mjs');
    const served = await (
      await fetch(`${(await hosted(agent, {}, card)).harness.url}/.well-known/agent-card.json`)
    ).json();
    assert.equal(served.name, 'Greeting Agent');
    assert.equal(served.description, 'Greets whoever writes to it, repeating what they said.');
    assert.deepEqual(
      served.skills.map((skill: { id: string }) => skill.id),
      ['greeting'],
    );
    assert.ok(commandsEntry(served), 'the Commands extension is declared');
  });

  it('issue 37: an agent without a card export is not described as the model loop (no chat skill, no language model)', async () => {
    const served = await (
      await fetch(`${(await hosted(new EchoAgent())).harness.url}/.well-known/agent-card.json`)
    ).json();
    assert.equal(served.name, HOSTED_IDENTITY.name);
    assert.doesNotMatch(served.description, /language model|\/model/);
    assert.deepEqual(
      served.skills.map((skill: { id: string }) => skill.id),
      ['agent'],
    );
  });

  it('issue 37: a card export that is not a card names the field; the missing arrays of a skill are filled', () => {
    assert.deepEqual(cardIdentity({ name: 'x', skills: [] }), {
      problem: 'description: Invalid input: expected string, received undefined',
    });
    const card = cardIdentity({ name: 'x', description: 'y', skills: [{ id: 's', name: 'S', description: 'z' }] });
    assert.ok(!('problem' in card));
    assert.deepEqual(card.skills[0], {
      id: 's',
      name: 'S',
      description: 'z',
      tags: [],
      examples: [],
      inputModes: [],
      outputModes: [],
      securityRequirements: [],
    });
  });
});

describe('issue 37: serve --agent', () => {
  it('issue 37: serves the default export of a module named from the working directory', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tiny-harness-agent-cli-'));
    cleanups.push(() => rmSync(dataDir, { recursive: true, force: true }));
    const server = await startServerProcess(['--data-dir', dataDir, '--agent', 'examples/durable-agent.mjs']);
    cleanups.push(() => server.stop('SIGKILL'));
    const task: Task = await send(await createClient(server.url, 'JSONRPC'), 'hi');
    assert.equal(textOf(task.status?.message), 'echo: hi (message 1 of this task)');
    // The agent answers its turns itself: no list of models offered to mislead the operator.
    assert.doesNotMatch(server.stderr(), /Models offered/);
  });

  it('issue 37: a missing module or one whose default export is no AgentExecutor is refused in one line, no stack trace', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tiny-harness-agent-bad-'));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    writeFileSync(join(dir, 'bad.mjs'), 'export default { execute() {} };\n');
    writeFileSync(
      join(dir, 'bad-card.mjs'),
      'export const card = { name: 3 };\nexport default { execute() {}, cancelTask() {} };\n',
    );
    for (const [module, said] of [
      [join(dir, 'missing.mjs'), /no such file/],
      [join(dir, 'bad.mjs'), /not an AgentExecutor/],
      [join(dir, 'bad-card.mjs'), /its card export is not a card: name:/],
    ] as const) {
      const child = spawnGroup(
        process.execPath,
        [...cliProgram(), 'serve', '--port', '0', '--data-dir', dir, '--agent', module],
        {},
      );
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const code = await new Promise((resolve) => child.once('exit', resolve));
      assert.equal(code, 2, stderr);
      assert.match(stderr, said);
      assert.doesNotMatch(stderr, /\n\s+at /, 'no stack trace');
    }
  });
});
