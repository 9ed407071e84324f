import { createReadStream, existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { basename, dirname, extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { matchesEtag } from './card-route.js';

/**
 * Where `npm run build` writes the chat page: `<package root>/dist/web`, found from this module
 * whether it runs compiled (`dist/src/server/`) or from source under tsx (`src/server/`).
 */
export function bundledWebDir(moduleUrl: string = import.meta.url): string {
  const srcDir = dirname(dirname(fileURLToPath(moduleUrl))); // <root>/src or <root>/dist/src
  const above = dirname(srcDir);
  const root = basename(above) === 'dist' ? dirname(above) : above;
  return join(root, 'dist', 'web');
}

/**
 * The page allows only itself: its script and style files, and requests to its own origin
 * (the card and JSON-RPC). No inline script or style, no frames, no plugins.
 */
export const PAGE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

/** esbuild's content-hashed names (`main-FYALNNLV.js`, and their source maps): never change. */
const HASHED = /-[A-Z0-9]{8}\.(?:js|css)(?:\.map)?$/;

function pageHeaders(res: ServerResponse): void {
  res.setHeader('Content-Security-Policy', PAGE_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
}

const NOT_BUILT = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>tiny-harness: the page is not built</title></head>
<body><h1>The chat page is not built</h1>
<p>This harness runs, but its web page has not been built. Run <code>npm run build</code> in the
project folder (<code>npm ci</code> does it too) and reload. The agent card is at
<a href="/.well-known/agent-card.json">/.well-known/agent-card.json</a>.</p></body></html>
`;

/** The content types of the files a build holds. */
const TYPES: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.map': 'application/json; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.woff2': 'font/woff2',
};

/** A node handler that answers what it serves and hands anything else to `next`. */
export type PageHandler = (req: IncomingMessage, res: ServerResponse, next: () => void) => void;

/**
 * Serves the built chat page from `dir` at `/`. Hashed assets are cached for a year (a rebuild
 * renames them); `index.html` is `no-cache`, so a browser revalidates it (ETag, 304) and always
 * loads the current build's files. Paths it does not have, dot files and methods other than GET
 * and HEAD fall through to `next` (the JSON 404). Without a build, `/` explains how to make one.
 */
export function webPage(dir: string): PageHandler {
  const root = resolve(dir);
  return (req, res, next) => {
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    const path = (req.url ?? '/').split('?', 1)[0]!;
    const file = fileOf(root, path);
    if (!file) return next();
    stat(file).then(
      (found) => {
        if (!found.isFile()) return notBuilt(path, res, next);
        const etag = `W/"${found.size.toString(16)}-${found.mtimeMs.toString(16)}"`;
        res.setHeader(
          'Cache-Control',
          HASHED.test(basename(file)) ? 'public, max-age=31536000, immutable' : 'no-cache',
        );
        pageHeaders(res);
        res.setHeader('ETag', etag);
        res.setHeader('Last-Modified', found.mtime.toUTCString());
        if (matchesEtag(req.headers['if-none-match'], etag)) {
          res.statusCode = 304;
          return void res.end();
        }
        res.setHeader('Content-Type', TYPES[extname(file)] ?? 'application/octet-stream');
        res.setHeader('Content-Length', found.size);
        if (req.method === 'HEAD') return void res.end();
        createReadStream(file)
          .on('error', () => res.destroy())
          .pipe(res);
      },
      () => notBuilt(path, res, next),
    );
  };
}

/** The file a path names inside `root`; none for a dot file, a path that leaves `root`, or one that does not decode. */
function fileOf(root: string, path: string): string | undefined {
  let decoded: string;
  try {
    decoded = decodeURIComponent(path);
  } catch {
    return undefined;
  }
  if (decoded.includes('\0') || decoded.split('/').some((segment) => segment.startsWith('.'))) return undefined;
  const file = resolve(root, `.${decoded.endsWith('/') ? `${decoded}index.html` : decoded}`);
  return file === root || file.startsWith(root + sep) ? file : undefined;
}

/** `/` (or `/index.html`) without a build: a page that says how to make one. */
function notBuilt(path: string, res: ServerResponse, next: () => void): void {
  if (path !== '/' && path !== '/index.html') return next();
  pageHeaders(res);
  res.setHeader('Cache-Control', 'no-cache');
  res.setHeader('Content-Type', 'text/html; charset=utf-8');
  res.statusCode = 200;
  res.end(NOT_BUILT);
}

/** Whether `dir` holds a built page (for a note in the log). */
export function isBuilt(dir: string): boolean {
  return existsSync(join(dir, 'index.html'));
}
