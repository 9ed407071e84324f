/**
 * Issue 36: a port that records a command message's claim with its reply (`recordsClaims`, the
 * harness on PostgreSQL) is given the claim's key with the reply, and the claim is not written
 * again after it; any other port leaves the claim to the runner, which accepts it after `post`
 * (CMD-13, CMD-34).
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { Role, TaskState } from '@a2a-js/sdk';
import { CommandRegistry } from '../../src/commands/index.js';
import {
  CommandRunner,
  InMemoryMessageClaimStore,
  MessageClaims,
  contentDigest,
  parseCommand,
  type ClaimKey,
  type CommandTaskPort,
} from '@tiny-harness/commands-extension';
import { callContext, message, newTask } from '../store/helpers.js';

describe('a command message claim and the write of its reply', () => {
  for (const recordsClaims of [true, false]) {
    it(`a port that ${recordsClaims ? 'records' : 'does not record'} claims: the claim is accepted ${recordsClaims ? 'by its write alone' : 'after the write'}, and a resend gets the first reply`, async () => {
      const task = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
      const registry = new CommandRegistry();
      registry.register({ name: 'ping', description: 'answers pong', handler: () => ({ text: 'pong' }) });
      const store = new InMemoryMessageClaimStore();
      const accepted: string[] = [];
      const accept = store.accept.bind(store);
      store.accept = async (scope, messageId, digest, outcome) => {
        accepted.push(messageId);
        await accept(scope, messageId, digest, outcome);
      };
      const given: Array<ClaimKey | undefined> = [];
      const port: CommandTaskPort = {
        recordsClaims,
        isBusy: async () => false,
        create: async () => undefined,
        async post(update, _context, exchange) {
          const claim = exchange?.claim;
          given.push(claim);
          // As the harness's store does: the claim accepted in the reply's own write.
          if (claim)
            await accept(claim.scope, claim.messageId, claim.digest, { taskId: task.id, reply: update as never });
          return task;
        },
      };
      const runner = new CommandRunner({
        registry,
        port,
        getTask: async () => task,
        claims: new MessageClaims(store),
      });
      const command = message(task.id, task.contextId, Role.ROLE_USER, '/ping');
      const parsed = parseCommand(command, (name) => name === 'ping')!;
      const first = await runner.run(command, parsed, callContext('alice'));
      const again = await runner.run(command, parsed, callContext('alice'));

      const key = {
        scope: { tenant: '', owner: 'alice' },
        messageId: command.messageId,
        digest: contentDigest(command),
      };
      assert.deepStrictEqual(given, [recordsClaims ? key : undefined], 'the resend writes nothing');
      assert.deepStrictEqual(accepted, recordsClaims ? [] : [command.messageId]);
      assert.deepStrictEqual(again.reply, first.reply, 'the resend is answered with the first reply');
    });
  }

  it('issue 36: a port that records claims has the task read while the message is claimed; a task not found still frees the claim', async () => {
    const task = newTask({ state: TaskState.TASK_STATE_INPUT_REQUIRED });
    const registry = new CommandRegistry();
    registry.register({ name: 'ping', description: 'answers pong', handler: () => ({ text: 'pong' }) });
    const store = new InMemoryMessageClaimStore();
    const steps: string[] = [];
    const claim = store.claim.bind(store);
    store.claim = async (...args) => {
      steps.push('claim sent');
      const claimed = await claim(...args);
      steps.push('claim answered');
      return claimed;
    };
    const release = store.release.bind(store);
    store.release = async (...args) => {
      steps.push('claim freed');
      await release(...args);
    };
    const port: CommandTaskPort = {
      recordsClaims: true,
      isBusy: async () => false,
      create: async () => undefined,
      post: async () => task,
    };
    const runner = new CommandRunner({
      registry,
      port,
      getTask: async (id) => {
        steps.push('task read');
        if (id !== task.id) throw new Error(`task ${id} not found`);
        return task;
      },
      claims: new MessageClaims(store),
    });
    const command = message(task.id, task.contextId, Role.ROLE_USER, '/ping');
    const parsed = parseCommand(command, (name) => name === 'ping')!;
    await runner.run(command, parsed, callContext('alice'));
    assert.deepStrictEqual(steps, ['task read', 'claim sent', 'claim answered']);

    steps.length = 0;
    const elsewhere = message('no-such-task', task.contextId, Role.ROLE_USER, '/ping');
    await assert.rejects(runner.run(elsewhere, parsed, callContext('alice')), /task no-such-task not found/);
    assert.deepStrictEqual(steps, ['task read', 'claim sent', 'claim answered', 'claim freed']);
    const retried = await store.claim({ tenant: '', owner: 'alice' }, elsewhere.messageId, contentDigest(elsewhere));
    assert.equal(retried.kind, 'new', 'the id is free again');
  });
});
