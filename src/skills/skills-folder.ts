/**
 * Keeps the skills of a folder loaded and in the registry: `/skills`, and `/<skill-name>` for
 * each skill. The folder is watched (each skill's `SKILL.md`), so a skill added, changed or
 * removed shows at the next turn without a restart. A skill whose name is taken by another
 * command is skipped with a log line, as prompt commands are; while the folder cannot be read
 * the skills stay as they were.
 */
import { CommandRegistrationError, type CommandRegistry, type RegisteredCommand } from '../commands/index.js';
import { silentLogger, type Logger } from '../log.js';
import type { CommandStarter } from '../engine-ports.js';
import { WatchedFolder } from '../file-commands/watched-folder.js';
import { loadSkills, SKILL_FILE, type LoadedSkills, type Skill } from './load.js';
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
  private readonly folder: WatchedFolder<LoadedSkills>;
  /** What was last logged, so that a reload that changes nothing says nothing. */
  private told = '[]';
  private loadedSignature = '';

  constructor(options: SkillsFolderOptions) {
    this.dir = options.dir;
    this.log = options.log ?? silentLogger;
    this.folder = new WatchedFolder({
      dir: options.dir,
      holds: 'skills',
      log: this.log,
      ...(options.debounceMs !== undefined && { debounceMs: options.debounceMs }),
      relevant: (fileName) => fileName === SKILL_FILE,
      read: (dir) => loadSkills(dir, this.takenNames()),
      apply: (loaded) => this.apply(loaded.skills, loaded.problems),
    });
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
  load(commands?: SkillCommandsTarget): Promise<void> {
    this.commands = commands;
    return this.folder.load();
  }

  /** Follows the folder from now on; resolves once the watch is in place and the folder read again. */
  watch(): Promise<void> {
    return this.folder.watch();
  }

  /** Reads the folder again; resolves when the skills and the registry are in step with it. Never rejects. */
  reload(): Promise<void> {
    return this.folder.reload();
  }

  close(): Promise<void> {
    return this.folder.close();
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
