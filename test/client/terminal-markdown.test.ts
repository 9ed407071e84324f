/**
 * The terminal's light Markdown: bold, code, lists and headings as styles, as the reply
 * streams in, however the chunks cut it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { stripVTControlCharacters } from 'node:util';
import fc from 'fast-check';
import { TerminalMarkdown } from '../../src/client/terminal-markdown.js';
import { checkProperty } from '../support/property.js';

const BOLD = '\x1b[1m';
const UNBOLD = '\x1b[22m';
const CODE = '\x1b[36m';
const UNCODE = '\x1b[39m';

function render(...chunks: string[]): string {
  const md = new TerminalMarkdown();
  return chunks.map((c) => md.push(c)).join('') + md.end();
}

describe('terminal Markdown', () => {
  it('bold, inline code, bullets and headings become styles; their markers are not printed', () => {
    assert.equal(render('a **b** `c`\n'), `a ${BOLD}b${UNBOLD} ${CODE}c${UNCODE}\n`);
    assert.equal(render('- one\n* two\n  + three\n'), '• one\n• two\n  • three\n');
    assert.equal(render('## Title\nbody\n'), `${BOLD}Title${UNBOLD}\nbody\n`);
    assert.equal(render('1. first\n'), '1. first\n', 'a numbered list is already readable');
  });

  it('a fenced block is in the code color, its fence lines left out, its insides printed as they are', () => {
    assert.equal(
      render('see:\n```ts\nconst a = **b**;\n- x\n```\ndone\n'),
      `see:\n${CODE}const a = **b**;\n- x\n${UNCODE}done\n`,
    );
  });

  it('a marker cut between chunks is still one marker', () => {
    assert.equal(render('a *', '*b*', '* c'), `a ${BOLD}b${UNBOLD} c`);
    assert.equal(render('x\n`', '``\ncode\n``', '`\n'), `x\n${CODE}code\n${UNCODE}`);
    assert.equal(render('-', ' item\n'), '• item\n');
    assert.equal(
      render('# ', ' Title'),
      render('#  Title'),
      "a marker's spaces cut between chunks are all the marker's",
    );
    assert.equal(render('- ', ' item'), '• item');
  });

  it('a stray marker styles at most the rest of its line, and the end closes every style', () => {
    const out = render('2 ** 3 is 8\nplain\n');
    assert.equal(out, `2 ${BOLD} 3 is 8${UNBOLD}\nplain\n`);
    assert.equal(render('```\nunclosed'), `${CODE}unclosed${UNCODE}`);
    assert.equal(render('a `b'), `a ${CODE}b${UNCODE}`);
  });

  it('a last line that would open a fence, with nothing after it, is printed as a line of text', () => {
    // Nothing follows it, so it opens no block: it is read as any other line, streamed or not.
    assert.equal(render('~~~ a b'), '~~~ a b');
    assert.equal(stripVTControlCharacters(render('```python')), 'python');
    assert.equal(render('```python'), render('``', '`python'));
    assert.equal(stripVTControlCharacters(render('x\n```end')), 'x\nend');
    assert.equal(render('x\n```end'), render('x\n', '```', 'end'));
    // A fence that is closed on the last line still closes, and one opened by a full line still opens.
    assert.equal(render('```\ncode\n```'), `${CODE}code\n${UNCODE}`);
    assert.equal(render('```ts\n'), `${CODE}${UNCODE}`);
  });

  it('text streams as it comes: a word at the start of a line is not held back', () => {
    const md = new TerminalMarkdown();
    assert.equal(md.push('Hello'), 'Hello');
    assert.equal(md.push(' there\nNext'), ' there\nNext');
  });

  it('however the chunks fall, the output is the same as in one piece, and no letter is lost', () => {
    const alphabet = fc.constantFrom('a', ' ', '*', '`', '-', '#', '\n', '~', 'b');
    checkProperty(
      'chunking changes nothing and drops only markers',
      fc.property(fc.array(alphabet, { maxLength: 40 }), fc.array(fc.nat(40), { maxLength: 6 }), (chars, cuts) => {
        const text = chars.join('');
        const points = [...new Set(cuts.map((c) => Math.min(c, text.length)))].sort((a, b) => a - b);
        const chunks: string[] = [];
        let from = 0;
        for (const p of points) {
          chunks.push(text.slice(from, p));
          from = p;
        }
        chunks.push(text.slice(from));
        assert.equal(render(...chunks), render(text));
        // Only markers are ever dropped: the letters all get through.
        assert.equal(stripVTControlCharacters(render(text)).replace(/[^ab]/g, ''), text.replace(/[^ab]/g, ''));
      }),
      // 67738575: a last line "~~~a" (a fence opener with nothing after it) was dropped.
      { pinnedSeeds: [67738575] },
    );
  });
});
