// A node:test reporter that stays silent until the run ends, then names every test or suite that
// was skipped, with its reason, one line each:
//   skipped: test/web/page.test.ts "the chat page in Chromium": needs chromium: apt-get install -y chromium
// The spec reporter marks a skip in the middle of the run, where it scrolls away; this line is
// what tells someone that `npm test` passed without running something, and how to run it.
import { relative } from 'node:path';

export default async function* skipSummary(source) {
  const lines = new Set();
  for await (const event of source) {
    if (event.type !== 'test:pass' || event.data.skip === undefined || event.data.skip === false) continue;
    const { file, name, skip } = event.data;
    const where = file ? relative(process.cwd(), file) : '(unknown file)';
    const reason = typeof skip === 'string' ? skip : 'no reason given';
    lines.add(`skipped: ${where} "${name}": ${reason}\n`);
  }
  yield* lines;
}
