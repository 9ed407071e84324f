/**
 * A scratch project that installs this repository's packages as a user installs them: the
 * tarballs `npm pack` writes, installed with `npm install` into a temporary folder, nothing
 * linked. Their dependencies are the versions this repository's package-lock.json resolves (its
 * entries, with the tarballs', are the scratch project's lockfile; npm prunes what the project
 * does not need), fetched from npm's cache only (`--offline`): a test reaches nothing outside
 * this machine, and `npm ci`, which CI runs first, fills the cache. Each project installs only
 * what it declares, so a package that leans on a dependency it does not declare fails there.
 */
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Requirement } from '../needs.js';
import { ROOT } from './processes.js';

/** A package of this repository: its folder, relative to the root ('' for the harness itself). */
export interface PackedPackage {
  name: string;
  folder: string;
  tarball: string;
}

interface Run {
  status: number | null;
  stdout: string;
  stderr: string;
}

/**
 * The environment npm and npx run in here: offline, without the variables an enclosing
 * `npm test` sets for its own project (its cache stays).
 */
export function npmEnv(): NodeJS.ProcessEnv {
  const env = Object.entries(process.env).filter(([key]) => !key.startsWith('npm_') || key === 'npm_config_cache');
  return { ...Object.fromEntries(env), npm_config_offline: 'true' };
}

function npm(args: string[], cwd: string): Promise<Run> {
  const child = spawn('npm', args, { cwd, env: npmEnv(), stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (status) => resolve({ status, stdout, stderr }));
  });
}

function check(run: Run, what: string): string {
  if (run.status !== 0) throw new Error(`${what} failed (exit ${run.status}): ${run.stderr.trim()}`);
  return run.stdout;
}

/**
 * `npm pack` of each package into `destination`, as built (scripts are not run: the tests run
 * against what the build left in dist/).
 */
export async function pack(folders: string[], destination: string): Promise<PackedPackage[]> {
  return Promise.all(
    folders.map(async (folder) => {
      const cwd = join(ROOT, folder);
      const out = check(
        await npm(['pack', '--silent', '--ignore-scripts', '--pack-destination', destination], cwd),
        `npm pack in ${folder || '.'}`,
      );
      const manifest = JSON.parse(readFileSync(join(cwd, 'package.json'), 'utf8')) as { name: string };
      return { name: manifest.name, folder, tarball: join(destination, out.trim().split('\n').at(-1)!) };
    }),
  );
}

/** The lockfile entry of an installed tarball, from its package.json. */
function tarballEntry(packed: PackedPackage): Record<string, unknown> {
  const manifest = JSON.parse(readFileSync(join(ROOT, packed.folder, 'package.json'), 'utf8')) as Record<
    string,
    unknown
  >;
  const fields = ['version', 'license', 'dependencies', 'peerDependencies', 'peerDependenciesMeta', 'bin', 'engines'];
  return {
    ...Object.fromEntries(fields.filter((field) => manifest[field] !== undefined).map((f) => [f, manifest[f]])),
    resolved: `file:${packed.tarball}`,
    integrity: `sha512-${createHash('sha512').update(readFileSync(packed.tarball)).digest('base64')}`,
  };
}

/**
 * What npm could not find in its cache offline, by package name (a tarball by its file name);
 * '' when nothing was missing. npm stops at the first it misses in each fetch under way.
 */
export function notCached(stderr: string): string {
  if (!stderr.includes('ENOTCACHED')) return '';
  const names = [...stderr.matchAll(/request to (\S+) failed/g)].map((match) => {
    const path = decodeURIComponent(new URL(match[1]!).pathname).slice(1);
    return path.endsWith('.tgz') ? path.split('/').at(-1)! : path;
  });
  return [...new Set(names)].join(', ');
}

/**
 * Installs `packages` (and `registry`, name to version, from this repository's lockfile) into the
 * empty folder `dir`. Returns what npm's cache lacked ('' when the install succeeded); any other
 * failure throws with npm's words.
 */
export async function installScratch(
  dir: string,
  packages: PackedPackage[],
  registry: Record<string, string>,
): Promise<string> {
  const lock = JSON.parse(readFileSync(join(ROOT, 'package-lock.json'), 'utf8')) as {
    packages: Record<string, { link?: boolean }>;
  };
  const dependencies: Record<string, string> = { ...registry };
  for (const packed of packages) dependencies[packed.name] = `file:${packed.tarball}`;
  const entries: Record<string, unknown> = { '': { name: 'scratch', dependencies } };
  for (const [path, entry] of Object.entries(lock.packages)) {
    // The workspace packages are links in the repository; here they are their tarballs.
    if (path.startsWith('node_modules/') && !entry.link && !path.startsWith('node_modules/@tiny-harness/'))
      entries[path] = entry;
  }
  for (const packed of packages) entries[`node_modules/${packed.name}`] = tarballEntry(packed);
  writeFileSync(
    join(dir, 'package.json'),
    JSON.stringify({ name: 'scratch', private: true, type: 'module', dependencies }),
  );
  writeFileSync(
    join(dir, 'package-lock.json'),
    JSON.stringify({ name: 'scratch', lockfileVersion: 3, requires: true, packages: entries }),
  );
  // Install scripts would reach the network (better-sqlite3's fetches a prebuilt addon): none runs.
  const run = await npm(['install', '--offline', '--ignore-scripts', '--no-audit', '--no-fund'], dir);
  const missing = notCached(run.stderr);
  if (missing) return missing;
  check(run, `npm install in the scratch project ${dir}`);
  return '';
}

/**
 * better-sqlite3's native addon, which its skipped install script would have fetched or built:
 * the one `npm ci` built for this Node, of the same version the lockfile pins.
 */
export function copySqliteAddon(dir: string): void {
  const release = join('node_modules', 'better-sqlite3', 'build', 'Release');
  mkdirSync(join(dir, release), { recursive: true });
  copyFileSync(join(ROOT, release, 'better_sqlite3.node'), join(dir, release, 'better_sqlite3.node'));
}

/** npm's cache as a test's requirement: `missing` names what an offline install did not find in it. */
export function npmCache(missing: string): Requirement {
  return {
    name: `npm's cache (npm config get cache) to hold what the lockfile names; offline, npm did not find ${missing}`,
    install: 'npm ci fills it (CI runs it first)',
    present: () => missing === '',
  };
}
