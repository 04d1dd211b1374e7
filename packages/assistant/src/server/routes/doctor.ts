import { z } from "zod";
import { adviceFor, runChecks } from "../../doctor/index.ts";
import { checkResultSchema } from "../../doctor/types.ts";
import type { Services } from "../../runtime/services.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

export function doctorRoutes(services: Services): RouteSpec[] {
  return [
    defineRoute({
      method: "GET",
      url: "/api/doctor",
      operationId: "getDoctorReport",
      summary: "Health checks of the data directory and the daemon, with advice (`assistant doctor --advice`)",
      tag: "system",
      response: z
        .object({ checks: z.array(checkResultSchema), advice: z.array(z.string()) })
        .meta({ id: "DoctorReport" }),
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
