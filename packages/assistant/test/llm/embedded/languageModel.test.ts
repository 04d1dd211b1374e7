import { describe, expect, it } from "vitest";
import { AnswerText, checkArguments, toChatHistory, toGbnf } from "../../../src/llm/embedded/languageModel.ts";

// The parts of the llama.cpp adapter that need no model: prompt mapping, the grammar schema, argument checks and
// the streaming decoder of a JSON answer.

describe("embedded language model helpers", () => {
  it("renders a V4 prompt with tool calls and results as a chat history ending with the turn to generate", () => {
    const history = toChatHistory(
      [
        { role: "system", content: "Be brief." },
        { role: "user", content: [{ type: "text", text: "Weather in Paris?" }] },
        {
          role: "assistant",
          content: [
            { type: "reasoning", text: "hidden thoughts" },
            { type: "tool-call", toolCallId: "c1", toolName: "get_weather", input: '{"city":"Paris"}' },
          ],
        },
        {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "c1",
              toolName: "get_weather",
              output: { type: "json", value: { t: 21 } },
            },
          ],
        },
        { role: "user", content: [{ type: "text", text: "And tomorrow?" }] },
      ],
      "TOOLS",
    );
    expect(history).toEqual([
      { type: "system", text: "Be brief.\n\nTOOLS" },
      { type: "user", text: "Weather in Paris?" },
      { type: "model", response: ['{"type":"tool_call","name":"get_weather","arguments":{"city":"Paris"}}'] },
      { type: "user", text: 'Result of tool get_weather:\n{"t":21}\n\nAnd tomorrow?' },
      { type: "model", response: [] },
    ]);
  });

  it("converts tool schemas to the grammar subset: optional properties may be null, unknown shapes are any JSON", () => {
    expect(
      toGbnf({
        type: "object",
        properties: {
          path: { type: "string", maxLength: 200, description: "file path" },
          mode: { enum: ["r", "w"] },
          tags: { type: "array", items: { type: "string" }, maxItems: 3 },
          when: { type: "string", format: "date" },
          size: { type: ["integer", "null"] },
        },
        required: ["path", "mode"],
      }),
    ).toEqual({
      type: "object",
      properties: {
        path: { type: "string", maxLength: 200, description: "file path" },
        mode: { enum: ["r", "w"] },
        tags: { oneOf: [{ type: "array", items: { type: "string" }, maxItems: 3 }, { type: "null" }] },
        when: { oneOf: [{ type: "string", format: "date" }, { type: "null" }] },
        size: { oneOf: [{ oneOf: [{ type: "integer" }, { type: "null" }] }, { type: "null" }] },
      },
    });
    expect(toGbnf({ $ref: "#/definitions/x" })).toHaveProperty("oneOf");
    expect(toGbnf({ type: "object" })).toEqual({ type: "object", additionalProperties: true });
  });

  it("checks arguments against the tool's JSON schema", () => {
    const tool = {
      type: "function" as const,
      name: "read_file",
      inputSchema: {
        $schema: "http://json-schema.org/draft-07/schema#",
        type: "object" as const,
        properties: { path: { type: "string" as const, minLength: 1 } },
        required: ["path"],
        additionalProperties: false,
      },
    };
    expect(checkArguments(tool, { path: "/etc/hosts" })).toBeUndefined();
    expect(checkArguments(tool, {})).toMatch(/^path: /);
    expect(checkArguments(tool, { path: 3 })).toMatch(/^path: /);
    expect(checkArguments(tool, { path: "" })).toMatch(/^path: /);
  });

  it("streams the text of a JSON answer as it is generated, escapes and surrogate pairs included", () => {
    const answer = new AnswerText();
    const pieces = ['{"type": "ans', 'wer", "text": "', "Hi\\", 'n \\"you\\"', " \\u00e9\\ud83d", "\\ude00", '!"}'];
    const deltas = pieces.map((piece) => answer.push(piece));
    expect(deltas).toEqual(["", "", "Hi", '\n "you"', " é", "😀", "!"]);
    expect(answer.emitted).toBe('Hi\n "you" é😀!');
    expect(JSON.parse(pieces.join("")).text).toBe(answer.emitted);

    const call = new AnswerText();
    expect(call.push('{"type": "tool_call", "name": "x", "arguments": {"text": "no"}}')).toBe("");
    expect(call.started).toBe(false);
  });
});
