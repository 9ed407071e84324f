// A custom AgentExecutor on the harness's engine: its tasks live in the store, so a restart keeps
// them, and each turn sees its task as stored. Run: npx tiny-harness serve --agent examples/durable-agent.mjs
import { randomUUID } from 'node:crypto';
import { Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent } from '@a2a-js/sdk/server';

const textOf = (message) => message.parts.map((part) => part.content?.value ?? '').join('');
const textPart = (value) => ({
  content: { $case: 'text', value },
  mediaType: 'text/plain',
  filename: '',
  metadata: {},
});

export default {
  async execute({ taskId, contextId, userMessage, task }, bus) {
    const at = (state, message) => ({ state, message, timestamp: new Date().toISOString() });
    const status = (state, message) => ({ taskId, contextId, status: at(state, message), metadata: {} });
    bus.publish(AgentEvent.statusUpdate(status(TaskState.TASK_STATE_WORKING)));
    // The task as stored, this message included: earlier turns, before a restart too.
    const count = (task?.history ?? [userMessage]).filter((message) => message.role === Role.ROLE_USER).length;
    const parts = [textPart(`echo: ${textOf(userMessage)} (message ${count} of this task)`)];
    const artifact = { artifactId: randomUUID(), name: 'echo', description: '', parts, metadata: {}, extensions: [] };
    bus.publish(
      AgentEvent.artifactUpdate({ taskId, contextId, artifact, append: false, lastChunk: true, metadata: {} }),
    );
    const ids = { messageId: randomUUID(), taskId, contextId, extensions: [], referenceTaskIds: [] };
    const reply = { ...ids, role: Role.ROLE_AGENT, parts, metadata: {} };
    // INPUT_REQUIRED keeps the conversation open: the next message continues this task.
    bus.publish(AgentEvent.statusUpdate(status(TaskState.TASK_STATE_INPUT_REQUIRED, reply)));
    bus.finished();
  },
  // Its turns end at once; a long one would stop here (the harness stores CANCELED itself).
  async cancelTask() {},
};
