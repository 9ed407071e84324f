import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, type Message, type Part } from '@a2a-js/sdk';
import { buildConversation, SUMMARY_HEADING } from '../../src/conversation/build.js';
import {
  compactionMessage,
  conversationMovedOn,
  inParts,
  planCompaction,
  SUMMARISER_ROLE,
  type CompactionInput,
} from '../../src/conversation/compaction.js';
import { NOTICE_KEY, REWIND_KEY, TOOL_CALL_KEY } from '../../src/wire.js';

let n = 0;
function message(role: Role, value: string, metadata: Record<string, unknown> = {}, id = `m${++n}`): Message {
  const part: Part = { content: { $case: 'text', value }, mediaType: 'text/plain', filename: '', metadata: {} };
  return {
    messageId: id,
    taskId: 't',
    contextId: 'c',
    role,
    parts: [part],
    metadata,
    extensions: [],
    referenceTaskIds: [],
  };
}
const user = (text: string, id?: string) => message(Role.ROLE_USER, text, {}, id);
const agent = (text: string, id?: string) => message(Role.ROLE_AGENT, text, {}, id);
const contents = (history: Message[]) =>
  buildConversation({ history }).messages.map((m) => (m.role === 'tool' ? `tool ${m.call.tool}` : m.content));
const made = (input: CompactionInput, summary: string) =>
  compactionMessage(input, planCompaction(input)!, {
    messageId: `point-${++n}`,
    taskId: 't',
    contextId: 'c',
    summary,
    model: 'fixture:small',
  });

