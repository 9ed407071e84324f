// Builds the workspace package in the current folder (npm runs a workspace's scripts there):
// compiles src/ to dist/ with its tsconfig.json, then copies the named specification files from
// the repository's spec/ into the package's spec/, so that the package ships them while spec/
// stays their one home. Usage: node ../../scripts/build-package.mjs <spec name>...
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const pkg = process.cwd();
const tsc = createRequire(join(root, 'package.json')).resolve('typescript/bin/tsc');
rmSync(join(pkg, 'dist'), { recursive: true, force: true });
const compiled = spawnSync(process.execPath, [tsc, '-p', join(pkg, 'tsconfig.json')], { stdio: 'inherit' });
if (compiled.status !== 0) {
  console.error(`scripts/build-package.mjs: ${pkg} does not compile`);
  process.exit(1);
}
mkdirSync(join(pkg, 'spec'), { recursive: true });
for (const name of process.argv.slice(2)) {
  for (const file of [`${name}.md`, `${name}.schema.json`]) {
    if (existsSync(join(root, 'spec', file))) copyFileSync(join(root, 'spec', file), join(pkg, 'spec', file));
  }
}
