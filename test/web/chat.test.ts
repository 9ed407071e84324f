/**
 * The page's conversation logic without a browser: how stream events are read (command replies
 * and sub-task links told apart from the model's reply, a task's old status message ignored),
 * how the task and context are kept, and the card's JSON-RPC address moved onto the page's origin.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { TaskState, type AgentCard, type StreamResponse } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import {
  activateCommands,
  besidePage,
  Conversation,
  harnessRoot,
  interpret,
  newId,
  type ChatEvent,
} from '../../web/src/chat.js';
import { COMMANDS_EXTENSION_URI, GENERATION_KEY, QUEUED_KEY, stateName, WHILE_BUSY_KEY } from '../../src/wire.js';
import { textPart } from '../e2e/support.js';

const agentMessage = (text: string, metadata: Record<string, unknown> = {}, referenceTaskIds: string[] = []) => ({
  messageId: newId(),
  taskId: 't1',
  contextId: 'c1',
  role: 2,
  parts: [textPart(text)],
  metadata,
  extensions: [],
  referenceTaskIds,
});

function task(id: string, state: TaskState, statusText?: string): StreamResponse {
  return {
    payload: {
      $case: 'task',
      value: {
        id,
        contextId: 'c1',
        status: { state, message: statusText ? agentMessage(statusText) : undefined, timestamp: '' },
        artifacts: [],
        history: [],
        metadata: {},
      },
    },
  } as StreamResponse;
}

function status(
  taskId: string,
  state: TaskState,
  message?: ReturnType<typeof agentMessage>,
  metadata: Record<string, unknown> = {},
): StreamResponse {
  return {
    payload: {
      $case: 'statusUpdate',
      value: { taskId, contextId: 'c1', status: { state, message, timestamp: '' }, metadata },
    },
  } as StreamResponse;
}

function chunk(text: string, append: boolean): StreamResponse {
  return {
    payload: {
      $case: 'artifactUpdate',
      value: {
        taskId: 't1',
        contextId: 'c1',
        artifact: {
          artifactId: 'a1',
          name: 'response',
          description: '',
          parts: text ? [textPart(text)] : [],
          metadata: {},
          extensions: [],
        },
        append,
        lastChunk: false,
        metadata: {},
      },
    },
  } as StreamResponse;
}

const withoutIds = (events: ChatEvent[]) => events.map((e) => ('messageId' in e ? { ...e, messageId: '-' } : e));

describe('reading stream events', () => {
  it('a task event gives the ids and state, never its old status message', () => {
    assert.deepEqual(interpret(task('t1', TaskState.TASK_STATE_INPUT_REQUIRED, 'the previous reply')), [
      { kind: 'task', taskId: 't1', contextId: 'c1', state: TaskState.TASK_STATE_INPUT_REQUIRED },
    ]);
  });

  it('artifact updates are the reply streaming; empty ones (the last chunk) are nothing', () => {
    assert.deepEqual(interpret(chunk('Hello ', false)), [
      { kind: 'chunk', artifactId: 'a1', text: 'Hello ', append: false },
    ]);
    assert.deepEqual(interpret(chunk('world', true)), [
      { kind: 'chunk', artifactId: 'a1', text: 'world', append: true },
    ]);
    assert.deepEqual(interpret(chunk('', true)), []);
  });

  it('a status message with metadata.command is a command reply, with its sub-task from task_ref', () => {
    const reply = agentMessage('This task uses fixture:small.', { command: 'model' });
    assert.deepEqual(
      withoutIds(interpret(status('t1', TaskState.TASK_STATE_INPUT_REQUIRED, reply, { command: 'model' }))),
      [
        { kind: 'state', taskId: 't1', contextId: 'c1', state: TaskState.TASK_STATE_INPUT_REQUIRED },
        { kind: 'command', messageId: '-', command: 'model', text: 'This task uses fixture:small.' },
      ],
    );
    const spawned = agentMessage('Started sub-task s1.', { command: 'spawn', task_ref: 's1' }, ['s1']);
    assert.deepEqual(
      withoutIds(
        interpret(status('t1', TaskState.TASK_STATE_INPUT_REQUIRED, spawned, { command: 'spawn', task_ref: 's1' })),
      ).at(1),
      {
        kind: 'command',
        messageId: '-',
        command: 'spawn',
        text: 'Started sub-task s1.',
        taskRef: 's1',
      },
    );
  });

  it('a status message without a command is the reply; a sub-task note is a note', () => {
    assert.deepEqual(
      withoutIds(interpret(status('t1', TaskState.TASK_STATE_INPUT_REQUIRED, agentMessage('Hello world')))).at(1),
      {
        kind: 'reply',
        messageId: '-',
        text: 'Hello world',
      },
    );
    const note = agentMessage('Sub-task s1 (/spawn) completed.', {
      'tiny-harness/subtask-note': { id: 's1', state: 'TASK_STATE_COMPLETED' },
    });
    assert.deepEqual(withoutIds(interpret(status('t1', TaskState.TASK_STATE_INPUT_REQUIRED, note))).at(1), {
      kind: 'note',
      messageId: '-',
      text: 'Sub-task s1 (/spawn) completed.',
      subtaskId: 's1',
      subtaskEnded: true,
    });
    const waiting = agentMessage('Sub-task s2 (/spawn) is waiting for approval of its tool calls.', {
      'tiny-harness/subtask-note': { id: 's2', state: 'TASK_STATE_INPUT_REQUIRED' },
    });
    assert.equal(
      interpret(status('t1', TaskState.TASK_STATE_INPUT_REQUIRED, waiting)).find((e) => e.kind === 'note')
        ?.subtaskEnded,
      false,
      'a sub-task waiting for approval goes on',
    );
  });

  it('a retrying notice while the turn goes on is the harness’s notice, not the reply', () => {
    const retrying = agentMessage('Model m failed: ... Retrying (attempt 2 of 3)…', {
      'tiny-harness/notice': 'retrying',
    });
    assert.deepEqual(withoutIds(interpret(status('t1', TaskState.TASK_STATE_WORKING, retrying))).at(1), {
      kind: 'notice',
      messageId: '-',
      text: 'Model m failed: ... Retrying (attempt 2 of 3)…',
    });
  });

  it('names states for people', () => {
    assert.equal(stateName(TaskState.TASK_STATE_INPUT_REQUIRED), 'input required');
    assert.equal(stateName(TaskState.TASK_STATE_COMPLETED), 'completed');
    assert.equal(stateName(undefined), 'unknown');
  });
});

/** A client whose streams are scripted, recording the messages sent. */
function scriptedClient(streams: StreamResponse[][]) {
  const sent: any[] = [];
  const client = {
    async *sendMessageStream(params: any) {
      sent.push(params.message);
      yield* streams.shift() ?? [];
    },
  } as unknown as Client;
  return { client, sent };
}

