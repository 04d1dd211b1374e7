import { z } from "zod";
import { taskTypeField } from "../llm/taskTypes.ts";
import { AppError } from "../util/errors.ts";
import { canonicalTimeZone, MAX_CRON_CHARS, MAX_TIME_ZONE_CHARS, parseCron } from "./cron.ts";

// What a new schedule may be: one schema for POST /api/schedules (which also documents it in OpenAPI), the
// /schedule slash command and the CLI, so every surface refuses the same things with the same messages.

export const MAX_NAME_CHARS = 100;
export const MAX_DESCRIPTION_CHARS = 4000;
/** A year: a longer interval is almost surely a unit mistake. */
export const MAX_INTERVAL_SECS = 31_536_000;

export interface ScheduleInput {
  name: string;
  description: string;
  interval_secs?: number;
  cron?: string;
  /** IANA time zone of the cron expression; the daemon's local zone without it. */
  timezone?: string;
  task_type?: string;
}

export function scheduleInputSchema(minInterval: number): z.ZodType<ScheduleInput> {
  return z
    .strictObject({
      name: z.string().trim().min(1, "name is empty").max(MAX_NAME_CHARS, `at most ${MAX_NAME_CHARS} characters`),
      description: z
        .string()
        .trim()
        .min(1, "description is empty: it is the message each run sends to the agent")
        .max(MAX_DESCRIPTION_CHARS, `at most ${MAX_DESCRIPTION_CHARS} characters`),
      interval_secs: z
        .number()
        .int("a whole number of seconds")
        .min(minInterval, `at least ${minInterval} seconds (ASSISTANT_SCHEDULE_MIN_INTERVAL_SECS)`)
        .max(MAX_INTERVAL_SECS, `at most ${MAX_INTERVAL_SECS} seconds (a year)`)
        .optional(),
      cron: z
        .string()
        .max(MAX_CRON_CHARS)
        .superRefine((value, ctx) => {
          try {
            parseCron(value);
          } catch (error) {
            ctx.addIssue({ code: "custom", message: (error as Error).message });
          }
        })
        .optional(),
      timezone: z
        .string()
        .max(MAX_TIME_ZONE_CHARS)
        .refine((value) => canonicalTimeZone(value) !== undefined, {
          error: (issue) =>
            `"${issue.input}" is not a time zone: expected an IANA name such as Europe/Paris, America/New_York or UTC`,
        })
        .optional(),
      task_type: taskTypeField.optional(),
    })
    .superRefine((input, ctx) => {
      if ((input.interval_secs === undefined) === (input.cron === undefined)) {
        ctx.addIssue({
          code: "custom",
          path: [input.interval_secs === undefined ? "interval_secs" : "cron"],
          message: "give exactly one of interval_secs (seconds between runs) or cron (a 5-field cron expression)",
        });
      }
      if (input.timezone !== undefined && input.cron === undefined) {
        ctx.addIssue({
          code: "custom",
          path: ["timezone"],
          message: "only a cron schedule has a time zone; an interval counts seconds from its creation",
        });
      }
    });
}

/** Validates input from a surface without its own schema check (slash command); `invalid_request` naming the field. */
export function parseScheduleInput(input: unknown, minInterval: number): ScheduleInput {
  const result = scheduleInputSchema(minInterval).safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const field = issue.path.map(String).join(".") || "body";
  throw new AppError("invalid_request", `${field}: ${issue.message}`, { field });
}
