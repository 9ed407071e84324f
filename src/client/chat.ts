/**
 * `tiny-harness chat <url>`: a terminal chat with an A2A agent. The card is read once; its
 * commands complete on Tab. Each message streams its reply as it arrives; command replies are
 * marked with the command's name; a command that starts a sub-task is followed in the
 * background and its result shown when it ends. The conversation stays in one task while the
 * agent waits for input, and moves to a new task in the same context once a task has ended.
 * Ctrl+C stops a running turn (`/stop`, CMD-32: the conversation goes on; CancelTask with an
 * agent that has no `/stop`); a second Ctrl+C during the same turn leaves. At an empty prompt
 * Ctrl+C exits, as Ctrl+D does.
 */
import { clearLine, createInterface, cursorTo, type Interface } from 'node:readline';
import { Role } from '@a2a-js/sdk';
import { isTerminal, parseCommandText } from '../commands/index.js';
import { ChatScreen } from './chat-screen.js';
import { completeCommand } from './completion.js';
import { connect, describeClientError, userMessage, type Connection, type Header } from './connect.js';
import { resultText, stateName, styleFor, TurnReader, type Style } from './render.js';
import { turnEvents } from './resume.js';
import { followSubtask } from './subtasks.js';
import { COMMAND_KEY, unknownCommandQuestion } from '../wire.js';

export interface ChatOptions {
  url: string;
  headers: readonly Header[];
  /** A task to resume: its conversation is shown first, and the chat goes on in it. */
  taskId?: string;
}

/** How many messages of a resumed task are shown. */
const RESUME_SHOWN = 40;

/** How long a canceled turn may take to end before the chat stops waiting for it. */
const CANCEL_GRACE_MS = 5000;

/** Runs the chat until the user leaves; returns the exit code. */
export async function runChat(options: ChatOptions): Promise<number> {
  let connection: Connection;
  try {
    connection = await connect(options.url, options.headers);
  } catch (error) {
    process.stderr.write(`error: ${describeClientError(error, options.url)}\n`);
    return 1;
  }
  const chat = new Chat(connection, process.stdin, process.stdout);
  if (options.taskId !== undefined && !(await chat.resume(options.taskId))) return 1;
  return chat.run();
}

interface Turn {
  reader: TurnReader;
  abort: AbortController;
  cancel: 'no' | 'wanted' | 'sent';
  timer?: NodeJS.Timeout;
}

class Chat {
  private taskId = '';
  private contextId = '';
  private turn: Turn | undefined;
  /** Messages waiting for their turn; `queued` when typed while another turn ran. */
  private readonly queue: { text: string; queued: boolean }[] = [];
  /** Text shaped like a command the card does not list, waiting for "send it anyway?". */
  private unsure: string | undefined;
  private draining: Promise<void> | undefined;
  private closed = false;
  private readonly watchers = new Set<AbortController>();
  private readonly followSubtask = (taskRef: string): void => void this.watch(taskRef);
  private readonly style: Style;
  private readonly rl: Interface;
  private readonly screen: ChatScreen;

  constructor(
    private readonly connection: Connection,
    input: NodeJS.ReadStream,
    private readonly output: NodeJS.WriteStream,
  ) {
    this.style = styleFor(output);
    this.screen = new ChatScreen(output, this.style);
    const terminal = input.isTTY === true && output.isTTY === true;
    this.rl = createInterface({
      input,
      output,
      terminal,
      prompt: '> ',
      historySize: 200,
      completer: (line: string) => this.complete(line),
    });
  }

  /** Shows a task's conversation so far and goes on in it; false (said why) when it cannot be read. */
  async resume(taskId: string): Promise<boolean> {
    let task;
    try {
      task = await this.connection.client.getTask({ tenant: '', id: taskId, historyLength: RESUME_SHOWN });
    } catch (error) {
      process.stderr.write(`error: cannot resume task ${taskId}: ${describeClientError(error, this.connection.url)}\n`);
      return false;
    }
    this.contextId = task.contextId;
    this.taskId = isTerminal(task.status?.state) ? '' : task.id;
    for (const message of task.history) {
      const text = resultText({ ...task, status: { ...task.status!, message }, artifacts: [] });
      if (!text) continue;
      if (message.role === Role.ROLE_USER) this.screen.line(this.style.dim(`> ${text}`));
      else if (typeof message.metadata?.[COMMAND_KEY] === 'string')
        this.screen.line(this.style.command(`[/${message.metadata[COMMAND_KEY]}] ${text}`));
      else this.screen.line(this.screen.markdown(text));
    }
    this.screen.line(
      this.style.dim(
        isTerminal(task.status?.state)
          ? `(task ${task.id} has ended: the next message starts a new task in its conversation)`
          : `(resumed task ${task.id})`,
      ),
    );
    return true;
  }

