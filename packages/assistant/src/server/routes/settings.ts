import { agentProfileViewSchema, readAgentProfile, saveAgentProfile } from "../../agent/profile.ts";
import type { Services } from "../../runtime/services.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

// Settings the web UI edits (docs/http-api.md#settings): the agent profile (agent_profile.json), written
// atomically and used by the next prompt without a restart. Thin over agent/profile.ts.

const URL = "/api/settings/agent-profile";

export function settingsRoutes(services: Services): RouteSpec[] {
  const { paths } = services;
  return [
    defineRoute({
      method: "GET",
      url: URL,
      operationId: "getAgentProfile",
      summary: "The agent profile: name, role, personality, rules and formality (formal, informal or default)",
      tag: "settings",
      response: agentProfileViewSchema,
      errors: ["config_invalid"],
      handler: () => readAgentProfile(paths),
    }),
    defineRoute({
      method: "PUT",
      url: URL,
      operationId: "putAgentProfile",
      summary:
        "Replaces the agent profile (the object GET answers); validated, written atomically, used by the next prompt",
      tag: "settings",
      body: agentProfileViewSchema,
      response: agentProfileViewSchema,
      handler: ({ body }) => saveAgentProfile(paths, body),
    }),
  ];
}
