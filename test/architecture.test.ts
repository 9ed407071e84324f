/**
 * The direction of dependencies inside src/ (../shared/design/architecture.md, "Rules of the
 * house"), checked on the sources themselves: every relative import, re-export and dynamic
 * import is resolved to the area it lands in and compared with what that area may use.
 * Also the house rule that no source file grows past 400 lines.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, posix, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'src');
const MAX_LINES = 400;

/** Files that wire everything together: the composition root, the request path and the entry points. */
const COMPOSITION = new Set([
  'harness.ts',
  'harness-options.ts',
  'harness-stages.ts',
  'harness-card.ts',
  'harness-commands.ts',
  'harness-schedules.ts',
  'harness-storage.ts',
  'harness-transports.ts',
  'request-path.ts',
  'cli.ts',
  'serve.ts',
  'index.ts',
]);

/**
 * What each area may import besides itself. Areas are top-level folders of src/ or root files.
 * No exceptions, not even for types: where two areas need the same types, they live in a ports
 * file below both. The store, the coordination and the engine share theirs through `ports.ts`;
 * the engine, its parts and the folders of commands, skills and agents through `engine-ports.ts`.
 */
const RULES: Record<string, { may: string[] }> = {
  // Building blocks for any @a2a-js/sdk server (handler wrapping, message claims, client gone):
  // below the extension and the harness alike, so the extension can be mounted on a bare SDK server.
  a2a: { may: ['wire.ts'] },
  // The Commands extension: the SDK and the building blocks, nothing of the harness.
  commands: { may: ['a2a', 'wire.ts'] },
  models: { may: ['config', 'telemetry', 'errors.ts', 'log.ts', 'wire.ts'] },
  config: { may: ['errors.ts'] },
  // The contracts between the store, the coordination and the engine: the SDK's types and nothing else.
  'ports.ts': { may: [] },
  // The engine's contracts: with its parts, with what starts turns, and with the command files,
  // skills and agents (sub-tasks, inline command turns, delegations). Above ports.ts and the tool
  // box's types, below everything that uses them.
  'engine-ports.ts': { may: ['ports.ts', 'tools'] },
  // The same between the store and the runtime's schedules (issue 39).
  'schedule-ports.ts': { may: [] },
  // Tasks, their logs and the harness's records; the message-claim contract is a2a's.
  store: {
    may: ['a2a', 'ports.ts', 'schedule-ports.ts', 'errors.ts', 'log.ts', 'make-folder.ts', 'until-done.ts', 'wire.ts'],
  },
  // What instances sharing a store coordinate through (turn and push leases, heartbeats, wake-ups,
  // cancel requests, queue offers, the PostgreSQL listener): above the store, whose database it
  // uses; no area imports it (the composition root builds it, the engine sees it through ports.ts).
  coordination: { may: ['store', 'ports.ts', 'errors.ts', 'log.ts'] },
  // What a turn sends its model (CMD-36), built from the task's record: pure, below the runtime.
  // Its instruction files are read from the disk and followed with the shared folder watcher.
  conversation: { may: ['commands', 'errors.ts', 'folder-watcher.ts', 'log.ts', 'wire.ts'] },
  runtime: {
    may: [
      'a2a',
      'commands',
      'conversation',
      'models',
      'tools',
      'telemetry',
      'elicitations.ts',
      'engine-ports.ts',
      'errors.ts',
      'log.ts',
      'ports.ts',
      'schedule-ports.ts',
      'until-done.ts',
      'wire.ts',
    ],
  },
  // MCP servers and their tools: beside models, below the runtime.
  tools: { may: ['config', 'telemetry', 'errors.ts', 'log.ts', 'public-network.ts', 'version.ts', 'wire.ts'] },
  server: {
    may: ['log.ts', 'errors.ts', 'a2a', 'commands', 'elicitations.ts', 'public-network.ts', 'telemetry', 'wire.ts'],
  },
  // Traces and metrics: below every area that reports to them. The A2A calls' span and metrics
  // are steps of the request path, of a2a/'s `around(call, next)` signature.
  telemetry: { may: ['a2a', 'errors.ts', 'log.ts', 'wire.ts'] },
  // Commands written in files: built on the registry, starting turns and sub-tasks through runtime's
  // ports (engine-ports.ts); their `!` and `@` markers bounded by the workspace tools' root and shell rules (TOOL-6).
  'file-commands': {
    may: [
      'commands',
      'engine-ports.ts',
      'errors.ts',
      'folder-watcher.ts',
      'log.ts',
      'make-folder.ts',
      'tools',
      'wire.ts',
    ],
  },
  // Skills (Agent Skills folders): the model's `skill` tool and their commands, like file commands.
  skills: {
    may: [
      'commands',
      'engine-ports.ts',
      'errors.ts',
      'file-commands',
      'folder-watcher.ts',
      'log.ts',
      'make-folder.ts',
      'tools',
      'wire.ts',
    ],
  },
  // Sub-agents (Claude Code's agent files): read like skills, the `delegate` tool run by runtime's delegations.
  agents: {
    may: [
      'commands',
      'engine-ports.ts',
      'errors.ts',
      'file-commands',
      'folder-watcher.ts',
      'log.ts',
      'make-folder.ts',
      'skills',
      'tools',
      'wire.ts',
    ],
  },
  // The command-line clients (chat, send): the SDK's client and the extension's names, nothing of the server.
  client: {
    may: [
      'approval-answers.ts',
      'commands',
      'conversation-replies.ts',
      'elicitations.ts',
      'errors.ts',
      'log.ts',
      'recent-tasks.ts',
      'stream-resume.ts',
      'version.ts',
      'wire.ts',
    ],
  },
  'errors.ts': { may: [] },
  'log.ts': { may: ['errors.ts'] },
  // Making a folder the user named (data, commands) without looping where none can be made.
  'make-folder.ts': { may: [] },
  // Following a folder's files as they change (command files, instruction files): chokidar and the log.
  'folder-watcher.ts': { may: ['log.ts'] },
  'version.ts': { may: [] },
  // The SSRF guard of the harness's own outgoing requests (push webhooks, the `fetch` tool): node's DNS and nothing else.
  'public-network.ts': { may: [] },
  // The one retry of store work (a turn's end, a read whose connection failed): below the store and the runtime.
  'until-done.ts': { may: [] },
  // The wire vocabulary, shared with the web page: the SDK's types and nothing else.
  'wire.ts': { may: [] },
  // Resuming broken streams, shared with the web page as the wire vocabulary is.
  'stream-resume.ts': { may: ['wire.ts'] },
  // The user's recent conversations and their titles, shared by the web page and the terminal chat.
  'recent-tasks.ts': { may: ['wire.ts'] },
  // The conversation extension's reply data as the clients read it, shared by the web page and the terminal chat.
  'conversation-replies.ts': { may: ['wire.ts'] },
  // The answers to a call waiting for approval, as the terminal chat and the web page offer them.
  'approval-answers.ts': { may: ['wire.ts'] },
  // An MCP server's question to the user and its answer, as the harness, the terminal chat and the web page read them.
  'elicitations.ts': { may: ['wire.ts'] },
};

