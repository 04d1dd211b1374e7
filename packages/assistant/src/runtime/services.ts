import type { LoginCodes } from "../auth/loginCodes.ts";
import type { WebSessions } from "../auth/webSessions.ts";
import type { DataPaths } from "../config/paths.ts";
import type { DaemonSettings } from "../config/settings.ts";
import type { EventLog } from "../events/eventLog.ts";
import type { Logger } from "../log/logger.ts";
import type { Db } from "../store/database.ts";
import type { Vault } from "../vault/vault.ts";

/** What the running daemon is made of. Built once at start (daemon/), handed to every route. */
export interface Services {
  version: string;
  startedAt: Date;
  paths: DataPaths;
  settings: DaemonSettings;
  logger: Logger;
  db: Db;
  events: EventLog;
  vault: Vault;
  token: string;
  loginCodes: LoginCodes;
  webSessions: WebSessions;
  /** The port actually bound (differs from settings.port when that is 0). */
  port(): number;
}
