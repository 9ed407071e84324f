/**
 * Two answers to one waiting call sent at once (CMD-33, issue 22): `/approve` against `/deny`
 * in both orders, and `/approve` against `/approve`, on one instance and across two instances on
 * one PostgreSQL database. The answer is decided under the task's write lock, with the task as
 * stored: the first wins, the second is told that nothing waits, and the call runs only if the
 * winner approved it. On SQLite the two rarely interleave (the store answers at once); the
 * race there, made certain, is in test/runtime/tool-approvals.test.ts.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { Client } from '@a2a-js/sdk/client';
import { needs } from '../needs.js';
import { POSTGRES, tempSchema, type TempSchema } from '../support/postgres.js';
import { TaskState } from '@a2a-js/sdk';
import { APPROVE_ECHO, callsIn, pause, reply, statusMessages, toolCalls } from './approval-support.js';
import { collect, dataOf, startTestHarness, textOf, type TestHarness, sendStream } from './support.js';

/** Answers sent two at a time: approve against deny (both orders), and approve against approve. */
const RACES: [string, string][] = [
  ...Array.from({ length: 3 }, (): [string, string] => ['/approve', '/deny']),
  ...Array.from({ length: 3 }, (): [string, string] => ['/deny', '/approve']),
  ...Array.from({ length: 2 }, (): [string, string] => ['/approve', '/approve']),
];

const NOTHING_WAITING = 'No tool call is waiting for approval on this task.';

/**
 * One round of issue 22's race: a call waits, then `commands` are sent at once, streamed, the
 * first by `answerers[0]`, the second by `answerers[1]`. Exactly one is acknowledged and stored as
 * a decision, the other is told nothing waits, and the call runs, once, only if the winner
 * approved it. The winner's stream follows the turn it resumed to its end.
 */
async function answerAtOnce(
  pauseOn: Client,
  answerers: [Client, Client],
  commands: [string, string],
  modelRequests: () => number,
): Promise<void> {
  const paused = await pause(pauseOn, 'please echo race');
  const callId = paused.waiting[0]!.id;
  const requestsBefore = modelRequests();
  const streams = await Promise.all(
    commands.map((command, i) => collect(sendStream(answerers[i]!, command, { taskId: paused.taskId }))),
  );
  const texts = streams.map((events) => textOf(statusMessages(events).find((m) => m?.metadata?.command)));
  const won = texts.findIndex((text) => /^(Approved|Denied) fx_echo\. The turn resumes\.$/.test(text));
  assert.ok(won >= 0, `one answer is acknowledged: ${JSON.stringify(texts)}`);
  assert.equal(texts[1 - won], NOTHING_WAITING, `the other is told nothing waits: ${JSON.stringify(texts)}`);
  const approved = texts[won]!.startsWith('Approved');
  const task = await answerers[won]!.getTask({ tenant: '', id: paused.taskId, historyLength: undefined });
  assert.equal(task.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, 'the resumed turn has ended');
  const decisions = task.history.flatMap((m) =>
    m.metadata?.command === 'approve' || m.metadata?.command === 'deny' ? (dataOf(m)?.calls ?? []) : [],
  );
  assert.deepEqual(
    decisions.map((d: any) => [d.id, d.decision]),
    [[callId, approved ? 'approved' : 'denied']],
    'one decision is stored: the acknowledged one',
  );
  const reports = callsIn(task.history)
    .filter((c) => c.id === callId)
    .map((c) => c.status);
  assert.equal(reports.filter((status) => status === 'running').length, approved ? 1 : 0, 'the call ran iff approved');
  assert.equal(reports.at(-1), approved ? 'succeeded' : 'canceled');
  assert.equal(modelRequests(), requestsBefore + 1, 'one turn resumed');
}

describe('answers sent at once (CMD-33, issue 22)', () => {
  it('issue 22: of two answers to one call sent at once, the first wins and the other is told nothing waits', async (t) => {
    const h = await startTestHarness({ script: { toolCalls, reply }, config: APPROVE_ECHO });
    t.after(() => h.close());
    const [a, b] = [await h.client('JSONRPC'), await h.client('JSONRPC')];
    for (const commands of RACES) await answerAtOnce(a, [a, b], commands, () => h.chatRequests().length);
  });
});

describe('answers sent at once on PostgreSQL (CMD-33, issue 22)', needs(POSTGRES), () => {
  let schema: TempSchema;
  const instances: TestHarness[] = [];
  before(async () => {
    schema = await tempSchema();
    for (let i = 0; i < 2; i += 1) {
      instances.push(
        await startTestHarness({
          script: { toolCalls, reply },
          config: APPROVE_ECHO,
          harness: { databaseUrl: schema.url },
        }),
      );
    }
  });
  after(async () => {
    await Promise.all(instances.map((instance) => instance.close()));
    await schema?.drop();
  });

  it('issue 22: of two answers to one call sent at once to one instance on PostgreSQL, the first wins and the other is told nothing waits', async () => {
    const [a, b] = [await instances[0]!.client('JSONRPC'), await instances[0]!.client('JSONRPC')];
    const modelRequests = () => instances.reduce((n, instance) => n + instance.chatRequests().length, 0);
    for (const commands of RACES) await answerAtOnce(a, [a, b], commands, modelRequests);
  });

  it('issue 22: of two answers to one call sent at once to two instances, the first wins and the other is told nothing waits', async () => {
    const [a, b] = [await instances[0]!.client('JSONRPC'), await instances[1]!.client('JSONRPC')];
    const modelRequests = () => instances.reduce((n, instance) => n + instance.chatRequests().length, 0);
    for (const commands of RACES) await answerAtOnce(a, [a, b], commands, modelRequests);
  });
});
