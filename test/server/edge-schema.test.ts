/**
 * The edge schema on its own: which A2A 1.0 params it accepts and refuses, that every refusal
 * names the field and never repeats the input, and the bounds on JSON and protobuf nesting.
 * End-to-end, over the three transports, in test/e2e/bad-input.test.ts.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { bodyTextRefusal, EDGE_LIMITS, refusal, type EdgeMethod } from '../../src/server/edge-schema.js';
import { exceedsJson, exceedsJsonText, jsonTextChars } from '../../src/server/json-shape.js';
import { protoNestsDeeperThan } from '../../src/server/proto-nesting.js';
import { MAX_PROTO_NESTING } from '../../src/server/grpc-edge.js';
import { deepMetadataRequest } from '../fixtures/raw-grpc.js';

const message = (extra: Record<string, unknown> = {}) => ({
  messageId: 'm-1',
  role: 'ROLE_USER',
  parts: [{ text: 'hello' }],
  ...extra,
});
const nested = (depth: number): unknown => JSON.parse('['.repeat(depth) + ']'.repeat(depth));
const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));

/** Refused, with a message that starts with `field` and matches `advice`. */
function refused(method: EdgeMethod, params: unknown, field: string, advice: RegExp): void {
  const reason = refusal(method, params);
  assert.ok(reason, `accepted: ${method} for ${field}`);
  assert.ok(reason.startsWith(`${field} `), `"${reason}" does not name ${field}`);
  assert.match(reason, advice);
  assert.ok(reason.length < 400, `a long message: ${reason.slice(0, 100)}…`);
}

describe('edge schema: what it accepts', () => {
  it('the requests the SDK client sends, the proto field names and null for "not set"', () => {
    const accepted: Array<[EdgeMethod, unknown]> = [
      ['SendMessage', { message: message() }],
      [
        'SendStreamingMessage',
        {
          message: message({ contextId: 'ctx', taskId: '', metadata: {}, extensions: [], referenceTaskIds: [] }),
          configuration: { historyLength: 3, returnImmediately: false },
          metadata: {},
        },
      ],
      [
        'SendMessage',
        {
          message: {
            message_id: 'm-1',
            role: 1,
            parts: [{ data: { a: [1, 2] }, media_type: 'application/json' }],
            reference_task_ids: ['t'],
          },
        },
      ],
      [
        'SendMessage',
        {
          message: message({ parts: [{ raw: 'aGVsbG8=', filename: 'a.txt' }, { url: 'https://example.com/a' }] }),
          configuration: { historyLength: '7' },
        },
      ],
      ['SendMessage', { message: message({ contextId: null, metadata: null }), configuration: null }],
      [
        'SendMessage',
        { message: message({ parts: Array.from({ length: EDGE_LIMITS.parts }, () => ({ text: 'x' })) }) },
      ],
      ['SendMessage', { message: message({ parts: [{ text: 'x'.repeat(EDGE_LIMITS.textChars) }] }) }],
      ['SendMessage', { message: message({ metadata: { deep: nested(EDGE_LIMITS.depth - 3) } }) }],
      ['SendMessage', { message: message({ kind: 'message', unknownKey: { anything: true } }) }],
      ['GetTask', { id: 'b3b1c0de-0000-4000-8000-000000000000', historyLength: 0 }],
      ['ListTasks', {}],
      [
        'ListTasks',
        {
          contextId: 'c',
          status: 'TASK_STATE_WORKING',
          pageSize: 100,
          pageToken: 'abc',
          historyLength: 2,
          statusTimestampAfter: '2026-01-31T12:00:00Z',
          includeArtifacts: true,
        },
      ],
      ['ListTasks', { status: 6, page_size: '5' }],
      ['CancelTask', { id: 't', metadata: { reason: 'done' } }],
      ['SubscribeToTask', { id: 't', tenant: 'acme' }],
    ];
    for (const [index, [method, params]] of accepted.entries())
      assert.equal(refusal(method, params), undefined, `case ${index} (${method})`);
  });
});

