/**
 * The pages a user reads (README.md and docs/*.md, issue 33): every relative link leads to a
 * file that exists, and to a heading there when it names one; the specification's rule ids
 * (`CMD-32`, `TOOL-1`) appear only as links into spec/ or as literal text in code (what the
 * conformance kit prints); the README links the troubleshooting page and the glossary, which
 * defines the words the pages use.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, normalize } from 'node:path';
import { ROOT } from './support/processes.js';

const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];
const read = (file: string) => readFileSync(join(ROOT, file), 'utf8');

/** The page without its fenced code blocks and inline code spans. */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, '').replace(/`[^`\n]*`/g, '');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, '')
    .replace(/ /g, '-');
}

/** The anchors of the headings of `file` (outside fenced code; a code span's text counts). */
function anchors(file: string): Set<string> {
  const headings = read(file)
    .replace(/^```[\s\S]*?^```/gm, '')
    .match(/^#{1,6} .*$/gm);
  return new Set(headings?.map((h) => slug(h.replace(/^#+ /, ''))) ?? []);
}

/** The relative links of `page` outside code: `[text](target)`, target split at `#`. */
function links(page: string): Array<{ text: string; file: string; anchor?: string }> {
  const found = [];
  for (const match of prose(read(page)).matchAll(/\[([^\]]*)\]\(([^)\s]+)\)/g)) {
    const target = match[2]!;
    if (/^[a-z]+:/.test(target)) continue;
    const [path, anchor] = target.split('#');
    const file = path ? normalize(join(dirname(page), path)) : page;
    found.push({ text: match[1]!, file, anchor });
  }
  return found;
}

describe('the user pages', () => {
  it('every relative link leads to a file that exists, and to a heading it has', () => {
    const broken: string[] = [];
    for (const page of PAGES) {
      for (const { file, anchor } of links(page)) {
        if (!existsSync(join(ROOT, file))) broken.push(`${page}: ${file} does not exist`);
        else if (anchor && file.endsWith('.md') && !anchors(file).has(anchor))
          broken.push(`${page}: ${file} has no heading #${anchor}`);
      }
    }
    assert.deepEqual(broken, []);
  });

  it('rule ids appear only as links into spec/, or as text in code', () => {
    const bare: string[] = [];
    for (const page of PAGES) {
      const text = prose(read(page)).replace(/\[((?:CMD|TOOL)-\d+)\]\((?:\.\.\/)?spec\/[^)]*\)/g, '');
      for (const match of text.matchAll(/\b(?:CMD|TOOL)-\d+\b/g)) bare.push(`${page}: ${match[0]}`);
    }
    assert.deepEqual(bare, []);
  });

  it('the README links the troubleshooting page and the glossary; the glossary defines the words', () => {
    const readme = read('README.md');
    for (const page of ['docs/troubleshooting.md', 'docs/glossary.md'])
      assert.ok(readme.includes(`](${page})`), `the README links ${page}`);
    const glossary = read('docs/glossary.md');
    for (const word of ['Task', 'Context', 'Turn', 'Generation', 'Sub-task', 'Command', 'Instance'])
      assert.match(glossary, new RegExp(`^\\*\\*${word}\\.\\*\\*`, 'm'), `the glossary defines ${word}`);
  });

  it('the troubleshooting page covers the version header, ports, PostgreSQL, the first build and tokens', () => {
    const headings = [...anchors('docs/troubleshooting.md')].join(' ');
    for (const topic of ['a2a-version', 'ports', 'postgresql', 'the-first-build', 'tokens'])
      assert.ok(headings.includes(topic), `a heading on ${topic}`);
  });
});
