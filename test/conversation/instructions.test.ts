import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ProjectInstructions, type ProjectInstructionsOptions } from '../../src/conversation/instructions.js';
import { memoryCommand } from '../../src/commands/builtins/memory.js';
import type { InstructionFiles } from '../../src/commands/builtins/ports.js';
import { makeFifo, recordingLogger } from '../file-commands/support.js';
import { within } from '../support/wait.js';

/** A project folder, instructions read from it, and its log; everything removed by `dispose()`. */
function project(paths: string[], options: Partial<ProjectInstructionsOptions> = {}) {
  const dir = mkdtempSync(join(tmpdir(), 'tiny-harness-instructions-'));
  const log = recordingLogger();
  const instructions = new ProjectInstructions({
    paths,
    baseDir: dir,
    maxChars: 1000,
    log,
    debounceMs: 20,
    ...options,
  });
  return {
    dir,
    log,
    instructions,
    write: (path: string, text: string) => writeFileSync(join(dir, path), text),
    async dispose() {
      await instructions.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

describe('project instruction files', () => {
  it('CMD-36: are read in the configured order, relative paths from the base folder, each named as configured', async () => {
    const p = project(['ZZ.md', 'docs/guide.md', 'AGENTS.md']);
    try {
      mkdirSync(join(p.dir, 'docs'));
      p.write('AGENTS.md', 'Be brief.');
      p.write('ZZ.md', 'Use British spelling.');
      p.write('docs/guide.md', 'Tests first.');
      await p.instructions.start();
      assert.deepEqual(p.instructions.files(), [
        { path: 'ZZ.md', text: 'Use British spelling.' },
        { path: 'docs/guide.md', text: 'Tests first.' },
        { path: 'AGENTS.md', text: 'Be brief.' },
      ]);
      assert.deepEqual(p.instructions.listing(), [
        { path: 'ZZ.md', chars: 21, status: 'loaded' },
        { path: 'docs/guide.md', chars: 12, status: 'loaded' },
        { path: 'AGENTS.md', chars: 9, status: 'loaded' },
      ]);
    } finally {
      await p.dispose();
    }
  });

  it('skip a missing file, keeping the others in order, and say so once', async () => {
    const p = project(['one.md', 'gone.md', 'two.md']);
    try {
      p.write('one.md', 'One.');
      p.write('two.md', 'Two.');
      await p.instructions.start();
      assert.deepEqual(
        p.instructions.files().map((file) => file.path),
        ['one.md', 'two.md'],
      );
      assert.deepEqual(p.instructions.listing()[1], { path: 'gone.md', chars: 0, status: 'missing' });
      await p.instructions.reload();
      const said = p.log.lines.filter((line) => line.includes('not found') && line.includes('"file":"gone.md"'));
      assert.equal(said.length, 1, p.log.lines.join('\n'));
    } finally {
      await p.dispose();
    }
  });

  it('refuse a file over the bound, naming it in the log once per change, and count it without keeping it', async () => {
    const p = project(['big.md', 'small.md'], { maxChars: 10 });
    try {
      p.write('small.md', 'Fits.');
      // Two bytes each in UTF-8: the bound counts characters.
      p.write('big.md', 'é'.repeat(100));
      await p.instructions.start();
      assert.deepEqual(p.instructions.files(), [{ path: 'small.md', text: 'Fits.' }]);
      assert.deepEqual(p.instructions.listing()[0], { path: 'big.md', chars: 100, status: 'too-large' });
      const warnings = () => p.log.lines.filter((line) => line.startsWith('warn') && line.includes('"file":"big.md"'));
      assert.equal(warnings().length, 1, p.log.lines.join('\n'));
      assert.match(warnings()[0]!, /100 characters, over the 10 allowed \(instructionsMaxChars\)/);
      assert.ok(
        !warnings()[0]!.includes(p.dir),
        'the log names the file as configured, not the folder it was read from',
      );

      await p.instructions.reload();
      assert.equal(warnings().length, 1, 'nothing changed: nothing said again');

      p.write('big.md', 'x'.repeat(50));
      await within(
        'the larger file read again',
        p.instructions.until((files) => files[0]!.chars === 50),
      );
      assert.equal(warnings().length, 2, 'a change is said again');

      p.write('big.md', 'Now fits.');
      await within(
        'the file that fits read',
        p.instructions.until((files) => files[0]!.status === 'loaded'),
      );
      assert.deepEqual(p.instructions.files(), [
        { path: 'big.md', text: 'Now fits.' },
        { path: 'small.md', text: 'Fits.' },
      ]);
    } finally {
      await p.dispose();
    }
  });

  it('read a file again when it changes, is saved by rename, is made, or is removed', async () => {
    const p = project(['AGENTS.md', 'later.md']);
    try {
      p.write('AGENTS.md', 'First.');
      await p.instructions.start();
      assert.deepEqual(p.instructions.files(), [{ path: 'AGENTS.md', text: 'First.' }]);

      p.write('AGENTS.md', 'Second, longer.');
      await within(
        'the change read',
        p.instructions.until((files) => files[0]!.chars === 15),
      );
      assert.deepEqual(p.instructions.files(), [{ path: 'AGENTS.md', text: 'Second, longer.' }]);

      // As editors save: a temporary file renamed over the old one.
      p.write('.AGENTS.md.swp', 'Third, saved by rename.');
      renameSync(join(p.dir, '.AGENTS.md.swp'), join(p.dir, 'AGENTS.md'));
      await within(
        'the renamed file read',
        p.instructions.until((files) => files[0]!.chars === 23),
      );

      p.write('later.md', 'Made later.');
      await within(
        'the new file read',
        p.instructions.until((files) => files[1]!.status === 'loaded'),
      );
      assert.deepEqual(
        p.instructions.files().map((file) => file.text),
        ['Third, saved by rename.', 'Made later.'],
      );

      rmSync(join(p.dir, 'AGENTS.md'));
      await within(
        'the removal seen',
        p.instructions.until((files) => files[0]!.status === 'missing'),
      );
      assert.deepEqual(p.instructions.files(), [{ path: 'later.md', text: 'Made later.' }]);
    } finally {
      await p.dispose();
    }
  });

  it('follow a file through a link, and one whose folder is made later', async () => {
    const p = project(['AGENTS.md', 'later/notes.md']);
    try {
      mkdirSync(join(p.dir, 'real'));
      p.write('real/guide.md', 'Linked.');
      symlinkSync(join(p.dir, 'real', 'guide.md'), join(p.dir, 'AGENTS.md'));
      await p.instructions.start();
      assert.deepEqual(p.instructions.files(), [{ path: 'AGENTS.md', text: 'Linked.' }]);

      p.write('real/guide.md', 'Linked, changed.');
      await within(
        'the linked file read again',
        p.instructions.until((files) => files[0]!.chars === 16),
      );

      mkdirSync(join(p.dir, 'later'));
      p.write('later/notes.md', 'Notes.');
      await within(
        'the file in the new folder read',
        p.instructions.until((files) => files[1]!.status === 'loaded'),
      );
      assert.deepEqual(
        p.instructions.files().map((file) => file.text),
        ['Linked, changed.', 'Notes.'],
      );
    } finally {
      await p.dispose();
    }
  });

  it('leave out what cannot be read, saying why, and never wait on a pipe', async () => {
    const p = project(['AGENTS.md', 'pipe.md']);
    try {
      mkdirSync(join(p.dir, 'AGENTS.md'));
      makeFifo(join(p.dir, 'pipe.md'));
      await within('the first reading, with a pipe among the files', p.instructions.start());
      assert.deepEqual(p.instructions.files(), []);
      assert.deepEqual(p.instructions.listing(), [
        { path: 'AGENTS.md', chars: 0, status: 'missing', problem: 'it is a folder' },
        { path: 'pipe.md', chars: 0, status: 'missing', problem: 'it is not a plain file' },
      ]);
      assert.ok(p.log.lines.some((line) => line.startsWith('warn instruction file left out: it is a folder')));
    } finally {
      await p.dispose();
    }
  });

  it('stop reading once closed: a wait for a reading ends at once', async () => {
    const p = project(['AGENTS.md']);
    try {
      await p.instructions.start();
      const waiting = p.instructions.nextReading();
      await p.instructions.close();
      await within('the wait ended by close', waiting);
      p.write('AGENTS.md', 'Too late.');
      await p.instructions.reload();
      assert.deepEqual(p.instructions.files(), [], 'a closed reader reads nothing more');
    } finally {
      await p.dispose();
    }
  });
});

describe('/memory', () => {
  const run = (files: InstructionFiles) => memoryCommand(files).handler({} as never) as { text: string; data: unknown };

  it('lists each file with its size and status, in order', () => {
    const listing = [
      { path: 'AGENTS.md', chars: 1234, status: 'loaded' as const },
      { path: 'gone.md', chars: 0, status: 'missing' as const },
      { path: 'big.md', chars: 60000, status: 'too-large' as const },
    ];
    const reply = run({ listing: () => listing, maxChars: 50000 });
    assert.deepEqual(reply.data, { files: listing });
    assert.equal(
      reply.text,
      [
        'Instruction files, sent after the system prompt in this order:',
        '  AGENTS.md: 1,234 characters, loaded',
        '  gone.md: missing: skipped',
        '  big.md: 60,000 characters, too large (the most is 50,000, "instructionsMaxChars"): left out',
      ].join('\n'),
    );
  });

  it('says how to add files when none is loaded', () => {
    const none = run({ listing: () => [], maxChars: 50000 });
    assert.match(
      none.text,
      /^No instruction files are configured\.\nInstruction files are listed under "instructions"/,
    );
    const missing = run({ listing: () => [{ path: 'AGENTS.md', chars: 0, status: 'missing' }], maxChars: 50000 });
    assert.match(missing.text, /AGENTS\.md: missing: skipped\nInstruction files are listed under "instructions"/);
  });
});
