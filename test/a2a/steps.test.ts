/**
 * `compose` (src/a2a/steps.ts): steps run in their order around the terminal, one may answer a
 * call itself, errors pass through the steps that do not catch them, a streaming call's events
 * can be wrapped, and `next` may run another call below.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { StreamResponse, Task } from '@a2a-js/sdk';
import type { ServerCallContext } from '@a2a-js/sdk/server';
import { compose, observed, type Call, type Outcome, type Step, type Stream } from '../../src/a2a/index.js';

const context = {} as ServerCallContext;
const getTask = (id: string): Call => ({ method: 'getTask', params: { tenant: '', id }, context, streaming: false });
const resubscribe = (id: string): Call => ({
  method: 'resubscribe',
  params: { tenant: '', id },
  context,
  streaming: true,
});

function event(n: number): StreamResponse {
  return { payload: { $case: 'statusUpdate', value: { taskId: `t${n}` } } } as StreamResponse;
}

/** Answers a getTask with a task named after the call, and a stream with three events. */
function terminal(seen: string[]): (call: Call) => Outcome {
  return (call) => {
    seen.push(`terminal.${call.method}`);
    if (call.method === 'resubscribe')
      return (async function* () {
        for (const n of [1, 2, 3]) yield event(n);
      })();
    if (call.method === 'getTask') return Promise.resolve({ id: call.params.id } as Task);
    return Promise.reject(new Error(`no ${call.method} here`));
  };
}

/** A step that notes when a call goes in and when `next` has answered. */
function noting(name: string, seen: string[]): Step {
  return {
    name,
    around(call, next) {
      seen.push(`${name} in`);
      return observed(call, next, { ended: () => seen.push(`${name} out`) });
    },
  };
}

async function read(stream: Stream): Promise<StreamResponse[]> {
  const events: StreamResponse[] = [];
  for await (const item of stream) events.push(item);
  return events;
}

describe('compose', () => {
  it('runs the steps in their order, outermost first, around the terminal', async () => {
    const seen: string[] = [];
    const path = compose([noting('a', seen), noting('b', seen), noting('c', seen)], terminal(seen));
    assert.deepEqual(path.order, ['a', 'b', 'c']);
    const task = (await path.run(getTask('x'))) as Task;
    assert.equal(task.id, 'x');
    assert.deepEqual(seen, ['a in', 'b in', 'c in', 'terminal.getTask', 'c out', 'b out', 'a out']);
  });

  it('a step that answers the call itself ends it there: no step below and no terminal run', async () => {
    const seen: string[] = [];
    const cached: Step = {
      name: 'cached',
      around: (call, next) =>
        call.method === 'getTask' && call.params.id === 'kept' ? Promise.resolve({ id: 'kept', cached: true }) : next(),
    };
    const path = compose([noting('outer', seen), cached, noting('inner', seen)], terminal(seen));
    assert.deepEqual(await path.run(getTask('kept')), { id: 'kept', cached: true });
    assert.deepEqual(seen, ['outer in', 'outer out']);
    seen.length = 0;
    await path.run(getTask('other'));
    assert.deepEqual(seen, ['outer in', 'inner in', 'terminal.getTask', 'inner out', 'outer out']);
  });

  it('an error passes through the steps that do not catch it, and one that maps it gives its own', async () => {
    const seen: string[] = [];
    const failing = () => Promise.reject(new Error('broken below'));
    const mapping: Step = {
      name: 'mapping',
      around: (call, next) =>
        observed(call, next, { failed: (error) => new Error(`mapped: ${(error as Error).message}`) }),
    };
    const passing = compose([noting('outer', seen), noting('inner', seen)], failing);
    await assert.rejects(passing.run(getTask('x')) as Promise<unknown>, { message: 'broken below' });
    assert.deepEqual(seen, ['outer in', 'inner in', 'inner out', 'outer out']);
    const mapped = compose([mapping, noting('inner', seen)], failing);
    await assert.rejects(mapped.run(getTask('x')) as Promise<unknown>, { message: 'mapped: broken below' });
    // Thrown rather than returned: a call that is not streaming still answers with a rejection.
    const throwing = compose([mapping], () => {
      throw new Error('thrown below');
    });
    await assert.rejects(throwing.run(getTask('x')) as Promise<unknown>, { message: 'mapped: thrown below' });
  });

  it('a streaming call: a step wraps its events, opened at once, and sees its end after the last one', async () => {
    const seen: string[] = [];
    const numbering: Step = {
      name: 'numbering',
      methods: ['resubscribe'],
      around(call, next) {
        const stream = next() as Stream;
        seen.push('opened below');
        return (async function* () {
          let n = 0;
          for await (const item of stream) yield { ...item, metadata: { n: ++n } } as StreamResponse;
        })();
      },
    };
    const path = compose([noting('outer', seen), numbering], terminal(seen));
    const stream = path.run(resubscribe('x')) as Stream;
    assert.deepEqual(seen, ['outer in', 'terminal.resubscribe', 'opened below'], 'opened before the first read');
    const events = await read(stream);
    assert.deepEqual(
      events.map((item) => (item as { metadata?: { n: number } }).metadata?.n),
      [1, 2, 3],
    );
    assert.deepEqual(seen.slice(-1), ['outer out']);
  });

  it('a stream failing midway: the error reaches the reader through the steps, after the events before it', async () => {
    const failingStream = () =>
      (async function* () {
        yield event(1);
        throw new Error('stream broke');
      })();
    const mapping: Step = {
      name: 'mapping',
      around: (call, next) => observed(call, next, { failed: () => new Error('mapped stream error') }),
    };
    const got: StreamResponse[] = [];
    await assert.rejects(async () => {
      for await (const item of compose([mapping], failingStream).run(resubscribe('x')) as Stream) got.push(item);
    }, /mapped stream error/);
    assert.equal(got.length, 1);
  });

  it('takes a call only through the steps that name its method, and next(call) runs another call below', async () => {
    const seen: string[] = [];
    // Answers getTask from a stream's last event, read below it: as a blocking send is served from its stream.
    const fromStream: Step = {
      name: 'fromStream',
      methods: ['getTask'],
      async around(call, next) {
        if (call.method !== 'getTask') return next();
        const events = await read(
          next({ method: 'resubscribe', params: { tenant: '', id: call.params.id }, context, streaming: true }),
        );
        return { id: call.params.id, last: events.length } as unknown as Task;
      },
    };
    const path = compose(
      [noting('outer', seen), fromStream, { ...noting('streams', seen), methods: ['resubscribe'] }],
      terminal(seen),
    );
    assert.deepEqual(path.pathOf('getTask'), ['outer', 'fromStream']);
    assert.deepEqual(path.pathOf('resubscribe'), ['outer', 'streams']);
    assert.deepEqual(await path.run(getTask('x')), { id: 'x', last: 3 });
    // The stream passed only the step below `fromStream` that takes it, not `outer` again.
    assert.deepEqual(seen, ['outer in', 'streams in', 'terminal.resubscribe', 'streams out', 'outer out']);
  });

  it('refuses two steps of one name', () => {
    assert.throws(() => compose([noting('a', []), noting('a', [])], terminal([])), /named a/);
  });
});
