/** Throwaway TLS material for tests, made by openssl. */
import { spawnSync } from "node:child_process";
import { join } from "node:path";

/** Runs openssl with `args`; fails with its stderr. */
export function openssl(...args: string[]): void {
	const result = spawnSync("openssl", args, { encoding: "utf8" });
	if (result.status !== 0) throw new Error(`openssl ${args[0]}: ${result.stderr}`);
}

/** A self-signed certificate valid for one day, `<name>.pem` and `<name>.key` in `dir`; `san` as openssl's subjectAltName. */
export function selfSigned(dir: string, name: string, subject: string, san?: string): { cert: string; key: string } {
	const cert = join(dir, `${name}.pem`);
	const key = join(dir, `${name}.key`);
	openssl(
		"req",
		"-x509",
		"-newkey",
		"rsa:2048",
		"-nodes",
		"-days",
		"1",
		"-subj",
		subject,
		...(san ? ["-addext", `subjectAltName=${san}`] : []),
		"-keyout",
		key,
		"-out",
		cert,
	);
	return { cert, key };
}
