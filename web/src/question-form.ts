/**
 * A tool call's question on the page (MCP elicitation, issue 39): a form drawn from the
 * question's JSON Schema (a text box per string, a number box per number, a checkbox per
 * boolean, a list per enum), with Answer, Decline and Cancel; each sends the wire's answer
 * (`elicitationAnswerPart`). A link's question shows the link and a Done button, which sends
 * "done".
 */
import type { Part } from '@a2a-js/sdk';
import { elicitationAnswerPart, type ElicitationAction, type ElicitationData } from '../../src/elicitations.js';
import { element } from './dom.js';

type Field = { type?: string; enum?: unknown[]; description?: string; title?: string };

/** Sends an answer: its text (shown as the user's message) and, for a form, its data part. */
export type SendAnswer = (text: string, parts?: Part[]) => void;

export type { ElicitationData };

export function questionForm(question: ElicitationData, send: SendAnswer): HTMLElement {
  const form = element('form', 'question-form');
  form.dataset['elicitation'] = question.id;
  const lock = () => form.querySelectorAll('input, select, button').forEach((el) => el.setAttribute('disabled', ''));
  if (question.mode === 'url') {
    const link = element('a', 'question-link', question.url ?? '');
    link.href = question.url ?? '';
    link.target = '_blank';
    link.rel = 'noopener noreferrer';
    const done = button('Done', 'primary');
    done.addEventListener('click', () => (lock(), send('done')));
    form.append(link, done);
    return form;
  }
  const properties = (question.schema?.properties ?? {}) as Record<string, Field>;
  const required = new Set((question.schema?.required as string[] | undefined) ?? []);
  const reads: (() => [string, unknown] | undefined)[] = [];
  for (const [name, field] of Object.entries(properties)) {
    const label = element('label', 'question-field', `${field.title ?? name}${required.has(name) ? ' *' : ''}`);
    const { control, read } = controlFor(field, required.has(name));
    control.setAttribute('name', name);
    if (field.description) control.title = field.description;
    label.append(control);
    form.append(label);
    reads.push(() => {
      const value = read();
      return value === undefined ? undefined : [name, value];
    });
  }
  const answer = (action: ElicitationAction) => {
    const content = Object.fromEntries(reads.flatMap((read) => (read() ? [read()!] : [])));
    const part = elicitationAnswerPart(
      action === 'accept' ? { elicitation: question.id, action, content } : { elicitation: question.id, action },
    );
    lock();
    send(action === 'accept' ? JSON.stringify(content) : action, [part]);
  };
  const accept = button('Answer', 'primary');
  accept.type = 'submit';
  const decline = button('Decline');
  const cancel = button('Cancel');
  decline.addEventListener('click', () => answer('decline'));
  cancel.addEventListener('click', () => answer('cancel'));
  form.addEventListener('submit', (event) => (event.preventDefault(), answer('accept')));
  form.append(accept, decline, cancel);
  return form;
}

function button(text: string, className = ''): HTMLButtonElement {
  const el = element('button', className, text);
  el.type = 'button';
  return el;
}

/** The control of one field, and how to read its value (undefined: left empty). */
function controlFor(field: Field, required: boolean): { control: HTMLElement; read: () => unknown } {
  if (Array.isArray(field.enum)) {
    const select = element('select');
    if (!required) select.append(new Option('', ''));
    for (const choice of field.enum) select.append(new Option(String(choice), String(choice)));
    return { control: select, read: () => field.enum!.find((choice) => String(choice) === select.value) };
  }
  const input = element('input');
  if (field.type === 'boolean') {
    input.type = 'checkbox';
    return { control: input, read: () => input.checked };
  }
  if (field.type === 'number' || field.type === 'integer') {
    input.type = 'number';
    if (field.type === 'number') input.step = 'any';
    return { control: input, read: () => (input.value === '' ? undefined : Number(input.value)) };
  }
  input.type = 'text';
  input.required = required;
  return { control: input, read: () => (input.value === '' && !required ? undefined : input.value) };
}
