/**
 * Issue 38, clients sign in: `send` (and `chat`, `conform`, which share the flags) take the token
 * from --token, from TINY_HARNESS_TOKEN, or from --token-command, run again when the agent
 * answers 401 invalid_token. Against a harness checking tokens of a test issuer on loopback.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough } from 'node:stream';
import { ClientFactory } from '@a2a-js/sdk/client';
import { GrpcTransportFactory } from '@a2a-js/sdk/client/grpc';
import { headerInterceptor } from '../../src/client/connect.js';
import { runSend } from '../../src/client/send.js';
import { commandToken, tokenAuth, tokenSourceOf } from '../../src/client/token-source.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { startTestIssuer, TEST_AUDIENCE, type TestIssuer } from '../fixtures/oidc-issuer.js';
import { startTestHarness, type TestHarness } from '../e2e/support.js';
import { runCli } from './support.js';

let issuer: TestIssuer;
let h: TestHarness;
let dir: string;

before(async () => {
  issuer = await startTestIssuer();
  h = await startTestHarness({
    script: { reply: 'hello, signed-in user' },
    config: { auth: { oidc: { issuer: issuer.issuer, audience: TEST_AUDIENCE } } },
  });
  dir = mkdtempSync(join(tmpdir(), 'tiny-harness-token-'));
});

after(async () => {
  await h?.close();
  await issuer?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

/** A token command printing the tokens given, one per run, and counting its runs. */
function tokenScript(tokens: string[]): { command: string; runs: () => number } {
  const list = join(dir, `tokens-${Math.random().toString(36).slice(2)}`);
  const count = `${list}.count`;
  writeFileSync(list, `${tokens.join('\n')}\n`);
  writeFileSync(count, '0');
  const command = `n=$(($(cat '${count}') + 1)); echo $n > '${count}'; sed -n "\${n}p" '${list}'`;
  return { command, runs: () => Number(readFileSync(count, 'utf8').trim()) };
}

async function sendWith(token: ReturnType<typeof tokenSourceOf>) {
  assert.notEqual(typeof token, 'string');
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.setEncoding('utf8').on('data', (chunk: string) => (out += chunk));
  stderr.setEncoding('utf8').on('data', (chunk: string) => (err += chunk));
  const code = await runSend({
    url: h.harness.url,
    text: 'hello',
    headers: [],
    token: token as Exclude<typeof token, string>,
    stream: false,
    json: false,
    stdout,
    stderr,
  });
  return { code, out, err };
}

describe('issue 38: clients sign in', () => {
  it('issue 38: send --token-command runs the command, and again when the agent answers 401 invalid_token', async () => {
    const script = tokenScript([await issuer.token('alice', { expiresIn: -3600 }), await issuer.token('alice')]);
    const result = await runCli(['send', h.harness.url, '--token-command', script.command, 'hello']);
    assert.equal(result.code, 0, result.stderr);
    assert.match(result.stdout, /hello, signed-in user/);
    assert.equal(script.runs(), 2, 'the command ran once more after the refusal');
  });

  it('issue 38: TINY_HARNESS_TOKEN gives the token when no flag does; --token wins over it', async () => {
    const good = await issuer.token('bob');
    const fromEnv = await sendWith(tokenSourceOf({}, { TINY_HARNESS_TOKEN: good }));
    assert.equal(fromEnv.code, 0, fromEnv.err);
    assert.match(fromEnv.out, /hello, signed-in user/);
    const expired = await issuer.token('bob', { expiresIn: -3600 });
    const flagWins = await sendWith(tokenSourceOf({ token: expired }, { TINY_HARNESS_TOKEN: good }));
    assert.notEqual(flagWins.code, 0);
    assert.match(flagWins.err, /expired/, 'the reason reaches the user');
  });

  it('issue 38: a command run again only as often as the agent refuses: concurrent refreshes share one run', async () => {
    let runs = 0;
    const source = commandToken('x', async () => `t${++runs}`);
    assert.equal(await source.current(), 't1');
    assert.equal(await source.current(), 't1');
    const [a, b] = await Promise.all([source.refresh(), source.refresh()]);
    assert.equal(a, 't2');
    assert.equal(b, 't2');
    assert.equal(await source.current(), 't2');
  });

  it('issue 38: a request refused with invalid_token is sent once more with the renewed token, which every later request carries', async (t) => {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers.authorization ?? '');
      if (req.headers.authorization === 'Bearer t2') return void res.end('ok');
      res.writeHead(401, { 'www-authenticate': 'Bearer error="invalid_token", error_description="expired"' }).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    t.after(() => new Promise<void>((resolve) => server.close(() => resolve())));
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
    let runs = 0;
    const sent: Record<string, string> = {};
    const auth = await tokenAuth(
      sent,
      commandToken('x', async () => `t${++runs}`),
    );
    assert.equal(sent.Authorization, 'Bearer t1');
    const response = await auth.fetch(url, { headers: { authorization: sent.Authorization } });
    assert.equal(response.status, 200);
    assert.deepEqual(seen, ['Bearer t1', 'Bearer t2']);
    assert.equal(sent.Authorization, 'Bearer t2', 'the headers of later requests carry the new token');
    assert.equal(runs, 2);
  });

  it('issue 38: over gRPC, a call refused UNAUTHENTICATED has the token renewed before the next call', async () => {
    const tokens = [await issuer.token('carol', { expiresIn: -3600 }), await issuer.token('carol')];
    let runs = 0;
    const sent: Record<string, string> = {};
    const auth = await tokenAuth(
      sent,
      commandToken('x', async () => tokens[runs++]!),
    );
    const card = await (await fetch(`${h.harness.url}/.well-known/agent-card.json`)).json();
    const client = await new ClientFactory({
      transports: [new GrpcTransportFactory({ grpcCallOptions: { interceptors: [auth.grpcInterceptor] } })],
      preferredTransports: ['GRPC'],
      clientConfig: { interceptors: [headerInterceptor(sent, auth)] },
    }).createFromAgentCard(card);
    const list = () =>
      client.listTasks({
        tenant: '',
        contextId: '',
        status: 0,
        pageSize: 10,
        pageToken: '',
        historyLength: 0,
        statusTimestampAfter: undefined,
        includeArtifacts: false,
      });
    await assert.rejects(list(), /expired/);
    assert.ok(Array.isArray((await list()).tasks), 'the next call goes with the renewed token');
    assert.equal(runs, 2);
  });

  it('issue 38: --token with --token-command, or with an Authorization --header, is a usage error', async () => {
    const both = await runCli(['send', h.harness.url, '--token', 'abc', '--token-command', 'echo abc', 'hi']);
    assert.equal(both.code, 2);
    assert.match(both.stderr, /--token or --token-command, not both/);
    assert.equal(typeof tokenSourceOf({ token: 'a', tokenCommand: 'b' }, {}), 'string');
  });
});
