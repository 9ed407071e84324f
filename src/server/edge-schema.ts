/**
 * What the harness accepts at its edge: the params of the A2A 1.0 methods it serves, in their
 * JSON form, with bounds on size, count and nesting. One schema for every transport: JSON-RPC
 * and HTTP+JSON check the raw JSON before the SDK's `fromJSON` coerces it (`edge-http.ts`:
 * there `{"text": {"a": 1}}` would become the text "[object Object]" and `historyLength: "x"`
 * no limit at all); gRPC checks the decoded request turned back into JSON (`grpc-edge.ts`).
 *
 * The bounds keep every request cheap. The SDK copies each message several times
 * (`structuredClone` in its request context and result manager) and looks up every reference
 * task: before these bounds, one 4 MB message of 340,000 empty parts held every other client
 * up for 3.5 s, 18,000 deep branches of metadata for 8.6 s, 300,000 reference task ids for
 * 5.5 s; now each is refused within tens of milliseconds (`bench/edge-shapes.ts`).
 *
 * Names follow ProtoJSON: lowerCamelCase, with the proto field names (`message_id`) accepted
 * as the SDK accepts them, and `null` meaning "not set". Unknown keys are ignored, as the SDK
 * ignores them. A refusal names the field and what would work, and never repeats the input.
 */
import { TaskState } from '@a2a-js/sdk';
import * as z from 'zod';
import { exceedsJson, exceedsJsonText, formatPath, jsonTextChars, type JsonPath } from './json-shape.js';

export const EDGE_LIMITS = {
  /** Parts in one message. */
  parts: 100,
  /** Characters of text in one message, all its text parts together. */
  textChars: 1_000_000,
  /** Characters of an id or tenant. Task ids are UUIDs (36); message and context ids are the client's choice. */
  idChars: 128,
  /**
   * Characters in the keys and strings of a request's metadata, all of it together: the
   * request's, the message's, its parts' and a push-notification config. Bounded as the text is.
   */
  metadataChars: 100_000,
  /** Levels of objects and arrays in a request's params (protobuf's own JSON recursion limit). */
  depth: 100,
  /** JSON values in a request's params: every object, array, string, number, boolean and null. */
  values: 10_000,
  /** Entries of `message.extensions` and of `configuration.acceptedOutputModes`. */
  listEntries: 32,
  /** `message.referenceTaskIds`: each one is looked up in the store. */
  referenceTaskIds: 100,
  /** Characters of a part's URL. */
  urlChars: 8192,
  /** Characters of a short string: a URI in a list, a file name, a media type, a page token. */
  shortChars: 1024,
  /** `historyLength`: a protobuf int32. */
  historyLength: 2 ** 31 - 1,
  /** `pageSize` of ListTasks. */
  pageSize: 100,
  /** Characters of a push-notification config's webhook URL. */
  pushUrlChars: 2048,
  /** Characters of a push-notification config's token, which the receiver gets back as it is. */
  pushTokenChars: 512,
  /** Characters of a push-notification config's `authentication.credentials` (a bearer token, a JWT). */
  pushCredentialsChars: 4096,
  /** Characters of a push-notification config's `authentication.scheme`. */
  pushSchemeChars: 64,
  /** `pageSize` of ListTaskPushNotificationConfigs: a protobuf int32 (the server pages at most `pushPageSize`). */
  pushListPageSize: 2 ** 31 - 1,
} as const;

const L = EDGE_LIMITS;

