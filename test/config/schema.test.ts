/** The config schema: defaults, and the message a person reads for each kind of mistake. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { DEFAULT_MESSAGE_ID_RETENTION_MS } from '../../src/config/message-ids.js';
import { parseConfig } from '../../src/config/load.js';
import {
  DEFAULT_EVENT_LOOP_CHECK_FROM,
  DEFAULT_MAX_EVENT_LOOP_DELAY_MS,
  DEFAULT_MAX_REQUESTS_IN_PROGRESS,
} from '../../src/config/admission.js';
import {
  configSchema,
  DEFAULT_CACHE_BYTES,
  DEFAULT_MAX_TURNS_IN_FLIGHT,
  DEFAULT_LONG_POLL_MS,
  defaultConfig,
} from '../../src/config/schema.js';
import { HarnessError } from '../../src/errors.js';
import {
  DEFAULT_CACHE_BYTES as STORE_DEFAULT_CACHE_BYTES,
  DEFAULT_MESSAGE_ID_RETENTION_MS as STORE_DEFAULT_MESSAGE_ID_RETENTION_MS,
} from '../../src/store/index.js';

/** The config_invalid message for a config object. */
function problems(config: unknown): string {
  try {
    parseConfig(JSON.stringify(config), 'harness.json');
  } catch (error) {
    assert.ok(error instanceof HarnessError);
    assert.equal(error.code, 'config_invalid');
    assert.match(error.message, /"harness\.json"/);
    return error.message;
  }
  assert.fail('expected config_invalid');
}

const local = { type: 'openai-compatible', baseURL: 'http://127.0.0.1:11434/v1' };

