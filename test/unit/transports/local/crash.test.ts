/**
 * A host process that dies without a word (SIGKILL): its remote askers get no-host within two
 * seconds, later askers get it at once, and a new host can take over the path it left behind.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { afterEach, expect, it } from "vitest";
import { claimHostRole } from "../../../../extensions/checkpoint-bridge/core/host/host-role.ts";
import type { RelayProgress } from "../../../../extensions/checkpoint-bridge/core/shared/protocol.ts";
import { createHandle } from "../../../../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { dialogSurface } from "../../../../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { askRemote } from "../../../../extensions/checkpoint-bridge/transports/local/client.ts";
import { startEndpoint } from "../../../../extensions/checkpoint-bridge/transports/local/server.ts";
import { fakeUI } from "../../support/fake-ui.ts";
import { EXTENSION, hostProcessScript, NODE } from "../../support/host-process.ts";

/** The host process: its dialogs stay open until it is killed. */
const HOST_PROCESS = hostProcessScript(
	"{ select: () => new Promise(() => {}), input: () => new Promise(() => {}), notify() {} }",
	"setInterval(() => {}, 60_000);",
);

/** docs/across-processes.md: a remote asker learns that its host is gone within two seconds. */
const HOST_LOSS_MS = 2_000;
const cleanups: (() => Promise<unknown>)[] = [];
afterEach(async () => {
	for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

function startHostProcess(dir: string): Promise<{ child: ChildProcess; socketPath: string }> {
	const child = spawn(NODE, ["--input-type=module", "--no-warnings", "-e", HOST_PROCESS, EXTENSION, dir], { stdio: ["ignore", "pipe", "pipe"] });
	cleanups.push(async () => void child.kill("SIGKILL"));
	let stderr = "";
	child.stderr!.on("data", (chunk) => (stderr += String(chunk)));
	return new Promise((resolve, reject) => {
		let stdout = "";
		child.stdout!.on("data", (chunk) => {
			stdout += String(chunk);
			const ready = /^READY (.+)$/m.exec(stdout);
			if (ready) resolve({ child, socketPath: ready[1]! });
		});
		child.once("exit", (code) => reject(new Error(`the host process exited (${code}) before it was ready: ${stderr}`)));
	});
}

it("a killed host process gives its remote askers no-host within two seconds", { timeout: 20_000 }, async () => {
	const dir = path.join(await mkdtemp(path.join(os.tmpdir(), "cpb-test-")), "endpoint");
	cleanups.push(() => rm(path.dirname(dir), { recursive: true, force: true }));
	const { child, socketPath } = await startHostProcess(dir);
	const ask = (onProgress?: (p: RelayProgress) => void) =>
		askRemote(socketPath, {
			asker: { label: "worker", sessionId: "w" },
			questions: [{ question: "Proceed?" }],
			budgetMs: 30_000,
			dialogTimeoutMs: 30_000,
			...(onProgress ? { onProgress } : {}),
		});

	let onShown!: () => void;
	const shown = new Promise<void>((resolve) => (onShown = resolve));
	const call = ask((p) => p.stage === "shown" && onShown());
	await shown;
	const killedAt = Date.now();
	child.kill("SIGKILL");
	const envelope = await call;
	expect(envelope.status).toBe("no-host");
	expect(envelope.note).toMatch(/closed the connection/);
	// The documented promise (docs/across-processes.md), not a guess at the machine's speed.
	expect(Date.now() - killedAt).toBeLessThan(HOST_LOSS_MS);

	// Its socket file is still there, with nobody behind it.
	const askedAt = Date.now();
	const later = await ask();
	expect(later.status).toBe("no-host");
	expect(later.note).toMatch(/ECONNREFUSED/);
	expect(Date.now() - askedAt).toBeLessThan(HOST_LOSS_MS);

	// A new host takes over the path the dead one left, and serves the next call.
	const handle = createHandle();
	const fake = fakeUI({ respond: (dialog) => dialog.answer("go") });
	claimHostRole(handle, { ui: fake.ui, surface: dialogSurface(fake.ui), sessionId: "new-host" });
	const endpoint = await startEndpoint({ handle, dir });
	cleanups.push(() => endpoint.close());
	expect(endpoint.endpoint).toBe(socketPath);
	const answered = await ask();
	expect([answered.status, answered.answers[0]?.answer]).toEqual(["ok", "go"]);
});
