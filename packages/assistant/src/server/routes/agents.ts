import { agentListSchema, listAgents } from "../../agent/orchestrator.ts";
import type { Services } from "../../runtime/services.ts";
import { defineRoute, type RouteSpec } from "../route.ts";

// The loaded agents (sub-agent orchestration, docs/agent.md): the main agent, the orchestrator and the sub-agents
// a plan may delegate to, each with the route it resolves to, plus the delegation limits.

export function agentRoutes(services: Services): RouteSpec[] {
  return [
    defineRoute({
      method: "GET",
      url: "/api/agents",
      operationId: "listAgents",
      response: agentListSchema,
      summary: "The main agent, the orchestrator and the sub-agents with their routes, and the delegation limits",
      tag: "tasks",
      handler: () =>
        listAgents({ agentName: services.agent.agentName, router: services.llm.router, settings: services.settings }),
    }),
  ];
}
