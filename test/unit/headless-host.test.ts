/**
 * The host with no screen (headless-host.ts, ADR-0035) without its process: a host role claimed
 * with no surface shows nothing and holds every request for outside answers under the usual budget;
 * the command line's refusals and a property of random arguments; the surfaces it needs, named; the
 * audit trail's place and its line on stdout.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { SettledRecord } from "../../extensions/checkpoint-bridge/core/host/host-role.ts";
import { auditFile, hostDirectory, noSurfaceText, settledLine, wantedSurfaces } from "../../extensions/checkpoint-bridge/headless-host.ts";
import type { Envelope } from "../../extensions/checkpoint-bridge/model/result.ts";
import { flush, relay } from "./support/relay.ts";

describe("a host role claimed with no surface", () => {
	beforeEach(() => vi.useFakeTimers());
	afterEach(() => vi.useRealTimers());

	it("shows nothing: every request waits queued at once, and an outside answer from the page settles one, its place in the audit record", async () => {
		const records: SettledRecord[] = [];
		const { handle, fake, ask } = relay({}, { surface: undefined, onSettled: (r) => records.push(r) });
		const ends: Envelope[] = [];
		void ask([{ question: "Which database?", options: ["Postgres", "SQLite"] }], { label: "planner" }).then((e) => ends.push(e));
		void ask([{ question: "Ship it?", kind: "confirm" }], { label: "tester" }).then((e) => ends.push(e));
		await flush(vi);
		expect(fake.dialogs).toHaveLength(0);
		const open = handle.snapshot()!.open;
		expect(open.map((o) => o.state)).toEqual(["queued", "queued"]);
		const replies: unknown[] = [];
		handle.bus.emit("answer", { requestId: open[1]!.requestId, answers: [true], source: "web", place: "notify-link" }, (r: unknown) => replies.push(r));
		await flush(vi);
		expect(replies).toEqual([{ ok: true }]);
		expect(ends.map((e) => [e.asker, e.status, e.answers[0]?.answer])).toEqual([["tester", "ok", "yes"]]);
		expect(records[0]).toMatchObject({ asker: "tester", status: "ok", answers: [{ answer: "yes", source: "web", place: "notify-link" }] });
		expect(records[0]!.shownAt).toBeUndefined();
		expect(fake.dialogs).toHaveLength(0);
	});

	it("a mail reply's answer is recorded by mail, and said so on the bin's line", async () => {
		const records: SettledRecord[] = [];
		const { handle, ask } = relay({}, { surface: undefined, onSettled: (r) => records.push(r) });
		void ask([{ question: "Deploy now?", kind: "confirm" }], { label: "planner" });
		await flush(vi);
		const replies: unknown[] = [];
		handle.bus.emit("answer", { requestId: handle.snapshot()!.open[0]!.requestId, answers: [true], source: "outside", place: "mail" }, (r: unknown) =>
			replies.push(r),
		);
		await flush(vi);
		expect(replies).toEqual([{ ok: true }]);
		expect(records[0]).toMatchObject({ status: "ok", answers: [{ answer: "yes", source: "outside", place: "mail" }] });
		expect(settledLine(records[0]!)).toMatch(/^checkpoint-bridge-host: \[planner\] ok, answered by mail at \d{4}-/);
	});

	it("a request's budget runs out as at any host: it ends timeout, never shown", async () => {
		const { fake, ask } = relay({}, { surface: undefined });
		let end: Envelope | undefined;
		void ask([{ question: "Anyone there?" }], { budgetMs: 5_000 }).then((e) => (end = e));
		await vi.advanceTimersByTimeAsync(4_900);
		expect(end).toBeUndefined();
		await vi.advanceTimersByTimeAsync(200);
		expect(end?.status).toBe("timeout");
		expect(fake.dialogs).toHaveLength(0);
	});
});

describe("the command line", () => {
	let dir: string;
	beforeEach(() => {
		dir = mkdtempSync(path.join(os.tmpdir(), "cpb-headless-"));
	});
	afterEach(() => rmSync(dir, { recursive: true, force: true }));

	it("--cwd names the directory, resolved against the working directory; none: the working directory", () => {
		expect(hostDirectory(["--cwd", dir])).toEqual({ ok: true, dir: path.resolve(dir) });
		expect(hostDirectory([], dir)).toEqual({ ok: true, dir: path.resolve(dir) });
		expect(hostDirectory(["--cwd", "."], dir)).toEqual({ ok: true, dir: path.resolve(dir) });
	});

	it("refuses an unknown option, a positional argument, a missing directory and a file, each saying what is wrong", () => {
		const file = path.join(dir, "file");
		writeFileSync(file, "");
		expect(hostDirectory(["--port", "1"])).toMatchObject({ ok: false, reason: expect.stringMatching(/--port/) });
		expect(hostDirectory(["somewhere"])).toMatchObject({ ok: false, reason: expect.stringMatching(/somewhere/) });
		expect(hostDirectory(["--cwd", path.join(dir, "gone")])).toMatchObject({ ok: false, reason: expect.stringMatching(/ENOENT/) });
		expect(hostDirectory(["--cwd", file])).toEqual({ ok: false, reason: `${file} is not a directory` });
		expect(hostDirectory(["--cwd"])).toMatchObject({ ok: false, reason: expect.stringMatching(/--cwd/) });
	});

	it("random arguments: never a throw, always a directory or a reason", () => {
		fc.assert(
			fc.property(fc.array(fc.oneof(fc.string(), fc.constantFrom("--cwd", "-c", "--", dir, "."))), (argv) => {
				const read = hostDirectory(argv, dir);
				expect(read.ok ? typeof read.dir : typeof read.reason).toBe("string");
			}),
		);
	});
});

describe("the surfaces it needs", () => {
	it("the page or mail; a notify command alone is none, and the refusal says why, naming the variables", () => {
		expect(wantedSurfaces({})).toEqual([]);
		expect(
			wantedSurfaces({ CHECKPOINT_BRIDGE_NOTIFY_COMMAND: "ntfy publish", CHECKPOINT_BRIDGE_NTFY_URL: "https://ntfy.sh/t", CHECKPOINT_BRIDGE_WEB: "  " }),
		).toEqual([]);
		expect(wantedSurfaces({ CHECKPOINT_BRIDGE_WEB: "0.0.0.0:8080" })).toEqual(["CHECKPOINT_BRIDGE_WEB"]);
		expect(wantedSurfaces({ CHECKPOINT_BRIDGE_MAIL_TO: "me@example.org" })).toEqual(["CHECKPOINT_BRIDGE_MAIL_TO"]);
		const text = noSurfaceText({ CHECKPOINT_BRIDGE_NOTIFY_COMMAND: "true" });
		for (const name of ["CHECKPOINT_BRIDGE_WEB", "CHECKPOINT_BRIDGE_MAIL_TO", "CHECKPOINT_BRIDGE_NOTIFY_COMMAND"]) expect(text).toContain(name);
		expect(text).toContain("CHECKPOINT_BRIDGE_NOTIFY_COMMAND is set, but notifications need the page");
		expect(noSurfaceText({ CHECKPOINT_BRIDGE_NTFY_URL: "https://ntfy.sh/t", CHECKPOINT_BRIDGE_NOTIFY_COMMAND: "x" })).toContain(
			"CHECKPOINT_BRIDGE_NOTIFY_COMMAND and CHECKPOINT_BRIDGE_NTFY_URL are set, but notifications need the page",
		);
		expect(noSurfaceText({})).not.toContain("is set, but");
	});
});

describe("the audit trail", () => {
	it("lives beside the store: CHECKPOINT_BRIDGE_STATE_DIR, else $XDG_STATE_HOME (an absolute one), else ~/.local/state; one file per directory", () => {
		expect(auditFile("/srv/a", { CHECKPOINT_BRIDGE_STATE_DIR: "/var/cb", XDG_STATE_HOME: "/state" })).toMatch(/^\/var\/cb\/audit\/[\w-]{32}\.jsonl$/);
		expect(auditFile("/srv/a", { XDG_STATE_HOME: "/state" })).toMatch(/^\/state\/checkpoint-bridge\/audit\/[\w-]{32}\.jsonl$/);
		expect(auditFile("/srv/a", { XDG_STATE_HOME: "relative", HOME: "/home/me" })).toMatch(/^\/home\/me\/\.local\/state\/checkpoint-bridge\/audit\//);
		expect(auditFile("/srv/a", {})).not.toBe(auditFile("/srv/b", {}));
	});

	it("each settled request is one line: who, how it ended, where its answers were given, when", () => {
		const record: SettledRecord = {
			requestId: "r1",
			asker: "planner",
			askerSessionId: "s",
			questions: ["Which\ndatabase?"],
			answers: [{ question: "Which database?", answer: "SQLite", kind: "option", source: "web", place: "notify-link" }],
			status: "ok",
			queuedAt: Date.UTC(2026, 11, 6, 4, 0, 0),
			settledAt: Date.UTC(2026, 11, 6, 4, 0, 5),
			waitedMs: 5_000,
		};
		expect(settledLine(record)).toBe(
			'checkpoint-bridge-host: [planner] ok, answered through the link the notify command sent at 2026-12-06T04:00:05.000Z: "Which database?"',
		);
		expect(settledLine({ ...record, status: "timeout", answers: [] })).toBe(
			'checkpoint-bridge-host: [planner] timeout at 2026-12-06T04:00:05.000Z: "Which database?"',
		);
	});
});
