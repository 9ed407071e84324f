/**
 * The A2A 1.0 data model in its JSON form (ProtoJSON, as the specification requires), as zod
 * schemas written from `specification/a2a.proto` of a2aproject/A2A at tag v1.0.0 (v1.0.1
 * changes only comments on `tenant`) and the rules of `docs/specification.md` that refine it. Each rule names the proto field it comes
 * from. Written from the specification, not from what the harness sends: a schema that
 * followed our output could never catch a mistake in it.
 *
 * The general rules applied throughout:
 * - spec 5.7: a field marked `(google.api.field_behavior) = REQUIRED` MUST be present and set,
 *   and a REQUIRED repeated field MUST hold at least one element. "Set" means not the proto
 *   default: a REQUIRED string is non-empty, a REQUIRED enum is not its `*_UNSPECIFIED` zero.
 *   The one exception is spelled out by the specification itself: `ListTasksResponse`.
 * - spec 5.5: field names are camelCase and enums are their names as strings (ProtoJSON).
 *   Objects are strict: a key that is not a field of the message (a 0.3 leftover such as
 *   `kind`, or a snake_case name) is reported.
 * - spec 5.6.1: timestamps are ISO 8601 in UTC, with the `Z` suffix.
 * - a `oneof` holds at most one member; the ones that are the whole content of their message
 *   (`Part.content`, `StreamResponse.payload`, `SendMessageResponse.payload`) exactly one,
 *   since an empty one carries nothing a receiver could act on.
 */
import { z } from 'zod';

/** Where a REQUIRED field comes from, for the message of the rule it breaks. */
export const required = (field: string) => `is REQUIRED and must be set (a2a.proto ${field})`;
export const nonEmptyList = (field: string) =>
  `is REQUIRED and must hold at least one element (a2a.proto ${field}; spec 5.7)`;

/** Runs a refinement even when other fields have issues, so that every problem is reported at once. */
export const always = {
  when: (payload: { value: unknown }) => typeof payload.value === 'object' && payload.value !== null,
};

/**
 * The REQUIRED fields of a message whose type is itself a message: `fields` maps each key to
 * its proto name. (An optional key that is absent is never refined by zod, so presence is
 * checked on the object that holds it.)
 */
export function withRequired<T extends z.ZodType>(schema: T, fields: Record<string, string>, presenceOnly = false) {
  return schema.superRefine((value: any, ctx) => {
    for (const [key, field] of Object.entries(fields)) {
      if (value[key] === undefined)
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: presenceOnly ? `is REQUIRED and must be present (a2a.proto ${field})` : required(field),
        });
    }
  }, always);
}

/** A REQUIRED string: present and not empty. */
export const requiredString = (field: string) => z.string({ error: required(field) }).min(1, required(field));
/** A REQUIRED repeated field: present, with at least one element. */
export const requiredList = <T extends z.ZodType>(item: T, field: string) =>
  z.array(item, { error: nonEmptyList(field) }).min(1, nonEmptyList(field));

/** google.protobuf.Struct: a JSON object. */
export const struct = z.record(z.string(), z.unknown(), { error: 'must be a JSON object (google.protobuf.Struct)' });
/** google.protobuf.Timestamp in JSON: ISO 8601, UTC, `Z` suffix (spec 5.6.1). */
const timestamp = z.iso.datetime({
  error: 'must be an ISO 8601 UTC timestamp ending in Z (google.protobuf.Timestamp; spec 5.6.1)',
});
/** An int32 field: ProtoJSON emits a JSON number. */
const int32 = z.number().int();

/** `enum TaskState`; `TASK_STATE_UNSPECIFIED` is the unset zero, so never a valid `TaskStatus.state`. */
export const TASK_STATES = [
  'TASK_STATE_SUBMITTED',
  'TASK_STATE_WORKING',
  'TASK_STATE_COMPLETED',
  'TASK_STATE_FAILED',
  'TASK_STATE_CANCELED',
  'TASK_STATE_INPUT_REQUIRED',
  'TASK_STATE_REJECTED',
  'TASK_STATE_AUTH_REQUIRED',
] as const;

