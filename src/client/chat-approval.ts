/**
 * Approval in one key: when a turn ends with tool calls waiting for approval (CMD-33), the chat
 * asks for each call in turn under the prompt, `[y] yes  [a] always for this conversation  [n]
 * no (reason)`, and sends the command the key stands for (`APPROVAL_ANSWERS`), shown as if
 * typed, so what goes on the wire is what any client could send. The answer that completes the
 * calls carries the resumed turn, followed as after a typed `/approve`; when that turn waits
 * again, the new calls are asked for too. Any other key leaves the prompt for typing, where
 * `/approve` and `/deny` can still be typed by hand.
 */
import { APPROVAL_ANSWERS, type ApprovalAnswer } from '../approval-answers.js';
import type { ToolCallAnswer, ToolCallData } from '../wire.js';
import { PROMPT, type ChatInput } from './chat-input.js';
import type { ChatScreen } from './chat-screen.js';
import type { Shown, TurnReader } from './render.js';
import type { Part } from '@a2a-js/sdk';
import { answerForm } from './chat-elicitation.js';

/** The line of keys under a waiting call: `[y] yes  [a] always for this conversation  [n] no (reason)`. */
export const APPROVAL_KEYS_LINE = APPROVAL_ANSWERS.map(
  (a) => `[${a.key}] ${a.label}${a.asksReason ? ' (reason)' : ''}`,
).join('  ');

/** The prompt of the line that asks for a denial's reason. */
export const REASON_PROMPT = 'reason (optional, Enter for none): ';

/** How much of a call's input the question shows. */
const INPUT_SHOWN = 80;

export interface ApprovalKeysOptions {
  input: ChatInput;
  screen: ChatScreen;
  /** Sends an answer as a turn (its parts, when not the text) and resolves with its reader once the turn (or the command's reply) ends. */
  send(text: string, parts?: Part[]): Promise<TurnReader>;
  /** False when the chat should not ask now: it was left, or a message typed meanwhile waits to be sent. */
  canAsk(): boolean;
}

export class ApprovalKeys {
  /** Calls an answer's reply recorded: `/approve always` answers every waiting call of its tool. */
  private readonly answered = new Set<string>();

  constructor(private readonly options: ApprovalKeysOptions) {}

  /** Told of each command reply shown: the calls it answered are not asked for again. */
  replied(reply: Extract<Shown, { kind: 'command' }>): void {
    const calls = (reply.data as { calls?: Partial<ToolCallAnswer>[] } | undefined)?.calls;
    if (Array.isArray(calls)) for (const call of calls) if (typeof call?.id === 'string') this.answered.add(call.id);
  }

  /**
   * Asks for each call the turn read by `reader` left waiting, sending each answer as it is given,
   * until none waits or a key other than the answers' leaves the prompt for typing.
   */
  async answer(reader: TurnReader): Promise<void> {
    // A tool call's form (issue 39): answered, then what the resumed turn waits on is asked in turn.
    for (let question = reader.question; question?.mode === 'form';) {
      if (!this.options.canAsk()) return;
      const part = await answerForm(this.options.input, question);
      if (!part) return;
      const { screen } = this.options;
      screen.line(screen.style.dim(screen.typed(JSON.stringify(part.content?.value))));
      reader = await this.options.send(JSON.stringify(part.content?.value), [part]);
      question = reader.question;
    }
    let waiting = reader.waiting;
    while (waiting.length > 0) {
      let next: ToolCallData[] = [];
      const open = waiting.filter((call) => !this.answered.has(call.id));
      for (const [index, call] of open.entries()) {
        if (!this.options.canAsk()) return;
        if (this.answered.has(call.id)) continue;
        const text = await this.ask(call, open.length > 1 ? ` (${index + 1} of ${open.length})` : '');
        if (text === undefined) return;
        const { screen } = this.options;
        screen.line(screen.style.dim(screen.typed(text)));
        next = (await this.options.send(text)).waiting;
      }
      waiting = next;
    }
  }

  /** The command for one call, from one key (and a reason line after `n`); undefined when the person typed instead. */
  private async ask(call: ToolCallData, count: string): Promise<string | undefined> {
    const { input } = this.options;
    input.setPrompt(PROMPT); // the turn is over: what is typed instead is sent at once
    const question = `Allow ${call.tool} ${shortInput(call.input)}?${count}`;
    const key = await input.pressKey(
      [question, APPROVAL_KEYS_LINE],
      APPROVAL_ANSWERS.map((a) => a.key),
    );
    const answer: ApprovalAnswer | undefined = APPROVAL_ANSWERS.find((a) => a.key === key);
    if (!answer) return undefined;
    if (!answer.asksReason) return answer.command(call.id);
    const reason = await input.askLine(REASON_PROMPT);
    return reason === undefined ? undefined : answer.command(call.id, reason.replace(/\s+/g, ' '));
  }
}

function shortInput(input: unknown): string {
  const text = JSON.stringify(input ?? {});
  return text.length > INPUT_SHOWN ? `${text.slice(0, INPUT_SHOWN - 1)}…` : text;
}
