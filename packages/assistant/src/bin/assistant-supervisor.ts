import { runSupervisor } from "../daemon/supervisor.ts";

// Started detached by `assistant start`; not meant to be run by hand.
process.exitCode = await runSupervisor(process.env);
process.exit();
