/**
 * The handshake's proofs: each side shows it holds the endpoint's token without sending it. The
 * client sends a nonce; the server answers with an HMAC of both nonces under the token, tagged as
 * the server's, and a nonce of its own; only when that checks out does the client send its own
 * proof (tagged as the client's) and its requests. So a process that only took over the socket's
 * path (a stale endpoint, another user's listener) learns nothing, and the tags keep either
 * side's proof from being replayed as the other's.
 */
import { createHmac, randomBytes, timingSafeEqual } from "node:crypto";
import { FRAME_VERSION } from "../../core/bridge/frames.ts";

/** Which side a proof is from. */
export type ProofSide = "server" | "client";

/** 32 fresh random bytes, base64url. */
export function freshNonce(): string {
	return randomBytes(32).toString("base64url");
}

/** The proof `side` gives for this pair of nonces under `token`. */
export function proofOf(token: string | Buffer, side: ProofSide, clientNonce: string, serverNonce: string): string {
	return createHmac("sha256", token).update(`checkpoint-bridge wire v${FRAME_VERSION.endpoint} ${side}\n${clientNonce}\n${serverNonce}`).digest("base64url");
}

/** Whether `given` is the proof `side` owes, compared in constant time. */
export function checkProof(given: string, token: string | Buffer, side: ProofSide, clientNonce: string, serverNonce: string): boolean {
	const expected = Buffer.from(proofOf(token, side, clientNonce, serverNonce), "utf8");
	const bytes = Buffer.from(given, "utf8");
	return bytes.length === expected.length && timingSafeEqual(bytes, expected);
}
