// Builds the web UI (packages/web) into packages/web/dist with Vite, the static files the daemon serves at `/`.
// Skipped when the build is newer than every file it is made from (the app, the typed client and the daemon's schedule parsers it uses), so a
// build before each bench or test run costs nothing when the UI did not change.
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { root } from "./toolchain.mjs";

const web = join(root, "packages", "web");
const sources = [
  join(web, "src"),
  join(web, "public"),
  join(web, "index.html"),
  join(web, "vite.config.ts"),
  join(web, "package.json"),
  join(root, "packages", "client", "src"),
  // The daemon's pure schedule parsers the Scheduled and Mission tabs share (interval.ts, cron.ts and its errors).
  join(root, "packages", "assistant", "src", "scheduler"),
  join(root, "packages", "assistant", "src", "util", "errors.ts"),
];

function newestChange(path) {
  if (!existsSync(path)) return 0;
  const stat = statSync(path);
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path, { recursive: true, withFileTypes: true })) {
    if (entry.isFile()) newest = Math.max(newest, statSync(join(entry.parentPath, entry.name)).mtimeMs);
  }
  return newest;
}

/** Builds the UI when a source changed since the last build; says which it did. */
export async function buildWeb() {
  const built = join(web, "dist", "index.html");
  if (existsSync(built) && statSync(built).mtimeMs >= Math.max(...sources.map(newestChange))) {
    return "web UI up to date";
  }
  const started = Date.now();
  const { build } = await import("vite");
  await build({ root: web, configFile: join(web, "vite.config.ts"), logLevel: "warn" });
  return `built the web UI into packages/web/dist (${Date.now() - started} ms)`;
}
