/**
 * `/compact [focus]` and automatic compaction (CMD-36): the task's model summarises the
 * conversation; later turns send the summary, the last user message it covers and the recent
 * tail verbatim, and nothing else of what it covers. The fixture model answers a summary
 * request (recognised by the summariser's instructions) with `SUMMARY(...)` naming the user
 * messages it read, and a turn with `re: <the first words of the last message>`.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { TaskState, type Message, type StreamResponse, type Task } from '@a2a-js/sdk';
import type { Client } from '@a2a-js/sdk/client';
import { SUMMARY_HEADING } from '../../src/conversation/build.js';
import { SUMMARISER_ROLE } from '../../src/conversation/compaction.js';
import {
  COMPACTED_NOTICE,
  COMPACTION_FAILED_NOTICE,
  compactionOf,
  CONTEXT_CUT_NOTICE,
  NOTICE_KEY,
  REPLY_ERROR_KEY,
} from '../../src/wire.js';
import { lastMessage, type ModelServerScript } from '../fixtures/model-server.js';
import { collect, dataOf, send, sendStream, startTestHarness, textOf, type TestHarness } from './support.js';

const isSummary = (body: any): boolean => String(body?.messages?.[0]?.content ?? '').startsWith(SUMMARISER_ROLE);
/** The summary names the user messages it read by their first two words. */
const summaryOf = (body: any): string =>
  `SUMMARY(${[...String(body.messages.at(-1).content).matchAll(/^User: (\S+ \S+)/gm)].map((m) => m[1]).join('; ')})`;

/** Summary requests whose conversation says so fail, or wait for `releaseSummary`. */
let releaseSummary!: () => void;
const summaryReleased = new Promise<void>((resolve) => (releaseSummary = resolve));
let releaseTurn!: () => void;
const turnReleased = new Promise<void>((resolve) => (releaseTurn = resolve));

const script: ModelServerScript = {
  reply: (body) => (isSummary(body) ? summaryOf(body) : `re: ${lastMessage(body).content.split(' ', 2).join(' ')}`),
  fail: (body) =>
    isSummary(body) && JSON.stringify(body).includes('no-summaries')
      ? { kind: 'status', status: 400, message: 'summaries are switched off here' }
      : undefined,
  hold: (body) =>
    isSummary(body) && JSON.stringify(body).includes('slow-summary')
      ? { afterChunks: 0, until: summaryReleased }
      : !isSummary(body) && lastMessage(body).content.includes('long turn')
        ? { afterChunks: 1, until: turnReleased }
        : undefined,
};

let h: TestHarness;
before(async () => {
  h = await startTestHarness({ script });
});
after(async () => {
  releaseSummary?.();
  releaseTurn?.();
  await h?.close();
});

const summaryRequests = () => h.chatRequests().filter(isSummary);
const turnRequests = () => h.chatRequests().filter((body) => !isSummary(body));
const sent = (body: any) => body.messages.map((m: any) => `${m.role}: ${m.content}`);
const historyOf = (client: Client, id: string): Promise<Task> =>
  client.getTask({ tenant: '', id, historyLength: undefined });
const points = (task: Task): Message[] => task.history.filter((m) => compactionOf(m) !== undefined);

/** A task with three exchanges and a command between them; the ids of its user messages. */
async function conversation(client: Client, words: string[]): Promise<{ task: Task; ids: string[] }> {
  const ids = words.map(() => randomUUID());
  let task = await send(client, `${words[0]} one`, { messageId: ids[0] });
  for (let i = 1; i < words.length; i += 1) {
    task = await send(client, `${words[i]} more`, { taskId: task.id, messageId: ids[i] });
    if (i === 1) await send(client, '/status', { taskId: task.id });
  }
  return { task, ids };
}

