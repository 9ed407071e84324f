import { mkdirSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/**
 * Creates `folder` and its missing parents one level at a time, from the nearest one that
 * exists. Not `mkdir` with `recursive`: where a folder cannot be created although its parent
 * exists (under /proc, mkdir answers ENOENT) Node's recursive mkdir retries forever.
 */
export function makeFolder(folder: string): void {
  const missing: string[] = [];
  let at = resolve(folder);
  let found = statSync(at, { throwIfNoEntry: false });
  for (; !found; found = statSync(at, { throwIfNoEntry: false })) {
    missing.unshift(at);
    at = dirname(at);
  }
  if (!found.isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR' });
  for (const level of missing) {
    try {
      mkdirSync(level);
    } catch (error) {
      // Another process (a second instance starting) may have made it meanwhile.
      if ((error as { code?: unknown }).code !== 'EEXIST' || !statSync(level).isDirectory()) throw error;
    }
  }
}

/** Why a folder could not be made or used, in words, for the file system's usual refusals. */
export function whyNoFolder(error: unknown): string | undefined {
  switch ((error as { code?: unknown }).code) {
    case 'ENOTDIR':
    case 'EEXIST':
      return 'a file stands where a folder is needed';
    case 'EACCES':
    case 'EPERM':
      return 'permission denied';
    case 'EROFS':
      return 'the file system is read-only';
    case 'ENOSPC':
      return 'the disk is full';
    case 'ENOENT':
      return 'no folder can be created there';
  }
  return undefined;
}
