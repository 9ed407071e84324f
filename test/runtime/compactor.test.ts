/**
 * The compactor (CMD-36): the summary request it makes through the model gateway, the reasons
 * it gives when the model fails or times out (never a secret), and when a turn compacts first.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, type Message, type Part } from '@a2a-js/sdk';
import { buildConversation } from '../../src/conversation/build.js';
import { SUMMARISER_ROLE } from '../../src/conversation/compaction.js';
import { HarnessError } from '../../src/errors.js';
import { Compactor, type CompactorOptions } from '../../src/runtime/compactor.js';
import type { ModelGateway, ModelRequest } from '../../src/runtime/model-gateway.js';
import { COMPACTED_NOTICE, COMPACTION_FAILED_NOTICE, compactionOf, NOTICE_KEY } from '../../src/wire.js';

let n = 0;
function message(role: Role, value: string): Message {
  const part: Part = { content: { $case: 'text', value }, mediaType: 'text/plain', filename: '', metadata: {} };
  return {
    messageId: `m${++n}`,
    taskId: 't',
    contextId: 'c',
    role,
    parts: [part],
    metadata: {},
    extensions: [],
    referenceTaskIds: [],
  };
}
// Six exchanges of 100 characters each: 1,200 characters of conversation.
const history = Array.from({ length: 6 }, (_, i) => [
  message(Role.ROLE_USER, `question ${i}`.padEnd(100, '.')),
  message(Role.ROLE_AGENT, `answer ${i}`.padEnd(100, '.')),
]).flat();

function compactor(gateway: ModelGateway, options: Partial<CompactorOptions> = {}): Compactor {
  return new Compactor({
    gateway,
    models: { modelFor: async () => 'fixture:small' },
    compact: { auto: true, autoAt: 0.8, tailShare: 0.1, timeoutMs: 60_000 },
    contextCharsFor: () => 1400,
    ...options,
  });
}
const answering = (text: string, seen: ModelRequest[] = []): ModelGateway => ({
  async complete(request) {
    seen.push(request);
    return { text, inputTokens: 10, outputTokens: 2 };
  },
});
const failing = (error: unknown): ModelGateway => ({
  complete: async () => {
    throw error;
  },
});
const request = { taskId: 't', contextId: 'c', modelId: 'fixture:small', history };

describe('the compactor (CMD-36)', () => {
  it('asks the model for a summary without tools, its instructions as the system prompt, and makes the point', async () => {
    const seen: ModelRequest[] = [];
    const usage: unknown[] = [];
    const made = await compactor(answering('  the gist  ', seen), {
      state: { addUsage: async (taskId, line) => void usage.push({ taskId, ...line }) },
    }).summarise({ ...request, focus: 'the numbers' });
    assert.equal(made.kind, 'compacted');
    assert.equal(seen.length, 1);
    assert.equal(seen[0]!.modelId, 'fixture:small');
    assert.equal(seen[0]!.tools, undefined);
    assert.ok(seen[0]!.system?.startsWith(SUMMARISER_ROLE));
    assert.match(seen[0]!.system!, /keep in particular: the numbers/);
    assert.equal(seen[0]!.messages.length, 1);
    if (made.kind !== 'compacted') return;
    assert.equal(textOf(made.message), 'the gist');
    assert.deepEqual(compactionOf(made.message), made.point);
    assert.equal(made.point.charsBefore, 1200);
    assert.deepEqual(usage, [{ taskId: 't', model: 'fixture:small', inputTokens: 10, outputTokens: 2 }]);
  });

  it('says why when the model fails, times out or writes nothing, and never passes on an unknown error', async () => {
    const providerFailed = new HarnessError('provider_failed', 'Model fixture:small failed: the server answered 500.');
    assert.deepEqual(await compactor(failing(providerFailed)).summarise(request), {
      kind: 'failed',
      reason: 'Model fixture:small failed: the server answered 500.',
    });
    const told: unknown[] = [];
    const unknown = await compactor(failing(new Error('key sk-secret at /home/x')), {
      onTurnError: (error) => told.push(error),
    }).summarise(request);
    assert.deepEqual(unknown, { kind: 'failed', reason: 'The summary request to fixture:small failed unexpectedly.' });
    assert.equal(told.length, 1, 'logged, not shown');
    assert.deepEqual(await compactor(answering(' ')).summarise(request), {
      kind: 'failed',
      reason: 'fixture:small returned an empty summary.',
    });
    // A model that never answers: the summary request is aborted at the timeout.
    const hanging: ModelGateway = {
      complete: (model) =>
        new Promise((_, reject) => model.abortSignal.addEventListener('abort', () => reject(model.abortSignal.reason))),
    };
    const timedOut = compactor(hanging, { compact: { auto: true, autoAt: 0.8, tailShare: 0.1, timeoutMs: 20 } });
    assert.deepEqual(await timedOut.summarise(request), {
      kind: 'failed',
      reason: 'fixture:small wrote no summary within 20 ms (timed out).',
    });
  });

  it('compacts before a turn only past autoAt of the budget, and not with auto off', async () => {
    const built = (budgetChars: number) => buildConversation({ history, budgetChars });
    // 1,200 characters: past 0.8 × 1,400 = 1,120.
    const before = await compactor(answering('gist')).beforeTurn(request, built(1400));
    assert.deepEqual(
      before?.publish.map((m) => (compactionOf(m) ? 'point' : m.metadata?.[NOTICE_KEY])),
      ['point', COMPACTED_NOTICE],
    );
    assert.equal(before?.history?.length, history.length + 1);
    assert.equal(
      await compactor(answering('gist'), { contextCharsFor: () => 2000 }).beforeTurn(request, built(2000)),
      undefined,
    );
    const off = compactor(answering('gist'), {
      compact: { auto: false, autoAt: 0.8, tailShare: 0.1, timeoutMs: 1000 },
    });
    assert.equal(await off.beforeTurn(request, built(1400)), undefined);
    const failed = await compactor(failing(new HarnessError('provider_failed', 'down'))).beforeTurn(
      request,
      built(1400),
    );
    assert.deepEqual(
      failed?.publish.map((m) => [m.metadata?.[NOTICE_KEY], textOf(m)]),
      [[COMPACTION_FAILED_NOTICE, 'The conversation could not be compacted: down']],
    );
    assert.equal(failed?.history, undefined, 'the turn goes on with the conversation as it was');
  });

  it('reads a transcript longer than the budget part by part, each request carrying the summary so far', async () => {
    const seen: ModelRequest[] = [];
    const long = Array.from({ length: 30 }, (_, i) => [
      message(Role.ROLE_USER, `question ${i}`.padEnd(300, '.')),
      message(Role.ROLE_AGENT, `answer ${i}`.padEnd(300, '.')),
    ]).flat();
    const gateway: ModelGateway = {
      async complete(request) {
        seen.push(request);
        return { text: `summary after part ${seen.length}`, inputTokens: 1, outputTokens: 1 };
      },
    };
    const made = await compactor(gateway, { contextCharsFor: () => 4000 }).summarise({ ...request, history: long });
    assert.equal(made.kind, 'compacted');
    assert.ok(seen.length > 1, `${seen.length} requests`);
    const sent = (r: ModelRequest) => (r.messages[0]!.role === 'tool' ? '' : r.messages[0]!.content);
    assert.ok(sent(seen[1]!).includes('summary after part 1'), 'the second part is read with the first summary');
    if (made.kind === 'compacted') assert.equal(textOf(made.message), `summary after part ${seen.length}`);
    for (const r of seen) assert.ok(sent(r).length + (r.system ?? '').length <= 4000, 'each request fits the budget');
  });
});

function textOf(message: Message): string {
  return message.parts.map((p) => (p.content?.$case === 'text' ? p.content.value : '')).join('');
}
