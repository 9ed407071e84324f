// Whether a build's outputs are current: each exists and is newer than every file it is built
// from. `npm run prepare` (scripts/build-if-stale.mjs) skips `npm run build` when the whole
// build is current, and `npm test` (scripts/run-tests.mjs) rebundles the command line when the
// bundle is not. Modification times, as make compares them: a clone, a checkout or an edit makes
// a source newer than the last build; a build makes every output newer than the sources it read.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** What `npm run build` reads (folders stand for every file under them), relative to the repository. */
export const BUILD_INPUTS = [
  'src',
  'web',
  'spec',
  'packages/commands-extension/src',
  'packages/commands-extension/package.json',
  'packages/commands-extension/tsconfig.json',
  'packages/conform/src',
  'packages/conform/package.json',
  'packages/conform/tsconfig.json',
  'package.json',
  'package-lock.json',
  'tsconfig.json',
  'scripts/build-package.mjs',
  'scripts/bundle-cli.mjs',
];

/** What the command line's bundle (scripts/bundle-cli.mjs) reads besides the packages' dist/. */
export const BUNDLE_INPUTS = ['src', 'package.json', 'package-lock.json', 'scripts/bundle-cli.mjs'];

/** A file each step of `npm run build` writes: the packages, tsc, the page, the bundle. */
export const BUILD_OUTPUTS = [
  'packages/commands-extension/dist/index.js',
  'packages/conform/dist/index.js',
  'packages/conform/dist/bin.js',
  'dist/src/index.js',
  'dist/src/cli.js',
  'dist/web/index.html',
  'dist/bundle/cli.mjs',
];

/**
 * Why `outputs` are not current, in a few words (an output missing, or the first input found
 * newer than the oldest output), or undefined when they are. Paths are relative to `root`.
 */
export function staleness(root, outputs, inputs) {
  let oldest = Infinity;
  for (const output of outputs) {
    const time = mtime(join(root, output));
    if (time === undefined) return `${output} is missing`;
    oldest = Math.min(oldest, time);
  }
  for (const input of inputs) {
    const newer = findNewer(root, input, oldest);
    if (newer) return `${newer} is newer than the build`;
  }
  return undefined;
}

/**
 * `path`, or the first file or folder under it, if it was modified after `time` (a folder's
 * time changes when a file in it is added, renamed or removed).
 */
function findNewer(root, path, time) {
  const full = join(root, path);
  const own = mtime(full);
  if (own === undefined) return undefined;
  if (own > time) return path;
  if (!statSync(full).isDirectory()) return undefined;
  for (const entry of readdirSync(full, { recursive: true, withFileTypes: true })) {
    const file = join(entry.parentPath, entry.name);
    if (mtime(file) > time) return join(path, file.slice(full.length + 1));
  }
  return undefined;
}

function mtime(file) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return undefined;
  }
}
