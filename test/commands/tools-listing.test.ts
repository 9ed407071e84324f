/** `/tools`' lines (CMD-33, TOOL-5): a long description is cut at a word, to one line. */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { oneLine } from '../../src/commands/builtins/tools.js';

describe('/tools descriptions', () => {
  it('CMD-33: a description is its first line, cut at a word past 100 characters, with an ellipsis', () => {
    assert.equal(oneLine('Says the text back.\nMore detail here.'), 'Says the text back.');
    const long = `${'word '.repeat(30)}end`;
    const cut = oneLine(long);
    assert.ok(cut.length <= 101, 'at most 100 characters and the ellipsis');
    assert.match(cut, /^(word )*word…$/, 'cut between words, never inside one');
    assert.equal(oneLine('x'.repeat(150)), `${'x'.repeat(99)}…`, 'one word longer than the line is cut where it ends');
    assert.equal(oneLine('exactly fits'), 'exactly fits');
  });
});
