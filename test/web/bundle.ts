/**
 * The page tests need the built page in dist/web. This builds it (node web/build.mjs) when it
 * is missing or older than anything it is built from, so `npm test` works right after
 * `npm ci` and after editing the page's sources alike.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const WEB_DIR = join(ROOT, 'dist', 'web');

function newestSource(): number {
  const web = join(ROOT, 'web');
  const files = [
    ...readdirSync(join(web, 'src'), { recursive: true }).map((f) => join(web, 'src', String(f))),
    join(web, 'index.html'),
    join(web, 'style.css'),
    join(web, 'build.mjs'),
    join(web, 'tsconfig.json'),
    join(ROOT, 'package-lock.json'),
  ];
  return Math.max(...files.filter((f) => existsSync(f)).map((f) => statSync(f).mtimeMs));
}

/** Builds the page unless dist/web/index.html is newer than every source; throws with the build's output if it fails. */
export function ensureBundle(): { built: boolean } {
  const index = join(WEB_DIR, 'index.html');
  if (existsSync(index) && statSync(index).mtimeMs >= newestSource()) return { built: false };
  const result = spawnSync(process.execPath, [join(ROOT, 'web', 'build.mjs')], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 120_000,
  });
  if (result.status !== 0) {
    throw new Error(
      `building the page failed (node web/build.mjs, exit ${result.status ?? result.signal}):\n${result.stdout}${result.stderr}`,
    );
  }
  return { built: true };
}
