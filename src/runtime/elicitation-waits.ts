/**
 * A tool call's questions to the user (MCP elicitation, issue 39, TOOL-5), on the turn's side:
 * the turn pauses in INPUT_REQUIRED (AUTH_REQUIRED for a link to open), its status message
 * holding the question as text and as data (`ElicitationData`), while the call waits. The turn
 * keeps its lease; the answer, given on any instance, is a reply in the task's log
 * (`elicitation-answers.ts`), which the waiting call reads from the task's feed. Unanswered
 * after `elicitationTimeoutMs` the question is declined; a canceled or stopped turn cancels it.
 */
import { randomUUID } from 'node:crypto';
import { TaskState, type Message, type TaskStatusUpdateEvent } from '@a2a-js/sdk';
import {
  ELICITATION_ANSWER_NOTICE,
  ELICITATION_ENDED_NOTICE,
  ELICITATION_NOTICE,
  elicitationAnswerOf,
  type ElicitationAnswer,
  type ElicitationData,
} from '../elicitations.js';
import { dataPart, NOTICE_KEY, type ToolCallData } from '../wire.js';
import type { AskUser, UserAnswer, UserQuestion } from '../tools/index.js';
import type { LogSubscription } from '../ports.js';
import { agentMessage, statusUpdate } from './events.js';
import { questionText } from './elicitation-text.js';

export interface ElicitationSettings {
  /** The task feeds of this instance, where the answer's reply arrives from any instance. */
  feeds: { follow(taskId: string, known?: number): Promise<LogSubscription> };
  /** How long a question waits for its answer (`elicitationTimeoutMs`). */
  timeoutMs: number;
}

/** A question waiting, as its pause put it: what a turn ended meanwhile states again (a restart). */
export interface WaitingQuestion {
  state: TaskState;
  message: Message;
}

/** The questions of one turn's calls. */
export class TurnQuestions {
  /** The questions waiting now, by id. */
  private readonly waiting = new Map<string, WaitingQuestion>();

  constructor(
    private readonly turn: { taskId: string; contextId: string; signal: AbortSignal },
    private readonly publish: (update: TaskStatusUpdateEvent) => void,
    private readonly settings: ElicitationSettings,
  ) {}

  /** A question still waiting (the newest), for a turn that ends before it is answered. */
  newestWaiting(): WaitingQuestion | undefined {
    return [...this.waiting.values()].at(-1);
  }

  /** How `call` asks the user. */
  askerFor(call: ToolCallData): AskUser {
    return (question) => this.ask(call, question);
  }

  private async ask(call: ToolCallData, question: UserQuestion): Promise<UserAnswer> {
    const { taskId, contextId, signal } = this.turn;
    if (signal.aborted) return { action: 'cancel' };
    const data: ElicitationData = {
      id: randomUUID(),
      mode: question.mode,
      message: question.message,
      server: call.server,
      tool: call.tool,
      callId: call.id,
      ...(question.mode === 'form' ? { schema: question.schema } : { url: question.url }),
    };
    const state = question.mode === 'url' ? TaskState.TASK_STATE_AUTH_REQUIRED : TaskState.TASK_STATE_INPUT_REQUIRED;
    const pause = agentMessage(taskId, contextId, questionText(data), ELICITATION_NOTICE);
    pause.parts.push(dataPart({ elicitationRequest: data }));
    // Followed before the pause is written: an answer cannot come before it, nor be missed.
    const subscription = await this.settings.feeds.follow(taskId);
    this.waiting.set(data.id, { state, message: pause });
    this.publish(statusUpdate(taskId, contextId, state, pause));
    try {
      const ended = await this.until(data, subscription, question);
      if (signal.aborted) return { action: 'cancel' };
      this.publish(statusUpdate(taskId, contextId, TaskState.TASK_STATE_WORKING, this.endNotice(data, ended)));
      return ended.answer;
    } finally {
      subscription.close();
      // A turn interrupted meanwhile states the question again as it ends (`newestWaiting`).
      if (!signal.aborted) this.waiting.delete(data.id);
    }
  }

  /** The first of: the answer's reply in the log, the server saying a link's step is done, the bound, the turn's end. */
  private until(data: ElicitationData, subscription: LogSubscription, question: UserQuestion): Promise<Ended> {
    const { signal } = this.turn;
    return new Promise<Ended>((resolve) => {
      const done = (ended: Ended) => {
        clearTimeout(timer);
        signal.removeEventListener('abort', onAbort);
        subscription.close();
        resolve(ended);
      };
      const onAbort = () => done({ answer: { action: 'cancel' }, why: 'answered' });
      const timer = setTimeout(() => done({ answer: { action: 'decline' }, why: 'timeout' }), this.settings.timeoutMs);
      signal.addEventListener('abort', onAbort, { once: true });
      if (question.mode === 'url')
        void question.completed.then(() => done({ answer: { action: 'accept' }, why: 'completed' }));
      void answerIn(subscription, data.id).then(
        (answer) => answer && done({ answer: asUserAnswer(answer), why: 'answered' }),
      );
    });
  }

  private endNotice(data: ElicitationData, { answer, why }: Ended): Message {
    const { taskId, contextId } = this.turn;
    const text =
      why === 'timeout'
        ? `Nobody answered within ${this.settings.timeoutMs} ms: the question was declined, and ${data.tool} goes on.`
        : why === 'completed'
          ? `The MCP server "${data.server}" says the step at the link is done: ${data.tool} goes on.`
          : `The answer (${answer.action}) was sent to the MCP server "${data.server}": ${data.tool} goes on.`;
    const notice = agentMessage(taskId, contextId, text, ELICITATION_ENDED_NOTICE);
    notice.parts.push(dataPart({ elicitation: data.id, action: answer.action, ended: why }));
    return notice;
  }
}

interface Ended {
  answer: UserAnswer;
  why: 'answered' | 'timeout' | 'completed';
}

/** Reads the log until the reply recording an answer to question `id`; undefined once the subscription closes. */
async function answerIn(subscription: LogSubscription, id: string): Promise<ElicitationAnswer | undefined> {
  for (;;) {
    const entry = await subscription.next();
    if (!entry) return undefined;
    const message = entry.event.kind === 'statusUpdate' ? entry.event.data.status?.message : undefined;
    if (message?.metadata?.[NOTICE_KEY] !== ELICITATION_ANSWER_NOTICE) continue;
    const answer = elicitationAnswerOf(message.parts);
    if (answer && 'elicitation' in answer && answer.elicitation === id) return answer;
  }
}

function asUserAnswer(answer: ElicitationAnswer): UserAnswer {
  return answer.action === 'accept' ? { action: 'accept', content: answer.content ?? {} } : { action: answer.action };
}

/** A waiting question's pause, stated again by a turn that ends before its answer (a restart). */
export function restated(pause: Message): Message {
  return { ...pause, messageId: randomUUID(), parts: [...pause.parts] };
}
