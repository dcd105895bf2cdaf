/**
 * The pages' only DOM helper: `h('button', { type: 'button', onclick }, 'Replay')`. Text children
 * become text nodes, never HTML, so nothing a user typed (a message, a room name) is parsed as markup.
 */
export type Child = Node | string | number | null | undefined | false;
type Props = Record<string, string | number | boolean | null | undefined | ((event: any) => void)>;

export function h<K extends keyof HTMLElementTagNameMap>(tag: K, props: Props = {}, ...children: Child[]): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(props)) {
    if (typeof value === 'function') element.addEventListener(name.replace(/^on/, ''), value);
    else if (value === true) element.setAttribute(name, '');
    else if (value !== false && value !== null && value !== undefined) element.setAttribute(name, String(value));
  }
  element.append(...children.filter((child) => child !== null && child !== undefined && child !== false).map(asNode));
  return element;
}

const asNode = (child: Node | string | number | true): Node => (child instanceof Node ? child : document.createTextNode(String(child)));

/** Replaces an element's children. */
export function fill(element: Element, ...children: Child[]): void {
  element.replaceChildren(...children.filter((child) => child !== null && child !== undefined && child !== false).map(asNode));
}

/** The element with this id, which the page's HTML must have. */
export function byId<T extends HTMLElement = HTMLElement>(id: string): T {
  const element = document.getElementById(id);
  if (!element) throw new Error(`The page has no #${id}`);
  return element as T;
}
