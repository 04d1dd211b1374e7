// The Tasks tab's addresses: /tasks is the list, /tasks/<id> a task's detail (a deep link or a reload opens it).

export function taskIdOfPath(path: string): string | undefined {
  const match = /^\/tasks\/([^/]+)\/?$/.exec(path);
  return match ? decodeURIComponent(match[1]!) : undefined;
}

export function taskPath(id: string | undefined): string {
  return id ? `/tasks/${encodeURIComponent(id)}` : "/tasks";
}

/**
 * Opens an address of the app from anywhere (a dialog, a link in a report): pushes it and announces it the way
 * the browser's back button does, so the shell picks the tab and the tab its view.
 */
export function navigate(path: string): void {
  if (window.location.pathname !== path) window.history.pushState(null, "", path);
  window.dispatchEvent(new PopStateEvent("popstate"));
}

export const FINAL_STATUSES = new Set(["completed", "failed", "cancelled"]);