/** An error callback: "is required: …" when the field is missing, else "must be …". */
function need(expected: string) {
  return {
    error: (issue: { input?: unknown }) =>
      issue.input === undefined ? `is required: ${expected}` : `must be ${expected}`,
  };
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Accepts the proto field names too (`message_id` for `messageId`), as the SDK does; the camelCase name wins. */
function aliased<T extends z.ZodType>(aliases: Record<string, string>, schema: T) {
  return z.preprocess((value) => {
    if (!isPlainObject(value) || !Object.keys(aliases).some((alias) => alias in value)) return value;
    const renamed: Record<string, unknown> = { ...value };
    for (const [alias, name] of Object.entries(aliases)) {
      if (renamed[name] === undefined || renamed[name] === null) renamed[name] = renamed[alias];
      delete renamed[alias];
    }
    return renamed;
  }, schema);
}

const idText = `a string of 1 to ${L.idChars} characters`;
/**
 * Control characters and lone surrogates are refused in every string the store keeps as text of
 * its own (ids, a push config's URL, token and credentials; message text and metadata are kept
 * as JSON, which escapes them): PostgreSQL cannot store a NUL in text ("invalid byte sequence")
 * and would store a lone surrogate altered, so such a string would work on SQLite and fail (or
 * change) on PostgreSQL. No client needs them there; a token or credentials go out in HTTP
 * headers, which cannot carry them either.
 */
// eslint-disable-next-line no-control-regex -- finding control characters is the point
const UNPRINTABLE = /[\u0000-\u001f\u007f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const printable = (text: string) => !UNPRINTABLE.test(text);
const NOT_PRINTABLE = 'must hold no control characters (NUL included) and be valid Unicode';
/** A string the store keeps as text of its own, of at most `max` characters. */
const storedText = (expected: string, max: number) =>
  z.string(need(expected)).max(max, `must be at most ${max} characters`).refine(printable, NOT_PRINTABLE);
const requiredId = z
  .string(need(idText))
  .min(1, `must not be empty: ${idText}`)
  .max(L.idChars, `must be at most ${L.idChars} characters`)
  .refine(printable, NOT_PRINTABLE);
const optionalId = storedText(`a string of at most ${L.idChars} characters`, L.idChars).nullish();
const shortString = (what: string) =>
  z.string(need(`a string (${what})`)).max(L.shortChars, `must be at most ${L.shortChars} characters`);
const boolean = z.boolean(need('true or false'));
const jsonObject = z.custom<Record<string, unknown>>(isPlainObject, need('a JSON object, e.g. {"key": "value"}'));

/** A whole number in `[min, max]`, as a JSON number or a string of digits (ProtoJSON allows both for int32). */
function wholeNumber(min: number, max: number) {
  const ok = (value: unknown) => {
    const number = typeof value === 'string' && /^\d{1,10}$/.test(value) ? Number(value) : value;
    return typeof number === 'number' && Number.isInteger(number) && number >= min && number <= max;
  };
  return z.custom<number | string>(ok, need(`a whole number from ${min} to ${max}`));
}

const historyLength = wholeNumber(0, L.historyLength).nullish();

const TASK_STATES = Object.entries(TaskState).filter(
  ([name, value]) => typeof value === 'number' && value >= 0 && name.startsWith('TASK_STATE_'),
);
const taskState = z.custom<string | number>(
  (value) => TASK_STATES.some(([name, number]) => value === name || value === number),
  need(`a task state: ${TASK_STATES.map(([name]) => name).join(', ')}`),
);

const role = z.custom<string | number>(
  (value) => value === 'ROLE_USER' || value === 1,
  need('"ROLE_USER" (clients send user messages)'),
);

const BASE64 = /^[A-Za-z0-9+/_-]*={0,2}$/;
const CONTENTS = ['text', 'raw', 'url', 'data'] as const;

const part = aliased(
  { media_type: 'mediaType' },
  z
    .object(
      {
        text: z.string(need('a string')).nullish(),
        raw: z.string(need('base64 text')).regex(BASE64, 'must be base64 text').nullish(),
        url: z.string(need('a URL')).max(L.urlChars, `must be at most ${L.urlChars} characters`).nullish(),
        data: z.unknown().optional(),
        metadata: jsonObject.nullish(),
        filename: shortString('a file name').nullish(),
        mediaType: shortString('a media type such as text/plain').nullish(),
      },
      need('a part, e.g. {"text": "hello"}'),
    )
    .superRefine((value, ctx) => {
      const contents = CONTENTS.filter((key) => value[key] !== undefined && value[key] !== null).length;
      if (contents !== 1)
        ctx.addIssue({
          code: 'custom',
          message: `must hold ${contents === 0 ? 'one' : 'only one'} of text, raw, url or data, e.g. {"text": "hello"}`,
        });
    }),
);

const message = aliased(
  { message_id: 'messageId', context_id: 'contextId', task_id: 'taskId', reference_task_ids: 'referenceTaskIds' },
  z
    .object(
      {
        messageId: requiredId,
        contextId: optionalId,
        taskId: optionalId,
        role,
        parts: z
          .array(part, need('an array of parts, e.g. [{"text": "hello"}]'))
          .min(1, 'must hold at least one part, e.g. [{"text": "hello"}]')
          .max(L.parts, {
            error: (issue) =>
              `must hold at most ${L.parts} parts (it holds ${(issue.input as unknown[]).length}); put long text in one part`,
          }),
        metadata: jsonObject.nullish(),
        extensions: z
          .array(shortString('an extension URI'))
          .max(L.listEntries, `must list at most ${L.listEntries} extensions`)
          .nullish(),
        referenceTaskIds: z
          .array(requiredId, need('an array of task ids'))
          .max(L.referenceTaskIds, `must list at most ${L.referenceTaskIds} task ids`)
          .nullish(),
      },
      need('a message with messageId, role and parts'),
    )
    .superRefine((value, ctx) => {
      const chars = (Array.isArray(value.parts) ? value.parts : []).reduce(
        (sum, p) => sum + (typeof p.text === 'string' ? p.text.length : 0),
        0,
      );
      if (chars > L.textChars) {
        ctx.addIssue({
          code: 'custom',
          path: ['parts'],
          message: `hold ${chars} characters of text; a message holds at most ${L.textChars}`,
        });
      }
    }),
);

const tenant = optionalId;

const URL_TEXT = 'an absolute http:// or https:// URL';
const webhookUrl = storedText(URL_TEXT, L.pushUrlChars).min(1, `must not be empty: ${URL_TEXT}`);
const webhookAuth = z.object(
  {
    scheme: storedText('an HTTP authentication scheme such as "Bearer"', L.pushSchemeChars),
    credentials: storedText('a string', L.pushCredentialsChars).nullish(),
  },
  need('an object with scheme and credentials, e.g. {"scheme": "Bearer", "credentials": "..."}'),
);
const webhookToken = storedText('a string', L.pushTokenChars);

/**
 * A push-notification config (`TaskPushNotificationConfig`, docs/push.md): `CreateTaskPushNotificationConfig`'s
 * params, whose task id is required, or `SendMessage`'s `configuration.taskPushNotificationConfig`, whose task
 * id is empty or the message's. Every string is stored as text, so none may hold a NUL.
 */
function pushConfig(taskId: z.ZodType) {
  const shape = { tenant, id: optionalId, taskId, url: webhookUrl, token: webhookToken.nullish() };
  const config = z.object(
    { ...shape, authentication: webhookAuth.nullish() },
    need('a push-notification config, e.g. {"url": "https://example.com/hook"}'),
  );
  return aliased({ task_id: 'taskId' }, config);
}

const configuration = aliased(
  {
    accepted_output_modes: 'acceptedOutputModes',
    task_push_notification_config: 'taskPushNotificationConfig',
    history_length: 'historyLength',
    return_immediately: 'returnImmediately',
  },
  z.object(
    {
      acceptedOutputModes: z
        .array(shortString('a media type'))
        .max(L.listEntries, `must list at most ${L.listEntries} media types`)
        .nullish(),
      taskPushNotificationConfig: pushConfig(optionalId).nullish(),
      historyLength,
      returnImmediately: boolean.nullish(),
    },
    need('a JSON object'),
  ),
);

const params = (shape: z.ZodRawShape) => z.object(shape, need('a JSON object'));

const sendMessage = params({ tenant, message, configuration: configuration.nullish(), metadata: jsonObject.nullish() });
const getTask = aliased({ history_length: 'historyLength' }, params({ tenant, id: requiredId, historyLength }));
const listTasks = aliased(
  {
    context_id: 'contextId',
    page_size: 'pageSize',
    page_token: 'pageToken',
    history_length: 'historyLength',
    status_timestamp_after: 'statusTimestampAfter',
    include_artifacts: 'includeArtifacts',
  },
  params({
    tenant,
    contextId: optionalId,
    status: taskState.nullish(),
    pageSize: wholeNumber(1, L.pageSize).nullish(),
    pageToken: shortString('the nextPageToken of the previous page').nullish(),
    historyLength,
    statusTimestampAfter: z
      .string(need('an ISO 8601 time such as 2026-01-31T12:00:00Z'))
      .max(64, 'must be an ISO 8601 time such as 2026-01-31T12:00:00Z')
      .refine((value) => !Number.isNaN(Date.parse(value)), 'must be an ISO 8601 time such as 2026-01-31T12:00:00Z')
      .nullish(),
    includeArtifacts: boolean.nullish(),
  }),
);
const cancelTask = params({ tenant, id: requiredId, metadata: jsonObject.nullish() });
const pushConfigId = aliased({ task_id: 'taskId' }, params({ tenant, taskId: requiredId, id: requiredId }));
const listPushConfigs = aliased(
  { task_id: 'taskId', page_size: 'pageSize', page_token: 'pageToken' },
  params({
    tenant,
    taskId: requiredId,
    pageSize: wholeNumber(0, L.pushListPageSize).nullish(),
    pageToken: shortString('the nextPageToken of the previous page').nullish(),
  }),
);
const subscribeToTask = params({ tenant, id: requiredId });

/** The methods whose params the edge checks, by their A2A 1.0 name. */
const METHODS = {
  SendMessage: sendMessage,
  SendStreamingMessage: sendMessage,
  GetTask: getTask,
  ListTasks: listTasks,
  CancelTask: cancelTask,
  SubscribeToTask: subscribeToTask,
  CreateTaskPushNotificationConfig: pushConfig(requiredId),
  GetTaskPushNotificationConfig: pushConfigId,
  ListTaskPushNotificationConfigs: listPushConfigs,
  DeleteTaskPushNotificationConfig: pushConfigId,
} as const;

export type EdgeMethod = keyof typeof METHODS;

export function isEdgeMethod(method: string): method is EdgeMethod {
  return Object.hasOwn(METHODS, method);
}

/**
 * Why the params of `method` are refused, or undefined when they are accepted: first the
 * schema, which never descends into free-form JSON (metadata, data parts), so it costs little
 * on any input; then the nesting and number of values of everything. `root` names the params
 * in the message ("params", "the request body", "the request").
 */
export function refusal(method: EdgeMethod, value: unknown, root = 'params'): string | undefined {
  const result = METHODS[method].safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0]!;
    return `${formatPath(issue.path as JsonPath, root)} ${issue.message}.`;
  }
  return jsonRefusal(value, root) ?? metadataRefusal(result.data as FreeForm, root);
}

