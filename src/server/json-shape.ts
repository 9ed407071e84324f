/**
 * Bounds on the size of a parsed JSON value, checked without recursion: how deep its objects
 * and arrays nest and how many values it holds. Used at the edge before anything recursive
 * (the SDK's conversions, `structuredClone`) sees a request; a recursive walk would itself
 * overflow the stack on the input it is meant to refuse.
 */

export type JsonPath = readonly (string | number)[];

export interface JsonBounds {
  /** Levels of objects and arrays: the root is level 0, and a container at level `maxDepth` is too deep. */
  maxDepth: number;
  /** Values in all: every object, array, string, number, boolean and null, the root included. */
  maxValues: number;
}

/** What broke a bound first, or nothing when `root` is within both. */
export type JsonExcess = { tooDeepAt: JsonPath } | { tooMany: true } | undefined;

/** Path segments kept for naming where a value is too deep: enough to name the field. */
const NAMED_SEGMENTS = 4;

/**
 * Walks `root` depth-first and stops at the first bound it breaks, so a huge value costs no
 * more than the bound (apart from enumerating the keys of one huge object, which V8 does
 * all at once).
 */
export function exceedsJson(root: unknown, bounds: JsonBounds): JsonExcess {
  if (typeof root !== 'object' || root === null) return undefined;
  const containers: object[] = [root];
  const depths: number[] = [0];
  let values = 1;
  while (containers.length > 0) {
    const node = containers.pop()!;
    const depth = depths.pop()!;
    if (depth >= bounds.maxDepth) return { tooDeepAt: pathToDeep(root, bounds.maxDepth) };
    if (Array.isArray(node)) {
      values += node.length;
      if (values > bounds.maxValues) return { tooMany: true };
      for (const child of node) {
        if (typeof child === 'object' && child !== null) {
          containers.push(child);
          depths.push(depth + 1);
        }
      }
    } else {
      // JSON.parse and the protobuf decoder make plain objects: no inherited enumerable keys.
      for (const key in node) {
        if (++values > bounds.maxValues) return { tooMany: true };
        const child = (node as Record<string, unknown>)[key];
        if (typeof child === 'object' && child !== null) {
          containers.push(child);
          depths.push(depth + 1);
        }
      }
    }
  }
  return undefined;
}

/**
 * Characters in the keys and strings of `root`, counted without recursion; the count stops
 * once it passes `max` (so the answer is then some number above `max`).
 */
export function jsonTextChars(root: unknown, max: number): number {
  const pending: unknown[] = [root];
  let chars = 0;
  while (pending.length > 0 && chars <= max) {
    const node = pending.pop();
    if (typeof node === 'string') chars += node.length;
    else if (Array.isArray(node)) for (const child of node) pending.push(child);
    else if (typeof node === 'object' && node !== null) {
      for (const key in node) {
        chars += key.length;
        pending.push((node as Record<string, unknown>)[key]);
      }
    }
  }
  return chars;
}

/**
 * The path of the first container at `maxDepth` in the order {@link exceedsJson} walks. Paths
 * cost an allocation per container, so they are built only once a value is known too deep.
 */
function pathToDeep(root: object, maxDepth: number): JsonPath {
  const containers: object[] = [root];
  const depths: number[] = [0];
  const paths: JsonPath[] = [[]];
  while (containers.length > 0) {
    const node = containers.pop()!;
    const depth = depths.pop()!;
    const path = paths.pop()!;
    if (depth >= maxDepth) return path;
    const keys: (string | number)[] = Array.isArray(node) ? node.map((_, i) => i) : Object.keys(node);
    for (const key of keys) {
      const child = (node as Record<string | number, unknown>)[key];
      if (typeof child === 'object' && child !== null) {
        containers.push(child);
        depths.push(depth + 1);
        paths.push(path.length < NAMED_SEGMENTS ? [...path, key] : path);
      }
    }
  }
  return [];
}

/**
 * The same bounds read from JSON text, before it is parsed: parsing a 4 MB body of 300,000
 * keys or of thousands of deep branches costs far more than reading its bytes once. Counts
 * objects, arrays and strings (keys included) and stops at the first bound broken; skips
 * string contents, escapes included. Text that is not JSON gives no useful answer, and the
 * parser refuses it next.
 */
export function exceedsJsonText(bytes: Uint8Array, bounds: JsonBounds): 'depth' | 'values' | undefined {
  let depth = 0;
  let values = 0;
  for (let i = 0; i < bytes.length; i++) {
    const byte = bytes[i];
    if (byte === QUOTE) {
      // Skip to the closing quote; a backslash escapes the byte after it.
      for (i++; i < bytes.length && bytes[i] !== QUOTE; i++) if (bytes[i] === BACKSLASH) i++;
      if (++values > bounds.maxValues) return 'values';
    } else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) {
      if (++depth > bounds.maxDepth) return 'depth';
      if (++values > bounds.maxValues) return 'values';
    } else if (byte === CLOSE_BRACE || byte === CLOSE_BRACKET) {
      depth--;
    }
  }
  return undefined;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;

const PLAIN_KEY = /^[A-Za-z_$][A-Za-z0-9_$]{0,39}$/;
const MAX_KEY_CHARS = 40;

/**
 * A path as a person writes it, `message.parts[0].text`, under `root` when the path is empty.
 * Keys are the client's own text: long ones are cut, so a message never repeats huge input.
 */
export function formatPath(path: JsonPath, root: string): string {
  if (path.length === 0) return root;
  let text = '';
  for (const segment of path) {
    if (typeof segment === 'number') text += `[${segment}]`;
    else if (PLAIN_KEY.test(segment)) text += text === '' ? segment : `.${segment}`;
    else {
      const cut = segment.length > MAX_KEY_CHARS ? `${segment.slice(0, MAX_KEY_CHARS)}…` : segment;
      text += `[${JSON.stringify(cut)}]`;
    }
  }
  return text;
}
