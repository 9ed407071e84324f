/**
 * The configuration file's schema: the single source of the config type, its defaults, its validation and the
 * messages a person reads when the file is wrong. Every object is strict (an unknown key is an error, usually a
 * typo), and the file can never hold a key: secrets come only from environment variables named by `apiKeyEnv`.
 */
import * as z from 'zod';
import { admissionSchema } from './admission.js';
import { agentsSchema } from './agents.js';
import { authSchema } from './auth.js';
import { compactSchema } from './compact.js';
import { messageIdRetentionSchema } from './message-ids.js';
import { instructionsMaxCharsSchema, instructionsSchema } from './instructions.js';
import { cardSchema } from './card.js';
import { commandsSchema } from './commands.js';
import { elicitationTimeoutMs, mcpServersSchema } from './mcp-servers.js';
import { metricsSchema } from './metrics.js';
import { pushShape } from './push.js';
import { schedulesSchema } from './schedules.js';
import { queueSchema } from './queue.js';
import { workspaceSchema } from './workspace.js';
import { publicGrpcAddressSchema, publicUrlSchema } from './public-url.js';

/** Provider names are also the prefix of model ids (`local:small`); `builtin` is taken. */
export const PROVIDER_NAME_PATTERN = /^[a-z][a-z0-9-]*$/;
/** The provider name that the built-in offline models use. */
export const BUILTIN_PROVIDER = 'builtin';
export const DEFAULT_MODEL_TIMEOUT_MS = 120_000;
export const DEFAULT_CONTEXT_CHARS = 200_000;
export const DEFAULT_SYSTEM_PROMPT = 'You are a helpful assistant.';
/** 64 MiB, the store's own default (`store/index.ts`; a test keeps the two equal). */
export const DEFAULT_CACHE_BYTES = 64 * 2 ** 20;

const SECRET_LIKE_KEY = /key|token|secret|passw|credential|auth|bearer/i;
const KEY_ADVICE =
  'do not put keys in the config file; name the environment variable that holds it with "apiKeyEnv" (e.g. "apiKeyEnv": "LOCAL_API_KEY")';

/**
 * A strict object whose unknown-key message lists what is allowed, and explains `apiKeyEnv`
 * when the unknown key looks like a secret. With one unknown key the message reads after the
 * key's path (see {@link describeConfigIssue}); with several it names them.
 */
function strictObject<T extends z.core.$ZodLooseShape>(shape: T) {
  const allowed = Object.keys(shape).join(', ');
  return z.strictObject(shape, {
    error: (issue) => {
      if (issue.code !== 'unrecognized_keys') return undefined;
      if (issue.keys.some((key) => SECRET_LIKE_KEY.test(key))) return KEY_ADVICE;
      const which =
        issue.keys.length === 1 ? 'unknown key' : `unknown keys ${issue.keys.map((k) => `"${k}"`).join(', ')}`;
      return `${which} (allowed here: ${allowed})`;
    },
  });
}

const httpURL = z
  .url({ protocol: /^https?$/, error: 'Invalid URL (expected http://… or https://…)' })
  .refine((value) => {
    // Zod runs this even when the format check failed, so the value may not parse.
    const url = URL.canParse(value) ? new URL(value) : undefined;
    return !url || (url.username === '' && url.password === '');
  }, `must not contain credentials; ${KEY_ADVICE}`);

const envName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]*$/, 'must be the name of an environment variable (e.g. LOCAL_API_KEY), not a key');

const modelList = z
  .array(z.string().trim().min(1, 'a model name must not be empty'))
  .min(1, 'list at least one model, or leave "models" out to ask the server');

const description = z
  .string()
  .max(200)
  .optional()
  .describe("A line about the provider, shown beside its models in the start-up log and `/model`'s list.");

/** The most characters of conversation one turn sends to its model: the newest messages that fit. */
const contextChars = z.number().int().min(1000, 'must be at least 1000');

// Described once, shared by the three kinds of provider (the docs list a key once for all).
const providerType = <T extends string>(type: T) =>
  z
    .literal(type)
    .describe(
      'How the provider is spoken to: `openai-compatible` (local servers), `openai` (the Responses API) or `anthropic`.',
    );
const baseURLText =
  "The server's OpenAI-style API root, e.g. `http://127.0.0.1:11434/v1`; required for `openai-compatible`.";
const apiKeyEnvText =
  'The environment variable holding the key (never the key itself); local servers usually need none.';
const modelsText = "The models to offer; without it the server's `GET {baseURL}/models` is asked at start-up.";
const providerContextChars = contextChars
  .optional()
  .describe("Overrides the top-level `contextChars` for this provider's models (a small local model wants less).");

