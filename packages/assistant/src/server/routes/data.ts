import { z } from "zod";
import { exportArchive, exportFileName } from "../../data/exportArchive.ts";
import { deleteHistory, historyDeletedSchema } from "../../data/historyDeletion.ts";
import { dataOverview, dataOverviewSchema } from "../../data/inventory.ts";
import type { Services } from "../../runtime/services.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

// The data directory (docs/http-api.md#data): what it holds, an export of the history as a zip, and deleting the
// history. Thin over data/; the zip library loads on the first export.

const archiveSchema = z.string().meta({ format: "binary", description: "the zip archive's bytes" });
const deleteBody = z.strictObject({ confirm: z.string().max(100) });

export function dataRoutes(services: Services): RouteSpec[] {
  const { db, paths } = services;
  return [
    defineRoute({
      method: "GET",
      url: "/api/data",
      operationId: "getDataOverview",
      response: dataOverviewSchema,
      summary: "The data directory: its files and folders with their sizes (never their content) and database counts",
      tag: "data",
      handler: () => dataOverview(db, paths),
    }),
    defineRoute({
      method: "GET",
      url: "/api/data/export",
      operationId: "exportData",
      summary:
        "A zip of sessions, messages, tasks, reports, memory and schedules as JSON (never the vault, its key or the token)",
      tag: "data",
      raw: {
        200: {
          description: "the archive, streamed as it is written",
          contentType: "application/zip",
          schema: archiveSchema,
        },
      },
      handler: async (_input, _request, reply) => {
        const archive = await exportArchive(db, paths, services.version);
        return reply
          .type("application/zip")
          .header("content-disposition", `attachment; filename="${exportFileName()}"`)
          .header("cache-control", "no-store")
          .send(archive);
      },
    }),
    defineRoute({
      method: "POST",
      url: "/api/data/delete-history",
      operationId: "deleteHistory",
      response: historyDeletedSchema,
      errors: ["conflict"],
      summary:
        'Deletes sessions, messages, tasks, their events and reports ({confirm: "delete"}); memory, schedules, config and the vault stay',
      tag: "data",
      body: deleteBody,
      handler: ({ body }) => {
        // The mission keeps writing into its session across cycles: that session is emptied, not removed.
        const missionSession = services.mission.view().session_id;
        return deleteHistory(db, paths, body.confirm, missionSession ? [missionSession] : []);
      },
    }),
  ];
}
