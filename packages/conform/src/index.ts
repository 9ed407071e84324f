/**
 * The conformance kit of the Commands extension v1: asks an A2A server, over each transport its
 * card declares, whether it keeps the rules of `spec/commands-extension-v1.md` and
 * `spec/behaviour.md`, as far as can be seen from outside. The package's bin, `conform <url>`,
 * runs it from a terminal; `conform` runs it from code and returns the report.
 */
export { CardSignatureRefused, conform, ConformUnreachable, type ConformOptions } from './conform.js';
export { runConform, type ConformCommand } from './command-line.js';
export { CONFORM_EXIT, CONFORM_EXIT_MEANINGS } from './exit-codes.js';
export {
  formatReport,
  type CardSignatureReport,
  type CheckResult,
  type ConformReport,
  type Outcome,
} from './results.js';
export {
  checkCardSignature,
  describeCardSignature,
  loadCardKeys,
  type CardKeys,
  type CardSignatureCheck,
} from './card-signature.js';
export { TRANSPORT_NAMES, type TransportName } from './probe-client.js';
