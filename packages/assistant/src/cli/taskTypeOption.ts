import { InvalidArgumentError } from "commander";
import { taskTypeProblem } from "../llm/taskTypes.ts";

/** Commander's parser for `--task-type`: an unknown name is a usage error (exit 2) with the close match. */
export function taskTypeArgument(value: string): string {
  const problem = taskTypeProblem(value);
  if (problem) throw new InvalidArgumentError(problem);
  return value;
}
