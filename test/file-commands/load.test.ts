import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { loadCommandFiles } from '../../src/file-commands/index.js';
import { commandFile, tempFolder, writeCommand } from './support.js';

describe('loading a commands folder', () => {
  it('loads every *.md file in file-name order (code-unit sort), named after the file', async () => {
    const folder = tempFolder();
    try {
      for (const name of ['zeta', 'b-2', 'a', 'b-10', 'a1']) writeCommand(folder.dir, `${name}.md`, `The ${name} command`);
      writeFileSync(join(folder.dir, 'notes.txt'), 'not a command');
      writeFileSync(join(folder.dir, '.hidden.md'), 'an editor swap or lock file');
      mkdirSync(join(folder.dir, 'nested'));
      writeCommand(join(folder.dir, 'nested'), 'deep.md', 'Not read: the folder is not searched recursively');

      const { commands, problems } = await loadCommandFiles(folder.dir);
      assert.deepEqual(problems, []);
      assert.deepEqual(
        commands.map((c) => c.name),
        ['a', 'a1', 'b-10', 'b-2', 'zeta'],
      );
      assert.deepEqual(commands[0], { name: 'a', path: join(folder.dir, 'a.md'), fileName: 'a.md', description: 'The a command', template: 'Do $ARGUMENTS.' });
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
      writeFileSync(join(folder.dir, 'typo.md'), commandFile(['description: d', 'argumnet-hint: <x>']));
      writeFileSync(join(folder.dir, 'empty.md'), commandFile(['description: d'], ''));
      writeCommand(folder.dir, 'later.md', 'Also works');

      const { commands, problems } = await loadCommandFiles(folder.dir);
      assert.deepEqual(commands.map((c) => c.name), ['good', 'later']);
      assert.deepEqual(
        problems.map((p) => p.slice(0, p.indexOf(': '))),
        ['bad-yaml.md', 'empty.md', 'no-description.md', 'typo.md'].map((f) => join(folder.dir, f)),
      );
      assert.match(problems[0]!, /: the front matter is not valid YAML \(line 2/);
      assert.match(problems[1]!, /: the prompt is empty/);
      assert.match(problems[2]!, /: "description" is missing/);
      assert.match(problems[3]!, /: unknown front-matter key "argumnet-hint"/);
    } finally {
      folder.dispose();
    }
  });

  it('a file name that is not a valid command name is reported and skipped', async () => {
    const folder = tempFolder();
    try {
      for (const name of ['Review', '1st', 'with space', 'under_score', '-dash', 'ok']) writeCommand(folder.dir, `${name}.md`, 'd');
      writeCommand(folder.dir, 'UPPER.MD', 'not *.md, not read');
      const { commands, problems } = await loadCommandFiles(folder.dir);
      assert.deepEqual(commands.map((c) => c.name), ['ok']);
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
      assert.deepEqual(commands.map((c) => c.name), ['review']);
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
      assert.deepEqual(commands.map((c) => c.name), ['fine']);
      assert.deepEqual(problems, [
        `${join(folder.dir, 'dangling.md')}: cannot be read (it does not exist, or is a link to nothing)`,
        `${join(folder.dir, 'folder.md')}: cannot be read (it is a directory)`,
      ]);

      const missing = join(folder.dir, 'missing');
      assert.deepEqual(await loadCommandFiles(missing), { commands: [], problems: [`${missing}: the commands folder cannot be read (it does not exist, or is a link to nothing)`] });
    } finally {
      folder.dispose();
    }
  });
});
