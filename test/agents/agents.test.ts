import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { TaskState } from '@a2a-js/sdk';
import { ServerCallContext } from '@a2a-js/sdk/server';
import {
  agentsCommand,
  AgentsFolder,
  delegateToolEntry,
  loadAgents,
  withDelegateTool,
  type Agent,
} from '../../src/agents/index.js';
import { Delegations } from '../../src/runtime/delegations.js';
import type { DelegatedAgent, Delegator } from '../../src/engine-ports.js';
import { AGENT_KEY } from '../../src/runtime/agent-run.js';
import { HarnessError } from '../../src/errors.js';
import type { ToolOutcome, ToolTurn } from '../../src/tools/index.js';
import { recordingLogger, RecordingStarter, tempFolder } from '../file-commands/support.js';
import { waitFor } from '../support/wait.js';
import type { LoggedEvent } from '../../src/ports.js';
import { LogSubscription } from '../../src/store/index.js';

const callContext = new ServerCallContext({ requestedVersion: '1.0' });
const turn = (metadata?: Record<string, unknown>): ToolTurn => ({
  taskId: 'parent-1',
  contextId: 'context-1',
  metadata,
  callContext,
});
const agent = (name: string, extra: Partial<Agent> = {}): Agent => ({
  name,
  description: `The ${name}`,
  prompt: `You are ${name}.`,
  mayDelegate: false,
  fileName: `${name}.md`,
  ...extra,
});

describe('agents: loading', () => {
  it("reads Claude Code's agent files: name, description, tools as a string or a list, model (inherit: none); bad ones are skipped with a reason", async () => {
    const temp = tempFolder();
    try {
      const write = (file: string, text: string) => writeFileSync(join(temp.dir, file), text);
      write(
        'reviewer.md',
        '---\nname: reviewer\ndescription: Reviews code\ntools: Read, fx_echo\nmodel: inherit\ncolor: red\n---\nReview.\n',
      );
      write('lead.md', '---\nname: lead\ndescription: Leads\ntools: [delegate]\nmodel: fixture:large\n---\nLead.\n');
      write('open.md', '---\nname: open\ndescription: Anything\n---\nAll tools.\n');
      write('nameless.md', '---\ndescription: x\n---\nBody.\n');
      write('bad-name.md', '---\nname: Bad_Name\ndescription: x\n---\nBody.\n');
      write('silent.md', '---\nname: silent\n---\nBody.\n');
      write('empty.md', '---\nname: empty\ndescription: x\n---\n');
      write('numbers.md', '---\nname: numbers\ndescription: x\ntools: 3\n---\nBody.\n');
      write('broken.md', '---\nname: [unclosed\ndescription: x\n---\nBody.\n');
      write('twin.md', '---\nname: reviewer\ndescription: Again\n---\nBody.\n');
      write('.hidden.md', '---\nname: hidden\ndescription: x\n---\nBody.\n');
      write('notes.txt', 'not an agent');
      const loaded = await loadAgents(temp.dir);
      assert.deepEqual(
        loaded.agents.map(({ name, model, tools, mayDelegate, prompt }) => ({
          name,
          model,
          tools,
          mayDelegate,
          prompt,
        })),
        [
          { name: 'lead', model: 'fixture:large', tools: ['delegate'], mayDelegate: true, prompt: 'Lead.' },
          { name: 'open', model: undefined, tools: undefined, mayDelegate: false, prompt: 'All tools.' },
          { name: 'reviewer', model: undefined, tools: ['Read', 'fx_echo'], mayDelegate: false, prompt: 'Review.' },
        ],
      );
      const reasons = Object.fromEntries(loaded.problems.map((line) => [line.split(':')[0], line]));
      assert.deepEqual(Object.keys(reasons).sort(), [
        'bad-name.md',
        'broken.md',
        'empty.md',
        'nameless.md',
        'numbers.md',
        'silent.md',
        'twin.md',
      ]);
      assert.match(reasons['silent.md']!, /"description" must be set/);
      assert.match(reasons['empty.md']!, /the body is empty/);
      assert.match(reasons['numbers.md']!, /"tools" must be a comma-separated list/);
      assert.match(reasons['twin.md']!, /comes from reviewer\.md already/);
      assert.ok(!loaded.problems.join('\n').includes(temp.dir), 'no path in a reason');
    } finally {
      temp.dispose();
    }
  });

  it('with watch(), an agent added or removed shows in the list; /agents lists them and the skipped files', async () => {
    const temp = tempFolder();
    const log = recordingLogger();
    const folder = new AgentsFolder({ dir: temp.dir, debounceMs: 20, log });
    try {
      await folder.load();
      await folder.watch();
      writeFileSync(join(temp.dir, 'helper.md'), '---\nname: helper\ndescription: Helps\n---\nHelp.\n');
      writeFileSync(join(temp.dir, 'bad.md'), '---\nname: bad\n---\nBody.\n');
      await waitFor('helper is loaded', log.events, 'line', () => folder.list().length === 1);
      await waitFor('bad is skipped', log.events, 'line', () => folder.skipped().length === 1);
      const reply = await agentsCommand({
        list: () => folder.list(),
        skipped: () => folder.skipped(),
        offeredModels: () => ['fixture:small'],
      }).handler({} as never);
      assert.equal(
        reply.text,
        'helper: Helps\n  model: inherit; tools: all\n\nSkipped:\n  bad.md: "description" must be set: it tells the model when to delegate to the agent',
      );
      rmSync(join(temp.dir, 'helper.md'));
      await waitFor('helper is gone', log.events, 'line', () => folder.list().length === 0);
    } finally {
      await folder.close();
      temp.dispose();
    }
  });
});

