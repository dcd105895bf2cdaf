import { getBlockList } from '#domain/moderation/block-list';
import { httpHandler, ok } from '#edge/http';

export const handler = httpHandler('GetBlockList', {}, async ({ caller }) => ok(await getBlockList(caller.projectId)));
