import { nextCronTime, parseCron } from "../../../assistant/src/scheduler/cron.ts";

// The next runs of a cron expression, computed in the browser by the daemon's own parser (scheduler/cron.ts,
// croner with the same options), so the preview and its error messages are exactly what POST /api/schedules
// will accept or refuse. Without a time zone the browser's is used: the daemon's local zone on the same machine.

export type CronPreview = { runs: number[]; error?: undefined } | { runs?: undefined; error: string };

export function previewCron(expression: string, timeZone: string, count = 5, fromMs = Date.now()): CronPreview {
  try {
    const cron = parseCron(expression, timeZone.trim() || undefined);
    const runs: number[] = [];
    let after = fromMs;
    for (let i = 0; i < count; i++) {
      after = nextCronTime(cron, after);
      runs.push(after);
    }
    return { runs };
  } catch (error) {
    return { error: (error as Error).message };
  }
}
