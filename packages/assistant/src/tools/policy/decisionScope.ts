import { statSync } from "node:fs";
import type { ToolRequest } from "./types.ts";
import { normaliseHost, urlHost } from "./web.ts";

// What a call waiting for approval is about, for the person deciding: the scope a persistent allow made from it
// ("always") would cover, exactly the subject the engine matches decisions on (engine.ts scopeMatches), and what
// they should know before saying yes (a write that replaces an existing file).

/** The scope of a decision covering this request: the resolved path, the command name, the host, the interface. */
export function decisionScope(request: ToolRequest): string {
  switch (request.kind) {
    case "read":
    case "write":
      return request.path;
    case "command":
      return request.executable;
    case "web":
      return urlHost(request.url) ?? request.url.host;
    case "skill_install":
    case "browser":
      return normaliseHost(request.host) ?? request.host;
    case "device":
      return request.interface;
    case "tool":
      return request.tool;
  }
}

/** A sentence for the approval prompt when the call would change something that exists, else undefined. */
export function approvalNotice(request: ToolRequest): string | undefined {
  if (request.kind !== "write") return undefined;
  const stat = statSync(request.path, { throwIfNoEntry: false });
  if (!stat?.isFile()) return undefined;
  return `replaces the existing file ${request.path} (${stat.size} bytes)`;
}