describe('compaction: what a summary covers and what the summariser reads (CMD-36)', () => {
  const history = [
    user('u1 first', 'u1'),
    agent('a1 first answer', 'a1'),
    message(Role.ROLE_USER, '/status', { command: 'status' }, 'c1'),
    message(Role.ROLE_AGENT, 'State: working', { command: 'status' }, 'c2'),
    message(Role.ROLE_AGENT, 'The turn was interrupted', { [NOTICE_KEY]: 'interrupted' }, 'n1'),
    user('u2 second', 'u2'),
    agent('a2 second answer', 'a2'),
    user('u3 third', 'u3'),
    agent('a3 third answer', 'a3'),
  ];

  it('CMD-36: keeps at most half of the messages after the point as the tail, and summarises the rest in order', () => {
    const plan = planCompaction({ history, budgetChars: 100_000, tailShare: 0.1 })!;
    // Six conversation messages: the newest three stay verbatim, whatever the budget leaves room for.
    assert.equal(plan.upTo, 'u2');
    assert.equal(plan.covered, 3);
    assert.equal(plan.parts.join('\n\n'), 'User: u1 first\n\nAssistant: a1 first answer\n\nUser: u2 second');
    assert.ok(
      !plan.parts.join('\n\n').includes('/status') && !plan.parts.join('\n\n').includes('interrupted'),
      'no command, no notice',
    );
    assert.ok(plan.instructions.startsWith(SUMMARISER_ROLE));
  });

  it('CMD-36: the tail is the newest messages within tailShare of the budget', () => {
    // 1000 × 0.03 = 30 characters: a3 (15) and u3 (8) fit, a2 (16) does not.
    assert.equal(planCompaction({ history, budgetChars: 1000, tailShare: 0.03 })!.upTo, 'a2');
    assert.equal(planCompaction({ history, budgetChars: 1000, tailShare: 0 })!.upTo, 'a3', 'no tail at all');
  });

  it('CMD-36: a transcript longer than the budget goes in parts that each fit it, in order', () => {
    const long = Array.from({ length: 40 }, (_, i) => [
      user(`question ${i} ${'q'.repeat(200)}`),
      agent(`answer ${i}`),
    ]).flat();
    const plan = planCompaction({ history: long, budgetChars: 5000, tailShare: 0.05 })!;
    assert.ok(plan.parts.length > 1, `${plan.parts.length} parts`);
    const least = Math.max(2000, 5000 - plan.instructions.length - 2 * 1000);
    for (const part of plan.parts) assert.ok(part.length <= least, `a part of ${part.length} characters`);
    assert.match(plan.parts[0]!, /^User: question 0 /, 'the oldest first');
    const at = (k: number) => plan.parts.join('\n\n').indexOf(`question ${k} `);
    for (let k = 1; k < 30; k += 1) assert.ok(at(k - 1) < at(k), `question ${k} after question ${k - 1}`);
    assert.ok(inParts(['x'.repeat(5000)], 2000)[0]!.length <= 2000 + 40, 'one huge line is cut, saying so');
    assert.match(inParts(['x'.repeat(5000)], 2000)[0]!, /\[… \d+ characters cut\]$/);
  });

  it('has nothing to compact when the summary would cover only the message it keeps verbatim', () => {
    assert.equal(
      planCompaction({ history: [user('hello'), agent('hi')], budgetChars: 1000, tailShare: 0.5 }),
      undefined,
    );
    assert.equal(planCompaction({ history: [], budgetChars: 1000, tailShare: 0.1 }), undefined);
  });

  it('steers the summary with the focus, and bounds its length by the tail share', () => {
    const plan = planCompaction({ history, budgetChars: 100_000, tailShare: 0.1, focus: ' keep the API decisions ' })!;
    assert.match(plan.instructions, /keep in particular: keep the API decisions$/);
    assert.match(plan.instructions, /under 10,000 characters/);
    assert.doesNotMatch(planCompaction({ history, budgetChars: 100_000, tailShare: 0.1 })!.instructions, /particular/);
  });

  it('shows tool calls to the summariser as "Tool call" lines', () => {
    const call = message(Role.ROLE_AGENT, '', { [TOOL_CALL_KEY]: 'v1' }, 'tc');
    call.parts = [
      {
        content: {
          $case: 'data',
          value: { id: 'call-1', tool: 'fs_read', input: { path: 'a.txt' }, status: 'succeeded', output: 'contents' },
        },
        mediaType: 'application/json',
        filename: '',
        metadata: {},
      },
    ];
    const plan = planCompaction({
      history: [user('read it', 'r'), call, agent('done', 'd'), user('next', 'x'), agent('ok', 'o'), user('more')],
      budgetChars: 100_000,
      tailShare: 0.1,
    })!;
    assert.match(plan.parts.join('\n\n'), /Tool call fs_read \{"path":"a\.txt"\} returned: contents/);
  });

  it('CMD-36: the point sends the summary, the pinned last request and the tail, and says the sizes before and after', () => {
    const input: CompactionInput = { systemPrompt: 'Be brief.', history, budgetChars: 100_000, tailShare: 0.1 };
    const { message: point, point: data } = made(input, 'S1');
    assert.equal(data.upTo, 'u2');
    assert.equal(data.model, 'fixture:small');
    assert.equal(point.role, Role.ROLE_AGENT);
    const after = buildConversation({ systemPrompt: 'Be brief.', history: [...history, point] });
    assert.deepEqual(
      after.messages.map((m) => (m.role === 'tool' ? '' : m.content)),
      [`${SUMMARY_HEADING}\n\nS1`, 'u2 second', 'a2 second answer', 'u3 third', 'a3 third answer'],
    );
    const { sizes } = after;
    assert.equal(data.charsAfter, sizes.systemPrompt + sizes.summary + sizes.history);
    // Before: everything the turn would send, the system prompt included.
    const before = buildConversation({ systemPrompt: 'Be brief.', history }).sizes;
    assert.equal(data.charsBefore, before.systemPrompt + before.history);
    assert.equal(data.charsBefore, 9 + 71);
  });

  it('a second compaction reads the previous summary first, then the pinned message and what follows', () => {
    const first = made({ history, budgetChars: 100_000, tailShare: 0.1 }, 'S1').message;
    const longer = [...history, first, user('u4 fourth', 'u4'), agent('a4 fourth answer', 'a4')];
    const plan = planCompaction({ history: longer, budgetChars: 100_000, tailShare: 0.1 })!;
    // After the point: a2 u3 a3 u4 a4 — five, of which the newest two stay.
    assert.equal(plan.upTo, 'a3');
    assert.equal(
      plan.parts.join('\n\n'),
      'Summary of the conversation before:\nS1\n\nUser: u2 second\n\nAssistant: a2 second answer\n\nUser: u3 third\n\nAssistant: a3 third answer',
    );
    const second = made({ history: longer, budgetChars: 100_000, tailShare: 0.1 }, 'S2').message;
    assert.deepEqual(contents([...longer, second]), [
      `${SUMMARY_HEADING}\n\nS2`,
      'u3 third',
      'u4 fourth',
      'a4 fourth answer',
    ]);
  });
});

describe('whether the conversation moved on while a summary was written', () => {
  const seen = [user('u1', 'u1'), agent('a1', 'a1'), message(Role.ROLE_USER, '/compact', { command: 'compact' }, 'k')];

  it('not for a command exchange meanwhile, nor for the same history', () => {
    const status = message(Role.ROLE_AGENT, 'State', { command: 'status' }, 's');
    assert.equal(conversationMovedOn(seen, seen), false);
    assert.equal(conversationMovedOn(seen, [...seen.slice(0, 2), status, seen[2]!]), false);
  });

  it('for a new message the model reads, and for a rewind', () => {
    assert.equal(conversationMovedOn(seen, [...seen.slice(0, 2), user('u2', 'u2'), seen[2]!]), true);
    const mark = message(Role.ROLE_AGENT, 'rewound', { [REWIND_KEY]: { to: 'u1', hidden: ['u1', 'a1'] } }, 'r');
    assert.equal(conversationMovedOn(seen, [...seen, mark]), true);
  });
});
