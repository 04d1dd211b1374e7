import { networkInterfaces } from "node:os";
import type { FastifyReply, FastifyRequest } from "fastify";
import type { DaemonSettings } from "../config/settings.ts";
import { AppError } from "../util/errors.ts";

/**
 * DNS-rebinding and cross-site guard (docs/http-api.md#browser-guard): the Host must be a name of this daemon and an
 * Origin, when present, must be the daemon's own or the Studio's.
 */
export function createBrowserGuard(settings: DaemonSettings, port: () => number) {
  const names = new Set(["localhost", "127.0.0.1", "::1", ...settings.allowedHosts]);
  if (settings.bind === "0.0.0.0" || settings.bind === "::") {
    // Listening on every interface: LAN clients (the companion) address the daemon by this machine's addresses.
    for (const list of Object.values(networkInterfaces()))
      for (const nic of list ?? []) names.add(nic.address.toLowerCase());
  } else {
    names.add(settings.bind.toLowerCase());
  }

  return async function browserGuard(request: FastifyRequest, _reply: FastifyReply): Promise<void> {
    const host = hostName(request.headers.host);
    if (!host || !names.has(host)) {
      throw new AppError("forbidden", "Host header is not a name of this daemon (add it to ASSISTANT_ALLOWED_HOSTS)");
    }
    const origin = request.headers.origin;
    if (origin === undefined) return;
    const allowedPorts = new Set([port(), settings.studioPort]);
    let url: URL;
    try {
      url = new URL(origin);
    } catch {
      throw new AppError("forbidden", "cross-site request refused (bad Origin)");
    }
    const originPort = Number(url.port || (url.protocol === "https:" ? 443 : 80));
    if (
      !["http:", "https:"].includes(url.protocol) ||
      !names.has(hostName(url.host) ?? "") ||
      !allowedPorts.has(originPort)
    ) {
      throw new AppError("forbidden", "cross-site request refused: Origin is not this daemon or its Studio");
    }
  };
}

/** `Host` without its port, lower-cased, IPv6 brackets removed. */
function hostName(host: string | undefined): string | undefined {
  if (!host) return undefined;
  const h = host.trim().toLowerCase();
  if (h.startsWith("[")) return h.slice(1, h.indexOf("]"));
  const colon = h.lastIndexOf(":");
  return colon > 0 ? h.slice(0, colon) : h;
}
