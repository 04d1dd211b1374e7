import { type Stats, unwatchFile, watchFile } from "node:fs";

// Notices hand edits of autonomous_mission.yaml so they apply at once rather than at the next heartbeat (an hour
// by default). Polls the file's stat once a second instead of watching the data directory, whose SQLite files
// change on every write the daemon makes. Injected into MissionService, so its tests trigger changes themselves.

/** Starts watching; returns the function that stops. */
export type WatchMissionFile = (file: string, onChange: () => void) => () => void;

const POLL_MS = 1_000;

export const watchMissionFile: WatchMissionFile = (file, onChange) => {
  const listener = (current: Stats, previous: Stats) => {
    // Also fires for an access-time change; an edit, an editor's rename over the file, a creation or a removal
    // changes one of these.
    if (
      current.mtimeMs !== previous.mtimeMs ||
      current.ino !== previous.ino ||
      current.size !== previous.size ||
      current.nlink !== previous.nlink
    ) {
      onChange();
    }
  };
  watchFile(file, { interval: POLL_MS, persistent: false }, listener);
  return () => unwatchFile(file, listener);
};
