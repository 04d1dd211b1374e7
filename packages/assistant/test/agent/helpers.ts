// llm_router.yaml for agent tests: every listed task type routes to the scripted OpenAI-protocol server
// (test/llm/servers/openaiServer.ts) as lowbit_server, with a model name per task type so requests can be told
// apart by `body.model`.
export function scriptedRouterYaml(
  url: string,
  models: Record<string, string> = { conversation: "chat-model" },
): string {
  const routes = Object.entries(models)
    .map(([taskType, model]) => `  ${taskType}:\n    primary: {provider: lowbit_server, model: ${model}}\n`)
    .join("");
  return `providers:\n  lowbit_server:\n    base_url: ${url}/v1\ntask_types:\n${routes}`;
}
