/**
 * Model replies as Markdown: parsed by marked, with any HTML in them shown as text, then
 * sanitized by DOMPurify (the second line of defense) before any of it reaches the page. A reply is text written by a model, which may repeat whatever a web page
 * or a tool put in front of it, so only the tags plain formatting needs survive: no scripts,
 * no event attributes, no images (a remote image is a way to send data out), no forms, no
 * styles. Links open in a new tab and tell nothing of the page they came from.
 */
import DOMPurify from 'dompurify';
import { Marked } from 'marked';

const markdown = new Marked({
  gfm: true,
  breaks: true,
  async: false,
  // HTML written in a reply is shown as the text it is, never parsed: what a model quotes
  // stays readable, and no element it names is ever built, not even to be sanitized away.
  renderer: {
    html: ({ text }) => escapeHtml(text),
    // An image is a link to it: a remote image would load by itself, telling its server who reads.
    image: ({ href, text }) => `<a href="${escapeHtml(href)}">${escapeHtml(text || href)}</a>`,
  },
});

function escapeHtml(text: string): string {
  return text.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
}

const ALLOWED_TAGS = [
  'p',
  'br',
  'hr',
  'strong',
  'em',
  'del',
  's',
  'code',
  'pre',
  'blockquote',
  'ul',
  'ol',
  'li',
  'a',
  'h1',
  'h2',
  'h3',
  'h4',
  'h5',
  'h6',
  'table',
  'thead',
  'tbody',
  'tr',
  'th',
  'td',
  'input',
];
/** `input` only as the checkbox of a task list item, which marked renders disabled. */
const ALLOWED_ATTR = ['href', 'title', 'start', 'type', 'checked', 'disabled', 'align'];
/** Links to the web and to mail only: no `javascript:`, no `data:`. */
const ALLOWED_URI_REGEXP = /^(?:https?:|mailto:)/i;

const sanitizer = DOMPurify(window);

/** Renders `text` as sanitized Markdown into `el`, replacing what it held; code blocks get a copy button. */
export function renderMarkdown(el: HTMLElement, text: string): void {
  const html = markdown.parse(text) as string;
  const fragment = sanitizer.sanitize(html, {
    ALLOWED_TAGS,
    ALLOWED_ATTR,
    ALLOWED_URI_REGEXP,
    RETURN_DOM_FRAGMENT: true,
  });
  for (const link of fragment.querySelectorAll('a')) {
    link.target = '_blank';
    link.rel = 'noopener noreferrer';
  }
  for (const box of fragment.querySelectorAll('input')) {
    if (box.type === 'checkbox') box.disabled = true;
    else box.remove();
  }
  for (const pre of fragment.querySelectorAll('pre')) withCopyButton(pre);
  el.replaceChildren(fragment);
  el.classList.add('markdown');
}

/** Puts a code block in a box whose header row holds a button that copies its text. */
function withCopyButton(pre: HTMLPreElement): void {
  const block = document.createElement('div');
  block.className = 'code-block';
  pre.replaceWith(block);
  const copy = document.createElement('button');
  copy.type = 'button';
  copy.className = 'copy';
  copy.textContent = 'Copy';
  copy.title = 'Copy the code';
  copy.addEventListener('click', () => void copyText(pre, copy));
  const head = document.createElement('div');
  head.className = 'code-head';
  head.append(copy);
  block.append(head, pre);
}

async function copyText(pre: HTMLElement, button: HTMLButtonElement): Promise<void> {
  const text = pre.textContent ?? '';
  try {
    // The clipboard needs a secure context (https, or localhost).
    await navigator.clipboard.writeText(text);
    button.textContent = 'Copied';
  } catch {
    // Elsewhere: select the code, for the keyboard's copy.
    getSelection()?.selectAllChildren(pre);
    button.textContent = 'Selected';
  }
  setTimeout(() => (button.textContent = 'Copy'), 1500);
}
