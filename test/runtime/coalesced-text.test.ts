import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { CoalescedText } from '../../src/runtime/coalesced-text.js';

describe('CoalescedText', () => {
  it('merges the deltas pushed in one turn of the event loop into one piece, in order', async () => {
    const pieces: string[] = [];
    const text = new CoalescedText((piece) => pieces.push(piece));
    for (const delta of ['a', 'b', '', 'c']) text.push(delta);
    assert.deepEqual(pieces, [], 'nothing goes out within the burst');
    await nextTurn();
    assert.deepEqual(pieces, ['abc']);
  });

  it('sends deltas that arrive apart as pieces of their own', async () => {
    const pieces: string[] = [];
    const text = new CoalescedText((piece) => pieces.push(piece));
    text.push('one');
    await nextTurn();
    text.push('two');
    await nextTurn();
    assert.deepEqual(pieces, ['one', 'two']);
  });

  it('flush hands on what waits at once, and the scheduled turn then sends nothing twice', async () => {
    const pieces: string[] = [];
    const text = new CoalescedText((piece) => pieces.push(piece));
    text.push('end');
    text.flush();
    assert.deepEqual(pieces, ['end']);
    await nextTurn();
    text.flush();
    assert.deepEqual(pieces, ['end'], 'no empty or repeated piece');
  });

  it('take returns what waits without handing it on, and the scheduled turn then sends nothing', async () => {
    const pieces: string[] = [];
    const text = new CoalescedText((piece) => pieces.push(piece));
    text.push('last ');
    text.push('words');
    assert.equal(text.take(), 'last words');
    assert.equal(text.take(), '', 'nothing waits any more');
    await nextTurn();
    assert.deepEqual(pieces, []);
  });
});
