/** Support settings: canned responses and business hours (docs/api.md, Support desk). */
import { fill, h } from '../../shared/dom';
import { errorText, type PageContext } from '../page';

interface CannedResponse {
  readonly responseId: string;
  readonly title: string;
  readonly content: string;
  readonly shortcut: string | null;
}

interface Range {
  readonly open: string;
  readonly close: string;
}

interface BusinessHours {
  readonly configured: boolean;
  readonly timezone: string;
  readonly weekly: Partial<Record<string, Range[]>>;
  readonly holidays: string[];
  readonly openNow: boolean;
  readonly nextOpensAt: string | null;
  readonly closesAt: string | null;
}

const DAYS = ['monday', 'tuesday', 'wednesday', 'thursday', 'friday', 'saturday', 'sunday'] as const;

export async function supportPage(context: PageContext): Promise<void> {
  const canned = h('section', { 'aria-labelledby': 'canned-title' });
  const hours = h('section', { 'aria-labelledby': 'hours-title' });
  fill(context.root, canned, hours);
  await Promise.all([cannedResponses(context, canned), businessHours(context, hours)]);
}

async function cannedResponses({ call }: PageContext, section: HTMLElement): Promise<void> {
  const list = h('div');
  const outcome = h('p', { role: 'status' });
  const title = h('input', { id: 'canned-title-input', required: true, maxlength: 120, size: 40 });
  const content = h('textarea', { id: 'canned-content', required: true, maxlength: 2000, rows: 3 });
  const shortcut = h('input', {
    id: 'canned-shortcut',
    maxlength: 32,
    pattern: '[a-z0-9][a-z0-9_\\-]{0,31}',
    'aria-describedby': 'canned-shortcut-help',
  });
  fill(
    section,
    h('h2', { id: 'canned-title' }, 'Canned responses'),
    list,
    h('h3', {}, 'Add a canned response'),
    h(
      'form',
      {
        onsubmit: async (event: SubmitEvent) => {
          event.preventDefault();
          try {
            await call('/admin/support/canned-responses', {
              body: { title: title.value, content: content.value, ...(shortcut.value ? { shortcut: shortcut.value } : {}) },
            });
            fill(outcome, `Added "${title.value}".`);
            title.value = '';
            content.value = '';
            shortcut.value = '';
            await load();
          } catch (error) {
            fill(outcome, h('span', { class: 'error' }, `Not added: ${errorText(error)}`));
          }
        },
      },
      h('label', { for: 'canned-title-input' }, 'Title'),
      title,
      h('label', { for: 'canned-content' }, 'Content'),
      content,
      h('label', { for: 'canned-shortcut' }, 'Shortcut (optional)'),
      shortcut,
      h('p', { id: 'canned-shortcut-help', class: 'muted' }, 'Lower-case letters, digits, _ and -, unique in the project.'),
      h('button', { type: 'submit' }, 'Add'),
    ),
    outcome,
  );

  async function load(): Promise<void> {
    try {
      const { responses } = await call<{ responses: CannedResponse[] }>('/support/canned-responses');
      if (responses.length === 0) return fill(list, h('p', {}, 'No canned responses yet.'));
      fill(
        list,
        h(
          'table',
          { 'aria-label': 'Canned responses' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ...['Title', 'Shortcut', 'Content'].map((label) => h('th', { scope: 'col' }, label)),
              h('th', { scope: 'col' }, h('span', { class: 'muted' }, 'Actions')),
            ),
          ),
          h(
            'tbody',
            {},
            ...responses.map((response) =>
              h(
                'tr',
                {},
                h('td', {}, response.title),
                h('td', {}, response.shortcut ? h('code', {}, `/${response.shortcut}`) : '–'),
                h('td', {}, response.content),
                h(
                  'td',
                  {},
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'danger',
                      'aria-label': `Delete canned response ${response.title}`,
                      onclick: async () => {
                        try {
                          await call(`/admin/support/canned-responses/${encodeURIComponent(response.responseId)}`, { method: 'DELETE' });
                          await load();
                        } catch (error) {
                          fill(outcome, h('span', { class: 'error' }, `Not deleted: ${errorText(error)}`));
                        }
                      },
                    },
                    'Delete',
                  ),
                ),
              ),
            ),
          ),
        ),
      );
    } catch (error) {
      fill(list, h('p', { class: 'error' }, `Could not list canned responses: ${errorText(error)}`));
    }
  }
  await load();
}

