import { existsSync } from "node:fs";
import { isAbsolute, join } from "node:path";
import { configFilePath, loadConfig } from "../config/configFiles.ts";
import type { DataPaths } from "../config/paths.ts";
import { type AutonomousMission, autonomousMissionSchema } from "../config/schemas/autonomousMission.ts";
import { setYamlValue, updateYamlFile } from "../config/yamlDocument.ts";
import { TASK_TYPE_ALIASES } from "../llm/routing.ts";
import { taskTypeProblem } from "../llm/taskTypes.ts";
import { writeFileAtomic } from "../util/atomicWrite.ts";
import { AppError, ConfigError } from "../util/errors.ts";

// autonomous_mission.yaml as the mission reads and edits it: loaded fresh at every heartbeat (hand edits apply
// without a restart) and merged key by key by PUT /api/autonomous-mission, keeping the user's comments.

export const MISSION_KEYS = ["objective", "heartbeat_secs", "report_dir", "heartbeat_preferred_task_type", "enabled"];

export type MissionFileRead = { config: AutonomousMission; error: null } | { config: null; error: ConfigError };

// The config schema cannot know the router's task types (config sits below llm): the mission checks them, so a
// typo is refused with the close match instead of routing every cycle silently as `conversation`.
function taskTypeProblemOf(mission: AutonomousMission): string | undefined {
  const preferred = mission.heartbeat_preferred_task_type?.trim();
  return preferred ? taskTypeProblem(preferred) : undefined;
}

const missionFileSchema = autonomousMissionSchema.superRefine((mission, ctx) => {
  const problem = taskTypeProblemOf(mission);
  if (problem) ctx.addIssue({ code: "custom", path: ["heartbeat_preferred_task_type"], message: problem });
});

export function readMissionFile(paths: DataPaths): MissionFileRead {
  try {
    const config = loadConfig("autonomous_mission", paths);
    const problem = taskTypeProblemOf(config);
    if (!problem) return { config, error: null };
    const file = configFilePath("autonomous_mission", paths);
    return { config: null, error: new ConfigError(file, "heartbeat_preferred_task_type", problem) };
  } catch (error) {
    if (error instanceof ConfigError) return { config: null, error };
    throw error;
  }
}

/**
 * Merges `changes` into the file: a value sets its key, null removes it (its default applies). The merged file is
 * validated before anything is written, so a bad value or an unknown key leaves the file as it was; the problem is
 * an `invalid_request` naming the key. Returns the keys whose value changed.
 */
export function updateMissionFile(paths: DataPaths, changes: Record<string, unknown>): string[] {
  const file = configFilePath("autonomous_mission", paths);
  // Unknown keys are refused before the file is read: the merge below re-renders the document for every key, so
  // thousands of keys in one body kept the daemon busy for minutes.
  const unknown = Object.keys(changes).filter((key) => !MISSION_KEYS.includes(key));
  if (unknown.length > 0) {
    const more = unknown.length > 1 ? ` (and ${unknown.length - 1} more)` : "";
    throw invalidChange(new ConfigError(file, unknown[0]!, `unknown key${more}`));
  }
  const changed: string[] = [];
  let read = false;
  try {
    updateYamlFile(
      file,
      (doc) => {
        read = true;
        for (const [key, value] of Object.entries(changes)) {
          const before = doc.toString();
          setYamlValue(doc, [key], value ?? undefined);
          if (doc.toString() !== before) changed.push(key);
        }
      },
      missionFileSchema,
    );
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    if (!read) {
      // The file on disk does not parse: no key of the request is at fault.
      throw new AppError("conflict", `${error.message}; fix the file by hand, then send the change again`, {
        file: error.file,
        key: error.key,
      });
    }
    throw invalidChange(error);
  }
  return changed;
}

function invalidChange(error: ConfigError): AppError {
  const hint = error.reason.startsWith("unknown key") ? ` (known keys: ${MISSION_KEYS.join(", ")})` : "";
  return new AppError("invalid_request", `${error.message}${hint}`, {
    field: error.key || "body",
    file: error.file,
    reason: error.reason,
  });
}

/** What `assistant mission edit` opens when there is no file yet: every key, commented, the mission off. */
const STARTER = `# The autonomous mission (docs/mission.md): a cycle toward the objective every heartbeat_secs.
# Saved edits apply to a running daemon at once.
objective: ""                 # what the mission works toward; required when enabled
heartbeat_secs: 3600          # seconds between cycles
report_dir: reports           # cycle reports; relative paths are under the data directory
# heartbeat_preferred_task_type: conversation
enabled: false
`;

/** The mission file's path, written from the commented starter first when it does not exist. */
export function ensureMissionFile(paths: DataPaths): string {
  const file = configFilePath("autonomous_mission", paths);
  if (!existsSync(file)) writeFileAtomic(file, STARTER);
  return file;
}

/** Where the reports go: report_dir as is when absolute, else under the data directory. */
export function reportDirPath(paths: DataPaths, config: AutonomousMission): string {
  return isAbsolute(config.report_dir) ? config.report_dir : join(paths.dataDir, config.report_dir);
}

/** The task type of a cycle: heartbeat_preferred_task_type through the routing aliases, default conversation. */
export function cycleTaskType(config: AutonomousMission): string {
  const preferred = config.heartbeat_preferred_task_type?.trim();
  if (!preferred) return "conversation";
  return TASK_TYPE_ALIASES[preferred] ?? preferred;
}
