/**
 * The asking process of figures 5 and 7, both ends: the host's side forks it and drives it over
 * IPC, one block of calls per message (so the host can interleave its own blocks); the asking side
 * runs each block with whichever `ask` its transport gives and sends back what it timed.
 */
import { fork } from "node:child_process";
import { claimHostRole } from "../extensions/checkpoint-bridge/core/host/host-role.ts";
import { createHandle } from "../extensions/checkpoint-bridge/core/shared/shared-handle.ts";
import { dialogSurface } from "../extensions/checkpoint-bridge/surfaces/dialogs.ts";
import { concurrent, sequential, stepOf } from "./ask-loop.mjs";

const LOOPS = { sequential, concurrent };

/** Forks `script` with `env` and resolves once it listens; `name` labels its failures. */
export async function forkAsker(script, env, name) {
	const child = fork(script, [], { env, execArgv: ["--expose-gc"], stdio: ["ignore", "ignore", "inherit", "ipc"] });
	const exited = new Promise((resolve) => child.once("exit", resolve));
	// Its first message says it is listening.
	await new Promise((resolve, reject) => {
		child.once("message", resolve);
		child.once("exit", (code) => reject(new Error(`the ${name} exited (${code}) before it was ready`)));
	});
	return {
		pid: child.pid,
		/** One block of `n` calls there, the `loop` way; `gc: false` skips the full collection before it. */
		block(loop, n, { gc = true } = {}) {
			return new Promise((resolve, reject) => {
				const onExit = (code) => reject(new Error(`the ${name} exited (${code}) during a ${loop} block`));
				child.once("exit", onExit);
				child.once("message", (reply) => {
					child.off("exit", onExit);
					if (reply.ok) resolve(reply);
					else reject(new Error(`${name}: ${reply.message}`));
				});
				child.send({ loop, n, gc });
			});
		},
		/** Closes the channel, which ends the process. */
		async close() {
			child.disconnect();
			await exited;
		},
	};
}

/** The asking side: runs the blocks asked for with `ask`; exits when the host closes the channel. */
export function serveAskLoops(ask) {
	const gc = globalThis.gc ?? (() => {});
	process.on("message", async ({ loop, n, gc: collect = true }) => {
		try {
			if (collect) gc();
			process.send({ ok: true, ...(await LOOPS[loop](ask, n)) });
		} catch (error) {
			process.send({ ok: false, message: error instanceof Error ? error.message : String(error) });
		}
	});
	process.on("disconnect", () => process.exit(0));
	// Messages sent before a listener exists are lost: the host waits for this one.
	process.send({ ready: true });
}

/**
 * The host of figures 5 and 7: a fresh handle holding the host role, with a UI that answers every
 * question at once from its step, and counts the dialogs whose title contains `tag` (set it once
 * the asking process's pid is known: its titles name it).
 */
export function answeringHost() {
	const handle = createHandle();
	const host = { handle, role: undefined, tag: "\0", tagged: 0 };
	const ui = {
		select(title, options) {
			if (title.includes(host.tag)) host.tagged++;
			return Promise.resolve(options[stepOf(title) & 1]);
		},
		input: () => Promise.resolve(undefined),
		notify() {},
		setStatus() {},
	};
	host.role = claimHostRole(handle, { ui, surface: dialogSurface(ui), sessionId: "host-session" });
	if (!host.role) throw new Error("could not claim the host role");
	return host;
}