/** Once the promise callbacks queued now have run. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

/** A delegator whose delegations end when the test says so. */
class HeldDelegator implements Delegator {
  readonly started: string[] = [];
  private readonly ends: (() => void)[] = [];
  mayDelegate = () => true;
  delegate(_turn: ToolTurn, delegated: DelegatedAgent, prompt: string, signal: AbortSignal): Promise<ToolOutcome> {
    this.started.push(`${delegated.name}: ${prompt}`);
    return new Promise((resolve) => {
      this.ends.push(() => resolve({ status: 'succeeded', output: prompt }));
      signal.addEventListener('abort', () => resolve({ status: 'canceled', output: 'Canceled.' }), { once: true });
    });
  }
  endNext(): void {
    this.ends.shift()!();
  }
}

describe('agents: the delegate tool', () => {
  it('at most agents.maxParallel delegations of one turn run at once; the others wait, or give up when the turn ends', async () => {
    const delegator = new HeldDelegator();
    const entry = delegateToolEntry([agent('helper')], turn(), delegator, { maxParallel: 1, timeoutMs: 60_000 });
    const signal = new AbortController().signal;
    const first = entry.call({ agent: 'helper', prompt: 'one' }, signal);
    const second = entry.call({ agent: 'helper', prompt: 'two' }, signal);
    const ended = new AbortController();
    const third = entry.call({ agent: 'helper', prompt: 'three' }, ended.signal);
    await settled();
    assert.deepEqual(delegator.started, ['helper: one'], 'one at a time');
    ended.abort();
    assert.equal((await third).status, 'canceled');
    delegator.endNext();
    assert.deepEqual(await first, { status: 'succeeded', output: 'one' });
    await settled();
    assert.deepEqual(delegator.started, ['helper: one', 'helper: two']);
    delegator.endNext();
    assert.deepEqual(await second, { status: 'succeeded', output: 'two' });
  });

  it('a delegation past agents.timeoutMs is canceled, and the model told why; the step may take that long', async () => {
    const entry = delegateToolEntry([agent('helper')], turn(), new HeldDelegator(), { maxParallel: 1, timeoutMs: 50 });
    assert.equal(entry.timeoutMs, 50);
    const outcome = await entry.call({ agent: 'helper', prompt: 'forever' }, new AbortController().signal);
    assert.deepEqual(outcome, {
      status: 'failed',
      output: 'The sub-agent helper took longer than the 50 ms agents.timeoutMs allows. Canceled.',
    });
  });

  it('an unknown agent is a failed outcome that lists the agents', async () => {
    const entry = delegateToolEntry([agent('b'), agent('a')], turn(), new HeldDelegator(), {
      maxParallel: 4,
      timeoutMs: 60_000,
    });
    const outcome = await entry.call({ agent: 'nobody', prompt: 'x' }, new AbortController().signal);
    assert.deepEqual(outcome, { status: 'failed', output: 'There is no agent named "nobody". Agents: b, a.' });
  });

  it('is offered only for a turn, while there are agents, and when the delegator allows the task to delegate', async () => {
    const box = { list: async () => ({ tools: [], missing: [] }), close: async () => {} };
    const delegator = new HeldDelegator();
    let agents: Agent[] = [agent('helper')];
    const tools = withDelegateTool(box, () => agents, delegator, { maxParallel: 4, timeoutMs: 60_000 });
    const names = async (t?: ToolTurn) => (await tools.list(undefined, t)).tools.map((e) => e.name);
    assert.deepEqual(await names(turn()), ['delegate']);
    assert.deepEqual(await names(), [], 'no turn, no task to delegate from');
    delegator.mayDelegate = () => false;
    assert.deepEqual(await names(turn()), []);
    delegator.mayDelegate = () => true;
    agents = [];
    assert.deepEqual(await names(turn()), []);
  });
});

