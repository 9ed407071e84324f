// The agent the official A2A TCK (a2aproject/a2a-tck, its 1.0 line) grades: it acts out each scenario
// of the TCK's scenarios/*.feature, chosen by the prefix of the message's id, as the TCK's own
// reference agents do. Run it on the harness with `npm run tck:agent` (docs/conformance.md).
import { Buffer } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { setTimeout as delay } from 'node:timers/promises';
import { Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent } from '@a2a-js/sdk/server';

/** The TCK's streaming timeout is 2 s; its long-running scenario works for twice that. */
export const LONG_RUN_MS = 4000;

const part = (content, { mediaType = '', filename = '' } = {}) => ({ content, mediaType, filename, metadata: {} });
const text = (value) => part({ $case: 'text', value }, { mediaType: 'text/plain' });
const FILE = { mediaType: 'text/plain', filename: 'output.txt' };

/**
 * What each scenario does, by message-id prefix. A longer prefix comes before a shorter one it
 * starts with (`tck-artifact-file-url` before `tck-artifact-file`): the first that matches wins.
 * Steps: `working`, `artifact` (parts), `chunks` (one artifact in two parts), `wait`, and how the
 * turn ends: `complete` (with a message, or none), `inputRequired`, `reject` or `reply` (a message).
 */
export const SCENARIOS = [
  // Streaming (streaming.feature)
  { prefix: 'tck-stream-artifact-chunked', steps: [['working'], ['chunks', 'chunk-1 ', 'chunk-2'], ['complete']] },
  {
    prefix: 'tck-stream-artifact-text',
    steps: [['working'], ['artifact', text('Streamed text content')], ['complete']],
  },
  {
    prefix: 'tck-stream-artifact-file',
    steps: [['working'], ['artifact', part({ $case: 'raw', value: Buffer.from('tck') }, FILE)], ['complete']],
  },
  { prefix: 'tck-stream-ordering-001', steps: [['working'], ['artifact', text('Ordered output')], ['complete']] },
  { prefix: 'tck-stream-001', steps: [['working'], ['artifact', text('Stream hello from TCK')], ['complete']] },
  { prefix: 'tck-stream-002', steps: [['complete']] },
  { prefix: 'tck-stream-003', steps: [['working'], ['artifact', text('Stream task lifecycle')], ['complete']] },
  { prefix: 'test-resubscribe-message-id', steps: [['working'], ['wait'], ['complete']] },
  // Core operations (core_operations.feature)
  { prefix: 'tck-complete-task', steps: [['complete', 'Hello from TCK']] },
  { prefix: 'tck-artifact-text', steps: [['artifact', text('Generated text content')], ['complete']] },
  {
    prefix: 'tck-artifact-file-url',
    steps: [['artifact', part({ $case: 'url', value: 'https://example.com/output.txt' }, FILE)], ['complete']],
  },
  {
    prefix: 'tck-artifact-file',
    steps: [['artifact', part({ $case: 'raw', value: Buffer.from('tck') }, FILE)], ['complete']],
  },
  {
    prefix: 'tck-artifact-data',
    steps: [
      ['artifact', part({ $case: 'data', value: { key: 'value', count: 42 } }, { mediaType: 'application/json' })],
      ['complete'],
    ],
  },
  { prefix: 'tck-message-response', steps: [['reply', 'Direct message response']] },
  { prefix: 'tck-input-required', steps: [['inputRequired']] },
  // The reference agents throw an error named "rejected"; A2A names a state for it, REJECTED.
  { prefix: 'tck-reject-task', steps: [['reject', 'rejected']] },
];

/** The card's words for this agent; the engine fills in the rest (transports, extensions, commands). */
export const card = {
  name: 'TCK scenario agent',
  description:
    "Acts out the official A2A TCK's scenarios, chosen by each message's id prefix (tck-complete-task, tck-stream-*, ...).",
  skills: [
    {
      id: 'tck-scenarios',
      name: 'TCK scenarios',
      description: 'Completes, streams, asks for input, rejects or answers directly, as the message id says.',
      tags: ['tck', 'conformance'],
      examples: ['tck-complete-task-1', 'tck-stream-001'],
    },
  ],
};

/** Any other id (the TCK's `tck-send-001`, say) completes the task, naming the id it did not know. */
const UNKNOWN = { prefix: '', steps: [['complete', null]] };

/** The scenario a message id asks for. */
export function scenarioFor(messageId) {
  return SCENARIOS.find((scenario) => messageId.startsWith(scenario.prefix)) ?? UNKNOWN;
}

/** The TCK's agent; `longRun` is the work of `test-resubscribe-message-id` (a test ends it when it chooses). */
export function createTckAgent({ longRun = () => delay(LONG_RUN_MS) } = {}) {
  const waits = new Map();
  return {
    async execute({ taskId, contextId, userMessage }, bus) {
      const message = (value) => ({
        messageId: randomUUID(),
        role: Role.ROLE_AGENT,
        parts: [text(value)],
        taskId,
        contextId,
        metadata: {},
        extensions: [],
        referenceTaskIds: [],
      });
      const status = (state, reply) =>
        AgentEvent.statusUpdate({
          taskId,
          contextId,
          status: { state, message: reply, timestamp: new Date().toISOString() },
          metadata: {},
        });
      const artifact = (parts, artifactId = randomUUID(), append = false, lastChunk = true) =>
        AgentEvent.artifactUpdate({
          taskId,
          contextId,
          artifact: { artifactId, name: '', description: '', parts, metadata: {}, extensions: [] },
          append,
          lastChunk,
          metadata: {},
        });
      const { steps } = scenarioFor(userMessage.messageId);
      for (const [step, ...args] of steps) {
        if (step === 'working') bus.publish(status(TaskState.TASK_STATE_WORKING));
        if (step === 'artifact') bus.publish(artifact(args));
        if (step === 'chunks') {
          // One artifact in two chunks: the second appends to the first and is its last.
          const artifactId = randomUUID();
          bus.publish(artifact([text(args[0])], artifactId, false, false));
          bus.publish(artifact([text(args[1])], artifactId, true, true));
        }
        if (step === 'wait') {
          // A cancel ends the wait early (the harness then stores CANCELED itself).
          const waited = await new Promise((resolve) => {
            waits.set(taskId, () => resolve(false));
            void longRun(taskId).then(() => resolve(true));
          });
          waits.delete(taskId);
          if (!waited) return;
        }
        if (step === 'complete') {
          const [said] = args;
          const reply =
            said === null ? message(`Unhandled messageId prefix: ${userMessage.messageId}`) : said && message(said);
          bus.publish(status(TaskState.TASK_STATE_COMPLETED, reply));
        }
        if (step === 'inputRequired') bus.publish(status(TaskState.TASK_STATE_INPUT_REQUIRED));
        if (step === 'reject') bus.publish(status(TaskState.TASK_STATE_REJECTED, message(args[0])));
        if (step === 'reply') bus.publish(AgentEvent.message(message(args[0])));
      }
      bus.finished();
    },
    async cancelTask(taskId) {
      waits.get(taskId)?.();
    },
  };
}

export default createTckAgent();