describe('edge schema: wrong types are refused, not coerced', () => {
  it('a part whose text is not a string', () =>
    refused(
      'SendMessage',
      { message: message({ parts: [{ text: { a: 1 } }] }) },
      'message.parts[0].text',
      /must be a string/,
    ));
  it('a numeric messageId', () =>
    refused(
      'SendMessage',
      { message: message({ messageId: 42 }) },
      'message.messageId',
      /must be a string of 1 to 128/,
    ));
  it('a historyLength that is no number', () =>
    refused('GetTask', { id: 't', historyLength: 'x' }, 'historyLength', /whole number from 0 to/));
  it('a negative historyLength, on GetTask and on SendMessage', () => {
    refused('GetTask', { id: 't', historyLength: -1 }, 'historyLength', /whole number from 0 to/);
    refused(
      'SendMessage',
      { message: message(), configuration: { historyLength: -1 } },
      'configuration.historyLength',
      /whole number/,
    );
  });
  it('a fractional or huge historyLength', () => {
    refused('GetTask', { id: 't', historyLength: 1.5 }, 'historyLength', /whole number/);
    refused('GetTask', { id: 't', historyLength: 1e300 }, 'historyLength', /whole number/);
  });
  it('parts not a list, empty, a part with no content or two', () => {
    refused('SendMessage', { message: message({ parts: 'hello' }) }, 'message.parts', /an array of parts/);
    refused('SendMessage', { message: message({ parts: [] }) }, 'message.parts', /at least one part/);
    refused(
      'SendMessage',
      { message: message({ parts: [{ metadata: {} }] }) },
      'message.parts[0]',
      /one of text, raw, url or data/,
    );
    refused(
      'SendMessage',
      { message: message({ parts: [{ text: 'a', data: {} }] }) },
      'message.parts[0]',
      /only one of/,
    );
  });
  it('a role other than ROLE_USER', () => {
    for (const role of [99, 'ROLE_AGENT', 'user', undefined])
      refused('SendMessage', { message: message({ role }) }, 'message.role', /ROLE_USER/);
  });
  it('a message or an id that is missing', () => {
    refused('SendMessage', {}, 'message', /is required/);
    refused('SendMessage', { message: message({ messageId: undefined }) }, 'message.messageId', /is required/);
    refused('GetTask', {}, 'id', /is required/);
    refused('CancelTask', { id: '' }, 'id', /must not be empty/);
  });
  it('params that are not an object', () => {
    for (const params of [[], 'x', 7, undefined])
      assert.match(refusal('GetTask', params) ?? '', /^params (must be|is required)/);
  });
  it('metadata that is not an object, flags that are not booleans, unknown states, bad times, bad base64', () => {
    refused('CancelTask', { id: 't', metadata: [1] }, 'metadata', /JSON object/);
    refused(
      'SendMessage',
      { message: message(), configuration: { returnImmediately: 'yes' } },
      'configuration.returnImmediately',
      /true or false/,
    );
    refused('ListTasks', { includeArtifacts: 'true' }, 'includeArtifacts', /true or false/);
    refused('ListTasks', { status: 'DONE' }, 'status', /TASK_STATE_COMPLETED/);
    refused('ListTasks', { statusTimestampAfter: 'yesterday' }, 'statusTimestampAfter', /ISO 8601/);
    refused('ListTasks', { pageSize: 0 }, 'pageSize', /from 1 to 100/);
    refused('SendMessage', { message: message({ parts: [{ raw: 'not base64!' }] }) }, 'message.parts[0].raw', /base64/);
  });
});

