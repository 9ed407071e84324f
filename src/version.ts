import { readFileSync } from 'node:fs';

/**
 * The package version, read from package.json so that there is one place to change it. The
 * file sits one folder up from the sources (src/) and two from the build (dist/src/).
 */
function readVersion(): string {
  for (const relative of ['../package.json', '../../package.json']) {
    try {
      const pkg = JSON.parse(readFileSync(new URL(relative, import.meta.url), 'utf8')) as {
        name?: string;
        version?: string;
      };
      if (pkg.name === 'tiny-harness' && pkg.version) return pkg.version;
    } catch {
      // not at this level; try the next
    }
  }
  return '0.0.0';
}

export const VERSION: string = readVersion();
