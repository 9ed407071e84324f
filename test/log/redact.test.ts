/**
 * `redactSecrets`: what a provider's error text, or any text of someone else's, loses before it
 * reaches a reply or a log line, and what it keeps so that it still says what is wrong.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { describeError, redactSecrets } from '../../src/log.js';
import { failSpan } from '../../src/telemetry/traces.js';

describe('redactSecrets', () => {
  const cases: Array<[string, string, string]> = [
    [
      "OpenAI's 401, the key quoted back half masked",
      'Incorrect API key provided: sk-proj-abcd************************wxyz. You can find your API key at https://platform.openai.com/account/api-keys.',
      'Incorrect API key provided: [redacted]. You can find your API key at https://platform.openai.com/account/api-keys.',
    ],
    ['an Anthropic key', 'invalid x-api-key sk-ant-api03-AbCdEf_123-xyz', 'invalid x-api-key [redacted]'],
    ['a bearer token', 'Authorization: Bearer eyJhbGciOiJIUzI1NiJ9.e30.abc', 'Authorization: Bearer [redacted]'],
    ['basic credentials', 'sent Basic dXNlcjpwYXNz', 'sent Basic [redacted]'],
    [
      "a URL's user and password",
      'see https://alice:s3cret@proxy.example:8080/v1',
      'see https://[redacted]@proxy.example:8080/v1',
    ],
    [
      'a key in a query string',
      'GET https://example.test/v1?key=AIzaSyA1234567890abcdefghijklmnopqrstu&alt=sse failed',
      'GET https://example.test/v1?key=[redacted]&alt=sse failed',
    ],
    [
      'a secret named in JSON',
      '{"api_key": "hunter2", "model": "small"}',
      '{"api_key": "[redacted]", "model": "small"}',
    ],
    [
      'a Google key alone',
      'API key not valid: AIzaSyA1234567890abcdefghijklmnopqrstu',
      'API key not valid: [redacted]',
    ],
    ['a long opaque token', 'token 0a1b2c3d4e5f60718293a4b5c6d7e8f9 refused', 'token [redacted] refused'],
  ];
  for (const [what, text, expected] of cases) {
    it(`removes ${what}`, () => assert.equal(redactSecrets(text), expected));
  }

  it('keeps what says what is wrong: model names, numbers, plain words', () => {
    const text =
      'The model `claude-3-5-sonnet-20241022` does not exist or you do not have access to it; limit 10000 tokens per min, used 10234.';
    assert.equal(redactSecrets(text), text);
  });

  it("a failed span's status message is redacted too", () => {
    let status: { message?: string } | undefined;
    const span = { setAttribute: () => span, setStatus: (given: { message?: string }) => ((status = given), span) };
    failSpan(span as never, 'AI_APICallError', 'Incorrect API key provided: sk-test-SECRET-0123456789abcdef');
    assert.equal(status?.message, 'Incorrect API key provided: [redacted]');
  });

  it('describeError removes the same, on one line', () => {
    const error = new Error('Incorrect API key provided: sk-test-SECRET-0123456789abcdef\n    at stack');
    assert.equal(describeError(error), 'Error: Incorrect API key provided: [redacted]');
  });
});
