/** The NATS frames of v3: the version check, the keys and secrets they carry, and the host's seal, with random input. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ERROR_CODES, FRAME_VERSION } from "../../../../extensions/checkpoint-bridge/core/bridge/frames.ts";
import { decodeNatsFrame, encodeNatsFrame, type NatsFrame } from "../../../../extensions/checkpoint-bridge/transports/nats/frames.ts";
import {
	hashSecret,
	macKeys,
	newCancelSecret,
	newKeyPair,
	seal,
	sealValid,
	secretMatches,
	sharedKey,
} from "../../../../extensions/checkpoint-bridge/transports/nats/seal.ts";
import { cancelFrame, requestFrame } from "../../support/nats-room.ts";

const Q = [{ question: "Which?" }];
const bytes = (o: unknown) => new TextEncoder().encode(JSON.stringify(o));

describe("versions", () => {
	it("a v2 peer's request (no keys, the socket's version) is refused as bad-version naming v2 and v3", () => {
		const checked = decodeNatsFrame(bytes({ ...requestFrame("r", Q), v: 2, key: undefined, cancelHash: undefined }));
		expect(checked).toMatchObject({ ok: false, code: "bad-version" });
		expect(!checked.ok && checked.message).toMatch(/v2.*v3/);
	});

	it("a version that String() cannot turn into text is refused as bad-version, not thrown", () => {
		const checked = decodeNatsFrame(new TextEncoder().encode('{"type":"request","v":{"toString":1}}'));
		expect(checked).toMatchObject({ ok: false, code: "bad-version", message: expect.stringContaining('v{"toString":1}') });
	});

	it("an error frame of another version is still read: it is how a peer says it speaks another version", () => {
		const checked = decodeNatsFrame(
			bytes({ type: "error", v: 2, code: "bad-version", message: "The frame speaks checkpoint-bridge wire v3; this side speaks v2." }),
		);
		expect(checked).toMatchObject({ ok: true, frame: { type: "error", v: 2 } });
	});
});

describe("keys, secrets and seals in frames", () => {
	const cases: [string, Record<string, unknown>, RegExp][] = [
		["a request without key", { ...requestFrame("r", Q), key: undefined }, /request\.key/],
		[
			"a request whose asker label is a megabyte",
			{ ...requestFrame("r", Q), asker: { label: "L".repeat(1_000_000), sessionId: "s" } },
			/request\.asker .*at most 256 and 128/,
		],
		[
			"a notice whose asker label is a megabyte",
			{ type: "notice", v: FRAME_VERSION.nats, asker: { label: "L".repeat(1_000_000), sessionId: "s" }, message: "m", level: "info", pid: 1, machine: "m" },
			/notice\.asker/,
		],
		["a request whose asker session id is too long", { ...requestFrame("r", Q), asker: { label: "l", sessionId: "s".repeat(129) } }, /request\.asker/],
		["a request whose key is too short", { ...requestFrame("r", Q), key: "abc" }, /request\.key/],
		["a request without cancelHash", { ...requestFrame("r", Q), cancelHash: undefined }, /request\.cancelHash/],
		["a cancel without secret", { ...cancelFrame("r"), secret: undefined }, /cancel\.secret/],
		["a cancel whose secret is not base64url", { ...cancelFrame("r"), secret: "!".repeat(43) }, /cancel\.secret/],
		[
			"a pong with a key but no MAC",
			{ type: "pong", v: FRAME_VERSION.nats, id: "r", held: true, host: "h", hostKey: newKeyPair().publicKey },
			/hostKey and \.mac/,
		],
		["a request whose lateFrames is not true", { ...requestFrame("r", Q), lateFrames: "yes" }, /request\.lateFrames/],
		[
			"a late frame with a key but no MAC",
			{ type: "late", v: FRAME_VERSION.nats, id: "r", kind: "late", status: "ok", answers: [], hostKey: newKeyPair().publicKey },
			/late\.hostKey and \.mac/,
		],
		["a late frame of an unknown status", { type: "late", v: FRAME_VERSION.nats, id: "r", kind: "late", status: "queued", answers: [] }, /late\.status/],
	];
	for (const [what, frame, message] of cases)
		it(`${what}: malformed, naming the field`, () => {
			const checked = decodeNatsFrame(bytes(frame));
			expect(checked).toMatchObject({ ok: false, code: "malformed" });
			expect(!checked.ok && checked.message).toMatch(message);
		});

	it("a cancel secret matches its own hash only", () => {
		const { secret, hash } = newCancelSecret();
		expect(secretMatches(secret, hash)).toBe(true);
		expect(secretMatches(newCancelSecret().secret, hash)).toBe(false);
		expect(secretMatches(hash, hash)).toBe(false);
		expect(hashSecret(secret)).toBe(hash);
	});

	it("cancel secrets drawn past several refills of their random pool are all different and well-formed", () => {
		const secrets = Array.from({ length: 200 }, () => newCancelSecret());
		expect(new Set(secrets.map((s) => s.secret)).size).toBe(200);
		for (const { secret, hash } of secrets) {
			expect(secret).toMatch(/^[A-Za-z0-9_-]{43}$/);
			expect(secretMatches(secret, hash)).toBe(true);
		}
		// Never all zero: a used slot of the pool is wiped, never handed out again.
		expect(secrets.some((s) => s.secret === Buffer.alloc(32).toString("base64url"))).toBe(false);
	});

	it("a host derives an asker key's MAC key once and keeps the most recently used few: what it keeps is what a new derivation gives", () => {
		const host = newKeyPair();
		const kept = macKeys(host.privateKey, 3);
		const askers = Array.from({ length: 5 }, () => newKeyPair());
		const first = kept.get(askers[0]!.publicKey)!;
		expect(first).toEqual(sharedKey(askers[0]!.privateKey, host.publicKey));
		// The same Buffer: derived once, not again.
		expect(kept.get(askers[0]!.publicKey)).toBe(first);
		for (const asker of askers.slice(1, 3)) kept.get(asker.publicKey);
		// Used again, so the newest: the next new key pushes out askers[1], the oldest unused.
		expect(kept.get(askers[0]!.publicKey)).toBe(first);
		kept.get(askers[3]!.publicKey);
		expect(kept.size).toBe(3);
		expect(kept.get(askers[0]!.publicKey)).toBe(first);
		const again = kept.get(askers[1]!.publicKey)!;
		expect(again).toEqual(sharedKey(askers[1]!.privateKey, host.publicKey));
		// A flood of fresh keys never holds more than the bound; a string that is no key is not kept.
		for (let i = 0; i < 50; i++) kept.get(newKeyPair().publicKey);
		expect(kept.get("not a key")).toBeUndefined();
		expect(kept.get("A".repeat(43))).toBeUndefined();
		expect(kept.size).toBe(3);
	});

	it("both sides derive the same MAC key; a third key pair derives another", () => {
		const asker = newKeyPair();
		const host = newKeyPair();
		const other = newKeyPair();
		expect(sharedKey(asker.privateKey, host.publicKey)).toEqual(sharedKey(host.privateKey, asker.publicKey));
		expect(sharedKey(other.privateKey, asker.publicKey)).not.toEqual(sharedKey(host.privateKey, asker.publicKey));
		expect(sharedKey(asker.privateKey, "not a key")).toBeUndefined();
	});
});

describe("random input (property)", () => {
	const text = fc.oneof(fc.string(), fc.constant(newKeyPair().publicKey), fc.stringMatching(/^[A-Za-z0-9_-]{43}$/));
	const junk = fc.oneof(
		fc.uint8Array({ maxLength: 300 }),
		fc
			.record(
				{
					type: fc.constantFrom("request", "cancel", "ping", "pong", "host", "result", "progress", "late", "error", "hello"),
					v: fc.constantFrom(1, 2, 3, "3", 4),
					id: fc.oneof(fc.string(), fc.constant("r")),
					key: text,
					cancelHash: text,
					secret: text,
					hostKey: text,
					mac: text,
					held: fc.boolean(),
				},
				{ requiredKeys: ["type"] },
			)
			.chain((base) => fc.dictionary(fc.string({ maxLength: 8 }), fc.jsonValue({ maxDepth: 2 })).map((extra) => ({ ...extra, ...base })))
			.map(bytes),
	);
	it("decoding never throws: a frame, or a refusal with a known code", () => {
		fc.assert(
			fc.property(junk, (data) => {
				const checked = decodeNatsFrame(data);
				if (!checked.ok) expect(ERROR_CODES).toContain(checked.code);
			}),
			{ numRuns: 500 },
		);
	});

	const answer = fc.record({ question: fc.string(), answer: fc.string(), kind: fc.constantFrom("option", "other", "text", "confirm") });
	const hostFrame = fc.oneof(
		fc.record({
			type: fc.constant("result" as const),
			v: fc.constant(FRAME_VERSION.nats),
			id: fc.string({ minLength: 1, maxLength: 20 }),
			kind: fc.constant("result" as const),
			status: fc.constantFrom("ok", "error", "no-host", "timeout", "cancelled"),
			answers: fc.array(answer, { maxLength: 4 }),
			note: fc.string(),
		}),
		fc.record({
			type: fc.constant("pong" as const),
			v: fc.constant(FRAME_VERSION.nats),
			id: fc.string({ minLength: 1, maxLength: 20 }),
			held: fc.boolean(),
			host: fc.string({ minLength: 1, maxLength: 20 }),
		}),
	);
	const asker = newKeyPair();
	const host = newKeyPair();
	const key = sharedKey(host.privateKey, asker.publicKey)!;
	const askerKey = sharedKey(asker.privateKey, host.publicKey)!;
	it("a sealed host frame survives the wire and checks out for the asker; any change to it, or another key, does not", () => {
		fc.assert(
			fc.property(hostFrame, fc.string({ minLength: 1 }), (frame, changed) => {
				const sent = decodeNatsFrame(encodeNatsFrame(seal(frame as NatsFrame, host.publicKey, key)));
				expect(sent.ok).toBe(true);
				const received = (sent as unknown as { frame: Record<string, unknown> }).frame;
				expect(sealValid(received, askerKey)).toBe(true);
				expect(sealValid(received, sharedKey(newKeyPair().privateKey, host.publicKey)!)).toBe(false);
				const field = frame.type === "pong" ? "host" : "note";
				if (received[field] !== changed) expect(sealValid({ ...received, [field]: changed }, askerKey)).toBe(false);
				expect(sealValid({ ...received, id: `${String(received.id)}x` }, askerKey)).toBe(false);
			}),
			{ numRuns: 200 },
		);
	});
});
