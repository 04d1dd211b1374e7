import * as z from "zod";

// autonomous_mission.yaml (docs/mission.md#the-file). A missing file is a disabled mission.

export const DEFAULT_HEARTBEAT_SECS = 3600;

export const autonomousMissionSchema = z
  .strictObject({
    objective: z.string().default(""),
    heartbeat_secs: z.number().int().positive().default(DEFAULT_HEARTBEAT_SECS),
    report_dir: z.string().min(1, "must not be empty").default("reports"), // relative paths: under the data directory
    // Any task type name; `search`, `code` and `schedule` are accepted too (routing maps them).
    heartbeat_preferred_task_type: z.string().min(1, "must not be empty").optional(),
    enabled: z.boolean().default(false),
  })
  .superRefine((mission, ctx) => {
    if (mission.enabled && mission.objective.trim() === "") {
      ctx.addIssue({ code: "custom", path: ["objective"], message: "an enabled mission needs an objective" });
    }
  });

export type AutonomousMission = z.output<typeof autonomousMissionSchema>;
export type AutonomousMissionInput = z.input<typeof autonomousMissionSchema>;
