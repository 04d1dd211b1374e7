import * as z from "zod";

// agent_profile.json: who the assistant is. Every field has a default so a missing file, or one written by an
// older UI with fewer fields, still gives a complete profile.

export const FORMALITIES = ["formal", "informal"] as const;

export const agentProfileSchema = z.strictObject({
  name: z.string().default("Assistant"),
  role: z.string().default("Personal assistant"),
  personality: z.string().default("Helpful, concise and honest."),
  rules: z.array(z.string()).default([]),
  formality: z.enum(FORMALITIES).optional(), // absent = the UI's "default"
});

export type AgentProfile = z.output<typeof agentProfileSchema>;
export type AgentProfileInput = z.input<typeof agentProfileSchema>;
