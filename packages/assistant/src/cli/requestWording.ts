// The daemon words a refused request for any client, naming the field by its path in the request
// (`body.interval_secs: Invalid input: expected number, received string`). At the command line the person typed an
// argument or an option, not a request body: the path and zod's phrasing become one sentence.

/** Words for the request fields the CLI fills in; other fields are named by their words (`session_id`: session id). */
const FIELD_WORDS: Record<string, string> = {
  interval_secs: "the interval",
  cron: "the cron expression",
  timezone: "the time zone",
  task_type: "the task type",
  limit: "--limit",
  recent: "--recent",
  kind: "--kind",
  effect: "the effect",
};

/** `message` as a sentence when it is a request-validation error (`body.x: ...`), else unchanged. */
export function requestErrorSentence(message: string): string {
  const match = /^(?:body|query|params)(?:\.([\w.]+))?: (.*)$/s.exec(message);
  if (!match) return message;
  const field = match[1]?.split(".").at(-1);
  const what = field === undefined ? "the request" : (FIELD_WORDS[field] ?? `the ${field.replace(/_/g, " ")}`);
  const reason = match[2]!;
  const must = mustBe(reason);
  return must === undefined ? `${what}: ${reason}` : `${what} must be ${must}`;
}

/** zod's and the schemas' phrasings of a bound or a type, as what the value must be; undefined for other reasons. */
function mustBe(reason: string): string | undefined {
  const type = /^Invalid input: expected (\w+), received \w+$/.exec(reason);
  if (type) return `a ${type[1]}`;
  const option = /^Invalid option: expected one of (.*)$/.exec(reason);
  if (option) return `one of ${option[1]!.replace(/"/g, "").split("|").join(", ")}`;
  const bound = /^Too (?:small|big): expected \w+ to be ([<>]=?)(\S+)$/.exec(reason);
  if (bound) {
    const words = { ">=": "at least", ">": "more than", "<=": "at most", "<": "less than" } as const;
    return `${words[bound[1] as keyof typeof words]} ${bound[2]}`;
  }
  return /^(at least|at most|a whole number|an? )/.test(reason) ? reason : undefined;
}