/** `enum Role`; `ROLE_UNSPECIFIED` is the unset zero, so never a valid `Message.role`. */
export const ROLES = ['ROLE_USER', 'ROLE_AGENT'] as const;

/** A REQUIRED enum field: one of the enum's names other than its unset zero. */
function knownEnum<const T extends readonly [string, ...string[]]>(names: T, field: string, enumName: string) {
  return z.enum(names, {
    error: (issue) =>
      issue.input === undefined
        ? `${required(field)}: one of ${names.join(', ')}`
        : `${JSON.stringify(issue.input)} is not a value of enum ${enumName} that ${field} may hold (a2a.proto ${field} is REQUIRED: one of ${names.join(', ')})`,
  });
}

/** Reports when not exactly one of `keys` is present: the members of a oneof that must be set. */
function exactlyOne(keys: readonly string[], oneof: string) {
  return [
    (value: Record<string, unknown>, ctx: z.RefinementCtx) => {
      const present = keys.filter((key) => value[key] !== undefined);
      if (present.length !== 1) {
        ctx.addIssue({
          code: 'custom',
          message: `must hold exactly one of ${keys.join(', ')} (a2a.proto ${oneof} oneof); found ${present.length ? present.join(', ') : 'none'}`,
        });
      }
    },
    always,
  ] as const;
}

// message Part { oneof content { text = 1; raw = 2; url = 3; data = 4 } metadata = 5; filename = 6; media_type = 7 }
export const Part = z
  .strictObject({
    text: z.string().optional(),
    // bytes in ProtoJSON: base64 (standard or URL-safe alphabet, padding optional).
    raw: z
      .string()
      .regex(/^[A-Za-z0-9+/_-]*={0,2}$/, 'must be base64 (a2a.proto Part.raw is bytes)')
      .optional(),
    url: z.string().optional(),
    // google.protobuf.Value: any JSON value, null included.
    data: z.unknown().optional(),
    metadata: struct.optional(),
    filename: z.string().optional(),
    mediaType: z.string().optional(),
  })
  .superRefine(...exactlyOne(['text', 'raw', 'url', 'data'], 'Part.content'));

// message Message
export const Message = z
  .strictObject({
    messageId: requiredString('Message.message_id'),
    // "For server messages, `context_id` must be provided" (a2a.proto, comment on Message): checked below.
    contextId: z.string().optional(),
    taskId: z.string().optional(),
    role: knownEnum(ROLES, 'Message.role', 'Role'),
    parts: requiredList(Part, 'Message.parts'),
    metadata: struct.optional(),
    extensions: z.array(z.string()).optional(),
    referenceTaskIds: z.array(z.string()).optional(),
  })
  .superRefine((message, ctx) => {
    if (message.role === 'ROLE_AGENT' && !message.contextId) {
      ctx.addIssue({
        code: 'custom',
        path: ['contextId'],
        message:
          'must be set on a message from the server (a2a.proto Message: "For server messages, `context_id` must be provided")',
      });
    }
  }, always);

// message TaskStatus
export const TaskStatus = z.strictObject({
  state: knownEnum(TASK_STATES, 'TaskStatus.state', 'TaskState'),
  message: Message.optional(),
  timestamp: timestamp.optional(),
});

// message Artifact
export const Artifact = z.strictObject({
  artifactId: requiredString('Artifact.artifact_id'),
  name: z.string().optional(),
  description: z.string().optional(),
  // "The content of the artifact. Must contain at least one part."
  parts: requiredList(Part, 'Artifact.parts: "Must contain at least one part"'),
  metadata: struct.optional(),
  extensions: z.array(z.string()).optional(),
});

// message Task
export const Task = withRequired(
  z.strictObject({
    id: requiredString('Task.id'),
    contextId: z.string().optional(),
    status: TaskStatus.optional(),
    artifacts: z.array(Artifact).optional(),
    history: z.array(Message).optional(),
    metadata: struct.optional(),
  }),
  { status: 'Task.status' },
);

