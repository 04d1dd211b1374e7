import type { ReportItem, TaskReport } from "@assistant/client";
import { client } from "../api.ts";
import { type Messages, useMessages } from "../i18n.ts";
import { Markdown } from "../Markdown.tsx";
import { TaskLink } from "./TaskLink.tsx";
import { FINAL_STATUSES } from "./taskPaths.ts";
import { usePolling } from "./usePolling.ts";

const SECTIONS = ["done", "needs_review", "failed", "next_steps"] as const;
/** How deep the sub-task tree is opened in place; deeper levels are a click away (each task shows its own). */
const TREE_DEPTH = 3;

/** The operator report of a finished task (done, needs review, failed, next steps) and its sub-task tree. */
export function TaskReportView({ id }: { id: string }) {
  const t = useMessages();
  const report = usePolling(() => client.getTaskReport(id), id, 0, false);
  const titles: Record<(typeof SECTIONS)[number], string> = {
    done: t.reportDone,
    needs_review: t.reportReview,
    failed: t.reportFailed,
    next_steps: t.reportNext,
  };
  return (
    <section className="task-report" aria-labelledby="task-report">
      <h2 id="task-report">{t.taskReport}</h2>
      {report.error && (
        <p role="alert" className="error">
          {t.loadError} {report.error.message}
        </p>
      )}
      {report.data &&
        SECTIONS.map((section) => (
          <div key={section} className={`report-${section}`}>
            <h3 id={`report-${section}`}>{titles[section]}</h3>
            <ul aria-labelledby={`report-${section}`}>
              {report.data![section].length === 0 && <li className="empty">{t.reportNone}</li>}
              {uniqueKeys(report.data![section]).map(([key, item]) => (
                <li key={key}>
                  <ReportLine item={item} />
                </li>
              ))}
            </ul>
          </div>
        ))}
      {report.data && report.data.subtasks.length > 0 && (
        <>
          <h2 id="task-subtasks">{t.taskSubtasks}</h2>
          <SubtaskTree report={report.data} depth={1} labelledBy="task-subtasks" />
        </>
      )}
    </section>
  );
}

function ReportLine({ item }: { item: ReportItem }) {
  const t = useMessages();
  return (
    <>
      <Markdown text={item.text} />
      {item.refs.length > 0 && (
        <span className="refs">
          {item.refs.map((ref) => (
            <span key={`${ref.kind}:${ref.id}`} className="ref">
              {refLabel(t, ref.kind)}{" "}
              {ref.kind === "task" ? <TaskLink id={ref.id}>{ref.id.slice(0, 8)}</TaskLink> : <code>{ref.id}</code>}
            </span>
          ))}
        </span>
      )}
    </>
  );
}

/** Report lines keyed by their text (a repeated line gets a counter): they have no id of their own. */
function uniqueKeys(items: ReportItem[]): Array<[string, ReportItem]> {
  const seen = new Map<string, number>();
  return items.map((item) => {
    const count = (seen.get(item.text) ?? 0) + 1;
    seen.set(item.text, count);
    return [`${count}:${item.text}`, item];
  });
}

function refLabel(t: Messages, kind: ReportItem["refs"][number]["kind"]): string {
  return { file: t.refFile, tool_call: t.refToolCall, queue_item: t.refQueueItem, task: t.refTask }[kind];
}

/** The children of a task as a nested list; a finished child's own children are loaded from its report. */
function SubtaskTree({ report, depth, labelledBy }: { report: TaskReport; depth: number; labelledBy?: string }) {
  const t = useMessages();
  return (
    <ul className="subtasks" aria-labelledby={labelledBy}>
      {report.subtasks.map((child) => (
        <li key={child.task_id}>
          <TaskLink id={child.task_id}>
            {child.task_type ?? t.taskSubtask} <code>{child.task_id.slice(0, 8)}</code>
          </TaskLink>{" "}
          <span className={`task-status task-status-${child.status}`}>
            {t.taskStatus[child.status as keyof Messages["taskStatus"]] ?? child.status}
          </span>
          {depth < TREE_DEPTH && FINAL_STATUSES.has(child.status) && <ChildSubtasks id={child.task_id} depth={depth} />}
        </li>
      ))}
    </ul>
  );
}

function ChildSubtasks({ id, depth }: { id: string; depth: number }) {
  const report = usePolling(() => client.getTaskReport(id), id, 0, false);
  if (!report.data || report.data.subtasks.length === 0) return null;
  return <SubtaskTree report={report.data} depth={depth + 1} />;
}
