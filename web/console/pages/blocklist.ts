/** The project's block list: terms that flag a message (`auto_flag`) without stopping it. */
import { fill, h } from '../../shared/dom';
import { errorText, type PageContext } from '../page';

interface BlockList {
  readonly terms: readonly string[];
  readonly updatedAt: string | null;
}

export async function blockListPage({ call, root }: PageContext): Promise<void> {
  const terms = h('textarea', { id: 'blocklist-terms', rows: 10, 'aria-describedby': 'blocklist-help' });
  const outcome = h('p', { role: 'status' });
  const show = (list: BlockList) => {
    terms.value = list.terms.join('\n');
    fill(
      outcome,
      list.updatedAt ? `${list.terms.length} terms, last changed ${new Date(list.updatedAt).toLocaleString()}.` : 'No terms yet.',
    );
  };
  // Read before the form is shown, so its answer never overwrites what someone typed meanwhile.
  try {
    show(await call<BlockList>('/admin/moderation/blocklist'));
  } catch (error) {
    return fill(root, h('p', { class: 'error' }, `Could not read the block list: ${errorText(error)}`));
  }
  fill(
    root,
    h(
      'section',
      { 'aria-labelledby': 'blocklist-title' },
      h('h2', { id: 'blocklist-title' }, 'Block list'),
      h(
        'form',
        {
          onsubmit: async (event: SubmitEvent) => {
            event.preventDefault();
            try {
              const list = terms.value
                .split('\n')
                .map((term) => term.trim())
                .filter(Boolean);
              show(await call<BlockList>('/admin/moderation/blocklist', { method: 'PUT', body: { terms: list } }));
            } catch (error) {
              fill(outcome, h('span', { class: 'error' }, `Not saved: ${errorText(error)}`));
            }
          },
        },
        h('label', { for: 'blocklist-terms' }, 'Blocked terms, one a line'),
        terms,
        h(
          'p',
          { id: 'blocklist-help', class: 'muted' },
          'A message containing a term (any case) is still delivered, labelled auto_flag, and listed for moderators.',
        ),
        h('button', { type: 'submit' }, 'Save the block list'),
      ),
      outcome,
    ),
  );
}