  run(): Promise<number> {
    const { card, commands, url, client } = this.connection;
    this.screen.line(
      `Connected to ${card.name}${card.version ? ` ${card.version}` : ''} at ${url} (${client.transport.protocolName}).`,
    );
    this.screen.line(
      this.style.dim(
        commands.length > 0
          ? 'Type a message, or / and Tab for commands. Ctrl+C stops a turn (twice: leaves); Ctrl+D exits.'
          : 'Type a message. Ctrl+C cancels a turn (twice: leaves); Ctrl+D exits. (This agent lists no commands.)',
      ),
    );
    this.rl.on('line', (line) => this.onLine(line));
    this.rl.on('SIGINT', () => this.onInterrupt());
    this.prompt();
    return new Promise((resolve) => {
      this.rl.on('close', () => {
        this.closed = true;
        if (this.rl.terminal && !this.draining) this.screen.write('\n'); // off the prompt line
        void (async () => {
          await this.draining; // lines read before the end of input still get their replies
          for (const watcher of this.watchers) watcher.abort();
          this.screen.endLine();
          if (this.taskId)
            this.screen.write(
              this.style.dim(
                `task ${this.taskId}; resume it with: tiny-harness chat ${this.connection.url} --task ${this.taskId}\n`,
              ),
            );
          resolve(0);
        })();
      });
    });
  }

  private complete(line: string): [string[], string] {
    const { completions, list } = completeCommand(line, this.connection.commands, this.output.columns);
    if (list.length > 0) {
      this.output.write(`\r\n${list.join('\r\n')}\r\n`);
      this.rl.prompt(true);
    }
    return [completions, line];
  }

  private isCommand(text: string): boolean {
    return parseCommandText(text, (name) => this.connection.commands.some((c) => c.name === name)) !== undefined;
  }

  private onLine(line: string): void {
    // Enter moved the cursor to a new line (typed while a turn was printing, say).
    if (this.rl.terminal) this.screen.enterPressed();
    const text = line.trimEnd(); // a leading space stays: ` /name` is not a command (CMD-3)
    if (this.unsure !== undefined) {
      const unsure = this.unsure;
      this.unsure = undefined;
      if (/^y(es)?$/i.test(text.trim())) {
        this.send(unsure);
      } else {
        this.screen.line(this.style.dim('(not sent)'));
        if (!this.turn && !this.draining) this.prompt();
      }
      return;
    }
    if (!text.trim()) {
      if (!this.turn && !this.draining) this.prompt();
      return;
    }
    // CMD-3 would send an unknown /name to the model: a typo is asked about first.
    const question = unknownCommandQuestion(
      text,
      this.connection.commands.map((c) => c.name),
    );
    if (question) {
      this.unsure = text;
      this.screen.line(this.style.error(`${question} Send it to the model anyway? [y/N]`));
      if (!this.turn && !this.draining) this.prompt();
      return;
    }
    const running = this.turn?.reader.taskId;
    // A command is answered at once, even while a turn runs on the task.
    if (running && this.isCommand(text)) {
      void this.commandDuringTurn(text, running);
      return;
    }
    this.send(text);
  }

  /**
   * Sends a message now, or when the running turn ends: a message typed during a turn is said to
   * be queued, and shown again above its reply, so the screen reads in order.
   */
  private send(text: string): void {
    const busy = this.turn !== undefined || this.draining !== undefined;
    if (busy) this.screen.line(this.style.dim(`(queued: ${oneLineOf(text)}; sent when the turn ends)`));
    this.queue.push({ text, queued: busy });
    this.drain();
  }

  private drain(): void {
    if (this.draining) return;
    this.draining = (async () => {
      for (let next = this.queue.shift(); next !== undefined; next = this.queue.shift()) {
        if (next.queued) this.screen.line(this.style.dim(`> ${next.text}`));
        await this.runTurn(next.text);
      }
    })().finally(() => {
      this.draining = undefined;
      this.prompt();
    });
  }

  private async runTurn(text: string): Promise<void> {
    const turn: Turn = { reader: new TurnReader(), abort: new AbortController(), cancel: 'no' };
    const { reader } = turn;
    this.turn = turn;
    let failed = false;
    try {
      const message = userMessage(text, { taskId: this.taskId, contextId: this.contextId });
      // A stream that breaks before the turn ends is resumed where it broke off (issue 24).
      const said = (line: string) => (this.screen.endReply(), this.screen.line(this.style.dim(line)));
      for await (const event of turnEvents(this.connection.client, message, turn.abort.signal, said)) {
        this.screen.show(reader.read(event), this.followSubtask);
        if (turn.cancel === 'wanted' && reader.taskId) this.endTurn(turn);
      }
      this.screen.show(reader.finish(), this.followSubtask);
      this.screen.endReply();
    } catch (error) {
      this.screen.endReply();
      failed = true;
      if (turn.abort.signal.aborted) this.screen.line(this.style.dim('(stopped waiting for the turn)'));
      else this.screen.line(this.style.error(`error: ${describeClientError(error, this.connection.url)}`));
    } finally {
      clearTimeout(turn.timer);
      this.turn = undefined;
      this.screen.endLine();
    }
    if (reader.taskId) {
      this.contextId = reader.contextId || this.contextId;
      this.taskId = isTerminal(reader.state) ? '' : reader.taskId;
    }
    if (failed) await this.checkTaskStillOpen();
  }

