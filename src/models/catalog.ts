/**
 * What a task can talk to: the models offered, named `provider:model`, and the default one.
 * Built by `buildCatalog` (discover.ts); the runtime asks it to `resolve` an id into an AI SDK
 * model when a turn starts, and `/model`-style commands `list` and `has`. A provider whose
 * server did not answer at start-up is looked for again (`rediscover`): its models join the
 * offer when it answers.
 *
 * An id resolves through the provider object of its provider (made with `createOpenAI`,
 * `createAnthropic`, `createOpenAICompatible`, or the built-in one), never through a bare
 * string model id (that would route to a hosted gateway). A map lookup does what the AI SDK's
 * provider registry would, without loading `ai` at start-up.
 */
import type { LanguageModelV3, ProviderV3 } from '@ai-sdk/provider';
import { BUILTIN_PROVIDER } from '../config/schema.js';
import { HarnessError } from '../errors.js';

/** One offered model. `id` is `${provider}:${model}`. */
export interface CatalogEntry {
  id: string;
  provider: string;
  model: string;
  description?: string;
}

/** The id of the model used when nothing else is offered. */
export const FALLBACK_MODEL = `${BUILTIN_PROVIDER}:echo`;

/** Providers whose servers were down at start-up are asked again this often (by the harness, `rediscover`). */
export const REDISCOVERY_INTERVAL_MS = 60_000;

/**
 * Splits a model id at its FIRST colon (`local:llama3.2:3b` is provider `local`, model
 * `llama3.2:3b`); `undefined` when either half would be empty.
 */
export function splitModelId(id: string): { provider: string; model: string } | undefined {
  const colon = id.indexOf(':');
  if (colon <= 0 || colon === id.length - 1) return undefined;
  return { provider: id.slice(0, colon), model: id.slice(colon + 1) };
}

/**
 * The default model: `wanted` when given (it must be offered, else `config_invalid`, since it
 * comes from the config file; `reasons` can say why a provider offers nothing), otherwise the
 * first real (non-builtin) model, otherwise `builtin:echo`.
 */
export function chooseDefaultModel(
  entries: readonly CatalogEntry[],
  wanted?: string,
  reasons: Readonly<Record<string, string>> = {},
): string {
  if (wanted !== undefined) {
    if (entries.some((entry) => entry.id === wanted)) return wanted;
    const provider = splitModelId(wanted)?.provider;
    const why = provider && reasons[provider] ? ` (${reasons[provider]})` : '';
    throw new HarnessError(
      'config_invalid',
      `defaultModel "${wanted}" is not offered${why}. Offered: ${entries.map((entry) => entry.id).join(', ') || 'nothing'}.`,
    );
  }
  return (
    entries.find((entry) => entry.provider !== BUILTIN_PROVIDER)?.id ??
    entries.find((entry) => entry.id === FALLBACK_MODEL)?.id ??
    entries[0]?.id ??
    FALLBACK_MODEL
  );
}

/** A provider found at start-up, or found missing. */
export interface FoundProvider {
  provider?: ProviderV3;
  models: readonly string[];
  description?: string;
  /** Why it offers nothing (or what to know about it). */
  reason?: string;
}

/** A provider whose server did not answer: `find` asks it again. */
export interface MissingProvider {
  name: string;
  find(): Promise<FoundProvider | undefined>;
}

export interface ModelCatalogInit {
  /** Offered models in the order to list them; a repeated id keeps its first entry. */
  entries: readonly CatalogEntry[];
  /** A provider object for every provider that appears in `entries`, keyed by its name. */
  providers: Readonly<Record<string, ProviderV3>>;
  /** See {@link chooseDefaultModel}. */
  defaultModel?: string;
  /** Why some providers offer nothing, keyed by provider name; shown in messages and the summary. */
  reasons?: Readonly<Record<string, string>>;
  /** Other start-up findings worth a line in the summary. */
  notes?: readonly string[];
  /** Providers to look for again, their servers down at start-up. */
  missing?: readonly MissingProvider[];
  /** Receives a line when a missing provider comes back. */
  log?: (line: string) => void;
}

