/**
 * Start-up discovery against the fixture server and an injected fetch (never a real Ollama or
 * a hosted provider): what is offered, what is default, and that nothing stops start-up but a
 * default model that is not offered.
 */
import assert from 'node:assert/strict';
import { afterEach, describe, it } from 'node:test';
import { configSchema, type HarnessConfigInput } from '../../src/config/schema.js';
import { HarnessError } from '../../src/errors.js';
import { buildCatalog, DEFAULT_ANTHROPIC_MODELS, DEFAULT_OPENAI_MODELS } from '../../src/models/discover.js';
import { replyText } from './reply-text.js';
import {
  startModelServer,
  unusedBaseURL,
  type ModelServerScript,
  type RunningModelServer,
} from '../fixtures/model-server.js';
import { within } from '../support/wait.js';

const SECRET = 'sk-discover-SECRET-42';
let server: RunningModelServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A config without Ollama detection unless asked: these tests must not touch port 11434. */
const config = (input: HarnessConfigInput = {}) => configSchema.parse({ detectOllama: false, ...input });
const ids = (catalog: { list(): { id: string }[] }) => catalog.list().map((entry) => entry.id);
const ask = { messages: [{ role: 'user' as const, content: 'hi' }], maxRetries: 0 };

/** A fetch that plays an Ollama server with `models`, or no server at all, and records URLs. */
function fakeOllamaFetch(models: string[] | undefined, forwardTo?: string) {
  const urls: string[] = [];
  const fetch = async (input: string | URL | Request, init?: RequestInit): Promise<Response> => {
    const url = String(input instanceof Request ? input.url : input);
    urls.push(url);
    if (!url.startsWith('http://127.0.0.1:11434/')) throw new Error(`unexpected fetch ${url}`);
    if (!models)
      throw new TypeError('fetch failed', {
        cause: Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }),
      });
    if (url.endsWith('/v1/models'))
      return Response.json({ object: 'list', data: models.length ? models.map((id) => ({ id })) : null });
    if (forwardTo) return globalThis.fetch(url.replace('http://127.0.0.1:11434', forwardTo), init);
    throw new Error(`unexpected fetch ${url}`);
  };
  return { fetch: fetch as typeof globalThis.fetch, urls };
}

