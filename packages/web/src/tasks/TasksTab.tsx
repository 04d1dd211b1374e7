import { useEffect, useState } from "react";
import { TaskDetail } from "./TaskDetail.tsx";
import { TaskList } from "./TaskList.tsx";
import { taskIdOfPath } from "./taskPaths.ts";

/** The Tasks tab: the list at /tasks, one task's detail at /tasks/<id>. */
export function TasksTab() {
  const [taskId, setTaskId] = useState(() => taskIdOfPath(window.location.pathname));
  useEffect(() => {
    const onPop = () => setTaskId(taskIdOfPath(window.location.pathname));
    window.addEventListener("popstate", onPop);
    return () => window.removeEventListener("popstate", onPop);
  }, []);
  return taskId ? <TaskDetail key={taskId} id={taskId} /> : <TaskList />;
}
