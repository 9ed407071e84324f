/** `mcpServers` in the config file: the `.mcp.json` shape, defaults, and the messages for mistakes. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseConfig } from '../../src/config/load.js';
import { HarnessError } from '../../src/errors.js';

function parse(config: unknown) {
  return parseConfig(JSON.stringify(config), 'harness.json');
}

function problems(config: unknown): string {
  try {
    parse(config);
  } catch (error) {
    assert.ok(error instanceof HarnessError);
    assert.equal(error.code, 'config_invalid');
    return error.message;
  }
  assert.fail('expected config_invalid');
}

describe('config: mcpServers', () => {
  it('takes the .mcp.json shape: stdio and Streamable HTTP servers, with approve defaulting to "never"', () => {
    const config = parse({
      mcpServers: {
        fs: { command: 'npx', args: ['@modelcontextprotocol/server-filesystem', '/srv/data'], env: {} },
        search: {
          url: 'http://127.0.0.1:9000/mcp',
          headers: { Authorization: 'Bearer ${SEARCH_TOKEN}' },
          approve: ['delete'],
        },
        typed: { type: 'http', url: 'https://example.test/mcp', approve: 'always' },
      },
      maxSteps: 5,
      toolTimeoutMs: 1000,
    });
    assert.deepEqual(config.mcpServers.fs, {
      type: 'stdio',
      command: 'npx',
      args: ['@modelcontextprotocol/server-filesystem', '/srv/data'],
      env: {},
      approve: 'never',
    });
    assert.deepEqual(config.mcpServers.search, {
      type: 'http',
      url: 'http://127.0.0.1:9000/mcp',
      headers: { Authorization: 'Bearer ${SEARCH_TOKEN}' },
      approve: ['delete'],
    });
    assert.equal(config.mcpServers.typed?.approve, 'always');
    assert.equal(config.maxSteps, 5);
    assert.equal(config.toolTimeoutMs, 1000);
  });

  it('refuses a secret written into the file, without repeating it', () => {
    const message = problems({
      mcpServers: { s: { url: 'http://127.0.0.1:1/mcp', headers: { Authorization: 'Bearer abc123secret' } } },
    });
    assert.match(message, /mcpServers\.s\.headers\.Authorization: looks like a secret/);
    assert.doesNotMatch(message, /abc123secret/);
    assert.match(
      problems({ mcpServers: { s: { command: 'x', env: { GITHUB_TOKEN: 'ghp_x' } } } }),
      /mcpServers\.s\.env\.GITHUB_TOKEN: looks like a secret/,
    );
  });

  it('names each mistake: neither command nor url, a bad name, a bad approve, a bad bound', () => {
    assert.match(
      problems({ mcpServers: { s: { args: [] } } }),
      /mcpServers\.s\.type: a server needs "command" \(stdio\) or "url"/,
    );
    assert.match(problems({ mcpServers: { 'a b': { command: 'x' } } }), /a server name must use only/);
    assert.match(
      problems({ mcpServers: { s: { command: 'x', approve: 'sometimes' } } }),
      /must be "never", "always" or a list of tool names/,
    );
    assert.match(problems({ maxSteps: 0 }), /maxSteps: must be at least 1/);
    assert.match(problems({ toolTimeoutMs: 10 }), /toolTimeoutMs: must be at least 100/);
  });
});