describe('buildCatalog', () => {
  it('offers only the built-in models when nothing else is there, echo by default', async () => {
    const catalog = await buildCatalog(config(), {}, { log: assert.fail });
    assert.deepEqual(ids(catalog), ['builtin:echo', 'builtin:stats']);
    assert.equal(catalog.defaultModel, 'builtin:echo');
  });

  it('asks an OpenAI-compatible server for its models, with the key from the environment', async () => {
    server = await startModelServer({ models: ['small', 'large'] });
    const catalog = await buildCatalog(
      config({
        providers: { local: { type: 'openai-compatible', baseURL: server.baseURL, apiKeyEnv: 'LOCAL_API_KEY' } },
      }),
      { LOCAL_API_KEY: SECRET },
      { log: assert.fail },
    );
    assert.deepEqual(ids(catalog), ['builtin:echo', 'builtin:stats', 'local:small', 'local:large']);
    assert.equal(catalog.defaultModel, 'local:small');
    assert.deepEqual(
      server.requests.map((r) => [r.method, r.path, r.authorization]),
      [['GET', '/v1/models', `Bearer ${SECRET}`]],
    );

    const { text } = await replyText(catalog.resolve('local:large'), ask);
    assert.equal(text, 'Hello from large.');
    assert.equal(server.requests[1]?.body.model, 'large');
    assert.doesNotMatch(catalog.summary(), /SECRET/);
  });

  it('takes the models from the config without asking, and honours defaultModel', async () => {
    server = await startModelServer();
    const catalog = await buildCatalog(
      config({
        defaultModel: 'builtin:stats',
        providers: { local: { type: 'openai-compatible', baseURL: server.baseURL, models: ['a:1', 'b'] } },
      }),
      {},
      { log: assert.fail },
    );
    assert.deepEqual(ids(catalog), ['builtin:echo', 'builtin:stats', 'local:a:1', 'local:b']);
    assert.equal(catalog.defaultModel, 'builtin:stats');
    assert.equal(server.requests.length, 0);
  });

  it('does not stop for a server that does not answer, and says so', async () => {
    const lines: string[] = [];
    const dead = await unusedBaseURL();
    const catalog = await buildCatalog(
      config({ providers: { local: { type: 'openai-compatible', baseURL: dead } } }),
      {},
      { log: (line) => lines.push(line) },
    );
    assert.deepEqual(ids(catalog), ['builtin:echo', 'builtin:stats']);
    assert.equal(catalog.defaultModel, 'builtin:echo');
    assert.deepEqual(lines, [
      `models: local: the server at ${dead} refused the connection (is the server running?); it is asked again every minute, and when a model of it is asked for`,
    ]);
    assert.match(catalog.summary(), /Notes:\n {2}- local: the server at .* refused the connection/);
  });

  it('a server down at start-up is asked again: its models join the offer when it answers, and the log says so', async () => {
    const script: ModelServerScript = { modelsFailure: { kind: 'status', status: 503 } };
    server = await startModelServer(script);
    const lines: string[] = [];
    const catalog = await buildCatalog(
      config({ providers: { local: { type: 'openai-compatible', baseURL: server.baseURL } } }),
      {},
      { log: (line) => lines.push(line) },
    );
    assert.deepEqual(ids(catalog), ['builtin:echo', 'builtin:stats']);
    assert.deepEqual(catalog.waitingFor, ['local']);

    assert.deepEqual(await catalog.rediscover(), [], 'still down');
    assert.deepEqual(catalog.waitingFor, ['local']);
    const probes = server.requests.length;

    script.modelsFailure = undefined;
    const [first, second] = await Promise.all([catalog.rediscover(), catalog.rediscover()]);
    assert.deepEqual(first, ['local']);
    assert.deepEqual(second, ['local'], 'calls meanwhile share the one look');
    assert.equal(server.requests.length, probes + 1);
    assert.deepEqual(ids(catalog), ['builtin:echo', 'builtin:stats', 'local:small', 'local:large']);
    assert.deepEqual(catalog.waitingFor, []);
    assert.equal(lines.at(-1), 'models: local answers again; offered now: local:small, local:large');
    assert.equal(catalog.defaultModel, 'builtin:echo', 'the default stays what start-up chose');
    assert.equal((await replyText(catalog.resolve('local:small'), ask)).text, 'Hello from small.');
  });

  it('gives up on a hanging server after the probe timeout', async () => {
    server = await startModelServer({ modelsFailure: { kind: 'hang' } });
    const lines: string[] = [];
    // The server never answers: only the probe timeout lets the catalog be built, as the log says.
    const catalog = await within(
      'building the catalog with a server that hangs',
      buildCatalog(
        config({ providers: { slow: { type: 'openai-compatible', baseURL: server.baseURL } } }),
        {},
        { log: (line) => lines.push(line), probeTimeoutMs: 200 },
      ),
    );
    assert.deepEqual(ids(catalog), ['builtin:echo', 'builtin:stats']);
    assert.match(lines[0] ?? '', /^models: slow: the server at .* did not answer in time;/);
  });

  it('says when the server refuses the key', async () => {
    server = await startModelServer({ modelsFailure: { kind: 'status', status: 401, message: `bad key ${SECRET}` } });
    const lines: string[] = [];
    await buildCatalog(
      config({ providers: { local: { type: 'openai-compatible', baseURL: server.baseURL, apiKeyEnv: 'K' } } }),
      { K: SECRET },
      { log: (line) => lines.push(line) },
    );
    assert.match(lines[0] ?? '', /answered HTTP 401 \(check its API key\)/);
    assert.doesNotMatch(lines.join('\n'), /SECRET/);
  });

  it('refuses a default model that is not offered, saying why', async () => {
    const dead = await unusedBaseURL();
    await assert.rejects(
      buildCatalog(
        config({ defaultModel: 'local:small', providers: { local: { type: 'openai-compatible', baseURL: dead } } }),
        {},
        { log: () => {} },
      ),
      (error: unknown) =>
        error instanceof HarnessError &&
        error.code === 'config_invalid' &&
        /^defaultModel "local:small" is not offered \(the server at .* refused the connection.*\)\. Offered: builtin:echo, builtin:stats\.$/.test(
          error.message,
        ),
    );
  });

  it('offers openai and anthropic when their keys are set, with the documented lists', async () => {
    const catalog = await buildCatalog(
      config(),
      { OPENAI_API_KEY: SECRET, ANTHROPIC_API_KEY: `${SECRET}-2` },
      { log: assert.fail },
    );
    assert.deepEqual(ids(catalog), [
      'builtin:echo',
      'builtin:stats',
      ...DEFAULT_OPENAI_MODELS.map((m) => `openai:${m}`),
      ...DEFAULT_ANTHROPIC_MODELS.map((m) => `anthropic:${m}`),
    ]);
    assert.equal(catalog.defaultModel, `openai:${DEFAULT_OPENAI_MODELS[0]}`);
    assert.equal(catalog.resolve('anthropic:claude-haiku-4-5').modelId, 'claude-haiku-4-5');
    assert.doesNotMatch(catalog.summary(), /SECRET/);
  });

  it('hands the key from the environment to an openai provider, and only there', async () => {
    server = await startModelServer();
    const catalog = await buildCatalog(
      config({
        providers: { work: { type: 'openai', baseURL: server.baseURL, apiKeyEnv: 'WORK_KEY', models: ['gpt-x'] } },
      }),
      { WORK_KEY: SECRET },
      { log: assert.fail },
    );
    // The fixture does not speak OpenAI's Responses API: the call fails, but shows what was sent.
    await assert.rejects(replyText(catalog.resolve('work:gpt-x'), { ...ask, modelName: 'work:gpt-x' }), {
      code: 'provider_failed',
      message: /^Model work:gpt-x failed: the provider does not know this model \(HTTP 404\)/,
    });
    assert.deepEqual(
      server.requests.map((r) => [r.path, r.authorization, r.body.model]),
      [['/v1/responses', `Bearer ${SECRET}`, 'gpt-x']],
    );
  });

  it('lets the config choose models and key variables for openai and anthropic', async () => {
    const lines: string[] = [];
    const catalog = await buildCatalog(
      config({
        providers: {
          openai: { type: 'openai', models: ['gpt-x'] },
          claude: { type: 'anthropic', apiKeyEnv: 'WORK_CLAUDE_KEY' },
        },
      }),
      { OPENAI_API_KEY: SECRET },
      { log: (line) => lines.push(line) },
    );
    assert.deepEqual(ids(catalog), ['builtin:echo', 'builtin:stats', 'openai:gpt-x']);
    assert.deepEqual(lines, ['models: claude: WORK_CLAUDE_KEY is not set, so it offers no models']);
  });
});

