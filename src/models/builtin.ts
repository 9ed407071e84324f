/**
 * The built-in offline models, always offered, so the harness answers something useful with
 * no key, no network and no local server: on a fresh machine, in CI and in tests. They are real
 * AI SDK `LanguageModelV3` objects, streamed through `doStream` like any provider, and fully
 * deterministic: the same prompt always gives the same chunks and the same usage counts.
 *
 * - `builtin:echo` repeats the last user message and explains how to configure a real model.
 * - `builtin:stats` describes the conversation it was sent (messages, words, its own name).
 *
 * Usage is counted in words, a stand-in for tokens.
 */
import type {
  LanguageModelV3,
  LanguageModelV3CallOptions,
  LanguageModelV3GenerateResult,
  LanguageModelV3Prompt,
  LanguageModelV3StreamPart,
  LanguageModelV3StreamResult,
  LanguageModelV3Usage,
  ProviderV3,
} from '@ai-sdk/provider';
import { NoSuchModelError } from '@ai-sdk/provider';
import { BUILTIN_PROVIDER } from '../config/schema.js';

export type BuiltinModelName = 'echo' | 'stats';

/** The built-in models in the order they are offered, with what a person is told about them. */
export const BUILTIN_MODELS: readonly { model: BuiltinModelName; description: string }[] = [
  { model: 'echo', description: 'built-in offline model: repeats your message (not an AI)' },
  { model: 'stats', description: 'built-in offline model: describes the conversation it was sent (not an AI)' },
];

export interface BuiltinModelOptions {
  /** Wait this long before each text chunk; for tests of slow turns and cancellation. Default 0. */
  chunkDelayMs?: number;
}

const HOW_TO_CONFIGURE =
  'To talk to a real model, set OPENAI_API_KEY or ANTHROPIC_API_KEY, start an Ollama server on ' +
  '127.0.0.1:11434, or name an OpenAI-compatible server in a config file, then restart the harness.';

function abortError(): DOMException {
  return new DOMException('This operation was aborted', 'AbortError');
}

