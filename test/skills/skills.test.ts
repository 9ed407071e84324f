import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  loadSkills,
  MAX_SKILL_FILE_BYTES,
  readSkillFile,
  skillsCommand,
  skillToolEntry,
  SkillsFolder,
} from '../../src/skills/index.js';
import { invoke, recordingLogger, RecordingStarter, tempFolder, ObservedRegistry } from '../file-commands/support.js';
import { waitFor } from '../support/wait.js';

function writeSkill(root: string, folder: string, frontMatter: string[], body = 'Do the thing.'): string {
  const dir = join(root, folder);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'SKILL.md'), ['---', ...frontMatter, '---', body, ''].join('\n'));
  return dir;
}

describe('skills: loading', () => {
  it('reads name, description and body of each folder with a SKILL.md; bad ones are skipped with a reason', async () => {
    const temp = tempFolder();
    try {
      writeSkill(temp.dir, 'pdf', ['name: pdf', 'description: Fill in PDF forms'], 'Use pdftk.\nSee forms.md.');
      writeSkill(temp.dir, 'wrong-name', ['name: other', 'description: Mismatch']);
      writeSkill(temp.dir, 'no-description', ['name: no-description']);
      writeSkill(temp.dir, 'Bad_Name', ['name: Bad_Name', 'description: Not a command name']);
      writeSkill(temp.dir, 'broken', ['name: [unclosed', 'description: x']);
      writeSkill(temp.dir, 'help', ['name: help', 'description: Taken by a command']);
      mkdirSync(join(temp.dir, 'not-a-skill'));
      const loaded = await loadSkills(temp.dir, new Set(['help']));
      assert.deepEqual(
        loaded.skills.map(({ name, description, body }) => ({ name, description, body })),
        [{ name: 'pdf', description: 'Fill in PDF forms', body: 'Use pdftk.\nSee forms.md.' }],
      );
      const reasons = Object.fromEntries(loaded.problems.map((line) => [line.split(':')[0], line]));
      assert.deepEqual(Object.keys(reasons).sort(), ['Bad_Name', 'broken', 'help', 'no-description', 'wrong-name']);
      assert.match(reasons['wrong-name']!, /"name" is "other" but the folder is "wrong-name"/);
      assert.match(reasons['no-description']!, /"description" must be set/);
      assert.match(reasons['Bad_Name']!, /"name" must be set and match/);
      assert.match(reasons['broken']!, /not valid YAML/);
      assert.match(reasons['help']!, /\/help is already a command/);
      for (const line of loaded.problems) assert.ok(!line.includes(temp.dir), `no path in "${line}"`);
    } finally {
      temp.dispose();
    }
  });

  it('a folder that cannot be listed is a folder problem, not a throw', async () => {
    const loaded = await loadSkills('/nonexistent/skills-folder');
    assert.deepEqual(loaded.skills, []);
    assert.match(loaded.folderProblem ?? '', /does not exist/);
  });
});