describe('edge schema: bounds', () => {
  it('a message holds at most 100 parts', () => {
    const parts = (n: number) => Array.from({ length: n }, () => ({ text: '' }));
    refused(
      'SendMessage',
      { message: message({ parts: parts(EDGE_LIMITS.parts + 1) }) },
      'message.parts',
      /at most 100 parts \(it holds 101\)/,
    );
    refused('SendMessage', { message: message({ parts: parts(340_000) }) }, 'message.parts', /at most 100 parts/);
  });
  it('a message holds at most 1,000,000 characters of text, all parts together', () => {
    const half = { text: 'x'.repeat(EDGE_LIMITS.textChars / 2) };
    refused(
      'SendMessage',
      { message: message({ parts: [half, half, { text: 'x' }] }) },
      'message.parts',
      /1000001 characters of text; a message holds at most 1000000/,
    );
  });
  it('at most 100,000 characters in the keys and strings of all metadata together (issue 22, item 6)', () => {
    const max = EDGE_LIMITS.metadataChars;
    const sized = (chars: number) => ({ k: 'x'.repeat(chars - 1) }); // the key counts too
    const part = (metadata: unknown) => ({ text: 'hi', metadata });
    assert.equal(refusal('SendMessage', { message: message({ metadata: sized(max) }) }), undefined);
    const accepted = {
      message: message({ metadata: sized(max / 2), parts: [part(sized(max / 4))] }),
      metadata: sized(max / 4),
    };
    assert.equal(refusal('SendMessage', accepted), undefined);
    const advice =
      /takes the request's metadata past 100000 characters \(keys and strings, all metadata together\); put content in parts/;
    refused(
      'SendMessage',
      { message: message({ metadata: { k: 'x'.repeat(3_000_000) } }) },
      'message.metadata',
      advice,
    );
    refused('SendMessage', { message: message(), metadata: sized(max + 1) }, 'metadata', advice);
    refused(
      'SendStreamingMessage',
      { message: message({ parts: [part(sized(max / 2)), part(sized(max / 2)), part({ a: 1 })] }) },
      'message.parts[2].metadata',
      advice,
    );
    refused(
      'SendMessage',
      {
        message: message({ metadata: sized(max - 1000) }),
        configuration: { task_push_notification_config: { url: `https://example.com/${'x'.repeat(2000)}` } },
      },
      'configuration.taskPushNotificationConfig',
      advice,
    );
    refused('CancelTask', { id: 't', metadata: { ['k'.repeat(max + 1)]: 1 } }, 'metadata', advice);
    // Data parts are content, not metadata: they are bounded by the values and body size.
    assert.equal(refusal('SendMessage', { message: message({ parts: [{ data: sized(max + 1) }] }) }), undefined);
  });
  it('issue 33: push configs: a URL of at most 2,048 characters, a token of 512, credentials of 4,096, the same in SendMessage; a page token of 1,024', () => {
    const url = (chars: number) => `https://example.com/${'x'.repeat(chars - 20)}`;
    const ok = { taskId: 't', id: 'c', url: url(2048), token: 't'.repeat(512) };
    assert.equal(refusal('CreateTaskPushNotificationConfig', ok), undefined);
    assert.equal(
      refusal('CreateTaskPushNotificationConfig', {
        ...ok,
        authentication: { scheme: 'Bearer', credentials: 'c'.repeat(4096) },
      }),
      undefined,
    );
    refused('CreateTaskPushNotificationConfig', { ...ok, url: url(2049) }, 'url', /at most 2048 characters/);
    refused('CreateTaskPushNotificationConfig', { ...ok, token: 't'.repeat(513) }, 'token', /at most 512 characters/);
    refused(
      'CreateTaskPushNotificationConfig',
      { ...ok, authentication: { scheme: 'Bearer', credentials: 'c'.repeat(4097) } },
      'authentication.credentials',
      /at most 4096/,
    );
    refused('CreateTaskPushNotificationConfig', { ...ok, url: '' }, 'url', /must not be empty/);
    refused('CreateTaskPushNotificationConfig', { url: url(30) }, 'taskId', /is required/);
    refused(
      'SendMessage',
      { message: message(), configuration: { taskPushNotificationConfig: { url: url(2049) } } },
      'configuration.taskPushNotificationConfig.url',
      /at most 2048 characters/,
    );
    assert.equal(refusal('ListTaskPushNotificationConfigs', { taskId: 't', pageSize: 2, pageToken: 'abc' }), undefined);
    assert.equal(refusal('ListTaskPushNotificationConfigs', { task_id: 't', page_size: '0' }), undefined);
    refused('ListTaskPushNotificationConfigs', { taskId: 't', pageSize: -1 }, 'pageSize', /whole number from 0/);
    refused(
      'ListTaskPushNotificationConfigs',
      { taskId: 't', pageToken: 'p'.repeat(1025) },
      'pageToken',
      /at most 1024/,
    );
    refused('GetTaskPushNotificationConfig', { taskId: 't' }, 'id', /is required/);
    refused('DeleteTaskPushNotificationConfig', { taskId: 't', id: 'i'.repeat(129) }, 'id', /at most 128/);
  });

  it('ids of at most 128 characters, and never repeated back', () => {
    const long = 'x'.repeat(100_000);
    for (const [method, params, field] of [
      ['SendMessage', { message: message({ messageId: long }) }, 'message.messageId'],
      ['SendMessage', { message: message({ contextId: long }) }, 'message.contextId'],
      ['SendMessage', { message: message({ taskId: long }) }, 'message.taskId'],
      ['SendMessage', { message: message({ referenceTaskIds: [long] }) }, 'message.referenceTaskIds[0]'],
      ['GetTask', { id: long }, 'id'],
      ['SubscribeToTask', { id: 'x'.repeat(EDGE_LIMITS.idChars + 1) }, 'id'],
      ['ListTasks', { tenant: long }, 'tenant'],
    ] as const) {
      refused(method, params, field, /at most 128 characters/);
      assert.ok(!refusal(method, params)!.includes('xxxxxxxxxx'));
    }
  });
  it('ids without control characters or lone surrogates, which PostgreSQL cannot store as sent', () => {
    for (const bad of ['a\u0000b', 'line\nbreak', 'x\u007f', 'half\ud800']) {
      refused('SendMessage', { message: message({ messageId: bad }) }, 'message.messageId', /no control characters/);
      refused('GetTask', { id: bad }, 'id', /no control characters/);
    }
    assert.equal(refusal('SendMessage', { message: message({ messageId: 'émoji-😀-id' }) }), undefined);
  });
  it("issue 33: a push config's strings and ids without control characters (NUL included), the same on both stores, the field named", () => {
    const config = (extra: Record<string, unknown> = {}) => ({ url: 'https://example.com/hook', ...extra });
    const create = (extra: Record<string, unknown>) => ({ taskId: 't', ...config(extra) });
    const send = (extra: Record<string, unknown>) => ({
      message: message(),
      configuration: { taskPushNotificationConfig: config(extra) },
    });
    const advice = /must hold no control characters \(NUL included\) and be valid Unicode/;
    for (const bad of ['a\u0000b', 'line\nbreak', 'half\ud800']) {
      for (const [field, extra] of [
        ['token', { token: bad }],
        ['url', { url: `https://example.com/${bad}` }],
        ['id', { id: bad }],
        ['authentication.scheme', { authentication: { scheme: bad, credentials: 'c' } }],
        ['authentication.credentials', { authentication: { scheme: 'Bearer', credentials: bad } }],
      ] as const) {
        refused('CreateTaskPushNotificationConfig', create(extra), field, advice);
        refused('SendMessage', send(extra), `configuration.taskPushNotificationConfig.${field}`, advice);
      }
      refused('CreateTaskPushNotificationConfig', { ...config(), taskId: bad }, 'taskId', advice);
      for (const method of ['GetTaskPushNotificationConfig', 'DeleteTaskPushNotificationConfig'] as const) {
        refused(method, { taskId: 't', id: bad }, 'id', advice);
        refused(method, { taskId: bad, id: 'c' }, 'taskId', advice);
      }
      refused('ListTaskPushNotificationConfigs', { taskId: bad }, 'taskId', advice);
    }
    const accepted: Array<[EdgeMethod, unknown]> = [
      ['CreateTaskPushNotificationConfig', create({ token: 'tök€n-😀', authentication: { scheme: 'Bearer' } })],
      ['CreateTaskPushNotificationConfig', { task_id: 't', url: 'https://example.com/hook', id: 'cfg-1' }],
      ['SendMessage', send({ taskId: '', token: 't' })],
      ['GetTaskPushNotificationConfig', { taskId: 't', id: 'cfg-1' }],
      ['ListTaskPushNotificationConfigs', { taskId: 't', pageSize: 10 }],
    ];
    for (const [method, params] of accepted) assert.equal(refusal(method, params), undefined, method);
    refused(
      'CreateTaskPushNotificationConfig',
      { taskId: 't' },
      'url',
      /is required: an absolute http:\/\/ or https:\/\/ URL/,
    );
    refused('CreateTaskPushNotificationConfig', create({ token: 'x'.repeat(513) }), 'token', /at most 512/);
  });
  it('lists: 32 extensions, 32 output modes, 100 reference task ids', () => {
    const list = (n: number) => Array.from({ length: n }, (_, i) => `e${i}`);
    refused('SendMessage', { message: message({ extensions: list(33) }) }, 'message.extensions', /at most 32/);
    refused(
      'SendMessage',
      { message: message(), configuration: { acceptedOutputModes: list(33) } },
      'configuration.acceptedOutputModes',
      /at most 32/,
    );
    refused(
      'SendMessage',
      { message: message({ referenceTaskIds: list(101) }) },
      'message.referenceTaskIds',
      /at most 100/,
    );
  });
  it('at most 10,000 JSON values in metadata and data together', () => {
    assert.equal(refusal('SendMessage', { message: message({ metadata: keys(9_000) }) }), undefined);
    for (const params of [
      { message: message({ metadata: keys(10_001) }) },
      { message: message(), metadata: keys(10_001) },
      { message: message({ parts: [{ data: keys(6_000) }, { data: keys(6_000) }] }) },
    ]) {
      assert.match(refusal('SendMessage', params) ?? '', /^params holds more than 10000 JSON values/);
    }
  });
  it('nesting: 100 levels of objects and arrays in the params, the field named, long keys cut', () => {
    refused(
      'SendMessage',
      { message: message({ metadata: { deep: nested(200) } }) },
      'message.metadata.deep[0]',
      /more than 100 levels deep/,
    );
    refused(
      'CancelTask',
      { id: 't', metadata: { [`${'k'.repeat(5000)}`]: nested(10_000) } },
      `metadata["${'k'.repeat(40)}…"][0][0]`,
      /flatten it/,
    );
  });
});