describe('/compact (CMD-36)', () => {
  it('CMD-36: /compact summarises all but the recent tail; the next turn sends the summary, the pinned last request and the tail, verbatim, and nothing summarised', async () => {
    const client = await h.client('JSONRPC');
    const { task, ids } = await conversation(client, ['apple', 'banana', 'cherry']);
    const asked = summaryRequests().length;
    const reply = await send(client, '/compact keep the fruit names', { taskId: task.id });
    assert.equal(reply.status?.state, TaskState.TASK_STATE_INPUT_REQUIRED, "the task's state is unchanged");
    const { compaction } = dataOf(reply.status?.message);
    // Six messages after no point: the newest three stay verbatim, and the summary ends at the second request.
    assert.deepEqual({ upTo: compaction.upTo, model: compaction.model }, { upTo: ids[1], model: 'fixture:small' });
    assert.match(
      textOf(reply.status?.message),
      new RegExp(
        `^Compacted the conversation: ${compaction.charsBefore.toLocaleString('en-US')} → ${compaction.charsAfter.toLocaleString('en-US')} characters\\.`,
      ),
    );
    // What the summariser read: the covered messages as lines, no command exchange; the focus in its instructions.
    assert.equal(summaryRequests().length, asked + 1);
    const request = summaryRequests().at(-1);
    assert.match(request.messages[0].content, /keep in particular: keep the fruit names/);
    assert.equal(request.tools, undefined, 'no tools');
    const transcript = request.messages.at(-1).content as string;
    assert.match(transcript, /User: apple one\n\nAssistant: re: apple one\n\nUser: banana more/);
    assert.ok(!/cherry|\/status|State/.test(transcript), 'neither the tail nor a command');

    await send(client, 'date last', { taskId: task.id });
    assert.deepEqual(sent(turnRequests().at(-1)), [
      'system: You are a helpful assistant.',
      `user: ${SUMMARY_HEADING}\n\nSUMMARY(apple one; banana more)`,
      'user: banana more',
      'assistant: re: banana more',
      'user: cherry more',
      'assistant: re: cherry more',
      'user: date last',
    ]);
    // The point is stored between the command and its reply, the summary its text.
    const stored = await historyOf(client, task.id);
    const [point] = points(stored);
    assert.deepEqual(compactionOf(point!), compaction);
    assert.equal(textOf(point), 'SUMMARY(apple one; banana more)');
    const at = stored.history.indexOf(point!);
    assert.equal(textOf(stored.history[at - 1]), '/compact keep the fruit names');
    assert.equal(stored.history[at + 1]!.messageId, reply.status?.message?.messageId);
  });

  it('CMD-36, CMD-34: a resend of the same /compact does not compact twice', async () => {
    const client = await h.client('HTTP+JSON');
    const { task } = await conversation(client, ['elder', 'fig', 'grape']);
    const messageId = randomUUID();
    const asked = summaryRequests().length;
    const first = await send(client, '/compact', { taskId: task.id, messageId });
    const again = await send(client, '/compact', { taskId: task.id, messageId });
    assert.deepEqual(dataOf(again.status?.message), dataOf(first.status?.message));
    assert.equal(summaryRequests().length, asked + 1, 'one summary');
    assert.equal(points(await historyOf(client, task.id)).length, 1, 'one compaction point');
  });

  it('CMD-36: /compact is refused while a turn runs, and nothing is summarised', async () => {
    const client = await h.client('GRPC');
    const { task } = await conversation(client, ['kiwi', 'lemon', 'mango']);
    const events: StreamResponse[] = [];
    const turn = (async () => {
      for await (const event of sendStream(client, 'a long turn', { taskId: task.id })) events.push(event);
    })();
    await h.model.waitForRequest((r) => JSON.stringify(r.body ?? '').includes('a long turn'));
    const asked = summaryRequests().length;
    const reply = await send(client, '/compact', { taskId: task.id });
    assert.equal(dataOf(reply.status?.message)[REPLY_ERROR_KEY], 'turn_running');
    assert.match(textOf(reply.status?.message), /not compacted: a turn is running/);
    assert.equal(summaryRequests().length, asked);
    releaseTurn();
    await turn;
    assert.equal(points(await historyOf(client, task.id)).length, 0);
  });

  it('CMD-36: a message that arrives while the summary is written wins: the /compact is refused and nothing is stored', async () => {
    const client = await h.client('JSONRPC');
    const { task } = await conversation(client, ['slow-summary nectarine', 'olive', 'peach']);
    const compacting = send(client, '/compact', { taskId: task.id });
    await h.model.waitForRequest((r) => isSummary(r.body) && JSON.stringify(r.body).includes('nectarine'));
    await send(client, 'quince meanwhile', { taskId: task.id });
    releaseSummary();
    const reply = await compacting;
    assert.equal(dataOf(reply.status?.message)[REPLY_ERROR_KEY], 'conversation_changed');
    assert.match(textOf(reply.status?.message), /moved on while the summary was written/);
    assert.equal(points(await historyOf(client, task.id)).length, 0);
  });

  it('CMD-36: a summary model that fails leaves the conversation as it was, and the reply says why', async () => {
    const client = await h.client('HTTP+JSON');
    const { task } = await conversation(client, ['no-summaries raspberry', 'strawberry', 'tangerine']);
    const reply = await send(client, '/compact', { taskId: task.id });
    const data = dataOf(reply.status?.message);
    assert.equal(data[REPLY_ERROR_KEY], 'model_failed');
    const text = textOf(reply.status?.message);
    assert.match(text, /^The conversation was not compacted, and is unchanged: .*summaries are switched off here/);
    assert.ok(!/\n\s+at /.test(text), 'no stack trace');
    assert.equal(points(await historyOf(client, task.id)).length, 0);
    await send(client, 'ugli next', { taskId: task.id });
    assert.deepEqual(
      sent(turnRequests().at(-1))
        .slice(1)
        .map((line: string) => line.slice(0, 26)),
      [
        'user: no-summaries raspber',
        'assistant: re: no-summarie',
        'user: strawberry more',
        'assistant: re: strawberry ',
        'user: tangerine more',
        'assistant: re: tangerine m',
        'user: ugli next',
      ],
      'the whole conversation, no summary',
    );
  });

  it('CMD-36: a conversation too short to summarise is said so', async () => {
    const client = await h.client('JSONRPC');
    const task = await send(client, 'vanilla only');
    const reply = await send(client, '/compact', { taskId: task.id });
    assert.equal(dataOf(reply.status?.message)[REPLY_ERROR_KEY], 'nothing_to_compact');
    assert.equal(points(await historyOf(client, task.id)).length, 0);
  });
});