const openAICompatibleProvider = strictObject({
  type: providerType('openai-compatible'),
  baseURL: httpURL.describe(baseURLText),
  apiKeyEnv: envName.optional().describe(apiKeyEnvText),
  models: modelList.optional().describe(modelsText),
  contextChars: providerContextChars,
  description,
});

const openAIProvider = strictObject({
  type: providerType('openai'),
  baseURL: httpURL.optional().describe(baseURLText),
  apiKeyEnv: envName.default('OPENAI_API_KEY').describe(apiKeyEnvText),
  models: modelList.optional().describe(modelsText),
  contextChars: providerContextChars,
  description,
});

const anthropicProvider = strictObject({
  type: providerType('anthropic'),
  baseURL: httpURL.optional().describe(baseURLText),
  apiKeyEnv: envName.default('ANTHROPIC_API_KEY').describe(apiKeyEnvText),
  models: modelList.optional().describe(modelsText),
  contextChars: providerContextChars,
  description,
});

const providerSchema = z.discriminatedUnion('type', [openAICompatibleProvider, openAIProvider, anthropicProvider], {
  error: (issue) =>
    issue.code === 'invalid_union' ? '"type" must be one of "openai-compatible", "openai", "anthropic"' : undefined,
});

const providerName = z
  .string()
  .regex(PROVIDER_NAME_PATTERN, 'a provider name must start with a-z and use only a-z, 0-9 and "-"')
  .refine((name) => name !== BUILTIN_PROVIDER, `"${BUILTIN_PROVIDER}" is reserved for the built-in offline models`);

/** The most model-and-tool steps in one turn. */
export const DEFAULT_MAX_STEPS = 20;
/** 60 s, the MCP SDK's own request timeout: a tool answers in seconds; one that hangs should cost a minute, not two. */
export const DEFAULT_TOOL_TIMEOUT_MS = 60_000;
/** About 5,000 tokens: enough for a page of a file, small enough that a few calls fit a context. */
export const DEFAULT_TOOL_OUTPUT_CHARS = 20_000;
/**
 * 5 s: most servers answer within it (an `npx` one took 4 s), and a turn sent right after a
 * start gets their tools; one that takes longer costs the first turn no more than that.
 */
export const DEFAULT_MCP_CONNECT_WAIT_MS = 5_000;

/** 10 s: a lost instance's turns end within about that; renewing every 3.3 s costs one small write. */
export const DEFAULT_INSTANCE_LEASE_MS = 10_000;

/** See `maxTurnsInFlight` and README, "Configuration" (how it was chosen). */
export const DEFAULT_MAX_TURNS_IN_FLIGHT = 256;

/** 30 s: most turns finish within it; a load balancer's own drain time is often as long. */
export const DEFAULT_DRAIN_TIMEOUT_MS = 30_000;

/** 10 s: a turn interrupted by a stop stores its end in milliseconds when the store keeps up. */
export const DEFAULT_SHUTDOWN_GRACE_MS = 10_000;

/** 30 s: under the idle timeouts proxies and balancers usually give a request (nginx's 60 s). */
export const DEFAULT_LONG_POLL_MS = 30_000;

const pushSchema = strictObject(pushShape);