interface Import {
  /** The specifier as written. */
  specifier: string;
  /** 1-based line of the import. */
  line: number;
  /** Erased at run time: `import type`, `export type`, all specifiers `type`, or an `import('…')` type. */
  typeOnly: boolean;
  /** A dynamic import whose argument is not a string literal (cannot be resolved). */
  opaque?: boolean;
}

/**
 * The files that import a module the user names (a path known only when the harness runs), by
 * what they load: outside src/, such an import has no place in its graph to check.
 */
const USER_MODULE_LOADERS: Readonly<Record<string, string>> = {
  'serve.ts': 'the AgentExecutor of `serve --agent <module>`',
};

function sourceFiles(): string[] {
  return readdirSync(SRC, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith('.ts'))
    .map((f) => f.split(sep).join('/'))
    .sort();
}

function importsOf(file: string, text: string): Import[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true, ts.ScriptKind.TS);
  const found: Import[] = [];
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier)) {
      const clause = node.importClause;
      const named = clause?.namedBindings;
      const allNamedTypes =
        !!clause &&
        !clause.name &&
        !!named &&
        ts.isNamedImports(named) &&
        named.elements.length > 0 &&
        named.elements.every((e) => e.isTypeOnly);
      found.push({
        specifier: node.moduleSpecifier.text,
        line: lineOf(node),
        typeOnly: !!clause && (clause.isTypeOnly || allNamedTypes),
      });
    } else if (ts.isExportDeclaration(node) && node.moduleSpecifier && ts.isStringLiteral(node.moduleSpecifier)) {
      const named = node.exportClause;
      const allNamedTypes =
        !!named && ts.isNamedExports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly);
      found.push({
        specifier: node.moduleSpecifier.text,
        line: lineOf(node),
        typeOnly: node.isTypeOnly || allNamedTypes,
      });
    } else if (ts.isImportEqualsDeclaration(node) && ts.isExternalModuleReference(node.moduleReference)) {
      const expression = node.moduleReference.expression;
      if (ts.isStringLiteral(expression))
        found.push({ specifier: expression.text, line: lineOf(node), typeOnly: node.isTypeOnly });
    } else if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword) {
      const argument = node.arguments[0];
      if (argument && ts.isStringLiteralLike(argument))
        found.push({ specifier: argument.text, line: lineOf(node), typeOnly: false });
      else
        found.push({
          specifier: argument ? argument.getText(source) : '',
          line: lineOf(node),
          typeOnly: false,
          opaque: true,
        });
    } else if (ts.isImportTypeNode(node)) {
      const argument = node.argument;
      if (ts.isLiteralTypeNode(argument) && ts.isStringLiteral(argument.literal)) {
        found.push({ specifier: argument.literal.text, line: lineOf(node), typeOnly: true });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The area a path relative to src/ belongs to: its top folder, or the file itself at the root. */
function areaOf(pathInSrc: string): string {
  const slash = pathInSrc.indexOf('/');
  return slash === -1 ? pathInSrc : pathInSrc.slice(0, slash);
}

/** A relative specifier resolved from `file` (both relative to src/), with `.js` read as `.ts`. */
function resolveSpecifier(file: string, specifier: string): string {
  const target = posix.normalize(posix.join(posix.dirname(file), specifier));
  return target.replace(/\.(m|c)?js$/, '.$1ts');
}

function isRelative(specifier: string): boolean {
  return specifier.startsWith('./') || specifier.startsWith('../');
}

/** Every breach of the rules, each naming the file, the line and the import. */
function violations(sources: ReadonlyMap<string, string>): string[] {
  const problems: string[] = [];
  for (const [file, text] of sources) {
    const from = areaOf(file);
    const rule = COMPOSITION.has(file) ? undefined : RULES[from];
    if (!COMPOSITION.has(file) && !rule) {
      problems.push(`src/${file}: area "${from}" has no rule in test/architecture.test.ts; add one`);
      continue;
    }
    for (const imp of importsOf(file, text)) {
      const where = `src/${file}:${imp.line} imports '${imp.specifier}'`;
      if (imp.opaque) {
        if (!(file in USER_MODULE_LOADERS))
          problems.push(`${where}: a dynamic import of a computed specifier cannot be checked; use a string literal`);
        continue;
      }
      if (imp.specifier === 'ai/test' || imp.specifier.startsWith('ai/test/')) {
        problems.push(`${where}: the AI SDK's test helpers are for tests only`);
        continue;
      }
      if (!isRelative(imp.specifier)) {
        // A bare specifier is a package; an absolute path or URL would bypass the rules.
        if (imp.specifier.startsWith('/') || imp.specifier.startsWith('file:'))
          problems.push(`${where}: an absolute import; use a relative one inside src/`);
        continue;
      }
      const target = resolveSpecifier(file, imp.specifier);
      if (target.startsWith('../')) {
        const outside = relative(ROOT, join(SRC, target)).split(sep).join('/');
        const kind = /^(test|bench)(\/|$)/.test(outside) ? `${outside.split('/')[0]}/` : 'outside src/';
        problems.push(`${where}: reaches ${kind} (${outside}); src/ must not depend on it`);
        continue;
      }
      const to = areaOf(target);
      if (to === from || !rule) continue; // inside its own area, or the composition root
      if (rule.may.includes(to)) continue;
      problems.push(
        `${where}: ${from} may not depend on ${to}${to.endsWith('.ts') ? '' : '/'} (allowed: ${rule.may.join(', ') || 'nothing else in src/'})`,
      );
    }
  }
  return problems;
}

/**
 * Breaches of the packages' rule: a package under packages/ imports nothing of the harness. Its
 * relative imports stay inside its own src/, and a bare specifier is Node's, or a package its
 * package.json names (dependencies, peerDependencies); never the harness.
 */
function packageViolations(name: string, declared: readonly string[], sources: ReadonlyMap<string, string>): string[] {
  const problems: string[] = [];
  for (const [file, text] of sources) {
    for (const imp of importsOf(file, text)) {
      const where = `packages/${name}/src/${file}:${imp.line} imports '${imp.specifier}'`;
      if (imp.opaque) problems.push(`${where}: a computed specifier cannot be checked`);
      else if (isRelative(imp.specifier)) {
        if (resolveSpecifier(file, imp.specifier).startsWith('../'))
          problems.push(`${where}: reaches outside the package's src/`);
      } else if (imp.specifier.startsWith('/') || imp.specifier.startsWith('file:'))
        problems.push(`${where}: an absolute import`);
      else if (!imp.specifier.startsWith('node:')) {
        const pkg = imp.specifier
          .split('/')
          .slice(0, imp.specifier.startsWith('@') ? 2 : 1)
          .join('/');
        if (!declared.includes(pkg)) problems.push(`${where}: '${pkg}' is not in its package.json`);
      }
    }
  }
  return problems;
}

/** Each workspace package: its name, the packages it declares and its sources by path under src/. */
function workspacePackages(): { name: string; declared: string[]; sources: Map<string, string> }[] {
  const root = join(ROOT, 'packages');
  return readdirSync(root).map((name) => {
    const manifest = JSON.parse(readFileSync(join(root, name, 'package.json'), 'utf8')) as {
      dependencies?: Record<string, string>;
      peerDependencies?: Record<string, string>;
    };
    const src = join(root, name, 'src');
    const files = readdirSync(src, { recursive: true })
      .map(String)
      .filter((f) => f.endsWith('.ts'))
      .map((f) => f.split(sep).join('/'));
    return {
      name,
      declared: [...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})],
      sources: new Map(files.map((f) => [f, readFileSync(join(src, f), 'utf8')])),
    };
  });
}

