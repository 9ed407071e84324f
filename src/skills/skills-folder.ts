/**
 * Keeps the skills of a folder loaded and in the registry: `/skills`, and `/<skill-name>` for
 * each skill. The folder is watched (each skill's `SKILL.md`), so a skill added, changed or
 * removed shows at the next turn without a restart. A skill whose name is taken by another
 * command is skipped with a log line, as prompt commands are; while the folder cannot be read
 * the skills stay as they were.
 */
import { stat } from 'node:fs/promises';
import { CommandRegistrationError, type CommandRegistry, type RegisteredCommand } from '../commands/index.js';
import { FolderWatcher } from '../folder-watcher.js';
import { describeError, silentLogger, type Logger } from '../log.js';
import { makeFolder, whyNoFolder } from '../make-folder.js';
import { HarnessError } from '../errors.js';
import type { CommandStarter } from '../runtime/subtask-starter.js';
import { whyUnreadable } from '../file-commands/load.js';
import { loadSkills, SKILL_FILE, type Skill } from './load.js';
import { skillCommand } from './skill-commands.js';

export interface SkillsFolderOptions {
  /** The folder of skills (one subfolder each); created when missing. */
  dir: string;
  log?: Logger;
  /** Quiet time after the last change before the folder is read again. Default 150 ms. */
  debounceMs?: number;
}

/** Where `/<skill-name>` commands go, and what starts their turns (CMD-38). */
export interface SkillCommandsTarget {
  registry: CommandRegistry;
  starter: CommandStarter;
}

export class SkillsFolder {
  readonly dir: string;
  private commands: SkillCommandsTarget | undefined;
  private skills: Skill[] = [];
  private problems: string[] = [];
  private readonly registered = new Map<string, RegisteredCommand>();
  private readonly log: Logger;
  private watcher: FolderWatcher | undefined;
  private queue: Promise<void> = Promise.resolve();
  /** What was last logged, so that a reload that changes nothing says nothing. */
  private told = '[]';
  /** Why the folder could not be read last time, so that retries warn once. */
  private folderProblem: string | undefined;
  private loadedSignature = '';
  private closed = false;

  constructor(private readonly options: SkillsFolderOptions) {
    this.dir = options.dir;
    this.log = options.log ?? silentLogger;
  }

  /** The skills loaded now, in name order. */
  list(): readonly Skill[] {
    return this.skills;
  }

  /** The folders skipped by the last reading, each `<folder>: <reason>`. */
  skipped(): readonly string[] {
    return this.problems;
  }

  /**
   * Creates the folder if needed, reads the skills and registers a `/<skill-name>` command for
   * each in `commands` (when given; the tool needs none). Throws only when the folder cannot be made.
   */
  async load(commands?: SkillCommandsTarget): Promise<void> {
    this.commands = commands;
    try {
      makeFolder(this.dir);
    } catch (error) {
      throw new HarnessError(
        'config_unreadable',
        `Cannot create the skills folder "${this.dir}": ${whyNoFolder(error) ?? describeError(error)}. Choose another folder.`,
        { cause: error },
      );
    }
    await this.reload();
  }

  /** Follows the folder from now on; resolves once the watch is in place and the folder read again. */
  watch(): Promise<void> {
    if (this.watcher || this.closed) return Promise.resolve();
    this.watcher = new FolderWatcher(this.dir, {
      relevant: (fileName) => fileName === SKILL_FILE,
      what: 'the skills folder',
      onChange: () => void this.reload(),
      debounceMs: this.options.debounceMs ?? 150,
      log: this.log,
    });
    return this.reload();
  }

  /** Reads the folder again; resolves when the skills and the registry are in step with it. Never rejects. */
  reload(): Promise<void> {
    this.queue = this.queue.then(() =>
      this.sync().catch((error: unknown) =>
        this.log.error('reading the skills folder failed', { dir: this.dir, error: describeError(error) }),
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
    const loaded = await loadSkills(this.dir, this.takenNames());
    if (this.closed) return;
    if (loaded.folderProblem !== undefined) {
      this.unreadable(loaded.folderProblem);
      return;
    }
    if (this.folderProblem !== undefined) this.log.info('the skills folder can be read again', { dir: this.dir });
    this.folderProblem = undefined;
    this.watcher?.followSubfolders(loaded.folders);
    this.apply(loaded.skills, loaded.problems);
  }

  /** The folder is gone or unreadable: keep the skills, say so once (the watcher looks again every second). */
  private unreadable(problem: string): void {
    if (this.folderProblem !== problem)
      this.log.warn(`the skills folder cannot be read (${problem}); its skills stay as they were until it can`, {
        dir: this.dir,
      });
    this.folderProblem = problem;
    this.watcher?.lost();
  }

  /** Names a skill may not take: whatever is registered, but not by this folder. */
  private takenNames(): Set<string> {
    const taken = new Set<string>();
    for (const command of this.commands?.registry.list() ?? [])
      if (this.registered.get(command.name) !== command) taken.add(command.name);
    return taken;
  }

  /** Swaps the old commands for the new in one synchronous step. */
  private apply(skills: Skill[], problems: string[]): void {
    const registry = this.commands?.registry;
    for (const [name, command] of this.registered) if (registry?.get(name) === command) registry.unregister(name);
    this.registered.clear();
    const kept: Skill[] = [];
    for (const skill of skills) {
      if (!this.commands) {
        kept.push(skill);
        continue;
      }
      const { registry, starter } = this.commands;
      try {
        this.registered.set(skill.name, registry.register(skillCommand(skill, starter)));
        kept.push(skill);
      } catch (error) {
        if (!(error instanceof CommandRegistrationError)) throw error;
        problems.push(`${skill.name}: ${error.message}`);
      }
    }
    this.skills = kept;
    this.problems = problems;
    const signature = JSON.stringify(problems);
    if (signature !== this.told) for (const problem of problems) this.log.warn(`skill skipped: ${problem}`);
    this.told = signature;
    const loaded = JSON.stringify(kept.map(({ name, description }) => [name, description]));
    if (loaded !== this.loadedSignature)
      this.log.info('skills loaded', { dir: this.dir, skills: kept.map((s) => s.name).join(' ') || '(none)' });
    this.loadedSignature = loaded;
  }
}
