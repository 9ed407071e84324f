/**
 * Start-up discovery: which models this harness offers, from the config file, the environment
 * and what answers on this machine. Called once before the server listens. A server that does
 * not answer is noted in the log and offers nothing; it never stops start-up. Only a
 * `defaultModel` that ends up not offered does (`config_invalid`).
 *
 * Offer order, which also decides the default when the config names none: the built-in models
 * (listed first, never chosen as default while a real model exists), then configured providers
 * in file order, then `openai` and `anthropic` from the environment, then a detected Ollama.
 *
 * The providers' packages are loaded only when a provider of their kind is configured or found:
 * they are a large part of start-up otherwise.
 *
 * Keys come only from the environment (`env`), are handed to the provider objects and go
 * nowhere else: not into notes, the summary or error messages.
 */
import type { ProviderV3 } from '@ai-sdk/provider';
import { BUILTIN_PROVIDER, type HarnessConfig, type ProviderConfig } from '../config/schema.js';
import { BUILTIN_MODELS, createBuiltinProvider, type BuiltinModelOptions } from './builtin.js';
import { ModelCatalog, type CatalogEntry, type FoundProvider, type MissingProvider } from './catalog.js';
import { displayURL, listServerModels, ProbeError, type FetchFunction } from './probe.js';
import { tracingFetch } from '../telemetry/propagation.js';

/** Offered when OPENAI_API_KEY is set and no `models` are configured for `openai`. */
export const DEFAULT_OPENAI_MODELS: readonly string[] = ['gpt-5-mini', 'gpt-5', 'gpt-4.1-mini'];
/** Offered when ANTHROPIC_API_KEY is set and no `models` are configured for `anthropic`. */
export const DEFAULT_ANTHROPIC_MODELS: readonly string[] = ['claude-sonnet-4-5', 'claude-haiku-4-5', 'claude-opus-4-1'];
/** Where Ollama serves the OpenAI API by default. */
export const OLLAMA_BASE_URL = 'http://127.0.0.1:11434/v1';
export const OLLAMA_PROBE_TIMEOUT_MS = 500;
export const SERVER_PROBE_TIMEOUT_MS = 3000;

export interface DiscoverOptions {
  /** Used for every probe and handed to every provider object (tests inject one). */
  fetch?: FetchFunction;
  /** Receives one line per finding worth telling (default: `console.warn`). */
  log?: (line: string) => void;
  /** Options for the built-in models (e.g. a chunk delay in tests). */
  builtin?: BuiltinModelOptions;
  /** Timeout of a configured server's `GET /models` (default {@link SERVER_PROBE_TIMEOUT_MS}). */
  probeTimeoutMs?: number;
}

type Env = Readonly<Record<string, string | undefined>>;

/** One provider's contribution: its object, its models, or why it offers none (and, when its server did not answer, how to ask again). */
interface Found extends FoundProvider {
  name: string;
  retry?: () => Promise<FoundProvider | undefined>;
}

function isOllamaURL(baseURL: string): boolean {
  const url = new URL(baseURL);
  return ['127.0.0.1', 'localhost', '[::1]'].includes(url.hostname) && url.port === '11434';
}

function keyFrom(env: Env, name: string | undefined): string | undefined {
  const value = name === undefined ? undefined : env[name]?.trim();
  return value ? value : undefined;
}

async function discoverConfigured(
  name: string,
  config: ProviderConfig,
  env: Env,
  options: DiscoverOptions,
): Promise<Found> {
  const apiKey = keyFrom(env, config.apiKeyEnv);
  const fetch = tracingFetch(options.fetch);
  const description = config.description;
  if (config.type === 'openai' || config.type === 'anthropic') {
    if (!apiKey) return { name, models: [], reason: `${config.apiKeyEnv} is not set, so it offers no models` };
    const settings = { name, apiKey, fetch, ...(config.baseURL ? { baseURL: config.baseURL } : {}) };
    const provider =
      config.type === 'openai'
        ? (await import('@ai-sdk/openai')).createOpenAI(settings)
        : (await import('@ai-sdk/anthropic')).createAnthropic(settings);
    const models = config.models ?? (config.type === 'openai' ? DEFAULT_OPENAI_MODELS : DEFAULT_ANTHROPIC_MODELS);
    return { name, provider, models, description };
  }
  const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
  const provider = createOpenAICompatible({ name, baseURL: config.baseURL, apiKey, fetch, includeUsage: true });
  const missingKey =
    config.apiKeyEnv && !apiKey ? `${config.apiKeyEnv} is not set; requests go without a key` : undefined;
  if (config.models) return { name, provider, models: config.models, description, reason: missingKey };
  try {
    const models = await listServerModels(config.baseURL, {
      apiKey,
      fetch,
      timeoutMs: options.probeTimeoutMs ?? SERVER_PROBE_TIMEOUT_MS,
    });
    const reason = models.length ? missingKey : `the server at ${displayURL(config.baseURL)} lists no models`;
    return { name, provider, models, description, reason };
  } catch (error) {
    const why = error instanceof ProbeError ? error.message : 'could not be asked';
    return {
      name,
      models: [],
      reason: `the server at ${displayURL(config.baseURL)} ${why}; it is asked again every minute, and when a model of it is asked for`,
      retry: () => discoverConfigured(name, config, env, options),
    };
  }
}

