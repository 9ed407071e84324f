/**
 * Tests that drive something outside Node (Chromium, tmux, later PostgreSQL) declare it here:
 * `describe(title, needs(program('tmux', 'apt-get install -y tmux')), () => ...)`.
 *
 * On a machine without it, the suite is skipped with a reason that names what is missing and
 * the command that installs it ("needs tmux: apt-get install -y tmux"), so `npm ci && npm test`
 * passes on a fresh machine and says what it did not run (scripts/run-tests.mjs lists every
 * such skip at the end). Under CI (`CI` set, as .ci/run does) a missing requirement is a
 * failure with the same words instead: CI must run everything.
 */
import { accessSync, constants, statSync } from 'node:fs';
import { basename, delimiter, join, relative } from 'node:path';
import { test } from 'node:test';

/** Something a test needs from the machine. */
export interface Requirement {
  /** What the skip reason calls it: `chromium`, `tmux`, `PostgreSQL`. */
  readonly name: string;
  /** The command that installs or provides it, shown to whoever runs the tests. */
  readonly install: string;
  /** Whether this machine has it; asked once, when the test file loads. */
  present(): boolean;
}

/** A program the test runs, looked up like a shell would: a path with a slash, or on PATH. */
export interface ProgramRequirement extends Requirement {
  /** Where it was found, to run it by; undefined when it is missing. */
  readonly path: string | undefined;
}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Where `command` runs from: itself when it holds a slash, else the first match on PATH. */
export function findProgram(command: string, path = process.env['PATH'] ?? ''): string | undefined {
  if (command.includes('/')) return executable(command) ? command : undefined;
  return path
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, command))
    .find(executable);
}

/** A program found on PATH (or at the path given), installed by `install` when missing. */
export function program(command: string, install: string, name = basename(command)): ProgramRequirement {
  const path = findProgram(command);
  return { name, install, path, present: () => path !== undefined };
}

/** Whether this run is CI's: the `CI` variable set to anything but empty, 0 or false. */
export function inCI(env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env['CI']?.trim().toLowerCase();
  return value !== undefined && !['', '0', 'false'].includes(value);
}

/** "needs tmux: apt-get install -y tmux", one clause per missing requirement; '' when none is. */
export function missingReason(requirements: readonly Requirement[]): string {
  return requirements
    .filter((r) => !r.present())
    .map((r) => `needs ${r.name}: ${r.install}`)
    .join('; ');
}

/**
 * Options for `describe`/`it`: empty when everything is here, else `skip` with the reason.
 * Under CI it also registers a failing test of that name, so the run fails instead of passing
 * with less tested than it says.
 */
export function needs(...requirements: Requirement[]): { skip?: string } {
  const reason = missingReason(requirements);
  if (reason === '') return {};
  if (inCI()) {
    // Named after the test file (node --test runs each in its own process, as argv[1]); the
    // runner would otherwise place it here, in needs.ts.
    const file = process.argv[1]?.endsWith('.test.ts') ? `${relative(process.cwd(), process.argv[1])}: ` : '';
    test(`${file}${reason}`, () => {
      throw new Error(`${reason} (CI runs every test, so a missing program is a failure here, not a skip)`);
    });
  }
  return { skip: reason };
}
