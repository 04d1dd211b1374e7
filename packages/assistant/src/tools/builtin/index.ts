import type { Tool } from "../tool.ts";
import { listDirTool } from "./listDir.ts";
import { messageTool } from "./message.ts";
import { readFileTool } from "./readFile.ts";
import { runCommandTool } from "./runCommand.ts";
import { searchTool } from "./search.ts";
import { webFetchTool } from "./webFetch.ts";
import { webSearchTool } from "./webSearch.ts";
import { writeFileTool } from "./writeFile.ts";

/** The built-in tools, in the order the model sees them. */
export const BUILTIN_TOOLS: readonly Tool[] = [
  readFileTool,
  writeFileTool,
  listDirTool,
  searchTool,
  runCommandTool,
  webFetchTool,
  webSearchTool,
  messageTool,
];
