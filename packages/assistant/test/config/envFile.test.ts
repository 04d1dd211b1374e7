import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { applyEnvFiles, parseEnv, readEnvFiles, setEnvText, writeEnvValue } from "../../src/config/envFile.ts";
import { configError, tempData } from "./helpers.ts";

describe("parseEnv", () => {
  it("tolerates spaces around =, comments, blank lines and the export prefix", () => {
    const entries = parseEnv(
      "# a comment\n\nASSISTANT_PORT = 4000\n  export ASSISTANT_LOG=debug  \nA_B=x # trailing comment\nEMPTY=\r\n",
    );
    expect(entries.map(({ key, value, line }) => [key, value, line])).toEqual([
      ["ASSISTANT_PORT", "4000", 3],
      ["ASSISTANT_LOG", "debug", 4],
      ["A_B", "x", 5],
      ["EMPTY", "", 6],
    ]);
  });

  it("keeps single quotes literal and unescapes double quotes", () => {
    const entries = parseEnv(`S='a # b \\n'\nD="line1\\nsaid \\"hi\\" \\\\ end" # note\nH=a#b\n`);
    expect(entries.map((e) => e.value)).toEqual(["a # b \\n", 'line1\nsaid "hi" \\ end', "a#b"]);
  });

  it.each([
    ["no equals sign", "ASSISTANT_PORT\n", "line 1", "KEY=value"],
    ["bad name", "OK=1\n9LIVES=1\n", "line 2", "not a valid variable name"],
    ["unterminated quote", 'A="open\n', "line 1", "unterminated"],
    ["text after quote", "A='x' y\n", "line 1", "after the closing quote"],
  ])("names the line of a malformed entry (%s)", (_what, text, key, reason) => {
    const error = configError(() => parseEnv(text, "assistant.env"));
    expect(error.file).toBe("assistant.env");
    expect(error.key).toBe(key);
    expect(error.reason).toContain(reason);
  });
});

describe("setEnvText", () => {
  it("replaces the key in place and keeps other lines and comments", () => {
    const text = "# header\nA=1\n\n# about B\nB = old # why\nC=3\n";
    expect(setEnvText(text, "B", "new value")).toBe('# header\nA=1\n\n# about B\nB="new value"\nC=3\n');
  });

  it("appends a new key and leaves commented-out lines alone", () => {
    expect(setEnvText("# B=commented\nA=1", "B", "2")).toBe("# B=commented\nA=1\nB=2\n");
    expect(setEnvText("", "A", "1")).toBe("A=1\n");
  });

  it("quotes values so they read back identically", () => {
    for (const value of ['with "quotes"', "multi\nline", "trailing #hash", "back\\slash", ""]) {
      const [entry] = parseEnv(setEnvText("", "K", value));
      expect(entry?.value).toBe(value);
    }
  });

  it("refuses an invalid key", () => {
    expect(configError(() => setEnvText("", "BAD-KEY", "x")).reason).toContain("valid variable name");
  });
});

describe("env files on disk", () => {
  it("writeEnvValue keeps the rest of the file", () => {
    const data = tempData();
    const file = data.write("assistant.env", "# mine\nASSISTANT_LOG=info\n");
    writeEnvValue(file, "ASSISTANT_PORT", "4000");
    expect(readFileSync(file, "utf8")).toBe("# mine\nASSISTANT_LOG=info\nASSISTANT_PORT=4000\n");
  });

  it("applyEnvFiles: assistant.env over connectors.env, and the process environment over both", () => {
    const data = tempData();
    data.write("connectors.env", "ASSISTANT_CHANNEL_A_ENABLED=1\nSHARED=from-connectors\nMINE=file\n");
    data.write("assistant.env", "SHARED=from-assistant\nASSISTANT_LOG=debug\n");
    const env: NodeJS.ProcessEnv = { MINE: "process", ASSISTANT_LOG: "warn" };
    applyEnvFiles(data.paths, env);
    expect(env).toEqual({
      MINE: "process",
      ASSISTANT_LOG: "warn",
      ASSISTANT_CHANNEL_A_ENABLED: "1",
      SHARED: "from-assistant",
    });
    expect(readEnvFiles(data.paths).get("SHARED")).toEqual({ value: "from-assistant", source: "assistant.env" });
  });

  it("applyEnvFiles does nothing without env files", () => {
    const env: NodeJS.ProcessEnv = { A: "1" };
    applyEnvFiles(tempData().paths, env);
    expect(env).toEqual({ A: "1" });
  });
});