describe('automatic compaction (CMD-36)', () => {
  let small: TestHarness;
  before(async () => {
    small = await startTestHarness({
      script: { ...script, reply: (body) => (isSummary(body) ? summaryOf(body) : 'ok') },
      config: (baseURL) => ({
        systemPrompt: 'Be brief.',
        compact: { autoAt: 0.8, tailShare: 0.4 },
        providers: { fixture: { type: 'openai-compatible', baseURL, models: ['small'], contextChars: 2000 } },
      }),
    });
  });
  after(async () => {
    await small?.close();
  });

  const words = (n: number, tag = '') => `message ${n} ${tag}`.padEnd(300, 'x'); // 300 characters each
  const notices = (events: StreamResponse[]) =>
    events.flatMap((e) => {
      const message = e.payload?.$case === 'statusUpdate' ? e.payload.value.status?.message : undefined;
      const kind = message?.metadata?.[NOTICE_KEY];
      if (message && compactionOf(message)) return [{ kind: 'point', text: textOf(message), data: undefined }];
      return typeof kind === 'string' ? [{ kind, text: textOf(message), data: dataOf(message) }] : [];
    });

  it('CMD-36: past autoAt of the budget a turn compacts first, says so in its stream, and sends the summary, the pinned request and the tail', async () => {
    const client = await small.client('JSONRPC');
    let task = await send(client, words(1));
    // 9 + 5 × 300 + 4 × 2 = 1517 characters: under 0.8 × 2000, no compaction yet.
    for (let n = 2; n <= 5; n += 1) task = await send(client, words(n), { taskId: task.id });
    assert.equal(small.chatRequests().filter(isSummary).length, 0);
    // 9 + 6 × 300 + 5 × 2 = 1819: compacted first.
    const events = await collect(sendStream(client, words(6), { taskId: task.id }));
    const said = notices(events);
    assert.deepEqual(
      said.map((notice) => notice.kind),
      ['point', COMPACTED_NOTICE],
      'the point, then the notice; no cut',
    );
    const { charsBefore, charsAfter } = said[1]!.data;
    assert.equal(charsBefore, 1819);
    assert.equal(
      said[1]!.text,
      `Compacted the conversation: 1,819 → ${charsAfter.toLocaleString('en-US')} characters (the earlier messages summarised, the latest kept as they were).`,
    );
    const turn = small
      .chatRequests()
      .filter((body) => !isSummary(body))
      .at(-1);
    // The tail within 0.4 × 2000 = 800 characters: ok, message 5, ok, message 6; message 4 is pinned.
    assert.deepEqual(
      turn.messages.map((m: any) => `${m.role}: ${m.content.slice(0, 9)}`),
      [
        'system: Be brief.',
        `user: ${SUMMARY_HEADING.slice(0, 9)}`,
        'user: message 4',
        'assistant: ok',
        'user: message 5',
        'assistant: ok',
        'user: message 6',
      ],
    );
    const summary = `${SUMMARY_HEADING}\n\nSUMMARY(message 1; message 2; message 3; message 4)`;
    assert.equal(turn.messages[1].content, summary);
    assert.equal(charsAfter, 9 + summary.length + 3 * 300 + 2 * 2, 'the system prompt, the summary, what follows');
    // Stored with the task, the point holds for the next turn too, which has no need to compact again.
    const stored = await historyOf(client, task.id);
    assert.equal(points(stored).length, 1);
    await send(client, words(7), { taskId: task.id });
    assert.equal(small.chatRequests().filter(isSummary).length, 1);
    assert.equal(small.chatRequests().at(-1).messages[1].content, turn.messages[1].content);
  });

  it('CMD-36: when the summary cannot be made, the turn says why and goes on with the cut', async () => {
    const client = await small.client('HTTP+JSON');
    let task = await send(client, words(1, 'no-summaries'));
    for (let n = 2; n <= 6; n += 1) task = await send(client, words(n), { taskId: task.id });
    // 9 + 7 × 300 + 6 × 2 = 2121: over the budget itself, and no summary to be had.
    const events = await collect(sendStream(client, words(7), { taskId: task.id }));
    const said = notices(events);
    assert.deepEqual(
      said.map((notice) => notice.kind),
      [COMPACTION_FAILED_NOTICE, CONTEXT_CUT_NOTICE],
    );
    assert.match(said[0]!.text, /^The conversation could not be compacted: .*summaries are switched off here/);
    assert.ok(said[1]!.data.cut > 0);
    assert.equal(points(await historyOf(client, task.id)).length, 0);
    const turn = small.chatRequests().at(-1);
    assert.equal(turn.messages.at(-1).content, words(7));
    assert.ok(!JSON.stringify(turn.messages).includes(SUMMARY_HEADING));
  });
});