export const configSchema = strictObject({
  defaultModel: z
    .string()
    .regex(/^[^:\s]+:\S/, 'must be "provider:model", e.g. "local:llama3.2"')
    .optional()
    .describe(
      'The model of a new task, `provider:model`; it must be offered at start-up. Without it: the first real model found, else `builtin:echo`.',
    ),
  systemPrompt: z.string().default(DEFAULT_SYSTEM_PROMPT).describe('Sent first in every model request.'),
  instructions: instructionsSchema,
  instructionsMaxChars: instructionsMaxCharsSchema,
  turnEndState: z
    .enum(['input-required', 'completed'])
    .default('input-required')
    .describe("The state a task is left in after the model's reply: `completed` ends each task after one reply."),
  publicUrl: publicUrlSchema
    .optional()
    .describe(
      'The HTTP address the card names, when clients reach the harness through a proxy (e.g. `https://agent.example.com`); without it, the listening address. `--public-url` wins (docs/security.md).',
    ),
  publicGrpcAddress: publicGrpcAddressSchema
    .optional()
    .describe(
      '`host:port` the card names for gRPC, when clients come through a proxy; without it, the address gRPC listens on.',
    ),
  card: cardSchema
    .default(cardSchema.parse({}))
    .describe('The agent card: its signatures (issue 38, docs/security.md).'),
  detectOllama: z
    .boolean()
    .default(true)
    .describe('Whether to look for an Ollama server on 127.0.0.1:11434 at start-up.'),
  modelTimeoutMs: z
    .number()
    .int()
    .min(1000, 'must be at least 1000')
    .max(3_600_000)
    .default(DEFAULT_MODEL_TIMEOUT_MS)
    .describe(
      'The longest one model request may take, in milliseconds; with a hosted agent (`--agent`), the longest one of its turns may take.',
    ),
  contextChars: contextChars
    .default(DEFAULT_CONTEXT_CHARS)
    .describe(
      "The most characters of conversation one turn sends to its model (about 4 make a token: the default is some 50,000 tokens). Past `compact.autoAt` of it the earlier messages are summarised first (`compact`); what still does not fit is cut: the newest messages that fit, starting at a user message. The task keeps the whole conversation. A new task in a `contextId` used before is sent the earlier tasks of that context first (the newest 20, not sub-tasks, not other users' tasks). A sub-task is sent the conversation it was started from, then its instruction.",
    ),
  compact: compactSchema
    .default(compactSchema.parse({}))
    .describe(
      "Compaction: when a conversation is summarised to fit its model's budget, and how much of it stays word for word (CMD-36, docs/commands.md).",
    ),
  cacheBytes: z
    .number()
    .int('must be a whole number of bytes')
    .min(0, 'must be 0 (no cache) or more')
    .max(Number.MAX_SAFE_INTEGER)
    .default(DEFAULT_CACHE_BYTES)
    .describe(
      "The most memory, in bytes (64 MiB by default, estimated from the stored text), the store's caches of tasks and their state may take; a task larger than that is read from the database each time. 0 turns caching off (docs/storage.md).",
    ),
  durability: z
    .enum(['normal', 'full'])
    .default('normal')
    .describe(
      'What an acknowledged write survives: `normal` a killed or crashed process, `full` a power cut or an operating-system crash too (every commit flushed to the disk, slower; docs/storage.md).',
    ),
  instanceLeaseMs: z
    .number()
    .int('must be a whole number of milliseconds')
    .min(500, 'must be at least 500')
    .max(600_000)
    .default(DEFAULT_INSTANCE_LEASE_MS)
    .describe(
      'With several instances on one PostgreSQL database: how long, in milliseconds, an instance that stopped answering keeps its turns before another ends them as interrupted (each renews its lease three times in that time), and how long a transaction may wait idle before PostgreSQL ends it (docs/instances.md).',
    ),
  messageIdRetentionMs: messageIdRetentionSchema,
  maxTurnsInFlight: z
    .number()
    .int('must be a whole number of turns')
    .min(1, 'must be at least 1')
    .max(100_000)
    .default(DEFAULT_MAX_TURNS_IN_FLIGHT)
    .describe(
      "The most turns in flight on one instance, from the message that starts one until its last event is stored; sub-tasks' turns count too, commands do not. A message past it is refused at once, retryably (HTTP 503 with Retry-After, gRPC UNAVAILABLE, JSON-RPC -32603), instead of queueing behind a store that cannot keep up (how the default was chosen: docs/performance.md).",
    ),
  longPollMs: z
    .number()
    .int('must be a whole number of milliseconds')
    .min(0, 'must be 0 (answer at once) or more')
    .max(600_000)
    .default(DEFAULT_LONG_POLL_MS)
    .describe(
      'The longest, in milliseconds, an A2A 1.1 `GetTask` with `currentGeneration` waits for the task to move past that generation before it answers with the task as it stands (30 s by default, under the idle timeouts of most proxies); 0 answers at once (spec/stream-resume-extension-v1.md).',
    ),
  admission: admissionSchema
    .default(admissionSchema.parse({}))
    .describe(
      'When a request is refused before any work, so that work never piles up (docs/operations.md, "Overload").',
    ),
  drainTimeoutMs: z
    .number()
    .int('must be a whole number of milliseconds')
    .min(0)
    .max(3_600_000)
    .default(DEFAULT_DRAIN_TIMEOUT_MS)
    .describe(
      'On a stop (SIGTERM, SIGINT), how long, in milliseconds, the turns running get to finish on their own while the instance drains: /readyz answers 503 and new turns are refused retryably (HTTP 503 with Retry-After, gRPC UNAVAILABLE, JSON-RPC -32603). Past it, or at a second signal, the turns left end as interrupted (shutdownGraceMs). 0 interrupts them at once (docs/operations.md).',
    ),
  shutdownGraceMs: z
    .number()
    .int('must be a whole number of milliseconds')
    .min(0)
    .max(600_000)
    .default(DEFAULT_SHUTDOWN_GRACE_MS)
    .describe(
      'On a stop (SIGTERM, SIGINT), after drainTimeoutMs, how long, in milliseconds, the turns still running get to store their end as interrupted. Past it the harness exits anyway; recovery ends the turns left when an instance next starts on the store.',
    ),
  mcpServers: mcpServersSchema
    .default({})
    .describe(
      "MCP servers whose tools every turn's model may call, by name (prefixing their tools' names, `fs_read_text_file`); each a stdio server (`command`) or a Streamable HTTP one (`url`). Any value may name an environment variable, `${VAR}` or `${VAR:-default}`, read at start-up (docs/tools.md).",
    ),
  mcpConnectWaitMs: z
    .number()
    .int('must be a whole number of milliseconds')
    .min(0)
    .max(600_000)
    .default(DEFAULT_MCP_CONNECT_WAIT_MS)
    .describe(
      'How long, in milliseconds, a turn that starts while MCP servers are still connecting (the harness serves before they answer) waits for them. Past it the turn runs without their tools and its stream carries a notice (`tools-missing`) naming the servers; 0 never waits (docs/tools.md).',
    ),
  maxSteps: z
    .number()
    .int()
    .min(1, 'must be at least 1')
    .max(1000)
    .default(DEFAULT_MAX_STEPS)
    .describe("The most model-and-tool steps in one turn; the last one's reply ends the turn."),
  toolTimeoutMs: z
    .number()
    .int()
    .min(100, 'must be at least 100')
    .max(3_600_000)
    .default(DEFAULT_TOOL_TIMEOUT_MS)
    .describe(
      'The longest one tool call, or one attempt to connect to an MCP server, may take, in milliseconds; a call past it is cancelled and the model told it timed out.',
    ),
  elicitationTimeoutMs,
  toolOutputChars: z
    .number()
    .int()
    .min(1000, 'must be at least 1000')
    .max(10_000_000)
    .default(DEFAULT_TOOL_OUTPUT_CHARS)
    .describe('The most characters of one tool result the model is sent; the rest is cut, with a note saying so.'),
  workspace: workspaceSchema.optional(),
  commands: commandsSchema
    .default(commandsSchema.parse({}))
    .describe('Command files: what their `` !`cmd` `` markers may do (CMD-38, docs/commands.md).'),
  push: pushSchema
    .default(pushSchema.parse({}))
    .describe("Push notifications: their webhooks' safety, timeout and retries (docs/push.md)."),
  queue: queueSchema
    .default(queueSchema.parse({}))
    .describe(
      'Messages sent while a turn runs with `tiny-harness/while-busy` set to queue them (spec/while-busy-extension-v1.md).',
    ),
  schedules: schedulesSchema
    .default(schedulesSchema.parse({}))
    .describe('Prompts run on a schedule: `/schedule`, its bounds and catch-up (docs/schedules.md).'),
  agents: agentsSchema
    .default(agentsSchema.parse({}))
    .describe(
      "Sub-agents the model may delegate to with the `delegate` tool, from the agents folder's files (docs/agents.md).",
    ),
  auth: authSchema.default({}),
  metrics: metricsSchema
    .default(metricsSchema.parse({}))
    .describe('Prometheus metrics at `GET /metrics`: on or off, their own port, a token (docs/operations.md).'),
  providers: z
    .record(providerName, providerSchema, {
      error: (issue) => (issue.code === 'invalid_key' ? issue.issues[0]?.message : undefined),
    })
    .default({})
    .describe(
      'Model providers, by name (`a-z`, `0-9`, `-`): the prefix of their model ids (`local:small`). Keys come only from the environment, named by `apiKeyEnv`.',
    ),
});

/** The validated configuration, every default filled in. */
export type HarnessConfig = z.output<typeof configSchema>;
/** What a config file may contain. */
export type HarnessConfigInput = z.input<typeof configSchema>;
export type ProviderConfig = HarnessConfig['providers'][string];

/** The configuration when there is no file. */
export function defaultConfig(): HarnessConfig {
  return configSchema.parse({});
}

/**
 * One issue as a line: the key path, then the message (`providers.local.baseURL: Invalid URL`).
 * An unknown key's path ends with the key itself. Messages never repeat the offending value,
 * which might be a secret pasted in the wrong place.
 */
export function describeConfigIssue(issue: z.core.$ZodIssue): string {
  const path: PropertyKey[] = [...issue.path];
  if (issue.code === 'unrecognized_keys' && issue.keys.length === 1) path.push(issue.keys[0]!);
  const where = path.reduce<string>(
    (text, key) => (typeof key === 'number' ? `${text}[${key}]` : text ? `${text}.${String(key)}` : String(key)),
    '',
  );
  return where ? `${where}: ${issue.message}` : issue.message;
}
