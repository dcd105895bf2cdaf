import { h } from '../shared/dom';
import { applyStyles } from './styles';

/** What the view reports back to the chat: the visitor's actions. */
export interface ViewActions {
  /** The launcher opened the panel (the first time, the chat starts). */
  readonly opened: () => void;
  /** Enter (or the Send button) in the message box, with its text trimmed. */
  readonly send: (text: string) => void;
  /** The visitor typed in the message box. */
  readonly typed: () => void;
}

export interface ShownMessage {
  readonly id: number;
  readonly author: string;
  readonly content: string;
  readonly own: boolean;
}

/** A speech bubble drawn in SVG: no image request (a site's `img-src` stays as it is), no emoji font needed. */
function bubbleIcon(): SVGSVGElement {
  const ns = 'http://www.w3.org/2000/svg';
  const svg = document.createElementNS(ns, 'svg');
  svg.setAttribute('viewBox', '0 0 24 24');
  svg.setAttribute('width', '20');
  svg.setAttribute('height', '20');
  svg.setAttribute('aria-hidden', 'true');
  svg.setAttribute('focusable', 'false');
  const path = document.createElementNS(ns, 'path');
  path.setAttribute('d', 'M4 4h16a2 2 0 0 1 2 2v10a2 2 0 0 1-2 2H9l-5 4v-4a2 2 0 0 1-2-2V6a2 2 0 0 1 2-2z');
  path.setAttribute('fill', 'currentColor');
  svg.append(path);
  return svg;
}

/**
 * The widget's DOM, in an open shadow root on a `<div>` of the page's `<body>`: a launcher button
 * and a panel (a non-modal dialog) with the connection state, presence, the handoff banner, the
 * messages (a `log`, so screen readers announce what arrives), who is typing and the message box.
 * Text is set with `textContent` only, never parsed as HTML.
 */
export class WidgetView {
  readonly host: HTMLDivElement;
  private readonly launcher: HTMLButtonElement;
  private readonly launcherText = document.createTextNode('Open chat');
  private readonly panel: HTMLElement;
  private readonly state: HTMLSpanElement;
  private readonly presence: HTMLSpanElement;
  private readonly banner: HTMLParagraphElement;
  private readonly log: HTMLDivElement;
  private readonly list: HTMLOListElement;
  private readonly typing: HTMLParagraphElement;
  private readonly input: HTMLInputElement;
  private readonly shownIds = new Set<number>();

  constructor(title: string, actions: ViewActions) {
    this.host = h('div', { 'data-chat-widget': '' });
    const root = this.host.attachShadow({ mode: 'open' });
    applyStyles(root);

    this.launcher = h('button', { type: 'button', class: 'launcher', 'aria-expanded': 'false', 'aria-controls': 'chat-panel' });
    this.launcher.append(bubbleIcon(), this.launcherText);

    const heading = h('h2', { id: 'chat-title' }, title);
    const close = h('button', { type: 'button', class: 'close', 'aria-label': 'Close chat' }, '\u00D7');
    this.state = h('span', { class: 'state' }, 'Not connected');
    this.presence = h('span', { class: 'presence' });
    this.banner = h('p', { class: 'banner', role: 'status' });
    this.banner.hidden = true;
    this.list = h('ol');
    this.log = h('div', { class: 'messages', role: 'log', 'aria-live': 'polite', 'aria-label': 'Messages', tabindex: '0' }, this.list);
    this.typing = h('p', { class: 'typing', 'aria-live': 'polite' });
    this.input = h('input', {
      type: 'text',
      id: 'chat-message',
      autocomplete: 'off',
      maxlength: '4000',
      enterkeyhint: 'send',
    });
    const label = h('label', { for: 'chat-message', class: 'visually-hidden' }, 'Message');
    const form = h('form', { class: 'composer' }, label, this.input, h('button', { type: 'submit' }, 'Send'));
    this.panel = h(
      'section',
      { id: 'chat-panel', class: 'panel', role: 'dialog', 'aria-labelledby': 'chat-title' },
      h('div', { class: 'header' }, heading, close),
      h('div', { class: 'status' }, this.state, this.presence),
      this.banner,
      this.log,
      this.typing,
      form,
    );
    this.panel.hidden = true;
    root.append(this.panel, this.launcher);

    this.launcher.addEventListener('click', () => (this.panel.hidden ? this.open(actions) : this.close()));
    close.addEventListener('click', () => this.close());
    this.panel.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.preventDefault();
        this.close();
      }
    });
    form.addEventListener('submit', (event) => {
      event.preventDefault();
      const text = this.input.value.trim();
      if (!text) return;
      this.input.value = '';
      actions.send(text);
    });
    this.input.addEventListener('input', () => actions.typed());
  }

  private open(actions: ViewActions): void {
    this.panel.hidden = false;
    this.launcher.setAttribute('aria-expanded', 'true');
    this.launcherText.data = 'Hide chat';
    this.input.focus();
    actions.opened();
  }

  /** Hides the panel and gives the focus back to the launcher. */
  close(): void {
    if (this.panel.hidden) return;
    this.panel.hidden = true;
    this.launcher.setAttribute('aria-expanded', 'false');
    this.launcherText.data = 'Open chat';
    this.launcher.focus();
  }

  /** The connection state in words, and as `data-state` on the panel (tests and styling). */
  showState(state: string, words: string): void {
    this.panel.dataset.state = state;
    this.state.textContent = words;
  }

  showPresence(online: number | undefined): void {
    this.presence.textContent = online === undefined ? '' : `${online} online`;
  }

  showBanner(text: string | undefined): void {
    this.banner.hidden = text === undefined;
    this.banner.textContent = text ?? '';
  }

  showTyping(text: string | undefined): void {
    this.typing.textContent = text ?? '';
  }

  /** Appends a message once, whatever path brought it (the SDK delivers each once; a resend is not shown twice). */
  showMessage(message: ShownMessage): void {
    if (this.shownIds.has(message.id)) return;
    this.shownIds.add(message.id);
    const item = h(
      'li',
      { class: message.own ? 'message own' : 'message' },
      h('span', { class: 'author' }, message.author),
      message.content,
    );
    this.list.append(item);
    this.log.scrollTop = this.log.scrollHeight;
  }

  remove(): void {
    this.host.remove();
  }
}
