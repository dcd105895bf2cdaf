/**
 * The widget's styles, adopted by its shadow root as a constructable stylesheet: a host page's
 * `style-src` does not govern those (a `<style>` element would need `'unsafe-inline'` or a hash).
 *
 * The page's own rules cannot select into the shadow root, but they reach its host element, and
 * inherited properties (color, font) flow in from there. `:host` resets everything with
 * `!important`, which beats the page's `!important` (the inner context wins for important
 * declarations), and every element below sets its colours itself.
 *
 * Colours meet WCAG AA: #1f2328 on white 15.8:1, white on #0b57d0 6.5:1, #4d5562 on white 7.5:1,
 * #1f2328 on #eef1f5 13.9:1, #5c3b00 on #fff4d6 9.4:1.
 */
export const WIDGET_CSS = `
:host {
  all: initial !important;
  display: block !important;
  position: fixed !important;
  right: 20px !important;
  bottom: 20px !important;
  z-index: 2147483647 !important;
  font: 15px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif !important;
  color: #1f2328 !important;
}
*, *::before, *::after { box-sizing: border-box; font: inherit; color: inherit; margin: 0; }
[hidden] { display: none !important; }
button { cursor: pointer; border: 0; border-radius: 8px; padding: 8px 14px; background: #0b57d0; color: #fff; font-weight: 600; }
button:focus-visible, input:focus-visible { outline: 3px solid #f0b400; outline-offset: 2px; }
.launcher { display: flex; align-items: center; gap: 8px; margin-left: auto; border-radius: 999px; padding: 12px 18px; box-shadow: 0 4px 14px rgba(0,0,0,.25); }
.panel { display: flex; flex-direction: column; width: min(360px, calc(100vw - 40px)); height: min(520px, calc(100vh - 100px)); margin-bottom: 12px; background: #fff; color: #1f2328; border: 1px solid #c9ced6; border-radius: 12px; box-shadow: 0 8px 28px rgba(0,0,0,.25); overflow: hidden; }
.header { display: flex; align-items: center; gap: 8px; padding: 10px 12px; background: #0b57d0; color: #fff; }
.header h2 { flex: 1; font-size: 16px; font-weight: 700; }
.header .close { background: transparent; color: #fff; padding: 4px 10px; font-size: 18px; line-height: 1; }
.status { display: flex; gap: 12px; padding: 6px 12px; font-size: 13px; color: #4d5562; background: #fff; border-bottom: 1px solid #e3e6ea; }
.banner { padding: 8px 12px; font-size: 14px; background: #fff4d6; color: #5c3b00; border-bottom: 1px solid #e8d7a6; }
.messages { flex: 1; overflow-y: auto; padding: 12px; background: #fff; }
.messages ol { list-style: none; padding: 0; display: flex; flex-direction: column; gap: 8px; }
.message { max-width: 85%; padding: 8px 10px; border-radius: 10px; background: #eef1f5; color: #1f2328; align-self: flex-start; white-space: pre-wrap; overflow-wrap: anywhere; }
.message.own { align-self: flex-end; background: #0b57d0; color: #fff; }
.message .author { display: block; font-size: 12px; font-weight: 600; }
.typing { min-height: 1.4em; padding: 0 12px; font-size: 13px; color: #4d5562; background: #fff; }
.composer { display: flex; gap: 8px; padding: 10px 12px; border-top: 1px solid #e3e6ea; background: #fff; }
.composer input { flex: 1; min-width: 0; padding: 8px 10px; border: 1px solid #6b7280; border-radius: 8px; background: #fff; color: #1f2328; }
.visually-hidden { position: absolute; width: 1px; height: 1px; overflow: hidden; clip: rect(0 0 0 0); white-space: nowrap; }
`;

/** Applies the styles to a shadow root: adopted where the browser can, else a `<style>` (which a strict `style-src` may refuse). */
export function applyStyles(root: ShadowRoot): void {
  if ('adoptedStyleSheets' in root && typeof CSSStyleSheet === 'function' && 'replaceSync' in CSSStyleSheet.prototype) {
    const sheet = new CSSStyleSheet();
    sheet.replaceSync(WIDGET_CSS);
    root.adoptedStyleSheets = [sheet];
    return;
  }
  const style = document.createElement('style');
  style.textContent = WIDGET_CSS;
  root.append(style);
}
