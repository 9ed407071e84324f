/**
 * Behind a proxy the card must name the address clients reach, not the one the harness listens
 * on: `--public-url` (or `publicUrl` in the config; the flag wins) replaces the HTTP base of the
 * JSON-RPC and HTTP+JSON entries, `publicGrpcAddress` the gRPC entry's address.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cliProgram } from '../support/processes.js';
import { startServerProcess } from './process.js';
import { startTestHarness } from './support.js';

interface CardInterface {
  url: string;
  protocolBinding: string;
}

async function interfacesOf(base: string): Promise<Record<string, string>> {
  const card = (await (await fetch(`${base}/.well-known/agent-card.json`)).json()) as {
    supportedInterfaces: CardInterface[];
  };
  return Object.fromEntries(card.supportedInterfaces.map((entry) => [entry.protocolBinding, entry.url]));
}

describe('the public address on the card', () => {
  it('config publicUrl and publicGrpcAddress: the card names them, the harness still serves where it listens', async () => {
    const h = await startTestHarness({
      config: { publicUrl: 'https://agent.example.com/team/', publicGrpcAddress: 'grpc.example.com:443' },
    });
    try {
      assert.deepEqual(await interfacesOf(h.harness.url), {
        JSONRPC: 'https://agent.example.com/team/a2a/jsonrpc',
        'HTTP+JSON': 'https://agent.example.com/team/a2a/rest',
        GRPC: 'grpc.example.com:443',
      });
      const answer = await fetch(`${h.harness.url}/a2a/jsonrpc`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'A2A-Version': '1.0' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ListTasks', params: {} }),
      });
      assert.equal(answer.status, 200);
    } finally {
      await h.close();
    }
  });

  it('the publicUrl option wins over the config key; without publicGrpcAddress, gRPC keeps the address it listens on', async () => {
    const h = await startTestHarness({
      config: { publicUrl: 'https://from-config.example' },
      harness: { publicUrl: 'https://from-flag.example' },
    });
    try {
      assert.deepEqual(await interfacesOf(h.harness.url), {
        JSONRPC: 'https://from-flag.example/a2a/jsonrpc',
        'HTTP+JSON': 'https://from-flag.example/a2a/rest',
        GRPC: h.harness.grpcAddress,
      });
    } finally {
      await h.close();
    }
  });

  it('serve --public-url: the card served names that base, over the config key', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tiny-harness-public-url-'));
    try {
      const config = join(dir, 'config.json');
      writeFileSync(config, JSON.stringify({ detectOllama: false, publicUrl: 'https://from-config.example' }));
      const server = await startServerProcess([
        '--data-dir',
        join(dir, 'data'),
        '--config',
        config,
        '--public-url',
        'https://agent.example.com/',
      ]);
      try {
        assert.deepEqual(await interfacesOf(server.url), {
          JSONRPC: 'https://agent.example.com/a2a/jsonrpc',
          'HTTP+JSON': 'https://agent.example.com/a2a/rest',
        });
      } finally {
        assert.equal(await server.stop('SIGTERM'), 0);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('serve --public-url with a value that is not an http(s) root stops at start-up with a usage error', () => {
    const run = spawnSync(
      process.execPath,
      [...cliProgram(), 'serve', '--port', '0', '--public-url', 'https://agent.example.com/?tenant=a'],
      {
        encoding: 'utf8',
        timeout: 30_000,
      },
    );
    assert.equal(run.status, 2);
    assert.equal(
      run.stderr,
      'error: --public-url must not have a query (?...) or a fragment (#...): give the address of the harness root.\n',
    );
    assert.equal(run.stdout, '', 'it never listened');
  });
});
