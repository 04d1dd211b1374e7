import { AssistantClient } from "@assistant/client";

// The one client of the daemon's API for the whole app. The page is served by the daemon itself, so the browser
// sends the HttpOnly session cookie on its own: the page never sees, asks for or stores the API token.
export const client = new AssistantClient({ baseUrl: window.location.origin });
