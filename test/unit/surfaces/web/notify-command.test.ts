/**
 * The notify command: once per relayed request with that request's link, asker and first
 * question in its environment (never in the command string); whatever it does (fail, hang, print
 * megabytes) the request is untouched, and a hung command is killed with what it started.
 */
import { existsSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import {
	NOTIFY_AFTER_ENV,
	NOTIFY_TIMEOUT_MS,
	Notifier,
	type NotifyFacts,
	notifyDelay,
	runNotifyCommand,
} from "../../../../extensions/checkpoint-bridge/surfaces/web/away/notify-command.ts";
import { tempDir } from "../../../support/temp-dir.ts";
import { until } from "../../../support/until.ts";
import { pagePath, pageWithRelay, postAnswer, trackedPages } from "./support.ts";

const pages = trackedPages();
afterEach(() => pages.closeAll());

/** A command that exits at once, leaving a backgrounded child, a nohup one and a setsid one, each writing its pid. */
const treeCommand = (dir: string) =>
	[
		`sh -c 'echo $$ > ${dir}/background.tmp; mv ${dir}/background.tmp ${dir}/background; exec sleep 60' >/dev/null 2>&1 &`,
		`nohup sh -c 'echo $$ > ${dir}/nohup.tmp; mv ${dir}/nohup.tmp ${dir}/nohup; exec sleep 60' >/dev/null 2>&1 &`,
		`setsid sh -c 'echo $$ > ${dir}/setsid.tmp; mv ${dir}/setsid.tmp ${dir}/setsid; exec sleep 60' >/dev/null 2>&1 &`,
		"exit 0",
	].join("\n");

const escaped: number[] = [];
afterEach(() => {
	for (const pid of escaped.splice(0))
		try {
			process.kill(pid, "SIGKILL");
		} catch {
			// Gone already.
		}
});

function treePids(dir: string): [number, number, number] | undefined {
	const names = ["background", "nohup", "setsid"];
	if (!names.every((name) => readdirSync(dir).includes(name))) return undefined;
	const pids = names.map((name) => Number(readFileSync(join(dir, name), "utf8"))) as [number, number, number];
	escaped.push(...pids);
	return pids;
}

/** Running: not gone, and not a zombie waiting for whoever reaps orphans here. */
function alive(pid: number): boolean {
	try {
		const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
		return !stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
	} catch {
		return false;
	}
}

const HOSTILE = `$(touch pwned) \`touch pwned\` "; touch pwned; echo '`;

describe("notify command", () => {
	it("runs once per relayed request, with the request's own link, the asker and the first question in its environment", async () => {
		const dir = tempDir("cb-notify-");
		// The asked runs only (the run at each request's end is away/notify-life.test.ts's), each file whole once it is there.
		const command = `[ "$CHECKPOINT_BRIDGE_EVENT" = asked ] || exit 0; cd ${dir} && printf '%s\\n%s\\n%s\\n' "$CHECKPOINT_BRIDGE_URL" "$CHECKPOINT_BRIDGE_ASKER" "$CHECKPOINT_BRIDGE_QUESTION" > "tmp-$$" && mv "tmp-$$" "run-$$"`;
		const s = await pages.setup({ notifyCommand: () => command });
		const first = await s.ask([{ question: HOSTILE, options: ["a", "b"] }, { question: "Second?" }], { label: "planner" });
		const runs = await until(
			() => (readdirSync(dir).filter((f) => f.startsWith("run-")).length === 1 ? readdirSync(dir).filter((f) => f.startsWith("run-")) : undefined),
			"notify run",
		);
		const [url, asker, question] = readFileSync(join(dir, runs[0]!), "utf8").split("\n");
		expect(url, "the request's own link, marked as the notify command's").toBe(`${s.page.linkFor(first.requestId)}?via=notify`);
		expect(asker).toBe("planner");
		// The asker's text arrives as data; nothing in it ran.
		expect(question).toBe(HOSTILE);
		expect(readdirSync(dir)).not.toContain("pwned");
		// The link it got answers the request.
		expect((await postAnswer(s.page, `${new URL(url!).pathname}answer`, { answers: ["a", "x"] })).status).toBe(200);
		await first.call;
		// The host's own model asking is not relayed: no command. Another relayed request: one more run.
		await s.ask([{ question: "Own?" }], { label: "host", sessionId: "host-session-id" });
		await s.ask([{ question: "Another?" }], { label: "reviewer" });
		await until(() => (readdirSync(dir).filter((f) => f.startsWith("run-")).length === 2 ? true : undefined), "second run");
		await new Promise((resolve) => setTimeout(resolve, 300));
		expect(readdirSync(dir).filter((f) => f.startsWith("run-"))).toHaveLength(2);
		const askers = readdirSync(dir)
			.filter((f) => f.startsWith("run-"))
			.map((f) => readFileSync(join(dir, f), "utf8").split("\n")[1])
			.sort();
		expect(askers).toEqual(["planner", "reviewer"]);
	});

	it("a command that fails, floods its output or hangs changes nothing; a failure is reported once", async () => {
		const dir = tempDir("cb-notify-");
		const flood = `head -c 8000000 /dev/zero; head -c 8000000 /dev/zero >&2; touch ${dir}/flooded`;
		for (const command of ["exit 3", flood, "sleep 30", "/no/such/program"]) {
			const notices: string[] = [];
			// Only the hanging one is timed out on purpose; the flood gets the time 16 MB through pipes takes on a busy machine.
			const notifyTimeoutMs = command === "sleep 30" ? 300 : 10_000;
			// The command's shell writes its pid first: it ends (or is killed) with the command.
			const pidFile = join(dir, "shell");
			rmSync(pidFile, { force: true });
			const s = await pages.setup({ notifyCommand: () => `echo $$ > ${pidFile}; ${command}`, notifyTimeoutMs, notice: (m) => notices.push(m) });
			const { requestId, call } = await s.ask([{ question: "Still fine?", options: ["yes", "no"] }], { label: "planner" });
			const ended = () => (command === flood ? readdirSync(dir).includes("flooded") : notices.length > 0);
			const shellGone = () => existsSync(pidFile) && readFileSync(pidFile, "utf8").trim() !== "" && !alive(Number(readFileSync(pidFile, "utf8")));
			await until(() => (ended() && shellGone() ? true : undefined), `${command} to end`, 20_000);
			// Untouched: still open, still answerable from the page.
			expect(s.handle.snapshot()!.open.map((o) => o.requestId)).toEqual([requestId]);
			expect(s.fake.current()?.closedBy).toBeUndefined();
			expect((await postAnswer(s.page, `${pagePath(s.page)}answer`, { requestId, answers: ["yes"] })).status).toBe(200);
			expect((await call).status).toBe("ok");
			if (command === "exit 3") expect(notices).toEqual(["checkpoint-bridge: the notify command failed (exit code 3); the request is unaffected"]);
			if (command === "sleep 30") expect(notices[0]).toContain("killed after 300 ms");
			if (command.startsWith("/no")) expect(notices[0]).toMatch(/exit code 127: .*not found/);
			if (command === flood) expect(notices).toEqual([]);
		}
		// Four real processes, two of them writing 8 MB each: more than the default 5 s on a busy machine.
	}, 60_000);

	it("a hung command is killed after the deadline with everything it started (10 s by default)", async () => {
		expect(NOTIFY_TIMEOUT_MS).toBe(10_000);
		const dir = tempDir("cb-notify-");
		const run = runNotifyCommand(
			`(sleep 30; touch ${dir}/survived) & echo $! > ${dir}/child; wait`,
			{ url: "u", asker: "a", question: "q" },
			{ timeoutMs: 200 },
		);
		expect(await run.done).toEqual({ ok: false, reason: "killed after 200 ms" });
		const pid = Number(readFileSync(join(dir, "child"), "utf8"));
		// Gone, or a zombie waiting for whoever reaps orphans here: either way no longer running.
		const running = () => {
			try {
				const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
				return !stat.slice(stat.lastIndexOf(")") + 2).startsWith("Z");
			} catch {
				return false;
			}
		};
		await until(() => (running() ? undefined : true), "the background child to be gone", 2_000);
		expect(readdirSync(dir)).not.toContain("survived");
	});

	it("a command that exits at once leaves nothing in its group past the deadline: a backgrounded child, nohup; setsid escapes", async () => {
		const dir = tempDir("cb-notify-");
		const run = runNotifyCommand(treeCommand(dir), { url: "u", asker: "a", question: "q" }, { timeoutMs: 600 });
		// The shell itself exits at once, successfully: the children are what is left.
		expect(await run.done).toEqual({ ok: true });
		const [background, nohup, setsid] = await until(() => treePids(dir), "the three children to start");
		expect([alive(background), alive(nohup), alive(setsid)]).toEqual([true, true, true]);
		await run.ended;
		await until(() => (alive(background) || alive(nohup) ? undefined : true), "the group's children to be gone", 2_000);
		// setsid starts a session and group of its own: no signal to the command's group reaches it (docs/web-page.md says so).
		expect(alive(setsid)).toBe(true);
	});

	it("closing the page kills what a command left in its group even after the command exited", async () => {
		const dir = tempDir("cb-notify-");
		const s = await pageWithRelay({ notifyCommand: () => treeCommand(dir), notifyTimeoutMs: 60_000 });
		await s.ask([{ question: "Q?" }], { label: "planner" });
		const [background, nohup, setsid] = await until(() => treePids(dir), "the three children to start");
		// The command exited; what it left in its group still runs.
		expect([alive(background), alive(nohup)]).toEqual([true, true]);
		await s.page.close();
		await until(() => (alive(background) || alive(nohup) ? undefined : true), "the group's children to be gone", 2_000);
		expect(alive(setsid)).toBe(true);
		s.role.release("quit", "test over");
	});

	it("closing the page kills running commands", async () => {
		const pidFile = join(tempDir("cb-notify-"), "pid");
		const s = await pageWithRelay({ notifyCommand: () => `echo $$ > ${pidFile}; exec sleep 30` });
		await s.ask([{ question: "Q?" }], { label: "planner" });
		const pid = await until(
			() => (existsSync(pidFile) && alive(Number(readFileSync(pidFile, "utf8"))) ? Number(readFileSync(pidFile, "utf8")) : undefined),
			"the command to run",
		);
		await s.page.close();
		await until(() => (alive(pid) ? undefined : true), "the command to be killed", 2_000);
		s.role.release("quit", "test over");
	});
});

describe("notify only after a request waited unanswered (CHECKPOINT_BRIDGE_NOTIFY_AFTER_MS)", () => {
	afterEach(() => vi.useRealTimers());

	/** A notifier whose runs are recorded, not spawned; `open` says which requests still have facts. */
	function recorded(delayMs: number) {
		const runs: string[] = [];
		const open = new Set<string>();
		const notifier = new Notifier({
			command: () => "notify",
			delayMs: () => delayMs,
			run: (_command, facts) => {
				runs.push(facts.url);
				return { done: Promise.resolve({ ok: true }), ended: Promise.resolve(), kill() {} };
			},
		});
		const facts = (id: string) => (): NotifyFacts | undefined => (open.has(id) ? { url: id, asker: "child", question: "Q?" } : undefined);
		const ask = (id: string, queuedAt = Date.now()) => {
			open.add(id);
			notifier.notify(id, facts(id), queuedAt);
		};
		return { runs, open, notifier, ask };
	}

	it("answered before the delay: no run; still waiting after it: one run; settled any other way: none", async () => {
		vi.useFakeTimers();
		const { runs, open, notifier, ask } = recorded(60_000);
		ask("answered");
		ask("waiting");
		ask("withdrawn");
		await vi.advanceTimersByTimeAsync(30_000);
		// Answered in the terminal within the delay: its link is gone, and the board says so.
		open.delete("answered");
		notifier.unschedule("answered");
		// Settled another way (the asker's budget, a cancel): its facts are gone, without a forget.
		open.delete("withdrawn");
		await vi.advanceTimersByTimeAsync(29_999);
		expect(runs).toEqual([]);
		await vi.advanceTimersByTimeAsync(1);
		expect(runs).toEqual(["waiting"]);
		await vi.advanceTimersByTimeAsync(600_000);
		expect(runs).toEqual(["waiting"]);
	});

	it("counts from when the host took the request, and 0 runs at once", async () => {
		vi.useFakeTimers();
		const late = recorded(60_000);
		late.ask("queued-long-ago", Date.now() - 60_000);
		await vi.advanceTimersByTimeAsync(0);
		expect(late.runs).toEqual(["queued-long-ago"]);
		const now = recorded(0);
		now.ask("at-once");
		expect(now.runs).toEqual([]);
		await vi.advanceTimersByTimeAsync(0);
		expect(now.runs).toEqual(["at-once"]);
	});

	it("closing stops every run still waiting for its delay", async () => {
		vi.useFakeTimers();
		const { runs, notifier, ask } = recorded(1_000);
		ask("pending");
		await notifier.close();
		await vi.advanceTimersByTimeAsync(5_000);
		expect(runs).toEqual([]);
	});

	it("reads the variable as a non-negative number of ms, 0 when unset; anything else is 0 with the reason", () => {
		expect(notifyDelay({})).toEqual({ ms: 0 });
		expect(notifyDelay({ [NOTIFY_AFTER_ENV]: "0" })).toEqual({ ms: 0 });
		expect(notifyDelay({ [NOTIFY_AFTER_ENV]: " 90000 " })).toEqual({ ms: 90_000 });
		for (const bad of ["-5", "soon", "Infinity"]) {
			const read = notifyDelay({ [NOTIFY_AFTER_ENV]: bad });
			expect(read.ms).toBe(0);
			expect(read.problem).toContain(NOTIFY_AFTER_ENV);
		}
	});

	it("on a real page: a request answered in the terminal within the delay pings nobody; one left waiting pings once", async () => {
		const dir = tempDir("cb-notify-");
		const command = `[ "$CHECKPOINT_BRIDGE_EVENT" = asked ] || exit 0; printf '%s' "$CHECKPOINT_BRIDGE_QUESTION" > ${dir}/tmp-$$ && mv ${dir}/tmp-$$ ${dir}/run-$$`;
		const s = await pages.setup({ notifyCommand: () => command, notifyAfterMs: () => 400 });
		const quick = await s.ask([{ question: "Quick?", options: ["a", "b"] }], { label: "child" });
		const slow = await s.ask([{ question: "Slow?", options: ["a", "b"] }], { label: "child" });
		// The terminal answers the first at once (the fake host UI's dialog).
		await until(() => s.fake.current(), "the first dialog");
		s.fake.current()!.answer("a");
		expect((await quick.call).status).toBe("ok");
		const runs = () => readdirSync(dir).filter((f) => f.startsWith("run-"));
		await until(() => (runs().length === 1 ? true : undefined), "one run");
		await new Promise((resolve) => setTimeout(resolve, 600));
		expect(runs().map((f) => readFileSync(join(dir, f), "utf8"))).toEqual(["Slow?"]);
		await until(() => s.fake.current(), "the second dialog");
		s.fake.current()!.answer("b");
		expect((await slow.call).status).toBe("ok");
	});
});
