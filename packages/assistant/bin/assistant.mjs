#!/usr/bin/env node
import { launch } from "./launch.mjs";

await launch("assistant");
