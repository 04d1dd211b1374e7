import { createServer } from "node:net";
import { type DaemonSettings, readSettingsOf } from "../config/settings.ts";
import { processAlive, readDaemonInfo } from "../runtime/daemonInfo.ts";
import { type CheckContext, type CheckResult, result } from "./types.ts";

// Can the daemon listen where it is configured to? Either the port is free, or the daemon of this data
// directory already answers there. Anything else on the port would make `assistant start` fail.

const TITLE = "daemon port";
const PROBE_MS = 1500;

export async function checkPort(ctx: CheckContext): Promise<CheckResult | undefined> {
  let settings: Pick<DaemonSettings, "bind" | "port">;
  try {
    settings = readSettingsOf(ctx.env, ["bind", "port"]);
  } catch {
    return undefined; // the settings check reports the bad variable
  }
  if (ctx.self) {
    return result(
      "port",
      TITLE,
      "ok",
      `this daemon (pid ${ctx.self.pid}) is listening on ${settings.bind}:${ctx.self.port}`,
    );
  }
  const info = readDaemonInfo(ctx.paths.daemonInfo);
  if (info && processAlive(info.pid)) {
    const version = await probeHealth(info.bind, info.port);
    if (version)
      return result(
        "port",
        TITLE,
        "ok",
        `the daemon (pid ${info.pid}, version ${version}) answers on port ${info.port}`,
      );
    return result(
      "port",
      TITLE,
      "warn",
      `daemon.json names pid ${info.pid} on port ${info.port}, but nothing answers /api/health there`,
      {
        fix: "assistant stop, then assistant start",
        fixable: false,
      },
    );
  }
  const { bind, port } = settings;
  if (port === 0)
    return result("port", TITLE, "ok", "ASSISTANT_PORT is 0: the daemon picks a free port when it starts");
  const other = await probeHealth(bind, port);
  if (other) {
    return result(
      "port",
      TITLE,
      "warn",
      `an assistant daemon (version ${other}) already answers on port ${port}, but not one started from this data directory`,
      {
        fix: "stop that daemon, or give this one another port: assistant config env set ASSISTANT_PORT <port>",
        fixable: false,
      },
    );
  }
  const failure = await tryListen(bind, port);
  if (!failure) return result("port", TITLE, "ok", `port ${port} on ${bind} is free`);
  const reasons: Record<string, string> = {
    EADDRINUSE: `port ${port} on ${bind} is used by another program, not the assistant daemon`,
    EACCES: `not allowed to listen on port ${port} (ports below 1024 need privileges)`,
    EADDRNOTAVAIL: `cannot listen on ${bind}: no such address on this machine`,
  };
  return result("port", TITLE, "fail", reasons[failure] ?? `cannot listen on ${bind}:${port} (${failure})`, {
    fix:
      failure === "EADDRNOTAVAIL"
        ? "set ASSISTANT_BIND to an address of this machine (127.0.0.1 by default)"
        : `stop the program using port ${port}, or choose another port: assistant config env set ASSISTANT_PORT <port>`,
    fixable: false,
  });
}

/** The version the daemon reports on /api/health, or undefined when no assistant daemon answers there. */
async function probeHealth(bind: string, port: number): Promise<string | undefined> {
  const host = bind === "0.0.0.0" ? "127.0.0.1" : bind === "::" ? "::1" : bind;
  // Loaded here: the daemon runs this check too (about itself, without a probe) and starts without the client.
  const { AssistantClient } = await import("@assistant/client");
  const client = new AssistantClient({ baseUrl: `http://${host.includes(":") ? `[${host}]` : host}:${port}` });
  try {
    const health = await client.getHealth({ timeoutMs: PROBE_MS });
    return health?.status === "ok" && typeof health.version === "string" ? health.version : undefined;
  } catch {
    return undefined;
  }
}

/** Undefined when `bind:port` can be listened on, else the error code. */
function tryListen(bind: string, port: number): Promise<string | undefined> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", (error: NodeJS.ErrnoException) => resolve(error.code ?? error.message));
    server.listen({ host: bind, port, exclusive: true }, () => server.close(() => resolve(undefined)));
  });
}