/** Hours as the editor shows them: `09:00-12:00, 13:00-17:00` for a day's ranges. */
const rangesText = (ranges: readonly Range[] | undefined) => (ranges ?? []).map((range) => `${range.open}-${range.close}`).join(', ');

function parseRanges(text: string): Range[] {
  return text
    .split(',')
    .map((part) => part.trim())
    .filter(Boolean)
    .map((part) => {
      const [open = '', close = ''] = part.split('-').map((time) => time.trim());
      return { open, close };
    });
}

async function businessHours({ call }: PageContext, section: HTMLElement): Promise<void> {
  const status = h('p', { role: 'status' });
  const outcome = h('p', { role: 'status' });
  const timezone = h('input', { id: 'hours-timezone', required: true, size: 30 });
  const dayInputs = Object.fromEntries(
    DAYS.map((day) => [day, h('input', { id: `hours-${day}`, size: 30, placeholder: '09:00-17:00', 'aria-describedby': 'hours-help' })]),
  ) as Record<(typeof DAYS)[number], HTMLInputElement>;
  let holidays: string[] = [];
  const show = (answer: BusinessHours) => {
    timezone.value = answer.timezone;
    holidays = answer.holidays;
    for (const day of DAYS) dayInputs[day].value = rangesText(answer.weekly[day]);
    const when = answer.openNow
      ? `Open now${answer.closesAt ? `, closes ${new Date(answer.closesAt).toLocaleString()}` : ''}.`
      : `Closed now${answer.nextOpensAt ? `, opens ${new Date(answer.nextOpensAt).toLocaleString()}` : ''}.`;
    fill(status, answer.configured ? `${when} Timezone ${answer.timezone}.` : 'Not configured: support counts as always open.');
  };
  // Read before the form is shown, so its answer never overwrites what someone typed meanwhile.
  try {
    show(await call<BusinessHours>('/support/business-hours'));
  } catch (error) {
    return fill(
      section,
      h('h2', { id: 'hours-title' }, 'Business hours'),
      h('p', { class: 'error' }, `Could not read business hours: ${errorText(error)}`),
    );
  }
  fill(
    section,
    h('h2', { id: 'hours-title' }, 'Business hours'),
    status,
    h(
      'form',
      {
        onsubmit: async (event: SubmitEvent) => {
          event.preventDefault();
          const weekly = Object.fromEntries(
            DAYS.map((day) => [day, parseRanges(dayInputs[day].value)] as const).filter(([, ranges]) => ranges.length > 0),
          );
          try {
            show(
              await call<BusinessHours>('/admin/support/business-hours', {
                method: 'PUT',
                body: { timezone: timezone.value, weekly, holidays },
              }),
            );
            fill(outcome, 'Business hours saved.');
          } catch (error) {
            fill(outcome, h('span', { class: 'error' }, `Not saved: ${errorText(error)}`));
          }
        },
      },
      h('label', { for: 'hours-timezone' }, 'Timezone (IANA, e.g. Europe/Berlin)'),
      timezone,
      h('p', { id: 'hours-help', class: 'muted' }, 'Each day: ranges of local times such as 09:00-12:00, 13:00-17:00; empty is closed.'),
      ...DAYS.map((day) => h('div', {}, h('label', { for: `hours-${day}` }, day[0]?.toUpperCase() + day.slice(1)), dayInputs[day])),
      h('p', {}, h('button', { type: 'submit' }, 'Save business hours')),
    ),
    outcome,
  );
}
