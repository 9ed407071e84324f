/**
 * A hook's secret (issue 39, docs/schedules.md): 32 random bytes in base64url, the last segment
 * of its trigger URL. The store keeps only its SHA-256; a POST's secret is hashed and compared
 * with it in constant time. No salt or slow hash is needed: the secret is 256 random bits, not a
 * password, so its hash cannot be guessed back.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** How a secret reads: 43 characters of base64url (256 bits). */
export const HOOK_SECRET_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function newHookSecret(): { secret: string; sha256: string } {
  const secret = randomBytes(32).toString('base64url');
  return { secret, sha256: hookSha256(secret) };
}

export function hookSha256(secret: string): string {
  return createHash('sha256').update(secret, 'utf8').digest('hex');
}

/** Whether `secret` is the one whose SHA-256 is `sha256`, in time independent of where they differ. */
export function secretMatches(secret: string, sha256: string | undefined): boolean {
  const given = createHash('sha256').update(secret, 'utf8').digest();
  // No hash stored (not a hook): compared with one that matches nothing, taking the same time.
  const stored = sha256 !== undefined && /^[0-9a-f]{64}$/.test(sha256) ? Buffer.from(sha256, 'hex') : NO_MATCH;
  return timingSafeEqual(given, stored) && stored !== NO_MATCH;
}

const NO_MATCH = Buffer.alloc(32);
