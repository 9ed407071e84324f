/**
 * The bound of the built-in workspace tools (TOOL-6): a path the model names is taken relative
 * to the root, and used only when its real location, symlinks resolved, is inside the real
 * root. A file that does not exist yet is checked through its nearest existing ancestor (the
 * folders under it are created as plain folders, so nothing there can point elsewhere).
 */
import { realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';

/** A path the model named that is outside the root, or cannot be used; its message is fit for the model. */
export class WorkspaceRefusal extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'WorkspaceRefusal';
  }
}

/** Whether `path` is `root` or under it (both absolute and resolved). */
export function isWithin(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

export class WorkspaceRoot {
  private constructor(readonly real: string) {}

  /** The root's real path; throws when it is not an existing folder. */
  static async open(root: string): Promise<WorkspaceRoot> {
    return new WorkspaceRoot(await realpath(resolve(root)));
  }

  /** The path as the model should see it: relative to the root, `.` for the root itself. */
  shown(real: string): string {
    return relative(this.real, real) || '.';
  }

  /** The real path of an existing file or folder inside the root. */
  async existing(path: string): Promise<string> {
    const wanted = this.lexical(path);
    let real: string;
    try {
      real = await realpath(wanted);
    } catch (error) {
      throw new WorkspaceRefusal(`${JSON.stringify(path)} does not exist${codeOf(error)}.`);
    }
    return this.checked(path, real);
  }

  /**
   * Where a file may be written: its real path when it exists (a symlink is followed, and its
   * target must be inside too), else the real path of its nearest existing ancestor joined
   * with the rest.
   */
  async writable(path: string): Promise<string> {
    const wanted = this.lexical(path);
    const missing: string[] = [];
    let at = wanted;
    for (;;) {
      try {
        const real = this.checked(path, await realpath(at));
        return missing.length === 0 ? real : join(real, ...missing.reverse());
      } catch (error) {
        if (error instanceof WorkspaceRefusal || (error as NodeJS.ErrnoException).code !== 'ENOENT')
          throw toOutside(path, error);
        if (at === this.real || dirname(at) === at)
          throw new WorkspaceRefusal(`${JSON.stringify(path)} cannot be written.`);
        missing.push(basename(at));
        at = dirname(at);
      }
    }
  }

  /** The path joined to the root, refused at once when it leaves it as written (`../`, another absolute path). */
  private lexical(path: string): string {
    if (typeof path !== 'string' || path === '') throw new WorkspaceRefusal('A path is needed.');
    if (path.includes('\0')) throw new WorkspaceRefusal('A path may not contain a NUL character.');
    const wanted = resolve(this.real, path);
    if (!isWithin(this.real, wanted)) throw outside(path);
    return wanted;
  }

  private checked(path: string, real: string): string {
    if (!isWithin(this.real, real)) throw outside(path);
    return real;
  }
}

const outside = (path: string) =>
  new WorkspaceRefusal(
    `${JSON.stringify(path)} is outside the workspace: the tools read and write only under its root.`,
  );

function toOutside(path: string, error: unknown): WorkspaceRefusal {
  return error instanceof WorkspaceRefusal
    ? error
    : new WorkspaceRefusal(`${JSON.stringify(path)} cannot be used${codeOf(error)}.`);
}

function codeOf(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  return code && code !== 'ENOENT' ? ` (${code})` : '';
}
