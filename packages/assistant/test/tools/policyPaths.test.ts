import { mkdirSync, realpathSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { api as apiCall, startDaemon, type TestDaemon, tempDataDir } from "../helpers/daemon.ts";
import { checkById, runCli } from "../setup/helpers.ts";

// `.` in tools_policy.yaml is the daemon's working directory: a daemon started from the home folder (HOME is a
// temp dir here) shows what `.` means and warns that it opens the whole home folder, over HTTP, in `toolset
// effective` and in doctor; `~` paths are refused at validation with the full path to write instead.

let daemon: TestDaemon;
let home: string;
let project: string;

const api = (method: string, path: string) => apiCall(daemon, method, path);
const writePolicy = (policy: Record<string, unknown>) =>
  writeFileSync(join(daemon.dataDir, "tools_policy.yaml"), stringify(policy));
const cli = (args: string[], cwd = home) =>
  runCli(args, { env: { ASSISTANT_DATA_DIR: daemon.dataDir, HOME: home }, cwd });

beforeAll(async () => {
  home = realpathSync(tempDataDir("assistant-home-"));
  project = join(home, "project");
  mkdirSync(project);
  daemon = await startDaemon({ HOME: home }, tempDataDir(), { cwd: home });
});
afterAll(async () => {
  await daemon?.stop();
  if (daemon) rmSync(daemon.dataDir, { recursive: true, force: true });
  if (home) rmSync(home, { recursive: true, force: true });
});

describe('"." and other path entries', () => {
  it("are shown resolved everywhere, with a warning for the home folder and /", async () => {
    writePolicy({ allowed_read_paths: ["."], allowed_write_paths: ["project", "/"], require_approval: [] });
    const view = (await api("GET", "/api/tools/effective")).json();
    expect(view.working_directory).toBe(home);
    expect(view.paths).toEqual([
      {
        list: "allowed_read_paths",
        entry: ".",
        path: home,
        warning: `allowed_read_paths: "." is ${home}, your whole home folder: the agent may read every file in it ("." is relative to the daemon's working directory: start the daemon from the folder you mean, or write its full path)`,
      },
      { list: "allowed_write_paths", entry: "project", path: project, warning: null },
      {
        list: "allowed_write_paths",
        entry: "/",
        path: "/",
        warning: 'allowed_write_paths: "/" is /, the whole file system: the agent may write every file in it',
      },
    ]);
    const readFile = view.tools.find((t: { name: string }) => t.name === "read_file");
    expect(readFile).toMatchObject({ status: "allowed", rule: `allowed_read_paths: . (${home})`, allowed: ["."] });

    const shown = await cli(["toolset", "effective"]);
    expect(shown.code, shown.stderr).toBe(0);
    expect(shown.stdout).toContain(`Paths (relative entries are relative to ${home}):`);
    expect(shown.stdout).toContain(`  allowed_read_paths: . = ${home}  (warning)`);
    expect(shown.stdout).toContain(`  allowed_write_paths: project = ${project}\n`);
    expect(shown.stdout).toContain(`Warning: allowed_read_paths: "." is ${home}, your whole home folder`);

    const doctor = await cli(["doctor", "--json"]);
    const check = checkById(doctor.json().checks, "tools.policy_paths");
    expect(check).toMatchObject({
      status: "warn",
      detail: expect.stringContaining(`"." is ${home}, your whole home folder`),
    });
    expect(check.detail).toContain('"/" is /, the whole file system');
  });

  it("doctor says what `.` means for a daemon started in the project folder, without a warning", async () => {
    writePolicy({ allowed_read_paths: ["."] });
    const doctor = await cli(["doctor", "--json"], project);
    expect(checkById(doctor.json().checks, "tools.policy_paths")).toMatchObject({
      status: "ok",
      detail: `allowed_read_paths: . = ${project} (relative to ${project}, where a daemon started here runs)`,
    });
  });

  it("~ is refused at validation with the full path to write, and the policy denies until it is fixed", async () => {
    writePolicy({ allowed_read_paths: ["~/notes"] });
    const validate = await cli(["config", "validate"]);
    expect(validate.code).toBe(1);
    expect(validate.stderr).toContain(
      `allowed_read_paths[0]: "~/notes": ~ is not expanded here; write the full path (${join(home, "notes")})`,
    );
    const view = (await api("GET", "/api/tools/effective")).json();
    expect(view.policy_status).toBe("invalid");
    expect(view.paths).toEqual([]);
  });
});