// message TaskStatusUpdateEvent
export const TaskStatusUpdateEvent = withRequired(
  z.strictObject({
    taskId: requiredString('TaskStatusUpdateEvent.task_id'),
    contextId: requiredString('TaskStatusUpdateEvent.context_id'),
    status: TaskStatus.optional(),
    metadata: struct.optional(),
  }),
  { status: 'TaskStatusUpdateEvent.status' },
);

// message TaskArtifactUpdateEvent
export const TaskArtifactUpdateEvent = withRequired(
  z.strictObject({
    taskId: requiredString('TaskArtifactUpdateEvent.task_id'),
    contextId: requiredString('TaskArtifactUpdateEvent.context_id'),
    artifact: Artifact.optional(),
    append: z.boolean().optional(),
    lastChunk: z.boolean().optional(),
    metadata: struct.optional(),
  }),
  { artifact: 'TaskArtifactUpdateEvent.artifact' },
);

// message StreamResponse { oneof payload { task = 1; message = 2; status_update = 3; artifact_update = 4 } }
export const StreamResponse = z
  .strictObject({
    task: Task.optional(),
    message: Message.optional(),
    statusUpdate: TaskStatusUpdateEvent.optional(),
    artifactUpdate: TaskArtifactUpdateEvent.optional(),
  })
  .superRefine(...exactlyOne(['task', 'message', 'statusUpdate', 'artifactUpdate'], 'StreamResponse.payload'));

// message SendMessageResponse { oneof payload { task = 1; message = 2 } }
export const SendMessageResponse = z
  .strictObject({ task: Task.optional(), message: Message.optional() })
  .superRefine(...exactlyOne(['task', 'message'], 'SendMessageResponse.payload'));

/**
 * message ListTasksResponse: all four fields are REQUIRED, yet `tasks` may be empty (no task
 * matches) and `next_page_token` is "empty if there are no more results" and "MUST always be
 * present" (spec 3.1.4): here REQUIRED means present, not non-default. In the proto binary
 * form (gRPC) a scalar holding its default cannot be present at all, so `presence: false`
 * leaves out the checks only JSON can pass.
 */
export function listTasksResponse(presence: boolean) {
  const schema = z.strictObject({
    tasks: z.array(Task).optional(),
    nextPageToken: z.string().optional(),
    pageSize: int32.optional(),
    totalSize: int32.optional(),
  });
  const fields = {
    tasks: 'ListTasksResponse.tasks',
    nextPageToken: 'ListTasksResponse.next_page_token; spec 3.1.4: "MUST always be present"',
    pageSize: 'ListTasksResponse.page_size',
    totalSize: 'ListTasksResponse.total_size',
  };
  return presence ? withRequired(schema, fields, true) : schema;
}
export const ListTasksResponse = listTasksResponse(true);

// message TaskPushNotificationConfig (the answer of the push notification config methods)
export const TaskPushNotificationConfig = z.strictObject({
  tenant: z.string().optional(),
  id: z.string().optional(),
  taskId: z.string().optional(),
  url: requiredString('TaskPushNotificationConfig.url'),
  token: z.string().optional(),
  authentication: z
    .strictObject({ scheme: requiredString('AuthenticationInfo.scheme'), credentials: z.string().optional() })
    .optional(),
});

/** The schemas' issues as one line each: `<path>: <rule>`, the path rooted at `root`. */
export function violations(schema: z.ZodType, value: unknown, root: string): string[] {
  const result = schema.safeParse(value);
  if (result.success) return [];
  return result.error.issues.map((issue) => {
    const path = [root, ...issue.path.map((key) => (typeof key === 'number' ? `[${key}]` : String(key)))]
      .join('.')
      .replace(/\.\[/g, '[');
    return issue.code === 'unrecognized_keys'
      ? `${path}: ${issue.keys.join(', ')} ${issue.keys.length > 1 ? 'are not fields' : 'is not a field'} of this message in a2a.proto`
      : `${path}: ${issue.message}`;
  });
}
