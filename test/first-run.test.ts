/**
 * The first run (issue 33): every command that the README, docs/, the packages' READMEs and
 * the command line itself print works as printed right after `npm ci` in a clone. Each
 * `npx tiny-harness` subcommand and flag exists; each `npm start`, `npm test` and `npm run`
 * names a script (of the workspace it names, if any), and the flags passed through it exist.
 * `npx tiny-harness` inside the repository installs the repository as a package, which runs
 * its `prepare`: that builds nothing while dist/ is newer than every source, so the command
 * starts at once and leaves dist/ alone. `.ci/run` runs the printed commands from its fresh
 * clone and checks that dist/ is untouched (a clone in a test would build for minutes).
 */
import { before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  unlinkSync,
  utimesSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { BUILD_INPUTS, BUILD_OUTPUTS, staleness } from '../scripts/freshness.mjs';
import { runCli } from './client/support.js';
import { ROOT } from './support/processes.js';

interface Manifest {
  scripts?: Record<string, string>;
  workspaces?: string[];
  bin?: Record<string, string>;
  name: string;
}

const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');
const manifest = (dir = '.') => JSON.parse(read(join(dir, 'package.json'))) as Manifest;

/** Every file a person reads a command in: the pages, and the sources that print commands. */
function printingFiles(): string[] {
  const under = (dir: string, ext: string) =>
    readdirSync(join(ROOT, dir), { recursive: true })
      .map(String)
      .filter((f) => f.endsWith(ext))
      .map((f) => join(dir, f));
  return [
    'README.md',
    ...under('docs', '.md'),
    ...(manifest().workspaces ?? []).map((w) => join(w, 'README.md')),
    ...under('src', '.ts'),
    ...(manifest().workspaces ?? []).flatMap((w) => under(join(w, 'src'), '.ts')),
    ...under('examples', '.mjs'),
  ];
}

interface Printed {
  file: string;
  /** The command as printed, up to the end of the line, a pipe, a redirection or the code span. */
  text: string;
  tool: string;
  words: string[];
}

/** The npm and npx commands `file` prints (`npx tiny-harness …`, `npm start …`, `npm run …`, ...). */
function printedCommands(file: string): Printed[] {
  const found: Printed[] = [];
  const pattern =
    /\b(npx tiny-harness|npx @tiny-harness\/[a-z-]+|npm (?:run|start|test|exec|pack|install))\b([^\n`|#<>;&)]*)/g;
  for (const match of read(file).matchAll(pattern)) {
    found.push({ file, text: match[0].trim(), tool: match[1]!, words: match[2]!.trim().split(/\s+/).filter(Boolean) });
  }
  return found;
}

const helpTexts = new Map<string, string>();

/** `tiny-harness [sub] --help`, run once per subcommand. */
async function help(sub: string | undefined): Promise<string> {
  const key = sub ?? '';
  if (!helpTexts.has(key)) {
    const result = await runCli(sub ? [sub, '--help'] : ['--help']);
    assert.equal(result.code, 0, result.stderr);
    helpTexts.set(key, result.stdout);
  }
  return helpTexts.get(key)!;
}

/** What is wrong with `tiny-harness <words>`, checked against `--help`, or undefined. */
async function cliProblem(words: string[]): Promise<string | undefined> {
  const first = words[0];
  const sub = first && /^[a-z]+$/.test(first) ? first : undefined;
  if (sub && !new RegExp(`^  ${sub}\\b`, 'm').test(await help(undefined))) return `no subcommand ${sub}`;
  const usage = await help(sub);
  for (const word of words) {
    const flag = /^(--?[a-z][a-z-]*)(=.*)?$/.exec(word)?.[1];
    if (flag && flag !== '--' && !new RegExp(`(^|[\\s,])${flag}\\b`, 'm').test(usage))
      return `${sub ?? 'tiny-harness'} has no ${flag}`;
  }
  return undefined;
}

/** The subcommand of the command line a package.json script runs (`node dist/bundle/cli.mjs serve`). */
function scriptSubcommand(script: string): string | undefined {
  return /\bdist\/bundle\/cli\.mjs (\w+)/.exec(script)?.[1];
}

/** The folder of the workspace `name` (its folder or its package name), if there is one. */
function workspaceDir(name: string | undefined): string | undefined {
  return (manifest().workspaces ?? []).find((d) => d === name || manifest(d).name === name);
}

/** The file `npm pack` writes for the workspace in `dir`: `tiny-harness-conform-0.1.0.tgz`. */
function tarballName(dir: string): string {
  const { name, version } = manifest(dir) as Manifest & { version: string };
  return `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`;
}

/** What is wrong with `npm <verb> <words>` printed in the repository, or undefined. */
async function npmProblem(printed: Printed): Promise<string | undefined> {
  const verb = printed.tool.slice('npm '.length);
  const words = [...printed.words];
  let dir = '.';
  const workspace = words.findIndex((w) => w === '-w' || w === '--workspace');
  if (workspace >= 0) {
    const found = workspaceDir(words[workspace + 1]);
    if (!found) return `no workspace ${words[workspace + 1]}`;
    dir = found;
    words.splice(workspace, 2);
  }
  if (verb === 'pack') return dir === '.' ? 'the packages are packed with -w <workspace>' : undefined;
  if (verb === 'install') {
    const fromRegistry = words.find((w) => w.startsWith('@tiny-harness/'));
    if (fromRegistry) return `${fromRegistry} is not on the npm registry: install the tarball npm pack writes`;
    const tarballs = (manifest().workspaces ?? []).map(tarballName);
    const wrong = words.find((w) => w.endsWith('.tgz') && !tarballs.includes(w.split('/').at(-1)!));
    return wrong && `npm pack writes none of ${wrong} (it writes ${tarballs.join(', ')})`;
  }
  if (verb === 'exec') {
    const bin = words[words.indexOf('--') + 1];
    return bin && manifest(dir).bin?.[bin] ? undefined : `${dir} has no bin ${bin}`;
  }
  const name = verb === 'run' ? words.shift() : verb;
  if (!name || name.startsWith('<')) return undefined;
  const script = manifest(dir).scripts?.[name];
  if (script === undefined) return `${dir}/package.json has no script ${name}`;
  const sub = scriptSubcommand(script);
  const passed = words.indexOf('--');
  if (sub && passed >= 0) return cliProblem([sub, ...words.slice(passed + 1)]);
  return undefined;
}

describe('the first run: the commands printed work as printed', () => {
  let printed: Printed[];
  before(() => {
    printed = printingFiles().flatMap(printedCommands);
  });

  it('the pages and the sources print commands (the scan finds them)', () => {
    const tools = new Set(printed.map((p) => p.tool));
    for (const tool of ['npx tiny-harness', 'npm start', 'npm test', 'npm run'])
      assert.ok(tools.has(tool), `found no "${tool}"`);
    const files = new Set(printed.map((p) => p.file));
    for (const file of ['README.md', 'src/serve.ts', 'src/client/chat.ts']) assert.ok(files.has(file), file);
  });

  it('each npx tiny-harness command names a subcommand and flags the command line has', async () => {
    const problems: string[] = [];
    for (const p of printed.filter((p) => p.tool === 'npx tiny-harness')) {
      const problem = await cliProblem(p.words);
      if (problem) problems.push(`${p.file}: ${p.text}: ${problem}`);
    }
    assert.deepEqual(problems, []);
  });

  it('each npm start, npm test, npm run and npm exec names a script or bin of package.json, with flags it takes', async () => {
    const problems: string[] = [];
    for (const p of printed.filter((p) => p.tool.startsWith('npm '))) {
      const problem = await npmProblem(p);
      if (problem) problems.push(`${p.file}: ${p.text}: ${problem}`);
    }
    assert.deepEqual(problems, []);
  });

  it('each npx @tiny-harness/… command follows the npm pack and npm install of its tarball', () => {
    const problems: string[] = [];
    for (const p of printed.filter((p) => p.tool.startsWith('npx @tiny-harness/'))) {
      const problem = packageProblem(p, read(p.file));
      if (problem) problems.push(`${p.file}: ${p.text}: ${problem}`);
    }
    assert.deepEqual(problems, []);
  });

  it('the checks catch a wrong command', async () => {
    const wrong = (tool: string, words: string[]) => ({ file: 'x', text: '', tool, words });
    assert.equal(await cliProblem(['serve', '--prot', '9000']), 'serve has no --prot');
    assert.equal(await cliProblem(['chta']), 'no subcommand chta');
    assert.equal(await npmProblem(wrong('npm start', ['--', '--prot', '9000'])), 'serve has no --prot');
    assert.equal(await npmProblem(wrong('npm run', ['chat'])), './package.json has no script chat');
    assert.equal(
      await npmProblem(wrong('npm exec', ['-w', '@tiny-harness/x', '--', 'x'])),
      'no workspace @tiny-harness/x',
    );
    assert.match((await npmProblem(wrong('npm install', ['@tiny-harness/conform'])))!, /not on the npm registry/);
    assert.match(
      (await npmProblem(wrong('npm install', ['/tmp/tiny-harness-conform-0.0.9.tgz'])))!,
      /npm pack writes none/,
    );
    const kit = wrong('npx @tiny-harness/conform', ['http://127.0.0.1:8080']);
    assert.match(packageProblem(kit, 'npx @tiny-harness/conform http://127.0.0.1:8080')!, /not on the npm registry/);
  });
});

/**
 * What is wrong with `npx @tiny-harness/<name>` printed in `file`: the packages are not on the
 * npm registry (npx would get a 404), so only after the file showed how to pack and install one.
 */
function packageProblem(printed: Printed, fileText: string): string | undefined {
  const name = printed.tool.slice('npx '.length);
  const dir = workspaceDir(name);
  if (!dir) return `no workspace ${name}`;
  const packs = new RegExp(`npm pack -w ${name}\\b`).test(fileText);
  const installs = fileText.includes(`npm install /tmp/${tarballName(dir)}`);
  return packs && installs ? undefined : `${name} is not on the npm registry: show npm pack and npm install first`;
}

describe('the first run: what the README says', () => {
  it('the README names the default port serve --help gives, and shows npm start with another', async () => {
    const port = /--port <port>[\s\S]*?\(default: (\d+)\)/.exec(await help('serve'))?.[1];
    assert.ok(port, 'serve --help gives the default port');
    const readme = read('README.md');
    assert.ok(readme.includes(`The port is ${port} unless you give another`), `the README says ${port} is the default`);
    assert.match(readme, /`npm start -- --port \d+`/);
  });

  it("the README's time for the test suite is the one docs/testing.md measured", () => {
    const measured = /quiet, `npm test`: ([\d,]+) tests in (\d+ min \d+ s)/.exec(read('docs/testing.md'));
    assert.ok(measured, 'docs/testing.md gives the time of npm test on a quiet machine');
    const readme = read('README.md');
    const quoted = [...readme.matchAll(/(\d+ min \d+ s) on (?:a quiet )?2 cores/g)].map((m) => m[1]);
    assert.ok(quoted.length >= 2, 'the README quotes it beside both npm test lines');
    assert.deepEqual(new Set(quoted), new Set([measured[2]]));
    assert.ok(readme.includes(`${measured[1]} tests`), `the README counts ${measured[1]} tests`);
  });
});

describe('the first run: prepare builds only a stale dist/', () => {
  it('package.json runs the build from prepare only through the freshness check', () => {
    assert.equal(manifest().scripts?.prepare, 'node scripts/build-if-stale.mjs');
  });

  it('the check covers what npm run build reads and writes', () => {
    const build = manifest().scripts?.build ?? '';
    const covered = (file: string) => BUILD_INPUTS.some((input) => file === input || file.startsWith(`${input}/`));
    for (const file of build.match(/[\w./-]+\.(?:mjs|json)\b/g) ?? []) assert.ok(covered(file), `${file} is an input`);
    for (const workspace of manifest().workspaces ?? []) {
      for (const file of ['src/index.ts', 'package.json', 'tsconfig.json'])
        assert.ok(covered(join(workspace, file)), `${workspace}/${file} is an input`);
      assert.ok(BUILD_OUTPUTS.includes(join(workspace, 'dist/index.js')), `${workspace}/dist is an output`);
    }
    for (const file of ['src/cli.ts', 'web/src/main.ts', 'web/style.css', 'package-lock.json'])
      assert.ok(covered(file), file);
  });

  it('current when every output is newer than every input; stale naming why otherwise', () => {
    const root = mkdtempSync(join(tmpdir(), 'tiny-harness-fresh-'));
    try {
      const at = (file: string, seconds: number) => {
        mkdirSync(dirname(join(root, file)), { recursive: true });
        writeFileSync(join(root, file), file);
        utimesSync(join(root, file), seconds, seconds);
      };
      const inputs = ['src', 'package.json'];
      const outputs = ['dist/a.js', 'dist/b.js'];
      at('src/x/y.ts', 1000);
      at('src/z.ts', 1000);
      utimesSync(join(root, 'src/x'), 1000, 1000);
      utimesSync(join(root, 'src'), 1000, 1000);
      at('package.json', 1000);
      assert.equal(staleness(root, outputs, inputs), 'dist/a.js is missing');
      at('dist/a.js', 2000);
      at('dist/b.js', 2001);
      assert.equal(staleness(root, outputs, inputs), undefined);
      at('src/x/y.ts', 3000);
      assert.equal(staleness(root, outputs, inputs), 'src/x/y.ts is newer than the build');
      at('src/x/y.ts', 1000);
      unlinkSync(join(root, 'src/z.ts'));
      assert.equal(staleness(root, outputs, inputs), 'src is newer than the build', 'a file removed');
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
