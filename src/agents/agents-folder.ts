/**
 * Keeps the agents of a folder loaded: the model's `delegate` tool lists them, `/agents` shows
 * them. The folder is watched (its `*.md` files), so an agent added, changed or removed shows at
 * the next turn without a restart; while the folder cannot be read the agents stay as they were.
 */
import { silentLogger, type Logger } from '../log.js';
import { WatchedFolder } from '../file-commands/watched-folder.js';
import { loadAgents, type Agent, type LoadedAgents } from './load.js';

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
  private readonly folder: WatchedFolder<LoadedAgents>;
  /** What was last logged, so that a reload that changes nothing says nothing. */
  private told = '';

  constructor(options: AgentsFolderOptions) {
    this.dir = options.dir;
    this.log = options.log ?? silentLogger;
    this.folder = new WatchedFolder({
      dir: options.dir,
      holds: 'agents',
      log: this.log,
      ...(options.debounceMs !== undefined && { debounceMs: options.debounceMs }),
      relevant: (fileName) => fileName.endsWith('.md'),
      topLevelOnly: true,
      read: (dir) => loadAgents(dir),
      apply: (loaded) => this.apply(loaded),
    });
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
  load(): Promise<void> {
    return this.folder.load();
  }

  /** Follows the folder from now on; resolves once the watch is in place and the folder read again. */
  watch(): Promise<void> {
    return this.folder.watch();
  }

  /** Reads the folder again; resolves when the agents are in step with it. Never rejects. */
  reload(): Promise<void> {
    return this.folder.reload();
  }

  close(): Promise<void> {
    return this.folder.close();
  }

  private apply(loaded: LoadedAgents): void {
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
}
