/**
 * Tests that need a program the machine lacks: found like a shell finds it, skipped with the
 * install command outside CI (and listed at the end of `npm test`), failed under CI. The last two
 * run the real chat and page test files through scripts/run-tests.mjs with an empty PATH.
 */
import { after, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findProgram, inCI, missingReason, program, type Requirement } from './needs.js';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const folder = mkdtempSync(join(tmpdir(), 'tiny-harness-needs-'));
after(() => rmSync(folder, { recursive: true, force: true }));

const requirement = (name: string, present: boolean): Requirement => ({
  name,
  install: `apt-get install -y ${name}`,
  present: () => present,
});

interface Run {
  code: number | null;
  output: string;
}

/** `node scripts/run-tests.mjs <words>` with only `env` changed; killed after two minutes. */
function runTests(words: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['scripts/run-tests.mjs', ...words], {
      cwd: ROOT,
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (output += chunk));
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`run-tests ${words.join(' ')} did not end within 120 s:\n${output}`));
    }, 120_000);
    child.once('error', reject);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, output });
    });
  });
}

/** This environment with nothing on PATH (an empty folder), CI as given, no Chromium path given. */
function withoutPrograms(ci: string | undefined): NodeJS.ProcessEnv {
  const empty = join(folder, 'empty-path');
  mkdirSync(empty, { recursive: true });
  const env: NodeJS.ProcessEnv = { ...process.env, PATH: empty };
  delete env['TINY_HARNESS_CHROMIUM'];
  delete env['CI'];
  // Set by the runner that runs this file; left in, the inner runner would refuse to run files.
  delete env['NODE_TEST_CONTEXT'];
  if (ci !== undefined) env['CI'] = ci;
  return env;
}

describe('tests that need a program', () => {
  it('a program is found on PATH only as an executable file, or at a path with a slash', () => {
    const bin = join(folder, 'bin');
    mkdirSync(join(bin, 'a-folder'), { recursive: true });
    writeFileSync(join(bin, 'runnable'), '#!/bin/sh\n');
    chmodSync(join(bin, 'runnable'), 0o755);
    writeFileSync(join(bin, 'not-runnable'), '');
    chmodSync(join(bin, 'not-runnable'), 0o644);
    const path = ['/nonexistent', bin].join(delimiter);
    assert.equal(findProgram('runnable', path), join(bin, 'runnable'));
    assert.equal(findProgram('not-runnable', path), undefined);
    assert.equal(findProgram('a-folder', path), undefined);
    assert.equal(findProgram('runnable', ''), undefined);
    assert.equal(findProgram(join(bin, 'runnable'), ''), join(bin, 'runnable'));
    assert.equal(findProgram(join(bin, 'missing'), path), undefined);
    assert.equal(program(join(bin, 'runnable'), 'x').name, 'runnable');
  });

  it('the reason names each missing requirement and how to install it, and nothing present', () => {
    assert.equal(missingReason([requirement('tmux', true)]), '');
    assert.equal(
      missingReason([requirement('chromium', false), requirement('tmux', true), requirement('PostgreSQL', false)]),
      'needs chromium: apt-get install -y chromium; needs PostgreSQL: apt-get install -y PostgreSQL',
    );
  });

  it('CI is any value of CI but empty, 0 or false', () => {
    for (const value of ['true', '1', 'yes', 'TRUE']) assert.equal(inCI({ CI: value }), true, value);
    for (const value of [undefined, '', '0', 'false', 'False']) assert.equal(inCI({ CI: value }), false, String(value));
  });

  it('without tmux and Chromium, outside CI, the chat and page tests are skipped, and the run passes and lists them with the install command', async () => {
    const run = await runTests(['client/chat.test', 'web/page.test'], withoutPrograms(undefined));
    assert.equal(run.code, 0, run.output);
    assert.match(
      run.output,
      /^skipped: test\/client\/chat\.test\.ts "tiny-harness chat": needs tmux: apt-get install -y tmux$/m,
    );
    assert.match(
      run.output,
      /^skipped: test\/web\/page\.test\.ts "the chat page in Chromium": needs chromium: apt-get install -y chromium$/m,
    );
    assert.match(run.output, /^ℹ fail 0$/m);
  });

  it('without tmux and Chromium, under CI, the same run fails, naming the file and the install command', async () => {
    const run = await runTests(['client/chat.test', 'web/page.test'], withoutPrograms('true'));
    assert.notEqual(run.code, 0, run.output);
    assert.match(run.output, /✖ test\/client\/chat\.test\.ts: needs tmux: apt-get install -y tmux/);
    assert.match(run.output, /✖ test\/web\/page\.test\.ts: needs chromium: apt-get install -y chromium/);
    assert.match(run.output, /^ℹ fail 2$/m);
  });
});