/** The file-level import graph of src/: each file's relative imports resolved to files that exist. */
function importGraph(sources: ReadonlyMap<string, string>): Map<string, string[]> {
  const graph = new Map<string, string[]>();
  for (const [file, text] of sources) {
    const targets = importsOf(file, text)
      .filter((imp) => !imp.opaque && isRelative(imp.specifier))
      .map((imp) => resolveSpecifier(file, imp.specifier))
      .filter((target) => sources.has(target));
    graph.set(file, [...new Set(targets)].sort());
  }
  return graph;
}

/**
 * Every circle of imports, one per strongly connected group of files (Tarjan), each printed as
 * the shortest chain from the group's first file back to itself, with the group's other files.
 * Type-only imports and lazy `import()`s count: a circle through types, or through a load
 * deferred to run time, is still two files that cannot be read, or moved, one without the other.
 */
function importCycles(graph: ReadonlyMap<string, readonly string[]>): string[] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const groups: string[][] = [];
  const connect = (file: string): void => {
    index.set(file, index.size);
    low.set(file, index.get(file)!);
    stack.push(file);
    onStack.add(file);
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        connect(next);
        low.set(file, Math.min(low.get(file)!, low.get(next)!));
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!));
    }
    if (low.get(file) !== index.get(file)) return;
    const group: string[] = [];
    let member: string;
    do {
      member = stack.pop()!;
      onStack.delete(member);
      group.push(member);
    } while (member !== file);
    if (group.length > 1 || (graph.get(file) ?? []).includes(file)) groups.push(group.sort());
  };
  for (const file of [...graph.keys()].sort()) if (!index.has(file)) connect(file);
  return groups
    .map((group) => {
      const inGroup = new Set(group);
      const start = group[0]!;
      // Breadth first from the start, inside the group, until an edge leads back to it.
      const cameFrom = new Map<string, string>();
      const queue = [start];
      for (let i = 0; i < queue.length; i++) {
        const file = queue[i]!;
        for (const next of graph.get(file) ?? []) {
          if (next === start) {
            const chain = [file];
            while (chain[0] !== start) chain.unshift(cameFrom.get(chain[0]!)!);
            return (
              [...chain, start].map((f) => `src/${f}`).join(' → ') +
              (group.length > chain.length ? ` (${group.length} files in all: ${group.join(', ')})` : '')
            );
          }
          if (inGroup.has(next) && !cameFrom.has(next) && next !== start) {
            cameFrom.set(next, file);
            queue.push(next);
          }
        }
      }
      return group.join(' ↔ ');
    })
    .sort();
}