describe('Ollama detection', () => {
  it('offers what an Ollama server on 127.0.0.1:11434 serves, as provider ollama', async () => {
    server = await startModelServer({ reply: 'Hi from Ollama.' });
    const fake = fakeOllamaFetch(['llama3.2:3b', 'qwen2.5'], server.url);
    const catalog = await buildCatalog(config({ detectOllama: true }), {}, { fetch: fake.fetch, log: assert.fail });
    assert.deepEqual(ids(catalog), ['builtin:echo', 'builtin:stats', 'ollama:llama3.2:3b', 'ollama:qwen2.5']);
    assert.equal(catalog.defaultModel, 'ollama:llama3.2:3b');
    assert.deepEqual(fake.urls, ['http://127.0.0.1:11434/v1/models']);

    const { text } = await replyText(catalog.resolve('ollama:llama3.2:3b'), ask);
    assert.equal(text, 'Hi from Ollama.');
    assert.equal(server.requests[0]?.body.model, 'llama3.2:3b');
  });

  it('stays quiet when no Ollama answers', async () => {
    const fake = fakeOllamaFetch(undefined);
    const catalog = await buildCatalog(config({ detectOllama: true }), {}, { fetch: fake.fetch, log: assert.fail });
    assert.deepEqual(ids(catalog), ['builtin:echo', 'builtin:stats']);
    assert.equal(fake.urls.length, 1);
  });

  it('says when Ollama runs without models', async () => {
    const lines: string[] = [];
    await buildCatalog(
      config({ detectOllama: true }),
      {},
      { fetch: fakeOllamaFetch([]).fetch, log: (line) => lines.push(line) },
    );
    assert.match(
      lines[0] ?? '',
      /^models: ollama: an Ollama server answers on 127\.0\.0\.1:11434 but has no models; pull one/,
    );
  });

  it('does not probe when turned off, or when a configured provider already points there', async () => {
    const off = fakeOllamaFetch(['x']);
    await buildCatalog(config({ detectOllama: false }), {}, { fetch: off.fetch, log: assert.fail });
    assert.deepEqual(off.urls, []);

    const configured = fakeOllamaFetch(['x']);
    const catalog = await buildCatalog(
      config({
        detectOllama: true,
        providers: { local: { type: 'openai-compatible', baseURL: 'http://localhost:11434/v1', models: ['small'] } },
      }),
      {},
      { fetch: configured.fetch, log: assert.fail },
    );
    assert.deepEqual(configured.urls, []);
    assert.deepEqual(ids(catalog), ['builtin:echo', 'builtin:stats', 'local:small']);
  });
});
