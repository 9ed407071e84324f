/**
 * Keeps the agents of a folder loaded: the model's `delegate` tool lists them, `/agents` shows
 * them. The folder is watched (its `*.md` files), so an agent added, changed or removed shows at
 * the next turn without a restart; while the folder cannot be read the agents stay as they were.
 */
import { stat } from 'node:fs/promises';
import { FolderWatcher } from '../folder-watcher.js';
import { describeError, silentLogger, type Logger } from '../log.js';
import { makeFolder, whyNoFolder } from '../make-folder.js';
import { HarnessError } from '../errors.js';
import { whyUnreadable } from '../file-commands/load.js';
import { loadAgents, type Agent } from './load.js';

export interface AgentsFolderOptions {
  /** The folder of agent files; created when missing. */
  dir: string;
  log?: Logger;
  /** Quiet time after the last change before the folder is read again. Default 150 ms. */
  debounceMs?: number;
}

export class AgentsFolder {
  readonly dir: string;
  private agents: Agent[] = [];
  private problems: string[] = [];
  private readonly log: Logger;
  private watcher: FolderWatcher | undefined;
  private queue: Promise<void> = Promise.resolve();
  /** What was last logged, so that a reload that changes nothing says nothing. */
  private told = '';
  /** Why the folder could not be read last time, so that retries warn once. */
  private folderProblem: string | undefined;
  private closed = false;

  constructor(private readonly options: AgentsFolderOptions) {
    this.dir = options.dir;
    this.log = options.log ?? silentLogger;
  }

  /** The agents loaded now, in name order. */
  list(): readonly Agent[] {
    return this.agents;
  }

  /** The files skipped by the last reading, each `<file>: <reason>`. */
  skipped(): readonly string[] {
    return this.problems;
  }

  /** Creates the folder if needed and reads the agents. Throws only when the folder cannot be made. */
  async load(): Promise<void> {
    try {
      makeFolder(this.dir);
    } catch (error) {
      throw new HarnessError(
        'config_unreadable',
        `Cannot create the agents folder "${this.dir}": ${whyNoFolder(error) ?? describeError(error)}. Choose another folder.`,
        { cause: error },
      );
    }
    await this.reload();
  }

  /** Follows the folder from now on; resolves once the watch is in place and the folder read again. */
  watch(): Promise<void> {
    if (this.watcher || this.closed) return Promise.resolve();
    this.watcher = new FolderWatcher(this.dir, {
      relevant: (fileName) => fileName.endsWith('.md'),
      topLevelOnly: true,
      what: 'the agents folder',
      onChange: () => void this.reload(),
      debounceMs: this.options.debounceMs ?? 150,
      log: this.log,
    });
    return this.reload();
  }

  /** Reads the folder again; resolves when the agents are in step with it. Never rejects. */
  reload(): Promise<void> {
    this.queue = this.queue.then(() =>
      this.sync().catch((error: unknown) =>
        this.log.error('reading the agents folder failed', { dir: this.dir, error: describeError(error) }),
      ),
    );
    return this.queue;
  }

  close(): Promise<void> {
    this.closed = true;
    this.watcher?.close();
    return this.queue;
  }

  private async sync(): Promise<void> {
    if (this.closed) return;
    let id: string;
    try {
      const stats = await stat(this.dir);
      id = `${stats.dev}:${stats.ino}`;
    } catch (error) {
      this.unreadable(whyUnreadable(error));
      return;
    }
    await this.watcher?.follow(id);
    const loaded = await loadAgents(this.dir);
    if (this.closed) return;
    if (loaded.folderProblem !== undefined) {
      this.unreadable(loaded.folderProblem);
      return;
    }
    if (this.folderProblem !== undefined) this.log.info('the agents folder can be read again', { dir: this.dir });
    this.folderProblem = undefined;
    this.agents = loaded.agents;
    this.problems = loaded.problems;
    const signature = JSON.stringify([
      loaded.agents.map(({ name, description }) => [name, description]),
      loaded.problems,
    ]);
    if (signature === this.told) return;
    this.told = signature;
    for (const problem of loaded.problems) this.log.warn(`agent skipped: ${problem}`);
    this.log.info('agents loaded', { dir: this.dir, agents: loaded.agents.map((a) => a.name).join(' ') || '(none)' });
  }

  /** The folder is gone or unreadable: keep the agents, say so once (the watcher looks again every second). */
  private unreadable(problem: string): void {
    if (this.folderProblem !== problem)
      this.log.warn(`the agents folder cannot be read (${problem}); its agents stay as they were until it can`, {
        dir: this.dir,
      });
    this.folderProblem = problem;
    this.watcher?.lost();
  }
}
