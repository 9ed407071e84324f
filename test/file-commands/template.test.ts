import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { argumentWords, expandedLength, expandTemplate } from '../../src/file-commands/index.js';
import { checkProperty } from '../support/property.js';

describe('file command templates', () => {
  it('$ARGUMENTS is the whole argument text, every time it appears', () => {
    assert.equal(
      expandTemplate('Review $ARGUMENTS. Then $ARGUMENTS again.', 'src/a.ts for leaks'),
      'Review src/a.ts for leaks. Then src/a.ts for leaks again.',
    );
    assert.equal(expandTemplate('[$ARGUMENTS]', ''), '[]');
  });

  it('$1 to $9 are the white-space-separated words', () => {
    const args = 'one two three four five six seven eight nine ten';
    assert.equal(expandTemplate('$1|$2|$3|$4|$5|$6|$7|$8|$9', args), 'one|two|three|four|five|six|seven|eight|nine');
    assert.equal(expandTemplate('$2 then $1 then $2', 'a b'), 'b then a then b');
  });

  it('a missing word is ""', () => {
    assert.equal(expandTemplate('Review $1 focusing on [$2]', 'a.ts'), 'Review a.ts focusing on []');
    assert.equal(expandTemplate('<$1><$9>', ''), '<><>');
  });

  it('multi-line arguments: line breaks and tabs separate words; $ARGUMENTS keeps the lines', () => {
    const args = 'first line\n\tsecond  line\r\nthird';
    assert.deepEqual(argumentWords(args), ['first', 'line', 'second', 'line', 'third']);
    assert.equal(expandTemplate('$3/$5', args), 'second/third');
    assert.equal(expandTemplate('Text:\n$ARGUMENTS\nEnd', args), `Text:\n${args}\nEnd`);
  });

  it('$10 is $1 followed by 0; nothing else is special', () => {
    assert.equal(expandTemplate('$10', 'a b c d e f g h i j'), 'a0');
    assert.equal(
      expandTemplate('$0 $$ $$1 ${1} ${2:-anything} $name $arguments $', 'x y'),
      '$0 $$ $x ${1} ${2:-anything} $name $arguments $',
    );
  });

  it('arguments are inserted once, never expanded again', () => {
    assert.equal(expandTemplate('$1 / $ARGUMENTS', '$2 $ARGUMENTS'), '$2 / $2 $ARGUMENTS');
  });

  it('a template without placeholders ignores the arguments', () => {
    assert.equal(expandTemplate('Summarize the conversation.', 'ignored words'), 'Summarize the conversation.');
  });

  it('expandedLength is the length of the expansion, computed without building it', () => {
    const piece = fc.constantFrom('$ARGUMENTS', '$1', '$2', '$9', '$10', '$$', '$', 'ARGUMENTS', ' ', '\n', 'text');
    const template = fc.array(piece, { maxLength: 30 }).map((pieces) => pieces.join(''));
    const args = fc
      .array(fc.constantFrom('a', 'bc', ' ', '\t', '\n', '$1', '$ARGUMENTS'), { maxLength: 20 })
      .map((pieces) => pieces.join(''));
    checkProperty(
      "expandedLength is the expansion's length",
      fc.property(template, args, (t, a) => expandedLength(t, a) === expandTemplate(t, a).length),
    );
  });
});
