/**
 * The terminal's Markdown, rendered from marked's tokens as the reply streams in: styles for
 * bold, italics, code, links, headings; bullets; quotes behind a bar; tables in columns; the
 * unfinished line kept apart until it ends, however the chunks cut it.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { stripVTControlCharacters } from 'node:util';
import fc from 'fast-check';
import { TerminalMarkdown } from '../../src/client/terminal-markdown.js';
import { checkProperty } from '../support/property.js';

const BOLD = '\x1b[1m';
const UNBOLD = '\x1b[22m';
const ITALIC = '\x1b[3m';
const UNITALIC = '\x1b[23m';
const UNDERLINE = '\x1b[4m';
const UNUNDERLINE = '\x1b[24m';
const CODE = '\x1b[36m';
const UNCODE = '\x1b[39m';
const DIM = '\x1b[2m';

function render(...chunks: string[]): string {
  const md = new TerminalMarkdown();
  return chunks.map((c) => md.push(c)).join('') + md.end();
}

describe('terminal Markdown', () => {
  it('bold, italics, inline code, bullets and headings become styles; their markers are not printed', () => {
    assert.equal(render('a **b** `c` *d*\n'), `a ${BOLD}b${UNBOLD} ${CODE}c${UNCODE} ${ITALIC}d${UNITALIC}\n`);
    assert.equal(render('- one\n* two\n  + three\n'), '• one\n• two\n  • three\n');
    assert.equal(render('## Title\nbody\n'), `${BOLD}Title${UNBOLD}\nbody\n`);
    assert.equal(render('1. first\n2. second\n'), '1. first\n2. second\n');
    assert.equal(render('- [x] done\n'), '• [x] done\n');
  });

  it('a link is underlined, with its address when that differs from its text', () => {
    assert.equal(
      render('see [the spec](https://a2a.dev)\n'),
      `see ${UNDERLINE}the spec${UNUNDERLINE} ${DIM}(https://a2a.dev)${UNBOLD}\n`,
    );
    assert.equal(render('<https://a2a.dev>\n'), `${UNDERLINE}https://a2a.dev${UNUNDERLINE}\n`);
  });

  it('a block quote is shown behind a dim bar, never as "> " (the prompt)', () => {
    const out = render('> quoted **words**\n> > deeper\n');
    assert.equal(stripVTControlCharacters(out), '│ quoted words\n│ │ deeper\n');
    assert.ok(out.startsWith(`${DIM}│ `), 'the bar is dim');
  });

  it('a table is aligned in columns once its last row has come; its header in bold', () => {
    const md = new TerminalMarkdown();
    assert.equal(md.push('| name | n |\n|---|--:|\n| a | 1 |\n'), '', 'held: more rows may come');
    const out = md.push('| long name | 22 |\nafter\n') + md.end();
    assert.deepEqual(stripVTControlCharacters(out).split('\n'), [
      'name      │  n',
      '──────────┼───',
      'a         │  1',
      'long name │ 22',
      'after',
      '',
    ]);
    assert.ok(out.startsWith(BOLD));
    assert.equal(stripVTControlCharacters(render('a | b\nplain\n')), 'a | b\nplain\n', 'a bar alone is no table');
  });

  it('a fenced block is in the code color, its fences left out, its language dim, its insides as they are', () => {
    assert.equal(
      render('see:\n```ts\nconst a = **b**;\n- x\n```\ndone\n'),
      `see:\n${DIM}ts${UNBOLD}\n${CODE}const a = **b**;${UNCODE}\n${CODE}- x${UNCODE}\ndone\n`,
    );
    assert.equal(render('```\nunclosed'), `${CODE}unclosed${UNCODE}`);
  });

  it('a stray marker is printed as it is; the end closes every style', () => {
    assert.equal(render('2 ** 3 is 8\nplain\n'), '2 ** 3 is 8\nplain\n');
    assert.equal(render('a `b'), 'a `b');
    assert.equal(render('~~~ a b'), '~~~ a b', 'a fence with nothing after it is a line of text');
  });

  it('the unfinished line is pending, shown as far as it can be, and printed once it ends', () => {
    const md = new TerminalMarkdown();
    assert.equal(md.push('Hello'), '');
    assert.equal(md.pending(), 'Hello');
    assert.equal(md.push(' **there'), '');
    assert.equal(md.pending(), 'Hello **there', 'a span not closed yet is shown as typed');
    assert.equal(md.push('**\n- ne'), `Hello ${BOLD}there${UNBOLD}\n`);
    assert.equal(md.pending(), '• ne');
    assert.equal(md.end(), '• ne');
    assert.equal(md.pending(), '');
  });

  it('without styles, lines pass through as they came', () => {
    const md = new TerminalMarkdown({ styled: false });
    assert.equal(md.push('**a**\n> b'), '**a**\n');
    assert.equal(md.end(), '> b');
  });

  it('however the chunks fall, the output is the same as in one piece, and no letter is lost', () => {
    const alphabet = fc.constantFrom('a', ' ', '*', '`', '-', '#', '\n', '~', 'b', '>', '|', '_', '[', ']');
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