/** Resolves after `ms`, or rejects with an AbortError as soon as `signal` aborts. */
function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(abortError());
    const onAbort = () => (clearTimeout(timer), reject(abortError()));
    const timer = setTimeout(() => (signal?.removeEventListener('abort', onAbort), resolve()), ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

function countWords(text: string): number {
  return text.split(/\s+/).filter(Boolean).length;
}

/** The text of one prompt message; files count as a short placeholder. */
function messageText(message: LanguageModelV3Prompt[number]): string {
  if (typeof message.content === 'string') return message.content;
  return message.content
    .map((part) =>
      part.type === 'text' || part.type === 'reasoning'
        ? part.text
        : part.type === 'file'
          ? `[file ${part.filename ?? part.mediaType}]`
          : '',
    )
    .filter(Boolean)
    .join('\n');
}

function echoReply(prompt: LanguageModelV3Prompt): string {
  const last = [...prompt].reverse().find((message) => message.role === 'user');
  const said = last ? messageText(last).trim() : '';
  const echo = said ? `You said: ${said}` : 'You sent no text.';
  return `${echo}\n\n(This reply comes from builtin:echo, a built-in offline model that repeats your message; it is not an AI. ${HOW_TO_CONFIGURE})`;
}

function statsReply(prompt: LanguageModelV3Prompt): string {
  const byRole = { system: 0, user: 0, assistant: 0, tool: 0 };
  let words = 0;
  for (const message of prompt) {
    byRole[message.role]++;
    words += countWords(messageText(message));
  }
  const last = [...prompt].reverse().find((message) => message.role === 'user');
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? '' : 's'}`;
  return (
    `I am builtin:stats, a built-in offline model (not an AI). I was sent ${plural(prompt.length, 'message')} ` +
    `(${byRole.system} system, ${byRole.user} user, ${byRole.assistant} assistant, ${byRole.tool} tool) ` +
    `with ${plural(words, 'word')} in total; the last user message has ${plural(last ? countWords(messageText(last)) : 0, 'word')}.`
  );
}

function usageOf(inputWords: number, outputWords: number): LanguageModelV3Usage {
  return {
    inputTokens: { total: inputWords, noCache: inputWords, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: outputWords, text: outputWords, reasoning: 0 },
  };
}

/** One built-in model. Create them through the catalog; construct directly only in tests. */
export class BuiltinModel implements LanguageModelV3 {
  readonly specificationVersion = 'v3' as const;
  readonly provider = BUILTIN_PROVIDER;
  readonly supportedUrls: Record<string, RegExp[]> = {};
  private readonly chunkDelayMs: number;

  constructor(
    readonly modelId: BuiltinModelName,
    options: BuiltinModelOptions = {},
  ) {
    this.chunkDelayMs = options.chunkDelayMs ?? 0;
  }

  /** The whole reply for a prompt; what `doStream` sends in chunks. */
  reply(prompt: LanguageModelV3Prompt): string {
    return this.modelId === 'echo' ? echoReply(prompt) : statsReply(prompt);
  }

  private answer(options: LanguageModelV3CallOptions) {
    const text = this.reply(options.prompt);
    const inputWords = options.prompt.reduce((n, message) => n + countWords(messageText(message)), 0);
    const warnings = options.tools?.length
      ? [{ type: 'unsupported' as const, feature: 'tools', details: 'built-in models never call tools' }]
      : [];
    return { text, usage: usageOf(inputWords, countWords(text)), warnings };
  }

  async doGenerate(options: LanguageModelV3CallOptions): Promise<LanguageModelV3GenerateResult> {
    if (options.abortSignal?.aborted) throw abortError();
    const { text, usage, warnings } = this.answer(options);
    return {
      content: [{ type: 'text', text }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage,
      warnings,
      response: { modelId: this.modelId },
    };
  }

  async doStream(options: LanguageModelV3CallOptions): Promise<LanguageModelV3StreamResult> {
    const signal = options.abortSignal;
    if (signal?.aborted) throw abortError();
    const { text, usage, warnings } = this.answer(options);
    const pieces = text.match(/\s*\S+\s*/g) ?? [];
    const parts: LanguageModelV3StreamPart[] = [
      { type: 'stream-start', warnings },
      { type: 'response-metadata', modelId: this.modelId },
      { type: 'text-start', id: 'text-0' },
      ...pieces.map((delta): LanguageModelV3StreamPart => ({ type: 'text-delta', id: 'text-0', delta })),
      { type: 'text-end', id: 'text-0' },
      { type: 'finish', finishReason: { unified: 'stop', raw: 'stop' }, usage },
    ];
    const delay = this.chunkDelayMs;
    let next = 0;
    const stream = new ReadableStream<LanguageModelV3StreamPart>({
      async pull(controller) {
        const part = parts[next++];
        if (!part) return controller.close();
        try {
          if (part.type === 'text-delta' && delay > 0) await sleep(delay, signal);
          else if (signal?.aborted) throw abortError();
          controller.enqueue(part);
        } catch (error) {
          controller.error(error);
        }
      },
    });
    return { stream };
  }
}

/**
 * The `builtin` provider, for the catalog: its language models and nothing else. Written out
 * rather than made with `ai`'s `customProvider`, so that start-up does not load `ai` for it.
 */
export function createBuiltinProvider(options: BuiltinModelOptions = {}): ProviderV3 {
  const models = new Map(BUILTIN_MODELS.map(({ model }) => [model as string, new BuiltinModel(model, options)]));
  const none =
    (modelType: 'languageModel' | 'embeddingModel' | 'imageModel') =>
    (modelId: string): never => {
      throw new NoSuchModelError({ modelId, modelType });
    };
  return {
    specificationVersion: 'v3',
    languageModel: (modelId) => models.get(modelId) ?? none('languageModel')(modelId),
    embeddingModel: none('embeddingModel'),
    imageModel: none('imageModel'),
  };
}
