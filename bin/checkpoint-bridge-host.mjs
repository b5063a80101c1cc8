#!/usr/bin/env node
/** `checkpoint-bridge-host [--cwd DIR]`: a host with no screen for a directory (extensions/checkpoint-bridge/headless-host.ts, ADR-0035). */
import { loadPackageModule } from "./load-package.mjs";

const host = await loadPackageModule("checkpoint-bridge-host", new URL("../extensions/checkpoint-bridge/headless-host.ts", import.meta.url));
await host.runHeadlessHost();