describe('skills: reading a skill file (TOOL-6)', () => {
  it('TOOL-6: reads files inside the skill folder; refuses "..", absolute paths and links leading out', async () => {
    const temp = tempFolder();
    try {
      const root = join(temp.dir, 'skills');
      writeFileSync(join(temp.dir, 'secret.txt'), 'the secret');
      const dir = writeSkill(root, 'pdf', ['name: pdf', 'description: PDF']);
      mkdirSync(join(dir, 'reference'));
      writeFileSync(join(dir, 'reference', 'forms.md'), 'Forms reference');
      symlinkSync(join(temp.dir, 'secret.txt'), join(dir, 'link-out.txt'));
      symlinkSync(temp.dir, join(dir, 'dir-out'));
      symlinkSync(join(dir, 'reference', 'forms.md'), join(dir, 'link-in.md'));
      const [skill] = (await loadSkills(root)).skills;
      assert.ok(skill);

      assert.deepEqual(await readSkillFile(skill.dir, 'reference/forms.md'), { ok: true, text: 'Forms reference' });
      assert.deepEqual(await readSkillFile(skill.dir, 'link-in.md'), { ok: true, text: 'Forms reference' });
      for (const [file, why] of [
        ['../../secret.txt', /leads out of the skill's folder \(".."\)/],
        ['reference/../../pdf/SKILL.md', /leads out of the skill's folder \(".."\)/],
        [join(temp.dir, 'secret.txt'), /not a relative path/],
        ['/etc/passwd', /not a relative path/],
        ['link-out.txt', /leads out of the skill's folder \(through a link\)/],
        ['dir-out/secret.txt', /leads out of the skill's folder \(through a link\)/],
        ['reference', /not a regular file/],
        ['missing.md', /cannot be read \(it does not exist/],
      ] as const) {
        const read = await readSkillFile(skill.dir, file);
        assert.equal(read.ok, false, `${file} is refused`);
        if (!read.ok) {
          assert.match(read.problem, why, file);
          assert.ok(!read.problem.includes('the secret'));
        }
      }
    } finally {
      temp.dispose();
    }
  });

  it('TOOL-6: a file over the size bound is refused', async () => {
    const temp = tempFolder();
    try {
      const dir = writeSkill(temp.dir, 'big', ['name: big', 'description: Big']);
      writeFileSync(join(dir, 'huge.txt'), 'x'.repeat(MAX_SKILL_FILE_BYTES + 1));
      const read = await readSkillFile(dir, 'huge.txt');
      assert.equal(read.ok, false);
      if (!read.ok) assert.match(read.problem, /over the limit/);
    } finally {
      temp.dispose();
    }
  });

  it('TOOL-6: the skill tool gives the body, a file, and refuses an escape and an unknown skill', async () => {
    const temp = tempFolder();
    try {
      writeFileSync(join(temp.dir, 'secret.txt'), 'the secret');
      const root = join(temp.dir, 'skills');
      const dir = writeSkill(root, 'pdf', ['name: pdf', 'description: Fill in PDF forms'], 'Body of pdf.');
      writeFileSync(join(dir, 'forms.md'), 'Forms');
      const entry = skillToolEntry((await loadSkills(root)).skills, 10_000);
      assert.equal(entry.name, 'skill');
      assert.match(entry.description, /- pdf: Fill in PDF forms/);
      const signal = new AbortController().signal;
      assert.deepEqual(await entry.call({ name: 'pdf' }, signal), { status: 'succeeded', output: 'Body of pdf.' });
      assert.deepEqual(await entry.call({ name: 'pdf', file: 'forms.md' }, signal), {
        status: 'succeeded',
        output: 'Forms',
      });
      const escape = await entry.call({ name: 'pdf', file: '../../secret.txt' }, signal);
      assert.equal(escape.status, 'failed');
      assert.doesNotMatch(escape.output, /the secret/);
      const unknown = await entry.call({ name: 'nope' }, signal);
      assert.equal(unknown.status, 'failed');
      assert.match(unknown.output, /no skill named "nope"\. Skills: pdf/);
    } finally {
      temp.dispose();
    }
  });
});

describe('skills: the folder', () => {
  it('CMD-38: registers /<skill-name>, which puts the body with the arguments in the turn inline; /skills lists them', async () => {
    const temp = tempFolder();
    const registry = new ObservedRegistry();
    registry.register({ name: 'help', description: 'Help', handler: () => ({ text: 'help' }) });
    const starter = new RecordingStarter();
    const log = recordingLogger();
    const folder = new SkillsFolder({ dir: temp.dir, log });
    try {
      writeSkill(temp.dir, 'pdf', ['name: pdf', 'description: Fill in PDF forms'], 'Fill the form.');
      writeSkill(temp.dir, 'help', ['name: help', 'description: Taken']);
      registry.register(skillsCommand(folder));
      await folder.load({ registry, starter });
      assert.deepEqual(
        folder.list().map((s) => s.name),
        ['pdf'],
      );
      assert.ok(log.lines.some((line) => line.startsWith('warn skill skipped: help: /help is already a command')));

      const result = await invoke(registry, 'pdf', 'invoice.pdf');
      assert.equal(result.taskRef, undefined, 'no sub-task');
      assert.equal(starter.calls.length, 0);
      assert.deepEqual(result.data, { inline: 'started' });
      assert.ok(result.followUp, 'the turn follows the reply');
      assert.equal(starter.turns[0]!.prompt, 'Fill the form.\n\nARGUMENTS: invoice.pdf');
      assert.equal(starter.turns[0]!.options.label, '/pdf');

      const listing = await invoke(registry, 'skills', '');
      assert.deepEqual(listing.data, {
        skills: [{ name: 'pdf', description: 'Fill in PDF forms' }],
        skipped: ['help: /help is already a command, which a skill cannot replace; rename the skill'],
      });
      assert.match(listing.text ?? '', /\/pdf: Fill in PDF forms/);
    } finally {
      await folder.close();
      temp.dispose();
    }
  });

  it('with watch(), a skill added, changed or removed shows in the list and the registry', async () => {
    const temp = tempFolder();
    const registry = new ObservedRegistry();
    const folder = new SkillsFolder({ dir: temp.dir, debounceMs: 20 });
    try {
      await folder.load({ registry, starter: new RecordingStarter() });
      await folder.watch();
      writeSkill(temp.dir, 'pdf', ['name: pdf', 'description: First']);
      await waitFor('/pdf is registered', registry.changes, 'change', () => registry.has('pdf'));
      assert.equal(folder.list()[0]!.description, 'First');

      writeSkill(temp.dir, 'pdf', ['name: pdf', 'description: Second']);
      await waitFor(
        '/pdf is changed',
        registry.changes,
        'change',
        () => registry.get('pdf')?.description === 'Second (skill)',
      );
      assert.equal(folder.list()[0]!.description, 'Second');

      rmSync(join(temp.dir, 'pdf'), { recursive: true });
      await waitFor('/pdf is gone', registry.changes, 'change', () => !registry.has('pdf'));
      assert.deepEqual(folder.list(), []);
    } finally {
      await folder.close();
      temp.dispose();
    }
  });

  it('a folder removed while watched keeps its skills, warns once, and loads again when it is back', async () => {
    const temp = tempFolder();
    const dir = join(temp.dir, 'skills');
    const registry = new ObservedRegistry();
    const log = recordingLogger();
    const folder = new SkillsFolder({ dir, debounceMs: 20, log });
    try {
      writeSkill(dir, 'pdf', ['name: pdf', 'description: PDF']);
      await folder.load({ registry, starter: new RecordingStarter() });
      await folder.watch();
      rmSync(dir, { recursive: true });
      const unreadable = () => log.lines.filter((line) => line.includes('the skills folder cannot be read'));
      await waitFor('the missing folder is logged', log.events, 'line', () => unreadable().length > 0);
      assert.deepEqual(
        folder.list().map((s) => s.name),
        ['pdf'],
        'the skills stay',
      );
      writeSkill(dir, 'other', ['name: other', 'description: Other']);
      await waitFor('/other is registered', registry.changes, 'change', () => registry.has('other'));
      assert.equal(registry.has('pdf'), false);
      assert.equal(unreadable().length, 1, 'warned once, not at every retry');
      for (const line of unreadable()) assert.match(line, /does not exist/);
    } finally {
      await folder.close();
      temp.dispose();
    }
  });
});
