/**
 * Who may cancel a request and who may answer it, on a broker that does not say who sent a message
 * (ADR-0009). A cancel carries a secret whose SHA-256 the request carried: the secret is on the
 * wire only once the request is over. Host frames for a request carry the host's X25519 public key
 * and an HMAC under a key only that host and the asker can derive (ECDH with the asker's key from
 * the request), so a client that reads the room cannot answer in the host's name.
 */
import {
	createHash,
	createHmac,
	createPublicKey,
	diffieHellman,
	generateKeyPairSync,
	hkdfSync,
	type KeyObject,
	randomFillSync,
	timingSafeEqual,
} from "node:crypto";

/** Public keys, secrets, hashes and MACs are 32 bytes in base64url without padding. */
export const SEAL_LENGTH = 43;
const SEAL_PATTERN = /^[A-Za-z0-9_-]{43}$/;
const INFO = "checkpoint-bridge nats host frames v3";

/** Whether `v` has the shape of a key, secret, hash or MAC. */
export const isSealText = (v: unknown): v is string => typeof v === "string" && SEAL_PATTERN.test(v);

/** One side's X25519 key pair: the private key stays in memory, the public one travels. */
export interface KeyPair {
	privateKey: KeyObject;
	/** base64url, 43 characters. */
	publicKey: string;
}

/** A fresh X25519 key pair. */
export function newKeyPair(): KeyPair {
	const { privateKey, publicKey } = generateKeyPairSync("x25519");
	return { privateKey, publicKey: publicKey.export({ format: "jwk" }).x as string };
}

/** The MAC key of one asker key and one host key, from either side; undefined when `otherPublic` is no key. */
export function sharedKey(own: KeyObject, otherPublic: string): Buffer | undefined {
	if (!isSealText(otherPublic)) return undefined;
	try {
		const publicKey = createPublicKey({ key: { kty: "OKP", crv: "X25519", x: otherPublic }, format: "jwk" });
		const secret = diffieHellman({ privateKey: own, publicKey });
		return Buffer.from(hkdfSync("sha256", secret, Buffer.alloc(0), INFO, 32));
	} catch {
		return undefined;
	}
}

/** The MAC keys one side derives with its private key, by the other side's public key. */
export interface MacKeys {
	/** The MAC key for `otherPublic`, derived at its first use; undefined when it is no key. */
	get(otherPublic: string): Buffer | undefined;
	/** Keys kept now. */
	readonly size: number;
}

/**
 * MAC keys derived with `own`, kept by the other side's public key, the `max` last used: an asker
 * process keeps one key pair across its calls, and the X25519 agreement and key derivation cost more
 * than the rest of a request's handling. The derived key depends on both keys only, so a kept one is the
 * one a new derivation would give; a flood of fresh keys only pushes out older ones.
 */
export function macKeys(own: KeyObject, max: number): MacKeys {
	const cache = new Map<string, Buffer>();
	return {
		get(otherPublic) {
			const found = cache.get(otherPublic);
			if (found) {
				cache.delete(otherPublic);
				cache.set(otherPublic, found);
				return found;
			}
			const derived = sharedKey(own, otherPublic);
			if (!derived) return undefined;
			cache.set(otherPublic, derived);
			if (cache.size > max) cache.delete(cache.keys().next().value!);
			return derived;
		},
		get size() {
			return cache.size;
		},
	};
}

/** Random bytes for the next cancel secrets, drawn a few calls' worth at a time (each draw is a system call). */
const secretPool = Buffer.alloc(32 * 32);
let secretPoolUsed = secretPool.length;

/** A fresh cancel secret and the hash the request carries. */
export function newCancelSecret(): { secret: string; hash: string } {
	if (secretPoolUsed === secretPool.length) {
		randomFillSync(secretPool);
		secretPoolUsed = 0;
	}
	const secret = secretPool.toString("base64url", secretPoolUsed, secretPoolUsed + 32);
	// Never handed out twice.
	secretPool.fill(0, secretPoolUsed, secretPoolUsed + 32);
	secretPoolUsed += 32;
	return { secret, hash: hashSecret(secret) };
}

/** SHA-256 of a cancel secret, base64url. */
export function hashSecret(secret: string): string {
	return createHash("sha256").update(secret).digest("base64url");
}

/** Whether `secret` is the one whose hash is `hash`, compared in constant time. */
export function secretMatches(secret: unknown, hash: string): boolean {
	if (!isSealText(secret)) return false;
	return timingSafeEqual(Buffer.from(hashSecret(secret)), Buffer.from(hash));
}

/** The MAC of a frame (its JSON without `mac`), base64url. */
function macOf(key: Buffer, frame: object): string {
	return createHmac("sha256", key).update(JSON.stringify(frame)).digest("base64url");
}

/** `frame` with the host's public key and its MAC under `key`; `mac` goes last, so the receiver can strip it and recompute. */
export function seal<T extends object>(frame: T, hostKey: string, key: Buffer): T & { hostKey: string; mac: string } {
	const withKey = { ...frame, hostKey };
	return { ...withKey, mac: macOf(key, withKey) };
}

/** Whether a parsed frame's `mac` is its MAC under `key`. */
export function sealValid(frame: Record<string, unknown>, key: Buffer): boolean {
	const { mac, ...rest } = frame;
	if (!isSealText(mac)) return false;
	return timingSafeEqual(Buffer.from(macOf(key, rest)), Buffer.from(mac));
}
