/**
 * How the terminal chat draws the conversation extension's replies and marks, and when two
 * Escape presses are Esc Esc: on their own, without an agent.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { stripVTControlCharacters } from 'node:util';
import { ChatScreen } from '../../src/client/chat-screen.js';
import type { Connection } from '../../src/client/connect.js';
import { ConversationActions } from '../../src/client/conversation-actions.js';
import { compactionLine, contextBar, rewindLine } from '../../src/client/conversation-marks.js';
import { PipedInput } from '../../src/client/chat-input.js';
import { styleFor } from '../../src/client/render.js';
import {
  contextReportOf,
  dataOf,
  forkedOf,
  rewindChoicesOf,
  rewoundOf,
  type ContextReport,
} from '../../src/conversation-replies.js';
import { dataPart, REPLY_ERROR_KEY, textPart } from '../../src/wire.js';
import { FakeTerminal } from './fake-terminal.js';

const plain = styleFor({ isTTY: false });

const report = (parts: ContextReport['parts'], budgetChars = 1000): ContextReport => {
  const usedChars = Object.values(parts).reduce((a, b) => a + b, 0);
  return { model: 'fixture:small', budgetChars, usedChars, share: usedChars / budgetChars, parts };
};

describe('the /context bar', () => {
  it('fills the share used, each part with its own character in order, the rest free', () => {
    const drawn = contextBar(
      report({ systemPrompt: 100, instructions: 0, tools: 100, summary: 0, history: 300 }),
      120,
      plain,
    )!;
    const bar = /▕(.*)▏/.exec(drawn)![1]!;
    assert.equal(bar.length, 40);
    assert.match(bar, /^█{4}▒{4}░{12}·{20}$/);
    assert.match(drawn, /▏ 50% · 500 of 1.0k characters · fixture:small\n/);
    assert.match(drawn, /█ system prompt 100 {2}▓ instructions 0 {2}▒ tools 100 {2}▞ summary 0 {2}░ history 300$/);
  });

  it('a conversation over its budget fills the bar and no more; a narrow terminal gets none', () => {
    const over = report({ systemPrompt: 0, instructions: 0, tools: 0, summary: 0, history: 15_000 }, 10_000);
    assert.match(contextBar(over, 120, plain)!, /▕░{40}▏ 150% · 15k of 10k characters/);
    assert.equal(contextBar(over, 49, plain), undefined);
  });

  it('the dividers say what was done, in exact numbers', () => {
    assert.equal(
      compactionLine({ charsBefore: 120_000, charsAfter: 4_321 }),
      '── conversation compacted: 120,000 → 4,321 characters ──',
    );
    assert.equal(rewindLine(1), '── rewound: 1 message hidden ──');
  });
});

describe("reading the conversation commands' replies", () => {
  it('takes the shapes the commands answer with, and reads a reply missing a field as none', () => {
    const point = { n: 1, messageId: 'm', preview: 'hi', text: 'hi\nthere' };
    assert.deepEqual(rewindChoicesOf({ points: [point, { n: 'x' }] }), [point]);
    assert.deepEqual(rewindChoicesOf({ [REPLY_ERROR_KEY]: 'turn_running' }), []);
    assert.deepEqual(rewoundOf({ rewoundTo: { n: 2, messageId: 'm', text: 'back' }, hidden: 4 }), {
      n: 2,
      messageId: 'm',
      text: 'back',
      hidden: 4,
    });
    assert.equal(rewoundOf({ rewoundTo: { n: 2 } }), undefined);
    assert.deepEqual(forkedOf({ taskId: 't', contextId: 'c', messages: 3 }), { taskId: 't', contextId: 'c' });
    assert.equal(forkedOf({ taskId: '' }), undefined);
    assert.equal(contextReportOf({ budgetChars: 10, usedChars: 'x', parts: {} }), undefined);
    assert.equal(dataOf([textPart('no data')]), undefined);
    assert.deepEqual(dataOf([textPart('text'), dataPart({ a: 1 })]), { a: 1 });
  });
});

describe('Esc Esc', () => {
  /** Actions whose chat has no task yet: Esc Esc says so, which shows when it was taken as Esc Esc. */
  function actions(terminal: FakeTerminal, now: () => number) {
    const screen = new ChatScreen(terminal.output, plain);
    const connection = { commands: [{ name: 'rewind', description: '', argumentHint: '' }] } as unknown as Connection;
    return new ConversationActions({
      connection,
      screen,
      input: new PipedInput(terminal.input),
      now,
      ids: () => ({ taskId: '', contextId: '' }),
      busy: () => false,
      idle: () => Promise.resolve(),
      send: () => {},
      resume: () => {},
    });
  }
  const said = (terminal: FakeTerminal) =>
    stripVTControlCharacters(terminal.drawn).split('(nothing to rewind').length - 1;

  it('is two presses within a second, or two the terminal sent at once; one press, or two further apart, is not', () => {
    const terminal = new FakeTerminal();
    let time = 0;
    const keys = actions(terminal, () => time);
    keys.escape(false);
    time = 1500;
    keys.escape(false);
    assert.equal(said(terminal), 0, 'a second and a half apart');
    time = 2000;
    keys.escape(false);
    assert.equal(said(terminal), 1, 'half a second apart');
    time = 2100;
    keys.escape(false);
    assert.equal(said(terminal), 1, 'the press after an Esc Esc starts afresh');
    keys.escape(true);
    assert.equal(said(terminal), 2, 'ESC ESC at once');
  });
});