/**
 * Why the metadata of params the schema accepted is refused for its size, naming the object
 * that takes it past {@link EDGE_LIMITS.metadataChars}; or undefined. Runs after the JSON
 * bounds, so every object it reads is already small in values and depth.
 */
function metadataRefusal(params: FreeForm, root: string): string | undefined {
  const objects: Array<[JsonPath, unknown]> = [[['metadata'], params.metadata]];
  if (params.message) {
    objects.push([['message', 'metadata'], params.message.metadata]);
    params.message.parts?.forEach((p, i) => objects.push([['message', 'parts', i, 'metadata'], p.metadata]));
  }
  objects.push([['configuration', 'taskPushNotificationConfig'], params.configuration?.taskPushNotificationConfig]);
  let chars = 0;
  for (const [path, object] of objects) {
    chars += jsonTextChars(object ?? {}, L.metadataChars - chars);
    if (chars > L.metadataChars)
      return `${formatPath(path, root)} takes the request's metadata past ${L.metadataChars} characters (keys and strings, all metadata together); put content in parts, not metadata.`;
  }
  return undefined;
}

/** The free-form objects of the params {@link METHODS} accept, where they have them. */
interface FreeForm {
  metadata?: unknown;
  message?: { metadata?: unknown; parts?: Array<{ metadata?: unknown }> };
  configuration?: { taskPushNotificationConfig?: unknown } | null;
}

