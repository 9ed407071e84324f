import { existsSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import express, { type RequestHandler, type Response } from 'express';

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

function pageHeaders(res: Response): void {
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

/**
 * Serves the built chat page from `dir` at `/`. Hashed assets are cached for a year (a rebuild
 * renames them); `index.html` is `no-cache`, so a browser revalidates it (ETag, 304) and always
 * loads the current build's files. Paths it does not have fall through to the next handler
 * (the JSON 404). Without a build, `/` explains how to make one.
 */
export function webPage(dir: string): RequestHandler[] {
  const files = express.static(dir, {
    index: 'index.html',
    redirect: false,
    dotfiles: 'ignore',
    setHeaders(res, path) {
      res.setHeader('Cache-Control', HASHED.test(basename(path)) ? 'public, max-age=31536000, immutable' : 'no-cache');
      pageHeaders(res);
    },
  });
  const notBuilt: RequestHandler = (req, res, next) => {
    if ((req.method !== 'GET' && req.method !== 'HEAD') || (req.path !== '/' && req.path !== '/index.html'))
      return next();
    pageHeaders(res);
    res.setHeader('Cache-Control', 'no-cache');
    res.status(200).type('html').send(NOT_BUILT);
  };
  return [files, notBuilt];
}

/** Whether `dir` holds a built page (for a note in the log). */
export function isBuilt(dir: string): boolean {
  return existsSync(join(dir, 'index.html'));
}
