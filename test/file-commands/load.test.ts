import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { loadCommandFiles, MAX_COMMAND_FILE_BYTES, MAX_COMMAND_FILES } from '../../src/file-commands/index.js';
import { commandFile, makeFifo, tempFolder, writeCommand } from './support.js';

const ONLY_REGULAR = 'a command is a regular *.md file';

describe('loading a commands folder', () => {
  it('loads every *.md file in file-name order (code-unit sort), named after the file', async () => {
    const folder = tempFolder();
    try {
      for (const name of ['zeta', 'b-2', 'a', 'b-10', 'a1'])
        writeCommand(folder.dir, `${name}.md`, `The ${name} command`);
      writeFileSync(join(folder.dir, 'notes.txt'), 'not a command');
      writeFileSync(join(folder.dir, '.hidden.md'), 'an editor swap or lock file');
      mkdirSync(join(folder.dir, 'frontend'));
      writeCommand(join(folder.dir, 'frontend'), 'deep.md', 'Review a component');
      writeCommand(join(folder.dir, 'frontend'), 'zeta.md', 'A second zeta');
      mkdirSync(join(folder.dir, '.git'));
      writeCommand(join(folder.dir, '.git'), 'hook.md', 'Not read: hidden folders are not');

      const { commands, problems } = await loadCommandFiles(folder.dir);
      assert.deepEqual(
        commands.map((c) => c.name),
        ['a', 'a1', 'b-10', 'b-2', 'deep', 'zeta'],
        'subfolders are read; in path order, a file of a name taken already is skipped',
      );
      assert.equal(
        commands.find((c) => c.name === 'deep')?.description,
        'Review a component (frontend)',
        'the folder shows in the description',
      );
      assert.equal(
        commands.find((c) => c.name === 'zeta')?.fileName,
        join('frontend', 'zeta.md'),
        '"frontend/zeta.md" comes before "zeta.md"',
      );
      assert.deepEqual(problems, [
        `${join(folder.dir, 'zeta.md')}: /zeta comes from ${join('frontend', 'zeta.md')} already, first in path order; rename one of them`,
      ]);
      assert.deepEqual(commands[0], {
        name: 'a',
        path: join(folder.dir, 'a.md'),
        fileName: 'a.md',
        description: 'The a command',
        template: 'Do $ARGUMENTS.',
      });
    } finally {
      folder.dispose();
    }
  });

  it('a broken file is reported with its path and the reason, and the others still load', async () => {
    const folder = tempFolder();
    try {
      writeCommand(folder.dir, 'good.md', 'Works');
      writeFileSync(join(folder.dir, 'bad-yaml.md'), commandFile(['description: one: two']));
      writeFileSync(join(folder.dir, 'no-description.md'), commandFile(['argument-hint: <x>']));
      writeFileSync(join(folder.dir, 'only-args.md'), '$ARGUMENTS\n');
      writeFileSync(join(folder.dir, 'typo.md'), commandFile(['description: d', 'argumnet-hint: <x>']));
      writeFileSync(join(folder.dir, 'empty.md'), commandFile(['description: d'], ''));
      writeCommand(folder.dir, 'later.md', 'Also works');

      const { commands, problems } = await loadCommandFiles(folder.dir);
      assert.deepEqual(
        commands.map((c) => c.name),
        ['good', 'later', 'no-description', 'only-args'],
        'a file without a description is described by its prompt',
      );
      // CMD-38: a prompt with no words of its own is described by the file's name, never by template syntax.
      assert.equal(commands.at(-1)!.description, 'Command file only-args.md');
      assert.equal(commands.at(-2)!.description, 'Do.');
      assert.deepEqual(
        problems.map((p) => p.slice(0, p.indexOf(': '))),
        ['bad-yaml.md', 'empty.md', 'typo.md'].map((f) => join(folder.dir, f)),
      );
      assert.match(problems[0]!, /: the front matter is not valid YAML \(line 2/);
      assert.match(problems[1]!, /: the prompt is empty/);
      assert.match(problems[2]!, /: unknown front-matter key "argumnet-hint"/);
    } finally {
      folder.dispose();
    }
  });

  it('a file name that is not a valid command name is reported and skipped', async () => {
    const folder = tempFolder();
    try {
      for (const name of ['Review', '1st', 'with space', 'under_score', '-dash', 'ok'])
        writeCommand(folder.dir, `${name}.md`, 'd');
      writeCommand(folder.dir, 'UPPER.MD', 'not *.md, not read');
      const { commands, problems } = await loadCommandFiles(folder.dir);
      assert.deepEqual(
        commands.map((c) => c.name),
        ['ok'],
      );
      assert.equal(problems.length, 5);
      for (const name of ['-dash', '1st', 'Review', 'under_score', 'with space']) {
        const problem = problems.find((p) => p.startsWith(`${join(folder.dir, `${name}.md`)}: `));
        assert.ok(problem, `a problem for ${name}.md in ${JSON.stringify(problems)}`);
        assert.match(problem, new RegExp(`"${name}" is not a valid command name: it must match \\^\\[a-z\\]`));
      }
    } finally {
      folder.dispose();
    }
  });

  it('a name taken by a built-in or another command is reported and skipped', async () => {
    const folder = tempFolder();
    try {
      writeCommand(folder.dir, 'help.md', 'Would shadow /help');
      writeCommand(folder.dir, 'model.md', 'Would shadow /model');
      writeCommand(folder.dir, 'review.md', 'Fine');
      const { commands, problems } = await loadCommandFiles(folder.dir, { reservedNames: ['help', 'model', 'status'] });
      assert.deepEqual(
        commands.map((c) => c.name),
        ['review'],
      );
      assert.deepEqual(problems, [
        `${join(folder.dir, 'help.md')}: /help is already a built-in or registered command, which a file cannot replace; rename the file`,
        `${join(folder.dir, 'model.md')}: /model is already a built-in or registered command, which a file cannot replace; rename the file`,
      ]);
    } finally {
      folder.dispose();
    }
  });

  it('an unreadable entry is reported with its path; a missing folder is a problem, not a throw', async () => {
    const folder = tempFolder();
    try {
      mkdirSync(join(folder.dir, 'folder.md'));
      symlinkSync(join(folder.dir, 'nowhere'), join(folder.dir, 'dangling.md'));
      writeCommand(folder.dir, 'fine.md', 'Fine');
      const { commands, problems } = await loadCommandFiles(folder.dir);
      assert.deepEqual(
        commands.map((c) => c.name),
        ['fine'],
      );
      assert.deepEqual(problems, [
        `${join(folder.dir, 'dangling.md')}: cannot be read (it does not exist, or is a link to nothing)`,
        `${join(folder.dir, 'folder.md')}: not a regular file (it is a directory); a command is a regular *.md file`,
      ]);

      const missing = join(folder.dir, 'missing');
      assert.deepEqual(await loadCommandFiles(missing), {
        commands: [],
        problems: [`${missing}: the commands folder cannot be read (it does not exist, or is a link to nothing)`],
        folderProblem: 'it does not exist, or is a link to nothing',
      });
    } finally {
      folder.dispose();
    }
  });

  it('only regular files are read: a named pipe, a link to a pipe, to a device or to a folder is skipped without blocking', async () => {
    const folder = tempFolder();
    try {
      makeFifo(join(folder.dir, 'pipe.md'));
      makeFifo(join(folder.dir, 'target-pipe'));
      symlinkSync(join(folder.dir, 'target-pipe'), join(folder.dir, 'to-pipe.md'));
      symlinkSync('/dev/zero', join(folder.dir, 'to-device.md'));
      mkdirSync(join(folder.dir, 'target-folder'));
      symlinkSync(join(folder.dir, 'target-folder'), join(folder.dir, 'to-folder.md'));
      writeCommand(folder.dir, 'target.txt', 'A regular file behind a link');
      symlinkSync(join(folder.dir, 'target.txt'), join(folder.dir, 'linked.md'));
      writeCommand(folder.dir, 'plain.md', 'Plain');

      const { commands, problems } = await loadCommandFiles(folder.dir);
      assert.deepEqual(
        commands.map((c) => [c.name, c.description]),
        [
          ['linked', 'A regular file behind a link'],
          ['plain', 'Plain'],
        ],
      );
      assert.deepEqual(problems, [
        `${join(folder.dir, 'pipe.md')}: not a regular file (it is a named pipe (FIFO)); ${ONLY_REGULAR}`,
        `${join(folder.dir, 'to-device.md')}: not a regular file (it is a link to a character device); ${ONLY_REGULAR}`,
        `${join(folder.dir, 'to-folder.md')}: not a regular file (it is a link to a directory); ${ONLY_REGULAR}`,
        `${join(folder.dir, 'to-pipe.md')}: not a regular file (it is a link to a named pipe (FIFO)); ${ONLY_REGULAR}`,
      ]);
    } finally {
      folder.dispose();
    }
  });

  it('a file over 64 KiB is skipped with its size, however large, and the others still load', async () => {
    const folder = tempFolder();
    try {
      const header = commandFile(['description: Exactly at the limit'], '');
      writeFileSync(
        join(folder.dir, 'at-limit.md'),
        header + 'x'.repeat(MAX_COMMAND_FILE_BYTES - Buffer.byteLength(header)),
      );
      writeFileSync(
        join(folder.dir, 'over-limit.md'),
        header + 'x'.repeat(MAX_COMMAND_FILE_BYTES + 1 - Buffer.byteLength(header)),
      );
      // 50 MB without writing them: a sparse file. It is refused on its size, before any reading.
      writeCommand(folder.dir, 'huge.md', 'Huge');
      truncateSync(join(folder.dir, 'huge.md'), 50 * 1024 * 1024);

      const { commands, problems } = await loadCommandFiles(folder.dir);
      assert.deepEqual(
        commands.map((c) => c.name),
        ['at-limit'],
      );
      assert.equal(commands[0]!.template.length, MAX_COMMAND_FILE_BYTES - Buffer.byteLength(header));
      assert.deepEqual(problems, [
        `${join(folder.dir, 'huge.md')}: 52428800 bytes, over the limit of 65536 bytes (64 KiB) for a command file; make the prompt shorter`,
        `${join(folder.dir, 'over-limit.md')}: 65537 bytes, over the limit of 65536 bytes (64 KiB) for a command file; make the prompt shorter`,
      ]);
    } finally {
      folder.dispose();
    }
  });

  it('a file the server may not read is reported as such', async () => {
    const folder = tempFolder();
    try {
      writeCommand(folder.dir, 'secret.md', 'Not for us');
      chmodSync(join(folder.dir, 'secret.md'), 0o000);
      writeCommand(folder.dir, 'open.md', 'For us');
      const { commands, problems } = await loadAsUnprivileged(folder.dir);
      assert.deepEqual(commands, ['open']);
      assert.deepEqual(problems, [`${join(folder.dir, 'secret.md')}: cannot be read (permission denied)`]);
    } finally {
      folder.dispose();
    }
  });

  it(`at most ${MAX_COMMAND_FILES} files are read, the first in file-name order; the folder's problem says how many were skipped`, async () => {
    const folder = tempFolder();
    try {
      const names = Array.from({ length: MAX_COMMAND_FILES + 2 }, (_, i) => `c${String(i).padStart(4, '0')}`);
      for (const name of names) writeCommand(folder.dir, `${name}.md`, name);
      const { commands, problems } = await loadCommandFiles(folder.dir);
      assert.equal(commands.length, MAX_COMMAND_FILES);
      assert.equal(commands.at(-1)!.name, names[MAX_COMMAND_FILES - 1]);
      assert.deepEqual(problems, [
        `${folder.dir}: the commands folder holds ${MAX_COMMAND_FILES + 2} *.md files, more than the ${MAX_COMMAND_FILES} read; ` +
          `the 2 after ${names[MAX_COMMAND_FILES - 1]}.md in file-name order are skipped`,
      ]);
    } finally {
      folder.dispose();
    }
  });

  it('an aborted read stops reading files', async () => {
    const folder = tempFolder();
    try {
      for (const name of ['a', 'b', 'c']) writeCommand(folder.dir, `${name}.md`, name);
      const aborted = new AbortController();
      aborted.abort();
      assert.deepEqual(await loadCommandFiles(folder.dir, { signal: aborted.signal }), {
        commands: [],
        problems: [],
        folders: [],
      });
    } finally {
      folder.dispose();
    }
  });
});

/**
 * Loads a folder as a user without privileges: root reads every file whatever its mode, so as
 * root the load runs in a child process as `nobody`, which needs only to traverse the folder.
 */
async function loadAsUnprivileged(dir: string): Promise<{ commands: string[]; problems: string[] }> {
  if (process.getuid?.() !== 0) {
    const { commands, problems } = await loadCommandFiles(dir);
    return { commands: commands.map((c) => c.name), problems };
  }
  chmodSync(dir, 0o755);
  const script = `
    const { loadCommandFiles } = await import(${JSON.stringify(LOAD_MODULE)});
    const { commands, problems } = await loadCommandFiles(${JSON.stringify(dir)});
    process.stdout.write(JSON.stringify({ commands: commands.map((c) => c.name), problems }));`;
  const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    uid: NOBODY,
    gid: NOBODY,
  });
  return JSON.parse(stdout) as { commands: string[]; problems: string[] };
}

const NOBODY = 65534;
const LOAD_MODULE = new URL('../../src/file-commands/index.ts', import.meta.url).href;
const run = promisify(execFile);
