// An AgentExecutor written the way @a2a-js/sdk's samples write theirs (src/samples/agents/sample-agent in
// a2aproject/a2a-js): nothing in it knows the harness. Run: npx tiny-harness serve --agent examples/sdk-sample-agent.mjs
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { Role, TaskState } from '@a2a-js/sdk';
import { AgentEvent } from '@a2a-js/sdk/server';

const text = (value) => ({
  content: { $case: 'text', value },
  metadata: undefined,
  filename: '',
  mediaType: 'text/plain',
});

// What the card says of the agent (its name, description and skills); the engine fills in the rest.
export const card = {
  name: 'Greeting Agent',
  description: 'Greets whoever writes to it, repeating what they said.',
  skills: [
    {
      id: 'greeting',
      name: 'Greeting',
      description: 'Answers any text with a greeting that repeats it.',
      tags: ['sample', 'greeting'],
      examples: ['hi there'],
    },
  ],
};

export default class GreetingAgentExecutor {
  // As the samples do: cancelTask marks the task, and execute looks at the mark where it waits.
  #canceled = new Set();

  cancelTask = async (taskId) => {
    this.#canceled.add(taskId);
  };

  async execute(requestContext, eventBus) {
    const { taskId, contextId, userMessage, task } = requestContext;
    const status = (state, message) => ({
      taskId,
      contextId,
      status: { state, message, timestamp: new Date().toISOString() },
      metadata: undefined,
    });
    try {
      if (!task) {
        const submitted = status(TaskState.TASK_STATE_SUBMITTED).status;
        eventBus.publish(
          AgentEvent.task({
            id: taskId,
            contextId,
            status: submitted,
            artifacts: [],
            history: [userMessage],
            metadata: userMessage.metadata,
          }),
        );
      }
      const note = {
        role: Role.ROLE_AGENT,
        messageId: randomUUID(),
        parts: [text('Working on it')],
        taskId,
        contextId,
        extensions: [],
        metadata: {},
        referenceTaskIds: [],
      };
      eventBus.publish(AgentEvent.statusUpdate(status(TaskState.TASK_STATE_WORKING, note)));
      await sleep(200); // the work
      if (this.#canceled.has(taskId)) {
        eventBus.publish(AgentEvent.statusUpdate(status(TaskState.TASK_STATE_CANCELED)));
        return;
      }
      const said = userMessage.parts.find((part) => part.content?.$case === 'text')?.content.value.trim();
      const answer = said ? `Hello! You said: '${said}'.` : 'Hello! Send me some text.';
      const artifact = {
        artifactId: randomUUID(),
        name: 'Result',
        description: 'The answer.',
        parts: [text(answer)],
        metadata: undefined,
        extensions: [],
      };
      eventBus.publish(
        AgentEvent.artifactUpdate({ taskId, contextId, artifact, append: false, lastChunk: true, metadata: undefined }),
      );
      eventBus.publish(AgentEvent.statusUpdate(status(TaskState.TASK_STATE_COMPLETED)));
    } finally {
      this.#canceled.delete(taskId);
    }
  }
}
