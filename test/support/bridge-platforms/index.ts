import { DISCORD_API_PATH, startDiscordStandIn } from './discord';
import { startMatrixStandIn } from './matrix';
import { startSlackStandIn } from './slack';
import type { PlatformStandIn } from './stand-in';

export type { StandInClient, WaitOptions } from './client';
export { standInClient } from './client';
export type { FailureRule, PlatformStandIn, RecordedPost } from './stand-in';
export { startDiscordStandIn, startMatrixStandIn, startSlackStandIn };

/** Where the three stand-ins listen: what the shared runtime provides its tests (`inject('bridgePlatforms')`). */
export interface BridgePlatformsInfo {
  readonly slack: string;
  readonly discord: string;
  /** A homeserver for bridges' `homeserverUrl` (each bridge may have its own: tests can start more). */
  readonly matrix: string;
}

export interface BridgePlatforms {
  readonly info: BridgePlatformsInfo;
  readonly slack: PlatformStandIn;
  readonly discord: PlatformStandIn;
  readonly matrix: PlatformStandIn;
  /** The settings that point a runtime at them. */
  readonly settings: { readonly SLACK_API_BASE_URL: string; readonly DISCORD_API_BASE_URL: string };
  close(): Promise<void>;
}

/** Starts a Slack, a Discord and a Matrix stand-in on free loopback ports. */
export async function startBridgePlatforms(): Promise<BridgePlatforms> {
  const [slack, discord, matrix] = await Promise.all([startSlackStandIn(), startDiscordStandIn(), startMatrixStandIn()]);
  return {
    info: { slack: slack.url, discord: discord.url, matrix: matrix.url },
    slack,
    discord,
    matrix,
    settings: { SLACK_API_BASE_URL: slack.url, DISCORD_API_BASE_URL: `${discord.url}${DISCORD_API_PATH}` },
    close: async () => {
      await Promise.all([slack.close(), discord.close(), matrix.close()]);
    },
  };
}