describe('config schema', () => {
  it('fills every default when there is nothing', () => {
    assert.deepEqual(defaultConfig(), {
      systemPrompt: 'You are a helpful assistant.',
      instructions: ['AGENTS.md'],
      instructionsMaxChars: 50_000,
      turnEndState: 'input-required',
      detectOllama: true,
      modelTimeoutMs: 120000,
      contextChars: 200000,
      compact: { auto: true, autoAt: 0.8, tailShare: 0.1 },
      cacheBytes: 64 * 2 ** 20,
      durability: 'normal',
      elicitationTimeoutMs: 600_000,
      instanceLeaseMs: 10000,
      messageIdRetentionMs: 86_400_000,
      maxTurnsInFlight: DEFAULT_MAX_TURNS_IN_FLIGHT,
      longPollMs: DEFAULT_LONG_POLL_MS,
      // No OpenID Connect unless configured (issue 38).
      auth: {},
      admission: {
        maxRequestsInProgress: DEFAULT_MAX_REQUESTS_IN_PROGRESS,
        maxEventLoopDelayMs: DEFAULT_MAX_EVENT_LOOP_DELAY_MS,
        eventLoopCheckFrom: DEFAULT_EVENT_LOOP_CHECK_FROM,
      },
      drainTimeoutMs: 30_000,
      shutdownGraceMs: 10_000,
      mcpServers: {},
      mcpConnectWaitMs: 5000,
      maxSteps: 20,
      toolTimeoutMs: 60000,
      toolOutputChars: 20000,
      commands: { allowShell: false, visibility: {} },
      card: {},
      push: {
        allowPrivateNetworks: false,
        timeoutMs: 10_000,
        retryForMs: 86_400_000,
        firstRetryMs: 1000,
        maxRetryMs: 300_000,
        maxConfigsPerTask: 10,
        maxConfigsPerUser: 1000,
        keepFailedForMs: 7 * 86_400_000,
      },
      queue: { maxPerTask: 16 },
      schedules: {
        enabled: true,
        maxPerUser: 50,
        catchUpMs: 600_000,
        pollMs: 10_000,
        hookMaxBytes: 65_536,
        hookKeyRetentionMs: 86_400_000,
      },
      agents: { maxDepth: 2, maxParallel: 4, timeoutMs: 1_800_000 },
      metrics: { enabled: true },
      providers: {},
    });
  });

  it('compact: autoAt a share above 0 and at most 1, a tail share below it; no other key', () => {
    assert.deepEqual(parseConfig(JSON.stringify({ compact: { auto: false } })).compact, {
      auto: false,
      autoAt: 0.8,
      tailShare: 0.1,
    });
    assert.match(problems({ compact: { autoAt: 0 } }), /compact\.autoAt: must be more than 0/);
    assert.match(problems({ compact: { autoAt: 1.5 } }), /compact\.autoAt: must be at most 1/);
    assert.match(
      problems({ compact: { autoAt: 0.5, tailShare: 0.5 } }),
      /compact\.tailShare: tailShare must be less than autoAt/,
    );
    assert.match(problems({ compact: { every: 3 } }), /compact\.every: unknown key/);
  });

  it('admission: whole numbers, at least one request; a delay of 0 turns the delay check off; no other key', () => {
    assert.deepEqual(parseConfig(JSON.stringify({ admission: { maxEventLoopDelayMs: 0 } })).admission, {
      maxRequestsInProgress: DEFAULT_MAX_REQUESTS_IN_PROGRESS,
      maxEventLoopDelayMs: 0,
      eventLoopCheckFrom: DEFAULT_EVENT_LOOP_CHECK_FROM,
    });
    assert.match(
      problems({ admission: { maxRequestsInProgress: 0 } }),
      /admission\.maxRequestsInProgress: must be at least 1/,
    );
    assert.match(
      problems({ admission: { maxEventLoopDelayMs: 2.5 } }),
      /admission\.maxEventLoopDelayMs: must be a whole number/,
    );
    assert.match(problems({ admission: { maxEventLoopDelayMs: -1 } }), /admission\.maxEventLoopDelayMs/);
    assert.match(problems({ admission: { maxConnections: 10 } }), /admission\.maxConnections/);
  });

  it('metrics: a token only through an environment variable, a host only with a port of its own', () => {
    assert.deepEqual(parseConfig(JSON.stringify({ metrics: { port: 9464, tokenEnv: 'METRICS_TOKEN' } })).metrics, {
      enabled: true,
      port: 9464,
      tokenEnv: 'METRICS_TOKEN',
    });
    assert.match(
      problems({ metrics: { tokenEnv: 'abc def' } }),
      /metrics\.tokenEnv: must be the name of an environment variable/,
    );
    assert.match(problems({ metrics: { host: '0.0.0.0' } }), /metrics\.host: "host" needs "port"/);
    assert.match(problems({ metrics: { port: 70_000 } }), /metrics\.port/);
  });

  it('bounds the caches at 64 MiB unless told, as the store does when used alone', () => {
    assert.equal(DEFAULT_CACHE_BYTES, 64 * 2 ** 20);
    assert.equal(DEFAULT_CACHE_BYTES, STORE_DEFAULT_CACHE_BYTES);
    assert.equal(parseConfig(JSON.stringify({ cacheBytes: 0 })).cacheBytes, 0);
    assert.equal(parseConfig(JSON.stringify({ cacheBytes: 8_000_000 })).cacheBytes, 8_000_000);
  });

  it('CMD-34: remembers handled messages for 24 hours unless told, as the store does when used alone; a minute at least', () => {
    assert.equal(DEFAULT_MESSAGE_ID_RETENTION_MS, 24 * 60 * 60 * 1000);
    assert.equal(DEFAULT_MESSAGE_ID_RETENTION_MS, STORE_DEFAULT_MESSAGE_ID_RETENTION_MS);
    assert.equal(parseConfig(JSON.stringify({ messageIdRetentionMs: 3_600_000 })).messageIdRetentionMs, 3_600_000);
    assert.match(
      problems({ messageIdRetentionMs: 1000 }),
      /messageIdRetentionMs: must be 0 \(none kept\) or at least 60000/,
    );
    assert.equal(parseConfig(JSON.stringify({ messageIdRetentionMs: 0 })).messageIdRetentionMs, 0);
    assert.match(problems({ messageIdRetentionMs: 60_000.5 }), /messageIdRetentionMs: must be a whole number/);
    assert.match(problems({ messageIdRetentionMs: '24h' }), /messageIdRetentionMs: /);
  });

  it('instructions: paths read in order, AGENTS.md unless told, none twice, none empty; a bound in whole characters', () => {
    const config = parseConfig(JSON.stringify({ instructions: ['docs/b.md', ' a.md '], instructionsMaxChars: 10 }));
    assert.deepEqual(config.instructions, ['docs/b.md', 'a.md']);
    assert.equal(config.instructionsMaxChars, 10);
    assert.deepEqual(parseConfig(JSON.stringify({ instructions: [] })).instructions, []);
    assert.equal(defaultConfig().instructions === defaultConfig().instructions, false, 'each config its own list');
    assert.match(problems({ instructions: ['a.md', 'a.md'] }), /instructions: lists a file twice/);
    assert.match(problems({ instructions: [''] }), /instructions\[0\]: a path must not be empty/);
    assert.match(problems({ instructions: 'AGENTS.md' }), /instructions: /);
    assert.match(problems({ instructionsMaxChars: 0 }), /instructionsMaxChars: must be at least 1/);
    assert.match(problems({ instructionsMaxChars: 1.5 }), /instructionsMaxChars: must be a whole number of characters/);
  });

  it('takes durability "normal" or "full" and nothing else', () => {
    assert.equal(parseConfig(JSON.stringify({ durability: 'full' })).durability, 'full');
    assert.equal(parseConfig(JSON.stringify({ durability: 'normal' })).durability, 'normal');
    assert.match(problems({ durability: 'FULL' }), /durability: Invalid option: expected one of "normal"\|"full"/);
    assert.match(problems({ durability: true }), /durability: /);
  });

  it('takes an instance lease of 500 ms to 10 minutes, in whole milliseconds', () => {
    assert.equal(parseConfig(JSON.stringify({ instanceLeaseMs: 1500 })).instanceLeaseMs, 1500);
    assert.match(problems({ instanceLeaseMs: 100 }), /instanceLeaseMs: must be at least 500/);
    assert.match(problems({ instanceLeaseMs: 1500.5 }), /instanceLeaseMs: must be a whole number of milliseconds/);
    assert.match(problems({ instanceLeaseMs: 3_600_000 }), /instanceLeaseMs: /);
  });

  it('bounds the turns in flight at a whole number from 1, and the shutdown grace at whole milliseconds', () => {
    assert.equal(parseConfig(JSON.stringify({ maxTurnsInFlight: 2 })).maxTurnsInFlight, 2);
    assert.match(problems({ maxTurnsInFlight: 0 }), /maxTurnsInFlight: must be at least 1/);
    assert.match(problems({ maxTurnsInFlight: 2.5 }), /maxTurnsInFlight: must be a whole number of turns/);
    assert.equal(parseConfig(JSON.stringify({ shutdownGraceMs: 0 })).shutdownGraceMs, 0);
    assert.match(problems({ shutdownGraceMs: -1 }), /shutdownGraceMs: /);
    assert.match(problems({ shutdownGraceMs: 1.5 }), /shutdownGraceMs: must be a whole number of milliseconds/);
  });

  it('accepts the documented example and fills provider defaults', () => {
    const config = parseConfig(
      JSON.stringify({
        defaultModel: 'local:small',
        systemPrompt: 'Be brief.',
        turnEndState: 'completed',
        detectOllama: false,
        modelTimeoutMs: 5000,
        providers: {
          local: { ...local, apiKeyEnv: 'LOCAL_API_KEY', models: ['small', 'large'] },
          work: { type: 'openai', models: ['gpt-5-mini'] },
          claude: { type: 'anthropic', baseURL: 'https://proxy.example/v1' },
        },
      }),
    );
    assert.equal(config.defaultModel, 'local:small');
    assert.equal(config.turnEndState, 'completed');
    assert.deepEqual(config.providers.work, { type: 'openai', apiKeyEnv: 'OPENAI_API_KEY', models: ['gpt-5-mini'] });
    assert.equal(config.providers.claude?.apiKeyEnv, 'ANTHROPIC_API_KEY');
  });

  it('names an unknown key by its path and lists what is allowed', () => {
    assert.match(
      problems({ defaultModle: 'local:small' }),
      /defaultModle: unknown key \(allowed here: defaultModel, systemPrompt/,
    );
    assert.match(
      problems({ providers: { local: { ...local, modles: ['x'] } } }),
      /providers\.local\.modles: unknown key \(allowed here: type, baseURL, apiKeyEnv, models, contextChars, description\)/,
    );
    assert.match(
      problems({ agents: { maxDepht: 3 } }),
      /agents\.maxDepht: unknown key \(allowed here: maxDepth, maxParallel, timeoutMs\)/,
    );
    assert.match(problems({ agents: { maxDepth: 0 } }), /agents\.maxDepth: must be at least 1/);
  });

  it('rejects a bad URL with the key path', () => {
    assert.match(
      problems({ providers: { local: { ...local, baseURL: 'not a url' } } }),
      /providers\.local\.baseURL: Invalid URL/,
    );
    assert.match(
      problems({ providers: { local: { ...local, baseURL: 'ftp://host/v1' } } }),
      /providers\.local\.baseURL: Invalid URL/,
    );
  });

  it('never accepts a key in the file, and says to use apiKeyEnv without echoing it', () => {
    for (const key of ['apiKey', 'api_key', 'token']) {
      const message = problems({ providers: { local: { ...local, [key]: 'sk-secret-value-123' } } });
      assert.match(message, new RegExp(`providers\\.local\\.${key}: do not put keys in the config file.*apiKeyEnv`));
      assert.doesNotMatch(message, /sk-secret-value-123/);
    }
    assert.match(problems({ apiKey: 'x' }), /apiKey: do not put keys in the config file/);
    const inURL = problems({ providers: { local: { ...local, baseURL: 'http://user:sk-secret-value-123@host/v1' } } });
    assert.match(inURL, /providers\.local\.baseURL: must not contain credentials/);
    assert.doesNotMatch(inURL, /sk-secret-value-123/);
    assert.match(
      problems({ providers: { local: { ...local, apiKeyEnv: 'sk-secret-value-123' } } }),
      /apiKeyEnv: must be the name of an environment variable/,
    );
  });

  it('checks provider names and types', () => {
    assert.match(problems({ providers: { Local: local } }), /providers\.Local: a provider name must start with a-z/);
    assert.match(problems({ providers: { my_server: local } }), /providers\.my_server: a provider name must/);
    assert.match(problems({ providers: { builtin: local } }), /providers\.builtin: "builtin" is reserved/);
    assert.match(
      problems({ providers: { local: { ...local, type: 'ollama' } } }),
      /providers\.local\.type: "type" must be one of "openai-compatible", "openai", "anthropic"/,
    );
    assert.match(problems({ providers: { local: { type: 'openai-compatible' } } }), /providers\.local\.baseURL: /);
  });

  it('checks the other settings', () => {
    assert.match(problems({ defaultModel: 'small' }), /defaultModel: must be "provider:model"/);
    assert.match(problems({ turnEndState: 'done' }), /turnEndState: /);
    assert.match(problems({ detectOllama: 'yes' }), /detectOllama: /);
    assert.match(problems({ modelTimeoutMs: 10 }), /modelTimeoutMs: must be at least 1000/);
    assert.match(problems({ cacheBytes: -1 }), /cacheBytes: must be 0 \(no cache\) or more/);
    assert.match(problems({ cacheBytes: 1.5 }), /cacheBytes: must be a whole number of bytes/);
    assert.match(problems({ cacheBytes: '64mb' }), /cacheBytes: /);
    assert.match(
      problems({ providers: { local: { ...local, models: [] } } }),
      /providers\.local\.models: list at least one model/,
    );
    assert.match(
      problems({ providers: { local: { ...local, models: ['ok', ''] } } }),
      /providers\.local\.models\[1\]: a model name must not be empty/,
    );
    assert.match(problems([]), /is invalid: Invalid input: expected object/);
  });

  it('reports every problem at once', () => {
    const message = problems({ turnEndState: 'x', providers: { local: { ...local, baseURL: 'nope', extra: 1 } } });
    assert.match(
      message,
      /turnEndState: .*; providers\.local\.baseURL: Invalid URL.*; providers\.local\.extra: unknown key/,
    );
  });

  it('is the single source of the type', () => {
    const parsed = configSchema.parse({ providers: { a: local } });
    assert.equal(parsed.providers.a?.type, 'openai-compatible');
  });
});
