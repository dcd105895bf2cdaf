/** Webhook registrations and their deliveries: failed ones highlighted, each with a replay button. */
import { fill, h } from '../../shared/dom';
import { errorText, type PageContext } from '../page';

interface Webhook {
  readonly id: string;
  readonly url: string;
  readonly eventTypes: readonly string[];
  readonly createdAt: string;
}

interface Delivery {
  readonly id: string;
  readonly webhookId: string;
  readonly eventType: string;
  readonly status: 'pending' | 'delivered' | 'failed';
  readonly attempt_count: number;
  readonly next_attempt_at: string | null;
  readonly last_http_status: number | null;
  readonly last_error: string | null;
  readonly updatedAt: string;
}

export async function webhooksPage({ call, root }: PageContext): Promise<void> {
  const registrations = h('div');
  const registered = h('p', { role: 'status' });
  const deliveries = h('div');
  const summary = h('p', { role: 'status' });
  const url = h('input', { id: 'webhook-url', type: 'url', required: true, size: 50, placeholder: 'https://example.com/hooks/chat' });
  const types = h('input', {
    id: 'webhook-types',
    required: true,
    size: 50,
    value: 'message.created',
    'aria-describedby': 'webhook-types-help',
  });
  fill(
    root,
    h(
      'section',
      { 'aria-labelledby': 'webhooks-title' },
      h('h2', { id: 'webhooks-title' }, 'Webhook registrations'),
      registrations,
      h('h3', {}, 'Register a webhook'),
      h(
        'form',
        {
          onsubmit: async (event: SubmitEvent) => {
            event.preventDefault();
            const eventTypes = types.value.split(/[\s,]+/).filter(Boolean);
            try {
              const created = await call<{ id: string; secret: string }>('/webhooks/register', { body: { url: url.value, eventTypes } });
              fill(
                registered,
                'Registered ',
                h('code', {}, created.id),
                '. Its signing secret, shown this once: ',
                h('code', {}, created.secret),
              );
              url.value = '';
              await loadRegistrations();
            } catch (error) {
              fill(registered, h('span', { class: 'error' }, `Not registered: ${errorText(error)}`));
            }
          },
        },
        h('label', { for: 'webhook-url' }, 'URL'),
        url,
        h('label', { for: 'webhook-types' }, 'Event types'),
        types,
        h('p', { id: 'webhook-types-help', class: 'muted' }, 'Separated by commas or spaces, e.g. message.created, room.member_joined.'),
        h('button', { type: 'submit' }, 'Register'),
      ),
      registered,
    ),
    h(
      'section',
      { 'aria-labelledby': 'deliveries-title' },
      h(
        'div',
        { class: 'row' },
        h('h2', { id: 'deliveries-title' }, 'Deliveries'),
        h('button', { type: 'button', class: 'secondary', onclick: () => void loadDeliveries() }, 'Refresh'),
      ),
      summary,
      deliveries,
    ),
  );

  async function loadRegistrations(): Promise<void> {
    try {
      const { webhooks } = await call<{ webhooks: Webhook[] }>('/webhooks');
      if (webhooks.length === 0) return fill(registrations, h('p', {}, 'No webhooks registered.'));
      fill(
        registrations,
        h(
          'table',
          { 'aria-label': 'Webhook registrations' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              h('th', { scope: 'col' }, 'Id'),
              h('th', { scope: 'col' }, 'URL'),
              h('th', { scope: 'col' }, 'Event types'),
              h('th', { scope: 'col' }, 'Created'),
              h('th', { scope: 'col' }, h('span', { class: 'muted' }, 'Actions')),
            ),
          ),
          h(
            'tbody',
            {},
            ...webhooks.map((webhook) =>
              h(
                'tr',
                {},
                h('td', {}, h('code', {}, webhook.id)),
                h('td', {}, webhook.url),
                h('td', {}, webhook.eventTypes.join(', ')),
                h('td', {}, new Date(webhook.createdAt).toLocaleString()),
                h(
                  'td',
                  {},
                  h(
                    'button',
                    {
                      type: 'button',
                      class: 'danger',
                      'aria-label': `Delete webhook ${webhook.id}`,
                      onclick: async () => {
                        try {
                          await call(`/webhooks/${encodeURIComponent(webhook.id)}`, { method: 'DELETE' });
                          await loadRegistrations();
                        } catch (error) {
                          fill(registered, h('span', { class: 'error' }, `Not deleted: ${errorText(error)}`));
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
      fill(registrations, h('p', { class: 'error' }, `Could not list webhooks: ${errorText(error)}`));
    }
  }

  async function loadDeliveries(): Promise<void> {
    try {
      const listed = (await call<{ deliveries: Delivery[] }>('/admin/webhooks/deliveries?limit=100')).deliveries;
      const failed = listed.filter((delivery) => delivery.status === 'failed').length;
      fill(summary, `${listed.length} recent ${listed.length === 1 ? 'delivery' : 'deliveries'}, ${failed} failed.`);
      if (listed.length === 0) return fill(deliveries);
      const rows = listed.map((delivery) => deliveryRow(delivery));
      fill(
        deliveries,
        h(
          'table',
          { 'aria-label': 'Deliveries' },
          h(
            'thead',
            {},
            h(
              'tr',
              {},
              ...['Delivery', 'Webhook', 'Event', 'Status', 'Attempts', 'Last HTTP status', 'Last error', 'Next attempt'].map((label) =>
                h('th', { scope: 'col' }, label),
              ),
              h('th', { scope: 'col' }, h('span', { class: 'muted' }, 'Actions')),
            ),
          ),
          h('tbody', {}, ...rows),
        ),
      );
    } catch (error) {
      fill(summary, h('span', { class: 'error' }, `Could not list deliveries: ${errorText(error)}`));
    }
  }

  /** One delivery; a failed one is highlighted and can be replayed, which redraws the row from the answer (pending again). */
  function deliveryRow(delivery: Delivery): HTMLTableRowElement {
    const outcome = h('span', { role: 'status' });
    const row = h(
      'tr',
      { class: delivery.status === 'failed' ? 'failed' : '', 'data-delivery-id': delivery.id, 'data-status': delivery.status },
      h('td', {}, h('code', {}, delivery.id)),
      h('td', {}, h('code', {}, delivery.webhookId)),
      h('td', {}, delivery.eventType),
      h('td', {}, h('span', { class: `status ${delivery.status}` }, delivery.status)),
      h('td', {}, delivery.attempt_count),
      h('td', {}, delivery.last_http_status ?? '–'),
      h('td', {}, delivery.last_error ?? '–'),
      h('td', {}, delivery.next_attempt_at ? new Date(delivery.next_attempt_at).toLocaleString() : '–'),
      h(
        'td',
        {},
        delivery.status === 'failed'
          ? h(
              'button',
              {
                type: 'button',
                'aria-label': `Replay delivery ${delivery.id}`,
                onclick: async () => {
                  try {
                    const replayed = await call<Delivery>(`/admin/webhooks/deliveries/${encodeURIComponent(delivery.id)}/replay`, {
                      method: 'POST',
                    });
                    const redrawn = deliveryRow({ ...delivery, ...replayed });
                    row.replaceWith(redrawn);
                    redrawn.querySelector<HTMLElement>('td code')?.setAttribute('tabindex', '-1');
                    redrawn.querySelector<HTMLElement>('td code')?.focus();
                  } catch (error) {
                    fill(outcome, h('span', { class: 'error' }, `Not replayed: ${errorText(error)}`));
                  }
                },
              },
              'Replay',
            )
          : null,
        outcome,
      ),
    );
    return row;
  }

  await Promise.all([loadRegistrations(), loadDeliveries()]);
}
