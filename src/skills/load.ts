/**
 * Reads a skills folder: every subfolder holding a `SKILL.md` is a skill (the Agent Skills
 * format). Its front matter gives `name` (the folder's name, by the command-name rule) and
 * `description`; the body is the instructions; other files beside it are read on demand
 * through {@link readSkillFile}. A folder that cannot be a skill is reported with the reason
 * and skipped; the others still load.
 *
 * No file is read outside its skill's folder (TOOL-6): the path asked for must be relative,
 * without `..`, and its real path (links resolved) must lie inside the folder's real path.
 * Only regular files are read, and at most {@link MAX_SKILL_FILE_BYTES} of one.
 */
import { constants } from 'node:fs';
import { open, readdir, realpath } from 'node:fs/promises';
import { isAbsolute, join, normalize, sep } from 'node:path';
import { whyUnreadable } from '../file-commands/load.js';
import { COMMAND_NAME_PATTERN } from '../wire.js';

export const SKILL_FILE = 'SKILL.md';

/** The largest skill file read, in bytes (256 KiB): instructions and their references, not a data set. */
export const MAX_SKILL_FILE_BYTES = 256 * 1024;

/** The longest description kept: it goes into every turn's tool list. */
export const MAX_SKILL_DESCRIPTION_CHARS = 1024;

/** Opened without waiting, so a named pipe never hangs a read. */
const OPEN_FLAGS = constants.O_RDONLY | (constants.O_NONBLOCK ?? 0);

export interface Skill {
  name: string;
  description: string;
  /** The body of `SKILL.md`: the instructions. */
  body: string;
  /** The skill's folder (its real path). For reading its files; never shown to a client. */
  dir: string;
}

export interface LoadedSkills {
  /** In name order. */
  skills: Skill[];
  /** One line per skipped folder: `<folder>: <reason>` (the folder's name only, no path). */
  problems: string[];
  /** Set when the skills folder itself cannot be listed: why, without the path. */
  folderProblem?: string;
  /** The subfolders looked at (skills or not): where changes are watched for. */
  folders: string[];
}

/** Reads every skill of `dir`. Never throws. */
export async function loadSkills(dir: string, reservedNames: ReadonlySet<string> = new Set()): Promise<LoadedSkills> {
  let names: string[];
  try {
    const entries = await readdir(dir, { withFileTypes: true });
    names = entries
      .filter((entry) => !entry.name.startsWith('.') && (entry.isDirectory() || entry.isSymbolicLink()))
      .map((entry) => entry.name)
      .sort();
  } catch (error) {
    return { skills: [], problems: [], folderProblem: whyUnreadable(error), folders: [] };
  }
  const result: LoadedSkills = { skills: [], problems: [], folders: names };
  for (const folder of names) {
    const outcome = await loadOne(dir, folder, reservedNames);
    if (typeof outcome === 'string') result.problems.push(`${folder}: ${outcome}`);
    else if (outcome) result.skills.push(outcome);
  }
  return result;
}

/** One folder: its skill, why it is skipped, or nothing when it holds no `SKILL.md` (not meant as a skill). */
async function loadOne(
  dir: string,
  folder: string,
  reserved: ReadonlySet<string>,
): Promise<Skill | string | undefined> {
  let skillDir: string;
  try {
    skillDir = await realpath(join(dir, folder));
  } catch (error) {
    return `cannot be read (${whyUnreadable(error)})`;
  }
  const read = await readSkillFile(skillDir, SKILL_FILE);
  if (!read.ok) return read.missing ? undefined : read.problem;
  // Loaded on first use, as the command files' parser is: a start with no skill never loads YAML.
  const { parseYaml, splitFrontMatter } = await import('../file-commands/front-matter.js');
  const split = splitFrontMatter(read.text);
  if (!split.ok) return `${SKILL_FILE}: ${split.reasons.join('; ')}`;
  const yaml = parseYaml(split.yaml, split.yamlFirstLine);
  if (!yaml.ok) return `${SKILL_FILE}: ${yaml.reasons.join('; ')}`;
  const { name, description } = yaml.value as Record<string, unknown>;
  if (typeof name !== 'string' || !COMMAND_NAME_PATTERN.test(name)) {
    return `${SKILL_FILE}: "name" must be set and match ${COMMAND_NAME_PATTERN.source} (lower-case letters, digits and "-", starting with a letter)`;
  }
  if (name !== folder) return `${SKILL_FILE}: "name" is "${name}" but the folder is "${folder}"; they must be the same`;
  if (typeof description !== 'string' || description.trim() === '') {
    return `${SKILL_FILE}: "description" must be set: it tells the model when to use the skill`;
  }
  if (description.length > MAX_SKILL_DESCRIPTION_CHARS) {
    return `${SKILL_FILE}: "description" has ${description.length} characters, over the limit of ${MAX_SKILL_DESCRIPTION_CHARS}`;
  }
  if (reserved.has(name)) return `/${name} is already a command, which a skill cannot replace; rename the skill`;
  return { name, description: description.trim(), body: split.body.trim(), dir: skillDir };
}

export type SkillFileRead = { ok: true; text: string } | { ok: false; problem: string; missing?: boolean };

/**
 * The text of `file` inside the skill folder `skillDir` (a real path), or why it is not read:
 * an absolute path, a `..` step, a link leading out of the folder, anything but a regular
 * file, or more than {@link MAX_SKILL_FILE_BYTES}. The problem never names a path outside the skill.
 */
export async function readSkillFile(skillDir: string, file: string): Promise<SkillFileRead> {
  if (file === '' || isAbsolute(file) || /^[a-zA-Z]:/.test(file)) {
    return { ok: false, problem: `"${file}" is not a relative path inside the skill's folder` };
  }
  const steps = normalize(file).split(/[\\/]/);
  if (file.split(/[\\/]/).includes('..') || steps.includes('..')) {
    return { ok: false, problem: `"${file}" leads out of the skill's folder ("..")` };
  }
  let real: string;
  try {
    real = await realpath(join(skillDir, file));
  } catch (error) {
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    return { ok: false, problem: `"${file}" cannot be read (${whyUnreadable(error)})`, missing };
  }
  if (!real.startsWith(skillDir + sep)) {
    return { ok: false, problem: `"${file}" leads out of the skill's folder (through a link)` };
  }
  let handle;
  try {
    handle = await open(real, OPEN_FLAGS);
  } catch (error) {
    return { ok: false, problem: `"${file}" cannot be read (${whyUnreadable(error)})` };
  }
  try {
    const stats = await handle.stat();
    if (!stats.isFile()) return { ok: false, problem: `"${file}" is not a regular file` };
    const buffer = Buffer.alloc(MAX_SKILL_FILE_BYTES + 1);
    let length = 0;
    while (length < buffer.length) {
      const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
      if (bytesRead === 0) break;
      length += bytesRead;
    }
    if (length > MAX_SKILL_FILE_BYTES) {
      return { ok: false, problem: `"${file}" is over the limit of ${MAX_SKILL_FILE_BYTES} bytes (256 KiB)` };
    }
    return { ok: true, text: buffer.toString('utf8', 0, length) };
  } finally {
    await handle.close();
  }
}
