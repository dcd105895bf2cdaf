/**
 * The project console: plain TypeScript over the public API, no framework (docs/console.md). Served
 * by the local runtime at `/console/`; `npm run build:console` writes the same page as static files.
 */
import { byId, fill, h } from '../shared/dom';
import { type ConsoleSession, consoleClient, isApiKey, storedSession, storeSession } from './client';
import { errorText, type PageContext } from './page';
import { blockListPage } from './pages/blocklist';
import { flagsPage } from './pages/flags';
import { roomsPage } from './pages/rooms';
import { supportPage } from './pages/support';
import { webhooksPage } from './pages/webhooks';

const pages: Record<string, { readonly title: string; readonly draw: (context: PageContext) => Promise<void> }> = {
  rooms: { title: 'Rooms', draw: roomsPage },
  webhooks: { title: 'Webhooks', draw: webhooksPage },
  flags: { title: 'Feature flags', draw: flagsPage },
  blocklist: { title: 'Block list', draw: blockListPage },
  support: { title: 'Support', draw: supportPage },
};

let leave: (() => void)[] = [];

/** The API answers on the page's own origin when the local runtime serves the console; a hosted copy asks. */
byId<HTMLInputElement>('base-url').value = storedSession()?.baseUrl ?? window.location.origin;

byId<HTMLFormElement>('sign-in-form').addEventListener('submit', async (event) => {
  event.preventDefault();
  const session: ConsoleSession = {
    baseUrl: byId<HTMLInputElement>('base-url').value.trim().replace(/\/+$/, ''),
    credential: byId<HTMLInputElement>('credential').value.trim(),
  };
  fill(byId('sign-in-error'));
  try {
    // An admin route: it proves the credential is the project's key or an admin's token.
    await consoleClient(session).call('/admin/feature-flags');
  } catch (error) {
    fill(byId('sign-in-error'), `Could not sign in: ${errorText(error)}`);
    return;
  }
  storeSession(session);
  byId<HTMLInputElement>('credential').value = '';
  start(session);
});

function start(session: ConsoleSession): void {
  byId('sign-in').hidden = true;
  byId('nav').hidden = false;
  const who = byId('who');
  who.hidden = false;
  fill(
    who,
    `Signed in with ${isApiKey(session.credential) ? 'the API key' : 'a token'} at ${session.baseUrl} `,
    h(
      'button',
      {
        type: 'button',
        class: 'link',
        onclick: () => {
          storeSession(undefined);
          window.location.hash = '';
          window.location.reload();
        },
      },
      'Sign out',
    ),
  );
  const client = consoleClient(session);
  const show = () => {
    for (const stop of leave) stop();
    leave = [];
    const name = window.location.hash.slice(1) in pages ? window.location.hash.slice(1) : 'rooms';
    const page = pages[name] as (typeof pages)[string];
    for (const link of Array.from(document.querySelectorAll<HTMLAnchorElement>('#nav a'))) {
      if (link.hash === `#${name}`) link.setAttribute('aria-current', 'page');
      else link.removeAttribute('aria-current');
    }
    document.title = `${page.title} · Project console`;
    const root = byId('page');
    fill(root);
    void page.draw({ ...client, baseUrl: session.baseUrl, root, onLeave: (stop) => leave.push(stop) });
    byId('main').focus();
  };
  window.addEventListener('hashchange', show);
  show();
}

const resumed = storedSession();
if (resumed) start(resumed);