const subAgent = (depth: number, mayDelegate: boolean) => ({
  [AGENT_KEY]: { name: 'lead', depth, systemPrompt: 'Lead.', mayDelegate },
});

function delegations(starter: RecordingStarter, events: LoggedEvent[] = [], cancels: string[] = []) {
  return new Delegations({
    starter,
    tasks: {
      read: async (id) => ({
        task: {
          id,
          contextId: 'context-1',
          status: { state: TaskState.TASK_STATE_WORKING, message: undefined, timestamp: '' },
          history: [],
          artifacts: [],
          metadata: {},
        },
        generation: 1,
      }),
      feeds: {
        follow: async () => {
          const subscription = new LogSubscription(() => {});
          for (const entry of events) subscription.push(entry);
          return subscription;
        },
      },
    },
    cancel: async (id) => void cancels.push(id),
    outputChars: 1000,
    maxDepth: 2,
  });
}

const ended = (state: TaskState, text: string): LoggedEvent =>
  ({
    generation: 2,
    event: {
      kind: 'statusUpdate',
      data: {
        taskId: 'sub-1',
        contextId: 'context-1',
        status: {
          state,
          timestamp: '',
          message: { parts: [{ content: { $case: 'text', value: text } }] },
        },
        metadata: {},
      },
    },
  }) as unknown as LoggedEvent;

describe('agents: delegations', () => {
  it('a conversation may delegate; a sub-agent only when its tools list delegate, and never at agents.maxDepth', () => {
    const d = delegations(new RecordingStarter());
    assert.equal(d.mayDelegate(turn()), true);
    assert.equal(d.mayDelegate(turn(subAgent(1, true))), true);
    assert.equal(d.mayDelegate(turn(subAgent(1, false))), false);
    assert.equal(d.mayDelegate(turn(subAgent(2, true))), false);
  });

  it('starts the agent as a sub-task with its model, tools, prompt and depth, and returns its reply once its end is in the feed', async () => {
    const starter = new RecordingStarter();
    const d = delegations(starter, [ended(TaskState.TASK_STATE_COMPLETED, 'done well')]);
    const lead = { name: 'lead', prompt: 'Lead.', model: 'large', tools: ['delegate'], mayDelegate: true };
    const outcome = await d.delegate(turn(subAgent(1, true)), lead, 'plan it', new AbortController().signal);
    assert.deepEqual(outcome, { status: 'succeeded', output: 'done well' });
    const { parent, instruction, options } = starter.calls[0]!;
    assert.equal(parent.id, 'parent-1');
    assert.equal(instruction, 'plan it');
    assert.deepEqual(
      { ...options, callContext: undefined },
      {
        callContext: undefined,
        model: 'large',
        label: 'agent lead',
        allowedTools: ['delegate'],
        context: 'none',
        agent: { name: 'lead', depth: 2, systemPrompt: 'Lead.', mayDelegate: true },
      },
    );
  });

  it('refuses past the depth, says why a start failed, and reports a failed sub-task', async () => {
    const starter = new RecordingStarter();
    const lead = { name: 'lead', prompt: 'Lead.', mayDelegate: true };
    const signal = new AbortController().signal;
    const deep = await delegations(starter).delegate(turn(subAgent(2, true)), lead, 'x', signal);
    assert.equal(deep.status, 'failed');
    assert.match(deep.output, /may not delegate: it is at the depth limit/);
    assert.equal(starter.calls.length, 0, 'nothing started');
    starter.failWith = new HarnessError('model_unknown', 'The model sonnet is not offered here.');
    const unknown = await delegations(starter).delegate(turn(), lead, 'x', signal);
    assert.deepEqual(unknown, {
      status: 'failed',
      output: 'The sub-agent lead was not started: The model sonnet is not offered here.',
    });
    starter.failWith = undefined;
    const failed = await delegations(starter, [ended(TaskState.TASK_STATE_FAILED, 'it broke')]).delegate(
      turn(),
      lead,
      'x',
      signal,
    );
    assert.equal(failed.status, 'failed');
    assert.match(failed.output, /failed: it broke$/);
  });

  it('a call aborted while its sub-agent runs cancels the sub-task', async () => {
    const cancels: string[] = [];
    const d = delegations(new RecordingStarter(), [], cancels);
    const stop = new AbortController();
    const running = d.delegate(turn(), { name: 'lead', prompt: 'Lead.', mayDelegate: false }, 'x', stop.signal);
    stop.abort();
    const outcome = await running;
    assert.equal(outcome.status, 'canceled');
    assert.deepEqual(cancels, ['sub-1']);
  });
});
