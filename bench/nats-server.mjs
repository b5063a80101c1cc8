/**
 * A real nats-server on a free loopback port for the NATS figures, stopped when the process exits.
 */
import { spawn, spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

/** When nats-server is missing, prints `{ skipped }` as the figure's JSON document and exits 0. */
export function requireNatsServer() {
	if (spawnSync("nats-server", ["--version"]).status === 0) return;
	process.stdout.write(`${JSON.stringify({ skipped: "nats-server is not installed (apt-get install -y nats-server)" })}\n`);
	process.exit(0);
}

/** Starts nats-server (its ports file in a temporary folder, removed at exit) and resolves with its URL. */
export async function startNatsServer(name) {
	const dir = mkdtempSync(join(tmpdir(), `cb-bench-${name}-`));
	const server = spawn("nats-server", ["-a", "127.0.0.1", "-p", "-1", "--ports_file_dir", dir], { stdio: "ignore" });
	process.on("exit", () => {
		server.kill("SIGKILL");
		rmSync(dir, { recursive: true, force: true });
	});
	for (let waited = 0; ; waited += 20) {
		if (waited > 10_000) throw new Error("nats-server did not report its port within 10 s");
		const file = readdirSync(dir).find((entry) => entry.endsWith(".ports"));
		try {
			const url = file && JSON.parse(readFileSync(join(dir, file), "utf8")).nats[0];
			if (url) return url;
		} catch {
			// The ports file is half written.
		}
		await new Promise((resolve) => setTimeout(resolve, 20));
	}
}
