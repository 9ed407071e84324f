import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { RegisteredCommand } from '../../src/commands/index.js';
import {
  CommandFolder,
  loadCommandFiles,
  type LoadCommandFilesOptions,
  type LoadedCommandFiles,
} from '../../src/file-commands/index.js';
import {
  commandFile,
  invoke,
  makeFifo,
  recordingLogger,
  RecordingStarter,
  tempFolder,
  ObservedRegistry,
  writeCommand,
} from './support.js';
import { waitFor } from '../support/wait.js';

const handler = () => ({ text: 'built-in' });

/** A registry holding stand-ins for the built-ins, registered before any file command. */
function registryWithBuiltins(): { registry: ObservedRegistry; builtins: RegisteredCommand[] } {
  const registry = new ObservedRegistry();
  const builtins = ['help', 'model', 'status'].map((name) =>
    registry.register({ name, description: `The ${name} built-in`, handler }),
  );
  return { registry, builtins };
}

function names(registry: ObservedRegistry): string[] {
  return registry.list().map((c) => c.name);
}

describe('a commands folder', () => {
  it('load() creates a missing folder and registers its commands after the built-ins, in file-name order', async () => {
    const temp = tempFolder();
    const dir = join(temp.dir, 'data', 'commands');
    const { registry, builtins } = registryWithBuiltins();
    const folder = new CommandFolder({ dir, registry, starter: new RecordingStarter() });
    try {
      await folder.load();
      assert.ok(existsSync(dir), 'the folder was created');
      assert.deepEqual(names(registry), ['help', 'model', 'status']);

      writeCommand(dir, 'summarize.md', 'Summarize');
      writeCommand(dir, 'review.md', 'Review');
      await folder.reload();
      assert.deepEqual(names(registry), ['help', 'model', 'status', 'review', 'summarize']);
      assert.deepEqual(folder.names, ['review', 'summarize']);
      builtins.forEach((builtin) => assert.equal(registry.get(builtin.name), builtin, `/${builtin.name} untouched`));
    } finally {
      await folder.close();
      temp.dispose();
    }
  });

  it('logs each skipped file as a warning with its path; a file may not replace a built-in or a reserved name', async () => {
    const temp = tempFolder();
    const log = recordingLogger();
    const { registry, builtins } = registryWithBuiltins();
    writeCommand(temp.dir, 'help.md', 'My own help');
    writeCommand(temp.dir, 'later.md', 'Reserved for a command registered later');
    writeFileSync(join(temp.dir, 'broken.md'), commandFile(['descripton: typo']));
    writeCommand(temp.dir, 'ok.md', 'Fine');
    const folder = new CommandFolder({
      dir: temp.dir,
      registry,
      starter: new RecordingStarter(),
      log,
      reservedNames: ['later'],
    });
    try {
      await folder.load();
      assert.deepEqual(names(registry), ['help', 'model', 'status', 'ok']);
      assert.equal(registry.get('help'), builtins[0]);
      const warnings = log.lines.filter((line) => line.startsWith('warn '));
      assert.equal(warnings.length, 3, log.lines.join('\n'));
      for (const file of ['broken.md', 'help.md', 'later.md']) {
        assert.ok(
          warnings.some((line) => line.includes(`command file skipped: ${join(temp.dir, file)}: `)),
          `a warning naming ${file}`,
        );
      }
      assert.ok(log.lines.some((line) => line.startsWith('info command files loaded') && line.includes('/ok')));
    } finally {
      await folder.close();
      temp.dispose();
    }
  });

  it('CMD-16: with watch(), added, changed and removed files show in the registry within seconds, built-ins untouched and order kept', async () => {
    const temp = tempFolder();
    const { registry, builtins } = registryWithBuiltins();
    writeCommand(temp.dir, 'review.md', 'Review a file');
    const folder = new CommandFolder({ dir: temp.dir, registry, starter: new RecordingStarter() });
    try {
      await folder.load();
      await folder.watch();
      assert.deepEqual(names(registry), ['help', 'model', 'status', 'review']);

      // Added: comes after the built-ins, in file-name order among the files.
      writeCommand(temp.dir, 'explain.md', 'Explain some code');
      await waitFor('/explain is registered', registry.changes, 'change', () => registry.has('explain'));
      assert.deepEqual(names(registry), ['help', 'model', 'status', 'explain', 'review']);

      // Changed in place.
      writeCommand(temp.dir, 'review.md', 'Review a file, thoroughly');
      await waitFor(
        "/review's new description shows",
        registry.changes,
        'change',
        () => registry.get('review')?.description === 'Review a file, thoroughly',
      );
      assert.deepEqual(names(registry), ['help', 'model', 'status', 'explain', 'review']);

      // Changed the way many editors save: write a temporary file, rename it over the old one.
      writeFileSync(
        join(temp.dir, 'explain.md.tmp'),
        commandFile(['description: Explain code simply', 'argument-hint: <file>']),
      );
      renameSync(join(temp.dir, 'explain.md.tmp'), join(temp.dir, 'explain.md'));
      await waitFor(
        "/explain's saved-by-rename version shows",
        registry.changes,
        'change',
        () => registry.get('explain')?.argumentHint === '<file>',
      );
      assert.equal(registry.get('explain')?.description, 'Explain code simply');

      // Broken by an edit: reported and dropped; fixed again: back in its place.
      writeFileSync(join(temp.dir, 'explain.md'), commandFile(['description: one: two']));
      await waitFor('a broken /explain is dropped', registry.changes, 'change', () => !registry.has('explain'));
      writeCommand(temp.dir, 'explain.md', 'Explain again');
      await waitFor('/explain is back', registry.changes, 'change', () => registry.has('explain'));
      assert.deepEqual(names(registry), ['help', 'model', 'status', 'explain', 'review']);

      // Removed.
      rmSync(join(temp.dir, 'review.md'));
      await waitFor('/review is gone', registry.changes, 'change', () => !registry.has('review'));
      assert.deepEqual(names(registry), ['help', 'model', 'status', 'explain']);

      builtins.forEach((builtin) => assert.equal(registry.get(builtin.name), builtin, `/${builtin.name} untouched`));
    } finally {
      await folder.close();
      temp.dispose();
    }
  });

  it('a command removed while its sub-task is being started still replies; the registry alone changes', async () => {
    const temp = tempFolder();
    const { registry } = registryWithBuiltins();
    const starter = new RecordingStarter();
    writeFileSync(
      join(temp.dir, 'long.md'),
      commandFile(['description: Takes a while', 'context: fork'], 'Work on $1.'),
    );
    const folder = new CommandFolder({ dir: temp.dir, registry, starter });
    try {
      await folder.load();
      await folder.watch();
      starter.hold();
      const running = invoke(registry, 'long', 'it');
      rmSync(join(temp.dir, 'long.md'));
      await waitFor('/long is gone', registry.changes, 'change', () => !registry.has('long'));
      starter.release();
      const result = await running;
      assert.equal(result.taskRef, 'sub-1');
      assert.equal(starter.calls[0]!.instruction, 'Work on it.');
    } finally {
      await folder.close();
      temp.dispose();
    }
  });

  it('close() stops watching: later changes leave the registry alone', async () => {
    const temp = tempFolder();
    const { registry } = registryWithBuiltins();
    const folder = new CommandFolder({ dir: temp.dir, registry, starter: new RecordingStarter(), debounceMs: 10 });
    await folder.load();
    await folder.watch();
    writeCommand(temp.dir, 'first.md', 'Seen while watching');
    await waitFor('/first is registered', registry.changes, 'change', () => registry.has('first'));
    await folder.close();
    // A second folder still watching the same files: once it has reloaded, the closed one would
    // have too, had it still been watching.
    const control = registryWithBuiltins();
    const watching = new CommandFolder({
      dir: temp.dir,
      registry: control.registry,
      starter: new RecordingStarter(),
      debounceMs: 10,
    });
    await watching.load();
    await watching.watch();
    try {
      writeCommand(temp.dir, 'second.md', 'Written after close');
      await waitFor('the folder still watching registers /second', control.registry.changes, 'change', () =>
        control.registry.has('second'),
      );
      assert.deepEqual(names(registry), ['help', 'model', 'status', 'first']);
    } finally {
      await watching.close();
      temp.dispose();
    }
  });

  it('a named pipe is skipped with a warning naming it, at load and while watching; reloads go on', async () => {
    const temp = tempFolder();
    const log = recordingLogger();
    const { registry } = registryWithBuiltins();
    makeFifo(join(temp.dir, 'x.md'));
    writeCommand(temp.dir, 'review.md', 'Review');
    const folder = new CommandFolder({ dir: temp.dir, registry, starter: new RecordingStarter(), log, debounceMs: 10 });
    try {
      await folder.load();
      assert.deepEqual(folder.names, ['review']);
      assert.ok(
        log.lines.some((line) =>
          line.startsWith(
            `warn command file skipped: ${join(temp.dir, 'x.md')}: not a regular file (it is a named pipe (FIFO))`,
          ),
        ),
        log.lines.join('\n'),
      );

      await folder.watch();
      assert.equal(
        log.lines.filter((line) => line.includes('x.md')).length,
        1,
        'watching starts without repeating the warnings of load()',
      );
      makeFifo(join(temp.dir, 'y.md'));
      writeCommand(temp.dir, 'after.md', 'Written after a second pipe');
      await waitFor('/after is registered', registry.changes, 'change', () => registry.has('after'));
      await waitFor('a warning names y.md', log.events, 'line', () =>
        log.lines.some((line) => line.includes(`${join(temp.dir, 'y.md')}: not a regular file`)),
      );
      assert.deepEqual(folder.names, ['after', 'review']);
    } finally {
      await folder.close();
      temp.dispose();
    }
  });

  it('a reload that takes too long is abandoned with a warning and the commands stay; later reloads still run', async () => {
    const temp = tempFolder();
    const log = recordingLogger();
    const { registry } = registryWithBuiltins();
    let stuck = false;
    const read = (dir: string, options: LoadCommandFilesOptions): Promise<LoadedCommandFiles> =>
      stuck ? new Promise(() => {}) : loadCommandFiles(dir, options);
    writeCommand(temp.dir, 'first.md', 'First');
    const folder = new CommandFolder({
      dir: temp.dir,
      registry,
      starter: new RecordingStarter(),
      log,
      // Long enough for a real read on a loaded machine (the stuck one is abandoned at it whatever its length).
      reloadTimeoutMs: 1000,
      read,
    });
    try {
      await folder.load();
      assert.deepEqual(folder.names, ['first']);

      writeCommand(temp.dir, 'second.md', 'Second');
      stuck = true;
      await folder.reload();
      assert.deepEqual(folder.names, ['first'], 'the previous set stays');
      assert.ok(
        log.lines.some((line) =>
          line.startsWith('warn reading the commands folder took longer than 1000 ms and was abandoned'),
        ),
        log.lines.join('\n'),
      );

      stuck = false;
      await folder.reload();
      assert.deepEqual(folder.names, ['first', 'second']);
    } finally {
      await folder.close();
      temp.dispose();
    }
  });

  it('close() does not wait for a reload that never ends', async () => {
    const temp = tempFolder();
    const { registry } = registryWithBuiltins();
    // An hour: if close() waited for the reload, the test would run into its own timeout.
    const folder = new CommandFolder({
      dir: temp.dir,
      registry,
      starter: new RecordingStarter(),
      reloadTimeoutMs: 3_600_000,
      read: () => new Promise(() => {}),
    });
    const reloading = folder.reload();
    await folder.close();
    await reloading;
    assert.deepEqual(folder.names, []);
    temp.dispose();
  });

  it('a folder replaced by a file keeps its commands with a warning; once a folder is back, it is read and watched again', async () => {
    const temp = tempFolder();
    const dir = join(temp.dir, 'commands');
    const log = recordingLogger();
    const { registry } = registryWithBuiltins();
    const folder = new CommandFolder({ dir, registry, starter: new RecordingStarter(), log, debounceMs: 10 });
    try {
      await folder.load();
      writeCommand(dir, 'old.md', 'In the first folder');
      await folder.watch();
      await waitFor('/old is registered', registry.changes, 'change', () => registry.has('old'));

      renameSync(dir, join(temp.dir, 'moved-away'));
      writeFileSync(dir, 'a file where the folder was');
      await waitFor('a warning about the folder', log.events, 'line', () =>
        log.lines.some((line) => line.startsWith('warn the commands folder cannot be read (it is not a directory)')),
      );
      assert.deepEqual(folder.names, ['old'], 'the commands stay');

      rmSync(dir);
      mkdirSync(dir);
      writeCommand(dir, 'new.md', 'In the new folder');
      await waitFor('/new from the new folder is registered', registry.changes, 'change', () => registry.has('new'));
      assert.deepEqual(folder.names, ['new']);
      writeCommand(dir, 'newer.md', 'Seen by the new watcher');
      await waitFor('/newer is registered', registry.changes, 'change', () => registry.has('newer'));
    } finally {
      await folder.close();
      temp.dispose();
    }
  });
  it('CMD-16: a command file added, changed or removed in a subfolder shows in the registry, the folder in its description', async () => {
    const temp = tempFolder();
    const registry = new ObservedRegistry();
    const folder = new CommandFolder({ dir: temp.dir, registry, starter: new RecordingStarter(), debounceMs: 20 });
    try {
      await folder.watch();
      mkdirSync(join(temp.dir, 'frontend'));
      writeCommand(join(temp.dir, 'frontend'), 'component.md', 'Review a component');
      await waitFor(
        'a file in a new subfolder loads',
        registry.changes,
        'change',
        () => registry.get('component')?.description === 'Review a component (frontend)',
      );
      writeCommand(join(temp.dir, 'frontend'), 'component.md', 'Review it again');
      await waitFor(
        'a change in the subfolder shows',
        registry.changes,
        'change',
        () => registry.get('component')?.description === 'Review it again (frontend)',
      );
      rmSync(join(temp.dir, 'frontend'), { recursive: true });
      await waitFor(
        'the subfolder removed, its command goes',
        registry.changes,
        'change',
        () => !registry.has('component'),
      );
    } finally {
      await folder.close();
      temp.dispose();
    }
  });
});