  /** After a failure, a task that has ended meanwhile (canceled elsewhere, say) is left for a new one. */
  private async checkTaskStillOpen(): Promise<void> {
    if (!this.taskId) return;
    try {
      const task = await this.connection.client.getTask(
        { tenant: '', id: this.taskId, historyLength: 0 },
        { signal: AbortSignal.timeout(5000) },
      );
      if (isTerminal(task.status?.state)) {
        this.screen.line(
          this.style.dim(
            `(task ${this.taskId} is ${stateName(task.status?.state)}; the next message starts a new task)`,
          ),
        );
        this.taskId = '';
      }
    } catch {
      // The agent cannot say; keep the task and let the next message find out.
    }
  }

  private async commandDuringTurn(text: string, taskId: string): Promise<void> {
    try {
      const request = {
        tenant: '',
        message: userMessage(text, { taskId, contextId: this.contextId }),
        configuration: undefined,
        metadata: {},
      };
      const result = await this.connection.client.sendMessage(request);
      // The running turn's stream carries the reply too; `show` prints it once.
      if ('status' in result)
        this.screen.show(
          new TurnReader().read({ payload: { $case: 'task', value: result } }).filter((s) => s.kind === 'command'),
          this.followSubtask,
        );
    } catch (error) {
      this.screen.line(this.style.error(`error: ${describeClientError(error, this.connection.url)}`));
    }
  }

  private onInterrupt(): void {
    const turn = this.turn;
    if (turn) {
      if (turn.cancel !== 'no') {
        // A second Ctrl+C during the same turn leaves (the turn itself was asked to end already).
        for (const { text } of this.queue) this.screen.line(this.style.dim(`(not sent: ${oneLineOf(text)})`));
        this.queue.length = 0;
        turn.abort.abort();
        this.rl.close();
        return;
      }
      // Messages queued meanwhile are still sent once the turn has ended: stopping a turn is how to say something else instead.
      this.screen.line(
        this.style.dim(
          this.canStop ? '^C stopping the turn… (Ctrl+C again leaves)' : '^C canceling the turn… (Ctrl+C again leaves)',
        ),
      );
      turn.cancel = 'wanted';
      turn.timer = setTimeout(() => turn.abort.abort(), CANCEL_GRACE_MS);
      if (turn.reader.taskId) this.endTurn(turn);
      return;
    }
    if (this.draining) return;
    if (this.rl.line === '') {
      this.rl.close();
      return;
    }
    // Like a shell: Ctrl+C drops what was typed.
    this.rl.write(null, { ctrl: true, name: 'e' });
    this.rl.write(null, { ctrl: true, name: 'u' });
  }

  /** Whether the agent lists `/stop`: then Ctrl+C keeps the conversation; otherwise it cancels the task. */
  private get canStop(): boolean {
    return this.connection.commands.some((command) => command.name === 'stop');
  }

  /** Asks the agent to end the running turn: `/stop` where it can, `CancelTask` otherwise. */
  private endTurn(turn: Turn): void {
    if (!this.canStop) return this.sendCancel(turn);
    turn.cancel = 'sent';
    void this.commandDuringTurn('/stop', turn.reader.taskId);
  }

  private sendCancel(turn: Turn): void {
    turn.cancel = 'sent';
    this.connection.client.cancelTask({ tenant: '', id: turn.reader.taskId, metadata: {} }).catch((error: unknown) => {
      if (this.turn !== turn) return;
      this.screen.line(this.style.error(`error: could not cancel: ${describeClientError(error, this.connection.url)}`));
      turn.abort.abort();
    });
  }

  /** Follows a sub-task to its end in the background, then shows its result. */
  private async watch(id: string): Promise<void> {
    const abort = new AbortController();
    this.watchers.add(abort);
    try {
      const end = await followSubtask(this.connection.client, id, abort.signal);
      if (end.kind === 'lost')
        this.notice(
          this.style.error(`error: lost sub-task ${id}: ${describeClientError(end.error, this.connection.url)}`),
        );
      if (end.kind !== 'ended') return;
      const result = resultText(end.task);
      this.notice(
        this.style.subtask(`sub-task ${id} ${stateName(end.task.status?.state)}${result ? `: ${result}` : ''}`),
      );
    } finally {
      this.watchers.delete(abort);
    }
  }

  /** Shows a line while the user may be typing at the prompt: above it, then the prompt again. */
  private notice(text: string): void {
    if (this.turn || this.draining || this.closed || !this.rl.terminal) {
      this.screen.line(text);
      return;
    }
    clearLine(this.output, 0);
    cursorTo(this.output, 0);
    this.screen.write(`${text}\n`);
    this.rl.prompt(true);
  }

  private prompt(): void {
    if (!this.closed && this.rl.terminal) this.rl.prompt();
  }
}
/** A typed message on one line of a notice, shortened. */
function oneLineOf(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}
