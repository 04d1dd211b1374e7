// Compiles the AssemblyScript test plugins in fixtures/ with asc's JS API, cached by content hash in the OS temp dir
// so test files and reruns share one build (no network: compiler and PDK come from node_modules).
import { createHash } from "node:crypto";
import { mkdir, readdir, readFile, rename, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import asc from "assemblyscript/asc";

export type TestPluginName = "echo" | "hostile";

const fixturesDir = join(dirname(fileURLToPath(import.meta.url)), "fixtures");
const cacheDir = join(tmpdir(), "assistant-test-plugins");
// -O1 keeps the build quick; the abort handler logs the message before trapping (see the fixtures).
const flags = ["-O1", "--runtime", "incremental", "--use", "abort=index/pluginAbort"];

/** The compiled plugin's bytes, built once per source/compiler/flags combination. */
export async function buildTestPlugin(name: TestPluginName): Promise<Uint8Array> {
  const dir = join(fixturesDir, name);
  const files = (await readdir(dir)).filter((file) => file.endsWith(".ts")).sort();
  const sources = await Promise.all(files.map(async (file) => [file, await readFile(join(dir, file), "utf8")]));
  const key = createHash("sha256")
    .update(JSON.stringify([sources, asc.version, flags]))
    .digest("hex")
    .slice(0, 16);
  const cached = join(cacheDir, `${name}-${key}.wasm`);
  const hit = await readFile(cached).catch(() => null);
  if (hit) return new Uint8Array(hit);

  let binary: Uint8Array | null = null;
  const stderr = asc.createMemoryStream();
  const { error } = await asc.main(["index.ts", "--outFile", "plugin.wasm", "--baseDir", dir, ...flags], {
    stderr,
    writeFile: (file, contents) => {
      if (file === "plugin.wasm" && contents instanceof Uint8Array) binary = contents;
    },
  });
  if (error || !binary)
    throw new Error(`asc failed for test plugin ${name}: ${error?.message ?? ""}\n${stderr.toString()}`);
  await mkdir(cacheDir, { recursive: true });
  // Write then rename so parallel test workers never read a half-written file.
  const temporary = `${cached}.${process.pid}.tmp`;
  await writeFile(temporary, binary);
  await rename(temporary, cached);
  return binary;
}
