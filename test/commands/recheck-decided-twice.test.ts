/**
 * A command's recheck runs in the decide of the update that stores its reply (`DecidedUpdate`),
 * which a store shared by several servers may run twice for one write: once on the task as this
 * server kept it, again on the row after another server wrote it. Only the last run's answer
 * is stored and sent, whatever an earlier run answered.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState, type Task, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import { CommandRegistry } from '../../src/commands/index.js';
import {
  CommandRunner,
  parseCommand,
  type CommandTaskPort,
  type DecidedUpdate,
} from '@tiny-harness/commands-extension';
import { callContext, message, newTask } from '../store/helpers.js';

const textOf = (update: TaskStatusUpdateEvent) => update.status?.message?.parts[0]?.content?.value;

describe('a recheck decided twice for one write', () => {
  it('CMD-37: a refusal on the first run (an outdated copy) is not sent when the last run lets the reply through', async () => {
    const task = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
    const moved: Task = { ...task, metadata: { moved: true } };
    const registry = new CommandRegistry();
    registry.register({
      name: 'mark',
      description: 'answers, unless the task moved on',
      handler: () => ({
        text: 'marked',
        recheck: (stored) => (stored.metadata?.moved ? { text: 'moved on' } : undefined),
      }),
    });
    const stored: string[] = [];
    const port: CommandTaskPort = {
      isBusy: async () => false,
      create: async () => undefined,
      // As the shared store does when its guarded statement is refused: decided on an outdated copy, then on the row.
      async post(update) {
        const decided = update as DecidedUpdate;
        await decided.decide(moved);
        const last = await decided.decide(task);
        stored.push(String(textOf(last.update)));
        return task;
      },
    };
    const runner = new CommandRunner({ registry, port, getTask: async () => task });
    const command = message(task.id, task.contextId, Role.ROLE_USER, '/mark');
    const outcome = await runner.run(
      command,
      parseCommand(command, (name) => name === 'mark')!,
      callContext('alice'),
    );
    assert.deepEqual(stored, ['marked']);
    assert.equal(textOf(outcome.reply), 'marked', 'the reply sent is the one stored');
  });
});
