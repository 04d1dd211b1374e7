import { z } from "zod";
import { adviceFor, runChecks } from "../../doctor/index.ts";
import type { Services } from "../../runtime/services.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

const checkSchema = z.object({
  id: z.string(),
  title: z.string(),
  status: z.enum(["ok", "warn", "fail"]),
  detail: z.string(),
  fix: z.string().optional(),
  fixable: z.boolean(),
});

export function doctorRoutes(services: Services): RouteSpec[] {
  return [
    defineRoute({
      method: "GET",
      url: "/api/doctor",
      summary: "Health checks of the data directory and the daemon, with advice (`assistant doctor --advice`)",
      tag: "system",
      response: z.object({ checks: z.array(checkSchema), advice: z.array(z.string()) }),
      handler: async () => {
        // The daemon's environment already has the env files applied; `self` lets the port check recognise us.
        const checks = await runChecks(services.paths, process.env, {
          self: { pid: process.pid, port: services.port() },
        });
        return { checks, advice: adviceFor(checks) };
      },
    }),
  ];
}
