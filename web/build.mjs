// Builds the chat page into dist/web: type-checks web/src with web/tsconfig.json (browser
// types only), bundles web/src/main.ts with the SDK's client and web/style.css with esbuild
// under content-hashed names, and writes index.html naming them. The folder is built beside
// the old one and swapped in, so a running server never sees half a page.
// Run by `npm run build` (and so by `npm ci`); `node web/build.mjs` alone works too.
import { spawnSync } from 'node:child_process';
import { readFileSync, renameSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';

const web = dirname(fileURLToPath(import.meta.url));
const root = dirname(web);
const out = join(root, 'dist', 'web');
const staging = `${out}.staging-${process.pid}`;
const started = Date.now();

const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
const check = spawnSync(process.execPath, [tsc, '-p', join(web, 'tsconfig.json')], { stdio: 'inherit' });
if (check.status !== 0) {
  console.error('web/build.mjs: the page does not type-check (tsc -p web/tsconfig.json)');
  process.exit(1);
}

rmSync(staging, { recursive: true, force: true });
mkdirSync(staging, { recursive: true });
try {
  const result = await build({
    absWorkingDir: root,
    entryPoints: { main: join(web, 'src', 'main.ts'), style: join(web, 'style.css') },
    entryNames: '[name]-[hash]',
    outdir: staging,
    bundle: true,
    format: 'esm',
    platform: 'browser',
    target: ['es2022', 'chrome109', 'firefox115', 'safari16'],
    minify: true,
    sourcemap: 'linked',
    charset: 'utf8',
    legalComments: 'linked',
    metafile: true,
    logLevel: 'warning',
  });
  // The output file of each entry point, by the entry's name.
  const names = {};
  for (const [file, output] of Object.entries(result.metafile.outputs)) {
    if (!output.entryPoint) continue;
    const ext = file.endsWith('.css') ? 'css' : 'js';
    names[`${basename(output.entryPoint).replace(/\.(ts|css)$/, '')}.${ext}`] = basename(file);
  }
  let html = readFileSync(join(web, 'index.html'), 'utf8');
  html = html.replace(/\{\{([\w.]+)\}\}/g, (whole, key) => {
    if (!names[key])
      throw new Error(
        `web/index.html names ${whole}, which the build did not produce (built: ${Object.keys(names).join(', ')})`,
      );
    return `./${names[key]}`;
  });
  writeFileSync(join(staging, 'index.html'), html);
  rmSync(out, { recursive: true, force: true });
  renameSync(staging, out);
  const sizes = Object.entries(result.metafile.outputs)
    .filter(([file]) => !file.endsWith('.map'))
    .map(([file, o]) => `${basename(file)} ${(o.bytes / 1024).toFixed(1)} KiB`);
  console.log(
    `web page built in ${Date.now() - started} ms: ${relative(root, out)}/ (index.html, ${sizes.join(', ')})`,
  );
} catch (error) {
  rmSync(staging, { recursive: true, force: true });
  console.error(`web/build.mjs: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
}
