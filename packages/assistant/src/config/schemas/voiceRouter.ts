import * as z from "zod";
import { httpUrl } from "./common.ts";

// voice_router.yaml: where the speech services listen. Both optional; the web UI shows the voice button only
// when `stt.base_url` is set.

const endpoint = z.strictObject({ base_url: httpUrl.optional() });

export const voiceRouterSchema = z.strictObject({
  tts: endpoint.optional(),
  stt: endpoint.optional(),
});

export type VoiceRouter = z.output<typeof voiceRouterSchema>;
