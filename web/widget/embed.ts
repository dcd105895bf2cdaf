/**
 * The embed widget: `<script src="<base>/embed.js" data-project="<projectId>" data-room="<roomId or
 * support>" async></script>` on a site adds a chat launcher and panel, isolated in a shadow root.
 * docs/widget.md has the tag's attributes and the Content-Security-Policy a site needs.
 */
import { WidgetChat } from './chat';
import { ownScript, settingsOf } from './settings';
import { WidgetView } from './view';

function mount(): void {
  const script = ownScript();
  const settings = script && settingsOf(script);
  if (!settings) return;
  const show = () => {
    let chat: WidgetChat | undefined;
    const view = new WidgetView(settings.title, {
      opened: () => void chat?.start(),
      send: (text) => void chat?.send(text),
      typed: () => chat?.typed(),
    });
    chat = new WidgetChat(settings, view);
    document.body.append(view.host);
    performance.mark('chat-widget-ready');
    window.dispatchEvent(new CustomEvent('chat-widget:ready'));
  };
  if (document.body) show();
  else document.addEventListener('DOMContentLoaded', show, { once: true });
}

mount();