describe('architecture', () => {
  it('dependencies inside src/ point one way (a2a ← commands ← runtime ← harness; server knows only a2a and commands)', () => {
    const files = sourceFiles();
    assert.ok(
      files.includes('harness.ts') && files.some((f) => f.startsWith('commands/')),
      'the scan found the sources',
    );
    const problems = violations(new Map(files.map((f) => [f, readFileSync(join(SRC, f), 'utf8')])));
    assert.deepEqual(problems, [], `dependency rule broken:\n  ${problems.join('\n  ')}`);
  });

  it('the web page shares with src/ only what it bundles: the wire vocabulary, stream resumption, recent tasks, reply data', () => {
    const web = join(ROOT, 'web', 'src');
    const shared = new Set([
      'src/wire.js',
      'src/stream-resume.js',
      'src/recent-tasks.js',
      'src/conversation-replies.js',
      'src/approval-answers.js',
      'src/elicitations.js',
    ]);
    const problems: string[] = [];
    for (const file of readdirSync(web).filter((f) => f.endsWith('.ts'))) {
      for (const imp of importsOf(file, readFileSync(join(web, file), 'utf8'))) {
        if (!isRelative(imp.specifier)) continue;
        const target = posix.normalize(posix.join('web/src', imp.specifier));
        if (!target.startsWith('web/') && !shared.has(target))
          problems.push(`web/src/${file}:${imp.line} imports '${imp.specifier}'`);
      }
    }
    assert.deepEqual(
      problems,
      [],
      `the page bundles only ${[...shared].join(', ')} from src/:\n  ${problems.join('\n  ')}`,
    );
  });

  it('the import scanner sees every form of import it checks', () => {
    const sample = [
      "import { a } from './a.js';",
      "import type { B } from '../b.js';",
      "import { type C, type D } from './c.js';",
      "import { type E, f } from './e.js';",
      "import './side.js';",
      "export { g } from './g.js';",
      "export type * from './h.js';",
      "const i = await import('./i.js');",
      "let j: import('./j.js').J;",
      'import {',
      '  k,',
      "} from './k.js';",
      "// import { no } from './comment.js';",
      'const s = "import { no } from \'./string.js\'";',
    ].join('\n');
    const found = importsOf('x/sample.ts', sample).map((i) => `${i.specifier}${i.typeOnly ? ' (type)' : ''}@${i.line}`);
    assert.deepEqual(found, [
      './a.js@1',
      '../b.js (type)@2',
      './c.js (type)@3',
      './e.js@4',
      './side.js@5',
      './g.js@6',
      './h.js (type)@7',
      './i.js@8',
      './j.js (type)@9',
      './k.js@10',
    ]);
    assert.equal(resolveSpecifier('store/x.ts', '../a2a/message-claim-store.js'), 'a2a/message-claim-store.ts');
    assert.equal(resolveSpecifier('cli.ts', './log.js'), 'log.ts');
    assert.equal(areaOf(resolveSpecifier('runtime/a/b.ts', '../../store/index.js')), 'store');
  });

  it('the rules reject what they forbid, naming file, line and import', () => {
    const problems = violations(
      new Map([
        ['commands/a.ts', "import { x } from './b.js';\nimport { describeError } from '../log.js';"],
        [
          'commands/b.ts',
          "import { MessageClaims } from '../a2a/index.js';\nimport { TaskEngine } from '../runtime/engine.js';",
        ],
        ['a2a/a.ts', "import { CommandRegistry } from '../commands/index.js';"],
        [
          'store/a.ts',
          "import type { MessageClaimStore } from '../a2a/index.js';\nimport { insertLease } from '../coordination/turn-leases.js';",
        ],
        ['store/b.ts', "import { COMMAND_KEY } from '../commands/extension.js';"],
        ['server/a.ts', "import type { TurnRegistry } from '../runtime/turns.js';"],
        [
          'runtime/a.ts',
          "import { isCommandExchange } from '../commands/index.js';\nconst s = await import('../store/index.js');",
        ],
        ['coordination/a.ts', "import type { TurnStarter } from '../engine-ports.js';"],
        ['file-commands/a.ts', "import type { CommandStarter } from '../runtime/subtasks.js';"],
        ['models/a.ts', "import { MockLanguageModelV3 } from 'ai/test';"],
        ['config/a.ts', "export { x } from '../../test/fixtures/model-server.js';"],
        ['log.ts', "import { y } from '../bench/long-history.js';"],
        [
          'client/a.ts',
          "import { z } from '../commands/index.js';\nimport { baseAgentCard } from '../server/card.js';",
        ],
        ['web/a.ts', "import { z } from '../commands/index.js';"],
        ['harness.ts', "import { openStore } from './store/index.js';"],
      ]),
    );
    assert.deepEqual(problems, [
      "src/commands/a.ts:2 imports '../log.js': commands may not depend on log.ts (allowed: a2a, wire.ts)",
      "src/commands/b.ts:2 imports '../runtime/engine.js': commands may not depend on runtime/ (allowed: a2a, wire.ts)",
      "src/a2a/a.ts:1 imports '../commands/index.js': a2a may not depend on commands/ (allowed: wire.ts)",
      "src/store/a.ts:2 imports '../coordination/turn-leases.js': store may not depend on coordination/ (allowed: a2a, ports.ts, schedule-ports.ts, errors.ts, log.ts, make-folder.ts, until-done.ts, wire.ts)",
      "src/store/b.ts:1 imports '../commands/extension.js': store may not depend on commands/ (allowed: a2a, ports.ts, schedule-ports.ts, errors.ts, log.ts, make-folder.ts, until-done.ts, wire.ts)",
      "src/server/a.ts:1 imports '../runtime/turns.js': server may not depend on runtime/ (allowed: log.ts, errors.ts, a2a, commands, elicitations.ts, public-network.ts, telemetry, wire.ts)",
      "src/runtime/a.ts:2 imports '../store/index.js': runtime may not depend on store/ (allowed: a2a, commands, conversation, models, tools, telemetry, elicitations.ts, engine-ports.ts, errors.ts, log.ts, ports.ts, schedule-ports.ts, until-done.ts, wire.ts)",
      "src/coordination/a.ts:1 imports '../engine-ports.js': coordination may not depend on engine-ports.ts (allowed: store, ports.ts, errors.ts, log.ts)",
      "src/file-commands/a.ts:1 imports '../runtime/subtasks.js': file-commands may not depend on runtime/ (allowed: commands, engine-ports.ts, errors.ts, folder-watcher.ts, log.ts, make-folder.ts, tools, wire.ts)",
      "src/models/a.ts:1 imports 'ai/test': the AI SDK's test helpers are for tests only",
      "src/config/a.ts:1 imports '../../test/fixtures/model-server.js': reaches test/ (test/fixtures/model-server.ts); src/ must not depend on it",
      "src/log.ts:1 imports '../bench/long-history.js': reaches bench/ (bench/long-history.ts); src/ must not depend on it",
      "src/client/a.ts:2 imports '../server/card.js': client may not depend on server/ (allowed: approval-answers.ts, commands, conversation-replies.ts, elicitations.ts, errors.ts, log.ts, recent-tasks.ts, stream-resume.ts, version.ts, wire.ts)",
      'src/web/a.ts: area "web" has no rule in test/architecture.test.ts; add one',
    ]);
  });

  it('the packages import nothing of the harness: only their own src/, Node and what their package.json names', () => {
    const packages = workspacePackages();
    assert.deepEqual(
      packages.map((p) => p.name),
      ['commands-extension', 'conform'],
      'the scan found the packages',
    );
    const problems = packages.flatMap((p) => packageViolations(p.name, p.declared, p.sources));
    assert.deepEqual(problems, [], `a package depends on what it may not:\n  ${problems.join('\n  ')}`);
  });

  it('the packages rule rejects the harness, a reach outside src/ and an undeclared package', () => {
    const problems = packageViolations(
      'x',
      ['@a2a-js/sdk'],
      new Map([
        [
          'a.ts',
          [
            "import { readFileSync } from 'node:fs';",
            "import { TaskState } from '@a2a-js/sdk';",
            "import { Client } from '@a2a-js/sdk/client';",
            "import { startHarness } from 'tiny-harness';",
            "import { textOf } from '../../../src/wire.js';",
            "import { b } from './b.js';",
          ].join('\n'),
        ],
      ]),
    );
    assert.deepEqual(problems, [
      "packages/x/src/a.ts:4 imports 'tiny-harness': 'tiny-harness' is not in its package.json",
      "packages/x/src/a.ts:5 imports '../../../src/wire.js': reaches outside the package's src/",
    ]);
  });

  it('no circle of imports between files under src/, type-only imports included', () => {
    const files = sourceFiles();
    const cycles = importCycles(importGraph(new Map(files.map((f) => [f, readFileSync(join(SRC, f), 'utf8')]))));
    assert.deepEqual(cycles, [], `circles of imports:\n  ${cycles.join('\n  ')}`);
  });

  it('the cycle finder prints each circle as a chain of files', () => {
    const graph = new Map([
      ['a.ts', ['b.ts']],
      ['b.ts', ['c.ts', 'd.ts']],
      ['c.ts', ['a.ts']],
      ['d.ts', []],
      ['e.ts', ['e.ts']],
      ['f.ts', ['g.ts']],
      ['g.ts', ['f.ts', 'd.ts']],
    ]);
    assert.deepEqual(importCycles(graph), [
      'src/a.ts → src/b.ts → src/c.ts → src/a.ts',
      'src/e.ts → src/e.ts',
      'src/f.ts → src/g.ts → src/f.ts',
    ]);
  });

  it(`no file under src/ or packages/*/src/ is longer than ${MAX_LINES} lines`, () => {
    const packaged = workspacePackages().flatMap((p) =>
      [...p.sources.keys()].map((f) => `../packages/${p.name}/src/${f}`),
    );
    const long = [...sourceFiles(), ...packaged]
      .map((file) => {
        const text = readFileSync(join(SRC, file), 'utf8');
        const lines = text.length === 0 ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
        return { file, lines };
      })
      .filter((f) => f.lines > MAX_LINES)
      .sort((a, b) => b.lines - a.lines);
    assert.deepEqual(
      long.map((f) => `src/${f.file}: ${f.lines} lines`),
      [],
      `over ${MAX_LINES} lines (the house limit):\n  ${long.map((f) => `src/${f.file}: ${f.lines}`).join('\n  ')}`,
    );
  });
});
