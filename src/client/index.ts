/** The command-line clients: `tiny-harness chat` and `tiny-harness send`, on the SDK's own client. */
export { runChat, type ChatOptions } from './chat-open.js';
export { runSend, type SendOptions } from './send.js';
export { agentBaseUrl, parseHeader, type Header } from './connect.js';
