import { describe, expect, it } from "vitest";
import { requestErrorSentence } from "../../src/cli/requestWording.ts";
import { parseInterval } from "../../src/scheduler/interval.ts";
import { closestMatch } from "../../src/util/closestMatch.ts";
import { sandbox } from "../setup/helpers.ts";

// How the command line refuses what a person typed: usage errors exit 2 and point to the help of the command that
// refused them, unknown task types get the close match, and the daemon's request paths become sentences.

describe("usage errors through the real CLI", () => {
  it("exit 2 and point to the help of the (nested) command", async () => {
    const box = sandbox();
    const missing = await box.run(["config", "models", "set", "conversation"]);
    expect(missing).toMatchObject({
      code: 2,
      stderr: "error: missing required argument 'PROVIDER'\n(run `assistant config models set --help` for its usage)\n",
    });
    const combined = await box.run(["doctor", "--advice", "--fix"]);
    expect(combined).toMatchObject({
      code: 2,
      stderr:
        "error: --advice asks the running daemon and cannot be combined with --fix\n(run `assistant doctor --help` for its usage)\n",
    });
    const option = await box.run(["vault", "rekey", "--to", "somewhere"]);
    expect(option.code).toBe(2);
    expect(option.stderr).toContain("(run `assistant vault rekey --help` for its usage)");
  });

  it("bad option values of the task and chat commands are usage errors, refused before the daemon is asked", async () => {
    const box = sandbox();
    for (const [args, words, help] of [
      [["task", "list", "--limit", "0"], "expected a whole number from 1 to 500", "task list"],
      [["task", "list", "--status", "done"], "expected one of queued, running", "task list"],
      [["task", "events", "abc", "--limit", "many"], "expected a whole number from 1 to 1000", "task events"],
      [["task", "watch", "abc", "--interval-ms", "10"], "expected a whole number from 50 to 60000", "task watch"],
      [["chat", "--json"], '--json needs a message: assistant chat --json "question"', "chat"],
    ] as const) {
      const result = await box.run([...args]);
      expect(result.code, args.join(" ")).toBe(2);
      expect(result.stderr).toContain(words);
      expect(result.stderr).toContain(`(run \`assistant ${help} --help\` for its usage)`);
      expect(result.stderr).not.toContain("daemon is not running");
    }
  });

  it("an unknown --task-type is refused before anything is sent, with the close match", async () => {
    const box = sandbox();
    const chat = await box.run(["chat", "--task-type", "code_generatoin", "hello"]);
    expect(chat.code).toBe(2);
    expect(chat.stderr).toContain('unknown task type "code_generatoin" (did you mean "code_generation"?)');
    expect(chat.stderr).not.toContain("daemon is not running");
    // Aliases and specialists are task types too.
    const alias = await box.run(["chat", "--task-type", "code", "hello"]);
    expect(alias.code).toBe(1);
    expect(alias.stderr).toContain("daemon is not running");
  });
});

describe("the pieces", () => {
  it("requestErrorSentence turns a request path and zod's words into a sentence", () => {
    expect(requestErrorSentence("body.interval_secs: Invalid input: expected number, received string")).toBe(
      "the interval must be a number",
    );
    expect(requestErrorSentence("query.limit: Too big: expected number to be <=1000")).toBe(
      "--limit must be at most 1000",
    );
    expect(requestErrorSentence('body.effect: Invalid option: expected one of "allow"|"deny"')).toBe(
      "the effect must be one of allow, deny",
    );
    expect(requestErrorSentence("body.session_id: too long")).toBe("the session id: too long");
    expect(requestErrorSentence("body: Unrecognized key: every")).toBe("the request: Unrecognized key: every");
    expect(requestErrorSentence("no schedule with id x")).toBe("no schedule with id x");
  });

  it("parseInterval takes seconds and durations, and nothing else", () => {
    expect([parseInterval("3600"), parseInterval("90s"), parseInterval("30m"), parseInterval("1H")]).toEqual([
      3600, 90, 1800, 3600,
    ]);
    expect([parseInterval("1h30m"), parseInterval("2d"), parseInterval(" 15m ")]).toEqual([5400, 172_800, 900]);
    for (const bad of ["", "1.5h", "h", "-60", "5q", "1 h", "1h 30m"]) expect(parseInterval(bad), bad).toBeUndefined();
  });

  it("closestMatch finds one typo, a swap or a missing letter, and not a different word", () => {
    const names = ["conversation", "code_generation", "ASSISTANT_PORT", "ASSISTANT_LOG"];
    expect(closestMatch("conversaton", names)).toBe("conversation");
    expect(closestMatch("code_generatoin", names)).toBe("code_generation");
    expect(closestMatch("ASSISTANT_PROT", names)).toBe("ASSISTANT_PORT");
    expect(closestMatch("ASSISTANT_ZZZ", names)).toBeUndefined();
    expect(closestMatch("weather", names)).toBeUndefined();
  });
});
