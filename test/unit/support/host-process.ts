/**
 * A host in a process of its own, for tests that kill or flood it: a `node -e` script that claims
 * the host role with the given UI, serves the local endpoint in the directory given as its second
 * argument (after the extension's path), prints `READY <socket path>`, and then runs `after`.
 */
import { fileURLToPath } from "node:url";

/** Node 22 from the project's devDependencies. */
export const NODE = fileURLToPath(new URL("../../../node_modules/.bin/node", import.meta.url));
/** The extension's folder, with a trailing slash: the script's first argument. */
export const EXTENSION = fileURLToPath(new URL("../../../extensions/checkpoint-bridge/", import.meta.url));

/** The script; `ui` is the source of an expression for the host's dialog UI, `after` runs with `endpoint` in scope. */
export function hostProcessScript(ui: string, after: string): string {
	return `
const [extension, dir] = process.argv.slice(1);
const { pathToFileURL } = await import("node:url");
const load = (file) => import(pathToFileURL(extension + file).href);
const { createHandle } = await load("core/shared-handle.ts");
const { claimHostRole } = await load("core/host-role.ts");
const { startEndpoint } = await load("transports/local/server.ts");
const { dialogSurface } = await load("surfaces/dialogs.ts");
const handle = createHandle();
const ui = ${ui};
claimHostRole(handle, { ui, surface: dialogSurface(ui), sessionId: "process-host" });
const endpoint = await startEndpoint({ handle, dir });
process.stdout.write("READY " + endpoint.endpoint + "\\n");
${after}
`;
}
