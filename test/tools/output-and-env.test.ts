/** A tool result as text, cut with a note over the bound; `${VAR}` expansion of server settings. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HarnessError } from '../../src/errors.js';
import { expandEnv } from '../../src/tools/expand-env.js';
import { boundOutput, resultText } from '../../src/tools/output.js';

describe('tool output', () => {
  it('joins text parts, names what is not text, and falls back to the structured value', () => {
    const text = resultText({
      content: [
        { type: 'text', text: 'one' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'resource', resource: { uri: 'file:///a', text: 'two' } },
      ],
    });
    assert.equal(text, 'one\n[image image/png, not shown]\ntwo');
    assert.equal(resultText({ content: [], structuredContent: { n: 1 } }), '{"n":1}');
  });

  it('TOOL-2: output over the bound is cut, with a note that says how much', () => {
    assert.equal(boundOutput('short', 10), 'short');
    assert.equal(
      boundOutput('x'.repeat(25), 10),
      `${'x'.repeat(10)}\n[output cut: the first 10 of 25 characters are shown]`,
    );
  });
});

describe('${VAR} expansion', () => {
  it('replaces variables, takes defaults, and names (never shows) an unset variable', () => {
    assert.equal(expandEnv('Bearer ${TOKEN}', { TOKEN: 's3cret' }, 'h'), 'Bearer s3cret');
    assert.equal(expandEnv('${HOST:-127.0.0.1}:${PORT:-9}', { PORT: '80' }, 'h'), '127.0.0.1:80');
    assert.equal(expandEnv('no variables', {}, 'h'), 'no variables');
    assert.throws(
      () => expandEnv('Bearer ${MISSING}', { OTHER: 'x' }, 'mcpServers.s.headers.Authorization'),
      (error: unknown) =>
        error instanceof HarnessError &&
        error.code === 'config_invalid' &&
        /mcpServers\.s\.headers\.Authorization names the environment variable MISSING/.test(error.message),
    );
  });
});