async function drain(conversation: Conversation, text: string): Promise<ChatEvent[]> {
  const events: ChatEvent[] = [];
  for await (const event of conversation.send(text)) events.push(event);
  return events;
}

describe('the conversation', () => {
  it('stays on one task, and after a terminal state starts a new task in the same context', async () => {
    const { client, sent } = scriptedClient([
      [
        task('t1', TaskState.TASK_STATE_SUBMITTED),
        status('t1', TaskState.TASK_STATE_INPUT_REQUIRED, agentMessage('one')),
      ],
      [task('t1', TaskState.TASK_STATE_WORKING), status('t1', TaskState.TASK_STATE_COMPLETED, agentMessage('two'))],
      [
        task('t2', TaskState.TASK_STATE_SUBMITTED),
        status('t2', TaskState.TASK_STATE_INPUT_REQUIRED, agentMessage('three')),
      ],
    ]);
    const conversation = new Conversation(client);
    await drain(conversation, 'first');
    assert.equal(conversation.taskId, 't1');
    await drain(conversation, 'second');
    assert.equal(conversation.taskId, undefined, 'the task completed');
    assert.equal(conversation.contextId, 'c1');
    await drain(conversation, 'third');
    assert.deepEqual(
      sent.map((m) => [m.taskId, m.contextId, m.parts[0].content.value, m.role]),
      [
        ['', '', 'first', 1],
        ['t1', 'c1', 'second', 1],
        ['', 'c1', 'third', 1],
      ],
    );
    assert.equal(conversation.taskId, 't2');
    conversation.reset();
    assert.equal(conversation.taskId, undefined);
    assert.equal(conversation.contextId, undefined);
  });

  /** The Task a queued message's stream sends: first marked with its place, then (`holding`) its own turn's. */
  function queuedTask(generation: number, place?: { messageId: string; position: number }, holding?: string) {
    const event = task('t1', TaskState.TASK_STATE_WORKING) as any;
    event.payload.value.metadata = { [GENERATION_KEY]: generation, ...(place ? { [QUEUED_KEY]: place } : {}) };
    if (holding) event.payload.value.history = [{ ...agentMessage('x'), role: 1, messageId: holding }];
    return event as StreamResponse;
  }
  const reply = (generation: number) => {
    const event = status('t1', TaskState.TASK_STATE_INPUT_REQUIRED, agentMessage('done')) as any;
    event.payload.value.metadata = { [GENERATION_KEY]: generation };
    return event as StreamResponse;
  };

  it("while-busy: a message sent with enqueue shows its place, then that its own turn started (the task event holding it), then the turn's events", async () => {
    const { client, sent } = scriptedClient([
      [queuedTask(5, { messageId: 'q1', position: 2 }), queuedTask(9, undefined, 'q1'), reply(10)],
    ]);
    const conversation = new Conversation(client);
    conversation.taskId = 't1';
    const events: ChatEvent[] = [];
    for await (const event of conversation.send('later', {
      messageId: 'q1',
      metadata: { [WHILE_BUSY_KEY]: 'enqueue' },
    }))
      events.push(event);
    assert.deepEqual(sent[0].metadata, { [WHILE_BUSY_KEY]: 'enqueue' });
    assert.equal(sent[0].messageId, 'q1');
    assert.deepEqual(
      events.map((e) => e.kind),
      ['task', 'queued', 'started', 'task', 'state', 'reply'],
    );
    assert.deepEqual(events[1], { kind: 'queued', messageId: 'q1', position: 2 });
  });

  it('while-busy: a queued stream that breaks before its turn is taken up by sending the message again, not by following the task', async () => {
    const sent: any[] = [];
    const streams: (() => AsyncGenerator<StreamResponse>)[] = [
      async function* () {
        yield queuedTask(5, { messageId: 'q1', position: 1 });
        throw new TypeError('network error');
      },
      async function* () {
        yield queuedTask(5, { messageId: 'q1', position: 1 });
        yield queuedTask(9, undefined, 'q1');
        yield reply(10);
      },
    ];
    const client = {
      sendMessageStream(params: any) {
        sent.push(params.message);
        return streams.shift()!();
      },
      resubscribeTask() {
        throw new Error('a queued message is not followed through the task: its events are the turns before it');
      },
    } as unknown as Client;
    const conversation = new Conversation(client);
    conversation.taskId = 't1';
    const events: ChatEvent[] = [];
    for await (const event of conversation.send('later', {
      messageId: 'q1',
      metadata: { [WHILE_BUSY_KEY]: 'enqueue' },
    }))
      events.push(event);
    assert.deepEqual(
      sent.map((m) => m.messageId),
      ['q1', 'q1'],
      'sent again with its id',
    );
    assert.deepEqual(
      events.map((e) => e.kind),
      ['task', 'queued', 'started', 'task', 'state', 'reply'],
      'the place shown once, then the turn',
    );
  });

  /** A queued message sent again after its turn began: the Task its stream starts with, as the resend finds it. */
  function lateTask(state: TaskState, reply?: { artifact?: string; ended?: string }) {
    const event = queuedTask(7, undefined, 'q1') as any;
    const value = event.payload.value;
    value.status.state = state;
    if (reply?.artifact)
      value.artifacts = [{ artifactId: 'a1', name: 'response', parts: [textPart(reply.artifact)], metadata: {} }];
    if (reply?.ended)
      value.history.push({ ...agentMessage(reply.ended, { 'tiny-harness/model': 'm' }), messageId: 'r1' });
    return event as StreamResponse;
  }

  async function sendQueued(events: StreamResponse[]): Promise<ChatEvent[]> {
    const { client } = scriptedClient([events]);
    const conversation = new Conversation(client);
    conversation.taskId = 't1';
    const seen: ChatEvent[] = [];
    for await (const event of conversation.send('later', {
      messageId: 'q1',
      metadata: { [WHILE_BUSY_KEY]: 'enqueue' },
    }))
      seen.push(event);
    return seen;
  }

  it('while-busy: a queued message whose stream comes after its turn began gets the reply so far, then the rest', async () => {
    const rest = {
      payload: {
        $case: 'artifactUpdate',
        value: {
          taskId: 't1',
          contextId: 'c1',
          artifact: { artifactId: 'a1', name: 'response', parts: [textPart('six')] },
          append: true,
          metadata: {},
        },
      },
    } as unknown as StreamResponse;
    const events = await sendQueued([lateTask(TaskState.TASK_STATE_WORKING, { artifact: 're: ' }), rest, reply(9)]);
    const chunks = events.filter((e) => e.kind === 'chunk');
    assert.deepEqual(chunks, [
      { kind: 'chunk', artifactId: 'a1', text: 're: ', append: false },
      { kind: 'chunk', artifactId: 'a1', text: 'six', append: true },
    ]);
    assert.equal(events[0]?.kind, 'started');
  });

  it("while-busy: a queued message whose stream comes after its turn ended gets that turn's whole reply", async () => {
    const events = await sendQueued([lateTask(TaskState.TASK_STATE_INPUT_REQUIRED, { ended: 're: six' })]);
    assert.deepEqual(
      events.filter((e) => e.kind === 'started' || e.kind === 'reply'),
      [
        { kind: 'started', messageId: 'q1' },
        { kind: 'reply', messageId: 'r1', text: 're: six' },
      ],
    );
  });

  it("a command's stream during a turn ends with its reply (WORKING): it is whole, the task is not followed after it (issue 33)", async () => {
    const working = (generation: number) => {
      const event = task('t1', TaskState.TASK_STATE_WORKING) as any;
      event.payload.value.metadata = { [GENERATION_KEY]: generation };
      return event as StreamResponse;
    };
    const replyOf = (generation: number) =>
      status('t1', TaskState.TASK_STATE_WORKING, agentMessage('Now fixture:large.', { command: 'model' }), {
        command: 'model',
        [GENERATION_KEY]: generation,
      });
    let followed = 0;
    const client = {
      async *sendMessageStream() {
        yield working(7);
        yield replyOf(8);
      },
      async *resubscribeTask() {
        followed++;
        yield status('t1', TaskState.TASK_STATE_INPUT_REQUIRED, agentMessage('the turn’s reply'));
      },
    } as unknown as Client;
    const conversation = new Conversation(client);
    conversation.taskId = 't1';
    const events: ChatEvent[] = [];
    for await (const event of conversation.send('/model large', { command: true })) events.push(event);
    assert.deepEqual(
      events.map((e) => e.kind),
      ['task', 'state', 'command'],
    );
    assert.equal(followed, 0, 'nothing of the running turn is read on the command’s stream');
  });

  it('every call carries the A2A-Extensions header naming the Commands extension', async () => {
    const args: any = { options: { serviceParameters: { 'A2A-Version': '1.0' } } };
    await activateCommands.before(args);
    assert.equal(args.options.serviceParameters['A2A-Extensions'], COMMANDS_EXTENSION_URI);
    assert.equal(args.options.serviceParameters['A2A-Version'], '1.0');
  });

  it('new ids are UUIDs', () => {
    assert.match(newId(), /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

describe("the page's addresses", () => {
  const card = {
    name: 'agent',
    supportedInterfaces: [
      { url: 'https://public.example/a2a/jsonrpc', protocolBinding: 'JSONRPC', protocolVersion: '1.0', tenant: '' },
      { url: 'https://public.example/a2a/rest', protocolBinding: 'HTTP+JSON', protocolVersion: '1.0', tenant: '' },
    ],
  } as unknown as AgentCard;

  it('JSON-RPC is beside the page, whatever the card names: on its origin, under the path it was served from', () => {
    for (const [page, expected] of [
      ['http://my-laptop.local:8080/', 'http://my-laptop.local:8080/a2a/jsonrpc'],
      ['http://my-laptop.local:8080/index.html?x=1#y', 'http://my-laptop.local:8080/a2a/jsonrpc'],
      ['https://proxy.example/agent/', 'https://proxy.example/agent/a2a/jsonrpc'],
      ['https://proxy.example/agent/index.html', 'https://proxy.example/agent/a2a/jsonrpc'],
    ] as const) {
      const moved = besidePage(card, page);
      assert.equal(moved.supportedInterfaces[0]!.url, expected, page);
      assert.equal(
        moved.supportedInterfaces[1]!.url,
        'https://public.example/a2a/rest',
        'only the transport the page uses',
      );
    }
    assert.equal(
      card.supportedInterfaces[0]!.url,
      'https://public.example/a2a/jsonrpc',
      'the card itself is left alone',
    );
  });

  it('the card is read from the folder the page was served from', () => {
    assert.equal(harnessRoot('https://proxy.example/agent/'), 'https://proxy.example/agent/');
    assert.equal(harnessRoot('https://proxy.example/agent/index.html'), 'https://proxy.example/agent/');
    assert.equal(harnessRoot('http://127.0.0.1:8080/'), 'http://127.0.0.1:8080/');
  });
});