/** Why `value` is refused for its nesting or size alone, or undefined; for requests the schema does not describe. */
export function jsonRefusal(value: unknown, root = 'params'): string | undefined {
  const excess = exceedsJson(value, { maxDepth: L.depth, maxValues: L.values });
  if (!excess) return undefined;
  if ('tooMany' in excess) {
    return `${root} holds more than ${L.values} JSON values (objects, arrays and the values in them); send less metadata or data.`;
  }
  return `${formatPath(excess.tooDeepAt, root)} nests objects and arrays more than ${L.depth} levels deep; flatten it.`;
}

/**
 * Bounds on a JSON body's text, checked before it is parsed. Looser than the schema's (a
 * JSON-RPC envelope adds a level; keys count as strings), so that the schema, which names the
 * field, refuses whatever is only somewhat too big; these refuse what is far too big before
 * parsing it costs anything.
 */
const BODY_TEXT_BOUNDS = { maxDepth: L.depth + 1, maxValues: 4 * L.values };

/** Why a JSON request body is refused for its structure alone, before it is parsed; or undefined. */
export function bodyTextRefusal(bytes: Uint8Array): string | undefined {
  const excess = exceedsJsonText(bytes, BODY_TEXT_BOUNDS);
  if (excess === 'depth')
    return `The request body nests objects and arrays more than ${L.depth} levels deep; flatten its metadata or data.`;
  if (excess === 'values') {
    return `The request body holds more than ${BODY_TEXT_BOUNDS.maxValues} objects, arrays and strings: a request holds at most ${L.values} JSON values, and a message at most ${L.parts} parts.`;
  }
  return undefined;
}

/** Why an id taken from a request path (a task id, a tenant) is refused, or undefined. */
export function pathIdRefusal(name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  const result = requiredId.safeParse(value);
  return result.success ? undefined : `The ${name} in the path ${result.error.issues[0]!.message}.`;
}