async function detectOllama(fetch: FetchFunction | undefined): Promise<Found | undefined> {
  let models: string[];
  try {
    models = await listServerModels(OLLAMA_BASE_URL, { fetch, timeoutMs: OLLAMA_PROBE_TIMEOUT_MS });
  } catch {
    return undefined; // No Ollama here: the usual case, not worth a line.
  }
  if (!models.length)
    return {
      name: 'ollama',
      models: [],
      reason: 'an Ollama server answers on 127.0.0.1:11434 but has no models; pull one with "ollama pull llama3.2"',
    };
  const { createOpenAICompatible } = await import('@ai-sdk/openai-compatible');
  const provider = createOpenAICompatible({ name: 'ollama', baseURL: OLLAMA_BASE_URL, fetch, includeUsage: true });
  return { name: 'ollama', provider, models, description: 'detected on 127.0.0.1:11434' };
}

/**
 * Builds the catalog: built-in models always; configured providers; `openai` when
 * OPENAI_API_KEY is set and `anthropic` when ANTHROPIC_API_KEY is set (unless the config
 * defines a provider of that name); Ollama on 127.0.0.1:11434 when `config.detectOllama` and
 * no configured provider already points there. `catalog.summary()` tells a person the result.
 */
export async function buildCatalog(
  config: HarnessConfig,
  env: Env = process.env,
  options: DiscoverOptions = {},
): Promise<ModelCatalog> {
  const log = options.log ?? ((line: string) => console.warn(line));
  const configured = Object.entries(config.providers);
  const named = new Set(configured.map(([name]) => name));

  const pending: Promise<Found | undefined>[] = configured.map(([name, provider]) =>
    discoverConfigured(name, provider, env, options),
  );
  if (!named.has('openai') && keyFrom(env, 'OPENAI_API_KEY')) {
    pending.push(discoverConfigured('openai', { type: 'openai', apiKeyEnv: 'OPENAI_API_KEY' }, env, options));
  }
  if (!named.has('anthropic') && keyFrom(env, 'ANTHROPIC_API_KEY')) {
    pending.push(discoverConfigured('anthropic', { type: 'anthropic', apiKeyEnv: 'ANTHROPIC_API_KEY' }, env, options));
  }
  const ollamaConfigured = configured.some(
    ([name, provider]) => name === 'ollama' || (provider.type === 'openai-compatible' && isOllamaURL(provider.baseURL)),
  );
  const detectingOllama = config.detectOllama && !ollamaConfigured;
  if (detectingOllama) pending.push(detectOllama(options.fetch));
  const found = (await Promise.all(pending)).filter((item): item is Found => item !== undefined);
  const missing: MissingProvider[] = found
    .filter((item) => item.retry)
    .map((item) => ({ name: item.name, find: item.retry! }));
  // Ollama started after the harness is found too, quietly, as at start-up.
  if (detectingOllama && !found.some((item) => item.name === 'ollama' && item.provider))
    missing.push({ name: 'ollama', find: () => detectOllama(options.fetch) });

  const providers: Record<string, ProviderV3> = { [BUILTIN_PROVIDER]: createBuiltinProvider(options.builtin) };
  const entries: CatalogEntry[] = BUILTIN_MODELS.map(({ model, description }) => ({
    id: `${BUILTIN_PROVIDER}:${model}`,
    provider: BUILTIN_PROVIDER,
    model,
    description,
  }));
  const reasons: Record<string, string> = {};
  for (const { name, provider, models, description, reason } of found) {
    if (reason) {
      reasons[name] = reason;
      log(`models: ${name}: ${reason}`);
    }
    if (!provider || !models.length) continue;
    providers[name] = provider;
    for (const model of models)
      entries.push({ id: `${name}:${model}`, provider: name, model, ...(description ? { description } : {}) });
  }
  return new ModelCatalog({ entries, providers, defaultModel: config.defaultModel, reasons, missing, log });
}
