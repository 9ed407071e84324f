/** The `card` key of the config file: how the agent card is signed (issue 38, docs/security.md). */
import * as z from 'zod';

const signingSchema = z.strictObject({
  keyFile: z
    .string()
    .min(1)
    .describe(
      'The private key file that signs every card served: PEM, or a JWK (JSON); an EC P-256 key signs with ES256, an RSA one (2048 bits or more) with RS256. Replacing or rewriting the file is picked up by the next card, without a restart. Relative to the folder the harness starts in.',
    ),
  kid: z
    .string()
    .min(1)
    .max(200)
    .describe("The key's id (`kid`) in each signature and in the JWKS; a JWK file's own `kid` decides over it."),
});

export const cardSchema = z.strictObject({
  signing: signingSchema
    .optional()
    .describe(
      'Sign every card served, the public one and the extended one (A2A 1.0 section 8.4), and serve the public keys as a JWKS at `/.well-known/jwks.json`. Unset: cards are not signed.',
    ),
});