export class ModelCatalog {
  /** The id new tasks use unless they choose another. */
  readonly defaultModel: string;
  /** Start-up findings (servers that did not answer, providers skipped), for the summary. */
  readonly notes: readonly string[];
  private entries: readonly CatalogEntry[];
  private ids: ReadonlySet<string>;
  private providers: Record<string, ProviderV3>;
  private missing: MissingProvider[];
  private readonly log: (line: string) => void;
  private looking: Promise<string[]> | undefined;

  constructor(init: ModelCatalogInit) {
    const seen = new Set<string>();
    this.entries = init.entries
      .filter((entry) => !seen.has(entry.id) && seen.add(entry.id))
      .map((entry) => ({ ...entry }));
    this.ids = seen;
    for (const entry of this.entries) {
      if (!init.providers[entry.provider]) throw new Error(`ModelCatalog: no provider object for "${entry.provider}"`);
    }
    this.providers = { ...init.providers };
    this.defaultModel = chooseDefaultModel(this.entries, init.defaultModel, init.reasons);
    const reasons = Object.entries(init.reasons ?? {}).map(([provider, why]) => `${provider}: ${why}`);
    this.notes = [...reasons, ...(init.notes ?? [])];
    this.missing = [...(init.missing ?? [])];
    this.log = init.log ?? (() => {});
  }

  /** The providers still looked for: their servers have not answered since start-up. */
  get waitingFor(): string[] {
    return this.missing.map((missing) => missing.name);
  }

  /**
   * Asks the missing providers' servers again; the models of those that answer join the offer
   * (after the models already offered). Resolves with the names of the providers that came
   * back. Calls made while a look runs share it, so a server that hangs is waited for once
   * (for its probe timeout), however many ask. Never rejects.
   */
  rediscover(): Promise<string[]> {
    if (this.looking) return this.looking;
    if (this.missing.length === 0) return Promise.resolve([]);
    this.looking = this.lookAgain().finally(() => (this.looking = undefined));
    return this.looking;
  }

  private async lookAgain(): Promise<string[]> {
    const results = await Promise.all(
      this.missing.map(async (missing) => ({ missing, found: await missing.find().catch(() => undefined) })),
    );
    const back: string[] = [];
    for (const { missing, found } of results) {
      if (!found?.provider || found.models.length === 0) continue;
      this.providers[missing.name] = found.provider;
      const added = found.models
        .map((model) => ({
          id: `${missing.name}:${model}`,
          provider: missing.name,
          model,
          ...(found.description ? { description: found.description } : {}),
        }))
        .filter((entry) => !this.ids.has(entry.id));
      this.entries = [...this.entries, ...added];
      this.ids = new Set([...this.ids, ...added.map((entry) => entry.id)]);
      this.missing = this.missing.filter((other) => other !== missing);
      back.push(missing.name);
      this.log(`models: ${missing.name} answers again; offered now: ${added.map((entry) => entry.id).join(', ')}`);
    }
    return back;
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }

  /** The offered models, in offer order (copies: changing them changes nothing here). */
  list(): CatalogEntry[] {
    return this.entries.map((entry) => ({ ...entry }));
  }

  /** The model for an offered id; `model_unknown` listing the choices for any other id. */
  resolve(id: string): LanguageModelV3 {
    if (!this.has(id)) {
      throw new HarnessError(
        'model_unknown',
        `Unknown model "${id}". Choose one of: ${this.entries.map((entry) => entry.id).join(', ')}.`,
      );
    }
    const { provider, model } = splitModelId(id)!;
    return this.providers[provider]!.languageModel(model);
  }

  /** A start-up summary for a person: the models offered, the default, and the notes. Never a key. */
  summary(): string {
    const width = Math.max(...this.entries.map((entry) => entry.id.length), 0);
    const lines = this.entries.map((entry) => {
      const mark = entry.id === this.defaultModel ? '*' : ' ';
      return `  ${mark} ${entry.id.padEnd(width)}${entry.description ? `  ${entry.description}` : ''}`.trimEnd();
    });
    const notes = this.notes.map((note) => `  - ${note}`);
    return [
      `Models offered (* default: ${this.defaultModel}):`,
      ...lines,
      ...(notes.length ? ['Notes:', ...notes] : []),
    ].join('\n');
  }
}
