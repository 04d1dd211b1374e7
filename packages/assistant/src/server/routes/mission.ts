import type { FastifyRequest } from "fastify";
import { z } from "zod";
import { parseYaml, yamlDocumentValue } from "../../config/yamlDocument.ts";
import { missionViewSchema } from "../../mission/missionService.ts";
import type { Services } from "../../runtime/services.ts";
import { AppError, ConfigError } from "../../util/errors.ts";
import { namedStoredEventSchema } from "../eventSchemas.ts";
import { pageQuerySchema, pageSchema, sinceSchema } from "../pagination.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

// The autonomous mission (docs/mission.md): its file keys and state,
// key merges into autonomous_mission.yaml (JSON or YAML bodies), pause, resume and its events. Thin over mission/.

const MISSION_URL = "/api/autonomous-mission";
export const YAML_CONTENT_TYPES = ["application/yaml", "text/yaml"];

/**
 * Content-type parser for YAML bodies, accepted only by PUT /api/autonomous-mission (anywhere else they stay a
 * 415, as before). A syntax error is a 400 naming the line and column.
 */
export async function parseYamlBody(request: FastifyRequest, body: string): Promise<unknown> {
  if (request.routeOptions.url !== MISSION_URL) {
    throw new AppError("unsupported_media_type", "send the request body as application/json");
  }
  try {
    return yamlDocumentValue(parseYaml(body, "request body"), "request body");
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    throw new AppError(
      "invalid_request",
      `the YAML body is not valid: ${error.key ? `${error.key}: ` : ""}${error.reason}`,
      {
        field: "body",
        position: error.key,
      },
    );
  }
}

const changesBody = z
  .record(z.string(), z.unknown())
  .describe(
    "Keys of autonomous_mission.yaml to set (objective, heartbeat_secs, report_dir, heartbeat_preferred_task_type, enabled); null removes a key",
  );

const eventsQuery = pageQuerySchema.extend({ since: sinceSchema });

export function missionRoutes(services: Services): RouteSpec[] {
  const { mission } = services;
  return [
    defineRoute({
      method: "GET",
      url: MISSION_URL,
      operationId: "getMission",
      response: missionViewSchema,
      summary: "The mission's file keys, status (idle, running, paused) with its reason, cycles and next heartbeat",
      tag: "mission",
      handler: () => mission.view(),
    }),
    defineRoute({
      method: "PUT",
      url: MISSION_URL,
      summary:
        "Merges keys into autonomous_mission.yaml (JSON, or YAML as application/yaml), keeping comments; validated before writing, applied at once",
      tag: "mission",
      operationId: "updateMission",
      body: changesBody,
      bodyTypes: YAML_CONTENT_TYPES,
      response: missionViewSchema,
      errors: ["conflict"],
      handler: ({ body }) => mission.update(body),
    }),
    defineRoute({
      method: "POST",
      url: `${MISSION_URL}/pause`,
      operationId: "pauseMission",
      response: missionViewSchema,
      errors: ["conflict"],
      summary: "Pauses the mission: no new cycles, the running one finishes (409 when already paused)",
      tag: "mission",
      handler: () => mission.pause(),
    }),
    defineRoute({
      method: "POST",
      url: `${MISSION_URL}/resume`,
      operationId: "resumeMission",
      response: missionViewSchema,
      errors: ["conflict"],
      summary: "Resumes a paused mission; the next heartbeat is heartbeat_secs from now (409 when not paused)",
      tag: "mission",
      handler: () => mission.resume(),
    }),
    defineRoute({
      method: "GET",
      url: `${MISSION_URL}/events`,
      operationId: "listMissionEvents",
      response: pageSchema(namedStoredEventSchema),
      summary: "Mission events and the budget_exhausted events of the mission, newest first, at or after `since`",
      tag: "mission",
      query: eventsQuery,
      handler: ({ query }) =>
        mission.events({
          limit: query.limit,
          ...(query.since !== undefined ? { sinceMs: query.since } : {}),
          ...(query.cursor !== undefined ? { cursor: query.cursor } : {}),
        }),
    }),
  ];
}