describe('bounds on JSON and protobuf before decoding', () => {
  it('the JSON walk stops at the first bound and recurses nowhere', () => {
    assert.deepEqual(exceedsJson(nested(100_000), { maxDepth: 100, maxValues: 1e9 }), { tooDeepAt: [0, 0, 0, 0] });
    assert.deepEqual(exceedsJson({ a: keys(50) }, { maxDepth: 100, maxValues: 50 }), { tooMany: true });
    assert.equal(exceedsJson({ a: keys(48) }, { maxDepth: 100, maxValues: 50 }), undefined);
  });
  it('characters of keys and strings are counted without recursion, and the count stops past its bound', () => {
    assert.equal(jsonTextChars({ ab: ['cd', 1, true, null, { e: 'fgh' }] }, 100), 8);
    assert.equal(jsonTextChars(nested(100_000), 100), 0);
    assert.ok(
      jsonTextChars(
        Array.from({ length: 1000 }, () => 'x'.repeat(1000)),
        5000,
      ) <= 6000,
    );
  });
  it('the body text is read for depth and size without parsing, strings skipped', () => {
    const bounds = { maxDepth: 3, maxValues: 20 };
    const text = (value: string) => Buffer.from(value);
    assert.equal(exceedsJsonText(text('{"a":[{"b":"[[[[{{{{\\"]]]"}]}'), bounds), undefined);
    assert.equal(exceedsJsonText(text('{"a":[{"b":[1]}]}'), bounds), 'depth');
    assert.equal(exceedsJsonText(text(JSON.stringify(keys(25))), bounds), 'values');
    assert.match(
      bodyTextRefusal(
        text(JSON.stringify({ params: { parts: Array.from({ length: 40_000 }, () => ({ text: '' })) } })),
      ) ?? '',
      /at most 100 parts/,
    );
    assert.equal(
      bodyTextRefusal(
        text(JSON.stringify({ jsonrpc: '2.0', params: { message: message({ metadata: keys(9_000) }) } })),
      ),
      undefined,
    );
  });
  it('protobuf nesting is found in the bytes, within the bound and past it', () => {
    // Each level of metadata is three protobuf levels: Struct, its entry, the Value.
    assert.equal(protoNestsDeeperThan(deepMetadataRequest(EDGE_LIMITS.depth), MAX_PROTO_NESTING), false);
    assert.equal(protoNestsDeeperThan(deepMetadataRequest(150), MAX_PROTO_NESTING), true);
    assert.equal(protoNestsDeeperThan(deepMetadataRequest(200_000), MAX_PROTO_NESTING), true);
  });
  it('a length-delimited field is a level; read as a message only as far as it parses', () => {
    const field = (tag: number, bytes: number[]) => [tag, bytes.length, ...bytes];
    const text = [...Buffer.from('hello, world')]; // 'l' is no valid tag: opaque bytes after two
    assert.equal(protoNestsDeeperThan(Buffer.from(field(10, text)), 1), false);
    assert.equal(protoNestsDeeperThan(Buffer.from(field(10, field(10, field(10, [8, 1])))), 2), true);
    assert.equal(protoNestsDeeperThan(Buffer.from(field(10, field(10, field(10, [8, 1])))), 3), false);
    // A field whose bytes stop parsing is skipped whole, and its parent goes on after it.
    assert.equal(
      protoNestsDeeperThan(Buffer.from([...field(10, [0x0a, 0x7f]), ...field(18, field(10, [8, 1]))]), 1),
      true,
    );
    assert.equal(protoNestsDeeperThan(Buffer.from([0xff, 0xff]), 0), false, 'not protobuf: the decoder says so');
  });
});
