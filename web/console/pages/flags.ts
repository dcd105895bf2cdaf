/** Feature flags: each one's effective value (the project's override, else the deployment's default), toggled with a switch. */
import { fill, h } from '../../shared/dom';
import { requestJson } from '../../shared/http';
import { errorText, type PageContext } from '../page';

type Flags = Record<string, boolean>;

export async function flagsPage({ call, root, baseUrl }: PageContext): Promise<void> {
  const list = h('div');
  const outcome = h('p', { role: 'status' });
  fill(
    root,
    h(
      'section',
      { 'aria-labelledby': 'flags-title' },
      h('h2', { id: 'flags-title' }, 'Feature flags'),
      h('p', { class: 'muted' }, 'A switch sets the project\'s override; "Use default" removes it.'),
      list,
      outcome,
    ),
  );
  // The anonymous answer of GET /client/feature-flags is the deployment's defaults: every flag there is.
  let defaults: Flags;
  let overrides: Flags;
  try {
    [defaults, overrides] = await Promise.all([
      requestJson<{ flags: Flags }>(`${baseUrl}/client/feature-flags`).then((answer) => answer.flags),
      call<{ overrides: Flags }>('/admin/feature-flags').then((answer) => answer.overrides),
    ]);
  } catch (error) {
    return fill(list, h('p', { class: 'error' }, `Could not read the flags: ${errorText(error)}`));
  }

  const save = async (next: Flags, said: string) => {
    try {
      overrides = (await call<{ overrides: Flags }>('/admin/feature-flags', { method: 'PUT', body: { overrides: next } })).overrides;
      fill(outcome, said);
    } catch (error) {
      fill(outcome, h('span', { class: 'error' }, `Not saved: ${errorText(error)}`));
    }
    render();
  };

  function render(): void {
    fill(
      list,
      h(
        'table',
        { 'aria-label': 'Feature flags' },
        h(
          'thead',
          {},
          h(
            'tr',
            {},
            h('th', { scope: 'col' }, 'Flag'),
            h('th', { scope: 'col' }, 'Default'),
            h('th', { scope: 'col' }, 'Override'),
            h('th', { scope: 'col' }, h('span', { class: 'muted' }, 'Actions')),
          ),
        ),
        h(
          'tbody',
          {},
          ...Object.keys(defaults)
            .sort()
            .map((flag) => {
              const overridden = flag in overrides;
              const on = overrides[flag] ?? defaults[flag] ?? false;
              const id = `flag-${flag}`;
              return h(
                'tr',
                { 'data-flag': flag },
                h(
                  'td',
                  {},
                  h('input', {
                    id,
                    type: 'checkbox',
                    role: 'switch',
                    checked: on,
                    onchange: (event: Event) => {
                      const checked = (event.target as HTMLInputElement).checked;
                      void save({ ...overrides, [flag]: checked }, `${flag} is now ${checked ? 'on' : 'off'} for this project.`);
                    },
                  }),
                  h('label', { for: id, class: 'inline' }, flag),
                ),
                h('td', {}, defaults[flag] ? 'on' : 'off'),
                h('td', {}, overridden ? (overrides[flag] ? 'on' : 'off') : '–'),
                h(
                  'td',
                  {},
                  overridden
                    ? h(
                        'button',
                        {
                          type: 'button',
                          class: 'secondary',
                          'aria-label': `Use default for ${flag}`,
                          onclick: () => {
                            const { [flag]: _removed, ...rest } = overrides;
                            void save(rest, `${flag} follows the default again.`);
                          },
                        },
                        'Use default',
                      )
                    : null,
                ),
              );
            }),
        ),
      ),
    );
  }
  render();
}
