/**
 * The page's secrets: the page token (the whole page) and one link secret per request (that
 * request only). 256 random bits each, base64url, so they sit in a URL path as they are.
 * They are only ever compared through their SHA-256 digests: in constant time against the
 * page token, and as the key of a map for links, so a lookup's timing can tell at most
 * something about a digest, never about a secret.
 */
import { createHash, randomBytes, timingSafeEqual } from "node:crypto";

/** Random bytes per secret. @default 32 (256 bits) */
const SECRET_BYTES = 32;

/** A fresh secret. */
export const newSecret = (): string => randomBytes(SECRET_BYTES).toString("base64url");

/** The digest a secret is compared or looked up by. */
export const digestOf = (secret: string): Buffer => createHash("sha256").update(secret, "utf8").digest();

/** Whether `given` is the secret whose digest is `expected`, in constant time. */
export const matchesDigest = (given: string, expected: Buffer): boolean => timingSafeEqual(digestOf(given), expected);
