// npm's `prepare` (run by `npm ci`, `npm install`, and by `npx tiny-harness` inside this
// repository, which installs the repository as a package to find its command): builds, unless
// everything `npm run build` writes is newer than everything it reads. So a fresh clone builds
// once, at `npm ci`, and a command run afterwards starts at once instead of rebuilding dist/
// (2 minutes, under whatever server or test run is using it). `npm run build` always builds.
import { spawnSync } from 'node:child_process';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BUILD_INPUTS, BUILD_OUTPUTS, staleness } from './freshness.mjs';

const root = dirname(dirname(fileURLToPath(import.meta.url)));
const reason = staleness(root, BUILD_OUTPUTS, BUILD_INPUTS);
if (reason === undefined) {
  console.log('dist/ is newer than every source: nothing to build (npm run build rebuilds it anyway)');
} else {
  console.log(`building (${reason})`);
  const npm = process.env.npm_execpath;
  const [command, args] = npm ? [process.execPath, [npm, 'run', 'build']] : ['npm', ['run', 'build']];
  const result = spawnSync(command, args, { cwd: root, stdio: 'inherit' });
  process.exit(result.status ?? 1);
}
